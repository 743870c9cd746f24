#!/usr/bin/env bash
# One device call that times candidate libraries against the landed one, keeps the faster ones,
# installs the kept subset's library as the bundle's own and starts its verification, so that
# timing, choice and a campaign of 10 minutes fit two calls (the second: fast_session.sh
# verify-finish on the same machine). Run from the bundle (pack_bundle.sh, with the landed library
# in BUNDLE/before/ and make_subsets.sh's libraries in BUNDLE/variants/):
#   PICK_PLAN="TAG FILTER OPS... : base sub_10; ..." PICK_CANDIDATES="sub_10 sub_01" \
#     PICK_FUZZ="sub_10:OPS sub_01:OPS" [PICK_PROBLEMS=FILE] bash BUNDLE/pick_session.sh
# PICK_PLAN and PICK_FUZZ are ab_session.sh's AB_PLAN and AB_FUZZ (AB_ROUNDS, AB_SECONDS and
# AB_FUZZ_SECONDS pass through); `base` is make_variant.sh's build of the landed sources.
# PICK_CANDIDATES: make_subsets.sh's one-candidate libraries in the order of its arguments
# (sub_100 sub_010 sub_001), whose kept bits name the subset's library (pick_subset.py).
# PICK_PROBLEMS: a problem file every candidate also replays against the oracle (shapes its random
# cases rarely reach, such as launches that split their last wave); a failure there counts as a
# failed fuzz run of that candidate, which is then not kept.
# PICK_TABLE=1: then fast_session.sh table of the installed library (SSD_MAMBA_DIR names mamba_ssm's
# package, mamba_subset.sh; SSD_MAMBA_SECONDS passes through), timed before the campaign occupies the
# GPU: A/B, pick, table and the start of the verification in one call.
# Then fast_session.sh verify-start of the installed library (SSD_VERIFY_OPS, SSD_FUZZ_SECONDS,
# SSD_FUZZ_SEED pass through); PICK_VERIFY=0 stops after the install (and the table), so that the
# call can time the kept library against another one (ssd-bench --against) before its campaign
# occupies the GPU, and the next call runs verify-start. Logs: $OUT/ab.log, ab.tgz, pick.txt (the
# kept library's name on its last line), table.tgz (PICK_TABLE=1) and verify-start.tgz. Exit 2 on
# bad input, before anything runs.
set -uo pipefail
fail() { echo "pick_session.sh: $*" >&2; exit 2; }
here=$(cd "$(dirname "$0")" && pwd)
final=${OUT:-.}
[ -n "${PICK_PLAN:-}" ] || fail "PICK_PLAN names what to time (ab_session.sh's AB_PLAN)"
[ -n "${PICK_CANDIDATES:-}" ] || fail "PICK_CANDIDATES names the one-candidate libraries (sub_100 sub_010 ...)"
[ -f "$here/before/libssd-kernels-cuda.so" ] || fail "no $here/before/libssd-kernels-cuda.so (the landed library)"
for name in base $PICK_CANDIDATES; do
  [ -f "$here/variants/$name.so" ] || fail "no variant $here/variants/$name.so"
done
[ -z "${PICK_PROBLEMS:-}" ] || [ -f "$PICK_PROBLEMS" ] || fail "PICK_PROBLEMS: no file $PICK_PROBLEMS"
case ${PICK_VERIFY:-1} in 0|1) ;; *) fail "PICK_VERIFY is 0 (stop after the install) or 1, not '$PICK_VERIFY'" ;; esac
case ${PICK_TABLE:-0} in 0|1) ;; *) fail "PICK_TABLE is 0 or 1 (the table of the kept library), not '$PICK_TABLE'" ;; esac
[ "${PICK_TABLE:-0}" = 0 ] || [ -d "${SSD_MAMBA_DIR:-}/mamba_ssm" ] ||
  fail "PICK_TABLE=1: SSD_MAMBA_DIR='${SSD_MAMBA_DIR:-}' holds no mamba_ssm/ (tools/bench/mamba_subset.sh makes one)"
mkdir -p "$final"
export LD_LIBRARY_PATH="$here/lib:$here:${LD_LIBRARY_PATH:-}"
log="$final/ab.log"
started=$(date +%s)

AB_PLAN="$PICK_PLAN" AB_FUZZ="${PICK_FUZZ:-}" bash "$here/ab_session.sh" >"$log" 2>&1
echo "A/B done at $(($(date +%s) - started)) s"
tail -n 12 "$log"
if [ -n "${PICK_PROBLEMS:-}" ]; then
  for name in $PICK_CANDIDATES; do
    timeout 150 "$here/ssd-fuzz" --kernels "$here/variants/$name.so" --problems "$PICK_PROBLEMS" --dump "" -q \
      >"$final/problems.$name.txt" 2>&1
    rc=$?
    echo "$(basename "$PICK_PROBLEMS"), $name: exit $rc"
    # pick_subset.py reads a candidate's last fuzz line: only a failure is added, so it cannot hide
    # a failed fuzz run of the candidate.
    [ $rc -eq 0 ] || echo "fuzz problems, $name: exit $rc" >>"$log"
  done
fi

results=$(mktemp -d)
trap 'rm -rf "$results"' EXIT
tar xzf "$final/ab.tgz" -C "$results" || fail "no $final/ab.tgz from ab_session.sh"
# shellcheck disable=SC2086
pick=$(python3 "$here/pick_subset.py" "$results" "$log" base $PICK_CANDIDATES 2>"$final/pick.txt") ||
  { cat "$final/pick.txt"; fail "pick_subset.py failed"; }
cat "$final/pick.txt"
echo "kept: $pick" | tee -a "$final/pick.txt"
if [ "$pick" != base ]; then
  [ -f "$here/variants/$pick.so" ] || fail "no $here/variants/$pick.so: make_subsets.sh builds every subset"
  cp "$here/variants/$pick.so" "$here/libssd-kernels-cuda.so"
fi
if [ "${PICK_TABLE:-0}" = 1 ]; then
  # A table that fails (no mamba_ssm times) still leaves the verification to run: it is what lands.
  bash "$here/fast_session.sh" table
  echo "table exit $? at $(($(date +%s) - started)) s"
fi
[ "${PICK_VERIFY:-1}" = 0 ] && { echo "installed at $(($(date +%s) - started)) s; verify-start not run (PICK_VERIFY=0)"; exit 0; }
bash "$here/fast_session.sh" verify-start
echo "verify-start done at $(($(date +%s) - started)) s"
