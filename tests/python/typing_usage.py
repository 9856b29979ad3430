"""Typed use of Veil's pythonic API and of the veil._core stubs.

tests/python/test_typing.py type-checks this file with mypy (pyproject's [tool.mypy]; every line
must pass, and there is no ``type: ignore`` here) and runs it, so it is also correct code.
"""

from __future__ import annotations

import numpy as np

import veil


def integer_round_trip(scheme: str = "bfv") -> list[int]:
    """BFV or BGV: encrypt, arithmetic, rotation, serialization, decrypt."""
    ctx: veil.IntegerContext
    if scheme == "bfv":
        ctx = veil.bfv(poly_modulus_degree=4096, plain_modulus=65537, device="cpu", seed=1,
                       galois_steps=[1])
    else:
        ctx = veil.bgv(poly_modulus_degree=4096, plain_modulus=65537, device="cpu", seed=1,
                       galois_steps=[1])
    a: veil.Ciphertext = ctx.encrypt(np.arange(8))
    b = ctx.encrypt([3] * 8, symmetric=True)
    c = (a * b + 5 - a).rotate_rows(1)  # slot i: 3 (i + 1) + 5 - (i + 1) = 2 i + 7
    data: bytes = c.to_bytes()
    back: veil.Ciphertext = veil.Ciphertext.from_bytes(data, ctx)
    assert ctx.noise_budget(back) > 0
    server = veil.load_context(ctx.to_bytes(), device="cpu")  # the server's view: no secret key
    assert not server.has_secret_key and ctx.has_secret_key
    raw: veil.RawCiphertext = ctx.evaluator.add(a.raw, b.raw)  # the C++ core, typed by the stub
    assert raw.size == 2 and raw.level == back.level
    slots = ctx.decrypt(back)
    return [int(v) for v in slots[:7]]


def ckks_round_trip() -> float:
    """CKKS: encrypt, multiply and rescale, add a plaintext, rotate, decrypt; the worst error."""
    ctx: veil.CKKSContext = veil.ckks(poly_modulus_degree=8192, device="cpu", seed=2,
                                      galois_steps=[1], auto_rescale=False)
    xs = np.linspace(-1.0, 1.0, 8)
    x: veil.CKKSCiphertext = ctx.encrypt(xs)
    y = (x * x).rescale()
    half: veil.Plaintext = ctx.encode(0.5, scale=y.scale, level=y.level)
    z = (y + half).rotate(1)
    again = veil.CKKSCiphertext.from_bytes(z.to_bytes(), ctx)
    level: int = again.level
    assert level == z.level
    got = ctx.decrypt(again)[:7]
    stats = veil.precision((xs**2 + 0.5)[1:], got)
    return float(stats["max_error"])


def main() -> None:
    expected = [2 * i + 7 for i in range(7)]
    assert integer_round_trip("bfv") == expected
    assert integer_round_trip("bgv") == expected
    assert ckks_round_trip() < 1e-4


if __name__ == "__main__":
    main()
