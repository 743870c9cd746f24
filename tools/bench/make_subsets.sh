#!/usr/bin/env bash
# Every subset of several candidate changes as its own variant library, for a device call that
# times each candidate, keeps the faster ones (pick_subset.py) and verifies their subset's library
# at once (fast_session.sh verify-once), with no build between the timing and the verification.
#   tools/bench/make_subsets.sh CANDIDATE ...     (2 to 4 candidates), each one of
#     SOURCE.cu=REPLACEMENT.cu   the source replaced by another file
#     SOURCE.cu:-DNAME=VALUE     the source recompiled with a build option (a variant library
#                                recompiles its candidates' sources with every candidate's options,
#                                so each option must be one that only its own source reads; several
#                                candidates may name one source, which a variant then compiles once
#                                with those of its candidates); SOURCE.cu:-DA=1:-DB=1 is one candidate
#                                of two options
#   e.g. tools/bench/make_subsets.sh state_passing_fast.cu:-DSTATE_PASSING_SEGMENTS_PAST=32 \
#          chunk_scan_tc.cu=/tmp/chunk_scan_tc.cu
# Candidate i (from the left) is bit i of the name: with three candidates, sub_100 holds the
# first alone and sub_011 the second and third. Builds BUILD/variants/sub_<bits>.so with
# make_variant.sh (ninja's own compile and link lines; BUILD is $SSD_BUILD_DIR, default build/),
# four at a time; the single-candidate ones are the ab_session.sh variants to time.
set -euo pipefail
fail() { echo "make_subsets.sh: $*" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
usage="make_subsets.sh SOURCE.cu=REPLACEMENT.cu|SOURCE.cu:-DNAME=VALUE[:-DNAME=VALUE...] ... (2 to 4 candidates)"
if [ $# -lt 2 ] || [ $# -gt 4 ]; then fail "usage: $usage"; fi
for arg in "$@"; do
  if [[ $arg == *.cu:-D* ]]; then
    IFS=: read -ra options <<<"${arg#*.cu:}"
    for option in "${options[@]}"; do
      [[ $option =~ ^-D[A-Za-z_][A-Za-z0-9_]*(=[^[:space:]:]*)?$ ]] || fail "argument '$arg': not SOURCE.cu:-DNAME=VALUE"
    done
  else
    [[ $arg == *.cu=* ]] || fail "argument '$arg': not SOURCE.cu=REPLACEMENT.cu or SOURCE.cu:-DNAME=VALUE"
    [ -f "${arg#*=}" ] || fail "argument '$arg': no file ${arg#*=}"
  fi
done
# A replaced source is that candidate's alone: no second replacement, no option on it.
replaced=$(for arg in "$@"; do [[ $arg == *.cu:-D* ]] || echo "${arg%%=*}"; done)
sources=$(for arg in "$@"; do echo "${arg%%[=:]*}"; done | sort | uniq -d | grep -Fxf <(echo "$replaced") || true)
[ -z "$sources" ] || fail "arguments: a candidate replaces $sources, which another candidate also names"
n=$#
candidates=("$@")
logs=$(mktemp -d)
pids=()
for mask in $(seq 1 $(((1 << n) - 1))); do
  bits="" options=() picked=()
  for i in $(seq 0 $((n - 1))); do
    if (((mask >> (n - 1 - i)) & 1)); then
      bits+=1
      candidate=${candidates[$i]}
      if [[ $candidate == *.cu:-D* ]]; then  # make_variant.sh's arguments: the options, the source once
        IFS=: read -ra own <<<"${candidate#*.cu:}"
        options+=("${own[@]}")
        source=${candidate%%:*}
        [[ " ${picked[*]} " == *" $source "* ]] || picked+=("$source")
      else
        picked+=("$candidate")
      fi
    else
      bits+=0
    fi
  done
  "$root/tools/bench/make_variant.sh" "sub_$bits" "${options[@]}" "${picked[@]}" >"$logs/sub_$bits.log" 2>&1 &
  pids+=("$!:sub_$bits")
  if [ ${#pids[@]} -eq 4 ] || [ "$mask" -eq $(((1 << n) - 1)) ]; then
    for entry in "${pids[@]}"; do
      wait "${entry%%:*}" || { cat "$logs/${entry#*:}.log" >&2; fail "make_variant.sh failed for ${entry#*:}"; }
    done
    pids=()
  fi
done
rm -rf "$logs"
echo "built sub_* for $n candidates: $((1 << n)) - 1 libraries in ${SSD_BUILD_DIR:-$root/build}/variants"
