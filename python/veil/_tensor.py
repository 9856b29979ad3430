"""Tensor-style helpers on ciphertexts: ``sum``, ``dot``, ``matmul``, ``polyval``, ``evaluate``, and
CKKS level/scale alignment for binary operations.

Every helper is a sequence of the evaluator's operations (rotations, plaintext products, one-pass
sums), so it runs on the ciphertext's device (CPU or GPU) with the same results on both.

Algorithms:

* ``sum``: rotate-and-add, doubling the summed window (Halevi-Shoup, "Algorithms in HElib",
  CRYPTO 2014, §4.1's total sums); a window of n slots takes at most 2 log2(n) rotations.
* ``matmul``: the diagonal method of Halevi-Shoup (CRYPTO 2014, §4.3) with the baby-step
  giant-step split of Halevi-Shoup, "Faster homomorphic linear transformations in HElib"
  (CRYPTO 2018, §4): sqrt(d) hoisted baby-step rotations share one decomposition, and each
  giant step's inner sum is one pass over the ciphertexts (``Evaluator.multiply_plain_sum``).
* ``polyval`` / ``evaluate`` (CKKS): the polynomial in the Chebyshev basis, evaluated by the
  baby-step giant-step recursion of Bossuat, Mouchet, Troncoso-Pastoriza and Hubaux (Eurocrypt
  2021, Alg. 2) with every addition exact in scale: the C++ ``circuits::PolynomialEvaluator``
  (the evaluator of CKKS bootstrapping's EvalMod); depth ceil(log2(d + 1)) for degree d.
  ``evaluate`` interpolates ``fn`` at the Chebyshev nodes of the interval (numpy's
  ``Chebyshev.interpolate``).
* Alignment (CKKS, ``auto_rescale=True``): the operand at the higher level is brought to the
  other's level *and exact scale* by one constant product and rescale (the scale adjustment of
  Kim-Papadimitriou-Polyakov, CT-RSA 2022, as OpenFHE's FLEXIBLEAUTO; ``circuits::ScaleOps``),
  so ``u * u + u`` works and costs no level beyond the product's.

``matmul`` stays here: its diagonals are those of an n x m matrix padded to d = max(n, m) with
a wrap at d handled by a second family of diagonals (not the power-of-two, fully tiled slots of ``circuits::
LinearTransform``), it serves BFV/BGV too, and it rescales only under ``auto_rescale``.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt

from . import _check

# ---- rotation plans (the steps each helper needs: the keys a client must create) -------------


def next_pow2(n: int) -> int:
    """The smallest power of two >= n (n >= 1): the padded sizes of tensors and packings."""
    return 1 << (n - 1).bit_length()


def sum_steps(size: int) -> list[int]:
    """The rotation steps of :func:`slot_sum` over a window of ``size`` slots (size >= 1)."""
    steps, width = set(), 1
    for bit in bin(size)[3:]:
        steps.add(width)
        width *= 2
        if bit == "1":
            steps.add(1)
            width += 1
    return sorted(steps)


def matmul_plan(n: int, m: int, row: int) -> tuple[int, int, int, bool]:
    """(d, baby, giant, replicate) for a vector of n slots times an n x m matrix in rows of
    ``row`` slots: d = max(n, m) diagonals, baby * giant >= d, and whether the vector must be
    replicated (d < row) so that rotations wrap modulo d.

    Raises ValueError naming ``matrix`` when d > row / 2 and d != row (no room to replicate).
    """
    d = max(n, m)
    if d != row and 2 * d > row:
        raise ValueError(f"matrix: a {n} x {m} matrix needs max(n, m) <= {row // 2} (half the "
                         f"{row} slots, to replicate the vector) or exactly {row}")
    baby = max(1, math.isqrt(d - 1) + 1) if d > 1 else 1
    giant = -(-d // baby)
    return d, baby, giant, d < row


def matmul_steps(n: int, m: int, row: int) -> list[int]:
    """The rotation steps :func:`matmul` needs for an n x m matrix (rows of ``row`` slots)."""
    d, baby, giant, replicate = matmul_plan(n, m, row)
    steps = set(range(1, baby)) | {g * baby for g in range(1, giant)}
    if replicate:
        steps.add(-d)
    return sorted(s for s in steps if s % row)


# ---- sum, dot, matmul ---------------------------------------------------------------------------


def _rotate(ct, step: int):
    """Rotation of the slots (CKKS) or of both rows (BFV/BGV) of a pythonic ciphertext."""
    return ct.rotate(step) if hasattr(ct, "is_complex") else ct.rotate_rows(step)


def _row_size(ct) -> int:
    """The slots rotations cycle through: N/2 (CKKS) or N/2 per row (BFV/BGV); on a CKKS
    context that bootstraps n < N/2 slots, n for a vector of at most n values (encoded repeated
    with period n, so a rotation turns each period alike)."""
    if not hasattr(ct, "is_complex"):
        return ct.ctx.row_size
    period = ct.ctx._sparse_slots()
    return period if period is not None and len(ct) <= period else ct.ctx.slot_count


def slot_sum(ct, size: int | None = None):
    """Slot i of the result holds x_i + x_(i+1) + ... + x_(i+size-1) (indices cyclic in the row):
    slot 0 holds the sum of the first ``size`` slots. ``size`` defaults to the ciphertext's
    length (BFV/BGV with a length above N/2: both rows, every slot then holding the total of
    all N slots). The result has length 1.

    Raises ValueError naming ``size`` outside 1..row length (N/2).
    """
    row = _row_size(ct)
    both_rows = size is None and not hasattr(ct, "is_complex") and len(ct) > row
    if size is None:
        size = row if both_rows else max(1, len(ct))
    else:
        size = _check.integer(size, "size", 1, row)
    ct.ctx.ensure_galois_keys(sum_steps(size), columns=both_rows)
    if both_rows and len(ct) < 2 * row:
        # The window covers whole rows: zero the slots past the length first (a 0/1
        # plaintext product, noise budget but no level), or they would join the total.
        ct = ct * np.ones(len(ct), dtype=np.int64)
    acc, width = ct, 1
    for bit in bin(size)[3:]:
        acc = acc + _rotate(acc, width)
        width *= 2
        if bit == "1":
            acc = ct + _rotate(acc, 1)
            width += 1
    if both_rows:  # rotate_columns gives length N: add the raw ciphertexts
        acc = acc._wrap(ct.ctx.evaluator.add(acc.raw, acc.rotate_columns().raw))
    return acc._resized(1)


def dot(ct, other, size: int | None = None):
    """Inner product: ``(ct * other).sum(size)``, a ciphertext of length 1; slot 0 (and, for a
    full window, every slot) holds sum_i ct_i * other_i. ``other``: a ciphertext of the same
    context and length or a vector of ``len(ct)`` plaintext values; ``size`` defaults to
    len(other) for a vector and to the length for a ciphertext."""
    if (size is None and isinstance(other, (Sequence, np.ndarray)) and np.ndim(other) == 1
            and len(other) != len(ct)):
        size = len(other) or None  # (a length mismatch: the product below names it)
    return slot_sum(ct * other, size)


def _check_matrix(matrix, is_ckks: bool) -> np.ndarray:
    """``matrix`` as a checked 2-D numpy array (errors name ``matrix``)."""
    if hasattr(matrix, "raw") and hasattr(matrix, "ctx"):  # x @ y with a ciphertext y
        raise TypeError("matrix: x @ M takes a plaintext 2-D matrix M, got a ciphertext; for "
                        "the inner product of two ciphertexts use x.dot(y), for their "
                        "elementwise product x * y")
    mat = np.asarray(matrix)
    if mat.ndim != 2 or 0 in mat.shape:
        raise ValueError(f"matrix: expected a 2-D (n, m) array, got shape {mat.shape}")
    if mat.dtype.kind not in ("iufc" if is_ckks else "iu"):
        raise TypeError(f"matrix: expected {'numbers' if is_ckks else 'integers'}, got dtype "
                        f"{mat.dtype}")
    return mat


class EncodedMatrix:
    """A plaintext n x m matrix with its diagonals encoded once, for ``x @ M`` on many
    ciphertexts (a server's weights): ``em = veil.EncodedMatrix(ctx, M)``, then ``ct @ em`` is
    ``ct @ M`` without encoding the diagonals again. The diagonals are encoded at the level of
    the first ciphertext they meet (or ``level``) and kept per level, so ciphertexts at a new
    level cost one more encoding; :meth:`encode` prepares a level ahead of time.

    Memory: one plaintext per nonzero diagonal and family (d = max(n, m) diagonals; twice as
    many families when d < N/4, see :func:`matmul`), each a full plaintext at its level
    (N x (level + 1) words for CKKS; N words for BFV/BGV).

    Raises ValueError / TypeError naming ``matrix`` as :func:`matmul` does (shape, entries, or
    too large for the slots); ``ctx`` must be a pythonic context (veil.ckks / bfv / bgv).
    """

    def __init__(self, ctx: Any, matrix: npt.ArrayLike, level: int | None = None) -> None:
        if not hasattr(ctx, "evaluator") or not hasattr(ctx, "encode"):
            raise TypeError(f"ctx: expected a veil context (veil.ckks, veil.bfv, veil.bgv), got "
                            f"{type(ctx).__name__}")
        self.ctx = ctx
        self.is_ckks = hasattr(ctx, "_plain_scale_for")
        self.matrix = _check_matrix(matrix, self.is_ckks).copy()
        self.matrix.setflags(write=False)  # the cached diagonals are this matrix's
        self.shape = self.matrix.shape
        self._levels: dict[tuple[int, int, bool, float], list] = {}
        if level is not None:
            row = ctx._sparse_slots() or ctx.slot_count if self.is_ckks else ctx.row_size
            self.encode(level, row)

    def __repr__(self) -> str:
        return (f"veil.EncodedMatrix(shape={self.shape}, levels="
                f"{sorted({k[0] for k in self._levels})})")

    def encode(self, level: int, row: int) -> list:
        """The encoded giant steps for ciphertexts at ``level`` in rows of ``row`` slots:
        [(shift, [(family, baby step)], [plaintexts])], built once."""
        # The diagonals' scale comes from the context's scale and auto_rescale (CKKS): both in
        # the key, so that changing either re-encodes rather than reusing stale plaintexts.
        key = (int(level), int(row), bool(getattr(self.ctx, "auto_rescale", False)),
               float(getattr(self.ctx, "scale", 0.0)))
        hit = self._levels.get(key)
        if hit is None:
            hit = self._levels[key] = _encode_diagonals(self.ctx, self.matrix, row, level,
                                                        self.is_ckks)
        return hit


def _diagonal_families(mat: np.ndarray, row: int) -> tuple[int, int, int, bool, list]:
    """(d, baby, giant, replicate, families): the generalized diagonals of the n x m matrix
    padded to d x d, diag_k[j] = M[(j + k) mod d, j], split in two families when d < row (the
    entries that read x[j + k] and those that wrap to x[j + k - d]: :func:`matmul`)."""
    n, m = mat.shape
    d, baby, giant, replicate = matmul_plan(n, m, row)
    padded = np.zeros((d, d), dtype=mat.dtype)
    padded[:n, :m] = mat
    cols = np.arange(d)
    diags = [padded[(cols + k) % d, cols] for k in range(d)]
    families = [diags]
    if replicate:
        wraps = [(cols + k) >= d for k in range(d)]
        families = [[np.where(w, 0, dg) for dg, w in zip(diags, wraps)],
                    [np.where(w, dg, 0) for dg, w in zip(diags, wraps)]]
    return d, baby, giant, replicate, families


def _encode_diagonals(ctx, mat: np.ndarray, row: int, level: int, is_ckks: bool) -> list:
    """Every giant step's nonzero diagonals, rotated by the giant step and encoded (CKKS: at
    ``level`` and the scale the rescale divides by): [(shift, [(family, b)], [plaintexts])]."""
    d, baby, giant, _, families = _diagonal_families(mat, row)
    pscale = ctx._plain_scale_for(level) if is_ckks else None
    out = []
    for g in range(giant):
        shift = g * baby
        terms = [(f, b) for f, fam in enumerate(families) for b in range(baby)
                 if shift + b < d and np.any(fam[shift + b])]
        if not terms:
            continue
        pts = []
        for f, b in terms:
            diag = families[f][shift + b]
            full = np.zeros(row, dtype=diag.dtype)
            full[:d] = diag
            full = np.roll(full, shift)
            pts.append(ctx.encode(full, scale=pscale, level=level) if is_ckks else ctx.encode(full))
        out.append((shift, terms, pts))
    return out


def matmul(ct, matrix):
    """The vector-matrix product v @ M for the vector v of length n (``len(ct)``; whatever the
    slots after it hold is ignored) and a plaintext n x m matrix M (a numpy array, or an
    :class:`EncodedMatrix` whose diagonals are encoded once): the result, of length m, holds
    y_j = sum_i v_i M[i, j] in its first m slots and zeros after them (up to CKKS noise).

    Halevi-Shoup's diagonal method with baby-step giant-step (module docstring): y = sum_k
    diag_k * rot(v, k) with diag_k[j] = M[(j + k) mod d, j], d = max(n, m); unless d is the
    whole row, each diagonal splits into the entries that read v[j + k] and those that wrap to
    v[j + k - d], the latter applied to rot(v, -d) (two hoisted families of baby steps, no
    level; replicating v + rot(v, -d) would need zeros after v). All-zero diagonals are
    skipped.
    CKKS: the diagonals are encoded at the scale the rescale divides by, so the result keeps the
    input's scale (one level used when auto_rescale is on). BFV/BGV: M's entries are integers
    mod t; the vector lives in the first row.

    Raises ValueError naming ``matrix`` for a shape that is not (n, m) with n, m >= 1, n other
    than ``len(ct)``, too large for the slots (max(n, m) <= N/4, or = N/2), or an
    EncodedMatrix of another context; TypeError for non-numeric entries.
    """
    ctx = ct.ctx
    is_ckks = hasattr(ct, "is_complex")
    if isinstance(matrix, EncodedMatrix):
        if matrix.ctx is not ctx:
            raise ValueError("matrix: this EncodedMatrix was encoded for another context")
        encoded, mat = matrix, matrix.matrix
    else:
        encoded, mat = None, _check_matrix(matrix, is_ckks)
    n, m = mat.shape
    if n != len(ct):
        raise ValueError(f"matrix: v @ M with an {n} x {m} matrix needs a vector of {n} values, "
                         f"but the ciphertext has length {len(ct)} (shapes ({len(ct)},) and "
                         f"({n}, {m}) are not aligned)")
    row = _row_size(ct)
    d, _, _, replicate = matmul_plan(n, m, row)
    ctx.ensure_galois_keys(matmul_steps(n, m, row))
    level = ct.level if is_ckks else 0
    steps = (encoded.encode(level, row) if encoded is not None
             else _encode_diagonals(ctx, mat, row, level, is_ckks))
    # y_j = sum_k diag_k[j] x[(j + k) mod d]. With d < row the index wraps at d, not at the
    # row's end: family 1 reads x[j + k - d] = rot(x, -d)[j + k]. The slots of x outside
    # 0..n-1 (whatever the computation left there: x + 1, a rotation) only ever meet zeros.
    sources = [ct, _rotate(ct, -d)] if replicate else [ct]
    babies = []  # per source: {baby step: rotated ciphertext}, hoisted (one ModUp each)
    for f, src in enumerate(sources):
        used = sorted({b for _, terms, _ in steps for fam, b in terms if fam == f})
        moved = [b for b in used if b]
        rotated = dict(zip(moved, src.rotate_many(moved) if moved else []))
        if 0 in used:
            rotated[0] = src
        babies.append(rotated)
    ev = ctx.evaluator
    complex_out = is_ckks and (ct.is_complex or mat.dtype.kind == "c")
    out = None
    for shift, terms, pts in steps:
        cts = [babies[f][b] for f, b in terms]
        if is_ckks:
            inner = ct._wrap(ev.multiply_plain_sum([c.raw for c in cts], pts), complex_out)
        else:
            inner = None
            for c, pt in zip(cts, pts):
                term = c * pt
                inner = term if inner is None else inner + term
        if shift:
            inner = _rotate(inner, shift)
        out = inner if out is None else out + inner
    if out is None:  # the zero matrix
        return (ct * 0)._resized(m)
    if is_ckks:
        out = out._wrap(ctx._rescale_product(out.raw))
    return out._resized(m)


# ---- CKKS polynomials (circuits::PolynomialEvaluator) ------------------------------------------


def cheb_eval(ct, coeffs, domain: tuple[float, float] = (-1.0, 1.0)):
    """p(y) = sum_i coeffs[i] T_i(y) for y = (2x - a - b) / (b - a) (``domain`` = (a, b)), at the
    input's scale and the highest level the recursion reaches (ceil(log2(d + 1)) levels
    below the input; +1 for the map to [-1, 1]): ``circuits::PolynomialEvaluator::
    evaluate_chebyshev`` (Bossuat et al., Eurocrypt 2021, Alg. 2, with exact scales).

    Raises ValueError naming ``coeffs`` when the ciphertext has too few levels."""
    ctx = ct.ctx
    raw = ctx._polynomials().evaluate_chebyshev(ct.raw, [float(c) for c in coeffs], ctx._rlk(),
                                                (float(domain[0]), float(domain[1])))
    return ct._wrap(raw)


def polyval(ct, coeffs: Sequence[float]):
    """p(x) = coeffs[0] + coeffs[1] x + ... + coeffs[d] x^d (numpy.polynomial order: lowest
    degree first), through the Chebyshev basis (``circuits::power_to_chebyshev``, numpy's
    ``poly2cheb`` bit for bit: the identity holds for every x, so no interval is assumed)."""
    c = np.asarray(coeffs)
    if c.ndim != 1 or c.size == 0 or c.dtype.kind not in "iuf":
        raise ValueError(f"coeffs: expected a 1-D sequence of real numbers, got {_check.show(coeffs)}")
    if not np.all(np.isfinite(c)):
        raise ValueError("coeffs: expected finite numbers")
    ctx = ct.ctx
    raw = ctx._polynomials().evaluate_power(ct.raw, c.astype(np.float64).tolist(), ctx._rlk())
    return ct._wrap(raw)


def evaluate(ct, fn: Callable, interval: tuple[float, float] = (-1.0, 1.0), degree: int = 15):
    """An approximation of fn(x) for x in ``interval`` = (a, b): fn's Chebyshev interpolant of
    ``degree`` (at the Chebyshev points of the first kind on [a, b]; numpy's
    ``Chebyshev.interpolate``), evaluated homomorphically (:func:`cheb_eval`). Outside the
    interval the result diverges quickly. Uses ceil(log2(degree + 1)) + 2 levels (+1 maps x
    into [-1, 1]).

    Raises ValueError naming ``interval`` (a >= b or not finite) or ``degree`` (outside 1..1023)
    and TypeError naming ``fn`` when it is not callable."""
    if not callable(fn):
        raise TypeError(f"fn: expected a callable (numpy-vectorized), got {_check.show(fn)}")
    try:
        a, b = (float(v) for v in interval)
    except (TypeError, ValueError):
        raise ValueError(f"interval: expected (a, b), got {_check.show(interval)}") from None
    if not (math.isfinite(a) and math.isfinite(b) and a < b):
        raise ValueError(f"interval: expected finite a < b, got ({a}, {b})")
    degree = _check.integer(degree, "degree", 1, 1023)
    cheb = np.polynomial.chebyshev.Chebyshev.interpolate(fn, degree, domain=[a, b])
    return cheb_eval(ct, cheb.coef, (a, b))


# ---- CKKS alignment (circuits::ScaleOps) -------------------------------------------------------


def _close(s: float, t: float) -> bool:
    return abs(s / t - 1.0) <= 1e-6  # the evaluator's tolerance for equal scales


def align(ctx, a, b, scales: bool = True):
    """Raw ciphertexts ``a``, ``b`` at one level (and, with ``scales``, one scale): the operand
    at the higher level lands exactly on the other's level and scale (one constant product and
    rescale, ``circuits::ScaleOps::const_to``), or both drop one block when they share a level
    but not a scale. Returns (a, b).

    Raises ValueError naming ``other`` when no rescale block is left to align them."""
    if a.level == b.level and (not scales or _close(a.scale, b.scale)):
        return a, b
    ev = ctx.evaluator
    swap = a.level < b.level
    hi, lo = (b, a) if swap else (a, b)
    if hi.level > lo.level and (not scales or _close(hi.scale, lo.scale)):
        hi = ev.mod_switch_to(hi, lo.level)
        return (lo, hi) if swap else (hi, lo)
    ops = ctx._scale_ops()
    tops = ops.chain.tops
    above = next((t for t in tops[1:] if ops.below(t) == lo.level), None)
    if above is not None and hi.level >= above:  # the block top whose rescale lands on lo
        hi = ops.const_to(ops.wrap(hi), 1.0, lo.level, lo.scale).ct
    else:  # same level (or no block between): both drop one block, landing at lo's scale
        lo_tops = [t for t in tops if t <= lo.level]
        if len(lo_tops) < 2:
            raise ValueError(
                f"other: cannot align level {a.level} (scale 2^{math.log2(a.scale):.2f}) with "
                f"level {b.level} (scale 2^{math.log2(b.scale):.2f}): no rescale level left to "
                "adjust the scale; bootstrap or use a longer chain")
        top, below = lo_tops[-1], lo_tops[-2]
        target = a.scale  # the first operand's scale
        hi = ops.const_to(ops.wrap(ev.mod_switch_to(hi, top)), 1.0, below, target).ct
        lo = ops.const_to(ops.wrap(ev.mod_switch_to(lo, top)), 1.0, below, target).ct
    return (lo, hi) if swap else (hi, lo)
