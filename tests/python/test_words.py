"""32-bit words and CKKS rescale blocks from Python (issue 7): the pythonic ``word_bits`` and
``rescale_groups`` options, the 32-bit default CKKS chain, ``scale_at`` and the fused
relinearize + rescale. Oracles: numpy (float64 for CKKS, exact mod t for BFV/BGV) and the same
parameters with 64-bit words (bit identity of the saved bytes).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
import veil
from veil import _core
from veil._ckks import default_ckks_chain_32


def test_default_32_bit_chain_shapes() -> None:
    for n, bound in ((8192, 218), (16384, 438), (32768, 881), (65536, 1747)):
        bits, groups, k = default_ckks_chain_32(n, 128)
        m = len(bits) - k
        assert sum(bits) <= bound
        assert all(b == 30 for b in bits[:m]) and all(b == 31 for b in bits[m:])
        assert sum(groups) == m and groups[-1] == 1 and 2 <= groups[0] <= 4
        assert all(g in (1, 2) for g in groups[1:])
        assert 30 * k < 31 * k  # a digit of k Q primes stays below P
    with pytest.raises(ValueError, match="poly_modulus_degree"):
        default_ckks_chain_32(4096, 128)


@pytest.mark.parametrize("device", ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)])
def test_ckks_32_bit_chain_keeps_a_2_40_scale(device: str) -> None:
    ctx = veil.ckks(poly_modulus_degree=8192, word_bits=32, auto_rescale=True, device=device,
                    seed=3, galois_steps=[1])
    assert ctx.word_bits == 32 and ctx.context.word_bits == 32
    assert list(ctx.context.rescale_groups) == [3, 2, 1]
    x = np.random.default_rng(4).uniform(-1, 1, ctx.slot_count)
    c = ctx.encrypt(x)
    assert ctx.scale_at(ctx.max_level) == 2.0**40
    sq = c * c  # one-prime block: scale 2^80 / q ~ 2^50
    assert sq.level == ctx.max_level - 1
    assert math.isclose(sq.scale, ctx.scale_at(sq.level), rel_tol=1e-12)
    assert 49.5 < math.log2(sq.scale) < 50.5
    quad = sq * sq  # two-prime block: back to ~2^40
    assert math.isclose(quad.scale, ctx.scale_at(quad.level), rel_tol=1e-12)
    assert 39.5 < math.log2(quad.scale) < 40.5
    p = veil.ckks.precision(x**4, ctx.decrypt(quad))
    assert p["min_bits"] >= 20, p
    # Adding a fresh value at that level: encode at scale_at(level).
    y = ctx.encrypt(x, scale=ctx.scale_at(quad.level), level=quad.level)
    assert veil.ckks.precision(x**4 + x, ctx.decrypt(quad + y))["min_bits"] >= 20
    r = quad.rotate(1)
    assert veil.ckks.precision(np.roll(x**4, -1), ctx.decrypt(r))["mean_bits"] >= 20
    with pytest.raises(ValueError, match="encrypted"):  # q_0's block cannot be rescaled
        ctx.evaluator.rescale_to_next(quad.raw)
    with pytest.raises(ValueError, match="rescale: this context rescales every product"):
        quad.rescale()  # auto_rescale: a hand rescale would be a second one


def test_fused_relinearize_rescale_matches_two_steps() -> None:
    ctx = veil.ckks(poly_modulus_degree=8192, device="cpu", seed=5)
    ev = ctx.evaluator
    x = np.random.default_rng(6).uniform(-1, 1, ctx.slot_count)
    a, b = ctx.encrypt(x).raw, ctx.encrypt(x[::-1].copy()).raw
    fused = ev.multiply_relinearize_rescale(a, b, ctx.relin_keys)
    steps = ev.rescale_to_next(ev.relinearize(ev.multiply(a, b), ctx.relin_keys))
    assert fused.level == steps.level and fused.scale == steps.scale and fused.size == 2
    dec = ctx.encoder.decode(ctx.decryptor.decrypt(fused)).real
    assert veil.ckks.precision(x * x[::-1], dec)["min_bits"] >= 20
    with pytest.raises(ValueError, match="size 3"):
        ev.relinearize_rescale(a, ctx.relin_keys)


def test_integer_schemes_choose_32_bit_words() -> None:
    bits = [30, 30, 30, 31]
    for scheme in (veil.bfv, veil.bgv):
        ctx = scheme(poly_modulus_degree=8192, coeff_modulus=bits, device="cpu", seed=7)
        assert ctx.context.word_bits == 32
        x = np.arange(8192, dtype=np.int64) % 100
        got = ctx.decrypt(ctx.encrypt(x) * ctx.encrypt(x))
        assert np.array_equal(np.asarray(got)[:8192] % 65537, (x * x) % 65537)
    # SEAL's BFVDefault primes are above 2^31: 64-bit words, and 32 cannot be asked for.
    assert veil.bfv(poly_modulus_degree=8192, device="cpu").context.word_bits == 64
    with pytest.raises(ValueError, match="word_bits"):
        veil.bfv(poly_modulus_degree=8192, device="cpu", word_bits=32)
    with pytest.raises(ValueError, match="word_bits"):
        veil.bfv(poly_modulus_degree=8192, coeff_modulus=bits, device="cpu", word_bits=48)
    with pytest.raises(TypeError, match="word_bits"):
        veil.ckks(poly_modulus_degree=8192, device="cpu", word_bits="32")


def test_saved_bytes_are_word_independent() -> None:
    bits = [30, 30, 30, 31]
    p = _core.EncryptionParameters("bgv")
    p.poly_modulus_degree = 8192
    p.coeff_modulus = _core.CoeffModulus.create(8192, bits)
    p.plain_modulus = 65537
    contexts = []
    for w in (32, 64):
        p.word_bits = w
        contexts.append(_core.Context(p, None))
    assert [c.word_bits for c in contexts] == [32, 64]
    keys = [_core.KeyGenerator(c, "cpu", 9) for c in contexts]
    pks = [k.create_public_key() for k in keys]
    assert pks[0].to_bytes() == pks[1].to_bytes()
    assert np.array_equal(pks[0].data(), pks[1].data())
    # The parameters (and their blocks) round-trip; the word size is the loader's choice.
    q = _core.EncryptionParameters("ckks")
    q.poly_modulus_degree = 8192
    q.coeff_modulus = _core.CoeffModulus.create(8192, [30] * 6 + [31])
    q.rescale_groups = [3, 2, 1]
    back = _core.EncryptionParameters.from_bytes(q.to_bytes())
    assert list(back.rescale_groups) == [3, 2, 1] and back.parameter_hash == q.parameter_hash
