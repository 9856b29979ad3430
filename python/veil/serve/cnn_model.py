"""A served convolutional network on scikit-learn's 8x8 digits (``cnn``).

The network and its encrypted circuit are :mod:`veil.apps.demo_cnn`'s (``veil demo --model
cnn``): one convolution (4 filters of 3 x 3), the square activation, a dense layer to the 10
classes, trained in numpy with a fixed seed (:func:`veil.apps.cnn_model.train`), so the client's
reference and the server's weights are the same (``weights_digest``). Images travel across the
slots (CryptoNets packing): pixel p of up to ``slot_count`` images in ciphertext p, 64
ciphertexts a request; the server does scalar combinations and squares only, so the session
needs a relinearization key and no Galois key. The results are 10 ciphertexts of real logits;
the client checks them against the plaintext network within a tolerance and by their classes.

Not served by default (training and the startup self-test add a few seconds to every start):
``veil serve --models logreg,xgboost,cnn``, then ``veil demo --model cnn --server URL``.
"""

from __future__ import annotations

import hashlib
import math

import numpy as np

from .._base import KeyedContext
from .models import ServedModel

#: Largest |decrypted - plaintext| logit, relative to max(1, largest |plaintext logit|).
#: CKKS at the demo's parameters (scale 2^30, precision 14) gives about 1e-5.
LOGIT_TOLERANCE = 1e-3
#: Least fraction of images whose encrypted class is the plaintext network's (the demo's bar).
MIN_AGREEMENT = 0.99


class CNNModel(ServedModel):
    """:mod:`veil.apps.demo_cnn`'s network (square activation) as a served model.

    Input: images (n, 8, 8) (or (n, 64)) with values in [0, 1] (``load_digits`` images / 16),
    n <= slot_count (4096); ciphertext p holds pixel p (row-major) of image k in slot k. Output:
    10 ciphertexts, ciphertext c holding class c's logit of image k in slot k. The parameters
    are those :func:`veil.apps.demo_cnn.make_context` chooses (N = 8192, depth 3, precision 14).

    Args:
        seed: the training seed (the client's model must use the same one).
    """

    name = "cnn"
    description = ("handwritten digits (scikit-learn 8x8): a convolutional network (4 filters of "
                   "3x3, square activation, dense to 10 classes), CKKS, images across the slots")
    scheme = "ckks"
    galois_steps = ()
    relin_keys = True

    def __init__(self, seed: int = 0) -> None:
        from ..apps import cnn_model, demo_cnn

        self._cm, self._dc = cnn_model, demo_cnn
        self.seed = int(seed)
        x_train, self.x_test, y_train, self.y_test = cnn_model.load_digits_split()
        self.network = cnn_model.train(x_train, y_train, activation="square", seed=self.seed)
        self.max_ciphertexts = cnn_model.SIDE * cnn_model.SIDE
        # The demo's own parameter choice, read from a throwaway context of it (its keys are
        # dropped here; the server's Context is rebuilt from these parameters).
        probe = demo_cnn.make_context(self.network, "cpu", seed=None)
        c = probe.context
        self.poly_modulus_degree = int(c.poly_modulus_degree)
        self.security = int(c.security)
        self._parameters = {
            "scheme": "ckks", "poly_modulus_degree": self.poly_modulus_degree,
            "coeff_modulus": [int(q) for q in c.coeff_modulus],
            "special_primes": int(c.special_primes), "alpha": int(c.alpha),
            "security": self.security}
        groups = [int(g) for g in c.rescale_groups]
        if any(g != 1 for g in groups):  # one prime per rescale is the default (and hashed so)
            self._parameters["rescale_groups"] = groups
        self._options = {"scale": float(probe.scale), "auto_rescale": bool(probe.auto_rescale)}
        if self.parameter_hash() != int(c.parameter_hash):
            raise RuntimeError(f"cnn: the served parameters hash to {self.parameter_hash():016x}, "
                               f"the demo's context to {int(c.parameter_hash):016x}")
        del probe

    # -- the spec --
    def parameters(self) -> dict:
        return dict(self._parameters)

    def options(self) -> dict:
        return dict(self._options)

    def layout(self) -> dict:
        net, cm = self.network, self._cm
        return {
            "kind": "veil.cnn/1",
            "side": cm.SIDE,
            "classes": cm.CLASSES,
            "ciphertexts_per_request": self.max_ciphertexts,
            "images_per_request": self.poly_modulus_degree // 2,
            "network": {"filters": net.filters, "kernel": list(net.kernel),
                        "stride": net.stride, "activation": net.activation,
                        "training_seed": self.seed},
            "input": "ciphertext p = 8 r + c (64 in all, at input_level) holds pixel (r, c) of "
                     "image k in slot k; pixel values in [0, 1] (load_digits images / 16)",
            "output": "10 ciphertexts: ciphertext c holds class c's logit of image k in slot k; "
                      "the predicted class is the largest logit",
            "check": {"logit_tolerance": LOGIT_TOLERANCE, "min_agreement": MIN_AGREEMENT},
        }

    def weights_digest(self) -> str:
        net = self.network
        h = hashlib.sha256()
        for part in (net.conv_w, net.conv_b, net.fc_w, net.fc_b,
                     np.array([net.stride, net.bound], dtype=np.float64)):
            h.update(np.ascontiguousarray(part, dtype=np.float64).tobytes())
        h.update(net.activation.encode())
        return h.hexdigest()

    # -- the server --
    def evaluate(self, ctx: KeyedContext, cts: list) -> list:
        """The demo's circuit (:func:`veil.apps.demo_cnn.evaluate`) on the session's context:
        64 ciphertexts in, 10 out, three levels used."""
        if len(cts) != self.max_ciphertexts:
            raise ValueError(f"ciphertexts: expected {self.max_ciphertexts} (ciphertext p holds "
                             f"pixel p of every image), got {len(cts)}")
        scale = self._options["scale"]
        for i, ct in enumerate(cts):  # the circuit combines them as ciphertexts of one scale
            if ct.scale != scale:
                raise ValueError(f"ciphertext {i}: scale 2^{math.log2(ct.scale):.6f}, expected "
                                 f"2^{math.log2(scale):g} (GET /models: options.scale)")
        return self._dc.evaluate(ctx, self.network, cts)

    # -- the client --
    def _images(self, features: np.ndarray) -> np.ndarray:
        x = np.asarray(features, dtype=np.float64)
        side = self._cm.SIDE
        if x.ndim == 2 and x.shape[1] == side * side:
            x = x.reshape(len(x), side, side)
        if x.ndim != 3 or x.shape[1:] != (side, side):
            raise ValueError(f"features: expected images of shape (n, {side}, {side}) or "
                             f"(n, {side * side}), got {np.shape(features)}")
        return x

    def encode(self, features: np.ndarray, slot_count: int) -> list[np.ndarray]:
        """Images -> 64 slot vectors, vector p holding pixel p of image k in slot k (the
        packing of :func:`veil.apps.demo_cnn.encrypt_images`)."""
        x = self._images(features)
        flat = x.reshape(len(x), -1)
        if not 1 <= len(flat) <= slot_count:
            raise ValueError(f"features: expected 1..{slot_count} images a request, got "
                             f"{len(flat)}")
        return [np.ascontiguousarray(flat[:, p]) for p in range(flat.shape[1])]

    def decode(self, slot_vectors: list[np.ndarray], n_samples: int) -> np.ndarray:
        """The 10 decrypted result vectors -> logits (float64, shape (n, 10))."""
        if len(slot_vectors) != self._cm.CLASSES:
            raise ValueError(f"results: expected {self._cm.CLASSES} ciphertexts (one per class), "
                             f"got {len(slot_vectors)}")
        return np.stack([np.real(np.asarray(v))[:n_samples] for v in slot_vectors], axis=1)

    def reference(self, features: np.ndarray) -> np.ndarray:
        """The plaintext network's logits (float64, shape (n, 10))."""
        return self.network.logits(self._images(features))

    def decisions(self, outputs: np.ndarray) -> np.ndarray:
        """Predicted classes: the largest logit."""
        return np.argmax(np.asarray(outputs), axis=1).astype(np.int64)

    def decode_check(self, got: np.ndarray, want: np.ndarray) -> bool:
        """Logits within LOGIT_TOLERANCE (relative to the largest plaintext logit, at least 1)
        and classes agreeing on at least MIN_AGREEMENT of the images (CKKS is approximate)."""
        got, want = np.asarray(got, dtype=np.float64), np.asarray(want, dtype=np.float64)
        if got.shape != want.shape or got.size == 0 or not np.all(np.isfinite(got)):
            return False
        tol = LOGIT_TOLERANCE * max(1.0, float(np.abs(want).max()))
        agree = float(np.mean(self.decisions(got) == self.decisions(want)))
        return bool(np.abs(got - want).max() <= tol and agree >= MIN_AGREEMENT)

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        """The test split's images (359) and labels."""
        return self.x_test, self.y_test
