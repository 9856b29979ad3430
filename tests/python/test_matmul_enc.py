"""Encrypted x encrypted matrix products (Jiang-Kim-Lauter-Song, CCS 2018): the permutations
against their definitions, the identity in plaintext, and the encrypted product against numpy."""

from __future__ import annotations

import numpy as np
import pytest
import veil
from veil import _core
from veil import _matmul_enc as me


def _apply(src: np.ndarray, m: np.ndarray) -> np.ndarray:
    return m.ravel()[src].reshape(m.shape)


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8])
def test_permutations_match_their_definitions(d):
    m = np.arange(d * d, dtype=float).reshape(d, d)
    sig, tau = np.empty_like(m), np.empty_like(m)
    for i in range(d):
        for j in range(d):
            sig[i, j] = m[i, (i + j) % d]
            tau[i, j] = m[(i + j) % d, j]
    np.testing.assert_array_equal(_apply(me.sigma_source(d), m), sig)
    np.testing.assert_array_equal(_apply(me.tau_source(d), m), tau)
    for k in range(d):
        phi = np.array([[m[i, (j + k) % d] for j in range(d)] for i in range(d)])
        psi = np.array([[m[(i + k) % d, j] for j in range(d)] for i in range(d)])
        np.testing.assert_array_equal(_apply(me.phi_source(d, k), m), phi)
        np.testing.assert_array_equal(_apply(me.psi_source(d, k), m), psi)


@pytest.mark.parametrize("d", [1, 2, 4, 7])
def test_the_identity_in_plaintext(d):
    """sum_k phi^k(sigma(A)) * psi^k(tau(B)) = A B (Eq. (2)) with numpy's product as the
    oracle."""
    rng = np.random.default_rng(d)
    a, b = rng.normal(size=(d, d)), rng.normal(size=(d, d))
    sa, tb = _apply(me.sigma_source(d), a), _apply(me.tau_source(d), b)
    total = sum(_apply(me.phi_source(d, k), sa) * _apply(me.psi_source(d, k), tb)
                for k in range(d))
    np.testing.assert_allclose(total, a @ b, atol=1e-12)


def test_steps_cover_every_offset():
    d = 4
    for src in [me.sigma_source(d), me.tau_source(d), me.phi_source(d, 1), me.psi_source(d, 3)]:
        off = set(np.unique(src - np.arange(d * d)).tolist()) - {0}
        assert off <= set(me.steps(d))


@pytest.fixture(scope="module")
def ctx():
    return veil.ckks(depth=3, slots=1024, seed=5, galois_steps=None, device="cpu")


@pytest.mark.parametrize("d", [1, 2, 3, 8, 16])
def test_encrypted_product_matches_numpy(ctx, d):
    rng = np.random.default_rng(100 + d)
    a, b = rng.uniform(-1, 1, (d, d)), rng.uniform(-1, 1, (d, d))
    c = me.matmul_encrypted(ctx.encrypt(a.ravel()), ctx.encrypt(b.ravel()), d)
    assert len(c) == d * d
    got = np.real(c.decrypt()).reshape(d, d)
    err = np.abs(got - a @ b).max()
    assert err < 2.0**-12 * max(1, d), err  # 20-bit scale; d products summed


def test_permute_zeroes_the_rest(ctx):
    d = 4
    x = ctx.encrypt(np.arange(1, 33, dtype=float))  # 32 values, the permutation reads 16
    y = me.permute(x, me.sigma_source(d))
    full = np.real(ctx.decrypt(y.with_length(32)))
    np.testing.assert_allclose(full[:16], np.arange(1, 17)[me.sigma_source(d)], atol=1e-3)
    np.testing.assert_allclose(full[16:], 0, atol=1e-3)


def test_errors_name_the_argument(ctx):
    a = ctx.encrypt(np.ones(16))
    with pytest.raises(ValueError, match="^a: expected a 3 x 3"):
        me.matmul_encrypted(a, a, 3)
    with pytest.raises(ValueError, match="^d: a 100 x 100"):
        me.matmul_encrypted(a, a, 100)
    with pytest.raises(ValueError, match="d"):
        me.matmul_encrypted(a, a, 0)
    bfv = veil.bfv(poly_modulus_degree=4096, plain_modulus=65537, device="cpu")
    with pytest.raises(ValueError, match="^a: expected a CKKS ciphertext"):
        me.matmul_encrypted(bfv.encrypt(np.ones(16, dtype=np.int64)), a, 4)
    low = veil.ckks(poly_modulus_degree=8192, seed=1, galois_steps=None, device="cpu")
    x = low.encrypt(np.ones(16))
    with pytest.raises(veil.DepthError, match="takes 3"):
        me.matmul_encrypted(x, x, 4)


@pytest.mark.skipif(not _core.cuda_device_count(), reason="needs a CUDA GPU")
def test_gpu_matches_cpu():
    d = 8
    rng = np.random.default_rng(3)
    a, b = rng.uniform(-1, 1, (d, d)), rng.uniform(-1, 1, (d, d))
    out = {}
    for dev in ("cpu", "cuda"):
        c = veil.ckks(depth=3, slots=1024, seed=9, galois_steps=None, device=dev)
        out[dev] = np.real(me.matmul_encrypted(c.encrypt(a.ravel()), c.encrypt(b.ravel()),
                                               d).decrypt()).reshape(d, d)
    np.testing.assert_allclose(out["cuda"], out["cpu"], atol=1e-9)
    np.testing.assert_allclose(out["cuda"], a @ b, atol=2.0**-12 * d)


@pytest.mark.parametrize("shape", [(4, 4, 4), (3, 4, 4), (5, 7, 6), (16, 16, 16)])
def test_encrypted_tensors_at_encrypted_tensors(ctx, shape):
    """EncryptedTensor @ EncryptedTensor: (m, l) @ (l, n) with one padded size, against numpy."""
    m, l_, n = shape
    rng = np.random.default_rng(sum(shape))
    a, b = rng.uniform(-1, 1, (m, l_)), rng.uniform(-1, 1, (l_, n))
    c = ctx.encrypt_tensor(a) @ ctx.encrypt_tensor(b)
    assert isinstance(c, veil.EncryptedTensor) and c.shape == (m, n) and c.clean
    assert np.abs(c.decrypt() - a @ b).max() < 2.0**-12 * l_


def test_encrypted_tensor_product_layout_errors(ctx):
    with pytest.raises(ValueError, match="^matrix: encrypted @ encrypted needs both tensors"):
        ctx.encrypt_tensor(np.ones((2, 4))) @ ctx.encrypt_tensor(np.ones((4, 8)))
    with pytest.raises(ValueError, match="perm \\(1, 0\\)"):
        ctx.encrypt_tensor(np.ones((4, 4))).T @ ctx.encrypt_tensor(np.ones((4, 4)))
    with pytest.raises(ValueError, match="^matrix: expected 2-D tensors"):
        ctx.encrypt_tensor(np.ones((4, 4))) @ ctx.encrypt_tensor(np.ones((3, 4)))
    bfv = veil.bfv(poly_modulus_degree=4096, plain_modulus=65537, device="cpu")
    t = bfv.encrypt_tensor(np.ones((2, 2), dtype=np.int64))
    with pytest.raises(TypeError, match="needs CKKS tensors"):
        t @ t


def test_sparse_bootstrapping_context_keeps_the_period():
    """On a context bootstrapping 64 slots, vectors repeat with period 64: the product must
    too, or a bootstrap after it (which sums the copies) scales the values."""
    from veil import _bootstrap as B

    config = B.BootstrapConfig(slots=64)
    chain = B.bootstrap_chain(12, 4, config, 64)
    c = veil.ckks(poly_modulus_degree=4096, security=None, seed=3, galois_steps=None,
                  device="cpu", **chain.context_args())
    c.enable_bootstrapping(config, seed=3)
    d = 8
    rng = np.random.default_rng(8)
    a, b = rng.uniform(-1, 1, (d, d)), rng.uniform(-1, 1, (d, d))
    p = me.matmul_encrypted(c.encrypt(a.ravel()), c.encrypt(b.ravel()), d)
    full = np.real(c.decrypt(p.with_length()))
    np.testing.assert_allclose(full[64:128], full[:64], atol=1e-4)  # the second period
    back = np.real(c.bootstrap(p).decrypt()).reshape(d, d)
    np.testing.assert_allclose(back, a @ b, atol=1e-3 * d)
    with pytest.raises(ValueError, match="^d: a 16 x 16 matrix needs d\\^2 = 256 slots, the "
                       "context has 64"):
        me.matmul_encrypted(c.encrypt(np.ones(64)), c.encrypt(np.ones(64)), 16)
