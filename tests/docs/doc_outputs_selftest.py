#!/usr/bin/env python3
"""Tests doc_outputs.py itself: the fixture doc passes, and each way a doc can go stale or hide an
output fails, naming the file and the line.

Each case applies one edit to tests/docs/fixtures/good.md, runs doc_outputs.py on the result and
checks its exit code and that it names the edited line.

Usage: doc_outputs_selftest.py REPO_ROOT DPTUNE_BINARY
"""
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
GOOD = (HERE / "fixtures" / "good.md").read_text()

# (what is checked, text to replace, replacement, extra options, the line the failure must name or
# None for a case that must pass)
CASES = [
    ("the fixture as it is", "", "", [], None),
    ("an unmarked command with output", "<!-- checked output -->\n```sh\n# a remark", "```sh\n# a remark",
     [], 3),
    ("a changed number in a checked block", "#   epsilon:    0.9728", "#   epsilon:    0.9729", [], 6),
    ("a rounded number the program does not round to", "#   epsilon:    0.9728", "#   epsilon:    0.98",
     [], 6),
    ("printed lines the checker would not compare", "#   epsilon:    0.9728",
     "#   epsilon:    0.9728\nepsilon: 0.9728", [], 8),
    ("quoted output under no command", "# a remark of the doc's\n", "#   a printed line\n", [], 4),
    ("an unmarked block of printed lines", "<!-- not-output: an example of a printed line, with placeholders -->\n",
     "", [], 10),
    ("an unmarked measured table", "<!-- measured: `build/bin/bench_pld` on 2026-11-29, a 2-core VM -->\n",
     "", [], 15),
    ("a measurement without its date", "on 2026-11-29, a 2-core VM", "on a 2-core VM", [], 16),
    ("a pinned number the test does not assert", "| 2.8534 | 2.8545 |", "| 2.8534 | 2.8555 |", [], 22),
    ("a checked table's number that the block below does not quote", "| pure 0.5, 10 runs on average | 0.9728 |",
     "| pure 0.5, 10 runs on average | 0.9738 |", [], 28),
    ("a generated part no test re-generates", "# A doc every check accepts\n",
     "# A doc every check accepts\n<!-- BEGIN generated from nothing -->\n<!-- END generated -->\n", [], 1),
    ("an exit code the doc does not expect", "<!-- checked output, exit 2 -->", "<!-- checked output -->",
     [], 43),
    ("a rounded number that still rounds from the printed one", "#   epsilon:    0.9728",
     "#   epsilon:    0.97", [], None),
    ("a slow block, skipped in the quick set", "#   epsilon:    0.5\n", "#   epsilon:    0.6\n", [], None),
    ("a slow block's changed number", "#   epsilon:    0.5\n", "#   epsilon:    0.6\n", ["--slow"], 49),
]


def main():
    root, binary = sys.argv[1], sys.argv[2]
    failed = 0
    with tempfile.TemporaryDirectory(prefix="dptune-doc-selftest-") as tmp:
        for what, old, new, options, line in CASES:
            if old and old not in GOOD:
                print(f"FAIL {what}: the fixture has no {old!r}")
                failed += 1
                continue
            doc = Path(tmp) / "fixture.md"
            doc.write_text(GOOD.replace(old, new, 1) if old else GOOD)
            done = subprocess.run([sys.executable, str(HERE / "doc_outputs.py"), *options, root, binary,
                                   str(doc)], capture_output=True, text=True, timeout=300)
            expected = 0 if line is None else 1
            named = line is None or f"fixture.md:{line}:" in done.stdout
            if done.returncode != expected or not named:
                print(f"FAIL {what}: exit {done.returncode} (expected {expected})"
                      f"{'' if named else f', fixture.md:{line} not named'}\n{done.stdout}{done.stderr}")
                failed += 1
            else:
                print(f"ok   {what}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
