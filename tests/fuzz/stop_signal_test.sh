#!/usr/bin/env bash
# SIGTERM (what `timeout` and schedulers send) ends a campaign as if its time were up: exit status
# of the cases judged, the summary saying so, a report written. Usage: stop_signal_test.sh SSD_FUZZ
set -uo pipefail
fuzz="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
"$fuzz" --kernels emulation --time 600 --seed 1 --quiet --report "$work/report.json" >"$work/out" 2>&1 &
pid=$!
sleep 3
kill -TERM "$pid"
status=0
for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
if kill -0 "$pid" 2>/dev/null; then
  echo "FAIL: ssd-fuzz still runs 20 s after SIGTERM"; kill -KILL "$pid"; exit 1
fi
wait "$pid" || status=$?
fail() { echo "FAIL: $1"; sed 's/^/    /' "$work/out" | tail -5; exit 1; }
[ "$status" -eq 0 ] || fail "exit status $status, expected 0 (no failures among the cases judged)"
grep -q "^no failures (stopped by SIGTERM) after" "$work/out" || fail "no summary line saying it was stopped"
[ -f "$work/report.json" ] || fail "no report written"
grep -q '"stopped_by": "SIGTERM"' "$work/report.json" || fail "the report does not name SIGTERM"
grep -q '"summary": "no failures (stopped by SIGTERM)"' "$work/report.json" || fail "the report's summary"
grep -q '"cases": [1-9]' "$work/report.json" || fail "the report counts no case"
echo "ok: $(grep '^no failures' "$work/out")"
