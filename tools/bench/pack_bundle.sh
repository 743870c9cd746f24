#!/usr/bin/env bash
# One archive of a bundle (tools/gpu-bundle.sh) for a GPU host reached through a size-limited copy:
# the bundle without kernels/ (ssd-suite's emulation and planted-bug libraries, half its size), with
# every script and data file of tools/bench beside its programs (fast_session.sh, ab_session.sh, their
# problem list and mamba_ssm's times), the variant libraries of BUILD/variants (make_variant.sh) in
# variants/, and BEFORE, the library to compare against, as before/libssd-kernels-cuda.so.
#   bash tools/bench/pack_bundle.sh BUNDLE ARCHIVE.tgz [BEFORE.so]
# BUILD is $SSD_BUILD_DIR, default build/ of this checkout. On the GPU host:
#   tar xzf ARCHIVE.tgz -C DIR && bash DIR/bundle/fast_session.sh verify-once
# The archive is written beside its name and renamed at the end, so a failed run leaves none.
set -euo pipefail
fail() { echo "pack_bundle.sh: $*" >&2; exit 2; }
root=$(cd "$(dirname "$0")/../.." && pwd)
build=${SSD_BUILD_DIR:-$root/build}
[ $# -ge 2 ] && [ $# -le 3 ] || fail "usage: pack_bundle.sh BUNDLE ARCHIVE.tgz [BEFORE.so]"
bundle=$1 archive=$2 before=${3:-}
[ -x "$bundle/ssd_gpu_tests" ] && [ -f "$bundle/libssd-kernels-cuda.so" ] ||
  fail "argument 'BUNDLE': $bundle is not a bundle of tools/gpu-bundle.sh (no ssd_gpu_tests, libssd-kernels-cuda.so)"
[ -z "$before" ] || [ -f "$before" ] || fail "argument 'BEFORE': no file $before"
[ -d "$(dirname "$archive")" ] || fail "argument 'ARCHIVE': no folder $(dirname "$archive")"
case $archive in *.tgz|*.tar.gz) ;; *) fail "argument 'ARCHIVE': $archive does not end in .tgz or .tar.gz" ;; esac

stage=$(mktemp -d)
trap 'rm -rf "$stage" "$archive.part"' EXIT
cp -r "$bundle" "$stage/bundle"
rm -rf "$stage/bundle/kernels" "$stage/bundle/variants" "$stage/bundle/before"
find "$root/tools/bench" -maxdepth 1 -type f -exec cp {} "$stage/bundle/" \;
if compgen -G "$build/variants/*.so" >/dev/null; then
  mkdir -p "$stage/bundle/variants"
  cp "$build"/variants/*.so "$stage/bundle/variants/"
fi
if [ -n "$before" ]; then
  mkdir -p "$stage/bundle/before"
  cp "$before" "$stage/bundle/before/libssd-kernels-cuda.so"
fi
tar czf "$archive.part" -C "$stage" bundle
mv "$archive.part" "$archive"
echo "$archive: $(du -h "$archive" | cut -f1), variants: $(ls "$stage/bundle/variants" 2>/dev/null | tr '\n' ' ')"
