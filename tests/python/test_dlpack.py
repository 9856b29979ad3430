"""Encoding from and decoding into arrays Veil does not own (DLPack / the buffer protocol).

On the CPU the same C++ path (ArrayView) is exercised with numpy arrays; on a GPU machine with
CuPy or PyTorch, arrays stay on the GPU. Oracle: the host (numpy) encoder's plaintext words and
plaintext arithmetic."""

import numpy as np
import pytest

import veil

RNG = np.random.default_rng(7)


def ckks(device):
    return veil.ckks(poly_modulus_degree=4096, coeff_modulus=[50, 30, 30, 50], scale=2.0**30,
                     security=None, seed=5, device=device)


def bfv(device):
    return veil.bfv(poly_modulus_degree=4096, plain_modulus=65537, seed=5, device=device)


def test_ckks_array_view_equals_host_encoder_word_for_word():
    ctx = ckks("cpu")
    for x in (RNG.uniform(-1, 1, 100), RNG.uniform(-1, 1, 7) + 1j * RNG.uniform(-1, 1, 7)):
        a = ctx.encoder.encode_array(x, 2.0**30, 2)
        b = ctx.encode(x, scale=2.0**30, level=2)
        assert np.array_equal(a.data(), b.data()) and a.scale == b.scale
    pt = ctx.encode(RNG.uniform(-1, 1, ctx.slot_count))
    out = np.empty(ctx.slot_count, np.complex128)
    ctx.encoder.decode_into(pt, out)
    assert np.array_equal(out, ctx.decode(pt))
    real = np.empty(ctx.slot_count, np.float64)
    ctx.encoder.decode_into(pt, real)
    assert np.array_equal(real, ctx.decode(pt).real)


def test_bfv_array_view_equals_host_encoder_word_for_word():
    ctx = bfv("cpu")
    s = RNG.integers(-30000, 30000, 500)
    assert np.array_equal(ctx.encoder.encode_array(s).data(), ctx.encode(s).data())
    u = RNG.integers(0, 65537, 500).astype(np.uint64)
    assert np.array_equal(ctx.encoder.encode_array(u).data(), ctx.encode(u).data())
    pt = ctx.encode(s)
    out = np.empty(ctx.slot_count, np.int64)
    ctx.encoder.decode_into(pt, out)
    assert np.array_equal(out[:500], s) and not out[500:].any()
    uout = np.empty(ctx.slot_count, np.uint64)
    ctx.encoder.decode_into(pt, uout)
    assert np.array_equal(uout[:500].astype(np.int64), np.where(s < 0, s + 65537, s))


def test_array_view_errors_name_the_argument():
    ctx, b = ckks("cpu"), bfv("cpu")
    with pytest.raises(TypeError, match="values: expected a float64 or complex128"):
        ctx.encoder.encode_array(np.ones(4, np.float32), 2.0**30, 1)
    with pytest.raises(ValueError, match="values: a slot is not finite"):
        ctx.encoder.encode_array(np.array([1.0, np.nan]), 2.0**30, 1)
    with pytest.raises(ValueError, match="values: expected at most"):
        ctx.encoder.encode_array(np.ones(ctx.slot_count + 1), 2.0**30, 1)
    with pytest.raises(ValueError, match="out: expected 2048 elements"):
        ctx.encoder.decode_into(ctx.encode([1.0]), np.empty(10, np.complex128))
    with pytest.raises(TypeError, match="values: expected an int64 or uint64"):
        b.encoder.encode_array(np.ones(4, np.int32))
    with pytest.raises(ValueError, match="values: expected every value below plain_modulus"):
        b.encoder.encode_array(np.array([65537], np.uint64))
    with pytest.raises(ValueError, match=r"values: expected every value in \[-"):
        b.encoder.encode_array(np.array([40000], np.int64))
    with pytest.raises(TypeError, match="out: expected an int64 or uint64"):
        b.encoder.decode_into(b.encode([1]), np.empty(4096, np.float64))


def _gpu_arrays():
    """(name, from_numpy, to_numpy, empty) for each GPU array library present."""
    libs = []
    try:
        import cupy

        libs.append(("cupy", cupy.asarray, cupy.asnumpy,
                     lambda n, dt: cupy.empty(n, dtype=dt)))
    except ImportError:
        pass
    try:
        import torch

        if torch.cuda.is_available():
            libs.append(("torch", lambda a: torch.from_numpy(a).cuda(),
                         lambda t: t.cpu().numpy(),
                         lambda n, dt: torch.empty(n, dtype=getattr(torch, np.dtype(dt).name),
                                                   device="cuda")))
    except ImportError:
        pass
    return libs


@pytest.mark.gpu
def test_gpu_arrays_round_trip_without_the_host():
    libs = _gpu_arrays()
    if not libs:
        pytest.skip("neither CuPy nor a CUDA PyTorch is installed")
    ck, bf = ckks("cuda"), bfv("cuda")
    for name, to_gpu, to_host, empty in libs:
        x = RNG.uniform(-1, 1, ck.slot_count)
        gx = to_gpu(x)
        # the GPU array's plaintext equals the host encoder's, word for word
        assert np.array_equal(ck.encode(gx).data(), ck.encode(x).data()), name
        ct = ck.encrypt(gx)
        assert not ct.is_complex
        out = empty(ck.slot_count, np.float64)
        res = ck.decrypt(ct * ct, out=out)
        assert res is out, name
        assert np.max(np.abs(to_host(out) - x * x)) < 1e-5, name
        z = x + 1j * RNG.uniform(-1, 1, ck.slot_count)
        cz = ck.encrypt(to_gpu(z))
        assert cz.is_complex
        zout = empty(ck.slot_count, np.complex128)
        assert np.max(np.abs(to_host(ck.decrypt(cz, out=zout)) - z)) < 1e-5, name

        v = RNG.integers(-1000, 1000, bf.slot_count)
        cv = bf.encrypt(to_gpu(v))
        vout = empty(bf.slot_count, np.int64)
        bf.decrypt(cv * cv, out=vout)
        assert np.array_equal(to_host(vout), (v * v + 32768) % 65537 - 32768), name


@pytest.mark.gpu
def test_gpu_array_on_a_cpu_context_is_refused():
    libs = _gpu_arrays()
    if not libs:
        pytest.skip("neither CuPy nor a CUDA PyTorch is installed")
    ctx = ckks("cpu")
    _, to_gpu, _, _ = libs[0]
    with pytest.raises(ValueError, match="values: the array is on cuda:0 but the context works on cpu"):
        ctx.encrypt(to_gpu(np.ones(4)))
