"""The oracle: the Python polynomial evaluation and CKKS alignment that the C++ circuits layer
replaced in veil._tensor (PolynomialEvaluator, ScaleOps), kept word for word as they were in
python/veil/_tensor.py (commit bc754b5) except for the imports. tests/python/test_circuits.py
compares the C++ layer with them.

* ``polyval`` / ``evaluate`` (CKKS): the polynomial in the Chebyshev basis, evaluated by the
  baby-step giant-step recursion of Bossuat, Mouchet, Troncoso-Pastoriza and Hubaux (Eurocrypt
  2021, Alg. 2) with every addition exact in scale; depth ceil(log2(d + 1)) for degree d.
* Alignment (CKKS, ``auto_rescale=True``): the operand at the higher level is brought to the
  other's level *and exact scale* by one constant product and rescale (the scale adjustment of
  Kim-Papadimitriou-Polyakov, CT-RSA 2022).
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence

import numpy as np
from veil import _check

from . import bootstrap as _bootstrap

# ---- CKKS polynomials ---------------------------------------------------------------------------


class _ContextChain:
    """The chain facts the bootstrapping evaluator reads from a Bootstrapper (its ``ctx``,
    ``ev``, ``_tops`` and ``block_product``), for any CKKS context."""

    def __init__(self, ctx):
        self.ctx = ctx
        self.ev = ctx.evaluator
        self._tops = _bootstrap.rescale_tops(ctx.context)

    def block_product(self, level: int) -> float:
        return _bootstrap.block_product(self.ctx.context, level)


def chain_ops(ctx) -> _bootstrap._CipherOps:
    """Exact-scale ciphertext operations (:class:`veil._bootstrap._CipherOps`) on ``ctx``: a new
    object per use (its level-switch cache is keyed by the operands' identities)."""
    return _bootstrap._CipherOps(_ContextChain(ctx))


def _to_block_top(ops, ct):
    """``ct`` (raw) switched down to the highest block top at or below its level."""
    tops = [t for t in ops.bt._tops if t <= ct.level]
    if not tops:
        raise ValueError("ct: no rescale block below its level (it is inside q_0's block)")
    return ops.wrap(ops.ev.mod_switch_to(ct, tops[-1]) if tops[-1] != ct.level else ct)


def _plan_level(chain: _bootstrap.RescaleChain, x, c: np.ndarray) -> int:
    """The highest level at which the recursion can deliver p(x) for ``x`` (a _Meta at a block
    top): the evaluation is planned on (level, scale) pairs only (``_ScaleOnly``), trying the
    output levels from ceil(log2(d + 1)) blocks below the input downwards.

    Raises ValueError naming ``coeffs`` when no level is low enough."""
    tops = chain._tops
    idx = tops.index(x.level)
    deg = len(c) - 1
    first = max(1, math.ceil(math.log2(deg + 1))) if deg > 1 else 1
    for depth in range(first, idx + 1):
        plan = _bootstrap._ScaleOnly(chain)
        try:
            if deg <= 1:
                plan.linear_to([(plan.fresh(x.level, x.scale), 1.0)], 0.0, tops[idx - depth],
                               x.scale)
            else:
                cheb = _bootstrap._ChebEval(plan, plan.fresh(x.level, x.scale), c)
                cheb._eval(c, tops[idx - depth], x.scale)
        except (ValueError, AssertionError, KeyError, IndexError):
            continue
        return tops[idx - depth]
    raise ValueError(
        f"coeffs: a degree-{deg} polynomial needs at least {first} rescale levels but the "
        f"ciphertext (level {x.level}) has {idx} left above q_0's block; bootstrap it or use a "
        "longer chain")


def cheb_eval(ct, coeffs, domain: tuple[float, float] = (-1.0, 1.0)):
    """p(y) = sum_i coeffs[i] T_i(y) for y = (2x - a - b) / (b - a) (``domain`` = (a, b)), at the
    input's scale and the highest level the recursion reaches (ceil(log2(d + 1)) levels below
    the input; +1 for the map to [-1, 1]).

    Raises ValueError naming ``coeffs`` when the ciphertext has too few levels."""
    ctx = ct.ctx
    c = np.asarray(coeffs, dtype=np.float64)
    deg = len(c) - 1
    while deg > 0 and c[deg] == 0:
        deg -= 1
    c = c[:deg + 1]
    ops = chain_ops(ctx)
    x = _to_block_top(ops, ct.raw)
    a, b = float(domain[0]), float(domain[1])
    if (a, b) != (-1.0, 1.0):
        if x.level == ops.bt._tops[0]:
            raise ValueError(f"coeffs: no level left to map x into [-1, 1] (level {ct.level})")
        alpha, beta = 2.0 / (b - a), -(a + b) / (b - a)
        x = ops.linear_to([(x, alpha)], beta, ops.below(x.level), x.scale)
    level = _plan_level(ops.bt, x, c)
    if deg <= 1:  # c0 + c1 y (c1 may be 0)
        y = ops.linear_to([(x, c[1] if deg else 0.0)], c[0], level, x.scale)
    else:
        y = _bootstrap._ChebEval(ops, x, c)._eval(c, level, x.scale)
    return ct._wrap(y.ct)


def polyval(ct, coeffs: Sequence[float]):
    """p(x) = coeffs[0] + coeffs[1] x + ... + coeffs[d] x^d (numpy.polynomial order: lowest
    degree first), through the Chebyshev basis (``numpy.polynomial.chebyshev.poly2cheb``: the
    identity holds for every x, so no interval is assumed)."""
    c = np.asarray(coeffs)
    if c.ndim != 1 or c.size == 0 or c.dtype.kind not in "iuf":
        raise ValueError(f"coeffs: expected a 1-D sequence of real numbers, got {_check.show(coeffs)}")
    if not np.all(np.isfinite(c)):
        raise ValueError("coeffs: expected finite numbers")
    return cheb_eval(ct, np.polynomial.chebyshev.poly2cheb(c.astype(np.float64)))


def evaluate(ct, fn: Callable, interval: tuple[float, float] = (-1.0, 1.0), degree: int = 15):
    """An approximation of fn(x) for x in ``interval`` = (a, b): fn's Chebyshev interpolant of
    ``degree`` (at the Chebyshev points of the first kind on [a, b]; numpy's
    ``Chebyshev.interpolate``), evaluated homomorphically. Outside the interval the result
    diverges quickly. Uses ceil(log2(degree + 1)) + 2 levels (+1 maps x into [-1, 1]).

    Raises ValueError naming ``interval`` (a >= b or not finite) or ``degree`` (outside 1..1023)
    and TypeError naming ``fn`` when it is not callable."""
    if not callable(fn):
        raise TypeError(f"fn: expected a callable (numpy-vectorized), got {_check.show(fn)}")
    try:
        a, b = (float(v) for v in interval)
    except (TypeError, ValueError):
        raise ValueError(f"interval: expected (a, b), got {_check.show(interval)}") from None
    if not (math.isfinite(a) and math.isfinite(b) and a < b):
        raise ValueError(f"interval: expected finite a < b, got ({a}, {b})")
    degree = _check.integer(degree, "degree", 1, 1023)
    cheb = np.polynomial.chebyshev.Chebyshev.interpolate(fn, degree, domain=[a, b])
    return cheb_eval(ct, cheb.coef, (a, b))


# ---- CKKS alignment -----------------------------------------------------------------------------


def _close(s: float, t: float) -> bool:
    return abs(s / t - 1.0) <= 1e-6  # the evaluator's tolerance for equal scales


def align(ctx, a, b, scales: bool = True):
    """Raw ciphertexts ``a``, ``b`` at one level (and, with ``scales``, one scale): the operand
    at the higher level lands exactly on the other's level and scale (one constant product and
    rescale), or both drop one block when they share a level but not a scale. Returns (a, b).

    Raises ValueError naming ``other`` when no rescale block is left to align them."""
    if a.level == b.level and (not scales or _close(a.scale, b.scale)):
        return a, b
    ev = ctx.evaluator
    swap = a.level < b.level
    hi, lo = (b, a) if swap else (a, b)
    if hi.level > lo.level and (not scales or _close(hi.scale, lo.scale)):
        hi = ev.mod_switch_to(hi, lo.level)
        return (lo, hi) if swap else (hi, lo)
    ops = chain_ops(ctx)
    tops = ops.bt._tops
    above = ops._above.get(lo.level)  # the block top whose rescale lands on lo's level
    if above is not None and hi.level >= above:
        hi = ops.const_to(ops.wrap(hi), 1.0, lo.level, lo.scale).ct
    else:  # same level (or no block between): both drop one block, landing at lo's scale
        lo_tops = [t for t in tops if t <= lo.level]
        if len(lo_tops) < 2:
            raise ValueError(
                f"other: cannot align level {a.level} (scale 2^{math.log2(a.scale):.2f}) with "
                f"level {b.level} (scale 2^{math.log2(b.scale):.2f}): no rescale level left to "
                "adjust the scale; bootstrap or use a longer chain")
        top, below = lo_tops[-1], lo_tops[-2]
        target = a.scale  # the first operand's scale
        hi = ops.const_to(ops.wrap(ev.mod_switch_to(hi, top)), 1.0, below, target).ct
        lo = ops.const_to(ops.wrap(ev.mod_switch_to(lo, top)), 1.0, below, target).ct
    return (lo, hi) if swap else (hi, lo)
