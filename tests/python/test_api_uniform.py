"""One ciphertext API across BFV, BGV and CKKS (issue 24, item 4).

The encrypted length (``len(ct)``, ``ct.shape``, ``ct.decrypt()``) and how it propagates through
operations, serialization and pickling; ``x ** k`` and ``x / c`` on CKKS; ``rotate`` on every
scheme; ``x @ x`` refused with the alternatives; ``veil.load`` recognising any object; loaders
refusing another class's bytes; loaded and unpickled CKKS ciphertexts decrypting like fresh ones.

Oracles: numpy on the plaintext values (exact mod t for BFV/BGV, within CKKS noise), and the
documented byte layout (docs/serialization.md) for the record in the bytes.
"""

from __future__ import annotations

import pickle

import numpy as np
import pytest

import veil
from veil import _core

T = 65537
RNG = np.random.default_rng(24)
SCHEMES = ["bfv", "bgv", "ckks"]


@pytest.fixture(scope="module")
def contexts():
    return {
        "bfv": veil.bfv(poly_modulus_degree=8192, plain_modulus=T, seed=1, device="cpu"),
        "bgv": veil.bgv(poly_modulus_degree=8192, plain_modulus=T, seed=2, device="cpu"),
        "ckks": veil.ckks(poly_modulus_degree=8192, seed=3, device="cpu"),
    }


def values(scheme: str, n: int) -> np.ndarray:
    if scheme == "ckks":
        return RNG.uniform(-1, 1, n)
    return RNG.integers(-50, 50, n)


def check(scheme: str, got, want, tol: float = 1e-4) -> None:
    """``got`` (decrypted) equals ``want`` (numpy): exactly mod t, or within CKKS noise."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.shape == want.shape, (got.shape, want.shape)
    if scheme == "ckks":
        assert np.max(np.abs(got - want), initial=0.0) < tol
    else:
        centered = (want.astype(np.int64) + T // 2) % T - T // 2
        assert np.array_equal(got, centered)


def full_row(scheme: str, ctx, v: np.ndarray) -> np.ndarray:
    """The row of N/2 slots holding v (zeros after it): what rotations turn."""
    row = np.zeros(ctx.slot_count if scheme == "ckks" else ctx.row_size, dtype=v.dtype)
    row[:len(v)] = v
    return row


# ---- length and decrypt ---------------------------------------------------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
def test_encrypt_remembers_the_length_and_decrypt_returns_it(contexts, scheme):
    ctx = contexts[scheme]
    v = values(scheme, 16)
    ct = ctx.encrypt(v)
    assert len(ct) == 16 and ct.shape == (16,)
    check(scheme, ct.decrypt(), v)
    check(scheme, ctx.decrypt(ct), v)
    full = ctx.slot_count
    assert len(ctx.encrypt(3 if scheme != "ckks" else 0.5)) == full  # a scalar fills every slot
    assert len(ctx.encrypt(ctx.encode(v))) == full  # a Plaintext: every slot
    assert len(ctx.encrypt(values(scheme, full))) == full
    empty = ctx.encrypt(np.zeros(0, dtype=np.int64 if scheme != "ckks" else np.float64))
    assert len(empty) == 0 and empty.decrypt().shape == (0,) and bool(empty)
    every = ct.with_length()  # every slot: the zeros after the vector
    assert len(every) == full and not np.any(np.round(every.decrypt()[16:], 3))
    with pytest.raises(ValueError, match="length"):
        ct.with_length(full + 1)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_ct_decrypt_needs_the_secret_key(contexts, scheme):
    ctx = contexts[scheme]
    server = ctx.public()
    v = values(scheme, 4)
    at_server = veil.load(ctx.encrypt(v).to_bytes(), server)
    assert len(at_server) == 4
    with pytest.raises(ValueError, match="no secret key"):
        at_server.decrypt()
    check(scheme, ctx.decrypt(at_server), v)  # the client's context decrypts it


def test_coefficient_encoding_keeps_its_semantics():
    bits = veil.bfv(poly_modulus_degree=4096, plain_modulus=2, encoding="coefficients",
                    seed=4, device="cpu")
    p = bits.encrypt([1, 0, 1]) * bits.encrypt([1, 1])  # (1 + x^2)(1 + x) = 1 + x + x^2 + x^3
    assert len(p) == 4096
    got = p.decrypt()
    assert got.shape == (4096,) and got[:4].tolist() == [1, 1, 1, 1] and not got[4:].any()
    assert len(veil.load(p.to_bytes(), bits)) == 4096
    with pytest.raises(ValueError, match="length"):
        p.with_length(4)


# ---- how the length propagates --------------------------------------------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
def test_elementwise_operations_keep_equal_lengths_and_refuse_others(contexts, scheme):
    ctx = contexts[scheme]
    a, b = values(scheme, 16), values(scheme, 16)
    x, y = ctx.encrypt(a), ctx.encrypt(b)
    for got, want in ((x + y, a + b), (x - y, a - b), (x * y, a * b), (x + b, a + b),
                      (x * b, a * b), (b - x, b - a), (x * 3, a * 3), (-x, -a)):
        assert len(got) == 16
        check(scheme, got.decrypt(), want)
    short = ctx.encrypt(values(scheme, 8))
    for op in (lambda: x + short, lambda: x - short, lambda: x * short, lambda: short * x):
        with pytest.raises(ValueError, match="lengths (16 and 8|8 and 16)"):
            op()
    with pytest.raises(ValueError, match="other: a vector of 8 values for a ciphertext of "
                                         "length 16"):
        x * values(scheme, 8)
    with pytest.raises(ValueError, match="other"):
        x + values(scheme, ctx.slot_count)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_unary_operations_keep_the_length(contexts, scheme):
    ctx = contexts[scheme]
    a = values(scheme, 12)
    x = ctx.encrypt(a)
    for got, want in ((x ** 2, a ** 2), (x.square(), a * a), (x.to("cpu"), a)):
        assert len(got) == 12
        check(scheme, got.decrypt(), want)
    if scheme != "bfv":
        low = x.mod_switch_to_next()
        assert len(low) == 12
        check(scheme, low.decrypt(), a)
    assert all(len(r) == 12 for r in x.rotate_many([1, 2]))


@pytest.mark.parametrize("scheme", SCHEMES)
def test_sum_dot_matmul_lengths_against_numpy(contexts, scheme):
    ctx = contexts[scheme]
    a, w = values(scheme, 10), values(scheme, 10)
    mat = values(scheme, 30).reshape(10, 3)
    x = ctx.encrypt(a)
    s = x.sum()
    assert len(s) == 1
    check(scheme, s.decrypt(), [a.sum()])
    d = x.dot(w)
    assert len(d) == 1
    check(scheme, d.decrypt(), [a @ w])
    check(scheme, (x @ w).decrypt(), [a @ w])  # a plaintext vector on the right: dot
    check(scheme, x.dot(ctx.encrypt(w)).decrypt(), [a @ w])
    y = x @ mat
    assert len(y) == 3 and y.shape == (3,)
    check(scheme, y.decrypt(), a @ mat, tol=1e-3)
    check(scheme, (mat.T @ x).decrypt(), mat.T @ a, tol=1e-3)  # M @ v, numpy's convention
    with pytest.raises(TypeError, match=r"x\.dot\(y\).*x \* y"):
        x @ x
    with pytest.raises(ValueError, match="matrix: .* needs a vector of 4 values.* length 10"):
        x @ values(scheme, 8).reshape(4, 2)


@pytest.mark.parametrize("scheme", SCHEMES)
@pytest.mark.parametrize("k", [1, 3, -2])
def test_rotate_on_every_scheme_turns_the_row(contexts, scheme, k):
    ctx = contexts[scheme]
    a = values(scheme, 8)
    x = ctx.encrypt(a)
    r = x.rotate(k)
    assert len(r) == 8
    check(scheme, r.decrypt(), np.roll(full_row(scheme, ctx, a), -k)[:8])
    if scheme != "ckks":  # rotate is rotate_rows: both rows of the 2 x N/2 matrix turn
        b = values(scheme, ctx.slot_count)
        rows = b.reshape(2, -1)
        want = np.concatenate([np.roll(rows[0], -k), np.roll(rows[1], -k)])
        check(scheme, ctx.encrypt(b).rotate(k).decrypt(), want)


@pytest.mark.parametrize("scheme", ["bfv", "bgv"])
def test_rotate_columns_gives_both_rows(contexts, scheme):
    ctx = contexts[scheme]
    a = values(scheme, 5)
    moved = ctx.encrypt(a).rotate_columns()
    assert len(moved) == ctx.slot_count
    want = np.zeros(ctx.slot_count, dtype=np.int64)
    want[ctx.row_size:ctx.row_size + 5] = a
    check(scheme, moved.decrypt(), want)


# ---- CKKS: ** and / -------------------------------------------------------------------------


def test_ckks_power_against_numpy(contexts):
    ck = contexts["ckks"]
    a = RNG.uniform(-1, 1, 32)
    x = ck.encrypt(a)
    for k in (1, 2, 3, 4):
        got = x ** k
        assert len(got) == 32
        check("ckks", got.decrypt(), a ** k, tol=1e-3)
    assert (x ** 4).level == x.level - 2  # ceil(log2 4) levels
    with pytest.raises(ValueError, match="exponent"):
        x ** 0
    with pytest.raises(TypeError, match="exponent"):
        x ** 2.0
    manual = veil.ckks(poly_modulus_degree=8192, auto_rescale=False, seed=5, device="cpu")
    with pytest.raises(ValueError, match="auto_rescale"):
        manual.encrypt(a) ** 2


def test_ckks_division_by_plaintexts_and_its_errors(contexts):
    ck = contexts["ckks"]
    a = RNG.uniform(-1, 1, 16)
    c = RNG.uniform(0.5, 2, 16)
    x = ck.encrypt(a)
    check("ckks", (x / 4).decrypt(), a / 4)
    check("ckks", (x / c).decrypt(), a / c)
    check("ckks", (x / 2.5j).decrypt(), a / 2.5j)
    with pytest.raises(ZeroDivisionError, match="other: division by zero"):
        x / 0
    zeros = c.copy()
    zeros[5] = 0
    with pytest.raises(ZeroDivisionError, match="entry 5"):
        x / zeros
    with pytest.raises(TypeError, match="division by an encrypted value"):
        x / x
    with pytest.raises(TypeError, match="divides by an encrypted value"):
        2 / x
    with pytest.raises(TypeError, match="Plaintext"):
        x / ck.encode(c)
    with pytest.raises(ValueError, match="other"):
        x / c[:4]


@pytest.mark.parametrize("scheme", ["bfv", "bgv"])
def test_integer_division_says_what_to_do(contexts, scheme):
    x = contexts[scheme].encrypt([6, 9])
    with pytest.raises(TypeError, match="pow\\(c, -1"):
        x / 3


# ---- serialization keeps the length (and CKKS's real/complex choice) ---------------------------


@pytest.mark.parametrize("scheme", SCHEMES)
def test_bytes_files_and_pickles_keep_the_length(contexts, scheme, tmp_path):
    ctx = contexts[scheme]
    a = values(scheme, 16)
    x = ctx.encrypt(a, symmetric=True)  # seeded bytes too
    path = tmp_path / "ct.veil"
    x.save(path)
    cls = type(x)
    for back in (cls.from_bytes(x.to_bytes(), ctx), cls.from_bytes(x.to_bytes("none"), ctx),
                 cls.load(path, ctx), veil.load(path, ctx), veil.load(x.to_bytes(), ctx),
                 pickle.loads(pickle.dumps(x)), veil.load(bytearray(x.to_bytes()), ctx)):
        assert type(back) is cls and len(back) == 16
        check(scheme, back.decrypt(), a)
    s = x.sum()
    assert len(veil.load(s.to_bytes(), ctx)) == 1 and len(pickle.loads(pickle.dumps(s))) == 1
    assert _core.ciphertext_info(x.to_bytes()) == (16, False)
    # The record sits in the descriptor after is_ntt_form (docs/serialization.md): flags,
    # reserved, length; the header has no key-set flag for these contexts' ciphertexts.
    data = x.to_bytes("none", seeded=False)
    desc = 48 + 8 + (8 if data[9] & 2 else 0) + 4 + 4 + 1
    assert data[desc] == 1 and int.from_bytes(data[desc + 3:desc + 7], "little") == 16


@pytest.mark.parametrize("scheme", SCHEMES)
def test_bytes_without_the_record_load_with_every_slot(contexts, scheme):
    ctx = contexts[scheme]
    x = ctx.encrypt(values(scheme, 16))
    old = x.raw.to_bytes()  # a RawCiphertext writes no record, as Veil did before it
    assert _core.ciphertext_info(old) is None
    back = type(x).from_bytes(old, ctx)
    assert len(back) == ctx.slot_count
    got = back.decrypt()
    assert got.shape == (ctx.slot_count,)
    check(scheme, got[:16], x.decrypt(), tol=1e-4)
    if scheme == "ckks":
        assert got.dtype == np.complex128  # unknown: complex, nothing dropped silently


def test_ckks_loaded_and_unpickled_decrypt_as_fresh(contexts, tmp_path):
    ck = contexts["ckks"]
    real = ck.encrypt(RNG.uniform(-1, 1, 8))
    cplx = ck.encrypt(RNG.uniform(-1, 1, 8) + 1j * RNG.uniform(-1, 1, 8))
    for ct, dtype in ((real, np.float64), (cplx, np.complex128)):
        path = tmp_path / f"{dtype.__name__}.veil"
        ct.save(path)
        fresh = ct.decrypt()
        assert fresh.dtype == dtype
        for back in (veil.CKKSCiphertext.load(path, ck), pickle.loads(pickle.dumps(ct)),
                     veil.CKKSCiphertext.from_bytes(ct.to_bytes(), ck), veil.load(path, ck)):
            got = back.decrypt()
            assert got.dtype == dtype and got.shape == fresh.shape and back.is_complex == (
                dtype is np.complex128)
            assert np.max(np.abs(got - fresh)) < 1e-9
    # Pickles written before the record (raw bytes, the flag beside them) still unpickle.
    from veil._base import _restore_ciphertext
    old = _restore_ciphertext(ck.key_set_id, "ckks", ck.context.params.to_bytes(), ck.security,
                              "cpu", ck._options(), real.raw.to_bytes("none"), False)
    assert old.decrypt().dtype == np.float64 and len(old) == ck.slot_count


# ---- veil.load and wrong classes --------------------------------------------------------------


def test_veil_load_recognises_every_object(contexts, tmp_path):
    ck, bf = contexts["ckks"], contexts["bfv"]
    loaded = veil.load(bf.to_bytes())
    assert type(loaded) is veil.BFVContext and not loaded.has_secret_key
    assert type(veil.load(ck.public().to_bytes())) is veil.CKKSContext
    (tmp_path / "ctx.veil").write_bytes(ck.to_bytes(include_secret_key=True))
    assert veil.load(tmp_path / "ctx.veil").has_secret_key
    params = veil.load(bf.context.params.to_bytes())
    assert type(params) is veil.EncryptionParameters
    assert params.to_bytes() == bf.context.params.to_bytes()
    pt = veil.load(bf.encode([1, 2, 3]).to_bytes(), bf)
    assert type(pt) is veil.Plaintext and bf.decode(pt)[:3].tolist() == [1, 2, 3]
    for key, cls in ((bf.public_key, veil.PublicKey), (bf.relin_keys, veil.RelinKeys),
                     (bf.secret_key, veil.SecretKey)):
        assert type(veil.load(key.to_bytes(), bf)) is cls
    bf.create_galois_keys([1])
    assert type(veil.load(bf.galois_keys.to_bytes(), bf)) is veil.GaloisKeys
    raw = veil.load(ck.encrypt([1.0]).to_bytes(), ck.context)  # a SEAL-style Context: raw
    assert type(raw) is veil.RawCiphertext
    data = ck.encrypt([1.0, 2.0]).to_bytes()
    with pytest.raises(ValueError, match=r"ctx: a CKKS ciphertext loads into the context"):
        veil.load(data)
    with pytest.raises(ValueError, match="the data is a CKKS ciphertext but ctx is a BFV"):
        veil.load(data, bf)
    with pytest.raises(ValueError, match="magic: not a Veil object"):
        veil.load(b"not veil at all, clearly")
    with pytest.raises(ValueError, match="veil.seal"):
        veil.load(veil.seal.save(ck.encrypt([1.0])), ck)
    with pytest.raises(TypeError, match="data: expected bytes"):
        veil.load(12345, ck)
    with pytest.raises(TypeError, match="ctx"):
        veil.load(data, "ckks")


def test_from_bytes_refuses_another_class_at_load_time(contexts):
    ck, bf, bg = contexts["ckks"], contexts["bfv"], contexts["bgv"]
    ckks_bytes = ck.encrypt([1.0, 2.0]).to_bytes()
    with pytest.raises(ValueError, match=r"CKKS ciphertext; load it with "
                                         r"veil\.CKKSCiphertext\.from_bytes"):
        veil.Ciphertext.from_bytes(ckks_bytes, ck)
    with pytest.raises(ValueError, match=r"BFV ciphertext; load it with veil\.Ciphertext"):
        veil.CKKSCiphertext.from_bytes(bf.encrypt([1]).to_bytes(), bf)
    with pytest.raises(ValueError, match="BGV ciphertext but ctx is a BFV"):
        veil.Ciphertext.from_bytes(bg.encrypt([1]).to_bytes(), bf)
    with pytest.raises(ValueError, match="holds a BFV plaintext, not a ciphertext"):
        veil.Ciphertext.from_bytes(bf.encode([1]).to_bytes(), bf)
    with pytest.raises(ValueError, match="holds a CKKS context bundle, not a ciphertext"):
        veil.CKKSCiphertext.from_bytes(ck.to_bytes(), ck)
    with pytest.raises(ValueError, match="not a Veil context bundle but a CKKS ciphertext"):
        veil.load_context(ckks_bytes)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_rotation_by_zero_is_the_identity_without_keys(scheme):
    """Rotating by 0 steps returns the ciphertext unchanged, as SEAL's does, on a client
    context that holds no Galois key yet (it once said 'this public context cannot create
    them') and on a public one; no key is created."""
    make = {"bfv": veil.bfv, "bgv": veil.bgv}.get(scheme)
    ctx = (make(poly_modulus_degree=4096, plain_modulus=T, seed=4, device="cpu", galois_steps=None)
           if make else veil.ckks(poly_modulus_degree=8192, seed=4, device="cpu",
                                  galois_steps=None))
    v = values(scheme, 9)
    x = ctx.encrypt(v)
    assert ctx.galois_keys is None
    for y in (x.rotate(0), x.rotate(-0)) + ((x.rotate_rows(0),) if make else ()):
        assert len(y) == 9
        check(scheme, y.decrypt(), v)
    assert ctx.galois_keys is None  # nothing was created
    server = ctx.public()
    xs = type(x).from_bytes(x.to_bytes(), server)
    back = type(x).from_bytes(xs.rotate(0).to_bytes(), ctx)
    check(scheme, back.decrypt(), v)


@pytest.mark.parametrize("scheme", SCHEMES)
def test_operations_do_not_serialize_their_results(scheme, contexts, monkeypatch):
    """A result shares the context and copies the length by a shallow copy (__copy__): the
    pickling path (__reduce__ -> to_bytes, a device-to-host copy on a GPU) must not run on an
    operation. It once did, for every result (copy.copy fell back on __reduce__)."""
    ctx = contexts[scheme]
    v = values(scheme, 6)
    x = ctx.encrypt(v)

    def refuse(*args, **kwargs):
        raise AssertionError("an operation serialized a ciphertext")

    monkeypatch.setattr(type(x), "to_bytes", refuse)
    monkeypatch.setattr(type(x), "__reduce__", refuse)
    y = (x + x) * 2
    z = y.with_length(3)
    check(scheme, y.decrypt(), 4 * v)
    check(scheme, z.decrypt(), 4 * v[:3])
