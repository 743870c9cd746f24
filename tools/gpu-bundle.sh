#!/usr/bin/env bash
# Builds the CUDA kernels (libssd-kernels-cuda.so and the fp32 libssd-kernels-cuda-reference.so), the
# GPU tests, ssd-fuzz (with its worker), ssd-bench, ssd-suite and the C API (libssd-capi.so, for the
# Python package: SSD_CAPI_LIBRARY=BUNDLE/libssd-capi.so), and bundles them with every shared
# library `ldd` lists (all but glibc's) into one folder that runs on a GPU host without HDF5,
# GoogleTest or RapidCheck installed. Prints the command that runs the tests there.
#   bash tools/gpu-bundle.sh [BUNDLE_DIR]      (default: bundle/)
set -euo pipefail
cd "$(dirname "$0")/.."
bundle=${1:-bundle}

# Only what the bundle holds (the harness's targets build every kernel library), not the host tests:
# 197 of the build's 354 steps.
bash tools/dev.sh build ssd_gpu_tests ssd-fuzz ssd-kernel-worker ssd-bench ssd-suite ssd_capi >/dev/null ||
  { echo "gpu-bundle: the build failed (without nvcc the CUDA kernels, ssd_gpu_tests and ssd-bench are not configured)" >&2; exit 1; }
[ -f build/kernels/libssd-kernels-cuda.so ] || { echo "gpu-bundle: no nvcc found, the CUDA kernels were not built" >&2; exit 1; }

rm -rf "$bundle"
mkdir -p "$bundle/lib"
# ssd-fuzz and ssd-suite run the kernels in ssd-kernel-worker, which they find next to themselves.
cp build/tests/gpu/ssd_gpu_tests build/fuzz/ssd-fuzz build/fuzz/ssd-kernel-worker build/tools/ssd-bench \
   build/tools/ssd-suite build/tools/capi/libssd-capi.so build/kernels/libssd-kernels-cuda.so \
   build/kernels/libssd-kernels-cuda-reference.so "$bundle/"
# Every kernel library (the emulation and the planted bugs too, for ssd-suite), and the golden set.
mkdir -p "$bundle/kernels" "$bundle/golden"
cp build/kernels/*.so "$bundle/kernels/"
# SSD_BUNDLE_GOLDEN=0 leaves the golden set out (suite.sh then reads the source tree's golden/data
# beside the bundle), for transports with a size limit.
[ "${SSD_BUNDLE_GOLDEN:-1}" = 0 ] || cp golden/data/*.h5 golden/data/manifest.txt "$bundle/golden/"
cp golden/data/manifest.txt "$bundle/manifest.txt"
# The workloads' targets, for `bench.sh --against FILE --targets workload_targets.json`.
cp tools/bench/workload_targets.json "$bundle/"
# Shared libraries of every binary, except the C library and the dynamic loader that every host has.
for binary in "$bundle/ssd_gpu_tests" "$bundle/ssd-fuzz" "$bundle/ssd-kernel-worker" "$bundle/ssd-bench" \
              "$bundle/ssd-suite" "$bundle/libssd-capi.so" "$bundle/libssd-kernels-cuda.so"; do
  ldd "$binary" | awk '/=> \// {print $3}' | while read -r lib; do
    case "$(basename "$lib")" in
      libc.so.*|libm.so.*|libpthread.so.*|libdl.so.*|librt.so.*|libresolv.so.*|ld-linux*) ;;
      *) cp -n "$lib" "$bundle/lib/" ;;
    esac
  done
done
cat > "$bundle/run.sh" <<'RUN'
#!/usr/bin/env bash
# Runs the GPU tests from this folder: bash run.sh [gtest arguments]; logs go to ${OUT:-.}.
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib:$here:${LD_LIBRARY_PATH:-}"
exec "$here/ssd_gpu_tests" --library "$here/libssd-kernels-cuda.so" --manifest "$here/manifest.txt" "$@"
RUN
cat > "$bundle/fuzz.sh" <<'RUN'
#!/usr/bin/env bash
# Fuzzes the bundled CUDA kernels: bash fuzz.sh [ssd-fuzz options], e.g. --time 600 --shard 0/4.
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib:$here:${LD_LIBRARY_PATH:-}"
exec "$here/ssd-fuzz" --kernels "$here/libssd-kernels-cuda.so" "$@"
RUN
cat > "$bundle/bench.sh" <<'RUN'
#!/usr/bin/env bash
# Times the bundled CUDA kernels on the workloads: bash bench.sh [ssd-bench options].
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib:$here:${LD_LIBRARY_PATH:-}"
exec "$here/ssd-bench" --kernels "$here/libssd-kernels-cuda.so" "$@"
RUN
cat > "$bundle/suite.sh" <<'RUN'
#!/usr/bin/env bash
# The main job on this host: golden set, a fuzz campaign and the planted-bug self-test against the
# bundled CUDA kernels (bash suite.sh [ssd-suite options]).
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib:$here:${LD_LIBRARY_PATH:-}" SSD_KERNEL_PATH="$here/kernels"
data="$here/golden"
[ -f "$data/manifest.txt" ] || data="$here/../golden/data"
exec "$here/ssd-suite" --data "$data" "$@"
RUN
chmod +x "$bundle/run.sh" "$bundle/fuzz.sh" "$bundle/bench.sh" "$bundle/suite.sh"
echo "bundle ready: $(du -sh "$bundle" | cut -f1) in $bundle/"
echo "on the GPU host: bash $bundle/run.sh            (golden, smoke, random, determinism)"
echo "                 bash $bundle/run.sh --gtest_filter='*Workloads*'   (full-size workloads)"
echo "                 bash $bundle/suite.sh          (the main job on the CUDA kernels)"
echo "                 bash $bundle/fuzz.sh --time 600                 (a fuzz campaign; --shard i/n to split)"
echo "                 bash $bundle/bench.sh                           (device time of every workload)"
