"""Errors that say what to do (issue 24, item 3).

* The 20 newcomer mistakes of ``newcomer_mistakes.py`` each raise the named error whose message
  holds the operation or argument and the fix; docs/guide/errors.md shows exactly the messages
  Veil raises now (its table is generated from the same list).
* Out-of-depth errors name the user's operation and the level of the user's input, say how many
  more levels were needed, and the parameters they suggest work: the same computation with them
  decrypts to what numpy computes.
* No message reaching the user names the core's arguments (encrypted1, encrypted2, plain), and
  none tells an ``auto_rescale=True`` context to rescale by hand.
"""

from __future__ import annotations

import re

import newcomer_mistakes as NM
import numpy as np
import pytest
import veil

INTERNAL = re.compile(r"\bencrypted[12s]\b|\bencrypted:|^plain:|\binputs:")


@pytest.fixture(scope="module")
def ns():
    return NM.namespace()


def message_of(fn) -> BaseException:
    try:
        fn()
    except Exception as e:  # the test inspects whichever error it is
        return e
    raise AssertionError("no error raised")


def check_user_facing(msg: str) -> None:
    assert not INTERNAL.search(msg), f"internal argument name in: {msg}"


# ---- the table -------------------------------------------------------------------------------


def test_there_are_twenty_distinct_mistakes() -> None:
    assert len(NM.MISTAKES) == 20
    assert len({m.code for m in NM.MISTAKES}) == 20 and len({m.what for m in NM.MISTAKES}) == 20


@pytest.mark.parametrize("mistake", NM.MISTAKES, ids=[m.code for m in NM.MISTAKES])
def test_mistake_message_names_the_operation_and_the_fix(ns, mistake: NM.Mistake) -> None:
    e = NM.run(mistake, ns)
    assert type(e).__name__ == mistake.error, f"{type(e).__name__}: {e}"
    msg = str(e)
    missing = [k for k in mistake.keys if k not in msg]
    assert not missing, f"{missing} not in: {msg}"
    check_user_facing(msg)
    if isinstance(e, veil.DepthError):
        assert isinstance(e, ValueError) and e.operation in msg
        assert e.more_levels is None or e.more_levels >= 1  # None: BFV's budget cannot tell


def test_the_docs_page_shows_the_messages_raised_now() -> None:
    page = NM.page_table(NM.PAGE.read_text())
    assert page == NM.table(), (
        "docs/guide/errors.md's table differs from the messages Veil raises now; regenerate it "
        "with: python3 -P tests/python/newcomer_mistakes.py --write")
    assert sum(line.startswith("| ") for line in page.splitlines()) == 21  # header + 20 rows
    assert NM.SETUP.strip() in NM.PAGE.read_text()  # the objects the rows use are shown


def test_the_page_is_in_the_navigation() -> None:
    assert "guide/errors.md" in (NM.ROOT / "mkdocs.yml").read_text()


# ---- out of depth: what the message says, and that its advice works --------------------------


def _ints(pattern: str, msg: str) -> list[int]:
    """The distinct integers ``pattern`` captures in ``msg`` (sorted)."""
    return sorted({int(v) for v in re.findall(pattern, msg)})


def test_product_out_of_depth_reports_the_user_level_and_working_parameters(ns) -> None:
    x = ns["x"]
    e = message_of(lambda: x * x * x * x)
    assert isinstance(e, veil.DepthError)
    assert (e.operation, e.level, e.more_levels, e.depth) == ("x * y", 0, 1, 3)
    msg = str(e)
    assert "rescale first" not in msg and ".rescale()" not in msg  # auto_rescale=True
    vals = np.array([0.5, -0.25, 1.0])
    (n,) = _ints(r"poly_modulus_degree=(\d+)", msg)
    (depth,) = _ints(r"depth=(\d+)", msg)
    for ctx in (veil.ckks(poly_modulus_degree=n, device="cpu", seed=3),
                veil.ckks(depth=depth, device="cpu", seed=3)):
        y = ctx.encrypt(vals)
        assert np.allclose(ctx.decrypt(y * y * y * y)[:3], vals**4, atol=1e-5)


def test_evaluate_reports_the_input_level_not_an_internal_one(ns) -> None:
    """The issue's example: on a level-2 ciphertext the core's planner saw level 1 (after the
    map onto [-1, 1]); the user is told level 2, and the depth that then works."""
    x = ns["x"]
    assert x.level == 2
    e = message_of(lambda: x.evaluate(np.tanh, (-8, 8), 15))
    assert isinstance(e, veil.DepthError) and e.level == 2
    msg = str(e)
    assert "x.evaluate(tanh)" in msg and "level 1" not in msg
    ctx = veil.ckks(depth=e.depth, device="cpu", seed=3)
    vals = np.linspace(-6, 6, 16)
    got = ctx.decrypt(ctx.encrypt(vals).evaluate(np.tanh, (-8, 8), 15))[:16]
    cheb = np.polynomial.chebyshev.Chebyshev.interpolate(np.tanh, 15, domain=[-8, 8])
    assert np.max(np.abs(got - cheb(vals))) < 1e-4
    # one level less does not fit: the depth asked for is the least that works
    short = veil.ckks(depth=e.depth - 1, device="cpu", seed=3)
    with pytest.raises(veil.DepthError, match=r"1 more"):
        short.encrypt(vals).evaluate(np.tanh, (-8, 8), 15)


def test_polyval_depth_is_exact_where_the_core_gives_a_lower_bound() -> None:
    ctx = veil.ckks(depth=2, device="cpu", seed=4)
    coeffs = [0.1 * (i + 1) for i in range(9)]  # degree 8
    e = message_of(lambda: ctx.encrypt([0.5]).polyval(coeffs))
    assert isinstance(e, veil.DepthError) and "x.polyval(coeffs)" in str(e)
    deeper = veil.ckks(depth=e.depth, device="cpu", seed=4)
    vals = np.linspace(-1, 1, 8)
    got = deeper.decrypt(deeper.encrypt(vals).polyval(coeffs))[:8]
    assert np.max(np.abs(got - np.polynomial.polynomial.polyval(vals, coeffs))) < 1e-4


def test_power_names_the_exponent_and_its_levels(ns) -> None:
    x = ns["x"]
    e = message_of(lambda: x ** 8)
    assert isinstance(e, veil.DepthError)
    assert e.operation == "x ** 8" and e.level == 2 and (e.more_levels, e.depth) == (1, 3)
    assert "takes 3" in str(e)
    ctx = veil.ckks(depth=e.depth, device="cpu", seed=5)
    assert np.allclose(ctx.decrypt(ctx.encrypt([0.9, -0.8]) ** 8)[:2], [0.9**8, 0.8**8],
                       atol=1e-5)


@pytest.mark.parametrize("op, name", [
    (lambda low: low @ np.eye(3), "x @ M"),
    (lambda low: low.dot([1.0, 2.0, 3.0]), "x.dot(c)"),
    (lambda low: low / 2.0, "x / c"),
    (lambda low: low * 0.5, "x * c"),
])
def test_composite_operations_are_named_as_written(ns, op, name) -> None:
    low = ns["x"] * ns["x"] * ns["x"]  # level 0
    e = message_of(lambda: op(low))
    assert isinstance(e, veil.DepthError) and e.operation == name and e.level == 0, str(e)
    check_user_facing(str(e))


def test_manual_mode_messages_fit_the_mode(ns) -> None:
    m = ns["m"]
    low = (m * m).rescale() * m.mod_switch_to(1)
    low = low.rescale()
    assert low.level == 0
    e = message_of(lambda: low.rescale())
    assert isinstance(e, veil.DepthError) and "x.rescale()" in str(e) and e.level == 0
    # in manual mode the advice is to rescale; in auto mode it never is (rescale() raises there)
    assert "x = x.rescale()" in str(message_of(lambda: (m * m) * (m * m)))
    x = ns["x"]
    for f in (lambda: x * x * x * x, lambda: x ** 8, lambda: x.evaluate(np.tanh, (-8, 8), 15)):
        msg = str(message_of(f))
        assert "rescale first" not in msg and ".rescale()" not in msg, msg


def test_bgv_last_level_and_bfv_noise() -> None:
    bgv = veil.bgv(poly_modulus_degree=4096, device="cpu", seed=6)
    g = bgv.encrypt([1, 2, 3]).mod_switch_to(0)
    e = message_of(g.mod_switch_to_next)
    assert isinstance(e, veil.DepthError)
    msg = str(e)
    assert "x.mod_switch_to_next()" in msg and "level 0" in msg and e.more_levels == 1
    (n,) = _ints(r"poly_modulus_degree=(\d+)", msg)
    more = veil.bgv(poly_modulus_degree=n, device="cpu", seed=6)
    assert more.max_level >= e.depth  # the suggested N has the levels asked for
    # BFV: the exhausted noise budget is explained at decryption, with parameters that work
    bfv = veil.bfv(poly_modulus_degree=4096, device="cpu", seed=6)
    a = bfv.encrypt([3, 5, 7])
    e = message_of(lambda: (a * a * a).decrypt())
    assert isinstance(e, veil.DepthError) and e.operation == "x.decrypt()"
    msg = str(e)
    assert "noise budget is exhausted" in msg and "check_noise" not in msg  # no such option here
    (n,) = _ints(r"poly_modulus_degree=(\d+)", msg)
    for ctx in (veil.bfv(poly_modulus_degree=n, device="cpu", seed=6),
                veil.bfv(depth=e.depth, device="cpu", seed=6)):
        b = ctx.encrypt([3, 5, 7])
        assert list(ctx.decrypt(b * b * b)[:3]) == [27, 125, 343]


def test_alignment_without_a_level_is_out_of_depth() -> None:
    ctx = veil.ckks(poly_modulus_degree=8192, device="cpu", seed=7)
    a = ctx.encrypt([0.5]) * ctx.encrypt([0.5]) * ctx.encrypt([0.5])
    b = ctx.encrypt([0.5], scale=2.0**33, level=0)
    e = message_of(lambda: a + b)
    assert isinstance(e, veil.DepthError) and e.operation == "x + y" and e.level == 0
    check_user_facing(str(e))


def test_key_sets_and_schemes_in_every_scheme() -> None:
    for make in (veil.bfv, veil.bgv):
        one = make(poly_modulus_degree=4096, device="cpu", seed=8)
        two = make(poly_modulus_degree=4096, device="cpu", seed=9)
        u, v = one.encrypt([1]), two.encrypt([1])
        e = message_of(lambda: u * v)  # noqa: B023 - called at once
        assert "x * y: y belongs to another key set" in str(e)
        e = message_of(lambda: two.decrypt(u))  # noqa: B023 - called at once
        assert "ctx.decrypt(x): x belongs to another key set" in str(e)
    bfv = veil.bfv(poly_modulus_degree=4096, device="cpu", seed=8)
    bgv = veil.bgv(poly_modulus_degree=4096, device="cpu", seed=8)
    e = message_of(lambda: bfv.encrypt([1]) + bgv.encrypt([1]))
    assert "different context" in str(e) and "BGV" in str(e) and "BFV" in str(e)
    ck = veil.ckks(poly_modulus_degree=8192, device="cpu", seed=8)
    e = message_of(lambda: bfv.decrypt(ck.encrypt([1.0])))
    assert isinstance(e, TypeError) and "CKKS ciphertext" in str(e)
    e = message_of(lambda: bfv.encrypt([1]) * ck.encrypt([1.0]))
    assert isinstance(e, TypeError) and "do not mix" in str(e)


def test_same_context_is_the_cores_one_check_with_the_users_names() -> None:
    """The pythonic layer forwards its "same context" checks to the core's one gate
    (veil._core.check_same_context), which names the user's argument and gives both parameter
    sets; the parameters in the message are read here from the contexts themselves."""
    bfv = veil.bfv(poly_modulus_degree=4096, device="cpu", seed=8)
    other = veil.bfv(poly_modulus_degree=8192, device="cpu", seed=8)
    x, y = bfv.encrypt([1]), other.encrypt([1])

    def summary(c) -> str:
        return (f"BFV, poly_modulus_degree {c.poly_modulus_degree}, "
                f"{len(c.context.params.coeff_modulus)} primes, "
                f"plain_modulus {c.context.plain_modulus}")

    for op, name in ((lambda: x + y, "other"), (lambda: x * y, "other"),
                     (lambda: bfv.decrypt(y), "ct"), (lambda: bfv.noise_budget(y), "ct")):
        e = message_of(op)
        assert isinstance(e, ValueError), e
        msg = str(e)
        assert msg.startswith(f"{name}: belongs to a different context"), msg
        assert f"({summary(other)}; the operation's: {summary(bfv)})" in msg, msg
    # The gate itself, called directly: the name passed in is the one reported.
    with pytest.raises(ValueError, match=r"^my_arg: belongs to a different context"):
        veil._core.check_same_context(bfv.context, y.raw, "my_arg")
    veil._core.check_same_context(bfv.context, x.raw, "my_arg")  # the same context passes


def test_rotation_keys_on_the_server_name_the_step() -> None:
    client = veil.ckks(poly_modulus_degree=8192, device="cpu", seed=10)
    client.create_galois_keys([1])
    server = client.public()
    xs = veil.load(client.encrypt([1.0, 2.0, 3.0, 4.0]).to_bytes(), server)
    e = message_of(lambda: xs.rotate(3))  # no key for 3, nor for -1 to compose 4 - 1
    msg = str(e)
    assert msg.startswith("x.rotate(3): no Galois key for step 3") and \
        "create_galois_keys([3])" in msg
    client.create_galois_keys([3])
    server = client.public()
    xs = veil.load(client.encrypt([1.0, 2.0, 3.0, 4.0]).to_bytes(), server)
    assert np.allclose(client.decrypt(xs.rotate(3))[:1], [4.0], atol=1e-5)


def test_nested_operations_translate_once() -> None:
    """An operation made of others (x.dot(y): a product and rotations) reports itself, not its
    inner steps, and an error passes through unchanged when nothing is to translate."""
    ctx = veil.ckks(poly_modulus_degree=8192, device="cpu", seed=11)
    x = ctx.encrypt([1.0, 2.0])
    low = x * x * x
    e = message_of(lambda: low.dot(low))
    assert isinstance(e, veil.DepthError) and e.operation == "x.dot(y)"
    e = message_of(lambda: x.rotate(10**6))
    assert str(e).startswith("steps: expected |steps| < N/2")


def test_bootstrapping_context_advises_bootstrapping_and_it_works() -> None:
    """Where the context bootstraps, the fix for a spent ciphertext is to bootstrap it (both
    operands, when both are spent), and doing so lets the product run."""
    from veil import _bootstrap

    config = _bootstrap.BootstrapConfig()
    chain = _bootstrap.bootstrap_chain(10, 2, config, 64)
    ctx = veil.ckks(poly_modulus_degree=2**10, security=None, device="cpu", seed=12,
                    galois_steps=None, **chain.context_args())
    ctx.enable_bootstrapping(config, seed=12)
    vals = np.linspace(-0.9, 0.9, 8)
    z = ctx.encrypt(vals)
    want = vals
    while z.level > 0:
        z, want = z * z, want * want
    e = message_of(lambda: z * z)
    assert isinstance(e, veil.DepthError) and e.level == 0
    msg = str(e)
    assert "x and y" in msg and "x = x.bootstrap(), y = y.bootstrap()" in msg, msg
    fresh = z.bootstrap()
    got = ctx.decrypt(fresh * fresh)[:8]
    assert np.max(np.abs(got - want * want)) < 1e-3
