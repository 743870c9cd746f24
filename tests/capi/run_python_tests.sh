#!/bin/sh
# Runs the ssd_suite package's tests against the built C API with the first Python that has numpy
# ($SSD_PYTHON, python3, /usr/bin/python3); exit 77 (ctest: skipped) when none has numpy.
# Usage: run_python_tests.sh <libssd-capi.so> <tests folder> [pytest arguments]
library=$1 tests=$2
shift 2
for py in "${SSD_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$py" ] || continue
  command -v "$py" >/dev/null 2>&1 || continue
  "$py" -c "import numpy" 2>/dev/null || continue
  if ! "$py" -c "import pytest" 2>/dev/null; then
    echo "$py has numpy but not pytest: install python3-pytest (tools/dev.sh does)" >&2
    exit 1
  fi
  SSD_CAPI_LIBRARY=$library exec "$py" -m pytest -q -p no:cacheprovider "$tests" "$@"
done
echo "no Python with numpy found: the ssd_suite tests are skipped"
exit 77
