#!/usr/bin/env python3
"""Runs the commands a doc shows and checks the output it quotes, so docs cannot go stale.

A shell block opts in with a marker on the line before its opening fence:

    <!-- checked output -->                 or   <!-- checked output: --seed 3 -->

In such a block every command (a line starting with `build/bin/dptune`, continued on the following
lines until a `#` line or the next command) is run from the repository root; `run` commands get the
marker's extra arguments (e.g. the seed the doc's numbers come from) and write to a scratch folder
(`--out`, `--no-progress`).
The `#   ` lines (a hash and at least three spaces) under a command quote its output; `# ` lines
with one space are the doc's own remarks.  The quoted lines are joined, whitespace-normalised and
split at "...",
their pieces must appear in that order in the command's standard output and error.  A number the
doc quotes may be rounded: it matches a printed number that rounds to it at the quoted precision
(the doc's "4.1499" matches a printed 4.14987..., not 4.1512).

Usage: doc_outputs.py REPO_ROOT DPTUNE_BINARY [FILE.md ...]   (default: README.md and docs/**/*.md)
"""
import re
import shlex
import subprocess
import sys
import tempfile
from pathlib import Path

MARKER = re.compile(r"^<!-- checked output(?::\s*(.*?))?\s*-->\s*$")
COMMAND = "build/bin/dptune"


def blocks(text):
    """(first line number, extra args, block lines) of every marked shell block."""
    lines = text.split("\n")
    for i, line in enumerate(lines):
        m = MARKER.match(line.strip())
        if not m or i + 1 >= len(lines) or not lines[i + 1].startswith("```"):
            continue
        end = next(j for j in range(i + 2, len(lines)) if lines[j].startswith("```"))
        yield i + 3, (m.group(1) or ""), lines[i + 2:end]


def commands(block):
    """(line number offset, command text, quoted output) for each command of a block."""
    out = []
    for k, line in enumerate(block):
        if line.startswith(COMMAND):
            out.append([k, line.rstrip("\\").strip(), []])
        elif line.lstrip().startswith("#   "):
            if out:
                out[-1][2].append(line.lstrip()[1:].strip())
        elif line.lstrip().startswith("#"):
            continue  # a remark of the doc's, not output
        elif out and not out[-1][2] and line.strip():
            out[-1][1] += " " + line.rstrip("\\").strip()
    return out


def normalise(text):
    return " ".join(text.split())


NUMBER = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"


def rounds_to(printed, quoted):
    """Whether the printed number, rounded at the quoted number's last digit, is the quoted one."""
    mantissa = quoted.lower().split("e")[0]
    exponent = int(quoted.lower().split("e")[1]) if "e" in quoted.lower() else 0
    decimals = len(mantissa.split(".")[1]) if "." in mantissa else 0
    half_unit = 0.5 * 10.0 ** (exponent - decimals)
    return abs(float(printed) - float(quoted)) <= half_unit * (1 + 1e-9)


def find_piece(piece, actual, start):
    """End of the first occurrence of `piece` in `actual` from `start`, numbers matched as rounded."""
    parts = re.split(f"({NUMBER})", piece)
    pattern = "".join(f"({NUMBER})" if k % 2 else re.escape(t) for k, t in enumerate(parts))
    quoted = parts[1::2]
    regex = re.compile(pattern)
    at = start
    while (m := regex.search(actual, at)) is not None:  # overlapping candidates: a near miss
        if all(rounds_to(p, q) for p, q in zip(m.groups(), quoted)):  # may hide the match
            return m.end()
        at = m.start() + 1
    return -1


def check_command(root, binary, scratch, command, extra, quoted):
    args = shlex.split(command)
    args[0] = binary
    if len(args) > 1 and args[1] == "run":
        args += shlex.split(extra)
        args += ["--out", str(scratch / f"run{len(list(scratch.iterdir()))}"), "--no-progress"]
    done = subprocess.run(args, cwd=root, capture_output=True, text=True, timeout=900)
    actual = normalise(done.stdout + "\n" + done.stderr)
    if done.returncode != 0:
        return f"exit code {done.returncode}:\n{done.stdout}{done.stderr}"
    at = 0
    for piece in normalise(" ".join(quoted)).split("..."):
        piece = piece.strip()
        if not piece:
            continue
        found = find_piece(piece, actual, at)
        if found < 0:
            return f"the doc quotes\n    {piece}\nbut the command printed\n{done.stdout}{done.stderr}"
        at = found
    return None


def main():
    root, binary = Path(sys.argv[1]).resolve(), str(Path(sys.argv[2]).resolve())
    files = [Path(f).resolve() for f in sys.argv[3:]] or [root / "README.md",
                                                           *sorted((root / "docs").rglob("*.md"))]
    failures, checked = 0, 0
    with tempfile.TemporaryDirectory(prefix="dptune-doc-outputs-") as tmp:
        scratch = Path(tmp)
        for file in files:
            for first, extra, block in blocks(file.read_text()):
                for offset, command, quoted in commands(block):
                    checked += 1
                    problem = check_command(root, binary, scratch, command, extra, quoted)
                    if problem:
                        failures += 1
                        print(f"{file.relative_to(root)}:{first + offset}: {command}\n{problem}\n")
    print(f"{checked} documented command(s) checked, {failures} stale")
    if checked == 0:
        print("no marked block found: the marker or the checker is broken")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
