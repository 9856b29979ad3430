"""The pythonic bootstrapping layer over the C++ circuits (issue 23, deliverables 2 and 6).

* Thin bindings: ``ctx.bootstrapper`` (veil._bootstrap over ``veil._core.Bootstrapper``),
  ``ct.polyval`` / ``ct.evaluate`` (``PolynomialEvaluator``) and the operands' alignment
  (``ScaleOps``) give the Python oracle's words (tests/python/oracles), as the C++ layer does in
  test_circuits.py; the keys made with a progress bar are those of ``BootstrapKeys::generate``.
* Usable: ``encrypt`` starts at the top of the user's levels, ``ctx.levels`` is the number of
  multiplications between bootstraps, and a ciphertext spent down to level 0 (q_0's top) is
  still bootstrapped (original order: precision printed in bits against the decrypted input).

N = 2^11 without a security bound, as test_bootstrap.py: the pipeline is under test."""

import math

import numpy as np
import pytest
import veil
from oracles import bootstrap as B  # the Python implementation the C++ layer replaced
from oracles import tensor as T
from veil import _core

LOG_N = 11


def make_ctx(word_bits=64, slots=None, seed=3, users=2):
    config = veil.BootstrapConfig(slots=slots)
    chain = veil.ckks.bootstrap_chain(LOG_N, users, config, word_bits)
    ctx = veil.ckks(poly_modulus_degree=2 ** LOG_N, security=None, device="cpu", seed=seed,
                    galois_steps=None, **chain.context_args())
    ctx.enable_bootstrapping(config, seed=seed)
    return ctx


def random_slots(n, reps, seed=0):
    rng = np.random.default_rng(seed)
    return np.tile(rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n), reps)


def words(ct):
    return np.asarray((ct.raw if hasattr(ct, "raw") else ct).data())


# ---- thin bindings equal the oracle -----------------------------------------------------------


@pytest.mark.parametrize("word_bits,slots", [(64, None), (32, 64)])
def test_pythonic_bootstrapper_equals_the_oracle(word_bits, slots, monkeypatch):
    monkeypatch.setenv("VEIL_DOUBLE_HOIST", "0")  # the oracle's (single-hoisted) evaluation
    monkeypatch.setenv("VEIL_EVALMOD_EVEN", "0")  # and its EvalMod (in y)
    ctx = make_ctx(word_bits, slots, seed=5)
    bt = ctx.bootstrapper
    assert isinstance(bt, veil.Bootstrapper) and isinstance(bt.parameters, _core.BootstrapParameters)
    oracle = B.Bootstrapper(ctx, B.BootstrapConfig(slots=slots), seed=5)
    for name in ("slots", "N", "input_level", "output_level", "levels_left", "q0_level", "q0",
                 "evalmod_level", "evalmod_scale", "gamma", "rotation_steps"):
        assert getattr(bt, name) == getattr(oracle, name), name
    # the keys are stored per level (the oracle's at the top level, the same words where both
    # exist): each Galois key has ceil((l + 1) / alpha) digits of (b, a) over l + 1 + k limbs
    c = ctx.context
    per_level = sum(-(-(lv + 1) // c.alpha) * 2 * (lv + 1 + c.special_primes)
                    * c.poly_modulus_degree * c.word_bits // 8
                    for lv in bt.parameters.galois_key_levels)
    switching = oracle.to_dense.nbytes + oracle.to_sparse.nbytes
    assert bt.key_bytes() == per_level + switching < oracle.key_bytes()
    vals = random_slots(bt.slots, ctx.slot_count // bt.slots, 7)
    ct = ctx.encrypt(vals, level=bt.input_level).raw
    got = bt.bootstrap(ct)  # encodes the transforms (single-hoisted: the variable is set)
    # the same keys (seeded as BootstrapKeys::generate) and, once EvalMod's coefficients are
    # shared (numpy's BLAS sums against C++'s in-order ones), the same words
    assert bt.galois_keys.galois_elts == oracle.galois_keys.galois_elts
    oracle.cheb = np.asarray(bt._bootstrapper().evalmod_coefficients)
    np.testing.assert_array_equal(words(got), words(oracle.bootstrap(ct)))
    assert bt.plaintext_bytes() == oracle.plaintext_bytes()
    p = veil.ckks.precision(vals, ctx.decrypt(veil.CKKSCiphertext(ctx, got, True)))
    print(f"\n[precision] pythonic bootstrapper, {word_bits}-bit words, {bt.slots} slots: "
          f"min {p['min_bits']:.2f} mean {p['mean_bits']:.2f} bits")
    assert p["mean_bits"] > 20
    # timings: the same words, phase by phase
    phases: dict = {}
    np.testing.assert_array_equal(words(bt.bootstrap(ct, timings=phases)), words(got))
    assert list(phases) == list(veil._bootstrap.PHASES)


def test_polyval_evaluate_and_alignment_equal_the_oracle():
    ctx = veil.ckks(poly_modulus_degree=4096, coeff_modulus=[60] + [40] * 8 + [60],
                    security=None, seed=2, device="cpu", galois_steps=None)
    x = ctx.encrypt(np.random.default_rng(1).uniform(-1, 1, ctx.slot_count))
    for coeffs in ([0.5, -1.0], [0.5, -1.0, 0.25, 2.0], list(np.linspace(-1, 1, 12))):
        np.testing.assert_array_equal(words(x.polyval(coeffs)), words(T.polyval(x, coeffs)))
    np.testing.assert_array_equal(words(x.evaluate(np.tanh, (-4, 4), 15)),
                                  words(T.evaluate(x, np.tanh, (-4, 4), 15)))
    # alignment: a product (lower level, other scale) plus a fresh ciphertext, both ways
    sq = x * x
    for a, b in ((sq.raw, x.raw), (x.raw, sq.raw), (sq.raw, (x * 0.5).raw)):
        for got, want in zip(veil._tensor.align(ctx, a, b), T.align(ctx, a, b)):
            np.testing.assert_array_equal(words(got), words(want))
            assert (got.level, got.scale) == (want.level, want.scale)


def test_scale_ops_bind_the_exact_scale_arithmetic():
    ctx = veil.ckks(poly_modulus_degree=4096, coeff_modulus=[60] + [40] * 4 + [60],
                    security=None, seed=2, device="cpu", galois_steps=None)
    ops = ctx._scale_ops()
    v = np.random.default_rng(2).uniform(-1, 1, ctx.slot_count)
    a = ops.wrap(ctx.encrypt(v).raw)
    assert (a.level, a.scale) == (ctx.max_level, ctx.scale)
    sq = ops.square(a)
    lin = ops.linear_to([(a, 2.0)], 0.5, sq.level, sq.scale)
    out = ops.add(sq, lin)  # exactly aligned
    got = ctx.decrypt(veil.CKKSCiphertext(ctx, out.ct, False))
    assert veil.ckks.precision(v * v + 2 * v + 0.5, got)["min_bits"] > 20
    assert list(ops.chain.tops) == list(range(ctx.max_level + 1))
    with pytest.raises(ValueError, match="misaligned"):
        ops.add(a, sq)
    with pytest.raises(TypeError, match="a: expected a veil._core.Operand"):
        ops.square(ctx.encrypt(v).raw)
    keyless = _core.ScaleOps(ctx.context, None)  # no relinearization keys: products raise
    with pytest.raises(ValueError):
        keyless.square(keyless.wrap(ctx.encrypt(v).raw))


# ---- usable (deliverable 6) ---------------------------------------------------------------------


def test_encrypt_starts_at_the_top_of_the_users_levels():
    ctx = make_ctx()
    bt = ctx.bootstrapper
    assert ctx.default_level == bt.output_level < ctx.max_level
    assert ctx.encrypt([0.5]).level == bt.output_level
    assert ctx.encrypt([0.5], symmetric=True).level == bt.output_level
    assert ctx.encode([0.5]).level() == bt.output_level if callable(
        getattr(ctx.encode([0.5]), "level", None)) else True
    assert ctx.encrypt([0.5], level=ctx.max_level).level == ctx.max_level  # when asked for
    assert ctx.scale_at(bt.output_level) == ctx.scale
    plain = veil.ckks(poly_modulus_degree=4096, device="cpu", seed=1)
    assert plain.default_level == plain.max_level == plain.encrypt([1.0]).level


@pytest.mark.parametrize("word_bits", [64, 32])
def test_levels_count_the_multiplications_between_bootstraps(word_bits):
    ctx = make_ctx(word_bits, slots=None if word_bits == 64 else 64, users=3)
    bt = ctx.bootstrapper
    assert ctx.levels == bt.levels_left == 3
    assert "levels=3 (multiplications between bootstraps)" in repr(ctx)
    assert "levels_left=3 (multiplications between bootstraps)" in repr(bt)
    vals = random_slots(bt.slots, ctx.slot_count // bt.slots, 3).real * 0.9
    x = ctx.encrypt(vals)
    y = x
    for _ in range(ctx.levels):  # exactly `levels` products keep y bootstrappable at full cost
        y = y * x
    assert y.level == bt.input_level
    z = y.bootstrap()
    assert z.level == bt.output_level
    p = veil.ckks.precision(ctx.decrypt(y), ctx.decrypt(z))
    assert p["mean_bits"] > 20, p
    plain = veil.ckks(poly_modulus_degree=8192, device="cpu", seed=1)
    assert plain.levels == plain.max_level  # SEAL's one-prime blocks: one rescale per level


@pytest.mark.parametrize("word_bits", [64, 32])
def test_a_ciphertext_spent_to_level_zero_is_bootstrapped(word_bits):
    ctx = make_ctx(word_bits, slots=None if word_bits == 64 else 64)
    bt = ctx.bootstrapper
    vals = random_slots(bt.slots, ctx.slot_count // bt.slots, 4).real * 0.9
    x = ctx.encrypt(vals)
    y = x
    while y.level > bt.input_level:  # spend the user's levels
        y = y * x
    if word_bits == 64:  # and SlotToCoeff's, down to q_0's top (40-bit primes keep the scale)
        while y.level > bt.q0_level:
            y = y * x
    else:  # SlotToCoeff's 60-bit blocks would halve a 2^40 scale: drop the levels instead
        y = ctx.encrypt(vals, level=bt.input_level).mod_switch_to(bt.q0_level)
    assert y.level == bt.q0_level == (0 if word_bits == 64 else 1)
    z = y.bootstrap()
    assert z.level == bt.low_output_level < bt.output_level and z.scale == y.scale
    p = veil.ckks.precision(ctx.decrypt(y), ctx.decrypt(z))
    high = veil.ckks.precision(vals, ctx.decrypt(ctx.encrypt(vals, level=bt.input_level)
                                                  .bootstrap()))
    print(f"\n[precision] {word_bits}-bit words, {bt.slots} slots: from level {y.level} (original "
          f"order) min {p['min_bits']:.2f} mean {p['mean_bits']:.2f} bits; from input_level "
          f"(SlotToCoeff first) min {high['min_bits']:.2f} mean {high['mean_bits']:.2f} bits; "
          f"log2(sqrt(slots)) = {math.log2(bt.slots) / 2:.1f}")
    assert p["mean_bits"] > 18 and p["min_bits"] > 14, p
    assert high["mean_bits"] > p["mean_bits"]
    # every level between q_0's top and input_level takes the same path
    mid = ctx.bootstrap(ctx.encrypt(vals, level=bt.input_level - 1))
    assert mid.level == bt.low_output_level
    # the refreshed ciphertext computes on (with two user levels, 32-bit words land it in
    # SlotToCoeff's 60-bit blocks, where a 2^40 product drops to 2^20); the phases of the
    # original order are timed too
    if word_bits == 64:
        assert veil.ckks.precision(ctx.decrypt(y) ** 2, ctx.decrypt(z * z))["mean_bits"] > 16
    phases: dict = {}
    t = bt.bootstrap(y.raw, timings=phases)
    assert set(phases) == set(veil._bootstrap.PHASES) and t.level == bt.low_output_level


def test_a_ciphertext_at_another_scale_is_brought_to_delta_first():
    """32-bit chains' one-prime blocks leave a 2^50 scale on every other level (2^30 here, with
    two user levels): such a ciphertext costs one more level (a constant product to Delta) and
    comes back at Delta."""
    ctx = make_ctx(32, slots=64)
    bt = ctx.bootstrapper
    vals = random_slots(bt.slots, ctx.slot_count // bt.slots, 5).real * 0.9
    x = ctx.encrypt(vals)
    y = x
    while y.level > bt.input_level:  # all the user's levels
        y = y * x
    assert abs(math.log2(y.scale / ctx.scale)) > 4  # 2^30 with the (2, 1) user blocks
    z = y.bootstrap()
    assert z.scale == ctx.scale and z.level == bt.low_output_level
    p = veil.ckks.precision(ctx.decrypt(y), ctx.decrypt(z))
    print(f"\n[precision] from scale 2^{math.log2(y.scale):.1f} at input_level: min "
          f"{p['min_bits']:.2f} mean {p['mean_bits']:.2f} bits")
    assert p["mean_bits"] > 16
    above = ctx._chain.above(bt.input_level)  # the block top whose rescale lands on input_level
    one_up = ctx.bootstrap(ctx.encrypt(vals, scale=2.0 ** 50, level=above))
    assert one_up.level == bt.output_level and one_up.scale == ctx.scale  # SlotToCoeff first
    assert veil.ckks.precision(vals, ctx.decrypt(one_up))["mean_bits"] > 20
    with pytest.raises(ValueError, match="no level is left above q_0's block"):
        ctx.bootstrap(ctx.encrypt(vals, scale=2.0 ** 30, level=bt.q0_level))
