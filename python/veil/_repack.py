"""Slot permutations of an encrypted tensor (veil.EncryptedTensor): the plan of which input
slots go where (:func:`plan_moves`) and its application as masked rotations with baby-step
giant-step (:func:`gather`), used by the sums over an axis and by slicing."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np


def gather(tensor: Any, inputs: Sequence[Any], plan: dict, count: int) -> tuple[list[Any], bool]:
    """The re-pack of ``tensor``'s slots (sums over an axis, slices). Output ciphertexts ``0..count-1``: output j = sum over ``plan[j]``'s entries
    (input index c, source slots, destination slots) of input c's source slots moved to the
    destinations. Returns (ciphertexts, masked).

    Shortcut (free, ``masked`` False): every output reads one input without moving a slot;
    it is that input (its other slots land in padding). Otherwise a 0/1 mask per used
    diagonal k (destination j reads source j + k): y = sum_g rot(sum_r rot(diag_(g+r), -g)
    * rot(x, r), g) with baby steps r hoisted per input (one ``rotate_many``) and giant
    steps g multiples of b (BSGS; Halevi-Shoup CRYPTO 2018, §4); b is the power of two
    minimising the rotation count. Cost: (distinct r - 1) rotations per input, (distinct
    g - 1) per output, one plaintext product per used (input, diagonal) per output; CKKS:
    one level (one rescale per output)."""
    S = tensor._S
    simple = all(len(v) == 1 and np.array_equal(v[0][1], v[0][2]) for v in plan.values())
    if simple:
        out = [inputs[plan[j][0][0]] if j in plan else None for j in range(count)]
        ref = next(c for c in out if c is not None)
        return [c if c is not None else tensor._zero_like(ref) for c in out], False
    low = min(c.level for c in inputs)
    inputs = [c if c.level == low else c.mod_switch_to(low) for c in inputs]
    diags: dict[int, dict[tuple[int, int], np.ndarray]] = {}
    ks: set[int] = set()
    for j, entries in plan.items():
        per: dict[tuple[int, int], np.ndarray] = {}
        for c, src, dst in entries:
            k_all = (src - dst) % S
            for k in np.unique(k_all):
                mask = per.setdefault((c, int(k)), np.zeros(S, dtype=np.int64))
                mask[dst[k_all == k]] = 1
                ks.add(int(k))
        diags[j] = per
    b = min((1 << i for i in range(S.bit_length())),
            key=lambda b: len({k % b for k in ks}) + len({k - k % b for k in ks}))
    babies: dict[int, dict[int, Any]] = {}
    for c in sorted({c for per in diags.values() for c, _ in per}):
        rs = sorted({k % b for per in diags.values() for (cc, k) in per if cc == c})
        moved = [r for r in rs if r]
        rot = dict(zip(moved, inputs[c].rotate_many(moved) if moved else []))
        rot[0] = inputs[c]
        babies[c] = rot
    ctx: Any = tensor.ctx
    ev = ctx.evaluator
    is_ckks = tensor._is_ckks()
    if is_ckks:
        pscale = ctx._plain_scale_for(low)
    outs: list[Any] = [None] * count
    for j, per in diags.items():
        acc = None
        for g in sorted({k - k % b for (_, k) in per}):
            terms = [(babies[c][k % b], np.roll(m, g)) for (c, k), m in per.items()
                     if k - k % b == g]
            if is_ckks:
                pts = [ctx.encode(m.astype(np.float64), scale=pscale, level=low)
                       for _, m in terms]
                inner = terms[0][0]._wrap(ev.multiply_plain_sum([t.raw for t, _ in terms],
                                                                pts))
            else:
                inner = None
                for t, m in terms:
                    term = t * m
                    inner = term if inner is None else inner + term
            inner = tensor._rotate(inner, g)
            acc = inner if acc is None else acc + inner
        assert acc is not None  # every output in the plan has a term
        if is_ckks:
            acc = acc._wrap(ctx._rescale_product(acc.raw))
        outs[j] = acc
    ref = next(c for c in outs if c is not None)
    return [c if c is not None else tensor._zero_like(ref) for c in outs], True


def plan_moves(out_flat: np.ndarray, in_chunk: np.ndarray, in_slot: np.ndarray,
          S: int) -> dict:
    """{output chunk: [(input chunk, source slots, destination slots)]} for moving flat
    source (in_chunk, in_slot) to flat destination out_flat (1-D arrays)."""
    oc, os_ = out_flat // S, out_flat % S
    key = oc * (int(in_chunk.max()) + 1) + in_chunk
    order = np.argsort(key, kind="stable")
    key, oc, os_, ic, isl = key[order], oc[order], os_[order], in_chunk[order], in_slot[order]
    cuts = np.flatnonzero(np.diff(key)) + 1
    plan: dict = {}
    for lo, hi in zip(np.r_[0, cuts], np.r_[cuts, key.size]):
        plan.setdefault(int(oc[lo]), []).append((int(ic[lo]), isl[lo:hi], os_[lo:hi]))
    return plan
