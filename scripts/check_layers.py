#!/usr/bin/env python3
"""No upward arrows between the C++ layers (DESIGN.md, "Layers").

The library's folders under cpp/veil/ form a list in which each layer uses only the ones above
it: core, backend, ring, rns, rlwe, the schemes (bfv, bgv, ckks), circuits, io. This script
checks the two rules that the compiler does not:

  1. Includes point up. Every ``#include "veil/<layer>/..."`` (or ``<veil/<layer>/...>``, or a
     quoted path relative to the including file) in cpp/veil/<layer>/ names the same layer or
     one above it. The three schemes share one place in the list but are peers: none includes
     another. ``api/`` (the scheme dispatch that circuits/ still calls) sits between the schemes
     and circuits/. A folder that is not in the list is an error, so a new one must be placed.
  2. Only backend/ talks to the CUDA runtime. Outside cpp/veil/backend/ (and in the Python
     bindings, python/bindings/) no file calls a runtime or driver API function
     (``cudaMemcpyAsync(``, ``cudaFuncSetAttribute(``, ``cuLaunchKernel(``: ``cuda[A-Z]\\w*(``
     or ``cu[A-Z]\\w*(``) or includes ``<cuda_runtime.h>``, ``<cuda_runtime_api.h>`` or
     ``<cuda.h>``; backend/ offers what the layers above need (memory.h, graph.h, timer.h,
     launch.h, cluster.h). Kernel launches (``<<<grid, block, smem, backend::stream(dev)>>>``),
     device intrinsics (``__syncthreads``, ``__shfl_sync``) and device-side headers
     (``<cooperative_groups.h>``) are allowed anywhere.

Comments and string literals are ignored. Prints each violation as ``path:line: what`` and exits
with status 1 when there is one, 0 otherwise.

Usage: python3 scripts/check_layers.py [--root REPO]
"""

from __future__ import annotations

import argparse
import pathlib
import re
import sys

#: The layers, top (used by all) first; the folders of one entry are peers.
LAYERS: list[tuple[str, ...]] = [
    ("core",),
    ("backend",),
    ("ring",),
    ("rns",),
    ("rlwe",),
    ("bfv", "bgv", "ckks"),
    ("api",),
    ("circuits",),
    ("io",),
]
#: The one layer that may call the CUDA runtime.
RUNTIME_LAYER = "backend"
#: Other source trees checked for CUDA runtime calls only (they may include any layer).
RUNTIME_ONLY_TREES = ["python/bindings"]
SOURCE_SUFFIXES = {".h", ".hpp", ".cpp", ".cc", ".cu", ".cuh", ".inc"}

LEVEL = {folder: i for i, entry in enumerate(LAYERS) for folder in entry}

INCLUDE = re.compile(r'^[ \t]*#[ \t]*include[ \t]*([<"])([^>"\n]+)[>"]', re.MULTILINE)
RUNTIME_CALL = re.compile(r"\b(cuda[A-Z]\w*|cu[A-Z]\w*)\s*\(")
RUNTIME_HEADERS = {"cuda_runtime.h", "cuda_runtime_api.h", "cuda.h"}


def strip(text: str, strings: bool) -> str:
    """``text`` with comments (and, when ``strings``, string and character literals) blanked.

    Newlines are kept, so line numbers stay valid. A quote after a digit or letter is a digit
    separator (``1'000``) or a literal prefix's, not the start of a character literal."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not text[i - 1].isalnum()):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]) if strings else text[i:j])
            i = j
        elif c == '"' or (c == "'" and (i == 0 or not text[i - 1].isalnum())):
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + " " * (j - i - 2) + c if strings and j - i >= 2 else text[i:j])
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def line_of(text: str, pos: int) -> int:
    return text.count("\n", 0, pos) + 1


def include_target(root: pathlib.Path, path: pathlib.Path, quote: str, name: str) -> str | None:
    """The layer folder that an include names, or None for a header outside cpp/veil/."""
    if name.startswith("veil/"):
        parts = name.split("/")
        return parts[1] if len(parts) > 2 else None
    if quote == '"':  # relative to the including file
        target = (path.parent / name).resolve()
        veil = (root / "cpp" / "veil").resolve()
        if target.is_relative_to(veil) and len(target.relative_to(veil).parts) > 1:
            return target.relative_to(veil).parts[0]
    return None


def runtime_violations(rel: str, text: str) -> list[str]:
    found = []
    code = strip(text, strings=True)
    for m in RUNTIME_CALL.finditer(code):
        found.append(f"{rel}:{line_of(code, m.start())}: calls the CUDA runtime directly "
                     f"({m.group(1)}); only {RUNTIME_LAYER}/ may: use a backend/ helper")
    for m in INCLUDE.finditer(strip(text, strings=False)):
        if m.group(1) == "<" and m.group(2).strip() in RUNTIME_HEADERS:
            found.append(f"{rel}:{line_of(text, m.start())}: includes <{m.group(2).strip()}>; "
                         f"only {RUNTIME_LAYER}/ may")
    return found


def layer_violations(root: pathlib.Path, path: pathlib.Path, layer: str, text: str) -> list[str]:
    rel = path.relative_to(root).as_posix()
    found = []
    for m in INCLUDE.finditer(strip(text, strings=False)):
        target = include_target(root, path, m.group(1), m.group(2).strip())
        if target is None or target == layer:
            continue
        where = f"{rel}:{line_of(text, m.start())}: includes {m.group(2).strip()}"
        if target not in LEVEL:
            found.append(f"{where}: {target}/ is not in the layer list")
        elif LEVEL[target] > LEVEL[layer]:
            found.append(f"{where}: {target}/ is below {layer}/ in the layer list")
        elif LEVEL[target] == LEVEL[layer]:
            found.append(f"{where}: {target}/ and {layer}/ are peers")
    return found


def sources(tree: pathlib.Path) -> list[pathlib.Path]:
    return sorted(p for p in tree.rglob("*") if p.is_file() and p.suffix in SOURCE_SUFFIXES)


def check(root: pathlib.Path) -> list[str]:
    """Every violation under ``root`` (a repository checkout), as 'path:line: what'."""
    root = root.resolve()
    veil = root / "cpp" / "veil"
    found: list[str] = []
    for folder in sorted(p for p in veil.iterdir() if p.is_dir()):
        layer = folder.name
        if layer not in LEVEL:
            found.append(f"{folder.relative_to(root).as_posix()}/: not in the layer list "
                         "(scripts/check_layers.py, LAYERS): place it there and in DESIGN.md")
            continue
        for path in sources(folder):
            text = path.read_text(encoding="utf-8", errors="replace")
            found += layer_violations(root, path, layer, text)
            if layer != RUNTIME_LAYER:
                found += runtime_violations(path.relative_to(root).as_posix(), text)
    for tree in RUNTIME_ONLY_TREES:
        for path in sources(root / tree) if (root / tree).is_dir() else []:
            text = path.read_text(encoding="utf-8", errors="replace")
            found += runtime_violations(path.relative_to(root).as_posix(), text)
    return sorted(found, key=_position)


def _position(violation: str) -> tuple[str, int, str]:
    """Sort key: path, then line number (0 for a folder)."""
    m = re.match(r"([^:]*):(\d+):", violation)
    return (m.group(1), int(m.group(2)), violation) if m else (violation, 0, violation)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--root", type=pathlib.Path,
                        default=pathlib.Path(__file__).resolve().parents[1],
                        help="the repository checkout (default: this script's)")
    args = parser.parse_args(argv)
    found = check(args.root)
    for line in found:
        print(line)
    print(f"{len(found)} layer violation(s)" if found else "layers: no upward arrows",
          file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main())
