#!/usr/bin/env bash
# The installed C API works for another project and for Python: cmake --install into a fresh
# prefix, a C program built against <prefix>/include/ssd/capi.h and -lssd-capi and run, and a copy
# of the Python package outside the checkout finding the library through SSD_PREFIX.
#   install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
prefix=$work/prefix
[ -f "$prefix/include/ssd/capi.h" ] || { echo "not installed: include/ssd/capi.h"; exit 1; }
[ -f "$prefix/lib/libssd-capi.so" ] || { echo "not installed: lib/libssd-capi.so"; exit 1; }
cc -std=c99 -Wall -Werror -I "$prefix/include" "$source/tests/capi/installed_example.c" -L "$prefix/lib" -lssd-capi \
   -Wl,-rpath,"$prefix/lib" -o "$work/installed_example"
"$work/installed_example"
# The package copied out of the checkout (so it cannot find the build tree) finds the installed library.
cp -r "$source/tools/python/ssd_suite" "$work/ssd_suite"
found=$(cd "$work" && env -u SSD_CAPI_LIBRARY SSD_PREFIX="$prefix" PYTHONPATH="$work" python3 -c \
  "import ssd_suite, ssd_suite._capi as c; print(ssd_suite.Problem('SSDChunkCumsumFwd:f32 seed=1 b1 s4 h1 q2')); print(c.library_path)")
echo "$found"
[ "$found" = "$(printf 'chunk_cumsum:f32 b1 s4 h1 q2 seed=1\n%s' "$prefix/lib/libssd-capi.so")" ] ||
  { echo "the package did not load the installed library"; exit 1; }
echo "capi install test passed"
