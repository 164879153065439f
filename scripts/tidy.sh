#!/usr/bin/env bash
# Runs clang-tidy (checks in .clang-tidy) on the given C++ sources, or on the .cpp files changed
# since a git revision: scripts/tidy.sh [--since REV] [FILE...].  Exit status 1 if any warning is
# printed.  The compile lines come from build-tidy/, configured here (nothing is built) as build/
# is but with a compile line for each test source: build/ compiles a test target's sources as one
# unity source (cmake/DptuneTests.cmake).
set -euo pipefail
cd "$(dirname "$0")/.."
generator=(-G Ninja)
[ -f build-tidy/CMakeCache.txt ] && generator=()
cmake -S . -B build-tidy "${generator[@]}" -DDPTUNE_NATIVE=ON -DDPTUNE_REQUIRE_TESTS=ON \
  -DDPTUNE_SUITE_UNITY=OFF >/dev/null
files=()
if [ "${1:-}" = "--since" ]; then
  files=($(git diff --name-only --diff-filter=AM "$2" -- '*.cpp'))
  shift 2
fi
files+=("$@")
if [ ${#files[@]} -eq 0 ]; then
  echo "scripts/tidy.sh: no files (give FILE... or --since REV)" >&2
  exit 2
fi
status=0
for f in "${files[@]}"; do
  out=$(clang-tidy -p build-tidy --quiet "$f" 2>/dev/null | grep -E "^/.*: (warning|error):" || true)
  if [ -n "$out" ]; then
    echo "$out"
    status=1
  fi
done
exit $status
