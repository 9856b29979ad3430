"""Rotations: moving encrypted slots with Galois keys.

Shows: BFV/BGV slots as a 2 x (N/2) matrix (``rotate_rows`` cycles both rows left or right,
``rotate_columns`` swaps the rows), CKKS ``rotate`` over N/2 slots, Galois keys for chosen steps
only (``galois_steps=[...]``: less memory and key-generation time than every power of two),
hoisted rotations (``rotate_many``: one shared decomposition for several steps), and a
rotate-and-add sum of all slots. Every result is compared with ``numpy.roll``.

Run it::

    python examples/rotations.py

Parameters: N = 4096 for BFV (two rows of 2048 slots) and N = 8192 for CKKS (4096 slots).
A few seconds on a CPU.
"""

from __future__ import annotations

import numpy as np

import veil


def rows_rolled(values: np.ndarray, steps: int) -> np.ndarray:
    """The BFV slot matrix (two rows of N/2) with each row rotated left by ``steps``."""
    top, bottom = np.split(values, 2)
    return np.concatenate([np.roll(top, -steps), np.roll(bottom, -steps)])


def main() -> None:
    # Galois keys for every power of two (and the row swap): any step works by composing at
    # most log2(N/2) rotations.
    ctx = veil.bfv(poly_modulus_degree=4096, plain_modulus=65537, galois_steps="power_of_two",
                   device="auto")
    n = ctx.slot_count
    m = np.arange(n) % 1000
    ct = ctx.encrypt(m)
    for steps in (1, 5, -3):
        got = ctx.decrypt(ct.rotate_rows(steps))
        assert np.array_equal(got, rows_rolled(m, steps)), steps
    print(f"BFV rotate_rows by 1, 5, -3 on {ctx.device}: match numpy.roll per row")
    swapped = ctx.decrypt(ct.rotate_columns())
    assert np.array_equal(swapped, np.concatenate([m[n // 2:], m[:n // 2]]))
    print("BFV rotate_columns: the two rows swapped")

    # Hoisted: several rotations of one ciphertext share one key-switching decomposition.
    steps = [1, 2, 3, 7]
    for s, r in zip(steps, ct.rotate_many(steps)):
        assert np.array_equal(ctx.decrypt(r), rows_rolled(m, s)), s
    print(f"BFV rotate_many({steps}): each equals its own rotate_rows")

    # CKKS with keys for the steps a sum over 16 slots needs (1, 2, 4, 8) and nothing else.
    ck = veil.ckks(poly_modulus_degree=8192, galois_steps=[1, 2, 4, 8], device="auto")
    x = np.random.default_rng(3).uniform(-1, 1, ck.slot_count)
    cx = ck.encrypt(x)
    got = ck.decrypt(cx.rotate(4))
    assert veil.ckks.precision(np.roll(x, -4), got)["min_bits"] > 15
    print("CKKS rotate(4): matches numpy.roll")

    # Rotate-and-add: after log2(16) steps, slot i holds x[i] + ... + x[i + 15] (mod N/2).
    acc = cx
    for s in (1, 2, 4, 8):
        acc = acc + acc.rotate(s)
    want = sum(np.roll(x, -k) for k in range(16))
    stats = veil.ckks.precision(want, ck.decrypt(acc))
    assert stats["min_bits"] > 15, stats
    print(f"CKKS sums of 16 consecutive slots by rotate-and-add: {stats['min_bits']:.1f} bits")

    hoisted = cx.rotate_many([1, 2, 4, 8])
    for s, r in zip((1, 2, 4, 8), hoisted):
        assert veil.ckks.precision(np.roll(x, -s), ck.decrypt(r))["min_bits"] > 15, s
    print("CKKS rotate_many([1, 2, 4, 8]): matches numpy.roll")
    print("rotations: OK")


if __name__ == "__main__":
    main()
