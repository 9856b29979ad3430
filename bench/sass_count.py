"""SASS instructions per kernel of compiled objects (bench/NOTES.md counts instructions per word).

    python3 bench/sass_count.py build/gpu/CMakeFiles/veil.dir/cpp/veil/rlwe/keyswitch.cpp.o \\
        --match mod_up_smem

Runs ``cuobjdump -sass`` on each object, counts the instruction lines of every function (each
architecture separately), demangles the names with ``cu++filt`` when it is on PATH, and prints
``count  architecture  name`` for the functions whose name contains every ``--match`` string.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess

_ARCH = re.compile(r"code for (sm_\d+\w*)")
_FUNC = re.compile(r"^\s*Function : (\S+)")
_INST = re.compile(r"^\s+/\*[0-9a-f]{4,}\*/\s+\S")


def count(obj: str) -> dict[tuple[str, str], int]:
    """Instructions per (architecture, mangled function name) of one object."""
    out = subprocess.run(["cuobjdump", "-sass", obj], check=True, capture_output=True,
                         text=True).stdout
    counts: dict[tuple[str, str], int] = {}
    arch, key = "?", None
    for line in out.splitlines():
        a = _ARCH.search(line)
        if a:
            arch, key = a.group(1), None
            continue
        m = _FUNC.match(line)
        if m:
            key = (arch, m.group(1))
            counts.setdefault(key, 0)
        elif key is not None and _INST.match(line):
            counts[key] += 1
    return counts


def demangle(names: list[str]) -> list[str]:
    tool = shutil.which("cu++filt") or shutil.which("c++filt")
    if not tool or not names:
        return names
    out = subprocess.run([tool], input="\n".join(names), capture_output=True, text=True).stdout
    lines = out.splitlines()
    return lines if len(lines) == len(names) else names


def strip_parameters(name: str) -> str:
    """The demangled name without its parameter list (the first '(' outside template brackets;
    template arguments such as (unsigned int)12 keep theirs)."""
    depth = 0
    for i, ch in enumerate(name):
        if ch == "<":
            depth += 1
        elif ch == ">":
            depth -= 1
        elif ch == "(" and depth == 0 and not name.startswith("(anonymous namespace)", i):
            return name[:i]
    return name


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("objects", nargs="+")
    ap.add_argument("--match", action="append", default=[],
                    help="keep functions whose demangled name contains this (repeatable)")
    a = ap.parse_args()
    for obj in a.objects:
        counts = count(obj)
        keys = list(counts)
        for key, pretty in zip(keys, demangle([k[1] for k in keys])):
            if all(s in pretty for s in a.match):
                print(f"{counts[key]:6d}  {key[0]}  {strip_parameters(pretty)}")


if __name__ == "__main__":
    main()
