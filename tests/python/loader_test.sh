#!/usr/bin/env bash
# examples/python/dptune_model.py (numpy only) predicts exactly what `dptune predict` does: the same
# classes on every row and the same probabilities to 1e-12, for each output (sigmoid, hinge,
# softmax), hidden ReLU layers, and each preprocessing a released model can carry.  The CSV's columns
# are given shuffled, so matching by name is checked too.
# Usage: loader_test.sh DPTUNE SOURCE_DIR
set -uo pipefail
dptune=$1
src=$2
python=/usr/bin/python3  # Debian's, with python3-numpy (scripts/install-deps.sh)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

# Each data file's columns in reverse order (label first).
for data in breast_cancer iris; do
  "$python" - "$src/data/$data.csv" "$work/$data.reversed.csv" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
csv.writer(open(sys.argv[2], "w", newline=""), lineterminator="\n").writerows(r[::-1] for r in rows)
PY
done

check() {  # name, data file, then --set overrides of the walkthrough pipeline
  local name=$1 data=$2
  shift 2
  local out=$work/$name
  "$dptune" run "$src/examples/walkthrough/tune_my_csv.yaml" --out "$out" --seed 5 --no-progress \
    "$@" >"$work/$name.log" 2>&1 || { fail "$name: run exited $? ($(tail -2 "$work/$name.log"))"; return; }
  "$dptune" predict "$out/model.json" "$work/$data.reversed.csv" --label label --out "$work/$name.dptune.csv" \
    2>/dev/null || { fail "$name: dptune predict exited $?"; return; }
  "$python" "$src/examples/python/dptune_model.py" "$out/model.json" "$work/$data.reversed.csv" --label label \
    >"$work/$name.numpy.csv" || { fail "$name: the numpy loader exited $?"; return; }
  "$python" - "$work/$name.dptune.csv" "$work/$name.numpy.csv" <<'PY' || fail "$name: predictions differ"
import csv, sys
a, b = (list(csv.reader(open(f))) for f in sys.argv[1:3])
assert a[0] == b[0] and len(a) == len(b) > 100, (a[0], b[0], len(a), len(b))
for ra, rb in zip(a[1:], b[1:]):
    assert ra[:2] == rb[:2], (ra, rb)
    assert all(abs(float(x) - float(y)) <= 1e-12 for x, y in zip(ra[2:], rb[2:])), (ra, rb)
PY
  echo "ok: $name"
}

check logistic_standardize breast_cancer
check svm_normalize_rows breast_cancer --set algorithm.params.model=svm --set 'data.preprocessing={use: normalize_rows}'
check mlp_clip_rows breast_cancer --set algorithm.params.model=mlp --set algorithm.params.hidden1=8 \
  --set algorithm.params.hidden2=4 --set 'data.preprocessing={use: clip_rows, bound: 5}'
check logistic_bounds breast_cancer --set 'data.preprocessing={use: bounds, min: 0, max: 3000}'
check logistic_none breast_cancer --set 'data.preprocessing={use: none}'
# Three classes: softmax (and the multiclass hinge) over the class scores.
iris=(--set "data.params.path=$src/data/iris.csv" --set 'data.params.classes=[0, 1, 2]'
  --set "data.preprocessing.file=$src/data/public_stats/iris.yaml")
check softmax_mlp iris "${iris[@]}" --set algorithm.params.model=mlp --set algorithm.params.hidden1=6
check multiclass_svm iris "${iris[@]}" --set algorithm.params.model=svm
exit $status
