#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang into build-fuzz and runs each for half of SECONDS
# (default 600 in total; side by side on two cores or more, so the pass lasts SECONDS / 2):
# fuzz_pipeline (pipeline text -> validated pipeline or located error) and fuzz_event (event
# text -> DpEvent or located error).  A hang (-timeout), a memory blow-up
# (-rss_limit_mb), a crash, a sanitizer report or a broken invariant is a finding: its input is
# saved as build-fuzz/findings/<target>-<kind>-<hash> and the script exits 1.
# Usage: scripts/fuzz.sh [SECONDS]     builds the targets, then fuzzes
#        scripts/fuzz.sh --build-only  builds the targets (scripts/test.sh, beside its slow set)
# The pipeline target loads the plugins of the ordinary build in build/ (built first if missing).
set -euo pipefail
cd "$(dirname "$0")/.."
total=${1:-600}
if [ "$total" != --build-only ]; then
  [[ "$total" =~ ^[0-9]+$ ]] && [ $((total / 2)) -ge 1 ] ||
    { echo "fuzz.sh: SECONDS must be a whole number, at least 2 (or --build-only)" >&2; exit 2; }
fi

[ -x build/bin/dptune ] || scripts/build.sh build
if [ ! -f build-fuzz/build.ninja ]; then
  cmake -S fuzz -B build-fuzz -G Ninja -DCMAKE_CXX_COMPILER=clang++ >/dev/null
fi
cmake --build build-fuzz -j "$(nproc)"
[ "$total" != --build-only ] || exit 0
per_target=$((total / 2))

# Seeds: the bad-pipeline corpus, the example pipelines and (for events) fuzz/events.  New inputs
# the fuzzer finds interesting accumulate in build-fuzz/corpus/<target> across runs.
seeds=build-fuzz/seeds
rm -rf "$seeds" && mkdir -p "$seeds/pipeline" "$seeds/event" build-fuzz/findings
cp tests/bad_pipelines/*.yaml examples/pipelines/*.yaml "$seeds/pipeline/"
cp fuzz/events/*.yaml "$seeds/pipeline/"* "$seeds/event/"

# fuzz <target>: one libFuzzer run; its exit status says whether it found a problem.
fuzz() {
  local target=$1
  mkdir -p "build-fuzz/corpus/$target"
  echo "fuzz.sh: fuzz_$target for ${per_target} s" >&2
  # -timeout: seconds one input may take (the loaders need milliseconds); -rss_limit_mb: the whole
  # process, sanitizers included; -max_len: larger than any seed.
  build-fuzz/fuzz_$target -max_total_time="$per_target" -timeout=10 -rss_limit_mb=2048 \
    -max_len=16384 -dict=fuzz/yaml.dict -print_final_stats=1 \
    -artifact_prefix="build-fuzz/findings/$target-" \
    "build-fuzz/corpus/$target" "$seeds/$target" 2>"build-fuzz/fuzz_$target.log"
}
# The two targets are independent single-threaded processes: on two cores or more they run side
# by side, so the pass takes half of SECONDS, with the same fuzzing time for each.
targets=(pipeline event)
declare -A pid
for target in "${targets[@]}"; do
  if [ "$(nproc)" -ge 2 ]; then
    fuzz "$target" &
    pid[$target]=$!
  else
    fuzz "$target" && pid[$target]=ok || pid[$target]=failed
  fi
done
status=0
for target in "${targets[@]}"; do
  found=0
  case "${pid[$target]}" in
    ok) ;;
    failed) found=1 ;;
    *) wait "${pid[$target]}" || found=1 ;;
  esac
  if [ "$found" -ne 0 ]; then
    echo "fuzz.sh: fuzz_$target found a problem; see build-fuzz/fuzz_$target.log and build-fuzz/findings" >&2
    tail -n 40 "build-fuzz/fuzz_$target.log" >&2
    status=1
  fi
  grep -E "^stat::number_of_executed_units|^#[0-9]+ +DONE" "build-fuzz/fuzz_$target.log" >&2 || true
done
exit "$status"
