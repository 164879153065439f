#!/usr/bin/env bash
# the MPI executor end to end through `mpirun ... dptune run --executor mpi`
# (docs/mpi.md):
#   equal_*   a seeded study gives the single-process run's trials (and released model) for 1, 2
#             and 3 ranks (grid; dpareto, adaptive; repetition, a private tuner; the command
#             trainer, whose programs run on the ranks that take the tasks); for repetition, a
#             worker rank also trains runs whose model is kept and sends the model back;
#   secure    an unseeded private study over 3 ranks finishes and releases a model;
#   secure_resume an unseeded study cut off by a lost rank resumes over 2 ranks with the layout key
#             it started with; a secure study of another executor is refused over MPI (exit 2);
#   lost_rank a worker rank killed (SIGKILL) mid-study ends the run non-zero naming the rank, and
#             --resume over 3 ranks finishes with the uninterrupted run's trials;
#   silent_rank a worker rank stopped (SIGSTOP) is declared lost after DPTUNE_MPI_TIMEOUT: a clear
#             error naming it, no hang; --resume finishes as above;
#   silent_at_end a rank that stops answering when the others can finish without it: the job
#             ends naming it (lost, or silent to rank 0's stop), never hangs in MPI_Finalize;
#   mismatch  a rank started with another pipeline (another seed) is refused by rank 0;
#   task_error a run that throws on a worker fails the study with the worker's rank named;
#   worker_data a worker whose copy of the data is damaged stops the run naming the rank and line.
#   dp_hype   DP-Hype with its 6 clients on ranks 1 and 2: rank 0 (the server) never receives a
#             client's input or vote in the clear (a capture of every peer message it got), the
#             released noisy votes are the sum of the clients' inputs, a seeded run repeats
#             exactly, over 2 ranks it is the same (client streams derive from client ids), and
#             the guarantee equals the single-process run's;
#   dp_hype_shards each worker rank holds only its own clients' shards (train and validation rows,
#             the iid sizes) and rank 0 none; with every rank keeping every row
#             (DPTUNE_MPI_KEEP_ROWS=1, the code path before ranks were confined) each client's rows
#             are the same (checksums) and the release and guarantee are identical; with
#             baselines: true, rank 0 holds the whole data and runs them, with the same trials;
#   dp_hype_dropout rank 2 stops after sharing its 3 clients' keys: the server's round timeout
#             makes them dropouts, Shamir recovery (threshold 2: each survivor's self-mask has
#             shares at the 2 other survivors) removes their masks, the sum is the other clients'
#             inputs; with a threshold above the survivors the vote aborts cleanly.
#   dp_hype_ledger the same dropout with a ledger: the worst case DP-Hype states before the run is
#             reserved with the charge and settled to the real supplement, within the budget; a
#             budget that takes the charge but not the reservation is refused before anything is
#             written (exit 2, no results folder, no ledger).
# The dp_hype cases observe the ranks through test seams (DPTUNE_MPI_CAPTURE, DPTUNE_DP_HYPE_CAPTURE,
# DPTUNE_MPI_HELD_ROWS, DPTUNE_MPI_KEEP_ROWS), which only the test build of dptune and of the
# dp_hype plugin reads (tests/mpi/CMakeLists.txt): they run HOOKED_DPTUNE.
# Usage: mpi_test.sh MPIEXEC DPTUNE PIPELINE_DIR WORK_DIR CASE HOOKED_DPTUNE
set -uo pipefail
mpiexec=$1
dptune=$2
pipelines=$3
work=$4
case_name=$5
hooked=$6
failures=0
fail() {
  echo "FAIL: $*" >&2
  failures=$((failures + 1))
}
# As root, Open MPI refuses to start without these; 3 ranks on fewer cores need --oversubscribe.
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# In an ASan build of dptune, LeakSanitizer reports what Open MPI's dlopen'ed components keep until
# exit; they are unloaded by then ("<unknown module>"), so no suppression can name them: leak
# checking is off for the processes mpirun starts (ASan's memory-error checks stay on; the rest of
# the suite and dptune_mpi_tests check leaks of dptune's own code).
export ASAN_OPTIONS="${ASAN_OPTIONS:+$ASAN_OPTIONS:}detect_leaks=0"  # last: it overrides the caller's detect_leaks=1
mpirun_n() {
  local n=$1
  shift
  # A bound on every run: a hang fails the test (exit 124) instead of blocking it.
  timeout -k 10 300 "$mpiexec" --oversubscribe --allow-run-as-root -np "$n" "$@" &
  local bound=$! launcher="" ranks_gone_at=""
  # Open MPI 4.1's mpirun (with Debian's external PMIx) sometimes deadlocks in its own
  # PMIx_server_finalize after a job was aborted, once every rank has ended (the progress thread
  # it joins waits on a lock: openpmix issue 1244; seen here in about 1 of 5 aborts under load).
  # That is mpirun's hang, not dptune's: once no rank is left, mpirun gets 20 s to exit and is
  # then ended, with a line saying so (the run counts as failed, exit 1, never as hung).
  while kill -0 "$bound" 2>/dev/null; do
    sleep 0.2
    [ -n "$launcher" ] || launcher=$(pgrep -P "$bound" | head -1)
    [ -n "$launcher" ] || continue
    # Ranks that ended but were not reaped (mpirun hung) are zombies: they do not count.
    if ps --ppid "$launcher" -o stat= | grep -qv '^Z'; then
      ranks_gone_at=""
    elif [ -z "$ranks_gone_at" ]; then
      ranks_gone_at=$SECONDS
    elif ((SECONDS - ranks_gone_at >= 20)); then
      echo "mpi_test.sh: every rank had ended but mpirun did not exit within 20 s (its own shutdown hung); ended it"
      kill -KILL "$launcher" 2>/dev/null
      wait "$bound" 2>/dev/null
      return 1
    fi
  done
  wait "$bound"
}

# trials.csv (or the private tuner's trials.SENSITIVE.csv) without its seconds column, and the
# released model compared to 10 significant digits (DP-SGD weights differ in the last ulps
# between processes: tests/study/study_test.sh).
fingerprint() {
  local dir=$1
  for f in "$dir"/trials*.csv; do
    [ -e "$f" ] || continue
    echo "== $(basename "$f")"
    awk -F, 'NR==1{for(i=1;i<=NF;i++) if($i=="seconds") skip=i} {s=""; for(i=1;i<=NF;i++) if(i!=skip) s=s $i ","; print s}' "$f"
  done
  if [ -e "$dir/model.json" ]; then
    echo "== model.json"
    awk '{ if (match($0, /^ *-?[0-9][0-9.eE+-]*,?$/)) { v=$0; sub(/,$/, "", v); printf "%.10g\n", v } else print }' \
      "$dir/model.json"
  fi
}

# The light size (DPTUNE_TEST_LIGHT=1: the quick set's mpi.equal_repetition and the sanitizer pass):
# equal_repetition's study trains 20 epochs instead of 200 in every run it compares, the same MPI
# code paths (the task queue, kept models travelling back) with a tenth of the training;
# mpi.equal_repetition_full (`ctest -C slow`) runs the full length.
sizes=()
if [ "${DPTUNE_TEST_LIGHT:-}" = 1 ] && [ "$case_name" = equal_repetition ]; then
  sizes=(--set algorithm.params.epochs=20)
fi

reference() {
  local pipe=$1 executor=(--executor inline)
  # slow.yaml's runs sleep: its reference runs them on 6 threads of the one process (a seeded
  # study's trials do not depend on the executor; the equal_* cases check it for MPI).
  [ "$pipe" != slow ] || executor=(--executor threads --threads 6)
  "$dptune" run "$pipelines/$pipe.yaml" --seed 7 "${executor[@]}" --out "$work/ref_$pipe" \
    --no-progress --overwrite "${sizes[@]}" >"$work/ref_$pipe.log" 2>&1 || fail "$pipe: single-process run exited $?"
  fingerprint "$work/ref_$pipe" >"$work/ref_$pipe.txt"
  [ -s "$work/ref_$pipe.txt" ] || fail "$pipe: the single-process run wrote no trials"
}

same_as_reference() {
  local pipe=$1 out=$2
  fingerprint "$out" >"$out.txt"
  diff -q "$work/ref_$pipe.txt" "$out.txt" >/dev/null ||
    fail "$out: differs from the single-process run ($(diff "$work/ref_$pipe.txt" "$out.txt" | head -4))"
}

equal() {
  local pipe=$1
  reference "$pipe"
  for n in 1 2 3; do
    local out="$work/${pipe}_np$n"
    mpirun_n "$n" "$dptune" run "$pipelines/$pipe.yaml" --seed 7 --executor mpi \
      --out "$out" --no-progress --overwrite "${sizes[@]}" >"$out.log" 2>&1 || {
      fail "$pipe with $n ranks exited $? ($(tail -3 "$out.log"))"
      continue
    }
    grep -q "\"executor\": \"mpi($n rank" "$out/summary.json" ||
      fail "$out: summary.json does not name the MPI executor with $n ranks"
    same_as_reference "$pipe" "$out"
    same_resolved_config "$pipe" "$out"
  done
}

# resolved_config.yaml states what ran: the same on every number of ranks as in one process, but
# for the executor and the output folder.  A mechanism parameter that the algorithm or the tuner
# sets at run time on a worker rank must be left out on rank 0 too, as the single process does.
same_resolved_config() {
  local pipe=$1 out=$2
  local strip='/^ *(executor|dir): /d'
  diff <(sed -E "$strip" "$work/ref_$pipe/resolved_config.yaml") \
    <(sed -E "$strip" "$out/resolved_config.yaml") >"$out.config.diff" ||
    fail "$out: resolved_config.yaml differs from the single-process run's ($(head -4 "$out.config.diff"))"
}

# Runs pipeline $5 over 3 ranks (with the run options after it), where rank $1 sends itself signal
# $2 after $3 seconds, or, for $3 = first_result, as soon as rank 0 has received a worker's first
# run result (the test build's DPTUNE_MPI_RESULTS): mid-study however fast or busy the machine,
# with the work still queued.
run_signalled() {
  local rank=$1 signal=$2 after=$3 out=$4 pipe=$5 binary=$dptune wait_for="sleep $3"
  shift 5
  if [ "$after" = first_result ]; then
    link_test_build_plugins
    binary=$hooked
    export DPTUNE_MPI_RESULTS="$out.results" KILL_AFTER="$out.results"
    rm -f "$DPTUNE_MPI_RESULTS"
    wait_for='until [ -s "$KILL_AFTER" ]; do sleep 0.02; done'
  fi
  mpirun_n 3 bash -c \
    'if [ "$OMPI_COMM_WORLD_RANK" = "'"$rank"'" ]; then ('"$wait_for"'; kill -'"$signal"' $$) & fi; exec "$@"' \
    rank "$binary" run "$pipelines/$pipe.yaml" --executor mpi --out "$out" \
    --no-progress --overwrite "$@" >"$out.log" 2>&1
  local code=$?
  unset DPTUNE_MPI_RESULTS KILL_AFTER
  return $code
}

# A run that lost a rank: it failed (not exit 0), did not hang until the bound on every run
# (exit 124), and, given a limit, ended within that many seconds of $3.
ended_with_error() {
  local name=$1 code=$2 start=$3 limit=${4:-}
  [ "$code" -ne 0 ] || fail "$name: exit code 0 although a rank was lost"
  [ "$code" -ne 124 ] || fail "$name: the run hung (killed by timeout)"
  [ -z "$limit" ] || [ $(($(date +%s) - start)) -lt "$limit" ] || fail "$name: took $limit s or more to end"
}

resume_and_compare() {
  local out=$1 pipe=$2
  [ -e "$out/study.db" ] || { fail "$out: no study to resume"; return; }
  if "$dptune" study show "$out" | grep -q "status *finished"; then
    fail "$out: the study finished before the rank was lost (the machine is too fast for this test)"
  fi
  mpirun_n 3 "$dptune" run "$pipelines/$pipe.yaml" --seed 7 --executor mpi \
    --out "$out" --no-progress --resume >"$out.resume.log" 2>&1 ||
    { fail "$out: --resume exited $? ($(tail -3 "$out.resume.log"))"; return; }
  same_as_reference "$pipe" "$out"
}

mkdir -p "$work"
# Switches to the test build: beside its dp_hype.so (with the test seams) go the product's other
# plugins, so that it loads the same plugins as the product dptune.
link_test_build_plugins() {
  local product_plugins hooked_plugins
  product_plugins="$(dirname "$dptune")/../lib/dptune/plugins"
  hooked_plugins="$(dirname "$hooked")/../lib/dptune/plugins"
  for plugin in "$product_plugins"/*.so; do
    [ "$(basename "$plugin")" = dp_hype.so ] || ln -sfn "$(realpath "$plugin")" "$hooked_plugins/"
  done
}
use_test_build() {
  link_test_build_plugins
  dptune=$hooked
}
case "$case_name" in
  dp_hype | dp_hype_shards | dp_hype_dropout) use_test_build ;;
esac
case "$case_name" in
  equal_grid) equal grid ;;
  equal_dpareto) equal dpareto ;;
  equal_repetition)
    equal repetition
    # Every run of the repetition tuner keeps its model (any run may be the released one): the
    # models travel back with the scores, so the worker ranks train kept runs too, and the
    # released model is still the single-process run's.  Rank 0 leaves the runs to rank 1 (a test
    # seam): otherwise it takes them itself while rank 1 starts, and on a loaded machine rank 1
    # got none of this seed's two runs.
    many=(--seed 7 --set tuner.params.mean=40 --no-progress --overwrite "${sizes[@]}")
    "$dptune" run "$pipelines/repetition.yaml" --executor inline --out "$work/ref_many" "${many[@]}" \
      >"$work/ref_many.log" 2>&1 || fail "repetition (E[K] 40): single-process run exited $?"
    out="$work/repetition_travels"
    link_test_build_plugins
    DPTUNE_MPI_RESULTS="$work/results.txt" DPTUNE_MPI_WORKERS_TAKE_QUEUE=1 \
      mpirun_n 2 "$hooked" run "$pipelines/repetition.yaml" \
      --executor mpi --out "$out" "${many[@]}" >"$out.log" 2>&1 ||
      fail "repetition (hooked) over 2 ranks exited $? ($(tail -3 "$out.log"))"
    runs=$(($(wc -l <"$out/trials.SENSITIVE.csv") - 1))
    [ "$runs" -gt 0 ] && [ "$(grep -c "^1 model$" "$work/results.txt")" = "$runs" ] ||
      fail "repetition: rank 1 did not send every run's kept model ($runs runs: $(sort \
        "$work/results.txt" | uniq -c | tr '\n' ' '))"
    [ -s "$out/model.json" ] || fail "repetition: no released model over 2 ranks"
    diff <(fingerprint "$work/ref_many") <(fingerprint "$out") >/dev/null ||
      fail "repetition (E[K] 40) over 2 ranks differs from the single-process run"
    ;;
  equal_command) equal command ;;
  secure)
    out="$work/secure"
    mpirun_n 3 "$dptune" run "$pipelines/repetition.yaml" --executor mpi --out "$out" \
      --no-progress --overwrite >"$out.log" 2>&1 || fail "secure run exited $? ($(tail -3 "$out.log"))"
    grep -q "libsodium" "$out/summary.json" || fail "secure: summary.json names no secure randomness"
    [ -s "$out/model.json" ] || fail "secure: no released model"
    ;;
  secure_resume)
    out="$work/secure_resume"
    # Unseeded; rank 1 is killed once rank 0 has the first result of the initial design, so the study
    # is cut off mid-map: 6 design points of 2 trainings at 500 epochs, no Bayesian iteration (the
    # key is what is checked, not the tuner); the resumed run gets the same overrides.
    long=(--set algorithm.params.epochs=500 --set tuner.params.iterations=0)
    key_of() {
      python3 -c 'import sqlite3, sys; r = sqlite3.connect(sys.argv[1]).execute("SELECT value FROM meta WHERE key = ?", ("mpi_layout_key",)).fetchone(); print(r[0] if r else "")' "$1/study.db"
    }
    run_signalled 1 KILL first_result "$out" dpareto "${long[@]}" &&
      fail "secure_resume: exit code 0 after a rank was killed"
    key=$(key_of "$out")
    [ ${#key} -eq 64 ] || fail "secure_resume: the study keeps no layout key ('$key')"
    # Resumed over another number of ranks: the same key is sent again.
    mpirun_n 2 "$dptune" run "$pipelines/dpareto.yaml" --executor mpi --out "$out" --no-progress \
      "${long[@]}" --resume >"$out.resume.log" 2>&1 || fail "secure_resume: --resume exited $? ($(tail -3 "$out.resume.log"))"
    [ "$(key_of "$out")" = "$key" ] || fail "secure_resume: the layout key changed on --resume"
    [ -s "$out/trials.csv" ] || fail "secure_resume: no trials.csv after --resume"
    # A secure study of another executor cannot share its layout with other ranks: refused.
    other="$work/secure_threads"
    "$dptune" run "$pipelines/grid.yaml" --out "$other" --no-progress --overwrite >"$other.log" 2>&1 ||
      fail "secure_resume: the threads study exited $?"
    start=$(date +%s)
    mpirun_n 2 "$dptune" run "$pipelines/grid.yaml" --executor mpi --out "$other" --no-progress \
      --resume >"$other.resume.log" 2>&1
    code=$?
    [ $code -eq 2 ] || fail "secure_resume: resuming a threads study over MPI exited $code, not 2"
    # The workers waiting for rank 0's start are told to stop at once, not left to time out.
    [ $(($(date +%s) - start)) -lt 30 ] || fail "secure_resume: the refusal took 30 s or more"
    grep -q "did not start with the MPI executor" "$other.resume.log" ||
      fail "secure_resume: no reason given ($(grep -m2 dptune "$other.resume.log"))"
    ;;
  lost_rank)
    reference slow
    out="$work/lost"
    run_signalled 1 KILL first_result "$out" slow --seed 7
    ended_with_error lost_rank $? 0
    grep -q "rank 1" "$out.log" || fail "lost_rank: no message names rank 1 ($(tail -5 "$out.log"))"
    resume_and_compare "$out" slow
    ;;
  silent_rank)
    reference slow
    out="$work/silent"
    start=$(date +%s)
    DPTUNE_MPI_TIMEOUT=2 run_signalled 2 STOP 1.5 "$out" slow --seed 7
    ended_with_error silent_rank $? "$start" 60
    grep -q "MPI rank 2 sent nothing for 2 s" "$out.log" ||
      fail "silent_rank: no message names the silent rank 2 ($(grep dptune "$out.log" | head -3))"
    grep -q "continue with --resume" "$out.log" || fail "silent_rank: the message does not say --resume"
    resume_and_compare "$out" slow
    ;;
  silent_at_end)
    # A rank stopped while the others can still finish the study (a fast study, a long timeout):
    # whether rank 0 finishes first (then rank 2 never answers its stop, and MPI_Finalize would
    # wait for it forever) or declares rank 2 lost first, the job ends naming rank 2, never hangs.
    out="$work/silent_at_end"
    start=$(date +%s)
    # Runs of 3000 epochs (the map takes about 4 s here), rank 2 stopped after the first result.
    DPTUNE_MPI_TIMEOUT=20 run_signalled 2 STOP first_result "$out" dpareto --seed 7 \
      --set algorithm.params.epochs=3000
    ended_with_error silent_at_end $? "$start" 90
    grep -Eq "MPI rank 2 (sent nothing for 20 s|did not answer rank 0's stop within 20 s)" "$out.log" ||
      fail "silent_at_end: no message names the silent rank 2 ($(grep dptune "$out.log" | head -3))"
    if grep -q "did not answer rank 0's stop" "$out.log"; then
      "$dptune" study show "$out" | grep -q "status *finished" ||
        fail "silent_at_end: the study finished but is not stored as finished"
      grep -q "the study finished and its results are written" "$out.log" ||
        fail "silent_at_end: the message does not say the results are complete"
    fi
    ;;
  mismatch)
    out="$work/mismatch"
    timeout -k 10 120 "$mpiexec" --oversubscribe --allow-run-as-root \
      -np 2 "$dptune" run "$pipelines/grid.yaml" --seed 7 --executor mpi --out "$out" --no-progress --overwrite : \
      -np 1 "$dptune" run "$pipelines/grid.yaml" --seed 8 --executor mpi --out "$out" --no-progress --overwrite \
      >"$out.log" 2>&1
    code=$?
    [ $code -ne 0 ] && [ $code -ne 124 ] || fail "mismatch: exit code $code"
    grep -q "MPI rank 2 loaded a different pipeline than rank 0" "$out.log" ||
      fail "mismatch: no message names rank 2 ($(grep dptune "$out.log" | head -3))"
    ;;
  task_error)
    out="$work/task_error"
    mpirun_n 3 "$dptune" run "$pipelines/task_error.yaml" --seed 7 --executor mpi --out "$out" \
      --no-progress --overwrite >"$out.log" 2>&1
    code=$?
    [ $code -ne 0 ] && [ $code -ne 124 ] || fail "task_error: exit code $code"
    grep -Eq "dptune: error: MPI rank [12]: plugin 'command'" "$out.log" &&
      grep -Eq "boom on rank [12]" "$out.log" ||
      fail "task_error: no error names the worker rank ($(grep dptune "$out.log" | head -3))"
    "$dptune" study show "$out" | grep -q "status *failed" || fail "task_error: study not marked failed"
    ;;
  worker_data)
    # Rank 2 reads its own copy of the data, damaged (a host whose storage differs): the run
    # stops with the rank and the file's line named.
    for side in good bad; do
      mkdir -p "$work/$side"
      cp "$pipelines/csv.yaml" "$work/$side/p.yaml"
      cp "$pipelines/../../../data/breast_cancer.csv" "$work/$side/d.csv"
    done
    echo "1.5,oops" >>"$work/bad/d.csv"
    timeout -k 10 120 "$mpiexec" --oversubscribe --allow-run-as-root \
      -np 2 "$dptune" run "$work/good/p.yaml" --seed 3 --executor mpi --no-progress --overwrite : \
      -np 1 "$dptune" run "$work/bad/p.yaml" --seed 3 --executor mpi --no-progress --overwrite \
      >"$work/worker_data.log" 2>&1
    code=$?
    [ $code -ne 0 ] && [ $code -ne 124 ] || fail "worker_data: exit code $code"
    grep -q "MPI rank 2 could not start: $work/bad/d.csv:571: expected 31 fields" "$work/worker_data.log" ||
      fail "worker_data: no message names rank 2 and the line ($(grep -m2 dptune "$work/worker_data.log"))"
    ;;
  dp_hype)
    out="$work/dp_hype"
    mkdir -p "$work/clients" && rm -f "$work/clients"/*
    DPTUNE_MPI_CAPTURE="$work/rank0.bin" DPTUNE_DP_HYPE_CAPTURE="$work/clients" \
      mpirun_n 3 "$dptune" run "$pipelines/dp_hype.yaml" --seed 7 --executor mpi --out "$out" \
      --no-progress --overwrite >"$out.log" 2>&1 || fail "dp_hype exited $? ($(tail -3 "$out.log"))"
    [ "$(ls "$work/clients" | wc -l)" -eq 6 ] || fail "dp_hype: not every client ran on a worker rank"
    grep -q '"executor": "mpi(3 ranks)"' "$out/summary.json" || fail "dp_hype: not run over 3 ranks"
    python3 "$(dirname "$0")/dp_hype_check.py" "$work/rank0.bin" "$work/clients" \
      "$out/summary.json" 3 || fail "dp_hype: what rank 0 received"
    # Seeded: the same release again (the clients' randomness is drawn from the seed on their ranks).
    mpirun_n 3 "$dptune" run "$pipelines/dp_hype.yaml" --seed 7 --executor mpi --out "$out.again" \
      --no-progress --overwrite >"$out.again.log" 2>&1 || fail "dp_hype: second run exited $?"
    release() { grep -o '"DP output: [^"]*"' "$1/summary.json"; }
    [ -n "$(release "$out")" ] && [ "$(release "$out")" = "$(release "$out.again")" ] ||
      fail "dp_hype: a seeded run did not repeat its release"
    # Client j's randomness derives from the seed and j alone, whichever rank holds it: its local
    # runs' streams (a hash of the client and the candidate), its tie-breaks and its noise.  So
    # over 2 ranks the release is the 3 ranks' exactly.
    mpirun_n 2 "$dptune" run "$pipelines/dp_hype.yaml" --seed 7 --executor mpi --out "$out.np2" \
      --no-progress --overwrite >"$out.np2.log" 2>&1 || fail "dp_hype: 2 ranks exited $?"
    [ "$(release "$out")" = "$(release "$out.np2")" ] ||
      fail "dp_hype: the release depends on the rank count ($(release "$out") vs $(release "$out.np2"))"
    # The accounting is the single-process run's (the same noise calibration and survivors).
    "$dptune" run "$pipelines/dp_hype.yaml" --seed 7 --executor inline --out "$work/ref" \
      --no-progress --overwrite >"$work/ref.log" 2>&1 || fail "dp_hype: single-process run exited $?"
    guarantee() { python3 -c 'import json,sys; g=json.load(open(sys.argv[1]))["guarantee"]; print(g["epsilon"], g["delta"], g["derivation"])' "$1/summary.json"; }
    [ "$(guarantee "$out")" = "$(guarantee "$work/ref")" ] ||
      fail "dp_hype: guarantee $(guarantee "$out") differs from the single-process $(guarantee "$work/ref")"
    ;;
  dp_hype_shards)
    release() { grep -o '"DP output: [^"]*"\|"epsilon": [^,]*' "$1/summary.json"; }
    for mode in kept all; do
      mkdir -p "$work/held_$mode" && rm -f "$work/held_$mode"/*
      keep=""
      [ "$mode" = all ] && keep=1
      DPTUNE_MPI_HELD_ROWS="$work/held_$mode" DPTUNE_MPI_KEEP_ROWS="$keep" \
        mpirun_n 3 "$dptune" run "$pipelines/dp_hype.yaml" --seed 7 --executor mpi \
        --out "$work/shards_$mode" --no-progress --overwrite >"$work/shards_$mode.log" 2>&1 ||
        fail "dp_hype_shards ($mode) exited $? ($(tail -3 "$work/shards_$mode.log"))"
    done
    python3 "$(dirname "$0")/held_rows_check.py" "$work/held_kept" "$work/held_all" \
      "$work/shards_kept/summary.json" 3 6 || fail "dp_hype_shards: the rows the ranks held"
    [ -n "$(release "$work/shards_kept")" ] &&
      [ "$(release "$work/shards_kept")" = "$(release "$work/shards_all")" ] ||
      fail "dp_hype_shards: the release differs when every rank keeps every row"
    # Non-private baselines on the whole data: rank 0 keeps it and runs them (no worker holds it).
    for mode in kept all; do
      mkdir -p "$work/base_$mode" && rm -f "$work/base_$mode"/*
      keep=""
      [ "$mode" = all ] && keep=1
      DPTUNE_MPI_HELD_ROWS="$work/base_$mode" DPTUNE_MPI_KEEP_ROWS="$keep" \
        mpirun_n 3 "$dptune" run "$pipelines/dp_hype.yaml" --seed 7 --executor mpi \
        --out "$work/baselines_$mode" --set tuner.params.baselines=true \
        --set output.sensitive_trials=true --no-progress --overwrite \
        >"$work/baselines_$mode.log" 2>&1 ||
        fail "dp_hype_shards: baselines ($mode) exited $? ($(tail -3 "$work/baselines_$mode.log"))"
      fingerprint "$work/baselines_$mode" >"$work/baselines_$mode.txt"
    done
    grep -q "^scope whole train 1079 scored 359 " "$work/base_kept/rank_0.txt" &&
      grep -qx "stored_rows 1797" "$work/base_kept/rank_0.txt" ||
      fail "dp_hype_shards: with baselines rank 0 does not hold the whole data ($(cat "$work/base_kept/rank_0.txt"))"
    grep -qx "stored_rows 0" "$work/held_kept/rank_0.txt" ||
      fail "dp_hype_shards: without baselines rank 0 holds rows"
    [ "$(grep -c '^[0-9]' "$work/baselines_kept.txt")" -eq 4 ] &&
      diff -q "$work/baselines_kept.txt" "$work/baselines_all.txt" >/dev/null ||
      fail "dp_hype_shards: the baselines' trials differ ($(diff "$work/baselines_kept.txt" "$work/baselines_all.txt" | head -4))"
    ;;
  dp_hype_dropout)
    out="$work/dropout"
    mkdir -p "$work/clients" && rm -f "$work/clients"/*
    start=$(date +%s)
    DPTUNE_MPI_CAPTURE="$work/rank0.bin" DPTUNE_DP_HYPE_CAPTURE="$work/clients" \
      mpirun_n 3 "$dptune" run "$pipelines/dp_hype.yaml" --seed 7 --executor mpi --out "$out" \
      --set tuner.params.stop_rank=2 --set tuner.params.round_timeout=2 --set tuner.params.threshold=2 \
      --no-progress --overwrite >"$out.log" 2>&1 || fail "dp_hype_dropout exited $? ($(tail -3 "$out.log"))"
    python3 "$(dirname "$0")/dp_hype_check.py" "$work/rank0.bin" "$work/clients" \
      "$out/summary.json" 3 --dropped-rank 2 || fail "dp_hype_dropout: what rank 0 received"
    grep -q "3 clients dropped" "$out/summary.json" || fail "dp_hype_dropout: no warning about the dropouts"
    # More dropouts than the threshold allows: a clear abort, no hang.
    mpirun_n 3 "$dptune" run "$pipelines/dp_hype.yaml" --seed 7 --executor mpi --out "$out.abort" \
      --set tuner.params.stop_rank=2 --set tuner.params.round_timeout=2 --set tuner.params.threshold=4 \
      --no-progress --overwrite >"$out.abort.log" 2>&1
    code=$?
    [ $code -ne 0 ] && [ $code -ne 124 ] || fail "dp_hype_dropout: the abort exited $code"
    grep -q "secure aggregation aborted: only 3 of 6 clients sent masked input" "$out.abort.log" ||
      fail "dp_hype_dropout: no abort message ($(grep dptune "$out.abort.log" | head -3))"
    [ $(($(date +%s) - start)) -lt 30 ] || fail "dp_hype_dropout: took 30 s or more"
    ;;
  dp_hype_ledger)
    # Rank 2's clients are lost to the round timeout, so the released guarantee is above the dry
    # run's: DP-Hype stated its worst case (threshold 2 survivors) before the run, the ledger
    # reserved it with the charge, and after the run the reservation is settled to the real
    # supplement (the released guarantee), within the reservation and the budget.
    out="$work/ledger"
    mkdir -p "$out.d" && rm -f "$out.d"/*
    { cat "$pipelines/dp_hype.yaml"
      echo "ledger: {path: $out.d/ledger.db, dataset: digits, budget: {epsilon: 60, delta: 1.0e-3}}"; } >"$out.d/pipeline.yaml"
    mpirun_n 3 "$dptune" run "$out.d/pipeline.yaml" --seed 7 --executor mpi --out "$out" \
      --set tuner.params.stop_rank=2 --set tuner.params.round_timeout=2 --set tuner.params.threshold=2 \
      --no-progress --overwrite >"$out.log" 2>&1 || fail "dp_hype_ledger exited $? ($(tail -3 "$out.log"))"
    "$dptune" ledger show "$out.d/ledger.db" --json >"$out.ledger.json" || fail "dp_hype_ledger: ledger show"
    python3 - "$out.ledger.json" "$out/summary.json" "$out.log" <<'PY' || fail "dp_hype_ledger: the ledger after the run"
import json, re, sys
rows = json.load(open(sys.argv[1]))["datasets"][0]["entries"]
final = json.load(open(sys.argv[2]))["guarantee"]["epsilon"]
log = open(sys.argv[3]).read()
reserved = re.search(r"worst-case supplement \(epsilon, delta\) = \(([0-9.e+-]+), ", log)
problems = []
if [r["kind"] for r in rows] != ["charge", "supplement"]:
    problems.append("kinds %s, expected a charge and the reservation settled to a supplement" % [r["kind"] for r in rows])
elif reserved is None:
    problems.append("the run printed no reservation")
else:
    charge, supplement = rows
    if not final > charge["epsilon"]:
        problems.append("no supplement was needed (final %g, charge %g)" % (final, charge["epsilon"]))
    if abs(supplement["epsilon"] - final) > 1e-6 * final:
        problems.append("supplement %g is not the released guarantee %g" % (supplement["epsilon"], final))
    if not supplement["epsilon"] <= float(reserved.group(1)) * (1 + 1e-5):
        problems.append("supplement %g above the reserved worst case %s" % (supplement["epsilon"], reserved.group(1)))
    if not supplement["total_epsilon"] <= 60:
        problems.append("composed total %g above the budget 60" % supplement["total_epsilon"])
for p in problems:
    print(p, file=sys.stderr)
sys.exit(1 if problems else 0)
PY
    # A budget that takes the charge but not its reserved worst case: refused before anything is
    # written (exit 2 at ledger.budget, naming the reservation), no results folder, no ledger row.
    budget=$(python3 - "$out.log" <<'PY'
import re, sys
log = open(sys.argv[1]).read()
charged = float(re.search(r"charged \(epsilon, delta\) = \(([0-9.e+-]+), ", log).group(1))
reserved = float(re.search(r"composed epsilon ([0-9.e+-]+) with it", log).group(1))
print((charged + reserved) / 2 if reserved > charged * 1.01 else "none")
PY
    )
    [ "$budget" != none ] || fail "dp_hype_ledger: the reservation adds nothing to the charge"
    refused="$work/ledger_refused"
    rm -rf "$refused" "$refused.d" && mkdir -p "$refused.d"
    { cat "$pipelines/dp_hype.yaml"
      echo "ledger: {path: $refused.d/ledger.db, dataset: digits, budget: {epsilon: $budget, delta: 1.0e-3}}"; } >"$refused.d/pipeline.yaml"
    start=$(date +%s)
    mpirun_n 3 "$dptune" run "$refused.d/pipeline.yaml" --seed 7 --executor mpi --out "$refused" \
      --set tuner.params.stop_rank=2 --set tuner.params.round_timeout=2 --set tuner.params.threshold=2 \
      --no-progress --overwrite >"$refused.log" 2>&1
    code=$?
    [ $code -eq 2 ] || fail "dp_hype_ledger: the run over budget with its reservation exited $code, not 2 ($(tail -3 "$refused.log"))"
    grep -q "ledger.budget: .*reserved write-ahead" "$refused.log" ||
      fail "dp_hype_ledger: the refusal does not name ledger.budget and the reservation ($(grep -m2 dptune "$refused.log"))"
    [ ! -e "$refused" ] || fail "dp_hype_ledger: the refused run left its results folder $refused"
    [ ! -e "$refused.d/ledger.db" ] || fail "dp_hype_ledger: the refused run created its ledger"
    [ $(($(date +%s) - start)) -lt 30 ] || fail "dp_hype_ledger: the refusal took 30 s or more"
    ;;
  *) fail "unknown case $case_name" ;;
esac
[ $failures -eq 0 ] || exit 1
echo "ok: $case_name"
