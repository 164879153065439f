#!/usr/bin/env bash
# Checks that release binaries carry no test hook: none of the executable and plugins given contains
# the name of a variable that only a test build may read (DPTUNE_*_CAPTURE, DPTUNE_MPI_HELD_ROWS,
# DPTUNE_MPI_KEEP_ROWS).  A product dptune that read one could be made to write clients' plaintext
# inputs or peer messages to a file.  Exits 1 naming each binary and string found.
# Usage: no_test_hooks.sh EXECUTABLE PLUGIN_DIR
set -uo pipefail
executable=$1
plugin_dir=$2
hooks='DPTUNE_[A-Z_]*CAPTURE|DPTUNE_MPI_HELD_ROWS|DPTUNE_MPI_KEEP_ROWS'
binaries=("$executable")
for plugin in "$plugin_dir"/*.so; do
  [ -e "$plugin" ] && binaries+=("$plugin")
done
# An empty plugin folder would make the check pass without checking: the build produces plugins.
[ -x "$executable" ] || { echo "FAIL: no executable $executable" >&2; exit 2; }
[ ${#binaries[@]} -ge 2 ] || { echo "FAIL: no plugin in $plugin_dir" >&2; exit 2; }
found=0
for binary in "${binaries[@]}"; do
  strings_found=$(grep -aoE "$hooks" "$binary" | sort -u | tr '\n' ' ')
  if [ -n "$strings_found" ]; then
    echo "test hook in $binary: $strings_found" >&2
    found=1
  fi
done
[ $found -eq 0 ] && echo "ok: ${#binaries[@]} binaries carry no test hook"
exit $found
