"""2-D convolution and average pooling on encrypted images by im2col packing (TenSEAL's
``im2col_encoding``: Benaissa et al., "TenSEAL: A Library for Encrypted Tensor Operations Using
Homomorphic Encryption", ICLR 2021 workshop, arXiv 2104.03152).

The client lays out every window's pixels (:func:`im2col_encrypt`): column p of the (K, W)
matrix holds the K = C * kh * kw pixels under the kernel at output position p (W = out_h *
out_w positions, row-major). A convolution is then a plaintext product by the weights broadcast
along W and a sum over K (:func:`conv2d`): no rotation across windows. With ``filters=F`` the
columns are replicated as (F, K, W) so one product and one sum give all F filters; the
encrypted tensor keeps K as its outermost *physical* axis (``perm`` (1, 0, 2)), so the sum over
K is additions of whole ciphertexts plus rotate-and-add inside one, with no re-pack
(:meth:`veil.EncryptedTensor.sum`).

Max pooling (:func:`max_pool2d`) takes the window maximum by a tournament of encrypted
maximums (``CKKSCiphertext.maximum``: Cheon et al.'s composite sign polynomials, Asiacrypt
2020) over the window axis, halving it each round.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from . import _check
from ._base import KeyedContext
from ._ckks import CKKSContext
from ._enc_tensor import EncryptedTensor


def _pair(value: Any, name: str, lo: int) -> tuple[int, int]:
    if _check.is_integer(value):
        v = _check.integer(value, name, lo)
        return v, v
    try:
        a, b = value
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected an integer or a pair of integers, got "
                         f"{_check.show(value)}") from None
    return _check.integer(a, name, lo), _check.integer(b, name, lo)


def im2col(image: Any, kernel_shape: Any, stride: Any = 1, padding: Any = 0,
           channels_first: bool = True) -> tuple[np.ndarray, dict]:
    """The plaintext im2col matrix (C * kh * kw, out_h * out_w) of ``image`` ((H, W), or
    (C, H, W) with ``channels_first``, else (H, W, C)) zero-padded by ``padding``, and its
    ``info`` (out_hw, kernel, channels, stride, padding). Row index = (c, i, j) in C order (as
    ``weights.reshape(F, -1)`` for weights (F, C, kh, kw)); column = (y, x) in C order.

    Raises ValueError naming ``image``, ``kernel_shape``, ``stride`` or ``padding``."""
    img = np.asarray(image)
    if img.ndim == 2:
        img = img[None]
    elif img.ndim == 3:
        if not _check.flag(channels_first, "channels_first"):
            img = np.moveaxis(img, 2, 0)
    else:
        raise ValueError(f"image: expected (H, W) or (C, H, W) / (H, W, C), got shape "
                         f"{img.shape}")
    if 0 in img.shape:
        raise ValueError(f"image: empty shape {img.shape}")
    kh, kw = _pair(kernel_shape, "kernel_shape", 1)
    sh, sw = _pair(stride, "stride", 1)
    ph, pw = _pair(padding, "padding", 0)
    c, h, w = img.shape
    img = np.pad(img, ((0, 0), (ph, ph), (pw, pw)))
    oh, ow = (h + 2 * ph - kh) // sh + 1, (w + 2 * pw - kw) // sw + 1
    if kh > h + 2 * ph or kw > w + 2 * pw:
        raise ValueError(f"kernel_shape: a {kh} x {kw} kernel is larger than the padded "
                         f"{h + 2 * ph} x {w + 2 * pw} image")
    ys = (np.arange(oh) * sh)[:, None, None, None] + np.arange(kh)[None, None, :, None]
    xs = (np.arange(ow) * sw)[None, :, None, None] + np.arange(kw)[None, None, None, :]
    windows = img[:, ys, xs]  # (C, oh, ow, kh, kw)
    cols = windows.transpose(0, 3, 4, 1, 2).reshape(c * kh * kw, oh * ow)
    info = {"out_hw": (oh, ow), "kernel": (kh, kw), "channels": c, "stride": (sh, sw),
            "padding": (ph, pw)}
    return cols, info


def im2col_encrypt(ctx: KeyedContext, image: Any, kernel_shape: Any, stride: Any = 1,
                   padding: Any = 0, channels_first: bool = True, filters: int | None = None,
                   per_channel: bool = False, **kwargs: Any) -> EncryptedTensor:
    """Encrypts ``image`` in im2col layout (client side; :func:`im2col` gives the matrix):

    * default: a (K, W) tensor, K = C * kh * kw, W = out_h * out_w, for one filter;
    * ``filters=F``: the columns replicated as (F, K, W) (physical order (K, F, W)), for F
      filters in one :func:`conv2d`;
    * ``per_channel=True``: (C, kh * kw, W) (physical (kh * kw, C, W)), for
      :func:`avg_pool2d` (pooling keeps channels apart).

    ``image_info`` on the result records out_hw, kernel, channels, filters and per_channel;
    ``kwargs`` go to ``ctx.encrypt``. Slots: next_pow2 of each axis, multiplied.

    Raises ValueError naming ``image``, ``kernel_shape``, ``stride``, ``padding`` or
    ``filters`` (below 1; or given with ``per_channel``)."""
    cols, info = im2col(image, kernel_shape, stride, padding, channels_first)
    per_channel = _check.flag(per_channel, "per_channel")
    if filters is not None:
        filters = _check.integer(filters, "filters", 1)
        if per_channel:
            raise ValueError("filters: pooling (per_channel=True) takes no filters")
    info.update(filters=filters, per_channel=per_channel)
    c = info["channels"]
    if per_channel:
        arr, perm = cols.reshape(c, -1, cols.shape[1]), (1, 0, 2)
    elif filters is not None:
        arr, perm = np.broadcast_to(cols[None], (filters,) + cols.shape), (1, 0, 2)
    else:
        arr, perm = cols, None
    t = EncryptedTensor.encrypt(ctx, np.ascontiguousarray(arr), perm, **kwargs)
    t.image_info = info
    return t


def conv2d(enc: EncryptedTensor, weights: Any, bias: Any = None) -> EncryptedTensor:
    """The 2-D convolution (cross-correlation, as PyTorch's conv2d) of an image encrypted by
    :func:`im2col_encrypt`: out[f, p] = sum_k weights[f, k] * column[k, p] + bias[f], an
    encrypted (F, W) tensor (``out.image_info["out_hw"]`` = (out_h, out_w):
    ``out.decrypt().reshape(F, out_h, out_w)``).

    ``weights``: (F, C, kh, kw), (C, kh, kw) or (kh, kw) for one filter, or (F, K) / (K,);
    ``bias``: None, a number or (F,). A (K, W) encoding takes one filter; (F, K, W) takes F.

    Cost: one plaintext product (CKKS: one level) and the sum over K, which is the outermost
    physical axis: ciphertext additions plus log2(min(pad(K), S / (pad(F) pad(W)))) rotations
    per ciphertext, no re-pack (the output's padding is left dirty: ``clean`` False).

    Raises ValueError naming ``weights`` (shape not matching the encoding) or ``bias``,
    TypeError naming ``enc``."""
    if not isinstance(enc, EncryptedTensor):
        raise TypeError(f"enc: expected an EncryptedTensor from im2col_encrypt, got "
                        f"{type(enc).__name__}")
    info = dict(enc.image_info or {})
    if info.get("per_channel"):
        raise ValueError("enc: encoded per channel for pooling (per_channel=True); encode with "
                         "per_channel=False for a convolution")
    if enc.ndim not in (2, 3):
        raise ValueError(f"enc: expected an im2col tensor (K, W) or (F, K, W), got shape "
                         f"{enc.shape}")
    k = enc.shape[-2]
    w = np.asarray(weights)
    if w.ndim == 4 or (w.ndim == 2 and w.shape[-1] == k and w.size != k):
        w = w.reshape(w.shape[0], -1)
    else:
        w = w.reshape(1, -1)
    if w.shape[1] != k:
        raise ValueError(f"weights: {w.shape[1]} weights per filter, but the encoding has "
                         f"K = {k} pixels per window (channels x kh x kw)")
    raw_w = np.asarray(weights)
    if ("kernel" in info and info.get("channels", 1) == 1 and raw_w.ndim == 2
            and raw_w.size == k and raw_w.shape != tuple(info["kernel"])):
        raise ValueError(f"weights: one {raw_w.shape[0]} x {raw_w.shape[1]} kernel but the "
                         f"image was encoded for {info['kernel'][0]} x {info['kernel'][1]}")
    if "kernel" in info and np.asarray(weights).ndim >= 3:
        kh, kw = info["kernel"]
        if tuple(np.asarray(weights).shape[-2:]) != (kh, kw):
            raise ValueError(f"weights: kernel {np.asarray(weights).shape[-2:]} but the image "
                             f"was encoded for {kh} x {kw}")
    f = w.shape[0]
    if enc.ndim == 2:
        if f != 1:
            raise ValueError(f"weights: {f} filters, but the encoding has one copy of the "
                             f"columns; encode with im2col_encrypt(..., filters={f})")
        out = (enc * w.reshape(k, 1)).sum(axis=0).reshape(1, enc.shape[1])
    else:
        if f != enc.shape[0]:
            raise ValueError(f"weights: {f} filters, but the encoding replicates the columns "
                             f"for {enc.shape[0]}")
        out = (enc * w.reshape(f, k, 1)).sum(axis=1)
    if bias is not None:
        b = np.asarray(bias)
        if b.ndim > 1 or (b.ndim == 1 and b.shape[0] != f):
            raise ValueError(f"bias: expected a number or ({f},), got shape {b.shape}")
        out = out + (b.reshape(-1, 1) if b.ndim else b)
    info.pop("filters", None)
    out.image_info = {**info, "filters": f}
    return out


def avg_pool2d(enc: EncryptedTensor) -> EncryptedTensor:
    """Average pooling of an image encrypted by ``im2col_encrypt(ctx, image, kernel_shape=k,
    stride=k, per_channel=True)`` (CKKS): out[c, p] = mean of the kh * kw pixels of window p
    in channel c, an encrypted (C, W) tensor (``image_info["out_hw"]``). Computed as the sum
    over the window axis (the outermost physical axis: ciphertext additions and
    log2(min(pad(kh kw), S / (pad(C) pad(W)))) rotations per ciphertext, no re-pack) times
    1 / (kh kw): one scalar product, one level. A (K, W) encoding of a one-channel image is
    accepted too.

    Raises ValueError naming ``enc`` (not a pooling encoding), TypeError for BFV/BGV (no
    division: sum with ``enc.sum(axis=1)`` instead)."""
    if not isinstance(enc, EncryptedTensor):
        raise TypeError(f"enc: expected an EncryptedTensor from im2col_encrypt, got "
                        f"{type(enc).__name__}")
    if not isinstance(enc.ctx, CKKSContext):
        raise TypeError("enc: average pooling divides, which needs CKKS; with BFV/BGV take the "
                        "window sums, enc.sum(axis=1)")
    info = dict(enc.image_info or {})
    if enc.ndim == 3 and info.get("per_channel", True):
        out = enc.sum(axis=1) * (1.0 / enc.shape[1])
    elif enc.ndim == 2 and info.get("channels", 1) == 1:
        out = (enc.sum(axis=0) * (1.0 / enc.shape[0])).reshape(1, enc.shape[1])
    else:
        raise ValueError("enc: expected an encoding from im2col_encrypt(..., per_channel=True) "
                         f"(shape (C, kh*kw, W)), got shape {enc.shape}")
    out.image_info = info
    return out


def max_pool2d(enc: EncryptedTensor, epsilon: float = 2.0**-6, bits: int = 8) -> EncryptedTensor:
    """Max pooling of an image encrypted by ``im2col_encrypt(ctx, image, kernel_shape=k,
    stride=k, per_channel=True)`` (CKKS), pixel values in [-1/2, 1/2]: out[c, p] = the maximum
    of the kh * kw pixels of window p in channel c, an encrypted (C, W) tensor.

    A tournament over the window axis, the outermost physical one: each round pairs the upper
    half of the windows' rows with the lower half (whole ciphertexts when a half spans one or
    more, else one rotation of each ciphertext) and keeps their encrypted maximum,
    (a + b + (a - b) sign(a - b)) / 2 (``CKKSCiphertext.maximum``; sign by the composite
    polynomials of Cheon, Kim, Kim, Lee and Lee, Asiacrypt 2020). log2(kh * kw) rounds, each
    ``veil._functions.sign_plan(epsilon, bits).depth + 1`` levels; each maximum is within
    2^-bits where the two values differ by at least ``epsilon``, and within epsilon / 2 of either
    value where they differ by less. The result's padding slots are not zero (``clean`` False).

    Raises ValueError naming ``enc`` (not a pooling encoding, or kh * kw not a power of two:
    the zero rows padding the window axis would join the maximum), TypeError for BFV/BGV, and
    DepthError when the ciphertexts have too few levels left."""
    if not isinstance(enc, EncryptedTensor):
        raise TypeError(f"enc: expected an EncryptedTensor from im2col_encrypt, got "
                        f"{type(enc).__name__}")
    if not isinstance(enc.ctx, CKKSContext):
        raise TypeError("enc: max pooling compares by CKKS polynomials; BFV/BGV have none")
    info = dict(enc.image_info or {})
    if enc.ndim != 3 or not info.get("per_channel") or enc.perm[1] != 0:
        raise ValueError("enc: expected an encoding from im2col_encrypt(..., per_channel=True) "
                         f"(shape (C, kh*kw, W)), got shape {enc.shape}")
    if tuple(info.get("padding", (0, 0))) != (0, 0):
        raise ValueError("enc: max pooling takes an encoding without padding (padding=0): the "
                         "zeros padding the image would join the maximum of negative pixels")
    k = enc.shape[1]
    if k & (k - 1):
        raise ValueError(f"enc: max pooling needs kh * kw a power of two (2 x 2, 4 x 4, ...), "
                         f"got {k} pixels a window: the padding rows (zeros) would join the "
                         "maximum")
    from . import _functions

    plan = _functions.sign_plan(epsilon, bits)
    rounds = k.bit_length() - 1
    _functions._need(enc.ciphertexts[0], rounds * (plan.depth + 1), "veil.max_pool2d(enc)",
                     f"{rounds} rounds of maximum(epsilon=2^{np.log2(plan.epsilon):.3g}, "
                     f"bits={plan.bits}), {plan.depth + 1} levels each,")
    width = enc.slots_per_ciphertext
    stride = enc.padded_shape[1] * enc.padded_shape[2]  # slots of one window row (all channels)
    chunks = list(enc.ciphertexts)
    while k > 1:
        k //= 2
        span = k * stride
        if span >= width:  # the upper half's rows are whole ciphertexts
            n = span // width
            chunks = [chunks[i].maximum(chunks[i + n], epsilon, bits) for i in range(n)]
        else:
            chunks = [c.maximum(c.rotate(span), epsilon, bits) for c in chunks]
    out = EncryptedTensor(enc.ctx, chunks[:max(1, -(-stride // width))], (enc.shape[0], 1,
                          enc.shape[2]), enc.perm, clean=False, image_info=info)
    return out.reshape(enc.shape[0], enc.shape[2])


__all__ = ["avg_pool2d", "conv2d", "im2col", "im2col_encrypt", "max_pool2d"]
