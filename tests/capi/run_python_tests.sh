#!/bin/sh
# Runs Python against the built C API. Default: the ssd_suite package's tests with pytest, under the
# first Python that has numpy ($SSD_PYTHON, python3, /usr/bin/python3), exit 77 (ctest: skipped)
# when none has numpy. With --script PYTHON FILE: that script under that Python (no numpy needed).
# A library built with AddressSanitizer (the debug preset) needs its runtime loaded first.
# Usage: run_python_tests.sh <libssd-capi.so> <tests folder> [pytest arguments]
#        run_python_tests.sh <libssd-capi.so> --script <python> <file.py>
library=$1
shift
export SSD_CAPI_LIBRARY="$library"
asan=$(ldd "$library" 2>/dev/null | awk '/libasan/ {print $3}')
if [ -n "$asan" ]; then
  export LD_PRELOAD="$asan${LD_PRELOAD:+:$LD_PRELOAD}" ASAN_OPTIONS="detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
fi
if [ "$1" = "--script" ]; then
  exec "$2" "$3"
fi
tests=$1
shift
for py in "${SSD_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$py" ] || continue
  command -v "$py" >/dev/null 2>&1 || continue
  "$py" -c "import numpy" 2>/dev/null || continue
  if ! "$py" -c "import pytest" 2>/dev/null; then
    echo "$py has numpy but not pytest: install python3-pytest (tools/dev.sh does)" >&2
    exit 1
  fi
  exec "$py" -m pytest -q -p no:cacheprovider "$tests" "$@"
done
echo "no Python with numpy found: the ssd_suite tests are skipped"
exit 77
