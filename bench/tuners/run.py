#!/usr/bin/python3
"""The equal-epsilon tuner benchmark: which private tuner releases the best model at a given budget?

For each workload x budget epsilon x method x seed it writes a pipeline from the workload's template,
calibrates it so that the total epsilon dptune prints for the WHOLE tuning run (every training, every
noisy score, the released model and its score; accountant `best`, delta 1e-5) is the budget, runs
`dptune run`, predicts the held-out test file (rows the pipeline never sees) with `dptune predict`
and appends one JSON line: test accuracy, wall time, trainings, the printed epsilon.  dp_hype, which
releases no model, is two runs (its vote, then one training of the voted candidate) charged to one
privacy ledger: its epsilon is the composed one `dptune ledger show` prints.

Resumable: a row whose key (mode, workload, budget, method, seed) is already in the results file is
skipped, and calibrations are stored there too, so a second call with nothing left to do starts no
dptune process at all.

    bench/tuners/run.py --quick              # 1 workload, 1 seed, small grids (a few minutes)
    bench/tuners/run.py                      # full: 4 workloads, 10 seeds (hours; see docs/benchmark.md)
    bench/tuners/run.py --report [--quick]   # docs/benchmark.md and its plots from the results file

Needs Debian's python3-numpy and python3-matplotlib (plots only) and a built dptune (build/bin).
"""
import argparse
import datetime
import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent.parent
sys.path.insert(0, str(HERE))

import methods as M  # noqa: E402  (the tuner sections and their calibration knobs)
import report as R  # noqa: E402  (the table and the plots)
import workloads as W  # noqa: E402  (data, trainer and search space of each workload)

DELTA = 1e-5
BUDGETS = (1.0, 3.0, 8.0)

MODES = {
    # The same code path everywhere; the modes differ only in size.
    "full": {"workloads": list(W.WORKLOADS), "budgets": BUDGETS, "seeds": 10, "points": 4,
             "mean_runs": 10, "methods": list(M.METHODS), "epochs_scale": 1.0,
             "pld_interval": 1e-3},
    "quick": {"workloads": ["breast_cancer_logreg"], "budgets": BUDGETS, "seeds": 1, "points": 3,
              "mean_runs": 5, "methods": list(M.METHODS), "epochs_scale": 0.25,
              "pld_interval": 1e-2},
    # The test suite's configuration (tests/bench_tuners): seconds, not minutes.
    "tiny": {"workloads": ["breast_cancer_logreg"], "budgets": (3.0,), "seeds": 1, "points": 2,
             "mean_runs": 3, "methods": ["no_tuning", "repetition_geometric", "dp_hype"], "epochs_scale": 0.25,
             "pld_interval": 1e-2},
}


def main():
    args = parse_args()
    mode = MODES[args.mode]
    results = Path(args.results or HERE / "results" / f"{args.mode}.jsonl")
    if args.report:
        R.write_report(results, Path(args.doc), Path(args.figures), args.mode, MODES, plots=not args.no_plots)
        return 0
    bench = Bench(args, mode, results)
    bench.run_all()
    return 0


def parse_args():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    g = p.add_mutually_exclusive_group()
    g.add_argument("--quick", dest="mode", action="store_const", const="quick")
    g.add_argument("--tiny", dest="mode", action="store_const", const="tiny", help="the test's size")
    p.set_defaults(mode="full")
    p.add_argument("--report", action="store_true", help="render the doc and plots from the results")
    p.add_argument("--results", help="results JSONL (default bench/tuners/results/MODE.jsonl)")
    p.add_argument("--doc", default=str(REPO / "docs" / "benchmark.md"))
    p.add_argument("--figures", default=str(REPO / "docs" / "benchmark"))
    p.add_argument("--no-plots", action="store_true")
    p.add_argument("--dptune", default=str(REPO / "build" / "bin" / "dptune"))
    p.add_argument("--work", default=str(HERE / "work"), help="scratch folder (pipelines, runs, data)")
    p.add_argument("--workloads", help="comma-separated subset of the mode's workloads")
    p.add_argument("--budgets", help="comma-separated subset of the mode's budgets")
    p.add_argument("--methods", help="comma-separated subset of the mode's methods")
    p.add_argument("--seeds", type=int, help="run only seeds 1..N of the mode's")
    return p.parse_args()


def subset(text, default):
    if not text:
        return list(default)
    wanted = [type(default[0])(t) for t in text.split(",")]
    unknown = [w for w in wanted if w not in default]
    if unknown:
        sys.exit(f"run.py: unknown {unknown}; choose from {list(default)}")
    return wanted


class Bench:
    """One benchmark session: the results file, the scratch folder and the dptune binary."""

    def __init__(self, args, mode, results):
        self.args, self.mode, self.results = args, mode, results
        self.work = Path(args.work) / args.mode
        self.work.mkdir(parents=True, exist_ok=True)
        self.results.parent.mkdir(parents=True, exist_ok=True)
        self.rows, self.calibrations = load_results(results)
        self.new_rows = 0
        self.dptune_processes = 0

    def run_all(self):
        workloads = subset(self.args.workloads, self.mode["workloads"])
        budgets = subset(self.args.budgets, list(self.mode["budgets"]))
        methods = subset(self.args.methods, self.mode["methods"])
        for workload in workloads:
            files = W.prepare_data(workload, self.work / "data")
            for budget in budgets:
                for method in methods:
                    for seed in range(1, min(self.args.seeds or self.mode["seeds"], self.mode["seeds"]) + 1):
                        self.one_row(workload, files, budget, method, seed)
        print(f"run.py: {self.new_rows} new rows, {self.dptune_processes} dptune processes; "
              f"results in {self.results}", flush=True)

    def key(self, workload, budget, method, seed=None):
        k = {"mode": self.args.mode, "workload": workload, "budget": budget, "method": method}
        if seed is not None:
            k["seed"] = seed
        return json.dumps(k, sort_keys=True)

    def one_row(self, workload, files, budget, method, seed):
        key = self.key(workload, budget, method, seed)
        if key in self.rows:
            return
        # A two-stage method is calibrated per voted candidate, inside its measurement.
        two_stage = M.METHODS[method].get("two_stage")
        calibration = {} if two_stage else self.calibration(workload, files, budget, method)
        if calibration.get("failed"):
            row = {"failed": calibration["failed"]}
        else:
            try:
                row = self.measure(workload, files, budget, method, seed, calibration)
            except RuntimeError as e:  # kept as a failed row: the report lists it, a rerun skips it
                row = {"failed": str(e)[:600]}
        row.update(json.loads(key))
        row["date"] = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
        self.append({"kind": "row", **row})
        self.rows[key] = row
        self.new_rows += 1
        shown = {k: row.get(k) for k in ("test_accuracy", "epsilon", "trainings", "wall_seconds", "failed")}
        print(f"{workload} eps={budget} {method} seed={seed}: {shown}", flush=True)

    def append(self, record):
        with open(self.results, "a") as f:
            f.write(json.dumps(record, sort_keys=True) + "\n")

    # ---- calibration ----------------------------------------------------------------------------

    def calibration(self, workload, files, budget, method, candidate=None):
        """The knob values that make the printed total epsilon the budget (stored, so computed once)."""
        key = self.key(workload, budget, method)
        if candidate is not None:
            key += " " + json.dumps(candidate, sort_keys=True)
        if key not in self.calibrations:
            start = time.monotonic()
            result = M.calibrate(method, budget, lambda knobs: self.printed_epsilon(
                workload, files, budget, method, knobs, candidate), oracle_final=candidate is not None,
                start=self.warm_start(workload, budget, method))
            result["seconds"] = round(time.monotonic() - start, 1)
            self.append({"kind": "calibration", "key": key, **result})
            self.calibrations[key] = result
            print(f"calibrated {workload} eps={budget} {method} {candidate or ''}: {result}", flush=True)
        return self.calibrations[key]

    def warm_start(self, workload, budget, method):
        """Where the knob's search starts: an earlier calibration of the method on the workload,
        scaled to this budget (the knob's epsilon is roughly proportional to 1/sigma, or to the
        cap), or None (the default start).  Only fewer `validate` calls: the band is the same."""
        for key, result in self.calibrations.items():
            k, _ = json.JSONDecoder().raw_decode(key)
            if (k["workload"], k["method"], k["mode"]) == (workload, method, self.args.mode) \
                    and not result.get("failed"):
                return M.scaled_knob(method, result["knobs"], k["budget"], budget)
        return None

    def printed_epsilon(self, workload, files, budget, method, knobs, candidate=None):
        """The total epsilon `dptune validate` prints for the pipeline with these knob values."""
        path = self.write_pipeline(workload, files, budget, method, knobs, "calibrate", 0, candidate)
        out = self.dptune(["validate", str(path)])
        return M.parse_guarantee(out)

    # ---- one measured run -----------------------------------------------------------------------

    def write_pipeline(self, workload, files, budget, method, knobs, tag, seed, candidate=None, ledger=None):
        folder = self.work / "runs" / workload / f"eps{budget:g}" / method / f"{tag}{seed}"
        folder.mkdir(parents=True, exist_ok=True)
        pipeline = W.pipeline(workload, files, self.mode, out_dir=str(folder / "out"))
        M.apply(method, pipeline, budget, knobs, self.mode, W.WORKLOADS[workload], candidate)
        if ledger is not None:
            # A real budget: the ledger refuses (exit 2, nothing trained) a charge that does not fit.
            pipeline["ledger"] = {"path": str(ledger), "dataset": "bench",
                                  "budget": {"epsilon": budget, "delta": DELTA}}
        elif tag == "calibrate":
            (self.work / "calibration-ledger.db").unlink(missing_ok=True)
            # `validate` prints the whole run's guarantee when it checks a ledger charge: the host's
            # dry run of the tuner, whose guarantee is the real run's (docs/studies.md, "The ledger").
            # The ledger is only checked, never charged, and its budget is only there to fit.
            pipeline["ledger"] = {"path": str(self.work / "calibration-ledger.db"), "dataset": "bench",
                                  "budget": {"epsilon": 1.0e6, "delta": 0.5}}
        path = folder / "pipeline.yaml"
        # JSON is YAML (1.2): written without a YAML library, read by dptune's yaml-cpp.
        path.write_text(json.dumps(pipeline, indent=1) + "\n")
        return path

    def measure(self, workload, files, budget, method, seed, calibration):
        if M.METHODS[method].get("two_stage"):
            return self.measure_vote_then_train(workload, files, budget, method, seed)
        knobs = calibration["knobs"]
        grid_seconds, trainings = 0.0, 0
        candidate = None
        if M.METHODS[method].get("oracle"):
            # NOT PRIVATE: the grid's best candidate by its exact validation score, then trained once
            # at the budget (what the best selection could do if selecting were free).
            grid = self.write_pipeline(workload, files, budget, method, knobs, "grid", seed)
            start = time.monotonic()
            self.dptune(["run", str(grid), "--seed", str(seed), "--no-progress", "--overwrite"])
            grid_seconds = time.monotonic() - start
            candidate, trainings = M.oracle_choice(grid.parent / "out")
            final = self.calibration(workload, files, budget, method, candidate)
            if final.get("failed"):
                raise RuntimeError("oracle candidate " + json.dumps(candidate) + ": " + final["failed"])
            knobs, calibration = final["knobs"], final
        path = self.write_pipeline(workload, files, budget, method, knobs, "seed", seed, candidate)
        out_dir = path.parent / "out"
        start = time.monotonic()
        console = self.dptune(["run", str(path), "--seed", str(seed), "--no-progress", "--overwrite"])
        wall = grid_seconds + time.monotonic() - start  # the runs only, not the calibration
        summary = json.loads((out_dir / "summary.json").read_text())
        row = {"epsilon": M.parse_guarantee(console), "calibrated_epsilon": calibration["epsilon"],
               "knobs": knobs, "wall_seconds": round(wall, 3),
               "trainings": add(trainings, M.count_trainings(method, out_dir, summary))}
        row["test_accuracy"] = self.test_accuracy(out_dir, files)
        row.update(M.tuner_facts(method, summary))
        if candidate is not None:
            row["oracle_candidate"] = candidate
        return row

    # ---- dp_hype: a vote, then one training, composed by dptune's ledger ----------------------

    def measure_vote_then_train(self, workload, files, budget, method, seed):
        """dp_hype releases a candidate and no model.  Stage 1 runs its vote (epsilon B/4); stage 2
        trains the voted candidate once (`repetition`, fixed, one run, private score) with sigma
        calibrated so that the ledger's composed epsilon of the two charges is B.  Both charges go
        to one ledger with budget (B, 1e-5), which refuses a charge that would not fit; the row's
        epsilon is the composed total `dptune ledger show` prints.  Choosing stage 2's sigma after
        seeing the voted candidate is adaptive composition, which the ledger's composition covers
        (docs/studies.md, "The ledger")."""
        folder = self.work / "runs" / workload / f"eps{budget:g}" / method
        folder.mkdir(parents=True, exist_ok=True)
        ledger = folder / f"ledger{seed}.db"
        ledger.unlink(missing_ok=True)
        vote = self.write_pipeline(workload, files, budget, method, {}, "vote", seed, ledger=ledger)
        start = time.monotonic()
        self.dptune(["run", str(vote), "--seed", str(seed), "--no-progress", "--overwrite"])
        wall = time.monotonic() - start
        candidate = M.voted_candidate(vote.parent / "out")
        final = self.vote_then_train_calibration(workload, files, budget, method, candidate, ledger)
        if final.get("failed"):
            raise RuntimeError("voted candidate " + json.dumps(candidate) + ": " + final["failed"])
        path = self.write_pipeline(workload, files, budget, method, final["knobs"], "seed", seed,
                                   candidate, ledger=ledger)
        out_dir = path.parent / "out"
        start = time.monotonic()
        console = self.dptune(["run", str(path), "--seed", str(seed), "--no-progress", "--overwrite"])
        wall += time.monotonic() - start
        shown = json.loads(self.dptune(["ledger", "show", str(ledger), "--json"]))
        charges = [e for e in shown["datasets"][0]["entries"] if e["kind"] == "charge"]
        space = json.loads(vote.read_text())["search_space"]
        clients = W.WORKLOADS[workload]["hype_clients"]
        return {"epsilon": shown["datasets"][0]["spent_epsilon"], "calibrated_epsilon": final["epsilon"],
                "stage_epsilons": [e["epsilon"] for e in charges],
                "final_epsilon": M.parse_guarantee(console), "knobs": final["knobs"],
                "voted_candidate": candidate, "wall_seconds": round(wall, 3),
                "trainings": clients * M.grid_size(space, self.mode["points"]) + 1,
                "test_accuracy": self.test_accuracy(out_dir, files)}

    def vote_then_train_calibration(self, workload, files, budget, method, candidate, vote_ledger):
        """Stage 2's sigma for this candidate: the composed epsilon `dptune validate` prints for it
        against a copy of a ledger holding the vote's charge (the same for every seed: the vote's
        guarantee depends on its configuration only).  Above B the ledger refuses, and the refusal
        prints the composed epsilon it would have reached: that number is read too."""
        key = self.key(workload, budget, method) + " " + json.dumps(candidate, sort_keys=True)
        if key not in self.calibrations:
            ledger = self.work / "calibration-vote-ledger.db"
            shutil.copyfile(vote_ledger, ledger)

            def composed(knobs):
                path = self.write_pipeline(workload, files, budget, method, knobs, "calibrate", 0,
                                           candidate, ledger=ledger)
                return M.parse_composed(self.dptune(["validate", str(path)], refusal_ok=True))

            start = time.monotonic()
            result = M.calibrate(method, budget, composed, start=self.warm_start(workload, budget, method))
            result["seconds"] = round(time.monotonic() - start, 1)
            self.append({"kind": "calibration", "key": key, **result})
            self.calibrations[key] = result
            print(f"calibrated {workload} eps={budget} {method} {candidate}: {result}", flush=True)
        return self.calibrations[key]

    def test_accuracy(self, out_dir, files):
        """Accuracy of the released model on the held-out test file (never seen by the pipeline)."""
        model = out_dir / "model.json"
        if not model.exists():
            return None
        predictions = out_dir / "test_predictions.csv"
        self.dptune(["predict", str(model), str(files["test"]), "--label", "label", "--out", str(predictions)])
        return W.accuracy(predictions, files["test"])

    def dptune(self, arguments, refusal_ok=False):
        """dptune's output; a non-zero exit is an error, except a refusal (exit 2) when asked."""
        self.dptune_processes += 1
        done = subprocess.run([self.args.dptune, *arguments], capture_output=True, text=True)
        if done.returncode != 0 and not (refusal_ok and done.returncode == 2):
            raise RuntimeError(f"dptune {' '.join(arguments)} exited {done.returncode}:\n"
                               f"{done.stdout[-2000:]}\n{done.stderr[-2000:]}")
        return done.stdout + done.stderr


def add(a, b):
    return None if b is None else a + b


def load_results(path):
    rows, calibrations = {}, {}
    if not path.exists():
        return rows, calibrations
    for line in path.read_text().splitlines():
        if not line.strip():
            continue
        record = json.loads(line)
        if record["kind"] == "calibration":
            calibrations[record["key"]] = {k: v for k, v in record.items() if k not in ("kind", "key")}
        else:
            key = {k: record[k] for k in ("mode", "workload", "budget", "method", "seed")}
            rows[json.dumps(key, sort_keys=True)] = record
    return rows, calibrations


if __name__ == "__main__":
    sys.exit(main())
