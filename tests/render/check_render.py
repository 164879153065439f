#!/usr/bin/env python3
"""Renders report.html and every SVG of a few example runs with headless Chromium and fails on an
empty or broken page (item 4).  Per run: every SVG parses as XML with text and marks;
report.html is self-contained (no script, no external asset), has its sections and inlines every
SVG; every screenshot is not mostly one colour, and a plot shows coloured marks.  A blank page is
rendered first as a negative control: the check must reject it.  Exit 77 (skipped) without Chromium.
"""
import argparse
import concurrent.futures
import html
import html.parser
import json
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

SVG = "{http://www.w3.org/2000/svg}"
SECTIONS = {"guarantee", "run", "disclosure", "files", "config"}  # results and notes: if any
RELEASE_BEGIN, RELEASE_END = "<!-- dptune:release:begin -->", "<!-- dptune:release:end -->"
# Written by the run but not for the reader (the study store: study.db and the folder of kept
# model copies a resume restores, study-models/), or by this test.
NOT_LISTED = {"study.db"}
NOT_LISTED_FOLDERS = ("study-models/",)
# Measures the page in Chromium once it has loaded: the first plot's box, the body's width, the
# viewport, and every section with nothing but its heading.  Added to a copy of the page only
# (report.html itself has no script).
LAYOUT_PROBE = """<script>window.addEventListener('load', function () {
  var f = document.querySelector('section#plots figure');
  var r = f ? f.getBoundingClientRect() : null;
  var empty = [];
  document.querySelectorAll('section').forEach(function (s) {
    var n = 0;
    for (var c = s.firstElementChild; c; c = c.nextElementSibling)
      if (c.tagName != 'H2' && (c.textContent.trim() || c.querySelector('svg'))) n++;
    if (!n) empty.push(s.id);
  });
  var style = getComputedStyle(document.body);
  document.body.setAttribute('data-layout', JSON.stringify({
    plot_top: r ? r.top : null, plot_width: r ? r.width : null,
    content_width: document.body.clientWidth - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight),
    viewport: [innerWidth, innerHeight], empty: empty}));
});</script>"""
problems = []


def problem(text):
    problems.append(text)
    print("FAIL: " + text)


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__()
        self.ids, self.svgs, self.external = set(), 0, []
        self.order = []  # section ids in document order

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        if "id" in attrs:
            self.ids.add(attrs["id"])
            if tag == "section":
                self.order.append(attrs["id"])
        if tag == "svg":
            self.svgs += 1
        if tag in ("script", "link", "img", "iframe", "object"):
            self.external.append(tag)
        for key in ("src", "href"):
            if "://" in attrs.get(key, ""):
                self.external.append(key + "=" + attrs[key])


def check_files(run):
    svgs = sorted(run.glob("*.svg"))
    for svg in svgs:
        try:
            root = ET.parse(svg).getroot()
        except ET.ParseError as e:
            problem(f"{svg}: not well-formed XML: {e}")
            continue
        if root.tag != SVG + "svg":
            problem(f"{svg}: root element {root.tag}, not svg")
        if not list(root.iter(SVG + "text")):
            problem(f"{svg}: no text (title, ticks, labels)")
        marks = [e for t in ("circle", "rect", "polygon", "path", "polyline") for e in root.iter(SVG + t)]
        if len(marks) < 3:
            problem(f"{svg}: {len(marks)} marks: nothing plotted")
    page_file = run / "report.html"
    text = page_file.read_text(encoding="utf-8")
    page = Page()
    page.feed(text)
    if SECTIONS - page.ids:
        problem(f"{page_file}: missing sections {sorted(SECTIONS - page.ids)}")
    # Shows before it tells: the plots first, before the guarantee and the results; no Plots
    # section without a plot; every plot at the page's full width.
    if page.svgs and (not page.order or page.order[0] != "plots"):
        problem(f"{page_file}: the plots are not the first section (order {page.order})")
    if not page.svgs and "plots" in page.ids:
        problem(f"{page_file}: a Plots section without plots")
    if page.svgs and "figure svg{width:100%" not in text:
        problem(f"{page_file}: the plots are not drawn at the page's full width")
    if "-differentially private, by the accountant" in text and "In words: whatever is released" not in text:
        problem(f"{page_file}: the guarantee is not stated in words")
    if (run / "model.json").exists() and "<code>model.json</code>" not in text:
        problem(f"{page_file}: model.json was written but is not in the Files list")
    if page.external:
        problem(f"{page_file}: not self-contained: {page.external}")
    # A private tuner's plots of its release (the candidate, a vote vector) are inline only,
    # between the release markers; every other plot is a file too.
    public = Page()
    public.feed(outside_release(text))
    if public.svgs != len(svgs):
        problem(f"{page_file}: {public.svgs} inline plots outside the release, {len(svgs)} SVG files")
    listed = set(FILES.findall(text[text.find('<section id="files">'):]))
    for name in sorted(listed):
        if not (run / name).exists():
            problem(f"{page_file}: lists {name}, which was not written")
    written = {str(f.relative_to(run)) for f in run.rglob("*") if f.is_file()} - NOT_LISTED
    written = {name for name in written if not name.startswith(NOT_LISTED_FOLDERS)}
    for name in sorted(written - listed):
        problem(f"{page_file}: {name} was written but is not in the Files list")
    for svg in svgs:
        if svg.read_text(encoding="utf-8") not in text:
            problem(f"{page_file}: does not inline {svg.name}")
    return svgs + [page_file]


FILES = re.compile(r"<li><code>([^<]+)</code>")


def outside_release(text):
    """The page without what lies between the release markers."""
    return re.sub(re.escape(RELEASE_BEGIN) + ".*?" + re.escape(RELEASE_END), "", text, flags=re.S)


def measured_layout(chromium, page):
    """What LAYOUT_PROBE measured on `page` in a 1100 x 700 window, or None."""
    probe = page.with_name("report.layout_probe.html")
    probe.write_text(page.read_text(encoding="utf-8").replace("</body>", LAYOUT_PROBE + "</body>"),
                     encoding="utf-8")
    with tempfile.TemporaryDirectory() as profile:
        out = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                              "--hide-scrollbars", "--no-first-run", f"--user-data-dir={profile}",
                              "--window-size=1100,700", "--virtual-time-budget=3000", "--dump-dom",
                              probe.resolve().as_uri()],
                             capture_output=True, text=True, timeout=60, check=False)
    found = re.search(r'data-layout="([^"]*)"', out.stdout)
    return json.loads(html.unescape(found.group(1))) if found else None


def check_layout(chromium, name, page):
    """The main plot in the first screen at the page's full width; no section left empty."""
    layout = measured_layout(chromium, page)
    if layout is None:
        problem(f"{page}: the layout probe did not run")
        return
    height = layout["viewport"][1]
    if layout["plot_top"] is None:
        problem(f"{page}: no plot")
    elif not layout["plot_top"] < height:
        problem(f"{page}: the first plot starts at {layout['plot_top']:.0f} px, below the first "
                f"screen ({height} px)")
    elif layout["plot_width"] < 0.95 * layout["content_width"]:
        problem(f"{page}: the first plot is {layout['plot_width']:.0f} px wide, not the page's "
                f"{layout['content_width']:.0f} px")
    else:
        print(f"layout: {name}: first plot at {layout['plot_top']:.0f} px < {height} px, "
              f"{layout['plot_width']:.0f} of {layout['content_width']:.0f} px wide")
    if layout["empty"]:
        problem(f"{page}: empty sections {layout['empty']}")


def screenshot(chromium, source, png, size):
    with tempfile.TemporaryDirectory() as profile:
        subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
                        "--no-first-run", f"--user-data-dir={profile}", f"--window-size={size}",
                        f"--screenshot={png}", source.resolve().as_uri()],
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=60, check=False)


def looks_rendered(png_stats, png, plot):
    """None if the screenshot shows a page, else why not."""
    if not png.exists():
        return "no screenshot"
    out = subprocess.run([png_stats, str(png)], capture_output=True, text=True)
    if out.returncode != 0:
        return "unreadable screenshot: " + out.stderr.strip()
    _, _, dominant, colourful, distinct = out.stdout.split()
    if float(dominant) > 0.985 or int(distinct) < 8:
        return f"mostly one colour ({float(dominant):.1%} of the pixels, {distinct} colours)"
    if plot and int(colourful) < 100:
        return f"no coloured marks ({colourful} coloured pixels)"
    return None


def colourful_pixels(png_stats, png):
    """The clearly coloured pixels of a screenshot, or None when it cannot be read."""
    if not png.exists():
        return None
    out = subprocess.run([png_stats, str(png)], capture_output=True, text=True)
    return int(out.stdout.split()[3]) if out.returncode == 0 else None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dptune", required=True)
    ap.add_argument("--png-stats", required=True)
    ap.add_argument("--source", required=True)
    ap.add_argument("--work", required=True)
    a = ap.parse_args()
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chromium:
        print("SKIPPED: no chromium on PATH (scripts/install-deps.sh installs Debian's chromium)")
        return 77
    src, work = pathlib.Path(a.source), pathlib.Path(a.work)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    runs = {
        "quickstart": [f"{src}/examples/pipelines/quickstart.yaml", "--set",
                       "tuner.params.points_per_dimension=8", "--set", "utility.repetitions=10"],
        "dpareto": [f"{src}/tests/dpareto/tiny_svt.yaml"],
        # A private tuner: the released candidate on the search space, a released model.
        "private": [f"{src}/examples/walkthrough/tune_my_csv.yaml"],
        # DP-Hype: the candidate and the noisy vote vector as bars; no model.
        "dp_hype": [f"{src}/examples/pipelines/dp_hype_digits_iid.yaml"],
        # The figure's module lives beside the plugins (dptune-figures), not among them.
        "repetition_fig7": [f"{src}/examples/figures/repetition_fig7.yaml", "--plugin-path",
                            str(pathlib.Path(a.dptune).resolve().parent.parent / "lib" / "dptune"
                                / "figures")],
    }
    for name, args in runs.items():
        r = subprocess.run([a.dptune, "run", *args, "--seed", "1", "--no-progress", "--out",
                            str(work / name)], capture_output=True, text=True, timeout=120)
        if r.returncode != 0:
            problem(f"dptune run {name} exited {r.returncode}: {r.stderr[-500:]}")
    blank = work / "blank.svg"
    blank.write_text('<svg xmlns="http://www.w3.org/2000/svg" width="800" height="500">'
                     '<rect width="100%" height="100%" fill="white"/></svg>\n')
    jobs = [(blank, work / "blank.png", "800,500", True)]
    first_screens = []  # (the page's first screen, the same page's without its plots)
    for name in runs:
        if (work / name / "report.html").exists():
            files = check_files(work / name)
            check_layout(chromium, name, work / name / "report.html")
            for f in files:
                plot = f.suffix == ".svg"
                jobs.append((f, f.with_suffix(f.suffix + ".png"),
                             "1000,640" if plot else "1100,1400", plot))
            # The first screen of the page shows a plot (when it has one): compared below with the
            # first screen of the same page without its plots, which must have fewer coloured
            # pixels (the warning box's border is coloured too).
            if list((work / name).glob("*.svg")):
                page = work / name / "report.html"
                text = page.read_text(encoding="utf-8")
                start, end = text.find('<section id="plots">'), text.find("</section>")
                without = work / name / "report.without_plots.html"
                without.write_text(text[:start] + text[end + len("</section>"):], encoding="utf-8")
                first_screens.append((work / name / "report.first_screen.png",
                                      work / name / "report.without_plots.first_screen.png"))
                jobs.append((page, first_screens[-1][0], "1100,700", True))
                jobs.append((without, first_screens[-1][1], "1100,700", False))
        else:
            problem(f"{name}: no report.html")
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        list(pool.map(lambda j: screenshot(chromium, j[0], j[1], j[2]), jobs))
    if looks_rendered(a.png_stats, jobs[0][1], True) is None:
        problem("the negative control (a blank page) passed the rendering check")
    for source, png, _, plot in jobs[1:]:
        why = looks_rendered(a.png_stats, png, plot)
        if why:
            problem(f"{source}: {why} (screenshot {png})")
        else:
            print(f"rendered: {source.relative_to(work)}")
    for with_plot, without_plot in first_screens:
        shown, bare = colourful_pixels(a.png_stats, with_plot), colourful_pixels(a.png_stats, without_plot)
        if shown is None or bare is None or shown < bare + 1000:
            problem(f"{with_plot}: the first screen shows no plot ({shown} coloured pixels, "
                    f"{bare} without the plots)")
        else:
            print(f"first screen shows the plot: {with_plot.relative_to(work)} ({shown} coloured "
                  f"pixels, {bare} without the plots)")
    print(f"{len(jobs) - 1} pages rendered, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
