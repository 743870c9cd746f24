#!/usr/bin/env bash
# The verdict table of docs/external-kernels.md on a GPU host, in one command: for each library
# (mamba_ssm, vLLM) and each way Triton takes f32 operands into dot products (IEEE, and TF32, what
# the libraries ship with), the golden set's problems and a fuzz campaign in --shards shards run
# through the Python package, all at once (FlashInfer's decode step, CUDA without dot products, in
# one mode: from its package with --flashinfer DIR, from its kernels built by
# tools/external/flashinfer/build.sh with --flashinfer-shim LIB, which also replays problems those
# kernels take, tools/external/flashinfer/problems.py); tools/external/table.py then prints the table
# from their JSON reports. With --cuda LIB, the same campaign of a kernel-ABI library runs beside
# them, one shard through the Python package and one through ssd-fuzz (their throughputs side by side).
#   bash tools/external/run.sh --capi LIBSSD_CAPI [--mamba DIR] [--vllm DIR] [--flashinfer DIR] [--flashinfer-shim LIB]
#                              [--cuda LIB --ssd-fuzz PATH] [--seconds 480] [--shards 2] [--seed 1] [--out DIR]
# DIR holds the library's Python package (mamba_ssm/, vllm/ or flashinfer/: upstream sources, never
# part of this repository). Logs, reports and failing case files go to --out (default $OUT or ./external-run).
# The golden problems run as the library ships; the campaigns set SSD_MAMBA_SSM_WORKAROUNDS=1 so
# that mamba_ssm's known None-argument bug (docs/external-kernels.md) does not end them.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
capi="" mamba="" vllm="" flashinfer="" flashinfer_shim="" cuda="" ssd_fuzz="" seconds=480 shards=2 seed=1 out=${OUT:-./external-run}
while [ $# -gt 0 ]; do
  [ $# -ge 2 ] || { echo "run.sh: argument '$1' needs a value" >&2; exit 2; }
  case "$1" in
    --capi) capi=$2 ;;
    --mamba) mamba=$2 ;;
    --vllm) vllm=$2 ;;
    --flashinfer) flashinfer=$2 ;;
    --flashinfer-shim) flashinfer_shim=$2 ;;
    --cuda) cuda=$2 ;;
    --ssd-fuzz) ssd_fuzz=$2 ;;
    --seconds) seconds=$2 ;;
    --shards) shards=$2 ;;
    --seed) seed=$2 ;;
    --out) out=$2 ;;
    *) echo "run.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
  shift 2
done
[ -f "$capi" ] || { echo "run.sh: argument '--capi': '$capi' is not a file (libssd-capi.so)" >&2; exit 2; }
for pair in "mamba:$mamba" "vllm:$vllm" "flashinfer:$flashinfer"; do
  dir=${pair#*:}
  [ -z "$dir" ] || [ -d "$dir" ] || { echo "run.sh: argument '--${pair%%:*}': '$dir' is not a folder" >&2; exit 2; }
done
[ -z "$flashinfer_shim" ] || [ -f "$flashinfer_shim" ] || {
  echo "run.sh: argument '--flashinfer-shim': '$flashinfer_shim' is not a file (libflashinfer-ssu-shim.so)" >&2; exit 2; }
[ -z "$cuda" ] || [ -f "$cuda" ] || { echo "run.sh: argument '--cuda': '$cuda' is not a file" >&2; exit 2; }
[ -z "$cuda" ] || [ -x "$ssd_fuzz" ] || { echo "run.sh: argument '--ssd-fuzz': '$ssd_fuzz' is not an executable" >&2; exit 2; }
for pair in "seconds:$seconds" "shards:$shards" "seed:$seed"; do
  case "${pair#*:}" in ''|*[!0-9]*) echo "run.sh: argument '--${pair%%:*}': '${pair#*:}' is not a whole number" >&2; exit 2 ;; esac
done
[ "$shards" -ge 1 ] || { echo "run.sh: argument '--shards': must be at least 1" >&2; exit 2; }
mkdir -p "$out"
export SSD_CAPI_LIBRARY=$capi PYTHONPATH="$root/tools/python${PYTHONPATH:+:$PYTHONPATH}"
export MAMBA_DETERMINISTIC=1                  # mamba_ssm: fixed configs, no autotuning of every new shape
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-2}  # the oracle's threads per process (many run at once)
python3 - <<'PY' >"$out/host.txt" 2>&1 || true
import platform, torch, triton
print("torch", torch.__version__, "triton", triton.__version__, "python", platform.python_version())
print("gpu", torch.cuda.get_device_name(), "cuda", torch.version.cuda)
PY
# Every process stops by itself after --seconds (the golden replay sooner when its problems are
# done); `timeout` stops one that overruns a minute later, and SIGTERM still writes its report.
limit=$((seconds + 60))

library() {  # name adapter folder-variable folder mode
  local lib=$1 adapter=$2 variable=$3 folder=$4 mode=$5 tag="$1-$5"
  (
    export "$variable=$folder"
    if [ "$mode" = ieee ]; then export TRITON_F32_DEFAULT=ieee; else unset TRITON_F32_DEFAULT; fi
    timeout "$limit" python3 -m ssd_suite fuzz --adapter "$adapter" --problems "$root/golden/data/manifest.txt" \
      --time "$seconds" --max-failures 1000 --shrink-seconds 0 --dump "$out/cases-$tag" --report "$out/$tag-golden.json" \
      >"$out/$tag-golden.txt" 2>&1 || true
  ) &
  for ((i = 0; i < shards; i++)); do
    (
      export "$variable=$folder" SSD_MAMBA_SSM_WORKAROUNDS=1
      if [ "$mode" = ieee ]; then export TRITON_F32_DEFAULT=ieee; else unset TRITON_F32_DEFAULT; fi
      timeout "$limit" python3 -m ssd_suite fuzz --adapter "$adapter" --time "$seconds" --seed "$seed" \
        --shard "$i/$shards" --max-failures 3 --shrink-seconds 20 --dump "$out/cases-$tag" \
        --report "$out/$tag-fuzz$i.json" >"$out/$tag-fuzz$i.txt" 2>&1 || true
    ) &
  done
}
[ -z "$mamba" ] || { library mamba_ssm ssd_suite.adapters.mamba_ssm SSD_MAMBA_SSM_PATH "$mamba" ieee
                     library mamba_ssm ssd_suite.adapters.mamba_ssm SSD_MAMBA_SSM_PATH "$mamba" tf32; }
[ -z "$vllm" ] || { library vllm ssd_suite.adapters.vllm SSD_VLLM_PATH "$vllm" ieee
                    library vllm ssd_suite.adapters.vllm SSD_VLLM_PATH "$vllm" tf32; }
[ -z "$flashinfer" ] || library flashinfer ssd_suite.adapters.flashinfer SSD_FLASHINFER_PATH "$flashinfer" ieee
if [ -n "$flashinfer_shim" ]; then
  shim=$(cd "$(dirname "$flashinfer_shim")" && pwd)/$(basename "$flashinfer_shim")
  library flashinfer_shim ssd_suite.adapters.flashinfer SSD_FLASHINFER_SHIM "$shim" ieee
  # The golden set's and the campaign's recurrent cases are nearly all beyond FlashInfer's sizes
  # (d_state below 32): these are problems its built kernels take.
  ( python3 "$root/tools/external/flashinfer/problems.py" --seed "$seed" >"$out/flashinfer_shim-problems.txt" &&
    SSD_FLASHINFER_SHIM=$shim timeout "$limit" python3 -m ssd_suite fuzz --adapter ssd_suite.adapters.flashinfer \
      --problems "$out/flashinfer_shim-problems.txt" --max-failures 1000 --shrink-seconds 0 \
      --dump "$out/cases-flashinfer_shim-ieee" --report "$out/flashinfer_shim-ieee-served.json" \
      >"$out/flashinfer_shim-ieee-served.txt" 2>&1 || true ) &
fi
if [ -n "$cuda" ]; then
  ( timeout "$limit" python3 -m ssd_suite fuzz --kernels "$cuda" --time "$seconds" --seed "$seed" --shard 0/2 \
      --report "$out/cuda-ieee-python0.json" --dump "$out/cases-cuda" >"$out/cuda-python0.txt" 2>&1 || true ) &
  ( timeout "$limit" "$ssd_fuzz" --kernels "$cuda" --time "$seconds" --seed "$seed" --shard 1/2 \
      --report "$out/cuda-ieee-ssdfuzz1.json" --dump "$out/cases-cuda" >"$out/cuda-ssdfuzz1.txt" 2>&1 || true ) &
fi
wait
python3 "$here/table.py" "$out"/*.json | tee "$out/table.md"
