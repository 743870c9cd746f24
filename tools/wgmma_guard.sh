#!/usr/bin/env bash
# The compiler launcher of the sm_90a kernels (gpu/CMakeLists.txt, ssd_gpu_sm90a, compiled with
# ptxas -v): runs one nvcc command and fails it where ptxas serialized a kernel's wgmma
# instructions (its note C7512: each wgmma then waits for the one before, so the overlap of tensor
# work and fragment building that these kernels are built around is gone, with no spill to show
# it). ptxas' per-kernel resource lines are dropped unless SSD_PTXAS_REPORT=1; every other line of
# the compile's output passes through.
#   tools/wgmma_guard.sh NVCC ARG...
set -uo pipefail
[ $# -ge 1 ] || { echo "wgmma_guard.sh: usage: wgmma_guard.sh NVCC ARG..." >&2; exit 2; }
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"$@" 2>"$log"
status=$?
if [ "${SSD_PTXAS_REPORT:-0}" = 1 ]; then
  cat "$log" >&2
else
  grep -v -E '^ptxas info +: |^ +[0-9]+ bytes stack frame' "$log" >&2
fi
if grep -q 'C7512' "$log"; then
  grep 'C7512' "$log" >&2
  echo "wgmma_guard.sh: ptxas serialized wgmma instructions (C7512) in the kernels above; the build fails" >&2
  exit 1
fi
exit $status
