#!/usr/bin/env bash
# Checks that release binaries carry no test hook: none of the executable and plugins given contains
# the name of a variable that only a test build may read (DPTUNE_*_CAPTURE, DPTUNE_MPI_HELD_ROWS,
# DPTUNE_MPI_KEEP_ROWS).  A product dptune that read one could be made to write clients' plaintext
# inputs or peer messages to a file.  Exits 1 naming each binary and string found.
# Usage: no_test_hooks.sh EXECUTABLE PLUGIN_DIR
set -uo pipefail
[ $# -eq 2 ] || { echo "usage: no_test_hooks.sh EXECUTABLE PLUGIN_DIR" >&2; exit 2; }
[ -x "$1" ] || { echo "FAIL: no executable $1" >&2; exit 2; }
[ -d "$2" ] || { echo "FAIL: no plugin folder $2" >&2; exit 2; }
hooks='DPTUNE_[A-Z_]*CAPTURE|DPTUNE_MPI_HELD_ROWS|DPTUNE_MPI_KEEP_ROWS'
source "$(dirname "$0")/binaries.sh"
collect_binaries "$1" "$2"
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
