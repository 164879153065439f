"""The methods compared, their tuner sections, and how each is calibrated to the budget.

Calibration.  dptune prints one total epsilon for a pipeline before it touches the data (`dptune
validate`, accountant `best` at delta 1e-5): every training of every run, every noisy score, the
released model and its score.  For a given budget B every private method is set so that this printed
epsilon lies in [(1 - TOLERANCE) B, B]:
  - the trainer's noise multiplier sigma is bisected (geometrically) - a larger sigma never costs more;
  - svt_doubling first bisects its per-iteration epsilon_svt so that its selection alone (with the
    final training made almost free by a huge sigma) costs B/2, then bisects sigma for the final
    training to fill the rest;
  - every noisy score (the tuners' private scoring) gets score_epsilon = B / 10 per run.
The epsilon is always the tool's own printed number: nothing here adds or converts epsilons.
"""
import csv
import json
import math
import re
from pathlib import Path

import workloads as W

TOLERANCE = 0.005  # printed epsilon in [(1 - TOLERANCE) B, UPPER B]; the test asserts within 1 %
UPPER = 0.9995
SCORE_SHARE = 0.1  # score_epsilon = SCORE_SHARE * B
SIGMA_RANGE = (0.05, 2.0e4)
HYPO_BAND_SHARE = 12.0
SVT_FINAL_FREE_SIGMA = 2.0e4

METHODS = {
    "no_tuning": {"label": "no tuning (default candidate, trained once)", "private": True},
    "repetition_logarithmic": {"label": "repetition, K logarithmic", "private": True},
    "repetition_geometric": {"label": "repetition, K geometric", "private": True},
    "repetition_poisson": {"label": "repetition, K Poisson", "private": True},
    "svt_doubling": {"label": "svt_doubling", "private": True},
    "dp_hypo": {"label": "dp_hypo (GP sampler, log(C/c) = B/12)", "private": True},
    "oracle": {"label": "oracle (best grid candidate by exact validation score): NOT PRIVATE",
               "private": False, "oracle": True},
}


def apply(method, pipeline, budget, knobs, mode, workload_spec, candidate=None):
    """Set the method's tuner section and the calibrated knobs on a workload pipeline."""
    section, param = workload_spec["knob"]
    if "noise_multiplier" in knobs:
        pipeline[section]["params"][param] = knobs["noise_multiplier"]
    points = mode["points"]
    score = {"scoring": "private", "score_epsilon": round(SCORE_SHARE * budget, 6)}
    mean = mode["mean_runs"]
    if method == "no_tuning" or (method == "oracle" and candidate is not None):
        chosen = candidate or W.default_candidate(pipeline["name"][len("bench_"):], mode)
        pipeline["search_space"] = {k: {"categorical": [v]} for k, v in chosen.items()}
        pipeline["tuner"] = {"use": "repetition", "params": {"distribution": "fixed", "runs": 1, **score}}
    elif method == "oracle":
        if candidate is None and knobs.get("calibrating"):
            # Priced like one release of the worst candidate of the space (as the tuners price it).
            pipeline["tuner"] = {"use": "repetition", "params": {"distribution": "fixed", "runs": 1,
                                                                 "candidates": "grid",
                                                                 "points_per_dimension": points, **score}}
        else:
            pipeline["tuner"] = {"use": "grid", "params": {"points_per_dimension": points}}
    elif method.startswith("repetition_"):
        distribution = method[len("repetition_"):]
        pipeline["tuner"] = {"use": "repetition", "params": {
            "distribution": distribution, "mean": mean, "candidates": "grid",
            "points_per_dimension": points, **score}}
    elif method == "dp_hypo":
        upper, lower = hypo_band(budget)
        pipeline["tuner"] = {"use": "dp_hypo", "params": {
            "distribution": "geometric", "mean": mean, "upper": upper, "lower": lower,
            "candidates": "grid", "points_per_dimension": points, **score}}
    elif method == "svt_doubling":
        pipeline["tuner"] = {"use": "svt_doubling", "params": {
            "candidates": "grid", "points_per_dimension": points, "k": 10,
            "epsilon_svt": knobs["epsilon_svt"], "protect_validation": True}}
    else:
        raise KeyError(method)


def hypo_band(budget):
    """DP-HyPO's density-ratio band [c, C] for a budget B: log(C / c) = B / HYPO_BAND_SHARE.

    Its adaptivity costs (a/(a-1) + 2) log(C/c) in RDP at order a on top of the repetition tuner's
    price (Wang et al. 2023, Theorem 1; docs/tuners/dp_hypo.md): with the example pipeline's band
    (C = 2, c = 0.75, log(C/c) = 0.98) that alone is about 3, more than the budgets 1 and 3.  The
    band keeps that example's proportions (log C : log(1/c) = log 2 : log(4/3)) and a width that
    leaves most of the budget to the trainings."""
    log_ratio = budget / HYPO_BAND_SHARE
    share_upper = math.log(2.0) / math.log(2.0 / 0.75)
    return (round(math.exp(share_upper * log_ratio), 6),
            round(math.exp(-(1 - share_upper) * log_ratio), 6))


def parse_guarantee(text):
    """The last `(epsilon, delta) = (E, D)` dptune printed."""
    found = re.findall(r"\(epsilon, delta\) = \(([-+0-9.eE]+), ([-+0-9.eE]+)\)", text)
    if not found:
        raise RuntimeError("no '(epsilon, delta) = (...)' in dptune's output:\n" + text[-3000:])
    return float(found[-1][0])


def calibrate(method, budget, epsilon_of, oracle_final=False):
    """{"knobs": ..., "epsilon": printed total} with epsilon in [(1 - TOLERANCE) B, B], or {"failed"}."""
    try:
        if method == "svt_doubling":
            knobs = {"noise_multiplier": SVT_FINAL_FREE_SIGMA}
            knobs["epsilon_svt"], _ = bisect(lambda e: epsilon_of({**knobs, "epsilon_svt": e}),
                                             budget / 2, (1e-4, 50.0), increasing=True,
                                             start=0.02 * budget, steps=12, must_hit=False)
            fixed = dict(knobs)
            sigma, eps = bisect(lambda s: epsilon_of({**fixed, "noise_multiplier": s}), budget,
                                SIGMA_RANGE, increasing=False)
            knobs["noise_multiplier"] = sigma
        else:
            # The oracle's grid is scored at the sigma of one release of the space's worst candidate;
            # its chosen candidate is then trained once at the whole budget (oracle_final).
            extra = {"calibrating": True} if method == "oracle" and not oracle_final else {}
            sigma, eps = bisect(lambda s: epsilon_of({"noise_multiplier": s, **extra}), budget,
                                SIGMA_RANGE, increasing=False)
            knobs = {"noise_multiplier": sigma}
        return {"knobs": knobs, "epsilon": eps}
    except (RuntimeError, ValueError) as e:
        return {"failed": str(e).splitlines()[0][:400]}


def bisect(epsilon_at, target, bounds, increasing, start=2.0, steps=40, must_hit=True):
    """The knob (within bounds) whose printed epsilon is in [(1 - TOLERANCE) target, UPPER target].

    Regula falsi on log(epsilon) against log(knob) inside a bracket that always holds the answer,
    (Illinois variant: a side kept twice is halved), so the few expensive `validate` calls suffice.
    UPPER keeps a margin below the budget for the printed number's rounding.  With must_hit false
    (a knob whose epsilon jumps, like svt_doubling's T_max steps), the best knob at or below the
    target found in `steps` calls is returned instead of an error."""
    low_ok, high_ok = (1 - TOLERANCE) * target, UPPER * target
    ok, bad, eps_ok, eps_bad = bracket(epsilon_at, bounds, increasing, low_ok, high_ok, start)
    if eps_bad is None:
        return ok, eps_ok
    goal, kept = math.log((low_ok + high_ok) / 2), 0
    f_ok, f_bad = math.log(eps_ok) - goal, math.log(eps_bad) - goal
    for _ in range(steps):
        a, b = math.log(ok), math.log(bad)
        mid = math.exp(a - f_ok * (b - a) / (f_bad - f_ok)) if f_bad != f_ok else math.exp((a + b) / 2)
        mid = float(f"{mid:.6g}")
        if mid in (ok, bad):
            mid = math.exp((a + b) / 2)
        eps = epsilon_at(mid)
        if low_ok <= eps <= high_ok:
            return mid, eps
        if eps < low_ok:
            ok, f_ok = mid, math.log(eps) - goal
            f_bad, kept = (f_bad / 2, 0) if kept == -1 else (f_bad, -1)
        else:
            bad, f_bad = mid, math.log(eps) - goal
            f_ok, kept = (f_ok / 2, 0) if kept == 1 else (f_ok, 1)
    if not must_hit:
        return ok, eps_ok
    raise ValueError(f"no knob in {bounds} brings the printed epsilon within {TOLERANCE:.1%} below {target:g}")


def bracket(epsilon_at, bounds, increasing, low_ok, high_ok, start=2.0, factor=4.0):
    """(ok, bad, eps_ok, eps_bad): knob values printing at most / more than the target, found by
    stepping from `start` by `factor` within bounds; eps_bad is None when `ok` already hits the band."""
    lo, hi = bounds
    knob = min(max(start, lo), hi)
    eps = epsilon_at(knob)
    if low_ok <= eps <= high_ok:
        return knob, None, eps, None
    # Moving "up" (larger knob) raises epsilon when increasing, lowers it otherwise.
    go_up = (eps < low_ok) == increasing
    while True:
        nxt = min(knob * factor, hi) if go_up else max(knob / factor, lo)
        if nxt == knob:
            raise ValueError(f"the printed epsilon {eps:.4g} cannot reach the target band "
                             f"[{low_ok:.4g}, {high_ok:.4g}] within the knob range {bounds}")
        e = epsilon_at(nxt)
        if low_ok <= e <= high_ok:
            return nxt, None, e, None
        if (e <= high_ok) != (eps <= high_ok):
            return (knob, nxt, eps, e) if eps <= high_ok else (nxt, knob, e, eps)
        knob, eps = nxt, e


def read_csv(path):
    with open(path) as f:
        return list(csv.DictReader(f))


def oracle_choice(out_dir):
    """(best candidate by exact validation utility, trainings) from a grid run's trials.csv."""
    trials = read_csv(Path(out_dir) / "trials.csv")
    utility = next(c for c in ("utility", "utility_mean", "mean_utility") if c in trials[0])
    best = max(trials, key=lambda t: float(t[utility]))
    space = json.loads((Path(out_dir).parent / "pipeline.yaml").read_text())["search_space"]
    candidate = {k: as_number(best["param." + k]) for k in space}
    return candidate, len(trials)


def as_number(text):
    value = float(text)
    return int(value) if value.is_integer() and "." not in text and "e" not in text.lower() else value


def count_trainings(method, out_dir, summary):
    """Trainings of the run: its per-run records (written because sensitive_trials is on; SENSITIVE:
    a private tuner's run count is secret, a benchmark with --seed may look at it)."""
    if method == "svt_doubling":
        return svt_trainings(summary)
    sensitive = Path(out_dir) / "trials.SENSITIVE.csv"
    return len(read_csv(sensitive)) if sensitive.exists() else None


def svt_trainings(summary):
    """k non-private partition trainings per candidate, then the one private final training."""
    notes = " ".join(summary.get("notes", []))
    candidates = re.search(r"(\d+) candidates", notes)
    parts = re.search(r"k = (\d+) disjoint parts", notes)
    if not (candidates and parts):
        return None
    return int(candidates.group(1)) * int(parts.group(1)) + 1
