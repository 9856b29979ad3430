"""Encrypted logistic-regression *training* with CKKS bootstrapping (``veil demo --scheme ckks
--train``).

The client encrypts the Breast Cancer Wisconsin training set; the server runs gradient descent
on it without ever seeing a feature, a label or a weight, and returns the encrypted model. Each
iteration costs five levels, so the weights must be refreshed by bootstrapping every few
iterations: the computation is deeper than any modulus chain could hold.

Method (HELR: Kim, Song, Kim, Lee, Cheon, "Logistic regression model training based on the
approximate homomorphic encryption", BMC Medical Genomics 2018, with plain gradient descent):

* Data: the 30 standardized features clipped to +-4 and divided by 4, a constant 1 for the bias,
  and the label y in {-1, +1} folded in: z_i = y_i (1, x_i). Sample i fills slot block i (32
  slots: 31 values and a zero); N = 2^16 holds 1024 blocks.
* Model: w in one 32-slot block, repeated in every block of a ciphertext.
* Iteration: u_i = z_i . w (slot products, then rotations by 1..16 sum each block into its first
  slot, a mask keeps it and rotations by -1..-16 spread it over the block); g_i = a0 + a1 u_i +
  a3 u_i^3, the least-squares cubic of sigmoid(-u) on [-8, 8] with the step size lr / n folded
  in; w += sum_i g_i z_i (slot products, then rotations by 32, 64, ..., N/4 sum the blocks).
  Levels: z.w, the mask, u^2, u^3 and g z: five.
* Refresh: when fewer than five levels are left, w is bootstrapped with 32 sparse slots (the
  model's period), which costs far less than full-slot bootstrapping.

The same algorithm runs in float64 with the same cubic (the reference for the encrypted weights)
and with the exact sigmoid; the report gives the test accuracy of all three.
"""

from __future__ import annotations

import math
import time
from typing import Any

import numpy as np

from .._bootstrap import BootstrapConfig, bootstrap_chain
from .._ckks import CKKSContext, precision
from .._device import resolve_device
from .demo import _backend_name, _sync, load_data

BLOCK = 32
FEATURE_CLIP = 4.0
SIGMOID_RADIUS = 8.0
LEARNING_RATE = 1.0
ITERATIONS = 12
LEVELS_PER_ITERATION = 5


def prepare(max_samples: int | None = None):
    """(Z_train (n, 31), X_test (m, 31), y_test (m,)): bias column first, features clipped to
    +-4 and divided by 4; Z rows multiplied by the label in {-1, +1}."""
    d = load_data()
    aug = lambda x: np.hstack([np.ones((len(x), 1)), np.clip(x, -FEATURE_CLIP, FEATURE_CLIP)
                               / FEATURE_CLIP])
    x_tr, x_te = aug(d.x_train), aug(d.x_test)
    y = 2 * d.y_train - 1
    if max_samples is not None:
        x_tr, y = x_tr[:max_samples], y[:max_samples]
    return y[:, None] * x_tr, x_te, d.y_test


def sigmoid_cubic(radius: float = SIGMOID_RADIUS) -> np.ndarray:
    """Least-squares a0 + a1 u + a3 u^3 ~ sigmoid(-u) on [-radius, radius] (HELR's degree 3)."""
    u = np.linspace(-radius, radius, 4001)
    a = np.vstack([np.ones_like(u), u, u ** 3]).T
    return np.linalg.lstsq(a, 1 / (1 + np.exp(u)), rcond=None)[0]


def train_float(z: np.ndarray, iterations: int, lr: float, cubic: np.ndarray | None):
    """Gradient descent in float64 with the cubic (or the exact sigmoid when None)."""
    w = np.zeros(z.shape[1])
    n = len(z)
    for _ in range(iterations):
        u = z @ w
        g = 1 / (1 + np.exp(u)) if cubic is None else cubic[0] + cubic[1] * u + cubic[2] * u ** 3
        w = w + lr / n * (g[:, None] * z).sum(0)
    return w


def accuracy(w: np.ndarray, x: np.ndarray, y: np.ndarray) -> float:
    return float(((x @ w > 0) == (y == 1)).mean())


def training_steps(slot_count: int) -> list[int]:
    """Rotations the training uses: block sums, their spread, and sums over blocks."""
    inner = [1 << k for k in range(5)]
    outer = [BLOCK << k for k in range(int(math.log2(slot_count // BLOCK)))]
    return inner + [-s for s in inner] + outer


def make_context(device: str, seed: int | None, log_n: int = 16, security: int | None = 128,
                 user_levels: int | None = None) -> CKKSContext:
    """The bootstrapping context (64-bit preset: 13 levels after bootstrapping at N = 2^16) with
    32-slot bootstrapping and the training's rotation keys. ``user_levels`` (tests, with
    ``security=None``) builds a small chain instead."""
    config = BootstrapConfig(slots=BLOCK)
    steps = training_steps(2 ** (log_n - 1))
    if user_levels is None:
        return CKKSContext(poly_modulus_degree=2 ** log_n, device=device, seed=seed,
                           bootstrapping=config, security=security, galois_steps=steps)
    chain = bootstrap_chain(log_n, user_levels, config)
    return CKKSContext(poly_modulus_degree=2 ** log_n, device=device, seed=seed,
                       security=security, galois_steps=steps, bootstrapping=config,
                       **chain.context_args())


def pack_samples(z: np.ndarray, n_slots: int) -> np.ndarray:
    """Sample i's row of ``z`` in slot block i (BLOCK slots, zero-padded): the client's input."""
    if len(z) * BLOCK > n_slots:
        raise ValueError(f"z: {len(z)} samples need {len(z) * BLOCK} slots, the context has "
                         f"{n_slots}")
    packed = np.zeros(n_slots)
    for i, row in enumerate(z):
        packed[i * BLOCK:i * BLOCK + len(row)] = row
    return packed


def weight_slots(w: np.ndarray, n_slots: int) -> np.ndarray:
    """The weights in one block, repeated in every block (the encrypted model's layout)."""
    block = np.zeros(BLOCK)
    block[:len(w)] = w
    return np.tile(block, n_slots // BLOCK)


def train_encrypted(tr: EncryptedTrainer, w: Any, iterations: int) -> Any:
    """``iterations`` gradient steps on the encrypted weights ``w``, bootstrapping them when
    fewer than LEVELS_PER_ITERATION levels are left (the server's whole computation)."""
    for _ in range(iterations):
        w = tr.refresh_if_needed(w)
        w = tr.iterate(w)
    return w


class EncryptedTrainer:
    """Gradient descent on encrypted z_i with an encrypted w (see the module docstring)."""

    def __init__(self, ctx: CKKSContext, z: np.ndarray, lr: float, cubic: np.ndarray):
        self._setup(ctx, len(z), z.shape[1], lr, cubic)
        top = self.bt.output_level
        self.z = self.ops.wrap(ctx.encrypt(pack_samples(z, ctx.slot_count), level=top).raw)

    @classmethod
    def on_server(cls, ctx: CKKSContext, z_ct: Any, n: int, width: int, lr: float,
                  cubic: np.ndarray) -> EncryptedTrainer:
        """The server's trainer (``veil serve``): ``z_ct`` is the client's encrypted
        :func:`pack_samples` of ``n`` samples of ``width`` values, at the bootstrapper's output
        level; ``ctx`` holds no secret key."""
        self = object.__new__(cls)
        self._setup(ctx, n, width, lr, cubic)
        self.z = self.ops.wrap(z_ct)
        return self

    def _setup(self, ctx: CKKSContext, n: int, width: int, lr: float, cubic: np.ndarray) -> None:
        self.ctx = ctx
        self.bt = ctx.bootstrapper
        self.ev = ctx.evaluator
        self.gk = ctx._gk()
        self.ops = ctx._scale_ops()  # exact-scale arithmetic (circuits::ScaleOps)
        n_slots = ctx.slot_count
        if n * BLOCK > n_slots:
            raise ValueError(f"z: {n} samples need {n * BLOCK} slots, the context has "
                             f"{n_slots}")
        self.n = n
        self.coeffs = np.asarray(cubic) * lr / self.n
        self.mask = np.tile(np.eye(1, BLOCK)[0], n_slots // BLOCK)
        self.width = width
        self.bootstraps = 0

    def __repr__(self) -> str:
        return (f"veil.apps.demo_train.EncryptedTrainer(samples={self.n}, width={self.width}, "
                f"bootstraps={self.bootstraps}, device={self.ctx.device!r})")

    def encrypt_weights(self, w: np.ndarray):
        return self.ops.wrap(self.ctx.encrypt(weight_slots(w, self.ctx.slot_count),
                                              level=self.bt.output_level).raw)

    def _rotate_sum(self, m, steps):
        ct = m.ct
        for s in steps:
            ct = self.ev.add(ct, self.ev.rotate_vector(ct, s, self.gk))
        return self.ops.wrap(ct)

    def _mask(self, m):
        """Keeps each block's first slot: a plaintext product landing on scale Delta."""
        ops = self.ops
        target = ops.below(m.level)
        pt_scale = self.ctx.scale * ops.chain.block_product(m.level) / m.scale
        pt = self.ctx.encoder.encode_real(self.mask, pt_scale, m.level, self.ctx.device)
        r = self.ev.rescale_to_next(self.ev.multiply_plain(m.ct, pt))
        r.scale = self.ctx.scale
        assert r.level == target
        return ops.wrap(r)

    def iterate(self, w):
        ops = self.ops
        if self._levels_left(w) < LEVELS_PER_ITERATION:
            raise AssertionError("refresh first")
        p = ops.mul(self.z, w)                                    # z_i * w, slot-wise
        u = self._rotate_sum(p, [1, 2, 4, 8, 16])                 # block sums in first slots
        u = self._rotate_sum(self._mask(u), [-1, -2, -4, -8, -16])  # spread over the block
        a0, a1, a3 = self.coeffs
        u2 = ops.square(u)
        a3u = ops.const_to(u, a3, u2.level, u2.scale)
        u3 = ops.mul(u2, a3u)
        g = ops.add(u3, ops.linear_to([(u, a1)], a0, u3.level, u3.scale))
        h = ops.mul(g, self.z)
        grad = self._rotate_sum(h, [BLOCK << k for k in
                                    range(int(math.log2(self.ctx.slot_count // BLOCK)))])
        return ops.add(ops.const_to(w, 1.0, grad.level, grad.scale), grad)

    def _levels_left(self, w) -> int:
        """Rescales w allows before it reaches the bootstrapper's input level."""
        tops = list(self.ops.chain.tops)
        return tops.index(w.level) - tops.index(self.bt.input_level)

    def refresh_if_needed(self, w):
        if self._levels_left(w) >= LEVELS_PER_ITERATION:
            return w
        self.bootstraps += 1
        return self.ops.wrap(self.bt.bootstrap(w.ct))

    def decrypt_weights(self, w) -> np.ndarray:
        vals = self.ctx.encoder.decode(self.ctx.decryptor.decrypt(w.ct)).real
        return vals[:self.width]


def run(device: str | None = "auto", seed: int | None = None, iterations: int = ITERATIONS,
        lr: float = LEARNING_RATE, verbose: bool = True, log_n: int = 16,
        security: int | None = 128, user_levels: int | None = None,
        max_samples: int | None = None) -> dict[str, Any]:
    """Trains on the encrypted training set and reports accuracies and times.

    Returns a dict with ``accuracy`` (encrypted model on the test set), ``float_accuracy``
    (exact sigmoid), ``cubic_accuracy`` (float64 with the same cubic), ``weights_error`` (max
    |encrypted - float cubic weights|), ``agreement`` (test decisions, encrypted vs float cubic),
    ``bootstraps``, ``iterations``, ``times_s`` and ``passed`` (agreement >= 0.98 and weights
    within 1e-2). ``log_n``, ``security``, ``user_levels`` and ``max_samples`` make small runs for
    tests.
    """
    dev = resolve_device(device)
    z, x_te, y_te = prepare(max_samples)
    cubic = sigmoid_cubic()
    w_cubic = train_float(z, iterations, lr, cubic)
    w_exact = train_float(z, iterations, lr, None)
    t0 = time.perf_counter()
    ctx = make_context(dev, seed, log_n, security, user_levels)
    t_keys = time.perf_counter() - t0
    t0 = time.perf_counter()
    tr = EncryptedTrainer(ctx, z, lr, cubic)
    w = tr.encrypt_weights(np.zeros(z.shape[1]))
    _sync(dev)
    t_enc = time.perf_counter() - t0
    t0 = time.perf_counter()
    t_boot = 0.0
    for _ in range(iterations):
        tb = time.perf_counter()
        before = tr.bootstraps
        w = tr.refresh_if_needed(w)
        if tr.bootstraps != before:
            _sync(dev)
            t_boot += time.perf_counter() - tb
        w = tr.iterate(w)
    _sync(dev)
    t_train = time.perf_counter() - t0
    w_enc = tr.decrypt_weights(w)
    agreement = float(((x_te @ w_enc > 0) == (x_te @ w_cubic > 0)).mean())
    err = float(np.abs(w_enc - w_cubic).max())
    r = {
        "device": dev, "backend": _backend_name(dev), "n_train": len(z), "n_test": len(y_te),
        "iterations": iterations, "learning_rate": lr, "sigmoid_cubic": cubic.tolist(),
        "accuracy": accuracy(w_enc, x_te, y_te), "cubic_accuracy": accuracy(w_cubic, x_te, y_te),
        "float_accuracy": accuracy(w_exact, x_te, y_te), "agreement": agreement,
        "weights_error": err,
        "weights_precision": precision(w_cubic, w_enc),
        "bootstraps": tr.bootstraps, "levels_after_bootstrap": tr.bt.output_level,
        "times_s": {"keys_and_transforms": t_keys, "encrypt": t_enc, "train": t_train,
                    "bootstrapping": t_boot},
        "passed": agreement >= 0.98 and err < 1e-2,
    }
    if verbose:
        print_report(r)
    return r


def print_report(r: dict[str, Any]) -> None:
    from rich.console import Console
    from rich.table import Table

    c = Console()
    c.print(f"[bold]Encrypted logistic-regression training[/] on {r['backend']}: "
            f"{r['n_train']} encrypted samples, {r['iterations']} iterations of gradient descent "
            f"(lr {r['learning_rate']}), {r['bootstraps']} bootstraps of the weights")
    t = Table("model", "test accuracy")
    t.add_row("encrypted training (cubic sigmoid)", f"{r['accuracy']:.3f}")
    t.add_row("float64, same cubic", f"{r['cubic_accuracy']:.3f}")
    t.add_row("float64, exact sigmoid", f"{r['float_accuracy']:.3f}")
    c.print(t)
    ts = r["times_s"]
    c.print(f"weights vs float64 (same cubic): max error {r['weights_error']:.2e} "
            f"({r['weights_precision']['min_bits']:.1f} bits); test decisions agree on "
            f"{100 * r['agreement']:.1f}%")
    c.print(f"time: keys and transforms {ts['keys_and_transforms']:.1f} s, encrypt "
            f"{ts['encrypt']:.2f} s, training {ts['train']:.2f} s (of which bootstrapping "
            f"{ts['bootstrapping']:.2f} s)")
    c.print("[green]PASS[/]" if r["passed"] else "[red]FAIL[/]: the encrypted model differs")


def main() -> int:
    return 0 if run()["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())
