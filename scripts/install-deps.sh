#!/usr/bin/env bash
# Installs the Debian 12 packages dptune needs, if any is missing (run as root, or with sudo available).
# Usage: scripts/install-deps.sh [--test]
#   (no option)  what building and running dptune needs: the compiler and build tools, the libraries,
#                Debian's Fashion-MNIST (examples/pipelines/fashion_mnist_*), and python3 with numpy
#                for the command trainer's example programs (examples/command) and the numpy model
#                loader (examples/python); ccache, through which CMake compiles when it is there
#                (a rebuild, or a build of another checkout of dptune, compiles from the cache).
#   --test       also what only the test suite needs: doctest; chromium and fonts-dejavu-core (the
#                rendering test screenshots report.html and the plots with headless Chromium); clang
#                and libclang-rt-14-dev (libFuzzer and the sanitizer runtimes of scripts/fuzz.sh);
#                openmpi-bin and libopenmpi-dev (the MPI executor, docs/mpi.md, and tests/mpi: the
#                executor is built whenever CMake finds an MPI library); python3-matplotlib (the
#                tuner benchmark's plots, bench/tuners/run.py, and its test tests/bench_tuners).
set -euo pipefail
packages=(cmake g++ ninja-build ccache pkg-config binutils libboost-dev libboost-program-options-dev
          libyaml-cpp-dev libsodium-dev libeigen3-dev liblbfgspp-dev zlib1g-dev libsqlite3-dev
          dataset-fashion-mnist python3 python3-numpy)
case "${1:-}" in
  "") ;;
  --test)
    packages+=(doctest-dev chromium fonts-dejavu-core clang libclang-rt-14-dev openmpi-bin
               libopenmpi-dev python3-matplotlib) ;;
  *) echo "usage: scripts/install-deps.sh [--test]" >&2; exit 2 ;;
esac
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
