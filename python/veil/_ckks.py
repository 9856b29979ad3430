"""Pythonic CKKS: approximate arithmetic on vectors of N/2 real or complex numbers.

Example::

    import numpy as np, veil
    ctx = veil.ckks(poly_modulus_degree=16384, scale=2**40, device="cpu")
    x = ctx.encrypt(np.linspace(-1, 1, 8))
    y = (x * x).rescale() + 0.5          # scales are tracked; levels must match
    print(ctx.decrypt(y)[:8])
    print(veil.ckks.precision(np.linspace(-1, 1, 8) ** 2 + 0.5, ctx.decrypt(y)[:8]))

Scheme: Cheon-Kim-Kim-Song (2017) in full RNS (Cheon-Han-Kim-Kim-Song 2018), canonical-embedding
encoding with SEAL's slot order (generator 3), rescaling by the last prime, hybrid key switching
(Han-Ki 2020). Scales follow SEAL's rules: add/sub need equal scales (relative tolerance 1e-6),
multiply multiplies them, rescale divides by the dropped prime. ``auto_rescale=True`` rescales after
every multiplication (off by default).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Union

import numpy as np

from . import _core
from ._base import (
    _CIPHERTEXT_CLASSES,
    _CONTEXT_CLASSES,
    CiphertextBase,
    KeyedContext,
    build_params,
    check_same_context,
)

Values = Union[float, complex, Sequence[float], Sequence[complex], np.ndarray]


def default_ckks_chain(n: int, security: int | None) -> list[int]:
    """60 + k x 40 + 60 bits with the largest k within the security bound (Phantom's rows)."""
    bound = _core.CoeffModulus.max_bit_count(n, 128 if security is None else security)
    k = max(1, (bound - 120) // 40)
    return [60] + [40] * k + [60]


def precision(expected, got) -> dict:
    """Precision statistics of ``got`` against ``expected`` (like Lattigo's precision stats).

    Returns a dict with ``max_error``, ``mean_error`` (absolute, complex modulus) and the
    corresponding bits ``min_bits = -log2(max_error)``, ``mean_bits = -log2(mean_error)``.
    """
    e = np.asarray(expected, dtype=np.complex128).ravel()
    g = np.asarray(got, dtype=np.complex128).ravel()
    if e.shape != g.shape:
        raise ValueError(f"got: shape {g.shape} differs from expected {e.shape}")
    err = np.abs(e - g)
    max_err = float(err.max()) if err.size else 0.0
    mean_err = float(err.mean()) if err.size else 0.0
    bits = lambda x: float("inf") if x == 0 else -math.log2(x)
    return {"max_error": max_err, "mean_error": mean_err, "min_bits": bits(max_err),
            "mean_bits": bits(mean_err)}


class CKKSContext(KeyedContext):
    """A CKKS context with its keys on one device.

    Args:
        poly_modulus_degree: N (slots = N/2).
        coeff_modulus: primes or bit sizes, special primes last (default 60 + k x 40 + 60).
        scale: default encoding scale (default 2^40).
        device, security, seed, galois_steps, special_primes, alpha, relin_keys: as for BFV.
        auto_rescale: rescale after every multiplication (default False).
    """

    scheme = "ckks"

    def __init__(
        self,
        poly_modulus_degree: int = 16384,
        coeff_modulus: Sequence[int] | None = None,
        scale: float = 2.0**40,
        device: str | None = "auto",
        security: int | None = 128,
        seed: int | None = None,
        galois_steps: str | Sequence[int] | None = "power_of_two",
        special_primes: int = 1,
        alpha: int | None = None,
        relin_keys: bool = True,
        auto_rescale: bool = False,
    ) -> None:
        n = int(poly_modulus_degree)
        if coeff_modulus is None:
            coeff_modulus = default_ckks_chain(n, security)
        if not (scale > 0 and math.isfinite(scale)):
            raise ValueError(f"scale: expected a positive finite number, got {scale!r}")
        params = build_params("ckks", n, coeff_modulus, None, special_primes, alpha, None, security)
        self._setup(params, device, security, seed, galois_steps, relin_keys)
        self._init_options({"scale": float(scale), "auto_rescale": bool(auto_rescale)})

    def _options(self) -> dict:
        return {"scale": self.scale, "auto_rescale": self.auto_rescale}

    def _init_options(self, options: dict) -> None:
        scale = options.get("scale", 2.0**40)
        if not isinstance(scale, (int, float)) or isinstance(scale, bool) or not (
                scale > 0 and math.isfinite(scale)):
            raise ValueError(f"scale: expected a positive finite number, got {scale!r}")
        self.scale = float(scale)
        self.auto_rescale = bool(options.get("auto_rescale", False))
        self.encoder = _core.CKKSEncoder(self.context)

    @property
    def slot_count(self) -> int:
        return self.encoder.slot_count

    # ---- encoding -------------------------------------------------------------------------
    def encode(self, values: Values, scale: float | None = None, level: int | None = None):
        """Encodes a scalar or up to N/2 real/complex values at ``scale`` and ``level``.

        Raises ValueError for too many values, non-finite input, or a scaled magnitude that
        would overflow Q at that level; TypeError for non-numeric input.
        """
        if isinstance(values, _core.Plaintext):
            return values
        scale = self.scale if scale is None else float(scale)
        level = self.max_level if level is None else int(level)
        if np.isscalar(values) or (isinstance(values, np.ndarray) and values.ndim == 0):
            if isinstance(values, (str, bytes)) or not isinstance(values, (int, float, complex, np.number)):
                raise TypeError(f"values: expected a number or an array of numbers, got {type(values).__name__}")
            v = complex(values)
            return self.encoder.encode_scalar(v, scale, level, self.device)
        arr = np.asarray(values)
        if arr.ndim != 1:
            raise ValueError(f"values: expected a 1-D array of at most {self.slot_count} numbers, got shape {arr.shape}")
        if arr.dtype.kind not in "iufcb":
            raise TypeError(f"values: expected numbers, got dtype {arr.dtype}")
        if arr.dtype.kind == "c":
            return self.encoder.encode_complex(np.ascontiguousarray(arr, dtype=np.complex128), scale, level, self.device)
        return self.encoder.encode_real(np.ascontiguousarray(arr, dtype=np.float64), scale, level, self.device)

    def decode(self, plain) -> np.ndarray:
        """N/2 complex128 slot values (divided by the plaintext's scale)."""
        return self.encoder.decode(plain)

    def encrypt(self, values: Values, scale: float | None = None, level: int | None = None,
                symmetric: bool = False):
        """Encrypts values (or a Plaintext) with the public key, or with the secret key when
        ``symmetric`` (client side; such ciphertexts serialize seeded: half the bytes)."""
        is_complex = np.iscomplexobj(values) if not isinstance(values, _core.Plaintext) else True
        raw = self._encrypt_raw(self.encode(values, scale, level), symmetric)
        return CKKSCiphertext(self, raw, is_complex)

    def decrypt(self, ct: CKKSCiphertext, complex_output: bool | None = None) -> np.ndarray:
        """Decrypts to N/2 slots: float64 if the inputs were real (unless complex_output)."""
        self._need_secret()
        if not isinstance(ct, CKKSCiphertext):
            raise TypeError(f"ct: expected a CKKSCiphertext, got {type(ct).__name__}")
        check_same_context(ct, CKKSCiphertext(self, ct.raw, False), "ct")
        out = self.encoder.decode(self.decryptor.decrypt(ct.raw))
        want_complex = ct.is_complex if complex_output is None else complex_output
        return out if want_complex else out.real.copy()


class CKKSCiphertext(CiphertextBase):
    """An encrypted vector of N/2 approximate numbers; tracks its level and scale."""

    def __init__(self, ctx: CKKSContext, raw: _core.Ciphertext, is_complex: bool) -> None:
        self.ctx = ctx
        self.raw = raw
        self.is_complex = is_complex

    @property
    def scale(self) -> float:
        return self.raw.scale

    def __repr__(self) -> str:
        return (f"veil.CKKSCiphertext(level={self.level}, scale=2^{math.log2(self.scale):.2f}, "
                f"size={self.size}, device={self.device!r})")

    def _wrap(self, raw, is_complex: bool | None = None) -> CKKSCiphertext:
        return CKKSCiphertext(self.ctx, raw, self.is_complex if is_complex is None else is_complex)

    def _complexity(self, other) -> bool:
        if isinstance(other, CKKSCiphertext):
            return self.is_complex or other.is_complex
        return self.is_complex or bool(np.iscomplexobj(other))

    def _after_mul(self, raw):
        ev = self.ctx.evaluator
        if raw.size == 3:
            raw = ev.relinearize(raw, self.ctx._rlk())
        if self.ctx.auto_rescale and raw.level > 0:
            raw = ev.rescale_to_next(raw)
        return raw

    def __add__(self, other) -> CKKSCiphertext:
        ev = self.ctx.evaluator
        if isinstance(other, CKKSCiphertext):
            check_same_context(self, other)
            return self._wrap(ev.add(self.raw, other.raw), self._complexity(other))
        pt = self.ctx.encode(other, self.scale, self.level)
        return self._wrap(ev.add_plain(self.raw, pt), self._complexity(other))

    __radd__ = __add__

    def __sub__(self, other) -> CKKSCiphertext:
        ev = self.ctx.evaluator
        if isinstance(other, CKKSCiphertext):
            check_same_context(self, other)
            return self._wrap(ev.sub(self.raw, other.raw), self._complexity(other))
        pt = self.ctx.encode(other, self.scale, self.level)
        return self._wrap(ev.sub_plain(self.raw, pt), self._complexity(other))

    def __rsub__(self, other) -> CKKSCiphertext:
        return (-self) + other

    def __mul__(self, other) -> CKKSCiphertext:
        ev = self.ctx.evaluator
        if isinstance(other, CKKSCiphertext):
            check_same_context(self, other)
            return self._wrap(self._after_mul(ev.multiply(self.raw, other.raw)), self._complexity(other))
        pt = self.ctx.encode(other, None, self.level)
        return self._wrap(self._after_mul(ev.multiply_plain(self.raw, pt)), self._complexity(other))

    __rmul__ = __mul__

    def square(self) -> CKKSCiphertext:
        return self._wrap(self._after_mul(self.ctx.evaluator.square(self.raw)))

    def rescale(self) -> CKKSCiphertext:
        """Divides by the last prime and drops it (scale /= q_level)."""
        return self._wrap(self.ctx.evaluator.rescale_to_next(self.raw))

    def set_scale(self, scale: float) -> CKKSCiphertext:
        """Returns a copy whose scale is declared as ``scale`` (aligning nearly-equal scales)."""
        raw = self.raw.__copy__()
        raw.scale = float(scale)
        return self._wrap(raw)

    def rotate(self, steps: int) -> CKKSCiphertext:
        """Rotates the slots left by ``steps`` (negative: right)."""
        return self._wrap(self.ctx.evaluator.rotate_vector(self.raw, int(steps), self.ctx._gk()))

    rotate_vector = rotate

    def conjugate(self) -> CKKSCiphertext:
        return self._wrap(self.ctx.evaluator.conjugate(self.raw, self.ctx._gk()), True)

    @classmethod
    def _make(cls, ctx, raw, extra=None) -> CKKSCiphertext:
        # Loaded without the pythonic flag: treat as complex, so decryption never drops an
        # imaginary part silently (``ctx.decrypt(ct).real`` recovers real inputs).
        return cls(ctx, raw, True if extra is None else bool(extra))

    def _extra(self):
        return self.is_complex


def ckks(**kwargs) -> CKKSContext:
    """Creates a :class:`CKKSContext` (see its arguments). ``veil.ckks.precision`` compares
    results with expected values."""
    return CKKSContext(**kwargs)


ckks.precision = precision  # type: ignore[attr-defined]

_CONTEXT_CLASSES.update(ckks=CKKSContext)
_CIPHERTEXT_CLASSES.update(ckks=CKKSCiphertext)
