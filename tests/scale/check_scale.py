#!/usr/bin/env python3
"""Tests of bench/scale.

  check_scale.py plot SOURCE_DIR WORK          plot_scale.py on tests/scale/fixture.csv: valid SVG,
                                               one polyline per series, points inside the frame,
                                               log axes where the data span decades
  check_scale.py smoke SOURCE_DIR BUILD WORK   scale.py --smoke on a build: a well-formed CSV, peak
                                               memory non-decreasing in rows, then its plots
"""
import csv
import math
import os
import subprocess
import sys
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
FAILURES = []


def check(cond, what):
    if not cond:
        FAILURES.append(what)
        print("FAIL: " + what, file=sys.stderr)


def read_csv(path):
    meta, rows = {}, []
    with open(path) as f:
        lines = [ln.rstrip("\n") for ln in f]
    body = [ln for ln in lines if ln and not ln.startswith("#")]
    for ln in lines:
        if ln.startswith("#"):
            key, _, value = ln[1:].partition(":")
            meta[key.strip()] = value.strip()
    check(body and body[0] == "sweep,series,x,metric,value", f"{path}: header is {body[:1]}")
    for i, fields in enumerate(csv.reader(body[1:]), 2):
        ln = ",".join(fields)
        check(len(fields) == 5, f"{path}: data line {i} has {len(fields)} fields: {ln}")
        if len(fields) != 5:
            continue
        x, value = float(fields[2]), float(fields[4])
        check(math.isfinite(x) and math.isfinite(value) and value >= 0,
              f"{path}: data line {i}: not a finite non-negative value: {ln}")
        rows.append((fields[0], fields[1], x, fields[3], value))
    return meta, rows


def series_of(rows, sweep, metric):
    out = {}
    for s, series, x, m, v in rows:
        if s == sweep and m == metric:
            out.setdefault(series, []).append((x, v))
    return {k: sorted(v) for k, v in out.items()}


def polylines(path):
    root = ET.parse(path).getroot()
    check(root.tag == SVG + "svg", f"{path}: root element is {root.tag}")
    width, height = float(root.get("width")), float(root.get("height"))
    lines = []
    for p in root.iter(SVG + "polyline"):
        pts = [tuple(map(float, xy.split(","))) for xy in p.get("points").split()]
        for x, y in pts:
            check(0 <= x <= width and 0 <= y <= height, f"{path}: point {x},{y} outside the image")
        lines.append(pts)
    texts = [t.text or "" for t in root.iter(SVG + "text")]
    return lines, texts


def check_chart(path, expected):
    """expected: series name -> sorted (x, y) points as in the CSV."""
    check(os.path.exists(path), f"{path} was not written")
    if not os.path.exists(path):
        return [], []
    lines, texts = polylines(path)
    check(len(lines) == len(expected), f"{path}: {len(lines)} lines for {len(expected)} series")
    for name, (pts, line) in zip(expected, zip(expected.values(), lines)):
        check(len(pts) == len(line), f"{path}: {name}: {len(line)} points for {len(pts)} values")
        check(name in texts, f"{path}: legend lacks {name}")
        for (x0, y0), (x1, y1), (p0, q0), (p1, q1) in zip(pts, pts[1:], line, line[1:]):
            # x to the right, larger values up (SVG's y grows downwards).
            check(p1 > p0, f"{path}: {name}: x not increasing to the right")
            check((y1 > y0) == (q1 < q0) or y1 == y0, f"{path}: {name}: y drawn upside down")
    return lines, texts


def plot_test(source, work):
    fixture = os.path.join(source, "tests", "scale", "fixture.csv")
    out = os.path.join(work, "plots")
    subprocess.run([sys.executable, os.path.join(source, "bench", "scale", "plot_scale.py"),
                    fixture, out], check=True)
    _, rows = read_csv(fixture)
    lines, texts = check_chart(os.path.join(out, "scale_rows_time.svg"),
                               series_of(rows, "rows", "cpu_s"))
    # Rows 10^3, 10^4, 10^5 and times 10x apart: equal steps on log axes, both labelled "(log)".
    if lines:
        study = lines[0]
        dx = [b[0] - a[0] for a, b in zip(study, study[1:])]
        dy = [b[1] - a[1] for a, b in zip(study, study[1:])]
        check(abs(dx[0] - dx[1]) < 0.2 and abs(dy[0] - dy[1]) < 0.2,
              f"scale_rows_time.svg: decades not equally spaced: {study}")
    check(any(t.endswith("(log)") and t.startswith("rows") for t in texts),
          "scale_rows_time.svg: the rows axis is not logarithmic")
    check("1\u2009000" in texts and "100\u2009000" in texts,
          f"scale_rows_time.svg: decade ticks missing: {texts}")
    check(any("test machine" in t and "2026-01-01" in t for t in texts),
          "scale_rows_time.svg: machine and date not stated")
    check_chart(os.path.join(out, "scale_rows_memory.svg"), series_of(rows, "rows", "rss_mib"))
    _, texts = check_chart(os.path.join(out, "scale_gp.svg"), series_of(rows, "gp", "cpu_s"))
    check("1 s" in texts, "scale_gp.svg: the 1 s line is not labelled")
    # Ranks 1..4 and threads 1..2 on one linear axis (they do not span decades).
    wall = series_of(rows, "ranks", "wall_s")
    wall.update({k: v for k, v in series_of(rows, "threads", "wall_s").items()})
    _, texts = check_chart(os.path.join(out, "scale_ranks_time.svg"), wall)
    check(not any(t.endswith("(log)") for t in texts), "scale_ranks_time.svg: log axis on 1..4")
    for absent in ("scale_trials.svg", "scale_clients.svg"):
        check(not os.path.exists(os.path.join(out, absent)), f"{absent} written without data")


def smoke_test(source, build, work):
    csv_path = os.path.join(work, "smoke.csv")
    subprocess.run([sys.executable, os.path.join(source, "bench", "scale", "scale.py"), "--smoke",
                    "--build", build, "--out", csv_path, "--sweeps", "rows,trials,gp,clients,threads"],
                   check=True)
    meta, rows = read_csv(csv_path)
    check("machine" in meta and "date" in meta, f"smoke.csv: machine or date missing: {meta}")
    for sweep in ("rows", "trials", "gp", "clients", "threads"):
        check(any(r[0] == sweep for r in rows), f"smoke.csv: no {sweep} rows")
    memory = series_of(rows, "rows", "rss_mib")
    check("blobs load" in memory and "blobs study" in memory, f"smoke.csv: rows series {memory}")
    for name, pts in memory.items():
        # Peak memory holds the rows: it may not fall with more rows (5% for allocator noise).
        for (n0, m0), (n1, m1) in zip(pts, pts[1:]):
            check(m1 >= 0.95 * m0, f"{name}: peak memory {m0} MB at {n0} rows, {m1} MB at {n1}")
        # 2000 more rows of 784 float features are 6.3 MB more in the data alone.
        check(pts[-1][1] - pts[0][1] > 3, f"{name}: peak memory does not grow with rows: {pts}")
    for n, load in memory.get("blobs load", []):
        study = dict(memory.get("blobs study", []))
        check(study.get(n, 0) >= 0.95 * load, f"{n} rows: the study's peak is below the load's")
    x25519 = series_of(rows, "clients", "x25519")
    check(len(x25519) == 2, f"smoke.csv: clients without and with dropouts: {x25519}")
    if len(x25519) == 2:
        (none, some) = (x25519["0% dropouts"], x25519["5% dropouts"])
        check(all(b[1] > a[1] for a, b in zip(none, some)),
              "dropouts must add the server's key agreements")
    ratio = series_of(rows, "threads", "ratio")
    check(ratio and 0 < ratio["ratio 2 threads / 1"][0][1] < 5, f"smoke.csv: threads ratio {ratio}")
    out = os.path.join(work, "plots")
    subprocess.run([sys.executable, os.path.join(source, "bench", "scale", "plot_scale.py"),
                    csv_path, out], check=True)
    check_chart(os.path.join(out, "scale_rows_memory.svg"), memory)
    check_chart(os.path.join(out, "scale_clients.svg"), series_of(rows, "clients", "cpu_s"))


def main(argv):
    if len(argv) == 4 and argv[1] == "plot":
        os.makedirs(argv[3], exist_ok=True)
        plot_test(argv[2], argv[3])
    elif len(argv) == 5 and argv[1] == "smoke":
        os.makedirs(argv[4], exist_ok=True)
        smoke_test(argv[2], argv[3], argv[4])
    else:
        print(__doc__, file=sys.stderr)
        return 2
    print(f"{len(FAILURES)} failure(s)")
    return 1 if FAILURES else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
