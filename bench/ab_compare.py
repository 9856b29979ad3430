"""Compare two sets of `veil bench --json` results (two commits, or two settings, timed
alternately in one call): for every parameter row and operation that both sides measured on the
GPU, the median over the rounds of each side's medians, and their ratio b / a.

Usage: python3 bench/ab_compare.py A1.json [A2.json ...] --b B1.json [B2.json ...]
       [--markdown PATH]

Prints a markdown table (one line per row and operation) and the geometric mean of the ratios;
``--markdown`` also writes it to PATH. Only Veil's own GPU results are compared (peers and CPU
backends are left out).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
from pathlib import Path


def medians(paths: list[str]) -> dict[tuple[str, str], float]:
    """(row name, operation) -> the median over the files of the GPU median in microseconds."""
    seen: dict[tuple[str, str], list[float]] = {}
    for path in paths:
        data = json.loads(Path(path).read_text())
        for r in data.get("results", []):
            if r.get("kind") != "veil" or not str(r.get("device", "")).startswith("cuda"):
                continue
            for op, us in (r.get("median_us") or {}).items():
                if isinstance(us, (int, float)) and us > 0:
                    seen.setdefault((r["row"]["name"], op), []).append(float(us))
    return {k: statistics.median(v) for k, v in seen.items()}


def table(a: dict[tuple[str, str], float], b: dict[tuple[str, str], float]) -> str:
    keys = [k for k in a if k in b]
    lines = ["| row | operation | a (µs) | b (µs) | b / a |", "|---|---|---:|---:|---:|"]
    ratios = []
    for row, op in keys:
        ratio = b[(row, op)] / a[(row, op)]
        ratios.append(ratio)
        lines.append(f"| {row} | {op} | {a[(row, op)]:.1f} | {b[(row, op)]:.1f} | {ratio:.3f} |")
    if ratios:
        gm = math.exp(sum(math.log(x) for x in ratios) / len(ratios))
        lines.append("")
        lines.append(f"{len(ratios)} medians compared; geometric mean of b / a: {gm:.3f} "
                     f"(min {min(ratios):.3f}, max {max(ratios):.3f})")
    else:
        lines.append("")
        lines.append("no (row, operation) measured by both sides")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("a", nargs="+", help="side a's veil bench --json files")
    ap.add_argument("--b", nargs="+", required=True, help="side b's veil bench --json files")
    ap.add_argument("--markdown", help="also write the table here")
    args = ap.parse_args()
    text = table(medians(args.a), medians(args.b))
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")


if __name__ == "__main__":
    main()
