"""Microsoft SEAL 4.x wire compatibility: read and write SEAL's serialization.

SEAL's format (16-byte headers with magic 0xA15E, nested objects, parms_id = BLAKE2b of the
parameters, compression none/zlib/zstd) is implemented in C++ (``cpp/veil/io/seal.h``); this
module gives it names that read naturally::

    import veil
    params = veil.seal.load_parameters(seal_params_bytes)     # EncryptionParameters
    ctx = veil.Context(params)                                 # or veil.seal.context(...)
    ct = veil.seal.load_ciphertext(seal_ct_bytes, ctx, device="cuda")
    back = veil.seal.save(ct)                                  # bytes SEAL's Ciphertext.load reads

The loaders also accept a pythonic context (``veil.bfv(...)``, ``veil.seal.keyed_context``) and
then return pythonic ciphertexts; :func:`save` accepts those too.

Rules (documented in docs/serialization.md):

* SEAL has one special prime (the last of its coeff_modulus; none when there is one prime) and
  decomposes key switching per prime. SEAL parameters load as Veil parameters with
  ``special_primes=1``; Veil parameters save to SEAL only with one special prime (and
  ``alpha=1`` for keys).
* Loading SEAL keys into a Veil context with ``alpha > 1`` sums SEAL's per-prime keys over each
  digit (same special prime, so the sum is that digit's key).
* Veil writes SEAL objects unseeded (its seeds are ChaCha20, SEAL's BLAKE2Xb) and reads SEAL's
  seeded objects (SEAL's default BLAKE2Xb PRNG), regenerating the uniform part exactly as SEAL.
* The version written in the headers defaults to 4.1 (read by SEAL 4.1 and 4.4; SEAL 4.0-4.3
  read only their own minor version): pass ``version=(4, 0)`` etc. to target another.
* One object per bytes object: :func:`split` cuts a stream of concatenated SEAL objects.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Callable, Union

from . import _core

if TYPE_CHECKING:
    from ._base import KeyedContext

#: What the loaders read: SEAL's bytes.
Bytes = Union[bytes, bytearray, memoryview]

__all__ = [
    "context",
    "keyed_context",
    "load_ciphertext",
    "load_galois_keys",
    "load_parameters",
    "load_plaintext",
    "load_public_key",
    "load_relin_keys",
    "load_secret_key",
    "parms_id",
    "save",
    "split",
]


def _minor(version: Sequence[int]) -> int:
    try:
        major, minor = (int(v) for v in version)
    except (TypeError, ValueError) as e:
        raise ValueError(f"version: expected (4, minor), got {version!r}") from e
    if major != 4 or not 0 <= minor <= 255:
        raise ValueError(f"version: Veil writes SEAL 4.x, got {version!r}")
    return minor


def save(obj: Any, compression: str = "none", version: Sequence[int] = (4, 1)) -> bytes:
    """SEAL 4.x bytes of a Veil object (EncryptionParameters, Context, Plaintext, Ciphertext,
    SecretKey, PublicKey, RelinKeys, GaloisKeys, or a pythonic ciphertext).

    Args:
        compression: ``"none"`` (default: every SEAL build reads it), ``"zlib"`` or ``"zstd"``.
        version: (4, minor) written in every header (default (4, 1)).

    Raises:
        ValueError: parameters SEAL cannot express (several special primes; ``alpha > 1`` for
            keys), or a ciphertext of more than 16 polynomials.
    """
    raw = getattr(obj, "raw", obj)
    if isinstance(raw, _core.Context):
        raw = raw.params
    return _core.seal_save(raw, compression, _minor(version))


def load_parameters(data: Bytes) -> _core.EncryptionParameters:
    """SEAL EncryptionParameters as Veil's (``special_primes=1`` when there are several primes)."""
    return _core.seal_load_parameters(data)


def context(data: Bytes, security: int | None = 128) -> _core.Context:
    """A Veil Context from SEAL parameter bytes (validated; ``security=None`` skips the
    HE-standard bound as SEAL's ``sec_level_type.none``)."""
    return _core.Context(load_parameters(data), security)


def _split_ctx(ctx: _core.Context | KeyedContext,
               device: str | None) -> tuple[_core.Context, str, KeyedContext | None]:
    """(raw Context, device, pythonic context or None) for a raw or pythonic context."""
    if isinstance(ctx, _core.Context):
        return ctx, device or "cpu", None
    core = getattr(ctx, "context", None)
    if isinstance(core, _core.Context):
        return core, device or ctx.device, ctx
    raise TypeError(f"context: expected a veil Context or pythonic context, got {type(ctx).__name__}")


def _loader(name: str) -> Callable[..., Any]:
    fn = getattr(_core, "seal_load_" + name)

    def load(data: Bytes, context: _core.Context | KeyedContext, device: str | None = None,
             max_bytes: int | None = None) -> Any:
        core, dev, keyed = _split_ctx(context, device)
        obj = fn(data, core, dev, max_bytes)
        if name == "ciphertext" and keyed is not None:
            from ._base import _CIPHERTEXT_CLASSES

            return _CIPHERTEXT_CLASSES[keyed.scheme]._make(keyed, obj)
        return obj

    load.__name__ = "load_" + name
    load.__doc__ = (
        f"Loads a SEAL 4.x {name.replace('_', ' ')} into ``context`` (a veil Context: onto "
        "``device``, default 'cpu'; a pythonic context: onto its device, and ciphertexts come "
        "back pythonic).\n\nRaises:\n    ValueError: bad bytes (the message names the field), "
        "other parameters, or parameters SEAL's layout cannot map onto this context.")
    return load


load_plaintext = _loader("plaintext")
load_ciphertext = _loader("ciphertext")
load_secret_key = _loader("secret_key")
load_public_key = _loader("public_key")
load_relin_keys = _loader("relin_keys")
load_galois_keys = _loader("galois_keys")


def split(data: Bytes) -> list[memoryview]:
    """The SEAL objects concatenated in ``data`` (a stream SEAL's ``save`` wrote several times)."""
    view = memoryview(data).cast("B")
    return [view[o:o + n] for o, n in _core.seal_split(view)]


def parms_id(context: _core.Context | KeyedContext,
             level: int | None = None) -> tuple[int, ...]:
    """SEAL's parms_id of a data ``level`` of ``context``, or of its key level (None)."""
    core, _, _ = _split_ctx(context, None)
    return tuple(_core.seal_parms_id(core, level))


def keyed_context(parameters: Bytes, public_key: Bytes | None = None,
                  relin_keys: Bytes | None = None, galois_keys: Bytes | None = None,
                  secret_key: Bytes | None = None, device: str | None = "auto",
                  security: int | None = 128, **options: Any) -> KeyedContext:
    """A pythonic context (``veil.bfv/bgv/ckks``-style) from SEAL bytes: a server built from a
    SEAL client's parameters and evaluation keys, or a client from its secret key too.

    ``options``: ``encoding`` (BFV/BGV: "batch" or "coefficients"), ``scale`` and
    ``auto_rescale`` (CKKS).
    """
    from . import _serialize as ser
    from ._base import assemble
    from ._device import resolve_device

    params = load_parameters(parameters)
    core = _core.Context(params, security)
    dev = resolve_device(device)
    ser.register_context(core)

    def load(fn, data):
        return None if data is None else fn(data, core, dev)

    return assemble(core, dev, options, load(load_secret_key, secret_key),
                    load(load_public_key, public_key), load(load_relin_keys, relin_keys),
                    load(load_galois_keys, galois_keys))
