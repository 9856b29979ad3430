"""Veil's serialization from Python (issue 6, items 1-3): to_bytes/from_bytes, save/load and
pickling of every object and of the pythonic contexts; seeded sizes; moving between devices;
secret keys only through explicit calls; hostile bytes answered with ValueError.

Oracles: the original object's words (bit-identical round trips) and plaintext arithmetic
(objects that went through bytes still compute the right answer)."""

from __future__ import annotations

import pickle

import numpy as np
import pytest
import veil
from veil import _core

N = 4096


def small(scheme: str, device: str, **kw):
    if scheme == "ckks":
        return veil.ckks(poly_modulus_degree=N, coeff_modulus=[36, 30, 36], scale=2.0**30,
                         galois_steps=[1], device=device, seed=5, **kw)
    maker = veil.bfv if scheme == "bfv" else veil.bgv
    return maker(poly_modulus_degree=N, galois_steps=[1], device=device, seed=5, **kw)


def raw_objects(ctx):
    pt = ctx.encode([1, 2, 3])
    ct = ctx.encrypt([1, 2, 3])
    return {"plaintext": pt, "ciphertext": ct.raw, "public_key": ctx.public_key,
            "relin_keys": ctx.relin_keys, "galois_keys": ctx.galois_keys}


@pytest.mark.parametrize("scheme", ["bfv", "bgv", "ckks"])
@pytest.mark.parametrize("compression", ["none", "zstd"])
def test_every_object_round_trips(scheme, compression, device, tmp_path):
    ctx = small(scheme, device)
    objs = raw_objects(ctx)
    objs["secret_key"] = ctx.secret_key
    for name, obj in objs.items():
        cls = type(obj)
        for seeded in (None, False):
            data = obj.to_bytes(compression, seeded)
            for target in ("cpu", device):
                back = cls.from_bytes(data, ctx.context, target)
                assert back.device == veil.resolve_device(target)
                if name == "galois_keys":
                    assert back.galois_elts == obj.galois_elts
                else:
                    assert np.array_equal(back.data(), obj.data()), name
        path = tmp_path / f"{name}.bin"
        obj.save(str(path), compression)
        assert cls.load(str(path), ctx.context, device).device == obj.device
    params = ctx.context.params
    again = _core.EncryptionParameters.from_bytes(params.to_bytes())
    assert again.parameter_hash == params.parameter_hash == ctx.context.parameter_hash


def test_seeded_halves_fresh_keys_and_symmetric_ciphertexts():
    ctx = small("bfv", "cpu")
    for key in (ctx.public_key, ctx.relin_keys, ctx.galois_keys):
        full = len(key.to_bytes("none", seeded=False))
        assert abs(len(key.to_bytes("none", seeded=True)) / full - 0.5) < 0.01
    sym = ctx.encrypt(np.arange(8), symmetric=True)
    assert len(sym.to_bytes("none")) < 0.51 * len(sym.to_bytes("none", seeded=False))
    with pytest.raises(ValueError, match="seeded"):
        ctx.encrypt([1]).to_bytes(seeded=True)  # public-key ciphertexts have no seed
    back = veil.Ciphertext.from_bytes(sym.to_bytes(), ctx)
    assert np.array_equal(ctx.decrypt(back)[:8], np.arange(8))


@pytest.mark.parametrize("scheme", ["bfv", "ckks"])
def test_pickle_raw_objects_and_contexts(scheme):
    ctx = small(scheme, "cpu")
    for name, obj in raw_objects(ctx).items():
        back = pickle.loads(pickle.dumps(obj))
        if name != "galois_keys":
            assert np.array_equal(back.data(), obj.data()), name
    params = pickle.loads(pickle.dumps(ctx.context.params))
    assert params.coeff_modulus == ctx.coeff_modulus
    assert pickle.loads(pickle.dumps(ctx.context)).parameter_hash == ctx.context.parameter_hash
    with pytest.raises(TypeError, match="never pickled"):
        pickle.dumps(ctx.secret_key)


def test_pythonic_contexts_never_pickle_a_secret_key():
    client = small("bfv", "cpu")
    with pytest.raises(TypeError, match="secret key"):
        pickle.dumps(client)
    data = pickle.dumps(client.public())
    assert client.secret_key.to_bytes("none")[48:] not in data  # no key material leaks
    server = pickle.loads(data)
    assert server.secret_key is None
    x = np.arange(20)
    ct = client.encrypt(x)
    # The server computes on a pickled ciphertext; the client unpickles the result into itself.
    at_server = pickle.loads(pickle.dumps(ct))
    assert at_server.ctx.secret_key is not None  # same process: the client's context is found
    with pytest.raises(ValueError, match="public context"):
        server.decrypt(ct)
    prod = veil.Ciphertext(server, at_server.raw) * veil.Ciphertext(server, at_server.raw)
    back = pickle.loads(pickle.dumps(prod))
    assert np.array_equal(client.decrypt(back)[:20], x * x)


@pytest.mark.parametrize("scheme", ["bfv", "bgv", "ckks"])
def test_context_bundles(scheme, device):
    ctx = small(scheme, device)
    public = veil.load_context(ctx.to_bytes(), device="cpu")
    assert public.secret_key is None and public.relin_keys is not None
    assert public.key_set_id == ctx.key_set_id
    full = veil.load_context(ctx.to_bytes(include_secret_key=True), device=device)
    vals = [0.5, -0.25] if scheme == "ckks" else [3, 4]
    ct = public.encrypt(vals)
    ct2 = ct * ct
    got = full.decrypt(type(ct).from_bytes(ct2.to_bytes(), full))
    if scheme == "ckks":
        assert np.allclose(got.real[:2], np.square(vals), atol=1e-4)
    else:
        assert np.array_equal(got[:2], np.square(vals))
    with pytest.raises(ValueError, match="include_secret_key"):
        public.to_bytes(include_secret_key=True)


def test_bad_bundles_and_objects_raise_value_error():
    ctx = small("bfv", "cpu")
    good = ctx.to_bytes()
    for bad in (b"", b"VEILCTX\x01", good[:-1], good + b"\x00", b"X" + good[1:],
                good[:12] + b"[" + good[13:]):
        with pytest.raises(ValueError):
            veil.load_context(bad)
    with pytest.raises(TypeError):
        veil.Ciphertext.from_bytes("not bytes", ctx)
    other = veil.bfv(poly_modulus_degree=8192, device="cpu", galois_steps=None)
    with pytest.raises(ValueError, match="parameter_hash"):
        veil.Ciphertext.from_bytes(ctx.encrypt([1]).to_bytes(), other)
    with pytest.raises(ValueError, match="load limit"):
        _core.RelinKeys.from_bytes(ctx.relin_keys.to_bytes(), ctx.context, "cpu", max_bytes=1000)


def test_coefficient_encoding_t2_and_t1024(device):
    for t in (2, 1024):
        for maker in (veil.bfv, veil.bgv):
            ctx = maker(poly_modulus_degree=N, plain_modulus=t, encoding="coefficients",
                        device=device, seed=2)
            assert ctx.galois_keys is None
            rng = np.random.default_rng(t)
            a = rng.integers(0, t, N)
            b = rng.integers(0, t, N)
            want = np.zeros(N, dtype=object)
            for i in np.nonzero(a)[0]:  # negacyclic schoolbook product mod t
                sh = np.roll(b.astype(object), i)
                sh[:i] = -sh[:i]
                want = want + int(a[i]) * sh
            want = np.array([int(v) % t for v in want], dtype=np.int64)
            ca, cb = ctx.encrypt(a), ctx.encrypt(b)
            assert np.array_equal(ctx.decrypt(ca * cb, signed=False), want)
            assert np.array_equal(ctx.decrypt(ca * ctx.encode(b), signed=False), want)
            assert np.array_equal(ctx.decrypt(ca + cb, signed=False), (a + b) % t)
            assert np.array_equal(ctx.decrypt(ca + 1, signed=False), (a + np.eye(1, N, 0, dtype=np.int64)[0]) % t)
            with pytest.raises(ValueError, match="batching"):
                ca.rotate_rows(1)


def test_coefficient_strings():
    ctx = veil.bfv(poly_modulus_degree=N, plain_modulus=1024, encoding="coefficients",
                   device="cpu", seed=1)
    pt = ctx.encode("1x^3 + 2Fx^1 + 3")
    c = pt.coefficients()
    assert c[3] == 1 and c[1] == 0x2F and c[0] == 3 and c[2] == 0
    assert ctx.decode_string(ctx.decryptor.decrypt(ctx.encrypt("1x^3 + 2Fx^1 + 3").raw)) == "1x^3 + 2Fx^1 + 3"
    for bad, what in [("1x^3 + 2x^5", "decreasing"), ("400", "below t"), ("1x^4096", "below N"),
                      ("1y^2", "malformed")]:
        with pytest.raises(ValueError, match=what):
            ctx.encode(bad)
    with pytest.raises(ValueError, match="batching"):
        veil.bfv(poly_modulus_degree=N, plain_modulus=1024, device="cpu")


@pytest.mark.parametrize("scheme", ["bfv", "bgv", "ckks"])
def test_pickle_protocol_5_hands_the_ciphertext_bytes_out_of_band(scheme):
    """Ray and multiprocessing pickle with protocol 5 and a buffer callback: the ciphertext's
    words must leave as one out-of-band buffer (no copy into the pickle stream), and every
    protocol must give back the same ciphertext (checked against the plaintext)."""
    ctx = small(scheme, "cpu")
    x = np.arange(40) % 17
    ct = ctx.encrypt(x)
    buffers: list = []
    stream = pickle.dumps(ct, protocol=5, buffer_callback=buffers.append)
    assert len(buffers) == 1
    body = buffers[0].raw()
    assert body.nbytes >= ct.raw.nbytes  # the words themselves (>= 8 bytes per 32-bit word)
    assert len(stream) < 4096  # the stream holds the parameters and the record, not the words
    outs = [pickle.loads(stream, buffers=[body]), pickle.loads(pickle.dumps(ct, protocol=5)),
            pickle.loads(pickle.dumps(ct, protocol=4)), pickle.loads(pickle.dumps(ct, protocol=2))]
    for back in outs:
        assert len(back) == len(ct)
        got = back.decrypt()[:40]
        if scheme == "ckks":
            np.testing.assert_allclose(got, x, atol=1e-3)
        else:
            np.testing.assert_array_equal(got, x)
        np.testing.assert_array_equal(back.raw.data(), ct.raw.data())


@pytest.mark.parametrize("word_bits", [32, 64])
def test_words_saved_as_stored_and_loaded_in_place(word_bits, device):
    """The body of a ciphertext is its words as 4-byte little-endian integers (the words fit 32
    bits), with the CRC-32 of descriptor and body in the header: checked against numpy and zlib,
    not against the loader. Loading takes them from any alignment, into either word size."""
    import struct
    import zlib

    def make(bits):
        return veil.ckks(poly_modulus_degree=N, coeff_modulus=[30, 25, 30], scale=2.0**25,
                         galois_steps=None, device=device, seed=5, word_bits=bits)

    ctx = make(word_bits)
    x = np.linspace(-1, 1, 40)
    ct = (ctx.encrypt(x) * 2.0).raw  # no longer a fresh encryption: never seeded
    data = ct.to_bytes("none")
    (magic, _, _, _, compression, flags, _, crc, _, desc_len, _, body_len,
     stored_len) = struct.unpack_from("<4sHBBBBHIQIIQQ", data, 0)
    assert magic == b"VEIL"
    assert compression == 0 and flags & 4  # 'none', 4-byte words
    desc, body = data[48:48 + desc_len], data[48 + desc_len:]
    assert body_len == stored_len == len(body) == ct.data().size * 4
    assert body == ct.data().astype("<u4").tobytes()
    assert crc == zlib.crc32(desc + body)
    for bits in (32, 64):
        target = ctx if bits == word_bits else make(bits)
        for shift in range(4):  # the body at every alignment
            buf = bytearray(shift) + data
            back = _core.Ciphertext.from_bytes(memoryview(buf)[shift:], target.context, device)
            np.testing.assert_array_equal(back.data(), ct.data())
    bad = bytearray(data)
    bad[-1] ^= 1
    with pytest.raises(ValueError, match="crc32"):
        _core.Ciphertext.from_bytes(bytes(bad), ctx.context, device)
    y = ctx.encrypt(x)
    _core.set_transparent_check(False)  # let c - c through, so that saving is what refuses it
    try:
        zero = (y - y).raw
    finally:
        _core.set_transparent_check(True)
    with pytest.raises(ValueError, match="transparent"):
        zero.to_bytes("none")


def test_eight_byte_words_load_from_any_alignment(device):
    """Words above 32 bits are stored as 8-byte little-endian integers (checked against numpy)
    and load from every alignment of the body."""
    import struct

    ctx = veil.ckks(poly_modulus_degree=N, coeff_modulus=[36, 34, 36], scale=2.0**34,
                    galois_steps=None, device=device, seed=5)
    ct = (ctx.encrypt(np.linspace(-1, 1, 40)) * 2.0).raw
    data = ct.to_bytes("none")
    flags, desc_len = struct.unpack_from("<B", data, 9)[0], struct.unpack_from("<I", data, 24)[0]
    assert flags & 4 == 0  # 8-byte words
    assert data[48 + desc_len:] == ct.data().astype("<u8").tobytes()
    for shift in range(8):
        buf = bytearray(shift) + data
        back = _core.Ciphertext.from_bytes(memoryview(buf)[shift:], ctx.context, device)
        np.testing.assert_array_equal(back.data(), ct.data())
