#!/usr/bin/env bash
# One device session for the fast kernels, in phases that each fit one 10-minute call. Run from
# the folder that holds the bundle (tools/gpu-bundle.sh) with this script copied into it:
#   bash BUNDLE/fast_session.sh time      ssd-bench of the new library and of BUNDLE/before/ (if there),
#                                         then Nsight Compute kernel durations of Mamba2Fwd calls (both)
#   bash BUNDLE/fast_session.sh tests     golden, smoke, random problems, bit-identical reruns
#   bash BUNDLE/fast_session.sh workloads full-size workloads of SSD_WORKLOAD_OPS (default: the ops
#                                         these changes touch)
#   bash BUNDLE/fast_session.sh checks    memcheck and racecheck on the smoke problems, fast_problems.txt
#                                         (plain and under memcheck), a fuzz campaign
#   bash BUNDLE/fast_session.sh verify-start
#                                         the verification after a kernel change, part one: ssd-bench
#                                         times the candidate (the bundle's library) and BUNDLE/before/ (the
#                                         last verified library) on SSD_VERIFY_OPS (default every op: a
#                                         list such as "mamba2 chunk_scan" saves device time where the
#                                         other ops' kernels did not change); the fuzz campaign of the candidate
#                                         (SSD_FUZZ_SECONDS, default 610, two shards, from SSD_CAMPAIGN_DIR,
#                                         default /tmp/ssd-campaign)
#                                         starts; the candidate runs the GPU tests and fast_problems.txt.
#                                         It is kept if it passes and no op is slower (keep_candidate.py).
#                                         The campaign runs on after the call ends: start verify-finish
#                                         at once (the machine is given back after 30 s idle)
#   bash BUNDLE/fast_session.sh verify-finish
#                                         part two, the next call on the same machine: memcheck and
#                                         racecheck on the candidate (smoke problems), memcheck on all of
#                                         fast_problems.txt beside them (at most SSD_MEMCHECK_SECONDS,
#                                         default 400), the full-size workloads of SSD_WORKLOAD_OPS
#                                         (default mamba2,chunk_scan), the campaign's end (verify-start
#                                         prints when: the call's limit must fall after it, or
#                                         SSD_FINISH_BY seconds stop the campaign early with its summary)
#   bash BUNDLE/fast_session.sh verify-once
#                                         the whole verification in one call, where a second call may not
#                                         come (machines scarce): the campaign (SSD_FUZZ_SECONDS, default
#                                         540, the most that fits a 10-minute call) beside the GPU tests
#                                         (also with SSD_GPU_WGMMA=0: the mma.sync fallbacks),
#                                         fast_problems.txt plain and under memcheck, memcheck and racecheck
#                                         on the smoke problems and the full-size workloads of
#                                         SSD_WORKLOAD_OPS (default mamba2,chunk_scan), each step cut at the
#                                         campaign's end; before them, ssd-bench of SSD_VERIFY_BENCH_OPS if
#                                         set (e.g. "state_passing"), with BUNDLE/before/ also timed, in
#                                         SSD_VERIFY_ROUNDS alternating rounds (default 2), and judged as
#                                         verify-start judges (once_ab.txt, once_keep.txt); SSD_MEMCHECK_OPS
#                                         narrows memcheck's problems where the device time left is short
#   bash BUNDLE/fast_session.sh table   the table of the issue: mamba_ssm timed by time_mamba_ssm.py
#                                         (SSD_MAMBA_DIR holds its package, tools/bench/mamba_subset.sh;
#                                         at most SSD_MAMBA_SECONDS, default 300; all 36 workloads took
#                                         152 s with autotuning), then ssd-bench of the bundle's library
#                                         with --against those times and --targets, in the same call,
#                                         the device's copy and fill rates first (--memory-rates 512)
#   bash BUNDLE/fast_session.sh profile KERNEL OPS FILTER
#                                         Nsight Compute on the first launch of the kernels matching the
#                                         regex KERNEL in `ssd-bench --ops OPS --filter FILTER`: stalls,
#                                         occupancy, and the SASS source page summarized by sass_profile.py
#                                         (which instructions the kernel executes, and where)
# A/Bs of several variant libraries in one call: ab_session.sh (make_variant.sh builds them).
# Several candidates timed, picked and verified in one call: make_subsets.sh builds every subset of
# them, ab_session.sh times each alone against the landed library (with AB_FUZZ), pick_subset.py
# names the subset to keep, and verify-once runs on that library as the bundle's own; or, for a
# campaign of 10 minutes, pick_session.sh does the same with verify-start (verify-finish next call),
# and with PICK_TABLE=1 the table of the kept library between the pick and the campaign.
# Logs go to ${OUT:-.}/<phase>.tgz; mamba_ssm's H200 times (docs/performance.md) come from mamba_ssm_h200.json,
# the workloads' targets from workload_targets.json.
# Making the bundle: bash tools/gpu-bundle.sh BUNDLE; cp tools/bench/{fast_session.sh,mamba_ssm_h200.json,
# fast_problems.txt,sass_profile.py,keep_candidate.py} BUNDLE/; for the A/B, the library of the commit to compare against as
# BUNDLE/before/libssd-kernels-cuda.so. tools/bench/pack_bundle.sh BUNDLE ARCHIVE.tgz [BEFORE.so] does all
# of it (and adds make_variant.sh's variants) in one archive of about 26 MB.
# A campaign of 10 minutes or more outlasts one call (verify-start, verify-finish): it runs from a
# copy of the bundle outside it, since the next call's bundle replaces these files, and its
# processes are detached (setsid), so the call that starts them returns when its own steps end.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
# At most 8 files come back from a device call: each phase's logs go into one archive,
# $OUT/<phase>.tgz, rewritten after every step so that a call cut at its limit keeps what ran.
final=${OUT:-.}
out=$(mktemp -d)
mkdir -p "$final"
save() { tar czf "$final/${phase}.tgz.part" -C "$out" . && mv "$final/${phase}.tgz.part" "$final/${phase}.tgz"; }
phase=${1:-none}
trap save EXIT
export LD_LIBRARY_PATH="$here/lib:$here:${LD_LIBRARY_PATH:-}"
lib="$here/libssd-kernels-cuda.so"
ops=${SSD_BENCH_OPS:-"mamba2 chunk_scan chunk_state state_passing chunk_coupling"}
against=()
[ -f "$here/mamba_ssm_h200.json" ] && against=(--against "$here/mamba_ssm_h200.json" --against-name mamba_ssm)
# With mamba_ssm's times, each workload's target and whether it is met (on an H200 only a fair verdict).
[ ${#against[@]} -gt 0 ] && [ -f "$here/workload_targets.json" ] && against+=(--targets "$here/workload_targets.json")

# compute-sanitizer memcheck and racecheck on the smoke problems, for library $1; logs
# $out/$2memcheck.txt, $2racecheck.txt.
sanitize_smoke() {
  for tool in memcheck racecheck; do
    timeout 130 compute-sanitizer --tool $tool --error-exitcode 9 "$here/ssd_gpu_tests" --library "$1" \
      --manifest "$here/manifest.txt" --gtest_filter=Gpu.SmokeProblems >"$out/$2$tool.txt" 2>&1
    echo "$tool exit $?"
    tail -1 "$out/$2$tool.txt"
  done
}
# ssd-bench of the ops $3 (all where empty) for the candidate and, where BUNDLE/before/ holds the last
# verified library, for that one too, in $2 alternating rounds: $1/{before,after}.bench.ROUND.{json,txt}
# (ab_compare.py's names). Timed alone on the GPU: beside a campaign the large workloads ran up to 24%
# slower.
time_against_before() {
  local dir=$1 rounds=$2 ops=$3 prev="$here/before/libssd-kernels-cuda.so" which l
  local libraries=(after)
  [ -f "$prev" ] && libraries=(before after)
  mkdir -p "$dir"
  for round in $(seq 1 "$rounds"); do
    for which in "${libraries[@]}"; do
      l=$lib
      [ "$which" = before ] && l=$prev
      # shellcheck disable=SC2086
      timeout 120 "$here/ssd-bench" --kernels "$l" ${ops:+--ops $ops} --max-seconds 0.3 "${against[@]}" \
        --json "$dir/$which.bench.$round.json" >"$dir/$which.bench.$round.txt" 2>&1
      save
    done
  done
}
# memcheck on every problem of fast_problems.txt (SSD_MEMCHECK_SECONDS at most, default 400: the
# problems take minutes under the sanitizer), for library $1; log $out/$2memcheck_problems.txt.
# SSD_MEMCHECK_OPS (a regex of op names, e.g. "state_passing|mamba2") keeps the problems of those ops
# only, where the device time left would not cover all of them.
memcheck_problems() {
  local problems="$here/fast_problems.txt"
  if [ -n "${SSD_MEMCHECK_OPS:-}" ]; then
    problems=$(mktemp)
    grep -E "^(${SSD_MEMCHECK_OPS}):" "$here/fast_problems.txt" >"$problems"
  fi
  timeout "${SSD_MEMCHECK_SECONDS:-400}" compute-sanitizer --tool memcheck --error-exitcode 9 "$here/ssd-fuzz" \
    --kernels "$1" --isolation none --problems "$problems" --dump "" >"$out/$2memcheck_problems.txt" 2>&1
  local rc=$?
  echo "memcheck (fast_problems.txt) exit $rc, $(grep -cvE '^[[:space:]]*(#|$)' "$problems") problems" >>"$out/$2memcheck_problems.txt"
}
sanitize() {
  sanitize_smoke "$@"
  memcheck_problems "$@"
  tail -1 "$out/$2memcheck_problems.txt"
}

case "${1:-}" in
  time)
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,driver_version --format=csv
    # shellcheck disable=SC2086
    "$here/ssd-bench" --kernels "$lib" --ops $ops --max-seconds 1 "${against[@]}" --json "$out/after.json" 2>&1 |
      tee "$out/bench_after.txt"
    if [ -f "$here/before/libssd-kernels-cuda.so" ]; then
      # shellcheck disable=SC2086
      "$here/ssd-bench" --kernels "$here/before/libssd-kernels-cuda.so" --ops $ops --max-seconds 1 "${against[@]}" \
        --json "$out/before.json" 2>&1 | tee "$out/bench_before.txt"
    fi
    filter=${SSD_NCU_FILTER:-"mamba2:bf16 b1 s2048 h80 p64 g1 n128 q256 +softplus fill"}
    if command -v ncu >/dev/null; then
      for which in after before; do
        l=$lib
        [ $which = before ] && l="$here/before/libssd-kernels-cuda.so"
        [ -f "$l" ] || continue
        ncu --clock-control none --launch-count 12 \
          --metrics gpu__time_duration.sum,sm__warps_active.avg.pct_of_peak_sustained_active,dram__throughput.avg.pct_of_peak_sustained_elapsed \
          "$here/ssd-bench" --kernels "$l" --ops mamba2 --filter "$filter" --replays 1 2>&1 | tee "$out/ncu_$which.txt" |
          grep -E "kernel|duration|warps_active|dram__" | head -40
      done
    fi
    ;;
  tests)
    timeout 560 "$here/run.sh" --gtest_filter='-GpuWorkloads.*' 2>&1 | tee "$out/tests.txt" | tail -40
    ;;
  workloads)
    SSD_WORKLOAD_OPS=${SSD_WORKLOAD_OPS:-mamba2,chunk_scan,chunk_state,state_passing} timeout 560 "$here/run.sh" \
      --gtest_filter='*Workloads*' 2>&1 | tee "$out/workloads.txt" | tail -30
    ;;
  checks)
    sanitize "$lib" ""
    # The problems aimed at the changed kernels' shape conditions, plain (under memcheck above).
    timeout 60 "$here/fuzz.sh" --problems "$here/fast_problems.txt" --dump "" 2>&1 | tee "$out/problems.txt" | tail -8
    timeout 150 "$here/fuzz.sh" --time "${SSD_FUZZ_SECONDS:-120}" 2>&1 | tee "$out/fuzz.txt" | tail -25
    ;;
  verify-start)
    [[ ${SSD_FUZZ_SECONDS:-610} =~ ^[0-9]+(\.[0-9]+)?$ ]] ||
      { echo "SSD_FUZZ_SECONDS is seconds (e.g. 610), not '$SSD_FUZZ_SECONDS'" >&2; exit 2; }
    prev="$here/before/libssd-kernels-cuda.so"
    [ -f "$prev" ] && time_against_before "$out/verify_ab" 1 "${SSD_VERIFY_OPS:-}"
    # Then the campaign, on the candidate, beside the tests: device time is what bounds a session,
    # and a candidate that fails the tests is not kept whatever the campaign says.
    campaign=${SSD_CAMPAIGN_DIR:-/tmp/ssd-campaign}
    rm -rf "$campaign" && mkdir -p "$campaign" &&
      cp -r "$here/lib" "$here/ssd-fuzz" "$here/ssd-kernel-worker" "$campaign/" && cp "$lib" "$campaign/libssd-kernels-cuda.so"
    for shard in 0 1; do
      far=()
      [ $shard = 1 ] && far=(--far 0.02)
      # exec: no shell stays behind holding this script's stdout, which kept a caller that pipes
      # it (`| tail`) waiting for the whole campaign.
      (cd "$campaign" && LD_LIBRARY_PATH="$campaign/lib:$campaign" exec setsid nohup ./ssd-fuzz \
        --kernels "$campaign/libssd-kernels-cuda.so" --time "${SSD_FUZZ_SECONDS:-610}" --shard $shard/2 \
        --seed "${SSD_FUZZ_SEED:-1}" "${far[@]}" --dump "$campaign/failures$shard" >"$campaign/shard$shard.txt" 2>&1 \
        </dev/null) &
    done
    date -u +%T >"$campaign/started"
    seconds=${SSD_FUZZ_SECONDS:-610}
    ends=$(($(date +%s) + ${seconds%.*} + 1))
    echo "$ends" >"$campaign/ends"
    # The next call, verify-finish, needs a limit past this (it waits for the campaign's end; the
    # last case and any shrinking come after it).
    echo "campaign started $(cat "$campaign/started"), ends at about $(date -u -d "@$ends" +%T)"
    timeout 300 "$here/ssd_gpu_tests" --library "$lib" --manifest "$here/manifest.txt" --gtest_filter='-GpuWorkloads.*' \
      >"$out/verify_tests.txt" 2>&1
    tests_rc=$?
    timeout 120 "$here/ssd-fuzz" --kernels "$lib" --problems "$here/fast_problems.txt" --dump "" >"$out/verify_problems.txt" 2>&1
    problems_rc=$?
    echo "candidate: GPU tests exit $tests_rc, fast_problems.txt exit $problems_rc"
    grep -E "^\[  (PASSED|FAILED) " "$out/verify_tests.txt"
    # Kept: it passes, and no op is slower than before/ (keep_candidate.py).
    keep=candidate
    if [ -f "$prev" ]; then
      keep=$(python3 "$here/keep_candidate.py" "$out/verify_ab/before.bench.1.json" "$out/verify_ab/after.bench.1.json" \
        2>"$out/verify_keep.txt") ||
        keep=before
      cat "$out/verify_keep.txt"
    fi
    [ "$tests_rc" = 0 ] && [ "$problems_rc" = 0 ] || keep=before
    echo "keep: $keep" | tee "$out/verify_kept.txt"
    ;;
  verify-finish)
    campaign=${SSD_CAMPAIGN_DIR:-/tmp/ssd-campaign}
    [ -f "$campaign/started" ] || { echo "no campaign here: verify-start runs first, in the call before"; exit 1; }
    finish_by=${SSD_FINISH_BY:-0}
    case $finish_by in
      ''|*[!0-9]*) echo "SSD_FINISH_BY is whole seconds (0: wait for the campaign's end), not '$finish_by'" >&2; exit 2 ;;
    esac
    shards="ssd-fuzz --kernels $campaign/libssd-kernels-cuda.so"
    # While the campaign runs, a watcher copies the shards' logs among this phase's (each save returns
    # them, so a call cut at its limit still has every failure printed so far) and, SSD_FINISH_BY
    # seconds after this phase began (0: never), stops the shards with SIGTERM, on which each prints
    # its summary of the cases it ran ("stopped by SIGTERM"): a verdict on a shorter campaign, where
    # the call's limit falls before the campaign's end.
    (
      began=$(date +%s) stopped=
      while pgrep -f "$shards" >/dev/null; do
        for shard in 0 1; do cp "$campaign/shard$shard.txt" "$out/verify_shard$shard.txt"; done
        if [ -z "$stopped" ] && [ "$finish_by" -gt 0 ] && [ $(($(date +%s) - began)) -ge "$finish_by" ]; then
          pkill -TERM -f "$shards" && echo "campaign stopped by SIGTERM at $(date -u +%T) (SSD_FINISH_BY=$finish_by)"
          stopped=1
        fi
        sleep 2
      done
    ) &
    watcher=$!
    # memcheck on fast_problems.txt beside the smoke sanitizers and the full-size workloads: the three
    # take longer one after another than the campaign has left.
    memcheck_problems "$campaign/libssd-kernels-cuda.so" verify_ &
    memcheck_pid=$!
    sanitize_smoke "$campaign/libssd-kernels-cuda.so" verify_
    save
    SSD_WORKLOAD_OPS=${SSD_WORKLOAD_OPS:-mamba2,chunk_scan} timeout 330 "$here/ssd_gpu_tests" --library "$campaign/libssd-kernels-cuda.so" \
      --manifest "$here/manifest.txt" --gtest_filter='*Workloads*' >"$out/verify_workloads.txt" 2>&1
    echo "full-size workloads exit $?"
    grep -E "^(PASSED|FAILED|SUSPECT)" "$out/verify_workloads.txt" | cut -c1-120
    save
    wait "$memcheck_pid"
    tail -2 "$out/verify_memcheck_problems.txt"
    save
    echo "campaign started $(cat "$campaign/started"), now $(date -u +%T), ends in about $(($(cat "$campaign/ends") - $(date +%s))) s"
    while kill -0 "$watcher" 2>/dev/null; do
      sleep 2
      save
    done
    for shard in 0 1; do
      cp "$campaign/shard$shard.txt" "$out/verify_shard$shard.txt"
      grep -E "^\|" "$campaign/shard$shard.txt"
      tail -1 "$campaign/shard$shard.txt"
    done
    ;;
  verify-once)
    # The ops of SSD_VERIFY_BENCH_OPS timed first, alone on the GPU (the figures of the kernels verified);
    # with BUNDLE/before/, that library too, in SSD_VERIFY_ROUNDS alternating rounds (default 2): the
    # medians compared (ab_compare.py, once_ab.txt) and keep_candidate.py's verdict on the last round.
    if [ -n "${SSD_VERIFY_BENCH_OPS:-}" ]; then
      prev="$here/before/libssd-kernels-cuda.so"
      rounds=${SSD_VERIFY_ROUNDS:-2}
      time_against_before "$out/once_ab" "$rounds" "$SSD_VERIFY_BENCH_OPS"
      grep -E "^\| [A-Z]|x$" "$out/once_ab/after.bench.$rounds.txt" | cut -c1-160
      if [ -f "$prev" ]; then
        python3 "$here/ab_compare.py" "$out/once_ab" before after >"$out/once_ab.txt" 2>&1
        cat "$out/once_ab.txt"
        python3 "$here/keep_candidate.py" "$out/once_ab/before.bench.$rounds.json" \
          "$out/once_ab/after.bench.$rounds.json" >"$out/once_keep.txt" 2>&1
        cat "$out/once_keep.txt"
      fi
    fi
    seconds=${SSD_FUZZ_SECONDS:-540}
    deadline=$(($(date +%s) + seconds + 20))
    left() { local l=$((deadline - $(date +%s))); [ $l -gt 5 ] && echo $l || echo 5; }
    for shard in 0 1; do
      far=()
      [ $shard = 1 ] && far=(--far 0.02)
      timeout $((seconds + 60)) "$here/ssd-fuzz" --kernels "$lib" --time "$seconds" --shard $shard/2 \
        --seed "${SSD_FUZZ_SEED:-1}" "${far[@]}" --dump "" >"$out/once_shard$shard.txt" 2>&1 &
    done
    (
      timeout "$(left)" "$here/ssd_gpu_tests" --library "$lib" --manifest "$here/manifest.txt" \
        --gtest_filter='-GpuWorkloads.*' >"$out/once_tests.txt" 2>&1
      echo "GPU tests exit $?" >>"$out/once_tests.txt"
      # The full-size workloads before the plain run of fast_problems.txt: a short campaign cuts this
      # chain's last step, and memcheck's run beside it judges those problems too.
      SSD_WORKLOAD_OPS=${SSD_WORKLOAD_OPS:-mamba2,chunk_scan} timeout "$(left)" "$here/ssd_gpu_tests" --library "$lib" \
        --manifest "$here/manifest.txt" --gtest_filter='*Workloads*' >"$out/once_workloads.txt" 2>&1
      echo "full-size workloads exit $?" >>"$out/once_workloads.txt"
      timeout "$(left)" "$here/ssd-fuzz" --kernels "$lib" --problems "$here/fast_problems.txt" --dump "" \
        >"$out/once_problems.txt" 2>&1
      echo "fast_problems.txt exit $?" >>"$out/once_problems.txt"
    ) &
    SSD_MEMCHECK_SECONDS=$(left) memcheck_problems "$lib" once_ &
    (
      sanitize_smoke "$lib" once_ >"$out/once_sanitize.txt" 2>&1
      SSD_GPU_WGMMA=0 timeout "$(left)" "$here/ssd_gpu_tests" --library "$lib" --manifest "$here/manifest.txt" \
        --gtest_filter='-GpuWorkloads.*' >"$out/once_fallback_tests.txt" 2>&1
      echo "GPU tests with SSD_GPU_WGMMA=0 exit $?" >>"$out/once_fallback_tests.txt"
    ) &
    while [ -n "$(jobs -r)" ]; do
      sleep 10
      save
    done
    for f in tests fallback_tests problems workloads memcheck_problems sanitize; do tail -2 "$out/once_$f.txt"; done
    grep -hE "^(PASSED|FAILED|SUSPECT)" "$out/once_workloads.txt" | cut -c1-120
    for shard in 0 1; do
      grep -E "^\|" "$out/once_shard$shard.txt"
      tail -1 "$out/once_shard$shard.txt"
    done
    ;;
  table)
    # mamba_ssm's Triton kernels timed by time_mamba_ssm.py, then ssd-bench of the bundle's library
    # against those times with the workloads' targets: the table, both timed in one call on one GPU.
    mamba=${SSD_MAMBA_DIR:-}
    [ -d "$mamba/mamba_ssm" ] ||
      { echo "table: SSD_MAMBA_DIR='$mamba' holds no mamba_ssm/ (tools/bench/mamba_subset.sh makes one)" >&2; exit 2; }
    nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm,temperature.gpu,driver_version --format=csv,noheader |
      tee "$out/gpu.txt"
    timeout "${SSD_MAMBA_SECONDS:-300}" python3 "$here/time_mamba_ssm.py" --mamba "$mamba" --out "$out/mamba_ssm.json" \
      >"$out/mamba_ssm.txt" 2>&1
    echo "time_mamba_ssm.py exit $?"
    save
    [ -s "$out/mamba_ssm.json" ] || { tail -5 "$out/mamba_ssm.txt"; echo "table: no mamba_ssm times"; exit 1; }
    # --memory-rates: the device's own copy and fill rates first, the ceilings of the floor column.
    timeout 240 "$here/ssd-bench" --kernels "$lib" --max-seconds 0.5 --memory-rates 512 --against "$out/mamba_ssm.json" \
      --against-name mamba_ssm --targets "$here/workload_targets.json" --json "$out/table.json" >"$out/table.txt" 2>&1
    rc=$?
    echo "ssd-bench exit $rc"
    grep -vE "^\| [A-Z]" "$out/table.txt" | tail -30  # the tallies and geometric means below the rows
    exit $rc
    ;;
  profile)
    kernel=${2:?usage: fast_session.sh profile KERNEL OPS FILTER}
    profile_ops=${3:?usage: fast_session.sh profile KERNEL OPS FILTER}
    filter=${4:?usage: fast_session.sh profile KERNEL OPS FILTER}
    name=profile_$(printf '%s' "$kernel" | tr -c 'A-Za-z0-9_' _)
    # shellcheck disable=SC2086
    timeout 200 ncu --clock-control none -k "regex:$kernel" --launch-count 1 --section SourceCounters \
      --section WarpStateStats --section LaunchStats --section Occupancy --section SpeedOfLight -o "$out/$name" \
      "$here/ssd-bench" --kernels "$lib" --ops $profile_ops --filter "$filter" --replays 1 >"$out/$name.log" 2>&1
    ncu -i "$out/$name.ncu-rep" --print-details all 2>&1 |
      grep -E "Duration|Executed Instructions  |Registers Per|Achieved Occ|Warp Cycles Per Issued|Stall (Wait|Not Sel|Barrier|Long|Short|Math)"
    ncu -i "$out/$name.ncu-rep" --page source --csv --print-source sass >"$out/$name.csv" 2>&1
    python3 "$here/sass_profile.py" "$out/$name.csv" | tee "$out/$name.md"
    ;;
  *)
    echo "usage: fast_session.sh time|tests|workloads|checks|verify-start|verify-finish|verify-once|table|profile" >&2
    exit 2
    ;;
esac
