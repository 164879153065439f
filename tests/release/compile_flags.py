#!/usr/bin/env python3
"""Checks, from a build's compile_commands.json, which flags each source was compiled with.

  compile_flags.py SOURCE_DIR BUILD_DIR yes|no      (yes: the sanitizer build)

The suite's own sources (under tests/, except one that includes a product source and so compiles
product code; and what the build generates for the suite in its own tests/: build paths and the
unity sources that compile a test target's sources together) are compiled at -Og and never
instrumented, in both builds, so that the compiler cache shares them.  A unity source may include
suite sources only: a product source in one would escape its flags.  Every other source is product code: in the plain build at -O2 or -O3 without
the sanitizers; in the sanitizer build at -Og with AddressSanitizer and UndefinedBehaviorSanitizer
and its assertions (-UNDEBUG after any -DNDEBUG).  Prints each source that breaks its rule and
exits 1; exits 2 when the file is missing or lists no source of either kind.
"""
import json
import os
import re
import shlex
import sys

INCLUDED_SOURCE = re.compile(r'^#include "[^"]*\.(cpp|cc|cxx)"', re.MULTILINE)


UNITY_INCLUDE = re.compile(r'^#include "([^"]+)"', re.MULTILINE)


def is_suite_source(path, source_dir):
    if not path.startswith(os.path.join(source_dir, "tests") + os.sep):
        return False
    with open(path, encoding="utf-8") as f:
        return INCLUDED_SOURCE.search(f.read()) is None


def unity_members(path):
    """The sources a CMake unity source includes (absolute paths), or None for another file."""
    if os.sep + "Unity" + os.sep not in path or not os.path.basename(path).startswith("unity_"):
        return None
    with open(path, encoding="utf-8") as f:
        return [os.path.realpath(m) for m in UNITY_INCLUDE.findall(f.read())]


def classify(path, source_dir, build_dir):
    """(suite?, problems): a source of the build tree's tests/ is generated for the suite."""
    if not path.startswith(os.path.join(build_dir, "tests") + os.sep):
        return is_suite_source(path, source_dir), []
    members = unity_members(path)
    if members is None:
        return True, []
    if not members:
        return True, ["unity source including no source"]
    return True, [f"unity source includes product source {m}" for m in members
                  if not is_suite_source(m, source_dir)]


def last_level(args):
    levels = [a for a in args if re.fullmatch(r"-O[0-3sgz]?", a)]
    return levels[-1] if levels else None


def asserts_on(args):
    """Whether NDEBUG is undefined after its last definition (or never defined)."""
    state = True
    for a in args:
        if a == "-DNDEBUG":
            state = False
        elif a == "-UNDEBUG":
            state = True
    return state


def problems(args, suite, sanitized_build):
    level = last_level(args)
    instrumented = "-fsanitize=address,undefined" in args
    found = []
    if suite:
        if level != "-Og":
            found.append(f"suite source at {level}, expected -Og")
        if instrumented:
            found.append("suite source instrumented")
    elif sanitized_build:
        if level != "-Og":
            found.append(f"product source at {level}, expected -Og")
        if not instrumented:
            found.append("product source not instrumented")
        if not asserts_on(args):
            found.append("product source without its assertions")
    else:
        if level not in ("-O2", "-O3"):
            found.append(f"product source at {level}, expected -O2 or -O3")
        if any(a.startswith("-fsanitize") for a in args):
            found.append("product source instrumented in the plain build")
    return found


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("yes", "no"):
        print(__doc__, file=sys.stderr)
        return 2
    source_dir, build_dir, sanitized = (os.path.realpath(sys.argv[1]), os.path.realpath(sys.argv[2]),
                                        sys.argv[3])
    try:
        with open(os.path.join(build_dir, "compile_commands.json"), encoding="utf-8") as f:
            entries = json.load(f)
    except (OSError, ValueError) as e:
        print(f"compile_flags.py: cannot read {build_dir}/compile_commands.json: {e}",
              file=sys.stderr)
        return 2
    counts = {True: 0, False: 0}
    bad = 0
    for entry in entries:
        path = os.path.realpath(os.path.join(entry["directory"], entry["file"]))
        args = entry["arguments"] if "arguments" in entry else shlex.split(entry["command"])
        suite, found = classify(path, source_dir, build_dir)
        counts[suite] += 1
        for problem in found + problems(args, suite, sanitized == "yes"):
            print(f"{path}: {problem}")
            bad += 1
    if counts[True] == 0 or counts[False] == 0:
        print(f"compile_flags.py: {counts[True]} suite and {counts[False]} product sources listed",
              file=sys.stderr)
        return 2
    if bad:
        return 1
    print(f"ok: {counts[True]} suite sources, {counts[False]} product sources (sanitizer build: "
          f"{sanitized})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
