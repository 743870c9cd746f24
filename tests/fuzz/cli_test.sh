#!/usr/bin/env bash
# Usage errors of ssd-fuzz and ssd-golden: every bad option value exits 2 with exactly one line on
# stderr that names the option, and nothing runs or is written. Usage: cli_test.sh SSD_FUZZ SSD_GOLDEN
set -uo pipefail
fuzz="$1" golden="$2"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
failures=0

# expect_usage_error NAME EXPECTED_TEXT COMMAND...: exit status 2, one stderr line containing the text.
expect_usage_error() {
  local name="$1" expected="$2"
  shift 2
  local status=0
  timeout 20 "$@" >"$work/out" 2>"$work/err" || status=$?
  local lines
  lines=$(wc -l <"$work/err")
  if [ "$status" -ne 2 ] || [ "$lines" -ne 1 ] || ! grep -qF -- "$expected" "$work/err" ||
     [ "$(wc -c <"$work/err")" -gt 400 ]; then
    echo "FAIL $name: exit $status, $lines stderr line(s), expected 2, one line with '$expected':"
    sed 's/^/    /' "$work/err" | head -5
    failures=$((failures + 1))
  else
    echo "ok   $name: $(cat "$work/err")"
  fi
}

f=("$fuzz" --kernels emulation --quiet --dump "$work/dump")
expect_usage_error "time nan" "'--time'" "${f[@]}" --time nan
expect_usage_error "time inf" "'--time'" "${f[@]}" --time inf
expect_usage_error "time 0" "'--time'" "${f[@]}" --time 0
expect_usage_error "time negative" "'--time'" "${f[@]}" --time -5
expect_usage_error "time overflow" "'--time'" "${f[@]}" --time 1e400
expect_usage_error "time trailing" "'--time'" "${f[@]}" --time 5s
expect_usage_error "time too long" "'--time'" "${f[@]}" --time 1e8
expect_usage_error "time empty" "'--time'" "${f[@]}" --time ''
expect_usage_error "cases 0" "'--cases'" "${f[@]}" --cases 0
expect_usage_error "cases exponent" "'--cases'" "${f[@]}" --cases 1e3
expect_usage_error "cases sign" "'--cases'" "${f[@]}" --cases +5
expect_usage_error "time and cases" "--cases" "${f[@]}" --time 1 --cases 1
expect_usage_error "invariance word" "'--invariance'" "${f[@]}" --invariance maybe
expect_usage_error "shard junk" "'--shard'" "${f[@]}" --shard 1x/2
expect_usage_error "shard i = n" "'--shard'" "${f[@]}" --shard 2/2
expect_usage_error "shard n = 0" "'--shard'" "${f[@]}" --shard 0/0
expect_usage_error "shard no slash" "'--shard'" "${f[@]}" --shard 1
expect_usage_error "shard negative" "'--shard'" "${f[@]}" --shard -1/2
expect_usage_error "shard blank" "'--shard'" "${f[@]}" --shard '0/ 2'
expect_usage_error "seed negative" "'--seed'" "${f[@]}" --seed -1
expect_usage_error "seed fraction" "'--seed'" "${f[@]}" --seed 1.5
expect_usage_error "seed 2^64" "'--seed'" "${f[@]}" --seed 18446744073709551616
expect_usage_error "seed hex" "'--seed'" "${f[@]}" --seed 0x10
expect_usage_error "max-failures negative" "'--max-failures'" "${f[@]}" --max-failures -3
expect_usage_error "max-failures 2^31" "'--max-failures'" "${f[@]}" --max-failures 2147483648
expect_usage_error "large above 1" "'--large'" "${f[@]}" --large 1.5
expect_usage_error "large nan" "'--large'" "${f[@]}" --large nan
expect_usage_error "huge negative" "'--huge'" "${f[@]}" --huge -0.1
expect_usage_error "far above 1" "'--far'" "${f[@]}" --far 2
expect_usage_error "layout an op lacks" "chunk_cumsum takes no zxbcdt views" "${f[@]}" --problem "chunk_cumsum:f32 b1 s4 h1 q2 layout=zxbcdt seed=1"
expect_usage_error "max-case-gib 0" "'--max-case-gib'" "${f[@]}" --max-case-gib 0
expect_usage_error "max-case-gib nan" "'--max-case-gib'" "${f[@]}" --max-case-gib nan
expect_usage_error "huge over the given limit" "'--max-case-gib'" "${f[@]}" --huge 0.5 --max-case-gib 1
expect_usage_error "unknown op" "'--ops'" "${f[@]}" --ops mamba3
expect_usage_error "empty op" "'--ops'" "${f[@]}" --ops mamba2,,recurrent
expect_usage_error "trailing comma" "'--ops'" "${f[@]}" --ops mamba2,
expect_usage_error "op twice" "'--ops'" "${f[@]}" --ops mamba2,Mamba2Fwd,mamba2
expect_usage_error "dtype f64" "'--dtypes'" "${f[@]}" --dtypes f64
expect_usage_error "dtype unknown" "'--dtypes'" "${f[@]}" --dtypes fp8
touch "$work/file"
expect_usage_error "dump is a file" "'--dump'" "$fuzz" --kernels emulation --quiet --dump "$work/file"
expect_usage_error "unknown option" "--bogus" "${f[@]}" --bogus 3
expect_usage_error "missing kernels" "--kernels" "$fuzz" --time 1
expect_usage_error "unknown kernels" "'kernels'" "$fuzz" --kernels nonsense --cases 1
[ -e "$work/dump" ] && { echo "FAIL: a usage error created the dump directory"; failures=$((failures + 1)); }

# The extremes of the ranges are accepted and run.
if "$fuzz" --kernels emulation --cases 2 --seed 18446744073709551615 --shard 1048575/1048576 --quiet --dump '' \
     --ops recurrent >"$work/out" 2>&1 && grep -q "no failures" "$work/out"; then
  echo "ok   range extremes run"
else
  echo "FAIL range extremes:"; sed 's/^/    /' "$work/out" | tail -5; failures=$((failures + 1))
fi

# ssd-golden: bad values, and problems too large to hold, refused before anything is written.
expect_usage_error "golden worst negative" "'--worst'" "$golden" check --worst -1 "$work/none.h5"
expect_usage_error "golden worst junk" "'--worst'" "$golden" check --worst 2x "$work/none.h5"
expect_usage_error "golden unknown subcommand" "unknown subcommand 'frobnicate'" "$golden" frobnicate
expect_usage_error "golden max-case-gib" "'--max-case-gib'" "$golden" export --out "$work/x" --max-case-gib -1 \
  "chunk_cumsum:f32 b1 s4 h1 q2 seed=1"
expect_usage_error "golden b = s = 2^62" "overflows int64" "$golden" export --out "$work/x" \
  "chunk_scan:f32 b4611686018427387904 s4611686018427387904 h1 p1 g1 n1 q1 seed=1"
expect_usage_error "golden s = 10^12" "s1000000000000" "$golden" export --out "$work/x" \
  "chunk_cumsum:f32 b1 s1000000000000 h1 q1 seed=1"
expect_usage_error "golden q^2 over the limit" "over the limit of 16.0 GiB" "$golden" export --out "$work/x" \
  "chunk_scan:f32 b1 s1 h1 p1 g1 n1 q50000 seed=1"
expect_usage_error "golden limit lowered" "1201 elements (the largest dt [1,400,1]), 9608 bytes as float64, over the limit of 1 bytes" "$golden" export --out "$work/x" \
  --max-case-gib 1e-9 "chunk_cumsum:f32 b1 s400 h1 q2 seed=1"
expect_usage_error "golden second problem too large" "s1000000000000" "$golden" export --out "$work/x" \
  "chunk_cumsum:f32 b1 s4 h1 q2 seed=1" "chunk_cumsum:f32 b1 s1000000000000 h1 q1 seed=1"
[ -e "$work/x" ] && { echo "FAIL: a refused export wrote $work/x"; failures=$((failures + 1)); }

echo "$failures failure(s)"
[ "$failures" -eq 0 ]
