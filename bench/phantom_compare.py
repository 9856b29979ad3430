"""Veil's small GPU operations beside Phantom's, from one call's logs (issue 25, item 3).

Reads Phantom's own benchmark output (``bfv_bench``, ``bgv_bench``, ``ckks_bench`` of
encryptorion-lab/phantom-fhe: a parameter banner per row, then ``function,trials,median time
(us),...`` lines, CUDA events, median of 100) and ``bench/small_ops.py --json`` (Veil on the same
rows, ``veil bench --rows phantom``: the median of 100 calls with CUDA events around each). Rows
are matched by scheme, N and the primes' bit sizes; the table gives Veil / Phantom per
operation (below 1 Veil is faster): the median over the rows, the range, and each row.

Phantom times ``add_inplace`` and ``multiply_plain`` in place on a copy made outside its timer,
so Veil's ``add_inplace`` and ``multiply_plain_inplace`` are the like-for-like rows; Veil's out of
place ``add`` and ``multiply_plain`` are shown against the same Phantom numbers.

Two tables: ``peer_us`` (Veil timed with Phantom's own loop, small_ops.py's ``peer``: the
like-for-like one) and ``event_us`` (Veil's call on an idle GPU with its result released inside
the events, ``veil bench``'s measure).

Usage: python bench/phantom_compare.py --veil small_ops.json PHANTOM_LOG [PHANTOM_LOG ...]
       [--markdown PATH]
"""

from __future__ import annotations

import argparse
import json
import re
import statistics
from typing import Any

#: (Veil's op in small_ops.py, Phantom's timer names in order of preference: its CKKS benchmark
#: times `add`, its BFV/BGV benchmarks `add_inplace`)
PAIRS = (
    ("encode", ("encode",)),
    ("decrypt", ("decrypt",)),
    ("add_inplace", ("add_inplace", "add")),
    ("add", ("add_inplace", "add")),
    ("multiply_plain_inplace", ("multiply_plain",)),
    ("multiply_plain", ("multiply_plain",)),
)

Key = tuple[str, int, tuple[int, ...]]


def parse_phantom(text: str) -> dict[Key, dict[str, float]]:
    """{(scheme, N, primes' bits): {timer name: median µs}} from one or more benchmark logs."""
    rows: dict[Key, dict[str, float]] = {}
    scheme, n, current = "", 0, None
    for line in text.splitlines():
        if m := re.match(r"\|\s+scheme:\s+(\w+)", line):
            scheme = m.group(1).lower()
        elif m := re.match(r"\|\s+poly_modulus_degree:\s+(\d+)", line):
            n = int(m.group(1))
        elif m := re.match(r"\|\s+coeff_modulus size:\s+\d+\s+\(([\d +]+)\) bits", line):
            bits = tuple(int(b) for b in m.group(1).split("+"))
            current = rows.setdefault((scheme, n, bits), {})
        elif current is not None and (m := re.match(r"([a-z_]+),(\d+),([\d.eE+-]+),", line)):
            current[m.group(1)] = float(m.group(3))
    return rows


def bits_of(row: str) -> tuple[int, ...]:
    """The primes' bit sizes of a Veil row name ("N=8192 3×54 + 1×56 (P=1)")."""
    spec = re.sub(r"\(.*?\)", "", row.split(" ", 1)[1] if row.startswith("N=") else row)
    out: list[int] = []
    for part in spec.replace(" ", "").split("+"):
        count, _, size = part.partition("×")
        out += [int(size)] * int(count) if size else [int(count)]
    return tuple(out)


def n_of_row(row: str) -> int:
    """N of a Veil row name ("N=8192 ..."), 0 when the name does not say."""
    m = re.match(r"N=(\d+)", row)
    return int(m.group(1)) if m else 0


def compare(veil: list[dict[str, Any]], phantom: dict[Key, dict[str, float]],
            field: str = "event_us") -> dict[tuple[str, str], list[tuple[str, float, float]]]:
    """{(scheme, Veil op): [(row, Veil µs, Phantom µs)]} over the rows both measured, Veil's time
    read from `field` of each record (records without it are left out)."""
    out: dict[tuple[str, str], list[tuple[str, float, float]]] = {}
    by_row: dict[tuple[str, str], dict[str, float]] = {}
    for rec in veil:
        if field in rec:
            by_row.setdefault((rec["scheme"], rec["row"]), {})[rec["op"]] = rec[field]
    for (scheme, row), ops in by_row.items():
        bits, n_row = bits_of(row), n_of_row(row)
        match = [v for (s, n, b), v in phantom.items()
                 if s == scheme and sorted(b) == sorted(bits) and n == n_row]
        if len(match) != 1:
            continue
        for ours, names in PAIRS:
            theirs = next((t for t in names if t in match[0]), None)
            if ours in ops and theirs is not None:
                out.setdefault((scheme, ours), []).append((row, ops[ours], match[0][theirs]))
    return out


def markdown(table: dict[tuple[str, str], list[tuple[str, float, float]]]) -> str:
    lines = ["| scheme | op | Veil / Phantom: median (min-max) | rows | per row (Veil / Phantom µs) |",
             "|---|---|---|---|---|"]
    for (scheme, op), rows in sorted(table.items()):
        r = [v / p for _, v, p in rows]
        cells = "; ".join(f"{row}: {v:.1f} / {p:.1f}" for row, v, p in rows)
        lines.append(f"| {scheme.upper()} | {op} | {statistics.median(r):.2f} "
                     f"({min(r):.2f}-{max(r):.2f}) | {len(r)} | {cells} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--veil", required=True, help="bench/small_ops.py --json output")
    ap.add_argument("phantom", nargs="+", help="Phantom's bfv/bgv/ckks_bench output")
    ap.add_argument("--markdown")
    a = ap.parse_args(argv)
    with open(a.veil) as f:
        veil = json.load(f)
    text = ""
    for path in a.phantom:
        with open(path, errors="replace") as f:
            text += f.read() + "\n"
    theirs = parse_phantom(text)
    md = ("Veil timed with Phantom's loop (`peer_us`):\n\n" + markdown(compare(veil, theirs, "peer_us"))
          + "\n\nVeil's call on an idle GPU (`event_us`, `veil bench`'s measure):\n\n"
          + markdown(compare(veil, theirs, "event_us")))
    print(md)
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(md + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
