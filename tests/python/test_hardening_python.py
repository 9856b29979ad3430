"""Issue 8 in the pythonic layer: no silent truncation, strict integer and scale arguments,
default parameter chains that Veil's own validation accepts, and CLI integer options checked by
argparse. Every rejection is a TypeError/ValueError whose message starts with the argument's
name; every accepted input still gives the answer of plaintext numpy arithmetic."""

import math

import numpy as np
import pytest
import veil
from veil import cli

N = 4096
ROW = N // 2
CKKS_N = 8192


@pytest.fixture(scope="module", params=["bfv", "bgv"])
def ictx(request):
    """BFV and BGV at N = 4096 with keys for steps 1 and N/2 - 1 (the largest valid one)."""
    return getattr(veil, request.param)(poly_modulus_degree=N, device="cpu", seed=7,
                                        galois_steps=[1, ROW - 1])


@pytest.fixture(scope="module")
def ict(ictx):
    return ictx.encrypt(np.arange(10))


@pytest.fixture(scope="module")
def ckctx():
    return veil.ckks(poly_modulus_degree=CKKS_N, device="cpu", seed=7, galois_steps=[1])


@pytest.fixture(scope="module")
def ckct(ckctx):
    return ckctx.encrypt(np.linspace(-1, 1, 16))


def x_vec(t: int, n: int = N, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, t, n, dtype=np.int64)


# ---- 1. BFV/BGV: no float, bool or string is truncated into an integer plaintext ------------

NOT_INTEGERS = [
    2.5, 1.9, -0.5, 2.0, float("nan"), np.float64(2.0), np.float32(3.0), True, np.bool_(False),
    "5", b"5", None, 1 + 2j, object(), np.array(2.0), np.array([1.5, 2.0]),
    np.array([True, False]), [1, 2.5], np.array([1, 2.5], dtype=object), [1, "2"],
]


@pytest.mark.parametrize("value", NOT_INTEGERS, ids=repr)
@pytest.mark.parametrize("op", ["encode", "encrypt"])
def test_integer_values_reject_non_integers(ictx, op, value):
    with pytest.raises(TypeError, match=r"^values: expected integers"):
        getattr(ictx, op)(value)


@pytest.mark.parametrize("value", NOT_INTEGERS, ids=repr)
@pytest.mark.parametrize("op", ["+", "-", "*", "r+", "r-", "r*"])
def test_integer_operators_reject_non_integers(ict, op, value):
    fn = {
        "+": lambda: ict + value, "-": lambda: ict - value, "*": lambda: ict * value,
        "r+": lambda: ict.__radd__(value), "r-": lambda: ict.__rsub__(value),
        "r*": lambda: ict.__rmul__(value),
    }[op]
    with pytest.raises(TypeError, match=r"^other: expected integers"):
        fn()


@pytest.mark.parametrize("value", [2**70, -(2**70), [2**70], [1, 2**64],
                                   np.array([3, 2**100], dtype=object)], ids=repr)
def test_integer_huge_ints_are_value_errors_not_overflow(ictx, ict, value):
    # pytest.raises(ValueError) does not catch OverflowError (an ArithmeticError).
    with pytest.raises(ValueError, match=r"^values: expected entries in \[-\(t-1\)/2, t\)"):
        ictx.encrypt(value)
    with pytest.raises(ValueError, match=r"^other: expected entries"):
        ict * value


def test_integer_float_messages_name_the_type(ictx):
    with pytest.raises(TypeError, match=r"^values: expected integers .*got float 3\.7$"):
        ictx.encrypt(3.7)
    with pytest.raises(TypeError, match=r"needs encoding='coefficients'"):
        ictx.encode("5")


def test_integer_coefficients_reject_floats():
    ctx = veil.bfv(poly_modulus_degree=N, plain_modulus=257, encoding="coefficients",
                   device="cpu", seed=3)
    with pytest.raises(TypeError, match=r"^values: expected integers"):
        ctx.encrypt(2.0)
    with pytest.raises(TypeError, match=r"^other: expected integers"):
        ctx.encrypt(1) * 1.5
    ct = ctx.encrypt(np.array([1, 2, 3], dtype=object)) * np.int16(3)
    assert ctx.decrypt_string(ct) == "9x^2 + 6x^1 + 3"


def test_integer_valid_inputs_match_numpy(ictx):
    t = ictx.plain_modulus
    x = x_vec(t)
    ct = ictx.encrypt(x)
    k = np.int32(3)
    assert np.array_equal(ictx.decrypt(ct * 3, signed=False), (x * 3) % t)
    assert np.array_equal(ictx.decrypt(k * ct, signed=False), (x * 3) % t)
    assert np.array_equal(ictx.decrypt(ct + np.uint16(5), signed=False), (x + 5) % t)
    assert np.array_equal(ictx.decrypt(7 - ct, signed=False), (7 - x) % t)
    y = x_vec(t, seed=1).astype(np.uint64)
    assert np.array_equal(ictx.decrypt(ct - y, signed=False), (x - y.astype(np.int64)) % t)
    obj = np.array([5, -4, t - 1], dtype=object)  # Python ints in range are integers
    assert list(ictx.decrypt(ictx.encrypt(obj), signed=False)[:3]) == [5, t - 4, t - 1]
    assert np.array_equal(ictx.decrypt(ictx.encrypt(np.int64(-2))), np.full(N, -2))
    empty = ictx.encrypt([])  # length 0; every slot is zero
    assert ictx.decrypt(empty).shape == (0,)
    assert np.array_equal(ictx.decrypt(empty.with_length(), signed=False), np.zeros(N))


# ---- 2. strict integer arguments -------------------------------------------------------------

BAD_CONTEXT_ARGS = [
    ("poly_modulus_degree", 4096.0, TypeError), ("poly_modulus_degree", "4096", TypeError),
    ("poly_modulus_degree", True, TypeError), ("poly_modulus_degree", 2**70, ValueError),
    ("poly_modulus_degree", 5000, ValueError),
    ("plain_modulus", 65537.0, TypeError), ("plain_modulus", 2**70, ValueError),
    ("plain_modulus", 1, ValueError),
    ("coeff_modulus", [36.0, 36, 37], TypeError), ("coeff_modulus", [2**70, 36], ValueError),
    ("coeff_modulus", 5, TypeError), ("coeff_modulus", "36,36", TypeError),
    ("coeff_modulus", [-5, 36], ValueError), ("coeff_modulus", [62, 36], ValueError),
    ("coeff_modulus", [], ValueError),
    ("special_primes", 1.0, TypeError), ("special_primes", -1, ValueError),
    ("special_primes", 2**70, ValueError),
    ("alpha", 1.5, TypeError), ("alpha", 2**70, ValueError), ("alpha", 0, ValueError),
    ("seed", 1.5, TypeError), ("seed", "1", TypeError), ("seed", -1, ValueError),
    ("seed", 2**64, ValueError),
    ("galois_steps", [1.5], TypeError), ("galois_steps", [2**70], ValueError),
    ("galois_steps", [ROW], ValueError), ("galois_steps", [-ROW], ValueError),
    ("galois_steps", 5, TypeError), ("galois_steps", "all", ValueError),
    ("security", "128", TypeError), ("security", 128.0, TypeError), ("security", True, TypeError),
    ("security", 100, ValueError), ("security", 2**70, ValueError),
    ("relin_keys", "yes", TypeError),
]


@pytest.mark.parametrize("scheme", ["bfv", "bgv"])
@pytest.mark.parametrize(("name", "value", "exc"), BAD_CONTEXT_ARGS,
                         ids=[f"{n}={v!r}" for n, v, _ in BAD_CONTEXT_ARGS])
def test_integer_context_arguments_are_strict(scheme, name, value, exc):
    kwargs = {"poly_modulus_degree": N, "device": "cpu", "galois_steps": None, name: value}
    with pytest.raises(exc, match=rf"^{name}:"):
        getattr(veil, scheme)(**kwargs)


@pytest.mark.parametrize(("name", "value", "exc"), [
    a for a in BAD_CONTEXT_ARGS
    if a[0] not in ("plain_modulus", "coeff_modulus") and a[1] not in ([ROW], [-ROW])
] + [("galois_steps", [CKKS_N // 2], ValueError), ("galois_steps", [-CKKS_N // 2], ValueError)],
    ids=lambda v: repr(v) if not isinstance(v, type) else v.__name__)
def test_ckks_context_arguments_are_strict(name, value, exc):
    kwargs = {"poly_modulus_degree": CKKS_N, "device": "cpu", "galois_steps": None, name: value}
    with pytest.raises(exc, match=rf"^{name}:"):
        veil.ckks(**kwargs)


def test_integer_messages_show_type_and_bounds():
    with pytest.raises(TypeError, match=r"^galois_steps: expected an integer, got float 1\.5$"):
        veil.ckks(poly_modulus_degree=CKKS_N, device="cpu", galois_steps=[1.5])
    # A seed is named with its expected range, never quoted (it fixes the randomness).
    with pytest.raises(TypeError, match=r"^seed: expected an integer, got float$"):
        veil.bfv(poly_modulus_degree=N, device="cpu", seed=1.5)
    with pytest.raises(ValueError, match=r"^seed: expected 0 <= seed <= 18446744073709551615$"):
        veil.bfv(poly_modulus_degree=N, device="cpu", seed=-1)


def test_steps_must_be_below_half_n(ictx, ict, ckct):
    msg = rf"^steps: expected \|steps\| < N/2 = {ROW}, got "
    for s in (ROW, -ROW, ROW + 1, 2**70):
        with pytest.raises(ValueError, match=msg):
            ict.rotate_rows(s)
        with pytest.raises(ValueError, match=msg):
            ict.rotate_many([1, s])
    with pytest.raises(ValueError, match=rf"^steps: expected \|steps\| < N/2 = {CKKS_N // 2}"):
        ckct.rotate(CKKS_N // 2)  # used to wrap silently to a rotation by 0
    with pytest.raises(ValueError, match=r"^steps:"):
        ckct.rotate_many([-(CKKS_N // 2)])
    for bad in (1.0, True, "1", np.float64(1)):
        with pytest.raises(TypeError, match=r"^steps: expected an integer"):
            ict.rotate_rows(bad)
        with pytest.raises(TypeError, match=r"^steps: expected an integer"):
            ckct.rotate(bad)
    with pytest.raises(TypeError, match=r"^steps: expected a list"):
        ict.rotate_many(1)


def test_valid_steps_match_numpy(ictx):
    t = ictx.plain_modulus
    x = x_vec(t)
    ct = ictx.encrypt(x)
    rows = x.reshape(2, ROW)
    for s in (np.int32(1), ROW - 1):
        want = np.roll(rows, -int(s), axis=1).reshape(-1)
        assert np.array_equal(ictx.decrypt(ct.rotate_rows(s), signed=False), want)
    [r] = ct.rotate_many([np.int64(1)])
    assert np.array_equal(ictx.decrypt(r, signed=False), np.roll(rows, -1, axis=1).reshape(-1))


def test_ciphertext_integer_arguments(ictx, ict):
    cases = [
        (lambda: ict ** 2.0, TypeError, "exponent"), (lambda: ict ** True, TypeError, "exponent"),
        (lambda: ict ** 0, ValueError, "exponent"), (lambda: ict ** 2**70, ValueError, "exponent"),
        (lambda: ict.apply_galois(3.0), TypeError, "galois_elt"),
        (lambda: ict.apply_galois(2**70), ValueError, "galois_elt"),
        (lambda: ict.apply_galois(-1), ValueError, "galois_elt"),
        (lambda: ict.apply_galois(4), ValueError, "galois_elt"),
        (lambda: ict.mod_switch_to(0.0), TypeError, "level"),
        (lambda: ict.mod_switch_to(-1), ValueError, "level"),
        (lambda: ict.mod_switch_to(2**70), ValueError, "level"),
        (lambda: ictx.encrypt([1], symmetric="yes"), TypeError, "symmetric"),
    ]
    for fn, exc, name in cases:
        with pytest.raises(exc, match=rf"^{name}:"):
            fn()
    t = ictx.plain_modulus
    x = x_vec(t)
    square = ictx.decrypt(ictx.encrypt(x) ** np.uint8(2), signed=False)  # N = 4096: one level
    assert np.array_equal(square, x * x % t)


@pytest.mark.parametrize("scheme", ["bfv", "bgv", "ckks"])
def test_largest_seed_constructs_and_round_trips(scheme):
    seed = 2**64 - 1  # derived seeds (seed + 1, seed + 2) wrap mod 2^64
    kw = {"poly_modulus_degree": CKKS_N if scheme == "ckks" else N, "device": "cpu",
          "seed": seed, "galois_steps": None}
    a, b = getattr(veil, scheme)(**kw), getattr(veil, scheme)(**kw)
    x = np.linspace(-1, 1, 32) if scheme == "ckks" else x_vec(a.plain_modulus)
    # Reproducible: the same seed gives the same keys and the same first ciphertexts.
    pub, sym = a.encrypt(x), a.encrypt(x, symmetric=True)
    assert pub.to_bytes() == b.encrypt(x).to_bytes()
    assert sym.to_bytes() == b.encrypt(x, symmetric=True).to_bytes()
    for ct in (pub, sym):
        if scheme == "ckks":
            assert np.allclose(a.decrypt(ct)[:32], x, atol=1e-6)
        else:
            assert np.array_equal(a.decrypt(ct, signed=False), x)


def test_numpy_integer_arguments_accepted():
    ctx = veil.bgv(poly_modulus_degree=np.int64(N), plain_modulus=np.uint32(65537),
                   seed=np.uint64(3), special_primes=np.int8(1), security=np.int16(128),
                   galois_steps=np.array([1]), device="cpu")
    assert ctx.poly_modulus_degree == N and ctx.plain_modulus == 65537
    x = x_vec(65537)
    low = ctx.encrypt(x).mod_switch_to(np.int64(0))
    assert low.level == 0 and np.array_equal(ctx.decrypt(low, signed=False), x)


# ---- 3. CKKS scales --------------------------------------------------------------------------

BAD_SCALES = [
    ("abc", TypeError), (b"1", TypeError), (True, TypeError), (1 + 0j, TypeError),
    ([2.0**40], TypeError), (float("nan"), ValueError), (float("inf"), ValueError),
    (-float("inf"), ValueError), (0, ValueError), (-1.0, ValueError), (0.5, ValueError),
    (np.float64(0.99), ValueError), (2.0**200, ValueError), (2**1000, ValueError),
    (2**5000, ValueError),
]


@pytest.mark.parametrize(("scale", "exc"), BAD_SCALES, ids=lambda v: repr(v)[:20])
@pytest.mark.parametrize("site", ["constructor", "encode", "encrypt", "set_scale"])
def test_ckks_bad_scale_names_scale(ckctx, ckct, site, scale, exc):
    fn = {
        "constructor": lambda: veil.ckks(poly_modulus_degree=CKKS_N, scale=scale, device="cpu",
                                         galois_steps=None),
        "encode": lambda: ckctx.encode([1.0], scale=scale),
        "encrypt": lambda: ckctx.encrypt([1.0], scale=scale),
        "set_scale": lambda: ckct.set_scale(scale),
    }[site]
    with pytest.raises(exc, match=r"^scale:"):
        fn()


def test_ckks_scale_none_and_level_bound(ckctx, ckct):
    with pytest.raises(TypeError, match=r"^scale:"):
        ckct.set_scale(None)
    # 2^70 fits the 140 bits of Q at the top level but not the 60 bits at level 0.
    x = np.array([0.25, -0.5])
    pt = ckctx.encode(x, scale=2**70)
    assert np.allclose(ckctx.decode(pt)[:2].real, x, atol=1e-9)
    with pytest.raises(ValueError, match=r"^scale: log2\(scale\) = 70\.0 must be below the "
                                         r"60\.0 bits .* level 0"):
        ckctx.encode(x, scale=2**70, level=0)
    low = ckct.mod_switch_to(0)
    with pytest.raises(ValueError, match=r"^scale:"):
        low.set_scale(2.0**61)
    for bad, exc in ((1.0, TypeError), (5, ValueError), (-1, ValueError)):
        with pytest.raises(exc, match=r"^level:"):
            ckctx.encode(x, level=bad)


def test_ckks_valid_scales_match_numpy(ckctx):
    x = np.linspace(-1, 1, 64)
    for scale in (2**30, np.float64(2.0**35), 2.0**40, np.int64(2**45)):
        ct = ckctx.encrypt(x, scale=scale)
        assert ct.scale == float(scale)
        assert veil.precision(x * 3 + 1, ckctx.decrypt(ct * 3 + 1)[:64])["min_bits"] > 12
    ct = ckctx.encrypt(x)
    declared = ct.set_scale(ct.scale * (1 + 1e-9))
    assert declared.scale == pytest.approx(2.0**40 * (1 + 1e-9), rel=1e-15)
    assert veil.ckks(poly_modulus_degree=CKKS_N, scale=np.int32(2**20), device="cpu",
                     galois_steps=None).scale == 2.0**20


def test_ckks_values_and_operands_named(ckctx, ckct):
    cases = [
        (lambda: ckctx.encrypt(None), TypeError, "values"),
        (lambda: ckctx.encrypt("1.5"), TypeError, "values"),
        (lambda: ckctx.encrypt(True), TypeError, "values"),
        (lambda: ckctx.encrypt(np.array([True])), TypeError, "values"),
        (lambda: ckctx.encrypt(2**2000), ValueError, "values"),
        (lambda: ckctx.encrypt([1.0, float("nan")]), ValueError, "values"),
        (lambda: ckctx.encrypt([[1.0], [1.0, 2.0]]), ValueError, "values"),
        (lambda: ckctx.encrypt(np.zeros(CKKS_N)), ValueError, "values"),
        (lambda: ckct + "a", TypeError, "other"), (lambda: ckct + None, TypeError, "other"),
        (lambda: ckct * True, TypeError, "other"), (lambda: ckct - float("inf"), ValueError, "other"),
        (lambda: ckct * np.array([1, "x"], dtype=object), TypeError, "other"),
        (lambda: ckct + [2**2000], ValueError, "other"),
        (lambda: ckctx.encrypt([1.0], symmetric="no"), TypeError, "symmetric"),
        (lambda: ckctx.decrypt(ckct, complex_output="yes"), TypeError, "complex_output"),
    ]
    for fn, exc, name in cases:
        with pytest.raises(exc, match=rf"^{name}:"):
            fn()
    # An object array with a complex entry is complex: decrypt keeps the imaginary part.
    ct = ckctx.encrypt(np.array([1 + 2j, 3], dtype=object))
    assert ct.is_complex
    assert np.allclose(ckctx.decrypt(ct)[:2], [1 + 2j, 3], atol=1e-6)
    assert np.allclose(ckctx.decrypt(ckctx.encrypt([1.0]) + np.array([1j]))[:1], [1 + 1j],
                       atol=1e-6)


# ---- 4. default parameter chains -------------------------------------------------------------

DEGREES = [1024, 2048, 4096, 8192, 16384, 32768]


@pytest.mark.parametrize("scheme", ["bfv", "bgv"])
@pytest.mark.parametrize("n", DEGREES)
def test_integer_default_chain_constructs_and_computes(scheme, n):
    kw = {"poly_modulus_degree": n, "device": "cpu", "seed": 5}
    if n > 8192:
        kw["galois_steps"] = None  # power-of-two keys at large N only cost time here
    ctx = getattr(veil, scheme)(**kw)
    t = ctx.plain_modulus
    x = x_vec(t, n)
    ct = ctx.encrypt(x)
    assert ctx.noise_budget(ct) > 0
    assert np.array_equal(ctx.decrypt(ct * 3 + ct, signed=False), (4 * x) % t)
    if n <= 2048:  # SEAL's default chain has one prime there: no special prime, no keys
        assert ctx.context.special_primes == 0
        assert ctx.relin_keys is None and ctx.galois_keys is None
        with pytest.raises(ValueError, match=r"no relinearization keys.*special_primes=0"):
            ct * ct
    else:
        assert np.array_equal(ctx.decrypt(ct * ct, signed=False), (x * x) % t)
    if n == 1024:  # 65537 leaves no noise budget with a 27-bit Q: the largest that does
        assert t == veil.PlainModulus.batching(1024, 14) == 12289
        if scheme == "bfv":
            assert ctx.noise_budget(ct) >= 3
    else:
        assert t == 65537


@pytest.mark.parametrize("scheme", ["bfv", "bgv", "ckks"])
@pytest.mark.parametrize("n", [1024, 2048])
def test_small_degree_keys_name_the_argument(scheme, n):
    if scheme == "ckks":  # no rescaling chain fits the security bound at these degrees
        with pytest.raises(ValueError, match=rf"^poly_modulus_degree: no default CKKS "
                                             rf"coeff_modulus for N = {n}"):
            veil.ckks(poly_modulus_degree=n, device="cpu")
        return
    make = getattr(veil, scheme)
    with pytest.raises(ValueError, match=r"^relin_keys: key switching needs a special prime"):
        make(poly_modulus_degree=n, device="cpu", relin_keys=True)
    with pytest.raises(ValueError, match=r"^galois_steps: key switching needs a special prime"):
        make(poly_modulus_degree=n, device="cpu", galois_steps=[1])
    with pytest.raises(ValueError, match=r"^special_primes:"):
        make(poly_modulus_degree=n, device="cpu", special_primes=1)


@pytest.mark.parametrize("n", DEGREES[2:])
def test_ckks_default_chain_multiplies_and_rescales(n):
    kw = {"poly_modulus_degree": n, "device": "cpu", "seed": 5, "auto_rescale": False}
    if n > 8192:
        kw["galois_steps"] = None
    ctx = veil.ckks(**kw)
    assert ctx.max_level >= 1
    x = np.linspace(-2, 2, ctx.slot_count)
    ct = ctx.encrypt(x)
    sq = (ct * ct).rescale()
    assert sq.level == ctx.max_level - 1
    p = veil.precision(x * x + 0.5, ctx.decrypt(sq + 0.5))
    assert p["min_bits"] > 14, p
    if n == 4096:  # the 109-bit bound: [39, 30, 40] with a 2^30 scale
        assert [q.bit_length() for q in ctx.coeff_modulus] == [39, 30, 40]
        assert ctx.scale == 2.0**30
        assert math.log2(ctx.scale) < ctx.modulus_chain()[-1]["bits"]
        assert np.allclose(ctx.decrypt(ct.rotate(1))[:-1], x[1:], atol=1e-3)
    else:
        assert ctx.scale == 2.0**40


@pytest.mark.parametrize(("scheme", "n", "security"), [
    ("bfv", 1024, 192), ("bgv", 1024, 256), ("bfv", 2048, 192), ("bgv", 2048, 256),
    ("bfv", 4096, 256), ("bgv", 4096, 192), ("ckks", 4096, 192), ("ckks", 8192, 256),
])
def test_stricter_security_defaults_work_or_name_the_argument(scheme, n, security):
    """Below 128 bits' chains the default either computes correctly or says why, naming
    poly_modulus_degree or plain_modulus; never a context without noise budget."""
    make = getattr(veil, scheme)
    try:
        ctx = make(poly_modulus_degree=n, security=security, device="cpu", seed=2,
                   galois_steps=None)
    except ValueError as e:
        assert str(e).startswith(("poly_modulus_degree: ", "plain_modulus: ")), e
        assert str(n) in str(e)
        if scheme == "bfv" and n == 1024:
            return  # a 19-bit Q leaves no room for any batching plain modulus
        assert scheme != "ckks" or n < 8192, e  # 8192 at 256 bits has room for [42, 33, 43]
        return
    if scheme == "ckks":
        x = np.linspace(-1, 1, ctx.slot_count)
        sq = ctx.encrypt(x) * ctx.encrypt(x)  # auto_rescale (the default) rescales
        assert sq.level == ctx.max_level - 1
        assert veil.precision(x * x, ctx.decrypt(sq))["min_bits"] > 12
        return
    assert n > 1024, "N = 1024 above 128 bits cannot have a working default"
    t = ctx.plain_modulus
    x = x_vec(t, n)
    ct = ctx.encrypt(x)
    assert ctx.noise_budget(ct) > 0
    assert np.array_equal(ctx.decrypt(ct * 3 - ct, signed=False), (2 * x) % t)
    assert (ctx.relin_keys is None) == (ctx.context.special_primes == 0)


# ---- 5. CLI integer options ------------------------------------------------------------------

BAD_CLI = [
    ["bench", "--threads", "-1"], ["bench", "--threads", "99999999999999999999"],
    ["bench", "--threads", "1025"], ["bench", "--threads", "\u00b2"],
    ["bench", "--threads", "1,,2"], ["bench", "--threads", "1.5"],
    ["bench", "--runs", "0"], ["bench", "--runs", "-3"], ["bench", "--runs", "10000001"],
    ["bench", "--runs", "1e3"], ["bench", "--max-n", "0"], ["bench", "--max-n", "2" * 30],
    ["bench", "--cpu-max-n", "-8192"], ["demo", "--seed", "-1"],
    ["demo", "--seed", str(2**64)], ["demo", "--seed", "\u0663"],
]


@pytest.mark.parametrize("argv", BAD_CLI, ids=" ".join)
def test_cli_integer_options_rejected_by_argparse(argv, capsys):
    with pytest.raises(SystemExit) as e:  # parse only: a regression never starts a benchmark
        cli.build_parser().parse_args(argv)
    assert e.value.code == 2
    err = capsys.readouterr().err
    assert f"argument {argv[1]}: expected" in err and "Traceback" not in err


def test_cli_integer_options_valid():
    p = cli.build_parser()
    a = p.parse_args(["bench", "--threads", "1, 0,1024", "--runs", "5", "--max-n", "8192",
                      "--cpu-max-n", "4096"])
    assert (a.threads, a.runs, a.max_n, a.cpu_max_n) == ([1, 0, 1024], 5, 8192, 4096)
    assert p.parse_args(["demo", "--seed", str(2**64 - 1)]).seed == 2**64 - 1
    assert p.parse_args(["demo", "--seed", "0x10"]).seed == 16


@pytest.mark.parametrize(("kwargs", "exc", "name"), [
    ({"threads": [-1]}, ValueError, "threads"), ({"threads": [2**70]}, ValueError, "threads"),
    ({"threads": [1.5]}, TypeError, "threads"), ({"threads": 2}, TypeError, "threads"),
    ({"runs": 0}, ValueError, "runs"), ({"runs": 2.0}, TypeError, "runs"),
    ({"max_n": 1.5}, TypeError, "max_n"), ({"cpu_max_n": -1}, ValueError, "cpu_max_n"),
])
def test_bench_run_integer_arguments(kwargs, exc, name):
    from veil import bench

    with pytest.raises(exc, match=rf"^{name}:"):
        bench.run(scheme="bfv", device="cpu", quick=True, seal=False, verbose=False, **kwargs)
