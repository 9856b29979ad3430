"""Bad input raises ValueError/TypeError naming the argument; never a crash."""

import numpy as np
import pytest

import veil

T = 65537


@pytest.fixture(scope="module")
def ctx():
    return veil.bfv(poly_modulus_degree=4096, plain_modulus=T, device="cpu", seed=1,
                    galois_steps=[1])


def test_degree_not_power_of_two():
    with pytest.raises(ValueError, match="poly_modulus_degree"):
        veil.bfv(poly_modulus_degree=5000, coeff_modulus=[36, 36, 37])


def test_degree_out_of_range():
    with pytest.raises(ValueError, match="poly_modulus_degree"):
        veil.bfv(poly_modulus_degree=1 << 18, coeff_modulus=[50, 50])


def test_prime_not_ntt_friendly():
    with pytest.raises(ValueError, match="coeff_modulus"):
        veil.bfv(poly_modulus_degree=4096, coeff_modulus=[1000003, 0xffffee001])


def test_prime_repeated():
    with pytest.raises(ValueError, match="repeated"):
        veil.bfv(poly_modulus_degree=4096, coeff_modulus=[0xffffee001, 0xffffee001, 0x1ffffe0001])


def test_prime_too_large():
    with pytest.raises(ValueError, match="coeff_modulus"):
        veil.bfv(poly_modulus_degree=4096, coeff_modulus=[(1 << 61) - 1, 0xffffee001])


def test_plain_modulus_not_batching():
    with pytest.raises(ValueError, match="plain_modulus"):
        veil.bfv(poly_modulus_degree=4096, plain_modulus=1 << 16)


def test_above_security_bound_and_explicit_none():
    with pytest.raises(ValueError, match="security"):
        veil.bfv(poly_modulus_degree=4096, coeff_modulus=[50, 50, 50], galois_steps=None)
    ctx = veil.bfv(poly_modulus_degree=4096, coeff_modulus=[50, 50, 50], security=None,
                   galois_steps=None)
    assert ctx.security is None


def test_value_at_least_t(ctx):
    with pytest.raises(ValueError, match="values"):
        ctx.encrypt(np.array([T], dtype=np.uint64))


def test_vector_too_long(ctx):
    with pytest.raises(ValueError, match="values"):
        ctx.encrypt(np.zeros(ctx.slot_count + 1, dtype=np.int64))


def test_non_integer_values(ctx):
    with pytest.raises(TypeError, match="values"):
        ctx.encrypt(np.array([1.5]))


def test_operands_from_different_contexts(ctx):
    other = veil.bfv(poly_modulus_degree=4096, plain_modulus=786433, device="cpu", seed=2,
                     galois_steps=None)
    with pytest.raises(ValueError, match="different context"):
        ctx.encrypt([1]) + other.encrypt([1])


def test_relinearize_wrong_size(ctx):
    c = ctx.encrypt([1])
    with pytest.raises(ValueError, match="size 3"):
        ctx.evaluator.relinearize(c.raw, ctx.relin_keys)


def test_missing_galois_key():
    small = veil.bfv(poly_modulus_degree=4096, plain_modulus=T, device="cpu", seed=1,
                     galois_steps=[1])
    server = small.public()  # a server view cannot make the key on demand
    ct = veil.Ciphertext(server, small.encrypt([1]).raw)
    with pytest.raises(ValueError, match="galois_keys"):
        ct.rotate_rows(2)


def test_decrypt_with_public_key(ctx):
    with pytest.raises(TypeError, match="secret_key"):
        veil.Decryptor(ctx.context, ctx.public_key)


def test_bad_device_string():
    with pytest.raises(ValueError, match="device"):
        veil.bfv(poly_modulus_degree=4096, device="gpu0")


def test_cuda_requested_without_cuda():
    if veil._core.cuda_built() and veil._core.cuda_device_count() > 0:
        pytest.skip("a GPU is present")
    with pytest.raises(RuntimeError, match="CUDA|cuda"):
        veil.bfv(poly_modulus_degree=4096, device="cuda")


@pytest.mark.gpu
def test_cuda_object_with_cpu_object(ctx):
    gpu = ctx.encrypt([1]).to("cuda")
    with pytest.raises(TypeError, match="cuda"):
        ctx.evaluator.add(ctx.encrypt([1]).raw, gpu.raw)
