#!/usr/bin/env bash
# The command trainer's release end to end: a private tuner (repetition, K secret) tunes the numpy
# DP-SGD example program on a CSV with text categories; the released run's model files, and nothing
# else of any run, are in the results folder, named by model.json and summary.json:release;
# keep_dir holds the released run's folder alone, under one fixed name; no run folder is left in
# TMPDIR.  `dptune predict` runs the program's predict mode on the release: a CSV with its columns
# in another order predicts exactly as the original, one with a renamed column is refused (exit 2),
# and a program without a predict mode is a clear error (exit 2).
# Usage: release_test.sh DPTUNE SOURCE_DIR
set -uo pipefail
dptune=$1
src=$2
here=$src/tests/command
python=/usr/bin/python3
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
status=0
fail() { echo "FAIL: $*"; status=1; }
mkdir -p "$work/tmp"
out=$work/out

TMPDIR=$work/tmp "$dptune" run "$here/pipelines/release_repetition.yaml" --out "$out" --seed 3 \
  --no-progress --set "algorithm.params.keep_dir=$work/keep" >"$work/run.log" 2>&1 ||
  { echo "FAIL: run exited $? ($(tail -5 "$work/run.log"))"; exit 1; }
grep -q "model: model.json, model/model.npy" "$work/run.log" ||
  fail "the console does not name the released files: $(grep -i model "$work/run.log" | head -3)"

# The release: model.json naming model/model.npy, and no other file of any run.
"$python" - "$out" <<'PY' || fail "the release files"
import json, os, sys
out = sys.argv[1]
m = json.load(open(f"{out}/model.json"))
assert m["kind"] == "files" and m["files"] == ["model/model.npy"], (m["kind"], m.get("files"))
assert m["algorithm"] == "command" and m["trainer_params"]["steps"] == 20, m["trainer_params"]
assert m["feature_names"] == ["age", "sex=F", "sex=M", "ward=1", "ward=2", "ward=3"]
s = json.load(open(f"{out}/summary.json"))
assert s["release"]["model"] == "model.json", s["release"]
assert s["release"]["model_files"] == ["model/model.npy"], s["release"]
assert "model/model.npy" not in s["files"], s["files"]  # part of the release, not the public list
found = sorted(os.path.relpath(os.path.join(r, f), out) for r, _, fs in os.walk(out) for f in fs)
# The study store keeps a copy of every stored run's model files (for --resume): SENSITIVE like
# study.db, owner-only, never part of the release.
run_files = [f for f in found if f.endswith((".csv", ".npy", "request.json")) and
             f not in ("model/model.npy",) and not f.startswith(("trials", "series", "study-models/"))]
assert not run_files, run_files
assert os.stat(f"{out}/study-models").st_mode & 0o077 == 0, "study-models is not owner-only"
assert found.count("model/model.npy") == 1 and os.listdir(f"{out}/model") == ["model.npy"], found
html = open(f"{out}/report.html").read()
assert "model/model.npy" in html, "report.html does not name the model file"
PY
[ "$(ls -A "$work/keep")" = "released-run" ] || fail "keep_dir holds $(ls -A "$work/keep")"
[ -f "$work/keep/released-run/train.csv" ] && [ -f "$work/keep/released-run/model.npy" ] ||
  fail "keep_dir/released-run is not the released run's folder: $(ls "$work/keep/released-run")"
cmp -s "$work/keep/released-run/model.npy" "$out/model/model.npy" ||
  fail "the kept run is not the released one"
[ "$(stat -c %a "$work/keep/released-run")" = 700 ] || fail "released-run is not owner-only"
[ -z "$(ls -A "$work/tmp")" ] || fail "run folders left in TMPDIR: $(ls -A "$work/tmp")"

# Columns in another order (label, ward, age, sex), and a renamed column.
"$python" - "$src/tests/python/patients.csv" "$work" <<'PY'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
def write(name, rows):
    csv.writer(open(f"{sys.argv[2]}/{name}", "w", newline=""), lineterminator="\n").writerows(rows)
write("original.csv", rows)
shuffled = [[r[i] for i in [3, 2, 0, 1]] for r in rows]
write("shuffled.csv", shuffled)
write("renamed.csv", [["label", "ward", "age", "gender"]] + shuffled[1:])
PY
TMPDIR=$work/tmp "$dptune" predict "$out/model.json" "$work/original.csv" --label label \
  --out "$work/original.pred" 2>"$work/p1.err" || fail "predict exited $? ($(cat "$work/p1.err"))"
TMPDIR=$work/tmp "$dptune" predict "$out/model.json" "$work/shuffled.csv" --label label \
  --out "$work/shuffled.pred" 2>"$work/p2.err" || fail "predict (shuffled) exited $?"
cmp -s "$work/original.pred" "$work/shuffled.pred" ||
  fail "reordered columns predict differently: $(diff "$work/original.pred" "$work/shuffled.pred" | head -4)"
grep -q "another version of its program" "$work/p1.err" && fail "a note on an unchanged program"
[ "$(wc -l <"$work/original.pred")" = 401 ] || fail "$(wc -l <"$work/original.pred") prediction lines"
[ "$(cut -d, -f2 "$work/original.pred" | tail -n +2 | sort -u | wc -l)" = 2 ] ||
  fail "the predictions do not vary: $(cut -d, -f2 "$work/original.pred" | sort | uniq -c)"
# The same predictions as the program itself gives on the encoded rows (its own predict action).
"$python" - "$out" "$work" "$src" <<'PY' || fail "dptune predict differs from the program's own predict"
import csv, json, subprocess, sys
out, work, src = sys.argv[1:4]
m = json.load(open(f"{out}/model.json"))
pre = m["preprocessing"]
lo, hi, mean, scale = pre["min"], pre["max"], pre["mean"], pre["scale"]
cats = {"F": [1, 0], "M": [0, 1]}
rows = list(csv.DictReader(open(f"{work}/original.csv")))
with open(f"{work}/encoded.csv", "w") as f:
    f.write(",".join(m["feature_names"]) + "\n")
    for r in rows:
        x = [float(r["age"])] + cats[r["sex"]] + [1 if r["ward"] == w else 0 for w in "123"]
        x = [min(max(v, a), b) for v, a, b in zip(x, lo, hi)]
        x = [(v - c) / d for v, c, d in zip(x, mean, scale)]  # the recorded rule
        f.write(",".join(repr(float(v)) for v in x) + "\n")
request = {"protocol": 1, "action": "predict", "model": f"{out}/model/model.npy",
           "data": {"rows_csv": f"{work}/encoded.csv", "rows": len(rows), "classes": 2}}
answer = json.loads(subprocess.run(
    ["/usr/bin/python3", f"{src}/examples/command/dp_sgd_numpy.py"], input=json.dumps(request),
    capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1])
ours = [int(r[1]) for r in list(csv.reader(open(f"{work}/original.pred")))[1:]]
assert ours == answer["predictions"], "predictions differ"
PY
TMPDIR=$work/tmp "$dptune" predict "$out/model.json" "$work/renamed.csv" --label label \
  >/dev/null 2>"$work/renamed.err"
rc=$?
[ "$rc" = 2 ] && grep -q "gender" "$work/renamed.err" ||
  fail "a renamed column: exit $rc, $(head -1 "$work/renamed.err")"

# The numpy-only loader of examples/python reads layers: it refuses a model kept in files by name.
"$python" "$src/examples/python/dptune_model.py" "$out/model.json" "$work/original.csv" \
  --label label >/dev/null 2>"$work/loader.err" && fail "the numpy loader accepted a files model"
grep -q "use \`dptune predict\`" "$work/loader.err" || fail "the loader says $(tail -1 "$work/loader.err")"

# A program without a predict mode (the release's program replaced by one that has none).
cp -r "$out" "$work/no_predict"
"$python" - "$work/no_predict/model.json" "$here/behave.py" <<'PY'
import json, sys
m = json.load(open(sys.argv[1]))
m["trainer_params"]["run"] = "/usr/bin/python3 " + sys.argv[2] + " no_predict"
json.dump(m, open(sys.argv[1], "w"))
PY
TMPDIR=$work/tmp "$dptune" predict "$work/no_predict/model.json" "$work/original.csv" \
  --label label >/dev/null 2>"$work/no_predict.err"
rc=$?
[ "$rc" = 2 ] && grep -q "could not predict (dptune predict starts it with action \"predict\"" \
  "$work/no_predict.err" && grep -q "no predict mode" "$work/no_predict.err" &&
  grep -q "was released by another version of its program" "$work/no_predict.err" ||
  fail "a program without predict mode: exit $rc, $(cat "$work/no_predict.err")"
[ -z "$(ls -A "$work/tmp")" ] || fail "predict left folders in TMPDIR: $(ls -A "$work/tmp")"
[ $status = 0 ] && echo "ok: the command trainer's release: files, keep_dir, predict"
exit $status
