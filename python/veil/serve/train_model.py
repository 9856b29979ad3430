"""A served model that bootstraps: encrypted logistic-regression *training* (``logreg-train``).

The server runs :mod:`veil.apps.demo_train`'s gradient descent (HELR: Kim, Song, Kim, Lee, Cheon,
BMC Medical Genomics 2018) on the client's encrypted training set, refreshing the encrypted weights
by CKKS bootstrapping when their levels run out, and returns the encrypted weights. It needs the
client's bootstrapping keys: the upload (``ctx.to_bytes()`` of a ``veil.ckks(...,
bootstrapping=...)`` context, made by :func:`veil.serve.context_from_spec`) carries them, and the
server builds the bootstrapper from its *own* bootstrapping parameters and those keys (the
client's ``bootstrap_config`` must describe the same parameters). No secret key leaves the
client.

Not served by default (its key set is 12 GiB at N = 2^16 with 64-bit words): start the server with
``veil serve --models logreg,logreg-train`` and run the client with
``veil demo --server URL --scheme ckks --train``.
"""

from __future__ import annotations

import hashlib

import numpy as np

from .. import _core
from .._base import KeyedContext
from .models import ServedModel


class LogisticTrainingModel(ServedModel):
    """Encrypted gradient descent of :mod:`veil.apps.demo_train` as a served model.

    Input (two ciphertexts at :meth:`input_level`): the training set z (sample i's 31 values, the
    label folded in, in slot block i: ``demo_train.pack_samples``) and the initial weights
    (``demo_train.weight_slots``, zeros). Output: one ciphertext whose every 32-slot block holds
    the trained weights. The oracle is the same gradient descent in float64 with the same cubic
    sigmoid (``demo_train.train_float``).

    Args:
        log_n: log2 of N (16: the 64-bit preset chain with 13 levels between bootstraps).
        security: 128, or None with ``user_levels`` for small test chains.
        user_levels: levels between bootstraps of a small chain (tests); None: the preset.
        iterations: gradient steps.
        max_samples: training samples used (None: all 455, which need N >= 2^16).
    """

    name = "logreg-train"
    description = ("encrypted logistic-regression training (Breast Cancer Wisconsin, HELR "
                   "gradient descent), CKKS with bootstrapping on the server")
    scheme = "ckks"
    max_ciphertexts = 2

    def __init__(self, log_n: int = 16, security: int | None = 128,
                 user_levels: int | None = None, iterations: int | None = None,
                 max_samples: int | None = None) -> None:
        from .. import _bootstrap
        from ..apps import demo_train as dt

        self._dt = dt
        self.bootstrapping = _bootstrap.BootstrapConfig(slots=dt.BLOCK)
        self.poly_modulus_degree = 2 ** log_n
        self.security = security
        self.chain = (_bootstrap.preset_chain(self.poly_modulus_degree, security,
                                              self.bootstrapping)
                      if user_levels is None else
                      _bootstrap.bootstrap_chain(log_n, user_levels, self.bootstrapping))
        self.galois_steps = dt.training_steps(self.poly_modulus_degree // 2)
        self.iterations = dt.ITERATIONS if iterations is None else int(iterations)
        self.lr = dt.LEARNING_RATE
        self.z, self.x_test, self.y_test = dt.prepare(max_samples)
        self.cubic = dt.sigmoid_cubic()

    # -- the spec --
    def parameters(self) -> dict:
        c = self.chain
        primes = _core.CoeffModulus.create(self.poly_modulus_degree, list(c.coeff_modulus))
        return {"scheme": "ckks", "poly_modulus_degree": int(self.poly_modulus_degree),
                "coeff_modulus": [int(q) for q in primes], "special_primes": int(c.special_primes),
                "alpha": int(c.alpha), "rescale_groups": [int(g) for g in c.rescale_groups],
                "security": self.security}

    def options(self) -> dict:
        return {"scale": float(self.chain.scale), "auto_rescale": True}

    def layout(self) -> dict:
        dt = self._dt
        return {
            "kind": "veil.logreg-train/1",
            "block": dt.BLOCK,
            "samples": len(self.z),
            "width": int(self.z.shape[1]),
            "iterations": self.iterations,
            "learning_rate": self.lr,
            "sigmoid_cubic": [float(c) for c in self.cubic],
            "input": "ciphertext 0: sample i's values in slot block i (demo_train.pack_samples); "
                     "ciphertext 1: the initial weights in every block (demo_train.weight_slots)"
                     "; both at input_level",
            "output": "one ciphertext: the trained weights in slots [0, width) of every block",
        }

    def weights_digest(self) -> str:
        """A hash of what fixes the result: the training set, iterations, step and cubic."""
        h = hashlib.sha256()
        h.update(np.ascontiguousarray(self.z, dtype=np.float64).tobytes())
        h.update(np.array([self.iterations, self.lr, *self.cubic], dtype=np.float64).tobytes())
        return h.hexdigest()

    # -- the server --
    def evaluate(self, ctx: KeyedContext, cts: list) -> list:
        if len(cts) != 2:
            raise ValueError(f"ciphertexts: expected 2 (the training set and the initial "
                             f"weights), got {len(cts)}")
        dt = self._dt
        z, w0 = cts
        tr = dt.EncryptedTrainer.on_server(ctx, z.raw, len(self.z), int(self.z.shape[1]),
                                           self.lr, self.cubic)
        w = dt.train_encrypted(tr, tr.ops.wrap(w0.raw), self.iterations)
        return [z._wrap(w.ct)]

    # -- the client --
    def encode(self, features: np.ndarray, slot_count: int) -> list[np.ndarray]:
        z = np.asarray(features, dtype=np.float64)
        if z.shape != self.z.shape:
            raise ValueError(f"features: expected the training set, shape {self.z.shape}, got "
                             f"{z.shape}")
        dt = self._dt
        return [dt.pack_samples(z, slot_count), dt.weight_slots(np.zeros(z.shape[1]), slot_count)]

    def decode(self, slot_vectors: list[np.ndarray], n_samples: int) -> np.ndarray:
        """The trained weights (float64, shape (width,))."""
        return np.real(np.asarray(slot_vectors[0]))[:self.z.shape[1]]

    def reference(self, features: np.ndarray) -> np.ndarray:
        """The same gradient descent in float64 with the same cubic: the weights."""
        return self._dt.train_float(np.asarray(features, dtype=np.float64), self.iterations,
                                    self.lr, self.cubic)

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        """(the training set z, the test labels): what the client sends and how it checks."""
        return self.z, self.y_test

    def self_test_inputs(self) -> np.ndarray:
        """The whole training set (the model trains on exactly it)."""
        return self.z

    def decode_check(self, got: np.ndarray, want: np.ndarray) -> bool:
        """Trained weights agree with float64 to 1e-2 (CKKS is approximate)."""
        return bool(np.abs(np.asarray(got) - np.asarray(want)).max() < 1e-2)

    def accuracy(self, w: np.ndarray) -> float:
        """Test accuracy of weights ``w`` (demo_train.accuracy)."""
        return float(self._dt.accuracy(w, self.x_test, self.y_test))
