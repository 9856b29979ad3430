"""Encrypted N-D tensors (veil.EncryptedTensor, "padded row-major" packing), im2col convolution
and average pooling. Oracles: numpy in float64 (CKKS, error bounds asserted) and exact integer
arithmetic mod t (BFV/BGV); the convolution oracle is explicit loops. N = 2^12: S = 2048 slots
per ciphertext, so the larger tensors span several ciphertexts."""

import pickle

import numpy as np
import pytest
import veil
from veil._enc_tensor import MAGIC

RNG = np.random.default_rng(20270227)
T = 65537
S = 2048
TOL = 2.0**-15  # relative, simple operations


@pytest.fixture(scope="module")
def ckks():
    return veil.ckks(poly_modulus_degree=4096, coeff_modulus=[50] + [30] * 6 + [60],
                     scale=2.0**30, security=None, seed=11)


@pytest.fixture(scope="module")
def bfv():
    return veil.bfv(poly_modulus_degree=4096, plain_modulus=T, seed=11)


@pytest.fixture(scope="module")
def bgv():
    return veil.bgv(poly_modulus_degree=4096, plain_modulus=T, seed=11)


def close(got, want, tol=TOL):
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    scale = max(1.0, float(np.max(np.abs(want))) if want.size else 1.0)
    err = float(np.max(np.abs(got - want))) / scale
    assert err < tol, f"relative error {err:.3g} >= {tol:.3g}"


def mod_t(x):
    """Centered residues mod t (what decrypt(signed=True) returns)."""
    r = np.mod(x, T)
    return np.where(r > T // 2, r - T, r)


# ---- construction, round trip, facts ---------------------------------------------------------


@pytest.mark.parametrize("shape", [(3,), (4, 4), (3, 5), (2, 3, 5), (S + 3,), (5, 700)])
def test_ckks_round_trip(ckks, shape):
    x = RNG.uniform(-1, 1, shape)
    t = ckks.encrypt_tensor(x)
    pad = int(np.prod([1 << (n - 1).bit_length() for n in shape]))
    assert t.shape == shape and t.ndim == len(shape) and t.size == x.size and len(t) == shape[0]
    assert len(t.ciphertexts) == -(-pad // S) and t.clean
    close(t.decrypt(), x)


@pytest.mark.parametrize("shape", [(3,), (3, 5), (2, 3, 5), (S + 3,)])
def test_bfv_round_trip(bfv, shape):
    x = RNG.integers(-1000, 1000, shape)
    t = bfv.encrypt_tensor(x)
    assert t.decrypt().dtype == np.int64 and np.array_equal(t.decrypt(), x)


def test_encrypt_ndim2_gives_a_tensor_and_ndim1_a_ciphertext(ckks, bfv):
    assert isinstance(ckks.encrypt(np.ones((4, 4))), veil.EncryptedTensor)
    assert isinstance(ckks.encrypt([[1.0, 2.0], [3.0, 4.0]]), veil.EncryptedTensor)
    assert isinstance(bfv.encrypt(np.ones((2, 3), dtype=np.int64)), veil.EncryptedTensor)
    ct = ckks.encrypt(np.ones(4))
    assert isinstance(ct, veil.CKKSCiphertext) and len(ct) == 4
    assert isinstance(bfv.encrypt(np.arange(5)), veil.Ciphertext)
    t = ckks.encrypt(np.ones((2, 3)), scale=2.0**30, symmetric=True)  # kwargs pass through
    close(t.decrypt(), np.ones((2, 3)))


def test_repr_names_shape_packing_count_level_and_scale(ckks):
    t = ckks.encrypt_tensor(np.zeros((3, 5)))
    r = repr(t)
    for part in ("shape=(3, 5)", "'padded row-major'", "padded_shape=(4, 8)", "ciphertexts=1",
                 "level=6", "scale=2^30.00"):
        assert part in r, r
    assert t.packing == veil.PACKING == "padded row-major"


def test_complex_tensor_decrypts_complex(ckks):
    x = RNG.uniform(-1, 1, (3, 3)) + 1j * RNG.uniform(-1, 1, (3, 3))
    got = ckks.encrypt_tensor(x).decrypt()
    assert got.dtype == np.complex128
    close(got, x)


# ---- element-wise -----------------------------------------------------------------------------


def test_ckks_elementwise_with_broadcasting(ckks):
    x = RNG.uniform(-1, 1, (3, 5))
    y = RNG.uniform(-1, 1, (3, 5))
    row, col = RNG.uniform(-1, 1, 5), RNG.uniform(-1, 1, (3, 1))
    t, u = ckks.encrypt_tensor(x), ckks.encrypt_tensor(y)
    close((t + 2.5).decrypt(), x + 2.5)
    close((1 - t).decrypt(), 1 - x)
    close((t * row).decrypt(), x * row)
    close((col * t).decrypt(), col * x)
    close((t - col).decrypt(), x - col)
    close((t + u).decrypt(), x + y)
    close((t * u).decrypt(), x * y)
    close((-t).decrypt(), -x)
    close(t.square().decrypt(), x * x)
    close((t / 4).decrypt(), x / 4)
    close((row + t).decrypt(), row + x)  # a numpy array on the left defers to the tensor
    assert (t + 2.5).clean and (t * row).clean  # plaintexts are packed with zero padding


def test_bfv_and_bgv_integer_tensors_mod_t(bfv, bgv):
    for ctx in (bfv, bgv):
        x = RNG.integers(-300, 300, (3, 5))
        y = RNG.integers(-300, 300, (3, 5))
        t, u = ctx.encrypt_tensor(x), ctx.encrypt_tensor(y)
        assert np.array_equal((t + u).decrypt(), mod_t(x + y))
        assert np.array_equal((t * u).decrypt(), mod_t(x * y))
        assert np.array_equal((t * y[0] + 7).decrypt(), mod_t(x * y[0] + 7))
        assert np.array_equal((t - y[:, :1]).decrypt(), mod_t(x - y[:, :1]))
        assert np.array_equal(t.sum(axis=1).decrypt(), mod_t(x.sum(axis=1)))
        assert np.array_equal(t.T.decrypt(), x.T)


def test_polyval_and_evaluate_per_ciphertext(ckks):
    x = RNG.uniform(-1, 1, (S + 3,))
    t = ckks.encrypt_tensor(x)
    p = t.polyval([0.5, -1.0, 0.25])
    close(p.decrypt(), 0.5 - x + 0.25 * x * x, 2.0**-12)
    assert not p.clean  # p(0) = 0.5 fills the padding
    assert t.polyval([0.0, 2.0]).clean
    close(t.evaluate(np.tanh, (-1, 1), 7).decrypt(), np.tanh(x), 2.0**-8)


# ---- layout: transpose, reshape ---------------------------------------------------------------


def test_transpose_is_metadata_only(ckks):
    x = RNG.uniform(-1, 1, (2, 3, 5))
    t = ckks.encrypt_tensor(x)
    for axes in [(), (1, 0, 2), (2, 0, 1)]:
        tt = t.transpose(*axes)
        assert tt.ciphertexts[0] is t.ciphertexts[0]
        close(tt.decrypt(), x.transpose(*axes))
    close(t.T.decrypt(), x.T)
    col = RNG.uniform(-1, 1, (5, 1, 1))
    close((t.T * col + 1).decrypt(), x.T * col + 1)  # plaintexts packed in the transposed layout


def test_reshape_allowed_where_slots_stay(ckks):
    x = RNG.uniform(-1, 1, (4, 4))
    t = ckks.encrypt_tensor(x)
    close(t.reshape(16).decrypt(), x.reshape(16))
    close(t.reshape(2, 2, 4).decrypt(), x.reshape(2, 2, 4))
    close(t.reshape(1, 4, -1, 1).decrypt(), x.reshape(1, 4, 4, 1))
    close(t.flatten().decrypt(), x.flatten())
    y = RNG.uniform(-1, 1, (3, 1, 5))
    close(ckks.encrypt_tensor(y).reshape(3, 5).decrypt(), y.reshape(3, 5))
    close(ckks.encrypt_tensor(y).squeeze().decrypt(), y.squeeze())
    close(ckks.encrypt_tensor(y).transpose(1, 2, 0).squeeze().decrypt(), y.transpose(1, 2, 0).squeeze())


def test_reshape_refused_with_shape_and_packing_named(ckks):
    t = ckks.encrypt_tensor(np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"shape: .*padded row-major.*move between slots"):
        t.reshape(15)
    with pytest.raises(ValueError, match="shape: cannot reshape size 15"):
        t.reshape(4, 4)
    with pytest.raises(ValueError, match="shape"):
        ckks.encrypt_tensor(np.zeros((4, 4))).T.reshape(16)


# ---- slicing ----------------------------------------------------------------------------------


def test_slicing_inside_and_across_ciphertexts(ckks):
    x = RNG.uniform(-1, 1, (6, 300))  # rows of 512 slots: 4 per ciphertext, 2 ciphertexts
    t = ckks.encrypt_tensor(x)
    for idx in [0, 3, -1, slice(0, 2), slice(1, 4), slice(2, 6), slice(5, None)]:
        close(t[idx].decrypt(), x[idx])
    assert t[0:2].level == t.level  # the leading rows: no mask, no level
    assert t[3].level == t.level - 1  # a slot shift: one masked re-pack


def test_slicing_whole_ciphertext_rows_is_free(ckks):
    x = RNG.uniform(-1, 1, (5, S))
    t = ckks.encrypt_tensor(x)
    s = t[1:4]
    assert s.shape == (3, S) and len(s.ciphertexts) == 4 and s.ciphertexts[0] is t.ciphertexts[1]
    close(s.decrypt(), x[1:4])
    close(t[4].decrypt(), x[4])


def test_slicing_errors(ckks):
    t = ckks.encrypt_tensor(np.zeros((4, 3)))
    with pytest.raises(IndexError, match="index: 4 is out of range"):
        t[4]
    with pytest.raises(ValueError, match="index: only step 1"):
        t[::2]
    with pytest.raises(IndexError, match="index"):
        t[0, 1]
    with pytest.raises(ValueError, match="index: axis 0 is physical axis 1"):
        t.T[0]


# ---- sums -------------------------------------------------------------------------------------


@pytest.mark.parametrize("shape", [(3, 5), (2, 3, 5), (5, 700), (S + 3,)])
def test_sum_and_mean_over_every_axis(ckks, shape):
    x = RNG.uniform(-1, 1, shape)
    t = ckks.encrypt_tensor(x)
    for axis in [None, *range(len(shape))]:
        s = t.sum(axis)
        assert s.shape == np.sum(x, axis=axis).shape
        close(s.decrypt(), x.sum(axis=axis))
    close(t.mean(0).decrypt(), x.mean(0))
    close(t.mean().decrypt(), x.mean())


def test_sum_of_transposed_and_dirty_tensors(ckks):
    x = RNG.uniform(-1, 1, (3, 5))
    t = ckks.encrypt_tensor(x)
    close(t.T.sum(0).decrypt(), x.T.sum(0))
    close(t.T.sum(1).decrypt(), x.T.sum(1))
    dirty = t.polyval([1.0, 1.0])  # padding holds 1
    assert not dirty.clean
    close(dirty.sum(1).decrypt(), (1 + x).sum(1))  # masked before summing
    close(dirty.sum().decrypt(), (1 + x).sum())
    twice = t.sum(0)  # dirty padding (partial sums), then summed again
    assert not twice.clean
    close(twice.sum().decrypt(), x.sum())


def test_sum_axis_errors(ckks):
    t = ckks.encrypt_tensor(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="axis"):
        t.sum(2)


# ---- matmul -----------------------------------------------------------------------------------


def test_ckks_matmul_matrix_larger_than_a_ciphertext(ckks):
    n, m = S + 5, S + 3  # 2 x 2 blocks of 2048 x 2048
    v = RNG.uniform(-1, 1, n)
    i, j = np.indices((n, m))
    band = (np.abs(i - j) < 6) | (np.abs(i - j - 1500) < 3)  # crosses blocks
    W = np.where(band, RNG.uniform(-1, 1, (n, m)), 0.0)
    y = ckks.encrypt_tensor(v) @ W
    assert y.shape == (m,) and len(y.ciphertexts) == 2
    close(y.decrypt(), v @ W, 2.0**-13)


def test_ckks_matmul_small_dense_and_dirty_padding(ckks):
    v, W = RNG.uniform(-1, 1, 10), RNG.uniform(-1, 1, (10, 7))
    t = ckks.encrypt_tensor(v)
    close((t @ W).decrypt(), v @ W)
    close(((t + 1).polyval([1.0, 1.0]) @ W).decrypt(), (v + 2) @ W, 2.0**-13)  # dirty padding
    close((W.T @ t).decrypt(), W.T @ v)


def test_bfv_matmul(bfv):
    v, W = RNG.integers(-20, 20, 20), RNG.integers(-20, 20, (20, 9))
    assert np.array_equal((bfv.encrypt_tensor(v) @ W).decrypt(), mod_t(v @ W))


def test_matmul_errors(ckks):
    t = ckks.encrypt_tensor(np.zeros(4))
    with pytest.raises(ValueError, match="matrix: shapes"):
        t @ np.zeros((5, 2))
    with pytest.raises(ValueError, match="matrix: expected a 2-D"):
        t.matmul(np.zeros(4))
    with pytest.raises(ValueError, match="self: t @ W needs a 1-D"):
        ckks.encrypt_tensor(np.zeros((2, 2))) @ np.zeros((2, 2))


# ---- serialization ----------------------------------------------------------------------------


def test_bytes_pickle_load_and_to(ckks, bfv):
    x = RNG.uniform(-1, 1, (3, S // 2 + 1))
    t = ckks.encrypt_tensor(x).T
    data = t.to_bytes()
    assert data.startswith(MAGIC)
    for u in (veil.EncryptedTensor.from_bytes(data, ckks), veil.load(data, ckks),
              pickle.loads(pickle.dumps(t)), t.to("cpu").to(ckks.device)):
        assert u.shape == t.shape and u.perm == t.perm and u.clean == t.clean
        close(u.decrypt(), x.T)
    xi = RNG.integers(-9, 9, (2, 3))
    ti = veil.load(bfv.encrypt_tensor(xi).to_bytes(), bfv)
    assert np.array_equal(ti.decrypt(), xi)


def test_hostile_bytes_raise_value_error_naming_the_field(ckks, bfv):
    data = ckks.encrypt_tensor(np.zeros((3, 5))).to_bytes()
    head = 8 + 8  # magic, version/scheme/flags/ndim

    def patched(offset, raw):
        return data[:offset] + raw + data[offset + len(raw):]

    cases = [
        (data[:12], "header: truncated"),
        (data[:-7], "length: ciphertext 0 claims"),
        (data + b"x", "data: 1 trailing bytes"),
        (b"NOTATENS" + data[8:], "magic"),
        (patched(8, b"\x09\x00"), "version"),
        (patched(head - 4, (40).to_bytes(4, "little")), "ndim"),
        (patched(head, (0).to_bytes(8, "little")), "shape"),
        (patched(head, (2**50).to_bytes(8, "little")), "shape"),
        (patched(head + 16, (16).to_bytes(8, "little")), "padded_shape"),
        (patched(head + 32, (1).to_bytes(4, "little")), "perm"),
        (patched(head + 40, (1024).to_bytes(8, "little")), "slots"),
        (patched(head + 48, (7).to_bytes(4, "little")), "count"),
        (patched(head + 52, (2**62).to_bytes(8, "little")), "length"),
    ]
    for bad, field in cases:
        with pytest.raises(ValueError, match=field):
            veil.EncryptedTensor.from_bytes(bad, ckks)
    with pytest.raises(ValueError, match="scheme"):
        veil.EncryptedTensor.from_bytes(data, bfv)
    with pytest.raises(TypeError, match="ctx"):
        veil.EncryptedTensor.from_bytes(data, None)


# ---- convolution and pooling --------------------------------------------------------------------


def conv_loops(image, weights, bias, stride, padding):
    """Explicit-loop cross-correlation: image (C, H, W), weights (F, C, kh, kw) -> (F, oh, ow)."""
    c, h, w = image.shape
    f, _, kh, kw = weights.shape
    img = np.zeros((c, h + 2 * padding, w + 2 * padding))
    img[:, padding:padding + h, padding:padding + w] = image
    oh, ow = (h + 2 * padding - kh) // stride + 1, (w + 2 * padding - kw) // stride + 1
    out = np.zeros((f, oh, ow))
    for fi in range(f):
        for y in range(oh):
            for x in range(ow):
                acc = bias[fi]
                for ci in range(c):
                    for i in range(kh):
                        for j in range(kw):
                            acc += weights[fi, ci, i, j] * img[ci, y * stride + i, x * stride + j]
                out[fi, y, x] = acc
    return out


def test_conv2d_all_filters_at_once_vs_loops(ckks):
    image = RNG.uniform(-1, 1, (2, 8, 8))
    weights = RNG.uniform(-1, 1, (3, 2, 3, 3))
    bias = RNG.uniform(-1, 1, 3)
    enc = veil.im2col_encrypt(ckks, image, (3, 3), stride=1, padding=1, filters=3)
    assert enc.shape == (3, 18, 64) and enc.perm == (1, 0, 2)
    out = veil.conv2d(enc, weights, bias)
    oh, ow = out.image_info["out_hw"]
    assert out.shape == (3, 64) and (oh, ow) == (8, 8)
    assert out.level == enc.level - 1  # one plaintext product, no re-pack
    close(out.decrypt().reshape(3, oh, ow), conv_loops(image, weights, bias, 1, 1), 2.0**-13)


def test_conv2d_one_filter_strided_channels_last(ckks):
    image = RNG.uniform(-1, 1, (9, 9, 3))  # (H, W, C)
    weights = RNG.uniform(-1, 1, (3, 2, 2))
    enc = veil.im2col_encrypt(ckks, image, 2, stride=2, channels_first=False)
    out = veil.conv2d(enc, weights, bias=0.5)
    oh, ow = out.image_info["out_hw"]
    want = conv_loops(np.moveaxis(image, 2, 0), weights[None], [0.5], 2, 0)
    close(out.decrypt().reshape(1, oh, ow), want, 2.0**-13)


def test_bfv_conv2d_is_exact(bfv):
    image = RNG.integers(0, 16, (1, 6, 6))
    weights = RNG.integers(-3, 4, (2, 1, 3, 3))
    out = veil.conv2d(veil.im2col_encrypt(bfv, image, 3, filters=2), weights, [1, -1])
    want = conv_loops(image, weights, [1, -1], 1, 0).astype(np.int64)
    assert np.array_equal(out.decrypt().reshape(want.shape), mod_t(want))


def avg_pool_loops(image, k):
    c, h, w = image.shape
    oh, ow = h // k, w // k
    out = np.zeros((c, oh, ow))
    for ci in range(c):
        for y in range(oh):
            for x in range(ow):
                acc = 0.0
                for i in range(k):
                    for j in range(k):
                        acc += image[ci, y * k + i, x * k + j]
                out[ci, y, x] = acc / (k * k)
    return out


def test_avg_pool2d_vs_loops(ckks):
    image = RNG.uniform(-1, 1, (3, 8, 8))
    enc = veil.im2col_encrypt(ckks, image, 2, stride=2, per_channel=True)
    out = veil.avg_pool2d(enc)
    oh, ow = out.image_info["out_hw"]
    close(out.decrypt().reshape(3, oh, ow), avg_pool_loops(image, 2))


def test_conv_errors_name_arguments(ckks, bfv):
    enc = veil.im2col_encrypt(ckks, np.zeros((4, 4)), 3)
    with pytest.raises(ValueError, match="weights: 2 filters"):
        veil.conv2d(enc, np.zeros((2, 1, 3, 3)))
    with pytest.raises(ValueError, match="weights: 4 weights per filter"):
        veil.conv2d(enc, np.zeros((1, 1, 2, 2)))
    with pytest.raises(ValueError, match="bias"):
        veil.conv2d(enc, np.zeros((1, 1, 3, 3)), bias=[1.0, 2.0])
    with pytest.raises(ValueError, match="kernel_shape"):
        veil.im2col_encrypt(ckks, np.zeros((2, 2)), 3)
    with pytest.raises(TypeError, match="enc"):
        veil.avg_pool2d(veil.im2col_encrypt(bfv, np.zeros((4, 4), dtype=np.int64), 2,
                                            per_channel=True))


# ---- errors -------------------------------------------------------------------------------------


def test_errors_name_the_argument(ckks, bfv):
    t = ckks.encrypt_tensor(np.zeros((3, 5)))
    with pytest.raises(ValueError, match=r"other: shape \(4,\) does not broadcast"):
        t + np.zeros(4)
    with pytest.raises(ValueError, match="other: encrypted tensors of shapes"):
        t + ckks.encrypt_tensor(np.zeros((5, 3)))
    with pytest.raises(ValueError, match="other: .*different layouts"):
        t + ckks.encrypt_tensor(np.zeros((5, 3))).T
    with pytest.raises(TypeError, match="other: combine"):
        t + ckks.encrypt(np.zeros(3))
    with pytest.raises(TypeError, match="other: expected integers"):
        bfv.encrypt_tensor(np.zeros((2, 2), dtype=np.int64)) * 0.5
    with pytest.raises(ValueError, match="values"):
        ckks.encrypt_tensor(np.zeros((0, 3)))
    with pytest.raises(TypeError, match="values: expected integers"):
        bfv.encrypt_tensor(np.zeros((2, 2)))
    with pytest.raises(ValueError, match="axes"):
        t.transpose(0, 0)
    with pytest.raises(TypeError, match="polyval"):
        bfv.encrypt_tensor(np.zeros((2, 2), dtype=np.int64)).polyval([1, 2])


# ---- GPU parity ------------------------------------------------------------------------------


@pytest.mark.gpu
def test_gpu_gives_the_cpus_results():
    """The same tensors, seeds and operations on cuda:0 and the CPU: sums over an axis (rotations
    and the masked re-pack), a blocked product and an im2col convolution decrypt to the CPU's
    values (CKKS noise aside) and to numpy's."""
    x = RNG.uniform(-1, 1, (5, 700))
    mat = RNG.uniform(-1, 1, (700, 9))
    image = RNG.uniform(-1, 1, (1, 8, 8))
    weights = RNG.uniform(-1, 1, (2, 1, 3, 3))
    got = {}
    for dev in ("cpu", "cuda"):
        ctx = veil.ckks(poly_modulus_degree=4096, coeff_modulus=[50] + [30] * 6 + [60],
                        scale=2.0**30, security=None, seed=11, device=dev)
        t = ctx.encrypt_tensor(x)
        conv = veil.conv2d(veil.im2col_encrypt(ctx, image, (3, 3), filters=2), weights)
        got[dev] = (t.sum(axis=1).decrypt(), t.sum(axis=0).decrypt(), (t[2] @ mat).decrypt(),
                    conv.decrypt())
    for c, g, want in zip(got["cpu"], got["cuda"], (x.sum(1), x.sum(0), x[2] @ mat, None)):
        close(g, c, 2.0**-18)
        if want is not None:
            close(g, want, 2.0**-12)


# ---- max pooling (encrypted maximum) ---------------------------------------------------------


def test_max_pool2d_vs_loops():
    """2 x 2 max pooling, stride 2, two channels: the tournament of encrypted maximums against
    the maximum of each window by explicit loops; values at least epsilon apart meet the
    documented 8 bits."""
    ctx = veil.ckks(poly_modulus_degree=4096, coeff_modulus=[60] + [40] * 34 + [60],
                    scale=2.0**40, security=None, seed=3, galois_steps=None, device="cpu")
    image = RNG.uniform(-0.5, 0.5, (2, 8, 8))
    enc = veil.im2col_encrypt(ctx, image, (2, 2), stride=2, per_channel=True)
    out = veil.max_pool2d(enc)
    assert out.shape == (2, 16) and not out.clean
    want = np.empty((2, 4, 4))
    for c in range(2):
        for i in range(4):
            for j in range(4):
                want[c, i, j] = max(image[c, 2 * i + a, 2 * j + b] for a in (0, 1)
                                    for b in (0, 1))
    got = out.decrypt().reshape(2, 4, 4)
    assert veil.ckks.precision(want, got)["min_bits"] >= 8


def test_max_pool2d_errors(ckks, bfv):
    img = RNG.uniform(-0.5, 0.5, (1, 6, 6))
    with pytest.raises(ValueError, match="^enc: max pooling needs kh \\* kw a power of two"):
        veil.max_pool2d(veil.im2col_encrypt(ckks, img, (3, 3), stride=3, per_channel=True))
    with pytest.raises(ValueError, match="^enc: expected an encoding from im2col_encrypt"):
        veil.max_pool2d(veil.im2col_encrypt(ckks, img, (2, 2), stride=2))
    with pytest.raises(TypeError, match="^enc: max pooling compares"):
        veil.max_pool2d(veil.im2col_encrypt(bfv, np.ones((1, 4, 4), dtype=np.int64), (2, 2),
                                            stride=2, per_channel=True))
    with pytest.raises(TypeError, match="^enc: expected an EncryptedTensor"):
        veil.max_pool2d(np.ones(4))
    with pytest.raises(veil.DepthError, match="2 rounds of maximum"):
        veil.max_pool2d(veil.im2col_encrypt(ckks, img, (2, 2), stride=2, per_channel=True))
