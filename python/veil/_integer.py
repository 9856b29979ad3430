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

import copy
import re
from collections.abc import Sequence
from typing import Any, Union, cast

import numpy as np

from . import _check, _core, _errors, _params
from ._device import array_device
from ._base import (
    _CIPHERTEXT_CLASSES,
    _CONTEXT_CLASSES,
    _INTEGER_CLASSES,
    CiphertextBase,
    KeyedContext,
    build_params,
    check_degree,
    check_same_context,
)

ArrayLike = Union[Sequence[int], np.ndarray]


def _default_chain(n: int, security: int | None) -> list[int]:
    """SEAL's BFVDefault(N) chain (for ``security`` None: the 128-bit one)."""
    try:
        return list(_core.CoeffModulus.bfv_default(n, 128 if security is None else security))
    except ValueError as e:
        raise ValueError(f"poly_modulus_degree: no default coeff_modulus for N = {n} at "
                         f"security {security} ({e}); pass coeff_modulus explicitly") from None


def _default_plain_modulus(n: int, coeff_modulus, special_primes, security,
                           default_chain: bool) -> int:
    """65537, unless the default chain's ciphertext modulus Q is too small for it (N = 1024):
    then the largest batching prime that leaves >= 3 bits of noise budget in a fresh BFV
    ciphertext (estimated as log2 Q - log2 t - log2 N; measured at N = 1024: 14 bits)."""
    if not default_chain:
        return 65537
    primes = [int(q) for q in coeff_modulus]
    sp = (0 if len(primes) == 1 else 1) if special_primes is None else _check.integer(
        special_primes, "special_primes", 0, len(primes) - 1)
    q_bits = sum(q.bit_length() for q in primes[:len(primes) - sp])
    max_bits = q_bits - (n.bit_length() - 1) - 3
    if max_bits >= 17:
        return 65537
    for bits in range(min(max_bits, 16), 1, -1):
        try:
            return int(_core.PlainModulus.batching(n, bits))
        except ValueError:  # no NTT-friendly prime of that size for this N
            continue
    raise ValueError(
        f"plain_modulus: no batching plain modulus leaves a noise budget with the {q_bits}-bit "
        f"ciphertext modulus of the default chain for poly_modulus_degree {n} at security "
        f"{security}; use a larger poly_modulus_degree or pass coeff_modulus and plain_modulus")


def _choose_integer(scheme: str, depth, plain_bits, poly_modulus_degree, coeff_modulus,
                    plain_modulus, security, special_primes, alpha):
    """``plain_bits`` checked, and the :class:`veil._params.Choice` for ``depth=`` (None
    without it, or with an explicit coeff_modulus, checked against the request once built).
    ValueError naming the argument that contradicts another."""
    if plain_bits is not None:
        plain_bits = _check.integer(plain_bits, "plain_bits", 2, 60)
        if plain_modulus is not None:
            t = _check.integer(plain_modulus, "plain_modulus", 2, 2**60 - 1)
            if t.bit_length() != plain_bits:
                raise ValueError(f"plain_bits: {plain_bits} contradicts plain_modulus {t} "
                                 f"({t.bit_length()} bits); pass one of them")
    if depth is None or coeff_modulus is not None:
        return plain_bits, None
    for name, value in (("special_primes", special_primes), ("alpha", alpha)):
        if value is not None and value != 1:
            raise ValueError(f"{name}: depth= builds a chain with one special prime (alpha 1), "
                             f"got {name}={_check.show(value)}; pass coeff_modulus as well to "
                             "lay out your own chain")
    n = None if poly_modulus_degree is None else check_degree(poly_modulus_degree)
    given_t = None if plain_modulus is None else _check.integer(plain_modulus, "plain_modulus",
                                                                2, 2**60 - 1)
    return plain_bits, _params.choose_integer(scheme, depth, plain_bits, security, n, given_t)


class IntegerContext(KeyedContext):
    """The shared base of :class:`BFVContext` and :class:`BGVContext`: parameters and keys on
    one device. Create contexts with ``veil.bfv(...)`` or ``veil.bgv(...)``; arguments are
    keyword-only.

    Args:
        poly_modulus_degree: N, a power of two in 2^10..2^17: N slots (default 8192).
        plain_modulus: t; batching needs a prime t = 1 mod 2N (default 65537, or a smaller
            batching prime where 65537 leaves too little noise budget).
        coeff_modulus: the primes of Q then the special primes, as primes or bit sizes
            (default: SEAL's BFVDefault(N) chain).
        mul_method: BFV only: ``"hps"`` (default) or ``"behz"``.
        device: ``"auto"`` (the GPU when present), ``"cpu"``, ``"cuda"`` or ``"cuda:k"``.
        security: 128 (default), 192 or 256 bits; ``None`` disables the check.
        seed: fixes all randomness (tests and reproducible runs only); default: OS entropy.
        galois_steps: rotation keys made now (default: each on first use).
        encoding: ``"batch"`` (default: N slots mod t) or ``"coefficients"`` (SEAL's
            plaintexts without batching: polynomials mod t, for any t >= 2).
        special_primes, alpha, relin_keys, word_bits: advanced. Every argument, its default and
            its rules: the user guide's page "BFV and BGV", section "A context and its keys"
            (docs/guide/bfv-bgv.md).

    Raises:
        ValueError: invalid parameters (the message names the parameter).
        RuntimeError: CUDA requested but unavailable.
    """

    def __init__(
        self,
        *,
        depth: int | None = None,
        plain_bits: int | None = None,
        poly_modulus_degree: int | None = None,
        plain_modulus: int | None = None,
        coeff_modulus: Sequence[int] | None = None,
        mul_method: str | None = None,
        device: str | None = "auto",
        security: int | None = 128,
        seed: int | None = None,
        galois_steps: str | Sequence[int] | None = "default",
        special_primes: int | None = None,
        alpha: int | None = None,
        relin_keys: bool | None = None,
        encoding: str = "batch",
        word_bits: int | None = None,
        max_key_bytes: int | None = None,
    ) -> None:
        scheme = self.scheme
        if scheme not in ("bfv", "bgv"):
            raise TypeError("IntegerContext: instantiate veil.bfv (BFVContext) or veil.bgv "
                            "(BGVContext)")
        if encoding not in ("batch", "coefficients"):
            raise ValueError(f"encoding: expected 'batch' or 'coefficients', got {encoding!r}")
        if mul_method is None and scheme == "bfv":
            mul_method = "hps"
        security = _check.security(security)
        plain_bits, choice = _choose_integer(scheme, depth, plain_bits, poly_modulus_degree,
                                             coeff_modulus, plain_modulus, security,
                                             special_primes, alpha)
        n = check_degree(8192 if poly_modulus_degree is None else poly_modulus_degree)
        if choice is not None:
            n, coeff_modulus, plain_modulus = choice.n, choice.coeff_modulus, choice.plain_modulus
        elif plain_bits is not None and plain_modulus is None:
            plain_modulus = _params.plain_for_bits(n, plain_bits)
        default_chain = coeff_modulus is None
        if default_chain:
            coeff_modulus = _default_chain(n, security)
        if plain_modulus is None:
            plain_modulus = _default_plain_modulus(n, coeff_modulus, special_primes, security,
                                                   default_chain)
        params = build_params(scheme, n, coeff_modulus, plain_modulus, special_primes, alpha,
                              mul_method if scheme == "bfv" else None, security, word_bits)
        requested = None
        if choice is None and depth is not None:  # the given chain must hold what was asked
            primes = list(params.coeff_modulus)
            requested = _params.check_integer_given(
                scheme, depth, n, primes[:len(primes) - params.special_primes],
                params.plain_modulus)
        self._setup(params, device, security, seed, galois_steps, relin_keys,
                    require_batching=encoding == "batch", max_key_bytes=max_key_bytes)
        self._needs = (choice.requested, choice.why) if choice is not None else (
            (requested, None) if requested is not None else None)
        self._init_options({"encoding": encoding})

    def _options(self) -> dict:
        return {"encoding": self.encoding}

    def _init_options(self, options: dict) -> None:
        encoding = options.get("encoding", "batch")
        if encoding not in ("batch", "coefficients"):
            raise ValueError(f"encoding: expected 'batch' or 'coefficients', got {encoding!r}")
        self.encoding = encoding
        self.encoder = _core.BatchEncoder(self.context) if encoding == "batch" else None

    @property
    def plain_modulus(self) -> int:
        return self.context.plain_modulus

    @property
    def slot_count(self) -> int:
        """Number of slots (N): two rows of N/2 (batching); N coefficients otherwise."""
        return self.poly_modulus_degree

    @property
    def row_size(self) -> int:
        return self.poly_modulus_degree // 2

    # ---- encoding -------------------------------------------------------------------------
    def _slots(self, values: ArrayLike, name: str = "values") -> np.ndarray:
        """``values`` as a 1-D integer array of at most N entries (a scalar fills every slot
        with batching; it is the constant polynomial with coefficient encoding).

        Only integers: Python ints and numpy integer arrays or scalars. A float (even 2.0), a
        bool, a string or an object that is not an integer raises TypeError naming ``name``;
        an integer outside [-(t-1)/2, t) raises ValueError (never OverflowError).
        """
        mixed = _errors.ciphertext_as_values(self, name, values)
        if mixed is not None:
            raise mixed
        if isinstance(values, (str, bytes)):
            hint = "" if self.encoding == "coefficients" or isinstance(values, bytes) else (
                " (a polynomial string needs encoding='coefficients')")
            raise TypeError(f"{name}: expected integers, got {_check.show(values)}{hint}")
        try:
            arr = np.asarray(values)
        except (ValueError, TypeError) as e:  # ragged nesting and the like
            raise ValueError(f"{name}: expected a 1-D array of integers ({e})") from None
        if arr.ndim > 1:
            raise ValueError(
                f"{name}: expected a 1-D array of at most {self.slot_count} integers, "
                f"got shape {arr.shape}{_errors.FLATTEN}")
        if arr.ndim == 1 and arr.size == 0:
            arr = np.zeros(0, dtype=np.int64)  # [] is float64 to numpy: no value to check
        elif arr.dtype.kind == "O":
            for v in arr.reshape(-1):
                if not _check.is_integer(v):
                    raise TypeError(f"{name}: expected integers, got {_check.show(v)}")
            flat = [int(v) for v in arr.reshape(-1)]
            self._check_range(min(flat), max(flat), name)
            arr = np.array(flat, dtype=np.int64).reshape(arr.shape)
        elif arr.dtype.kind not in "iu":
            got = f"dtype {arr.dtype}" if arr.ndim else _check.show(
                arr[()] if isinstance(values, np.ndarray) else values)
            hint = " (use .astype(int) for a 0/1 mask)" if arr.dtype.kind == "b" else ""
            real = _errors.INTEGERS_ONLY if arr.dtype.kind in "fc" else ""
            raise TypeError(f"{name}: expected integers (int or a numpy integer array{real}), "
                            f"got {got}{hint}")
        if arr.ndim == 0:
            count = self.slot_count if self.encoding == "batch" else 1
            arr = np.full(count, arr[()], dtype=arr.dtype)
        if arr.size > self.slot_count:
            raise _errors.too_many_values(self, name, arr.size)
        return arr

    def encode(self, values: ArrayLike | str | _core.Plaintext) -> _core.Plaintext:
        """Encodes up to N integers in [-(t-1)/2, t) into a plaintext on this context's device.

        Batching: slot values; a scalar fills every slot. Coefficient encoding: polynomial
        coefficients (index i is the coefficient of x^i); a scalar is the constant polynomial;
        a string is read in SEAL's hex form ("1x^3 + 2Fx^1 + 3"). Negative values are read
        mod t. Raises ValueError for values outside that range or too many slots, TypeError
        for non-integers (floats, bools, strings with batching).
        """
        return self._encode(values, "values")

    def encode_ntt(self, values: ArrayLike | str | _core.Plaintext,
                   level: int | None = None) -> _core.Plaintext:
        """Encodes ``values`` (as :meth:`encode`) and prepares the plaintext for products: lifted
        to the chain's primes at ``level`` and put in NTT form, once, so that every ``x * p`` and
        :meth:`multiply_plain_sum` at that level skips that work (SEAL's
        ``Evaluator.transform_to_ntt(plain, parms_id)``). Reuse it; it serves products only
        (``x + p`` needs :meth:`encode`'s form).

        Args:
            values: what :meth:`encode` takes, or a plaintext from it.
            level: the level of the ciphertexts it will multiply (default: the top, where
                :meth:`encrypt` puts them; BGV ciphertexts move down with ``mod_switch``).

        Raises:
            ValueError: ``level`` outside 0..max level, or what :meth:`encode` raises.
        """
        plain = self._encode(values, "values")
        top = self.context.max_level
        level = top if level is None else _check.integer(level, "level", 0, top)
        return self.evaluator.transform_to_ntt(plain, level)

    @_errors.user_operation("ctx.multiply_plain_sum(xs, ps)")
    def multiply_plain_sum(self, cts: Sequence[Ciphertext],
                           plains: Sequence[ArrayLike | _core.Plaintext]) -> Ciphertext:
        """``sum_i cts[i] * plains[i]`` in one pass, like OpenFHE's ``EvalLinearWSum`` with
        plaintext weights: one accumulator in NTT form (BFV ciphertexts enter it once each and
        the sum leaves it once), the same words as the ``*`` and ``+`` chain. Plaintexts from
        :meth:`encode_ntt` at the ciphertexts' level skip their lift and transform as well.

        Args:
            cts: one or more ciphertexts of this context at one level.
            plains: one plaintext (or vector of integers, encoded as for ``x * v``) per
                ciphertext.

        Raises:
            ValueError: no ciphertexts, a count mismatch, ciphertexts at different levels or
                of another context, a prepared plaintext at another level.
        """
        cts = list(cts)
        plains = list(plains)
        if not cts:
            raise ValueError("cts: expected at least one ciphertext")
        if len(plains) != len(cts):
            raise ValueError(f"plains: expected {len(cts)} plaintexts (one per ciphertext), "
                             f"got {len(plains)}")
        for c in cts:
            if not isinstance(c, Ciphertext):
                raise TypeError(f"cts: expected veil ciphertexts, got {type(c).__name__}")
            _core.check_same_context(self.context, c.raw, "cts")
        raws = [c.raw for c in cts]
        pts = [c._plain(p) for c, p in zip(cts, plains)]
        return cts[0]._wrap(self.evaluator.multiply_plain_sum(raws, pts))

    def _encode(self, values, name: str) -> _core.Plaintext:
        """:meth:`encode`, naming the argument ``name`` in errors (operators: ``other``)."""
        if isinstance(values, _core.Plaintext):
            return values
        if array_device(values, self.device, name) is not None:  # GPU array: no host copy
            if self.encoding != "batch":
                raise ValueError(f"{name}: GPU arrays are encoded with batching only "
                                 "(encoding='batch')")
            assert self.encoder is not None  # batching
            return self.encoder.encode_array(values)
        if self.encoding == "coefficients":
            if isinstance(values, str):
                coeffs = parse_poly(values, self.plain_modulus, self.poly_modulus_degree, name)
            else:
                coeffs = self._residues(self._slots(values, name), name)
            return _core.Plaintext.from_coefficients(self.context, coeffs, self.device)
        assert self.encoder is not None  # batching
        return self.encoder.encode_unsigned(self._residues(self._slots(values, name), name),
                                            self.device)

    def _check_range(self, lo: int, hi: int, name: str) -> None:
        t = self.plain_modulus
        if hi >= t or lo < -((t - 1) // 2):
            raise _errors.out_of_plain_range(self, name)

    def _residues(self, arr: np.ndarray, name: str = "values") -> np.ndarray:
        """Integers in [-(t-1)/2, t) as uint64 residues mod t (slots or coefficients alike)."""
        t = self.plain_modulus
        if arr.size:
            self._check_range(int(arr.min()), int(arr.max()), name)
        if arr.dtype.kind == "u":
            return np.ascontiguousarray(arr, dtype=np.uint64)
        a = np.ascontiguousarray(arr, dtype=np.int64)
        return np.where(a < 0, a + t, a).astype(np.uint64)

    def decode(self, plain: _core.Plaintext, signed: bool = True) -> np.ndarray:
        """N int64 values (slots with batching, coefficients otherwise): centered into
        (-t/2, t/2] if ``signed``, else in [0, t)."""
        signed = _check.flag(signed, "signed")
        if self.encoding == "coefficients":
            c = plain.coefficients().astype(np.int64)
            if signed:
                t = self.plain_modulus
                c = np.where(c > t // 2, c - t, c)
            return c
        assert self.encoder is not None  # batching
        if signed:
            return self.encoder.decode_signed(plain)
        return self.encoder.decode_unsigned(plain).astype(np.int64)

    def decode_string(self, plain: _core.Plaintext) -> str:
        """A coefficient plaintext in SEAL's hex form (``"1x^3 + 2Fx^1 + 3"``)."""
        return format_poly(plain.coefficients())

    @_errors.user_operation("ctx.decrypt_string(x)")
    def decrypt_string(self, ct: Ciphertext) -> str:
        """Decrypts to SEAL's hex form of the plaintext polynomial (coefficient encoding)."""
        return self.decode_string(self._need_secret().decrypt(self._raw(ct)))

    # ---- encryption -----------------------------------------------------------------------
    def encrypt(self, values: ArrayLike | str | _core.Plaintext, symmetric: bool = False) -> Ciphertext:
        """Encrypts a plaintext or up to N integers.

        Public-key encryption by default; ``symmetric=True`` encrypts with the secret key
        (client side), whose ciphertexts serialize seeded: half the bytes.

        The ciphertext remembers its length (``len(ct)``: how many values ``decrypt``
        returns): the number of values, or N for a scalar (every slot holds it), a Plaintext
        or coefficient encoding (N coefficients).
        """
        length = None
        if self.encoding == "batch" and not isinstance(values, _core.Plaintext):
            if array_device(values, self.device, "values") is not None:
                length = len(cast(Any, values))
            else:
                values = self._slots(cast(Any, values), "values")  # a scalar fills every slot
                length = values.size
        return Ciphertext(self, self._encrypt_raw(self.encode(values), symmetric), length)

    @_errors.user_operation("ctx.decrypt(x)")
    def decrypt(self, ct: Ciphertext, signed: bool = True, out: Any = None) -> Any:
        """Decrypts to ``len(ct)`` int64 slot values (the encrypted length: N for a ciphertext
        that fills every slot, a raw ciphertext, or coefficient encoding, whose N coefficients
        all come back). Raises ValueError without the secret key.

        ``out``: a writable 1-D array of N int64 (centered values) or uint64 (in [0, t)) slots on
        the ciphertext's device (any DLPack array, e.g. a CuPy array or a torch CUDA tensor):
        every slot is written there with no copy through the host and ``out`` is returned (its
        dtype, not ``signed``, chooses the range). Batching only."""
        decryptor = self._need_secret()
        if out is not None:
            if self.encoding != "batch":
                raise ValueError("out: decoding into an array needs batching (encoding='batch')")
            assert self.encoder is not None  # batching
            self.encoder.decode_into(decryptor.decrypt(self._raw(ct)), out)
            return out
        values = self.decode(decryptor.decrypt(self._raw(ct)), signed)
        if isinstance(ct, Ciphertext) and len(ct) < values.size:
            return values[:len(ct)].copy()
        return values

    @_errors.user_operation("ctx.noise_budget(x)")
    def noise_budget(self, ct: Ciphertext) -> int:
        """Invariant noise budget in bits (SEAL's definition); needs the secret key."""
        return self._need_secret().invariant_noise_budget(self._raw(ct))

    def _raw(self, ct) -> _core.Ciphertext:
        if isinstance(ct, Ciphertext):
            _core.check_same_context(self.context, ct.raw, "ct")
            return ct.raw
        if isinstance(ct, _core.Ciphertext):
            return ct
        raise _errors.wrong_ciphertext(self, "ct", ct, "a veil Ciphertext")


class BFVContext(IntegerContext):
    """A BFV context (Fan-Vercauteren 2012 in full RNS): exact arithmetic on vectors of N
    integers mod t. ``veil.bfv`` is this class.

    Main arguments (keyword-only; all of them: :class:`IntegerContext`, and the user guide's
    page "BFV and BGV", docs/guide/bfv-bgv.md): ``poly_modulus_degree`` (N, default 8192),
    ``plain_modulus`` (t, default 65537), ``coeff_modulus`` (default: SEAL's BFVDefault(N)),
    ``device`` (default ``"auto"``), ``security`` (default 128), ``mul_method`` (``"hps"`` or
    ``"behz"``) and ``encoding`` (``"batch"`` or ``"coefficients"``).
    """

    scheme = "bfv"


class BGVContext(IntegerContext):
    """A BGV context (Brakerski-Gentry-Vaikuntanathan 2012): exact arithmetic on vectors of N
    integers mod t, with modulus switching. ``veil.bgv`` is this class.

    Main arguments (keyword-only; all of them: :class:`IntegerContext`, and the user guide's
    page "BFV and BGV", docs/guide/bfv-bgv.md): ``poly_modulus_degree`` (N, default 8192),
    ``plain_modulus`` (t, default 65537), ``coeff_modulus`` (default: SEAL's BFVDefault(N)),
    ``device`` (default ``"auto"``), ``security`` (default 128) and ``encoding``. BFV's
    ``mul_method`` is accepted and ignored, so BFV and BGV take the same arguments.
    """

    scheme = "bgv"


class Ciphertext(CiphertextBase):
    """An encrypted vector of up to N integer slots (BFV or BGV) with arithmetic operators.

    ``a + b``, ``a - b``, ``-a``: slot-wise mod t. ``a * b`` multiplies and relinearizes.
    ``a + k`` / ``a * k`` with an int, an array or a Plaintext: plaintext operations.
    ``a ** e``: exponentiation by squaring. BGV ciphertexts also switch levels. ``len(a)`` and
    ``a.shape``: the encrypted length (:class:`veil._base.CiphertextBase`); ``length``: how
    many leading slots hold the vector (default None: every slot, N; coefficient encoding is
    always N).
    """

    ctx: IntegerContext

    def __init__(self, ctx: IntegerContext, raw: _core.Ciphertext,
                 length: int | None = None) -> None:
        self.ctx = ctx
        self.raw = raw
        self._init_length(length if ctx.encoding == "batch" else None)

    def _full_length(self) -> int:
        return self.ctx.slot_count

    def __repr__(self) -> str:
        return (f"veil.Ciphertext(scheme={self.ctx.scheme}, len={len(self)}, size={self.size}, "
                f"level={self.level}, device={self.device!r})")

    def _wrap(self, raw: _core.Ciphertext) -> Ciphertext:
        out = copy.copy(self)  # same context and length
        out.raw = raw
        return out

    def _other(self, other: Ciphertext) -> _core.Ciphertext:
        check_same_context(self, other)
        self._same_length(other)
        return other.raw

    def _plain(self, other) -> _core.Plaintext:
        """A plaintext operand encoded (with batching, a vector must have ``len(self)``; the
        encoder's type and range errors come first)."""
        plain = self.ctx._encode(other, "other")
        if self.ctx.encoding == "batch":
            self._check_vector(other)
        return plain

    @_errors.user_operation("x + {y}")
    def __add__(self, other) -> Ciphertext:
        ev = self.ctx.evaluator
        if isinstance(other, Ciphertext):
            return self._wrap(ev.add(self.raw, self._other(other)))
        return self._wrap(ev.add_plain(self.raw, self._plain(other)))

    __radd__ = __add__

    @_errors.user_operation("x - {y}")
    def __sub__(self, other) -> Ciphertext:
        ev = self.ctx.evaluator
        if isinstance(other, Ciphertext):
            return self._wrap(ev.sub(self.raw, self._other(other)))
        return self._wrap(ev.sub_plain(self.raw, self._plain(other)))

    @_errors.user_operation("c - x")
    def __rsub__(self, other) -> Ciphertext:
        return (-self) + other

    @_errors.user_operation("x * {y}")
    def __mul__(self, other) -> Ciphertext:
        ev = self.ctx.evaluator
        if isinstance(other, Ciphertext):
            return self._wrap(self._relin(ev.multiply(self.raw, self._other(other))))
        return self._wrap(ev.multiply_plain(self.raw, self._plain(other)))

    __rmul__ = __mul__

    def __truediv__(self, other):
        raise TypeError(
            f"other: x / c is not defined for {self.ctx.scheme.upper()} ciphertexts, which hold "
            "integers mod t (plain_modulus); for exact division of multiples of c multiply by "
            "the inverse mod t: x * pow(c, -1, ctx.plain_modulus); for real numbers use CKKS")

    @_errors.user_operation(_errors.power_name)
    def __pow__(self, exponent: int) -> Ciphertext:
        exponent = _check.integer(exponent, "exponent", 1, 2**64 - 1)
        return self._wrap(self.ctx.evaluator.exponentiate(self.raw, exponent, self.ctx._rlk()))

    def _relin(self, raw: _core.Ciphertext) -> _core.Ciphertext:
        return self.ctx.evaluator.relinearize(raw, self.ctx._rlk()) if raw.size == 3 else raw

    @_errors.user_operation("x.square()")
    def square(self) -> Ciphertext:
        return self._wrap(self._relin(self.ctx.evaluator.square(self.raw)))

    @_errors.user_operation("x.relinearize()")
    def relinearize(self) -> Ciphertext:
        return self._wrap(self._relin(self.raw))

    def _need_batching(self, op: str) -> None:
        if self.ctx.encoding != "batch":
            raise ValueError(f"{op}: slot rotations need batching (encoding='batch'); "
                             "use apply_galois for automorphisms of coefficient plaintexts")

    @_errors.user_operation(_errors.method_name("rotate_rows"))
    def rotate_rows(self, steps: int) -> Ciphertext:
        """Rotates both rows left by ``steps`` (negative: right); |steps| < N/2 (not wrapped)."""
        self._need_batching("rotate_rows")
        steps = _check.step(steps, self.ctx.poly_modulus_degree)
        if steps == 0:  # the identity, as SEAL's (no Galois key needed)
            return self._wrap(self.raw.__copy__())
        return self._wrap(self.ctx.evaluator.rotate_rows(self.raw, steps, self.ctx._gk([steps])))

    @_errors.user_operation(_errors.method_name("rotate"))
    def rotate(self, steps: int) -> Ciphertext:
        """:meth:`rotate_rows` (SEAL's batching: a 2 x N/2 matrix whose rows turn separately).
        For a vector of at most N/2 values (row 0) this is CKKS's ``rotate``: the N/2 slots of
        the row turn left by ``steps`` (negative: right), the length is kept and the slots
        after the vector (zeros after encryption) move in, so ``x.rotate(k).decrypt()`` is
        ``np.roll(row0, -k)[:len(x)]``; values of a longer vector stay in their row."""
        return self.rotate_rows(steps)

    @_errors.user_operation("x.rotate_columns()")
    def rotate_columns(self) -> Ciphertext:
        """Swaps the two rows. The result has length N (a vector in row 0 moves to row 1)."""
        self._need_batching("rotate_columns")
        out = self._wrap(self.ctx.evaluator.rotate_columns(self.raw, self.ctx._gk(columns=True)))
        return out._resized(self.ctx.slot_count)

    @_errors.user_operation(_errors.method_name("apply_galois"))
    def apply_galois(self, galois_elt: int) -> Ciphertext:
        """Applies x -> x^galois_elt (odd, < 2N) and switches back to the secret key."""
        galois_elt = _check.integer(galois_elt, "galois_elt", 1, 2 * self.ctx.poly_modulus_degree - 1)
        if galois_elt % 2 == 0:
            raise ValueError(f"galois_elt: expected an odd element below 2N, got {galois_elt}")
        ctx = self.ctx
        if ctx.secret_key is not None and ctx.context.special_primes:
            ctx._generate_galois([galois_elt])  # on demand, as rotations
        return self._wrap(ctx.evaluator.apply_galois(self.raw, galois_elt, ctx._gk()))

    @classmethod
    def _make(cls, ctx, raw, extra=None, info=None) -> Ciphertext:
        return cls(ctx, raw, None if info is None else int(info[0]))


_TERM = re.compile(r"^([0-9A-Fa-f]+)(?:x\^([0-9]+))?$")


def parse_poly(text: str, t: int, n: int, name: str = "values") -> np.ndarray:
    """Coefficients (uint64, length N) of a polynomial in SEAL's hex form: terms
    ``<hex coefficient>x^<decimal exponent>`` joined by " + ", highest exponent first, the
    constant term written without ``x^0`` (e.g. ``"1x^3 + 2Fx^1 + 3"``).

    Raises ValueError naming the term that is malformed, out of order, has an exponent >= N or
    a coefficient >= t.
    """
    if not isinstance(text, str):
        raise TypeError(f"{name}: expected a polynomial string, got {type(text).__name__}")
    coeffs = np.zeros(n, dtype=np.uint64)
    s = text.strip()
    if s == "" or s == "0":
        return coeffs
    last = None
    for term in s.split(" + "):
        m = _TERM.match(term.strip())
        if m is None:
            raise ValueError(f"{name}: malformed term {term!r} in polynomial {text!r}")
        c = int(m.group(1), 16)
        e = int(m.group(2)) if m.group(2) is not None else 0
        if e >= n:
            raise ValueError(f"{name}: exponent {e} in {term!r} must be below N = {n}")
        if last is not None and e >= last:
            raise ValueError(f"{name}: terms must have strictly decreasing exponents ({term!r})")
        if c >= t:
            raise ValueError(f"{name}: coefficient {c} in {term!r} must be below t = {t}")
        coeffs[e] = c
        last = e
    return coeffs


def format_poly(coeffs) -> str:
    """SEAL's hex form of a coefficient vector (zero terms omitted; "0" for zero)."""
    terms = []
    for e in range(len(coeffs) - 1, -1, -1):
        c = int(coeffs[e])
        if c:
            terms.append(f"{c:X}" if e == 0 else f"{c:X}x^{e}")
    return " + ".join(terms) if terms else "0"


#: ``veil.bfv(poly_modulus_degree=..., plain_modulus=..., ...)`` creates a :class:`BFVContext`
#: (the factory is the class: ``help(veil.bfv)`` shows every parameter).
bfv = BFVContext
#: ``veil.bgv(...)`` creates a :class:`BGVContext`.
bgv = BGVContext

_CONTEXT_CLASSES.update(bfv=BFVContext, bgv=BGVContext)
_INTEGER_CLASSES.update(bfv=BFVContext, bgv=BGVContext)
_CIPHERTEXT_CLASSES.update(bfv=Ciphertext, bgv=Ciphertext)
