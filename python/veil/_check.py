"""Strict argument checks of the pythonic layer.

Every helper raises TypeError (wrong type) or ValueError (right type, bad value) whose message
starts with the argument's name, ``"name: expected ..., got ..."``, and never OverflowError: a
Python int too large for C++ is rejected here, before it reaches ``veil._core``.
"""

from __future__ import annotations

import math
from numbers import Real

import numpy as np

#: Seeds are 64-bit: 0 <= seed < 2^64.
SEED_MAX = 2**64 - 1
#: The security levels of the HE Standard that Veil checks against (None: no check).
SECURITY_LEVELS = (128, 192, 256)


def show(value) -> str:
    """A short rendering of ``value`` for messages: its type and (truncated) repr."""
    if isinstance(value, (bool, np.bool_)):
        return f"bool {bool(value)}"
    if isinstance(value, (int, np.integer)):
        s = str(int(value))
        if len(s) > 40:
            s = f"{s[:12]}...{s[-6:]} ({len(s)} digits)"
        return s
    if isinstance(value, (float, np.floating)):
        return f"{type(value).__name__} {float(value)!r}"
    r = repr(value.item() if isinstance(value, np.generic) else value)
    if len(r) > 60:
        r = r[:57] + "..."
    return f"{type(value).__name__} {r}"


def is_integer(value) -> bool:
    """True for Python ints and numpy integer scalars, False for bools (and everything else)."""
    return isinstance(value, (int, np.integer)) and not isinstance(value, (bool, np.bool_))


def _bounds(name: str, lo, hi) -> str:
    if lo is not None and hi is not None:
        return f"{lo} <= {name} <= {hi}"
    if lo is not None:
        return f"{name} >= {lo}"
    return f"{name} <= {hi}"


def integer(value, name: str, lo: int | None = None, hi: int | None = None,
            quote: bool = True) -> int:
    """``value`` as a Python int, checked to be an integer in ``lo..hi`` (inclusive; None: no
    bound).

    Accepts int and numpy integer scalars; rejects bool, float (even 2.0), str and the rest.
    ``quote=False`` (seeds) leaves the refused value out of the message: only its type is named.

    Raises:
        TypeError: ``"name: expected an integer, got float 1.5"``.
        ValueError: ``"name: expected lo <= name <= hi, got X"``.
    """
    if not is_integer(value):
        got = show(value) if quote else type(value).__name__
        raise TypeError(f"{name}: expected an integer, got {got}")
    v = int(value)
    if (lo is not None and v < lo) or (hi is not None and v > hi):
        raise ValueError(f"{name}: expected {_bounds(name, lo, hi)}"
                         + (f", got {show(v)}" if quote else ""))
    return v


def optional_integer(value, name: str, lo: int | None = None, hi: int | None = None,
                     quote: bool = True):
    """None, or :func:`integer` of ``value``."""
    return None if value is None else integer(value, name, lo, hi, quote)


def flag(value, name: str) -> bool:
    """``value`` checked to be a bool (Python or numpy); a truthy string is not True.

    Raises:
        TypeError: ``"name: expected True or False, got str 'no'"``.
    """
    if not isinstance(value, (bool, np.bool_)):
        raise TypeError(f"{name}: expected True or False, got {show(value)}")
    return bool(value)


def seed(value) -> int | None:
    """A seed: None (OS entropy) or an integer in 0..2^64-1. A refused seed is not quoted in the
    message (seeds determine the encryption randomness), as in the bindings' seed check."""
    return optional_integer(value, "seed", 0, SEED_MAX, quote=False)


def derived_seed(value: int | None, k: int) -> int | None:
    """The k-th seed derived from ``value``: ``value + k`` wrapped mod 2^64 (None stays None),
    so that every valid seed, 2^64-1 included, derives valid seeds."""
    return None if value is None else (value + k) & SEED_MAX


def security(value) -> int | None:
    """The security level: 128, 192, 256, or None (no HE-Standard check)."""
    if value is None:
        return None
    if not is_integer(value):
        raise TypeError(f"security: expected 128, 192, 256 or None, got {show(value)}")
    if int(value) not in SECURITY_LEVELS:
        raise ValueError(f"security: expected 128, 192, 256 or None, got {show(value)}")
    return int(value)


def step(value, n: int, name: str = "steps") -> int:
    """A rotation step for poly_modulus_degree ``n``: an integer with |step| < N/2 (as SEAL;
    larger steps are not wrapped).

    Raises:
        TypeError: not an integer. ValueError: ``"steps: expected |steps| < N/2 = 4096, got X"``.
    """
    s = integer(value, name)
    half = n // 2
    if abs(s) >= half:
        raise ValueError(f"{name}: expected |steps| < N/2 = {half}, got {show(s)}")
    return s


def steps(values, n: int, name: str = "steps") -> list[int]:
    """A sequence of rotation steps (each as :func:`step`)."""
    if isinstance(values, (str, bytes)) or is_integer(values) or not hasattr(values, "__iter__"):
        raise TypeError(f"{name}: expected a list of integer steps, got {show(values)}")
    return [step(s, n, name) for s in values]


def scale(value, name: str = "scale") -> float:
    """A CKKS scale: a real number (int or float, not bool or str), finite and >= 1.

    Raises:
        TypeError: not a real number. ValueError: NaN, infinite or below 1.
    """
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (Real, np.integer,
                                                                      np.floating)):
        raise TypeError(f"{name}: expected a real number >= 1, got {show(value)}")
    try:
        s = float(value)
    except OverflowError:
        raise ValueError(f"{name}: expected a finite real number >= 1, got {show(value)}") from None
    if not math.isfinite(s) or s < 1:
        raise ValueError(f"{name}: expected a finite real number >= 1, got {show(value)}")
    return s


def scale_fits(s: float, q_bits: float, level: int, name: str = "scale") -> None:
    """Raises ValueError unless log2(``s``) is below ``q_bits``, the bits of Q at ``level``."""
    if math.log2(s) >= q_bits:
        raise ValueError(f"{name}: log2(scale) = {math.log2(s):.1f} must be below the "
                         f"{q_bits:.1f} bits of the coefficient modulus at level {level}")


__all__ = ["derived_seed", "flag", "integer", "is_integer", "optional_integer", "scale",
           "scale_fits", "security", "seed", "show", "step", "steps"]
