"""The product of two encrypted square matrices (CKKS), each packed in one ciphertext.

Jiang, Kim, Lauter and Song, "Secure Outsourced Matrix Computation and Application to Neural
Networks" (ACM CCS 2018), Sec. 3: a d x d matrix A is packed row-major in the first d^2 slots
(slot i d + j holds A[i, j]) and

    A B = sum_(k = 0)^(d - 1) phi^k(sigma(A)) * psi^k(tau(B))        (their Eq. (2))

with the slot permutations sigma(A)[i, j] = A[i, i + j], tau(B)[i, j] = B[i + j, j],
phi(A)[i, j] = A[i, j + 1] and psi(B)[i, j] = B[i + 1, j] (indices mod d). Each permutation
here is a sum of masked rotations: slot l reads slot src(l), so grouping the slots by their
offset k = src(l) - l gives y = sum_k u_k * rot(x, k) with 0/1 masks u_k (the diagonal method
of Halevi-Shoup, CRYPTO 2014; the rotations of one input are hoisted, Halevi-Shoup CRYPTO 2018).
No offset wraps past the d^2-slot block (src(l) < d^2), so the rest of the row is never read.

Costs (d x d, d^2 <= slots): sigma 2d - 1 rotations and tau 2d - 1 (hoisted, one decomposition
each); phi^k and psi^k for k = 1..d-1 two rotations each (both offsets of phi^k hoisted
together, likewise psi^k's); d ciphertext products, relinearized once after summing them
(lazy relinearization). Depth 3: the sigma/tau masks, the phi/psi masks and the product (the
paper's count). The paper's Sec. 3.2 replaces the phi/psi masks of k >= 1 by one rotation of
a doubled vector; that saves a level when the caller keeps a replicated copy, not done here.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _check, _errors, _tensor


def _offsets(src: np.ndarray) -> dict[int, np.ndarray]:
    """{offset k: 0/1 mask of the slots l with src(l) - l = k} for a permutation ``src``."""
    off = src - np.arange(len(src))
    return {int(k): (off == k).astype(np.float64) for k in np.unique(off)}


def sigma_source(d: int) -> np.ndarray:
    i, j = np.divmod(np.arange(d * d), d)
    return i * d + (i + j) % d


def tau_source(d: int) -> np.ndarray:
    i, j = np.divmod(np.arange(d * d), d)
    return ((i + j) % d) * d + j


def phi_source(d: int, k: int) -> np.ndarray:
    i, j = np.divmod(np.arange(d * d), d)
    return i * d + (j + k) % d


def psi_source(d: int, k: int) -> np.ndarray:
    i, j = np.divmod(np.arange(d * d), d)
    return ((i + k) % d) * d + j


def steps(d: int) -> list[int]:
    """Every rotation step :func:`matmul_encrypted` uses for d x d matrices (the Galois keys a
    client must create)."""
    out: set[int] = set()
    for src in [sigma_source(d), tau_source(d)] + [f(d, k) for k in range(1, d)
                                                   for f in (phi_source, psi_source)]:
        out.update(k for k in _offsets(src) if k)
    return sorted(out)


def permute(ct, src: np.ndarray):
    """The ciphertext whose slot l holds slot src[l] of ``ct`` for l < len(src) (zeros after):
    sum_k mask_k * rot(ct, k) over the distinct offsets, the rotations hoisted, the masked sum
    in one pass and one rescale (one level)."""
    ctx = ct.ctx
    groups = _offsets(np.asarray(src))
    moved = [k for k in groups if k]
    rotated = dict(zip(moved, ct.rotate_many(moved) if moved else []))
    rotated[0] = ct
    level = ct.level
    pscale = ctx._plain_scale_for(level)
    # The row rotations cycle through: on a context bootstrapping n < N/2 slots, vectors of at
    # most n values repeat with period n, and the masks must repeat with them (encode tiles).
    row = _tensor._row_size(ct)
    pts, raws = [], []
    for k, mask in groups.items():
        full = np.zeros(row)
        full[:len(mask)] = mask
        pts.append(ctx.encode(full, scale=pscale, level=level))
        raws.append(rotated[k].raw)
    raw = ctx.evaluator.multiply_plain_sum(raws, pts)
    return ct._wrap(ctx._rescale_product(raw))._resized(len(src))


@_errors.user_operation("matmul_encrypted(x, {y}, d)", need=lambda self, *a, **k: 3)
def matmul_encrypted(a, b, d: int):
    """A @ B for encrypted d x d matrices ``a`` and ``b`` (CKKS ciphertexts, each packed
    row-major in its first d^2 slots; length d^2). Returns a ciphertext of length d^2 holding
    A B row-major, three levels below the lower input (module docstring: Jiang-Kim-Lauter-Song,
    CCS 2018, Eq. (2)). Creates the Galois keys it needs (:func:`steps`) when the context has
    a secret key.

    Raises ValueError naming ``d`` (d < 1 or d^2 above the slot count), ``a`` / ``b`` (not CKKS
    ciphertexts of one context, or of a length other than d^2).
    """
    from ._base import check_same_context

    for name, ct in (("a", a), ("b", b)):
        if not hasattr(ct, "is_complex"):
            raise ValueError(f"{name}: expected a CKKS ciphertext, got {type(ct).__name__}")
    check_same_context(a, b, "b")
    d = _check.integer(d, "d", 1, None)
    slots = a.ctx._sparse_slots() or a.ctx.slot_count
    if d * d > slots:
        raise ValueError(f"d: a {d} x {d} matrix needs d^2 = {d * d} slots, the context has "
                         f"{slots}")
    for name, ct in (("a", a), ("b", b)):
        if len(ct) != d * d:
            raise ValueError(f"{name}: expected a {d} x {d} matrix packed row-major (length "
                             f"{d * d}), got length {len(ct)}")
    a.ctx.ensure_galois_keys(steps(d))
    sa = permute(a, sigma_source(d))
    tb = permute(b, tau_source(d))
    acc = None
    for k in range(d):
        ak = sa if k == 0 else permute(sa, phi_source(d, k))
        bk = tb if k == 0 else permute(tb, psi_source(d, k))
        if k == 0:  # bring sigma(A), tau(B) to the level of the later terms (one mask level)
            ak = permute(ak, np.arange(d * d))
            bk = permute(bk, np.arange(d * d))
        term = ak.ctx.evaluator.multiply(*ak._pair(bk))
        acc = term if acc is None else ak.ctx.evaluator.add(acc, term)
    return a._wrap(a._after_mul(acc))._resized(d * d)


def tensor_matmul(a: Any, b: Any) -> Any:
    """A @ B for encrypted 2-D CKKS tensors (:class:`veil.EncryptedTensor`) of shapes (m, l)
    and (l, n) whose padded sizes are one D = pad(m) = pad(l) = pad(n) with D^2 <= S (square
    matrices always qualify): in the padded row-major packing both are then D x D matrices
    row-major in one ciphertext, the layout :func:`matmul_encrypted` takes (about 4 D
    rotations, D ciphertext products, 3 levels); the (m, n) result is in the same packing. A
    tensor whose padding is not known to be zero is masked first (one more level).

    Raises TypeError naming ``matrix`` for BFV/BGV tensors; ValueError naming it (not 2-D,
    shapes not aligned, or a layout other than the above: transposed, or padded sizes that
    differ); DepthError below 3 levels."""
    from ._ckks import CKKSContext

    if not isinstance(a.ctx, CKKSContext):
        raise TypeError("matrix: an encrypted @ encrypted product needs CKKS tensors")
    if a.ndim != 2 or b.ndim != 2 or a.shape[1] != b.shape[0]:
        raise ValueError(f"matrix: expected 2-D tensors of shapes (m, l) and (l, n), got "
                         f"{a.shape} and {b.shape}")
    m, n = a.shape[0], b.shape[1]
    d = _tensor.next_pow2(max(m, a.shape[1], n))  # the padded size
    slots = a.slots_per_ciphertext
    for name, t in (("self", a), ("matrix", b)):
        if t.perm != (0, 1) or t.padded_shape != (d, d) or d * d > slots:
            raise ValueError(
                f"matrix: encrypted @ encrypted needs both tensors as one {d} x {d} padded "
                f"matrix in the '{a.packing}' packing with the rows outermost, in at most "
                f"{slots} slots; {name} has shape {t.shape}, padded {t.padded_shape}, perm "
                f"{t.perm} (encrypt square or near-square matrices, untransposed)")
    a, b = a._cleaned(), b._cleaned()
    c = matmul_encrypted(a.ciphertexts[0]._resized(d * d), b.ciphertexts[0]._resized(d * d), d)
    return type(a)(a.ctx, [c._resized(slots)], (m, n), (0, 1), True)
