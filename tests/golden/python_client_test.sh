#!/usr/bin/env bash
# An outside implementation end to end: ssd-golden export -> tools/python/ssd_client.py (numpy,
# h5py) -> ssd-golden check. "right" expects every case to pass; "wrong" (planted bugs) expects a
# non-zero exit with FAILED verdicts. Exit 77 (skipped) when no python3 can import h5py and numpy.
#   python_client_test.sh SSD_GOLDEN CLIENT right|wrong
set -u
tool=$1 client=$2 mode=$3

python=""
for candidate in "${SSD_PYTHON:-}" python3 /usr/bin/python3; do
  [ -n "$candidate" ] || continue
  if command -v "$candidate" >/dev/null 2>&1 && "$candidate" -c "import h5py, numpy" >/dev/null 2>&1; then
    python=$candidate
    break
  fi
done
if [ -z "$python" ]; then
  echo "skipped: no python3 that imports h5py and numpy (apt-get install python3-h5py python3-numpy)"
  exit 77
fi

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Both ops in every dtype, with their options, ragged and edge shapes, mixed operands.
problems=(
  "chunk_cumsum:f32 b2 s37 h3 q16 seed=1"
  "chunk_cumsum:f16 b2 s37 h3 q16 +dt_bias +softplus seed=2"
  "chunk_cumsum:bf16 b2 s37 h3 q16 +dt_bias +softplus limit=0.01,0.2 seed=3"
  "chunk_cumsum:f32 b1 s30 h2 q7 +dt_bias limit=-0.1,0.2 A=bf16 seed=4"
  "chunk_cumsum:bf16 b1 s5 h2 q16 +softplus fill=bench seed=5"
  "chunk_coupling:f32 b2 s37 g2 n8 q16 seed=6"
  "chunk_coupling:f16 b2 s37 g2 n8 q16 +causal seq=rand seed=7"
  "chunk_coupling:bf16 b1 s48 g1 n8 q8 +causal seq=0:8,7,10,15,-8 seed=8"
  "chunk_coupling:bf16 b2 s37 g2 n8 q16 C=f32 seed=9"
  "chunk_coupling:f32 b1 s24 g3 n8 q7 B=bf16 out=f32 seed=10"
  "chunk_coupling:f16 b2 s33 g2 n8 q16 seq=1:16,17 out=bf16 seed=11"
)

"$tool" export "${problems[@]}" --out "$work/inputs" >/dev/null || { echo "export failed"; exit 1; }
flag=""
[ "$mode" = wrong ] && flag="--wrong"
"$python" "$client" "$work"/inputs/*.h5 --out "$work/results" $flag >/dev/null || { echo "client failed"; exit 1; }
"$tool" check "$work"/results/*.h5 >"$work/check.log" 2>&1
status=$?
cat "$work/check.log"

if [ "$mode" = right ]; then
  exit $status
fi
if [ $status -ne 0 ] && grep -q FAILED "$work/check.log"; then
  echo "the planted bugs were caught (exit $status)"
  exit 0
fi
echo "the planted bugs were NOT caught (exit $status)"
exit 1
