#!/usr/bin/env bash
# One entry point for a fresh Debian 12 machine: installs what is missing, builds, and runs.
#   bash tools/dev.sh suite       the main job: the suite on its own kernels (golden set, a 30 s fuzz
#                                 campaign, the planted-bug self-test), one table op x dtype
#   bash tools/dev.sh selfcheck   both oracle forms over every op's smoke problems
#   bash tools/dev.sh test        the whole ctest suite
#   bash tools/dev.sh bench       the float64 oracle on every full-size workload (minutes)
#   bash tools/dev.sh build [TARGET ...]
#                                 dependencies and build only (of the named CMake targets, or of all)
set -euo pipefail
cd "$(dirname "$0")/.."

packages=(build-essential cmake ninja-build pkg-config libeigen3-dev libomp-dev libgtest-dev
          librapidcheck-dev libcli11-dev libhdf5-dev libfmt-dev nlohmann-json3-dev libssl-dev python3-h5py python3-numpy
          python3-pytest)

install_missing_packages() {
  local missing=()
  for p in "${packages[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  echo "installing: ${missing[*]}"
  local sudo=""
  [ "$(id -u)" -eq 0 ] || sudo="sudo"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

build() {
  install_missing_packages
  cmake --preset release >/dev/null
  if [ $# -gt 0 ]; then
    cmake --build --preset release -j "$(nproc)" --target "$@"
  else
    cmake --build --preset release -j "$(nproc)"
  fi
}

# Each step is its own command, never the left side of `&&`: bash ignores set -e inside a function
# called there, so `build && ...` would carry on past a failed configure into a stale build.
case "${1:-}" in
  build) shift; build "$@" ;;
  suite) build; ./build/tools/ssd-suite ;;
  selfcheck) build; ./build/tools/ssd-selfcheck ;;
  test) build; ctest --test-dir build --output-on-failure -j "$(nproc)" --timeout 1500 ;;
  bench) build; ./build/tools/ssd-oracle-bench ;;
  *) echo "usage: bash tools/dev.sh suite|selfcheck|test|bench|build" >&2; exit 2 ;;
esac
