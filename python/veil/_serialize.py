"""Pickling and context bundles for Veil objects.

Every ``veil._core`` object pickles through ``__reduce__`` to (parameters, security, device,
Veil-format bytes); unpickling rebuilds the :class:`veil.Context` once per process (cached by
parameters and security level) and loads the object onto its device, or onto the CPU when that
device is not available here. A ``SecretKey`` never pickles: its bytes leave the process only
through an explicit ``to_bytes()`` / ``save()``.

The pythonic contexts (``veil.bfv/bgv/ckks``) serialize as a *bundle*: a small JSON description
(scheme options, key-set identity) followed by the parameters and keys in Veil's format. A
bundle carries the secret key only when ``include_secret_key=True`` is passed explicitly.
"""

from __future__ import annotations

import json
import os
import struct
import threading
import weakref
from typing import Any

from . import _core

_BUNDLE_MAGIC = b"VEILCTX\x01"
_MAX_META = 1 << 20

_lock = threading.Lock()
_contexts: dict[tuple[bytes, int | None], weakref.ref] = {}


def read_length_prefixed(view: memoryview, pos: int, what: str) -> tuple[memoryview, int]:
    """The ``u64 length (little-endian) | bytes`` item at ``pos`` of ``view`` and the position
    after it. Raises ValueError naming ``what`` when the length or the bytes run past the end."""
    if pos + 8 > len(view):
        raise ValueError(f"{what}: truncated length")
    (n,) = struct.unpack_from("<Q", view, pos)
    pos += 8
    if n > len(view) - pos:
        raise ValueError(f"{what}: length {n} runs past the end of the data")
    return view[pos:pos + n], pos + n


def context_for(params_bytes: bytes, security: int | None) -> _core.Context:
    """The process-wide Context for these parameter bytes and security level (built once)."""
    key = (bytes(params_bytes), security)
    with _lock:
        ref = _contexts.get(key)
        ctx = ref() if ref is not None else None
        if ctx is None:
            params = _core.EncryptionParameters.from_bytes(params_bytes)
            ctx = _core.Context(params, security)
            _contexts[key] = weakref.ref(ctx)
        return ctx


def register_context(ctx: _core.Context) -> None:
    """Makes ``ctx`` the cached Context for its parameters (so unpickled objects share it)."""
    key = (bytes(ctx.params.to_bytes()), ctx.security)
    with _lock:
        ref = _contexts.get(key)
        if ref is None or ref() is None:
            _contexts[key] = weakref.ref(ctx)


def usable_device(device: str) -> str:
    """``device`` if it exists in this process, else ``"cpu"`` (objects pickled on a GPU machine
    load on a CPU-only one)."""
    if device.startswith("cuda"):
        try:
            return _core.parse_device(device)
        except (RuntimeError, ValueError):
            return "cpu"
    return device


_LOADERS: dict[str, type[_core.Plaintext | _core.Ciphertext | _core.PublicKey | _core.RelinKeys
                         | _core.GaloisKeys | _core.SwitchingKey]] = {
    "plaintext": _core.Plaintext,
    "ciphertext": _core.Ciphertext,
    "public_key": _core.PublicKey,
    "relin_keys": _core.RelinKeys,
    "galois_keys": _core.GaloisKeys,
    "switching_key": _core.SwitchingKey,
}


def _restore(kind: str, params_bytes: bytes, security: int | None, device: str, data: bytes):
    cls = _LOADERS.get(kind)
    if cls is None:
        raise ValueError(f"kind: cannot unpickle a {kind!r}")
    ctx = context_for(params_bytes, security)
    return cls.from_bytes(data, ctx, usable_device(device))


def _restore_parameters(data: bytes) -> _core.EncryptionParameters:
    return _core.EncryptionParameters.from_bytes(data)


def _restore_context(params_bytes: bytes, security: int | None) -> _core.Context:
    return context_for(params_bytes, security)


# ---- bundles of a pythonic context ---------------------------------------------------------

def pack_bundle(meta: dict, blobs: dict[str, bytes]) -> bytes:
    """MAGIC | u32 meta length | meta JSON | for each blob in meta['blobs']: u64 length | bytes."""
    meta = dict(meta, blobs=list(blobs))
    js = json.dumps(meta, sort_keys=True).encode()
    parts = [_BUNDLE_MAGIC, struct.pack("<I", len(js)), js]
    for blob in blobs.values():
        parts.append(struct.pack("<Q", len(blob)))
        parts.append(blob)
    return b"".join(parts)


def unpack_bundle(data) -> tuple[dict, dict[str, memoryview]]:
    """Inverse of :func:`pack_bundle`; raises ValueError naming the field for bad bytes."""
    try:
        view = memoryview(data).cast("B")
    except TypeError as e:
        raise TypeError(f"data: expected bytes, got {type(data).__name__}") from e
    if len(view) < 12 or bytes(view[:8]) != _BUNDLE_MAGIC:
        try:
            kind, scheme = identify(view)
        except ValueError:
            kind, scheme = "", None
        if kind and kind != "context":  # another object: say which, and what loads it
            raise ValueError(f"magic: not a Veil context bundle but {describe(kind, scheme)}; "
                             f"load it with {loader_name(kind, scheme)}")
        raise ValueError("magic: not a Veil context bundle (expected b'VEILCTX\\x01')")
    (meta_len,) = struct.unpack_from("<I", view, 8)
    if meta_len > _MAX_META or 12 + meta_len > len(view):
        raise ValueError(f"meta: length {meta_len} is larger than the data or the 1 MiB limit")
    try:
        meta = json.loads(bytes(view[12:12 + meta_len]))
    except (UnicodeDecodeError, json.JSONDecodeError) as e:
        raise ValueError(f"meta: not valid JSON ({e})") from e
    if not isinstance(meta, dict) or not isinstance(meta.get("blobs"), list):
        # Bad bytes, not a bad argument type: ValueError like every other field.
        raise ValueError("meta: expected an object with a 'blobs' list")  # noqa: TRY004
    pos = 12 + meta_len
    blobs: dict[str, memoryview] = {}
    for name in meta["blobs"]:
        if not isinstance(name, str) or name in blobs:
            raise ValueError(f"blobs: bad or repeated name {name!r}")
        blobs[name], pos = read_length_prefixed(view, pos, name)
    if pos != len(view):
        raise ValueError(f"bundle: {len(view) - pos} unexpected trailing bytes")
    return meta, blobs


def meta_field(meta: dict, name: str, types, default: Any = None, required: bool = False):
    """A checked field of a bundle's JSON description."""
    if name not in meta:
        if required:
            raise ValueError(f"meta: missing field {name!r}")
        return default
    value = meta[name]
    allowed = types if isinstance(types, tuple) else (types,)
    if not isinstance(value, allowed) or (isinstance(value, bool) and bool not in allowed):
        raise ValueError(f"meta: field {name!r} has the wrong type ({type(value).__name__})")
    return value


def new_key_set_id() -> str:
    """A random identity for a key set (shared by a context, its public view and its copies)."""
    return os.urandom(16).hex()


# ---- key-set registry: where unpickled pythonic ciphertexts find their context ---------------

_registry: dict[str, list[weakref.ref]] = {}


def register_keyed(ctx) -> None:
    with _lock:
        refs = [r for r in _registry.get(ctx.key_set_id, []) if r() is not None]
        refs.append(weakref.ref(ctx))
        _registry[ctx.key_set_id] = refs


def find_keyed(key_set_id: str):
    """The most capable live context of this key set (secret key first, then most keys)."""
    with _lock:
        live = [r() for r in _registry.get(key_set_id, [])]
    live = [c for c in live if c is not None]
    if not live:
        return None

    def rank(c):
        return (c.secret_key is not None, c.relin_keys is not None, c.galois_keys is not None)

    return max(live, key=rank)


def prune_key_set(key_set_id: str) -> None:
    """Forgets the registry's dead references of a key set (a long-running server that loads
    many key sets calls it when it drops one)."""
    with _lock:
        refs = [r for r in _registry.get(key_set_id, []) if r() is not None]
        if refs:
            _registry[key_set_id] = refs
        else:
            _registry.pop(key_set_id, None)


# ---- recognising any Veil object: veil.load ----------------------------------------------------

#: Veil-format object types (header byte 6; docs/serialization.md) and schemes (byte 7).
_OBJECT_KINDS = {1: "parameters", 2: "plaintext", 3: "ciphertext", 4: "secret_key",
                 5: "public_key", 6: "relin_keys", 7: "galois_keys", 8: "switching_key",
                 9: "bootstrap_parameters"}
_SCHEMES = {0: "bfv", 1: "bgv", 2: "ckks"}
_SEAL_MAGIC = b"\x5e\xa1"  # 0xA15E, little-endian: SEAL 4.x's serialization header


def identify(data) -> tuple[str, str | None]:
    """(kind, scheme) of serialized Veil bytes, from their header: kind is ``"context"`` (a
    pythonic context bundle), ``"seal"`` (Microsoft SEAL's format) or a Veil object type
    (``"ciphertext"``, ``"plaintext"``, ``"parameters"``, ``"secret_key"``, ``"public_key"``,
    ``"relin_keys"``, ``"galois_keys"``, ``"switching_key"``, ``"bootstrap_parameters"``);
    scheme is ``"bfv"``, ``"bgv"``, ``"ckks"`` or None where the header does not say. Only the
    header is read: the loaders check the rest.

    Raises:
        TypeError: ``data`` is not bytes-like.
        ValueError: bytes that are none of these (naming the field).
    """
    try:
        view = memoryview(data).cast("B")
    except TypeError as e:
        raise TypeError(f"data: expected bytes, got {type(data).__name__}") from e
    head = bytes(view[:8])
    if head == _BUNDLE_MAGIC:
        scheme = None
        if len(view) >= 12:
            (meta_len,) = struct.unpack_from("<I", view, 8)
            try:
                meta = json.loads(bytes(view[12:12 + min(meta_len, _MAX_META)]))
                scheme = meta.get("scheme") if isinstance(meta, dict) else None
            except (UnicodeDecodeError, json.JSONDecodeError):
                pass  # from_bytes names the field
        return "context", scheme if scheme in _SCHEMES.values() else None
    if head[:4] == b"VEIL":
        if len(view) < 8:
            raise ValueError("header: truncated (a Veil object has a 48-byte header)")
        kind, scheme = _OBJECT_KINDS.get(view[6]), _SCHEMES.get(view[7])
        if kind is None:
            raise ValueError(f"object_type: unknown value {view[6]} (not an object this build "
                             "reads)")
        if scheme is None:
            raise ValueError(f"scheme: unknown value {view[7]} (expected 0 BFV, 1 BGV or 2 CKKS)")
        return kind, scheme
    if head[:2] == _SEAL_MAGIC:
        return "seal", None
    raise ValueError("magic: not a Veil object (expected the bytes 'VEIL', or 'VEILCTX\\x01' for "
                     "a context bundle)")


_KIND_NAMES = {"context": "a context bundle", "seal": "bytes in SEAL's format",
               "parameters": "encryption parameters", "plaintext": "a plaintext",
               "ciphertext": "a ciphertext", "secret_key": "a secret key",
               "public_key": "a public key", "relin_keys": "relinearization keys",
               "galois_keys": "Galois keys", "switching_key": "a switching key",
               "bootstrap_parameters": "bootstrapping parameters"}


def describe(kind: str, scheme: str | None) -> str:
    """What :func:`identify` found, in words: ``"a CKKS ciphertext"``."""
    name = _KIND_NAMES.get(kind, kind)
    if scheme is None:
        return name
    for article in ("a ", ""):
        if name.startswith(article):
            return f"{article}{scheme.upper()} {name[len(article):]}"
    return name  # pragma: no cover - every name matches "" above


def loader_name(kind: str, scheme: str | None) -> str:
    """The call that loads what :func:`identify` found (for error messages)."""
    if kind == "context":
        return "veil.load_context(data) or veil.load(data)"
    if kind == "seal":
        return "the veil.seal.load_* function of the object (veil.seal.load_ciphertext(data, ctx), ...)"
    if kind == "ciphertext" and scheme is not None:
        cls = "CKKSCiphertext" if scheme == "ckks" else "Ciphertext"
        return f"veil.load(data, ctx) or veil.{cls}.from_bytes(data, ctx)"
    if kind == "parameters":
        return "veil.load(data) or veil.EncryptionParameters.from_bytes(data)"
    return "veil.load(data, ctx)"
