"""The oracle: the Python CKKS bootstrapper that the C++ circuits layer (cpp/veil/circuits) was
ported from, kept word for word as it was in python/veil/_bootstrap.py (commit bc754b5) except
for its imports and one sum (below). tests/python/test_circuits.py compares the C++ layer with it.
The package's own bootstrapper (veil._bootstrap) binds the C++ one.

Sums of floats use :func:`py_sum`, CPython 3.12's compensated sum() (Neumaier), which the C++
layer reproduces (circuits/numeric.h py_sum): CPython 3.11's sum() adds naively and can differ
in the last bit, so the oracle no longer depends on the interpreter's version.

CKKS bootstrapping: refreshes a ciphertext near the bottom of the modulus chain to a higher level.

The pipeline (Cheon-Han-Kim-Kim-Song, "Bootstrapping for approximate homomorphic encryption",
Eurocrypt 2018) in the order it runs, with the improvements this module implements:

1. **SlotToCoeff first** (the order of Chen-Chillotti-Song, Eurocrypt 2019): the input's slots
   z become the plaintext's coefficients. It is the "special FFT" of the encoding, split into
   ``stc_levels`` merged groups of radix-2 stages; each group is one plaintext-matrix product
   evaluated with baby-step giant-step rotations (Halevi-Shoup, CRYPTO 2014 and 2018) whose baby
   steps are hoisted (one ModUp shared, ``Evaluator.rotate_many``) and whose inner sums run in
   one pass (``Evaluator.multiply_plain_sum``). Run here, at the bottom of the chain, its
   rotations cost a few limbs instead of the 15-20 they would cost after EvalMod.
2. **Sparse-secret encapsulation** (Bossuat-Troncoso-Hubaux, eprint 2022/024, §5): at q_0 the
   ciphertext is switched from the dense secret s to a sparse secret s' (Hamming weight h,
   32 by default) with a key that exists only modulo q_0 * P, so the sparse secret never meets a
   large modulus; after ModRaise it is switched back to s. The sparse secret keeps the overflow
   polynomial I(X) of ModRaise small (its coefficients have a standard deviation of about
   sqrt(h / 12) = 1.6, and K = 12 bounds them).
3. **ModRaise** (CHKKS18 §3.1): the phase becomes t = Delta z + q_0 I(X) modulo the top modulus
   (``Evaluator.mod_raise``).
4. **SubSum** for sparse slots (CHKKS18 §4.2): rotations by multiples of the slot count project
   t onto the subring that n' slots live in.
5. **CoeffToSlot** (CHKKS18 §4.1; factored transforms of Chen-Chillotti-Song 2019 and Han-Ki,
   CT-RSA 2020): the slots become t's coefficients, w = t_lo + i t_hi, in bit-reversed order
   (which undoes the bit reversal SlotToCoeff applied, so the result is in natural order):
   ``cts_levels`` merged groups of the inverse special FFT, as above.
6. **EvalMod** (Han-Ki 2020, §4; Bossuat-Mouchet-Troncoso-Hubaux, Eurocrypt 2021): the real and
   imaginary parts of w are separated with a conjugation, and each goes through
   x -> sin(2 pi x) / (2 pi) computed as a Chebyshev interpolant of cos(2 pi (x - 1/4) / 2^r)
   followed by r double-angle steps cos(2a) = 2 cos(a)^2 - 1; the polynomial is evaluated in
   the Chebyshev basis by a baby-step giant-step recursion (Bossuat et al. 2021, Alg. 2) whose
   scales are chosen top-down so every addition meets equal scales exactly, and whose leaves are
   one-pass scalar combinations (``Evaluator.scalar_combination``). The factor q_0 / (2 pi Delta)
   that turns sin(2 pi t / q_0) back into z costs no level: the result's scale is declared that
   much smaller (EvalMod's scales are chosen backwards so it lands on Delta exactly).

SEAL's slot order (generator 3) differs from the generator-5 order of the papers: X^(N/2) is
i * (-1)^j on slot j rather than i, and slot j of an odd index sits at the conjugate of the
root the generator-5 FFT expects. Both are absorbed exactly: the evaluation matrix W of the
transforms uses the generator -3 (which generates the same subgroup as 5, so the special FFT
factors apply; tests check the factorization against the dense matrix), the odd slots are
conjugated by masks folded into the first CoeffToSlot and the last SlotToCoeff group, and the
imaginary branch of EvalMod uses X^(N/2) and the oddness of sine.

Everything runs on the context's device through the same Evaluator calls, so the CPU and the
GPU compute the same thing, word for word (the CPU slowly).
"""

from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass
from typing import TYPE_CHECKING

import numpy as np
from numpy.polynomial import chebyshev as _cheb
from veil import _core
from veil._base import generate_galois_keys

from .scale_ops import RescaleChain, _ChebEval, _CipherOps, _Meta, _ScaleOnly

if TYPE_CHECKING:
    from veil._ckks import CKKSContext


def py_sum(xs) -> float:
    """sum(xs) of floats as CPython 3.12+ computes it: Neumaier's compensated summation, the
    compensation added at the end when finite (the C++ detail::py_sum, word for word)."""
    xs = [float(x) for x in xs]
    if not xs:
        return 0.0
    s, c = 0.0 + xs[0], 0.0
    for x in xs[1:]:
        t = s + x
        c += (s - t) + x if abs(s) >= abs(x) else (x - t) + s
        s = t
    if c != 0.0 and math.isfinite(c):
        s += c
    return s


@dataclass(frozen=True)
class BootstrapConfig:
    """Bootstrapping parameters (defaults: full slots, Cheddar-like level budget).

    Attributes:
        slots: slots refreshed (a power of two <= N/2; default N/2, full slots). Sparse slots
            need a ciphertext whose N/2 slots repeat with this period: encrypt
            ``np.tile(values, N // 2 // slots)`` (the encoder pads with zeros, it does not
            repeat).
        cts_levels, stc_levels: levels (rescale blocks) of CoeffToSlot and SlotToCoeff; more
            levels mean fewer rotations per level.
        k_range: K, the bound on |I| (EvalMod's interval is [-(K + 1), K + 1]); with h = 32 the
            coefficients of I have a standard deviation of about sqrt(h / 12) = 1.6, so K = 12
            is 7 standard deviations.
        evalmod_degree: degree of the Chebyshev interpolant of the scaled cosine.
        double_angle: r, the number of double-angle steps.
        hamming_weight: h of the encapsulated sparse secret.
    """

    slots: int | None = None
    cts_levels: int = 3
    stc_levels: int = 3
    k_range: int = 12
    evalmod_degree: int = 31
    double_angle: int = 3
    hamming_weight: int = 32

    @property
    def evalmod_depth(self) -> int:
        """Levels EvalMod consumes: the Chebyshev evaluation (ceil(log2(d + 1))) and the
        double-angle steps."""
        return math.ceil(math.log2(self.evalmod_degree + 1)) + self.double_angle

    @property
    def depth(self) -> int:
        """Levels bootstrapping consumes in all."""
        return self.cts_levels + self.evalmod_depth + self.stc_levels


@dataclass(frozen=True)
class BootstrapChain:
    """A modulus chain for bootstrapping: :meth:`context_args` gives the matching
    :class:`veil.CKKSContext` arguments."""

    coeff_modulus: list  # bit sizes, special primes last
    rescale_groups: list
    special_primes: int
    alpha: int  # primes per key-switching digit
    scale: float
    user_levels: int

    def context_args(self) -> dict:
        return {"coeff_modulus": self.coeff_modulus, "rescale_groups": self.rescale_groups,
                "special_primes": self.special_primes, "alpha": self.alpha, "scale": self.scale}


def bootstrap_chain(log_n: int, user_levels: int, config: BootstrapConfig = BootstrapConfig(),
                    word_bits: int = 64, special: int | None = None,
                    alpha: int | None = None) -> BootstrapChain:
    """A modulus chain for bootstrapping at N = 2^log_n with ``user_levels`` levels left after it.

    Bottom up: q_0 (55 bits: with SlotToCoeff first the coefficients EvalMod sees are the slot
    values themselves, |z| <= ~1.4, and q_0 / Delta = 2^15 keeps sin(2 pi x) / (2 pi) within
    (2 pi 1.4 / 2^15)^2 / 6 ~ 1e-8 of x, while EvalMod's approximation error is multiplied by
    only q_0 / (2 pi Delta) ~ 2^12.4 and not spread by a final transform), the SlotToCoeff
    levels (40 bits: bootstrapping starts there, at scale 2^40, so its plaintexts keep 2^40 of
    precision), ``user_levels`` levels of 40 bits (scale 2^40), the EvalMod levels (60
    bits: EvalMod runs at scale ~2^60 so the message, ~2^-14 of its values, keeps 46 bits), the
    CoeffToSlot levels (56 bits) and the special primes (60 bits; default 5 with digits of 4
    primes, so P exceeds every digit by 2^60 and key switching adds almost no noise to the
    raised ciphertext, whose message is only ~2^-14 of q_0 I). With ``word_bits=32`` every level
    becomes a block of ~30-bit primes of about those sizes (two primes for 50-60 bits, and for
    SlotToCoeff, whose plaintexts would keep only 2^30 of precision in one) and the 40-bit user
    levels alternate one and two primes as the default 32-bit chain does; 12
    special primes of 31 bits with digits of 12 primes (Cheddar's bootparam_40 shape).
    """
    if word_bits == 64:
        levels = ([55] + [40] * config.stc_levels + [40] * user_levels
                  + [60] * config.evalmod_depth + [56] * config.cts_levels)
        k = special if special is not None else 5
        return BootstrapChain(levels + [60] * k, [1] * len(levels), k,
                              alpha if alpha is not None else max(1, k - 1), 2.0 ** 40,
                              user_levels)
    if word_bits != 32:
        raise ValueError(f"word_bits: expected 32 or 64, got {word_bits!r}")
    groups = [2] + [1] * config.stc_levels  # q_0: 28 + 27 bits; SlotToCoeff: one ~30-bit prime
    # user levels: (2, 1) pairs from the top, as default_ckks_chain_32: 2^40 <-> 2^50 scales
    groups += [1 if (user_levels - i) % 2 == 1 else 2 for i in range(user_levels)]
    groups += [2] * config.evalmod_depth + [2] * config.cts_levels
    k = special if special is not None else 12
    bits = [28, 27] + [30] * (sum(groups) - 2) + [31] * k
    return BootstrapChain(bits, groups, k, alpha if alpha is not None else k, 2.0 ** 40,
                          user_levels)


def preset_chain(n: int, security: int | None, config: BootstrapConfig = BootstrapConfig(),
                 word_bits: int = 64) -> BootstrapChain:
    """:func:`bootstrap_chain` with as many user levels as the security bound allows
    (``security=None``, no bound: two user levels, for tests at small N). N = 2^16 at 128 bits:
    15 user levels with 64-bit words (nominal log2 QP = 1723 <= 1747), 13 with 32-bit words.

    Raises:
        ValueError naming poly_modulus_degree when the bound leaves no user level.
    """
    log_n = int(math.log2(n))
    if security is None:
        return bootstrap_chain(log_n, 2, config, word_bits)
    bound = _core.CoeffModulus.max_bit_count(n, security)
    users = 0
    while sum(bootstrap_chain(log_n, users + 1, config, word_bits).coeff_modulus) <= bound:
        users += 1
    if users == 0:
        raise ValueError(
            f"poly_modulus_degree: bootstrapping at N = {n} does not fit the {security}-bit bound "
            f"of {bound} bits (it needs {config.depth} levels); use N = 65536 or pass "
            "coeff_modulus with security=None for tests")
    return bootstrap_chain(log_n, users, config, word_bits)


# ---- linear algebra: diagonal form of slot-wise linear maps ---------------------------------
# A map y = M x on n slot values is held as {k: d_k} with y[j] = sum_k d_k[j] x[(j + k) mod n]
# (d_k[j] = M[j, j + k]); rotating a ciphertext left by k gives x[(j + k) mod n] in slot j.


def _compose(a: dict, b: dict, n: int) -> dict:
    """Diagonals of A∘B (B applied first): (AB)_{a+b} = A_a * rot_a(B_b)."""
    out: dict = {}
    for ka, da in a.items():
        for kb, db in b.items():
            k = (ka + kb) % n
            out[k] = out.get(k, 0) + da * np.roll(db, -ka)
    return {k: v for k, v in out.items() if np.any(v != 0)}


def _row_scale(a: dict, rows: np.ndarray) -> dict:
    """diag(rows) ∘ A."""
    return {k: d * rows for k, d in a.items()}


def _col_scale(a: dict, cols: np.ndarray) -> dict:
    """A ∘ diag(cols): column j + k of diagonal k is scaled by cols[j + k]."""
    return {k: d * np.roll(cols, -k) for k, d in a.items()}


def _butterflies(n: int):
    """For each radix-2 stage s = 1..log2 n of the special FFT (block length 2^s, half h):
    (h, lo, w) with lo[p] true on the lower half of p's block and w[p] the twiddle of p's
    butterfly, zeta^(g^(p mod h) mod 2^(s+2) * n / 2^s), zeta = exp(2 pi i / 4n), g = -3 mod 4n."""
    m = 4 * n
    g = m - 3
    length = 2
    while length <= n:
        h = length // 2
        lenq = 4 * length
        pos = np.arange(n) % length
        lo = pos < h
        powers = np.array([pow(g, int(j), lenq) for j in range(h)], dtype=np.int64)
        w = np.exp(2j * np.pi * (powers[np.where(lo, pos, pos - h)] * (m // lenq)) / m)
        yield h, lo, w
        length *= 2


def _stage(n: int, h: int, d0, dplus, dminus) -> dict:
    """A stage's diagonals {0: d0, h: dplus, -h: dminus} (+h and -h coincide when h = n/2)."""
    st: dict = {}
    for k, d in ((0, d0), (h, dplus), (-h, dminus)):
        st[k % n] = st.get(k % n, 0) + d
    return st


def special_fft_stages(n: int) -> list[dict]:
    """The radix-2 stages of W x for W[j, k] = zeta^(g^j k), zeta = exp(2 pi i / 4n), g = -3
    mod 4n, x in bit-reversed order: W x = S_{log n} ... S_1 (bitrev x). Stage s (block length
    2^s, half h = 2^(s-1)) is the butterfly (u, v) -> (u + w v, u - w v) of positions p and
    p + h (the "special FFT" of HEAAN; Cheon et al. 2018 §4 and Han-Ki 2020 §3), so its
    diagonals are 0 and +-h."""
    return [_stage(n, h, np.where(lo, 1.0, -w), np.where(lo, w, 0.0), np.where(lo, 0.0, 1.0))
            for h, lo, w in _butterflies(n)]


def special_ifft_stages(n: int) -> list[dict]:
    """Inverses of :func:`special_fft_stages`, in the same order (S_s^-1 for s = 1..log n):
    (a, b) -> ((a + b) / 2, (a - b) / (2 w))."""
    return [_stage(n, h, np.where(lo, 0.5, -0.5 / w), np.where(lo, 0.5, 0.0),
                   np.where(lo, 0.0, 0.5 / w))
            for h, lo, w in _butterflies(n)]


def _groups(count: int, parts: int) -> list[range]:
    """``count`` stages split into ``parts`` consecutive groups (the larger ones first)."""
    parts = max(1, min(parts, count))
    sizes = [count // parts + (1 if i < count % parts else 0) for i in range(parts)]
    out, start = [], 0
    for s in sizes:
        out.append(range(start, start + s))
        start += s
    return out


def _merge(stages: list[dict], order, n: int) -> dict:
    """The product of ``stages[i]`` for i in ``order`` (the first applied first)."""
    acc = {0: np.ones(n, dtype=np.complex128)}
    for i in order:
        acc = _compose(stages[i], acc, n)
    return acc


#: A hoisted baby-step rotation's cost relative to a giant step's: circuits::kBabyCost (0.3,
#: chosen for the double-hoisted evaluation, bench/NOTES.md; 0.55 was measured single hoisted).
BABY_COST = float(os.environ.get("VEIL_BSGS_BABY_COST") or 0.3)  # the same override as C++'s


def _bsgs_split(keys, n: int, inputs: int = 1, outputs: int = 1) -> tuple[int, dict]:
    """Chooses the baby-step size n1 (a power of two) minimizing the rotation cost (babies per
    input at BABY_COST, giants per output at 1), and groups the diagonals by giant step:
    {giant step G: [(baby b, k)]} with k = G + b (signed)."""
    best: tuple[float, int, dict] | None = None
    signed = [k if k <= n // 2 else k - n for k in keys]
    n1 = 1
    while n1 <= n:
        giants: dict = {}
        for k, s in zip(keys, signed):
            g = (s // n1) * n1
            giants.setdefault(g, []).append((s - g, k))
        babies = {b for v in giants.values() for b, _ in v}
        cost = (BABY_COST * inputs * len(babies - {0})
                + outputs * len([g for g in giants if g != 0]))
        if best is None or cost < best[0]:
            best = (cost, n1, giants)
        n1 *= 2
    assert best is not None  # n >= 1: at least one candidate
    return best[1], best[2]


class _LinearLevel:
    """One plaintext-matrix level: outputs[o] = sum_i M_{o,i} inputs[i], evaluated with
    baby-step giant-step rotations, hoisted baby steps per input, one rescale per output."""

    def __init__(self, bt: Bootstrapper, mats: list[list[dict]], level: int, scale_in: float,
                 scale_out: float):
        self.bt = bt
        self.level = level
        n = bt.slots
        ctx = bt.ctx
        d = bt.block_product(level)
        self.pt_scale = scale_out * d / scale_in
        keys = sorted({k for row in mats for m in row for k in m})
        self.n1, giants = _bsgs_split(keys, n, len(mats[0]), len(mats))
        reps = ctx.slot_count // n
        self.babies: list[set] = [set() for _ in mats[0]]
        self.plan = []  # per output: {G: [(input, b, plaintext)]}
        for row in mats:
            out = {}
            for g, items in giants.items():
                terms = []
                for b, k in items:
                    for i, m in enumerate(row):
                        if k not in m:
                            continue
                        diag = np.roll(m[k], g)  # rot_{-G}(d_k)
                        pt = ctx.encoder.encode_complex(
                            np.ascontiguousarray(np.tile(diag, reps), dtype=np.complex128),
                            self.pt_scale, level, ctx.device)
                        terms.append((i, b, pt))
                        self.babies[i].add(b)
                if terms:
                    out[g] = terms
            self.plan.append(out)

    def steps(self) -> set:
        s = {b for bs in self.babies for b in bs}
        s |= {g for out in self.plan for g in out}
        return {x % self.bt.slots for x in s if x % self.bt.slots}

    def apply(self, inputs: list) -> list:
        ev, gk = self.bt.ev, self.bt.galois_keys
        rotated = []
        for i, ct in enumerate(inputs):
            bs = sorted(self.babies[i])
            rotated.append(dict(zip(bs, ev.rotate_many(ct, [self.bt.step(b) for b in bs], gk))))
        outs = []
        for plan in self.plan:
            total = None
            for g, terms in plan.items():
                acc = ev.multiply_plain_sum([rotated[i][b] for i, b, _ in terms],
                                            [pt for _, _, pt in terms])
                if g % self.bt.slots:
                    acc = ev.rotate_vector(acc, self.bt.step(g), gk)
                total = acc if total is None else ev.add(total, acc)
            assert total is not None  # every output has diagonals
            outs.append(ev.rescale_to_next(total))
        return outs


def rescale_tops(context) -> list[int]:
    """The levels where a rescale block ends, from q_0's block up (every level with SEAL's
    one-prime blocks): the levels a rescale lands on."""
    tops, acc = [], 0
    for g in context.rescale_groups:
        acc += g
        tops.append(acc - 1)
    return tops


def block_product(context, level: int) -> float:
    """The product of the primes a rescale from ``level`` divides by."""
    t = context.rescale_target(level)
    return float(math.prod(int(q) for q in context.coeff_modulus_at(level)[t + 1:]))


class Bootstrapper:
    """Bootstraps ciphertexts of a :class:`veil.CKKSContext` (see the module docstring).

    Built by ``CKKSContext.enable_bootstrapping`` (or ``veil.ckks(..., bootstrapping=True)``):
    generates the sparse secret's two switching keys, the Galois keys of every rotation the
    transforms use and the conjugation key, and encodes the transforms' plaintext matrices at
    their levels. ``key_bytes`` / ``plaintext_bytes`` report that memory.

    The chain needs ``cts_levels`` rescale blocks for CoeffToSlot and ``evalmod_depth`` for
    EvalMod at its top, and ``stc_levels`` for SlotToCoeff just above q_0's block. A ciphertext
    is bootstrapped from ``input_level`` (SlotToCoeff's top; higher ones are switched down) and
    comes back at ``output_level`` (below EvalMod) with its scale; ``levels_left`` rescales lie
    between the two. Memory at N = 2^16 (full slots): about 5 GiB of keys with 32-bit words,
    12 GiB with 64-bit words, plus 2-3 GiB of plaintext matrices (``key_bytes``,
    ``plaintext_bytes``).

    Raises:
        ValueError naming the setting when the chain is too short or the slots invalid.
    """

    def __init__(self, ctx: CKKSContext, config: BootstrapConfig = BootstrapConfig(),
                 seed: int | None = None):
        self.ctx = ctx
        self.config = config
        self.ev = ctx.evaluator
        context = ctx.context
        n_full = ctx.slot_count
        slots = n_full if config.slots is None else int(config.slots)
        if slots < 2 or slots > n_full or slots & (slots - 1):
            raise ValueError(f"slots: expected a power of two in 2..{n_full}, got {config.slots}")
        stages = slots.bit_length() - 1  # the special FFT's stages, merged into the levels
        if stages < max(config.cts_levels, config.stc_levels):
            raise ValueError(
                f"slots: {slots} slots have {stages} FFT stages, fewer than the "
                f"{max(config.cts_levels, config.stc_levels)} CoeffToSlot/SlotToCoeff levels; "
                "use more slots or fewer cts_levels/stc_levels")
        self.slots = slots
        self.N = ctx.poly_modulus_degree
        tops = self._tops = rescale_tops(context)
        need = config.depth + 1  # + q_0's block
        if len(tops) < need + 1:
            raise ValueError(
                f"coeff_modulus: bootstrapping needs {config.depth} rescale blocks above q_0's "
                f"and at least one user level (CoeffToSlot {config.cts_levels}, EvalMod "
                f"{config.evalmod_depth}, SlotToCoeff {config.stc_levels}); this chain has "
                f"{len(tops) - 1} (see veil.ckks.bootstrap_chain)")
        self.q0_level = tops[0]
        self.q0 = math.prod(int(q) for q in context.coeff_modulus_at(tops[0]))
        top_idx = len(tops) - 1
        #: Bootstrapping starts here (SlotToCoeff's top; higher inputs are switched down).
        self.input_level = tops[config.stc_levels]
        #: The level of a refreshed ciphertext: below CoeffToSlot and EvalMod.
        self.output_level = tops[top_idx - config.cts_levels - config.evalmod_depth]
        #: Rescales a refreshed ciphertext allows before it must be bootstrapped again.
        self.levels_left = top_idx - config.cts_levels - config.evalmod_depth - config.stc_levels
        self.scale = ctx.scale
        self._build_keys(seed)
        self._build_transforms(top_idx)

    # ---- levels -------------------------------------------------------------------------
    def block_product(self, level: int) -> float:
        """The product of the primes a rescale from ``level`` divides by."""
        return block_product(self.ctx.context, level)

    def step(self, k: int) -> int:
        """A rotation step of the n-slot vector as a step of the N/2 slots (signed, small)."""
        k %= self.slots
        return k if k <= self.slots // 2 else k - self.slots

    # ---- setup ----------------------------------------------------------------------------
    def _build_keys(self, seed) -> None:
        ctx, cfg = self.ctx, self.config
        context = ctx.context
        if ctx.secret_key is None:
            raise ValueError("ctx: bootstrapping keys need the secret key (build them on the client)")
        sparse = _core.KeyGenerator(context, ctx.device, None if seed is None else seed + 11,
                                    hamming_weight=cfg.hamming_weight)
        dense = _core.KeyGenerator(context, ctx.secret_key,
                                   None if seed is None else seed + 12)
        self.to_sparse = sparse.create_switching_key(ctx.secret_key, self.q0_level)
        self.to_dense = dense.create_switching_key(sparse.secret_key())
        del sparse
        self._dense_keygen = dense

    def _build_transforms(self, top_idx: int) -> None:
        cfg, n = self.config, self.slots
        tops = self._tops
        logn = int(math.log2(n))
        fft = special_fft_stages(n)
        ifft = special_ifft_stages(n)
        even = (np.arange(n) % 2 == 0).astype(np.float64)
        odd = 1.0 - even
        # CoeffToSlot: w' = bitrev-order W^-1 (E z + O conj z) * c; stages applied from the last
        # FFT stage's inverse down to the first. Constant c: values t / (q_0 (K + 1)) for EvalMod's
        # interval, 1/2 for the real/imaginary split, 1 / (N/2n) for SubSum's repetition.
        k1 = cfg.k_range + 1
        gap = (self.N // 2) // n
        c = self.scale / (self.q0 * k1) / 2.0 / gap
        cts_order = list(reversed(range(logn)))  # S_logn^-1 first
        cts_mats, level = [], tops[top_idx]
        for gi, grp in enumerate(_groups(len(cts_order), cfg.cts_levels)):
            m = _merge(ifft, [cts_order[i] for i in grp], n)
            if gi == 0:
                m = {k: v * c for k, v in m.items()}
                mats = [[_col_scale(m, even), _col_scale(m, odd)]]
            else:
                mats = [[m]]
            cts_mats.append((mats, level))
            level = self.ctx.context.rescale_target(level)
        self.evalmod_level = level
        # EvalMod works at about its top block's product (~2^60), so products keep their scale.
        self.evalmod_scale = self.block_product(tops[top_idx - cfg.cts_levels])
        self.cts = self._linear_levels(cts_mats, self.scale, self.evalmod_scale)
        # EvalMod: Chebyshev interpolant of cos(2 pi (K1 y - 1/4) / 2^r) on [-1, 1].
        r = cfg.double_angle
        f = lambda y: np.cos(2 * np.pi * (k1 * y - 0.25) / 2 ** r)
        self.cheb = _cheb.chebinterpolate(f, cfg.evalmod_degree)
        # SlotToCoeff first (at the bottom of the chain, where rotations are cheapest): the
        # input's slots z, read as a bit-reversed coefficient vector v, become the coefficients
        # w = v[br] of the plaintext: slots E (W w) + O conj(W w) = z. CoeffToSlot later puts w
        # back into bit-reversed order, w[br] = z: the output's slots are z in natural order.
        stc_mats, level = [], self.input_level
        groups = _groups(logn, cfg.stc_levels)
        for gi, grp in enumerate(groups):
            m = _merge(fft, list(grp), n)
            if gi == len(groups) - 1:
                mats = [[_row_scale(m, even)], [_row_scale(m, odd)]]
            else:
                mats = [[m]]
            stc_mats.append((mats, level))
            level = self.ctx.context.rescale_target(level)
        self.stc = self._linear_levels(stc_mats, self.scale, self.scale)
        # EvalMod's output sin(2 pi t / q_0) ~ 2 pi Delta z / q_0 is read as z by declaring its
        # scale gamma = q_0 / (2 pi Delta) times smaller (no level): its scales are chosen so
        # that it ends on Delta * gamma exactly.
        self.gamma = self.q0 / (2 * np.pi * self.scale)
        out_level, out_scale = self._evalmod_plan()
        if out_level != self.output_level:
            raise AssertionError(f"EvalMod ends at level {out_level}, not {self.output_level}")
        # Galois keys: every rotation of the transforms, SubSum's, and the conjugation.
        steps = set()
        for lt in self.cts + self.stc:
            steps |= lt.steps()
        s = n
        while s < self.N // 2:
            steps.add(s)
            s *= 2
        self.rotation_steps = sorted(self.step(x) if x < n else x for x in steps)
        keys = generate_galois_keys(
            self._dense_keygen, self.ctx._elts(self.rotation_steps, True), None,
            self.ctx.galois_key_bytes(), "bootstrapping Galois keys")
        if keys is None:  # the conjugation key is always asked for
            raise AssertionError("bootstrapping: no Galois keys were made")
        self.galois_keys: _core.GaloisKeys = keys

    def _linear_levels(self, levels, s_first: float, s_last: float) -> list:
        """Encodes a chain of plaintext-matrix levels [(mats, level)] that takes ciphertexts from
        scale ``s_first`` to ``s_last``. The intermediate scales share the precision evenly: the
        plaintexts' largest encoded magnitude (pt scale x max |entry|, whose rounding error is
        what a plaintext adds) is the same at every level, M = (s_last / s_first x prod D_i x
        prod max|d_i|)^(1/L), since pt scale_i = s_out_i D_i / s_in_i telescopes."""
        dmax = [max(float(np.abs(d).max()) for row in mats for mm in row for d in mm.values())
                for mats, _ in levels]
        dprod = [self.block_product(level) for _, level in levels]
        log_m = (math.log2(s_last / s_first) + py_sum(map(math.log2, dprod))
                 + py_sum(map(math.log2, dmax))) / len(levels)
        out, s_in = [], s_first
        for i, (mats, level) in enumerate(levels):
            last = i == len(levels) - 1
            s_out = s_last if last else s_in * 2.0 ** log_m / (dprod[i] * dmax[i])
            out.append(_LinearLevel(self, mats, level, s_in, s_out))
            s_in = s_out
        return out

    # ---- EvalMod ----------------------------------------------------------------------------
    def _evalmod_plan(self):
        """(level, scale) of EvalMod's output, computed with the same rules as the evaluation."""
        ops = _ScaleOnly(self)
        out = self._evalmod(ops, ops.fresh(self.evalmod_level, self.evalmod_scale))
        return out.level, out.scale

    def _evalmod(self, ops, x):
        """cos(2 pi (K1 x - 1/4)) via the interpolant and r double angles: sin(2 pi K1 x), at
        scale Delta * gamma. The double angles square the scale (S -> S^2 / D), so the
        interpolant's target scale is found from the end backwards, S = sqrt(S' D)."""
        cheb = _ChebEval(ops, x, self.cheb, few_baby_steps=True)
        level = cheb.output_level()
        levels = []
        for _ in range(self.config.double_angle):
            levels.append(level)
            level = ops.below(level)
        scale = self.scale * self.gamma
        for lv in reversed(levels):
            scale = math.sqrt(scale * self.block_product(lv))
        y = cheb.result(scale)
        for _ in range(self.config.double_angle):
            y2 = ops.square(y)
            y = ops.add_const(ops.add(y2, y2), -1.0)
        return y

    # ---- bootstrapping ------------------------------------------------------------------------
    def bootstrap(self, ct: _core.Ciphertext, timings: dict | None = None) -> _core.Ciphertext:
        """Refreshes a raw ciphertext (``_core.Ciphertext``, size 2, any level, a scale within a
        factor 2^4 of the context's) to ``output_level``, keeping its scale.
        ``timings`` (a dict) receives seconds per phase (synchronizing the device after each:
        for profiling only)."""
        ev = self.ev
        mark = _Phases(self.ctx.device, timings)
        if ct.size != 2:
            raise ValueError(f"ct: expected size 2 (relinearize first), got {ct.size}")
        s_in = ct.scale
        if abs(math.log2(s_in / self.scale)) > 4:
            raise ValueError(f"ct: expected a scale within 2^4 of the context's 2^"
                             f"{math.log2(self.scale):.2f} (q_0 / scale sets EvalMod's message "
                             f"ratio), got 2^{math.log2(s_in):.2f}")
        # The pipeline runs as if the scale were Delta: the plaintext t (message m = t / s_in)
        # comes back as t, which the output's scale s_in reads as m again.
        ct = ct.__copy__()
        ct.scale = self.scale
        if ct.level < self.input_level:
            raise ValueError(f"ct: bootstrapping starts with SlotToCoeff at level "
                             f"{self.input_level}; the ciphertext is at level {ct.level} (keep "
                             f"{self.config.stc_levels} levels above q_0's block for it)")
        if ct.level > self.input_level:
            ct = ev.mod_switch_to(ct, self.input_level)
        # SlotToCoeff: the slots become the plaintext's coefficients (see _build_transforms)
        for lt in self.stc[:-1]:
            ct = lt.apply([ct])[0]
        a, b = self.stc[-1].apply([ct])
        ct = ev.add(a, ev.conjugate(b, self.galois_keys))
        ct.scale = self.scale  # it is, up to the double rounding of the plaintext scales
        mark("slot_to_coeff")
        ct = ev.switch_key(ct, self.to_sparse)
        ct = ev.mod_raise(ct)
        ct = ev.switch_key(ct, self.to_dense)
        s = self.slots
        while s < self.N // 2:  # SubSum: project onto the subring of the n slots
            ct = ev.add(ct, ev.rotate_vector(ct, s, self.galois_keys))
            s *= 2
        mark("modraise+subsum")
        # CoeffToSlot
        conj = ev.conjugate(ct, self.galois_keys)
        cur = self.cts[0].apply([ct, conj])[0]
        for lt in self.cts[1:]:
            cur = lt.apply([cur])[0]
        mark("coeff_to_slot")
        # real and imaginary parts: re = w + conj w; im' = X^(N/2) (w - conj w) = -s_j Im
        conj = ev.conjugate(cur, self.galois_keys)
        re = ev.add(cur, conj)
        im = ev.multiply_monomial(ev.sub(cur, conj), self.N // 2)
        ops = _CipherOps(self)
        re = self._evalmod(ops, ops.wrap(re)).ct
        im = self._evalmod(ops, ops.wrap(im)).ct
        # f(Re) + i f(Im) = f(re) - X^(N/2) f(im'); its scale Delta gamma read as Delta, then as
        # the input's scale (the pipeline ran as if it were Delta)
        out = ev.sub(re, ev.multiply_monomial(im, self.N // 2))
        out.scale = s_in
        mark("eval_mod")
        return out

    # ---- reporting ----------------------------------------------------------------------------
    def key_bytes(self) -> int:
        """Bytes of the bootstrapping keys (Galois keys and the two switching keys)."""
        gk = self.galois_keys
        per = self.to_dense.nbytes
        return per * (len(gk.galois_elts) + 1) + self.to_sparse.nbytes

    def plaintext_bytes(self) -> int:
        """Bytes of the encoded transform matrices."""
        total = 0
        wb = self.ctx.word_bits // 8
        for lt in self.cts + self.stc:
            count = sum(len(t) for out in lt.plan for t in out.values())
            total += count * (lt.level + 1) * self.N * wb
        return total

    def __repr__(self) -> str:
        """Its shape (N, slots, levels, rotation keys, device): no key material."""
        return (f"veil.Bootstrapper(N={self.N}, slots={self.slots}, "
                f"input_level={self.input_level}, output_level={self.output_level}, "
                f"levels_left={self.levels_left}, "
                f"rotation_keys={len(self.galois_keys.galois_elts)}, "
                f"device={self.ctx.device!r})")


class _Phases:
    """Accumulates seconds per phase into a dict (no-op without one)."""

    def __init__(self, device: str, out: dict | None):
        self.device, self.out = device, out
        self.t = time.perf_counter() if out is not None else 0.0

    def __call__(self, name: str) -> None:
        if self.out is None:
            return
        _core.synchronize(self.device)
        now = time.perf_counter()
        self.out[name] = self.out.get(name, 0.0) + (now - self.t)
        self.t = now
