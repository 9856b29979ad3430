"""Encrypted N-D tensors larger than one ciphertext (CKKS and BFV/BGV), TenSEAL's CKKSTensor idea
in Veil's pythonic layer.

**Packing: "padded row-major".** Every logical dimension is padded to a power of two, the
padded shape is flattened in C order in a *physical* axis order, and the flat vector is cut into
ciphertexts of S slots: S = N/2 for CKKS (the sparse period n when the context bootstraps n <
N/2 slots), the first row (N/2 slots) for BFV/BGV, as ``x @ M`` uses. S and every padded inner
block are powers of two, so a trailing block of at most S slots never straddles two ciphertexts.
``perm[a]`` is the physical position of logical axis a: :meth:`EncryptedTensor.transpose` only
changes it (free); operations derive physical strides from it.

Padding slots (the padded positions, and the slots after the last data slot) are zero after
encryption. The ``clean`` flag records whether they still are: operations that may fill them
(a polynomial with p(0) != 0, sums that leave partial sums behind) clear it, and operations that
read them (sums, slicing) first multiply by the 0/1 mask of the data slots when it is clear
(one plaintext product: a CKKS level). Additions of plaintexts pack the plaintext like the
tensor, with zeros in the padding, so they keep the flag; a product with a packed plaintext
sets it.

Algorithms (costs per ciphertext in each operation's docstring):

* sums along an axis: rotate-and-add over aligned power-of-two blocks (Halevi-Shoup, "Algorithms
  in HElib", CRYPTO 2014, §4.1) and additions of whole ciphertexts, then a slot re-pack
  (:func:`veil._repack.gather`): a sparse permutation applied as a diagonal linear transform
  with baby-step giant-step and hoisted baby steps (Halevi-Shoup, "Faster homomorphic linear
  transformations in HElib", CRYPTO 2018, §4), one plaintext product per used diagonal;
* ``t @ W``: the vector is cut into its ciphertexts and W into S x S blocks; each block is
  Halevi-Shoup's diagonal method with BSGS (:func:`veil._tensor.matmul`), as GAZELLE's
  block-diagonal matrix-vector products (Juvekar, Vaikuntanathan, Chandrakasan, USENIX Security
  2018, §5.2);
* convolution by im2col packing (TenSEAL, Benaissa et al., arXiv 2104.03152): :mod:`veil._conv`.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Sequence
from typing import Any, Union, cast

import numpy as np

from . import _check, _core, _repack, _tensor
from ._base import Bytes, CiphertextBase, KeyedContext
from ._ckks import CKKSCiphertext, CKKSContext
from ._integer import IntegerContext

PACKING = "padded row-major"
MAGIC = b"VEILTNSR"
FORMAT_VERSION = 1
_SCHEMES = {"ckks": 0, "bfv": 1, "bgv": 2}
_MAX_NDIM = 32
_MAX_DIM = 2**40
_MAX_SLOTS = 2**48

Chunk = Union[CKKSCiphertext, CiphertextBase]


_pow2 = _tensor.next_pow2


def slot_width(ctx: KeyedContext) -> int:
    """S, the slots of one ciphertext a tensor uses: N/2 for CKKS (the sparse period n when the
    context bootstraps n < N/2 slots), the first row (N/2) for BFV/BGV.

    Raises ValueError naming ``ctx`` for a BFV/BGV context without batching."""
    if isinstance(ctx, CKKSContext):
        return ctx._sparse_slots() or ctx.slot_count
    if isinstance(ctx, IntegerContext):
        if ctx.encoding != "batch":
            raise ValueError("ctx: encrypted tensors need batching (encoding='batch')")
        return ctx.row_size
    raise TypeError(f"ctx: expected a veil context (veil.ckks/bfv/bgv), got {type(ctx).__name__}")


def _check_shape(shape: Sequence[int], name: str = "shape") -> tuple[int, ...]:
    out = tuple(_check.integer(n, name, 1, _MAX_DIM) for n in shape)
    if len(out) > _MAX_NDIM:
        raise ValueError(f"{name}: at most {_MAX_NDIM} dimensions, got {len(out)}")
    return out


#: The bytes' writer and reader ("to_bytes", "from_bytes"): veil._enc_tensor_io installs them
#: when it loads (veil/__init__.py imports it), so this module does not import it back.
_IO: dict[str, Callable[..., Any]] = {}


class EncryptedTensor:
    """An encrypted N-D array (CKKS: real or complex numbers; BFV/BGV: integers mod t) spread
    over as many ciphertexts as it needs, in the "padded row-major" packing (module docstring).

    Make one with ``ctx.encrypt_tensor(array)`` (or ``ctx.encrypt(array)`` for ndim >= 2);
    ``t.decrypt()`` gives an ndarray of ``t.shape``.

    Attributes: ``ctx``, ``shape``, ``ndim``, ``size``, ``packing``, ``perm`` (logical axis ->
    physical position), ``padded_shape`` (physical order), ``clean`` (padding slots known to be
    zero), ``ciphertexts`` (the pythonic ciphertexts, S slots each), ``image_info`` (set by
    :func:`veil.im2col_encrypt` / :func:`veil.conv2d`: output height and width, kernel).
    """

    __array_ufunc__ = None  # numpy arrays on the left defer to our reflected operators
    packing = PACKING

    def __init__(self, ctx: KeyedContext, chunks: Sequence[Any], shape: Sequence[int],
                 perm: Sequence[int] | None = None, clean: bool = True,
                 image_info: dict | None = None) -> None:
        self.ctx = ctx
        self._S = slot_width(ctx)
        self._shape = tuple(int(n) for n in shape)
        self._perm = tuple(range(len(self._shape))) if perm is None else tuple(perm)
        self._chunks: list[Any] = list(chunks)
        self._clean = bool(clean)
        self.image_info = image_info
        if len(self._chunks) != self._count():  # internal invariant
            raise AssertionError(f"{len(self._chunks)} ciphertexts for {self._count()}")

    # ---- layout -----------------------------------------------------------------------------
    @property
    def padded_shape(self) -> tuple[int, ...]:
        """The padded shape in physical order: padded_shape[perm[a]] = next_pow2(shape[a])."""
        out = [0] * len(self._shape)
        for a, n in enumerate(self._shape):
            out[self._perm[a]] = _pow2(n)
        return tuple(out)

    def _padded_total(self) -> int:
        return math.prod(self.padded_shape)

    def _count(self) -> int:
        return -(-self._padded_total() // self._S)

    def _strides(self) -> tuple[int, ...]:
        """Physical slot stride of each logical axis."""
        p = self.padded_shape
        phys = [math.prod(p[i + 1:]) for i in range(len(p))]
        return tuple(phys[self._perm[a]] for a in range(len(self._shape)))

    def _slot_index(self, shape=None, perm=None) -> np.ndarray:
        """The flat slot (chunk * S + slot) of every logical element: an int64 array of the
        logical shape (of this tensor, or of ``shape``/``perm`` in this packing)."""
        if shape is not None:
            probe = object.__new__(EncryptedTensor)
            probe._shape = tuple(shape)
            probe._perm = tuple(range(len(shape))) if perm is None else tuple(perm)
            return probe._slot_index()
        idx = np.zeros(self._shape, dtype=np.int64)
        nd = len(self._shape)
        for a, (n, st) in enumerate(zip(self._shape, self._strides())):
            view = [1] * nd
            view[a] = n
            idx += (np.arange(n, dtype=np.int64) * st).reshape(view)
        return idx

    def _count_for(self, shape: tuple[int, ...], perm: tuple[int, ...]) -> int:
        """The ciphertexts a tensor of ``shape``/``perm`` takes in this context."""
        return -(-math.prod(_pow2(n) for n in shape) // self._S)

    def _pack(self, arr: np.ndarray) -> list[np.ndarray]:
        """A logical array of this shape as S-slot vectors in this packing (zeros in padding)."""
        flat = np.zeros(self._count() * self._S, dtype=arr.dtype)
        flat[self._slot_index()] = arr
        return [flat[c * self._S:(c + 1) * self._S] for c in range(self._count())]

    def _derive(self, chunks: Sequence[Any], clean: bool, shape=None, perm=None,
                keep_info: bool = True) -> EncryptedTensor:
        return EncryptedTensor(self.ctx, chunks, self._shape if shape is None else shape,
                               self._perm if perm is None else perm, clean,
                               self.image_info if keep_info else None)

    # ---- construction and decryption ----------------------------------------------------------
    @classmethod
    def encrypt(cls, ctx: KeyedContext, values: Any, perm: Sequence[int] | None = None,
                **kwargs: Any) -> EncryptedTensor:
        """Encrypts an array of any ndim >= 1 (``ctx.encrypt_tensor``). ``perm``: the physical
        axis order (default: identity); ``kwargs`` go to ``ctx.encrypt`` (CKKS ``scale``,
        ``level``; ``symmetric``). One encryption per S slots of the padded array.

        Raises ValueError naming ``values`` (0-d, empty or ragged) or ``perm``, TypeError for
        values of the wrong kind (CKKS: numbers; BFV/BGV: integers)."""
        S = slot_width(ctx)
        try:
            arr = np.asarray(values)
        except (TypeError, ValueError) as e:
            raise ValueError(f"values: expected an array ({e})") from None
        if arr.ndim == 0 or arr.size == 0:
            raise ValueError(f"values: expected an array with ndim >= 1 and no empty axis, got "
                             f"shape {arr.shape}")
        is_ckks = isinstance(ctx, CKKSContext)
        if arr.dtype.kind not in ("iufc" if is_ckks else "iu"):
            raise TypeError(f"values: expected {'numbers' if is_ckks else 'integers'}, got "
                            f"dtype {arr.dtype}")
        shape = _check_shape(arr.shape, "values")
        if perm is not None:
            perm = tuple(_check.integer(p, "perm") for p in perm)
            if sorted(perm) != list(range(arr.ndim)):
                raise ValueError(f"perm: expected a permutation of 0..{arr.ndim - 1}, got {perm}")
        dtype = (np.complex128 if arr.dtype.kind == "c" else np.float64) if is_ckks else np.int64
        probe = object.__new__(cls)
        probe._S, probe._shape = S, shape
        probe._perm = tuple(range(arr.ndim)) if perm is None else tuple(perm)
        if probe._padded_total() > _MAX_SLOTS:
            raise ValueError(f"values: shape {shape} pads to more than 2^48 slots")
        vectors = probe._pack(arr.astype(dtype))
        chunks = [cast(Any, ctx).encrypt(v, **kwargs) for v in vectors]
        return cls(ctx, chunks, shape, probe._perm, True)

    def decrypt(self, **kwargs: Any) -> np.ndarray:
        """The plaintext array of ``self.shape`` (CKKS: float64 unless the tensor holds complex
        values or ``complex_output=True``; BFV/BGV: int64, ``signed`` as ``ctx.decrypt``).
        Needs the secret key."""
        flat = np.concatenate([c.decrypt(**kwargs) for c in self._chunks])
        return flat[self._slot_index()]

    # ---- facts ------------------------------------------------------------------------------
    @property
    def shape(self) -> tuple[int, ...]:
        return self._shape

    @property
    def ndim(self) -> int:
        return len(self._shape)

    @property
    def size(self) -> int:
        return math.prod(self._shape)

    @property
    def perm(self) -> tuple[int, ...]:
        return self._perm

    @property
    def clean(self) -> bool:
        return self._clean

    @property
    def ciphertexts(self) -> list[Any]:
        return list(self._chunks)

    @property
    def slots_per_ciphertext(self) -> int:
        return self._S

    @property
    def level(self) -> int:
        """The lowest level of the tensor's ciphertexts."""
        return min(c.level for c in self._chunks)

    @property
    def scale(self) -> float:
        """CKKS: the scale of the tensor's ciphertexts."""
        return float(self._chunks[0].scale)

    @property
    def device(self) -> str:
        return self._chunks[0].device

    def __len__(self) -> int:
        if not self._shape:
            raise TypeError("len() of a 0-d encrypted tensor")
        return self._shape[0]

    def __bool__(self) -> bool:
        return True

    def __repr__(self) -> str:
        extra = ""
        if isinstance(self.ctx, CKKSContext):
            extra = f", level={self.level}, scale=2^{math.log2(self.scale):.2f}"
        return (f"veil.EncryptedTensor(shape={self._shape}, packing={PACKING!r}, "
                f"padded_shape={self.padded_shape}, perm={self._perm}, "
                f"ciphertexts={len(self._chunks)} x {self._S} slots, "
                f"scheme={self.ctx.scheme!r}{extra}, clean={self._clean})")

    # ---- metadata-only views ------------------------------------------------------------------
    def transpose(self, *axes: Any) -> EncryptedTensor:
        """The transposed tensor (numpy's ``transpose``: no axes reverses them). Free: only the
        axis order of the metadata changes (``perm``).

        Raises ValueError naming ``axes`` when they are not a permutation of 0..ndim-1."""
        if len(axes) == 1 and isinstance(axes[0], (tuple, list)):
            axes = tuple(axes[0])
        nd = self.ndim
        if not axes:
            axes = tuple(range(nd - 1, -1, -1))
        try:
            ax = [_check.integer(a, "axes", -nd, nd - 1) % nd if nd else 0 for a in axes]
        except ValueError:
            raise ValueError(f"axes: expected a permutation of 0..{nd - 1}, got {axes}") from None
        if sorted(ax) != list(range(nd)):
            raise ValueError(f"axes: expected a permutation of 0..{nd - 1}, got {tuple(axes)}")
        return self._derive(self._chunks, self._clean, tuple(self._shape[a] for a in ax),
                            tuple(self._perm[a] for a in ax), keep_info=False)

    @property
    def T(self) -> EncryptedTensor:
        return self.transpose()

    def reshape(self, *shape: Any) -> EncryptedTensor:
        """The same ciphertexts seen with another shape (one entry may be -1), allowed where the
        packed layout stays valid: every element keeps its slot (e.g. adding or removing
        size-1 axes, merging or splitting power-of-two axes). Free.

        Raises ValueError naming ``shape`` when the sizes differ or the elements would have to
        move between slots (e.g. (3, 5) -> (15,): rows are padded to 8 slots)."""
        if len(shape) == 1 and isinstance(shape[0], (tuple, list)):
            shape = tuple(shape[0])
        dims = [_check.integer(n, "shape", -1) for n in shape]
        if dims.count(-1) > 1:
            raise ValueError("shape: at most one -1")
        known = math.prod(n for n in dims if n != -1)
        if -1 in dims:
            if known == 0 or self.size % known:
                raise ValueError(f"shape: cannot reshape size {self.size} into {tuple(shape)}")
            dims[dims.index(-1)] = self.size // known
        new = _check_shape(dims, "shape")
        if math.prod(new) != self.size:
            raise ValueError(f"shape: cannot reshape size {self.size} into {new}")
        if new == self._shape:  # a no-op, transposed or not: keep the layout
            return self
        same = np.array_equal(self._slot_index().ravel(), self._slot_index(new).ravel())
        if not same:
            raise ValueError(
                f"shape: cannot view shape {self._shape} (padded {self.padded_shape}, perm "
                f"{self._perm}) as {new} in the {PACKING!r} packing: the elements would move "
                "between slots (each axis is padded to a power of two, so only size-1 axes and "
                "power-of-two axes can be merged or split, and a transposed tensor keeps its "
                "axis order); decrypt and re-encrypt, or reshape before encrypting")
        count = self._count_for(new, tuple(range(len(new))))
        chunks = self._chunks[:count]
        while len(chunks) < count:  # cannot happen with equal slot maps; kept for safety
            chunks.append(self._zero_like(chunks[0]))
        return self._derive(chunks, self._clean, new, tuple(range(len(new))), keep_info=False)

    def flatten(self) -> EncryptedTensor:
        """``reshape(-1)`` (same rules: ValueError naming ``shape`` when slots would move)."""
        return self.reshape(-1)

    def squeeze(self) -> EncryptedTensor:
        """Removes size-1 axes (free)."""
        keep = [a for a, n in enumerate(self._shape) if n != 1]
        p = self._perm
        ranks = sorted(p[a] for a in keep)
        return self._derive(self._chunks, self._clean, tuple(self._shape[a] for a in keep),
                            tuple(ranks.index(p[a]) for a in keep))

    # ---- helpers ------------------------------------------------------------------------------
    def _is_ckks(self) -> bool:
        return isinstance(self.ctx, CKKSContext)

    def _zero_like(self, ref: Any) -> Any:
        """A fresh encryption of zeros at ``ref``'s level (and CKKS scale): an exact zero from
        ``c - c`` would be transparent, which the evaluator refuses."""
        ctx: Any = self.ctx
        if self._is_ckks():
            z = ctx.encrypt(np.zeros(self._S, dtype=np.complex128 if ref.is_complex
                                     else np.float64), scale=ref.scale, level=ref.level)
            return z
        z = ctx.encrypt(np.zeros(self._S, dtype=np.int64))
        return z.mod_switch_to(ref.level) if z.level != ref.level else z

    def _operand(self, other: Any, name: str = "other") -> tuple[str, Any]:
        """('tensor', chunks) | ('scalar', value) | ('vectors', per-chunk vectors)."""
        if isinstance(other, EncryptedTensor):
            if other._shape != self._shape:
                raise ValueError(f"{name}: encrypted tensors of shapes {self._shape} and "
                                 f"{other._shape}; element-wise operations need equal shapes "
                                 "(numpy broadcasting applies to plaintext operands only)")
            if other._perm != self._perm:
                raise ValueError(f"{name}: the tensors have the same shape but different "
                                 f"layouts (perm {self._perm} and {other._perm}, e.g. one was "
                                 "transposed); transpose both alike, or encrypt the operand "
                                 "transposed")
            _core.check_same_context(self.ctx.context, other._chunks[0].raw, name)
            return "tensor", other._chunks
        if isinstance(other, CiphertextBase):
            raise TypeError(f"{name}: combine an encrypted tensor with a tensor, a number or a "
                            "numpy array, not a single ciphertext")
        if isinstance(other, (str, bytes)) or other is None:
            raise TypeError(f"{name}: expected a number, an array or an encrypted tensor, got "
                            f"{_check.show(other)}")
        arr = np.asarray(other)
        is_ckks = self._is_ckks()
        if arr.dtype.kind not in ("iufc" if is_ckks else "iu"):
            raise TypeError(f"{name}: expected {'numbers' if is_ckks else 'integers'}, got "
                            f"dtype {arr.dtype}")
        if arr.ndim == 0:
            return "scalar", arr[()]
        try:
            full = np.broadcast_to(arr, self._shape)
        except ValueError:
            raise ValueError(f"{name}: shape {arr.shape} does not broadcast to the tensor's "
                             f"shape {self._shape}") from None
        dtype = (np.complex128 if arr.dtype.kind == "c" else np.float64) if is_ckks else np.int64
        return "vectors", self._pack(full.astype(dtype))

    def _scalar_vectors(self, value: Any) -> list[np.ndarray]:
        """A scalar packed like the tensor (zeros in the padding: additions keep ``clean``)."""
        arr = np.asarray(value)
        dtype = ((np.complex128 if arr.dtype.kind == "c" else np.float64) if self._is_ckks()
                 else np.int64)
        return self._pack(np.full(self._shape, value, dtype=dtype))

    def _binary(self, other: Any, op: Callable[[Any, Any], Any], kind: str) -> EncryptedTensor:
        what, val = self._operand(other)
        if what == "tensor":
            chunks = [op(a, b) for a, b in zip(self._chunks, val)]
            clean = (self._clean and other._clean) if kind != "mul" else (
                self._clean or other._clean)
            return self._derive(chunks, clean)
        if what == "scalar" and kind == "mul":
            return self._derive([op(a, val) for a in self._chunks], self._clean)
        vecs = val if what == "vectors" else self._scalar_vectors(val)
        if kind == "mul":
            return self._derive(self._times_vectors(vecs), True)
        return self._derive([op(a, v) for a, v in zip(self._chunks, vecs)], self._clean)

    def _times_vectors(self, vecs: Sequence[np.ndarray]) -> list[Any]:
        """Each ciphertext times its packed plaintext vector. An all-zero vector (a ciphertext
        holding only padding, or zeros) would give a transparent product, which the evaluator
        refuses: that ciphertext becomes a fresh encryption of zeros at the products' level and
        scale."""
        outs = [a * v if np.any(v) else None for a, v in zip(self._chunks, vecs)]
        ref = next((c for c in outs if c is not None), None)
        if ref is None:
            ref = self._chunks[0] * 1
        return [c if c is not None else self._zero_like(ref) for c in outs]

    # ---- element-wise -------------------------------------------------------------------------
    def __add__(self, other: Any) -> EncryptedTensor:
        """Element-wise sum with a tensor of the same shape and layout, a scalar or an array
        broadcasting to the shape (packed like the tensor, zeros in the padding). No level."""
        return self._binary(other, lambda a, b: a + b, "add")

    __radd__ = __add__

    def __sub__(self, other: Any) -> EncryptedTensor:
        return self._binary(other, lambda a, b: a - b, "add")

    def __rsub__(self, other: Any) -> EncryptedTensor:
        return (-self) + other

    def __mul__(self, other: Any) -> EncryptedTensor:
        """Element-wise product (operands as ``+``). CKKS: one level (auto-rescale), as
        CKKSCiphertext; a tensor operand also a relinearization per ciphertext."""
        return self._binary(other, lambda a, b: a * b, "mul")

    __rmul__ = __mul__

    def __truediv__(self, other: Any) -> EncryptedTensor:
        """CKKS: ``t * (1 / c)`` for a plaintext scalar or array; TypeError otherwise."""
        if not self._is_ckks() or isinstance(other, (EncryptedTensor, CiphertextBase)):
            raise TypeError("other: an encrypted tensor divides only by plaintext numbers "
                            "(CKKS)")
        arr = np.asarray(other)
        if arr.dtype.kind not in "iufc":
            raise TypeError(f"other: expected numbers, got dtype {arr.dtype}")
        if np.any(arr == 0):
            raise ZeroDivisionError("other: division by zero")
        return self * (1.0 / arr)

    def __neg__(self) -> EncryptedTensor:
        return self._derive([-c for c in self._chunks], self._clean)

    def square(self) -> EncryptedTensor:
        """Element-wise square (CKKS: one level)."""
        return self._derive([c.square() for c in self._chunks], self._clean)

    def polyval(self, coeffs: Sequence[float]) -> EncryptedTensor:
        """CKKS: p(x) = coeffs[0] + coeffs[1] x + ... element-wise, per ciphertext
        (:meth:`veil.CKKSCiphertext.polyval`: ceil(log2(d + 1)) levels). The padding holds
        p(0) afterwards: ``clean`` stays only when coeffs[0] == 0."""
        self._need_ckks("polyval")
        chunks = [c.polyval(coeffs) for c in self._chunks]
        c0 = np.asarray(coeffs).reshape(-1)[:1]
        return self._derive(chunks, self._clean and bool(c0.size) and float(c0[0]) == 0.0)

    def evaluate(self, fn: Callable[[np.ndarray], np.ndarray],
                 interval: tuple[float, float] = (-1.0, 1.0), degree: int = 15
                 ) -> EncryptedTensor:
        """CKKS: fn(x) element-wise on ``interval`` by its Chebyshev interpolant, per ciphertext
        (:meth:`veil.CKKSCiphertext.evaluate`: ceil(log2(degree + 1)) + 2 levels). Clears
        ``clean`` (the padding holds about fn(0))."""
        self._need_ckks("evaluate")
        return self._derive([c.evaluate(fn, interval, degree) for c in self._chunks], False)

    def _need_ckks(self, op: str) -> None:
        if not self._is_ckks():
            raise TypeError(f"{op}: needs a CKKS tensor (this one is {self.ctx.scheme.upper()})")

    def _cleaned(self) -> EncryptedTensor:
        """This tensor with zeros in its padding: itself when ``clean``, else the product with
        the 0/1 mask of the data slots (one plaintext product: a CKKS level)."""
        if self._clean:
            return self
        ones = np.ones(self._shape, dtype=np.float64 if self._is_ckks() else np.int64)
        return self._derive(self._times_vectors(self._pack(ones)), True)

    def to(self, device: str) -> EncryptedTensor:
        """A copy on another device."""
        return self._derive([c.to(device) for c in self._chunks], self._clean)

    # ---- re-packing (slot permutations) -------------------------------------------------------
    def _rotate(self, ct: Any, step: int) -> Any:
        return _tensor._rotate(ct, step % self._S) if step % self._S else ct

    # ---- reductions ---------------------------------------------------------------------------
    def sum(self, axis: int | None = None) -> EncryptedTensor:
        """Sum over ``axis`` (None: every element, a 0-d tensor), numpy's ``sum``; the result
        has the axis removed, in the same packing.

        Physical axis q of padded size p and slot stride st (block B = p * st):

        * st >= S: additions of whole ciphertexts; no rotation, no level;
        * else: ciphertexts holding the same block are added (B > S), then rotate-and-add by
          st, 2 st, ... within each ciphertext (log2(min(p, S / st)) rotations each), then a
          re-pack of the block heads into row-major order (:func:`veil._repack.gather`): free when q is
          the outermost physical axis (the heads are already in place: the padding is then
          left dirty, ``clean`` False), else one level (CKKS) and about 2 sqrt(S / B') hoisted
          rotations per ciphertext.

        A tensor whose padding is not known to be zero is masked first (one level).
        Raises ValueError naming ``axis`` outside -ndim..ndim-1."""
        t = self._cleaned()
        if axis is None or t.ndim == 0:
            return t._sum_all()
        nd = t.ndim
        axis = _check.integer(axis, "axis", -nd, nd - 1) % nd
        S, P = t._S, t.padded_shape
        q = t._perm[axis]
        p, st = P[q], math.prod(P[q + 1:])
        B = p * st
        new_shape = t._shape[:axis] + t._shape[axis + 1:]
        new_perm = tuple(x - (x > q) for a, x in enumerate(t._perm) if a != axis)
        count = -(-math.prod(P[:q] + P[q + 1:]) // S)
        chunks = t._chunks
        if st >= S:
            outs: list[Any] = [None] * count
            for c, ct in enumerate(chunks):
                f = c * S
                j = ((f // B) * st + f % st) // S
                outs[j] = ct if outs[j] is None else outs[j] + ct
            return t._derive(outs, True, new_shape, new_perm, keep_info=False)
        if B > S:
            per = B // S
            reduced = [functools.reduce(lambda a, b: a + b, chunks[o * per:(o + 1) * per])
                       for o in range(len(chunks) // per)]
            p_in = S // st
        else:
            reduced, p_in = list(chunks), p
        steps = [st << i for i in range(p_in.bit_length() - 1)]
        self.ctx.ensure_galois_keys(steps)
        for s in steps:
            reduced = [c + self._rotate(c, s) for c in reduced]
        outer = np.arange(math.prod(P[:q]), dtype=np.int64)[:, None]
        inner = np.arange(st, dtype=np.int64)[None, :]
        if B > S:
            in_chunk, in_slot = outer + 0 * inner, inner + 0 * outer
        else:
            in_flat = outer * B + inner
            in_chunk, in_slot = in_flat // S, in_flat % S
        out_flat = (outer * st + inner).ravel()
        plan = _repack.plan_moves(out_flat, in_chunk.ravel(), in_slot.ravel(), S)
        outs, masked = _repack.gather(t, reduced, plan, count)
        return t._derive(outs, masked, new_shape, new_perm, keep_info=False)

    def _sum_all(self) -> EncryptedTensor:
        """Every element summed (clean input): ciphertext additions, then log2(min(P, S))
        rotate-and-add steps; a 0-d tensor (slot 0; other slots dirty)."""
        acc = functools.reduce(lambda a, b: a + b, self._chunks)
        width = min(self._padded_total(), self._S)
        steps = [1 << i for i in range(width.bit_length() - 1)]
        self.ctx.ensure_galois_keys(steps)
        for s in steps:
            acc = acc + self._rotate(acc, s)
        return self._derive([acc], False, (), (), keep_info=False)

    def mean(self, axis: int | None = None) -> EncryptedTensor:
        """CKKS: ``sum(axis) / n`` (the sum's cost plus one scalar product: a level)."""
        self._need_ckks("mean")
        nd = self.ndim
        n = self.size if axis is None else self._shape[
            _check.integer(axis, "axis", -nd, nd - 1) % nd]
        return self.sum(axis) * (1.0 / n)

    # ---- slicing ------------------------------------------------------------------------------
    def __getitem__(self, index: Any) -> EncryptedTensor:
        """``t[i]`` and ``t[a:b]`` (step 1) along the first axis, which must be the outermost
        physical one (not after a transpose that moved it). Rows of st >= S slots are whole
        ciphertexts (free; padding rows are fresh encryptions of zero); shorter rows are
        re-packed (:func:`veil._repack.gather`): free when the rows start the first ciphertext (``t[:k]``,
        ``t[0]``), else one level (CKKS) and the rotations of a slot shift.

        Raises IndexError for other indices or out of range, ValueError for a step other than
        1, an empty slice, or a transposed first axis."""
        if isinstance(index, tuple):
            if len(index) != 1:
                raise IndexError("index: encrypted tensors take t[i] or t[a:b] along the first "
                                 "axis only")
            index = index[0]
        if self.ndim == 0:
            raise IndexError("index: a 0-d encrypted tensor has no axis to index")
        n = self._shape[0]
        squeeze = False
        if _check.is_integer(index):
            i = int(index)
            if not -n <= i < n:
                raise IndexError(f"index: {i} is out of range for axis 0 of size {n}")
            a, b, squeeze = i % n, i % n + 1, True
        elif isinstance(index, slice):
            if index.step not in (None, 1):
                raise ValueError(f"index: only step 1 is supported, got {index.step}")
            a, b, _ = index.indices(n)
            if b <= a:
                raise ValueError(f"index: the slice {index} of axis 0 (size {n}) is empty")
        else:
            raise IndexError(f"index: encrypted tensors take t[i] or t[a:b] along the first "
                             f"axis, got {_check.show(index)}")
        if self._perm[0] != 0:
            raise ValueError(f"index: axis 0 is physical axis {self._perm[0]} after a "
                             "transpose; slicing reads the outermost physical axis")
        S, P = self._S, self.padded_shape
        st, m = math.prod(P[1:]), b - a
        shape = (m,) + self._shape[1:]
        count = self._count_for(shape, self._perm)
        if st >= S:
            r = st // S
            chunks = list(self._chunks[a * r:b * r])
            chunks += [self._zero_like(chunks[0]) for _ in range(count - len(chunks))]
            out = self._derive(chunks, self._clean, shape, self._perm)
        else:
            rows = np.arange(m, dtype=np.int64)[:, None]
            inner = np.arange(st, dtype=np.int64)[None, :]
            src = ((a + rows) * st + inner).ravel()
            plan = _repack.plan_moves(((rows * st) + inner).ravel(), src // S, src % S, S)
            chunks, masked = _repack.gather(self, self._chunks, plan, count)
            out = self._derive(chunks, masked and self._clean, shape, self._perm)
        if squeeze:
            out = out._derive(out._chunks, out._clean, self._shape[1:],
                              tuple(x - 1 for x in self._perm[1:]))
        return out

    # ---- matmul -------------------------------------------------------------------------------
    def matmul(self, matrix: Any) -> EncryptedTensor:
        """``t @ W`` for a 1-D tensor t of length n and a plaintext (n, m) matrix W of any size:
        a 1-D tensor of length m. W is zero-padded to the padded lengths (rows at padding
        positions are zero, so dirty padding is harmless) and cut into blocks of
        min(pad(n), S) x min(pad(m), S); output ciphertext j = sum_i chunk_i @ W_ij, each block
        by :func:`veil._tensor.matmul` (Halevi-Shoup diagonals with BSGS and hoisted baby
        steps; all-zero blocks skipped), as GAZELLE's block products (USENIX Security 2018).

        Cost per nonzero block of side d = min(S, max(rows, cols)): about 2 sqrt(d) rotations
        (+ one when d < S) and d plaintext products; CKKS: one level in all.

        Raises ValueError naming ``matrix`` (not 2-D, or n != len(t)) or ``self`` (ndim != 1),
        TypeError for non-numeric entries."""
        if isinstance(matrix, EncryptedTensor):
            return self._matmul_encrypted(matrix)
        if isinstance(matrix, CiphertextBase):
            raise TypeError("matrix: t @ W takes a plaintext 2-D matrix W or an encrypted 2-D "
                            "tensor, not a ciphertext")
        if self.ndim != 1:
            raise ValueError(f"self: t @ W needs a 1-D tensor, got shape {self._shape}")
        W = np.asarray(matrix)
        if W.ndim != 2 or 0 in W.shape:
            raise ValueError(f"matrix: expected a 2-D (n, m) array, got shape {W.shape}")
        n, m = W.shape
        if n != self._shape[0]:
            raise ValueError(f"matrix: shapes ({self._shape[0]},) and ({n}, {m}) are not "
                             "aligned")
        S = self._S
        pn, pm = _pow2(n), _pow2(m)
        rows, cols = min(pn, S), min(pm, S)
        Wp = np.zeros((pn, pm), dtype=W.dtype)
        Wp[:n, :m] = W
        cout = -(-pm // S)
        outs: list[Any] = [None] * cout
        for j in range(cout):
            for i, ct in enumerate(self._chunks):
                block = Wp[i * rows:(i + 1) * rows, j * cols:(j + 1) * cols]
                if not block.any():
                    continue
                part = _tensor.matmul(ct._resized(rows), block)
                outs[j] = part if outs[j] is None else outs[j] + part
        done = [c for c in outs if c is not None]
        if not done:  # the zero matrix
            done = [_tensor.matmul(self._chunks[0]._resized(rows),
                                   np.zeros((rows, cols), dtype=W.dtype))]
        ref = done[0]
        outs = [(c if c is not None else self._zero_like(ref))._resized(S) for c in outs]
        return EncryptedTensor(self.ctx, outs, (m,), (0,), True)

    def _matmul_encrypted(self, other: EncryptedTensor) -> EncryptedTensor:
        """A @ B for encrypted 2-D CKKS tensors: :func:`veil._matmul_enc.tensor_matmul`."""
        from . import _matmul_enc

        return _matmul_enc.tensor_matmul(self, other)

    def __matmul__(self, other: Any) -> EncryptedTensor:
        return self.matmul(other)

    def __rmatmul__(self, other: Any) -> EncryptedTensor:
        """``M @ t`` = ``t @ M.T`` for a plaintext (m, n) matrix."""
        mat = np.asarray(other)
        if mat.ndim != 2:
            raise ValueError(f"matrix: expected a 2-D (m, n) array, got shape {mat.shape}")
        return self.matmul(mat.T)

    # ---- serialization ------------------------------------------------------------------------
    def to_bytes(self, compression: str = "zstd") -> bytes:
        """A versioned header (magic ``VEILTNSR``, format 1, scheme, flags, ndim, shape, padded
        shape, perm, slots per ciphertext, count), then each ciphertext's own bytes with its
        length (:func:`veil._enc_tensor_io.tensor_to_bytes`). Load with
        ``EncryptedTensor.from_bytes(data, ctx)`` or ``veil.load``."""
        return _IO["to_bytes"](self, compression)

    @classmethod
    def from_bytes(cls, data: Bytes, ctx: KeyedContext,
                   max_bytes: int | None = None) -> EncryptedTensor:
        """Loads :meth:`to_bytes` output into ``ctx``, treating the bytes as hostile: every
        field is bounds-checked before anything is allocated.

        Raises ValueError naming the field (``magic``, ``version``, ``scheme``, ``ndim``,
        ``shape``, ``padded_shape``, ``perm``, ``slots``, ``count``, ``length``, ``data``),
        TypeError for a ``ctx`` that is not a pythonic context."""
        return _IO["from_bytes"](data, ctx, max_bytes)

    def __reduce_ex__(self, protocol: Any) -> Any:
        # The ciphertexts pickle themselves (CiphertextBase.__reduce_ex__: into the live context
        # of their key set); the tensor adds its layout.
        return (_restore_tensor, (self._chunks, self._shape, self._perm, self._clean,
                                  self.image_info))


def _restore_tensor(chunks, shape, perm, clean, image_info) -> EncryptedTensor:
    return EncryptedTensor(chunks[0].ctx, chunks, tuple(shape), tuple(perm), clean, image_info)


def is_tensor_bytes(data: Any) -> bool:
    """True when ``data`` starts with the encrypted tensor's magic (``veil.load``)."""
    try:
        return bytes(memoryview(data)[:8]) == MAGIC
    except TypeError:
        return False


__all__ = ["PACKING", "EncryptedTensor", "is_tensor_bytes", "slot_width"]
