#!/usr/bin/env bash
# Configures and builds dptune.  Usage: scripts/build.sh [BUILD_DIR] [extra cmake args...]
#   scripts/build.sh                      -> build/ (RelWithDebInfo)
#   scripts/build.sh build-asan -DDPTUNE_SANITIZE=ON   (cmake/DptuneSanitize.cmake)
set -euo pipefail
cd "$(dirname "$0")/.."
build_dir=${1:-build}
shift || true
# Configured every time (a second of work when nothing changed): so that options given here, and
# packages installed since the last build (doctest for the suite, MPI), take effect.
generator=(-G Ninja)
[ -f "$build_dir/CMakeCache.txt" ] && generator=()
# The numerical plugin cores for this machine's instruction set (-march=native): this script builds
# where dptune runs.  CMake's own default is portable (cmake/DptunePluginCore.cmake); a later
# -DDPTUNE_NATIVE=OFF among the arguments wins.
cmake -S . -B "$build_dir" "${generator[@]}" -DDPTUNE_NATIVE=ON "$@" >/dev/null
cmake --build "$build_dir" -j "$(nproc)"
