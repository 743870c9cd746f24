#!/usr/bin/env bash
# The verdict table of docs/external-kernels.md on a GPU host, in one command: for each library
# (mamba_ssm, vLLM) and each way Triton takes f32 operands into dot products (IEEE, and TF32, what
# the libraries ship with), the golden set's problems and then a fuzz campaign run through the Python
# package, all four at once; tools/external/table.py then prints the table from their JSON reports.
#   bash tools/external/run.sh --capi LIBSSD_CAPI --mamba DIR --vllm DIR [--seconds 540] [--seed 1] [--out DIR]
# DIR holds the library's Python package (mamba_ssm/ or vllm/: upstream sources, never part of this
# repository). Logs, reports and failing case files go to --out (default $OUT or ./external-run).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
capi="" mamba="" vllm="" seconds=540 seed=1 out=${OUT:-./external-run}
while [ $# -gt 0 ]; do
  case "$1" in
    --capi) capi=$2; shift 2 ;;
    --mamba) mamba=$2; shift 2 ;;
    --vllm) vllm=$2; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --seed) seed=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    *) echo "run.sh: unknown argument '$1' (see the header of $0)" >&2; exit 2 ;;
  esac
done
[ -f "$capi" ] || { echo "run.sh: argument '--capi': '$capi' is not a file (libssd-capi.so)" >&2; exit 2; }
for pair in "mamba:$mamba" "vllm:$vllm"; do
  dir=${pair#*:}
  [ -z "$dir" ] || [ -d "$dir" ] || { echo "run.sh: argument '--${pair%%:*}': '$dir' is not a folder" >&2; exit 2; }
done
case "$seconds" in ''|*[!0-9]*) echo "run.sh: argument '--seconds': '$seconds' is not a whole number" >&2; exit 2 ;; esac
mkdir -p "$out"
export SSD_CAPI_LIBRARY=$capi PYTHONPATH="$root/tools/python${PYTHONPATH:+:$PYTHONPATH}"
export MAMBA_DETERMINISTIC=1            # mamba_ssm: fixed configs, no autotuning of every new shape
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-3}  # the oracle's threads per campaign (four run at once)
python3 - <<'PY' >"$out/host.txt" 2>&1 || true
import platform, torch, triton
print("torch", torch.__version__, "triton", triton.__version__, "python", platform.python_version())
print("gpu", torch.cuda.get_device_name(), "cuda", torch.version.cuda)
PY

run_one() {  # library adapter folder-variable folder mode
  local lib=$1 adapter=$2 variable=$3 folder=$4 mode=$5 tag="$1-$5"
  (
    export "$variable=$folder"
    if [ "$mode" = ieee ]; then export TRITON_F32_DEFAULT=ieee; else unset TRITON_F32_DEFAULT; fi
    python3 -m ssd_suite fuzz --adapter "$adapter" --problems "$root/golden/data/manifest.txt" \
      --max-failures 1000 --shrink-seconds 0 --dump "$out/cases-$tag" --report "$out/$tag-golden.json" \
      >"$out/$tag-golden.txt" 2>&1 || true
    python3 -m ssd_suite fuzz --adapter "$adapter" --time "$seconds" --seed "$seed" --max-failures 3 \
      --shrink-seconds 20 --dump "$out/cases-$tag" --report "$out/$tag-fuzz.json" \
      >"$out/$tag-fuzz.txt" 2>&1 || true
  ) &
}
[ -z "$mamba" ] || { run_one mamba_ssm ssd_suite.adapters.mamba_ssm SSD_MAMBA_SSM_PATH "$mamba" ieee
                     run_one mamba_ssm ssd_suite.adapters.mamba_ssm SSD_MAMBA_SSM_PATH "$mamba" tf32; }
[ -z "$vllm" ] || { run_one vllm ssd_suite.adapters.vllm SSD_VLLM_PATH "$vllm" ieee
                    run_one vllm ssd_suite.adapters.vllm SSD_VLLM_PATH "$vllm" tf32; }
wait
python3 "$here/table.py" "$out"/*.json | tee "$out/table.md"
