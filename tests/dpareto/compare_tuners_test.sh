#!/usr/bin/env bash
# Test of scripts/compare_tuners.sh (DPareto against random and grid search):
#   compare_tuners_test.sh DPTUNE PIPELINE WORK_DIR
# 1. bad numeric options are refused with exit code 2;
# 2. a small comparison (2 seeds, 4 + 2 evaluations, grid of 5 x 5 = 25 >= 4 x 6) prints each
#    tuner's in-sample hypervolume, equal to its summary.json, and the means over the seeds;
# 3. --reevaluate 2 re-runs each reported front under the seeds 1000 s + j with the asked
#    repetitions: each re-scoring run evaluates exactly the front's candidates, in order, and
#    nothing else; the printed per-seed and mean re-scored values are the averages of those runs'
#    hypervolumes (recomputed here from their summary.json files).
set -euo pipefail
dptune="$1" pipeline="$2" work="$3"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"
export DPTUNE="$dptune"

# 1. Refusals.
set +e
bash "$here/scripts/compare_tuners.sh" "$pipeline" --reevaluate two --out "$work/bad" > "$work/bad.log" 2>&1
status=$?
set -e
[[ $status -eq 2 ]] || fail "--reevaluate two: exit $status, want 2"
grep -q "expected a non-negative integer, got 'two'" "$work/bad.log" || fail "no clear message for --reevaluate two"

# 2 and 3. A small comparison with re-scoring.
bash "$here/scripts/compare_tuners.sh" "$pipeline" --seeds 2 --initial 4 --iterations 2 \
  --reevaluate 2 --reeval-repetitions 3 --out "$work/cmp" > "$work/cmp.log" 2>&1 ||
  { cat "$work/cmp.log" >&2; fail "compare_tuners.sh failed"; }
out="$work/cmp"
hv() { tr -d '\n ' < "$1/summary.json" | sed -n 's/.*"hypervolume":{"value":\([^,}]*\).*/\1/p'; }
close() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(d <= 1e-4 * (1 + (a < 0 ? -a : a))) }'; }
# The parameter columns of a trials.csv or pareto_front.csv, one candidate per line.
params() { awk -F, 'NR == 1 { for (i = 1; i <= NF; i++) if ($i ~ /^param\./) c[++n] = i; next }
  { line = ""; for (k = 1; k <= n; k++) line = line (k > 1 ? "," : "") $c[k]; print line }' "$1"; }

for s in 1 2; do
  line=$(grep "^seed $s: dpareto" "$work/cmp.log" | head -1)
  [[ -n "$line" ]] || fail "no in-sample line for seed $s"
  close "$(awk '{ print $4 }' <<< "$line")" "$(hv "$out/dpareto_$s")" || fail "seed $s: printed dpareto value is not the summary's"
  close "$(awk '{ print $8 }' <<< "$line")" "$(hv "$out/grid_$s")" || fail "seed $s: printed grid value is not the summary's"
  grid_rows=$(($(wc -l < "$out/grid_$s/trials.csv") - 1))
  [[ $grid_rows -eq 25 ]] || fail "seed $s: grid has $grid_rows trials, want 25"
  rescored_line=$(grep "^seed $s: dpareto" "$work/cmp.log" | sed -n 2p)
  [[ -n "$rescored_line" ]] || fail "no re-scored line for seed $s"
  field=2
  for t in dpareto random grid; do
    field=$((field + 2))
    sum=0
    for j in 1 2; do
      run="$out/rescored_${t}_${s}_$j"
      grep -q "^  seed: $((1000 * s + j))\$" "$run/resolved_config.yaml" || fail "$run: not seeded with $((1000 * s + j))"
      grep -q "repetitions: 3" "$run/resolved_config.yaml" || fail "$run: not 3 repetitions"
      # The candidates of the re-scoring run are the front's, in order.
      diff <(params "$out/${t}_$s/pareto_front.csv") <(params "$run/trials.csv") > /dev/null ||
        fail "$run does not evaluate exactly the front of ${t}_$s"
      sum=$(awk -v a="$sum" -v b="$(hv "$run")" 'BEGIN { printf "%.12g", a + b }')
    done
    want=$(awk -v a="$sum" 'BEGIN { printf "%.12g", a / 2 }')
    got=$(awk -v f="$field" '{ print $f }' <<< "$rescored_line")
    close "$got" "$want" || fail "seed $s: re-scored $t printed $got, recomputed $want"
    echo "$want" >> "$work/rescored_$t"
  done
done
for t in dpareto random grid; do
  want=$(awk '{ t += $1; n++ } END { printf "%.12g", t / n }' "$work/rescored_$t")
  got=$(grep -A3 "^mean re-scored hypervolume over 2 seeds" "$work/cmp.log" | grep "^  $t:" | awk '{ print $2 }')
  close "$got" "$want" || fail "mean re-scored $t printed '$got', recomputed $want"
done
grep -q "dpareto above it on [0-2] of 2 seeds" "$work/cmp.log" || fail "no win counts"
echo "compare_tuners.sh: in-sample and re-scored hypervolumes check out"
