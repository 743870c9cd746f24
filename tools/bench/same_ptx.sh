#!/usr/bin/env bash
# Whether a change left the kernels of some gpu/src files as they were: each FILE compiled to PTX
# with the build's own nvcc line (ninja's, for the arch it builds the file for), once from the tree
# at REV and once from the working tree, then compared by ptx_equivalent.py (the same instructions
# up to the numbering of registers and labels). For a refactor of kernel code meant to change no
# kernel, which then needs no new GPU verification.
#   tools/bench/same_ptx.sh [--ignore-names] REV FILE.cu ... [-- NVCC_FLAG ...] [--old NVCC_FLAG ...]
#   e.g. tools/bench/same_ptx.sh HEAD~1 chunk_scan.cu chunk_state.cu
#        tools/bench/same_ptx.sh main state_passing_fast.cu -- -DSTATE_PASSING_SEGMENTS_PAST=32
#        tools/bench/same_ptx.sh HEAD chunk_scan_wgmma.cu --old -DSCAN_CB_STEPS=1
# NVCC_FLAGs after -- go to both compiles (a build option's other setting), those after --old to
# REV's alone: a kept build option landed as the source's only path compiles to the PTX of the
# library that was verified with the option. --ignore-names pairs kernels whose names changed (a
# template parameter added). BUILD is $SSD_BUILD_DIR, default
# build/ of this checkout, configured (ninja). SSD_PTX_KEEP=DIR keeps the two PTX files of each FILE
# there (old.FILE.ptx, new.FILE.ptx) for a diff. Exit 0 where every file's PTX is equivalent, 1 where
# one is not, 2 on bad input.
set -euo pipefail
fail() { echo "same_ptx.sh: $*" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${SSD_BUILD_DIR:-$root/build}
names=()
[ "${1:-}" = --ignore-names ] && names=(--ignore-names) && shift
usage="usage: same_ptx.sh [--ignore-names] REV FILE.cu ... [-- NVCC_FLAG ...] [--old NVCC_FLAG ...]"
[ $# -ge 2 ] || fail "$usage"
rev=$1
shift
files=() flags=() old_flags=()
while [ $# -gt 0 ] && [ "$1" != -- ] && [ "$1" != --old ]; do files+=("$1"); shift; done
if [ "${1:-}" = -- ]; then
  shift
  while [ $# -gt 0 ] && [ "$1" != --old ]; do flags+=("$1"); shift; done
fi
if [ "${1:-}" = --old ]; then
  shift
  [ $# -gt 0 ] || fail "argument '--old': no NVCC_FLAG after it"
  old_flags=("$@")
fi
[ ${#files[@]} -gt 0 ] || fail "no FILE.cu given"
git -C "$root" rev-parse --verify -q "$rev^{commit}" >/dev/null || fail "argument 'REV': '$rev' is not a commit of $root"
[ -f "$build/build.ninja" ] || fail "no ninja build in $build (set SSD_BUILD_DIR, or configure with the release preset)"
commands=$(cd "$build" && ninja -t commands ssd_gpu)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/old" "$work/ptx"
git -C "$root" archive "$rev" gpu | tar x -C "$work/old"
status=0
for file in "${files[@]}"; do
  [ -f "$root/gpu/src/$file" ] || fail "argument '$file': no file gpu/src/$file"
  [ -f "$work/old/gpu/src/$file" ] || fail "argument '$file': no file gpu/src/$file at $rev"
  line=
  for dir in ssd_gpu ssd_gpu_sm90a; do  # the library's sources, and those built for sm_90a alone
    line=$(grep -F -- "-o gpu/CMakeFiles/$dir.dir/src/$file.o" <<<"$commands" | head -1 || true)
    [ -z "$line" ] || break
  done
  [ -n "$line" ] || fail "argument '$file': ninja builds no gpu/src/$file into ssd_gpu"
  line=${line#: && }
  arch=$(grep -oE -- '--generate-code=arch=compute_[0-9a-z]+' <<<"$line" | head -1 | sed 's/.*=//')
  [ -n "$arch" ] || fail "argument '$file': no --generate-code=arch=... in its nvcc line"
  # The compile line as ninja has it, made to write PTX for the arch and to read the tree given.
  read -ra words <<<"$line"
  for tree in old new; do
    src=$root
    [ $tree = old ] && src=$work/old
    args=()
    skip=0
    for w in "${words[@]}"; do
      if [ $skip -gt 0 ]; then skip=$((skip - 1)); continue; fi
      case $w in
        -o|-MF|-MT) skip=1 ;;
        -MD|-c) ;;
        --generate-code=*) args+=("-arch=$arch") ;;
        *) args+=("${w//$root\/gpu\//$src/gpu/}") ;;
      esac
    done
    extra=("${flags[@]}")
    [ $tree = old ] && extra+=("${old_flags[@]}")
    (cd "$build" && "${args[@]}" "${extra[@]}" -ptx -o "$work/ptx/$tree.$file.ptx") ||
      fail "argument '$file': the $tree tree's compile failed"
  done
  echo "== $file"
  python3 "$root/tools/bench/ptx_equivalent.py" "$work/ptx/old.$file.ptx" "$work/ptx/new.$file.ptx" "${names[@]}" || status=1
  if [ -n "${SSD_PTX_KEEP:-}" ]; then
    mkdir -p "$SSD_PTX_KEEP" && cp "$work/ptx/old.$file.ptx" "$work/ptx/new.$file.ptx" "$SSD_PTX_KEEP/"
  fi
done
exit $status
