"""What every pythonic Veil context shares: parameters, keys on one device, and the server view."""

from __future__ import annotations

from collections.abc import Sequence

from . import _core
from ._device import resolve_device


def build_params(scheme: str, n: int, coeff_modulus, plain_modulus, special_primes: int,
                 alpha: int | None, mul_method: str | None, security) -> _core.EncryptionParameters:
    """EncryptionParameters from pythonic arguments.

    ``coeff_modulus``: primes (ints >= 64) or bit sizes (ints < 64); None = the scheme's default.
    """
    params = _core.EncryptionParameters(scheme)
    params.poly_modulus_degree = int(n)
    if coeff_modulus is None:
        raise ValueError("coeff_modulus: required here (no default for this scheme)")
    coeff_modulus = [int(q) for q in coeff_modulus]
    if all(q < 64 for q in coeff_modulus):
        primes = _core.CoeffModulus.create(int(n), coeff_modulus)
    else:
        primes = coeff_modulus
    params.coeff_modulus = primes
    params.special_primes = int(special_primes)
    params.alpha = 0 if alpha is None else int(alpha)
    if plain_modulus is not None:
        params.plain_modulus = int(plain_modulus)
    if mul_method is not None:
        params.mul_method = mul_method
    return params


class KeyedContext:
    """A scheme context with its keys on one device (the client's view: it holds the secret key).

    Subclasses set ``scheme`` and the encoder. ``public()`` returns the server's view.
    """

    scheme = ""

    def _setup(self, params: _core.EncryptionParameters, device, security, seed,
               galois_steps, relin_keys: bool) -> None:
        self.device = resolve_device(device)
        self.context = _core.Context(params, security)
        keygen = _core.KeyGenerator(self.context, self.device, seed)
        self.secret_key = keygen.secret_key()
        self.public_key = keygen.create_public_key()
        self.relin_keys = keygen.create_relin_keys() if relin_keys else None
        if galois_steps is None:
            self.galois_keys = None
        elif isinstance(galois_steps, str):
            if galois_steps != "power_of_two":
                raise ValueError(
                    "galois_steps: expected 'power_of_two', a list of steps or None, "
                    f"got {galois_steps!r}")
            self.galois_keys = keygen.create_galois_keys()
        else:
            self.galois_keys = keygen.create_galois_keys([int(s) for s in galois_steps], True)
        enc_seed = None if seed is None else seed + 1
        self.encryptor = _core.Encryptor(self.context, self.public_key, enc_seed)
        self.decryptor = _core.Decryptor(self.context, self.secret_key)
        self.evaluator = _core.Evaluator(self.context)

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

    def describe(self) -> dict:
        """Parameters as a dict (for printing and benchmark records)."""
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
        return d

    def public(self):
        """The server's view: same context and evaluation keys, no secret key.

        Encrypting still works (with the public key); decrypting raises ValueError.
        """
        view = object.__new__(type(self))
        view.__dict__.update(self.__dict__)
        view.secret_key = None
        view.decryptor = None
        return view

    def _need_secret(self) -> None:
        if self.decryptor is None:
            raise ValueError("ctx: this is a public context (no secret key); decrypt on the client")

    def _gk(self):
        if self.galois_keys is None:
            raise ValueError("ctx: no Galois keys (create the context with galois_steps=...)")
        return self.galois_keys

    def _rlk(self):
        if self.relin_keys is None:
            raise ValueError("ctx: no relinearization keys (create the context with relin_keys=True)")
        return self.relin_keys


class CiphertextBase:
    """What the pythonic ciphertexts share: the owning context, the raw C++ ciphertext and the
    level/size/device facts, moves and level switching. Subclasses define ``_wrap``."""

    __array_priority__ = 1000  # numpy defers to our reflected operators

    ctx: KeyedContext
    raw: _core.Ciphertext

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

    def __neg__(self):
        return self._wrap(self.ctx.evaluator.negate(self.raw))

    def rotate_many(self, steps) -> list:
        """Hoisted rotations: one shared decomposition (ModUp) for every step."""
        raws = self.ctx.evaluator.rotate_many(self.raw, [int(s) for s in steps], self.ctx._gk())
        return [self._wrap(r) for r in raws]

    def mod_switch_to_next(self):
        """Switches to the next level (BGV: modulus switching; CKKS: drops a prime, same scale)."""
        return self._wrap(self.ctx.evaluator.mod_switch_to_next(self.raw))

    def mod_switch_to(self, level: int):
        """Switches down to ``level``."""
        return self._wrap(self.ctx.evaluator.mod_switch_to(self.raw, int(level)))

    def to(self, device: str):
        """A copy on another device."""
        return self._wrap(self.raw.to(resolve_device(device)))


def check_same_context(a, b, what: str = "other") -> None:
    if a.ctx.context.parameter_hash != b.ctx.context.parameter_hash:
        raise ValueError(f"{what}: ciphertext belongs to a different context")


__all__: Sequence[str] = ["CiphertextBase", "KeyedContext", "build_params", "check_same_context"]
