#!/usr/bin/env bash
# Installs the Debian 12 packages dptune needs, if any is missing (run as root, or with sudo available).
# python3 and python3-numpy run the command trainer's example and test programs (examples/command,
# tests/command).
set -euo pipefail
packages=(cmake g++ ninja-build pkg-config binutils libboost-dev libboost-program-options-dev
          libyaml-cpp-dev doctest-dev libsodium-dev libeigen3-dev liblbfgspp-dev zlib1g-dev
          libsqlite3-dev dataset-fashion-mnist python3 python3-numpy chromium fonts-dejavu-core
          clang libclang-rt-14-dev openmpi-bin libopenmpi-dev)
# chromium and fonts-dejavu-core: the rendering test (tests/render) screenshots report.html and the
# plots with headless Chromium.  clang and libclang-rt-14-dev (libFuzzer and the sanitizer runtimes):
# the fuzz targets of scripts/fuzz.sh.  openmpi-bin and libopenmpi-dev: the optional MPI executor
# (docs/mpi.md, tests/mpi).
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  exit 0
fi
echo "dptune: installing ${missing[*]}" >&2
sudo_cmd=()
[ "$(id -u)" -eq 0 ] || sudo_cmd=(sudo)
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
