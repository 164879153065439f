#!/usr/bin/env bash
# bench/check against benchmarks that print canned numbers: it passes on the recorded ratios,
# flags a ratio more than 20 % above its record (exit 1), ignores one that improved, and --record
# rewrites the table.  Usage: check_test.sh SOURCE_DIR WORK_DIR
set -uo pipefail
src=$1
work=$2
rm -rf "$work" && mkdir -p "$work/bin"
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
canned() {  # tabled_gaussian_ns ziggurat_ns composed_ms query_ms
  cat >"$work/bin/bench_discrete" <<SCRIPT
#!/bin/sh
echo "exact samplers, libsodium ChaCha20: ns per draw"
echo "  ziggurat normal (noise: fast), for scale       $2 ns per draw   64.00 bits per draw"
echo "  discrete_gaussian_tabled, grid sigma           $1 ns per draw   30.11 bits per draw"
echo "  discrete_laplace_tabled, scale 2^22            $1 ns per draw   31.25 bits per draw"
SCRIPT
  cat >"$work/bin/bench_accounting" <<SCRIPT
#!/bin/sh
echo "dp-sgd 60 epochs, sampling without replacement:                       eps = 24.0 in $4 ms"
echo "10^6 composed Poisson-sampled Gaussian steps:                          eps = 33.5 in $3 ms (target < 100 ms)"
SCRIPT
  chmod +x "$work/bin/bench_discrete" "$work/bin/bench_accounting"
}
printf '# bench\n\ntext before\n' >"$work/README.md"
check() { "$src/bench/check" --build "$work" --readme "$work/README.md" "$@"; }

canned 20 10 400 20
check --record >"$work/record.log" || fail "--record exited $?"
grep -q "| accounting: 10^6 composed Poisson steps / one 60-epoch fixed-size-lot query, ms | 20 |" \
  "$work/README.md" || fail "--record did not write the ratio 20 ($(cat "$work/README.md"))"
grep -q "^text before" "$work/README.md" || fail "--record lost the README's text"
check >"$work/same.log" || fail "the recorded ratios exited $? ($(cat "$work/same.log"))"

canned 20 10 300 20  # composed steps faster: ratio 15 < 20, fine
check >"$work/better.log" || fail "an improvement exited $?"
canned 23 10 400 20  # tabled Gaussian +15 %: within the tolerance
check >"$work/within.log" || fail "+15 % exited $?"
canned 20 10 500 20  # composed steps +25 %: regressed
check >"$work/worse.log"
[ $? -eq 1 ] || fail "+25 % did not exit 1"
grep -q "^REGRESSED .*10^6 composed Poisson steps.*(recorded 20, +25%)" "$work/worse.log" ||
  fail "the regression is not named ($(cat "$work/worse.log"))"
grep -q "^ok .*tabled Gaussian" "$work/worse.log" || fail "the unchanged ratio is not ok"

[ "$failures" -eq 0 ] || exit 1
echo "check_test.sh: all cases passed"
