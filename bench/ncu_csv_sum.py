"""Sums `ncu --csv --metrics gpu__time_duration.sum` output (one row per kernel launch): the GPU's
busy time, and the kernels grouped by name (launches, total µs, share), largest first.

    python3 bench/ncu_csv_sum.py ncu_boot.csv [--top 30] [--wall-ms 46.8]

With --wall-ms (the asynchronous run's time), the idle time (launch gaps and host work) is
wall - busy. With --launches, one line per launch in order with every metric the CSV holds
(DRAM bytes as MB and the achieved bandwidth when dram__bytes.sum was collected, pipe
utilizations as percentages): the per-kernel tables of bench/NOTES.md.
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


def print_launches(rows: list[dict[str, str]]) -> None:
    """One line per launch (ID order): kernel, grid, block, then its metrics."""
    by_id: dict[int, dict[str, object]] = {}
    for r in rows:
        if not r.get("ID", "").isdigit():
            continue
        e = by_id.setdefault(int(r["ID"]), {"name": short(r["Kernel Name"]), "grid": r["Grid Size"],
                                             "block": r["Block Size"], "m": {}})
        try:
            v = float(r["Metric Value"].replace(",", ""))
        except ValueError:
            continue
        e["m"][r["Metric Name"]] = (v, r["Metric Unit"])  # type: ignore[index]
    for i in sorted(by_id):
        e = by_id[i]
        m = e["m"]
        cols = [f"{i:4d} {str(e['name'])[:40]:40s} {str(e['grid']):>14s} {str(e['block']):>12s}"]
        us = None
        if "gpu__time_duration.sum" in m:
            v, unit = m["gpu__time_duration.sum"]
            us = v * UNITS.get(unit, 1.0)
            cols.append(f"{us:8.1f} us")
        if "dram__bytes.sum" in m:
            v, unit = m["dram__bytes.sum"]
            scale = {"byte": 1, "Kbyte": 1e3, "Mbyte": 1e6, "Gbyte": 1e9}.get(unit, 1)
            mb = v * scale / 1e6
            cols.append(f"{mb:8.1f} MB")
            if us:
                cols.append(f"{mb / us:6.2f} TB/s")
        for k, (v, unit) in sorted(m.items()):
            if k in ("gpu__time_duration.sum", "dram__bytes.sum"):
                continue
            label = k.replace("sm__inst_executed_pipe_", "").replace("sm__pipe_", "")
            label = label.replace(".avg.pct_of_peak_sustained_active", "%")
            label = label.replace("launch__registers_per_thread", "regs")
            label = label.replace("smsp__average_warps_issue_stalled_", "stall_")
            label = label.replace("_per_issue_active.ratio", "")
            label = label.replace("smsp__average_warps_active", "cycles_per_issue")
            label = label.replace("smsp__issue_active.avg.per_cycle_active", "issue_rate")
            cols.append(f"{label}={v:g}")
        print("  ".join(cols))


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("path")
    p.add_argument("--top", type=int, default=30)
    p.add_argument("--wall-ms", type=float, default=None)
    p.add_argument("--launches", action="store_true", help="one line per launch, every metric")
    a = p.parse_args()
    text = open(a.path, encoding="utf-8", errors="replace").read()
    start = text.find('"ID"')
    if start < 0:
        raise SystemExit("no ncu CSV table found")
    rows = list(csv.DictReader(io.StringIO(text[start:])))
    if a.launches:
        print_launches(rows)
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
