"""``veil demo --model cnn``: an encrypted convolutional network on scikit-learn's 8x8 digits.

The network (:mod:`veil.apps.cnn_model`): one convolution (4 filters of 3 x 3, stride 1), an
activation (``square``, or ``relu`` through the sign function's composite polynomial), one dense
layer to the 10 classes. It is trained here in numpy on the training split; the encrypted run
must give the plaintext network's predicted classes (agreement, target >= 99 %).

**Packing: images across the slots** (CryptoNets, Gilad-Bachrach et al., ICML 2016, Sec. 4).
The client encrypts pixel p of up to ``slot_count`` images in one ciphertext: 64 ciphertexts
for a batch. Every layer is then a set of slot-wise operations with no rotation:

* convolution: output (f, i, j) = b_f + sum_(a, c) w_(f, a, c) x_(i s + a, j s + c), one
  scalar combination of 9 ciphertexts (``Evaluator.scalar_combination``: one pass, then one
  rescale) per output: F * oh * ow = 144 ciphertexts, one level;
* ``square``: 144 ciphertext products (relinearize, rescale), one level; ``relu``: the
  convolution divided by a bound learnt in training, its 144 outputs packed G to a ciphertext
  (blocks of 2^ceil(log2 n) slots, a tree of rotations), the ReLU of
  :meth:`veil.CKKSCiphertext.relu` on the few packed ciphertexts (sign's composite
  polynomials: ``relu_depth()`` levels), the bound folded into the dense weights;
  The bound is the largest |convolution output| any image with pixels in [0, 1] can give
  (per filter, the bias plus its positive or its negative weights), so z / bound stays in the
  sign polynomial's domain [-1, 1] for every input the client can encrypt.
* dense: one scalar combination of the 144 activations per class, one level (``relu``: one
  masked product per packed ciphertext and a rotate-and-add over the blocks).

A batch of n images costs the same as one image, so the time per image is the batch's time
over n. TenSEAL (CPU only) has no such batching in its CNN tutorial: it encrypts one image per
ciphertext with its im2col encoding (``ts.im2col_encoding``), runs ``conv2d_im2col`` per filter,
``pack_vectors``, ``square_`` and ``mm`` (Benaissa et al., "TenSEAL: A Library for Encrypted
Tensor Operations Using Homomorphic Encryption", 2021, Tutorial 4), so ``--peer tenseal`` times
it per image on the same network, beside Veil's per-image im2col path (``veil.im2col_encrypt``
and ``veil.conv2d`` on an encrypted tensor) when that is available.

Parties: the client holds the secret key and the images; the server holds the network in
plaintext and only evaluation keys. Decrypted logits show the client the server's scores (no
circuit privacy), as in the other demos.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _tensor
from . import cnn_model
from .cnn_model import CNN


def _timer(device: str) -> Callable[[], float]:
    """A clock in seconds that synchronizes ``device`` first (GPU work is asynchronous)."""
    from .. import _core

    def now() -> float:
        if device.startswith("cuda"):
            _core.synchronize(device)
        return time.perf_counter()

    return now


#: The encrypted ReLU's precision: sign(z / bound) within 2^-RELU_BITS where |z / bound| >=
#: RELU_EPSILON (the ReLU's error is at most RELU_EPSILON / 2 x bound inside that interval).
RELU_EPSILON = 2.0**-6
RELU_BITS = 10


def relu_depth(epsilon: float = RELU_EPSILON, bits: int = RELU_BITS) -> int:
    """Levels the encrypted ReLU consumes: its sign's composite polynomials + 1
    (:func:`veil._functions.sign_plan`)."""
    from .. import _functions

    return int(_functions.sign_plan(epsilon, bits).depth) + 1


def make_context(model: CNN, device: str, seed: int | None,
                 poly_modulus_degree: int | None = None, security: int | None = 128):
    """The CKKS context the network needs: depth 3 for ``square`` (convolution, square, dense)
    at N = 8192 (4096 slots); 2 + :func:`relu_depth` for ``relu`` (N chosen by
    ``veil.ckks(depth=...)``, or ``poly_modulus_degree`` with ``security=None`` for small
    tests)."""
    import veil

    if model.activation == "square":
        return veil.ckks(depth=3, precision=14, poly_modulus_degree=8192, device=device,
                         seed=seed, galois_steps=None)
    depth = 2 + relu_depth()
    return veil.ckks(depth=depth, precision=20, poly_modulus_degree=poly_modulus_degree,
                     device=device, seed=seed, galois_steps=None, security=security)


def encrypt_images(ctx, images: np.ndarray) -> list:
    """Client: images (n, 8, 8), n <= slot_count -> 64 ciphertexts, pixel p of image k in slot
    k of ciphertext p (module docstring)."""
    flat = np.asarray(images, dtype=np.float64).reshape(len(images), -1)
    if len(flat) > ctx.slot_count:
        raise ValueError(f"images: at most {ctx.slot_count} images a batch, got {len(flat)}")
    return [ctx.encrypt(flat[:, p]) for p in range(flat.shape[1])]


def _combine(ctx, cts: Sequence, values: Sequence[float], constant: float):
    """constant + sum_i values[i] cts[i], one scalar combination and one rescale (the result
    keeps the inputs' scale, one level lower)."""
    x = cts[0]
    level = x.level
    raw = ctx.evaluator.scalar_combination([c.raw for c in cts], [float(v) for v in values],
                                           float(constant),
                                           x.scale * ctx._plain_scale_for(level), level)
    return x._wrap(ctx._rescale_product(raw))


def _conv_outputs(ctx, model: CNN, pixels: Sequence, scale: float, bias: bool) -> list:
    """The F * oh * ow convolution outputs (f, i, j order), each one scalar combination of its
    window's pixel ciphertexts times ``scale`` (plus the bias when ``bias``)."""
    kh, kw = model.kernel
    side, s = model.out_side, model.stride
    out = []
    for f in range(model.filters):
        for i in range(side):
            for j in range(side):
                cts = [pixels[(i * s + a) * cnn_model.SIDE + j * s + c]
                       for a in range(kh) for c in range(kw)]
                out.append(_combine(ctx, cts, scale * model.conv_w[f].reshape(-1),
                                    scale * model.conv_b[f] if bias else 0.0))
    return out


def relu_steps(ctx, n: int) -> list[int]:
    """The rotation steps the packed ReLU network uses for a batch of n images: -B 2^k for the
    blocks of B = 2^ceil(log2 n) slots (the Galois keys a client must create)."""
    block = _tensor.next_pow2(n)
    groups = max(1, ctx.slot_count // block)
    return [-block * (1 << k) for k in range(groups.bit_length() - 1)]


def _evaluate_relu(ctx, model: CNN, pixels: Sequence) -> list:
    """The ReLU network with its activations packed G to a ciphertext before the ReLU.

    The convolution gives F * oh * ow ciphertexts holding n images each: n of N/2 slots. The
    ReLU (a degree-7 composite polynomial, many products) is worth running on full
    ciphertexts, so the outputs are packed into blocks of B = 2^ceil(log2 n) slots, G = N / (2B)
    to a ciphertext, by a binary tree of rotations by -B, -2B, ... (G - 1 rotations per
    ciphertext, log2 G Galois keys), and the biases added per block. The dense layer then
    multiplies each packed ciphertext by the block-wise weights (zero outside the n images) and
    sums the G blocks by rotate-and-add with the same steps (Halevi-Shoup's total sums)."""
    n = len(pixels[0])
    block = _tensor.next_pow2(n)
    groups = max(1, ctx.slot_count // block)
    steps = relu_steps(ctx, n)
    ctx.ensure_galois_keys(steps)
    z = _conv_outputs(ctx, model, pixels, 1.0 / model.bound, bias=False)
    biases = np.repeat(model.conv_b / model.bound, model.out_side**2)
    packed, members = [], []
    for g0 in range(0, len(z), groups):
        level = z[g0:g0 + groups]
        width = 1
        while len(level) > 1:  # pair (2k, 2k+1): the second moves up by width * B slots
            level = [level[k] if k + 1 >= len(level)
                     else level[k] + level[k + 1].rotate(-width * block)
                     for k in range(0, len(level), 2)]
            width *= 2
        ct = level[0].with_length(ctx.slot_count)
        bias = np.zeros(ctx.slot_count)
        for t, j in enumerate(range(g0, min(g0 + groups, len(z)))):
            bias[t * block:(t + 1) * block] = biases[j]
        packed.append(ct + bias)
        members.append(list(range(g0, min(g0 + groups, len(z)))))
    acts = [ct.relu(RELU_EPSILON, RELU_BITS) for ct in packed]
    w_fc = model.fc_w * model.bound
    level, ev = acts[0].level, ctx.evaluator
    pscale = ctx._plain_scale_for(level)
    out = []
    for c in range(cnn_model.CLASSES):
        pts = []
        for mem in members:
            w = np.zeros(ctx.slot_count)
            for t, j in enumerate(mem):
                w[t * block:t * block + n] = w_fc[j, c]
            pts.append(ctx.encode(w, scale=pscale, level=level))
        y = acts[0]._wrap(ctx._rescale_product(ev.multiply_plain_sum([a.raw for a in acts],
                                                                     pts)))
        for st in steps:  # total over the G blocks (G B = N/2: every block gets it)
            y = y + y.rotate(st)
        out.append((y + float(model.fc_b[c]))._resized(n))
    return out


def evaluate(ctx, model: CNN, pixels: Sequence) -> list:
    """Server: the network on the encrypted batch ``pixels`` (64 ciphertexts from
    :func:`encrypt_images`) -> 10 ciphertexts, class c's logits of image k in slot k.
    ``square``: slot-wise throughout (module docstring); ``relu``: :func:`_evaluate_relu`."""
    if model.activation == "relu":
        return _evaluate_relu(ctx, model, pixels)
    acts = [z.square() for z in _conv_outputs(ctx, model, pixels, 1.0, bias=True)]
    return [_combine(ctx, acts, model.fc_w[:, c], model.fc_b[c])
            for c in range(cnn_model.CLASSES)]


def decrypt_logits(ctx, logits: Sequence, n: int) -> np.ndarray:
    """Client: the 10 result ciphertexts -> (n, 10) logits."""
    return np.stack([np.real(ctx.decrypt(c))[:n] for c in logits], axis=1)


def run_veil(model: CNN, images: np.ndarray, device: str, seed: int | None,
             **context: Any) -> dict[str, Any]:
    """Encrypts the batch, evaluates, decrypts; times each part on ``device`` (``context``:
    :func:`make_context`'s keyword arguments)."""
    clock = _timer(device)
    ctx = make_context(model, device, seed, **context)
    t0 = clock()
    pixels = encrypt_images(ctx, images)
    t1 = clock()
    out = evaluate(ctx, model, pixels)
    t2 = clock()
    logits = decrypt_logits(ctx, out, len(images))
    t3 = clock()
    return {"device": device, "n": int(ctx.poly_modulus_degree), "images": len(images),
            "logits": logits, "encrypt_s": t1 - t0, "evaluate_s": t2 - t1,
            "decrypt_s": t3 - t2, "per_image_ms": 1e3 * (t2 - t1) / len(images)}


def run_tenseal(model: CNN, images: np.ndarray) -> dict[str, Any] | None:
    """The same square-activation network on TenSEAL (CPU), one image per ciphertext with its
    im2col encoding, as TenSEAL's encrypted-CNN tutorial; None when tenseal is not installed.
    Its parameters are the tutorial's (N = 8192, primes of 31 + 6 x 26 + 31 bits, scale
    2^26)."""
    try:
        import tenseal as ts
    except ImportError:
        return None
    if model.activation != "square":
        return None
    ctx = ts.context(ts.SCHEME_TYPE.CKKS, 8192, coeff_mod_bit_sizes=[31, 26, 26, 26, 26, 26, 26, 31])
    ctx.global_scale = 2**26
    ctx.generate_galois_keys()
    kh, kw = model.kernel
    fc_w = model.fc_w.tolist()
    fc_b = model.fc_b.tolist()
    kernels = [model.conv_w[f].tolist() for f in range(model.filters)]
    biases = model.conv_b.tolist()
    logits, evaluate_s = [], 0.0
    for img in images:
        enc, windows_nb = ts.im2col_encoding(ctx, np.asarray(img).tolist(), kh, kw, model.stride)
        t0 = time.perf_counter()
        chans = [enc.conv2d_im2col(k, windows_nb) + b for k, b in zip(kernels, biases)]
        x = ts.CKKSVector.pack_vectors(chans)
        x.square_()
        x = x.mm(fc_w) + fc_b
        evaluate_s += time.perf_counter() - t0
        logits.append(x.decrypt())
    return {"images": len(images), "logits": np.asarray(logits), "evaluate_s": evaluate_s,
            "per_image_ms": 1e3 * evaluate_s / len(images), "version": ts.__version__}


def run(device: str | None = "auto", seed: int | None = None, activation: str = "square",
        peer: str = "none", limit: int | None = None, peer_images: int = 20,
        quiet: bool = False) -> dict[str, Any]:
    """Trains the network, evaluates it encrypted on the test split (``limit``: its first images
    only) on ``device`` (and on the CPU too when ``device`` is a GPU, for the ratio), optionally
    TenSEAL on ``peer_images`` images, and prints a table. Returns the numbers, ``agreement``
    (encrypted vs plaintext classes) and ``passed`` (agreement >= 0.99).

    Raises ValueError naming ``activation``, ``peer`` or ``limit``; ImportError without
    scikit-learn (or tenseal for ``peer="tenseal"``)."""
    from .._device import resolve_device

    if peer not in ("none", "tenseal"):
        raise ValueError(f"peer: expected 'none' or 'tenseal', got {peer!r}")
    if limit is not None and limit < 1:
        raise ValueError(f"limit: expected a positive number of test images, got {limit}")
    dev = resolve_device(device)
    x_train, x_test, y_train, y_test = cnn_model.load_digits_split()
    model = cnn_model.train(x_train, y_train, activation=activation)
    if limit is not None:
        x_test, y_test = x_test[:limit], y_test[:limit]
    plain = model.predict(x_test)
    rows = []
    devices = [dev] if dev == "cpu" else [dev, "cpu"]
    for d in devices:
        r = run_veil(model, x_test, d, seed)
        r["agreement"] = float(np.mean(np.argmax(r["logits"], axis=1) == plain))
        r["accuracy"] = float(np.mean(np.argmax(r["logits"], axis=1) == y_test))
        rows.append(r)
    result: dict[str, Any] = {
        "activation": activation, "images": len(x_test),
        "plain_accuracy": float(np.mean(plain == y_test)),
        "veil": [{k: v for k, v in r.items() if k != "logits"} for r in rows],
        "agreement": min(r["agreement"] for r in rows),
    }
    if peer == "tenseal":
        t = run_tenseal(model, x_test[:peer_images])
        if t is None:
            raise ImportError("--peer tenseal needs tenseal (pip install tenseal) and the "
                              "square activation")
        t["agreement"] = float(np.mean(np.argmax(t["logits"], axis=1) == plain[:peer_images]))
        result["tenseal"] = {k: v for k, v in t.items() if k != "logits"}
    result["passed"] = result["agreement"] >= 0.99
    if not quiet:
        _print(result)
    return result


def _print(r: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    t = Table(title=f"Encrypted CNN on 8x8 digits ({r['activation']} activation, "
              f"{r['images']} test images); plaintext accuracy {100 * r['plain_accuracy']:.1f} %")
    for col in ("backend", "N", "agreement", "accuracy", "encrypt (s)", "evaluate (s)",
                "per image (ms)"):
        t.add_column(col)
    for v in r["veil"]:
        t.add_row(f"veil {v['device']}", str(v["n"]), f"{100 * v['agreement']:.2f} %",
                  f"{100 * v['accuracy']:.2f} %", f"{v['encrypt_s']:.3f}",
                  f"{v['evaluate_s']:.3f}", f"{v['per_image_ms']:.4f}")
    if "tenseal" in r:
        ts_ = r["tenseal"]
        t.add_row(f"TenSEAL {ts_['version']} (CPU, {ts_['images']} images)", "8192",
                  f"{100 * ts_['agreement']:.2f} %", "", "", f"{ts_['evaluate_s']:.3f}",
                  f"{ts_['per_image_ms']:.3f}")
    Console().print(t)
    if "tenseal" in r:
        for v in r["veil"]:
            print(f"TenSEAL / veil {v['device']} per image: "
                  f"{r['tenseal']['per_image_ms'] / v['per_image_ms']:.0f}x")
    print(f"agreement with the plaintext network: {100 * r['agreement']:.2f} % "
          f"({'passed' if r['passed'] else 'FAILED'}: >= 99 %)")
