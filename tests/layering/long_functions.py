#!/usr/bin/env python3
"""Lists the functions of product code longer than a limit (default 100 lines), a house rule.

Usage: long_functions.py [--limit N] DIR...  Exit 1 when one is found (each printed as
path:line: N lines: signature), 0 otherwise.

A function body is a '{' that follows ')' (and optional qualifiers: const, override, noexcept, a
trailing return type, a member initialiser list ends in ')' or '}' too) and is not inside another
function's body; its length runs from the first line of its signature to its closing brace.
Comments, string and character literals are blanked first, so braces inside them do not count.
"""
import os
import re
import sys

CONTROL = re.compile(r'(?:^|[^\w])(if|for|while|switch|catch|do|else|return|=|\[[^\]]*\])\s*$')


def strip(text):
    """Comments and literals replaced by spaces (newlines kept, so line numbers stay)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith('//', i):
            j = text.find('\n', i)
            j = n if j < 0 else j
            out.append(' ' * (j - i))
            i = j
        elif text.startswith('/*', i):
            j = text.find('*/', i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c == 'R' and text.startswith('R"', i):
            m = re.match(r'R"([^(]*)\(', text[i:])
            end = text.find(')' + m.group(1) + '"', i) if m else -1
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r'[^\n]', ' ', text[i:j]))
            i = j
        elif c in '"\'':
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == '\\' else 1
            out.append(' ' * (min(j, n - 1) - i + 1))
            i = j + 1
        else:
            out.append(c)
            i += 1
    return ''.join(out)


def long_functions(path, limit):
    text = strip(open(path, encoding='utf-8', errors='replace').read())
    found = []
    stack = []  # per open brace: (is_function_body, start_line)
    statement_start = 0  # index where the current statement/declaration began
    for i, c in enumerate(text):
        if c in ';':
            statement_start = i + 1
        elif c == '{':
            inside_function = any(entry[0] for entry in stack)
            before = text[statement_start:i]
            head = re.sub(r'\s+', ' ', before).strip()
            tail = re.sub(r'(\b(const|override|final|noexcept|mutable)\b|->\s*[\w:<>,\s*&]+)\s*$',
                          '', head).strip()
            is_fn = (not inside_function and tail.endswith(')') or
                     (not inside_function and re.search(r'\)\s*:\s*.*[)}]$', head) is not None))
            if is_fn and re.match(r'^(if|for|while|switch|catch|do|else)\b', tail):
                is_fn = False
            if is_fn and CONTROL.search(tail[:tail.find('(')] if '(' in tail else tail):
                is_fn = False
            start = text.count('\n', 0, statement_start + len(before) - len(before.lstrip())) + 1
            stack.append((is_fn, start, head))
            statement_start = i + 1
        elif c == '}':
            if stack:
                is_fn, start, head = stack.pop()
                if is_fn:
                    end = text.count('\n', 0, i) + 1
                    if end - start + 1 > limit:
                        found.append((path, start, end - start + 1, head[:90]))
            statement_start = i + 1
    return found


def main(argv):
    limit = 100
    if len(argv) > 2 and argv[1] == '--limit':
        limit = int(argv[2])
        argv = argv[2:]
    found = []
    for root_dir in argv[1:]:
        for root, _, files in os.walk(root_dir):
            for name in sorted(files):
                if name.endswith(('.cpp', '.hpp')):
                    found += long_functions(os.path.join(root, name), limit)
    for path, line, length, head in sorted(found):
        print(f'{path}:{line}: {length} lines: {head}')
    return 1 if found else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv))
