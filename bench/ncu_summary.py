"""Summarizes `ncu --print-summary per-kernel --metrics gpu__time_duration.sum` output: one line
per kernel (invocations, min/max/average), and with --total the sum over every invocation of
every kernel (the GPU's busy time). Usage: ncu_summary.py FILE [--total]"""
import re
import sys

text = open(sys.argv[1], encoding="utf-8", errors="replace").read()
rows = []
name = None
for line in text.splitlines():
    if re.match(r"^\s{2}\S", line) and "(" in line and "gpu__time_duration" not in line:
        name = line.strip()
    elif "gpu__time_duration.sum" in line and name:
        parts = line.split()
        # metric name, unit, then min/max/average (per-kernel summary)
        nums = [p for p in parts if re.fullmatch(r"[\d.,]+", p)]
        unit = parts[1] if len(parts) > 1 else ""
        inv = re.search(r"\((\d+)\)\s*$", name)
        rows.append((name, unit, nums, inv.group(1) if inv else "?"))
        name = None
for n, unit, nums, inv in rows:
    print(f"{inv:>5} x {unit} {' '.join(nums)} | {n[:160]}")

if "--total" in sys.argv[2:]:
    scale = {"ns": 1e-3, "nsecond": 1e-3, "usecond": 1.0, "us": 1.0, "msecond": 1e3, "ms": 1e3}
    total = 0.0
    for n, unit, nums, inv in rows:
        if inv != "?" and len(nums) >= 3:
            total += int(inv) * float(nums[2].replace(",", "")) * scale.get(unit, 1.0)
    print(f"total kernel time: {total:.1f} us over {sum(int(r[3]) for r in rows if r[3] != '?')} "
          "launches")
