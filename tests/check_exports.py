#!/usr/bin/env python3
"""The shared libraries export exactly the public API.

Lists each library's defined dynamic symbols with `nm -DC` and fails on any that is not public API: every
exported symbol must be in namespace imghist:: or gpuhist:: (or be the type information or virtual table
of a class there), outside the internal namespaces (detail, cuda, anonymous), and name an entity declared
in the installed headers (include/). A symbol of the C++ library, of the CUDA runtime or of an internal
class is a failure.

Usage: check_exports.py --nm NM --headers INCLUDE_DIR LIBRARY...
"""
import argparse
import pathlib
import re
import subprocess
import sys

PUBLIC_NAMESPACES = ("imghist::", "gpuhist::")
INTERNAL_PART = {"detail", "internal", "cuda", "fmath"}  # namespaces of the libraries' private code
# Symbols the linker defines in every shared object.
LINKER = {"__bss_start", "_edata", "_end", "_init", "_fini"}
PREFIXES = ("typeinfo for ", "typeinfo name for ", "vtable for ", "VTT for ", "guard variable for ")


def header_words(include_dir):
    words = set()
    for path in pathlib.Path(include_dir).rglob("*.hpp*"):
        words.update(re.findall(r"[A-Za-z_][A-Za-z0-9_]*", path.read_text(errors="replace")))
    return words


def qualified_name(symbol):
    """imghist::Clahe::apply(...) const -> ['imghist', 'Clahe', 'apply']"""
    for p in PREFIXES:
        if symbol.startswith(p):
            symbol = symbol[len(p):]
    symbol = re.sub(r"\[abi:[^\]]*\]", "", symbol)
    depth, name = 0, []
    for ch in symbol:  # cut the parameter list and template arguments
        if ch in "(<":
            depth += 1
        elif ch in ")>":
            depth -= 1
        elif depth == 0:
            name.append(ch)
    text = "".join(name).strip()
    text = text.split(" ")[-1] if " " in text else text  # a return type before the name
    return [part for part in text.split("::") if part]


def problems(library, nm, words):
    out = subprocess.run([nm, "-DC", "--defined-only", library], check=True, capture_output=True, text=True).stdout
    symbols = [line.split(" ", 2)[2] for line in out.splitlines() if line.count(" ") >= 2]
    if not symbols:
        return [f"{library}: exports nothing (nm printed no defined dynamic symbols)"]
    bad = []
    for sym in symbols:
        if sym in LINKER:
            continue
        bare = sym
        for p in PREFIXES:
            if bare.startswith(p):
                bare = bare[len(p):]
        if not bare.startswith(PUBLIC_NAMESPACES):
            bad.append(f"{library}: not in imghist:: or gpuhist::: {sym}")
        elif INTERNAL_PART & set(qualified_name(sym)) or "(anonymous namespace)" in bare.split("(")[0]:
            bad.append(f"{library}: internal namespace: {sym}")
        else:
            parts = qualified_name(sym)
            unknown = [p.lstrip("~") for p in parts[1:] if p.lstrip("~") not in words and not p.startswith("operator")]
            if unknown:
                bad.append(f"{library}: {'::'.join(unknown)} is not declared in the public headers: {sym}")
    return bad


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nm", default="nm")
    ap.add_argument("--headers", required=True)
    ap.add_argument("libraries", nargs="+")
    a = ap.parse_args()
    words = header_words(a.headers)
    bad = [p for lib in a.libraries for p in problems(lib, a.nm, words)]
    for line in bad:
        print(line)
    counts = ", ".join(f"{pathlib.Path(lib).name}" for lib in a.libraries)
    print(f"{len(bad)} exported symbols outside the public API in {counts}")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
