"""Non-polynomial functions on CKKS ciphertexts (veil._functions; C++ circuits/comparison.h and
inverse.h): ct.sign, ct.relu, ct.greater, ct.maximum, ct.minimum, ct.inverse, ct.sqrt and
ct.inv_sqrt against numpy in float64 (precision in bits, as veil.ckks.precision), and their
errors. N = 4096 with a 20-level chain (security off: the functions, not the parameters, are
under test)."""

import numpy as np
import pytest
import veil
from veil import _functions

EPS = 2.0**-8
BITS = 12


@pytest.fixture(scope="module")
def ctx():
    return veil.ckks(poly_modulus_degree=4096, coeff_modulus=[60] + [40] * 20 + [60],
                     scale=2.0**40, security=None, seed=5)


def bits(want, got) -> float:
    return veil.ckks.precision(want, got)["min_bits"]


def test_sign_and_relu_match_numpy(ctx):
    x = np.random.default_rng(0).uniform(-1, 1, 2048)
    x[:4] = [EPS, -EPS, 1.0, -1.0]
    ct = ctx.encrypt(x)
    s = ct.sign()
    assert ct.level - s.level == _functions.sign_plan().depth == 18
    assert s.scale == pytest.approx(ct.scale, rel=1e-12)
    got = ctx.decrypt(s)
    away = np.abs(x) >= EPS
    assert bits(np.sign(x[away]), got[away]) >= BITS
    assert np.all(np.abs(got) <= 1 + 2.0**-12)
    r = ctx.decrypt(ct.relu())
    assert bits(np.maximum(x[away], 0), r[away]) >= BITS
    assert bits(np.maximum(x, 0), r) >= 9  # |x| < eps: error <= eps / 2


def test_comparisons_match_numpy(ctx):
    rng = np.random.default_rng(1)
    a, b = rng.uniform(-0.5, 0.5, 2048), rng.uniform(-0.5, 0.5, 2048)
    ca, cb = ctx.encrypt(a), ctx.encrypt(b) * 1.0  # b one level lower: aligned automatically
    eps = 2.0**-6
    away = np.abs(a - b) >= eps
    g = ctx.decrypt(ca.greater(cb, epsilon=eps))
    assert bits(np.greater(a, b)[away].astype(float), g[away]) >= BITS
    mx = ca.maximum(cb, epsilon=eps)
    assert ca.level - mx.level == _functions.sign_plan(eps).depth + 2  # cb's level + 1
    assert bits(np.maximum(a, b)[away], ctx.decrypt(mx)[away]) >= BITS
    assert bits(np.minimum(a, b)[away], ctx.decrypt(ca.minimum(cb, epsilon=eps))[away]) >= BITS
    # plaintext operands, through x - c
    away_c = np.abs(a - 0.1) >= eps
    assert bits(np.maximum(a, 0.1)[away_c], ctx.decrypt(ca.maximum(0.1, epsilon=eps))[away_c]) \
        >= BITS
    assert bits(np.minimum(a, 0.1)[away_c], ctx.decrypt(ca.minimum(0.1, epsilon=eps))[away_c]) \
        >= BITS


def test_inverse_and_roots_match_numpy(ctx):
    a, b = _functions.DEFAULT_INTERVAL
    x = np.random.default_rng(2).uniform(a, b, 2048)
    x[:2] = [a, b]
    ct = ctx.encrypt(x)
    inv = ct.inverse()
    assert ct.level - inv.level == 10
    assert inv.scale == pytest.approx(ct.scale, rel=1e-12)
    assert bits(1 / x, ctx.decrypt(inv)) >= BITS
    assert bits(np.sqrt(x), ctx.decrypt(ct.sqrt())) >= BITS
    assert bits(1 / np.sqrt(x), ctx.decrypt(ct.inv_sqrt())) >= BITS
    y = np.random.default_rng(3).uniform(0.5, 4.0, 2048)
    cy = ctx.encrypt(y)
    assert bits(1 / y, ctx.decrypt(cy.reciprocal(interval=(0.5, 4.0), bits=16))) >= 16
    assert bits(np.sqrt(y), ctx.decrypt(cy.sqrt(interval=(0.5, 4.0), bits=16))) >= 16


def test_too_few_levels_raise_depth_error(ctx):
    ct = ctx.encrypt(np.linspace(-1, 1, 16))
    for _ in range(5):
        ct = ct * 1.0
    with pytest.raises(veil.DepthError, match=r"x.sign\(\): out of depth: .* 15 levels left, "
                                              r".*takes 18: 3 more") as e:
        ct.sign()
    assert e.value.more_levels == 3
    with pytest.raises(veil.DepthError, match="relu"):
        ct.relu()
    low = ct
    for _ in range(10):
        low = low * 1.0
    with pytest.raises(veil.DepthError, match=r"x.inverse\(\).*takes 10"):
        low.inverse()


@pytest.mark.parametrize("call, match", [
    (lambda ct: ct.sign(epsilon=0), "epsilon"),
    (lambda ct: ct.sign(epsilon=1.0), "epsilon"),
    (lambda ct: ct.relu(bits=0), "bits"),
    (lambda ct: ct.sign(bits=31), "bits"),
    (lambda ct: ct.inverse(interval=(0.0, 1.0)), "interval"),
    (lambda ct: ct.sqrt(interval=(2.0, 1.0)), "interval"),
    (lambda ct: ct.inv_sqrt(interval=(1.0,)), "interval"),
])
def test_bad_arguments_name_the_argument(ctx, call, match):
    ct = ctx.encrypt(np.linspace(0.1, 0.9, 8))
    with pytest.raises(ValueError, match=match):
        call(ct)


def test_bad_types_name_the_argument(ctx):
    ct = ctx.encrypt(np.linspace(0.1, 0.9, 8))
    with pytest.raises(TypeError, match="epsilon"):
        ct.sign(epsilon="small")
    with pytest.raises(TypeError, match="bits"):
        ct.sign(bits=12.5)


@pytest.mark.gpu
def test_gpu_gives_the_cpus_results():
    """sign, relu, maximum, inverse and sqrt on cuda:0 and the CPU, same seed: the decrypted
    values agree to CKKS noise, and both meet the precision against numpy."""
    rng = np.random.default_rng(7)
    x, y = rng.uniform(-1, 1, 2048), rng.uniform(-0.5, 0.5, 2048)
    p = rng.uniform(2.0**-6, 1, 2048)
    out = {}
    for dev in ("cpu", "cuda"):
        c = veil.ckks(poly_modulus_degree=4096, coeff_modulus=[60] + [40] * 20 + [60],
                      scale=2.0**40, security=None, seed=5, device=dev)
        cx, cp = c.encrypt(x), c.encrypt(p)
        out[dev] = [c.decrypt(v) for v in (cx.sign(), cx.relu(), (cx * 0.5).maximum(
            c.encrypt(y)), cp.inverse(interval=(2.0**-6, 1)), cp.sqrt(interval=(2.0**-6, 1)))]
    away = np.abs(x) >= EPS
    wants = [np.sign(x), np.maximum(x, 0), np.maximum(x * 0.5, y), 1 / p, np.sqrt(p)]
    for i, (a, b, w) in enumerate(zip(out["cpu"], out["cuda"], wants)):
        np.testing.assert_allclose(b, a, atol=2.0**-20)
        keep = away if i < 2 else np.abs(x * 0.5 - y) >= EPS if i == 2 else slice(None)
        assert bits(w[keep], b[keep]) >= (BITS if i < 2 else 10), i


# ---- with bootstrapping: the composite in parts --------------------------------------------


def _boot_ctx(levels: int):
    from veil import _bootstrap as B

    config = B.BootstrapConfig()
    chain = B.bootstrap_chain(12, levels, config, 64)
    c = veil.ckks(poly_modulus_degree=4096, security=None, seed=3, galois_steps=None,
                  device="cpu", **chain.context_args())
    c.enable_bootstrapping(config, seed=3)
    return c


def test_sign_relu_maximum_bootstrap_between_stages(monkeypatch):
    """7 levels between bootstraps, 18 for the sign: the composite runs in parts with
    bootstraps between them, and the results still meet the precision against numpy."""
    c = _boot_ctx(7)
    calls = []
    real = c.bootstrap
    monkeypatch.setattr(c, "bootstrap", lambda ct: calls.append(ct.level) or real(ct))
    rng = np.random.default_rng(11)
    x, y = rng.uniform(-1, 1, 2048), rng.uniform(-0.5, 0.5, 2048)
    ct = c.encrypt(x)
    s = c.decrypt(ct.sign())
    assert len(calls) >= 2  # 18 levels from 7: at least two refreshes
    away = np.abs(x) >= EPS
    assert bits(np.sign(x[away]), s[away]) >= BITS
    r = c.decrypt(ct.relu())
    assert bits(np.maximum(x[away], 0), r[away]) >= BITS
    m = c.decrypt((ct * 0.5).maximum(c.encrypt(y)))
    keep = np.abs(x * 0.5 - y) >= EPS
    assert bits(np.maximum(x * 0.5, y)[keep], m[keep]) >= BITS
    calls.clear()
    g = c.decrypt((ct * 0.5).greater(0.1))  # a plaintext operand bootstraps in parts too
    assert calls
    keep = np.abs(x * 0.5 - 0.1) >= EPS
    assert bits((x * 0.5 > 0.1)[keep].astype(float), g[keep]) >= BITS


def test_bootstrap_too_short_for_one_stage_and_plan_parts():
    c = _boot_ctx(2)  # a stage of g_3 / f_3 takes 3 levels
    with pytest.raises(veil.DepthError, match="one stage of the sign's composite"):
        c.encrypt(np.ones(4) * 0.5).sign()
    plan = _functions.sign_plan()
    part = plan.part(1, 0)
    assert (part.g_stages, part.f_stages, part.depth) == (1, 0, 3)
    with pytest.raises(ValueError, match="g_stages, f_stages"):
        plan.part(0, 0)


def test_inverse_and_sqrt_bootstrap_first_when_needed():
    """10 levels between bootstraps: a ciphertext with 2 left is bootstrapped before the
    inverse (10 levels) and the square root (10), which then meet their precision."""
    c = _boot_ctx(10)
    p = np.random.default_rng(12).uniform(2.0**-6, 1, 2048)
    ct = c.encrypt(p)
    for _ in range(8):
        ct = ct * 1.0  # spend 8 levels
    assert _functions._left(ct) < 10
    inv = c.decrypt(ct.inverse())
    assert bits(1 / p, inv) >= 10
    assert bits(np.sqrt(p), c.decrypt(ct.sqrt())) >= BITS
