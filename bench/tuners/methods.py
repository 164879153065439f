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
HYPE_VOTE_SHARE = 0.25  # dp_hype: its vote's target epsilon is this share of B; the final training fills the rest
HYPE_STAGE_DELTA = 5e-6  # dp_hype: each of its two stages' delta; the ledger composes them at 1e-5
HYPE_VOTES = 3  # k: votes per client (Liebenow et al. 2025, Algorithm 1)
HYPE_CLIENT_SIGMA = 0.1  # the clients' local DP-SGD noise: nearly non-private (the paper's clients train plainly)
SUBSAMPLE_FRACTION = 0.25  # subsampled: the search runs on a quarter of the training rows, drawn by the layout
EXPOST_SCORE_FRACTION = 0.3  # expost: the share of each level spent on its noisy score (its example pipeline's)
# svt_doubling's final training while its search's epsilon is calibrated: noise that makes it nearly
# free, below the secure grid's limit sigma sqrt(d) <= 2^21 for the largest model here (Fashion-MNIST's
# 50 890 parameters: sigma <= 9296; at 2e4 every Fashion-MNIST calibration was refused with exit 2).
SVT_FINAL_FREE_SIGMA = 5.0e3
WARM_FACTOR = 1.5  # bracketing step from a warm start (an earlier budget's knob, scaled)

METHODS = {
    "no_tuning": {"label": "no tuning (default candidate, trained once)", "private": True},
    "repetition_logarithmic": {"label": "repetition, K logarithmic", "private": True},
    "repetition_geometric": {"label": "repetition, K geometric", "private": True},
    "repetition_poisson": {"label": "repetition, K Poisson", "private": True},
    "svt_doubling": {"label": "svt_doubling", "private": True},
    "dp_hypo": {"label": "dp_hypo (GP sampler, log(C/c) = B/12)", "private": True},
    "expost": {"label": "expost (privacy ladder of the centre candidate, target per workload)",
               "private": True},
    "subsampled": {"label": "subsampled (q = 1/4, K logarithmic, then one full-data training)",
                   "private": True},
    "dp_hype": {"label": "dp_hype vote (ε = B/4) + one DP training of its choice (ledger-composed ε)",
                "private": True, "two_stage": True},
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
    if method == "dp_hype":
        # Each stage at delta / 2: the ledger's basic composition of the two charges is then at
        # the budget's delta (its Renyi route needs both charges' curves, which `best` keeps only
        # when rdp wins).
        pipeline["accountant"]["delta"] = HYPE_STAGE_DELTA
    if method == "dp_hype" and candidate is None:
        hype_vote(pipeline, budget, mode, workload_spec)
    elif method == "no_tuning" or (method in ("oracle", "dp_hype") and candidate is not None):
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
    elif method == "expost":
        # The tuner sets the noise multiplier of each step itself (calibrated to the step's level);
        # the knob is the cap, and the printed epsilon is the ex-ante price of the whole ladder.
        pipeline[section]["params"].pop(param, None)
        pipeline["tuner"] = {"use": "expost", "params": {
            "target": workload_spec["expost_target"], "epsilon_cap": knobs["epsilon_cap"],
            "ratio": 2.0, "candidates": "centre", "privacy_parameter": param,
            "privacy_parameter_kind": "noise", "scoring": "private", "score_fraction": EXPOST_SCORE_FRACTION}}
    elif method == "subsampled":
        pipeline["tuner"] = {"use": "subsampled", "params": {
            "distribution": "logarithmic", "mean": mean, "fraction": SUBSAMPLE_FRACTION,
            "points_per_dimension": points, **score}}
    elif method == "svt_doubling":
        pipeline["tuner"] = {"use": "svt_doubling", "params": {
            "candidates": "grid", "points_per_dimension": points, "k": 10,
            "epsilon_svt": knobs["epsilon_svt"], "protect_validation": True}}
    else:
        raise KeyError(method)


def hype_vote(pipeline, budget, mode, workload_spec):
    """dp_hype's stage 1: the tuning split cut into iid client shards (each with its own validation
    part); every client trains every grid candidate with nearly no noise, votes for its k best, and
    the noisy vote sum's argmax is released (no model).  Its guarantee is the vote's Gaussian
    mechanism at epsilon = HYPE_VOTE_SHARE * B, record-level too on iid shards (one record changes
    one client: docs/tuners/dp_hype.md)."""
    section, param = workload_spec["knob"]
    pipeline[section]["params"][param] = HYPE_CLIENT_SIGMA
    pipeline["data"]["params"].update({"clients_distribution": "iid", "client_validation_fraction": 0.2})
    pipeline["mechanism"] = {"use": "gaussian"}
    pipeline["tuner"] = {"use": "dp_hype", "params": {
        "epsilon": round(HYPE_VOTE_SHARE * budget, 6), "k": HYPE_VOTES,
        "clients": workload_spec["hype_clients"], "xi": 0.0, "points_per_dimension": mode["points"]}}


def voted_candidate(out_dir):
    """The candidate dp_hype released (summary.json's release block)."""
    summary = json.loads((Path(out_dir) / "summary.json").read_text())
    return dict(summary["release"]["selected"]["params"])


def grid_size(space, points):
    size = 1
    for spec in space.values():
        size *= len(spec["categorical"]) if "categorical" in spec else points
    return size


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


def parse_composed(text):
    """The composed epsilon of a ledger check: `fits: composed epsilon E` or, when refused,
    `would bring the composed epsilon at delta D to E`."""
    found = re.findall(r"fits: composed epsilon ([-+0-9.eE]+|inf)|"
                       r"would bring the composed epsilon at delta [-+0-9.eE]+ to ([-+0-9.eE]+|inf)", text)
    if not found:
        raise RuntimeError("no composed epsilon in dptune's output:\n" + text[-3000:])
    return float(found[-1][0] or found[-1][1])


def scaled_knob(method, knobs, from_budget, to_budget):
    """A first guess of the knob at another budget (sigma ~ 1/epsilon, cap ~ epsilon), or None."""
    if method == "expost":
        return knobs["epsilon_cap"] * to_budget / from_budget
    if method in ("svt_doubling", "oracle") or "noise_multiplier" not in knobs:
        return None
    return knobs["noise_multiplier"] * from_budget / to_budget


def calibrate(method, budget, epsilon_of, oracle_final=False, start=None):
    """{"knobs": ..., "epsilon": printed total} with epsilon in [(1 - TOLERANCE) B, B], or {"failed"}.
    `start`: where the search for the knob begins (any value gives the same band, fewer calls)."""
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
        elif method == "expost":
            cap, eps = bisect(lambda c: epsilon_of({"epsilon_cap": c}), budget, (1e-3, 1e3),
                              increasing=True, start=float(f"{start or budget:.6g}"), factor=WARM_FACTOR if start else 4.0)
            knobs = {"epsilon_cap": cap}
        else:
            # The oracle's grid is scored at the sigma of one release of the space's worst candidate;
            # its chosen candidate is then trained once at the whole budget (oracle_final).
            extra = {"calibrating": True} if method == "oracle" and not oracle_final else {}
            sigma, eps = bisect(lambda s: epsilon_of({"noise_multiplier": s, **extra}), budget,
                                SIGMA_RANGE, increasing=False, start=float(f"{start or 2.0:.6g}"),
                                factor=WARM_FACTOR if start else 4.0)
            knobs = {"noise_multiplier": sigma}
        return {"knobs": knobs, "epsilon": eps}
    except (RuntimeError, ValueError) as e:
        return {"failed": str(e).splitlines()[0][:400]}


def bisect(epsilon_at, target, bounds, increasing, start=2.0, steps=40, must_hit=True, factor=4.0):
    """The knob (within bounds) whose printed epsilon is in [(1 - TOLERANCE) target, UPPER target].

    Regula falsi on log(epsilon) against log(knob) inside a bracket that always holds the answer,
    (Illinois variant: a side kept twice is halved), so the few expensive `validate` calls suffice.
    UPPER keeps a margin below the budget for the printed number's rounding.  With must_hit false
    (a knob whose epsilon jumps, like svt_doubling's T_max steps), the best knob at or below the
    target found in `steps` calls is returned instead of an error."""
    low_ok, high_ok = (1 - TOLERANCE) * target, UPPER * target
    ok, bad, eps_ok, eps_bad = bracket(epsilon_at, bounds, increasing, low_ok, high_ok, start, factor)
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


def tuner_facts(method, summary):
    """What a tuner states about its own run that the table should show: expost's realised epsilon
    and where it stopped (a declared DP output), subsampled's expected compute (public)."""
    notes = summary.get("notes", []) + (summary.get("release") or {}).get("notes", [])
    text = " ".join(str(n) for n in notes)
    facts = {}
    if method == "expost":
        realised = re.search(r"(?:realised epsilon|ex-post guarantee: epsilon) = ([-+0-9.eE]+)", text)
        stop = re.search(r"stopped after step (\d+) of (\d+)", text)
        if realised:
            facts["realised_epsilon"] = float(realised.group(1))
        if stop:
            facts["stopped_at_step"], facts["ladder_steps"] = int(stop.group(1)), int(stop.group(2))
        facts["met_target"] = "its private score met the target" in text
    elif method == "subsampled":
        compute = re.search(r"tuning ([0-9.eE+]+) \+ final ([0-9.eE+]+) = ([0-9.eE+]+), against "
                            r"([0-9.eE+]+) for the repetition tuner", text)
        if compute:
            facts["compute_rows"] = {k: float(v) for k, v in zip(
                ("tuning", "final", "total", "repetition_full_data"), compute.groups())}
    return facts

