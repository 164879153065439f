#!/usr/bin/env bash
# The study store and the privacy ledger, end to end through `dptune run`:
#   kill -9 at several points of seeded studies of every tuner, then --resume: the same results as
#   an uninterrupted run, and the ledger charged exactly once; a secure (unseeded) private study
#   resumed twice releases the same selection and model (its secret draws are replayed);
#   SIGINT leaves a partial report (exit 130); a folder holding a study is refused without
#   --resume/--overwrite; the ledger refuses a run over budget; parallel runs never overspend;
#   a private tuner's failed evaluation is stored, replayed by --resume (never run again, never
#   resampled) and never shown on the console; a tuner's stated worst-case supplement (DP-Hype on
#   the MPI executor) is reserved write-ahead: a run whose worst case does not fit the remaining
#   budget is refused before any evaluation, by `validate` as by `run`, and the reservation of a
#   run that fits is settled after it.
# Usage: study_test.sh DPTUNE PIPELINE_DIR WORK_DIR [CASE...]
set -uo pipefail
dptune=$1
pipelines=$2
work=$3
shift 3
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(kill_resume secure_resume secure_generated sigint refuse ledger_budget ledger_concurrent private_failure stored_models ledger_reserve)
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}

# The results that must not depend on interruptions: every CSV without its seconds column, the
# summary without timings, the released model (paths normalised).
fingerprint() {
  local dir=$1
  for f in "$dir"/*.csv; do
    [ -e "$f" ] || continue
    echo "== $(basename "$f")"
    awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="seconds") skip=i} {s=""; for(i=1;i<=NF;i++) if(i!=skip) s=s $i ","; print s}' "$f"
  done
  if [ -e "$dir/summary.json" ]; then
    echo "== summary.json"
    grep -v -e '"seconds"' -e '_seconds' -e '"started' "$dir/summary.json" |
      sed "s#$dir#OUT#g; s#/a[0-9]*/#/aN/#g"
  fi
  # DP-SGD weights are not bit-reproducible across processes (Eigen's vectorised sums depend on
  # the alignment of heap buffers: last-ulp differences between two uninterrupted runs), so the
  # model's numbers are compared to 10 significant digits; scores and selections exactly.
  if [ -e "$dir/model.json" ]; then
    echo "== model.json"
    awk '{ if (match($0, /^ *-?[0-9][0-9.eE+-]*,?$/)) { v=$0; sub(/,$/, "", v); printf "%.10g\n", v } else print }' \
      "$dir/model.json"
  fi
}

# Runs a pipeline, killing it with SIGKILL after `delay` seconds, then resumes until it finishes.
kill_then_resume() {
  local pipe=$1 out=$2 delay=$3
  shift 3
  "$dptune" run "$pipe" --out "$out" --no-progress "$@" >"$out.log1" 2>&1 &
  local pid=$!
  sleep "$delay"
  kill -9 "$pid" 2>/dev/null
  wait "$pid" 2>/dev/null
  if [ -e "$out/study.db" ]; then
    "$dptune" run "$pipe" --out "$out" --no-progress --resume "$@" >"$out.log2" 2>&1 ||
      { fail "$out: --resume exited $? ($(tail -2 "$out.log2"))"; return 1; }
  else
    "$dptune" run "$pipe" --out "$out" --no-progress "$@" >"$out.log2" 2>&1 ||
      { fail "$out: rerun exited $?"; return 1; }
  fi
}

ledger_rows() {  # number of entries of a ledger
  "$dptune" ledger show "$1" --json | grep -c '"kind"'
}

setup() {  # a private copy of the pipelines (their ledger path is relative to them)
  local dir=$work/$1
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$pipelines"/*.yaml "$dir"/
  # The ledger and refusal cases need finished runs, not long ones (the kill tests need long ones).
  sed 's/epochs: 200/epochs: 5/' "$pipelines/repetition.yaml" >"$dir/quick.yaml"
  sed 's/epochs: 200/epochs: 5/' "$pipelines/grid.yaml" >"$dir/quick_grid.yaml"
  echo "$dir"
}

case_kill_resume() {
  for tuner in grid random dpareto repetition svt_doubling; do
    local dir
    dir=$(setup "kill_$tuner")
    # The private tuners run inline, the maps on the thread pool.
    local threads=()
    case $tuner in repetition | svt_doubling) threads=(--threads 1) ;; esac
    local start end
    start=$(date +%s.%N)
    mkdir -p "$dir/a0"
    cp "$dir/$tuner.yaml" "$dir/a0/"
    "$dptune" run "$dir/a0/$tuner.yaml" --out "$dir/a0/out" --seed 7 "${threads[@]}" --no-progress >"$dir/ref.log" 2>&1 ||
      { fail "$tuner: reference run exited $?"; continue; }
    end=$(date +%s.%N)
    fingerprint "$dir/a0/out" >"$dir/ref.fp"
    [ -s "$dir/ref.fp" ] || fail "$tuner: empty reference"
    local i=0
    for fraction in 0.2 0.5 0.8; do
      i=$((i + 1))
      local delay
      delay=$(awk -v a="$start" -v b="$end" -v f="$fraction" 'BEGIN{printf "%.3f", (b-a)*f}')
      # Each attempt has its own ledger: the pipeline copy in its own folder.
      mkdir -p "$dir/a$i"
      cp "$dir/$tuner.yaml" "$dir/a$i/"
      kill_then_resume "$dir/a$i/$tuner.yaml" "$dir/a$i/out" "$delay" --seed 7 "${threads[@]}" || continue
      fingerprint "$dir/a$i/out" >"$dir/a$i.fp"
      diff -q "$dir/ref.fp" "$dir/a$i.fp" >/dev/null ||
        fail "$tuner killed after ${delay}s: results differ from the uninterrupted run ($(diff "$dir/ref.fp" "$dir/a$i.fp" | head -4))"
      if grep -q '^ledger:' "$dir/$tuner.yaml"; then
        local rows
        rows=$(ledger_rows "$dir/a$i/ledger.db")
        [ "$rows" = 1 ] || fail "$tuner killed after ${delay}s: the ledger holds $rows rows, not 1"
      fi
      "$dptune" study show "$dir/a$i/out" | grep -q "status *finished" ||
        fail "$tuner: study not finished after resume"
    done
    echo "ok: $tuner killed and resumed $i times, results identical"
  done
}

case_secure_resume() {
  local dir
  dir=$(setup secure)
  kill_then_resume "$dir/repetition.yaml" "$dir/out" 0.4
  fingerprint "$dir/out" >"$dir/first.fp"
  grep -q '"selected"' "$dir/first.fp" || fail "secure: no selection released"
  # Resuming a finished study re-runs the tuner on its recorded draws and stored evaluations.
  "$dptune" run "$dir/repetition.yaml" --out "$dir/out" --no-progress --resume >"$dir/again.log" 2>&1 ||
    fail "secure: second --resume exited $?"
  fingerprint "$dir/out" >"$dir/second.fp"
  diff -q "$dir/first.fp" "$dir/second.fp" >/dev/null ||
    fail "secure: a resumed private study released something else (a fresh K or noise)"
  [ "$(ledger_rows "$dir/ledger.db")" = 1 ] || fail "secure: ledger not charged exactly once"
  echo "ok: secure study replayed its secret draws"
}

# Unseeded generated data (blobs, 6000 x 100 = 600 000 values): the study keeps the generation key
# (four secret words) rather than one word per value, and a resume regenerates the same rows and
# split.  The evaluations are dropped from study.db, so the resume trains every candidate again on
# the regenerated data; full-batch SGD from zero weights is deterministic given the data, so the
# scores must repeat exactly.
case_secure_generated() {
  local dir
  dir=$(setup generated)
  "$dptune" run "$dir/generated.yaml" --out "$dir/out" --no-progress >"$dir/run.log" 2>&1 ||
    { fail "generated: run exited $? ($(tail -2 "$dir/run.log"))"; return; }
  fingerprint "$dir/out" >"$dir/first.fp"
  local size
  size=$(stat -c %s "$dir/out/study.db")
  # The split's draws (one word a row) and the rest fit in 1 MB; a word a value would not.
  [ "$size" -lt 1000000 ] || fail "generated: study.db holds $size bytes (the generated values?)"
  python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("DELETE FROM evaluations"); db.commit()' \
    "$dir/out/study.db" || { fail "generated: could not drop the evaluations"; return; }
  "$dptune" run "$dir/generated.yaml" --out "$dir/out" --no-progress --resume >"$dir/resume.log" 2>&1 ||
    fail "generated: --resume exited $? ($(tail -2 "$dir/resume.log"))"
  fingerprint "$dir/out" >"$dir/second.fp"
  diff -q "$dir/first.fp" "$dir/second.fp" >/dev/null ||
    fail "generated: the resumed study trained on other data ($(diff "$dir/first.fp" "$dir/second.fp" | head -3))"
  echo "ok: unseeded generated data regenerated from its key (study.db $size bytes)"
}

# Waits until the run `pid` has opened its study (study.db exists: from then on a signal is a clean
# stop, not the default action), then `delay` seconds more.  A fixed sleep from the start raced
# with start-up under ASan on a loaded machine.
signal_after_start() {
  local pid=$1 out=$2 delay=$3 signal=$4 i
  for ((i = 0; i < 1200; i++)); do
    [ -e "$out/study.db" ] && break
    kill -0 "$pid" 2>/dev/null || return 0
    sleep 0.05
  done
  sleep "$delay"
  kill -"$signal" "$pid" 2>/dev/null
}

case_sigint() {
  local dir
  dir=$(setup sigint)
  # Runs of 3000 epochs (the whole map: about 3.6 s here), so that a signal 0.5 s after the study
  # opened lands mid-map on any machine; every run of the map gets the same override.
  local long=(--set algorithm.params.epochs=3000)
  "$dptune" run "$dir/dpareto.yaml" "${long[@]}" --out "$dir/ref" --seed 7 --no-progress >"$dir/ref.log" 2>&1 ||
    fail "sigint: reference exited $?"
  "$dptune" run "$dir/dpareto.yaml" "${long[@]}" --out "$dir/out" --seed 7 --no-progress >"$dir/out.log" 2>&1 &
  local pid=$!
  signal_after_start "$pid" "$dir/out" 0.5 INT
  wait "$pid"
  local rc=$?
  [ "$rc" = 130 ] || fail "sigint: exit code $rc, expected 130"
  # One count of what was done, from the study store, in all three places; the partial trials in
  # trials.csv's columns.
  local stored
  stored=$(python3 -c 'import sqlite3, sys; print(sqlite3.connect(sys.argv[1]).execute("SELECT COUNT(*) FROM evaluations").fetchone()[0])' \
    "$dir/out/study.db")
  grep -q "\"interrupted at $stored/[0-9]*\"" "$dir/out/summary.json" ||
    fail "sigint: summary.json does not say 'interrupted at $stored/T' ($(grep progress "$dir/out/summary.json"))"
  grep -q "^interrupted at $stored/" "$dir/out.log" ||
    fail "sigint: the console does not say $stored done ($(grep interrupted "$dir/out.log"))"
  "$dptune" study show "$dir/out" | grep -q "progress *$stored/" ||
    fail "sigint: study show does not say $stored done ($("$dptune" study show "$dir/out" | grep progress))"
  [ "$(($(wc -l <"$dir/out/trials.partial.csv") - 1))" = "$stored" ] ||
    fail "sigint: trials.partial.csv does not hold the $stored stored evaluations"
  [ "$(head -1 "$dir/out/trials.partial.csv")" = "$(head -1 "$dir/ref/trials.csv")" ] ||
    fail "sigint: trials.partial.csv's columns differ from trials.csv's"
  "$dptune" study show "$dir/out" | grep -q "status *interrupted" || fail "sigint: status"
  # The printed hint, followed verbatim (it repeats every option the run was started with).
  local hint
  hint=$(sed -n 's/^resume with: //p' "$dir/out.log")
  [ -n "$hint" ] || fail "sigint: no 'resume with:' hint"
  (eval "$hint") >"$dir/resume.log" 2>&1 || fail "sigint: the hint '$hint' exited $?"
  grep -q "^resumed: $stored evaluations reused from the study store" "$dir/resume.log" ||
    fail "sigint: resume does not say it reused $stored ($(grep resumed "$dir/resume.log"))"
  diff -q <(fingerprint "$dir/ref") <(fingerprint "$dir/out") >/dev/null ||
    fail "sigint: resumed map differs from the uninterrupted one"
  # A private tuner releases nothing partial; SIGTERM gives 143.  Seed 8 draws K = 5; one thread
  # and runs of 5000 epochs (about 0.3 s each here) so that the signal lands before the last run
  # starts on any machine (a signal after the last run started stops nothing).
  "$dptune" run "$dir/repetition.yaml" --out "$dir/rep" --seed 8 --no-progress \
    --set algorithm.params.epochs=5000 --threads 1 >"$dir/rep.log" 2>&1 &
  pid=$!
  signal_after_start "$pid" "$dir/rep" 0.2 TERM
  wait "$pid"
  rc=$?
  [ "$rc" = 143 ] || fail "sigterm: exit code $rc, expected 143"
  grep -q '"released": null' "$dir/rep/summary.json" || fail "sigterm: private summary releases"
  [ ! -e "$dir/rep/model.json" ] || fail "sigterm: a private tuner released a model"
  # Nothing the private run prints or writes counts its (secret) runs.
  ! grep -q -e 'interrupted at' -e '"progress"' -e 'completed_evaluations' "$dir/rep.log" \
    "$dir/rep/summary.json" || fail "sigterm: the private tuner's output shows a count"
  "$dptune" run "$dir/repetition.yaml" --out "$dir/rep" --seed 8 --no-progress \
    --set algorithm.params.epochs=5000 --threads 1 --resume >"$dir/rep2.log" 2>&1 ||
    fail "sigterm: resume exited $?"
  grep -q "^resumed: every stored evaluation and secret draw was replayed" "$dir/rep2.log" ||
    fail "sigterm: the private resume line ($(grep resumed "$dir/rep2.log"))"
  # Two Ctrl-C: the second exits at once (130); the store stays consistent and the study resumes.
  "$dptune" run "$dir/dpareto.yaml" "${long[@]}" --out "$dir/twice" --seed 7 --no-progress >"$dir/twice.log" 2>&1 &
  pid=$!
  signal_after_start "$pid" "$dir/twice" 0.5 INT
  sleep 0.05
  kill -INT "$pid" 2>/dev/null
  wait "$pid"
  rc=$?
  [ "$rc" = 130 ] || fail "second SIGINT: exit code $rc, expected 130"
  "$dptune" run "$dir/dpareto.yaml" "${long[@]}" --out "$dir/twice" --seed 7 --no-progress --resume \
    >"$dir/twice2.log" 2>&1 || fail "second SIGINT: resume exited $?"
  diff -q <(fingerprint "$dir/ref") <(fingerprint "$dir/twice") >/dev/null ||
    fail "second SIGINT: resumed map differs from the uninterrupted one"
  echo "ok: SIGINT partial map (130), SIGTERM private releases nothing (143), second SIGINT"
}

case_refuse() {
  local dir
  dir=$(setup refuse)
  "$dptune" run "$dir/quick.yaml" --out "$dir/out" --seed 7 --no-progress >/dev/null 2>&1 ||
    fail "refuse: first run"
  "$dptune" run "$dir/quick.yaml" --out "$dir/out" --seed 7 --no-progress >"$dir/2.log" 2>&1
  local rc=$?
  [ "$rc" = 2 ] || fail "refuse: second run exited $rc, expected 2"
  grep -q -- "--resume" "$dir/2.log" && grep -q -- "--overwrite" "$dir/2.log" ||
    fail "refuse: message does not name --resume and --overwrite: $(cat "$dir/2.log")"
  "$dptune" run "$dir/quick.yaml" --out "$dir/out" --seed 7 --no-progress --overwrite \
    >/dev/null 2>&1 || fail "refuse: --overwrite exited $?"
  [ "$(ledger_rows "$dir/ledger.db")" = 2 ] || fail "refuse: overwrite must keep the first charge"
  "$dptune" run "$dir/quick.yaml" --out "$dir/none" --resume >"$dir/3.log" 2>&1
  rc=$?
  [ "$rc" = 2 ] || fail "refuse: --resume without a study exited $rc"
  echo "ok: refused without --resume/--overwrite"
}

# The repetition pipeline's guarantee (ε at the pipeline's δ), from a ledger row.
charge_of() {
  "$dptune" ledger show "$1" --json | grep -m1 '"epsilon": ' | tail -1 | sed 's/.*: //; s/,//'
}

case_ledger_budget() {
  local dir
  dir=$(setup budget)
  "$dptune" run "$dir/quick.yaml" --out "$dir/one" --seed 7 --no-progress >/dev/null 2>&1 ||
    fail "budget: first run"
  local eps
  eps=$("$dptune" ledger show "$dir/ledger.db" --json | grep '"epsilon"' | sed -n 2p | sed 's/.*: //; s/,//')
  # A new ledger whose budget holds 1.5 runs: the second run is refused with the remainder.
  local budget
  budget=$(awk -v e="$eps" 'BEGIN{printf "%.6g", 1.5*e}')
  sed "s/epsilon: 1.0e+7/epsilon: $budget/; s/ledger.db/small.db/" "$dir/quick.yaml" >"$dir/small.yaml"
  "$dptune" run "$dir/small.yaml" --out "$dir/s1" --seed 7 --no-progress >/dev/null 2>&1 ||
    fail "budget: a run within budget exited $?"
  "$dptune" run "$dir/small.yaml" --out "$dir/s2" --seed 7 --no-progress >"$dir/s2.log" 2>&1
  local rc=$?
  [ "$rc" = 2 ] || fail "budget: over-budget run exited $rc, expected 2"
  grep -q "remaining: epsilon" "$dir/s2.log" || fail "budget: no remaining budget in: $(cat "$dir/s2.log")"
  # Refused before anything is written: no output folder, no study store.
  [ ! -e "$dir/s2" ] || fail "budget: the refused run created its output folder"
  grep -q "^[^:]*small.yaml:[0-9]*:[0-9]*: ledger.budget: " "$dir/s2.log" ||
    fail "budget: the refusal does not name file:line:col and ledger.budget: $(head -1 "$dir/s2.log")"
  [ "$(ledger_rows "$dir/small.db")" = 1 ] || fail "budget: the refused run was recorded"
  # A map is recorded as not DP, never as a charge.
  "$dptune" run "$dir/quick_grid.yaml" --out "$dir/map" --seed 7 --no-progress >/dev/null 2>&1 ||
    fail "budget: map run exited $?"
  "$dptune" ledger show "$dir/ledger.db" | grep -q "not DP, trusted analysts" ||
    fail "budget: the map is not recorded as not DP"
  # `study list` finds every study of the folder with its tuner, state and charge.
  local list
  list=$("$dptune" study list "$dir")
  echo "$list" | grep -Eq "^one +repetition +finished +[0-9.e+-]+ +20[0-9-]+T" ||
    fail "study list: no finished repetition line for one: $list"
  # The refused run left no study (refused before its folder was created).
  echo "$list" | grep -Eq "^s2 " && fail "study list: the refused run left a study: $list"
  echo "$list" | grep -Eq "^map +grid +finished +0 \(map\)" ||
    fail "study list: the map is not listed with no charge: $list"
  [ "$(echo "$list" | wc -l)" = 4 ] || fail "study list: expected a header and 3 studies: $list"
  "$dptune" study list "$dir" --json | grep -q '"folder": "s1"' || fail "study list --json"
  echo "ok: over-budget run refused (epsilon per run $eps, budget $budget)"
}

case_ledger_concurrent() {
  local dir
  dir=$(setup concurrent)
  "$dptune" run "$dir/quick.yaml" --out "$dir/one" --seed 7 --no-progress >/dev/null 2>&1 ||
    fail "concurrent: first run"
  local eps budget
  eps=$("$dptune" ledger show "$dir/ledger.db" --json | grep '"epsilon"' | sed -n 2p | sed 's/.*: //; s/,//')
  budget=$(awk -v e="$eps" 'BEGIN{printf "%.6g", 2.5*e}')
  sed "s/epsilon: 1.0e+7/epsilon: $budget/; s/ledger.db/shared.db/" "$dir/quick.yaml" >"$dir/shared.yaml"
  local pids=()
  for i in 1 2 3 4 5 6; do
    "$dptune" run "$dir/shared.yaml" --out "$dir/p$i" --seed "$i" --no-progress >"$dir/p$i.log" 2>&1 &
    pids+=($!)
  done
  local ok=0 refused=0
  local i=0
  for pid in "${pids[@]}"; do
    i=$((i + 1))
    wait "$pid"
    local code=$?
    case $code in
      0) ok=$((ok + 1)) ;;
      2) refused=$((refused + 1)) ;;
      *) fail "concurrent: run $i exited $code: $(tail -3 "$dir/p$i.log")" ;;
    esac
  done
  [ "$ok" = 2 ] && [ "$refused" = 4 ] ||
    fail "concurrent: $ok runs went through and $refused were refused, expected 2 and 4 (budget 2.5 runs)"
  [ "$(ledger_rows "$dir/shared.db")" = 2 ] || fail "concurrent: ledger rows"
  echo "ok: 6 parallel runs on a budget of 2.5 runs: $ok charged, $refused refused"
}

# Every recorded random word of a study (stream, seq, word), one a line.
recorded_words() {
  python3 -c 'import sqlite3, sys
for r in sqlite3.connect(sys.argv[1]).execute("SELECT stream, seq, word FROM random_words ORDER BY stream, seq"): print(*r)' \
    "$1/study.db"
}

starts_of() {  # train starts a flaky.sh counter file holds
  if [ -e "$1" ]; then wc -l <"$1" | tr -d ' '; else echo 0; fi
}

# Runs `dptune run PIPELINE ARGS...` into LOG, expecting a private failure (exit 1) whose console
# output names the SENSITIVE file and holds nothing of the program's stderr.
expect_private_failure() {
  local what=$1 log=$2
  shift 2
  "$dptune" run "$@" --no-progress >"$log" 2>&1
  local rc=$?
  [ "$rc" = 1 ] || { fail "$what: exit code $rc, expected 1 ($(tail -2 "$log"))"; return 1; }
  ! grep -q -e "secret seed" -e "diverged" -e "stderr" "$log" ||
    fail "$what: the console shows the program's failure text: $(grep -m1 -e "secret seed" -e diverged -e stderr "$log")"
  grep -q "failure.SENSITIVE.txt" "$log" || fail "$what: the console does not name failure.SENSITIVE.txt ($(tail -2 "$log"))"
}

case_private_failure() {
  local dir
  dir=$(setup failure)
  cp "$pipelines/flaky.sh" "$dir/"
  local pipe=$dir/failure.yaml out=$dir/out
  # 1. Secure randomness, a program that always fails (one thread: no other run in flight): exit
  # 1, nothing released, the detail only in the SENSITIVE file; two resumes replay the failure
  # without starting the program again.
  expect_private_failure "always" "$dir/1.log" "$pipe" --out "$out" --threads 1 || return
  grep -q "secret seed [0-9]" "$out/failure.SENSITIVE.txt" ||
    fail "always: failure.SENSITIVE.txt lacks the program's stderr"
  [ "$(stat -c %a "$out/failure.SENSITIVE.txt")" = 600 ] || fail "always: failure.SENSITIVE.txt is not owner-only"
  grep -q '"released": null' "$out/summary.json" || fail "always: summary.json releases something"
  [ "$(starts_of "$dir/starts.txt")" = 1 ] || fail "always: $(starts_of "$dir/starts.txt") starts, expected 1"
  local seed words
  seed=$(grep -o "secret seed [0-9]*" "$out/failure.SENSITIVE.txt")
  words=$(recorded_words "$out")
  [ -n "$words" ] || fail "always: no secret draws recorded (K)"
  for i in 2 3; do
    expect_private_failure "always, resume $i" "$dir/$i.log" "$pipe" --out "$out" --threads 1 --resume || continue
    grep -q "replayed from the study store" "$dir/$i.log" || fail "always, resume $i: not replayed ($(tail -1 "$dir/$i.log"))"
  done
  [ "$(starts_of "$dir/starts.txt")" = 1 ] ||
    fail "always: the resumes started the program again ($(starts_of "$dir/starts.txt") starts)"
  [ "$(grep -o "secret seed [0-9]*" "$out/failure.SENSITIVE.txt")" = "$seed" ] ||
    fail "always: the replayed failure is another one"
  [ "$(recorded_words "$out")" = "$words" ] || fail "always: the resumes changed the recorded draws"
  [ "$(ledger_rows "$dir/ledger.db")" = 1 ] || fail "always: the ledger holds $(ledger_rows "$dir/ledger.db") rows, not 1"
  "$dptune" study show "$out" | grep -q "stored failures *1" || fail "always: study show names no stored failure"

  # 2. Mid-study (seeded, one thread): the third start fails after two evaluations were stored.
  # The resume recalls those two and replays the failure: the program is not started a fourth
  # time (where it would succeed: the resampling this forbids).
  local third=(--seed 3 --threads 1 --set "algorithm.params.run=/bin/sh ./flaky.sh third.txt third")
  expect_private_failure "third" "$dir/third1.log" "$pipe" --out "$dir/third" "${third[@]}" || return
  [ "$(starts_of "$dir/third.txt")" = 3 ] || fail "third: $(starts_of "$dir/third.txt") starts, expected 3"
  "$dptune" study show "$dir/third" --json | grep -q '"stored_evaluations": 2' ||
    fail "third: the two evaluations before the failure are not stored"
  expect_private_failure "third, resume" "$dir/third2.log" "$pipe" --out "$dir/third" "${third[@]}" --resume
  [ "$(starts_of "$dir/third.txt")" = 3 ] ||
    fail "third: the resume ran the failed evaluation again ($(starts_of "$dir/third.txt") starts)"
  [ ! -e "$dir/third/model.json" ] || fail "third: a model was released"

  # 3. Secure randomness, 3 seeds of 4 fail: whatever the first run gave, resumes give it again.
  local seeds=(--set "algorithm.params.run=/bin/sh ./flaky.sh seeds.txt seed")
  "$dptune" run "$pipe" --out "$dir/seeds" "${seeds[@]}" --no-progress >"$dir/seeds1.log" 2>&1
  local first=$? starts
  starts=$(starts_of "$dir/seeds.txt")
  for i in 2 3 4; do
    "$dptune" run "$pipe" --out "$dir/seeds" "${seeds[@]}" --no-progress --resume >"$dir/seeds$i.log" 2>&1
    local rc=$?
    [ "$rc" = "$first" ] || fail "seeds: resume $i exited $rc, the first run $first (resampled)"
  done
  [ "$(starts_of "$dir/seeds.txt")" = "$starts" ] ||
    fail "seeds: the resumes started the program again ($starts, then $(starts_of "$dir/seeds.txt") starts)"
  echo "ok: private failures stored, replayed on resume (programs started 1, 3 and $starts times), never shown"
}

# A completed private study whose command models are files: every resume recalls every run with
# its model (a copy of its files in the owner-only study-models folder) and starts no program (a
# start would fail: FLAKY_FAIL), releasing the same model file; with the copies gone, a resume
# still starts no program and recalls the runs without their models (and, a private tuner, does
# not say so on the console: that could depend on its secret number of runs).
case_stored_models() {
  local dir
  dir=$(setup models)
  cp "$pipelines/flaky.sh" "$dir/"
  local pipe=$dir/failure.yaml out=$dir/out
  local files=(--set "algorithm.params.run=/bin/sh ./flaky.sh files.txt files")
  "$dptune" run "$pipe" --out "$out" "${files[@]}" --no-progress >"$dir/1.log" 2>&1 ||
    { fail "models: the first run exited $? ($(tail -2 "$dir/1.log"))"; return; }
  local starts released
  starts=$(starts_of "$dir/files.txt")
  released=$(cat "$out/model/model.txt") || { fail "models: no model/model.txt released"; return; }
  [ "$(stat -c %a "$out/study-models")" = 700 ] || fail "models: study-models is not owner-only"
  for i in 2 3; do
    FLAKY_FAIL=1 "$dptune" run "$pipe" --out "$out" "${files[@]}" --no-progress --resume \
      >"$dir/$i.log" 2>&1 || fail "models: resume $i exited $? ($(tail -2 "$dir/$i.log"))"
    [ "$(cat "$out/model/model.txt")" = "$released" ] || fail "models: resume $i released another model"
  done
  [ "$(starts_of "$dir/files.txt")" = "$starts" ] ||
    fail "models: the resumes started the program again ($starts, then $(starts_of "$dir/files.txt") starts)"
  rm -rf "$out/study-models" "$out/model"
  FLAKY_FAIL=1 "$dptune" run "$pipe" --out "$out" "${files[@]}" --no-progress --resume \
    >"$dir/4.log" 2>&1 || fail "models: the resume without copies exited $? ($(tail -2 "$dir/4.log"))"
  [ "$(starts_of "$dir/files.txt")" = "$starts" ] ||
    fail "models: without copies the resume started the program ($(starts_of "$dir/files.txt") starts)"
  # A private tuner's console does not say that a stored model was lost: whether the kept run was
  # stored before an interrupt depends on its secret number of runs (tests/neighbouring).
  grep -q "could not be restored" "$dir/4.log" && fail "models: a private study's resume tells of lost models"
  [ ! -e "$out/model/model.txt" ] || fail "models: a model was written without its stored copy"
  "$dptune" run "$pipe" --out "$out" "${files[@]}" --no-progress --overwrite >"$dir/5.log" 2>&1 ||
    fail "models: --overwrite exited $?"
  [ -d "$out/study-models" ] || fail "models: --overwrite left no study-models"
  echo "ok: a completed study's resumes recalled its $starts file models, started nothing, released the same file"
}

ledger_kinds() {  # the kinds of a ledger's rows, in order, on one line
  "$dptune" ledger show "$1" --json | grep '"kind"' | sed 's/.*"kind": "//; s/".*//' | tr '\n' ' '
}

case_ledger_reserve() {
  local dir
  dir=$(setup reserve)
  # The dp_hype pipeline runs the MPI executor (one rank): in an ASan build LeakSanitizer reports
  # what Open MPI's dlopen'ed components keep until exit, unloaded by then so that no suppression
  # can name them; leak checking is off for this case as in tests/mpi (ASan's memory-error checks
  # stay on).
  local ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"
  export ASAN_OPTIONS
  local pipe=$dir/dp_hype.yaml
  # 1. validate prints the write-ahead charge and the worst case DP-Hype states for a distributed
  # run, composed; with no ledger file it creates none.
  "$dptune" validate "$pipe" >"$dir/v1.log" 2>&1 || { fail "reserve: validate exited $? ($(tail -2 "$dir/v1.log"))"; return; }
  local charge worst total
  charge=$(sed -n 's/.*write-ahead charge (epsilon, delta) = (\([^,]*\),.*/\1/p' "$dir/v1.log")
  worst=$(sed -n 's/.*reserved worst-case supplement (\([^,]*\),.*/\1/p' "$dir/v1.log")
  total=$(sed -n 's/.*fits: composed epsilon \([^ ]*\) of the budget.*/\1/p' "$dir/v1.log")
  if [ -z "$charge" ] || [ -z "$worst" ] || [ -z "$total" ]; then
    fail "reserve: validate names no charge, worst case and total: $(cat "$dir/v1.log")"
    return
  fi
  awk -v c="$charge" -v w="$worst" -v t="$total" 'BEGIN{exit !(w > c && t > c && t <= c + w)}' ||
    fail "reserve: charge $charge, worst case $worst, composed $total"
  [ ! -e "$dir/ledger.db" ] || fail "reserve: validate created the ledger"
  # 2. A budget that holds the charge but not the charge with its worst case: validate and run
  # refuse it alike (exit 2), naming the ledger, the remaining budget, the charge and the worst
  # case; the run evaluates nothing, releases nothing and the ledger holds no row.
  local budget
  budget=$(awk -v c="$charge" -v t="$total" 'BEGIN{printf "%.6g", (c + t) / 2}')
  sed "s/epsilon: 1.0e+7/epsilon: $budget/" "$pipe" >"$dir/tight.yaml"
  "$dptune" validate "$dir/tight.yaml" >"$dir/v2.log" 2>&1
  local rc=$?
  [ "$rc" = 2 ] || fail "reserve: validate of a worst case over budget exited $rc, expected 2"
  "$dptune" run "$dir/tight.yaml" --out "$dir/tight" --seed 7 --no-progress >"$dir/r2.log" 2>&1
  rc=$?
  [ "$rc" = 2 ] || fail "reserve: a run whose worst case does not fit exited $rc, expected 2 ($(tail -2 "$dir/r2.log"))"
  for log in v2 r2; do
    grep -q "ledger.db: dataset 'digits': refused: this run's guarantee {approx_dp" "$dir/$log.log" &&
      grep -q "with its worst-case supplement {approx_dp" "$dir/$log.log" &&
      grep -q "over the budget epsilon [0-9.e+-]*; remaining: epsilon [0-9.e+-]* at delta" "$dir/$log.log" ||
      fail "reserve: $log: the refusal does not name the ledger, the charge, the worst case and the remainder: $(cat "$dir/$log.log")"
  done
  [ ! -e "$dir/tight" ] || fail "reserve: the refused run created its output folder"
  [ "$(ledger_rows "$dir/ledger.db")" = 0 ] || fail "reserve: the refused run left ledger rows: $(ledger_kinds "$dir/ledger.db")"
  # 3. Enough budget: the charge and its reservation are written together, and after the run (one
  # process: no client was lost) the reservation is settled to nothing.
  "$dptune" run "$pipe" --out "$dir/fits" --seed 7 --no-progress >"$dir/r3.log" 2>&1 ||
    { fail "reserve: a run that fits exited $? ($(tail -2 "$dir/r3.log"))"; return; }
  grep -q "reserved write-ahead: the tuner's worst-case supplement (epsilon, delta) = ($worst, " "$dir/r3.log" ||
    fail "reserve: the run names no reservation: $(cat "$dir/r3.log")"
  grep -q "the reserved worst-case supplement was not needed: settled, it counts nothing" "$dir/r3.log" ||
    fail "reserve: the reservation was not settled: $(cat "$dir/r3.log")"
  [ "$(ledger_kinds "$dir/ledger.db")" = "charge settled " ] ||
    fail "reserve: the ledger holds $(ledger_kinds "$dir/ledger.db"), expected a charge and a settled reservation"
  echo "ok: worst case $worst reserved beside the charge $charge (budget $budget refused, 1e7 settled)"
}

mkdir -p "$work"
for c in "${cases[@]}"; do "case_$c"; done
if [ "$failures" -gt 0 ]; then
  echo "$failures failure(s)" >&2
  exit 1
fi
