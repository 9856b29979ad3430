"""Sums `ncu --csv --metrics gpu__time_duration.sum` output (one row per kernel launch): the GPU's
busy time, and the kernels grouped by name (launches, total µs, share), largest first.

    python3 bench/ncu_csv_sum.py ncu_boot.csv [--top 30] [--wall-ms 46.8]

With --wall-ms (the asynchronous run's time), the idle time (launch gaps and host work) is
wall - busy.
"""
from __future__ import annotations

import argparse
import csv
import io
import re
from collections import defaultdict

UNITS = {"nsecond": 1e-3, "ns": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3,
         "second": 1e6, "s": 1e6}


def short(name: str) -> str:
    """A kernel's name without template arguments and parameter lists, with the functor that
    a generic launcher runs (veil_limb_kernel<...poly::tensor...> -> 'limb:tensor')."""
    m = re.search(r"(?:poly|rns|ntt|keyswitch|ckks|rlwe)::(?:<unnamed>::)?(\w+)<", name)
    # kernels in an anonymous namespace (ks_inner_kernel, mod_up_smem_kernel) keep their own name
    clean = re.sub(r"(?:<unnamed>|\(anonymous namespace\)|^(?:void )?unnamed>)::", "", name)
    base = re.match(r"(?:void )?([\w:]+)", clean)
    head = base.group(1) if base else name[:40]
    if m and head.startswith("veil_limb_kernel"):
        return f"limb:{m.group(1)}"
    m2 = re.search(r"unnamed>::(\w+)<", name)
    if m2 and head.startswith("veil_"):
        return f"{head}:{m2.group(1)}"
    return head


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path")
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--wall-ms", type=float, default=None)
    a = p.parse_args()
    text = open(a.path, encoding="utf-8", errors="replace").read()
    start = text.find('"ID"')
    if start < 0:
        raise SystemExit("no ncu CSV table found")
    rows = csv.DictReader(io.StringIO(text[start:]))
    total, groups = 0.0, defaultdict(lambda: [0, 0.0])
    for r in rows:
        if r.get("Metric Name") != "gpu__time_duration.sum":
            continue
        us = float(r["Metric Value"].replace(",", "")) * UNITS.get(r["Metric Unit"], 1.0)
        total += us
        g = groups[short(r["Kernel Name"])]
        g[0] += 1
        g[1] += us
    launches = sum(g[0] for g in groups.values())
    print(f"GPU busy: {total / 1e3:.2f} ms over {launches} launches")
    if a.wall_ms:
        print(f"wall {a.wall_ms:.2f} ms -> idle (launch gaps, host) {a.wall_ms - total / 1e3:.2f} ms")
    print(f"{'kernel':48s} {'launches':>8s} {'ms':>8s} {'share':>6s} {'us/launch':>9s}")
    for name, (n, us) in sorted(groups.items(), key=lambda kv: -kv[1][1])[:a.top]:
        print(f"{name[:48]:48s} {n:8d} {us / 1e3:8.2f} {us / total:6.1%} {us / n:9.1f}")


if __name__ == "__main__":
    main()
