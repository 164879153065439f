#!/usr/bin/python3
"""Checks bench/tuners/run.py on its tiny configuration, and docs/benchmark.md against the results.

1. Every row's epsilon (printed by `dptune run`, and the guarantee in its summary.json) is within 1 %
   of the budget and never above it (dp_hype: the ledger's composed epsilon of its two charges, the
   vote at B/4 and the final training of the voted candidate); accuracies are fractions of the 113
   test rows; the untuned baseline trained exactly once.
2. A second call finds every row done: it starts no dptune process and leaves the results file as
   it was.
3. --report renders each row's accuracy, epsilon and trainings from the results file.
4. docs/benchmark.md is exactly what --report renders from the committed results files.

Usage: check_bench.py REPO_ROOT DPTUNE_BINARY
"""
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

REPO, DPTUNE = Path(sys.argv[1]), sys.argv[2]
RUN = [sys.executable, str(REPO / "bench" / "tuners" / "run.py")]
FAILURES = []


def check(condition, message):
    if not condition:
        FAILURES.append(message)
        print("FAIL:", message)


def run(args):
    # No __pycache__ in the source tree from a test run.
    env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1")
    done = subprocess.run(RUN + args + ["--dptune", DPTUNE], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"run.py {' '.join(args)} exited {done.returncode}:\n{done.stdout}\n{done.stderr}")
    return done.stdout


def rows_of(path):
    return [json.loads(l) for l in path.read_text().splitlines() if '"kind": "row"' in l]


def check_rows(rows, work):
    check(len(rows) == 3, f"3 rows expected, got {len(rows)}")
    for r in rows:
        name = f"{r['method']} eps={r['budget']}"
        check(not r.get("failed"), f"{name} failed: {r.get('failed')}")
        if r.get("failed"):
            continue
        budget = r["budget"]
        check(0.99 * budget <= r["epsilon"] <= budget, f"{name}: printed epsilon {r['epsilon']} not in [0.99 B, B]")
        if r["method"] == "dp_hype":
            check_vote_then_train(r, work)
        else:
            check_summary(r, work)
        test_rows = len((work / "tiny" / "data" / "breast_cancer" / "test.csv").read_text().splitlines()) - 1
        correct = r["test_accuracy"] * test_rows
        check(test_rows == 113 and abs(correct - round(correct)) < 1e-9 and 0 < correct <= test_rows,
              f"{name}: accuracy {r['test_accuracy']} is no share of the {test_rows} test rows")
        check(r["trainings"] >= 1, f"{name}: {r['trainings']} trainings")
        if r["method"] == "no_tuning":
            check(r["trainings"] == 1, f"no_tuning trained {r['trainings']} times")


def check_summary(r, work):
    """A one-run method: the guarantee in its summary.json is the budget's, as printed."""
    budget, name = r["budget"], f"{r['method']} eps={r['budget']}"
    summary = work / "tiny" / "runs" / r["workload"] / f"eps{budget:g}" / r["method"] / f"seed{r['seed']}" / "out" / "summary.json"
    guarantee = json.loads(summary.read_text())["guarantee"]
    check(0.99 * budget <= guarantee["epsilon"] <= budget and guarantee["delta"] <= 1e-5,
          f"{name}: summary.json guarantee {guarantee['epsilon']}, {guarantee['delta']}")


def check_vote_then_train(r, work):
    """dp_hype's row: two charges (the vote at B/4, the final training) in one ledger whose composed
    epsilon, as `dptune ledger show` prints it, is the row's epsilon; each run at delta 5e-6."""
    budget = r["budget"]
    folder = work / "tiny" / "runs" / r["workload"] / f"eps{budget:g}" / "dp_hype"
    shown = json.loads(subprocess.run([DPTUNE, "ledger", "show", str(folder / f"ledger{r['seed']}.db"), "--json"],
                                      capture_output=True, text=True, check=True).stdout)
    dataset = shown["datasets"][0]
    charges = [e for e in dataset["entries"] if e["kind"] == "charge"]
    check(len(charges) == 2, f"dp_hype: {len(charges)} ledger charges, 2 expected")
    check(dataset["budget"] == {"epsilon": budget, "delta": 1e-5}, f"dp_hype: ledger budget {dataset['budget']}")
    check(dataset["spent_epsilon"] == r["epsilon"], f"dp_hype: row epsilon {r['epsilon']} is not the ledger's")
    if len(charges) == 2:
        vote, final = charges
        check(abs(vote["epsilon"] - budget / 4) < 1e-3 * budget and vote["delta"] == 5e-6,
              f"dp_hype: the vote charged ({vote['epsilon']}, {vote['delta']}), not (B/4, 5e-6)")
        check(final["delta"] == 5e-6, f"dp_hype: the final training charged delta {final['delta']}")
        # The ledger's composition is never above basic composition of the two charges.
        check(r["epsilon"] <= vote["epsilon"] + final["epsilon"] + 1e-9, "dp_hype: composed above the sum")
        vote_summary = json.loads((folder / f"vote{r['seed']}" / "out" / "summary.json").read_text())
        check(vote_summary["release"]["selected"]["params"] == r["voted_candidate"],
              "dp_hype: the final training's candidate is not the voted one")
        space = json.loads((folder / f"seed{r['seed']}" / "pipeline.yaml").read_text())["search_space"]
        check(space == {k: {"categorical": [v]} for k, v in r["voted_candidate"].items()},
              f"dp_hype: the final training's space {space}")
    check(r["trainings"] == 10 * 8 + 1, f"dp_hype: {r['trainings']} trainings, 10 clients x 8 candidates + 1 expected")


def check_report(rows, doc):
    text = doc.read_text()
    for r in rows:
        label = {"no_tuning": "no tuning", "repetition_geometric": "repetition, K geometric",
                 "dp_hype": "dp_hype vote"}[r["method"]]
        line = next((l for l in text.splitlines() if l.startswith(f"| {r['budget']:g} | {label}")), None)
        check(line is not None, f"report has no row for {label}")
        if line:
            cells = [c.strip() for c in line.strip("|").split("|")]
            check(cells[2] == f"{r['test_accuracy']:.3f} (1 seed)", f"{label}: accuracy cell {cells[2]!r}")
            check(float(cells[3]) == float(f"{r['epsilon']:.4g}"), f"{label}: epsilon cell {cells[3]!r}")
            check(float(cells[5]) == r["trainings"], f"{label}: trainings cell {cells[5]!r}")
            check(cells[6] == "done", f"{label}: status {cells[6]!r}")


def main():
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        results, work = tmp / "tiny.jsonl", tmp / "work"
        base = ["--tiny", "--results", str(results), "--work", str(work)]
        run(base)
        rows = rows_of(results)
        check_rows(rows, work)
        before = results.read_bytes()
        second = run(base)
        check("0 new rows, 0 dptune processes" in second, f"the second call did work: {second.strip()[-300:]}")
        check(results.read_bytes() == before, "the second call changed the results file")
        run(base + ["--report", "--doc", str(tmp / "doc.md"), "--figures", str(tmp / "fig")])
        check_report(rows, tmp / "doc.md")
        check((tmp / "fig" / "tiny_breast_cancer_logreg.png").stat().st_size > 1000, "no plot written")
        # The committed page against the committed results (plots are not redrawn).
        rendered = tmp / "benchmark.md"
        run(["--report", "--no-plots", "--doc", str(rendered), "--figures", str(REPO / "docs" / "benchmark")])
        committed = (REPO / "docs" / "benchmark.md").read_text()
        # Figure links are relative to the page: the scratch copy's point to the same files.
        scratch_prefix = os.path.relpath(REPO / "docs" / "benchmark", tmp) + "/"
        check(rendered.read_text().replace("(" + scratch_prefix, "(benchmark/") == committed,
              "docs/benchmark.md is not what --report renders from bench/tuners/results: "
              "rerun bench/tuners/run.py --report")
    if FAILURES:
        sys.exit(f"{len(FAILURES)} check(s) failed")
    print("bench_tuners: all checks passed")


main()
