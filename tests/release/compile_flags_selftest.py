#!/usr/bin/env python3
"""compile_flags.py can fail: on a made-up source tree and build, it accepts the right flags and
names each broken rule (a suite source at -O2, an instrumented suite source, a product source at
-Og in the plain build, a unity source that includes a product source).

  compile_flags_selftest.py COMPILE_FLAGS_PY
"""
import json
import os
import subprocess
import sys
import tempfile


def write(path, text=""):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def run(script, root, entries):
    build = os.path.join(root, "build")
    commands = [{"directory": build, "file": f, "command": "c++ " + flags + " -c " + f}
                for f, flags in entries]
    write(os.path.join(build, "compile_commands.json"), json.dumps(commands))
    done = subprocess.run([sys.executable, script, root, build, "no"], capture_output=True,
                          text=True, check=False)
    return done.returncode, done.stdout + done.stderr


def main():
    script = sys.argv[1]
    with tempfile.TemporaryDirectory() as root:
        root = os.path.realpath(root)
        product = os.path.join(root, "framework", "a.cpp")
        suite = os.path.join(root, "tests", "t_test.cpp")
        unity = os.path.join(root, "build", "tests", "CMakeFiles", "t.dir", "Unity", "unity_0_cxx.cxx")
        write(product)
        write(suite)
        good = [(product, "-O2"), (suite, "-O2 -Og"), (unity, "-O2 -Og")]
        cases = [
            ("accepted", good, 0, "ok: 2 suite sources, 1 product sources"),
            ("suite at -O2", [(product, "-O2"), (suite, "-Og -O2")], 1, "suite source at -O2"),
            ("suite instrumented", [(product, "-O2"), (suite, "-Og -fsanitize=address,undefined")],
             1, "suite source instrumented"),
            ("product at -Og", [(product, "-Og"), (suite, "-Og")], 1, "product source at -Og"),
        ]
        failures = 0
        for name, entries, code, needle in cases:
            write(unity, f'#include "{suite}"\n')
            got, out = run(script, root, entries)
            if got != code or needle not in out:
                print(f"{name}: exit {got}, expected {code} with '{needle}':\n{out}")
                failures += 1
        write(unity, f'#include "{suite}"\n#include "{product}"\n')
        got, out = run(script, root, good)
        if got != 1 or f"unity source includes product source {product}" not in out:
            print(f"product source in a unity source: exit {got}:\n{out}")
            failures += 1
    print("ok" if not failures else f"{failures} case(s) failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
