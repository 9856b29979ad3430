"""The pythonic BFV layer against numpy arithmetic mod t (an independent oracle)."""

import numpy as np
import pytest
import veil
from conftest import centered_mod, rotate_rows
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

T = 65537


@pytest.fixture(scope="module")
def ctx():
    return veil.bfv(poly_modulus_degree=4096, plain_modulus=T, device="cpu", seed=11,
                    galois_steps=[1, -1, 2, 4, 7])


def centered(x):
    return centered_mod(x, T)


def test_encrypt_decrypt_roundtrip(ctx):
    rng = np.random.default_rng(1)
    v = rng.integers(-(T // 2), T // 2, ctx.slot_count)
    assert np.array_equal(ctx.decrypt(ctx.encrypt(v)), v)


def test_short_vector_is_zero_padded(ctx):
    out = ctx.decrypt(ctx.encrypt([1, 2, 3]))
    assert list(out[:3]) == [1, 2, 3] and not out[3:].any()


@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 2**32 - 1), k=st.integers(-3000, 3000))
def test_arithmetic_matches_numpy(ctx, seed, k):
    rng = np.random.default_rng(seed)
    a = rng.integers(-300, 300, ctx.slot_count)
    b = rng.integers(-300, 300, ctx.slot_count)
    ca, cb = ctx.encrypt(a), ctx.encrypt(b)
    assert np.array_equal(ctx.decrypt(ca + cb), centered(a + b))
    assert np.array_equal(ctx.decrypt(ca - cb), centered(a - b))
    assert np.array_equal(ctx.decrypt(-ca), centered(-a))
    assert np.array_equal(ctx.decrypt(ca * cb), centered(a * b))
    assert np.array_equal(ctx.decrypt(ca + k), centered(a + k))
    assert np.array_equal(ctx.decrypt(k - ca), centered(k - a))
    assert np.array_equal(ctx.decrypt(ca * b), centered(a * b))


def test_rotations(ctx):
    v = np.arange(ctx.slot_count) % 1000
    c = ctx.encrypt(v)
    for k in (1, -1, 2, 7, 3, 5):  # 3 = 4 - 1 and 5 = 4 + 1 have no direct key: NAF composition
        assert np.array_equal(ctx.decrypt(c.rotate_rows(k)), rotate_rows(v, k)), k
    row = ctx.row_size
    swapped = np.concatenate([v[row:], v[:row]])
    assert np.array_equal(ctx.decrypt(c.rotate_columns()), swapped)
    hoisted = c.rotate_many([1, 2, 4])
    for k, h in zip([1, 2, 4], hoisted):
        assert np.array_equal(h.raw.data(), c.rotate_rows(k).raw.data())


def test_power_and_square():
    # depth 2 needs more than N = 4096's 72-bit Q: use N = 8192
    ctx = veil.bfv(poly_modulus_degree=8192, plain_modulus=T, device="cpu", seed=4,
                   galois_steps=None)
    v = np.arange(ctx.slot_count) % 7
    c = ctx.encrypt(v)
    assert np.array_equal(ctx.decrypt(c ** 3), centered(v**3))
    assert np.array_equal(ctx.decrypt(c.square()), centered(v**2))


def test_noise_budget_decreases(ctx):
    c = ctx.encrypt(np.ones(16, dtype=np.int64))
    b0 = ctx.noise_budget(c)
    c2 = c * c
    b1 = ctx.noise_budget(c2)
    assert b0 > b1 > 0


def test_public_context_cannot_decrypt(ctx):
    srv = ctx.public()
    c = srv.encrypt([5])
    c2 = c * c
    with pytest.raises(ValueError, match="secret key"):
        srv.decrypt(c2)
    assert ctx.decrypt(c2)[0] == 25


def test_behz_matches_hps_results():
    a = np.arange(64) - 32
    for method in ("hps", "behz"):
        ctx = veil.bfv(poly_modulus_degree=4096, plain_modulus=T, mul_method=method,
                       device="cpu", seed=3, galois_steps=None)
        c = ctx.encrypt(a)
        assert np.array_equal(ctx.decrypt(c * c)[:64], a * a)


def test_seed_determinism():
    kw = dict(poly_modulus_degree=4096, plain_modulus=T, device="cpu", galois_steps=None)
    c1 = veil.bfv(seed=5, **kw)
    c2 = veil.bfv(seed=5, **kw)
    c3 = veil.bfv(seed=6, **kw)
    assert np.array_equal(c1.public_key.data(), c2.public_key.data())
    assert not np.array_equal(c1.public_key.data(), c3.public_key.data())
    assert np.array_equal(c1.encrypt([1, 2]).raw.data(), c2.encrypt([1, 2]).raw.data())


@pytest.mark.gpu
def test_gpu_matches_cpu_bit_for_bit():
    kw = dict(poly_modulus_degree=8192, plain_modulus=T, seed=9, galois_steps=[1])
    cpu = veil.bfv(device="cpu", **kw)
    gpu = veil.bfv(device="cuda", **kw)
    assert np.array_equal(cpu.secret_key.data(), gpu.secret_key.data())
    assert np.array_equal(cpu.relin_keys.data(), gpu.relin_keys.data())
    v = np.arange(100)
    a_c, a_g = cpu.encrypt(v), gpu.encrypt(v)
    assert np.array_equal(a_c.raw.data(), a_g.raw.data())
    for f in (lambda x: x * x, lambda x: x.rotate_rows(1), lambda x: x * v + 3):
        assert np.array_equal(f(a_c).raw.data(), f(a_g).raw.data())
    assert np.array_equal(gpu.decrypt(a_g * a_g)[:100], v * v)
    moved = a_g.to("cpu")
    assert np.array_equal(moved.raw.data(), a_c.raw.data())


@pytest.mark.parametrize("scheme", ["bfv", "bgv"])
def test_encode_ntt_and_multiply_plain_sum_match_numpy_and_the_chain(scheme):
    """ctx.encode_ntt prepares a plaintext once for products; ctx.multiply_plain_sum is the
    one-pass weighted sum: slot-wise sum_i x_i * m_i mod t (numpy), the same bytes as the
    * and + chain, with prepared or raw weights."""
    c = getattr(veil, scheme)(poly_modulus_degree=4096, plain_modulus=65537, device="cpu",
                              seed=3)
    t = c.plain_modulus
    rng = np.random.default_rng(5)
    xs = [rng.integers(-300, 300, 64) for _ in range(4)]
    ms = [rng.integers(-300, 300, 64) for _ in range(4)]
    cts = [c.encrypt(x) for x in xs]
    prepared = [c.encode_ntt(m) for m in ms]
    want = centered(sum(x * m for x, m in zip(xs, ms)) % t)
    got = c.multiply_plain_sum(cts, prepared)
    np.testing.assert_array_equal(c.decrypt(got), want)
    chain = cts[0] * ms[0]
    for x, m in zip(cts[1:], ms[1:]):
        chain = chain + x * m
    assert bytes(got.to_bytes()) == bytes(chain.to_bytes())
    assert bytes(c.multiply_plain_sum(cts, ms).to_bytes()) == bytes(chain.to_bytes())
    np.testing.assert_array_equal(c.decrypt(cts[2] * prepared[2]), centered(xs[2] * ms[2] % t))
    with pytest.raises(ValueError, match="plains: expected 4 plaintexts"):
        c.multiply_plain_sum(cts, prepared[:3])
    with pytest.raises(ValueError, match="cts: expected at least one"):
        c.multiply_plain_sum([], [])
    with pytest.raises(ValueError, match="level"):
        c.encode_ntt(ms[0], level=c.context.max_level + 1)
    low = c.encode_ntt(ms[0], level=0)
    with pytest.raises(ValueError, match="in NTT form at level 0"):
        cts[0] * low
