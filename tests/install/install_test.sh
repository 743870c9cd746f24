#!/usr/bin/env bash
# Installs the build into a fresh prefix, builds the README's example as another project would
# (find_package(ssd), ssd::reference) and runs it; then checks the installed tools find the
# installed kernel libraries.  install_test.sh BUILD_DIR SOURCE_DIR WORK_DIR
set -euo pipefail
build=$1 source=$2 work=$3
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$work/prefix" >/dev/null
for header in ssd/reference/op_spec.h ssd/kernel_abi.h ssd/harness/runner.h ssd/golden/case_file.h; do
  [ -f "$work/prefix/include/$header" ] || { echo "not installed: include/$header"; exit 1; }
done
cmake -S "$source/tests/install/consumer" -B "$work/consumer" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DCMAKE_PREFIX_PATH="$work/prefix" >/dev/null
cmake --build "$work/consumer" >/dev/null
output=$("$work/consumer/readme_example")
echo "$output"
# Shapes from the problem: out and out_x [Bt,S,H,P] = [2,1000,8,64].
[ "$output" = "$(printf 'out [2,1000,8,64]\nout_x [2,1000,8,64]')" ] || { echo "unexpected example output"; exit 1; }
# ssd-fuzz runs kernels in the worker program installed next to it.
[ -x "$work/prefix/bin/ssd-kernel-worker" ] || { echo "not installed: bin/ssd-kernel-worker"; exit 1; }
# The installed kernel libraries load by name through SSD_KERNEL_PATH.
SSD_KERNEL_PATH="$work/prefix/lib/ssd-kernels" "$work/prefix/bin/ssd-fuzz" --kernels emulation --cases 20 --seed 3 --quiet \
  --dump "$work/failures" | tail -1
echo "install test passed"
