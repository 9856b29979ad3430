"""Parameters from needs (issue 24, item 5): ``veil.ckks(depth=, precision=, slots=)`` and
``veil.bfv/bgv(depth=, plain_bits=)`` choose N and the chain; ``ctx.describe()`` explains the
choice; Galois keys warn past a budget and stop at ``max_key_bytes``.

Oracles: the HomomorphicEncryption.org security tables (copied here, not read from Veil), the
documented chain recipes re-derived here, numpy (CKKS) and Python integers mod t (BFV/BGV).
Degrees stay <= 16384 so the keys are small; larger choices are checked without making keys.
"""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pytest
import veil
from veil import _params

# HomomorphicEncryption.org standard (2018), ternary secret: max log2(QP) per N and level.
HE_STANDARD = {
    128: {1024: 27, 2048: 54, 4096: 109, 8192: 218, 16384: 438, 32768: 881, 65536: 1747,
          131072: 3523},
    192: {1024: 19, 2048: 37, 4096: 75, 8192: 152, 16384: 305, 32768: 611, 65536: 1222,
          131072: 2444},
    256: {1024: 14, 2048: 29, 4096: 58, 8192: 118, 16384: 237, 32768: 476, 65536: 952,
          131072: 1904},
}


def qp_bits(primes) -> int:
    return math.prod(int(q) for q in primes).bit_length()


def is_prime(n: int) -> bool:
    if n < 2:
        return False
    for p in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        if n % p == 0:
            return n == p
    d, r = n - 1, 0
    while d % 2 == 0:
        d //= 2
        r += 1
    for a in (2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37):
        x = pow(a, d, n)
        if x in (1, n - 1):
            continue
        for _ in range(r - 1):
            x = x * x % n
            if x == n - 1:
                break
        else:
            return False
    return True


# ---- the documented recipes, re-derived (docs/guide/ckks.md, docs/guide/bfv-bgv.md) ----------
def ckks_recipe_bits(n: int, depth: int, precision: int) -> list[int]:
    s = precision + int(math.log2(n)) + 3
    q0 = min(60, s + 20)
    return [q0] + [s] * depth + [q0]


def integer_recipe_q_bits(scheme: str, n: int, depth: int, tb: int) -> int:
    per = tb + int(math.log2(n)) + 1
    mults = depth if scheme == "bfv" else 2**depth - 1
    return tb + 10 + mults * per + 5


def recipe_qp_at(n: int, sizes: list[int]) -> int:
    """log QP of a chain of these prime sizes at degree n (the largest NTT primes)."""
    return qp_bits(veil.CoeffModulus.create(n, sizes))


# ---- security and minimal N ---------------------------------------------------------------------
@pytest.mark.parametrize("security", [128, 192, 256])
@pytest.mark.parametrize("depth", [0, 1, 2, 3, 5, 8, 12, 20])
@pytest.mark.parametrize("precision", [10, 20, 30])
def test_ckks_choice_is_secure_and_minimal(security, depth, precision) -> None:
    try:
        c = _params.choose_ckks(depth, precision, None, security, None, None)
    except ValueError as e:  # only when even N = 2^17 cannot hold it
        top = 131072
        assert recipe_qp_at(top, ckks_recipe_bits(top, depth, precision)) > \
            HE_STANDARD[security][top] or "precision" in str(e)
        return
    n = c.n
    assert qp_bits(c.coeff_modulus) <= HE_STANDARD[security][n]
    assert all(is_prime(q) and q % (2 * n) == 1 for q in c.coeff_modulus)
    assert len(set(c.coeff_modulus)) == len(c.coeff_modulus)
    # The chain is the documented one: q_0, depth scale primes, P >= every other prime.
    bits = [q.bit_length() for q in c.coeff_modulus]
    assert bits == ckks_recipe_bits(n, depth, precision)
    assert c.scale == 2.0 ** (precision + int(math.log2(n)) + 3)
    # Minimal: the recipe at N/2 exceeds the bound there.
    if n > 1024:
        half = n // 2
        assert recipe_qp_at(half, ckks_recipe_bits(half, depth, precision)) > \
            HE_STANDARD[security][half]


@pytest.mark.parametrize("scheme", ["bfv", "bgv"])
@pytest.mark.parametrize("depth", [0, 1, 2, 3, 4, 6, 10, 30])
@pytest.mark.parametrize("plain_bits", [None, 20, 40])
def test_integer_choice_is_secure_and_minimal(scheme, depth, plain_bits) -> None:
    try:
        c = _params.choose_integer(scheme, depth, plain_bits, 128, None, None)
    except ValueError as e:
        assert scheme == "bgv" and depth >= 6 or "plain_bits" in str(e), str(e)
        assert "depth" in str(e) or "plain_bits" in str(e)
        return
    n, t = c.n, c.plain_modulus
    primes = c.coeff_modulus
    assert qp_bits(primes) <= HE_STANDARD[128][n]
    assert all(is_prime(q) and q % (2 * n) == 1 for q in primes)
    # A batching plain modulus of the asked size, coprime to Q.
    assert is_prime(t) and t % (2 * n) == 1 and t not in primes
    if plain_bits is not None:
        assert t.bit_length() == plain_bits
    tb = t.bit_length()
    # Q holds the documented requirement; P is no smaller than any prime of Q.
    q = primes[:-1]
    assert sum(p.bit_length() for p in q) >= integer_recipe_q_bits(scheme, n, depth, tb)
    assert primes[-1].bit_length() >= max(p.bit_length() for p in q)
    # Minimal: at N/2, the same requirement (with the fewest 60-bit-or-less primes) plus P
    # exceeds the bound, or no batching prime of that size exists.
    if n > 1024:
        half = n // 2
        # The plain modulus at N/2: the asked size, or by default the smallest size >= 17 bits
        # with a batching prime there.
        t_half = None
        for b in ([plain_bits] if plain_bits is not None else range(17, 61)):
            try:
                t_half = veil.PlainModulus.batching(half, b)
                break
            except ValueError:
                continue
        if t_half is None:
            return
        need = integer_recipe_q_bits(scheme, half, depth, t_half.bit_length())
        k = -(-need // 60)
        size = -(-need // k)
        assert recipe_qp_at(half, [size] * (k + 1)) > HE_STANDARD[128][half]


def test_contexts_built_from_needs_pass_the_context_check() -> None:
    """The context itself (security=128) accepts the chosen chains: no error, security kept."""
    for ctx in (veil.ckks(depth=3, device="cpu", seed=1),
                veil.bfv(depth=3, device="cpu", seed=1),
                veil.bgv(depth=2, device="cpu", seed=1)):
        n = ctx.poly_modulus_degree
        assert ctx.security == 128
        assert qp_bits(ctx.coeff_modulus) <= HE_STANDARD[128][n]


def test_slots_raise_n() -> None:
    assert _params.choose_ckks(2, None, 100, 128, None, None).n == 8192
    assert _params.choose_ckks(2, None, 8192, 128, None, None).n == 16384
    assert _params.choose_ckks(2, None, 8193, 128, None, None).n == 32768
    ctx = veil.ckks(depth=1, slots=4097, device="cpu", seed=1)
    assert ctx.poly_modulus_degree // 2 >= 4097 and ctx.describe()["slots"] == 8192


# ---- empirical depth: BFV and BGV against Python integers mod t ------------------------------
def _centered(v: np.ndarray, t: int) -> np.ndarray:
    return np.where(v > t // 2, v - t, v)


def _product_tree(ctx, rng, depth: int):
    """A balanced product tree of 2^depth fresh ciphertexts and its value mod t (Python ints)."""
    n, t = ctx.poly_modulus_degree, ctx.plain_modulus
    leaves = [rng.integers(0, t, n) for _ in range(2**depth)]
    level = [(ctx.encrypt(_centered(v, t)), [int(x) for x in v]) for v in leaves]
    while len(level) > 1:
        level = [(a * b, [x * y % t for x, y in zip(va, vb)])
                 for (a, va), (b, vb) in zip(level[::2], level[1::2])]
    return level[0]


@pytest.mark.parametrize(("scheme", "depth", "plain_bits"), [
    ("bfv", 1, None), ("bfv", 2, None), ("bfv", 3, None), ("bfv", 4, None), ("bfv", 3, 30),
    ("bgv", 1, None), ("bgv", 2, None), ("bgv", 2, 30), ("bgv", 3, None),
])
def test_integer_depth_decrypts(scheme, depth, plain_bits) -> None:
    ctx = getattr(veil, scheme)(depth=depth, plain_bits=plain_bits, device="cpu", seed=depth)
    assert ctx.poly_modulus_degree <= 16384
    t = ctx.plain_modulus
    rng = np.random.default_rng(depth)
    ct, expected = _product_tree(ctx, rng, depth)
    assert ctx.noise_budget(ct) > 0
    got = ctx.decrypt(ct, signed=False)
    assert [int(x) % t for x in got] == expected
    # x ** (2 ** depth) (repeated squaring) and a chain x_0 * x_1 * ... * x_depth.
    v = rng.integers(0, t, ctx.poly_modulus_degree)
    x = ctx.encrypt(_centered(v, t))
    y = x
    for _ in range(depth):
        y = y * y
    assert ctx.noise_budget(y) > 0
    assert [int(a) % t for a in ctx.decrypt(y, signed=False)] == \
        [pow(int(a), 2**depth, t) for a in v]
    z, ez = x, [int(a) for a in v]
    for _ in range(depth):
        w = rng.integers(0, t, ctx.poly_modulus_degree)
        z = z * ctx.encrypt(_centered(w, t))
        ez = [a * int(b) % t for a, b in zip(ez, w)]
    assert ctx.noise_budget(z) > 0
    assert [int(a) % t for a in ctx.decrypt(z, signed=False)] == ez


def test_integer_depth_is_not_vacuous() -> None:
    """The oracle notices a circuit deeper than the parameters: depth=1 parameters do not
    survive x ** 16 (decryption refuses or is wrong)."""
    ctx = veil.bfv(depth=1, device="cpu", seed=3)
    t = ctx.plain_modulus
    v = np.random.default_rng(3).integers(0, t, ctx.poly_modulus_degree)
    y = ctx.encrypt(_centered(v, t))
    for _ in range(4):
        y = y * y
    assert ctx.noise_budget(y) == 0
    try:
        got = [int(a) % t for a in ctx.decrypt(y, signed=False)]
    except ValueError:
        return
    assert got != [pow(int(a), 16, t) for a in v]


# ---- empirical depth: CKKS against numpy ----------------------------------------------------------
@pytest.mark.parametrize(("depth", "precision"), [(0, 20), (1, 20), (2, 20), (3, 20), (5, 20),
                                                  (2, 10), (3, 30)])
def test_ckks_depth_within_precision(depth, precision) -> None:
    ctx = veil.ckks(depth=depth, precision=precision, device="cpu", seed=depth + precision)
    assert ctx.poly_modulus_degree <= 16384 and ctx.max_level == depth
    slots = ctx.poly_modulus_degree // 2
    rng = np.random.default_rng(depth)
    tol = 2.0 ** -precision
    # A chain x_0 * x_1 * ... * x_depth of values in [-1, 1], every slot used.
    xs = [rng.uniform(-1, 1, slots) for _ in range(depth + 1)]
    z, ez = ctx.encrypt(xs[0]), xs[0]
    for v in xs[1:]:
        z, ez = z * ctx.encrypt(v), ez * v
    assert np.max(np.abs(np.real(ctx.decrypt(z))[:slots] - ez)) < tol
    # A balanced product tree of 2^depth values (small depths: 2^depth encryptions).
    if depth <= 3:
        level = [(ctx.encrypt(v), v) for v in (rng.uniform(-1, 1, slots) for _ in range(2**depth))]
        while len(level) > 1:
            level = [(a * b, va * vb) for (a, va), (b, vb) in zip(level[::2], level[1::2])]
        ct, expected = level[0]
        assert np.max(np.abs(np.real(ctx.decrypt(ct))[:slots] - expected)) < tol
    # x ** (2 ** depth): the function multiplies input errors by up to 2^depth (its
    # derivative), so it keeps precision - depth bits (docs/guide/ckks.md).
    x = rng.uniform(-1, 1, slots)
    y, ey = ctx.encrypt(x), x
    for _ in range(depth):
        y, ey = y * y, ey * ey
    assert np.max(np.abs(np.real(ctx.decrypt(y))[:slots] - ey)) < 2.0 ** -(precision - depth)


def test_ckks_depth_is_not_vacuous() -> None:
    """One multiplication past the chosen depth has no level left (the chain is exactly as
    deep as asked), and the precision oracle notices a coarser scale."""
    ctx = veil.ckks(depth=2, device="cpu", seed=5)
    x = ctx.encrypt(np.full(8, 0.5))
    y = x * x * x
    assert y.level == 0
    with pytest.raises(ValueError):
        y * x * x
    coarse = veil.ckks(depth=2, scale=2.0**25, device="cpu", seed=5)
    v = np.random.default_rng(5).uniform(-1, 1, coarse.poly_modulus_degree // 2)
    err = np.max(np.abs(np.real(coarse.decrypt(coarse.encrypt(v) * coarse.encrypt(v)))
                        [:v.size] - v * v))
    assert err > 2.0**-20


# ---- explicit arguments, conflicts and too-deep errors -------------------------------------
def test_explicit_arguments_still_work() -> None:
    ctx = veil.ckks(poly_modulus_degree=8192, coeff_modulus=[60, 40, 40, 60], device="cpu")
    assert ctx.poly_modulus_degree == 8192 and ctx.describe()["requested"] is None
    assert veil.ckks(device="cpu", seed=1).poly_modulus_degree == 16384  # defaults unchanged
    assert veil.bfv(device="cpu", seed=1).poly_modulus_degree == 8192
    assert veil.bfv(device="cpu", seed=1).plain_modulus == 65537


def test_depth_with_compatible_explicit_arguments() -> None:
    ctx = veil.ckks(depth=3, poly_modulus_degree=32768, device="cpu", seed=1)
    assert ctx.poly_modulus_degree == 32768 and ctx.max_level == 3
    ctx = veil.ckks(depth=2, coeff_modulus=[60, 40, 40, 60], poly_modulus_degree=8192,
                    device="cpu", seed=1)
    assert ctx.describe()["requested"]["depth"] == 2
    ctx = veil.ckks(depth=2, scale=2.0**45, device="cpu", seed=1)
    assert [q.bit_length() for q in ctx.coeff_modulus][1:3] == [45, 45] and ctx.scale == 2.0**45
    ctx = veil.bfv(depth=2, plain_modulus=65537, device="cpu", seed=1)
    assert ctx.plain_modulus == 65537
    ctx = veil.bfv(depth=2, poly_modulus_degree=16384, device="cpu", seed=1)
    assert ctx.poly_modulus_degree == 16384
    ctx = veil.bfv(plain_bits=20, device="cpu", seed=1)  # plain_bits alone picks t only
    assert ctx.plain_modulus.bit_length() == 20 and ctx.plain_modulus % (2 * 8192) == 1
    ctx = veil.bgv(depth=1, coeff_modulus=[60, 60, 60], plain_modulus=65537, device="cpu", seed=1)
    assert ctx.describe()["requested"] == {"depth": 1, "plain_bits": 17}


@pytest.mark.parametrize(("make", "name", "phrase"), [
    (lambda: veil.ckks(depth=3, poly_modulus_degree=8192), "depth", "at most depth 2 there"),
    (lambda: veil.ckks(depth=3, poly_modulus_degree=4096), "depth", "N = 16384 fits"),
    (lambda: veil.ckks(depth=3, coeff_modulus=[60, 40, 40, 60]), "depth", "has 2"),
    (lambda: veil.ckks(precision=20), "precision", "depth="),
    (lambda: veil.ckks(slots=100), "slots", "depth="),
    (lambda: veil.ckks(depth=2, bootstrapping=True), "depth", "bootstrapping"),
    (lambda: veil.ckks(depth=2, special_primes=2), "special_primes", "coeff_modulus"),
    (lambda: veil.ckks(depth=2, rescale_groups=[1, 1, 1]), "rescale_groups", "coeff_modulus"),
    (lambda: veil.ckks(depth=2, word_bits=32), "word_bits", "32-bit"),
    (lambda: veil.ckks(depth=2, slots=9000, poly_modulus_degree=16384), "slots", "18000"),
    (lambda: veil.ckks(depth=2, precision=30, scale=2.0**40), "precision", "scale"),
    (lambda: veil.ckks(depth=2, precision=40), "precision", "at most"),
    (lambda: veil.ckks(depth=2, security=None), "security", "poly_modulus_degree"),
    (lambda: veil.ckks(depth=-1), "depth", "0 <= depth"),
    (lambda: veil.bfv(depth=2, plain_modulus=65537, plain_bits=20), "plain_bits", "65537"),
    (lambda: veil.bfv(depth=2, plain_bits=14, poly_modulus_degree=16384), "plain_bits", "1 mod"),
    (lambda: veil.bfv(depth=6, coeff_modulus=[50, 50, 50]), "depth", "enough for depth"),
    (lambda: veil.bgv(depth=4, poly_modulus_degree=8192), "depth", "N = 32768 fits"),
    (lambda: veil.bfv(depth=2, alpha=2), "alpha", "one special prime"),
])
def test_contradictions_are_named(make, name, phrase) -> None:
    with pytest.raises(ValueError) as e:
        make()
    msg = str(e.value)
    assert msg.startswith(f"{name}:"), msg
    assert phrase in msg, msg


@pytest.mark.parametrize(("scheme", "depth"), [("ckks", 200), ("bfv", 150), ("bgv", 9)])
def test_too_deep_names_the_maximum(scheme, depth) -> None:
    make = veil.ckks if scheme == "ckks" else getattr(veil, scheme)
    with pytest.raises(ValueError) as e:
        make(depth=depth, device="cpu")
    msg = str(e.value)
    assert msg.startswith("depth:") and "131072" in msg, msg
    most = int(msg.split("at most depth ")[1].split()[0])
    # The maximum is exact: it fits the largest N within the table's bound, one more does not.
    choose = ((lambda d: _params.choose_ckks(d, None, None, 128, None, None)) if scheme == "ckks"
              else (lambda d: _params.choose_integer(scheme, d, None, 128, None, None)))
    c = choose(most)
    assert qp_bits(c.coeff_modulus) <= HE_STANDARD[128][c.n]
    with pytest.raises(ValueError):
        choose(most + 1)


# ---- describe() --------------------------------------------------------------------------------
def test_describe_explains_a_choice() -> None:
    ctx = veil.ckks(depth=3, device="cpu", seed=1)
    d = ctx.describe()
    assert isinstance(d, dict)
    json.dumps(d)  # still a JSON-ready record
    n = d["poly_modulus_degree"]
    assert n == 16384 and d["slots"] == 8192 and d["depth"] == 3 and d["security"] == 128
    assert d["max_log2_qp"] == HE_STANDARD[128][16384]
    assert d["log2_qp"] == qp_bits(ctx.coeff_modulus)
    assert d["coeff_modulus_bits"] == [q.bit_length() for q in ctx.coeff_modulus]
    assert d["requested"] == {"depth": 3, "precision": 20, "slots": None}
    assert d["precision"] >= 20 and d["scale_bits"] == 37
    assert d["switching_key_bytes"] == ctx.relin_keys.nbytes
    # Why 16384: the chain exceeds the bound at 8192.
    assert "N = 8192" in d["why"] and f"{HE_STANDARD[128][8192]} allowed" in d["why"]
    text = str(d)
    for piece in ("N = 16384", "8192 slots", "128-bit", f"log QP {d['log2_qp']}",
                  "of 438 allowed", "depth 3", "why:"):
        assert piece in text, (piece, text)


def test_describe_of_given_and_integer_contexts() -> None:
    given = veil.bfv(device="cpu", seed=1).describe()
    assert given["requested"] is None and "given" in given["why"]
    assert given["slots"] == 8192 and given["max_log2_qp"] == 218
    assert given["plain_modulus"] == 65537 and given["depth"] >= 1
    assert "plain_modulus 65537" in str(given)
    chosen = veil.bgv(depth=2, device="cpu", seed=1)
    d = chosen.describe()
    assert d["requested"] == {"depth": 2, "plain_bits": 17} and d["depth"] >= 2
    assert "2^2 - 1" in d["why"] and "smallest" in d["why"]
    pub = chosen.public().describe()  # a server view explains the same parameters
    assert pub["why"] == d["why"]


# ---- key memory: warning and cap ---------------------------------------------------------------
def test_galois_keys_warn_past_the_budget(monkeypatch) -> None:
    ctx = veil.ckks(depth=1, poly_modulus_degree=4096, security=None, device="cpu", seed=1)
    key = ctx.galois_key_bytes()
    monkeypatch.setattr(_params, "KEY_WARN_BYTES", 3 * key)  # 3 keys fit, the 4th crosses
    with warnings.catch_warnings():
        warnings.simplefilter("error", veil.KeyMemoryWarning)
        ctx.create_galois_keys([1, 2, 3])  # exactly at the budget: silent
    with pytest.warns(veil.KeyMemoryWarning, match="Galois keys") as rec:
        ctx.encrypt([1.0, 2.0]).rotate(4)  # makes the key for step 4 on demand
    assert rec[0].filename == __file__  # attributed to the caller, not to veil's internals
    assert ctx.memory()["galois_key_count"] == 4
    assert ctx.memory()["galois_keys"] == 4 * key  # the size was known before making them
    with warnings.catch_warnings():
        warnings.simplefilter("error", veil.KeyMemoryWarning)
        ctx.create_galois_keys([5])  # already past: warned once, not at every key


def test_max_key_bytes_caps_before_generating() -> None:
    ctx = veil.ckks(depth=1, poly_modulus_degree=4096, security=None, device="cpu", seed=1,
                    max_key_bytes=None)
    key = ctx.galois_key_bytes()
    relin = ctx.relin_keys.nbytes
    capped = veil.ckks(depth=1, poly_modulus_degree=4096, security=None, device="cpu", seed=1,
                       max_key_bytes=relin + 2 * key)
    capped.create_galois_keys([1, 2])  # relin + 2 Galois keys: exactly the cap
    with pytest.raises(MemoryError) as e:
        capped.create_galois_keys([3, 4])
    msg = str(e.value)
    assert msg.startswith("max_key_bytes:") and str(relin + 2 * key) in msg
    assert str(relin + 4 * key) in msg  # the bytes the keys would need
    assert capped.memory()["galois_key_count"] == 2  # nothing was generated
    # The relinearization key counts too: a cap below it stops the context before keygen.
    with pytest.raises(MemoryError, match="relinearization"):
        veil.bfv(poly_modulus_degree=4096, device="cpu", seed=1, max_key_bytes=key - 1)
    with pytest.raises(ValueError, match="max_key_bytes"):
        veil.bfv(poly_modulus_degree=4096, device="cpu", max_key_bytes=-1)


def test_key_bytes_match_the_issue_example() -> None:
    """At N = 32768 with the default chain, one Galois key is about 210 MiB (the issue's
    numbers), known from the parameters alone: 2 x (L + 1) x (L + 2) x N 64-bit words."""
    chain = veil._ckks.default_ckks_chain(32768, 128)
    primes = len(chain)
    words = 2 * (primes - 1) * primes * 32768
    assert 200 * 2**20 < words * 8 < 220 * 2**20
    with pytest.raises(MemoryError) as e:
        _params.check_key_memory(14, words * 8, 0, words * 8, 2**30)
    assert "14 Galois keys" in str(e.value) and str(15 * words * 8) in str(e.value)
