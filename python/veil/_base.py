"""What every pythonic Veil context shares: parameters, keys on one device, and the server view."""

from __future__ import annotations

import copy
import os
import pickle
from collections.abc import Callable, Collection, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar, Union, cast

import numpy as np

from . import _check, _core, _errors, _params, _progress, _tensor
from . import _serialize as _ser
from ._device import resolve_device

if TYPE_CHECKING:
    from ._enc_tensor import EncryptedTensor

#: The encrypted tensor's entry points ("encrypt", "is_bytes", "from_bytes"), installed by
#: veil._enc_tensor_io when it loads (veil/__init__.py imports it): that module imports this
#: one, so this one reaches it only through here.
TENSOR_HOOKS: dict[str, Callable[..., Any]] = {}

#: Serialized objects as the loaders accept them, and file paths.
Bytes = Union[bytes, bytearray, memoryview]
PathLike = Union[str, "os.PathLike[str]"]
_K = TypeVar("_K", bound="KeyedContext")
_C = TypeVar("_C", bound="CiphertextBase")


def build_params(scheme: str, n: int, coeff_modulus, plain_modulus, special_primes: int | None,
                 alpha: int | None, mul_method: str | None, security, word_bits=None,
                 rescale_groups=None) -> _core.EncryptionParameters:
    """EncryptionParameters from pythonic arguments (each checked here, named in the error).

    ``coeff_modulus``: primes (ints >= 64) or bit sizes (ints < 64); None = the scheme's default.
    ``special_primes``: None = 1, or 0 when coeff_modulus has a single prime.
    ``word_bits``: None (the context chooses: 32-bit words when every residue fits), 32 or 64.
    ``rescale_groups``: CKKS rescale blocks (None: one prime each).
    """
    n = check_degree(n)
    params = _core.EncryptionParameters(scheme)
    params.poly_modulus_degree = n
    if coeff_modulus is None:
        raise ValueError("coeff_modulus: required here (no default for this scheme)")
    primes = coeff_modulus_primes(n, coeff_modulus)
    params.coeff_modulus = primes
    if special_primes is None:  # one prime leaves none for P: no key switching
        special_primes = 0 if len(primes) == 1 else 1
    params.special_primes = _check.integer(special_primes, "special_primes", 0, len(primes) - 1)
    params.alpha = 0 if alpha is None else _check.integer(alpha, "alpha", 1, 32)
    if plain_modulus is not None:
        params.plain_modulus = _check.integer(plain_modulus, "plain_modulus", 2, 2**60 - 1)
    if mul_method is not None:
        params.mul_method = mul_method
    params.word_bits = check_word_bits(word_bits)
    if rescale_groups is not None:
        params.rescale_groups = [_check.integer(g, "rescale_groups", 1, len(primes))
                                 for g in rescale_groups]
    return params


def check_word_bits(word_bits) -> int:
    """``word_bits`` checked: None (0: the context chooses), 32 or 64."""
    if word_bits is None:
        return 0
    word_bits = _check.integer(word_bits, "word_bits")
    if word_bits not in (32, 64):
        raise ValueError(f"word_bits: expected None, 32 or 64, got {word_bits}")
    return word_bits


def check_degree(n) -> int:
    """N checked: an integer power of two in 1024..131072."""
    n = _check.integer(n, "poly_modulus_degree")
    if not (1024 <= n <= 131072 and n & (n - 1) == 0):
        raise ValueError(
            f"poly_modulus_degree: expected a power of two in 1024..131072, got {_check.show(n)}")
    return n


def coeff_modulus_primes(n: int, coeff_modulus) -> list[int]:
    """The primes of ``coeff_modulus``: a list of primes (ints >= 64), or of bit sizes (ints
    below 64) turned into NTT-friendly primes for degree ``n``."""
    if isinstance(coeff_modulus, (str, bytes)) or _check.is_integer(coeff_modulus) or not hasattr(
            coeff_modulus, "__iter__"):
        raise TypeError("coeff_modulus: expected a list of primes or of bit sizes, got "
                        f"{_check.show(coeff_modulus)}")
    qs = [_check.integer(q, "coeff_modulus", 2, 2**60 - 1) for q in coeff_modulus]
    if not qs:
        raise ValueError("coeff_modulus: expected at least one prime or bit size, got []")
    if all(q < 64 for q in qs):
        bad = [b for b in qs if b > 60]
        if bad:
            raise ValueError(f"coeff_modulus: bit sizes must be 2..60, got {bad[0]}")
        try:
            return list(_core.CoeffModulus.create(n, qs))
        except ValueError as e:  # e.g. "not enough 20-bit NTT-friendly primes"
            raise ValueError(f"coeff_modulus: {e}") from None
    return qs


class KeyedContext:
    """A scheme context with its keys on one device (the client's view: it holds the secret key).

    Subclasses set ``scheme`` and the encoder. ``public()`` returns the server's view.
    """

    scheme = ""
    # Bound by _attach (None where this context lacks the key: a server view, a loaded bundle).
    context: _core.Context
    device: str
    encryptor: _core.Encryptor | None
    decryptor: _core.Decryptor | None
    evaluator: _core.Evaluator
    key_set_id: str
    _sym_encryptor: _core.Encryptor | None
    _keygen: _core.KeyGenerator | None
    #: Cap on the bytes of this context's relinearization and Galois keys (None: no cap); keys
    #: that would pass it raise MemoryError before they are made (:meth:`create_galois_keys`).
    max_key_bytes: int | None = None
    # (requested, why) when depth= chose or checked the parameters (describe()); None otherwise.
    _needs: tuple | None = None

    def _setup(self, params: _core.EncryptionParameters, device, security, seed,
               galois_steps, relin_keys: bool | None, require_batching: bool = False,
               max_key_bytes: int | None = None) -> None:
        """Context and keys. ``relin_keys=None`` creates a relinearization key where key
        switching is possible (a special prime); ``galois_steps="default"`` creates no Galois
        key up front: rotations create the keys they need (:meth:`ensure_galois_keys`). Asking
        for keys without a special prime raises ValueError naming the argument;
        ``max_key_bytes`` caps the relinearization and Galois keys (MemoryError before they
        are made)."""
        self.max_key_bytes = _check.optional_integer(max_key_bytes, "max_key_bytes", 0)
        security = _check.security(security)
        seed = _check.seed(seed)
        device = resolve_device(device)
        n = params.poly_modulus_degree
        can_switch = params.special_primes > 0
        if relin_keys is None:
            relin_keys = can_switch
        relin_keys = _check.flag(relin_keys, "relin_keys")
        if isinstance(galois_steps, str) and galois_steps == "default":
            galois_steps = None  # on demand
        if isinstance(galois_steps, str):
            if galois_steps != "power_of_two":
                raise ValueError(
                    "galois_steps: expected 'power_of_two', a list of steps or None, "
                    f"got {galois_steps!r}")
        elif galois_steps is not None:
            if _check.is_integer(galois_steps) or not hasattr(galois_steps, "__iter__"):
                raise TypeError("galois_steps: expected 'power_of_two', a list of steps or None, "
                                f"got {_check.show(galois_steps)}")
            galois_steps = _check.steps(galois_steps, n, "galois_steps")
        if not can_switch:
            for name, wanted in (("relin_keys", relin_keys), ("galois_steps", galois_steps)):
                if wanted is not None and wanted is not False:
                    raise ValueError(
                        f"{name}: key switching needs a special prime, but this coeff_modulus "
                        "has special_primes=0 (e.g. the single-prime default chain of "
                        f"poly_modulus_degree {n}); pass {name}="
                        f"{'False' if name == 'relin_keys' else 'None'} or a coeff_modulus with "
                        "a special prime")
        context = _core.Context(params, security)
        if require_batching and not context.batching_enabled:
            # Before any key is generated (that can take minutes at large N).
            raise ValueError(
                f"plain_modulus: {params.plain_modulus} does not enable batching at "
                f"poly_modulus_degree {params.poly_modulus_degree} (it must be a prime = 1 mod "
                "2N, e.g. PlainModulus.batching(N, bits)); use encoding='coefficients' for "
                "plaintexts without batching")
        if relin_keys:
            _params.check_key_memory(1, switching_key_words(context) * context.word_bits // 8,
                                     0, 0, self.max_key_bytes, "relinearization key")
        keygen = _core.KeyGenerator(context, device, seed)
        self._attach(context, device, keygen.secret_key(), keygen.create_public_key(),
                     keygen.create_relin_keys() if relin_keys else None, None,
                     _check.derived_seed(seed, 1))
        self._keygen = keygen
        if galois_steps is not None:
            elts = (self._power_of_two_elts() if isinstance(galois_steps, str)
                    else self._elts(galois_steps, True))
            self._generate_galois(elts)

    def _attach(self, context, device: str, secret_key, public_key, relin_keys, galois_keys,
                enc_seed=None, key_set_id: str | None = None) -> None:
        """Binds a context and its keys (any of them may be None) to this object."""
        self.device = device
        self.context = context
        self.secret_key = secret_key
        self.public_key = public_key
        self.relin_keys = relin_keys
        self.galois_keys = galois_keys
        self._enc_seed = enc_seed
        self.encryptor = (_core.Encryptor(context, public_key, enc_seed)
                          if public_key is not None else None)
        self._sym_encryptor = None
        self.decryptor = _core.Decryptor(context, secret_key) if secret_key is not None else None
        self.evaluator = _core.Evaluator(context)
        self.key_set_id = key_set_id or _ser.new_key_set_id()
        self._keygen = None  # made from the secret key when keys are created on demand
        _ser.register_context(context)
        _ser.register_keyed(self)

    # ---- scheme options (subclasses) --------------------------------------------------------
    def _options(self) -> dict:
        """Scheme-specific settings that a bundle must carry (JSON-serializable)."""
        return {}

    def _init_options(self, options: dict) -> None:
        """Rebuilds encoders and settings from :meth:`_options` output (bundle loading)."""

    def _bundle_extras(self, compression: str, seeded: bool | None) -> dict[str, bytes]:
        """Scheme-specific bundle entries beyond the keys (CKKS: the bootstrapper's)."""
        return {}

    def _load_bundle_extras(self, blobs: dict, max_bytes: int | None) -> None:
        """Rebuilds what :meth:`_bundle_extras` wrote (bundle loading; bytes are hostile)."""

    # ---- encryption helpers -----------------------------------------------------------------
    def encrypt_tensor(self, values: Any, *, scale: float | None = None,
                       level: int | None = None, symmetric: bool = False) -> EncryptedTensor:
        """Encrypts an array of any ndim >= 1 as an :class:`veil.EncryptedTensor` (TenSEAL's
        ``ckks_tensor``/``bfv_tensor``): the "padded row-major" packing over as many
        ciphertexts as it needs. ``scale``/``level`` (CKKS only) and ``symmetric`` as for
        :meth:`encrypt`; ``ctx.encrypt(array)`` with ndim >= 2 does the same.

        Raises ValueError naming ``values`` (0-d, empty) or ``scale``/``level`` (given to a
        BFV/BGV context), TypeError for the wrong kind of values (CKKS: numbers; BFV/BGV:
        integers; batching needed)."""
        kwargs: dict[str, Any] = {"symmetric": symmetric}
        for name, value in (("scale", scale), ("level", level)):
            if value is not None:
                if self.scheme != "ckks":
                    raise ValueError(f"{name}: only CKKS tensors take a {name}")
                kwargs[name] = value
        return TENSOR_HOOKS["encrypt"](self, values, None, **kwargs)

    def _encrypt_raw(self, plain, symmetric: bool):
        """Public-key encryption, or with ``symmetric`` the secret key (seeded: half the bytes
        when serialized; needs the secret key)."""
        if _check.flag(symmetric, "symmetric"):
            self._need_secret()
            if self._sym_encryptor is None:
                seed = _check.derived_seed(self._enc_seed, 1)
                self._sym_encryptor = _core.Encryptor(self.context, self.secret_key, seed)
            return self._sym_encryptor.encrypt(plain)
        if self.encryptor is None:
            raise ValueError("ctx: this context has no public key (it was loaded without one)")
        return self.encryptor.encrypt(plain)

    # ---- facts ------------------------------------------------------------------------------
    @property
    def poly_modulus_degree(self) -> int:
        return self.context.poly_modulus_degree

    @property
    def coeff_modulus(self) -> list[int]:
        return list(self.context.coeff_modulus)

    @property
    def security(self) -> int | None:
        return self.context.security

    @property
    def max_level(self) -> int:
        return self.context.max_level

    @property
    def has_secret_key(self) -> bool:
        return self.secret_key is not None

    def modulus_chain(self) -> list[dict]:
        """One entry per level, top first: level, its primes and log2 of their product."""
        import math

        chain = []
        for level in range(self.max_level, -1, -1):
            primes = self.context.coeff_modulus_at(level)
            chain.append({"level": level, "primes": primes,
                          "bits": round(sum(math.log2(q) for q in primes), 2)})
        return chain

    def describe(self) -> _params.Description:
        """The parameters and why they are what they are: a dict (for benchmark records; JSON
        ready) whose ``str()`` reads as a summary, so ``print(ctx.describe())`` explains N,
        the chain, log QP against the security bound, the slots, the depth and the key size.

        Keys: ``scheme``, ``poly_modulus_degree``, ``coeff_modulus_bits`` (special primes
        last), ``special_primes``, ``alpha``, ``log2_qp``, ``max_level``, ``security``,
        ``device``; ``plain_modulus`` (BFV/BGV), ``mul_method`` (BFV); ``slots``;
        ``max_log2_qp`` (the HE standard's bound at N, None without a security level);
        ``depth`` (CKKS: multiplications a fresh ciphertext allows, ``levels``; BFV/BGV: the
        product-tree depth Veil's noise model gives Q, docs/guide/bfv-bgv.md); ``scale_bits``
        and ``precision`` (CKKS: log2 of the scale and the bits after the binary point it
        keeps for values of magnitude <= 1, by Veil's noise model); ``switching_key_bytes``
        (one relinearization or Galois key); ``requested`` (what ``depth=`` asked for, or
        None); ``why`` (a sentence: why this N and chain).
        """
        q = self.coeff_modulus
        d = {
            "scheme": self.scheme,
            "poly_modulus_degree": self.poly_modulus_degree,
            "coeff_modulus_bits": [int(x).bit_length() for x in q],
            "special_primes": self.context.special_primes,
            "alpha": self.context.alpha,
            "log2_qp": self.context.total_coeff_modulus_bits,
            "max_level": self.max_level,
            "security": self.security,
            "device": self.device,
        }
        if self.scheme != "ckks":
            d["plain_modulus"] = self.context.plain_modulus
        if self.scheme == "bfv":
            d["mul_method"] = self.context.mul_method
        return self._explain(d)

    def _explain(self, d: dict) -> _params.Description:
        """:meth:`describe`'s added entries (slots, bound, depth, precision, key size, why)."""
        import math

        n, sec = self.poly_modulus_degree, self.security
        nq = len(self.coeff_modulus) - self.context.special_primes
        d["slots"] = n // 2 if self.scheme == "ckks" else n
        d["max_log2_qp"] = _params.max_log_qp(n, sec)
        if self.scheme == "ckks":
            scale = getattr(self, "scale", None)
            d["depth"] = int(getattr(self, "levels", self.max_level))
            d["scale_bits"] = None if scale is None else round(math.log2(scale), 2)
            d["precision"] = (None if scale is None
                              else math.floor(math.log2(scale)) - _params.ckks_noise_bits(n))
        else:
            q_bits = sum(int(x).bit_length() for x in self.coeff_modulus[:nq])
            d["depth"] = max(0, _params.integer_depth(
                self.scheme, n, q_bits, int(self.context.plain_modulus).bit_length()))
        d["switching_key_bytes"] = self.galois_key_bytes() if self.context.special_primes else 0
        requested, why = self._needs if self._needs is not None else (None, None)
        d["requested"] = requested
        d["why"] = why or _params.why_given(self.scheme, n, d["log2_qp"], d["max_log2_qp"], sec)
        return _params.Description(d)

    def __repr__(self) -> str:
        """Parameters only (N, bits of Q at the top level, levels, t or the scale, device) and
        whether the secret key is held: never key material or seeds."""
        import math

        if "context" not in self.__dict__:  # __init__ failed before the keys were attached
            return f"veil.{type(self).__name__}(scheme={self.scheme!r}, uninitialized)"
        q_bits = sum(math.log2(q) for q in self.context.coeff_modulus_at(self.max_level))
        fields = [f"scheme={self.scheme!r}", f"N={self.poly_modulus_degree}",
                  f"log2_q={q_bits:.0f}", f"max_level={self.max_level}"]
        if self.scheme == "ckks":
            scale = getattr(self, "scale", None)
            if scale is not None:
                fields.append(f"scale=2^{round(math.log2(scale), 2):g}")
            bt = getattr(self, "bootstrapper", None)
            if bt is not None:  # the user's budget, plainly
                fields.append(f"levels={bt.levels_left} (multiplications between bootstraps)")
        else:
            fields.append(f"plain_modulus={self.context.plain_modulus}")
            encoding = getattr(self, "encoding", "batch")
            if encoding != "batch":
                fields.append(f"encoding={encoding!r}")
        fields += [f"device={self.device!r}", f"secret_key={self.secret_key is not None}"]
        return f"veil.{type(self).__name__}({', '.join(fields)})"

    def public(self: _K) -> _K:
        """The server's view: same context and evaluation keys, no secret key.

        Encrypting still works (with the public key); decrypting raises ValueError.
        """
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.secret_key = None
        view.decryptor = None
        view._sym_encryptor = None
        view._keygen = None
        _ser.register_keyed(view)
        return view

    # ---- serialization ----------------------------------------------------------------------
    def to_bytes(self, include_secret_key: bool = False, compression: str = "zstd",
                 seeded: bool | None = None) -> bytes:
        """The parameters, options and keys as one bundle (veil._serialize).

        The secret key is written only with ``include_secret_key=True`` (a client saving its own
        keys); the default is the server's view (public, relinearization and Galois keys, and a
        CKKS context's bootstrapping keys and parameters: :data:`veil._bootstrap.BUNDLE_BLOBS`,
        so that the loaded context bootstraps without the secret key).
        ``compression``/``seeded`` as for the objects' ``to_bytes``.
        """
        if include_secret_key and self.secret_key is None:
            raise ValueError("include_secret_key: this context holds no secret key")
        blobs = {"parameters": self.context.params.to_bytes()}
        for name in ("public_key", "relin_keys", "galois_keys"):
            key = getattr(self, name)
            if key is not None:
                blobs[name] = key.to_bytes(compression, seeded)
        blobs.update(self._bundle_extras(compression, seeded))
        if include_secret_key:
            blobs["secret_key"] = self.secret_key.to_bytes(compression)
        meta = {"format": 1, "scheme": self.scheme, "security": self.security,
                "key_set_id": self.key_set_id, "options": self._options()}
        return _ser.pack_bundle(meta, blobs)

    def save(self, path: PathLike, include_secret_key: bool = False, compression: str = "zstd",
             seeded: bool | None = None) -> None:
        """Writes :meth:`to_bytes` to a file."""
        data = self.to_bytes(include_secret_key, compression, seeded)
        with open(path, "wb") as f:
            f.write(data)

    @classmethod
    def from_bytes(cls, data: Bytes, device: str | None = "auto",
                   max_bytes: int | None = None) -> KeyedContext:
        """Loads a bundle written by :meth:`to_bytes` onto ``device`` (any pythonic context
        class accepts any scheme's bundle and returns the right class).

        Raises:
            ValueError: bad bytes (the message names the field).
        """
        meta, blobs = _ser.unpack_bundle(data)
        scheme = _ser.meta_field(meta, "scheme", str, required=True)
        if _ser.meta_field(meta, "format", int, required=True) != 1:
            raise ValueError("format: unsupported context bundle version")
        security = _ser.meta_field(meta, "security", (int, type(None)))
        key_set_id = _ser.meta_field(meta, "key_set_id", str, required=True)
        options = _ser.meta_field(meta, "options", dict, default={})
        _bundle_class(scheme)  # an unknown scheme fails before anything is loaded
        if "parameters" not in blobs:
            raise ValueError("parameters: missing from the bundle")
        params_bytes = bytes(blobs["parameters"])
        context = _ser.context_for(params_bytes, security)
        if context.scheme != scheme:
            raise ValueError(f"scheme: bundle says {scheme!r} but its parameters are {context.scheme!r}")
        dev = resolve_device(device)

        def load(name, core_cls):
            if name not in blobs:
                return None
            return core_cls.from_bytes(blobs[name], context, dev, max_bytes)

        obj = assemble(context, dev, options, load("secret_key", _core.SecretKey),
                       load("public_key", _core.PublicKey), load("relin_keys", _core.RelinKeys),
                       load("galois_keys", _core.GaloisKeys), key_set_id=key_set_id)
        obj._load_bundle_extras(blobs, max_bytes)
        return obj

    @classmethod
    def load(cls, path: PathLike, device: str | None = "auto",
             max_bytes: int | None = None) -> KeyedContext:
        """Loads a file written by :meth:`save`."""
        with open(path, "rb") as f:
            return cls.from_bytes(f.read(), device, max_bytes)

    def __reduce__(self):
        if self.secret_key is not None:
            raise TypeError(
                "ctx: this context holds a secret key, which is never pickled; pickle "
                "ctx.public() (the server's view) or call ctx.to_bytes(include_secret_key=True) "
                "explicitly")
        return (_restore_keyed, (self.to_bytes(), self.device))

    # ---- Galois keys on demand and key memory -------------------------------------------------
    def _elts(self, steps, columns: bool) -> list[int]:
        """Galois elements of rotation ``steps`` (and of the column swap / conjugation)."""
        elts = {self.context.galois_elt_from_step(s) for s in steps if s}
        if columns:
            elts.add(self.context.galois_elt_column)
        return sorted(elts)

    def _power_of_two_elts(self) -> list[int]:
        """SEAL's default set: steps +-2^i below N/2 and the column swap."""
        half = self.poly_modulus_degree // 2
        steps = [s * (1 << i) for i in range(half.bit_length() - 1) for s in (1, -1)]
        return self._elts(steps, True)

    def galois_key_bytes(self) -> int:
        """Bytes one Galois (or relinearization) key takes on the device, from the parameters:
        dnum x 2 x (L + 1 + K) x N words, with dnum = ceil((L + 1) / alpha) digits of hybrid key
        switching (Han-Ki 2020), so the cost of keys is known before they are made."""
        return switching_key_words(self.context) * self.context.word_bits // 8

    def memory(self) -> dict:
        """Bytes of key material this context holds on its device: ``secret_key``,
        ``public_key``, ``relin_keys``, ``galois_keys`` (with ``galois_key_count``),
        ``bootstrapping_keys`` (CKKS with bootstrapping) and ``total``; ``galois_key_bytes`` is
        the size of one more Galois key (:meth:`galois_key_bytes`)."""
        def size(obj):
            return 0 if obj is None else int(obj.nbytes)

        out = {"secret_key": size(self.secret_key), "public_key": size(self.public_key),
               "relin_keys": size(self.relin_keys), "galois_keys": size(self.galois_keys),
               "galois_key_count": 0 if self.galois_keys is None else len(self.galois_keys)}
        bt = getattr(self, "bootstrapper", None)
        out["bootstrapping_keys"] = 0 if bt is None else int(bt.key_bytes())
        out["total"] = sum(v for k, v in out.items() if k != "galois_key_count")
        out["galois_key_bytes"] = self.galois_key_bytes()
        return out

    def create_galois_keys(self, steps: Sequence[int] = (), columns: bool = False) -> None:
        """Creates the Galois keys for rotation ``steps`` (|step| < N/2) and, with ``columns``,
        the column swap (BFV/BGV) or conjugation (CKKS) that this context lacks; keys already
        present are kept. A progress bar (rich) shows when it takes more than a second. Needs the
        secret key: create the keys a server will use before ``ctx.public()`` / ``to_bytes()``.

        Raises:
            ValueError: no secret key, no special prime, or a step out of range (named).
        """
        steps = _check.steps(steps, self.poly_modulus_degree)
        self._need_secret()
        if self.context.special_primes == 0:
            self._gk()  # raises the no-special-prime message
        self._generate_galois(self._elts(steps, _check.flag(columns, "columns")))

    def ensure_galois_keys(self, steps: Sequence[int] = (), columns: bool = False) -> None:
        """Makes sure keys for ``steps`` (and the column swap/conjugation) exist: missing ones are
        created when this context holds the secret key (the pythonic contexts create Galois keys
        on demand). A public context (server view) keeps what it has: a missing step is then
        composed from power-of-two keys by the evaluator or reported by it."""
        if self.secret_key is None or self.context.special_primes == 0:
            return
        elts = self._elts(steps, columns)
        have = self.galois_keys
        missing = [e for e in elts if have is None or not have.has_key(e)]
        if missing:
            self._generate_galois(missing)

    def _generate_galois(self, elts: list[int]) -> None:
        """Generates the keys of Galois elements ``elts`` (one at a time, so a progress bar can
        follow) and adds them to ``galois_keys``."""
        have = self.galois_keys
        todo = [e for e in dict.fromkeys(elts) if have is None or not have.has_key(e)]
        _params.check_key_memory(len(todo), self.galois_key_bytes(),
                                 0 if have is None else int(have.nbytes),
                                 0 if self.relin_keys is None else int(self.relin_keys.nbytes),
                                 self.max_key_bytes)
        if self._keygen is None:
            self._keygen = _core.KeyGenerator(self.context, self.secret_key)
        self.galois_keys = generate_galois_keys(self._keygen, elts, self.galois_keys,
                                                self.galois_key_bytes())

    def _need_secret(self) -> _core.Decryptor:
        """The decryptor; ValueError in a public context (no secret key)."""
        if self.decryptor is None:
            raise ValueError("ctx: this is a public context (no secret key); decrypt on the client")
        return self.decryptor

    def _gk(self, steps: Sequence[int] = (), columns: bool = False) -> _core.GaloisKeys:
        """The Galois keys, after creating those ``steps`` (and the column swap) need when this
        context holds the secret key (:meth:`ensure_galois_keys`)."""
        self.ensure_galois_keys(steps, columns)
        if self.galois_keys is None:
            if self.context.special_primes == 0:
                raise ValueError("ctx: no Galois keys: this context has no special prime "
                                 "(special_primes=0), so none can exist")
            raise _errors.no_galois_keys(list(steps), columns)
        return self.galois_keys

    def _rlk(self):
        if self.relin_keys is None:
            if self.context.special_primes == 0:
                raise ValueError("ctx: no relinearization keys: this context has no special "
                                 "prime (special_primes=0), so none can exist")
            raise ValueError("ctx: no relinearization keys (create the context with relin_keys=True)")
        return self.relin_keys


def generate_galois_keys(keygen: _core.KeyGenerator, elts: Sequence[int],
                         into: _core.GaloisKeys | None = None, key_bytes: int = 0,
                         what: str = "Galois keys",
                         compact: bool | Collection[int] = False,
                         levels: Mapping[int, int] | None = None) -> _core.GaloisKeys | None:
    """Keys of the Galois elements ``elts`` that ``into`` lacks, made one at a time by ``keygen``
    so that a progress bar (rich, after a second: :mod:`veil._progress`) can follow, and added
    to ``into`` (a new set when None). ``compact``: keys that store their b_j only (half the
    bytes; ``KSwitchKey::compact``): all (True), none (False) or those of the given elements.
    ``levels``: element -> the highest level its key serves (``KSwitchKey::level``; absent
    elements: every level). Returns the set (None when nothing was asked for)."""
    todo = [e for e in elts if into is None or not into.has_key(e)]
    size = f" x {_progress.human_bytes(key_bytes)}" if key_bytes else ""
    with _progress.Steps(f"{what} ({len(todo)}{size})", len(todo)) as bar:
        for e in todo:
            small = compact if isinstance(compact, bool) else e in compact
            level = None if levels is None or e not in levels else [levels[e]]
            gk = keygen.create_galois_keys_from_elts([e], small, level)
            if into is None:
                into = gk
            else:
                into.update(gk)
            bar.advance()
    return into


class CiphertextBase:
    """What the pythonic ciphertexts share: the owning context, the raw C++ ciphertext and the
    level/size/device facts, the encrypted length, moves and level switching. Subclasses define
    ``_wrap``.

    **Length.** A ciphertext remembers how many values it encrypts (``len(ct)``, ``ct.shape``),
    and decryption returns that many: ``ctx.encrypt(v)`` of 16 values decrypts to 16 values
    (a scalar or a Plaintext fills every slot: the length is the slot count; BFV/BGV with
    ``encoding="coefficients"`` always has length N and decrypts to N coefficients). The slots
    beyond the length (zeros after encryption) still exist: rotations move them in. Operations:

    * elementwise (``+ - *``, ``/`` on CKKS) of two ciphertexts need equal lengths, and a
      plaintext vector must have the ciphertext's length (ValueError naming ``other``
      otherwise, as TenSEAL's vectors); a scalar applies to every value; the result keeps it;
    * unary operations (``-x``, ``x ** k``, ``square``, ``rotate``, ``rescale``, level
      switches, ``polyval``/``evaluate``, ``conjugate``, ``bootstrap``, ``to``) keep it;
    * ``sum()`` and ``dot()`` give length 1 (the result is in slot 0); ``x @ M`` with an
      n x m matrix needs length n and gives length m; BFV/BGV ``rotate_columns`` gives
      length N (the values move to the other row);
    * serialization (``to_bytes``/``save``, pickling, ``veil serve``) carries it in the
      ciphertext's bytes (docs/serialization.md); bytes without it (written before it existed,
      or by ``RawCiphertext.to_bytes``) load with every slot.
    """

    __array_priority__ = 1000  # numpy defers to our reflected operators

    ctx: KeyedContext
    raw: _core.Ciphertext
    #: How many leading slots hold the encrypted vector (``len(ct)``).
    _length: int

    def _full_length(self) -> int:  # pragma: no cover - overridden
        """The length of a ciphertext that fills every slot (CKKS: N/2; BFV/BGV: N)."""
        raise NotImplementedError

    def _init_length(self, length) -> None:
        """Sets the length: ``None`` for every slot, else 0..the slot count (checked)."""
        full = self._full_length()
        self._length = full if length is None else _check.integer(length, "length", 0, full)

    def __len__(self) -> int:
        """The encrypted length: how many values decrypt returns (class docstring)."""
        return self._length

    def __bool__(self) -> bool:
        return True  # an encrypted object, not a container: truthy even at length 0

    @property
    def shape(self) -> tuple[int]:
        """``(len(ct),)``: the shape of the encrypted vector, as numpy writes it."""
        return (self._length,)

    def with_length(self: _C, length: int | None = None) -> _C:
        """The same ciphertext (no computation, the same raw object) declared to hold
        ``length`` values (default None: every slot, N/2 for CKKS and N for BFV/BGV), e.g. to
        decrypt the slots after the vector: the window sums ``sum(size)`` leaves in every slot,
        a row moved by ``rotate_columns``. The slots beyond the old length hold what the
        computation left there (zeros after encryption).

        Raises ValueError naming ``length`` outside 0..the slot count (coefficient encoding:
        only N)."""
        full = self._full_length()
        length = full if length is None else _check.integer(length, "length", 0, full)
        if length != full and getattr(self.ctx, "encoding", "batch") != "batch":
            raise ValueError(f"length: a coefficient-encoded ciphertext always has length {full}")
        return self._resized(length)

    def __copy__(self: _C) -> _C:
        """A shallow copy: the same context and raw ciphertext, its own attributes (length,
        flags). Without it copy.copy would fall back on __reduce_ex__, the pickling path, and
        serialize the ciphertext (a device-to-host copy on a GPU) on every operation."""
        out = object.__new__(type(self))
        out.__dict__.update(self.__dict__)
        return out

    def _resized(self: _C, length: int) -> _C:
        """This ciphertext (the same raw object) with another length."""
        out = copy.copy(self)
        out._length = length
        return out

    def _same_length(self, other: CiphertextBase) -> None:
        """ValueError naming ``other`` when two ciphertexts' lengths differ."""
        if other._length != self._length:
            raise ValueError(
                f"other: the ciphertexts have lengths {self._length} and {other._length}; "
                "elementwise operations need equal lengths (encrypt both with the same number "
                "of values)")

    def _check_vector(self, other: Any) -> None:
        """ValueError naming ``other`` when a plaintext vector's length differs from the
        ciphertext's; scalars, Plaintexts and what is not a 1-D array pass (the encoder
        reports those)."""
        if isinstance(other, (_core.Plaintext, str, bytes)) or _check.is_integer(other):
            return
        try:
            n = len(other) if np.ndim(other) == 1 else None
        except (TypeError, ValueError):  # ragged nesting and the like: the encoder says
            return
        if n is not None and n != self._length:
            raise ValueError(
                f"other: a vector of {n} values for a ciphertext of length {self._length}; "
                "elementwise operations need equal lengths (a scalar applies to every value)")

    @_errors.user_operation("x.decrypt()")
    def decrypt(self, *args: Any, **kwargs: Any) -> Any:
        """``ctx.decrypt(ct, ...)`` with this ciphertext's context: ``len(ct)`` values (the
        arguments of the context's ``decrypt``: ``complex_output``/``signed``, ``out``).

        Raises:
            ValueError: the context holds no secret key (a server's public view): decrypt on
                the client, with its context (``client_ctx.decrypt(ct)``, or
                ``veil.load(data, client_ctx).decrypt()``).
        """
        if self.ctx.secret_key is None:
            raise ValueError(
                "ct: this ciphertext's context holds no secret key (a public view, e.g. a "
                "server's), so it cannot decrypt; decrypt on the client: client_ctx.decrypt(ct), "
                "or veil.load(ct.to_bytes(), client_ctx).decrypt()")
        return cast(Any, self.ctx).decrypt(self, *args, **kwargs)

    @property
    def size(self) -> int:
        return self.raw.size

    @property
    def level(self) -> int:
        return self.raw.level

    @property
    def device(self) -> str:
        return self.raw.device

    def _wrap(self, raw):  # pragma: no cover - overridden
        raise NotImplementedError

    @_errors.user_operation("-x")
    def __neg__(self):
        return self._wrap(self.ctx.evaluator.negate(self.raw))

    @_errors.user_operation(_errors.method_name("rotate_many"))
    def rotate_many(self: _C, steps: Sequence[int]) -> list[_C]:
        """Hoisted rotations: one shared decomposition (ModUp) for every step (|step| < N/2)."""
        steps = _check.steps(steps, self.ctx.poly_modulus_degree)
        raws = self.ctx.evaluator.rotate_many(self.raw, steps, self.ctx._gk(steps))
        return [self._wrap(r) for r in raws]

    # ---- tensor helpers (veil._tensor) ---------------------------------------------------------
    @_errors.user_operation("x.sum()")
    def sum(self: _C, size: int | None = None) -> _C:
        """Rotate-and-add sum of the first ``size`` slots (default ``len(ct)``; BFV/BGV with
        a length above N/2: both rows), a ciphertext of length 1: ``ct.sum().decrypt()[0]`` is
        the total. Slot i holds x_i + ... + x_(i+size-1) (cyclic in the row: with ``size`` =
        N/2, or both rows, every slot holds the total). Creates the rotation keys it needs on a
        client context (:func:`veil._tensor.slot_sum`; Halevi-Shoup, CRYPTO 2014).

        Raises ValueError naming ``size`` outside 1..N/2."""
        return _tensor.slot_sum(self, size)

    @_errors.user_operation("x.dot({y})")
    def dot(self: _C, other: object, size: int | None = None) -> _C:
        """Inner product with a ciphertext or a plaintext vector of the same length:
        ``(self * other).sum(size)`` (size: the length), a ciphertext of length 1 (slot 0
        holds the result; ``x @ v`` for a plaintext vector v is the same)."""
        return _tensor.dot(self, other, size)

    @_errors.user_operation("x @ M")
    def matmul(self: _C, matrix: object) -> _C:
        """v @ M for the vector v of length n (``len(ct)``, zeros in the slots after it) and a
        plaintext n x m matrix: a ciphertext of length m holding y_j = sum_i v_i M[i, j].
        Halevi-Shoup's diagonal method with baby-step giant-step and hoisted rotations
        (:func:`veil._tensor.matmul`).

        Raises ValueError naming ``matrix`` (not 2-D, n != len(ct), or max(n, m) > N/4 and
        != N/2)."""
        return _tensor.matmul(self, matrix)

    def __matmul__(self: _C, other: object) -> _C:
        """``x @ M`` (a plaintext n x m matrix: :meth:`matmul`) or ``x @ v`` (a plaintext
        vector: :meth:`dot`). Two ciphertexts raise TypeError: use ``x.dot(y)`` or ``x * y``."""
        if isinstance(other, CiphertextBase):
            raise TypeError(
                "other: x @ y with two ciphertexts is not supported; use x.dot(y) for the inner "
                "product (a ciphertext of length 1), x * y for the elementwise product, or "
                "x @ M with a plaintext n x m matrix M")
        if not isinstance(other, _core.Plaintext) and np.ndim(cast(Any, other)) == 1:
            return self.dot(other)
        return self.matmul(other)

    def __rmatmul__(self: _C, other: object) -> _C:
        """``M @ x`` = ``x @ M.T`` for a plaintext m x n matrix M (numpy's convention for a
        vector on the right), ``v @ x`` = ``x.dot(v)`` for a plaintext vector v."""
        if np.ndim(cast(Any, other)) == 1:
            return self.dot(other)
        mat = np.asarray(other)
        if mat.ndim != 2:
            raise ValueError(f"matrix: expected a 2-D (m, n) array, got shape {mat.shape}")
        return self.matmul(mat.T)

    @_errors.user_operation("x.mod_switch_to_next()")
    def mod_switch_to_next(self: _C) -> _C:
        """Switches to the next level (BGV: modulus switching; CKKS: drops a prime, same scale)."""
        return self._wrap(self.ctx.evaluator.mod_switch_to_next(self.raw))

    @_errors.user_operation(_errors.method_name("mod_switch_to"))
    def mod_switch_to(self: _C, level: int) -> _C:
        """Switches down to ``level`` (0 <= level <= the ciphertext's level)."""
        level = _check.integer(level, "level", 0, self.level)
        return self._wrap(self.ctx.evaluator.mod_switch_to(self.raw, level))

    def to(self: _C, device: str) -> _C:
        """A copy on another device."""
        return self._wrap(self.raw.to(resolve_device(device)))

    # ---- serialization ----------------------------------------------------------------------
    def to_bytes(self, compression: str = "zstd", seeded: bool | None = None) -> bytes:
        """Veil-format bytes of the ciphertext with its length and (CKKS) whether it holds
        complex values (seeded when it is a fresh symmetric-key encryption, unless
        ``seeded=False``). Load with ``veil.load(data, ctx)`` or
        ``type(ct).from_bytes(data, ctx)``."""
        return _core.ciphertext_to_bytes(self.raw, self._length, bool(self._extra()),
                                         compression, seeded)

    def save(self, path: PathLike, compression: str = "zstd",
             seeded: bool | None = None) -> None:
        """Writes :meth:`to_bytes` to a file."""
        data = self.to_bytes(compression, seeded)
        with open(path, "wb") as f:
            f.write(data)

    @classmethod
    def from_bytes(cls: type[_C], data: Bytes, ctx: KeyedContext,
                   max_bytes: int | None = None) -> _C:
        """Loads a ciphertext into ``ctx`` (checked against its parameters) on its device,
        with the length and real/complex flag its bytes carry (bytes without them: every slot,
        and CKKS values taken as complex).

        Raises:
            ValueError: bad bytes (named field), bytes of another object or scheme (naming the
                class or function that loads them: ``veil.load`` recognises any object), or a
                ``ctx`` of another scheme or parameters.
            TypeError: ``ctx`` is not a pythonic context.
        """
        if not isinstance(ctx, KeyedContext):
            raise TypeError(f"ctx: expected a veil context, got {type(ctx).__name__}")
        kind, found = _ser.identify(data)
        scheme = str(found)  # every Veil object's header names its scheme
        if kind != "ciphertext":
            raise ValueError(f"data: holds {_ser.describe(kind, found)}, not a ciphertext; load "
                             f"it with {_ser.loader_name(kind, found)}")
        right = _CIPHERTEXT_CLASSES.get(scheme)
        if right is not None and right is not cls and not issubclass(right, cls):
            raise ValueError(f"data: holds a {scheme.upper()} ciphertext; load it with "
                             f"veil.{right.__name__}.from_bytes(data, ctx) (or veil.load(data, "
                             f"ctx)), not veil.{cls.__name__}.from_bytes")
        if ctx.scheme != scheme:
            raise ValueError(f"ctx: the data is a {scheme.upper()} ciphertext but ctx is a "
                             f"{ctx.scheme.upper()} context")
        raw = _core.Ciphertext.from_bytes(data, ctx.context, ctx.device, max_bytes)
        return cls._make(ctx, raw, None, _core.ciphertext_info(data))

    @classmethod
    def load(cls: type[_C], path: PathLike, ctx: KeyedContext,
             max_bytes: int | None = None) -> _C:
        """Loads a file written by :meth:`save` (:meth:`from_bytes`)."""
        with open(path, "rb") as f:
            return cls.from_bytes(f.read(), ctx, max_bytes)

    @classmethod
    def _make(cls, ctx, raw, extra=None, info=None):  # pragma: no cover - overridden
        """A pythonic ciphertext around ``raw``: ``info`` is the (length, complex) record of its
        bytes (None: not recorded), ``extra`` what :meth:`_extra` gave (older pickles)."""
        raise NotImplementedError

    def _extra(self):
        """Pythonic state beyond the raw ciphertext (CKKS: whether it holds complex values)."""
        return

    def __reduce_ex__(self, protocol):
        # Uncompressed: pickling is how ciphertexts travel between processes (Ray, multiprocessing),
        # where zstd cost ~5x the serialization time for ~25 % fewer bytes. With protocol 5 the
        # bytes go as a PickleBuffer: out of band where the pickler takes buffers (Ray's object
        # store: no copy into the pickle stream, and a zero-copy view on the reading side).
        ctx = self.ctx
        data = _core.ciphertext_to_buffer(self.raw, self._length, bool(self._extra()))
        payload = pickle.PickleBuffer(cast(Any, data)) if protocol >= 5 else data.tobytes()
        return (_restore_ciphertext,
                (ctx.key_set_id, ctx.scheme, ctx.context.params.to_bytes(), ctx.security,
                 self.raw.device, ctx._options(), payload, self._extra()))


_INTEGER_CLASSES: dict = {}
_CIPHERTEXT_CLASSES: dict = {}
_CONTEXT_CLASSES: dict = {}


def _bundle_class(scheme: str):
    cls = _CONTEXT_CLASSES.get(scheme)
    if cls is None:
        raise ValueError(f"scheme: expected 'bfv', 'bgv' or 'ckks', got {scheme!r}")
    return cls


def switching_key_words(context: _core.Context) -> int:
    """Words of one key-switching key (relinearization or Galois) at the top level:
    dnum x 2 x (L + 1 + K) x N, with dnum = ceil((L + 1) / alpha) digits of hybrid key switching
    (Han-Ki, CT-RSA 2020)."""
    num_q = context.max_level + 1
    dnum = -(-num_q // max(1, context.alpha or context.special_primes))
    return dnum * 2 * (num_q + context.special_primes) * context.poly_modulus_degree


def assemble(context, device: str, options: dict, secret_key=None, public_key=None,
             relin_keys=None, galois_keys=None, key_set_id: str | None = None) -> KeyedContext:
    """A pythonic context of ``context``'s scheme around existing keys (any may be None): how
    bundles, unpickled ciphertexts and SEAL clients' bytes become contexts."""
    scheme = context.scheme
    obj = object.__new__(_bundle_class(scheme))
    if scheme in _INTEGER_CLASSES:
        obj.scheme = scheme
    obj._attach(context, device, secret_key, public_key, relin_keys, galois_keys,
                key_set_id=key_set_id)
    obj._init_options(options)
    return obj


def _restore_keyed(data: bytes, device: str):
    return KeyedContext.from_bytes(data, _ser.usable_device(device))


def _restore_ciphertext(key_set_id, scheme, params_bytes, security, device, options, data, extra):
    """Unpickles a pythonic ciphertext into the live context of its key set (the most capable
    one: the client's secret context, else a server view), or into a keyless context that
    unpickled ciphertexts of that key set then share."""
    ctx = _ser.find_keyed(key_set_id)
    if ctx is None:
        context = _ser.context_for(params_bytes, security)
        ctx = assemble(context, _ser.usable_device(device), options, key_set_id=key_set_id)
    raw = _core.Ciphertext.from_bytes(data, ctx.context, ctx.device)
    return _CIPHERTEXT_CLASSES[scheme]._make(ctx, raw, extra, _core.ciphertext_info(data))


def load(source: Bytes | PathLike, ctx: KeyedContext | _core.Context | None = None,
         device: str | None = None, max_bytes: int | None = None) -> Any:
    """Any Veil object from its bytes or a file, recognised by its header: a context bundle
    (``ctx.to_bytes()``: a :class:`veil.KeyedContext` of the right scheme), a ciphertext (a
    :class:`veil.CKKSCiphertext` or :class:`veil.Ciphertext` bound to ``ctx``, with its length
    and real/complex flag), and the SEAL-style objects (``EncryptionParameters``, ``Plaintext``,
    ``SecretKey``, ``PublicKey``, ``RelinKeys``, ``GaloisKeys``, ``SwitchingKey``,
    ``BootstrapParameters``).

    Args:
        source: bytes-like data, or a path (str or os.PathLike) to a file holding them.
        ctx: the context the object belongs to (not needed for a bundle or parameters): a
            pythonic context (``veil.bfv/bgv/ckks``; ciphertexts come back pythonic) or a
            :class:`veil.Context` (every object comes back raw: a ciphertext as a
            ``veil.RawCiphertext``).
        device: where the object goes (default: ``ctx``'s device; a bundle: ``"auto"``; raw
            objects under a :class:`veil.Context`: the CPU).
        max_bytes: the largest body accepted (default 16 GiB; see ``from_bytes``).

    Raises:
        ValueError: bytes that are no Veil object or are malformed (naming the field), SEAL's
            format (naming ``veil.seal``'s loaders), a missing ``ctx``, or a ``ctx`` of another
            scheme or parameters.
        TypeError: ``source`` or ``ctx`` of the wrong type.
    """
    if isinstance(source, (str, os.PathLike)):
        with open(source, "rb") as f:
            data: Any = f.read()
    else:
        data = source
    if "is_bytes" in TENSOR_HOOKS and TENSOR_HOOKS["is_bytes"](data):  # an encrypted tensor: its own header, then ciphertexts
        if not isinstance(ctx, KeyedContext):
            raise ValueError("ctx: an encrypted tensor loads into the pythonic context it "
                             "belongs to: veil.load(data, ctx)")
        tensor = TENSOR_HOOKS["from_bytes"](data, ctx, max_bytes)
        return tensor if device is None else tensor.to(device)
    kind, scheme = _ser.identify(data)
    if ctx is not None and not isinstance(ctx, (KeyedContext, _core.Context)):
        raise TypeError("ctx: expected a veil context (veil.bfv/bgv/ckks), a veil.Context or "
                        f"None, got {type(ctx).__name__}")
    if kind == "context":
        dev = device if device is not None else (ctx.device if isinstance(ctx, KeyedContext)
                                                 else "auto")
        return KeyedContext.from_bytes(data, dev, max_bytes)
    what = _ser.describe(kind, scheme)
    if kind == "seal":
        raise ValueError(f"data: {what}; load it with {_ser.loader_name(kind, scheme)}")
    if kind == "parameters":
        return _core.EncryptionParameters.from_bytes(data)
    if ctx is None:
        raise ValueError(f"ctx: {what} loads into the context it belongs to: "
                         "veil.load(data, ctx)")
    context = ctx.context if isinstance(ctx, KeyedContext) else ctx
    if context.scheme != scheme:
        raise ValueError(f"ctx: the data is {what} but ctx is a {context.scheme.upper()} "
                         "context")
    if isinstance(ctx, KeyedContext):
        if kind == "ciphertext":
            ct = _CIPHERTEXT_CLASSES[scheme].from_bytes(data, ctx, max_bytes)
            return ct if device is None else ct.to(device)
        dev = ctx.device if device is None else device
    else:
        dev = "cpu" if device is None else device
    if kind == "bootstrap_parameters":
        return _core.BootstrapParameters.from_bytes(data, context, max_bytes)
    loaders: dict[str, Any] = {
        "plaintext": _core.Plaintext, "ciphertext": _core.Ciphertext,
        "secret_key": _core.SecretKey, "public_key": _core.PublicKey,
        "relin_keys": _core.RelinKeys, "galois_keys": _core.GaloisKeys,
        "switching_key": _core.SwitchingKey}
    return loaders[kind].from_bytes(data, context, dev, max_bytes)


def check_same_context(a, b, what: str = "other") -> None:
    """ValueError naming ``what`` unless ciphertext ``b`` belongs to ``a``'s context (its
    parameters and word size). The check is the core's (``veil._core.check_same_context``,
    C++ ``check_compatible``): this forwards to it with the user's argument name, and the
    message gives both parameter sets."""
    _core.check_same_context(a.ctx.context, b.raw, what)


__all__: Sequence[str] = ["CiphertextBase", "KeyedContext", "build_params", "check_degree",
                         "check_same_context", "coeff_modulus_primes"]
