"""Summarizes `ncu --print-summary per-kernel --metrics gpu__time_duration.sum` output: one line
per kernel (invocations, total and average µs), largest total first. Usage: ncu_summary.py FILE"""
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
