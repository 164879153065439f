"""docs/benchmark.md and its plots, rendered from the results files alone (deterministic: the same
JSONL gives the same text, which tests/bench_tuners checks against the committed doc)."""
import json
import math
import os
import textwrap
from pathlib import Path

import methods as M
import workloads as W

REPO = Path(__file__).resolve().parent.parent.parent
# Student's t quantile t_{0.975, df} for df = 1..30 (the 95 % interval of a mean of n = df + 1 seeds).
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]
COMMANDS = {"quick": "bench/tuners/run.py --quick", "full": "nice -n 19 bench/tuners/run.py",
            "tiny": "bench/tuners/run.py --tiny"}
HEAD = Path(__file__).resolve().parent / "report_head.md"


def load_rows(path):
    rows = []
    if Path(path).exists():
        for line in Path(path).read_text().splitlines():
            if line.strip():
                record = json.loads(line)
                if record["kind"] == "row":
                    rows.append(record)
    return rows


def interval(values):
    """(mean, half-width of the 95 % t interval or None for one value)."""
    n = len(values)
    mean = sum(values) / n
    if n < 2:
        return mean, None
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    t = T975[n - 2] if n - 2 < len(T975) else 1.96
    return mean, t * sd / math.sqrt(n)


def cell_stats(rows):
    ok = [r for r in rows if not r.get("failed") and r.get("test_accuracy") is not None]
    stats = {"done": len(ok), "failed": [r for r in rows if r.get("failed")]}
    if ok:
        stats["accuracy"] = interval([r["test_accuracy"] for r in ok])
        stats["epsilon_max"] = max(r["epsilon"] for r in ok)
        stats["wall"] = sum(r["wall_seconds"] for r in ok) / len(ok)
        trainings = [r["trainings"] for r in ok if r.get("trainings") is not None]
        stats["trainings"] = sum(trainings) / len(trainings) if trainings else None
        sigmas = sorted({r["knobs"]["noise_multiplier"] for r in ok if "noise_multiplier" in r.get("knobs", {})})
        stats["sigma"] = sigmas
    return stats


def fmt_sigma(stats):
    """The calibrated noise multiplier(s) of the cell's rows (the oracle's depends on its candidate)."""
    sigmas = stats.get("sigma") or []
    if not sigmas:
        return "–"
    if len(sigmas) == 1:
        return f"{sigmas[0]:.3g}"
    return f"{sigmas[0]:.3g}–{sigmas[-1]:.3g}"


def grouped(rows):
    cells = {}
    for r in rows:
        cells.setdefault((r["workload"], r["budget"], r["method"]), []).append(r)
    return cells


def fmt_acc(stats):
    if "accuracy" not in stats:
        return "–"
    mean, half = stats["accuracy"]
    return f"{mean:.3f}" + (f" ± {half:.3f}" if half is not None else " (1 seed)")


def status(stats, seeds):
    if stats["failed"]:
        return f"FAILED ({len(stats['failed'])})"
    if stats["done"] == 0:
        return "not run"
    return "done" if stats["done"] >= seeds else f"partial {stats['done']}/{seeds}"


def table(workload, cells, mode):
    lines = ["| ε | method | test accuracy (mean ± 95 % CI) | printed ε (max) | wall s (mean) "
             "| trainings (mean) | seeds | calibrated σ |", "|---|---|---|---|---|---|---|---|"]
    for budget in mode["budgets"]:
        for method in mode["methods"]:
            stats = cell_stats(cells.get((workload, budget, method), []))
            eps = f"{stats['epsilon_max']:.4g}" if "epsilon_max" in stats else "–"
            wall = f"{stats['wall']:.2f}" if "wall" in stats else "–"
            tr = f"{stats['trainings']:.1f}" if stats.get("trainings") is not None else "–"
            lines.append(f"| {budget:g} | {M.METHODS[method]['label']} | {fmt_acc(stats)} | {eps} | "
                         f"{wall} | {tr} | {status(stats, mode['seeds'])} | {fmt_sigma(stats)} |")
    return lines


# Pairs compared at equal epsilon: (method, reference, why this reference).
VERDICT_PAIRS = (
    ("dp_hypo", "repetition_geometric", "repetition with geometric K, the same law as dp_hypo's T"),
    ("expost", "svt_doubling", "svt_doubling, the other utility-driven tuner"),
    ("subsampled", "repetition_logarithmic", "repetition with logarithmic K, the same law, on the full data"),
)


def pair_verdicts(workload, cells, mode, method, reference):
    """`method` against `reference` per budget: which is better where the 95 % intervals are disjoint."""
    out = []
    for budget in mode["budgets"]:
        a = cell_stats(cells.get((workload, budget, method), []))
        b = cell_stats(cells.get((workload, budget, reference), []))
        if "accuracy" not in a or "accuracy" not in b:
            continue
        (ma, ha), (mb, hb) = a["accuracy"], b["accuracy"]
        if ha is None or hb is None:
            verdict = "one seed each: no interval"
        elif ma - ha > mb + hb:
            verdict = f"{method} better, intervals disjoint"
        elif mb - hb > ma + ha:
            verdict = f"{reference} better, intervals disjoint"
        else:
            verdict = "intervals overlap: no difference shown"
        out.append(f"- ε = {budget:g}: {method} {ma:.3f}, {reference} {mb:.3f}: {verdict}")
    return out


def ok_rows(cells, key):
    return [r for r in cells.get(key, []) if not r.get("failed") and r.get("test_accuracy") is not None]


def fact_lines(workload, cells, mode):
    """What expost, subsampled and the dp_hype pipeline state about their runs, per budget."""
    out = []
    for budget in mode["budgets"]:
        rows = ok_rows(cells, (workload, budget, "expost"))
        realised = [r["realised_epsilon"] for r in rows if "realised_epsilon" in r]
        if realised:
            met = sum(1 for r in rows if r.get("met_target"))
            steps = [r["stopped_at_step"] for r in rows if "stopped_at_step" in r]
            out.append(f"- ε = {budget:g}, expost: target {W.WORKLOADS[workload]['expost_target']:g} met "
                       f"in {met} of {len(rows)} runs; stopped at step {sum(steps) / len(steps):.1f} of "
                       f"{rows[0].get('ladder_steps', '?')} on average; realised ε of the steps run "
                       f"{sum(realised) / len(realised):.3g} on average (NOT a guarantee: DP-SGD steps are "
                       f"not pure; the ex-ante ε in the table is the guarantee and what is charged)")
        rows = ok_rows(cells, (workload, budget, "subsampled"))
        compute = [r["compute_rows"] for r in rows if "compute_rows" in r]
        if compute:
            c = compute[0]
            out.append(f"- ε = {budget:g}, subsampled: expected compute (trainings × rows, from E[K]) "
                       f"tuning {c['tuning']:g} + final {c['final']:g} = {c['total']:g}, against "
                       f"{c['repetition_full_data']:g} for repetition on the full data "
                       f"({100 * (1 - c['total'] / c['repetition_full_data']):.0f} % saved)")
        rows = ok_rows(cells, (workload, budget, "dp_hype"))
        if rows:
            votes = sorted({r["stage_epsilons"][0] for r in rows})
            finals = sorted({r["stage_epsilons"][1] for r in rows if len(r["stage_epsilons"]) > 1})
            distinct = len({json.dumps(r["voted_candidate"], sort_keys=True) for r in rows})
            out.append(f"- ε = {budget:g}, dp_hype: the vote charged ε = {fmt_range(votes)}, the final "
                       f"training ε = {fmt_range(finals)} (each at δ = 5e-6, as `dptune ledger show` "
                       f"lists the two charges), composed by the ledger at δ = 1e-5 to the table's ε; "
                       f"{distinct} distinct candidate(s) voted in {len(rows)} run(s)")
    return out


def fmt_range(values):
    if not values:
        return "–"
    return f"{values[0]:.4g}" if len(values) == 1 else f"{values[0]:.4g}–{values[-1]:.4g}"


def dates(rows):
    ds = sorted(r["date"] for r in rows if r.get("date"))
    return (ds[0], ds[-1]) if ds else ("–", "–")


def mode_section(mode_name, mode, results_path, figures, plots, doc_dir):
    rows = load_rows(results_path)
    cells = grouped(rows)
    first, last = dates(rows)
    # Named as the script writes it (a snapshot rendered from elsewhere shows the same page).
    rel = f"bench/tuners/results/{mode_name}.jsonl" if mode_name != "tiny" else Path(results_path).name
    planned = len(mode["workloads"]) * len(mode["budgets"]) * len(mode["methods"]) * mode["seeds"]
    done = sum(1 for r in rows if not r.get("failed"))
    out = [f"## Results: {mode_name} mode", "",
           f"Command: `{COMMANDS[mode_name]}` then `bench/tuners/run.py --report`; results file "
           f"`{rel}`; rows dated {first} to {last}; {done} of {planned} planned rows done "
           f"({mode['seeds']} seeds, grids of {mode['points']} points per continuous dimension, "
           f"E[K] = {mode['mean_runs']}, training length × {mode['epochs_scale']:g}, pld grid step "
           f"{mode['pld_interval']:g}).", ""]
    for workload in mode["workloads"]:
        out += [f"### {W.WORKLOADS[workload]['title']}", ""]
        mine = [r for r in rows if r["workload"] == workload]
        if mine:
            a, b = dates(mine)
            wall = sum(r.get("wall_seconds") or 0 for r in mine)
            out += [f"Rows dated {a} to {b}; `dptune run` wall time of its rows {wall / 60:.1f} min "
                    "(calibration excluded).", ""]
        out += table(workload, cells, mode)
        out.append("")
        facts = fact_lines(workload, cells, mode)
        if facts:
            out += ["What the tuners state about their runs:", ""] + facts + [""]
        for method, reference, why in VERDICT_PAIRS:
            verdicts = pair_verdicts(workload, cells, mode, method, reference)
            if verdicts:
                out += [f"{method} against {why}, at equal ε:", ""] + verdicts + [""]
        if plots:
            plot(workload, cells, mode, mode_name, figures)
        png = figure_link(mode_name, workload, figures, doc_dir)
        if png is not None:
            out += [f"![test accuracy against ε, {workload}]({png})", ""]
    failures = [r for r in rows if r.get("failed")]
    if failures:
        out += ["Failed rows (kept in the results file; a rerun skips them):", ""]
        seen = set()
        for r in failures:
            k = (r["workload"], r["budget"], r["method"])
            if k not in seen:
                seen.add(k)
                out.append(f"- {r['workload']}, ε = {r['budget']:g}, {r['method']}: {r['failed'][:300]}")
        out.append("")
    return out


def figure_link(mode_name, workload, figures, doc_dir):
    path = Path(figures) / f"{mode_name}_{workload}.png"
    return os.path.relpath(path.resolve(), Path(doc_dir).resolve()) if path.exists() else None


def plot(workload, cells, mode, mode_name, figures):
    """Accuracy against ε, one line per method (95 % intervals as error bars)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(7, 4.2))
    drawn = False
    for i, method in enumerate(mode["methods"]):
        xs, ys, es = [], [], []
        for budget in mode["budgets"]:
            stats = cell_stats(cells.get((workload, budget, method), []))
            if "accuracy" in stats:
                xs.append(budget * (1 + 0.012 * (i - 3)))  # a small offset keeps error bars apart
                ys.append(stats["accuracy"][0])
                es.append(stats["accuracy"][1] or 0.0)
        if xs:
            drawn = True
            style = "--" if not M.METHODS[method]["private"] else "-"
            ax.errorbar(xs, ys, yerr=es, marker="o", linestyle=style, capsize=3, label=M.METHODS[method]["label"])
    if not drawn:
        plt.close(fig)
        return
    ax.set_xscale("log")
    ax.set_xticks(list(mode["budgets"]), [f"{b:g}" for b in mode["budgets"]])
    ax.set_xlabel("total ε of the whole tuning run (δ = 1e-5)")
    ax.set_ylabel("test accuracy of the released model")
    ax.set_title("\n".join(textwrap.wrap(W.WORKLOADS[workload]["title"].replace("`", ""), 80)), fontsize=8)
    bottom, _ = ax.get_ylim()
    ax.set_ylim(max(bottom, 0.0), 1.005)  # accuracy: intervals wider than [0, 1] are cut at the edges
    ax.legend(fontsize=7)
    ax.grid(alpha=0.3)
    path = Path(figures) / f"{mode_name}_{workload}.png"
    path.parent.mkdir(parents=True, exist_ok=True)
    fig.tight_layout()
    fig.savefig(path, dpi=90, metadata={"Software": None})
    plt.close(fig)


def search_spaces():
    out = ["| workload | trainer (fixed) | search space (every method) | untuned default |", "|---|---|---|---|"]
    for name, spec in W.WORKLOADS.items():
        params = {k: v for k, v in spec["algorithm"]["params"].items() if k not in ("run", "event")}
        space = "; ".join(f"{k} {json.dumps(v)}" for k, v in spec["search_space"].items())
        out.append(f"| {name} | {spec['algorithm']['use']} {json.dumps(params)} | {space} | "
                   f"{json.dumps(spec['default'])} |")
    return out


def write_report(results, doc, figures, mode_name, modes, plots=True):
    """The doc: the fixed introduction, the search spaces, then each mode that has a results file."""
    text = HEAD.read_text().rstrip("\n").split("\n") + [""] + search_spaces() + [""]
    results = Path(results)
    for name in ("full", "quick") if mode_name != "tiny" else ("tiny",):
        path = results if name == mode_name else results.parent / f"{name}.jsonl"
        if name == mode_name or path.exists():
            text += mode_section(name, modes[name], path, figures, plots, Path(doc).parent)
    Path(doc).write_text("\n".join(text).rstrip("\n") + "\n")
    print(f"run.py: wrote {doc}")
