"""Developer tool: regenerates ``python/veil/data/peers.json`` from the anchors page.

Not part of the package and never imported by it: ``veil bench`` reads only the JSON (through
``veil._bench_rows.load_peers``). Run it after a peer is re-measured and ANCHORS.md updated::

    python3 bench/peers_from_anchors.py /work/shared/ANCHORS.md            # writes the JSON
    python3 bench/peers_from_anchors.py /work/shared/ANCHORS.md --check    # diff only, exit 1

The page's tables are read with markdown-it-py (a dependency of rich): the three "Phantom
BFV/BGV/CKKS" tables (cells "H100 / H200" in µs), the Cheddar table (µs on the H100, plus its
bootstrapping row), the special-prime counts from the Phantom paragraph, and HEonGPU's published
bootstrapping times from the "Published results" table. Provenance (who measured what, where,
how) is written beside every block.
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from pathlib import Path
from typing import Any

from markdown_it import MarkdownIt

OUT = Path(__file__).resolve().parent.parent / "python" / "veil" / "data" / "peers.json"

#: Phantom's column names as the tables write them, per scheme (after variant, N, primes, log QP).
PHANTOM_COLUMNS = {
    "bfv": ["multiply", "rotate_rows", "multiply_plain", "encrypt", "decrypt"],
    "bgv": ["multiply", "rotate_rows", "multiply_plain", "encrypt", "decrypt"],
    "ckks": ["multiply", "rotate", "rescale", "multiply_plain", "add", "encrypt", "decrypt",
             "encode", "decode"],
}
#: Cheddar's row labels -> op names used by veil bench.
CHEDDAR_OPS = {"HMult": "multiply", "relinearize": "relinearize", "HRot": "rotate",
               "rescale": "rescale", "HAdd": "add"}


def tables(text: str) -> list[dict[str, Any]]:
    """Every table of the page: {"heading": last heading above it, "head": [...], "rows": [[...]]}.

    Cell text is the inline content with markdown emphasis removed (children tokens' text).
    """
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    out: list[dict[str, Any]] = []
    heading, in_heading, cur, row = "", False, None, None
    for tok in tokens:
        if tok.type == "heading_open":
            in_heading = True
        elif tok.type == "heading_close":
            in_heading = False
        elif tok.type == "inline" and in_heading:
            heading = tok.content
        elif tok.type == "table_open":
            cur = {"heading": heading, "head": [], "rows": []}
        elif tok.type == "table_close":
            out.append(cur)
            cur = None
        elif tok.type == "tr_open":
            row = []
        elif tok.type == "tr_close" and cur is not None:
            if not cur["head"]:
                cur["head"] = row
            else:
                cur["rows"].append(row)
        elif tok.type == "inline" and cur is not None and row is not None:
            row.append("".join(c.content for c in (tok.children or []) if c.type == "text"))
    return out


def _table(all_tables: list[dict[str, Any]], heading_start: str) -> dict[str, Any]:
    """The first table under the heading that starts with ``heading_start``."""
    found = [t for t in all_tables if t["heading"].startswith(heading_start)]
    if not found:
        raise SystemExit(f"no table under a heading starting {heading_start!r}")
    return found[0]


def _number(cell: str) -> float:
    """The first number of a cell ('23 582 (min-key ...)' -> 23582.0)."""
    m = re.search(r"\d[\d ]*(?:\.\d+)?", cell)
    if not m:
        raise SystemExit(f"no number in cell {cell!r}")
    return float(m.group(0).replace(" ", ""))


def phantom(all_tables: list[dict[str, Any]], text: str) -> dict[str, Any]:
    """Phantom's three tables with their special-prime counts."""
    m = re.search(r"CKKS rows use ([\d,]+) in order; BFV/BGV rows use\s+([\d,]+)", text)
    if not m:
        raise SystemExit("special-prime counts of the Phantom rows not found")
    special = {"ckks": [int(x) for x in m.group(1).split(",")],
               "bfv": [int(x) for x in m.group(2).split(",")]}
    special["bgv"] = special["bfv"]
    out: dict[str, Any] = {}
    for scheme in ("bfv", "bgv", "ckks"):
        t = _table(all_tables, f"Phantom {scheme.upper()} ")
        cols = PHANTOM_COLUMNS[scheme]
        head = [c.strip() for c in t["head"]]  # [variant,] N, primes, log QP, then the ops
        if "log QP" not in head or head[head.index("log QP") + 1:] != cols:
            raise SystemExit(f"Phantom {scheme}: unexpected columns {head}")
        rows: dict[tuple[int, str], dict[str, Any]] = {}
        for cells in t["rows"]:
            cells = [c.strip() for c in cells]
            variant = cells.pop(0) if scheme == "bfv" else scheme.upper()
            n, primes, log_qp = int(cells[0]), cells[1], int(cells[2])
            ops = {}
            for op, cell in zip(cols, cells[3:], strict=True):
                h100, h200 = (float(x) for x in cell.split("/"))
                ops[op] = {"H100": h100, "H200": h200}
            row = rows.setdefault((n, primes), {"n": n, "primes": primes, "log_qp": log_qp,
                                                "variants": {}})
            row["variants"][variant] = ops
        if len(rows) != len(special[scheme]):
            raise SystemExit(f"Phantom {scheme}: {len(rows)} rows, {len(special[scheme])} "
                             "special-prime counts")
        for row, p in zip(rows.values(), special[scheme], strict=True):
            row["special"] = p
        out[scheme] = {"columns": cols, "rows": list(rows.values())}
    return out


def cheddar(all_tables: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """Cheddar's per-op rows {shape, limbs, us: {op: µs}} and its bootstrapping ms per set."""
    t = next((t for t in all_tables if t["head"] and t["head"][0].startswith("op (µs")), None)
    if t is None:
        raise SystemExit("Cheddar's op table not found")
    columns = []  # (set, limbs) per data column
    shape = None
    for h in t["head"][1:]:
        if h.strip().startswith("bootparam"):
            shape = h.strip().split(",")[0]
        limbs = re.search(r"\((\d+) limbs\)", h)
        if shape is None or not limbs:
            raise SystemExit(f"Cheddar column {h!r}: no set or limb count")
        columns.append((shape, int(limbs.group(1))))
    per = {c: {} for c in columns}
    boot: dict[str, float] = {}
    for cells in t["rows"]:
        label = cells[0].strip()
        if label.startswith("bootstrapping"):
            for (shape, _), cell in zip(columns, cells[1:], strict=True):
                if cell.strip():
                    boot[shape] = _number(cell) / 1000.0
            continue
        op = next((v for k, v in CHEDDAR_OPS.items() if label.startswith(k)), None)
        if op is None:
            raise SystemExit(f"Cheddar row {label!r} not known")
        for c, cell in zip(columns, cells[1:], strict=True):
            per[c][op] = _number(cell)
    return [{"shape": s, "limbs": n, "us": per[(s, n)]} for s, n in columns], boot


def heongpu(all_tables: list[dict[str, Any]]) -> tuple[float, float]:
    """HEonGPU 1.1's published (regular, slim) bootstrapping times, ms."""
    t = _table(all_tables, "Published results")
    for cells in t["rows"]:
        if cells[0].strip().startswith("HEonGPU 1.1"):
            m = re.search(r"< ?(\d+) ms; slim (\d+) ms", cells[2])
            if m:
                return float(m.group(1)), float(m.group(2))
    raise SystemExit("HEonGPU 1.1's bootstrapping row not found")


def build(text: str) -> dict[str, Any]:
    """peers.json's content from the anchors page's text."""
    all_tables = tables(text)
    ch_rows, ch_boot = cheddar(all_tables)
    regular, slim = heongpu(all_tables)
    return {
        "schema": 1,
        "generated_from": "ANCHORS.md (the project's anchors page) by bench/peers_from_anchors.py",
        "phantom": {
            "source": "Phantom (encryptorion-lab/phantom-fhe, commit 1f4a198), CUDA 13.0, sm_90, "
                      "Release; its own bfv_bench / bgv_bench / ckks_bench",
            "measured_on": "this project's GPU machines, 2026-11-21",
            "gpus": {"H100": "NVIDIA H100 SXM", "H200": "NVIDIA H200"},
            "device": "gpu",
            "what": "median of 100 runs, CUDA events; multiply = multiply + relinearize; "
                    "decrypt without decode",
            "units": "us",
            "tables": phantom(all_tables, text),
        },
        "cheddar": {
            "source": "Cheddar (scale-snu/cheddar-fhe @ 8df8b26), CUDA 13.0, sm_90, Release; its "
                      "own parameter files bootparam_40 and bootparam_40_64bit",
            "measured_on": "this project's H100, 2026-11-22",
            "gpus": {"H100": "NVIDIA H100 SXM"},
            "device": "gpu",
            "what": "median of 50 runs, CUDA events; multiply = HMult (tensor + relinearize), "
                    "rotate = HRot by 1; keyed by parameter set and RNS limbs of the ciphertext",
            "units": "us",
            "gpu": "H100",
            "rows": ch_rows,
        },
        "bootstrapping": {
            "what": "CKKS bootstrapping, full slots (2^15) at N = 2^16",
            "units": "ms",
            "device": "gpu",
            "peers": [
                {"label": "Cheddar bootparam_40 (32-bit), H100, measured", "system": "Cheddar",
                 "gpu": "H100", "kind": "measured", "ms": ch_boot["bootparam_40"],
                 "source": "measured on this project's H100 (median of 20)"},
                {"label": "Cheddar 64-bit set, H100, measured", "system": "Cheddar",
                 "gpu": "H100", "kind": "measured", "ms": ch_boot["bootparam_40_64bit"],
                 "source": "measured on this project's H100 (median of 20)"},
                {"label": "HEonGPU 1.1, RTX 4090, published (regular)", "system": "HEonGPU 1.1",
                 "gpu": "RTX 4090", "kind": "published", "ms": regular,
                 "source": "HEonGPU 1.1 paper/README (an upper bound: '< 170 ms')"},
                {"label": "HEonGPU 1.1, RTX 4090, published (slim)", "system": "HEonGPU 1.1",
                 "gpu": "RTX 4090", "kind": "published", "ms": slim,
                 "source": "HEonGPU 1.1 paper/README"},
            ],
        },
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("anchors", type=Path, help="path of ANCHORS.md")
    ap.add_argument("--out", type=Path, default=OUT, help=f"output JSON (default: {OUT})")
    ap.add_argument("--check", action="store_true",
                    help="only compare with the existing JSON; exit 1 when they differ")
    args = ap.parse_args(argv)
    data = build(args.anchors.read_text(encoding="utf-8"))
    text = json.dumps(data, indent=1, ensure_ascii=False) + "\n"
    if args.check:
        same = args.out.is_file() and json.loads(args.out.read_text(encoding="utf-8")) == data
        print(f"{args.out}: {'up to date' if same else 'differs from ' + str(args.anchors)}")
        return 0 if same else 1
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(text, encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
