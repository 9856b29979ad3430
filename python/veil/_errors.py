"""Errors that say what to do: the core's messages told in the user's terms.

The C++ core names its own arguments (``encrypted1``, ``encrypted2``, ``plain``) and knows
neither the Python operation that called it nor the context's mode (``auto_rescale``). The
pythonic operations are wrapped in :func:`user_operation`: when the outermost one (``x * y``,
``x.evaluate(tanh)``, ``ctx.decrypt(x)``) fails with one of the core's ValueErrors or TypeErrors,
the error is raised again with a message that

* names the user's operation and operands (``x``, ``y``; ``c`` for a plaintext operand), never
  the core's argument names;
* for running out of levels (CKKS, BGV) or noise budget (BFV, BGV), raises :class:`DepthError`
  (a ValueError), giving the level of the user's input (not of an internal step), how many more
  levels the operation needed, the depth the computation needs, and which parameter gives it:
  ``depth=`` where the context factory takes it, a larger ``poly_modulus_degree`` (with the
  number of levels its default chain has), a longer ``coeff_modulus``, or bootstrapping;
* gives only advice that holds in the context's mode (no "rescale first" with
  ``auto_rescale=True``, where ``rescale()`` raises).

Errors the pythonic layer raises itself (``values: ...``, ``other: ...``) already name the
argument and pass through unchanged, as does anything not recognised here.
"""

from __future__ import annotations

import contextvars
import functools
import inspect
import math
import re
import sys
from collections.abc import Callable
from typing import Any, TypeVar

_F = TypeVar("_F", bound=Callable[..., Any])

#: True while a user-level operation runs: the operations it calls (``x ** 4`` multiplies,
#: ``x.dot(y)`` multiplies and rotates) leave the translation to it.
_ACTIVE: contextvars.ContextVar[bool] = contextvars.ContextVar("veil_user_operation",
                                                               default=False)


class DepthError(ValueError):
    """Out of depth: the operation needs more levels (CKKS, BGV) or noise budget (BFV, BGV)
    than its ciphertext has left. A ValueError, so ``except ValueError`` catches it too.

    Attributes:
        operation: the operation as the user wrote it, e.g. ``"x * y"`` or
            ``"x.evaluate(tanh)"``.
        level: the level of the user's input (the lowest of its ciphertext operands).
        more_levels: how many more levels the operation needed at least (None where the
            parameters cannot tell: a BFV ciphertext whose noise budget is exhausted).
        depth: the number of levels the computation needs from a fresh ciphertext (None where
            unknown); ``veil.ckks(depth=...)`` takes it.
    """

    def __init__(self, message: str, operation: str, level: int | None = None,
                 more_levels: int | None = None, depth: int | None = None) -> None:
        super().__init__(message)
        self.operation = operation
        self.level = level
        self.more_levels = more_levels
        self.depth = depth


# ---- the wrapper -------------------------------------------------------------------------------


def user_operation(name: str | Callable[..., str],
                   need: Callable[..., int | None] | None = None) -> Callable[[_F], _F]:
    """Decorates a pythonic operation (a ciphertext method, or a context method whose first
    argument is the ciphertext): a ValueError or TypeError from the core, raised while it runs,
    is raised again in the user's terms (module docstring).

    ``name``: the operation as the user writes it, with ``x`` for the ciphertext and ``{y}`` for
    the operand (``y`` when it is a ciphertext, ``c`` otherwise): ``"x * {y}"``; or a callable
    ``(self, *args, **kwargs) -> str``. ``need``: a callable with the same arguments giving how
    many levels the whole operation takes from its input (``x ** k``: ceil(log2 k)), for
    operations made of several products; by default a failed product needs one more level.
    Only the outermost decorated call translates."""

    def decorate(fn: _F) -> _F:
        @functools.wraps(fn)
        def wrapper(self, *args, **kwargs):
            if _ACTIVE.get():
                return fn(self, *args, **kwargs)
            token = _ACTIVE.set(True)
            try:
                return fn(self, *args, **kwargs)
            except (ValueError, TypeError) as e:
                try:
                    new = translate(e, _Call(name, self, args, kwargs, need))
                except Exception:  # noqa: BLE001 - never hide the user's error behind a bug here
                    new = e
                if new is e:
                    raise
                raise new from None
            finally:
                _ACTIVE.reset(token)

        return wrapper  # type: ignore[return-value]

    return decorate


def method_name(method: str) -> Callable[..., str]:
    """A name callable for ``x.method(arg)``: ``method_name("rotate")`` names
    ``x.rotate(3)``."""
    def name(self, *args, **kwargs) -> str:
        shown = [_short(a) for a in args] + [f"{k}={_short(v)}" for k, v in kwargs.items()]
        return f"x.{method}({', '.join(shown)})"
    return name


def evaluate_name(self, fn=None, *args, **kwargs) -> str:
    """``x.evaluate(tanh)``: the operation's name with the function's."""
    name = getattr(fn, "__name__", "fn")
    return f"x.evaluate({name if name.isidentifier() else 'fn'})"


def power_name(self, exponent=None, *args, **kwargs) -> str:
    """``x ** 4``."""
    return f"x ** {exponent if isinstance(exponent, int) else 'k'}"


def power_levels(self, exponent=None, *args, **kwargs) -> int | None:
    """Levels ``x ** k`` takes by squaring and multiplying: ceil(log2 k)."""
    if not isinstance(exponent, int) or isinstance(exponent, bool) or exponent < 1:
        return None
    return (exponent - 1).bit_length()


def _is_ciphertext(obj) -> bool:
    return hasattr(obj, "raw") and hasattr(obj, "ctx")


class _Call:
    """The user's view of one failed call: its name, context and ciphertext operands."""

    def __init__(self, name, self_obj, args, kwargs, need=None) -> None:
        if _is_ciphertext(self_obj):
            self.ctx = self_obj.ctx
            self.x = self_obj
            other = args[0] if args else None
        else:  # a context method: ctx.decrypt(x)
            self.ctx = self_obj
            self.x = args[0] if args and _is_ciphertext(args[0]) else None
            other = None
        self.y = other if _is_ciphertext(other) else None
        if callable(name):
            self.name = name(self_obj, *args, **kwargs)
        else:
            self.name = name.replace("{y}", "y" if self.y is not None else "c")
        self.args, self.kwargs = args, kwargs
        self.need = need(self_obj, *args, **kwargs) if need is not None else None

    @property
    def operands(self) -> list[tuple[str, Any]]:
        return [(label, ct) for label, ct in (("x", self.x), ("y", self.y)) if ct is not None]

    def low(self):
        """(label, ciphertext) of the operand at the lowest level."""
        ops = self.operands
        return min(ops, key=lambda p: p[1].level) if ops else (None, None)

    def where(self) -> str:
        """"x is at level 0" / "x is at level 0 and y at level 2"."""
        ops = self.operands
        if not ops:
            return ""
        text = f"{ops[0][0]} is at level {ops[0][1].level}"
        for label, ct in ops[1:]:
            text += f" and {label} at level {ct.level}"
        return text


# ---- levels, depth and the parameters that give them ------------------------------------------


def levels_left(ctx, level: int) -> int:
    """How many multiplications a ciphertext at ``level`` can still be rescaled (CKKS) or
    switched down (BFV/BGV) after: the rescale blocks below its level."""
    if ctx.scheme != "ckks":
        return level
    chain = ctx._chain
    return list(chain.tops).index(chain.top_at_or_below(level))


def levels_used(ctx, level: int) -> int:
    """Levels spent between where ``encrypt`` starts (:attr:`default_level`: the top, or the
    bootstrapper's output level) and ``level``."""
    start = ctx.default_level if ctx.scheme == "ckks" else ctx.max_level
    return max(0, levels_left(ctx, start) - levels_left(ctx, min(level, start)))


def _takes(ctx, parameter: str) -> bool:
    """Whether ``ctx``'s factory (``veil.ckks``, ``veil.bfv``, ``veil.bgv``) takes ``parameter``."""
    try:
        return parameter in inspect.signature(type(ctx)).parameters
    except (TypeError, ValueError):
        return False


def _security(ctx) -> int:
    return 128 if ctx.security is None else ctx.security


def ckks_degree_for(ctx, depth: int, security: int | None) -> tuple[int, int] | None:
    """(N, levels): the smallest poly_modulus_degree whose default CKKS chain gives at least
    ``depth`` levels at ``security`` (:func:`veil._ckks.default_ckks_chain`), or None."""
    # The rule of the context's own module (veil._ckks imports this one, so no import here).
    default_ckks_chain = sys.modules[type(ctx).__module__].default_ckks_chain
    n = 4096
    while n <= 131072:
        try:
            levels = len(default_ckks_chain(n, security)) - 2
        except ValueError:
            levels = 0
        if levels >= depth:
            return n, levels
        n *= 2
    return None


def _or_join(parts: list[str]) -> str:
    if len(parts) <= 1:
        return "".join(parts)
    return ", ".join(parts[:-1]) + ", or " + parts[-1]


def ckks_fix(ctx, depth: int, low=None, step: int = 1, operands=()) -> str:
    """Which parameter gives a CKKS computation ``depth`` levels: bootstrapping ``low`` (the
    operand at the lowest level; every one of ``operands``, (label, ciphertext) pairs, with
    fewer than ``step`` levels left) where the context bootstraps (when this ``step``'s levels
    fit above a bootstrapped ciphertext; else bootstrapping within the step), ``depth=``, a larger
    poly_modulus_degree, a longer coeff_modulus at this poly_modulus_degree."""
    parts = []
    label, ct = low if low is not None else (None, None)
    bt = ctx.bootstrapper
    if bt is not None and ct is not None:
        fresh = levels_left(ctx, bt.output_level)
        if step <= fresh:
            low_ones = [lb for lb, c in operands if levels_left(ctx, c.level) < step] or [label]
            how = ", ".join(f"{lb} = {lb}.bootstrap()" for lb in low_ones)
            return (f"Fix: bootstrap {' and '.join(low_ones)} before this step ({how}: back to "
                    f"level {bt.output_level}, {fresh} levels above the last).")
        parts.append(f"split this step and bootstrap between its parts (it takes {step} levels; "
                     f"a bootstrapped ciphertext has {fresh})")
    if _takes(ctx, "depth"):
        parts.append(f"create the context with depth={depth} (veil.ckks(depth={depth}))")
    sec = _security(ctx)
    n = ctx.poly_modulus_degree
    from ._core import CoeffModulus

    bound = CoeffModulus.max_bit_count(n, sec)  # the HE standard's bound on log2(QP)
    bits = [int(q).bit_length() for q in ctx.coeff_modulus]
    special = bits[len(bits) - ctx.context.special_primes:] if ctx.context.special_primes else []
    q0 = bits[0]
    scale_bits = max(20, round(math.log2(ctx.scale)))
    need_bits = q0 + scale_bits * depth + sum(special or [q0])
    found = ckks_degree_for(ctx, depth, sec)
    if found is not None and found[0] > n:
        parts.append(f"poly_modulus_degree={found[0]} ({found[1]} levels with its default "
                     "coeff_modulus)")
    elif need_bits <= bound and bt is None:
        parts.append(f"a coeff_modulus of {depth + 1 + len(special or [0])} primes at this "
                     f"poly_modulus_degree (e.g. [{q0}] + [{scale_bits}] * {depth} + "
                     f"[{(special or [q0])[0]}]: {need_bits} of the {bound} bits its "
                     f"{sec}-bit security allows)")
    if bt is None and (found is None or found[0] >= 65536):
        parts.append("bootstrapping, which refreshes levels (veil.ckks(poly_modulus_degree="
                     "65536, bootstrapping=True) at 128-bit security)")
    if not parts:
        return ""
    return "Fix: " + _or_join(parts) + "."


def integer_fix(ctx, depth: int | None = None, levels: int | None = None) -> str:
    """Which parameters give a BFV/BGV computation more depth: ``depth=`` (``depth``: the depth
    to ask for, if known), a larger poly_modulus_degree (with ``levels``: the smallest whose
    default chain has that many levels), a smaller plain_modulus (noise budget only)."""
    from ._core import CoeffModulus

    parts = []
    factory = f"veil.{ctx.scheme}"
    if _takes(ctx, "depth"):
        parts.append(f"create the context with depth={depth} ({factory}(depth={depth}))"
                     if depth else f"create the context with the depth the computation needs "
                     f"({factory}(depth=...))")
    n, sec = ctx.poly_modulus_degree, _security(ctx)
    q_bits = round(sum(math.log2(q) for q in ctx.context.coeff_modulus_at(ctx.max_level)))
    m = 2 * n
    while m <= 131072:
        try:
            primes = list(CoeffModulus.bfv_default(m, sec))
        except ValueError:  # no default chain for this N at this security level
            break
        if levels is None:
            bigger = round(sum(math.log2(q) for q in primes[:-1]))
            parts.append(f"poly_modulus_degree={m} (its default coeff_modulus gives Q {bigger} "
                         f"bits, against {q_bits} here)")
            break
        if len(primes) - 2 >= levels:
            parts.append(f"poly_modulus_degree={m} ({len(primes) - 2} levels with its default "
                         "coeff_modulus)")
            break
        m *= 2
    if levels is not None:
        parts.append(f"a coeff_modulus of {levels + 2} or more primes (the last one special)")
    else:
        t = ctx.plain_modulus
        parts.append(f"a smaller plain_modulus (t = {t} here: each product uses about "
                     f"log2(t) + log2(N) = {math.log2(t) + math.log2(n):.0f} bits of noise "
                     "budget)")
    return "Fix: " + _or_join(parts) + "."


def fresh_noise_budget(ctx) -> int | None:
    """The noise budget of a fresh encryption of zero in ``ctx`` (needs the secret key; an
    encryptor of its own, so the context's random state is left alone), or None."""
    cached = getattr(ctx, "_fresh_budget", None)
    if cached is not None:
        return cached
    if ctx.secret_key is None:
        return None
    from ._core import Encryptor

    enc = Encryptor(ctx.context, ctx.secret_key, 0x5645494C)
    budget = ctx.decryptor.invariant_noise_budget(enc.encrypt(ctx._encode(0, "values")))
    ctx._fresh_budget = budget
    return budget


# ---- messages the pythonic layer raises itself --------------------------------------------------


def too_many_values(ctx, name: str, count: int) -> ValueError:
    """More values than slots: how many slots this N has, and the two ways out."""
    n, slots = ctx.poly_modulus_degree, ctx.slot_count
    per = "N/2" if ctx.scheme == "ckks" else "N"
    bigger = [m for m in (2 * n, 4 * n, 8 * n) if m <= 131072 and
              (m // 2 if ctx.scheme == "ckks" else m) >= count]
    larger = f", or use poly_modulus_degree={bigger[0]}" if bigger else ""
    return ValueError(f"{name}: expected at most {slots} slots, got {count} (poly_modulus_degree "
                      f"{n} has {per} = {slots} slots): split the values over several "
                      f"ciphertexts{larger}")


def out_of_plain_range(ctx, name: str) -> ValueError:
    """A BFV/BGV value outside [-(t-1)/2, t): what t is, and that results wrap mod t. The values
    themselves are not quoted (plaintext data: a served model's weights must not reach a
    client's error)."""
    t = ctx.plain_modulus
    return ValueError(
        f"{name}: expected entries in [-(t-1)/2, t) with plain_modulus t = {t}, got entries "
        f"outside it: BFV and BGV compute modulo t, so t must exceed every value the "
        "computation produces (inputs and results); create the context with a larger "
        f"plain_modulus (a prime = 1 mod 2N for batching: veil.PlainModulus.batching("
        f"{ctx.poly_modulus_degree}, bits))")


def _short(value) -> str:
    r = repr(value)
    return r if len(r) <= 30 else r[:27] + "..."


#: Appended to "got shape (a, b)" for arrays of more than one dimension.
FLATTEN = ": flatten it (values.ravel()) or encrypt one row per ciphertext"

#: Inserted after "expected integers (int or a numpy integer array" for real-valued input.
INTEGERS_ONLY = ("; BFV and BGV encrypt integers mod t: round with np.rint(x).astype(np.int64), "
                 "or use veil.ckks for real numbers")


def ciphertext_as_values(ctx, name: str, value) -> TypeError | None:
    """A ciphertext where numbers were expected (``ckks_ct + bfv_ct``, ``ctx.encrypt(ct)``), or
    None when ``value`` is no ciphertext."""
    if not _is_ciphertext(value):
        return None
    theirs = getattr(value.ctx, "scheme", "?").upper()
    return TypeError(
        f"{name}: expected numbers, got a {theirs} ciphertext ({type(value).__name__}): a "
        f"{ctx.scheme.upper()} context computes only on its own ciphertexts; ciphertexts of "
        "different schemes or contexts do not mix (decrypt on the client and encrypt again)")


def wrong_ciphertext(ctx, name: str, value, expected: str) -> TypeError:
    """``ctx.decrypt(ct)`` with something that is not a ciphertext of ``ctx``'s scheme."""
    if _is_ciphertext(value):
        theirs = getattr(value.ctx, "scheme", "?").upper()
        return TypeError(
            f"{name}: expected {expected}, got a {theirs} ciphertext ({type(value).__name__}): "
            f"this is a {ctx.scheme.upper()} context; decrypt it with the context that "
            "encrypted it")
    return TypeError(f"{name}: expected {expected}, got {type(value).__name__}")


def no_galois_keys(steps: list[int], columns: bool = False, composing: int | None = None
                   ) -> ValueError:
    """A rotation in a public context (a server's view) that lacks its Galois key: only the
    client, which holds the secret key, can create it."""
    what = [f"step {s}" for s in steps] + (["the column swap / conjugation"] if columns else [])
    keys = f"no Galois key for {', '.join(what)}" if what else "no Galois keys"
    if composing is not None:
        keys += f" (nor for the power-of-two step {composing} that would compose it)"
    arg = f"{steps}" if steps else "steps"
    col = ", columns=True" if columns else ""
    return ValueError(
        f"ctx: {keys}: this public context cannot create them; the client creates them "
        f"(client_ctx.create_galois_keys({arg}{col}), or galois_steps= when creating the "
        "context) before exporting ctx.public()")


# ---- the translation ---------------------------------------------------------------------------

_PRODUCT_SCALE = re.compile(r"the product's scale (?:2\^([0-9.]+) )?would exceed Q")
_LAST_RESCALE = re.compile(r"is at the last level \((\d+)\); it cannot be rescaled further")
_NO_NEXT = re.compile(r"is at level (\d+); no next level")
_NOISE = re.compile(r"noise budget is exhausted")
_POLY = re.compile(r"a degree-(\d+) polynomial needs at least (\d+) rescale levels but the "
                   r"ciphertext \(level (\d+)\) has (\d+) left")
_MAP = re.compile(r"no level left to map x into \[-1, 1\]")
_ALIGN = re.compile(r"cannot align level (\d+) \(scale 2\^([0-9.]+)\) with level (\d+) "
                    r"\(scale 2\^([0-9.]+)\)")
_KEY_SET = re.compile(r"belongs to another key set")
_GALOIS = re.compile(r"^galois_keys: no key for step (-?\d+) nor for the power-of-two step "
                     r"(-?\d+)")
_SCALES = re.compile(r"scale 2\^([0-9.]+) does not match 2\^([0-9.]+)")
_LEVELS = re.compile(r"is at level (\d+) but (?:encrypted1|encrypted) is at level (\d+)")
_INTERNAL = re.compile(r"^(encrypted[12]?|encrypteds|plain|inputs): ")
_NAMES = {"encrypted1": "x", "encrypted2": "y", "encrypted": "x", "encrypteds": "x",
          "inputs": "x"}


def translate(e: Exception, call: _Call) -> Exception:
    """``e`` told in the user's terms (a new exception), or ``e`` itself when it is not one of
    the core's messages this module knows."""
    msg = str(e)
    ctx, op = call.ctx, call.name
    if ctx is None or not hasattr(ctx, "scheme"):
        return e
    if isinstance(e, ValueError):
        for pattern, handler in _HANDLERS:
            m = pattern.search(msg)
            if m is not None:
                out = handler(call, m, msg)
                if out is not None:
                    return out
    m = _INTERNAL.match(msg)
    if m is None:
        return e
    name = m.group(1)
    rest = msg[m.end():]
    who = _NAMES.get(name, "y" if call.y is not None else "c")
    if name == "plain":
        who = "c"
    rest = re.sub(r"\bencrypted1\b", "x", rest)
    rest = re.sub(r"\bencrypted2\b", "y", rest)
    return type(e)(f"{op}: {who} {rest}" if not rest.startswith(("the ", "a ", "an ", "every "))
                   else f"{op}: {rest}")


def _scale(s: float) -> str:
    return f"2^{math.log2(s):.2f}"


def _depth_error(call: _Call, what: str, more: int, used_level: int | None = None) -> DepthError:
    """A DepthError for ``call``: ``what`` says why the operation cannot run; the operation
    needs ``more`` levels beyond those left at the lowest operand's level."""
    ctx, op = call.ctx, call.name
    label, ct = call.low()
    level = ct.level if ct is not None else used_level
    used = levels_used(ctx, level) if level is not None else 0
    left = levels_left(ctx, level) if level is not None else 0
    if call.need is not None and call.need > left:  # x ** k: the whole operation's levels
        more = call.need - left
        what = (f"{call.where()} with {left} level{'s' if left != 1 else ''} left, and {op} "
                f"takes {call.need}: {more} more")
    depth = used + left + more
    if ctx.scheme != "ckks":
        have = f"{ctx.max_level} (ctx.max_level)"
    elif ctx.bootstrapper is None:
        have = f"{ctx.levels} (ctx.levels)"
    else:
        start = ctx.default_level
        have = f"{levels_left(ctx, start)} below level {start}, where encrypt and bootstrap start"
    text = (f"{op}: out of depth: {what}. The computation needs {depth} level"
            f"{'s' if depth != 1 else ''} ({used} used to reach level {level} + "
            f"{left + more} for this step); this context has {have}.")
    fix = (ckks_fix(ctx, depth, (label, ct), left + more, call.operands) if ctx.scheme == "ckks"
           else integer_fix(ctx, depth, levels=depth))
    return DepthError(f"{text} {fix}".strip(), op, level, more, depth)


def _product_scale(call: _Call, m, msg: str):
    ctx = call.ctx
    if ctx.scheme != "ckks":
        return None
    _, ct = call.low()
    if ct is None:
        return None
    if call.need is not None and call.need > levels_left(ctx, ct.level):
        return _depth_error(call, "", 1)  # x ** k: the message says what the whole needs
    if levels_left(ctx, ct.level) == 0:
        return _depth_error(
            call, f"{call.where()}; the product would be at level {ct.level}, where no rescale "
            "is left, so it needs 1 more level", 1)
    scales = ", ".join(f"{lb} {_scale(c.scale)}" for lb, c in call.operands)
    if not ctx.auto_rescale:
        return ValueError(
            f"{call.name}: the product's scale would exceed the coefficient modulus at level "
            f"{ct.level} (scales: {scales}; the context's is {_scale(ctx.scale)}): with "
            "auto_rescale=False, rescale each product before multiplying it again "
            "(x = x.rescale()), or create the context with auto_rescale=True (the default) to "
            "rescale automatically")
    return ValueError(
        f"{call.name}: the product's scale would exceed the coefficient modulus at level "
        f"{ct.level} (scales: {scales}): encrypt at a smaller scale (scale=...; the context's is "
        f"{_scale(ctx.scale)})")


def _last_rescale(call: _Call, m, msg: str):
    return _depth_error(call, f"{call.where()}, the last level: no prime is left to rescale by, "
                        "so it needs 1 more level", 1)


def _no_next(call: _Call, m, msg: str):
    return _depth_error(call, f"{call.where()}, the last level: no level is left below it, so "
                        "it needs 1 more level", 1)


def _noise(call: _Call, m, msg: str):
    ctx = call.ctx
    if ctx.scheme == "ckks":
        return None
    label = "x" if call.x is not None else "the ciphertext"
    try:
        fresh = fresh_noise_budget(ctx)
    except (ValueError, RuntimeError):  # the estimate is optional: the message holds without
        fresh = None
    n, t = ctx.poly_modulus_degree, ctx.plain_modulus
    per = math.log2(t) + math.log2(n)
    need = None
    if fresh is not None:
        fits = max(0, int(fresh // per))
        need = fits + 1
        capacity = (f" A fresh ciphertext here has {fresh} bits of noise budget and each product "
                    f"of ciphertexts uses about {per:.0f}, so about {fits} product"
                    f"{'s' if fits != 1 else ''} in sequence fit"
                    f"{'s' if fits == 1 else ''}")
        if ctx.scheme == "bgv":
            capacity += (f" (about {ctx.max_level + 1} with {label}.mod_switch_to_next() after "
                         "each product)")
        capacity += f": the computation needs depth {need} or more."
    else:
        capacity = " The computation needs more depth than these parameters give."
    text = (f"{call.name}: out of depth: {label}'s noise budget is exhausted (0 bits left), so "
            f"its decryption would be wrong: {label} went through more products in sequence "
            f"(multiplicative depth) than these parameters allow (poly_modulus_degree {n}, "
            f"plain_modulus {t}).{capacity} ctx.noise_budget(ct) shows what is left after "
            "each step.")
    level = call.x.level if call.x is not None else None
    return DepthError(f"{text} {integer_fix(ctx, need)}", call.name, level, None, need)


def _call_arg(call: _Call, index: int, name: str, default):
    """Argument ``index`` (after the ciphertext) or keyword ``name`` of the failed call."""
    if name in call.kwargs:
        return call.kwargs[name]
    return call.args[index] if len(call.args) > index else default


def _polynomial(call: _Call):
    """(Chebyshev coefficients, degree, maps) of the polynomial ``x.polyval(coeffs)`` or
    ``x.evaluate(fn, interval, degree)`` evaluates; ``maps``: whether x is first mapped onto
    [-1, 1] (one level). None when the call is neither."""
    import numpy as np

    from ._core import power_to_chebyshev

    if call.name.startswith("x.polyval"):
        coeffs = [float(c) for c in _call_arg(call, 0, "coeffs", [])]
        cheb = list(power_to_chebyshev(coeffs))
        maps = False
    elif call.name.startswith("x.evaluate"):
        fn = _call_arg(call, 0, "fn", None)
        a, b = (float(v) for v in _call_arg(call, 1, "interval", (-1.0, 1.0)))
        degree = int(_call_arg(call, 2, "degree", 15))
        cheb = list(np.polynomial.chebyshev.Chebyshev.interpolate(
            fn, degree, domain=[a, b]).coef)
        maps = (a, b) != (-1.0, 1.0)
    else:
        return None
    while len(cheb) > 1 and cheb[-1] == 0.0:
        cheb.pop()
    return cheb, len(cheb) - 1, maps


def polynomial_levels(ctx, cheb: list[float], scale: float) -> int | None:
    """Levels the C++ evaluator's plan takes for Chebyshev coefficients ``cheb`` on an input at
    ``scale``: planned (on levels and scales only, no ciphertext) on a chain as long as needed
    with primes of ``ctx``'s sizes, since ``ctx``'s own chain may be too short. None if no
    plan fits 2 log2(degree) + 4 levels."""
    from ._core import CoeffModulus, Context, EncryptionParameters, PolynomialEvaluator

    n = ctx.poly_modulus_degree
    degree = max(1, len(cheb) - 1)
    top = 2 * max(1, math.ceil(math.log2(degree + 1))) + 4
    scale_bits = min(60, max(20, round(math.log2(scale))))
    q0 = min(60, max(scale_bits + 10, int(ctx.coeff_modulus[0]).bit_length()))
    params = EncryptionParameters("ckks")
    params.poly_modulus_degree = n
    params.coeff_modulus = list(CoeffModulus.create(n, [q0] + [scale_bits] * top + [60]))
    params.special_primes = 1
    try:
        end = PolynomialEvaluator(Context(params, None)).plan_level(top, scale, cheb)
    except ValueError:
        return None
    return top - end


def _poly(call: _Call, m, msg: str):
    """x.polyval / x.evaluate with too few levels: the levels the polynomial takes, planned
    on a long enough chain (the core's message gives only a lower bound)."""
    ctx = call.ctx
    if ctx.scheme != "ckks" or call.x is None:
        return None
    left = levels_left(ctx, call.x.level)
    poly = _polynomial(call)
    if poly is None:
        return None
    cheb, degree, maps = poly
    need = polynomial_levels(ctx, cheb, call.x.scale)
    bound = ""
    if need is None:  # the core's lower bound, and the levels it was short of
        bound = "at least "
        need = int(m.group(2)) if m is not None and m.re is _POLY else 1
        if m is not None and m.re is _POLY:
            need = max(need, int(m.group(4)) + 1)
    total = need + (1 if maps else 0)
    more = max(1, total - left)
    step = (f"a degree-{degree} polynomial takes {bound}{need} level{'s' if need != 1 else ''}"
            + (" plus 1 to map the interval onto [-1, 1]" if maps else ""))
    return _depth_error(call, f"{call.where()} with {left} level{'s' if left != 1 else ''} left, "
                        f"and {step}: {more} more", more)


_map = _poly


def _align(call: _Call, m, msg: str):
    ctx = call.ctx
    if ctx.scheme != "ckks":
        return None
    return _depth_error(
        call, f"{call.where()} with scales 2^{m.group(2)} and 2^{m.group(4)}, which cannot be "
        "aligned to one scale without a rescale, and none is left, so it needs 1 more level", 1)


def _key_set(call: _Call, m, msg: str):
    op = call.name
    if call.y is not None:
        return ValueError(
            f"{op}: y belongs to another key set than x: it was encrypted under different keys "
            "(two contexts made separately have different keys, even with the same "
            "parameters), and mixing them would give garbage. Compute on ciphertexts of one "
            "context (and its ctx.public() view, which shares its keys)")
    return ValueError(
        f"{op}: x belongs to another key set than this context: it was encrypted under "
        "different keys (two contexts made separately have different keys, even with the same "
        "parameters). Decrypt it with the context that encrypted it, or one loaded from that "
        "context's bytes")


def _scales(call: _Call, m, msg: str):
    ctx = call.ctx
    if ctx.scheme != "ckks":
        return None
    ops = call.operands
    scales = " and ".join(f"{lb} has scale {_scale(c.scale)}" for lb, c in ops)
    if call.y is None:  # a Plaintext operand
        scales += f" and c {_scale(2 ** float(m.group(1)))}"
    if ctx.auto_rescale:
        fix = ("pass the numbers rather than a Plaintext (they are encoded at x's scale), or "
               "encode c at x's scale and level: ctx.encode(values, scale=x.scale, level=x.level)")
    else:
        hi = max(ops, key=lambda p: p[1].scale)[0]
        fix = (f"with auto_rescale=False, rescale a product before adding it ({hi} = "
               f"{hi}.rescale()), or declare one scale with set_scale when they differ only "
               "slightly (auto_rescale=True, the default, aligns them for you)")
    return ValueError(f"{call.name}: scales differ: {scales}. Addition needs equal scales: {fix}")


def _levels(call: _Call, m, msg: str):
    ctx = call.ctx
    if call.y is None:
        return None
    hi_label = max(call.operands, key=lambda p: p[1].level)[0]
    lo_level = min(c.level for _, c in call.operands)
    mode = ("with auto_rescale=False, " if ctx.scheme == "ckks" else "")
    auto = (" (auto_rescale=True, the default, aligns them for you)"
            if ctx.scheme == "ckks" else "")
    return ValueError(f"{call.name}: {call.where()}: {mode}both operands must be at one level: "
                      f"bring {hi_label} down with {hi_label}.mod_switch_to({lo_level}){auto}")


def _galois(call: _Call, m, msg: str):
    e = no_galois_keys([int(m.group(1))], composing=int(m.group(2)))
    return ValueError(f"{call.name}: {str(e)[len('ctx: '):]}")


_HANDLERS = [
    (_PRODUCT_SCALE, _product_scale),
    (_LAST_RESCALE, _last_rescale),
    (_NO_NEXT, _no_next),
    (_NOISE, _noise),
    (_POLY, _poly),
    (_MAP, _map),
    (_ALIGN, _align),
    (_KEY_SET, _key_set),
    (_SCALES, _scales),
    (_GALOIS, _galois),
    (_LEVELS, _levels),
]


__all__ = ["DepthError", "levels_left", "levels_used", "translate", "user_operation"]
