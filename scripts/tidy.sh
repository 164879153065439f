#!/usr/bin/env bash
# Runs clang-tidy (checks in .clang-tidy) on the given C++ sources, or on the .cpp files changed
# since a git revision: scripts/tidy.sh [--since REV] [FILE...].  Needs a configured build/ (it
# writes compile_commands.json).  Exit status 1 if any warning is printed.
set -euo pipefail
cd "$(dirname "$0")/.."
[ -f build/compile_commands.json ] || scripts/build.sh build
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
  out=$(clang-tidy -p build --quiet "$f" 2>/dev/null | grep -E "^/.*: (warning|error):" || true)
  if [ -n "$out" ]; then
    echo "$out"
    status=1
  fi
done
exit $status
