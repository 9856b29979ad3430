"""Parameters from needs: N and the coeff_modulus chain chosen from the multiplicative depth,
precision and slots asked for (as OpenFHE's ``SetMultiplicativeDepth``, ``SetScalingModSize`` and
``SetBatchSize``), the explanation ``ctx.describe()`` gives, and the key-memory warning and cap.

Security comes from the HomomorphicEncryption.org standard's bounds on log2(QP) for a ternary
secret, the table the context itself checks (``veil.CoeffModulus.max_bit_count``). The noise
models below are measured on Veil (the constants' comments give the measurements) with a margin;
``tests/python/test_params_from_needs.py`` checks the chosen parameters against numpy and
plaintext arithmetic.

Depth is the multiplicative depth of the circuit: the number of multiplications on its longest
path. ``x ** (2 ** depth)``, a balanced product tree of ``2 ** depth`` ciphertexts and a chain
``x_0 * x_1 * ... * x_depth`` all have depth ``depth``.
"""

from __future__ import annotations

import math
import os
import sys
import types
import warnings
from dataclasses import dataclass, field

from . import _check, _core
from ._progress import human_bytes

#: The ring degrees Veil supports, smallest first (the HE standard's table covers each).
DEGREES = tuple(1 << k for k in range(10, 18))
#: Largest prime of a chosen chain (bits): primes fit 64-bit words with room for lazy reduction.
MAX_PRIME_BITS = 60

# ---- CKKS ------------------------------------------------------------------------------------
#: ``veil.ckks(depth=...)``'s default precision: bits after the binary point (error <= 2^-20).
CKKS_DEFAULT_PRECISION = 20
#: Bits of headroom of q_0 over the scale (results below 2^(headroom - 1) in magnitude decrypt);
#: shrunk down to CKKS_MIN_HEADROOM when the scale is large, since primes stop at 60 bits.
CKKS_HEADROOM = 20
CKKS_MIN_HEADROOM = 10


def ckks_noise_bits(n: int) -> int:
    """Bits of precision CKKS loses to noise at degree ``n``: log2(N) + 3. Measured (largest of 3
    seeds, all N/2 slots, values uniform in [-1, 1], scale 2^40, fresh and after products):
    11.6 bits at N = 2048, 12.6 at 4096, 13.4 at 8192, 14.6 at 16384, 16.0 at 32768, 16.9 at
    65536, 18.0 at 131072, so the model keeps 1.5 to 2.5 bits of margin."""
    return n.bit_length() - 1 + 3


def ckks_chain_bits(depth: int, scale_bits: int) -> list[int]:
    """Bit sizes of the chain for ``depth`` rescales at a ``scale_bits`` scale: q_0 (the scale
    plus the headroom, at most 60 bits), ``depth`` scale-sized primes, and one special prime P
    as large as q_0 (P must dominate every key-switching digit)."""
    q0 = min(MAX_PRIME_BITS, scale_bits + CKKS_HEADROOM)
    return [q0] + [scale_bits] * depth + [q0]


def ckks_max_scale_bits() -> int:
    """The largest scale a chosen chain can use: q_0 keeps CKKS_MIN_HEADROOM bits above it."""
    return MAX_PRIME_BITS - CKKS_MIN_HEADROOM


# ---- BFV and BGV -----------------------------------------------------------------------------
#: ``veil.bfv/bgv(depth=...)``'s default plain modulus size: 17 bits (like 65537).
INTEGER_DEFAULT_PLAIN_BITS = 17
#: Noise of a fresh ciphertext above t (bits): log2 Q - log2 t - budget measured 7.0 to 8.2 for
#: N = 4096..16384 and t of 17..45 bits.
FRESH_NOISE_BITS = 10
#: Noise budget the chosen chain leaves after ``depth`` multiplications (bits), for additions and
#: multiplications by small constants.
BUDGET_LEFT_BITS = 5


def integer_mult_bits(n: int, plain_bits: int) -> int:
    """Noise budget one BFV multiplication (with relinearization) consumes: log2 t + log2 N + 1
    bits. Measured: 28-30 bits for 17-bit t at N = 4096..16384, 41-44 for 30-bit t, 56-59 for
    45-bit t (log2 t + log2 N - 1 on average)."""
    return plain_bits + (n.bit_length() - 1) + 1


def integer_noise_bits(scheme: str, n: int, depth: int, plain_bits: int) -> int:
    """Noise budget a depth-``depth`` product tree consumes. BFV: ``depth`` multiplications'
    worth (:func:`integer_mult_bits`). BGV: Veil's operators switch no modulus, so each level of
    the tree doubles the noise in bits: (2^depth - 1) multiplications' worth (measured: 29, 57,
    117 bits for levels 1, 2, 3 with 17-bit t at N = 16384)."""
    per = integer_mult_bits(n, plain_bits)
    return per * (depth if scheme == "bfv" else (1 << depth) - 1)


def integer_q_bits(scheme: str, n: int, depth: int, plain_bits: int) -> int:
    """Bits of Q (without the special prime) a depth-``depth`` circuit needs: t, the fresh noise,
    the multiplications' noise and BUDGET_LEFT_BITS left over."""
    return (plain_bits + FRESH_NOISE_BITS + integer_noise_bits(scheme, n, depth, plain_bits)
            + BUDGET_LEFT_BITS)


def integer_depth(scheme: str, n: int, q_bits: int, plain_bits: int) -> int:
    """The depth the noise model gives Q of ``q_bits`` bits (sum of its primes' bit counts):
    the largest d with :func:`integer_q_bits` <= q_bits; -1 when not even fresh ciphertexts fit."""
    d = -1
    while integer_q_bits(scheme, n, d + 1, plain_bits) <= q_bits and d < 10000:
        d += 1
    return d


def integer_chain(n: int, q_bits: int, t: int) -> list[int]:
    """Primes of Q holding ``q_bits`` bits, then one special prime: as few primes as 60-bit
    words allow, of equal size, none equal to ``t`` (plain and ciphertext moduli must be
    coprime), P as large as the Q primes."""
    k = max(1, -(-q_bits // MAX_PRIME_BITS))
    size = -(-q_bits // k)
    pool = [int(q) for q in _core.CoeffModulus.create(n, [size] * (k + 2)) if int(q) != t]
    pool.sort(reverse=True)
    return pool[1:k + 1] + pool[:1]  # the largest prime as P


# ---- shared ------------------------------------------------------------------------------------
def max_log_qp(n: int, security: int | None) -> int | None:
    """The HE standard's bound on log2(QP) at degree ``n`` (None: no security check)."""
    return None if security is None else int(_core.CoeffModulus.max_bit_count(n, security))


def _bound_note(n: int, security: int | None) -> str:
    """`` <= B allowed at N = n for S-bit security`` (empty without a security level)."""
    bound = max_log_qp(n, security)
    return "" if bound is None else f" <= {bound} allowed at N = {n} for {security}-bit security"


def log_qp(primes) -> int:
    """Bits of the product of ``primes`` (how the context counts log2(QP))."""
    return math.prod(int(q) for q in primes).bit_length()


def compact_bits(bits: list[int]) -> str:
    """Bit sizes with runs folded: [56, 37, 37, 37, 56] -> '56 + 3 x 37 + 56'."""
    parts: list[str] = []
    i = 0
    while i < len(bits):
        j = i
        while j < len(bits) and bits[j] == bits[i]:
            j += 1
        parts.append(str(bits[i]) if j - i == 1 else f"{j - i} x {bits[i]}")
        i = j
    return " + ".join(parts)


@dataclass
class Choice:
    """Parameters chosen from needs: degree ``n``, the chain (primes, special prime last), the
    plain modulus (BFV/BGV) or scale (CKKS), what was asked and why this N."""

    n: int
    coeff_modulus: list[int]
    requested: dict
    why: str
    plain_modulus: int | None = None
    scale: float | None = None
    extras: dict = field(default_factory=dict)


class _Fit:
    """One candidate N: its chain, or why it was refused (``kind``: "bound" for the security
    bound or missing primes, "slots" for too few slots, "fatal" for what no larger N cures)."""

    def __init__(self, n, primes=None, reason="", kind="bound", extra=None):
        self.n, self.primes, self.reason, self.kind = n, primes, reason, kind
        self.extra = extra or {}


def _bound_reason(n: int, need: int, security: int | None) -> str:
    bound = max_log_qp(n, security)
    shown = str(need) if need < 10**6 else f"{need:.1e}"
    return f"log QP {shown} > {bound} allowed at N = {n} for {security}-bit security"


def _search(fit, depth: int, n: int | None, security: int | None, what: str, most_at,
            remedy: str):
    """The smallest degree whose ``fit(n, depth)`` succeeds (only ``n`` when given), and the
    refused smaller ones. Raises ValueError naming the argument that cannot be met, with the
    maximum depth where the bound is what failed (``most_at(n)``: the largest depth at ``n``)."""
    if n is None and security is None:
        raise ValueError(
            "security: depth= chooses poly_modulus_degree from the security table, so it needs "
            "security=128, 192 or 256; with security=None pass poly_modulus_degree too")
    degrees = DEGREES if n is None else (n,)
    refused: list[_Fit] = []
    for deg in degrees:
        f = fit(deg, depth)
        if f.primes is not None:
            return f, refused
        if f.kind == "fatal":
            raise ValueError(f.reason)
        refused.append(f)
    last = refused[-1]
    if last.kind != "bound":
        raise ValueError(last.reason)
    if n is not None:
        most = most_at(n)
        hint = ""
        if security is not None:
            larger = [d for d in DEGREES if d > n and fit(d, depth).primes is not None]
            if larger:
                hint = (f"; N = {larger[0]} fits: omit poly_modulus_degree to choose it, or "
                        f"pass poly_modulus_degree={larger[0]}")
        cap = f"at most depth {most} there" if most >= 0 else "no depth fits there"
        raise ValueError(f"depth: {what} does not fit poly_modulus_degree {n}: {last.reason} "
                         f"({cap}){hint}")
    top = DEGREES[-1]
    most = most_at(top)
    raise ValueError(
        f"depth: {what} fits no poly_modulus_degree at {security}-bit security: the largest, "
        f"N = {top}, allows log QP <= {max_log_qp(top, security)} bits, which holds at most "
        f"depth {most} ({last.reason}); {remedy}")


def _most(fit, n: int, start: int) -> int:
    """The largest depth that ``fit`` accepts at ``n`` (searching down from ``start``)."""
    d = start
    while d >= 0 and fit(n, d).primes is None:
        d -= 1
    return d


def _why(f: _Fit, refused: list[_Fit], given_n: bool) -> str:
    if given_n:
        return f"N = {f.n} was given (poly_modulus_degree); the chain was sized for it"
    if not refused:
        return f"N = {f.n} is the smallest degree Veil supports"
    smaller = "; ".join(r.reason for r in refused[-1:])
    return f"N = {f.n} is the smallest that fits: {smaller}"


def choose_ckks(depth, precision, slots, security: int | None, n: int | None,
                scale: float | None) -> Choice:
    """N and a chain [q_0, depth x scale primes, P] for ``depth`` rescaled multiplications with
    ``precision`` bits after the binary point (values of magnitude <= 1) and at least ``slots``
    slots (N/2 >= slots), the smallest N within the ``security`` bound. ``scale`` (given): its
    bits size the scale primes instead of ``precision``; ``n`` (given): only that degree.

    Raises:
        ValueError naming depth, precision, slots or scale when no degree fits (with the
        maximum depth where the security bound is what fails).
    """
    depth = _check.integer(depth, "depth", 0, 1000)
    asked_precision = precision is not None
    precision = (CKKS_DEFAULT_PRECISION if precision is None
                 else _check.integer(precision, "precision", 1, MAX_PRIME_BITS))
    slots = _check.optional_integer(slots, "slots", 1, DEGREES[-1] // 2)
    scale_bits = None
    if scale is not None:
        scale_bits = round(math.log2(scale))
        if abs(math.log2(scale) - scale_bits) > 1e-9:
            raise ValueError(f"scale: with depth= the scale must be a power of two (its bits "
                             f"size the chain's primes), got 2^{math.log2(scale):.3f}")

    def bits_for(deg: int) -> tuple[int, str]:
        larger = "" if n is not None else " (fewer at larger N"
        if larger and deg > DEGREES[0]:
            larger += f"; smaller N do not hold depth={depth}"
        larger += ")" if larger else ""
        if scale_bits is not None:
            got = scale_bits - ckks_noise_bits(deg)
            if asked_precision and got < precision:
                return -1, (f"precision: scale=2^{scale_bits} gives {scale_bits} - log2(N) - 3 = "
                            f"{got} bits at N = {deg}{larger}, below precision={precision}; omit "
                            "scale to size it from precision, or pass a scale of at least "
                            "2^(precision + log2(N) + 3)")
            return scale_bits, ""
        s = precision + ckks_noise_bits(deg)
        if s > ckks_max_scale_bits():
            return -1, (f"precision: at most {ckks_max_scale_bits() - ckks_noise_bits(deg)} bits "
                        f"at N = {deg}{larger}: the scale, precision + log2(N) + 3 bits, must "
                        f"stay <= {ckks_max_scale_bits()} so that q_0 keeps {CKKS_MIN_HEADROOM} "
                        f"bits in a {MAX_PRIME_BITS}-bit prime; got precision={precision}")
        return s, ""

    def fit(deg: int, d: int) -> _Fit:
        if slots is not None and deg // 2 < slots:
            return _Fit(deg, reason=(f"slots: {slots} slots need poly_modulus_degree >= "
                                     f"{2 * slots}, got {deg} ({deg // 2} slots)"), kind="slots")
        s, problem = bits_for(deg)
        if problem:
            return _Fit(deg, reason=problem, kind="fatal")
        if s > ckks_max_scale_bits() or s < 2:
            return _Fit(deg, reason=(f"scale: with depth= it must be 2^2..2^"
                                     f"{ckks_max_scale_bits()} (q_0 keeps {CKKS_MIN_HEADROOM} bits "
                                     f"above it in a {MAX_PRIME_BITS}-bit prime), got 2^{s}"),
                        kind="fatal")
        bits = ckks_chain_bits(d, s)
        bound = max_log_qp(deg, security)
        if bound is not None and d > 100 and sum(bits) - len(bits) >= bound:
            # Far past the bound: skip making the primes.
            return _Fit(deg, reason=_bound_reason(deg, sum(bits), security))
        try:
            primes = [int(q) for q in _core.CoeffModulus.create(deg, bits)]
        except ValueError as e:
            return _Fit(deg, reason=f"N = {deg}: {e}")
        need = log_qp(primes)
        if bound is not None and need > bound:
            return _Fit(deg, reason=_bound_reason(deg, need, security))
        return _Fit(deg, primes, extra={"scale_bits": s, "bits": bits})

    what = (f"depth={depth} at precision {precision}" if scale_bits is None
            else f"depth={depth} at scale 2^{scale_bits}")
    f, refused = _search(fit, depth, n, security, what,
                         lambda deg: _most(fit, deg, depth - 1),
                         "use a smaller depth or precision, or bootstrapping (bootstrapping=True "
                         "refreshes ciphertexts instead of sizing the chain for the whole circuit)")
    s = f.extra["scale_bits"]
    bits = f.extra["bits"]
    requested = {"depth": depth, "precision": precision if scale_bits is None or asked_precision
                 else None, "slots": slots}
    why = (f"{_why(f, refused, n is not None)}. Chain q_0 {bits[0]} + {depth} x {s} (scale "
           f"2^{s} = precision {s - ckks_noise_bits(f.n)} + log2(N) + 3 bits of noise) + P "
           f"{bits[-1]} bits: log QP {log_qp(f.primes)}")
    why += _bound_note(f.n, security)
    if slots is not None:
        why += f"; {f.n // 2} slots >= slots={slots}"
    return Choice(f.n, f.primes, requested, why, scale=2.0 ** s)


def choose_integer(scheme: str, depth, plain_bits: int | None, security: int | None,
                   n: int | None, plain_modulus: int | None) -> Choice:
    """N, a chain and a batching plain modulus (the largest prime below 2^plain_bits that is
    1 mod 2N, unless ``plain_modulus`` is given) for a depth-``depth`` product tree (see the
    module docstring) that still decrypts, with BUDGET_LEFT_BITS of noise budget left: the
    smallest N within the ``security`` bound (only ``n`` when given).

    Raises:
        ValueError naming depth or plain_bits when no degree fits.
    """
    depth = _check.integer(depth, "depth", 0, 1000)
    if plain_modulus is not None:
        tb0 = int(plain_modulus).bit_length()
    else:
        tb0 = INTEGER_DEFAULT_PLAIN_BITS if plain_bits is None else plain_bits

    def plain(deg: int) -> tuple[int, int] | None:
        """(t, its bits) at ``deg``: the given t, the plain_bits one, or by default the smallest
        size >= 17 bits that has a batching prime at this N (65537 is not 1 mod 2N past 2^15)."""
        if plain_modulus is not None:
            return int(plain_modulus), tb0
        for b in ([tb0] if plain_bits is not None else range(tb0, MAX_PRIME_BITS + 1)):
            try:
                return int(_core.PlainModulus.batching(deg, b)), b
            except ValueError:
                continue
        return None

    def fit(deg: int, d: int) -> _Fit:
        got = plain(deg)
        if got is None:
            return _Fit(deg, reason=(
                f"plain_bits: no {tb0}-bit prime is 1 mod 2N = {2 * deg} (batching needs one; "
                f"use plain_bits >= {(2 * deg).bit_length() + 1} or poly_modulus_degree "
                f"< {deg})"), kind="fatal")
        t, tb = got
        q_bits = integer_q_bits(scheme, deg, d, tb)
        bound = max_log_qp(deg, security)
        k = max(1, -(-q_bits // MAX_PRIME_BITS))
        size = -(-q_bits // k)
        if bound is not None and k > 100 and (k + 1) * (size - 1) + 1 > bound:
            # Far past the bound (a deep BGV tree): skip making the primes.
            return _Fit(deg, reason=_bound_reason(deg, (k + 1) * size, security))
        try:
            primes = integer_chain(deg, q_bits, t)
        except ValueError as e:
            return _Fit(deg, reason=f"N = {deg}: {e}")
        need = log_qp(primes)
        if bound is not None and need > bound:
            return _Fit(deg, reason=_bound_reason(deg, need, security))
        return _Fit(deg, primes, extra={"t": t, "tb": tb, "q_bits": q_bits})

    what = f"depth={depth} with a {tb0}-bit plain modulus"
    if scheme == "bgv":
        what += " (BGV's noise doubles in bits at each level of a product tree)"
    f, refused = _search(fit, depth, n, security, what,
                         lambda deg: _most(fit, deg, min(depth - 1, 200)),
                         "use a smaller depth or plain_bits" + (
                             ", or BFV (whose noise grows by a constant number of bits per "
                             "multiplication)" if scheme == "bgv" else ""))
    t, tb = f.extra["t"], f.extra["tb"]
    q = f.primes[:-1]
    growth = (f"{depth} x {integer_mult_bits(f.n, tb)}" if scheme == "bfv"
              else f"(2^{depth} - 1) x {integer_mult_bits(f.n, tb)}")
    why = (f"{_why(f, refused, n is not None)}. Q: {sum(int(x).bit_length() for x in q)} bits "
           f">= t {tb} + fresh noise {FRESH_NOISE_BITS} + {growth} (log2 t + log2 N + 1 per "
           f"multiplication) + {BUDGET_LEFT_BITS} left; with P log QP {log_qp(f.primes)}")
    why += _bound_note(f.n, security)
    requested = {"depth": depth, "plain_bits": tb}
    return Choice(f.n, f.primes, requested, why, plain_modulus=t)


# ---- checks of explicit parameters against depth= ---------------------------------------------
def check_ckks_given(depth, precision, slots, n: int, levels: int, scale: float) -> dict:
    """With an explicit coeff_modulus: ValueError unless its ``levels`` hold ``depth``, the
    ``scale`` gives ``precision`` at degree ``n`` and N/2 >= ``slots``. Returns the request."""
    depth = _check.optional_integer(depth, "depth", 0, 1000)
    precision = _check.optional_integer(precision, "precision", 1, MAX_PRIME_BITS)
    slots = _check.optional_integer(slots, "slots", 1, DEGREES[-1] // 2)
    if depth is not None and levels < depth:
        raise ValueError(f"depth: {depth} multiplications need {depth} levels, but the given "
                         f"coeff_modulus has {levels}; omit coeff_modulus to have one chosen, or "
                         "add primes")
    got = math.log2(scale) - ckks_noise_bits(n)
    if precision is not None and got < precision:
        raise ValueError(f"precision: {precision} bits need a scale of at least "
                         f"2^{precision + ckks_noise_bits(n)} at N = {n} (log2(N) + 3 bits of "
                         f"noise), got 2^{math.log2(scale):.1f} (about {got:.0f} bits)")
    if slots is not None and n // 2 < slots:
        raise ValueError(f"slots: {slots} slots need N >= {2 * slots}, got poly_modulus_degree "
                         f"{n} ({n // 2} slots)")
    return {"depth": depth, "precision": precision, "slots": slots}


def check_integer_given(scheme: str, depth, n: int, q_primes, t: int) -> dict:
    """With an explicit coeff_modulus: ValueError unless the noise model gives its Q (the
    non-special ``q_primes``) ``depth`` with plain modulus ``t``. Returns the request."""
    depth = _check.integer(depth, "depth", 0, 1000)
    q_bits = sum(int(q).bit_length() for q in q_primes)
    tb = int(t).bit_length()
    have = integer_depth(scheme, n, q_bits, tb)
    if have < depth:
        raise ValueError(
            f"depth: {depth} multiplications need Q of {integer_q_bits(scheme, n, depth, tb)} "
            f"bits with a {tb}-bit plain modulus at N = {n}, but the given coeff_modulus has "
            f"{q_bits} bits of Q (enough for depth {max(have, 0)}); omit coeff_modulus to have "
            "one chosen")
    return {"depth": depth, "plain_bits": tb}


def plain_for_bits(n: int, plain_bits) -> int:
    """The batching plain modulus of ``plain_bits`` bits at degree ``n`` (ValueError naming
    plain_bits when there is none)."""
    try:
        return int(_core.PlainModulus.batching(n, plain_bits))
    except ValueError:
        raise ValueError(f"plain_bits: no {plain_bits}-bit prime is 1 mod 2N = {2 * n} at "
                         f"poly_modulus_degree {n} (batching needs one; use plain_bits >= "
                         f"{(2 * n).bit_length() + 1})") from None


# ---- describe() ----------------------------------------------------------------------------
class Description(dict):
    """``ctx.describe()``: a dict (JSON-ready, as before) whose ``str()`` is a readable summary
    (``print(ctx.describe())``); the ``why`` entry explains the choice of N and the chain."""

    def __str__(self) -> str:
        d = self
        scheme = str(d.get("scheme", "")).upper()
        sec = d.get("security")
        head = (f"{scheme}, N = {d['poly_modulus_degree']} ({d.get('slots')} slots), "
                + (f"{sec}-bit security" if sec else "no security check"))
        bits = list(d.get("coeff_modulus_bits", []))
        sp = int(d.get("special_primes", 0))
        q, p = bits[:len(bits) - sp], bits[len(bits) - sp:]
        bound = d.get("max_log2_qp")
        chain = (f"coeff_modulus: {compact_bits(q)} bits"
                 + (f" + special {compact_bits(p)}" if p else "")
                 + f"; log QP {d.get('log2_qp')}"
                 + (f" of {bound} allowed" if bound is not None else ""))
        lines = [head, chain]
        if d.get("scheme") == "ckks":
            lines.append(f"depth {d.get('depth')} (multiplications, one level each), scale "
                         f"2^{d.get('scale_bits'):g}, precision about {d.get('precision')} bits "
                         "for values of magnitude <= 1")
        else:
            lines.append(f"plain_modulus {d.get('plain_modulus')} ({int(d.get('plain_modulus', 0)).bit_length()} "
                         f"bits); depth {d.get('depth')} (a product tree of that many levels "
                         "decrypts, by Veil's noise model)")
        kb = d.get("switching_key_bytes")
        if kb:
            lines.append(f"keys: each relinearization or Galois key takes {human_bytes(kb)}")
        if d.get("requested"):
            asked = ", ".join(f"{k}={v}" for k, v in d["requested"].items() if v is not None)
            lines.append(f"asked for: {asked}")
        lines.append(f"why: {d.get('why')}")
        return "\n".join(lines)


def why_given(scheme: str, n: int, log2_qp: int, bound: int | None, security: int | None) -> str:
    """The explanation of parameters that were given (not chosen from needs)."""
    where = (f"log QP {log2_qp} <= {bound} allowed at N = {n} for {security}-bit security"
             if bound is not None else f"log QP {log2_qp}, no security check (security=None)")
    smaller = ""
    if bound is not None and n > DEGREES[0]:
        half = max_log_qp(n // 2, security)
        if half is not None and log2_qp > half:
            smaller = f" (above the {half} allowed at N = {n // 2})"
    return (f"N = {n} and the chain were given or defaulted, not chosen from needs (pass "
            f"depth= to choose them): {where}{smaller}")


# ---- key memory ----------------------------------------------------------------------------
#: Key memory (bytes, per context) above which creating keys warns (:class:`KeyMemoryWarning`):
#: Galois keys crossing it in total, or a relinearization key larger than it. 1 GiB.
KEY_WARN_BYTES = 1 << 30


class KeyMemoryWarning(UserWarning):
    """Keys about to be created take more than :data:`KEY_WARN_BYTES`: a context's Galois keys
    cross it, or its relinearization key alone is larger. A UserWarning (Python hides
    ResourceWarning by default); silence it with
    ``warnings.simplefilter("ignore", veil.KeyMemoryWarning)``."""


def _warn_outside(message: str, category: type[Warning]) -> None:
    """warnings.warn attributed to the first caller outside the veil package."""
    pkg = os.path.dirname(os.path.abspath(__file__)) + os.sep
    frame: types.FrameType | None = sys._getframe(1)
    level = 2
    while frame is not None and os.path.abspath(frame.f_code.co_filename).startswith(pkg):
        frame = frame.f_back
        level += 1
    warnings.warn(message, category, stacklevel=level)


def check_key_memory(count: int, key_bytes: int, galois_held: int, relin_held: int,
                     max_key_bytes: int | None, what: str = "Galois keys") -> None:
    """Before creating ``count`` switching keys of ``key_bytes`` each (``what``: "Galois keys"
    or "relinearization key"): MemoryError when the context's relinearization and Galois keys
    would exceed ``max_key_bytes``; a :class:`KeyMemoryWarning` when Galois keys would cross
    :data:`KEY_WARN_BYTES` or the relinearization key is larger than it."""
    if count <= 0:
        return
    new = count * key_bytes
    total = galois_held + relin_held + new
    if max_key_bytes is not None and total > max_key_bytes:
        raise MemoryError(
            f"max_key_bytes: the {count} {what} about to be created ({count} x "
            f"{human_bytes(key_bytes)} = {new} bytes) would bring this context's switching keys "
            f"to {total} bytes ({human_bytes(total)}: relinearization {human_bytes(relin_held)}, "
            f"Galois {human_bytes(galois_held)} held), above max_key_bytes = {max_key_bytes}; "
            "raise max_key_bytes, "
            + ("rotate by fewer distinct steps (galois_steps='power_of_two' composes any "
               "rotation from 2 log2(N) keys)" if what == "Galois keys" else
               "pass relin_keys=False (no ciphertext-ciphertext multiplications)")
            + ", or use a smaller poly_modulus_degree or chain (a key has (primes of Q) x "
            "(all primes) x 2N words with one special prime)")
    if what == "Galois keys":
        crossed = galois_held <= KEY_WARN_BYTES < galois_held + new
        held = f"brings this context's Galois keys to {human_bytes(galois_held + new)}"
    else:
        crossed = new > KEY_WARN_BYTES
        held = "takes that much device memory"
    if crossed:
        _warn_outside(
            f"creating {count} {what} of {human_bytes(key_bytes)} each {held}, above "
            f"{human_bytes(KEY_WARN_BYTES)}; cap key memory with "
            "max_key_bytes=..., or rotate by fewer distinct steps", KeyMemoryWarning)


__all__ = [
    "KEY_WARN_BYTES",
    "Choice",
    "Description",
    "KeyMemoryWarning",
    "check_key_memory",
    "choose_ckks",
    "choose_integer",
]
