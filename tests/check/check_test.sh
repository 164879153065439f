#!/usr/bin/env bash
# `dptune check` (framework/cli/check.cpp) end to end.
# Usage: check_test.sh DPTUNE TEST_PLUGIN_DIR SOURCE_DIR WORK_DIR
set -uo pipefail
dptune=$1
plugins=$2
here=$3
work=$4
root=$here/../..
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
rm -rf "$work" && mkdir -p "$work"

# The bundled accountants pass every conformance check.
for accountant in rdp pld best pure_dp; do
  "$dptune" check accountant "$accountant" >"$work/$accountant.log" 2>&1 ||
    fail "accountant $accountant: exit $? ($(tail -3 "$work/$accountant.log"))"
  grep -q "^accountant $accountant: [0-9]* checks, 0 failed" "$work/$accountant.log" ||
    fail "accountant $accountant: no summary line"
done

# An accountant that forgets the count of a self-composition is caught: exit 1, with the event and
# the exact value it undercuts (4 Gaussians of s = 1 are one of s = 0.5).
"$dptune" check accountant forgetful --plugin-path "$plugins" >"$work/forgetful.log" 2>&1
code=$?
[ "$code" -eq 1 ] || fail "forgetful: exit $code, expected 1 ($(tail -3 "$work/forgetful.log"))"
grep -q "^FAIL forgetful: {self_composed: {count: 4, event: {gaussian: {noise_multiplier: 1.0}}}}: epsilon at delta 1e-05 .* is below the exact 9.99725" "$work/forgetful.log" ||
  fail "forgetful: the 4-fold Gaussian is not named ($(head -3 "$work/forgetful.log"))"

# An unknown accountant is a usage error.
"$dptune" check accountant no_such_accountant >"$work/unknown.log" 2>&1
code=$?
[ "$code" -eq 2 ] || fail "unknown accountant: exit $code, expected 2"

# The main job's pipeline passes the neighbouring-release check on its own data file.
"$dptune" check release "$root/examples/walkthrough/tune_my_csv.yaml" --work "$work/walkthrough" \
  >"$work/walkthrough.log" 2>&1 || fail "walkthrough: exit $? ($(tail -5 "$work/walkthrough.log"))"
grep -q "every differing field is a declared DP output" "$work/walkthrough.log" ||
  fail "walkthrough: no pass line ($(tail -3 "$work/walkthrough.log"))"
[ -e "$work/walkthrough/Dprime_s/out/summary.json" ] || fail "walkthrough: the runs are not kept"

# A private tuner that prints its runs' scores is caught, the note named: exit 1.
"$dptune" check release "$here/leaky.yaml" --plugin-path "$plugins" --work "$work/leaky" \
  >"$work/leaky.log" 2>&1
code=$?
[ "$code" -eq 1 ] || fail "leaky: exit $code, expected 1 ($(tail -5 "$work/leaky.log"))"
grep -q "^FAIL check_leaky: field 'stdout:note#[0-9]*' differs" "$work/leaky.log" ||
  fail "leaky: the note is not named ($(head -5 "$work/leaky.log"))"

# A privacy-utility map is not what the check is for: exit 2 before any run.
"$dptune" check release "$root/examples/pipelines/quickstart.yaml" --work "$work/map" \
  >"$work/map.log" 2>&1
code=$?
[ "$code" -eq 2 ] || fail "map: exit $code, expected 2"
[ ! -e "$work/map/D_s" ] || fail "map: a run happened"

[ "$failures" -eq 0 ] || exit 1
echo "check_test.sh: all cases passed"
