#!/usr/bin/env python3
"""The sources of a test target compile together (cmake/DptuneTests.cmake: one unity source per
target), so a helper function one source defines is visible in the sources after it.  Where two
sources define functions of one name, a call in the later source may pick the earlier source's
overload without a word from the compiler.  This check finds such pairs: for every unity source
of a build tree, the functions its member sources define at file scope (column 0, as
clang-format leaves them), by name.

  unity_names.py BUILD_DIR        exit 1 and each pair when there is one, 2 when no unity source
  unity_names.py --self-test      shows the check failing on a made-up pair
"""
import glob
import os
import re
import sys
import tempfile

INCLUDE = re.compile(r'^#include "([^"]+)"', re.MULTILINE)
# A definition starting at column 0: a return type, then the name and its parameter list.
DEFINITION = re.compile(
    r"^(?!(?:namespace|using|return|template|typedef|struct|class|enum|TEST_CASE|TEST_SUITE)\b)"
    r"[A-Za-z_][\w:<>,*&\s]*?[\s*&]([A-Za-z_][\w:]*)\s*\(", re.MULTILINE)


def defined_functions(path):
    """Names of the functions a source defines at file scope (not member definitions)."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    names = set()
    for match in DEFINITION.finditer(text):
        name = match.group(1)
        line_end = text.find("\n", match.end())
        line = text[match.start():line_end if line_end != -1 else len(text)]
        if "::" in name or line.rstrip().endswith(";") or name == "operator":
            continue
        names.add(name)
    return names


def pairs_in(unity_file):
    """(name, first source, second source) for every name two member sources define."""
    with open(unity_file, encoding="utf-8") as f:
        members = INCLUDE.findall(f.read())
    seen = {}
    found = []
    for member in members:
        for name in sorted(defined_functions(member)):
            if name in seen:
                found.append((name, seen[name], member))
            else:
                seen[name] = member
    return found


def check(build_dir):
    unity_files = sorted(glob.glob(os.path.join(build_dir, "tests", "**", "Unity", "unity_*.cxx"),
                                   recursive=True))
    if not unity_files:
        print(f"unity_names.py: no unity source under {build_dir}/tests", file=sys.stderr)
        return 2
    found = [p for u in unity_files for p in pairs_in(u)]
    for name, first, second in found:
        print(f"{second}: defines {name}(), as {first} of the same test target does: rename one "
              "or give the helper one home")
    if found:
        return 1
    print(f"ok: {len(unity_files)} unity sources, no function name defined twice in one")
    return 0


def self_test():
    with tempfile.TemporaryDirectory() as root:
        unity = os.path.join(root, "tests", "CMakeFiles", "t.dir", "Unity", "unity_0_cxx.cxx")
        os.makedirs(os.path.dirname(unity))
        sources = {"a.cpp": "namespace {\n\nstd::string error_of(const std::string& yaml) {\n"
                            "  return yaml;\n}\n\n}  // namespace\n",
                   "b.cpp": "namespace {\n\ntemplate <class F>\nstd::string error_of(F&& f) {\n"
                            "  return f();\n}\nvoid Fixture::error_of() {}\n\n}  // namespace\n"}
        for name, text in sources.items():
            with open(os.path.join(root, name), "w", encoding="utf-8") as f:
                f.write(text)
        with open(unity, "w", encoding="utf-8") as f:
            f.write("".join(f'#include "{os.path.join(root, n)}"\n' for n in sources))
        found = pairs_in(unity)
        expected = [("error_of", os.path.join(root, "a.cpp"), os.path.join(root, "b.cpp"))]
        if found != expected:
            print(f"self-test: found {found}, expected {expected}")
            return 1
    print("ok: the check finds a helper two sources define")
    return 0


if __name__ == "__main__":
    if sys.argv[1:] == ["--self-test"]:
        sys.exit(self_test())
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit(check(sys.argv[1]))
