#!/usr/bin/env python3
"""Lists the longest functions of C++ sources: scripts/long_functions.py [--over N] PATH...

Scans each file's braces (skipping comments, string and character literals): a brace opened at
namespace level after a header with a '(' that is not a namespace, class, struct, enum or union
opens a function definition, which ends at its matching brace.  The length counts the lines from
the header's first line to the closing brace.  Lambdas and member functions defined in a class body
count towards what encloses them.  Exit status 1 when --over N is given and a function is longer."""
import argparse
import pathlib
import re

TYPE_HEADER = re.compile(r"\b(namespace|class|struct|enum|union)\b[^(]*$|^\s*extern\s+\"C\"")


def code_chars(text):
    """Yields (index, char) of the code, with comments and literals left out."""
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            i = text.find("\n", i)
            i = n if i < 0 else i
        elif text.startswith("/*", i):
            i = text.find("*/", i + 2)
            i = n if i < 0 else i + 2
        elif text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            delim = text[i + 2 : text.find("(", i)]
            i = text.find(")" + delim + '"', i) + len(delim) + 2
        elif c in "\"'":
            if c == "'" and i > 0 and text[i - 1].isalnum():  # digit separator 1'000
                i += 1
                continue
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            i = j + 1
        else:
            yield i, c
            i += 1


def functions(path):
    text = path.read_text(encoding="utf-8", errors="replace")
    line_of = lambda k: text.count("\n", 0, k) + 1
    stack = []  # per open brace: "scope" (namespace, class...), "function", or "block"
    header, header_first = [], None  # code since the last ; { or } at namespace level
    fn_start = None
    for i, c in code_chars(text):
        at_scope = not stack or stack[-1] == "scope"
        if c == "{":
            if not at_scope:
                stack.append("block")
                continue
            head = "".join(header).strip()
            signature = head.split("(")[0]
            # a preprocessor line or an attribute in the header is not a function's name
            if "(" in head and not TYPE_HEADER.search(signature) and not head.startswith("#"):
                stack.append("function")
                name = signature.split()[-1] if signature.split() else "?"
                fn_start = (line_of(header_first), name)
            else:
                stack.append("scope")
            header, header_first = [], None
        elif c == "}":
            kind = stack.pop() if stack else "scope"
            if kind == "function":
                start, name = fn_start
                yield line_of(i) - start + 1, f"{path}:{start}", name
            if kind in ("function", "scope"):
                header, header_first = [], None
        elif at_scope:
            if c == ";":
                header, header_first = [], None
            else:
                if header_first is None and not c.isspace():
                    header_first = i
                header.append(c)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--over", type=int, default=None)
    parser.add_argument("--top", type=int, default=15)
    parser.add_argument("paths", nargs="+")
    args = parser.parse_args()
    found = []
    for p in map(pathlib.Path, args.paths):
        for f in sorted(p.rglob("*.cpp")) if p.is_dir() else [p]:
            found.extend(functions(f))
    found.sort(reverse=True)
    for length, where, name in found[: args.top]:
        print(f"{length:5d}  {name:40s} {where}")
    if args.over is not None:
        over = [f for f in found if f[0] > args.over]
        print(f"{len(over)} function(s) over {args.over} lines")
        return 1 if over else 0
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
