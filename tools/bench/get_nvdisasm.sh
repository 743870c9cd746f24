#!/usr/bin/env bash
# CUDA 11.8's nvdisasm for sass_steps.py on a host without one: Debian 12's nvidia-cuda-toolkit
# package (non-free) downloaded with a private apt configuration (the system's sources and lists
# are left as they are), unpacked, not installed, and its nvdisasm copied to DIR.
#   tools/bench/get_nvdisasm.sh DIR      then: sass_steps.py FILE.cu --nvdisasm DIR/nvdisasm
# Exit 2 on bad input; 1 where the download or the unpacking fails.
set -euo pipefail
fail() { echo "get_nvdisasm.sh: $*" >&2; exit "${2:-2}"; }
[ $# -eq 1 ] || fail "usage: get_nvdisasm.sh DIR"
dir=$1
[ -d "$(dirname "$dir")" ] || fail "argument 'DIR': no folder $(dirname "$dir")"
keyring=/usr/share/keyrings/debian-archive-keyring.gpg
[ -f "$keyring" ] || fail "no $keyring: not a Debian host" 1
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/lists/partial" "$work/archives/partial"
echo "deb [signed-by=$keyring] http://deb.debian.org/debian bookworm non-free" >"$work/sources.list"
apt=(apt-get -q -o Dir::Etc::SourceList="$work/sources.list" -o Dir::Etc::SourceParts=/dev/null
     -o Dir::State::Lists="$work/lists" -o Dir::Cache::Archives="$work/archives" -o Debug::NoLocking=1
     -o APT::Sandbox::User=root)
"${apt[@]}" update >"$work/log" 2>&1 || { cat "$work/log" >&2; fail "apt-get update of the non-free list failed" 1; }
(cd "$work" && "${apt[@]}" download nvidia-cuda-toolkit >>"$work/log" 2>&1) ||
  { cat "$work/log" >&2; fail "apt-get download nvidia-cuda-toolkit failed" 1; }
dpkg -x "$work"/nvidia-cuda-toolkit_*.deb "$work/x" || fail "dpkg -x of the package failed" 1
mkdir -p "$dir"
cp "$work/x/usr/bin/nvdisasm" "$dir/nvdisasm"
"$dir/nvdisasm" --version | tail -1
