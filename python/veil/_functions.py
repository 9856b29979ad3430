"""Non-polynomial functions on CKKS ciphertexts: sign, comparison, max/min, relu, inverse and
square roots, slot-wise on real values (``ct.sign()``, ``ct.maximum(y)``, ``ct.inverse()``...).

The algorithms are the C++ circuits layer's (``cpp/veil/circuits/comparison.h``,
``inverse.h``); this module checks the arguments, plans the iteration counts, checks the depth
up front (:class:`veil.DepthError` naming the levels needed and left) and calls them:

* ``sign`` by the composite polynomials of Cheon, Kim, Kim, Lee and Lee, "Efficient Homomorphic
  Comparison Methods with Optimal Complexity" (Asiacrypt 2020): d_g stages of their g_3 then
  d_f stages of f_3 (degree 7, 3 levels each), the counts the smallest that bring the scalar
  map within 2^-(bits + 1) of ±1 for |x| in [epsilon, 1]. Defaults epsilon = 2^-8, bits = 12:
  3 + 3 stages, 18 levels. ``greater``, ``maximum``, ``minimum`` and ``relu`` are built on it
  (§5 of the paper).
* ``inverse`` by Goldschmidt's iteration (Cheon, Kim, Kim, Lee, Lee, "Numerical Method for
  Comparison on Homomorphically Encrypted Numbers", Asiacrypt 2019, Algorithm Inverse) after
  mapping [a, b] into (0, 2); ``inv_sqrt`` and ``sqrt`` by Newton's iteration from a Chebyshev
  initial approximation (the structure of Panda, "Polynomial Approximation of Inverse sqrt
  Function for FHE", CSCML 2022).

Precision is absolute error in bits (as :func:`veil.ckks.precision`) over the documented domain,
planned with one spare bit for the CKKS noise. Results keep the input's scale.
"""

from __future__ import annotations

import math
from typing import Any

from . import _check, _core, _errors

#: Default half-width of the interval around 0 where sign is not approximated.
DEFAULT_EPSILON = 2.0**-8
#: Default precision (bits of absolute error) of every function here.
DEFAULT_BITS = 12
#: Default input interval of inverse, sqrt and inv_sqrt.
DEFAULT_INTERVAL = (2.0**-6, 1.0)


def _bits(bits: Any) -> int:
    return _check.integer(bits, "bits", 1, 30)


def _real(value: Any, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) and not hasattr(
            value, "__float__"):
        raise TypeError(f"{name}: expected a real number, got {_check.show(value)}")
    v = float(value)
    if not math.isfinite(v):
        raise ValueError(f"{name}: expected a finite number, got {v}")
    return v


def sign_plan(epsilon: float = DEFAULT_EPSILON, bits: int = DEFAULT_BITS) -> _core.SignPlan:
    """The composite sign approximation for |x| in [epsilon, 1] within 2^-bits
    (``circuits::plan_sign``; ``.depth`` is the levels it takes, ``.g_stages``/``.f_stages`` its
    stages). Raises ValueError naming ``epsilon`` (outside (0, 1)) or ``bits`` (outside 1..30)."""
    eps = _real(epsilon, "epsilon")
    if not 0.0 < eps < 1.0:
        raise ValueError(f"epsilon: expected 0 < epsilon < 1 (the half-width of the interval "
                         f"around 0 left out), got {eps}")
    return _core.plan_sign(eps, _bits(bits))


def _interval(interval: Any) -> tuple[float, float]:
    try:
        a, b = interval
    except (TypeError, ValueError):
        raise ValueError(f"interval: expected (a, b), got {_check.show(interval)}") from None
    a, b = _real(a, "interval"), _real(b, "interval")
    if not 0.0 < a < b or b / a > 2.0**20:
        raise ValueError(f"interval: expected 0 < a < b with b / a <= 2^20, got ({a}, {b})")
    return a, b


def _need(ct: Any, depth: int, op: str, what: str) -> None:
    """DepthError when ``ct`` has fewer than ``depth`` levels left."""
    ctx = ct.ctx
    left = _errors.levels_left(ctx, ct.level)
    if left >= depth:
        return
    used = _errors.levels_used(ctx, ct.level)
    more = depth - left
    boot = (" or bootstrap x first (x.bootstrap()) if the bootstrapper's levels suffice"
            if ctx.bootstrapper is not None else
            " or enable bootstrapping and bootstrap x first")
    raise _errors.DepthError(
        f"{op}: out of depth: x is at level {ct.level} with {left} level"
        f"{'s' if left != 1 else ''} left, and {what} takes {depth}: {more} more. The "
        f"computation needs {used + depth} levels; create the context with "
        f"veil.ckks(depth={used + depth}, ...) (or a longer coeff_modulus){boot}; a larger "
        "epsilon or fewer bits takes fewer levels.", op, ct.level, more, used + depth)


def _evaluator(ctx: Any, attr: str, cls: Any) -> Any:
    """The context's evaluator of class ``cls``, made once and kept as ``ctx.<attr>``."""
    ev = getattr(ctx, attr, None)
    if ev is None:
        ev = cls(ctx.context)
        setattr(ctx, attr, ev)
    return ev


def _comparison(ctx: Any) -> _core.ComparisonEvaluator:
    return _evaluator(ctx, "_comparison_ev", _core.ComparisonEvaluator)


def _inverse(ctx: Any) -> _core.InverseEvaluator:
    return _evaluator(ctx, "_inverse_ev", _core.InverseEvaluator)


def _sign_what(name: str, plan: _core.SignPlan) -> str:
    return (f"{name}(epsilon=2^{math.log2(plan.epsilon):.3g}, bits={plan.bits}) "
            f"({plan.g_stages} g_{plan.n} + {plan.f_stages} f_{plan.n} stages)")


# ---- with bootstrapping: the composite split where the levels run out -------------------------


def _left(ct: Any) -> int:
    return _errors.levels_left(ct.ctx, ct.level)


def _staged(ct: Any, plan: _core.SignPlan, extra: int) -> bool:
    """Whether ``ct`` lacks the levels for the plan (+ ``extra``) on a context that bootstraps:
    then the composite runs in parts with bootstraps between them (:func:`_sign_staged`)."""
    return ct.ctx.bootstrapper is not None and _left(ct) < plan.depth + extra


def _refresh(ct: Any, need: int) -> Any:
    """``ct`` when it has ``need`` levels left, else ``ct`` bootstrapped."""
    return ct if _left(ct) >= need else ct.ctx.bootstrap(ct)


def _sign_staged(ct: Any, plan: _core.SignPlan, op: str) -> Any:
    """sign on a bootstrapping context: as many stages of the composite as the levels left
    allow, a bootstrap, the next stages, and so on (the stages are the same polynomials as in
    one piece, so the precision is the plan's, less the bootstrap's own error of about 2^-20
    per refresh). Raises DepthError when one stage needs more levels than a bootstrap gives."""
    ctx = ct.ctx
    stages = ["g"] * plan.g_stages + ["f"] * plan.f_stages
    per_stage = plan.depth // len(stages)
    if ctx.levels < per_stage:
        raise _errors.DepthError(
            f"{op}: one stage of the sign's composite polynomial takes {per_stage} levels, and "
            f"a bootstrap leaves {ctx.levels} (ctx.levels): use a bootstrapping chain with "
            f"more levels (veil.ckks.bootstrap_chain)", op, ct.level, per_stage - ctx.levels,
            per_stage)
    x, i = ct, 0
    while i < len(stages):
        k = min(_left(x) // per_stage, len(stages) - i)
        if k == 0:
            x = ctx.bootstrap(x)
            continue
        part = stages[i:i + k]
        x = x._wrap(_comparison(ctx).sign(x.raw, ctx._rlk(),
                                          plan.part(part.count("g"), part.count("f"))))
        i += k
    return x


def _refresh_for(ct: Any, depth: int) -> Any:
    """On a context that bootstraps, ``ct`` bootstrapped first when it lacks the ``depth``
    levels an iteration (inverse, square roots) needs in one piece and a bootstrap gives them;
    otherwise ``ct`` (the depth check that follows then reports what is missing)."""
    if ct.ctx.bootstrapper is not None and _left(ct) < depth <= ct.ctx.levels:
        return ct.ctx.bootstrap(ct)
    return ct


def _relu_from_sign(x: Any, s: Any) -> Any:
    """x (sign(x) + 1) / 2 from a sign s of x (bootstrapping first whatever lacks a level)."""
    h = _refresh(s, 2) * 0.5 + 0.5
    return _refresh(x, 1) * h


def sign(ct: Any, epsilon: float = DEFAULT_EPSILON, bits: int = DEFAULT_BITS) -> Any:
    """sign(x) slot-wise for real x in [-1, 1]: ±1 within 2^-bits where |x| >= epsilon; inside
    (-epsilon, epsilon) a value in [-1, 1]. Depth: ``sign_plan(epsilon, bits).depth`` levels
    (defaults: 18). On a context that bootstraps (``bootstrapping=True``) and a ciphertext with
    fewer levels left, the composite runs in parts with a bootstrap before each part that
    would not fit. Raises ValueError naming ``epsilon``/``bits``, DepthError when x has too
    few levels left (and the context does not bootstrap)."""
    plan = sign_plan(epsilon, bits)
    if _staged(ct, plan, 0):
        return _sign_staged(ct, plan, "x.sign()")
    _need(ct, plan.depth, "x.sign()", _sign_what("sign", plan))
    return ct._wrap(_comparison(ct.ctx).sign(ct.raw, ct.ctx._rlk(), plan))


def relu(ct: Any, epsilon: float = DEFAULT_EPSILON, bits: int = DEFAULT_BITS) -> Any:
    """max(x, 0) = (x + x sign(x)) / 2 slot-wise for real x in [-1, 1]: within 2^-bits where
    |x| >= epsilon, within epsilon / 2 inside. Depth: the sign's + 1 (defaults: 19); with
    bootstrapping as :func:`sign` (then 2 levels after the sign)."""
    plan = sign_plan(epsilon, bits)
    if _staged(ct, plan, 1):
        return _relu_from_sign(ct, _sign_staged(ct, plan, "x.relu()"))
    _need(ct, plan.depth + 1, "x.relu()", _sign_what("relu", plan) + " + 1")
    return ct._wrap(_comparison(ct.ctx).relu(ct.raw, ct.ctx._rlk(), plan))


def _binary(ct: Any, other: Any, kind: str, epsilon: float, bits: int) -> Any:
    """greater/maximum/minimum of ``ct`` and ``other`` (a CKKSCiphertext, or plaintext numbers:
    then through ``x - other``)."""
    plan = sign_plan(epsilon, bits)
    op = f"x.{kind}(y)"
    extra = 0 if kind == "greater" else 1
    if not hasattr(other, "raw"):  # plaintext numbers: through d = x - other
        d = ct - other
        if _staged(d, plan, extra + 1):  # bootstrapping context, too few levels: in parts
            s = _sign_staged(d, plan, op)
            if kind == "greater":
                return _refresh(s, 2) * 0.5 + 0.5
            r = _relu_from_sign(d, s)
            return r + other if kind == "maximum" else ct - r
        if kind == "greater":  # (sign(d) + 1) / 2: one more level for the halving
            _need(ct, plan.depth + 1, f"x.{kind}(c)", _sign_what("sign", plan) + " + 1")
            return (sign(d, epsilon, bits) + 1.0) * 0.5
        _need(d, plan.depth + 1, f"x.{kind}(c)", _sign_what("relu", plan) + " + 1")
        r = relu(d if kind == "maximum" else -d, epsilon, bits)
        return r + other if kind == "maximum" else other - r
    low = ct if ct.level <= other.level else other
    if _staged(low, plan, extra):  # bootstrapping context, too few levels: sign in parts
        d = ct - other
        s = _sign_staged(d, plan, op)
        if kind == "greater":
            return _refresh(s, 2) * 0.5 + 0.5
        r = _relu_from_sign(d, s)  # max(d, 0): max = y + r, min = x - r
        return other + r if kind == "maximum" else ct - r
    a, b = ct._pair(other)
    _need(low, plan.depth + extra, op,
          _sign_what(kind, plan) + (" + 1" if extra else ""))
    ev = _comparison(ct.ctx)
    fn = {"greater": ev.compare, "maximum": ev.maximum, "minimum": ev.minimum}[kind]
    return ct._wrap(fn(a, b, ct.ctx._rlk(), plan), ct._complexity(other))


def greater(ct: Any, other: Any, epsilon: float = DEFAULT_EPSILON,
            bits: int = DEFAULT_BITS) -> Any:
    """(sign(x - y) + 1) / 2 slot-wise: 1 where x > y, 0 where x < y (within 2^-bits when
    |x - y| >= epsilon), 1/2 where x = y; x - y in [-1, 1] (e.g. x, y in [-1/2, 1/2]). Depth:
    the sign's (the affine map is folded into its last stage); +1 for plaintext ``other``."""
    return _binary(ct, other, "greater", epsilon, bits)


def maximum(ct: Any, other: Any, epsilon: float = DEFAULT_EPSILON,
            bits: int = DEFAULT_BITS) -> Any:
    """max(x, y) = (x + y + (x - y) sign(x - y)) / 2 slot-wise (numpy.maximum), x - y in
    [-1, 1]: within 2^-bits where |x - y| >= epsilon, within epsilon / 2 elsewhere. Depth: the
    sign's + 1."""
    return _binary(ct, other, "maximum", epsilon, bits)


def minimum(ct: Any, other: Any, epsilon: float = DEFAULT_EPSILON,
            bits: int = DEFAULT_BITS) -> Any:
    """min(x, y) = (x + y - (x - y) sign(x - y)) / 2 slot-wise (numpy.minimum); as
    :func:`maximum`."""
    return _binary(ct, other, "minimum", epsilon, bits)


def inverse(ct: Any, interval: tuple[float, float] = DEFAULT_INTERVAL,
            bits: int = DEFAULT_BITS) -> Any:
    """1/x slot-wise (numpy.reciprocal) for real x in ``interval`` = (a, b), 0 < a < b: within
    2^-bits (absolute). Goldschmidt's iteration (Cheon et al., Asiacrypt 2019) after x -> x / c,
    c = (a + b) / 2; d iterations with ((b - a) / (b + a))^(2^(d+1)) / a <= 2^-(bits + 1),
    depth d + 2 (defaults: d = 8, 10 levels); on a context that bootstraps, x is bootstrapped
    first when it lacks them. Raises ValueError naming ``interval``/``bits``, DepthError when x
    has too few levels left (and a bootstrap would not give them)."""
    a, b = _interval(interval)
    plan = _core.plan_inverse(a, b, _bits(bits))
    ct = _refresh_for(ct, plan.depth)
    _need(ct, plan.depth, "x.inverse()",
          f"inverse on ({a:g}, {b:g}) at {plan.bits} bits ({plan.iterations} iterations)")
    return ct._wrap(_inverse(ct.ctx).inverse(ct.raw, ct.ctx._rlk(), plan))


def _root(ct: Any, interval: Any, bits: int, root: bool) -> Any:
    a, b = _interval(interval)
    plan = _core.plan_inv_sqrt(a, b, _bits(bits), root)
    name = "sqrt" if root else "inv_sqrt"
    ct = _refresh_for(ct, plan.depth)
    _need(ct, plan.depth, f"x.{name}()",
          f"{name} on ({a:g}, {b:g}) at {plan.bits} bits (degree-{plan.initial_degree} start, "
          f"{plan.newton_steps} Newton steps)")
    ev = _inverse(ct.ctx)
    fn = ev.sqrt if root else ev.inv_sqrt
    return ct._wrap(fn(ct.raw, ct.ctx._rlk(), plan))


def inv_sqrt(ct: Any, interval: tuple[float, float] = DEFAULT_INTERVAL,
             bits: int = DEFAULT_BITS) -> Any:
    """1/sqrt(x) slot-wise for real x in ``interval`` = (a, b), 0 < a < b: within 2^-bits.
    Newton's y <- y (3 - x y^2) / 2 (2 levels a step) from the Chebyshev interpolant of degree
    1, 3, 7 or 15 on (a, b) (1 + log2(degree + 1) levels), whichever needs the least depth
    (defaults: degree 15 + 2 steps, 9 levels)."""
    return _root(ct, interval, bits, False)


def sqrt(ct: Any, interval: tuple[float, float] = DEFAULT_INTERVAL,
         bits: int = DEFAULT_BITS) -> Any:
    """sqrt(x) = x / sqrt(x) slot-wise (numpy.sqrt) for real x in ``interval``: within 2^-bits;
    :func:`inv_sqrt` planned for b 2^-bits, then one product (defaults: 10 levels)."""
    return _root(ct, interval, bits, True)


__all__ = ["DEFAULT_BITS", "DEFAULT_EPSILON", "DEFAULT_INTERVAL", "greater", "inv_sqrt",
           "inverse", "maximum", "minimum", "relu", "sign", "sign_plan", "sqrt"]
