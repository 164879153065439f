#!/usr/bin/env bash
# Configures and builds dptune.  Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
#   scripts/build.sh                      -> build/ (RelWithDebInfo)
#   scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug "-DCMAKE_CXX_FLAGS_DEBUG=-g -O1" -DDPTUNE_SANITIZE=ON
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true
if [ ! -f "$build_dir/build.ninja" ]; then
  cmake -S . -B "$build_dir" -G Ninja "$@" >/dev/null
fi
cmake --build "$build_dir" -j "$(nproc)"
