#!/usr/bin/env python3
"""Comments explain why and cite papers; an issue number or a file outside the repository means
nothing to a reader of the code.  Fails naming every source line that cites "issue N", or a path
outside the repository (../shared, DESIGN.md, PLATFORM-NOTES).  Usage: no_issue_numbers.py ROOT"""
import re
import sys
from pathlib import Path

FOLDERS = ["sdk", "framework", "plugins", "tests", "tools", "bench", "examples", "fuzz", "scripts",
           "cmake"]
SUFFIXES = {".cpp", ".hpp", ".h", ".py", ".sh", ".txt", ".cmake", ".yaml", ".yml"}
CITES = re.compile(r"\b[Ii]ssues? \d+|\.\./shared/|\bDESIGN\.md\b|\bPLATFORM-NOTES\b")
ALLOWED = re.compile(r"openpmix issue \d+")  # another project's tracker, named with its project


def main():
    root = Path(sys.argv[1])
    this = Path(__file__).resolve()
    bad = []
    files = [root / "CMakeLists.txt"] + [p for f in FOLDERS for p in sorted((root / f).rglob("*"))]
    for path in files:
        if path.suffix not in SUFFIXES and path.name != "CMakeLists.txt" or not path.is_file():
            continue
        if path.resolve() == this:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if CITES.search(ALLOWED.sub("", line)):
                bad.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    print("\n".join(bad) if bad else "no source line cites an issue number or an outside file")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
