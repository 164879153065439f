#!/usr/bin/env bash
# Builds dptune and runs the whole test suite (the quick set and the slow set) while it builds the
# sanitizer tree beside it, a fuzzing pass (two targets for 30 s each, side by side), then the quick
# set again under AddressSanitizer and UndefinedBehaviorSanitizer, and prints each pass's wall time.
# Usage: scripts/test.sh [--no-sanitize]
#   ctest --test-dir build               the quick set alone (every product code path, at the light
#                                        sizes of DPTUNE_TEST_LIGHT=1)
#   ctest --test-dir build -C slow       the quick set and the slow set, every case at full size:
#                                        statistical audits at full power, long examples, MPI
#                                        timeouts and repetitions of what the quick set covers
#                                        (cmake/DptuneTests.cmake, CONTRIBUTING.md)
set -euo pipefail
cd "$(dirname "$0")/.."
timings=()
# record_timing <name> <seconds> <exit code>: a line of the timings printed at the end.
record_timing() {
  timings+=("$(printf '%-40s %5d s' "$1" "$2")$([ "$3" -eq 0 ] || echo " (failed, exit $3)")")
}
# pass <name> <command...>: runs the command and records its wall time (and whether it failed).
pass() {
  local name=$1 start=$SECONDS code=0
  shift
  "$@" || code=$?
  record_timing "$name" $((SECONDS - start)) "$code"
  return "$code"
}
# A pass started beside the others (start_beside, finish_beside): its process group, so that an
# early exit stops its compilers too.
beside_pid=""
on_exit() {
  trap - EXIT
  [ -z "$beside_pid" ] || kill -TERM -- "-$beside_pid" 2>/dev/null || true
  echo "scripts/test.sh: wall time of each pass"
  printf '  %s\n' "${timings[@]}"
  printf '  %-40s %5d s\n' "whole script" "$SECONDS"
}
trap on_exit EXIT
# start_beside <name> <log> <command...>: starts the command in the background at the lowest CPU
# priority, its output in <log>.  The passes in the foreground keep the processor; the command
# takes what they leave idle (the slow set waits on sleeping processes, MPI timeouts and killed
# studies for about a quarter of its wall time on two cores).  Job control (set -m) gives it a
# process group of its own but keeps it in this session: with the kernel's automatic session
# groups (sched_autogroup), a new session (setsid) would share the processor equally with this one
# whatever its nice value, and the slow set took 473 s instead of 266 s.
start_beside() {
  beside_name=$1 beside_log=$2 beside_start=$(date +%s)
  shift 2
  mkdir -p "$(dirname "$beside_log")"
  rm -f "$beside_log.end"
  set -m
  # A new bash, not a subshell: a subshell would inherit this script's EXIT trap.
  nice -n 19 bash -c '"${@:2}"; code=$?; date +%s >"$1"; exit $code' end_stamp "$beside_log.end" \
    "$@" >"$beside_log" 2>&1 &
  beside_pid=$!
  set +m
}
# finish_beside: waits for the command start_beside started and records it as a pass, with the
# time it took (not the time until this wait); its output is shown when it failed.
finish_beside() {
  local code=0 end
  wait "$beside_pid" || code=$?
  beside_pid=""
  end=$(cat "$beside_log.end" 2>/dev/null || date +%s)
  record_timing "$beside_name" $((end - beside_start)) "$code"
  if [ "$code" -ne 0 ]; then
    tail -n 100 "$beside_log"
  fi
  return "$code"
}
jobs=$(nproc)
# seed_test_costs <build dir>: on a build ctest has not run yet, the tests' measured times
# (tests/ctest_costs.txt, a CTestCostData.txt of a `ctest -C slow` run), so that ctest starts the
# longest tests first and the short ones beside them, instead of in the order they were added (a
# long test added late, such as the studies killed and resumed at timed points, then runs alone at
# the end).  ctest keeps its own measurements from then on.
seed_test_costs() {
  local costs="$1/Testing/Temporary/CTestCostData.txt"
  [ -s "$costs" ] || { mkdir -p "$(dirname "$costs")" && cp tests/ctest_costs.txt "$costs"; }
}
pass "install test packages" scripts/install-deps.sh --test
pass "build" scripts/build.sh build -DDPTUNE_REQUIRE_TESTS=ON
seed_test_costs build
sanitize=yes
[ "${1:-}" != "--no-sanitize" ] || sanitize=no
if [ "$sanitize" = yes ]; then
  # Every product source instrumented, at -Og with its assertions; the suite's own sources compiled
  # as in build/ above, so the compiler cache hands them over (cmake/DptuneSanitize.cmake).  The
  # build type is given so that a folder configured otherwise before is brought back to it.
  # The benchmarks are not product code and no test runs them: not built here.  Built beside the
  # slow set, from the idle processor time it leaves.
  # Then the fuzz targets (clang), whose pass below then only fuzzes.  (Built beside the sanitizer
  # pass instead, they slowed it by more than they gained: 1215 s for the whole script against
  # 1202 s from an empty compiler cache.)
  start_beside "build with sanitizers, fuzz targets (beside)" build-asan/test-sh-build.log \
    bash -c 'scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo -DDPTUNE_SANITIZE=ON \
      -DDPTUNE_BUILD_BENCH=OFF -DDPTUNE_REQUIRE_TESTS=ON && scripts/fuzz.sh --build-only'
fi
pass "ctest -C slow (quick + slow set)" ctest --test-dir build -C slow --output-on-failure -j "$jobs"
if [ "$sanitize" = yes ]; then
  finish_beside
fi
# A short fuzzing pass over the YAML loaders (scripts/fuzz.sh: clang, libFuzzer, ASan + UBSan).
pass "fuzz (2 targets x 30 s)" scripts/fuzz.sh 60
if [ "$sanitize" = yes ]; then
  # intercept_tls_get_addr=0: up to GCC 13, the sanitizer runtime's __tls_get_addr interceptor
  # takes a dynamic TLS block (our plugins are dlopen'ed) whose address is 16 mod 4096 for a
  # pre-2.25 glibc header and reads garbage before it; LeakSanitizer's stop-the-world tracer then
  # dies at exit ("Tracer caught signal 11") after a test has passed. Seen once in CI on
  # dptune_dp_hype_tests; see google/sanitizers#1322 and Mudlet#9930 for the mechanism.
  # The quick set only (a plain ctest): it runs every product code path the slow set runs (the
  # slow set repeats them at full statistical power or length, which the plain pass above checked).
  # DPTUNE_TEST_LIGHT=1: the tests that read it (tests/support/test_size.hpp, tests/mpi/mpi_test.sh)
  # run a smaller instance of the same code paths, as in any plain ctest; the plain pass above
  # (-C slow) ran them at full size.
  seed_test_costs build-asan
  DPTUNE_TEST_LIGHT=1 ASAN_OPTIONS=detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0 \
    UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    pass "ctest under the sanitizers (quick set)" \
    ctest --test-dir build-asan --output-on-failure -j "$jobs"
fi
