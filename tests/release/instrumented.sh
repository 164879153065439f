#!/usr/bin/env bash
# Checks which sanitizer instrumentation product binaries carry: in the sanitizer build every
# executable, library and plugin given calls into both AddressSanitizer (__asan_report_*) and
# UndefinedBehaviorSanitizer (__ubsan_handle_*) (cmake/DptuneSanitize.cmake instruments every
# product source, wherever it is compiled); in the plain build none calls either.  A plugin folder
# stands for every plugin in it.  Exits 1 naming each binary that breaks the expectation.
# Usage: instrumented.sh yes|no BINARY_OR_PLUGIN_DIR...
set -uo pipefail
expect=$1
shift
[ "$expect" = yes ] || [ "$expect" = no ] ||
  { echo "usage: instrumented.sh yes|no FILE..." >&2; exit 2; }
source "$(dirname "$0")/binaries.sh"
collect_binaries "$@"
wrong=0
for binary in "${binaries[@]}"; do
  symbols=$(nm -D --undefined-only "$binary") ||
    { echo "FAIL: nm cannot read $binary" >&2; exit 2; }
  asan=no ubsan=no
  grep -q ' __asan_report_' <<<"$symbols" && asan=yes
  grep -q ' __ubsan_handle_' <<<"$symbols" && ubsan=yes
  if [ "$asan" != "$expect" ] || [ "$ubsan" != "$expect" ]; then
    echo "$binary: AddressSanitizer $asan, UndefinedBehaviorSanitizer $ubsan (expected $expect)" >&2
    wrong=1
  fi
done
[ $wrong -eq 0 ] && echo "ok: ${#binaries[@]} binaries, instrumented: $expect"
exit $wrong
