#!/usr/bin/env python3
"""Draws the CSV of scale.py as standalone SVG line charts (no plotting library needed).

  bench/scale/plot_scale.py scale.csv OUT_DIR     ->  OUT_DIR/scale_<chart>.svg

Axes are logarithmic where the data span more than a decade (ticks at 1, 10, 100, ... with 2 and 5
between when the span is short), linear otherwise (ticks at 1, 2 or 5 times a power of ten).  The
CSV's `# machine:` and `# date:` lines are printed under every chart.
"""
import csv
import math
import os
import sys
from xml.sax.saxutils import escape

COLOURS = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000"]
W, H = 640, 400
LEFT, RIGHT, TOP, BOTTOM = 72, 24, 40, 78

# One chart per entry: the sweep and metric drawn, one line per series (all series of the sweep
# unless `series` lists them), axis labels, an optional horizontal reference line.
CHARTS = [
    {"name": "rows_time", "sweep": "rows", "metric": "cpu_s",
     "title": "Time against rows (DP-SGD MLP 784-128-10, 2 learning rates x 1 epoch, 1 thread)",
     "x": "rows (784 features)", "y": "CPU seconds (user + system)"},
    {"name": "rows_memory", "sweep": "rows", "metric": "rss_mib",
     "title": "Peak memory against rows", "x": "rows (784 features)",
     "y": "maximum resident set size (MiB)"},
    {"name": "trials", "sweep": "trials", "metric": "cpu_s",
     "title": "Random search: time against trials (DP-SGD logistic, breast cancer)",
     "x": "trials", "y": "CPU seconds (user + system)"},
    {"name": "gp", "sweep": "gp", "metric": "cpu_s",
     "title": "DPareto: time per proposal against observed trials (3-D, two GPs)",
     "x": "observed trials n", "y": "CPU seconds per proposal", "hline": (1.0, "1 s")},
    {"name": "clients", "sweep": "clients", "metric": "cpu_s",
     "title": "DP-Hype: secure aggregation (SecAgg+) of n clients x 100 votes",
     "x": "clients", "y": "CPU seconds (both threads)"},
    {"name": "clients_bytes", "sweep": "clients", "metric": "mb_sent",
     "title": "DP-Hype: bytes routed by secure aggregation of n clients x 100 votes",
     "x": "clients", "y": "MB sent (all messages)"},
    {"name": "ranks_time", "sweep": ("ranks", "threads"), "metric": "wall_s",
     "series": ("mpi executor", "threads executor"),
     "title": "One study (2 candidates x 4 runs) over MPI ranks or threads (see docs on load)",
     "x": "ranks (mpirun --oversubscribe) or threads", "y": "wall seconds"},
    {"name": "ranks_memory", "sweep": ("ranks", "threads"), "metric": "rss_mib",
     "series": ("mpi executor", "threads executor"),
     "title": "Peak memory of the study over MPI ranks (sum of ranks) or threads",
     "x": "ranks or threads", "y": "maximum resident set size (MiB)"},
]


def read(path):
    meta, rows = {}, []
    with open(path) as f:
        lines = []
        for line in f:
            if line.startswith("#"):
                key, _, value = line[1:].partition(":")
                meta[key.strip()] = value.strip()
            elif line.strip():
                lines.append(line)
    for r in csv.DictReader(lines):
        r["x"], r["value"] = float(r["x"]), float(r["value"])
        rows.append(r)
    return meta, rows


def nice_linear(lo, hi):
    """Ticks at multiples of 1, 2 or 5 x 10^k covering [lo, hi], about five of them."""
    if hi <= lo:
        hi = lo + 1
    raw = (hi - lo) / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    first = math.floor(lo / step) * step
    ticks = []
    t = first
    while t < hi + step * 0.999:
        ticks.append(round(t, 12))
        t += step
    return ticks[0], ticks[-1], [(t, label(t)) for t in ticks]


def nice_log(lo, hi):
    """Whole decades around [lo, hi]; 2 and 5 labelled when the span is under three decades."""
    a, b = math.floor(math.log10(lo)), math.ceil(math.log10(hi))
    if b == a:
        b = a + 1
    ticks = []
    for k in range(a, b + 1):
        ticks.append((10.0 ** k, label(10.0 ** k)))
        if k < b and b - a < 3:
            ticks += [(m * 10.0 ** k, label(m * 10.0 ** k)) for m in (2, 5)]
        elif k < b:
            ticks += [(m * 10.0 ** k, "") for m in range(2, 10)]
    return 10.0 ** a, 10.0 ** b, sorted(ticks)


SUPERSCRIPTS = str.maketrans("-0123456789", "\u207b\u2070\u00b9\u00b2\u00b3\u2074\u2075\u2076\u2077\u2078\u2079")


def label(v):
    if v == 0:
        return "0"
    if abs(v) >= 1e6 or abs(v) < 1e-3:
        k = math.floor(math.log10(abs(v)) + 1e-9)
        m = v / 10 ** k
        power = "10" + str(k).translate(SUPERSCRIPTS)
        return f"{m:g}\u00d7{power}" if abs(m - 1) > 1e-9 else power
    return f"{v:,.10g}".replace(",", "\u2009")


def axis(values, log):
    lo, hi = min(values), max(values)
    if log:
        return nice_log(lo, hi)
    return nice_linear(min(0.0, lo), hi)


def spans_decades(values):
    positive = [v for v in values if v > 0]
    return len(positive) == len(values) and max(positive) / min(positive) >= 20


def chart(spec, series, meta):
    xs = [x for pts in series.values() for x, _ in pts]
    ys = [y for pts in series.values() for _, y in pts]
    if "hline" in spec:
        ys.append(spec["hline"][0])
    logx, logy = spans_decades(xs), spans_decades(ys)
    x0, x1, xt = axis(xs, logx)
    y0, y1, yt = axis(ys, logy)
    pw, ph = W - LEFT - RIGHT, H - TOP - BOTTOM

    def px(x):
        f = (math.log10(x) - math.log10(x0)) / (math.log10(x1) - math.log10(x0)) if logx \
            else (x - x0) / (x1 - x0)
        return LEFT + f * pw

    def py(y):
        f = (math.log10(y) - math.log10(y0)) / (math.log10(y1) - math.log10(y0)) if logy \
            else (y - y0) / (y1 - y0)
        return TOP + (1 - f) * ph

    out = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" '
           f'viewBox="0 0 {W} {H}" font-family="sans-serif" font-size="12">',
           f'<rect width="{W}" height="{H}" fill="white"/>',
           f'<text x="{W / 2}" y="22" text-anchor="middle" font-size="13" font-weight="bold">'
           f'{escape(spec["title"])}</text>']
    for v, text in xt:
        x = px(v)
        out.append(f'<line x1="{x:.1f}" y1="{TOP}" x2="{x:.1f}" y2="{TOP + ph}" '
                   f'stroke="{"#ddd" if text else "#f0f0f0"}"/>')
        if text:
            out.append(f'<text x="{x:.1f}" y="{TOP + ph + 16}" text-anchor="middle">'
                       f'{escape(text)}</text>')
    for v, text in yt:
        y = py(v)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" '
                   f'stroke="{"#ddd" if text else "#f0f0f0"}"/>')
        if text:
            out.append(f'<text x="{LEFT - 6}" y="{y + 4:.1f}" text-anchor="end">{escape(text)}</text>')
    out.append(f'<rect x="{LEFT}" y="{TOP}" width="{pw}" height="{ph}" fill="none" stroke="#333"/>')
    out.append(f'<text x="{LEFT + pw / 2}" y="{TOP + ph + 36}" text-anchor="middle">'
               f'{escape(spec["x"] + (" (log)" if logx else ""))}</text>')
    out.append(f'<text transform="translate(16 {TOP + ph / 2}) rotate(-90)" text-anchor="middle">'
               f'{escape(spec["y"] + (" (log)" if logy else ""))}</text>')
    if "hline" in spec:
        value, text = spec["hline"]
        y = py(value)
        out.append(f'<line x1="{LEFT}" y1="{y:.1f}" x2="{LEFT + pw}" y2="{y:.1f}" stroke="#999" '
                   f'stroke-dasharray="6 4"/>')
        out.append(f'<text x="{LEFT + pw - 4}" y="{y - 4:.1f}" text-anchor="end" fill="#666">'
                   f'{escape(text)}</text>')
    for i, (name, pts) in enumerate(series.items()):
        colour = COLOURS[i % len(COLOURS)]
        coords = " ".join(f"{px(x):.1f},{py(y):.1f}" for x, y in pts)
        out.append(f'<polyline points="{coords}" fill="none" stroke="{colour}" stroke-width="2"/>')
        out += [f'<circle cx="{px(x):.1f}" cy="{py(y):.1f}" r="3" fill="{colour}"/>' for x, y in pts]
        ly = TOP + 16 + 16 * i
        out.append(f'<line x1="{LEFT + 10}" y1="{ly - 4}" x2="{LEFT + 30}" y2="{ly - 4}" '
                   f'stroke="{colour}" stroke-width="2"/>')
        out.append(f'<text x="{LEFT + 36}" y="{ly}">{escape(name)}</text>')
    foot = f'{meta.get("machine", "machine unknown")}; {meta.get("date", "date unknown")}'
    load = meta.get("load before")
    if load:
        foot += f"; load average {load} (before)"
    out.append(f'<text x="{LEFT}" y="{H - 10}" font-size="10" fill="#555">{escape(foot)}</text>')
    out.append("</svg>")
    return "\n".join(out) + "\n"


def collect(spec, rows):
    sweeps = spec["sweep"] if isinstance(spec["sweep"], tuple) else (spec["sweep"],)
    series = {}
    for r in rows:
        if r["sweep"] in sweeps and r["metric"] == spec["metric"]:
            if "series" in spec and r["series"] not in spec["series"]:
                continue
            series.setdefault(r["series"], []).append((r["x"], r["value"]))
    order = spec.get("series", tuple(series))  # the listed order, else first appearance
    return {name: sorted(series[name]) for name in order if name in series}


def main(argv):
    if len(argv) != 3:
        print("usage: plot_scale.py SCALE_CSV OUT_DIR", file=sys.stderr)
        return 2
    try:
        meta, rows = read(argv[1])
    except (OSError, KeyError, ValueError) as e:
        print(f"plot_scale.py: {argv[1]}: {e}", file=sys.stderr)
        return 2
    os.makedirs(argv[2], exist_ok=True)
    for spec in CHARTS:
        series = collect(spec, rows)
        if not series:
            continue  # a sweep that was not run
        path = os.path.join(argv[2], f"scale_{spec['name']}.svg")
        with open(path, "w") as f:
            f.write(chart(spec, series, meta))
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
