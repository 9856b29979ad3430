"""Kernels of one multiply + relinearize (or rotate, or rescale), for Nsight Compute (bench/NOTES.md).

Runs multiply + relinearize on the GPU for one `veil bench` row (the row's name as `veil bench`
prints it, or a unique part of it), ``--iters`` times after a warm-up, between
cudaProfilerStart/Stop, and prints the host wall time per operation. Under Nsight Compute with
``--profile-from-start off`` only those ``iters`` operations are profiled:

    python3 bench/trace_ops.py ckks "bootparam_40 N=65536 47" --iters 200
    ncu --profile-from-start off --csv --metrics gpu__time_duration.sum \\
        python3 bench/trace_ops.py ckks "bootparam_40 N=65536 47" --iters 1
"""
from __future__ import annotations

import argparse
import ctypes
import time

import numpy as np
from veil import _bench_rows, _core


def cudart() -> ctypes.CDLL | None:
    for name in ("libcudart.so", "libcudart.so.13", "libcudart.so.12"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scheme", choices=["bfv", "bgv", "ckks"])
    ap.add_argument("row", help="a unique part of the row name, e.g. 'N=16384 BFVDefault'")
    ap.add_argument("--iters", type=int, default=20)
    ap.add_argument("--op", choices=["mul_relin", "rotate", "rescale"], default="mul_relin",
                    help="the operation traced (rotate: by one step, rotate_vector for CKKS and "
                    "rotate_rows for BFV/BGV; rescale: CKKS rescale_to_next of the product)")
    a = ap.parse_args()
    rows = [r for r in _bench_rows.select_rows("all", scheme=a.scheme) if a.row in r.name]
    if len(rows) != 1:
        raise SystemExit(f"row: expected one match for {a.row!r}, got {[r.name for r in rows]}")
    row = rows[0]
    ctx, _ = _bench_rows.make_context(row)
    n = row.n
    kg = _core.KeyGenerator(ctx, "cuda", None)
    rlk = kg.create_relin_keys()
    enc = _core.Encryptor(ctx, kg.create_public_key(), None)
    ev = _core.Evaluator(ctx)
    if a.scheme == "ckks":
        level = row.level(ctx.max_level)
        # 2^40 leaves a rescalable product (2^80 over the top block) for --op rescale.
        scale = 2.0**40 if a.op == "rescale" else 2.0**20
        pt = _core.CKKSEncoder(ctx).encode_real(np.linspace(-1, 1, n // 2), scale, level, "cuda")
    else:
        pt = _core.BatchEncoder(ctx).encode_unsigned(np.arange(n, dtype=np.uint64) % 7, "cuda")
    x, y = enc.encrypt(pt), enc.encrypt(pt)
    if a.op == "rescale":
        if a.scheme != "ckks":
            raise SystemExit("op: rescale is CKKS only")
        prod = ev.relinearize(ev.multiply(x, y), rlk)

        def op():
            ev.rescale_to_next(prod)
    elif a.op == "rotate":
        gk = kg.create_galois_keys([1], False)
        rot = ev.rotate_vector if a.scheme == "ckks" else ev.rotate_rows

        def op():
            rot(x, 1, gk)
    else:
        def op():
            ev.relinearize(ev.multiply(x, y), rlk)
    for _ in range(10):
        op()
    _core.synchronize("cuda")
    lib = cudart()
    if lib:
        lib.cudaProfilerStart()
    t0 = time.perf_counter()
    for _ in range(a.iters):
        op()
    _core.synchronize("cuda")
    t1 = time.perf_counter()
    if lib:
        lib.cudaProfilerStop()
    print(f"{row.name}: {a.iters} x {a.op}, host wall {1e6 * (t1 - t0) / a.iters:.1f} us each")


if __name__ == "__main__":
    main()
