"""SEAL 4.x wire compatibility (issue 6, item 4).

Oracles: the real SEAL. Objects made by SEAL 4.1 (C++) are committed under tests/data/seal (their
generator is beside them: seeded keys and ciphertexts, zlib and zstd compression); with
seal-python installed (SEAL 4.4; CI installs it) a SEAL client and a Veil server exchange
objects in both directions for BFV, BGV and CKKS, on the CPU and the GPU.
"""

from __future__ import annotations

import pathlib
import struct
import zlib

import numpy as np
import pytest
import veil

DATA = pathlib.Path(__file__).resolve().parents[1] / "data" / "seal"
N = 4096


def read(name: str) -> bytes:
    return (DATA / name).read_bytes()


# ---- objects made by SEAL 4.1 (no seal-python needed) ---------------------------------------

@pytest.mark.parametrize("scheme", ["bfv", "bgv"])
def test_seal41_seeded_objects_decrypt(scheme, device):
    extra = {}
    if scheme == "bfv":
        extra = {"public_key": read("bfv_pk_seeded.bin"), "galois_keys": read("bfv_gk_seeded_zstd.bin")}
    ctx = veil.seal.keyed_context(read(f"{scheme}_parms.bin"), secret_key=read(f"{scheme}_sk.bin"),
                                  relin_keys=read(f"{scheme}_rk_seeded_zlib.bin"), device=device,
                                  **extra)
    ct = veil.seal.load_ciphertext(read(f"{scheme}_ct_seeded_zstd.bin"), ctx)
    m = np.arange(N) % 97
    t = ctx.plain_modulus
    assert np.array_equal(ctx.decrypt(ct, signed=False), m)
    assert np.array_equal(ctx.decrypt(ct * ct + ct, signed=False), (m * m + m) % t)
    if scheme == "bfv":
        rotated = ctx.decrypt(ct.rotate_rows(1), signed=False)
        half = N // 2
        assert np.array_equal(rotated, np.concatenate([np.roll(m[:half], -1), np.roll(m[half:], -1)]))
        fresh = ctx.encrypt(m)  # with SEAL's seeded public key
        assert np.array_equal(ctx.decrypt(fresh, signed=False), m)


def test_seal41_ckks_seeded_objects_decrypt(device):
    ctx = veil.seal.keyed_context(read("ckks_parms.bin"), secret_key=read("ckks_sk.bin"),
                                  relin_keys=read("ckks_rk_seeded_zlib.bin"), device=device,
                                  scale=2.0**30)
    ct = veil.seal.load_ciphertext(read("ckks_ct_seeded_zstd.bin"), ctx)
    m = (np.arange(N // 2) % 17) / 16
    assert veil.precision(m, ctx.decrypt(ct).real)["min_bits"] > 18
    assert ctx.auto_rescale  # the pythonic default, also for SEAL-loaded contexts
    assert veil.precision(m * m, ctx.decrypt(ct * ct).real)["min_bits"] > 15


def test_seal_header_and_fields_are_checked():
    ctx = veil.seal.context(read("bfv_parms.bin"))
    good = read("bfv_ct_seeded_zstd.bin")
    with pytest.raises(ValueError, match="magic"):
        veil.seal.load_ciphertext(b"\x00" + good[1:], ctx)
    with pytest.raises(ValueError, match="version_major"):
        veil.seal.load_ciphertext(good[:3] + b"\x03" + good[4:], ctx)
    with pytest.raises(ValueError, match="size"):
        veil.seal.load_ciphertext(good + b"\x00", ctx)
    with pytest.raises(ValueError):
        veil.seal.load_ciphertext(good[:-1], ctx)
    with pytest.raises(ValueError, match="corrupt zstd"):
        veil.seal.load_ciphertext(good[:40] + bytes(64) + good[104:], ctx)
    other = veil.seal.context(read("bgv_parms.bin"))
    with pytest.raises(ValueError, match="parms_id"):
        veil.seal.load_ciphertext(good, other)
    with pytest.raises(ValueError, match="parms_id"):  # a public key is no ciphertext
        veil.seal.load_ciphertext(read("bfv_pk_seeded.bin"), ctx)
    # split: a stream of two objects
    parts = veil.seal.split(read("bfv_parms.bin") + good)
    assert [len(p) for p in parts] == [129, len(good)]


def _body(blob: bytes) -> bytes:
    """The members after a SEAL header, decompressed with Python's own zlib / zstandard."""
    mode = blob[5]
    if mode == 0:
        return blob[16:]
    if mode == 1:
        return zlib.decompress(blob[16:])
    zstandard = pytest.importorskip("zstandard")
    return zstandard.ZstdDecompressor().decompress(blob[16:])


def _reframe(body: bytes, mode: int, version=(4, 1)) -> bytes:
    """A SEAL object with the given members, compressed by Python's zlib / zstandard."""
    if mode == 1:
        body = zlib.compress(body)
    elif mode == 2:
        zstandard = pytest.importorskip("zstandard")
        body = zstandard.ZstdCompressor(level=3).compress(body)
    return struct.pack("<HBBBBHQ", 0xA15E, 16, version[0], version[1], mode, 0, 16 + len(body)) + body


def test_compression_against_pythons_zlib_and_zstd():
    ctx = veil.bfv(poly_modulus_degree=N, seed=3, device="cpu", galois_steps=None)
    ct = ctx.encrypt(np.arange(16))
    plain = veil.seal.save(ct)
    for mode, name in [(1, "zlib"), (2, "zstd")]:
        packed = veil.seal.save(ct, compression=name)
        assert packed[5] == mode
        assert _body(packed) == plain[16:]  # Veil's stream decodes with an independent decoder
        framed = _reframe(plain[16:], mode)  # and Veil decodes an independent encoder's stream
        assert np.array_equal(veil.seal.load_ciphertext(framed, ctx).raw.data(), ct.raw.data())


def test_per_prime_keys_convert_to_larger_digits(device):
    """SEAL's layout (alpha = 1, one special prime) loaded into a Veil context with alpha = 2:
    each digit's key is the sum of its primes' keys. Oracle: plaintext arithmetic mod t."""
    n = 8192
    primes = veil.CoeffModulus.create(n, [30, 30, 30, 30, 60])
    seal_like = veil.bfv(poly_modulus_degree=n, coeff_modulus=primes, galois_steps=[1],
                         device="cpu", seed=7)
    assert seal_like.context.alpha == 1
    wide = veil.seal.keyed_context(veil.seal.save(seal_like.context), device=device,
                                   secret_key=veil.seal.save(seal_like.secret_key),
                                   public_key=veil.seal.save(seal_like.public_key))
    params = wide.context.params
    params.alpha = 2
    ctx2 = veil._core.Context(params, 128)
    assert ctx2.alpha == 2 and ctx2.parameter_hash != seal_like.context.parameter_hash
    rk = veil.seal.load_relin_keys(veil.seal.save(seal_like.relin_keys), ctx2, device)
    gk = veil.seal.load_galois_keys(veil.seal.save(seal_like.galois_keys), ctx2, device)
    sk = veil.seal.load_secret_key(veil.seal.save(seal_like.secret_key), ctx2, device)
    enc = veil.Encryptor(ctx2, sk, 1)
    be = veil.BatchEncoder(ctx2)
    x = np.arange(n, dtype=np.uint64) % 50
    ct = enc.encrypt(be.encode_unsigned(x, device))
    ev = veil.Evaluator(ctx2)
    sq = ev.rotate_rows(ev.relinearize(ev.multiply(ct, ct), rk), 1, gk)
    got = be.decode_unsigned(veil.Decryptor(ctx2, sk).decrypt(sq))
    half = n // 2
    want = (x * x) % seal_like.plain_modulus
    assert np.array_equal(got, np.concatenate([np.roll(want[:half], -1), np.roll(want[half:], -1)]))
    with pytest.raises(ValueError, match="alpha"):
        veil.seal.save(rk)  # digit keys cannot be split back into per-prime keys


# ---- with the real SEAL through seal-python ------------------------------------------------------

seal = pytest.importorskip("seal", reason="seal-python (the SEAL 4.4 oracle) is not installed")


def _seal_context(scheme: str):
    kind = {"bfv": seal.scheme_type.bfv, "bgv": seal.scheme_type.bgv, "ckks": seal.scheme_type.ckks}[scheme]
    parms = seal.EncryptionParameters(kind)
    parms.set_poly_modulus_degree(N)
    if scheme == "ckks":
        parms.set_coeff_modulus(seal.CoeffModulus.Create(N, [36, 30, 36]))
    else:
        parms.set_coeff_modulus(seal.CoeffModulus.BFVDefault(N))
        parms.set_plain_modulus(seal.PlainModulus.Batching(N, 20))
    return parms, seal.SEALContext(parms)


def _seal_load(sctx, kind: str, data: bytes):
    obj = {"ct": seal.Ciphertext, "pt": seal.Plaintext}[kind]()
    obj.load_bytes(sctx, bytes(data))
    return obj


@pytest.mark.parametrize("scheme", ["bfv", "bgv", "ckks"])
def test_seal_client_veil_server(scheme, device):
    """SEAL makes keys and encrypts; Veil multiplies, relinearizes, rotates and adds; SEAL
    decrypts the result."""
    parms, sctx = _seal_context(scheme)
    kg = seal.KeyGenerator(sctx)
    pk, rk, gk = kg.create_public_key(), kg.create_relin_keys(), seal.GaloisKeys()
    kg.create_galois_keys([1], gk)
    enc, dec = seal.Encryptor(sctx, pk), seal.Decryptor(sctx, kg.secret_key())
    opts = {"scale": 2.0**30} if scheme == "ckks" else {}
    server = veil.seal.keyed_context(parms.to_bytes(), public_key=pk.to_string(),
                                     relin_keys=rk.to_string(), galois_keys=gk.to_string(),
                                     device=device, **opts)
    assert server.secret_key is None
    if scheme == "ckks":
        ce = seal.CKKSEncoder(sctx)
        x = np.linspace(-1, 1, N // 2)
        ct = enc.encrypt(ce.encode(x, 2.0**30))
        v = veil.seal.load_ciphertext(ct.to_string(), server)
        sq = v * v  # rescaled (auto_rescale)
        got = ce.decode(dec.decrypt(_seal_load(sctx, "ct", veil.seal.save(sq))))
        assert veil.precision(x * x, got)["min_bits"] > 15
        r = sq.rotate(1) + sq
        got = ce.decode(dec.decrypt(_seal_load(sctx, "ct", veil.seal.save(r))))
        stats = veil.precision(np.roll(x * x, -1) + x * x, got)
        # Key switching at scale 2^30 with a 36-bit special prime over a 36-bit digit leaves a
        # heavy-tailed error: SEAL alone on these parameters measures 11.8-14.0 bits at the worst
        # slot and 18.7-18.8 on average over 8 key sets (Veil: 11.1-14.8 and 18.7-18.9).
        assert stats["min_bits"] > 9 and stats["mean_bits"] > 17, stats
        return
    be = seal.BatchEncoder(sctx)
    t = parms.plain_modulus().value()
    x = np.arange(N) % 1000
    v = veil.seal.load_ciphertext(enc.encrypt(be.encode(x.astype(np.int64))).to_string(), server)
    r = (v * v).rotate_rows(1) + v
    got = np.array(be.decode_uint64(dec.decrypt(_seal_load(sctx, "ct", veil.seal.save(r)))))
    half = N // 2
    sq = (x * x) % t
    want = (np.concatenate([np.roll(sq[:half], -1), np.roll(sq[half:], -1)]) + x) % t
    assert np.array_equal(got, want)


@pytest.mark.parametrize("scheme", ["bfv", "bgv", "ckks"])
def test_veil_client_seal_server(scheme, device):
    """Veil makes keys and encrypts; SEAL loads Veil's keys and evaluates; Veil decrypts."""
    if scheme == "ckks":
        ctx = veil.ckks(poly_modulus_degree=N, coeff_modulus=[36, 30, 36], scale=2.0**30,
                        galois_steps=[1], device=device, seed=9)
    else:
        maker = veil.bfv if scheme == "bfv" else veil.bgv
        ctx = maker(poly_modulus_degree=N, galois_steps=[1], device=device, seed=9)
    sparms = seal.EncryptionParameters(seal.scheme_type.none)
    sparms.load_bytes(veil.seal.save(ctx.context))
    sctx = seal.SEALContext(sparms)
    assert sctx.parameters_set(), sctx.parameter_error_message()
    assert tuple(sctx.key_context_data().parms_id()) == veil.seal.parms_id(ctx)
    assert tuple(sctx.first_parms_id()) == veil.seal.parms_id(ctx, ctx.max_level)
    rk = sctx.from_relin_str(veil.seal.save(ctx.relin_keys))
    gk = sctx.from_galois_str(veil.seal.save(ctx.galois_keys, compression="none", version=(4, 4)))
    pk = sctx.from_public_str(veil.seal.save(ctx.public_key))
    ev = seal.Evaluator(sctx)
    if scheme == "ckks":
        x = np.linspace(-1, 1, N // 2)
        ct = _seal_load(sctx, "ct", veil.seal.save(ctx.encrypt(x)))
        sq = ev.rescale_to_next(ev.relinearize(ev.multiply(ct, ct), rk))
        res = ev.rotate_vector(sq, 1, gk)
        got = ctx.decrypt(veil.seal.load_ciphertext(res.to_string(), ctx)).real
        stats = veil.precision(np.roll(x * x, -1), got)
        assert stats["min_bits"] > 9 and stats["mean_bits"] > 17, stats  # see the test above
        # SEAL encrypts with Veil's public key; Veil decrypts.
        pt = seal.CKKSEncoder(sctx).encode(x, 2.0**30)
        back = ctx.decrypt(veil.seal.load_ciphertext(seal.Encryptor(sctx, pk).encrypt(pt).to_string(), ctx))
        assert veil.precision(x, back.real)["min_bits"] > 15
        return
    t = ctx.plain_modulus
    x = np.arange(N) % 1000
    ct = _seal_load(sctx, "ct", veil.seal.save(ctx.encrypt(x), compression="none"))
    res = ev.rotate_rows(ev.relinearize(ev.multiply(ct, ct), rk), 1, gk)
    res = ev.add(res, ct)
    got = ctx.decrypt(veil.seal.load_ciphertext(res.to_string(), ctx), signed=False)
    half = N // 2
    sq = (x * x) % t
    assert np.array_equal(got, (np.concatenate([np.roll(sq[:half], -1), np.roll(sq[half:], -1)]) + x) % t)
    if scheme == "bgv":  # SEAL switches levels; Veil reads the correction factor it leaves
        low = ev.mod_switch_to_next(ev.relinearize(ev.multiply(ct, ct), rk))
        got = ctx.decrypt(veil.seal.load_ciphertext(low.to_string(), ctx), signed=False)
        assert np.array_equal(got, sq)
    # Veil's secret key in SEAL's decryptor, and SEAL's public-key encryption under Veil's key.
    sk = sctx.from_secret_str(veil.seal.save(ctx.secret_key))
    be = seal.BatchEncoder(sctx)
    assert np.array_equal(np.array(be.decode_uint64(seal.Decryptor(sctx, sk).decrypt(ct))), x)
    fresh = seal.Encryptor(sctx, pk).encrypt(be.encode(x.astype(np.int64)))
    assert np.array_equal(ctx.decrypt(veil.seal.load_ciphertext(fresh.to_string(), ctx), signed=False), x)


def test_seeded_expansion_matches_seal():
    """A seeded ciphertext with a chosen seed: SEAL (4.4) expands it, Veil expands it, and the
    two c1 polynomials agree word for word (including SEAL's rejection sampling)."""
    parms, sctx = _seal_context("bfv")
    ctx = veil.seal.context(parms.to_bytes())
    level = ctx.max_level
    pid = veil.seal.parms_id(ctx, level)
    k = level + 1
    rng = np.random.default_rng(1)
    primes = ctx.coeff_modulus_at(level)
    c0 = np.concatenate([rng.integers(0, q, N, dtype=np.uint64) for q in primes])
    seed = bytes(rng.integers(0, 256, 64, dtype=np.uint8))
    members = struct.pack("<4QBQQQdQ", *pid, 0, 2, N, k, 1.0, 1)
    members += struct.pack("<HBBBBHQ", 0xA15E, 16, 4, 1, 0, 0, 24 + 8 * N * k) + struct.pack("<Q", N * k)
    members += c0.tobytes()
    members += struct.pack("<HBBBBHQ", 0xA15E, 16, 4, 1, 0, 0, 81) + b"\x01" + seed
    blob = _reframe(members, 0)
    theirs = _seal_load(sctx, "ct", blob).to_string()  # SEAL re-saves it expanded
    ours = veil.seal.load_ciphertext(blob, ctx)
    assert veil.seal.save(ours, version=(4, 4)) == theirs


def test_plaintext_strings_match_seal():
    ctx = veil.bfv(poly_modulus_degree=N, plain_modulus=1024, encoding="coefficients",
                   device="cpu", seed=1)
    for text in ["1x^3 + 2Fx^1 + 3", "3FFx^4095 + 1", "7", "0", "1Ax^2"]:
        pt = ctx.encode(text)
        assert ctx.decode_string(pt) == seal.Plaintext(text).to_string()
        sealed = veil.seal.save(pt)
        assert veil.seal.load_plaintext(_seal_plain_bytes(text), ctx.context).coefficients().tolist() == \
            pt.coefficients().tolist()
        assert len(sealed) == 88 + 8 * N


def _seal_plain_bytes(text: str) -> bytes:
    return seal.Plaintext(text).to_bytes()
