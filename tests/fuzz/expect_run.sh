#!/usr/bin/env bash
# Runs a command and checks its exit status and its output (stdout and stderr together): every
# --has pattern must match a line, no --lacks pattern may (grep -E).
#   expect_run.sh STATUS [--has REGEX]... [--lacks REGEX]... -- COMMAND [ARG]...
set -uo pipefail
want=$1
shift
has=() lacks=()
while [ $# -gt 0 ] && [ "$1" != "--" ]; do
  case $1 in
    --has) has+=("$2"); shift 2 ;;
    --lacks) lacks+=("$2"); shift 2 ;;
    *) echo "expect_run.sh: unknown option $1"; exit 2 ;;
  esac
done
shift
output=$("$@" 2>&1)
status=$?
echo "$output"
failed=0
if [ "$status" != "$want" ]; then echo "expect_run.sh: exit status $status, expected $want"; failed=1; fi
for pattern in "${has[@]}"; do
  grep -Eq -- "$pattern" <<<"$output" || { echo "expect_run.sh: no line matches '$pattern'"; failed=1; }
done
for pattern in "${lacks[@]}"; do
  if grep -Eq -- "$pattern" <<<"$output"; then echo "expect_run.sh: a line matches '$pattern'"; failed=1; fi
done
[ $failed = 0 ] && echo "expect_run.sh: as expected"
exit $failed
