"""A small convolutional network for scikit-learn's 8x8 digits, trained in numpy.

The network is the one TenSEAL's encrypted-CNN tutorial evaluates on MNIST (Benaissa et al.,
"TenSEAL: A Library for Encrypted Tensor Operations Using Homomorphic Encryption", 2021, and
its "Tutorial 4": one convolution, a square activation, one fully connected layer), shrunk to
8x8 images:

* ``conv``: F filters of kh x kw (default 4 of 3 x 3), stride s (default 1), no padding, with a
  bias: output (F, oh, ow), oh = (8 - kh) // s + 1;
* activation: ``square`` (x^2: one ciphertext multiplication, the CryptoNets activation of
  Gilad-Bachrach et al., ICML 2016) or ``relu`` (evaluated under encryption through the sign
  function's composite polynomial, :meth:`veil.CKKSCiphertext.relu`, on x / bound);
* ``fc``: a dense layer from the F * oh * ow activations, flattened in (f, i, j) order, to the
  10 classes.

Training is full-precision numpy: mini-batch Adam (Kingma and Ba, ICLR 2015) on the softmax
cross-entropy, with the gradients written out by hand (the network has three parameter
tensors, so a deep-learning framework would be a large dependency for a few lines). The
plaintext model's predicted classes are the reference the encrypted evaluation must agree with.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

#: The side of scikit-learn's digit images.
SIDE = 8
CLASSES = 10


def load_digits_split(seed: int = 0, test_fraction: float = 0.2
                      ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """scikit-learn's ``load_digits`` (1797 images of 8 x 8 pixels, values 0..16, shipped with
    the package), scaled to [0, 1] and split by a seeded permutation (stratification is not
    needed at this size). Returns (x_train, x_test, y_train, y_test); images have shape
    (n, 8, 8), labels (n,) in 0..9."""
    from sklearn.datasets import load_digits

    data = load_digits()
    x = data.images.astype(np.float64) / 16.0
    y = data.target.astype(np.int64)
    order = np.random.default_rng(seed).permutation(len(y))
    n_test = round(test_fraction * len(y))
    test, train = order[:n_test], order[n_test:]
    return x[train], x[test], y[train], y[test]


def windows(images: npt.ArrayLike, kh: int, kw: int, stride: int) -> np.ndarray:
    """im2col: (n, H, W) images -> (n, oh * ow, kh * kw) windows, window (i, j) at row
    i * ow + j, pixel (a, b) of the window at column a * kw + b."""
    x = np.asarray(images, dtype=np.float64)
    n, h, w = x.shape
    oh, ow = (h - kh) // stride + 1, (w - kw) // stride + 1
    out = np.empty((n, oh * ow, kh * kw))
    for i in range(oh):
        for j in range(ow):
            patch = x[:, i * stride:i * stride + kh, j * stride:j * stride + kw]
            out[:, i * ow + j, :] = patch.reshape(n, kh * kw)
    return out


@dataclass(frozen=True)
class CNN:
    """A trained network (module docstring). Shapes: ``conv_w`` (F, kh, kw), ``conv_b`` (F,),
    ``fc_w`` (F * oh * ow, 10) with rows in (f, i, j) order, ``fc_b`` (10,). ``bound``: the
    largest |conv output| that any image with pixels in [0, 1] can give (from the weights), by
    which the encrypted ReLU divides before the sign polynomial, whose domain is [-1, 1]."""

    conv_w: np.ndarray
    conv_b: np.ndarray
    fc_w: np.ndarray
    fc_b: np.ndarray
    stride: int
    activation: str
    bound: float = 1.0

    @property
    def filters(self) -> int:
        return int(self.conv_w.shape[0])

    @property
    def kernel(self) -> tuple[int, int]:
        return int(self.conv_w.shape[1]), int(self.conv_w.shape[2])

    @property
    def out_side(self) -> int:
        return (SIDE - self.kernel[0]) // self.stride + 1

    def conv(self, images: npt.ArrayLike) -> np.ndarray:
        """Convolution outputs, (n, F, oh * ow)."""
        kh, kw = self.kernel
        cols = windows(images, kh, kw, self.stride)  # (n, W, K)
        return (np.einsum("nwk,fk->nfw", cols, self.conv_w.reshape(self.filters, -1))
                + self.conv_b[None, :, None])

    def act(self, z: np.ndarray) -> np.ndarray:
        return z * z if self.activation == "square" else np.maximum(z, 0.0)

    def logits(self, images: npt.ArrayLike) -> np.ndarray:
        """(n, 10) class scores of the plaintext network."""
        a = self.act(self.conv(images))
        return a.reshape(len(a), -1) @ self.fc_w + self.fc_b

    def predict(self, images: npt.ArrayLike) -> np.ndarray:
        return np.argmax(self.logits(images), axis=1)


def train(x: np.ndarray, y: np.ndarray, *, activation: str = "square", filters: int = 4,
          kernel: int = 3, stride: int = 1, epochs: int = 60, batch: int = 64,
          lr: float = 0.01, seed: int = 0) -> CNN:
    """Trains the network on images x (n, 8, 8) in [0, 1] and labels y (n,) with mini-batch
    Adam on the softmax cross-entropy (module docstring). Deterministic for a given seed.

    Raises ValueError naming ``activation`` (not "square" or "relu"), ``kernel`` / ``stride``
    (no output position) or ``x`` / ``y`` (shapes)."""
    if activation not in ("square", "relu"):
        raise ValueError(f"activation: expected 'square' or 'relu', got {activation!r}")
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y)
    if x.ndim != 3 or x.shape[1:] != (SIDE, SIDE) or y.shape != (len(x),):
        raise ValueError(f"x, y: expected shapes (n, 8, 8) and (n,), got {x.shape} and {y.shape}")
    if not 1 <= kernel <= SIDE or stride < 1:
        raise ValueError(f"kernel, stride: expected 1 <= kernel <= 8 and stride >= 1, got "
                         f"{kernel} and {stride}")
    rng = np.random.default_rng(seed)
    side = (SIDE - kernel) // stride + 1
    k, w_out = kernel * kernel, side * side
    cols = windows(x, kernel, kernel, stride)  # (n, W, K)
    params = {
        "cw": rng.normal(0, 1 / np.sqrt(k), (filters, k)),
        "cb": np.zeros(filters),
        "fw": rng.normal(0, 1 / np.sqrt(filters * w_out), (filters * w_out, CLASSES)),
        "fb": np.zeros(CLASSES),
    }
    m = {n_: np.zeros_like(v) for n_, v in params.items()}
    v2 = {n_: np.zeros_like(v) for n_, v in params.items()}
    b1, b2, eps = 0.9, 0.999, 1e-8
    onehot = np.eye(CLASSES)[y]
    step = 0
    for _ in range(epochs):
        order = rng.permutation(len(x))
        for s in range(0, len(x), batch):
            idx = order[s:s + batch]
            c, t = cols[idx], onehot[idx]
            z = np.einsum("nwk,fk->nfw", c, params["cw"]) + params["cb"][None, :, None]
            a = z * z if activation == "square" else np.maximum(z, 0.0)
            flat = a.reshape(len(idx), -1)
            logits = flat @ params["fw"] + params["fb"]
            logits -= logits.max(axis=1, keepdims=True)
            p = np.exp(logits)
            p /= p.sum(axis=1, keepdims=True)
            g_logits = (p - t) / len(idx)
            grads = {"fw": flat.T @ g_logits, "fb": g_logits.sum(axis=0)}
            g_a = (g_logits @ params["fw"].T).reshape(a.shape)
            g_z = g_a * (2 * z if activation == "square" else (z > 0).astype(np.float64))
            grads["cw"] = np.einsum("nfw,nwk->fk", g_z, c)
            grads["cb"] = g_z.sum(axis=(0, 2))
            step += 1
            for name, g in grads.items():
                m[name] = b1 * m[name] + (1 - b1) * g
                v2[name] = b2 * v2[name] + (1 - b2) * g * g
                mh, vh = m[name] / (1 - b1 ** step), v2[name] / (1 - b2 ** step)
                params[name] -= lr * mh / (np.sqrt(vh) + eps)
    # The largest |convolution output| any image with pixels in [0, 1] can give: per filter,
    # b + the positive weights (all pixels 1 where w > 0) or b + the negative ones.
    w, b = params["cw"], params["cb"]
    bound = float(np.max(np.maximum(np.abs(b + np.maximum(w, 0).sum(axis=1)),
                                    np.abs(b + np.minimum(w, 0).sum(axis=1)))))
    return CNN(params["cw"].reshape(filters, kernel, kernel), params["cb"], params["fw"],
               params["fb"], stride, activation, bound)
