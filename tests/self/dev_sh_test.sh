#!/usr/bin/env bash
# tools/dev.sh stops at the first failing step: with a cmake whose configure fails, no later step
# (the build, ssd-selfcheck, ctest) runs and the script exits non-zero. And `dev.sh build TARGET ...`
# builds those targets alone, `dev.sh build` everything. Usage: dev_sh_test.sh DEV_SH
set -uo pipefail
dev_sh="$1"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/repo/tools" "$work/repo/build/tools" "$work/bin"
cp "$dev_sh" "$work/repo/tools/dev.sh"
# Stand-ins: every package reads as installed; cmake fails to configure and logs any build; the
# selfcheck and ctest leave a mark when run.
cat >"$work/bin/dpkg-query" <<'STUB'
#!/bin/sh
printf 'install ok installed'
STUB
cat >"$work/bin/cmake" <<STUB
#!/bin/sh
if [ "\$1" = "--preset" ]; then echo "configure failed" >&2; exit 1; fi
echo "\$*" >>"$work/built"
STUB
cat >"$work/bin/ctest" <<STUB
#!/bin/sh
touch "$work/tested"
STUB
cat >"$work/repo/build/tools/ssd-selfcheck" <<STUB
#!/bin/sh
touch "$work/selfchecked"
STUB
chmod +x "$work/bin/"* "$work/repo/build/tools/ssd-selfcheck"

failures=0
for step in build selfcheck test; do
  rm -f "$work/built" "$work/tested" "$work/selfchecked"
  status=0
  PATH="$work/bin:$PATH" bash "$work/repo/tools/dev.sh" "$step" >/dev/null 2>&1 || status=$?
  if [ "$status" -eq 0 ] || [ -e "$work/built" ] || [ -e "$work/tested" ] || [ -e "$work/selfchecked" ]; then
    echo "FAIL dev.sh $step: exit $status after a failed configure; later steps run: $(ls "$work" | tr '\n' ' ')"
    failures=$((failures + 1))
  else
    echo "ok   dev.sh $step stops at the failed configure (exit $status)"
  fi
done

# A cmake that configures: the build's arguments are logged.
cat >"$work/bin/cmake" <<STUB
#!/bin/sh
[ "\$1" = "--preset" ] && exit 0
echo "\$*" >>"$work/built"
STUB
expect_build() {  # expect_build WANT DEV_SH_ARGS...: the one build line dev.sh ran
  local want=$1
  shift
  rm -f "$work/built"
  PATH="$work/bin:$PATH" bash "$work/repo/tools/dev.sh" "$@" >/dev/null 2>&1
  local got
  got=$(cat "$work/built" 2>/dev/null)
  if [ "$got" = "$want" ]; then
    echo "ok   dev.sh $*: cmake $got"
  else
    echo "FAIL dev.sh $*: cmake '$got', wanted '$want'"
    failures=$((failures + 1))
  fi
}
jobs=$(nproc)
expect_build "--build --preset release -j $jobs --target ssd-fuzz ssd_capi" build ssd-fuzz ssd_capi
expect_build "--build --preset release -j $jobs" build
[ "$failures" -eq 0 ]
