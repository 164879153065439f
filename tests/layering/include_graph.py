#!/usr/bin/env python3
"""Checks the host's include graph: no include cycle between files, and none between the folders
of framework/src (one folder per concept, docs/architecture.md).

Usage: include_graph.py FRAMEWORK_DIR.  Exit 1 with each cycle printed, 0 otherwise.

Nodes are the files of FRAMEWORK_DIR/src (any depth) and FRAMEWORK_DIR/include/dptune/host.  An
include of "folder/name.hpp", of "name.hpp" beside the includer, or of "dptune/host/name.hpp" is an
edge.  A public header belongs to the folder of the source file of the same name; one without a
source file belongs to no folder, and the folders it includes count for whoever includes it.
"""
import os
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"', re.M)


def host_files(framework):
    src = os.path.join(framework, 'src')
    public = os.path.join(framework, 'include', 'dptune', 'host')
    files = {}
    for root, _, names in os.walk(src):
        for name in names:
            if name.endswith(('.cpp', '.hpp')):
                path = os.path.join(root, name)
                files[os.path.relpath(path, src)] = path
    if os.path.isdir(public):
        for name in os.listdir(public):
            files['dptune/host/' + name] = os.path.join(public, name)
    return files


def edges_of(files):
    edges = {}
    for key, path in files.items():
        here = os.path.dirname(key)
        targets = set()
        for included in INCLUDE.findall(open(path, errors='replace').read()):
            for candidate in (included, os.path.normpath(os.path.join(here, included))):
                if candidate in files and candidate != key:
                    targets.add(candidate)
                    break
        edges[key] = targets
    return edges


def folder_of(files):
    """The folder of every file: its own under src, or its source file's for a public header."""
    sources = {os.path.splitext(os.path.basename(k))[0]: os.path.dirname(k)
               for k in files if not k.startswith('dptune/') and k.endswith('.cpp')}
    out = {}
    for key in files:
        stem = os.path.splitext(os.path.basename(key))[0]
        out[key] = sources.get(stem) if key.startswith('dptune/') else os.path.dirname(key)
    return out


def cycles(graph):
    """Strongly connected components of more than one node (Tarjan, iterative)."""
    index, low, stack, on, found, counter = {}, {}, [], set(), [], [0]
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(sorted(graph[root])))]
        index[root] = low[root] = counter[0]
        counter[0] += 1
        stack.append(root)
        on.add(root)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = counter[0]
                    counter[0] += 1
                    stack.append(child)
                    on.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                elif child in on:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def folder_graph(edges, folders):
    graph = {}
    for key, targets in edges.items():
        source = folders[key]
        if not source:
            continue
        seen, todo = set(), list(targets)
        while todo:
            target = todo.pop()
            if target in seen:
                continue
            seen.add(target)
            if folders[target]:
                if folders[target] != source:
                    graph.setdefault(source, set()).add(folders[target])
            else:
                todo.extend(edges[target])
        graph.setdefault(source, set())
    return graph


def main():
    files = host_files(sys.argv[1])
    edges = edges_of(files)
    problems = ['include cycle between files: ' + ' <-> '.join(c) for c in cycles(edges)]
    problems += ['include cycle between folders of src/: ' + ' <-> '.join(c)
                 for c in cycles(folder_graph(edges, folder_of(files)))]
    for p in problems:
        print(p)
    if not problems:
        print('%d host files, no include cycle between files or folders' % len(files))
    return 1 if problems else 0


if __name__ == '__main__':
    sys.exit(main())
