#!/usr/bin/env bash
# A/B of kernel library variants (make_variant.sh) in one device call: ssd-bench of each in
# alternating rounds, then checks of the ones named. Run from the bundle (tools/gpu-bundle.sh)
# with this script, fast_problems.txt and the variants copied into BUNDLE/variants/NAME.so
# (tools/bench/pack_bundle.sh packs all three with the bundle):
#   AB_PLAN="TAG FILTER OPS... : NAME NAME ...; ..." bash BUNDLE/ab_session.sh
# Each plan item times, in every round, the workloads of OPS whose problem string contains FILTER
# ('~' for a space, '*' for all) with each NAME, into NAME.TAG.ROUND.json; e.g.
#   AB_PLAN="m2 s2048 mamba2 : base new; sp * state_passing : base new"
# Then, optional: AB_PROBLEMS="NAME ..." (fast_problems.txt against the oracle), AB_MEMCHECK="NAME
# ..." (the same under compute-sanitizer memcheck), AB_FUZZ="NAME:OPS ..." (AB_FUZZ_SECONDS,
# default 20, of random cases of OPS, comma separated). AB_ROUNDS: rounds (default 2); AB_SECONDS:
# ssd-bench's --max-seconds (default 0.25). Everything lands in $OUT/ab.tgz, rewritten after every
# step (a device call returns at most 8 files; a call cut at its limit keeps what ran). Compare
# with tools/bench/ab_compare.py DIR BASE NAME ... after unpacking.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
export LD_LIBRARY_PATH="$here/lib:$here:${LD_LIBRARY_PATH:-}"
final=${OUT:-.}
out=$(mktemp -d)
mkdir -p "$final"
save() { tar czf "$final/ab.tgz.part" -C "$out" . && mv "$final/ab.tgz.part" "$final/ab.tgz"; }
trap save EXIT
variant() {
  [ -f "$here/variants/$1.so" ] || { echo "ab_session.sh: no variant $here/variants/$1.so" >&2; exit 2; }
  echo "$here/variants/$1.so"
}
IFS=';' read -ra plan <<<"${AB_PLAN:?AB_PLAN names what to time: TAG FILTER OPS... : NAME ...; ...}"
for item in "${plan[@]}"; do  # every variant named exists, before the first timing
  for name in ${item#*:}; do variant "$name" >/dev/null; done
done
for name in ${AB_PROBLEMS:-} ${AB_MEMCHECK:-}; do variant "$name" >/dev/null; done
for entry in ${AB_FUZZ:-}; do variant "${entry%%:*}" >/dev/null; done
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,driver_version --format=csv,noheader |
  tee "$out/gpu.txt"
started=$(date +%s)
for round in $(seq 1 "${AB_ROUNDS:-2}"); do
  for item in "${plan[@]}"; do
    read -ra words <<<"${item%%:*}"
    [ ${#words[@]} -ge 3 ] || { echo "ab_session.sh: AB_PLAN item '$item' needs TAG FILTER OPS... : NAME ..." >&2; exit 2; }
    tag=${words[0]} filter=${words[1]//\~/ }
    [ "$filter" = "*" ] && filter=""
    for name in ${item#*:}; do
      timeout 150 "$here/ssd-bench" --kernels "$(variant "$name")" --ops "${words[@]:2}" --filter "$filter" \
        --max-seconds "${AB_SECONDS:-0.25}" --json "$out/$name.$tag.$round.json" >"$out/$name.$tag.$round.txt" 2>&1
      echo "$name $tag round $round: exit $? at $(($(date +%s) - started)) s"
      save
    done
  done
done
for name in ${AB_PROBLEMS:-}; do
  timeout 150 "$here/ssd-fuzz" --kernels "$(variant "$name")" --problems "$here/fast_problems.txt" --dump "" -q \
    >"$out/problems.$name.txt" 2>&1
  echo "fast_problems.txt, $name: exit $?"
  tail -1 "$out/problems.$name.txt"
  save
done
for name in ${AB_MEMCHECK:-}; do
  timeout 200 compute-sanitizer --tool memcheck --error-exitcode 9 "$here/ssd-fuzz" --kernels "$(variant "$name")" \
    --isolation none --problems "$here/fast_problems.txt" --dump "" -q >"$out/memcheck.$name.txt" 2>&1
  echo "memcheck on fast_problems.txt, $name: exit $?"
  tail -1 "$out/memcheck.$name.txt"
  save
done
for entry in ${AB_FUZZ:-}; do
  name=${entry%%:*}
  timeout $((${AB_FUZZ_SECONDS:-20} + 60)) "$here/ssd-fuzz" --kernels "$(variant "$name")" --ops "${entry#*:}" \
    --time "${AB_FUZZ_SECONDS:-20}" --dump "" -q >"$out/fuzz.$name.txt" 2>&1
  echo "fuzz ${entry#*:}, $name: exit $?"
  tail -1 "$out/fuzz.$name.txt"
  save
done
