"""Bytes and ``ctx.encrypt`` hooks of :class:`veil.EncryptedTensor` (split from
:mod:`veil._enc_tensor` to keep files short).

Format 1, little-endian: magic ``VEILTNSR``; u16 version, u8 scheme (0 CKKS, 1 BFV, 2 BGV),
u8 flags (bit 0: clean), u32 ndim; ndim x u64 shape; ndim x u64 padded shape (physical
order); ndim x u32 perm; u64 slots per ciphertext; u32 count; then count x (u64 length, the
ciphertext's own Veil bytes, which carry its length and CKKS complex flag).
"""

from __future__ import annotations

import functools
import math
import struct
from collections.abc import Callable
from typing import Any, cast

import numpy as np

from . import _base as _base_mod
from . import _enc_tensor as _enc_tensor_mod
from ._base import Bytes, KeyedContext
from ._ckks import CKKSCiphertext, CKKSContext
from ._enc_tensor import (
    _MAX_DIM,
    _MAX_NDIM,
    _MAX_SLOTS,
    _SCHEMES,
    FORMAT_VERSION,
    MAGIC,
    EncryptedTensor,
    _pow2,
    is_tensor_bytes,
    slot_width,
)
from ._integer import Ciphertext, IntegerContext


def tensor_to_bytes(t: EncryptedTensor, compression: str = "zstd") -> bytes:
    """:meth:`veil.EncryptedTensor.to_bytes`."""
    nd = t.ndim
    flags = (1 if t._clean else 0)
    head = MAGIC + struct.pack("<HBBI", FORMAT_VERSION, _SCHEMES[t.ctx.scheme], flags, nd)
    head += struct.pack(f"<{nd}Q", *t._shape) + struct.pack(f"<{nd}Q", *t.padded_shape)
    head += struct.pack(f"<{nd}I", *t._perm) + struct.pack("<QI", t._S,
                                                              len(t._chunks))
    parts = [head]
    for c in t._chunks:
        data = c.to_bytes(compression)
        parts += [struct.pack("<Q", len(data)), data]
    return b"".join(parts)


def tensor_from_bytes(data: Bytes, ctx: KeyedContext,
                      max_bytes: int | None = None) -> EncryptedTensor:
    """:meth:`veil.EncryptedTensor.from_bytes` (every field checked before allocation)."""
    if not isinstance(ctx, KeyedContext):
        raise TypeError(f"ctx: expected a veil context, got {type(ctx).__name__}")
    buf = memoryview(cast(Any, data)).cast("B")
    pos = 0

    def take(fmt: str, field: str) -> tuple:
        nonlocal pos
        size = struct.calcsize(fmt)
        if pos + size > len(buf):
            raise ValueError(f"{field}: truncated (needs {size} bytes at offset {pos}, "
                             f"{len(buf) - pos} left)")
        out = struct.unpack_from(fmt, buf, pos)
        pos += size
        return out

    if bytes(buf[:8]) != MAGIC:
        raise ValueError("magic: not an encrypted tensor (expected b'VEILTNSR')")
    pos = 8
    version, scheme, flags, nd = take("<HBBI", "header")
    if version != FORMAT_VERSION:
        raise ValueError(f"version: unsupported encrypted tensor format {version}")
    if _SCHEMES.get(ctx.scheme) != scheme:
        raise ValueError(f"scheme: the tensor's scheme code {scheme} is not ctx's "
                         f"({ctx.scheme})")
    if flags > 1:
        raise ValueError(f"flags: unknown bits {flags:#x}")
    if nd > _MAX_NDIM:
        raise ValueError(f"ndim: {nd} is above {_MAX_NDIM}")
    shape = take(f"<{nd}Q", "shape")
    if any(not 1 <= n <= _MAX_DIM for n in shape):
        raise ValueError(f"shape: every dimension must be in 1..2^40, got {shape}")
    padded = take(f"<{nd}Q", "padded_shape")
    perm = take(f"<{nd}I", "perm")
    if sorted(perm) != list(range(nd)):
        raise ValueError(f"perm: expected a permutation of 0..{nd - 1}, got {perm}")
    if any(padded[perm[a]] != _pow2(shape[a]) for a in range(nd)):
        raise ValueError(f"padded_shape: {padded} is not the padding of shape {shape} in "
                         f"perm {perm}")
    total = math.prod(padded)
    if total > _MAX_SLOTS:
        raise ValueError("padded_shape: more than 2^48 slots")
    S, count = take("<QI", "count")
    if S != slot_width(ctx):
        raise ValueError(f"slots: {S} slots per ciphertext, but ctx packs {slot_width(ctx)}")
    if count != -(-total // S):
        raise ValueError(f"count: {count} ciphertexts, but the padded shape needs "
                         f"{-(-total // S)}")
    chunk_cls = CKKSCiphertext if isinstance(ctx, CKKSContext) else None
    chunks = []
    for i in range(count):
        (length,) = take("<Q", "length")
        if length > len(buf) - pos:
            raise ValueError(f"length: ciphertext {i} claims {length} bytes, "
                             f"{len(buf) - pos} left")
        piece = bytes(buf[pos:pos + length])
        pos += length
        if chunk_cls is not None:
            ct: Any = chunk_cls.from_bytes(piece, ctx, max_bytes)
        else:
            ct = Ciphertext.from_bytes(piece, ctx, max_bytes)
        if len(ct) != S:
            raise ValueError(f"data: ciphertext {i} holds {len(ct)} values, expected {S}")
        chunks.append(ct)
    if pos != len(buf):
        raise ValueError(f"data: {len(buf) - pos} trailing bytes after the last ciphertext")
    return EncryptedTensor(ctx, chunks, shape, perm, bool(flags & 1))


def _wants_tensor(values: Any) -> bool:
    """An array-like of ndim >= 2 given to ``ctx.encrypt`` (not a Plaintext or string)."""
    if isinstance(values, (str, bytes)) or type(values).__module__.startswith("veil"):
        return False
    nd = getattr(values, "ndim", None)
    if nd is None and isinstance(values, (list, tuple)):
        try:
            nd = np.ndim(values)
        except (ValueError, TypeError):
            return False
    return isinstance(nd, int) and nd >= 2 and isinstance(values, (np.ndarray, list, tuple))


def _tensor_aware(encrypt: Callable[..., Any]) -> Callable[..., Any]:
    """``ctx.encrypt`` that returns an :class:`EncryptedTensor` for arrays of ndim >= 2 and is
    unchanged otherwise (ndim 1 keeps returning one ciphertext)."""
    if getattr(encrypt, "_veil_tensor_aware", False):
        return encrypt

    @functools.wraps(encrypt)
    def wrapper(self: Any, values: Any, *args: Any, **kwargs: Any) -> Any:
        if _wants_tensor(values):
            return EncryptedTensor.encrypt(self, values, None, **_encrypt_kwargs(self, args,
                                                                                 kwargs))
        return encrypt(self, values, *args, **kwargs)

    wrapper._veil_tensor_aware = True  # type: ignore[attr-defined]
    return wrapper


def _encrypt_kwargs(ctx: Any, args: tuple, kwargs: dict) -> dict:
    """Positional ``ctx.encrypt`` arguments after the values, as keywords."""
    names = (["scale", "level", "symmetric"] if isinstance(ctx, CKKSContext) else ["symmetric"])
    if len(args) > len(names):
        raise TypeError(f"encrypt: at most {len(names) + 1} positional arguments")
    return {**dict(zip(names, args)), **kwargs}


# ctx.encrypt(array of ndim >= 2) -> EncryptedTensor on both context families (the wrapper sits
# here because _ckks.py is another module's; the 1-D path is the original method, untouched).
for _cls in (CKKSContext, IntegerContext):
    setattr(_cls, "encrypt", _tensor_aware(_cls.encrypt))  # noqa: B010 (mypy: method assignment)


# The tensor's bytes and veil.load's recognition of them, installed where they are used
# (_enc_tensor and _base cannot import this module: it imports them).
_enc_tensor_mod._IO.update(to_bytes=tensor_to_bytes, from_bytes=tensor_from_bytes)
_base_mod.TENSOR_HOOKS.update(encrypt=EncryptedTensor.encrypt, is_bytes=is_tensor_bytes,
                              from_bytes=EncryptedTensor.from_bytes)

__all__ = ["tensor_from_bytes", "tensor_to_bytes"]
