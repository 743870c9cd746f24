#!/usr/bin/env bash
# A variant of the fast kernel library for an A/B on the GPU (ab_session.sh): some of ssd_gpu's
# sources recompiled with extra nvcc flags or replaced by another file, every other object taken
# from the build as it is, linked into BUILD/variants/NAME.so. The compile and link lines are
# ninja's own, so the variant differs from the library only where the arguments say.
#   tools/bench/make_variant.sh NAME [-DFLAG=1 ...] SOURCE.cu[=REPLACEMENT.cu] ...
#   e.g. tools/bench/make_variant.sh unroll2 -DSCAN_UNROLL=2 chunk_scan_tc.cu
#        tools/bench/make_variant.sh sp4 state_passing_fast.cu=/tmp/state_passing_fast.cu
# BUILD is $SSD_BUILD_DIR, default build/ of this checkout, configured and built (ninja).
set -euo pipefail
fail() { echo "make_variant.sh: $*" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${SSD_BUILD_DIR:-$root/build}
[ $# -ge 2 ] || fail "usage: make_variant.sh NAME [-DFLAG ...] SOURCE.cu[=REPLACEMENT.cu] ..."
name=$1
shift
[[ $name =~ ^[A-Za-z0-9_-]+$ ]] || fail "argument 'NAME': '$name' is not letters, digits, '_' and '-'"
[ -f "$build/build.ninja" ] || fail "no ninja build in $build (set SSD_BUILD_DIR, or configure with the release preset)"
commands=$(cd "$build" && ninja -t commands ssd_gpu)
link=$(grep -F -- '-o kernels/libssd-kernels-cuda.so' <<<"$commands" | tail -1 || true)
[ -n "$link" ] || fail "no link line of kernels/libssd-kernels-cuda.so in $build"
link=${link#: && }
flags=()
sources=()
for arg in "$@"; do
  if [[ $arg == -* ]]; then flags+=("$arg"); else sources+=("$arg"); fi
done
[ ${#sources[@]} -gt 0 ] || fail "no SOURCE.cu given: a variant recompiles at least one source"
objects=$(mktemp -d)
trap 'rm -rf "$objects"' EXIT
for arg in "${sources[@]}"; do
  source=${arg%%=*}
  replacement=
  [[ $arg == *=* ]] && replacement=${arg#*=}
  [ -z "$replacement" ] || [ -f "$replacement" ] || fail "argument '$arg': no file $replacement"
  cmd=
  for dir in ssd_gpu ssd_gpu_sm90a; do  # the library's sources, and those built for sm_90a alone
    obj=gpu/CMakeFiles/$dir.dir/src/$source.o
    cmd=$(grep -E -- "-o ${obj//./\\.}( |\$)" <<<"$commands" | head -1 || true)
    [ -z "$cmd" ] || break
  done
  [ -n "$cmd" ] || fail "argument '$arg': $source is not a source of ssd_gpu (gpu/src/)"
  cmd=${cmd/-MD -MT $obj -MF $obj.d/}
  cmd=${cmd/-o $obj/-o $objects/$source.o}
  [ -z "$replacement" ] || cmd=${cmd/ $root\/gpu\/src\/$source/ $(realpath "$replacement")}
  (cd "$build" && eval "$cmd ${flags[*]:-}") || fail "argument '$arg': the compile failed"
  link=${link/ $obj / $objects/$source.o }
done
mkdir -p "$build/variants"
link=${link/-o kernels\/libssd-kernels-cuda.so/-o $build/variants/$name.so.part}
(cd "$build" && eval "$link") || fail "the link of $name failed"
mv "$build/variants/$name.so.part" "$build/variants/$name.so"
echo "$build/variants/$name.so"
