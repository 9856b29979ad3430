"""What level-adaptive dnum would buy: multiply + relinearize with fewer special primes at low levels.

Hybrid key switching (Han-Ki, CT-RSA 2020) at a level with L limbs and k special primes splits
the ciphertext into dnum = ceil(L / alpha) digits of alpha = k primes, raises each to L + k limbs
(ModUp), and lowers the sum by P (ModDown). A chain built for its top level (Cheddar's
bootparam_40: 47 limbs, k = 12, dnum 4) keeps k = 12 at every level; a level-adaptive choice
(Cheddar, arXiv 2407.13055, "dnum per level") would use the k' <= 12 special primes and the
digits that cost least at each level, with keys for each k' (more key memory).

This script measures that choice without building it: for each limb count L it times
multiply + relinearize at the top level of CKKS contexts with L primes of 30 bits and k' special
primes of 31 bits (alpha = min(k', L)), N = 2^16, 32-bit words, CUDA events, the median of --runs after a
warm-up. The row with k' = 12 is today's cost at a level of L limbs; the best row is what a
level-adaptive key switch would cost there.

    python3 bench/dnum_bench.py --limbs 4 8 12 23 --runs 50 [--json out.json]
"""
from __future__ import annotations

import argparse
import json
import math
import statistics

import numpy as np
from veil import _core


def time_mul_relin(limbs: int, special: int, runs: int, device: str) -> float:
    """Median microseconds of multiply + relinearize at the top of a context of `limbs` Q primes
    of 30 bits and `special` special primes of 31 bits (alpha = min(special, limbs): a level below
    the chain's alpha has one digit of all its limbs), N = 2^16."""
    n = 1 << 16
    params = _core.EncryptionParameters("ckks")
    params.poly_modulus_degree = n
    params.coeff_modulus = [int(q) for q in _core.CoeffModulus.create(n, [30] * limbs + [31] * special)]
    params.special_primes = special
    params.alpha = min(special, limbs)
    params.word_bits = 32
    ctx = _core.Context(params, None)
    kg = _core.KeyGenerator(ctx, device, None)
    rlk = kg.create_relin_keys()
    enc = _core.Encryptor(ctx, kg.create_public_key(), None)
    ev = _core.Evaluator(ctx)
    pt = _core.CKKSEncoder(ctx).encode_real(np.linspace(-1, 1, n // 2), 2.0**20, ctx.max_level,
                                            device)
    x, y = enc.encrypt(pt), enc.encrypt(pt)
    timer = _core.Timer(device)
    ev.relinearize(ev.multiply(x, y), rlk)  # warm-up
    times = []
    for _ in range(runs):
        timer.start()
        ev.relinearize(ev.multiply(x, y), rlk)
        times.append(timer.stop() * 1000.0)
    return statistics.median(times)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--limbs", type=int, nargs="+", default=[4, 8, 12, 23])
    ap.add_argument("--chain-special", type=int, default=12,
                    help="the chain's special primes (bootparam_40: 12)")
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--json", default=None)
    a = ap.parse_args()
    rows = []
    print("| limbs L | special k' | dnum | mul+relin (µs) | vs k' = chain |")
    print("|---|---|---|---|---|")
    for limbs in a.limbs:
        ks = sorted({math.ceil(limbs / d) for d in range(1, 5)} | {a.chain_special})
        ks = [k for k in ks if k <= a.chain_special]
        base = time_mul_relin(limbs, a.chain_special, a.runs, a.device)
        for k in ks:
            us = base if k == a.chain_special else time_mul_relin(limbs, k, a.runs, a.device)
            dnum = math.ceil(limbs / min(k, limbs))
            rows.append({"limbs": limbs, "special": k, "dnum": dnum, "mul_relin_us": us})
            print(f"| {limbs} | {k} | {dnum} | {us:.1f} | {us / base:.2f} |")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rows, f, indent=1)


if __name__ == "__main__":
    main()
