"""Reproduces Table 10 of Al Badawi, Polyakov et al., "Implementation and Performance Evaluation
of RNS Variants of the BFV Scheme" (IEEE TETC 2021): the largest multiplicative depth
each RNS variant of BFV actually reaches.

Procedure (the paper's §V-E): encrypt a plaintext mu (a uniformly random polynomial mod t, in
coefficient encoding: plaintexts without batching), then multiply it again and again by one
encryption of 1 (multiply + relinearize), decrypting after each product; the run's depth is the
number of products that still decrypt to mu. Each run draws fresh keys and randomness. The paper
reports, per parameter set, the lowest depth over its runs (1024 in the caption, 210 in the
text); we report the lowest, median and highest over --runs runs (default 16).

Parameters (the paper's): 30-bit primes with ceil(log2 q) = 60, 120, 360, 600, 1020, 1770 for
N = 2^12 .. 2^16 (two rows at 2^16); t = 2 and 65537; HPS and BEHZ. Veil's key switching is
hybrid, so k more 30-bit special primes are appended (k = 1, 1, 2, 2, 3, 4; alpha = k primes per
digit); they lower the relinearization noise below the multiplication noise and do not change Q.

Usage: python bench/depth_table10.py [--device cuda] [--runs 16] [--rows 12,13,14,15,16a,16b]
       [--json out.json] [--markdown out.md]
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import time

import numpy as np
import veil
from veil import _core

# (log2 N, ceil(log2 q), special primes k); the paper's table: {t: (Max. Est., BEHZ, HPS)}.
ROWS = {
    "12": (12, 60, 1, {2: (1, 2, 2), 65537: (0, 0, 1)}),
    "13": (13, 120, 1, {2: (5, 5, 6), 65537: (2, 2, 3)}),
    "14": (14, 360, 2, {2: (18, 16, 21), 65537: (10, 9, 10)}),
    "15": (15, 600, 2, {2: (31, 26, 35), 65537: (16, 15, 19)}),
    "16a": (16, 1020, 3, {2: (51, 43, 56), 65537: (28, 25, 30)}),
    "16b": (16, 1770, 4, {2: (90, 75, 98), 65537: (50, 44, 52)}),
}


def make_context(log_n: int, log_q: int, k: int, t: int, method: str):
    n = 1 << log_n
    primes = log_q // 30
    params = _core.EncryptionParameters("bfv")
    params.poly_modulus_degree = n
    params.coeff_modulus = _core.CoeffModulus.create(n, [30] * (primes + k))
    params.special_primes = k
    params.alpha = k
    params.plain_modulus = t
    params.mul_method = method
    bound = _core.CoeffModulus.max_bit_count(n, 128)
    qp_bits = 30 * (primes + k)
    security = 128 if qp_bits <= bound else None
    return _core.Context(params, security), security


def one_run(ctx, device: str, t: int, cap: int, rng) -> int:
    n = ctx.poly_modulus_degree
    keygen = _core.KeyGenerator(ctx, device)
    rk = keygen.create_relin_keys()
    enc = _core.Encryptor(ctx, keygen.create_public_key())
    dec = _core.Decryptor(ctx, keygen.secret_key())
    ev = _core.Evaluator(ctx)
    mu = rng.integers(0, t, n, dtype=np.uint64)
    ct = enc.encrypt(_core.Plaintext.from_coefficients(ctx, mu, device))
    one = enc.encrypt(_core.Plaintext.from_coefficients(ctx, np.array([1], dtype=np.uint64), device))
    depth = 0
    while depth < cap:
        ct = ev.relinearize(ev.multiply(ct, one), rk)
        if not np.array_equal(dec.decrypt(ct).coefficients(), mu):
            break
        depth += 1
    return depth


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--device", default="auto")
    ap.add_argument("--runs", type=int, default=16)
    ap.add_argument("--rows", default=",".join(ROWS))
    ap.add_argument("--methods", default="hps,behz")
    ap.add_argument("--plain", default="2,65537")
    ap.add_argument("--json")
    ap.add_argument("--markdown")
    ap.add_argument("--seed", type=int, default=2021)
    args = ap.parse_args(argv)
    device = veil.resolve_device(args.device)
    rng = np.random.default_rng(args.seed)
    results = []
    print(f"device {device}; {args.runs} runs per cell", flush=True)
    for row in args.rows.split(","):
        log_n, log_q, k, paper = ROWS[row]
        for t in (int(x) for x in args.plain.split(",")):
            est, p_behz, p_hps = paper[t]
            for method in args.methods.split(","):
                ctx, security = make_context(log_n, log_q, k, t, method)
                cap = int(max(p_hps, est) * 1.5) + 6
                t0 = time.time()
                depths = [one_run(ctx, device, t, cap, rng) for _ in range(args.runs)]
                rec = {"log_n": log_n, "log_q": log_q, "t": t, "method": method,
                       "special_primes": k, "security": security, "runs": args.runs,
                       "min": min(depths), "median": statistics.median(depths),
                       "max": max(depths), "depths": depths,
                       "paper_estimate": est, "paper": p_hps if method == "hps" else p_behz,
                       "seconds": round(time.time() - t0, 1)}
                results.append(rec)
                print(f"N=2^{log_n} log q={log_q} t={t} {method}: Veil min {rec['min']} "
                      f"(median {rec['median']}, max {rec['max']}) | paper {rec['paper']} "
                      f"(est. {est}) | {rec['seconds']} s", flush=True)
    lines = [("| log2 N | log2 q | t | Max. est. (paper) | BEHZ paper | BEHZ Veil min / median / max | "
              "HPS paper | HPS Veil min / median / max | security of QP |"),
             "|---|---|---|---|---|---|---|---|---|"]
    key = {(r["log_n"], r["log_q"], r["t"], r["method"]): r for r in results}
    for row in args.rows.split(","):
        log_n, log_q, _, paper = ROWS[row]
        for t in (int(x) for x in args.plain.split(",")):
            est, p_behz, p_hps = paper[t]
            cells = []
            for method, p in (("behz", p_behz), ("hps", p_hps)):
                r = key.get((log_n, log_q, t, method))
                cells += [str(p), f"{r['min']} / {r['median']:g} / {r['max']}" if r else "-"]
                sec = r["security"] if r else None
            lines.append(f"| {log_n} | {log_q} | {t} | {est} | {cells[0]} | {cells[1]} | {cells[2]} | "
                         f"{cells[3]} | {'128-bit' if sec else 'above the 128-bit bound'} |")
    table = "\n".join(lines)
    print(table)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "veil": veil.__version__, "results": results}, f, indent=1)
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
