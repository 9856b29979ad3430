"""Tensor helpers: sums, inner products, vector-matrix products and polynomials on ciphertexts.

Shows: ``ct.sum``, ``ct.dot``, ``ct @ matrix`` (Halevi-Shoup's diagonal method with baby-step
giant-step), ``ct.polyval`` and ``ct.evaluate`` (Chebyshev interpolation) in CKKS, and the same
``sum``/``dot``/``matmul`` in BFV, exact mod t. Rotation keys are made on demand:
``ctx.memory()`` shows the key memory before and after. Every result is checked against numpy.

Run it::

    python examples/tensor_ops.py

Parameters: N = 8192, 128-bit security, the default chains. A few seconds on a CPU.
"""

from __future__ import annotations

import numpy as np

import veil


def main() -> None:
    rng = np.random.default_rng(1)
    ck = veil.ckks(poly_modulus_degree=8192, device="auto")  # auto_rescale=True: aligned ops
    before = ck.memory()
    v = rng.uniform(-1, 1, 16)
    m = rng.uniform(-1, 1, (16, 4))
    ct = ck.encrypt(v)

    total = ck.decrypt(ct.sum(16))[0]
    mean = ck.decrypt(ct.dot(np.full(16, 1 / 16)))[0]
    y = ck.decrypt(ct @ m)[:4]
    p = ck.decrypt(ct.polyval([0.5, 0.0, -0.25]))[:16]
    assert abs(total - v.sum()) < 1e-5 and abs(mean - v.mean()) < 1e-5
    assert np.max(np.abs(y - v @ m)) < 1e-5
    assert np.max(np.abs(p - (0.5 - 0.25 * v**2))) < 1e-5
    print(f"CKKS on {ck.device}: sum {total:.6f} (numpy {v.sum():.6f}), v @ M = {np.round(y, 5)}")

    after = ck.memory()
    print(f"Galois keys: {before['galois_key_count']} before, {after['galois_key_count']} after "
          f"({after['galois_keys'] / 2**20:.0f} MiB; one key is "
          f"{ck.galois_key_bytes() / 2**20:.1f} MiB)")

    deep = veil.ckks(poly_modulus_degree=16384, device="auto")  # more levels for degree 15
    x = rng.uniform(-3, 3, 8)
    t = deep.decrypt(deep.encrypt(x).evaluate(np.tanh, (-3, 3), degree=15))[:8]
    assert np.max(np.abs(t - np.tanh(x))) < 1e-2
    print(f"tanh by a degree-15 Chebyshev interpolant: max error {np.max(np.abs(t - np.tanh(x))):.1e}")

    bf = veil.bfv(poly_modulus_degree=8192, plain_modulus=65537, device="auto")
    a = rng.integers(-100, 100, 10)
    w = rng.integers(-100, 100, (10, 3))
    ea = bf.encrypt(a)
    assert bf.decrypt(ea.dot(a))[0] == a @ a
    assert np.array_equal(bf.decrypt(ea @ w)[:3], a @ w)
    print(f"BFV: a.a = {a @ a}, a @ W = {a @ w} (exact)")


if __name__ == "__main__":
    main()
