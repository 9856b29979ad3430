"""CKKS basics: approximate arithmetic on encrypted real (or complex) vectors.

Shows: a CKKS context, encryption of N/2 real numbers at a scale of 2^40, multiplication and
rescaling, how levels and scales move through a computation, adding values that live at
different levels, plaintext operands, complex slots, and ``veil.ckks.precision`` to measure
the error. Every result is compared with the same computation in float64 numpy.

Run it::

    python examples/ckks_basics.py

Parameters: N = 8192 (4096 slots), the default 60 + 40 + 40 + 60-bit chain (two levels of
multiplication), 128-bit security. About a second on a CPU.
"""

from __future__ import annotations

import numpy as np

import veil


def main() -> None:
    # auto_rescale=False: this example rescales by hand to show where the levels go.
    ck = veil.ckks(poly_modulus_degree=8192, scale=2**40, auto_rescale=False, device="auto")
    print(f"CKKS on {ck.device}: N = {ck.poly_modulus_degree}, {ck.slot_count} slots, "
          f"scale 2^{np.log2(ck.scale):.0f}, levels {ck.max_level}..0")
    for row in ck.modulus_chain():
        print(f"  level {row['level']}: {len(row['primes'])} primes, {row['bits']} bits")

    x = np.linspace(-1, 1, ck.slot_count)
    cx = ck.encrypt(x)
    print("fresh:", cx)

    # A product has scale ~2^80; rescale divides by the top prime (~2^40) and drops a level.
    sq = cx * cx
    print("x * x before rescale:", sq)
    sq = sq.rescale()
    print("x * x after rescale: ", sq)

    # A plaintext factor is encoded at the context's scale, so x * 0.5 needs a rescale too; it
    # then sits at x^2's level. Adding a ciphertext of another level needs mod_switch_to first
    # (x.mod_switch_to(sq.level)), and scales must agree up to ~1e-6 (rescaling by different
    # ~40-bit primes; set_scale declares an exact one). A plaintext addend (- 0.25) is encoded
    # at the ciphertext's own scale and level.
    half = (cx * 0.5).rescale()
    poly = sq + half - 0.25
    got = ck.decrypt(poly)
    want = x * x + 0.5 * x - 0.25
    stats = veil.ckks.precision(want, got)
    print(f"x^2 + x/2 - 1/4: max error {stats['max_error']:.2e} "
          f"({stats['min_bits']:.1f} bits), mean {stats['mean_bits']:.1f} bits")
    assert stats["min_bits"] > 15, stats

    # x^2 + x: x (level 2) moved down to x^2's level 1 first (mod_switch_to drops primes and
    # keeps the scale).
    both = sq + cx.mod_switch_to(sq.level)
    stats = veil.ckks.precision(x * x + x, ck.decrypt(both))
    print(f"x^2 + x: {stats['min_bits']:.1f} bits")
    assert stats["min_bits"] > 15, stats

    # The second and last multiplication level: x^4 = (x^2)^2.
    x4 = (sq * sq).rescale()
    assert x4.level == 0
    stats = veil.ckks.precision(x ** 4, ck.decrypt(x4))
    print(f"x^4 at level {x4.level}: {stats['min_bits']:.1f} bits of precision")
    assert stats["min_bits"] > 15, stats

    # Complex slots: decrypt returns complex128 when the input was complex.
    z = np.exp(2j * np.pi * np.arange(8) / 8)
    cz = ck.encrypt(z)
    prod = (cz * cz).rescale()
    out = ck.decrypt(prod)[:8]
    assert out.dtype == np.complex128
    assert veil.ckks.precision(z * z, out)["min_bits"] > 15
    print("z * z for the 8th roots of unity:", np.round(out[:4], 6), "...")

    # auto_rescale=True rescales after every multiplication (fused with relinearization).
    ar = veil.ckks(poly_modulus_degree=8192, auto_rescale=True, device="auto")
    y = ar.encrypt(x) * ar.encrypt(x)
    assert y.level == ar.max_level - 1
    assert veil.ckks.precision(x * x, ar.decrypt(y))["min_bits"] > 15
    print("auto_rescale: x * x is at level", y.level, "without an explicit rescale()")
    print("ckks_basics: OK")


if __name__ == "__main__":
    main()
