#!/usr/bin/env bash
# Builds dptune and runs the whole test suite, then again under AddressSanitizer and
# UndefinedBehaviorSanitizer.  Usage: scripts/test.sh [--no-sanitize]
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/install-deps.sh
scripts/build.sh build
ctest --test-dir build --output-on-failure -j "$(nproc)"
if [ "${1:-}" != "--no-sanitize" ]; then
  scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=Debug -DDPTUNE_SANITIZE=ON
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --test-dir build-asan --output-on-failure -j "$(nproc)"
fi
