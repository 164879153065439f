#!/usr/bin/env bash
# Builds dptune and runs the whole test suite (the quick set and the slow set), a fuzzing pass (two
# targets for 30 s each, side by side), then the quick set again under AddressSanitizer and
# UndefinedBehaviorSanitizer, and prints each pass's wall time.  Usage: scripts/test.sh [--no-sanitize]
#   ctest --test-dir build               the quick set alone (every product code path, at the light
#                                        sizes of DPTUNE_TEST_LIGHT=1)
#   ctest --test-dir build -C slow       the quick set and the slow set, every case at full size:
#                                        statistical audits at full power, long examples, MPI
#                                        timeouts and repetitions of what the quick set covers
#                                        (cmake/DptuneTests.cmake, CONTRIBUTING.md)
set -euo pipefail
cd "$(dirname "$0")/.."
timings=()
# pass <name> <command...>: runs the command and records its wall time (and whether it failed).
pass() {
  local name=$1 start=$SECONDS code=0
  shift
  "$@" || code=$?
  timings+=("$(printf '%-40s %5d s' "$name" $((SECONDS - start)))$([ "$code" -eq 0 ] || echo " (failed, exit $code)")")
  return "$code"
}
report_timings() {
  echo "scripts/test.sh: wall time of each pass"
  printf '  %s\n' "${timings[@]}"
}
trap report_timings EXIT
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
pass "ctest -C slow (quick + slow set)" ctest --test-dir build -C slow --output-on-failure -j "$jobs"
# A short fuzzing pass over the YAML loaders (scripts/fuzz.sh: clang, libFuzzer, ASan + UBSan).
pass "fuzz (2 targets x 30 s)" scripts/fuzz.sh 60
if [ "${1:-}" != "--no-sanitize" ]; then
  # Every product source instrumented, at -Og with its assertions; the suite's own sources compiled
  # as in build/ above, so the compiler cache hands them over (cmake/DptuneSanitize.cmake).  The
  # build type is given so that a folder configured otherwise before is brought back to it.
  # The benchmarks are not product code and no test runs them: not built here.
  pass "build with sanitizers" scripts/build.sh build-asan -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DDPTUNE_SANITIZE=ON -DDPTUNE_BUILD_BENCH=OFF -DDPTUNE_REQUIRE_TESTS=ON
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
