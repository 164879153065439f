# Sourced by the release checks: collect_binaries PATH... sets the array `binaries` to the binaries
# given, a folder standing for every plugin (*.so) in it.  A missing binary or a folder without
# plugins ends the check with exit code 2 (a check over nothing must not pass).
collect_binaries() {
  binaries=()
  local path plugins
  for path in "$@"; do
    if [ -d "$path" ]; then
      plugins=("$path"/*.so)
      [ -e "${plugins[0]}" ] || { echo "FAIL: no plugin in $path" >&2; exit 2; }
      binaries+=("${plugins[@]}")
    else
      [ -f "$path" ] || { echo "FAIL: no binary $path" >&2; exit 2; }
      binaries+=("$path")
    fi
  done
}
