"""The C++ circuits layer (cpp/veil/circuits, bound in ``veil._core``) against the Python
implementation it was ported from, which stays the oracle in tests/python/oracles (it was
``veil._bootstrap`` and the polynomial part of ``veil._tensor``).

Bit for bit where the arithmetic is the same: the chains, the level layout, the special FFT's
stages, every encoded transform plaintext and its scale, the rotation keys, the seeded keys, the
polynomial evaluator's ciphertexts, and the bootstrapped ciphertext once both use the same EvalMod
coefficients. The one place the two compute differently is the Chebyshev interpolant of EvalMod
(numpy sums with BLAS, C++ in order): the coefficients agree to 1e-15 and the precision of the
bootstrap to a few hundredths of a bit. Precision against numpy in bits, as everywhere.

The word-for-word comparisons run the C++ transforms single-hoisted (VEIL_DOUBLE_HOIST=0, the
Python implementation's evaluation) and EvalMod's interpolant in y (VEIL_EVALMOD_EVEN=0; the
default evaluates the even cosine as a polynomial in T_2, circuits/evalmod.h); the default
double-hoisted evaluation (Bossuat et al., Eurocrypt 2021: baby and giant steps in Q_l ∪ P, one
ModDown per transform fused with its rescale) rounds differently, so beside each comparison it
is checked by precision (and its diagonals by their first l+1 limbs, which are the Python
words)."""

import math

import numpy as np
import pytest
import veil
from conftest import has_gpu
from oracles import bootstrap as B  # the Python implementation the C++ layer was ported from
from oracles import tensor as _tensor
from veil import _core
from veil import _core as C  # the circuits classes

LOG_N = 11  # as tests/python/test_bootstrap.py: the pipeline, not the parameters, is under test


def small_ctx(device="cpu", word_bits=64, slots=None, seed=3):
    config = B.BootstrapConfig(slots=slots)
    chain = B.bootstrap_chain(LOG_N, 2, config, word_bits)
    ctx = veil.ckks(poly_modulus_degree=2 ** LOG_N, security=None, device=device, seed=seed,
                    galois_steps=None, **chain.context_args())
    ctx.bootstrapper = B.Bootstrapper(ctx, config, seed=seed)  # the oracle
    return ctx


def random_slots(n, reps, seed=0):
    rng = np.random.default_rng(seed)
    return np.tile(rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n), reps)


def cpp_bootstrapper(ctx, seed=3, python_keys=False):
    bt = ctx.bootstrapper
    params = C.BootstrapParameters(ctx.context, C.BootstrapConfig(slots=bt.config.slots),
                                   ctx.scale)
    if python_keys:
        keys = C.BootstrapKeys(ctx._rlk(), bt.galois_keys, bt.to_sparse, bt.to_dense)
    else:
        keys = C.BootstrapKeys.generate(params, ctx.secret_key, ctx._rlk(), seed)
    return C.Bootstrapper(params, keys)


# ---- chains and stages ----------------------------------------------------------------------------


@pytest.mark.parametrize("word_bits", [64, 32])
@pytest.mark.parametrize("kw", [{}, {"slots": 64, "cts_levels": 2, "stc_levels": 4},
                                {"evalmod_degree": 63, "double_angle": 2, "k_range": 8}])
def test_chains_equal_python(word_bits, kw):
    for log_n, users in ((11, 2), (16, 13)):
        c = C.bootstrap_chain(log_n, users, C.BootstrapConfig(**kw), word_bits)
        p = B.bootstrap_chain(log_n, users, B.BootstrapConfig(**kw), word_bits)
        assert (c.coeff_modulus, c.rescale_groups, c.special_primes, c.alpha, c.scale,
                c.user_levels) == (p.coeff_modulus, p.rescale_groups, p.special_primes, p.alpha,
                                   p.scale, p.user_levels)
        assert C.BootstrapConfig(**kw).depth == B.BootstrapConfig(**kw).depth
    for n, sec in ((65536, 128), (32768, None)):
        c = C.preset_chain(n, sec, C.BootstrapConfig(**kw), word_bits)
        p = B.preset_chain(n, sec, B.BootstrapConfig(**kw), word_bits)
        assert (c.coeff_modulus, c.user_levels) == (p.coeff_modulus, p.user_levels)


@pytest.mark.parametrize("n", [2, 4, 64, 1024])
def test_special_fft_stages_equal_python_bit_for_bit(n):
    for cpp, py in ((C.special_fft_stages(n), B.special_fft_stages(n)),
                    (C.special_ifft_stages(n), B.special_ifft_stages(n))):
        assert len(cpp) == len(py)
        for a, b in zip(cpp, py):
            assert list(a) == list(b)  # the same keys in the same order
            for k in a:
                np.testing.assert_array_equal(a[k], np.asarray(b[k], dtype=np.complex128))


# ---- the bootstrapper -------------------------------------------------------------------------------


def python_plaintexts(py_level):
    return [pt for out in py_level.plan for terms in out.values() for (_, _, pt) in terms]


@pytest.mark.parametrize("word_bits,slots", [(64, None), (64, 32), (32, 64)])
def test_bootstrapper_equals_python(word_bits, slots, monkeypatch):
    monkeypatch.setenv("VEIL_DOUBLE_HOIST", "0")  # the C++ transforms built below: single-hoisted
    monkeypatch.setenv("VEIL_EVALMOD_EVEN", "0")  # and EvalMod in y, as the oracle's
    ctx = small_ctx(word_bits=word_bits, slots=slots)
    bt = ctx.bootstrapper
    cb = cpp_bootstrapper(ctx)
    p = cb.parameters
    assert (p.slots, p.input_level, p.output_level, p.levels_left, p.q0_level) == (
        bt.slots, bt.input_level, bt.output_level, bt.levels_left, bt.q0_level)
    assert (p.evalmod_level, p.evalmod_scale, p.gamma) == (bt.evalmod_level, bt.evalmod_scale,
                                                          bt.gamma)
    assert p.rotation_steps == bt.rotation_steps
    assert cb.keys.galois_keys.galois_elts == bt.galois_keys.galois_elts
    # every transform level: baby step, plaintext scale and every encoded diagonal, word for word
    for cpp_levels, py_levels in ((cb.coeff_to_slot_transforms, bt.cts),
                                  (cb.slot_to_coeff_transforms, bt.stc)):
        assert len(cpp_levels) == len(py_levels)
        for c, q in zip(cpp_levels, py_levels):
            assert (c.level, c.baby_step, c.plaintext_scale) == (q.level, q.n1, q.pt_scale)
            assert set(c.rotation_steps) == {bt.step(s) for s in q.steps()}
            py_pts = python_plaintexts(q)
            cpp_pts = c.plaintexts()
            assert len(cpp_pts) == len(py_pts)
            for a, b in zip(cpp_pts, py_pts):
                np.testing.assert_array_equal(a.data(), b.data())
    # EvalMod's interpolant: numpy's BLAS sums against C++'s, to the last few bits
    np.testing.assert_allclose(cb.evalmod_coefficients, bt.cheb, rtol=0, atol=1e-15)

    vals = random_slots(bt.slots, ctx.slot_count // bt.slots, 8)
    ct = ctx.encrypt(vals, level=bt.input_level).raw
    got = cb.bootstrap(ct)
    want = bt.bootstrap(ct)
    assert (got.level, got.scale) == (want.level, want.scale) == (bt.output_level, ctx.scale)
    dec = lambda c: ctx.encoder.decode(ctx.decryptor.decrypt(c))
    pc, pp = veil.ckks.precision(vals, dec(got)), veil.ckks.precision(vals, dec(want))
    print(f"\n[precision] {word_bits}-bit words, {bt.slots} slots: C++ min {pc['min_bits']:.2f} "
          f"mean {pc['mean_bits']:.2f} bits; Python min {pp['min_bits']:.2f} mean "
          f"{pp['mean_bits']:.2f} bits")
    assert pc["mean_bits"] > 20 and pc["min_bits"] > 16
    assert abs(pc["mean_bits"] - pp["mean_bits"]) < 0.1
    # With the same coefficients (a test-local override of the oracle's attribute) the two
    # pipelines produce the same words; so do the Python bootstrapper's keys in the C++ one
    # (the seeded C++ keys equal them).
    bt.cheb = np.asarray(cb.evalmod_coefficients)
    want = bt.bootstrap(ct)
    np.testing.assert_array_equal(got.data(), want.data())
    np.testing.assert_array_equal(cpp_bootstrapper(ctx, python_keys=True).bootstrap(ct).data(),
                                  want.data())

    # Double hoisting (the default): the diagonals are the Python words followed by P's limbs;
    # the result lands on the same level and scale with the same precision, not the same words.
    monkeypatch.delenv("VEIL_DOUBLE_HOIST")
    dh = cpp_bootstrapper(ctx)
    for cpp_levels, py_levels in ((dh.coeff_to_slot_transforms, bt.cts),
                                  (dh.slot_to_coeff_transforms, bt.stc)):
        for c, q in zip(cpp_levels, py_levels):
            assert c.plaintext_bytes > 0
            for a, b in zip(c.plaintexts(), python_plaintexts(q)):
                a, b = np.asarray(a.data()), np.asarray(b.data())
                assert a.size > b.size and a.size % ctx.slot_count == 0
                np.testing.assert_array_equal(a[:b.size], b)
    got2 = dh.bootstrap(ct)
    assert (got2.level, got2.scale) == (want.level, want.scale)
    assert not np.array_equal(np.asarray(got2.data()), np.asarray(want.data()))
    # precision of both C++ evaluations over three inputs (one input's mean varies by a few
    # tenths of a bit either way: EvalMod's error dominates at N = 2^11)
    bits = {"single": [], "double": []}
    for seed in (8, 9, 10):
        v = random_slots(bt.slots, ctx.slot_count // bt.slots, seed)
        c = ctx.encrypt(v, level=bt.input_level).raw
        for name, b in (("single", cb), ("double", dh)):
            p = veil.ckks.precision(v, dec(b.bootstrap(c)))
            bits[name].append((p["min_bits"], p["mean_bits"]))
    (s_min, s_mean), (d_min, d_mean) = (np.mean(bits[k], axis=0) for k in ("single", "double"))
    print(f"[precision] over 3 inputs: single-hoisted C++ min {s_min:.2f} mean {s_mean:.2f} bits; "
          f"double-hoisted C++ min {d_min:.2f} mean {d_mean:.2f} bits")
    assert d_mean > s_mean - 0.3 and d_min > s_min - 0.3


def test_bootstrapper_steps_and_input_scales():
    ctx = small_ctx()
    bt = ctx.bootstrapper
    cb = cpp_bootstrapper(ctx)
    p = cb.parameters
    vals = random_slots(bt.slots, 1, 4)
    # from the top level, at another scale near Delta: the scale comes back
    ct = ctx.encrypt(vals, scale=ctx.scale * 1.7).raw
    out = cb.bootstrap(ct)
    assert out.scale == ctx.scale * 1.7 and out.level == p.output_level
    assert veil.ckks.precision(vals, ctx.encoder.decode(ctx.decryptor.decrypt(out)))[
        "mean_bits"] > 19
    # the public steps compose to bootstrap()
    x = ctx.evaluator.mod_switch_to(ct, p.input_level)
    x.scale = ctx.scale
    y = cb.eval_mod(cb.coeff_to_slot(cb.mod_raise(cb.slot_to_coeff(x))))
    y.scale = ct.scale
    np.testing.assert_array_equal(y.data(), out.data())
    assert cb.plaintext_bytes > 0 and cb.keys.nbytes > 0
    assert "Bootstrapper(N=2048, slots=1024" in repr(cb)


def test_bootstrapper_errors():
    ctx = small_ctx()
    bt = ctx.bootstrapper
    cb = cpp_bootstrapper(ctx)
    with pytest.raises(ValueError, match="ct: expected a scale within 2\\^4"):
        cb.bootstrap(ctx.encrypt([0.5], scale=2.0 ** 30, level=0).raw)
    # below input_level: the original order (test_bootstrap.py checks its precision)
    assert cb.bootstrap(ctx.encrypt([0.5], level=0).raw).level == cb.parameters.low_output_level
    with pytest.raises(ValueError, match="ct: CoeffToSlot starts at level"):
        cb.coeff_to_slot(ctx.encrypt([0.5], level=bt.input_level).raw)
    with pytest.raises(ValueError, match="slots: expected a power of two"):
        C.BootstrapConfig(slots=3)
    with pytest.raises(ValueError, match="slots: 4 slots have 2 FFT stages, fewer than the 3"):
        C.BootstrapParameters(ctx.context, C.BootstrapConfig(slots=4), ctx.scale)
    with pytest.raises(ValueError, match="coeff_modulus: bootstrapping needs"):
        C.BootstrapParameters(veil.ckks(poly_modulus_degree=4096, seed=1).context)
    with pytest.raises(TypeError, match="config: expected"):
        C.BootstrapParameters(ctx.context, "full", ctx.scale)
    with pytest.raises(TypeError, match="cts_levels: expected an integer"):
        C.BootstrapConfig(cts_levels=2.5)
    gk = _core.KeyGenerator(ctx.context, ctx.secret_key, 5).create_galois_keys([1])
    partial = C.BootstrapKeys(ctx._rlk(), gk, bt.to_sparse, bt.to_dense)
    with pytest.raises(ValueError, match="galois_keys: no key for Galois element"):
        C.Bootstrapper(cb.parameters, partial)
    with pytest.raises(ValueError, match="poly_modulus_degree: bootstrapping at N = 4096"):
        C.preset_chain(4096, 128)


# ---- polynomials and linear transforms ------------------------------------------------------------


def chain_ctx(word_bits):
    if word_bits == 64:
        return veil.ckks(poly_modulus_degree=4096, coeff_modulus=[60] + [40] * 8 + [60],
                         security=None, seed=2, device="cpu", galois_steps=None)
    return veil.ckks(poly_modulus_degree=4096, coeff_modulus=[30] * 16 + [31, 31],
                     special_primes=1, rescale_groups=[2, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1],
                     security=None, seed=2, device="cpu", galois_steps=None)


@pytest.mark.parametrize("word_bits", [64, 32])
def test_polynomial_evaluator_equals_python(word_bits):
    ctx = chain_ctx(word_bits)
    pe = C.PolynomialEvaluator(ctx.context)
    x = np.random.default_rng(1).uniform(-1, 1, ctx.slot_count)
    ct = ctx.encrypt(x)
    xd = ctx.decrypt(ct)
    for deg in (1, 2, 5, 15, 27):
        c = np.array([math.cos(1.0 + 0.7 * i) / (1.0 + i) for i in range(deg + 1)])
        got = pe.evaluate_chebyshev(ct.raw, c, ctx._rlk())
        want = _tensor.cheb_eval(ct, c)
        np.testing.assert_array_equal(got.data(), want.raw.data())
        assert (got.level, got.scale) == (want.level, want.scale)
        assert pe.plan_level(ct.level, ct.scale, c) == got.level
        p = veil.ckks.precision(np.polynomial.chebyshev.chebval(xd, c),
                                ctx.encoder.decode(ctx.decryptor.decrypt(got)))
        print(f"\n[precision] {word_bits}-bit words, degree {deg}: min {p['min_bits']:.2f} bits")
    coeffs = [0.5, -1.0, 0.25, 2.0]
    np.testing.assert_array_equal(pe.evaluate_power(ct.raw, coeffs, ctx._rlk()).data(),
                                  _tensor.polyval(ct, coeffs).raw.data())
    np.testing.assert_array_equal(C.power_to_chebyshev(coeffs),
                                  np.polynomial.chebyshev.poly2cheb(coeffs))
    if word_bits == 64:  # (the 32-bit chain's one-prime top block cannot map a domain: as Python)
        tc = np.polynomial.chebyshev.Chebyshev.interpolate(lambda t: np.tanh(2 * t), 15).coef
        np.testing.assert_array_equal(
            pe.evaluate_chebyshev(ct.raw, tc, ctx._rlk(), (-1.5, 2.5)).data(),
            _tensor.cheb_eval(ct, tc, (-1.5, 2.5)).raw.data())
    with pytest.raises(ValueError, match="coeffs: a degree-7 polynomial needs at least 3"):
        pe.evaluate_chebyshev(ctx.evaluator.mod_switch_to(ct.raw, 2), [1.0] * 8, ctx._rlk())
    with pytest.raises(ValueError, match="domain"):
        pe.evaluate_chebyshev(ct.raw, [0.0, 1.0], ctx._rlk(), (1.0, -1.0))
    with pytest.raises(TypeError, match="coeffs"):
        pe.evaluate_chebyshev(ct.raw, "x", ctx._rlk())


def test_linear_transform_equals_numpy_product(monkeypatch):
    monkeypatch.delenv("VEIL_DOUBLE_HOIST", raising=False)
    monkeypatch.delenv("VEIL_PERIODIC_DIAGONALS", raising=False)
    ctx = veil.ckks(poly_modulus_degree=2048, coeff_modulus=[60, 45, 60], security=None, seed=4,
                    device="cpu", galois_steps=None)
    n, rng = 32, np.random.default_rng(3)
    mats = [[{k: rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n) for k in range(0, n, 3)}]]
    lt = C.LinearTransform(ctx.encoder, mats, n, 1, ctx.scale, ctx.scale)
    gk = _core.KeyGenerator(ctx.context, ctx.secret_key, 6).create_galois_keys(lt.rotation_steps)
    x = rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)
    ct = ctx.encrypt(np.tile(x, ctx.slot_count // n), level=1).raw
    xd = ctx.encoder.decode(ctx.decryptor.decrypt(ct))[:n]
    dense = np.zeros((n, n), dtype=np.complex128)
    for k, d in mats[0][0].items():
        dense[np.arange(n), (np.arange(n) + k) % n] = d
    out = lt.apply(ctx.evaluator, [ct], gk)[0]
    got = ctx.encoder.decode(ctx.decryptor.decrypt(out))
    p = veil.ckks.precision(np.tile(dense @ xd, ctx.slot_count // n), got)
    # the single-hoisted evaluation beside it (VEIL_DOUBLE_HOIST=0 at construction)
    monkeypatch.setenv("VEIL_DOUBLE_HOIST", "0")
    single = C.LinearTransform(ctx.encoder, mats, n, 1, ctx.scale, ctx.scale)
    monkeypatch.delenv("VEIL_DOUBLE_HOIST")
    out1 = single.apply(ctx.evaluator, [ct], gk)[0]
    p1 = veil.ckks.precision(np.tile(dense @ xd, ctx.slot_count // n),
                             ctx.encoder.decode(ctx.decryptor.decrypt(out1)))
    print(f"\n[precision] linear transform (32 slots, 11 diagonals): double-hoisted min "
          f"{p['min_bits']:.2f} bits, single-hoisted min {p1['min_bits']:.2f} bits; diagonals "
          f"{single.plaintext_bytes} -> {lt.plaintext_bytes} bytes")
    assert p["min_bits"] > 20 and p["min_bits"] > p1["min_bits"] - 0.3
    assert (out.level, out.scale) == (out1.level, out1.scale)
    # over Q_l ∪ P: (l+1+k)/(l+1) = 3/2 times single's words, stored as one period of 32 slots
    # (the 32-slot diagonals tiled to N/2 = 1024 slots: shift 5, 1/32 of the words)
    assert lt.plaintext_shifts == [5] * len(lt.plaintext_shifts)
    assert lt.plaintext_bytes * 2 * 32 == single.plaintext_bytes * 3
    # in full form (VEIL_PERIODIC_DIAGONALS=0) the same words, less the FFT noise dropped
    monkeypatch.setenv("VEIL_PERIODIC_DIAGONALS", "0")
    full = C.LinearTransform(ctx.encoder, mats, n, 1, ctx.scale, ctx.scale)
    monkeypatch.delenv("VEIL_PERIODIC_DIAGONALS")
    assert full.plaintext_bytes * 2 == single.plaintext_bytes * 3
    assert full.plaintext_shifts == [0] * len(full.plaintext_shifts)
    out2 = full.apply(ctx.evaluator, [ct], gk)[0]
    p2 = veil.ckks.precision(np.tile(dense @ xd, ctx.slot_count // n),
                             ctx.encoder.decode(ctx.decryptor.decrypt(out2)))
    assert abs(p2["min_bits"] - p["min_bits"]) < 0.3
    # this FFT leaves exact zeros off the multiples of 32: expanded, the same words and results
    for a, b in zip(lt.plaintexts(), full.plaintexts()):
        np.testing.assert_array_equal(a.data(), b.data())
    np.testing.assert_array_equal(out.data(), out2.data())
    with pytest.raises(ValueError, match="matrices: expected diagonals of 32 entries"):
        C.LinearTransform(ctx.encoder, [[{0: np.ones(8, dtype=np.complex128)}]], n, 1, 1.0, 1.0)


@pytest.mark.gpu
@pytest.mark.skipif(not has_gpu(), reason="no CUDA GPU visible")
@pytest.mark.parametrize("word_bits,slots", [(64, None), (32, 64)])
def test_bootstrapper_gpu_equals_cpu_and_python(word_bits, slots, monkeypatch):
    outs, double = [], []
    for dev in ("cpu", "cuda"):
        ctx = small_ctx(device=dev, word_bits=word_bits, slots=slots, seed=21)
        bt = ctx.bootstrapper
        monkeypatch.setenv("VEIL_DOUBLE_HOIST", "0")  # single-hoisted: the Python words
        monkeypatch.setenv("VEIL_EVALMOD_EVEN", "0")  # EvalMod in y, as the oracle's
        cb = cpp_bootstrapper(ctx, seed=21)
        monkeypatch.delenv("VEIL_DOUBLE_HOIST")
        monkeypatch.delenv("VEIL_EVALMOD_EVEN")
        assert cb.device.startswith(dev)
        vals = random_slots(bt.slots, ctx.slot_count // bt.slots, 10)
        ct = ctx.encrypt(vals, level=bt.input_level).raw
        out = cb.bootstrap(ct)
        bt.cheb = np.asarray(cb.evalmod_coefficients)
        np.testing.assert_array_equal(out.data(), bt.bootstrap(ct).data())
        outs.append(np.asarray(out.data()))
        double.append(np.asarray(cpp_bootstrapper(ctx, seed=21).bootstrap(ct).data()))
    np.testing.assert_array_equal(outs[0], outs[1])
    np.testing.assert_array_equal(double[0], double[1])  # double-hoisted: CPU = GPU too


# ---- the baby-step cost override ------------------------------------------------------------------

_ROTATIONS = ("import veil\n"
              "ck = veil.ckks(poly_modulus_degree=2048, security=None, bootstrapping=True, seed=1)\n"
              "print(len(ck.bootstrapper.parameters.rotation_steps))\n")


def _run_with_cost(cost):
    import os
    import subprocess
    import sys
    env = dict(os.environ)
    env.pop("VEIL_BSGS_BABY_COST", None)
    if cost is not None:
        env["VEIL_BSGS_BABY_COST"] = cost
    # read once per process: a fresh interpreter for each value
    return subprocess.run([sys.executable, "-c", _ROTATIONS], env=env, capture_output=True,
                          text=True, timeout=300)


def test_bsgs_baby_cost_override_changes_the_split_and_is_checked():
    default, cheap = _run_with_cost(None), _run_with_cost("0.05")
    assert default.returncode == 0 and cheap.returncode == 0, default.stderr + cheap.stderr
    # a cheaper baby step buys more baby steps, so more distinct rotations (keys)
    assert int(cheap.stdout) > int(default.stdout)
    bad = _run_with_cost("0,3")
    assert bad.returncode != 0
    assert "VEIL_BSGS_BABY_COST: expected a number in (0, 64], got '0,3'" in bad.stderr
