"""Word size on one chain (issue 25, item 4): the same ~30-bit primes in 32- and 64-bit words.

``veil bench --rows words32`` compares 32-bit words on ~30-bit primes with Phantom's 54-60-bit
primes, which changes the limb count as well as the word. This script holds the primes fixed
(the ``words32`` rows) and times each operation with ``word_bits=32`` and ``word_bits=64``,
``veil bench``'s way (CUDA events or the steady clock, median after warm-up), so that the
automatic choice can be checked per scheme, method and N.

Usage: python bench/word_size.py [--device cuda] [--max-n N] [--runs R] [--json PATH]
"""

from __future__ import annotations

import argparse
import dataclasses
import json
from typing import Any

from veil import _core
from veil._bench_ops import Policy, VeilLib, _values, time_op
from veil._bench_rows import words32_rows


def time_row(row: Any, device: str, runs: int, method: str | None) -> dict[str, float]:
    lib = VeilLib(row, device, method)
    lib.setup([1])
    x = _values(row, 1)
    px = lib.encode(x)
    cx, cy = lib.encrypt(px), lib.encrypt(px)
    timer = _core.Timer(device)
    pol = Policy(warmup=3, max_runs=runs, budget_s=None if device.startswith("cuda") else 1.0)
    ops = {
        "encode": lambda: lib.encode(x),
        "decrypt": lambda: lib.decrypt(cx),
        "add": lambda: lib.add(cx, cy),
        "multiply_plain": lambda: lib.multiply_plain(cx, px),
        "mul_relin": lambda: lib.mul_relin(cx, cy),
        "rotate": lambda: lib.rotate(cx, 1),
    }
    return {k: round(time_op(f, timer, pol)[0], 2) for k, f in ops.items()}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--max-n", type=int, default=65536)
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--json")
    a = ap.parse_args()
    out = []
    for scheme, method in (("bfv", "hps"), ("bgv", None), ("ckks", None)):
        for row in words32_rows(scheme):
            if row.n > a.max_n:
                continue
            rec: dict[str, Any] = {"scheme": scheme, "method": method, "row": row.name}
            for bits in (32, 64):
                r = dataclasses.replace(row, word_bits=bits)
                rec[f"w{bits}"] = time_row(r, a.device, a.runs, method)
            rec["ratio_32_over_64"] = {k: round(rec["w32"][k] / rec["w64"][k], 2)
                                       for k in rec["w32"]}
            print(json.dumps(rec), flush=True)
            out.append(rec)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1)


if __name__ == "__main__":
    main()
