#!/usr/bin/env python3
"""Dependencies point down the layer table of docs/DESIGN.md (section 1).

Resolves every quoted #include of the tree's C++ and CUDA sources to the file it names (the including file's
folder first, then the build's include roots) and fails on an include that reaches a layer the including
file's layer may not use: the public headers and the libraries never include io/, jobs/, the program or the
Python module; io/ never includes jobs/; jobs/ never includes the program; nothing but the program includes
the program (tools/imghist/); the commands' options (options/) are included only by the program (the module
fills the jobs from its own keyword options); nothing but the module includes python/. And the argument parser
(CLI11's <CLI/...> headers) is reached, directly or through the tree's own headers, only by the program and
options/: the jobs, the pipelines, the Python module, tests, benchmarks and fuzz targets never see the command
line.

Usage: check_layers.py SOURCE_DIR
"""
import pathlib
import re
import sys

# Longest prefix first: a file's layer is the first entry its path starts with.
LAYERS = [
    "include/imghist", "include/gpuhist", "src/core", "src/cuda", "src/filters", "src/gpuhist",
    "io", "jobs", "options", "tools/imghist", "python", "bench", "tests", "fuzz", "samples",
]
LIBRARY = {"src/core", "src/cuda", "src/filters"}
PUBLIC = {"include/imghist", "include/gpuhist"}
EVERYTHING = set(LAYERS)
# What each layer may include (itself included).
ALLOWED = {
    "include/imghist": {"include/imghist"},
    "include/gpuhist": PUBLIC,
    "src/core": PUBLIC | LIBRARY,
    "src/cuda": PUBLIC | LIBRARY,
    "src/filters": PUBLIC | LIBRARY,
    "src/gpuhist": PUBLIC | {"src/gpuhist"},
    "io": PUBLIC | {"io"},
    "jobs": PUBLIC | {"io", "jobs"},
    # The image commands' options: the program's alone.
    "options": PUBLIC | {"io", "jobs", "options"},
    "tools/imghist": PUBLIC | {"io", "jobs", "options", "tools/imghist"},
    "python": PUBLIC | {"io", "jobs", "python"},
    # Benchmarks, tests and fuzz targets may be white-box, but never reach the program or the module.
    "bench": EVERYTHING - {"options", "tools/imghist", "python"},
    "tests": EVERYTHING - {"options", "tools/imghist", "python"},
    "fuzz": EVERYTHING - {"options", "tools/imghist", "python"},
    "samples": PUBLIC,
}
# Where a quoted include is looked for after the including file's own folder (the build's include roots).
ROOTS = ["", "include", "src", "jobs", "tools/imghist", "python/src"]
SUFFIXES = {".cpp", ".hpp", ".h", ".cu", ".cuh", ".inl"}
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)
PARSER = re.compile(r'^\s*#\s*include\s+<CLI/', re.M)
PARSER_USERS = ("tools/imghist/", "options/")


def layer_of(rel):
    for layer in LAYERS:
        if rel == layer or rel.startswith(layer + "/"):
            return layer
    return None


def resolve(root, source, name):
    here = (source.parent / name).resolve()
    if here.is_file():
        return here
    for r in ROOTS:
        candidate = (root / r / name).resolve()
        if candidate.is_file():
            return candidate
    return None  # a third-party or generated header


def main():
    root = pathlib.Path(sys.argv[1]).resolve()
    checked, problems = 0, []
    includes, parser = {}, set()  # file -> the tree files it includes; the files that include <CLI/...>
    for source in sorted(root.rglob("*")):
        rel = source.relative_to(root).as_posix()
        if source.suffix not in SUFFIXES or rel.startswith("build") or "/." in "/" + rel:
            continue
        layer = layer_of(rel)
        if layer is None:
            continue
        text = source.read_text(errors="replace")
        if PARSER.search(text):
            parser.add(rel)
        includes[rel] = []
        for name in INCLUDE.findall(text):
            target = resolve(root, source, name)
            if target is None or root not in target.parents:
                continue
            checked += 1
            to_rel = target.relative_to(root).as_posix()
            includes[rel].append((name, to_rel))
            to = layer_of(to_rel)
            if to is not None and to not in ALLOWED[layer]:
                problems.append(f"{rel}: includes \"{name}\" ({to}/), which {layer}/ may not use")
    # The files that reach the argument parser, through any chain of the tree's headers.
    grew = True
    while grew:
        grew = False
        for rel, targets in includes.items():
            if rel not in parser and any(t in parser for _, t in targets):
                parser.add(rel)
                grew = True
    for rel, targets in includes.items():
        if rel.startswith(PARSER_USERS):
            continue
        for name, t in targets:
            if t in parser:
                problems.append(f"{rel}: includes \"{name}\", which reaches the argument parser (<CLI/...>); "
                                "only the program (tools/imghist/) and the options (options/) may")
    for p in problems:
        print(p)
    print(f"{checked} includes checked, {len(problems)} against the layer table")
    if checked == 0:
        print("no include was resolved: wrong source directory?")
        return 1
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
