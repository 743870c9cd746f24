#!/usr/bin/env bash
# Small-case throughput of ssd-fuzz on the fp32 emulation, with the kernel in a worker process and
# in process: ROUNDS interleaved runs of CASES cases each (one seed, no large cases), then the
# median wall time, cases per second and CPU time (user + system, worker included) per case.
#   tools/fuzz_throughput.sh [SSD_FUZZ [CASES [ROUNDS]]]   (default build/fuzz/ssd-fuzz 20000 5)
# Extra binaries to compare (e.g. an older build) go in $COMPARE, separated by spaces.
set -euo pipefail
fuzz=${1:-build/fuzz/ssd-fuzz} cases=${2:-20000} rounds=${3:-5}
log=$(mktemp)
trap 'rm -f "$log"; rm -rf "$log.dump"' EXIT
for _ in $(seq "$rounds"); do
  for run in "$fuzz --isolation process" "$fuzz --isolation none" ${COMPARE:+$COMPARE}; do
    /usr/bin/time -f "$run|%e|%U|%S" $run --kernels emulation --cases "$cases" --seed 7 --large 0 --quiet \
      --dump "$log.dump" 2>&1 >/dev/null | tail -1 >>"$log"
  done
done
python3 - "$log" "$cases" <<'PY'
import statistics, sys
runs = {}
for line in open(sys.argv[1]):
    name, wall, user, system = line.rstrip("\n").rsplit("|", 3)
    runs.setdefault(name, []).append((float(wall), float(user) + float(system)))
cases = int(sys.argv[2])
print(f"| run | median wall s | cases/s | CPU us per case |\n|---|---:|---:|---:|")
for name, v in runs.items():
    wall = statistics.median(w for w, _ in v)
    cpu = statistics.median(c for _, c in v)
    print(f"| {name} | {wall:.2f} | {cases / wall:.0f} | {cpu / cases * 1e6:.0f} |")
PY
