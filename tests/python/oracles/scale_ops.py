"""The oracle's exact-scale arithmetic (EvalMod's and polyval's): the part of the Python
bootstrapper (python/veil/_bootstrap.py at commit bc754b5) that the C++ ScaleOps,
ChebyshevEvaluation and EvalMod replaced, word for word (split from oracles/bootstrap.py to keep
files short). Re-exported by oracles.bootstrap under the old names."""

from __future__ import annotations

import math
from typing import Any, Protocol

import numpy as np

# ---- EvalMod's arithmetic: the same plan on ciphertexts or on (level, scale) pairs only ----------


class _Meta:
    __slots__ = ("level", "scale", "ct")

    def __init__(self, level, scale, ct=None):
        self.level, self.scale, self.ct = level, scale, ct


class RescaleChain(Protocol):
    """What the exact-scale evaluator reads from its owner: a :class:`Bootstrapper`, or
    ``veil._tensor._ContextChain`` for any CKKS context."""

    ctx: Any
    ev: Any
    _tops: list[int]

    def block_product(self, level: int) -> float: ...


class _ScaleOnly:
    """Level and scale bookkeeping with the rules of :class:`_CipherOps`, without ciphertexts
    (to learn EvalMod's output scale before any ciphertext exists)."""

    def __init__(self, bt: RescaleChain):
        self.bt = bt
        self.context = bt.ctx.context
        self._above = {}
        for lvl in bt._tops[1:]:
            self._above[self.context.rescale_target(lvl)] = lvl

    def fresh(self, level, scale):
        return _Meta(level, scale)

    def above(self, level: int) -> int:
        """The block top whose rescale lands on ``level``."""
        try:
            return self._above[level]
        except KeyError:
            raise ValueError(f"level {level} is not a rescale target") from None

    def below(self, level: int) -> int:
        return self.context.rescale_target(level)

    def _mul_meta(self, a, b):
        lvl = min(a.level, b.level)
        return _Meta(self.below(lvl), a.scale * b.scale / self.bt.block_product(lvl))

    def mul(self, a, b):
        return self._mul_meta(a, b)

    def square(self, a):
        return self._mul_meta(a, a)

    def mul_sum(self, pairs, level, scale):
        """sum a_i b_i landing on (level, scale) with one relinearization and one rescale:
        every pair moved to above(level), tensored, summed, relinearized and rescaled once."""
        if not pairs:
            raise ValueError("pairs: expected at least one pair")
        top = self.above(level)
        want = scale * self.bt.block_product(top)
        for a, b in pairs:
            if a.level < top or b.level < top:
                raise ValueError("pairs: an operand lies below the block above the target")
            if abs(a.scale * b.scale / want - 1) > 1e-9:
                raise AssertionError("pairs: a scale product is off")
        return _Meta(level, scale)

    def add(self, a, b):
        self._check(a, b)
        return _Meta(a.level, a.scale)

    def sub(self, a, b):
        return self.add(a, b)

    def _check(self, a, b):
        if a.level != b.level or abs(a.scale / b.scale - 1) > 1e-9:
            raise AssertionError(f"misaligned: {a.level}/{b.level}, {a.scale}/{b.scale}")

    def add_const(self, a, c):
        return _Meta(a.level, a.scale)

    def const_to(self, a, c, level, scale):
        """c * a landing exactly on (level, scale) (:meth:`linear_to` with one term)."""
        return self.linear_to([(a, c)], 0.0, level, scale)

    def linear_to(self, terms, c0, level, scale):
        """c0 + sum c_i a_i landing exactly on (level, scale) with one rescale: every a_i is
        moved to above(level) and multiplied by c_i at the scale that brings it to scale * D,
        then the sum is rescaled once."""
        top = self.above(level)
        for a, _ in terms:
            if a.level < top:
                raise ValueError(f"EvalMod: no level left for a constant product ({a.level} -> "
                                 f"{level})")
        return _Meta(level, scale)

    def to_level(self, a, level):
        """a moved down to ``level`` by dropping primes (scale unchanged)."""
        if a.level < level:
            raise ValueError("EvalMod: operand below the target level")
        return _Meta(level, a.scale)


class _CipherOps(_ScaleOnly):
    """The same operations on ciphertexts (Evaluator calls; relinearization after products)."""

    def __init__(self, bt: RescaleChain):
        super().__init__(bt)
        self.ev = bt.ev
        self._cache: dict = {}

    @property
    def rlk(self):
        return self.bt.ctx._rlk()  # products only: alignment needs no relinearization key

    def fresh(self, level, scale):
        raise NotImplementedError

    def wrap(self, ct):
        return _Meta(ct.level, ct.scale, ct)

    def _down(self, a, level):
        if a.level == level:
            return a.ct
        key = (id(a), level)  # the babies meet the same levels many times: switch once
        hit = self._cache.get(key)
        if hit is None:
            hit = self._cache[key] = (a, self.ev.mod_switch_to(a.ct, level))
        return hit[1]

    def linear_to(self, terms, c0, level, scale):
        super().linear_to(terms, c0, level, scale)
        top = self.above(level)
        target = scale * self.bt.block_product(top)
        acc = self.ev.scalar_combination([a.ct for a, _ in terms], [float(c) for _, c in terms],
                                         float(c0), target, top)
        r = self.ev.rescale_to_next(acc)
        r.scale = scale  # equal up to double rounding
        return self.wrap(r)

    def mul_sum(self, pairs, level, scale):
        super().mul_sum(pairs, level, scale)
        top = self.above(level)
        want = scale * self.bt.block_product(top)
        acc = None
        for a, b in pairs:
            x = self._down(a, top)
            t = self.ev.square(x) if a is b else self.ev.multiply(x, self._down(b, top))
            t.scale = want
            acc = t if acc is None else self.ev.add(acc, t)
        r = self.ev.relinearize_rescale(acc, self.rlk)
        r.scale = scale
        return self.wrap(r)

    def _mul_meta(self, a, b):
        lvl = min(a.level, b.level)
        x, y = self._down(a, lvl), self._down(b, lvl)
        prod = self.ev.square(x) if a is b else self.ev.multiply(x, y)
        return self.wrap(self.ev.relinearize_rescale(prod, self.rlk))

    def add(self, a, b):
        self._check(a, b)
        r = self.ev.add(a.ct, b.ct)
        r.scale = a.scale
        return self.wrap(r)

    def sub(self, a, b):
        self._check(a, b)
        r = self.ev.sub(a.ct, b.ct)
        r.scale = a.scale
        return self.wrap(r)

    def add_const(self, a, c):
        return self.wrap(self.ev.add_scalar(a.ct, float(c)))

    def to_level(self, a, level):
        return self.wrap(self._down(a, level))


class _ChebEval:
    """p(x) = sum c_i T_i(x) by the baby-step giant-step recursion of Bossuat et al. (Eurocrypt
    2021, Alg. 2) in the Chebyshev basis: T_i for i < m = 2^b (babies, T_2k = 2 T_k^2 - 1,
    T_2k+1 = 2 T_k+1 T_k - T_1) and T_m, T_2m, T_4m, ... (giants, by doubling); p = q T_2^j + r
    with T_2^j T_i = (T_2^j+i + T_2^j-i) / 2, each part evaluated at the level and scale that
    make q T_2^j and r meet exactly (target scales chosen from the top down)."""

    def __init__(self, ops, x, coeffs, few_baby_steps: bool = False):
        self.ops = ops
        coeffs = np.asarray(coeffs, dtype=np.float64)
        d = len(coeffs) - 1
        self.coeffs = coeffs
        logd = max(1, math.ceil(math.log2(d + 1)))
        # baby steps T_0..T_{m-1}... and T_m; EvalMod takes the smaller set (few_baby_steps)
        self.m = 1 << max(1, logd // 2 if few_baby_steps else (logd + 1) // 2)
        self.T = {1: x}
        for i in range(2, self.m + 1):
            self._power(i)
        g = self.m
        while g < d + 1:
            self._power(g)
            g *= 2

    def _power(self, i: int):
        if i in self.T:
            return self.T[i]
        ops = self.ops
        a, b = (i + 1) // 2, i // 2
        ta, tb = self._power(a), self._power(b)
        prod = ops.square(ta) if a == b else ops.mul(ta, tb)
        two = ops.add(prod, prod)
        if a == b:  # T_2k = 2 T_k^2 - 1
            t = ops.add_const(two, -1.0)
        else:  # T_2k+1 = 2 T_k+1 T_k - T_1
            t1 = ops.const_to(self.T[1], 1.0, two.level, two.scale)
            t = ops.sub(two, t1)
        self.T[i] = t
        return t

    def output_level(self) -> int:
        """The level of the result: the input level minus ceil(log2(d + 1)) blocks."""
        return self._min_level(len(self.coeffs) - 1)

    def result(self, scale: float | None = None):
        """p(x) at :meth:`output_level` and ``scale`` (default: the input's scale)."""
        return self._eval(self.coeffs, self.output_level(),
                          self.T[1].scale if scale is None else scale)

    def _min_level(self, d):
        """Output level: the input level minus ceil(log2(d + 1)) blocks (a leaf whose baby steps
        lie too low for its constant product is split once more)."""
        lvl = self.T[1].level
        for _ in range(max(1, math.ceil(math.log2(d + 1)))):
            lvl = self.ops.below(lvl)
        return lvl

    def _eval(self, c, level, scale):
        ops = self.ops
        pairs, terms, const = [], [], [0.0]
        self._collect(c, level, scale, pairs, terms, const)
        acc = None
        if pairs:  # the products landing on `level` share one relinearization and rescale
            acc = ops.mul_sum(pairs, level, scale)
        for t in terms:
            acc = t if acc is None else ops.add(acc, t)
        if const[0]:
            acc = ops.add_const(acc, const[0])
        return acc

    def _collect(self, c, level, scale, pairs, terms, const):
        ops = self.ops
        deg = len(c) - 1
        while deg > 0 and c[deg] == 0:
            deg -= 1
        c = c[:deg + 1]
        leaf = deg < self.m
        if leaf and deg >= 2:  # a leaf's baby steps must lie a block above `level`
            top = ops.above(level)
            leaf = all(c[i] == 0 or self.T[i].level >= top for i in range(1, deg + 1))
        if leaf:
            lterms = [(self.T[i], c[i]) for i in range(1, deg + 1) if c[i] != 0]
            if not lterms:
                raise ValueError("EvalMod: constant polynomial")
            terms.append(ops.linear_to(lterms, c[0], level, scale))
            return
        g = 1
        while g * 2 <= deg:
            g *= 2
        q = np.zeros(deg - g + 1)
        r = c[:g].copy()
        q[0] = c[g]
        for j in range(1, deg - g + 1):
            q[j] = 2 * c[g + j]
            r[g - j] -= c[g + j]
        tg = self.T[g]
        top = ops.above(level)
        tgd = ops.to_level(tg, top)
        if not np.any(q[1:]):  # q is a constant: one scalar product instead of a product
            terms.append(ops.const_to(tgd, q[0], level, scale))
        else:
            q_scale = scale * self.ops.bt.block_product(top) / tgd.scale
            pairs.append((self._eval(q, top, q_scale), tgd))
        if not np.any(r[1:]):  # r is a constant
            const[0] += r[0]
            return
        self._collect(r, level, scale, pairs, terms, const)  # its products land on `level`
