"""Pythonic CKKS: approximate arithmetic on vectors of N/2 real or complex numbers.

Example::

    import numpy as np, veil
    ctx = veil.ckks(poly_modulus_degree=16384, scale=2**40, device="auto")
    x = ctx.encrypt(np.linspace(-1, 1, 8))
    y = x * x + 0.5                      # rescaled and aligned automatically
    print(ctx.decrypt(y)[:8])
    print(veil.ckks.precision(np.linspace(-1, 1, 8) ** 2 + 0.5, ctx.decrypt(y)[:8]))

Scheme: Cheon-Kim-Kim-Song (2017) in full RNS (Cheon-Han-Kim-Kim-Song 2018), canonical-embedding
encoding with SEAL's slot order (generator 3), rescaling by the last prime, hybrid key switching
(Han-Ki 2020). Scales follow SEAL's rules: add/sub need equal scales (relative tolerance 1e-6),
multiply multiplies them, rescale divides by the dropped prime.

``auto_rescale=True`` (the default) rescales after every multiplication and aligns the operands
of binary operations: the one at the higher level is brought to the other's level and exact
scale (:func:`veil._tensor.align`), so ``x * x + x`` just works. ``auto_rescale=False`` gives
SEAL's manual control (``rescale()``, ``mod_switch_to``, ``set_scale``).
"""

from __future__ import annotations

import copy
import math
from collections.abc import Callable, Sequence
from typing import Any, Union, cast

import numpy as np
import numpy.typing as npt

from . import _bootstrap, _check, _core, _errors, _functions, _params, _tensor
from ._base import (
    _CIPHERTEXT_CLASSES,
    _CONTEXT_CLASSES,
    CiphertextBase,
    KeyedContext,
    build_params,
    check_degree,
    check_same_context,
)
from ._device import array_device

Values = Union[float, complex, Sequence[float], Sequence[complex], np.ndarray]


def default_ckks_chain(n: int, security: int | None) -> list[int]:
    """Bit sizes of the default CKKS chain for degree ``n``: 60 + k x 40 + 60 with the largest k
    within the security bound (Phantom's rows) where the bound allows k >= 1 (N >= 8192 at 128
    bits); below that (N = 4096: 109 bits) three primes [q0, s, P] filling the bound, with a
    scale prime of s = min(40, (bound - 19) // 3) bits (30 at N = 4096), q0 = s + 9 or more
    bits of headroom for the result of a multiplication and rescale, and P >= q0 (P must
    dominate every key-switching digit). The default scale is 2^s (:func:`default_scale`).

    Raises:
        ValueError naming poly_modulus_degree where the bound leaves no such chain with s >= 20
        (N = 1024 and 2048 at 128 bits).
    """
    sec = 128 if security is None else security
    bound = _core.CoeffModulus.max_bit_count(n, sec)
    if bound >= 160:
        return [60] + [40] * ((bound - 120) // 40) + [60]
    s = min(40, (bound - 19) // 3)
    if s < 20:
        raise ValueError(
            f"poly_modulus_degree: no default CKKS coeff_modulus for N = {n}: the {sec}-bit "
            f"security bound of {bound} bits leaves no room for a rescaling chain (a scale prime "
            "of >= 20 bits between two larger primes); use a larger poly_modulus_degree or pass "
            "coeff_modulus explicitly (with security=None to go past the bound)")
    q0 = (bound - s) // 2
    return [q0, s, bound - s - q0]


def default_ckks_chain_32(n: int, security: int | None) -> tuple[list[int], list[int], int]:
    """The default chain on 32-bit words for degree ``n``: (bit sizes, rescale blocks, special
    primes). Q: ~30-bit primes; P: k 31-bit special primes (k = bound // 150, so a digit of k
    Q primes stays below P and there are about 4-6 digits); q_0's block holds 2-4 primes (60-120
    bits) and the blocks above it alternate 1 and 2 primes from the top, so a 2^40 scale
    becomes about 2^50 after a one-prime rescale and 2^40 again after a two-prime one
    (multi-prime rescaling: Agrawal et al., WAHC 2023, eprint 2023/1462; per-level scales
    S_t = S_l^2 / D_l as Kim-Papadimitriou-Polyakov, CT-RSA 2022).

    Raises:
        ValueError naming poly_modulus_degree where the bound leaves no such chain (N < 8192
        at 128 bits).
    """
    sec = 128 if security is None else security
    bound = _core.CoeffModulus.max_bit_count(n, sec)
    k = bound // 150
    m = (bound - 31 * k) // 30 if k else 0
    if k < 1 or m < 5:
        raise ValueError(
            f"poly_modulus_degree: no default 32-bit CKKS chain for N = {n} within the {sec}-bit "
            f"bound of {bound} bits (it needs N >= 8192); pass word_bits=None or 64, or an "
            "explicit coeff_modulus")
    top_blocks = (m - 2) // 3  # (1, 2) pairs from the top
    q0 = m - 3 * top_blocks
    groups = [q0] + [2, 1] * top_blocks  # from q_0 up: ..., 2, 1 (the top block has 1 prime)
    return [30] * m + [31] * k, groups, k


def default_scale(chain_bits: list[int]) -> float:
    """2^(bits of the chain's scale primes) for a :func:`default_ckks_chain` chain."""
    return 2.0 ** chain_bits[1]


def precision(expected: npt.ArrayLike, got: npt.ArrayLike) -> dict[str, float]:
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
    """A CKKS context: parameters and keys on one device (``veil.ckks`` is this class).

    Encrypts vectors of up to N/2 real or complex numbers and computes on them approximately
    (``veil.ckks.precision`` measures the error). Arguments are keyword-only.

    Args:
        poly_modulus_degree: N, a power of two in 2^10..2^17; N/2 slots (default 16384).
        coeff_modulus: the primes of Q then the special primes, as primes or bit sizes
            (default: 60 + k x 40 + 60 bits, k levels of multiplication, k growing with N).
        scale: the encoding scale (default 2^40; 2^30 at N = 4096).
        device: ``"auto"`` (the GPU when present), ``"cpu"``, ``"cuda"`` or ``"cuda:k"``.
        security: 128 (default), 192 or 256 bits; ``None`` disables the check.
        auto_rescale: rescale every product and align operands' levels and scales (default
            True); False gives SEAL's manual rules (``rescale()``, ``mod_switch_to``).
        galois_steps: rotation keys made now (default: each on first use).
        bootstrapping: ``True`` or a :class:`veil.BootstrapConfig`: bootstrapping keys too.
        seed, special_primes, alpha, relin_keys, word_bits, rescale_groups: advanced. Every
            argument, its default and its rules: the user guide's page "CKKS, scales and
            levels", section "Context arguments" (docs/guide/ckks.md).

    Raises:
        ValueError: invalid parameters (the message names the argument).
        TypeError: an argument of the wrong type.
    """

    scheme = "ckks"
    #: The bootstrapper (:meth:`enable_bootstrapping`), or None.
    bootstrapper: _bootstrap.Bootstrapper | None = None
    #: :func:`veil._ckks.precision` (``veil.ckks.precision(expected, got)``).
    precision = staticmethod(precision)
    #: :func:`veil._bootstrap.bootstrap_chain` (``veil.ckks.bootstrap_chain(...)``).
    bootstrap_chain = staticmethod(_bootstrap.bootstrap_chain)

    def __init__(
        self,
        *,
        depth: int | None = None,
        precision: int | None = None,
        slots: int | None = None,
        poly_modulus_degree: int | None = None,
        coeff_modulus: Sequence[int] | None = None,
        scale: float | None = None,
        device: str | None = "auto",
        security: int | None = 128,
        seed: int | None = None,
        galois_steps: str | Sequence[int] | None = "default",
        special_primes: int | None = None,
        alpha: int | None = None,
        relin_keys: bool | None = None,
        auto_rescale: bool = True,
        word_bits: int | None = None,
        rescale_groups: Sequence[int] | None = None,
        bootstrapping: bool | _bootstrap.BootstrapConfig | None = False,
        max_key_bytes: int | None = None,
    ) -> None:
        security = _check.security(security)
        boot_config = _boot_config(bootstrapping)
        choice = _choose_ckks(depth, precision, slots, poly_modulus_degree, coeff_modulus, scale,
                              security, boot_config, special_primes, alpha, word_bits,
                              rescale_groups)
        n = check_degree(16384 if poly_modulus_degree is None else poly_modulus_degree)
        if choice is not None:
            n, coeff_modulus = choice.n, choice.coeff_modulus
            default = choice.scale
        elif boot_config is not None and coeff_modulus is None:
            chain = _bootstrap.preset_chain(n, security, boot_config,
                                            32 if word_bits == 32 else 64)
            coeff_modulus, default = chain.coeff_modulus, chain.scale
            if rescale_groups is None:
                rescale_groups = chain.rescale_groups
            if special_primes is None:
                special_primes = chain.special_primes
            if alpha is None:
                alpha = chain.alpha
        elif coeff_modulus is None and word_bits == 32:
            coeff_modulus, groups, k = default_ckks_chain_32(n, security)
            if rescale_groups is None:
                rescale_groups = groups
            if special_primes is None:
                special_primes = k
            default = 2.0**40
        elif coeff_modulus is None:
            coeff_modulus = default_ckks_chain(n, security)
            default = default_scale(coeff_modulus)
        else:
            default = 2.0**40
        if boot_config is not None and isinstance(galois_steps, str) and galois_steps == "default":
            galois_steps = None  # bootstrapping makes the keys its transforms need
        scale = default if scale is None else _check.scale(scale)
        auto_rescale = _check.flag(auto_rescale, "auto_rescale")
        params = build_params("ckks", n, coeff_modulus, None, special_primes, alpha, None, security,
                              word_bits, rescale_groups)
        primes = list(params.coeff_modulus)
        top_bits = sum(math.log2(q) for q in primes[:len(primes) - params.special_primes])
        _check.scale_fits(scale, top_bits, len(primes) - params.special_primes - 1)
        requested = None
        if choice is None and depth is not None:  # the given chain must hold what was asked
            nq = len(primes) - params.special_primes
            levels = len(rescale_groups) - 1 if rescale_groups is not None else nq - 1
            requested = _params.check_ckks_given(depth, precision, slots, n, levels, scale)
        self._setup(params, device, security, seed, galois_steps, relin_keys,
                    max_key_bytes=max_key_bytes)
        self._needs = (choice.requested, choice.why) if choice is not None else (
            (requested, None) if requested is not None else None)
        self._init_options({"scale": scale, "auto_rescale": auto_rescale})
        if boot_config is not None:
            self.enable_bootstrapping(boot_config, seed=seed)

    def enable_bootstrapping(self, config: _bootstrap.BootstrapConfig | None = None,
                             seed: int | None = None,
                             compact_keys: bool = False, per_level_keys: bool = True,
                             max_key_bytes: int | None = None) -> _bootstrap.Bootstrapper:
        """Generates the bootstrapping keys and transforms (:class:`veil.Bootstrapper`) for
        ``config`` (a :class:`veil.BootstrapConfig`; default: full slots) and returns the
        bootstrapper; :meth:`bootstrap` then refreshes ciphertexts. Needs the secret key and a
        chain with enough levels (:func:`veil.ckks.bootstrap_chain`). ``compact_keys``: Galois
        keys of half the bytes, their a_j regenerated where they are read; ``per_level_keys``:
        each key stores only the levels it serves (default); ``max_key_bytes``: the keys
        cheapest to regenerate become compact until the keys fit (see
        :class:`veil.Bootstrapper`).

        Raises:
            ValueError naming the setting when the chain is too short or the config invalid.
        """
        self._need_secret()
        bt = _bootstrap.Bootstrapper(self, config or _bootstrap.BootstrapConfig(), seed=seed,
                                     compact_keys=compact_keys, per_level_keys=per_level_keys,
                                     max_key_bytes=max_key_bytes)
        self.bootstrapper = bt
        return bt

    @_errors.user_operation("ctx.bootstrap(x)")
    def bootstrap(self, ct: CKKSCiphertext) -> CKKSCiphertext:
        """Refreshes ``ct`` (a scale within 2^4 of the context's) to the bootstrapper's
        ``output_level``, from which :attr:`levels` multiplications are left before the next
        bootstrap (Cheon-Han-Kim-Kim-Song 2018 with sparse-secret encapsulation; see
        :mod:`veil._bootstrap`). About 20 bits of precision for values of magnitude <= 1. Any
        level works: a ciphertext spent below ``input_level`` (down to level 0 with 64-bit
        words, to q_0's top with 32-bit words) comes back at ``low_output_level`` with a few bits
        less (:class:`veil.Bootstrapper` explains why).

        Raises:
            ValueError if bootstrapping is not enabled or ``ct``'s scale is too far from the
            context's.
        """
        if self.bootstrapper is None:
            raise ValueError("ctx: bootstrapping is not enabled (create the context with "
                             "bootstrapping=True or call enable_bootstrapping())")
        if not isinstance(ct, CKKSCiphertext):
            raise TypeError(f"ct: expected a CKKSCiphertext, got {type(ct).__name__}")
        _core.check_same_context(self.context, ct.raw, "ct")
        n = self._sparse_slots()
        if n is not None and n < len(ct) < self.slot_count:
            # Its slots cannot repeat with period n: SubSum would return a wrong vector.
            raise ValueError(
                f"ct: holds {len(ct)} values but the bootstrapper refreshes {n} slots "
                f"(BootstrapConfig(slots={n})); encrypt at most {n} values on this context "
                f"(they are repeated with period {n} for bootstrapping), or enable "
                f"bootstrapping with slots >= {len(ct)}")
        return CKKSCiphertext(self, self.bootstrapper.bootstrap(ct.raw), ct.is_complex, len(ct))

    def _options(self) -> dict:
        return {"scale": self.scale, "auto_rescale": self.auto_rescale}

    def _bundle_extras(self, compression: str, seeded: bool | None) -> dict[str, bytes]:
        bt = self.bootstrapper
        return {} if bt is None else bt.to_blobs(compression, seeded)

    def _load_bundle_extras(self, blobs: dict, max_bytes: int | None) -> None:
        """A bootstrapper from the bundle's entries (server side: no secret key needed)."""
        if any(name in blobs for name in _bootstrap.BUNDLE_BLOBS):
            self.bootstrapper = _bootstrap.Bootstrapper.from_blobs(
                blobs, self.context, self.device, self.relin_keys, max_bytes)

    def _init_options(self, options: dict) -> None:
        self._level_bits = [sum(math.log2(q) for q in self.context.coeff_modulus_at(level))
                            for level in range(self.max_level + 1)]
        try:
            scale = _check.scale(options.get("scale", 2.0**40))
        except TypeError as e:  # bundle contents: bad data, not a bad call
            raise ValueError(str(e)) from None
        _check.scale_fits(scale, self._level_bits[self.max_level], self.max_level)
        self.scale = scale
        self.auto_rescale = bool(options.get("auto_rescale", True))
        self.encoder = _core.CKKSEncoder(self.context)
        self._chain = _core.RescaleChain(self.context)
        self._poly: _core.PolynomialEvaluator | None = None
        self._ops: _core.ScaleOps | None = None

    def _polynomials(self) -> _core.PolynomialEvaluator:
        """The C++ polynomial evaluator of this context (made on first use)."""
        if self._poly is None:
            self._poly = _core.PolynomialEvaluator(self.context)
        return self._poly

    def _scale_ops(self) -> _core.ScaleOps:
        """Exact-scale operations (``circuits::ScaleOps``) with this context's relinearization
        keys (none: products raise), made on first use."""
        if self._ops is None:
            self._ops = _core.ScaleOps(self.context, self.relin_keys)
        return self._ops

    @property
    def levels(self) -> int:
        """How many multiplications (rescales) a fresh ciphertext allows; with bootstrapping,
        those between two bootstraps (the bootstrapper's ``levels_left``)."""
        if self.bootstrapper is not None:
            return self.bootstrapper.levels_left
        return len(self._chain.tops) - 1

    @property
    def default_level(self) -> int:
        """The level ``encrypt`` and ``encode`` use by default: the top of the levels the user
        owns (:attr:`max_level`, or with bootstrapping the bootstrapper's ``output_level``; the
        levels above it are reserved for CoeffToSlot and EvalMod)."""
        bt = self.bootstrapper
        return self.max_level if bt is None else bt.output_level

    @property
    def slot_count(self) -> int:
        return self.encoder.slot_count

    @property
    def word_bits(self) -> int:
        """32 or 64: the word size of every residue in memory."""
        return self.context.word_bits

    def _rescalable(self, level: int) -> bool:
        """True above q_0's rescale block (a rescale from ``level`` is possible)."""
        return level >= self.context.rescale_groups[0]

    def _plain_scale_for(self, level: int) -> float:
        """The scale of a plaintext factor at ``level``: with auto_rescale, the product of the
        block the rescale divides by (the product's scale comes back to the ciphertext's exactly);
        else the context's scale."""
        if self.auto_rescale and self._rescalable(level):
            return self._chain.block_product(level)
        return self.scale

    def _rescale_product(self, raw):
        """A product (size 2) rescaled when auto_rescale is on and a block is left."""
        if self.auto_rescale and self._rescalable(raw.level):
            return self.evaluator.rescale_to_next(raw)
        return raw

    def scale_at(self, level: int) -> float:
        """The scale that a product of fresh ciphertexts, rescaled, has at ``level``: encode
        there to add fresh values to it. Close to ``scale`` with one-prime rescales; about 2^40
        and 2^50 in turn with the 32-bit default chain (the rule: docs/guide/ckks.md).

        Raises:
            ValueError: ``level`` outside 0..max_level."""
        level = _check.integer(level, "level", 0, self.max_level)
        s, lv = self.scale, self.default_level
        if level >= lv:
            return s
        path = {lv: s}
        while lv > 0 and self._rescalable(lv):
            t = self.context.rescale_target(lv)
            s = s * s
            for q in self.context.coeff_modulus_at(lv)[t + 1:]:
                s /= q
            lv = t
            path[lv] = s
        return path[min(k for k in path if k >= level)]

    # ---- encoding -------------------------------------------------------------------------
    def _numbers(self, values, name: str = "values") -> np.ndarray:
        """``values`` as a 0-d or 1-D float64/complex128-compatible array of at most N/2 finite
        numbers. Ints, floats, complex numbers and numpy numeric arrays; bools and strings
        raise TypeError naming ``name``, non-finite or out-of-double-range values ValueError."""
        expected = f"{name}: expected a number or a 1-D array of at most {self.slot_count} numbers"
        mixed = _errors.ciphertext_as_values(self, name, values)
        if mixed is not None:
            raise mixed
        if isinstance(values, (str, bytes)):
            raise TypeError(f"{expected}, got {_check.show(values)}")
        try:
            arr = np.asarray(values)
        except (ValueError, TypeError) as e:  # ragged nesting and the like
            raise ValueError(f"{expected} ({e})") from None
        if arr.ndim > 1:
            raise ValueError(f"{expected}, got shape {arr.shape}{_errors.FLATTEN}")
        if arr.ndim == 1 and arr.size == 0:
            arr = np.zeros(0, dtype=np.float64)
        elif arr.dtype.kind == "O":
            items = list(arr.reshape(-1))
            for v in items:
                if isinstance(v, (bool, np.bool_)) or not isinstance(
                        v, (int, float, complex, np.number)):
                    raise TypeError(f"{expected}, got {_check.show(v)}")
            dtype = np.complex128 if any(isinstance(v, (complex, np.complexfloating))
                                         for v in items) else np.float64
            try:
                arr = np.array([dtype(v) for v in items], dtype=dtype).reshape(arr.shape)
            except OverflowError:
                big = max(items, key=lambda v: abs(v))
                raise ValueError(f"{name}: {_check.show(big)} is beyond double precision") from None
        elif arr.dtype.kind not in "iufc":
            got = f"dtype {arr.dtype}" if arr.ndim else _check.show(
                arr[()] if isinstance(values, np.ndarray) else values)
            hint = " (use .astype(float) for a 0/1 mask)" if arr.dtype.kind == "b" else ""
            raise TypeError(f"{expected}, got {got}{hint}")
        if arr.size > self.slot_count:
            raise _errors.too_many_values(self, name, arr.size)
        if arr.dtype.kind in "fc" and not np.isfinite(arr).all():
            bad = arr.reshape(-1)[~np.isfinite(arr.reshape(-1))][0]
            raise ValueError(f"{name}: expected finite numbers, got {bad}")
        return arr

    def encode(self, values: Values | _core.Plaintext, scale: float | None = None,
               level: int | None = None) -> _core.Plaintext:
        """Encodes a scalar or up to N/2 real/complex values at ``scale`` (default: the
        context's; a real number >= 1 whose log2 is below the bits of Q at ``level``) and
        ``level`` (default: the top one).

        ``values`` may be a DLPack array in GPU memory (CuPy, PyTorch, JAX; 1-D, C-contiguous,
        float64 or complex128) on this context's GPU: it is read there, with no copy through
        the host. Any other array-like goes through numpy.

        Raises ValueError for too many values, non-finite input, a bad scale or level, or a
        scaled magnitude that would overflow Q at that level; TypeError for non-numeric input
        (strings, bools) or a scale or level of the wrong type.
        """
        return self._encode(values, scale, level, "values")

    def _encode(self, values, scale, level, name: str):
        """:meth:`encode`, naming the values ``name`` in errors (operators: ``other``)."""
        if isinstance(values, _core.Plaintext):
            return values
        level = self.default_level if level is None else _check.integer(level, "level", 0,
                                                                         self.max_level)
        scale = self.scale if scale is None else _check.scale(scale)
        _check.scale_fits(scale, self._level_bits[level], level)
        if array_device(values, self.device, name) is not None:  # GPU array: no host copy
            period = self._sparse_slots()
            if period is not None and len(values) != self.slot_count:
                raise ValueError(
                    f"{name}: this context bootstraps {period} slots, so its vectors repeat "
                    f"with period {period}; a GPU array is encoded as given, so it needs all "
                    f"{self.slot_count} values (repeating), got {len(values)}: pass it through "
                    f"the host (numpy) to have it repeated")
            return self.encoder.encode_array(values, scale, level)
        arr = self._tiled(self._numbers(values, name))
        if arr.ndim == 0:
            return self.encoder.encode_scalar(complex(arr[()]), scale, level, self.device)
        if arr.dtype.kind == "c":
            return self.encoder.encode_complex(np.ascontiguousarray(arr, dtype=np.complex128),
                                               scale, level, self.device)
        return self.encoder.encode_real(np.ascontiguousarray(arr, dtype=np.float64), scale,
                                        level, self.device)

    def _sparse_slots(self) -> int | None:
        """n when the bootstrapper refreshes n < N/2 slots (sparse packing), else None."""
        bt = self.bootstrapper
        n = None if bt is None else bt.slots
        return n if n is not None and n < self.slot_count else None

    def _tiled(self, arr: np.ndarray) -> np.ndarray:
        """On a sparse-bootstrapping context (n < N/2 slots), a vector of at most n values is
        repeated with period n over the N/2 slots (zero-padded to n first): the layout sparse
        bootstrapping refreshes (its SubSum sums the N/2n copies), kept by every slot-wise
        operation and rotation. Other inputs are returned unchanged."""
        n = self._sparse_slots()
        if n is None or arr.ndim != 1 or arr.size > n:
            return arr
        period = np.zeros(n, dtype=arr.dtype)
        period[:arr.size] = arr
        return np.tile(period, self.slot_count // n)

    def decode(self, plain: _core.Plaintext) -> np.ndarray:
        """N/2 complex128 slot values (divided by the plaintext's scale)."""
        return self.encoder.decode(plain)

    def encrypt(self, values: Values | _core.Plaintext, scale: float | None = None,
                level: int | None = None, symmetric: bool = False) -> CKKSCiphertext:
        """Encrypts values (or a Plaintext) with the public key, or with the secret key when
        ``symmetric`` (client side; such ciphertexts serialize seeded: half the bytes).

        The ciphertext remembers its length (``len(ct)``: how many values ``decrypt``
        returns): the number of values, or N/2 for a scalar (every slot holds it) or a
        Plaintext."""
        length = None
        if isinstance(values, _core.Plaintext):
            is_complex = True
        elif array_device(values, self.device, "values") is not None:
            is_complex = "complex" in str(getattr(values, "dtype", ""))
            length = len(cast(Any, values))
        else:
            values = self._numbers(values, "values")
            is_complex = values.dtype.kind == "c"
            length = values.size if values.ndim == 1 else None
        raw = self._encrypt_raw(self._encode(values, scale, level, "values"), symmetric)
        return CKKSCiphertext(self, raw, is_complex, length)

    @_errors.user_operation("ctx.decrypt(x)")
    def decrypt(self, ct: CKKSCiphertext, complex_output: bool | None = None,
                out: Any = None) -> Any:
        """Decrypts to ``len(ct)`` values (the encrypted length; N/2 for a ciphertext that
        fills every slot): float64 if the inputs were real (unless complex_output).

        ``out``: a writable 1-D array of N/2 complex128 (or float64: real parts) on the
        ciphertext's device, e.g. ``cupy.empty(n // 2, cupy.complex128)`` or a torch CUDA tensor
        (any DLPack array): every slot is written there, with no copy through the host, and
        ``out`` is returned.

        Raises ValueError without the secret key or for an ``out`` of the wrong length or
        device, TypeError for the wrong dtype."""
        decryptor = self._need_secret()
        if not isinstance(ct, CKKSCiphertext):
            raise _errors.wrong_ciphertext(self, "ct", ct, "a CKKSCiphertext")
        _core.check_same_context(self.context, ct.raw, "ct")
        if out is not None:
            self.encoder.decode_into(decryptor.decrypt(ct.raw), out)
            return out
        out = self.encoder.decode(decryptor.decrypt(ct.raw))
        want_complex = (ct.is_complex if complex_output is None
                        else _check.flag(complex_output, "complex_output"))
        n = len(ct)
        if want_complex:
            return out[:n].copy() if n < out.size else out
        return out.real[:n].copy()


class CKKSCiphertext(CiphertextBase):
    """An encrypted vector of up to N/2 approximate real or complex numbers; tracks its level,
    scale and length (``len(ct)``, ``ct.shape``: see :class:`veil._base.CiphertextBase`).

    ``length``: how many leading slots hold the vector (default None: every slot, N/2).
    """

    ctx: CKKSContext

    def __init__(self, ctx: CKKSContext, raw: _core.Ciphertext, is_complex: bool,
                 length: int | None = None) -> None:
        self.ctx = ctx
        self.raw = raw
        self.is_complex = is_complex
        self._init_length(length)

    def _full_length(self) -> int:
        return self.ctx.slot_count

    @property
    def scale(self) -> float:
        return self.raw.scale

    def __repr__(self) -> str:
        return (f"veil.CKKSCiphertext(len={len(self)}, level={self.level}, "
                f"scale=2^{math.log2(self.scale):.2f}, size={self.size}, device={self.device!r})")

    def _wrap(self, raw, is_complex: bool | None = None) -> CKKSCiphertext:
        out = copy.copy(self)  # same context and length
        out.raw = raw
        if is_complex is not None:
            out.is_complex = is_complex
        return out

    def _complexity(self, other) -> bool:
        if isinstance(other, CKKSCiphertext):
            return self.is_complex or other.is_complex
        return self.is_complex or (isinstance(other, np.ndarray) and other.dtype.kind == "c")

    def _plain(self, other, scale, level):
        """(plaintext, other as checked numbers) for a plaintext operand ``other`` (a vector
        must have the ciphertext's length)."""
        if not isinstance(other, _core.Plaintext):
            other = self.ctx._numbers(other, "other")
            self._check_vector(other)
        return self.ctx._encode(other, scale, level, "other"), other

    def _pair(self, other: CKKSCiphertext, scales: bool = True):
        """(self.raw, other.raw), aligned in level (and scale) when auto_rescale is on."""
        check_same_context(self, other)
        self._same_length(other)
        if self.ctx.auto_rescale:
            return _tensor.align(self.ctx, self.raw, other.raw, scales)
        return self.raw, other.raw

    def _after_mul(self, raw):
        ctx = self.ctx
        if raw.size != 3:
            return ctx._rescale_product(raw)
        if ctx.auto_rescale and ctx._rescalable(raw.level):  # one key switch: ModDown + rescale
            return ctx.evaluator.relinearize_rescale(raw, ctx._rlk())
        return ctx.evaluator.relinearize(raw, ctx._rlk())

    @_errors.user_operation("x + {y}")
    def __add__(self, other) -> CKKSCiphertext:
        ev = self.ctx.evaluator
        if isinstance(other, CKKSCiphertext):
            return self._wrap(ev.add(*self._pair(other)), self._complexity(other))
        pt, other = self._plain(other, self.scale, self.level)
        return self._wrap(ev.add_plain(self.raw, pt), self._complexity(other))

    __radd__ = __add__

    @_errors.user_operation("x - {y}")
    def __sub__(self, other) -> CKKSCiphertext:
        ev = self.ctx.evaluator
        if isinstance(other, CKKSCiphertext):
            return self._wrap(ev.sub(*self._pair(other)), self._complexity(other))
        pt, other = self._plain(other, self.scale, self.level)
        return self._wrap(ev.sub_plain(self.raw, pt), self._complexity(other))

    @_errors.user_operation("c - x")
    def __rsub__(self, other) -> CKKSCiphertext:
        return (-self) + other

    @_errors.user_operation("x * {y}")
    def __mul__(self, other) -> CKKSCiphertext:
        ev = self.ctx.evaluator
        if isinstance(other, CKKSCiphertext):
            return self._wrap(self._after_mul(ev.multiply(*self._pair(other, scales=False))),
                              self._complexity(other))
        pt, other = self._plain(other, self.ctx._plain_scale_for(self.level), self.level)
        return self._wrap(self._after_mul(ev.multiply_plain(self.raw, pt)), self._complexity(other))

    __rmul__ = __mul__

    @_errors.user_operation("x / c")
    def __truediv__(self, other) -> CKKSCiphertext:
        """``x / c`` = ``x * (1 / c)`` for a plaintext scalar or vector ``c`` (of ``len(x)``
        values): one plaintext multiplication (a level with auto_rescale).

        Raises:
            TypeError: ``c`` is a ciphertext (division by an encrypted value is not a CKKS
                operation: approximate 1/y with ``y.evaluate(lambda t: 1 / t, (a, b))`` on an
                interval a < y < b that excludes 0) or a Plaintext.
            ZeroDivisionError: ``c`` is 0 or holds a 0.
        """
        if isinstance(other, CiphertextBase):
            raise TypeError(
                "other: division by an encrypted value is not supported (CKKS has no division); "
                "divide by a plaintext number or vector, or approximate 1/y on an interval that "
                "excludes 0: y.evaluate(lambda t: 1 / t, (a, b)), then multiply")
        if isinstance(other, _core.Plaintext):
            raise TypeError("other: x / c takes a number or a vector of numbers, not a Plaintext "
                            "(multiply by the encoded inverse instead)")
        arr = self.ctx._numbers(other, "other")
        if np.any(arr == 0):
            where = "" if arr.ndim == 0 else f" (entry {int(np.flatnonzero(arr == 0)[0])})"
            raise ZeroDivisionError(f"other: division by zero{where}")
        return self * (1.0 / arr)

    def __rtruediv__(self, other):
        raise TypeError(
            "x: c / x divides by an encrypted value, which is not supported (CKKS has no "
            "division); approximate 1/x on an interval that excludes 0 with "
            "x.evaluate(lambda t: 1 / t, (a, b)), then multiply by c")

    @_errors.user_operation(_errors.power_name, need=_errors.power_levels)
    def __pow__(self, exponent: int) -> CKKSCiphertext:
        """``x ** k`` for an integer k >= 1, by squaring and multiplying: ceil(log2 k)
        levels (with ``auto_rescale=True``; the operands are aligned as for ``x * y``).

        Raises ValueError naming ``exponent`` (below 1, or >= 2 with ``auto_rescale=False``:
        multiply and rescale by hand there), TypeError for a non-integer exponent."""
        exponent = _check.integer(exponent, "exponent", 1, 2**64 - 1)
        if exponent == 1:
            return self._wrap(self.raw.__copy__())
        if not self.ctx.auto_rescale:
            raise ValueError("exponent: x ** k rescales between its products, which needs "
                             "auto_rescale=True; with auto_rescale=False multiply and rescale() "
                             "step by step")
        result: CKKSCiphertext | None = None
        base = self
        while True:
            if exponent & 1:
                result = base if result is None else result * base
            exponent >>= 1
            if not exponent:
                assert result is not None  # exponent >= 1 has a set bit
                return result
            base = base.square()

    @_errors.user_operation("x.square()")
    def square(self) -> CKKSCiphertext:
        return self._wrap(self._after_mul(self.ctx.evaluator.square(self.raw)))

    @_errors.user_operation("x.rescale()")
    def rescale(self) -> CKKSCiphertext:
        """Divides by the rescale block holding the top prime and drops it (scale /= the
        block's product: q_level with the default one-prime blocks).

        Raises ValueError with ``auto_rescale=True`` (the default): products are already
        rescaled there, and a second rescale would leave a scale near 1 (no precision left).
        Create the context with ``auto_rescale=False`` to rescale by hand."""
        if self.ctx.auto_rescale:
            raise ValueError("rescale: this context rescales every product automatically "
                             "(auto_rescale=True), so this would rescale twice; drop the call or "
                             "create the context with auto_rescale=False")
        return self._wrap(self.ctx.evaluator.rescale_to_next(self.raw))

    def set_scale(self, scale: float) -> CKKSCiphertext:
        """Returns a copy whose scale is declared as ``scale`` (aligning nearly-equal scales): a
        real number >= 1 whose log2 is below the bits of Q at the ciphertext's level."""
        scale = _check.scale(scale)
        _check.scale_fits(scale, self.ctx._level_bits[self.level], self.level)
        raw = self.raw.__copy__()
        raw.scale = scale
        return self._wrap(raw)

    @_errors.user_operation(_errors.method_name("rotate"))
    def rotate(self, steps: int) -> CKKSCiphertext:
        """Rotates the N/2 slots left by ``steps`` (negative: right); |steps| < N/2 (not
        wrapped); SEAL's rotate_vector. The length is kept, and the whole row turns: for a
        vector shorter than N/2 the slots after it (zeros after encryption) move in, so
        ``x.rotate(k).decrypt()`` is ``np.roll(row, -k)[:len(x)]`` for the row of N/2 slots."""
        steps = _check.step(steps, self.ctx.poly_modulus_degree)
        if steps == 0:  # the identity, as SEAL's (no Galois key needed)
            return self._wrap(self.raw.__copy__())
        return self._wrap(self.ctx.evaluator.rotate_vector(self.raw, steps, self.ctx._gk([steps])))

    rotate_vector = rotate

    @_errors.user_operation("x.bootstrap()")
    def bootstrap(self) -> CKKSCiphertext:
        """``ctx.bootstrap(self)``: a refreshed ciphertext at the bootstrapper's output level."""
        return self.ctx.bootstrap(self)

    @_errors.user_operation("x.conjugate()")
    def conjugate(self) -> CKKSCiphertext:
        return self._wrap(self.ctx.evaluator.conjugate(self.raw, self.ctx._gk(columns=True)), True)

    @_errors.user_operation("x.polyval(coeffs)")
    def polyval(self, coeffs: Sequence[float]) -> CKKSCiphertext:
        """p(x) = coeffs[0] + coeffs[1] x + ... + coeffs[d] x^d slot-wise (lowest degree first, as
        numpy.polynomial), in the Chebyshev basis by the baby-step giant-step recursion of
        Bossuat et al. (Eurocrypt 2021, Alg. 2): ceil(log2(d + 1)) levels, every addition
        exact in scale; the result keeps the input's scale (:func:`veil._tensor.polyval`).

        Raises ValueError naming ``coeffs`` (empty, not real, or more levels than are left)."""
        return _tensor.polyval(self, coeffs)

    @_errors.user_operation(_errors.evaluate_name)
    def evaluate(self, fn: Callable[[np.ndarray], np.ndarray],
                 interval: tuple[float, float] = (-1.0, 1.0), degree: int = 15) -> CKKSCiphertext:
        """fn(x) slot-wise for x in ``interval``, by fn's degree-``degree`` Chebyshev
        interpolant (OpenFHE's EvalChebyshevFunction; :func:`veil._tensor.evaluate`).
        ``fn`` must accept numpy arrays (e.g. ``np.tanh``)."""
        return _tensor.evaluate(self, fn, interval, degree)

    # ---- non-polynomial functions (veil._functions; circuits/comparison.h, inverse.h) -----

    @_errors.user_operation(_errors.method_name("sign"))
    def sign(self, epsilon: float = _functions.DEFAULT_EPSILON,
             bits: int = _functions.DEFAULT_BITS) -> CKKSCiphertext:
        """numpy.sign slot-wise for real values in [-1, 1]: ±1 within 2^-``bits`` where
        |x| >= ``epsilon`` (inside, a value in [-1, 1]); composite polynomials of Cheon et al.
        (Asiacrypt 2020), 18 levels by default (:func:`veil._functions.sign`).

        Raises ValueError naming ``epsilon`` (outside (0, 1)) or ``bits`` (outside 1..30);
        DepthError when x has too few levels left (the message gives both)."""
        return _functions.sign(self, epsilon, bits)

    @_errors.user_operation(_errors.method_name("relu"))
    def relu(self, epsilon: float = _functions.DEFAULT_EPSILON,
             bits: int = _functions.DEFAULT_BITS) -> CKKSCiphertext:
        """max(x, 0) slot-wise for real values in [-1, 1]: within 2^-``bits`` where
        |x| >= ``epsilon``, within epsilon / 2 inside; sign's depth + 1 (19 by default).
        Errors as :meth:`sign`."""
        return _functions.relu(self, epsilon, bits)

    @_errors.user_operation(_errors.method_name("greater"))
    def greater(self, other: CKKSCiphertext | Values, epsilon: float = _functions.DEFAULT_EPSILON,
                bits: int = _functions.DEFAULT_BITS) -> CKKSCiphertext:
        """numpy.greater as numbers: 1 where x > other, 0 where x < other (within 2^-``bits``
        where |x - other| >= ``epsilon``), 1/2 where equal; x - other in [-1, 1] (e.g. both in
        [-1/2, 1/2]). ``other``: a ciphertext (sign's depth) or plaintext numbers (+1 level).
        Errors as :meth:`sign`."""
        return _functions.greater(self, other, epsilon, bits)

    compare = greater

    @_errors.user_operation(_errors.method_name("maximum"))
    def maximum(self, other: CKKSCiphertext | Values, epsilon: float = _functions.DEFAULT_EPSILON,
                bits: int = _functions.DEFAULT_BITS) -> CKKSCiphertext:
        """numpy.maximum slot-wise, x - other in [-1, 1]: within 2^-``bits`` where
        |x - other| >= ``epsilon``, within epsilon / 2 elsewhere; sign's depth + 1.
        ``other``: a ciphertext or plaintext numbers. Errors as :meth:`sign`."""
        return _functions.maximum(self, other, epsilon, bits)

    @_errors.user_operation(_errors.method_name("minimum"))
    def minimum(self, other: CKKSCiphertext | Values, epsilon: float = _functions.DEFAULT_EPSILON,
                bits: int = _functions.DEFAULT_BITS) -> CKKSCiphertext:
        """numpy.minimum slot-wise; as :meth:`maximum`."""
        return _functions.minimum(self, other, epsilon, bits)

    @_errors.user_operation(_errors.method_name("inverse"))
    def inverse(self, interval: tuple[float, float] = _functions.DEFAULT_INTERVAL,
                bits: int = _functions.DEFAULT_BITS) -> CKKSCiphertext:
        """numpy.reciprocal (1/x) slot-wise for real values in ``interval`` = (a, b),
        0 < a < b: within 2^-``bits``; Goldschmidt's iteration (Cheon et al., Asiacrypt 2019),
        10 levels by default (:func:`veil._functions.inverse`).

        Raises ValueError naming ``interval`` or ``bits``; DepthError when x has too few
        levels left."""
        return _functions.inverse(self, interval, bits)

    reciprocal = inverse

    @_errors.user_operation(_errors.method_name("sqrt"))
    def sqrt(self, interval: tuple[float, float] = _functions.DEFAULT_INTERVAL,
             bits: int = _functions.DEFAULT_BITS) -> CKKSCiphertext:
        """numpy.sqrt slot-wise for real values in ``interval`` = (a, b), 0 < a < b: within
        2^-``bits``; Newton's iteration for 1/sqrt then one product (10 levels by default).
        Errors as :meth:`inverse`."""
        return _functions.sqrt(self, interval, bits)

    @_errors.user_operation(_errors.method_name("inv_sqrt"))
    def inv_sqrt(self, interval: tuple[float, float] = _functions.DEFAULT_INTERVAL,
                 bits: int = _functions.DEFAULT_BITS) -> CKKSCiphertext:
        """1/sqrt(x) slot-wise for real values in ``interval`` = (a, b), 0 < a < b: within
        2^-``bits``; Newton's iteration from a Chebyshev initial approximation (Panda, CSCML
        2022), 9 levels by default. Errors as :meth:`inverse`."""
        return _functions.inv_sqrt(self, interval, bits)

    @classmethod
    def _make(cls, ctx, raw, extra=None, info=None) -> CKKSCiphertext:
        # The record of the bytes (length, complex) wins; older pickles carry the flag in
        # ``extra``; bytes with neither (SEAL's, RawCiphertext's, Veil's before the record):
        # complex and every slot, so decryption never drops an imaginary part silently
        # (``ctx.decrypt(ct).real`` recovers real inputs).
        if info is not None:
            return cls(ctx, raw, bool(info[1]), int(info[0]))
        return cls(ctx, raw, True if extra is None else bool(extra))

    def _extra(self):
        return self.is_complex


def _choose_ckks(depth, precision, slots, poly_modulus_degree, coeff_modulus, scale, security,
                 boot_config, special_primes, alpha, word_bits, rescale_groups):
    """The :class:`veil._params.Choice` for ``depth=`` (None without it, or with an explicit
    coeff_modulus, which is then checked against the request once built). ValueError naming
    the argument that contradicts ``depth=``."""
    if depth is None:
        for name, value in (("precision", precision), ("slots", slots)):
            if value is not None:
                raise ValueError(f"{name}: sizes the chain together with depth=; pass depth= "
                                 "(the number of multiplications) as well")
        return None
    if boot_config is not None:
        raise ValueError("depth: sizes a chain without bootstrapping; with bootstrapping the "
                         "levels between bootstraps are the bootstrapping chain's (ctx.levels): "
                         "pass depth= or bootstrapping=, not both")
    if coeff_modulus is not None:
        return None
    for name, value in (("special_primes", special_primes), ("alpha", alpha)):
        if value is not None and value != 1:
            raise ValueError(f"{name}: depth= builds a chain with one special prime (alpha 1), "
                             f"got {name}={_check.show(value)}; pass coeff_modulus as well to "
                             "lay out your own chain")
    if rescale_groups is not None:
        raise ValueError("rescale_groups: depth= builds a chain of one-prime rescales; pass "
                         "coeff_modulus as well to use rescale blocks")
    n = None if poly_modulus_degree is None else check_degree(poly_modulus_degree)
    choice = _params.choose_ckks(depth, precision, slots, security, n,
                                 None if scale is None else _check.scale(scale))
    if word_bits == 32 and max(choice.coeff_modulus) >= 2**31:
        raise ValueError(
            f"word_bits: depth= chose primes of up to {max(choice.coeff_modulus).bit_length()} "
            "bits, which 32-bit words cannot hold; leave word_bits=None (32-bit words are used "
            "whenever every prime fits) or pass coeff_modulus (e.g. the 32-bit default chain)")
    return choice


def _boot_config(bootstrapping):
    """``bootstrapping`` argument -> BootstrapConfig or None."""
    if bootstrapping is False or bootstrapping is None:
        return None
    if bootstrapping is True:
        return _bootstrap.BootstrapConfig()
    if isinstance(bootstrapping, _bootstrap.BootstrapConfig):
        return bootstrapping
    raise TypeError("bootstrapping: expected True, False or a veil.BootstrapConfig, got "
                    f"{_check.show(bootstrapping)}")


#: ``veil.ckks(poly_modulus_degree=..., scale=..., ...)`` creates a :class:`CKKSContext` (the
#: factory is the class: ``help(veil.ckks)`` shows every parameter); ``veil.ckks.precision`` and
#: ``veil.ckks.bootstrap_chain`` are its static helpers.
ckks = CKKSContext

_CONTEXT_CLASSES.update(ckks=CKKSContext)
_CIPHERTEXT_CLASSES.update(ckks=CKKSCiphertext)
