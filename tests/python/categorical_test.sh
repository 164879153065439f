#!/usr/bin/env bash
# Categorical columns end to end: a CSV with text categories (tests/python/patients.csv: sex F/M,
# ward 1/2/3) trains through the declared one-hot encoding, the released model.json records it, and
# `dptune predict` and the numpy loader encode a file with the columns in another order the same
# way, with the same predictions.  An unknown category is refused at prediction (or zero on
# request) and zero at training; a renamed column is refused; an undeclared text column is refused
# with the declaration to add.
# Usage: categorical_test.sh DPTUNE SOURCE_DIR
set -uo pipefail
dptune=$1
src=$2
here=$src/tests/python
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }

"$dptune" run "$here/categorical.yaml" --out "$work/out" --seed 2 --no-progress >"$work/run.log" 2>&1 ||
  { echo "FAIL: run exited $? ($(tail -3 "$work/run.log"))"; exit 1; }
"$python" - "$work/out/model.json" <<'PY' || fail "model.json does not record the encoding"
import json, sys
m = json.load(open(sys.argv[1]))
assert m["categorical"] == {"sex": ["F", "M"], "ward": ["1", "2", "3"]}, m.get("categorical")
assert m["feature_names"] == ["age", "sex=F", "sex=M", "ward=1", "ward=2", "ward=3"], m["feature_names"]
PY

# The columns in another order (label, ward, age, sex), and variants of it.
"$python" - "$here/patients.csv" "$work" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
order = [3, 2, 0, 1]
def write(name, rows):
    csv.writer(open(f"{sys.argv[2]}/{name}", "w", newline=""), lineterminator="\n").writerows(rows)
shuffled = [[r[i] for i in order] for r in rows]
write("shuffled.csv", shuffled)
write("unknown.csv", shuffled[:5] + [shuffled[5][:3] + ["X"]] + shuffled[6:])
write("renamed.csv", [["label", "ward", "age", "gender"]] + shuffled[1:])
PY
"$dptune" predict "$work/out/model.json" "$work/shuffled.csv" --label label --out "$work/dptune.csv" \
  2>/dev/null || fail "predict on reordered columns exited $?"
"$python" "$src/examples/python/dptune_model.py" "$work/out/model.json" "$work/shuffled.csv" \
  --label label >"$work/numpy.csv" || fail "the numpy loader exited $?"
"$python" - "$work/dptune.csv" "$work/numpy.csv" <<'PY' || fail "dptune predict and the numpy loader differ"
import csv, sys
a, b = (list(csv.reader(open(f))) for f in sys.argv[1:3])
assert len(a) == len(b) == 401 and a[0] == b[0]
for ra, rb in zip(a[1:], b[1:]):
    assert ra[:2] == rb[:2] and all(abs(float(x) - float(y)) <= 1e-12 for x, y in zip(ra[2:], rb[2:]))
PY
# The encoding is what the model sees: sex=F and sex=M rows differ in their predictions.
[ "$(cut -d, -f3 "$work/dptune.csv" | sort -u | wc -l)" -gt 2 ] || fail "predictions do not vary"

"$dptune" predict "$work/out/model.json" "$work/unknown.csv" --label label >/dev/null 2>"$work/unknown.err"
rc=$?
[ "$rc" = 2 ] && grep -q "column 'sex': category 'X' is not among the declared ones" "$work/unknown.err" ||
  fail "an unknown category at prediction: exit $rc, $(head -1 "$work/unknown.err")"
"$dptune" predict "$work/out/model.json" "$work/unknown.csv" --label label \
  --unknown-categories zero >/dev/null 2>&1 || fail "--unknown-categories zero exited $?"
"$dptune" predict "$work/out/model.json" "$work/renamed.csv" --label label >/dev/null 2>"$work/renamed.err"
rc=$?
[ "$rc" = 2 ] && grep -q "gender" "$work/renamed.err" ||
  fail "a renamed categorical column: exit $rc, $(head -1 "$work/renamed.err")"

# Training: a record with an undeclared category contributes zeros (record-local), no refusal.
cp "$here/categorical.yaml" "$work/train_unknown.yaml"
"$python" - "$here/patients.csv" "$work/patients.csv" <<'PY'
import sys
lines = open(sys.argv[1]).read().splitlines()
lines[1] = lines[1].split(",")[0] + ",X," + ",".join(lines[1].split(",")[2:])
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
PY
"$dptune" validate "$work/train_unknown.yaml" >"$work/v.log" 2>&1 ||
  fail "training data with an undeclared category: validate exited $? ($(head -1 "$work/v.log"))"
# An undeclared text column: refused, with the declaration to add.
grep -v 'categorical:' "$here/categorical.yaml" | sed 's/min: \[0, 0, 0, 0, 0, 0\], max: \[100, 1, 1, 1, 1, 1\]/min: 0, max: 100/' \
  >"$work/undeclared.yaml"
"$dptune" validate "$work/undeclared.yaml" >/dev/null 2>"$work/undeclared.err"
rc=$?
[ "$rc" = 2 ] && grep -q "declare them, public: data.params.categorical: {sex: \[" "$work/undeclared.err" ||
  fail "an undeclared text column: exit $rc, $(head -1 "$work/undeclared.err")"
[ $status = 0 ] && echo "ok: categorical columns trained, released, predicted (dptune and numpy)"
exit $status
