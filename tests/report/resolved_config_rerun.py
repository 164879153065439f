#!/usr/bin/env python3
"""The resolved config a run writes is the pipeline as it ran: running it again gives the same
results.  Per pipeline: `dptune run P --seed 1`, then `dptune run RUN/resolved_config.yaml` (its
seed read from the file) into another folder; summary.json must agree in everything but the
pipeline's file name, the run time, the output folder and where the preprocessing's public
statistics came from (inline in the resolved config), and trials.csv (when written) in every
column but the run time.  Pipelines: a map (the quickstart grid), a private tuner whose algorithm
sets the mechanism's noise_multiplier (DP-SGD under repetition), and DP-Hype, whose tuner sets it.
"""
import argparse
import csv
import json
import pathlib
import shutil
import subprocess
import sys

problems = []


def run(dptune, args, out):
    r = subprocess.run([dptune, "run", *args, "--no-progress", "--out", str(out)],
                       capture_output=True, text=True, timeout=300)
    if r.returncode != 0:
        problems.append(f"dptune run {' '.join(args)} exited {r.returncode}: {r.stdout[-800:]}"
                        f"{r.stderr[-800:]}")
    return r


def comparable_summary(folder):
    summary = json.loads((folder / "summary.json").read_text())
    for key in ("pipeline_file", "seconds"):
        summary.pop(key, None)
    # The public statistics are written inline: the same numbers, told as "given inline" rather
    # than by the file they came from (a comment in resolved_config.yaml names it).
    for key in ("description", "assumed_public"):
        summary.get("preprocessing", {}).pop(key, None)
    return summary


def comparable_trials(folder):
    path = folder / "trials.csv"
    if not path.exists():
        return None
    rows = list(csv.DictReader(path.open()))
    for row in rows:
        row.pop("seconds", None)
    return rows


def resolved(folder):
    """resolved_config.yaml without its output folder (the rerun writes elsewhere) and comments
    (the first names the statistics' file, the rerun reads them inline)."""
    text = (folder / "resolved_config.yaml").read_text()
    return [line for line in text.splitlines()
            if not line.startswith("  dir: ") and not line.lstrip().startswith("#")]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dptune", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    src, work = pathlib.Path(a.source), pathlib.Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    pipelines = {
        "map": [f"{src}/examples/pipelines/quickstart.yaml", "--set",
                "tuner.params.points_per_dimension=4"],
        "dp_sgd_repetition": [f"{src}/examples/walkthrough/tune_my_csv.yaml"],
        "dp_hype": [f"{src}/examples/pipelines/dp_hype_digits_iid.yaml"],
    }
    for name, args in pipelines.items():
        first, again = work / name, work / (name + ".again")
        run(a.dptune, [*args, "--seed", "1"], first)
        if not (first / "resolved_config.yaml").exists():
            problems.append(f"{name}: no resolved_config.yaml")
            continue
        r = run(a.dptune, [str(first / "resolved_config.yaml")], again)
        if r.returncode != 0:
            continue
        one, two = comparable_summary(first), comparable_summary(again)
        for key in sorted(set(one) | set(two)):
            if one.get(key) != two.get(key):
                problems.append(f"{name}: summary.json {key} differs when the resolved config is "
                                f"run again: {str(one.get(key))[:300]} != {str(two.get(key))[:300]}")
        if comparable_trials(first) != comparable_trials(again):
            problems.append(f"{name}: trials.csv differs when the resolved config is run again")
        if resolved(first) != resolved(again):
            problems.append(f"{name}: the resolved config of the rerun differs from the first's")
        print(f"{name}: the resolved config, run again, gives the same results "
              f"(release or selection: {json.dumps(one.get('release', one.get('selected')))[:160]})")
    for p in problems:
        print("FAIL: " + p)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
