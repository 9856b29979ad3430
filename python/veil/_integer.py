"""Pythonic BFV and BGV: contexts that own their keys, and ciphertexts with operators.

Example::

    import numpy as np, veil
    ctx = veil.bfv(poly_modulus_degree=8192, plain_modulus=65537, device="cpu")
    a = ctx.encrypt(np.arange(8))
    b = ctx.encrypt([3] * 8)
    c = (a * b + 5).rotate_rows(1)
    print(ctx.decrypt(c)[:8])

BFV: Fan-Vercauteren (2012) in full RNS, multiplication by HPS (Halevi-Polyakov-Shoup 2019) or
BEHZ (Bajard et al. 2016). BGV: Brakerski-Gentry-Vaikuntanathan (2012) with SEAL's conventions
(NTT-form ciphertexts, correction factor, modulus switching with the t-correction of
Kim-Polyakov-Zucca 2021). Both use hybrid key switching (Han-Ki 2020). Slots follow SEAL's
batching: a 2 x (N/2) matrix of integers mod t; rotate_rows cycles both rows, rotate_columns swaps
them.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Union

import numpy as np

from . import _core
from ._base import CiphertextBase, KeyedContext, build_params, check_same_context

ArrayLike = Union[Sequence[int], np.ndarray]


class IntegerContext(KeyedContext):
    """A BFV or BGV context with its keys on one device.

    Args:
        poly_modulus_degree: N, a power of two in 2^10..2^17.
        plain_modulus: t; must be a prime = 1 mod 2N for batching. ``None`` picks a 20-bit one.
        coeff_modulus: the primes of Q followed by the special primes (ints), or their bit
            sizes (ints below 64). Default: SEAL's BFVDefault(N) chain.
        mul_method: BFV only: ``"hps"`` (default) or ``"behz"``.
        device: ``"auto"`` (GPU if present), ``"cpu"``, ``"cuda"`` or ``"cuda:k"``.
        security: 128 (default), 192, 256, or ``None`` to disable the HE-Standard check.
        seed: fix all randomness (tests and reproducible runs only); default: OS entropy.
        galois_steps: ``"power_of_two"`` (default: every ±2^i and the column swap), a list of
            steps, or ``None`` for no Galois keys.
        special_primes: how many trailing primes of coeff_modulus are special primes (P).
        alpha: primes per key-switching digit (default: special_primes).
        relin_keys: create relinearization keys (default True).

    Raises:
        ValueError: invalid parameters (the message names the parameter).
        RuntimeError: CUDA requested but unavailable.
    """

    def __init__(
        self,
        scheme: str = "bfv",
        poly_modulus_degree: int = 8192,
        plain_modulus: int | None = 65537,
        coeff_modulus: Sequence[int] | None = None,
        mul_method: str = "hps",
        device: str | None = "auto",
        security: int | None = 128,
        seed: int | None = None,
        galois_steps: str | Sequence[int] | None = "power_of_two",
        special_primes: int = 1,
        alpha: int | None = None,
        relin_keys: bool = True,
    ) -> None:
        if scheme not in ("bfv", "bgv"):
            raise ValueError(f"scheme: expected 'bfv' or 'bgv', got {scheme!r}")
        self.scheme = scheme
        n = int(poly_modulus_degree)
        if coeff_modulus is None:
            coeff_modulus = _core.CoeffModulus.bfv_default(n, 128 if security is None else security)
        t = _core.PlainModulus.batching(n, 20) if plain_modulus is None else int(plain_modulus)
        params = build_params(scheme, n, coeff_modulus, t, special_primes, alpha,
                              mul_method if scheme == "bfv" else None, security)
        self._setup(params, device, security, seed, galois_steps, relin_keys)
        self.encoder = _core.BatchEncoder(self.context)

    @property
    def plain_modulus(self) -> int:
        return self.context.plain_modulus

    @property
    def slot_count(self) -> int:
        """Number of slots (N): two rows of N/2."""
        return self.encoder.slot_count

    @property
    def row_size(self) -> int:
        return self.encoder.row_size

    # ---- encoding -------------------------------------------------------------------------
    def _slots(self, values: ArrayLike) -> np.ndarray:
        arr = np.asarray(values)
        if arr.ndim == 0:
            arr = np.full(self.slot_count, int(arr), dtype=np.int64)
        if arr.ndim != 1:
            raise ValueError(
                f"values: expected a 1-D array of at most {self.slot_count} integers, "
                f"got shape {arr.shape}")
        if arr.size > self.slot_count:
            raise ValueError(f"values: expected at most {self.slot_count} slots, got {arr.size}")
        if arr.dtype.kind not in "iub":
            raise TypeError(f"values: expected integers, got dtype {arr.dtype}")
        return arr

    def encode(self, values: ArrayLike) -> _core.Plaintext:
        """Encodes up to N integers in [-(t-1)/2, t) into a plaintext on this context's device.

        A scalar fills every slot. Negative values are read mod t. Raises ValueError for values
        outside that range or too many slots, TypeError for non-integers.
        """
        if isinstance(values, _core.Plaintext):
            return values
        arr = self._slots(values)
        t = self.plain_modulus
        if arr.dtype.kind == "u":
            if arr.size and int(arr.max()) >= t:
                raise ValueError(f"values: expected entries below plain_modulus {t}, got {int(arr.max())}")
            return self.encoder.encode_unsigned(np.ascontiguousarray(arr, dtype=np.uint64), self.device)
        a = np.ascontiguousarray(arr, dtype=np.int64)
        if a.size and (int(a.max()) >= t or int(a.min()) < -((t - 1) // 2)):
            raise ValueError(
                f"values: expected entries in [-(t-1)/2, t) with plain_modulus t = {t}, "
                f"got range [{int(a.min())}, {int(a.max())}]")
        wrapped = np.where(a < 0, a + t, a).astype(np.uint64)
        return self.encoder.encode_unsigned(wrapped, self.device)

    def decode(self, plain: _core.Plaintext, signed: bool = True) -> np.ndarray:
        """N slot values as int64: centered into (-t/2, t/2] if ``signed``, else in [0, t)."""
        if signed:
            return self.encoder.decode_signed(plain)
        return self.encoder.decode_unsigned(plain).astype(np.int64)

    # ---- encryption -----------------------------------------------------------------------
    def encrypt(self, values: ArrayLike | _core.Plaintext) -> Ciphertext:
        """Encrypts a plaintext or up to N integers (public-key encryption)."""
        return Ciphertext(self, self.encryptor.encrypt(self.encode(values)))

    def decrypt(self, ct: Ciphertext, signed: bool = True) -> np.ndarray:
        """Decrypts to N int64 slot values. Raises ValueError without the secret key."""
        self._need_secret()
        return self.decode(self.decryptor.decrypt(self._raw(ct)), signed)

    def noise_budget(self, ct: Ciphertext) -> int:
        """Invariant noise budget in bits (SEAL's definition); needs the secret key."""
        self._need_secret()
        return self.decryptor.invariant_noise_budget(self._raw(ct))

    def _raw(self, ct) -> _core.Ciphertext:
        if isinstance(ct, Ciphertext):
            if ct.ctx.context.parameter_hash != self.context.parameter_hash:
                raise ValueError("ct: belongs to a different context")
            return ct.raw
        if isinstance(ct, _core.Ciphertext):
            return ct
        raise TypeError(f"ct: expected a veil Ciphertext, got {type(ct).__name__}")


class BFVContext(IntegerContext):
    """BFV context (see :class:`IntegerContext` for the arguments)."""

    def __init__(self, **kwargs) -> None:
        super().__init__(scheme="bfv", **kwargs)


class BGVContext(IntegerContext):
    """BGV context (see :class:`IntegerContext`; ``mul_method`` does not apply)."""

    def __init__(self, **kwargs) -> None:
        kwargs.pop("mul_method", None)
        super().__init__(scheme="bgv", **kwargs)


class Ciphertext(CiphertextBase):
    """An encrypted vector of N integer slots with arithmetic operators.

    ``a + b``, ``a - b``, ``-a``: slot-wise mod t. ``a * b`` multiplies and relinearizes.
    ``a + k`` / ``a * k`` with an int, an array or a Plaintext: plaintext operations.
    ``a ** e``: exponentiation by squaring. BGV ciphertexts also switch levels.
    """

    def __init__(self, ctx: IntegerContext, raw: _core.Ciphertext) -> None:
        self.ctx = ctx
        self.raw = raw

    def __repr__(self) -> str:
        return (f"veil.Ciphertext(scheme={self.ctx.scheme}, size={self.size}, "
                f"level={self.level}, device={self.device!r})")

    def _wrap(self, raw: _core.Ciphertext) -> Ciphertext:
        return Ciphertext(self.ctx, raw)

    def _other(self, other: Ciphertext) -> _core.Ciphertext:
        check_same_context(self, other)
        return other.raw

    def __add__(self, other) -> Ciphertext:
        ev = self.ctx.evaluator
        if isinstance(other, Ciphertext):
            return self._wrap(ev.add(self.raw, self._other(other)))
        return self._wrap(ev.add_plain(self.raw, self.ctx.encode(other)))

    __radd__ = __add__

    def __sub__(self, other) -> Ciphertext:
        ev = self.ctx.evaluator
        if isinstance(other, Ciphertext):
            return self._wrap(ev.sub(self.raw, self._other(other)))
        return self._wrap(ev.sub_plain(self.raw, self.ctx.encode(other)))

    def __rsub__(self, other) -> Ciphertext:
        return (-self) + other

    def __mul__(self, other) -> Ciphertext:
        ev = self.ctx.evaluator
        if isinstance(other, Ciphertext):
            return self._wrap(self._relin(ev.multiply(self.raw, self._other(other))))
        return self._wrap(ev.multiply_plain(self.raw, self.ctx.encode(other)))

    __rmul__ = __mul__

    def __pow__(self, exponent: int) -> Ciphertext:
        if not isinstance(exponent, (int, np.integer)) or exponent < 1:
            raise ValueError(f"exponent: expected an integer >= 1, got {exponent!r}")
        return self._wrap(self.ctx.evaluator.exponentiate(self.raw, int(exponent), self.ctx._rlk()))

    def _relin(self, raw: _core.Ciphertext) -> _core.Ciphertext:
        return self.ctx.evaluator.relinearize(raw, self.ctx._rlk()) if raw.size == 3 else raw

    def square(self) -> Ciphertext:
        return self._wrap(self._relin(self.ctx.evaluator.square(self.raw)))

    def relinearize(self) -> Ciphertext:
        return self._wrap(self._relin(self.raw))

    def rotate_rows(self, steps: int) -> Ciphertext:
        """Rotates both rows left by ``steps`` (negative: right)."""
        return self._wrap(self.ctx.evaluator.rotate_rows(self.raw, int(steps), self.ctx._gk()))

    def rotate_columns(self) -> Ciphertext:
        """Swaps the two rows."""
        return self._wrap(self.ctx.evaluator.rotate_columns(self.raw, self.ctx._gk()))


def bfv(**kwargs) -> BFVContext:
    """Creates a :class:`BFVContext` (see :class:`IntegerContext` for the arguments)."""
    return BFVContext(**kwargs)


def bgv(**kwargs) -> BGVContext:
    """Creates a :class:`BGVContext` (see :class:`IntegerContext` for the arguments)."""
    return BGVContext(**kwargs)
