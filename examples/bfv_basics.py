"""BFV and BGV basics: exact integer arithmetic on encrypted vectors.

Shows: a BFV context (keys made on the device: the GPU when there is one, else the CPU),
encrypting a vector of integers into N slots, ciphertext + - * ciphertext, plaintext operands
(scalars and arrays), powers, the noise budget, and BGV's modulus switching. Every result is
checked against the same arithmetic done in numpy modulo the plain modulus t.

Run it::

    python examples/bfv_basics.py

Parameters: N = 8192 (two rows of 4096 slots), t = 65537, SEAL's default 218-bit
coefficient modulus, 128-bit security. It takes about a second on a CPU.
"""

from __future__ import annotations

import numpy as np

import veil


def centered(values, t: int) -> np.ndarray:
    """Integers reduced mod t into (-t/2, t/2], the range ``ctx.decrypt`` returns."""
    r = np.mod(np.asarray(values, dtype=np.int64), t)
    return np.where(r > t // 2, r - t, r)


def main() -> None:
    ctx = veil.bfv(poly_modulus_degree=8192, plain_modulus=65537, device="auto")
    t, n = ctx.plain_modulus, ctx.slot_count
    print(f"BFV on {ctx.device}: N = {ctx.poly_modulus_degree}, t = {t}, "
          f"log2 Q = {ctx.describe()['log2_qp']} bits, security {ctx.security}")

    rng = np.random.default_rng(1)
    a = rng.integers(-100, 100, n)          # up to N slot values; fewer are padded with zeros
    b = rng.integers(-100, 100, n)
    ca, cb = ctx.encrypt(a), ctx.encrypt(b)
    print("fresh ciphertext:", ca, f"noise budget {ctx.noise_budget(ca)} bits")

    # Ciphertext-ciphertext and ciphertext-plaintext arithmetic; * relinearizes.
    c = (ca + cb) * (ca - 3) + 7 * cb - b
    got = ctx.decrypt(c)
    want = centered((a + b) * (a - 3) + 7 * b - b, t)
    assert np.array_equal(got, want), "BFV result differs from numpy"
    print("(a + b) * (a - 3) + 7 b - b:", got[:6], "... matches numpy mod t")
    print(f"noise budget left after one multiplication: {ctx.noise_budget(c)} bits")

    # Powers by repeated squaring (relinearized after each product).
    small = np.arange(n) % 7
    cube = ctx.decrypt(ctx.encrypt(small) ** 3)
    assert np.array_equal(cube, centered(small ** 3, t))
    print("x ** 3:", cube[:8])

    # BGV: the same slots and operators, plus modulus switching (drops a prime, keeps the value).
    g = veil.bgv(poly_modulus_degree=8192, plain_modulus=65537, device="auto")
    z = g.encrypt(a) * g.encrypt(b)
    low = z.mod_switch_to_next()
    assert low.level == z.level - 1
    assert np.array_equal(g.decrypt(low), centered(a * b, t))
    print(f"BGV a * b, switched from level {z.level} to {low.level}: matches numpy mod t")
    print("bfv_basics: OK")


if __name__ == "__main__":
    main()
