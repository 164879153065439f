#!/usr/bin/env python3
"""The host knows no bundled plugin by name: what it must know of a plugin, the plugin declares
(dptune/traits.hpp).  Fails naming every line of the host's sources (FRAMEWORK: src, cli, include)
that holds a bundled plugin's name (a folder plugins/<kind>/<name>) as a quoted string.
Usage: no_plugin_names.py PLUGINS_DIR FRAMEWORK_DIR"""
import re
import sys
from pathlib import Path

# Files left to the work that turns the host's `best` accountant into a plugin: its members rdp
# and pld are named there today.  This exception goes when best is a plugin.
SKIPPED_FILES = {"src/plugin_registry.cpp", "src/best_accountant.cpp", "src/best_accountant.hpp"}
# (file, name): the commands' default accountant, which goes with the same work.
ALLOWED_NAMES = {("cli/privacy.cpp", "rdp"), ("cli/audit.cpp", "rdp"), ("cli/plan.cpp", "rdp")}
# Lines that name a public configuration value, not a plugin (the comment beside each says why).
ALLOWED_LINES = [re.compile(r'kTestScoreNoise = "laplace";')]


def bundled_names(plugins: Path):
    return sorted({p.name for kind in plugins.iterdir() if kind.is_dir()
                   for p in kind.iterdir() if p.is_dir()})


def main():
    plugins, framework = Path(sys.argv[1]), Path(sys.argv[2])
    names = bundled_names(plugins)
    quoted = re.compile(r'"(' + "|".join(map(re.escape, names)) + r')"')
    bad = []
    for path in sorted(framework.rglob("*")):
        if path.suffix not in {".cpp", ".hpp", ".h"} or not path.is_file():
            continue
        rel = path.relative_to(framework).as_posix()
        if rel in SKIPPED_FILES:
            continue
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if any(allowed.search(line) for allowed in ALLOWED_LINES):
                continue
            for match in quoted.finditer(line):
                if (rel, match.group(1)) not in ALLOWED_NAMES:
                    bad.append(f"{rel}:{n}: \"{match.group(1)}\": {line.strip()}")
    print("\n".join(bad) if bad else f"no bundled plugin name ({len(names)}) in the host's sources")
    return 1 if bad or not names else 0


if __name__ == "__main__":
    sys.exit(main())
