#!/bin/sh
# A command-trainer program for tests/study/study_test.sh (case private_failure): counts its train
# starts in the file $1 (one line each) and fails as $2 says, printing its secret seed to stderr
# (what a careless program does, and what dptune must never show for a private tuner):
#   always  every train fails
#   third   the third train start fails (the evaluations before it succeed and are stored)
#   seed    a train fails unless its seed is a multiple of 4 (3 seeds of 4 fail)
#   files   every train succeeds and declares a model file holding its seed, unless FLAKY_FAIL is
#           set (then every train fails: a resume that starts the program again fails)
# predict answers class 0 for every row.
starts=$1
mode=$2
request=$(cat)
if [ "$DPTUNE_ACTION" = train ]; then
  echo start >>"$starts"
  count=$(wc -l <"$starts")
  fail=0
  case $mode in
    always) fail=1 ;;
    third) [ "$count" -eq 3 ] && fail=1 ;;
    seed) [ $((DPTUNE_SEED % 4)) -ne 0 ] && fail=1 ;;
    files) [ -n "$FLAKY_FAIL" ] && fail=1 ;;
  esac
  if [ "$fail" = 1 ]; then
    echo "flaky: training diverged, secret seed $DPTUNE_SEED" >&2
    exit 1
  fi
  if [ "$mode" = files ]; then
    folder=$(echo "$request" | sed 's/.*"output_dir": "\([^"]*\)".*/\1/')
    echo "model of seed $DPTUNE_SEED" >"$folder/model.txt"
    echo '{"model_files": ["model.txt"]}'
  else
    echo '{"model": "none"}'
  fi
else
  rows=$(echo "$request" | sed 's/.*"rows": \([0-9]*\).*/\1/')
  out="0"
  i=1
  while [ "$i" -lt "$rows" ]; do
    out="$out, 0"
    i=$((i + 1))
  done
  echo "{\"predictions\": [$out]}"
fi
