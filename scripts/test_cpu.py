#!/usr/bin/env python3
"""CPU time of each test of a build, one test at a time (CONTRIBUTING.md, "Measured times").

Runs every test that `ctest --show-only` lists, as ctest would (its command, working folder and
ENVIRONMENT), and prints a tab-separated line per test: CPU seconds (user + system of the test and
every process it waited for), wall seconds, exit code (a WILL_FAIL test passes with a non-zero
one), labels, name.  CPU time, unlike wall time, barely moves with the machine's load, so it tells
where a suite's time goes on a shared machine.

Usage: scripts/test_cpu.py BUILD_DIR [REGEX] [CONFIGURATION] | sort -rn | head
"""
import json
import os
import resource
import subprocess
import sys
import time


def main() -> int:
    if len(sys.argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    build = sys.argv[1]
    args = ["ctest", "--test-dir", build, "--show-only=json-v1"]
    if len(sys.argv) > 3 and sys.argv[3]:
        args += ["-C", sys.argv[3]]
    if len(sys.argv) > 2 and sys.argv[2]:
        args += ["-R", sys.argv[2]]
    listing = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    for test in json.loads(listing)["tests"]:
        if "command" not in test:
            continue
        props = {p["name"]: p["value"] for p in test.get("properties", [])}
        env = dict(os.environ)
        for assignment in props.get("ENVIRONMENT", []):
            key, _, value = assignment.partition("=")
            env[key] = value
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        start = time.monotonic()
        try:
            code = subprocess.run(test["command"], cwd=props.get("WORKING_DIRECTORY", build),
                                  env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                                  timeout=float(props.get("TIMEOUT", 1500))).returncode
        except subprocess.TimeoutExpired:
            code = "timeout"
        wall = time.monotonic() - start
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        labels = ",".join(props.get("LABELS", []))
        print(f"{cpu:.2f}\t{wall:.2f}\t{code}\t{labels}\t{test['name']}", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
