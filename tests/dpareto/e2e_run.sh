#!/usr/bin/env bash
# End-to-end test of the dpareto tuner through `dptune run`:
#   e2e_run.sh DPTUNE PIPELINE WORK_DIR
# 1. a run writes every output file; trials.csv holds initial + iterations rows; the front is the
#    set of non-dominated trials (epsilon down, utility up) and each front row is a trial; the
#    hypervolume trace is non-decreasing, starts after the initial design and ends at the
#    summary's value; the summary states the threat model;
# 2. a second run with initial_trials = the first run's trials.csv re-evaluates exactly those
#    candidates first (in order), then runs its own iterations;
# 3. the privacy model is stated, the published two-GP variant runs, threads do not change a study;
# 4. runtime_objective adds seconds per run as a third objective (3-D hypervolume and front).
set -euo pipefail
dptune="$1" pipeline="$2" work="$3"
initial=6 iterations=6
fail() { echo "FAIL: $*" >&2; exit 1; }
rm -rf "$work" && mkdir -p "$work"

"$dptune" run "$pipeline" --seed 3 --no-progress -o "$work/first" > "$work/first.log" 2>&1 ||
  { cat "$work/first.log" >&2; fail "first run failed"; }
for f in trials.csv pareto_front.csv pareto.svg hypervolume.csv hypervolume.svg summary.json \
         resolved_config.yaml variability_front.svg variability_front.csv report.html; do
  [[ -s "$work/first/$f" ]] || fail "missing or empty output $f"
done
rows=$(($(wc -l < "$work/first/trials.csv") - 1))
[[ $rows -eq $((initial + iterations)) ]] || fail "trials.csv has $rows rows, want $((initial + iterations))"
grep -q '"trusted_analyst_only": true' "$work/first/summary.json" || fail "summary lacks trusted_analyst_only"
grep -q 'threat model' "$work/first/summary.json" || fail "summary lacks the threat-model note"

# Columns by name (header of trials.csv; pareto_front.csv has the same header).
col() { head -1 "$1" | tr ',' '\n' | grep -nx "$2" | cut -d: -f1; }
e=$(col "$work/first/trials.csv" epsilon) u=$(col "$work/first/trials.csv" utility_mean)
id=$(col "$work/first/trials.csv" id)
[[ -n "$e" && -n "$u" && -n "$id" ]] || fail "trials.csv lacks id/epsilon/utility_mean"
# Non-dominated = the front: a trial is on the front iff no other trial has epsilon <= and
# utility >= with one strict; duplicates of a front point may be listed once.
awk -F, -v e="$e" -v u="$u" -v id="$id" '
  FNR == 1 { next }
  FILENAME == ARGV[1] { n++; E[n] = $e + 0; U[n] = $u + 0; I[n] = $id; next }
  { m++; fe = $e + 0; fu = $u + 0; found = 0
    for (k = 1; k <= n; k++) {
      if (I[k] == $id) { found = 1; if (E[k] != fe || U[k] != fu) { print "front row " $id " differs from its trial"; bad = 1 } }
      if ((E[k] <= fe && U[k] >= fu) && (E[k] < fe || U[k] > fu)) { print "front row " $id " dominated by trial " I[k]; bad = 1 } }
    if (!found) { print "front row " $id " is not a trial"; bad = 1 }
    F[m] = fe SUBSEP fu }
  END {
    for (k = 1; k <= n; k++) { dom = 0
      for (j = 1; j <= n; j++) if ((E[j] <= E[k] && U[j] >= U[k]) && (E[j] < E[k] || U[j] > U[k])) dom = 1
      if (!dom) { on = 0; for (j = 1; j <= m; j++) if (F[j] == (E[k] SUBSEP U[k])) on = 1
        if (!on) { print "non-dominated trial " I[k] " missing from the front"; bad = 1 } } }
    if (m < 1) { print "empty front"; bad = 1 }
    exit bad }' "$work/first/trials.csv" "$work/first/pareto_front.csv" || fail "front check"
# Hypervolume trace: one row after the initial design and one per iteration, non-decreasing, the
# last equal to the summary's hypervolume.
awk -F, -v want=$((iterations + 1)) -v first=$initial '
  NR == 1 { next }
  { n++; if (n == 1 && $1 + 0 != first) { print "trace starts at " $1; bad = 1 }
    if (n > 1 && $2 + 0 < last - 1e-12) { print "hypervolume decreases at " $1; bad = 1 } last = $2 + 0 }
  END { if (n != want) { print n " trace rows, want " want; bad = 1 }; printf "%.17g\n", last > "/dev/stderr"; exit bad }' \
  "$work/first/hypervolume.csv" 2> "$work/last_hv" || fail "hypervolume trace"
summary_hv=$(tr -d '\n ' < "$work/first/summary.json" | sed -n 's/.*"hypervolume":{"value":\([^,}]*\).*/\1/p')
awk -v a="$(cat "$work/last_hv")" -v b="$summary_hv" 'BEGIN { d = a - b; if (d < 0) d = -d; exit !(b != "" && d <= 1e-9 * (1 + b)) }' ||
  fail "trace ends at $(cat "$work/last_hv"), summary says '$summary_hv'"

# Variability fronts (Avent et al. 2020 Fig. 7), the members of variability_front.csv (member,x,y,...),
# split here into one "x,y" file each: the mean series is the host's front (epsilon,
# 1 - utility_mean), point for point; the best-run front lies below the worst-run front at the
# same epsilon: every worst-run point is weakly dominated by a best-run point (each trial's best
# run is at least its worst).
for m in mean best_run worst_run; do
  { echo "x,y"; awk -F, -v m="$m" 'NR > 1 && $1 == m { print $2 "," $3 }' "$work/first/variability_front.csv"; } \
    > "$work/first/variability_front.$m.xy"
done
awk -F, -v e="$e" -v u="$u" '
  FNR == 1 { next }
  FILENAME == ARGV[1] { n++; X[n] = $e + 0; Y[n] = 1 - $u; next }
  { m++; if (m > n || (X[m] - $1) ^ 2 > 1e-18 || (Y[m] - $2) ^ 2 > 1e-18) bad = 1 }
  END { if (m != n) bad = 1; exit bad }' \
  <(head -1 "$work/first/pareto_front.csv"; tail -n +2 "$work/first/pareto_front.csv" | sort -t, -k"$e","$e"g) \
  "$work/first/variability_front.mean.xy" || fail "variability_front.mean differs from pareto_front.csv"
awk -F, 'FNR == 1 { next }
  FILENAME == ARGV[1] { n++; BX[n] = $1; BY[n] = $2; next }
  { worst++; wx[worst] = $1; wy[worst] = $2 }
  END { for (j = 1; j <= worst; j++) { ok = 0
          for (k = 1; k <= n; k++) if (BX[k] <= wx[j] + 1e-12 && BY[k] <= wy[j] + 1e-12) ok = 1
          if (!ok) { print "worst-run point " wx[j] "," wy[j] " not covered by the best-run front"; bad = 1 } }
        exit bad }' "$work/first/variability_front.best_run.xy" "$work/first/variability_front.worst_run.xy" ||
  fail "best-run front does not dominate the worst-run front"

# initial_trials: the first run's 12 candidates come first, in order, then 2 iterations.
"$dptune" run "$pipeline" --seed 4 --no-progress -o "$work/second" \
  --set "tuner.params={iterations: 2, candidates: 200, restarts: 2, initial_trials: $work/first/trials.csv}" \
  > "$work/second.log" 2>&1 || { cat "$work/second.log" >&2; fail "run with initial_trials failed"; }
rows2=$(($(wc -l < "$work/second/trials.csv") - 1))
[[ $rows2 -eq $((rows + 2)) ]] || fail "second run has $rows2 trials, want $((rows + 2))"
params() { local f="$1" n="$2"; local cols; cols=$(head -1 "$f" | tr ',' '\n' | grep -n '^param\.' | cut -d: -f1 | paste -sd,)
  tail -n +2 "$f" | head -n "$n" | cut -d, -f"$cols"; }
diff <(params "$work/first/trials.csv" "$rows") <(params "$work/second/trials.csv" "$rows") > "$work/params.diff" ||
  { cat "$work/params.diff" >&2; fail "initial_trials not honoured: the first $rows candidates differ"; }
grep -q "initial candidates from" "$work/second/summary.json" || fail "summary does not name initial_trials"
# A relative initial_trials names a file beside the pipeline (not in the working directory).
mkdir -p "$work/elsewhere" "$work/cwd"
cp "$pipeline" "$work/elsewhere/pipeline.yaml" && cp "$work/first/trials.csv" "$work/elsewhere/earlier.csv"
(cd "$work/cwd" && "$dptune" run ../elsewhere/pipeline.yaml --seed 4 --no-progress -o "$work/relative" \
  --set "tuner.params={iterations: 1, candidates: 200, restarts: 2, initial_trials: earlier.csv}") \
  > "$work/relative.log" 2>&1 || { cat "$work/relative.log" >&2; fail "run with a relative initial_trials failed"; }
diff <(params "$work/first/trials.csv" "$rows") <(params "$work/relative/trials.csv" "$rows") > "$work/params.diff" ||
  { cat "$work/params.diff" >&2; fail "relative initial_trials not read beside the pipeline"; }
# 3. privacy_model: the default prices epsilon with the accountant (and says so); the published
#    two-GP variant (privacy_model gp, transformed units) still runs and says so; a study is the
#    same with 1 or 2 threads (the pricing is serial, the fits use one stream per GP).
grep -q "priced by the accountant" "$work/first/summary.json" || fail "default run does not name the accountant pricing"
for t in 1 2; do
  "$dptune" run "$pipeline" --seed 5 --threads "$t" --no-progress -o "$work/threads$t" > "$work/threads$t.log" 2>&1 ||
    { cat "$work/threads$t.log" >&2; fail "run with --threads $t failed"; }
done
cmp -s <(cut -d, -f1-8 "$work/threads1/trials.csv") <(cut -d, -f1-8 "$work/threads2/trials.csv") ||
  fail "trials differ between --threads 1 and --threads 2"
"$dptune" run "$pipeline" --seed 3 --no-progress -o "$work/paper" \
  --set "tuner.params={initial_points: 6, iterations: 3, candidates: 200, restarts: 2, privacy_model: gp, improvement_units: transformed}" \
  > "$work/paper.log" 2>&1 || { cat "$work/paper.log" >&2; fail "privacy_model gp run failed"; }
grep -q "a GP on log(epsilon)" "$work/paper/summary.json" || fail "gp run does not name its privacy model"
grep -q "transformed (log epsilon, logit error) units" "$work/paper/summary.json" || fail "gp run does not name its units"
[[ $(($(wc -l < "$work/paper/trials.csv") - 1)) -eq 9 ]] || fail "privacy_model gp run: wrong number of trials"
# 4. runtime_objective (Avent et al. 2020 §3.1): a third objective, seconds per run.  Only such a run writes
#    hypervolume_runtime; its trace is non-decreasing and ends at the exact 3-D hypervolume of the
#    trials' (epsilon, error, seconds / repetitions) w.r.t. (10, 1, reference seconds), recomputed
#    here by coordinate compression; the trials the note lists are the non-dominated ones.
[[ ! -e "$work/first/hypervolume_runtime.csv" ]] || fail "a two-objective run wrote hypervolume_runtime.csv"
"$dptune" run "$pipeline" --seed 3 --no-progress -o "$work/runtime" --set tuner.params.runtime_objective=true \
  > "$work/runtime.log" 2>&1 || { cat "$work/runtime.log" >&2; fail "runtime_objective run failed"; }
note=$(grep -o 'runtime objective (Avent et al. 2020[^"]*' "$work/runtime/summary.json") || fail "no runtime-objective note"
ref_s=$(sed -n 's/.*reference seconds per run \([^ ]*\) .*/\1/p' <<< "$note")
ids=$(sed -n 's/.*seconds per run) front: \(.*\)$/\1/p' <<< "$note")
[[ -n "$ref_s" && -n "$ids" ]] || fail "runtime note lacks the reference or the front: $note"
sec=$(col "$work/runtime/trials.csv" seconds) reps=$(col "$work/runtime/trials.csv" repetitions)
awk -F, -v e="$e" -v u="$u" -v s="$sec" -v r="$reps" -v ref="$ref_s" -v ids="$ids" -v want=$((iterations + 1)) '
  FILENAME == ARGV[1] { if (FNR > 1) { n++; P[n, 1] = $e + 0; P[n, 2] = 1 - $u; P[n, 3] = $s / $r }; next }
  FNR == 1 { next }
  { rows++; if (rows > 1 && $2 + 0 < last - 1e-15) { print "3-D hypervolume decreases"; bad = 1 } last = $2 + 0 }
  END {
    if (rows != want) { print rows " hypervolume_runtime rows, want " want; bad = 1 }
    R[1] = 10; R[2] = 1; R[3] = ref
    # Coordinate compression: the distinct coordinates below the reference cut each axis into
    # slabs; a cell counts when some point is at or below its lower corner on every axis.
    for (a = 1; a <= 3; a++) { c[a] = 0
      for (i = 1; i <= n; i++) if (P[i, 1] < R[1] && P[i, 2] < R[2] && P[i, 3] < R[3]) { v = P[i, a]; seen = 0
        for (k = 1; k <= c[a]; k++) if (C[a, k] == v) seen = 1
        if (!seen) C[a, ++c[a]] = v }
      for (k = 2; k <= c[a]; k++) { v = C[a, k]; j = k - 1; while (j > 0 && C[a, j] > v) { C[a, j + 1] = C[a, j]; j-- } C[a, j + 1] = v }
      C[a, c[a] + 1] = R[a] }
    hv = 0
    for (i = 1; i <= c[1]; i++) for (j = 1; j <= c[2]; j++) for (k = 1; k <= c[3]; k++) { cov = 0
      for (q = 1; q <= n && !cov; q++) if (P[q, 1] <= C[1, i] && P[q, 2] <= C[2, j] && P[q, 3] <= C[3, k]) cov = 1
      if (cov) hv += (C[1, i + 1] - C[1, i]) * (C[2, j + 1] - C[2, j]) * (C[3, k + 1] - C[3, k]) }
    d = hv - last; if (d < 0) d = -d
    if (!(d <= 1e-4 * hv)) { printf "3-D hypervolume %.10g, recomputed %.10g\n", last, hv; bad = 1 }
    # The listed front: exactly the trials no other trial dominates (ids are 0-based rows).
    for (i = 1; i <= n; i++) { dom = 0
      for (q = 1; q <= n; q++) if (P[q, 1] <= P[i, 1] && P[q, 2] <= P[i, 2] && P[q, 3] <= P[i, 3] &&
          (P[q, 1] < P[i, 1] || P[q, 2] < P[i, 2] || P[q, 3] < P[i, 3])) dom = 1
      if (!dom) expect = expect (expect == "" ? "" : " ") (i - 1) }
    if (expect != ids) { print "listed front \"" ids "\", non-dominated \"" expect "\""; bad = 1 }
    exit bad }' "$work/runtime/trials.csv" "$work/runtime/hypervolume_runtime.csv" || fail "runtime objective"
set +e
"$dptune" run "$pipeline" --seed 3 --no-progress -o "$work/bad_reference" \
  --set tuner.params.runtime_objective=true --set tuner.params.reference_seconds=-1 > "$work/bad_reference.log" 2>&1
status=$?
set -e
[[ $status -eq 2 ]] || fail "reference_seconds -1: exit $status, want 2"
grep -q "reference_seconds" "$work/bad_reference.log" || fail "reference_seconds -1: message does not name the key"
# A bad initial_trials file is bad input: exit code 2 and a message naming file, line and column.
printf 'id,param.C,param.b\n0,7,0.5\n1,x,0.5\n' > "$work/bad_trials.csv"
set +e
"$dptune" run "$pipeline" --seed 3 --no-progress -o "$work/bad_trials" \
  --set "tuner.params.initial_trials=$work/bad_trials.csv" > "$work/bad_trials.log" 2>&1
status=$?
set -e
[[ $status -eq 2 ]] || fail "bad initial_trials: exit $status, want 2"
grep -q "bad_trials.csv:3: param.C: expected a number, got 'x'" "$work/bad_trials.log" ||
  fail "bad initial_trials: message does not name file, line and column"
echo "dpareto e2e: OK ($rows + $((rows2 - rows)) trials, hypervolume $summary_hv)"
