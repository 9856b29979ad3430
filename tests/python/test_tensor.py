"""Tensor helpers (sum, dot, matmul, polyval, evaluate), CKKS level/scale alignment, Galois keys
on demand, key memory and the progress bar. Oracles: numpy (float64 and exact integer
arithmetic mod t); never the code under test."""

import numpy as np
import pytest

import veil
from veil import _progress, _tensor

RNG = np.random.default_rng(20261126)
T = 65537


def ckks_ctx(device, n=4096, levels=6, **kw):
    """A CKKS test context: [50, 30 x levels | 60] bits (security=None: test-sized; the special
    prime above every digit keeps key-switching noise small)."""
    return veil.ckks(poly_modulus_degree=n, coeff_modulus=[50] + [30] * levels + [60],
                     scale=2.0**30, security=None, seed=7, device=device, **kw)


def bfv_ctx(device, n=4096, **kw):
    return veil.bfv(poly_modulus_degree=n, plain_modulus=T, seed=7, device=device, **kw)


def cyclic_window_sums(x: np.ndarray, size: int) -> np.ndarray:
    """slot i -> x_i + ... + x_(i+size-1), indices mod len(x) (the oracle of ct.sum)."""
    return np.array([x[(i + np.arange(size)) % len(x)].sum() for i in range(len(x))])


# ---- sum / dot ------------------------------------------------------------------------------


@pytest.mark.parametrize("size", [1, 5, 8, 100, None])
def test_ckks_sum_matches_numpy_window_sums(device, size):
    ctx = ckks_ctx(device)
    x = RNG.uniform(-1, 1, ctx.slot_count)
    y = ctx.encrypt(x).sum(size)
    want = cyclic_window_sums(x, size or ctx.slot_count)
    tol = 1e-4 * max(1, size or ctx.slot_count) ** 0.5
    assert len(y) == 1 and abs(ctx.decrypt(y)[0] - want[0]) < tol  # the sum, in slot 0
    got = ctx.decrypt(y.with_length())  # every slot: the cyclic window sums
    assert np.max(np.abs(got - want)) < tol


def test_sum_steps_cover_the_binary_method():
    assert _tensor.sum_steps(1) == []
    assert _tensor.sum_steps(8) == [1, 2, 4]
    assert _tensor.sum_steps(6) == [1, 3]  # 1 -> 2 -> 3 -> 6
    assert _tensor.sum_steps(100) == [1, 3, 6, 12, 25, 50]  # 1 3 6 12 24+1 50 100


def test_bfv_sum_over_both_rows_and_within_rows(device):
    ctx = bfv_ctx(device)
    x = RNG.integers(0, 1000, ctx.slot_count)
    s = ctx.encrypt(x).sum()
    assert len(s) == 1 and ctx.decrypt(s, signed=False).tolist() == [x.sum() % T]
    total = ctx.decrypt(s.with_length(), signed=False)  # both rows: every slot holds it
    assert total.shape == (ctx.slot_count,) and np.all(total == x.sum() % T)
    row = ctx.row_size
    got = ctx.decrypt(ctx.encrypt(x).sum(7).with_length(), signed=False)
    want = np.concatenate([cyclic_window_sums(x[:row], 7), cyclic_window_sums(x[row:], 7)]) % T
    assert np.array_equal(got, want)


def test_bfv_sum_and_dot_of_a_vector_longer_than_a_row(device):
    """N/2 < len < N: the sum covers row 0 and the first len - N/2 slots of row 1, not the
    slots past the length (after x + 1 they hold ones); dot takes no size argument."""
    for ctx in (bfv_ctx(device, n=8192), veil.bgv(poly_modulus_degree=8192, plain_modulus=T,
                                                  seed=7, device=device)):
        v = RNG.integers(0, 20, 6000)
        x = ctx.encrypt(v) + 1
        assert ctx.decrypt(x.sum(), signed=False)[0] == (v + 1).sum() % T
        w = RNG.integers(0, 5, 6000)
        assert ctx.decrypt(x.dot(w), signed=False)[0] == ((v + 1) @ w) % T
        assert ctx.decrypt(x @ w, signed=False)[0] == ((v + 1) @ w) % T


def test_dot_with_plain_and_cipher_vectors(device):
    ck = ckks_ctx(device)
    a, b = RNG.uniform(-1, 1, 50), RNG.uniform(-1, 1, 50)
    ea = ck.encrypt(a)
    assert abs(ck.decrypt(ea.dot(b))[0] - a @ b) < 1e-4
    assert abs(ck.decrypt(ea.dot(ck.encrypt(b)))[0] - a @ b) < 1e-4
    bf = bfv_ctx(device)
    u, v = RNG.integers(-20, 20, 40), RNG.integers(-20, 20, 40)  # |u . v| < t / 2
    assert bf.decrypt(bf.encrypt(u).dot(v))[0] == int(u @ v)
    assert bf.decrypt(bf.encrypt(u).dot(bf.encrypt(v), size=40))[0] == int(u @ v)


def test_sum_rejects_bad_size():
    ctx = ckks_ctx("cpu")
    with pytest.raises(ValueError, match="size"):
        ctx.encrypt([1.0]).sum(ctx.slot_count + 1)
    with pytest.raises(TypeError, match="size"):
        ctx.encrypt([1.0]).sum(2.5)


# ---- matmul ---------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(5, 3), (16, 16), (3, 7), (1, 1)])
def test_ckks_matmul_matches_numpy(device, shape):
    ctx = ckks_ctx(device)
    n, m = shape
    v, mat = RNG.uniform(-1, 1, n), RNG.uniform(-1, 1, shape)
    ct = ctx.encrypt(v)
    y = ct @ mat
    got = ctx.decrypt(y)
    assert len(y) == m and got.shape == (m,)
    assert np.max(np.abs(got - v @ mat)) < 1e-4
    every = ctx.decrypt(y.with_length())
    assert np.max(np.abs(every[max(n, m):])) < 1e-4  # zeros after the result
    assert y.level == ct.level - 1 and y.scale == pytest.approx(ct.scale, rel=1e-12)


def test_bfv_matmul_exact_mod_t(device):
    ctx = bfv_ctx(device)
    v = RNG.integers(-50, 50, 12)
    mat = RNG.integers(-50, 50, (12, 9))
    y = ctx.encrypt(v).matmul(mat)
    assert np.array_equal(ctx.decrypt(y), v @ mat)
    got = ctx.decrypt(y.with_length())
    assert np.array_equal(got[:9], v @ mat)
    assert not np.any(got[12:ctx.row_size])


def test_encoded_matrix_reuses_its_diagonals(device, monkeypatch):
    """EncodedMatrix: the same words as ct @ M (both against numpy), its diagonals encoded once
    per level and reused by later ciphertexts."""
    ctx = ckks_ctx(device)
    mat = RNG.uniform(-1, 1, (20, 7))
    em = veil.EncodedMatrix(ctx, mat)
    v1, v2 = RNG.uniform(-1, 1, 20), RNG.uniform(-1, 1, 20)
    y1 = ctx.encrypt(v1) @ em
    np.testing.assert_allclose(ctx.decrypt(y1), v1 @ mat, atol=1e-4)
    calls = []
    real_encode = ctx.encode
    monkeypatch.setattr(ctx, "encode", lambda *a, **k: calls.append(1) or real_encode(*a, **k))
    y2 = ctx.encrypt(v2) @ em
    assert calls == []  # nothing encoded for the second ciphertext
    np.testing.assert_allclose(ctx.decrypt(y2), v2 @ mat, atol=1e-4)
    low = ctx.encrypt(v2).mod_switch_to_next()
    np.testing.assert_allclose(ctx.decrypt(low @ em), v2 @ mat, atol=1e-4)
    assert calls and len(em._levels) == 2  # a new level: encoded once more
    assert "EncodedMatrix(shape=(20, 7)" in repr(em)


def test_encoded_matrix_bfv_and_errors(device):
    ctx = bfv_ctx(device)
    v = RNG.integers(-50, 50, 12)
    mat = RNG.integers(-50, 50, (12, 9))
    em = veil.EncodedMatrix(ctx, mat)
    assert np.array_equal(ctx.decrypt(ctx.encrypt(v) @ em), v @ mat)
    other = bfv_ctx(device)
    with pytest.raises(ValueError, match="^matrix: this EncodedMatrix was encoded for another"):
        other.encrypt(v) @ em
    with pytest.raises(ValueError, match="^matrix: v @ M with an 12 x 9"):
        ctx.encrypt(v[:5]) @ em
    with pytest.raises(ValueError, match="^matrix: expected a 2-D"):
        veil.EncodedMatrix(ctx, np.ones(3))
    with pytest.raises(TypeError, match="^ctx: expected a veil context"):
        veil.EncodedMatrix("ctx", mat)


def test_bgv_sum_dot_matmul_exact_mod_t(device):
    ctx = veil.bgv(poly_modulus_degree=4096, plain_modulus=T, seed=7, device=device)
    v = RNG.integers(-40, 40, 10)
    mat = RNG.integers(-40, 40, (10, 6))
    ct = ctx.encrypt(v)
    assert np.all(ctx.decrypt(ct.sum()) == v.sum())
    assert ctx.decrypt(ct.dot(v))[0] == v @ v
    assert np.array_equal(ctx.decrypt(ct @ mat)[:6], v @ mat)


@pytest.mark.parametrize("prep", ["plus_one", "rotated", "summed"])
def test_matmul_ignores_the_slots_after_the_vector(device, prep):
    """x @ M reads only the first n slots: after x + 1 (ones after the vector), a rotation
    (the first value wrapped to the row's end) or a window sum, the slots past the length hold
    values, and the product must still equal numpy's (it once replicated x + rot(x, -d), which
    mixed those values in)."""
    ctx = ckks_ctx(device)
    n, m = 7, 5
    v, mat = RNG.uniform(-1, 1, n), RNG.uniform(-1, 1, (n, m))
    ct = ctx.encrypt(v)
    row = np.zeros(ctx.slot_count)
    row[:n] = v
    if prep == "plus_one":
        x, w = ct + 1.0, v + 1.0
    elif prep == "rotated":
        x, w = ct.rotate(2), np.roll(row, -2)[:n]
    else:
        x, w = ct.sum(3).with_length(n), cyclic_window_sums(row, 3)[:n]
    assert np.abs(ctx.decrypt(x.with_length())[n:]).max() > 0.1  # the tail is not zero
    got = ctx.decrypt(x @ mat)
    assert np.max(np.abs(got - w @ mat)) < 1e-3, (got, w @ mat)


def test_bfv_bgv_matmul_ignores_the_slots_after_the_vector(device):
    for ctx in (bfv_ctx(device), veil.bgv(poly_modulus_degree=4096, plain_modulus=T, seed=7,
                                          device=device)):
        v = RNG.integers(-50, 50, 6)
        mat = RNG.integers(-50, 50, (6, 4))
        got = ctx.decrypt((ctx.encrypt(v) + 3) @ mat)       # threes after the vector
        assert np.array_equal(got, (v + 3) @ mat), (got, (v + 3) @ mat)


def test_matmul_full_row_without_replication():
    ctx = veil.bfv(poly_modulus_degree=1024, plain_modulus=12289, coeff_modulus=[30, 30, 30],
                   security=None, seed=3, device="cpu")
    row = ctx.row_size
    v = RNG.integers(0, 10, row)
    mat = np.diag(RNG.integers(1, 5, row)) + np.eye(row, k=1, dtype=np.int64)
    got = ctx.decrypt(ctx.encrypt(v).matmul(mat), signed=False)
    assert np.array_equal(got[:row], (v @ mat) % 12289)
    assert -row not in _tensor.matmul_steps(row, row, row)  # no replication step


def test_matmul_creates_only_its_keys_and_skips_zero_diagonals():
    ctx = ckks_ctx("cpu")
    assert ctx.galois_keys is None
    mat = np.diag(RNG.uniform(-1, 1, 9))  # one nonzero diagonal
    v = RNG.uniform(-1, 1, 9)
    got = ctx.decrypt(ctx.encrypt(v) @ mat)
    assert np.max(np.abs(got[:9] - v @ mat)) < 1e-4
    want = {ctx.context.galois_elt_from_step(s) for s in _tensor.matmul_steps(9, 9, ctx.slot_count)}
    assert set(ctx.galois_keys.galois_elts) == want


def test_matmul_rejects_bad_matrices():
    ctx = ckks_ctx("cpu")
    ct = ctx.encrypt([1.0])
    with pytest.raises(ValueError, match="matrix"):
        ct.matmul(np.ones(3))
    with pytest.raises(ValueError, match="matrix"):
        ct.matmul(np.ones((ctx.slot_count // 2 + 1, 2)))
    with pytest.raises(TypeError, match="matrix"):
        ct.matmul(np.array([["a"]]))
    b = bfv_ctx("cpu")
    with pytest.raises(TypeError, match="matrix"):
        b.encrypt([1]).matmul(np.ones((2, 2)))


# ---- polynomials ----------------------------------------------------------------------------


@pytest.mark.parametrize("coeffs", [[0.25, -1.0], [0.5, -1.0, 0.25, 0.1], list(RNG.uniform(-1, 1, 8)),
                                    list(RNG.uniform(-0.3, 0.3, 16))])
def test_polyval_matches_numpy(device, coeffs):
    ctx = ckks_ctx(device, levels=8)
    x = RNG.uniform(-1, 1, ctx.slot_count)
    ct = ctx.encrypt(x)
    y = ct.polyval(coeffs)
    want = np.polynomial.polynomial.polyval(x, coeffs)
    assert np.max(np.abs(ctx.decrypt(y) - want)) < 2**-12
    deg = len(coeffs) - 1
    optimal = 1 if deg <= 1 else int(np.ceil(np.log2(deg + 1)))
    assert optimal <= ct.level - y.level <= optimal + 1
    assert y.scale == pytest.approx(ct.scale, rel=1e-9)


def test_polyval_low_degrees_are_depth_optimal():
    ctx = ckks_ctx("cpu", levels=3)
    x = RNG.uniform(-1, 1, ctx.slot_count)
    ct = ctx.encrypt(x)
    for coeffs, depth in (([0.5, 0.0, -0.25], 2), ([0.1, -0.2, 0.3, 0.4], 2), ([1.0, 2.0], 1)):
        y = ct.polyval(coeffs)
        assert ct.level - y.level == depth, coeffs
        assert np.max(np.abs(ctx.decrypt(y) - np.polynomial.polynomial.polyval(x, coeffs))) < 2**-14


def test_evaluate_chebyshev_interpolant():
    ctx = ckks_ctx("cpu", levels=8)
    x = RNG.uniform(-4, 4, ctx.slot_count)
    y = ctx.decrypt(ctx.encrypt(x).evaluate(np.tanh, (-4, 4), degree=15))
    interp = np.polynomial.chebyshev.Chebyshev.interpolate(np.tanh, 15, domain=[-4, 4])
    assert np.max(np.abs(y - interp(x))) < 2**-12
    assert np.max(np.abs(y - np.tanh(x))) < 0.02  # degree-15 interpolation error on [-4, 4]


def test_polyval_errors_name_coeffs():
    ctx = ckks_ctx("cpu", levels=2)
    ct = ctx.encrypt([0.5])
    with pytest.raises(ValueError, match="coeffs"):
        ct.polyval([1.0] * 16)  # depth 5 > 2 levels
    with pytest.raises(ValueError, match="coeffs"):
        ct.polyval([])
    with pytest.raises(ValueError, match="coeffs"):
        ct.polyval([1.0, float("nan")])
    with pytest.raises(TypeError, match="fn"):
        ct.evaluate(3.0)
    with pytest.raises(ValueError, match="interval"):
        ct.evaluate(np.sin, (1, -1))


# ---- alignment ------------------------------------------------------------------------------


def test_auto_rescale_is_the_default_and_aligns_levels_and_scales(device):
    ctx = ckks_ctx(device)
    assert ctx.auto_rescale
    x = RNG.uniform(-1, 1, 16)
    u = ctx.encrypt(x)
    uu = u * u
    y = uu + u  # different levels and scales: aligned exactly, no extra level
    assert y.level == uu.level and y.scale == uu.scale
    assert np.max(np.abs(ctx.decrypt(y)[:16] - (x * x + x))) < 1e-5
    z = u - uu * u  # two levels apart
    assert np.max(np.abs(ctx.decrypt(z)[:16] - (x - x**3))) < 1e-5
    w = uu * u  # multiplication aligns levels only
    assert np.max(np.abs(ctx.decrypt(w)[:16] - x**3)) < 1e-5


def test_alignment_of_equal_levels_with_different_scales_drops_one_level():
    ctx = ckks_ctx("cpu")
    x = RNG.uniform(-1, 1, 8)
    a = ctx.encrypt(x)
    b = ctx.encrypt(x, scale=2.0**33)
    s = a + b
    assert s.level == a.level - 1 and s.scale == pytest.approx(a.scale)
    assert np.max(np.abs(ctx.decrypt(s)[:8] - 2 * x)) < 1e-5


def test_alignment_reports_when_no_level_is_left():
    ctx = ckks_ctx("cpu", levels=1)
    a = ctx.encrypt([0.5])
    b = ctx.encrypt([0.5], scale=2.0**33)
    with pytest.raises(veil.DepthError, match=r"^x \+ y: out of depth: .*cannot be aligned"):
        _ = (a * a) + (b * b)


def test_manual_mode_keeps_seal_rules():
    ctx = ckks_ctx("cpu", auto_rescale=False)
    u = ctx.encrypt([0.5])
    with pytest.raises(ValueError):
        _ = (u * u).rescale() + u


# ---- keys on demand, memory, progress -------------------------------------------------------


def test_galois_keys_on_demand_and_memory():
    ctx = ckks_ctx("cpu")
    mem0 = ctx.memory()
    assert ctx.galois_keys is None and mem0["galois_keys"] == 0 and mem0["galois_key_count"] == 0
    assert mem0["relin_keys"] == ctx.galois_key_bytes()  # the formula predicts a real key
    x = RNG.uniform(-1, 1, ctx.slot_count)
    got = ctx.decrypt(ctx.encrypt(x).rotate(3))
    assert np.max(np.abs(got - np.roll(x, -3))) < 1e-5
    mem1 = ctx.memory()
    assert mem1["galois_key_count"] == 1 and mem1["galois_keys"] == ctx.galois_key_bytes()
    assert mem1["total"] == mem0["total"] + ctx.galois_key_bytes()
    assert ctx.galois_keys.has_key(ctx.context.galois_elt_from_step(3))
    ctx.encrypt(x).rotate(3)
    assert ctx.memory()["galois_key_count"] == 1  # reused, not remade


def test_public_view_cannot_make_keys_and_says_so():
    ctx = ckks_ctx("cpu")
    server = ctx.public()
    ct = ctx.encrypt([1.0, 2.0])
    with pytest.raises(ValueError, match="create_galois_keys"):
        type(ct)._make(server, ct.raw).rotate(1)
    ctx.create_galois_keys([1, 2])
    server = ctx.public()
    moved = type(ct)._make(server, ct.raw).rotate(1)
    assert np.allclose(ctx.decrypt(moved)[:1], [2.0], atol=1e-5)


def test_power_of_two_keys_still_available():
    ctx = veil.bfv(poly_modulus_degree=4096, plain_modulus=T, galois_steps="power_of_two",
                   seed=1, device="cpu")
    # +-2^i for i < 11 (+1024 and -1024 are one element) and the column swap: the C++ default set
    want = veil.KeyGenerator(ctx.context, "cpu", 1).create_galois_keys().galois_elts
    assert ctx.galois_keys.galois_elts == want and len(want) == 2 * 11


def test_progress_bar_shows_after_the_delay(monkeypatch):
    from rich.console import Console

    console = Console(record=True, force_terminal=True, width=100)
    monkeypatch.setattr(_progress, "console", console)
    monkeypatch.setattr(_progress, "DELAY", 0.0)
    monkeypatch.setenv("VEIL_PROGRESS", "1")
    with _progress.Steps("Galois keys (3 x 1.0 MiB)", 3) as bar:
        for _ in range(3):
            bar.advance()
    assert bar.shown and "Galois keys" in console.export_text()
    monkeypatch.setenv("VEIL_PROGRESS", "0")
    with _progress.Steps("quiet", 3) as quiet:
        for _ in range(3):
            quiet.advance()
    assert not quiet.shown


def test_human_bytes():
    assert _progress.human_bytes(512) == "512 B"
    assert _progress.human_bytes(3 * 2**30) == "3.0 GiB"
