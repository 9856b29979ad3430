"""Bytes of every serialized object, Veil's format beside SEAL's, and save/load throughput.

BFV at N = 2^14 (SEAL's BFVDefault chain, 8 x ~48-bit Q primes + one special prime) and
N = 2^16 (31 x 54 + 56 bits: Veil's default chain), t = 20-bit batching prime, one special prime
and alpha = 1 (SEAL's key layout, so the two formats hold the same polynomials). Veil sizes are
measured here; SEAL's come from the real SEAL (bench/seal_sizes.cpp, SEAL 4.1 C++) and are read
from --seal-csv when given. Veil objects written in SEAL's format (veil.seal.save) are listed
too: unseeded and uncompressed they must equal SEAL's own sizes byte for byte.

Usage: python bench/serialization_sizes.py [--n 16384,65536] [--seal-csv sizes.csv]
       [--markdown out.md]
"""

from __future__ import annotations

import argparse
import csv
import sys
import time

import numpy as np
import veil
from veil import _core


def objects(n: int):
    params = _core.EncryptionParameters("bfv")
    params.poly_modulus_degree = n
    params.coeff_modulus = _core.CoeffModulus.bfv_default(n)
    params.plain_modulus = _core.PlainModulus.batching(n, 20)
    ctx = _core.Context(params, None)
    kg = _core.KeyGenerator(ctx, "cpu", 1)
    be = _core.BatchEncoder(ctx)
    pt = be.encode_unsigned(np.arange(n, dtype=np.uint64) % 1000, "cpu")
    pk = kg.create_public_key()
    yield ctx, "secret_key", kg.secret_key()
    yield ctx, "public_key", pk
    yield ctx, "relin_keys", kg.create_relin_keys()
    yield ctx, "galois_key_one_step", kg.create_galois_keys([1], False)
    yield ctx, "plaintext", pt
    yield ctx, "ciphertext", _core.Encryptor(ctx, pk, 2).encrypt(pt)
    yield ctx, "ciphertext_symmetric", _core.Encryptor(ctx, kg.secret_key(), 3).encrypt(pt)


def timed(fn):
    t0 = time.perf_counter()
    out = fn()
    return out, time.perf_counter() - t0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--n", default="16384,65536")
    ap.add_argument("--seal-csv")
    ap.add_argument("--markdown")
    args = ap.parse_args(argv)
    seal = {}
    if args.seal_csv:
        with open(args.seal_csv) as f:
            for r in csv.DictReader(f):
                seal[(int(r["N"]), r["object"])] = r
    lines = [("| N | object | Veil none | Veil zstd | Veil seeded | Veil seeded + zstd | "
              "SEAL none | SEAL zstd | SEAL seeded | SEAL seeded + zstd | Veil in SEAL format |"),
             "|---|---|---|---|---|---|---|---|---|---|---|"]
    speed = []
    mb = lambda b: f"{b / 2**20:.2f} MiB" if b >= 2**20 else f"{b / 2**10:.1f} KiB"
    for n in (int(x) for x in args.n.split(",")):
        for ctx, name, obj in objects(n):
            full = obj.to_bytes("none", seeded=False)
            zst, t_save = timed(lambda o=obj: o.to_bytes("zstd", seeded=False))
            _, t_load = timed(lambda o=obj, z=zst, c=ctx: type(o).from_bytes(z, c, "cpu"))
            seedable = name not in ("secret_key", "plaintext", "ciphertext")
            seeded = obj.to_bytes("none", seeded=True) if seedable else None
            seeded_z = obj.to_bytes("zstd", seeded=True) if seedable else None
            in_seal = len(veil.seal.save(obj))
            key = name.replace("ciphertext_symmetric", "ciphertext_symmetric_seeded")
            s = seal.get((n, key), {})
            s_seeded = seal.get((n, name + "_seeded"), {}) if name not in ("ciphertext_symmetric",) else s
            def cell(b):
                return mb(int(b)) if b else "-"
            lines.append(
                f"| 2^{n.bit_length() - 1} | {name} | {mb(len(full))} | {mb(len(zst))} | "
                f"{mb(len(seeded)) if seeded else '-'} | {mb(len(seeded_z)) if seeded_z else '-'} | "
                f"{cell(s.get('none')) if name != 'ciphertext_symmetric' else '-'} | "
                f"{cell(s.get('zstd')) if name != 'ciphertext_symmetric' else '-'} | "
                f"{cell(s_seeded.get('none')) if seedable else '-'} | "
                f"{cell(s_seeded.get('zstd')) if seedable else '-'} | {mb(in_seal)} |")
            if name != "ciphertext_symmetric" and s and int(s["none"]) != in_seal:
                print(f"warning: {name} at N={n}: Veil's SEAL-format bytes {in_seal} != SEAL's {s['none']}")
            speed.append((n, name, len(full), t_save, t_load))
            print(lines[-1], flush=True)
    table = "\n".join(lines)
    print()
    print(table)
    print("\nzstd save / load throughput on the CPU (MB/s of uncompressed bytes):")
    for n, name, size, ts, tl in speed:
        if size > 2**24:
            print(f"  N=2^{n.bit_length() - 1} {name}: save {size / ts / 1e6:.0f}, load {size / tl / 1e6:.0f}")
    if args.markdown:
        with open(args.markdown, "w") as f:
            f.write(table + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
