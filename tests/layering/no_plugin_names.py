#!/usr/bin/env python3
"""The host knows no bundled plugin by name: what it must know of a plugin, the plugin declares
(dptune/traits.hpp).  Fails naming every line of the host's sources (FRAMEWORK: src, cli, include)
that holds a bundled plugin's name (a folder plugins/<kind>/<name>) as a quoted string.
Usage: no_plugin_names.py PLUGINS_DIR FRAMEWORK_DIR"""
import re
import sys
from pathlib import Path

# Lines that name a public configuration value, not a plugin the host depends on (the comment beside
# each says why): the private test score's noise, and the commands' default accountant (a CLI
# default, refused like any unknown name when no such plugin is loaded).
ALLOWED_LINES = [re.compile(r'kTestScoreNoise = "laplace";'),
                 re.compile(r'kDefaultAccountant = "rdp";'),
                 # summary.json's key for a baseline's best trial, not the accountant
                 re.compile(r'w\.key\("best"\);')]


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
        for n, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if any(allowed.search(line) for allowed in ALLOWED_LINES):
                continue
            for match in quoted.finditer(line):
                bad.append(f"{rel}:{n}: \"{match.group(1)}\": {line.strip()}")
    print("\n".join(bad) if bad else f"no bundled plugin name ({len(names)}) in the host's sources")
    return 1 if bad or not names else 0


if __name__ == "__main__":
    sys.exit(main())
