"""Encrypted tumour classification with gradient-boosted trees (XGBoost) under BFV.

Özcan et al., "Homomorphic Encryption on GPU" (IEEE Access 2023, Sec. V-D and Table 6)
prove its GPU library on the XGBoost inference of Mağara et al. [1]: shallow trees evaluated on
encrypted genome data to classify tumour types. That data ships with no package; this module runs
the same kind of model on the tumour data this repository uses everywhere, Breast Cancer
Wisconsin (Diagnostic) from scikit-learn (:func:`veil.apps.demo.load_data`: same split and
standardization as the logistic-regression demo).

Parties. The client holds the secret key and the features. The server holds the trained model in
plaintext and only the public, relinearization and Galois keys (``ctx.public()``). It computes
on ciphertexts only and every sample takes every path, so it learns neither the features nor
the path any sample takes. The client decrypts the scores. It also sees every other slot of the
result, and BFV noise is not flooded, so the model is not hidden from the client (no circuit
privacy); the protocol is about the client's data.

**Encoding (client side; public grid, private thresholds).** Each standardized feature is
quantized onto a public grid of L = 16 levels, ``x_q = clip(floor((x - lo) / step), 0, L - 1)``
(``lo = -3``, ``step = 0.5`` standard deviations), and sent in unary (thermometer) form
``u_k = [x_q >= k]`` for k = 0..L-1. The grid is part of the protocol. The model never leaves
the server: its features and thresholds live only in the server's plaintext masks, so the
client never learns which thresholds exist.

**Model.** XGBoost (``binary:logistic``, depth D = 3, T = 32 trees) is trained on the quantized
features, so every split ``x_f < theta`` becomes exact on integers with ``theta_q = ceil(theta)``:
sample goes right iff ``u_{theta_q}(x_f) = 1``. Leaves and the base margin are fixed point,
``v_q = round(v * 2^s)`` with s = 10. The quantized model's score is therefore an exact integer,
and BFV with a plain modulus ``t > 2 * sum_trees max|v_q| + 2 |b_q|`` computes it exactly. A
tree shallower than D is padded to depth D. A padded node selects level 0, which is always 1, and
both of its subtrees are copies of the original leaf, so padding changes no score.

**SIMD layout.** Slots form blocks of S = 256 (sample i of a batch in slot i of every block;
the 143 test samples fit one batch). A ciphertext of N = 8192 slots is SEAL's 2 x 4096 batching
matrix, with 2 rows x 16 columns of blocks. Client ciphertext (f, q) holds feature f's levels
``q R + (c mod R)`` in block column c of both rows (R = 16 levels per ciphertext). That gives
``d L / R = 30`` ciphertexts per batch. Server ciphertexts hold one tree per block: a group of
32 trees per ciphertext.

**Circuit (server), per group of 32 trees** (phases of Kiss et al. [3]):

1. *Selection and comparison.* Let p be a heap position. For every tree tau at block tau, block
   tau of ``B_p`` must hold the bit ``[x_f >= theta]`` of node p of tree tau. That bit sits in
   block column ``c + r`` of input (f, theta div R), with ``r = (theta - c) mod R``. So
   ``B_p = sum_r rot_{r S}(sum_j M_{p,r,j} * E_j)``, where the ``M`` are plaintext 0/1 masks
   (``multiply_plain``) on the source blocks. This needs one rotation per distinct offset
   r != 0 and no comparison circuit at all (selection as a plaintext linear map, as in the
   GEMM strategy of Hummingbird [5]).
2. *Path evaluation* (Bost et al. [2]; a tree is a polynomial in its bits, and a leaf's
   indicator is the product of ``b`` or ``1 - b`` along its path): ``I_root = 1``. For each
   internal node n with bit b, ``I_right = I_n * b`` (ct x ct multiply) and
   ``I_left = I_n - I_right`` (sub). The root's children are ``b`` and ``1 - b`` (negate,
   add_plain). That is 2^D - 2 multiplications per group, multiplicative depth D - 1 = 2
   (= ceil(log2 D) for D = 3). Only products that are multiplied again are relinearized.
3. *Leaves:* ``score_g = sum_l V_l * I_l`` (multiply_plain with each block's leaf value).
4. *Trees:* the group sums are added and relinearized once. The 32 blocks are summed by
   rotations of 8S, 4S, 2S, S and a column rotation, and the bias is added (add_plain).
   Sample i's score lands in slot i of every block.

The circuit is written once (:func:`evaluate`) against a small evaluator interface
(:class:`ServerOps`). It runs on Veil (:class:`VeilBackend`, CPU or GPU) and on Microsoft SEAL
through seal-python (:class:`SealBackend`), which must give identical integer scores.
:class:`CountingOps` counts the operations for the comparison with the paper's counts
(:data:`SEED_OP_COUNTS`).

Parameters: N = 8192 with SEAL's BFVDefault chain (218 bits, 128-bit security, checked by
Veil and SEAL). t is the smallest-bit-size batching prime above twice the worst-case |score|:
t = 114689 (17 bits; the demo's bound is about 9000). The noise budget left after the circuit
is about 42 bits (fresh: 150).

References:
    [1] Ş. S. Mağara, C. Yıldırım, F. Yaman, B. Dilekoğlu, F. R. Tutaş, E. Öztürk, K. Kaya,
        Ö. Taştan, E. Savaş, "ML with HE: Privacy preserving machine learning inferences for
        genome studies", ACM CCS PPML workshop 2021 (arXiv:2110.11446); ref. [30] of Özcan et al.
    [2] R. Bost, R. A. Popa, S. Tu, S. Goldwasser, "Machine learning classification over
        encrypted data", NDSS 2015 (decision trees as polynomials of comparison bits).
    [3] Á. Kiss, M. Naderpour, J. Liu, N. Asokan, T. Schneider, "SoK: Modular and efficient
        private decision tree evaluation", PoPETs 2019(2):187-208 (selection, comparison,
        path evaluation).
    [4] A. Aloufi, P. Hu, H. W. H. Wong, S. S. M. Chow, "Blindfolded evaluation of random
        forests with multi-key homomorphic encryption", IEEE TDSC 18(4), 2021 (SIMD path
        products for forests; bitwise comparisons, which the unary encoding here avoids).
    [5] S. Nakandala et al., "A tensor compiler for unified machine learning prediction
        serving" (Hummingbird), OSDI 2020 (tree inference as selection-matrix products).

Run it with ``veil demo --model xgboost`` (add ``--peer seal`` for the SEAL comparison, seed
000's Table 6) or ``python -m veil.apps.demo_xgboost``.
"""

from __future__ import annotations

import json
import math
import time
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import numpy as np

from .. import _core
from .._device import resolve_device
from .._integer import BFVContext, Ciphertext, bfv
from .demo import _backend_name, choose_plain_modulus, load_data

#: Ring degree N of the demo (8192 slots; Table 6 of Özcan et al. runs N = 2^13 and 2^14).
POLY_MODULUS_DEGREE = 8192
#: Slots per block = samples per batch (143 test samples fit one batch).
BLOCK = 256
#: Grid of the public feature quantizer: level k covers [GRID_LO + k STEP, GRID_LO + (k+1) STEP).
GRID_LO = -3.0
GRID_STEP = 0.5
LEVELS = 16
#: XGBoost hyperparameters (32 trees fill the 32 blocks of one ciphertext).
N_TREES = 32
MAX_DEPTH = 3
LEARNING_RATE = 0.3
XGB_SEED = 0
#: Fractional bits of the fixed-point leaves and base margin.
LEAF_BITS = 10
#: Timed runs per backend (median reported; the GPU gets one untimed warm-up run first).
RUNS = 3

#: Özcan et al. 2023, Sec. V-D: operations of the XGBoost inference on 258 test samples.
SEED_SAMPLES = 258
SEED_OP_COUNTS = {
    "multiply": 1290,
    "relinearize": 2322,
    "rotate": 1806,
    "sub": 1806,
    "multiply_plain": 1290,
    "add": 3354,
}
#: Özcan et al. 2023, Table 6 (N = 2^13, log2 q = 218): SEAL single thread, SEAL 16 threads,
#: RTX 3060 Ti.
SEED_TABLE6 = {"seal_1t_s": 25.62, "seal_16t_s": 3.4, "gpu_s": 0.596, "gpu_name": "RTX 3060 Ti"}

#: Operation names counted by :class:`CountingOps` (rotations: rotate_rows and rotate_columns).
OPS = ("multiply", "relinearize", "rotate", "sub", "multiply_plain", "add", "add_plain", "negate")


# ---- data: the public quantizer ----------------------------------------------------------------
@dataclass(frozen=True)
class Grid:
    """Public feature quantizer: ``x_q = clip(floor((x - lo) / step), 0, levels - 1)``.

    ``x`` is a standardized feature (standard deviations); ``x_q`` an integer level.
    """

    lo: float = GRID_LO
    step: float = GRID_STEP
    levels: int = LEVELS

    def __post_init__(self) -> None:
        if not (isinstance(self.levels, (int, np.integer)) and 2 <= self.levels <= 4096):
            raise ValueError(f"levels: expected an integer in 2..4096, got {self.levels!r}")
        if not (isinstance(self.lo, (int, float)) and math.isfinite(self.lo)):
            raise ValueError(f"lo: expected a finite number, got {self.lo!r}")
        if not (isinstance(self.step, (int, float)) and math.isfinite(self.step)
                and self.step > 0):
            raise ValueError(f"step: expected a finite positive grid step, got {self.step!r}")

    def quantize(self, x: np.ndarray) -> np.ndarray:
        """(n, d) float -> (n, d) int64 levels in [0, levels). Raises ValueError on NaN/inf."""
        x = np.asarray(x, dtype=np.float64)
        if not np.all(np.isfinite(x)):
            raise ValueError("x: expected finite features (no NaN or infinity)")
        q = np.floor((x - self.lo) / self.step)
        return np.clip(q, 0, self.levels - 1).astype(np.int64)


# ---- models: float (XGBoost's) and quantized (exact integers) --------------------------------------
def _n_internal(depth: int) -> int:
    return (1 << depth) - 1


@dataclass
class Forest:
    """Trees in heap form, all padded to ``depth``. Node p's children are 2p+1 (left) and
    2p+2 (right). A sample goes right iff ``x[feature] >= threshold`` (XGBoost goes left iff
    ``x < split_condition``). Leaf l (0..2^D-1) is heap node 2^D - 1 + l.

    Shapes: feature (T, 2^D - 1) int64, threshold (T, 2^D - 1) float64 (-inf: a padding node,
    always right), leaf (T, 2^D) float64.
    """

    feature: np.ndarray
    threshold: np.ndarray
    leaf: np.ndarray
    base_margin: float
    depth: int

    @property
    def n_trees(self) -> int:
        return int(self.leaf.shape[0])

    def leaf_index(self, x: np.ndarray) -> np.ndarray:
        """(n, d) features -> (n, T) index of the leaf each sample reaches in each tree.

        Features are rounded to float32 first, as XGBoost compares them.
        """
        x = np.asarray(x, dtype=np.float32).astype(np.float64)
        n = x.shape[0]
        out = np.zeros((n, self.n_trees), dtype=np.int64)
        rows = np.arange(n)
        for t in range(self.n_trees):
            node = np.zeros(n, dtype=np.int64)
            for _ in range(self.depth):
                right = x[rows, self.feature[t, node]] >= self.threshold[t, node]
                node = 2 * node + 1 + right
            out[:, t] = node - _n_internal(self.depth)
        return out

    def margins(self, x: np.ndarray) -> np.ndarray:
        """Log-odds of malignancy, (n,) float64: base margin + the reached leaves."""
        idx = self.leaf_index(x)
        return self.base_margin + self.leaf[np.arange(self.n_trees), idx].sum(axis=1)


@dataclass
class QuantizedForest:
    """Integer forest: ``score = bias + sum_trees leaf[reached]``, all at scale 2^leaf_bits.

    A sample goes right at node p iff ``x_q[feature] >= level`` (level in 0..levels-1; level 0
    is always true: padding nodes). Shapes: feature, level (T, 2^D - 1) int64; leaf (T, 2^D)
    int64.
    """

    feature: np.ndarray
    level: np.ndarray
    leaf: np.ndarray
    bias: int
    depth: int
    levels: int
    leaf_bits: int

    @property
    def n_trees(self) -> int:
        return int(self.leaf.shape[0])

    def leaf_index(self, xq: np.ndarray) -> np.ndarray:
        """(n, d) int levels -> (n, T) leaf index per tree (integer comparisons only)."""
        xq = np.asarray(xq, dtype=np.int64)
        n = xq.shape[0]
        out = np.zeros((n, self.n_trees), dtype=np.int64)
        rows = np.arange(n)
        for t in range(self.n_trees):
            node = np.zeros(n, dtype=np.int64)
            for _ in range(self.depth):
                right = xq[rows, self.feature[t, node]] >= self.level[t, node]
                node = 2 * node + 1 + right
            out[:, t] = node - _n_internal(self.depth)
        return out

    def scores(self, xq: np.ndarray) -> np.ndarray:
        """Exact integer scores, (n,) int64."""
        idx = self.leaf_index(xq)
        return np.int64(self.bias) + self.leaf[np.arange(self.n_trees), idx].sum(axis=1)

    def score_bound(self) -> int:
        """Worst-case |score| over every input: sum of each tree's largest |leaf| + |bias|."""
        return sum(int(np.abs(row).max()) for row in self.leaf) + abs(int(self.bias))


def _place(tree: dict, node: int, pos: int, depth: int, max_depth: int, feature, threshold,
           leaf) -> None:
    """Writes XGBoost node ``node`` (JSON model arrays) at heap position ``pos``, padding leaves
    above ``max_depth`` into full subtrees (padding node: threshold -inf, both subtrees equal)."""
    left = tree["left_children"][node]
    if left == -1:  # a leaf: its value is in split_conditions
        value = float(tree["split_conditions"][node])
        if depth == max_depth:
            leaf[pos - _n_internal(max_depth)] = value
            return
        feature[pos], threshold[pos] = 0, -np.inf
        for child in (2 * pos + 1, 2 * pos + 2):
            _place(tree, node, child, depth + 1, max_depth, feature, threshold, leaf)
        return
    if depth >= max_depth:
        raise ValueError(f"model: a tree is deeper than max_depth = {max_depth}")
    if int(tree["split_type"][node]) != 0:
        raise ValueError("model: categorical splits are not supported")
    feature[pos] = int(tree["split_indices"][node])
    threshold[pos] = float(np.float32(tree["split_conditions"][node]))  # XGBoost's float32
    _place(tree, left, 2 * pos + 1, depth + 1, max_depth, feature, threshold, leaf)
    _place(tree, tree["right_children"][node], 2 * pos + 2, depth + 1, max_depth, feature,
           threshold, leaf)


def forest_from_booster(booster: Any, depth: int, x_check: np.ndarray) -> Forest:
    """Reads an XGBoost ``binary:logistic`` booster (its JSON model) into a :class:`Forest`.

    The base margin is the difference between XGBoost's own margins on ``x_check`` and the
    sum of the leaves, and it must be constant: that checks the extraction.

    Raises:
        ValueError: categorical splits, trees deeper than ``depth``, or leaves that do not
            reproduce XGBoost's margins (to 1e-4).
    """
    import xgboost as xgb

    model = json.loads(booster.save_raw(raw_format="json"))
    theirs = booster.predict(xgb.DMatrix(np.asarray(x_check, dtype=np.float64)),
                             output_margin=True)
    return forest_from_model(model, np.asarray(theirs, dtype=np.float64), depth, x_check)


def forest_from_model(model: dict, margins: np.ndarray, depth: int, x_check: np.ndarray
                      ) -> Forest:
    """A :class:`Forest` from XGBoost's JSON model (``Booster.save_raw("json")``, parsed) and
    XGBoost's own output margins (m,) on ``x_check`` (m, d); as :func:`forest_from_booster`.
    """
    trees = model["learner"]["gradient_booster"]["model"]["trees"]
    t = len(trees)
    feature = np.zeros((t, _n_internal(depth)), dtype=np.int64)
    threshold = np.zeros((t, _n_internal(depth)), dtype=np.float64)
    leaf = np.zeros((t, 1 << depth), dtype=np.float64)
    for i, tree in enumerate(trees):
        _place(tree, 0, 0, 0, depth, feature[i], threshold[i], leaf[i])
    forest = Forest(feature, threshold, leaf, 0.0, depth)
    diff = np.asarray(margins, dtype=np.float64) - forest.margins(x_check)
    forest.base_margin = float(np.median(diff))
    if float(np.abs(diff - forest.base_margin).max()) > 1e-4:
        raise ValueError("model: the extracted trees do not reproduce XGBoost's margins")
    return forest


def train_forest(
    x: np.ndarray,
    y: np.ndarray,
    n_trees: int = N_TREES,
    depth: int = MAX_DEPTH,
    learning_rate: float = LEARNING_RATE,
    seed: int = XGB_SEED,
) -> Forest:
    """Trains XGBoost (``binary:logistic``, ``hist``, one thread: deterministic) on ``x``
    (n, d) with 0/1 labels ``y`` (n,) and returns its trees.

    Training runs in a child interpreter (``_xgb_train.py``) that imports xgboost before
    anything else: xgboost's bundled OpenMP runtime crashed when loaded after ``veil._core``'s
    (observed with xgboost-cpu 3.4.1 on the GPU machine; see that script's docstring).

    Raises:
        ImportError: xgboost is not installed (``pip install 'veil[demo]'``).
        ValueError: n_trees/depth out of range.
        RuntimeError: the training process failed (its stderr is in the message).
    """
    import importlib.util
    import io
    import subprocess
    import sys
    from pathlib import Path

    if importlib.util.find_spec("xgboost") is None:
        raise ImportError("the XGBoost demo needs xgboost: pip install 'veil[demo]' "
                          "(or pip install xgboost-cpu)")
    if not 1 <= int(n_trees) <= 4096:
        raise ValueError(f"n_trees: expected 1..4096, got {n_trees}")
    if not 1 <= int(depth) <= 8:
        raise ValueError(f"depth: expected 1..8, got {depth}")
    params = {
        "objective": "binary:logistic",
        "max_depth": int(depth),
        "eta": float(learning_rate),
        "tree_method": "hist",
        "seed": int(seed),
        "nthread": 1,
    }
    x = np.asarray(x, dtype=np.float64)
    buf = io.BytesIO()
    np.savez(buf, x=x, y=np.asarray(y), x_check=x,
             params=np.asarray(json.dumps({"params": params, "rounds": int(n_trees)})))
    script = Path(__file__).with_name("_xgb_train.py")
    proc = subprocess.run([sys.executable, str(script)], input=buf.getvalue(),
                          capture_output=True, check=False)
    if proc.returncode != 0:
        raise RuntimeError("XGBoost training failed (exit status "
                           f"{proc.returncode}): {proc.stderr.decode(errors='replace')[-2000:]}")
    out = json.loads(proc.stdout)
    return forest_from_model(out["model"], np.asarray(out["margins"]), int(depth), x)


def quantize_forest(forest: Forest, levels: int = LEVELS, leaf_bits: int = LEAF_BITS
                    ) -> QuantizedForest:
    """Integer thresholds and fixed-point leaves of a forest trained on grid levels.

    ``forest`` must have been trained on integer features in [0, levels) (:func:`train_forest`
    on :meth:`Grid.quantize` output): then ``x < theta`` equals ``x < ceil(theta)`` exactly.
    Leaves and the base margin become ``round(v * 2^leaf_bits)``. A node that always goes
    left (threshold above every level) becomes a padding node whose right subtree is a copy of
    its left one. Padding nodes test level 0 of feature 0, which is always true.

    Raises:
        ValueError: leaf_bits outside 0..30 or levels outside 2..4096.
    """
    if not 0 <= int(leaf_bits) <= 30:
        raise ValueError(f"leaf_bits: expected 0..30, got {leaf_bits}")
    if not 2 <= int(levels) <= 4096:
        raise ValueError(f"levels: expected 2..4096, got {levels}")
    depth = forest.depth
    feature = forest.feature.copy()
    threshold = forest.threshold.copy()
    leaf = forest.leaf.copy()
    n_int = _n_internal(depth)

    def copy_subtree(t: int, src: int, dst: int) -> None:
        if src >= n_int:
            leaf[t, dst - n_int] = leaf[t, src - n_int]
            return
        feature[t, dst], threshold[t, dst] = feature[t, src], threshold[t, src]
        copy_subtree(t, 2 * src + 1, 2 * dst + 1)
        copy_subtree(t, 2 * src + 2, 2 * dst + 2)

    for t in range(forest.n_trees):
        for p in range(n_int):  # heap order: copies land below p and are visited later
            if threshold[t, p] > levels - 1:  # x < threshold for every level: always left
                feature[t, p], threshold[t, p] = 0, -np.inf
                copy_subtree(t, 2 * p + 1, 2 * p + 2)
    padding = threshold == -np.inf
    level = np.where(padding, 0, np.ceil(np.where(padding, 0.0, threshold)))
    return QuantizedForest(
        feature=np.where(padding, 0, feature).astype(np.int64),
        level=np.maximum(level, 0).astype(np.int64),
        leaf=np.rint(leaf * 2.0**leaf_bits).astype(np.int64),
        bias=int(np.rint(forest.base_margin * 2.0**leaf_bits)),
        depth=depth,
        levels=int(levels),
        leaf_bits=int(leaf_bits),
    )


# ---- the public layout ------------------------------------------------------------------------
def _pow2(value: int, name: str) -> int:
    if not isinstance(value, (int, np.integer)) or value < 1 or value & (value - 1):
        raise ValueError(f"{name}: expected a power of two, got {value!r}")
    return int(value)


@dataclass(frozen=True)
class Layout:
    """Where every value sits in the slots. Client and server agree on it; it is public.

    Slots are SEAL's batching matrix: 2 rows of N/2. Blocks of ``block`` slots tile each row,
    so there are ``blocks_per_row`` block columns. Block b (0..n_blocks-1) is row
    ``b // blocks_per_row``, column ``b % blocks_per_row``, and sample i of a batch sits in slot
    i of each block.
    Input ciphertext ``j = f * parts + q`` holds feature f's unary levels
    ``q R + (c mod R)`` in block column c of both rows (R = ``levels_per_ciphertext``).
    """

    poly_modulus_degree: int = POLY_MODULUS_DEGREE
    block: int = BLOCK
    levels: int = LEVELS
    n_features: int = 30
    levels_per_ciphertext: int = 0  # 0: min(levels, blocks_per_row)

    def __post_init__(self) -> None:
        n = _pow2(self.poly_modulus_degree, "poly_modulus_degree")
        s = _pow2(self.block, "block")
        if s > n // 2:
            raise ValueError(f"block: expected at most N/2 = {n // 2} slots, got {s}")
        lv = _pow2(self.levels, "levels")
        if not 1 <= int(self.n_features) <= 100000:
            raise ValueError(f"n_features: expected 1..100000, got {self.n_features!r}")
        r = self.levels_per_ciphertext or min(lv, n // 2 // s)
        r = _pow2(r, "levels_per_ciphertext")
        if r > lv or r > n // 2 // s:
            raise ValueError(
                f"levels_per_ciphertext: expected a power of two <= min(levels, blocks per row) = "
                f"{min(lv, n // 2 // s)}, got {r}")
        object.__setattr__(self, "levels_per_ciphertext", r)

    @property
    def blocks_per_row(self) -> int:
        return self.poly_modulus_degree // 2 // self.block

    @property
    def n_blocks(self) -> int:
        """Trees per group (one per block)."""
        return self.poly_modulus_degree // self.block

    @property
    def parts(self) -> int:
        """Input ciphertexts per feature (levels / levels_per_ciphertext)."""
        return self.levels // self.levels_per_ciphertext

    @property
    def n_inputs(self) -> int:
        """Input ciphertexts per batch of ``block`` samples."""
        return self.n_features * self.parts

    def block_slots(self, b: int) -> slice:
        """The slots of block b."""
        row, col = divmod(b, self.blocks_per_row)
        start = row * (self.poly_modulus_degree // 2) + col * self.block
        return slice(start, start + self.block)

    def source(self, feature: int, level: int, dest: int) -> tuple[int, int, int]:
        """Where the bit ``[x_feature >= level]`` for block ``dest`` comes from:
        (input index, column offset r, source block). Rotating the input left by ``r * block``
        slots moves the source block onto ``dest``."""
        r_ = self.levels_per_ciphertext
        row, col = divmod(dest, self.blocks_per_row)
        offset = (level - col) % r_
        src = row * self.blocks_per_row + (col + offset) % self.blocks_per_row
        return feature * self.parts + level // r_, offset, src

    def tree_sum_steps(self) -> list[int]:
        """rotate_rows steps that sum the blocks of a row: (blocks_per_row / 2) block, ..., block."""
        steps, b = [], self.blocks_per_row // 2
        while b >= 1:
            steps.append(b * self.block)
            b //= 2
        return steps


def encode_inputs(xq: np.ndarray, layout: Layout) -> list[list[np.ndarray]]:
    """The client's slot vectors: per batch of ``layout.block`` samples, ``layout.n_inputs``
    int64 vectors of N slots holding 0/1 (unary levels; padding slots 0).

    Args:
        xq: (n, d) int levels in [0, levels), d = layout.n_features.
    Raises:
        ValueError: wrong shape or levels outside [0, levels).
    """
    xq = np.asarray(xq)
    if xq.ndim != 2 or xq.shape[1] != layout.n_features:
        raise ValueError(f"xq: expected shape (n, {layout.n_features}), got {xq.shape}")
    if xq.dtype.kind not in "iu":
        raise ValueError(f"xq: expected integer levels, got dtype {xq.dtype}")
    if xq.size and (xq.min() < 0 or xq.max() >= layout.levels):
        raise ValueError(f"xq: expected levels in [0, {layout.levels}), got "
                         f"[{xq.min()}, {xq.max()}]")
    s, bpr, r_ = layout.block, layout.blocks_per_row, layout.levels_per_ciphertext
    batches = []
    for start in range(0, max(len(xq), 1), s):
        chunk = xq[start:start + s]
        vecs = []
        for f in range(layout.n_features):
            for q in range(layout.parts):
                lv = q * r_ + np.arange(bpr) % r_  # level held by each block column
                bits = (chunk[None, :, f] >= lv[:, None]).astype(np.int64)  # (bpr, len(chunk))
                m = np.zeros((2, bpr, s), dtype=np.int64)
                m[:, :, :len(chunk)] = bits[None]
                vecs.append(m.reshape(-1))
        batches.append(vecs)
    return batches


def decode_scores(slots: Sequence[np.ndarray], n_samples: int, layout: Layout) -> np.ndarray:
    """Reads each batch's scores from block 0 of its decrypted slots: (n_samples,) int64."""
    s = layout.block
    flat = [np.asarray(v, dtype=np.int64)[:s] for v in slots]
    out = np.concatenate(flat) if flat else np.zeros(0, dtype=np.int64)
    if out.size < n_samples:
        raise ValueError(f"n_samples: expected at most {out.size}, got {n_samples}")
    return out[:n_samples]


# ---- the server's plan (plaintext, model-dependent) --------------------------------------------
@dataclass
class Selection:
    """Part of a comparison-bit ciphertext: ``rot(sum_j mask_j * input_j, offset * block)``.
    ``terms`` are (input index, index of the 0/1 mask in ``Plan.plains``)."""

    offset: int
    terms: list[tuple[int, int]]


@dataclass
class GroupPlan:
    """One ciphertext's worth of trees (tree ``trees[k]`` in block k)."""

    trees: range
    bits: list[list[Selection]]  # per heap position p
    leaves: list[int | None]  # per leaf: index of its value vector in Plan.plains (None: all 0)


@dataclass
class Plan:
    """The model compiled against a layout: every plaintext the server multiplies or adds,
    as int64 slot vectors in ``plains`` (encode them once per backend: :func:`encode_plan`),
    and the structure :func:`evaluate` walks."""

    layout: Layout
    depth: int
    groups: list[GroupPlan]
    plains: list[np.ndarray]
    ones: int  # index of the all-ones vector (1 - b at the root)
    bias: int  # index of the bias vector
    plain_modulus: int = 0
    galois_steps: list[int] = field(default_factory=list)


def compile_plan(model: QuantizedForest, layout: Layout) -> Plan:
    """Turns the quantized model into masks, leaf vectors and rotation offsets.

    Raises:
        ValueError: the model does not fit the layout (levels, features) or every leaf value
            quantizes to zero (no ciphertext would carry a score).
    """
    if model.levels != layout.levels:
        raise ValueError(f"layout: the model has {model.levels} levels, the layout "
                         f"{layout.levels}")
    if model.n_trees < 1:
        raise ValueError("model: expected at least one tree")
    if int(model.feature.max()) >= layout.n_features:
        raise ValueError(f"layout: the model uses feature {int(model.feature.max())}, the "
                         f"layout has {layout.n_features}")
    if int(model.feature.min()) < 0 or int(model.level.min()) < 0 or \
            int(model.level.max()) >= layout.levels:
        raise ValueError(f"model: expected features >= 0 and levels in [0, {layout.levels})")
    n = layout.poly_modulus_degree
    plains: list[np.ndarray] = []
    index: dict[bytes, int] = {}

    def plain(vec: np.ndarray) -> int:
        key = vec.tobytes()
        if key not in index:
            index[key] = len(plains)
            plains.append(vec)
        return index[key]

    groups = []
    offsets: set[int] = set()
    nb = layout.n_blocks
    for g0 in range(0, model.n_trees, nb):
        trees = range(g0, min(g0 + nb, model.n_trees))
        bits = []
        for p in range(_n_internal(model.depth)):
            masks: dict[int, dict[int, np.ndarray]] = {}  # offset -> input -> mask
            for k, t in enumerate(trees):
                j, off, src = layout.source(int(model.feature[t, p]), int(model.level[t, p]), k)
                m = masks.setdefault(off, {}).setdefault(j, np.zeros(n, dtype=np.int64))
                m[layout.block_slots(src)] = 1
            sels = []
            for off in sorted(masks):
                if off:
                    offsets.add(off)
                sels.append(Selection(off, [(j, plain(m)) for j, m in sorted(masks[off].items())]))
            bits.append(sels)
        leaves: list[int | None] = []
        for leaf_idx in range(1 << model.depth):
            vec = np.zeros(n, dtype=np.int64)
            for k, t in enumerate(trees):
                vec[layout.block_slots(k)] = model.leaf[t, leaf_idx]
            leaves.append(plain(vec) if vec.any() else None)
        groups.append(GroupPlan(trees, bits, leaves))
    if not any(i is not None for g in groups for i in g.leaves):
        raise ValueError("model: every leaf value quantizes to 0; raise leaf_bits")
    ones = plain(np.ones(n, dtype=np.int64))
    bias = plain(np.full(n, model.bias, dtype=np.int64))
    steps = sorted({off * layout.block for off in offsets} | set(layout.tree_sum_steps()))
    return Plan(layout, model.depth, groups, plains, ones, bias, galois_steps=steps)


# ---- the evaluator interface and the circuit ---------------------------------------------------
class ServerOps(Protocol):
    """What the server's circuit needs: BFV batching operations on one key set's evaluation
    keys (no secret key). Ciphertexts and plaintexts are the implementation's own objects."""

    name: str

    def encode(self, values: np.ndarray) -> Any: ...
    def add(self, a: Any, b: Any) -> Any: ...
    def sub(self, a: Any, b: Any) -> Any: ...
    def negate(self, a: Any) -> Any: ...
    def multiply(self, a: Any, b: Any) -> Any: ...  # ct x ct, no relinearization (size 3)
    def relinearize(self, a: Any) -> Any: ...
    def multiply_plain(self, a: Any, p: Any) -> Any: ...
    def add_plain(self, a: Any, p: Any) -> Any: ...
    def rotate_rows(self, a: Any, steps: int) -> Any: ...
    def rotate_columns(self, a: Any) -> Any: ...


class CountingOps:
    """Wraps a :class:`ServerOps` and counts each homomorphic operation (``counts``, a
    Counter over :data:`OPS`; ``rotate`` counts rotate_rows and rotate_columns). ``encode``
    (plaintext preparation) is not counted."""

    def __init__(self, inner: ServerOps) -> None:
        self.inner = inner
        self.name = inner.name
        self.counts: Counter[str] = Counter({k: 0 for k in OPS})

    def __repr__(self) -> str:
        return (f"veil.apps.demo_xgboost.CountingOps(name={self.name!r}, "
                f"operations={sum(self.counts.values())})")

    def encode(self, values):
        return self.inner.encode(values)

    def add(self, a, b):
        self.counts["add"] += 1
        return self.inner.add(a, b)

    def sub(self, a, b):
        self.counts["sub"] += 1
        return self.inner.sub(a, b)

    def negate(self, a):
        self.counts["negate"] += 1
        return self.inner.negate(a)

    def multiply(self, a, b):
        self.counts["multiply"] += 1
        return self.inner.multiply(a, b)

    def relinearize(self, a):
        self.counts["relinearize"] += 1
        return self.inner.relinearize(a)

    def multiply_plain(self, a, p):
        self.counts["multiply_plain"] += 1
        return self.inner.multiply_plain(a, p)

    def add_plain(self, a, p):
        self.counts["add_plain"] += 1
        return self.inner.add_plain(a, p)

    def multiply_plain_sum(self, cts, plains):
        """Counted as the products and additions it stands for."""
        self.counts["multiply_plain"] += len(cts)
        self.counts["add"] += len(cts) - 1
        return plain_sum(self.inner, cts, plains)

    def prepare_product(self, p):
        prepare = getattr(self.inner, "prepare_product", None)
        return p if prepare is None else prepare(p)

    def rotate_rows(self, a, steps):
        self.counts["rotate"] += 1
        return self.inner.rotate_rows(a, steps)

    def rotate_columns(self, a):
        self.counts["rotate"] += 1
        return self.inner.rotate_columns(a)


def encode_plan(plan: Plan, ops: ServerOps) -> list[Any]:
    """The plan's plaintexts encoded by ``ops`` (once per model and key set: not per request).
    Where ``ops`` has ``prepare_product`` (Veil: ``encode_ntt``), the plaintexts that only ever
    multiply are prepared for products once here."""
    plains = [ops.encode(v) for v in plan.plains]
    prepare = getattr(ops, "prepare_product", None)
    if prepare is None:
        return plains
    products = {m for g in plan.groups for sels in g.bits for sel in sels for _, m in sel.terms}
    products |= {m for g in plan.groups for m in g.leaves if m is not None}
    products -= {plan.ones, plan.bias}
    return [prepare(p) if i in products else p for i, p in enumerate(plains)]


def plain_sum(ops: ServerOps, cts: Sequence[Any], plains: Sequence[Any]) -> Any:
    """``sum_i cts[i] * plains[i]``: ``ops.multiply_plain_sum`` where it has one (Veil: one
    pass), else the ``multiply_plain`` and ``add`` chain (SEAL)."""
    fused = getattr(ops, "multiply_plain_sum", None)
    if fused is not None:
        return fused(list(cts), list(plains))
    out = None
    for c, p in zip(cts, plains):
        z = ops.multiply_plain(c, p)
        out = z if out is None else ops.add(out, z)
    return out


def evaluate(ops: ServerOps, plan: Plan, plains: Sequence[Any], inputs: Sequence[Any]) -> Any:
    """The server's circuit on one batch: ``layout.n_inputs`` input ciphertexts -> one
    ciphertext whose block 0 holds the batch's integer scores (module docstring, steps 1-4).

    Args:
        ops: the evaluator (its keys: relinearization and Galois keys for
            ``plan.galois_steps`` and the column rotation).
        plains: :func:`encode_plan` of this plan with the same ``ops``.
        inputs: the client's ciphertexts of one batch (:func:`encode_inputs` order).
    Raises:
        ValueError: wrong number of inputs or plaintexts.
    """
    lay = plan.layout
    if len(inputs) != lay.n_inputs:
        raise ValueError(f"inputs: expected {lay.n_inputs} ciphertexts, got {len(inputs)}")
    if len(plains) != len(plan.plains):
        raise ValueError(f"plains: expected {len(plan.plains)} encoded plaintexts, got "
                         f"{len(plains)}")
    depth, n_int = plan.depth, _n_internal(plan.depth)
    total = None
    for group in plan.groups:
        # 1. comparison bits by selection: B_p = sum_r rot_r(sum_j M * E_j)
        bits = []
        for sels in group.bits:
            acc = None
            for sel in sels:
                y = plain_sum(ops, [inputs[j] for j, _ in sel.terms],
                              [plains[m] for _, m in sel.terms])
                if sel.offset:
                    y = ops.rotate_rows(y, sel.offset * lay.block)
                acc = y if acc is None else ops.add(acc, y)
            bits.append(acc)
        # 2. path indicators: I_right = I * b, I_left = I - I_right
        ind: dict[int, Any] = {1: ops.add_plain(ops.negate(bits[0]), plains[plan.ones]),
                               2: bits[0]}
        for p in range(1, n_int):
            node_depth = (p + 1).bit_length() - 1
            parent = ind.pop(p)
            right = ops.multiply(parent, bits[p])
            if node_depth < depth - 1:  # multiplied again below: relinearize now
                right = ops.relinearize(right)
            ind[2 * p + 1] = ops.sub(parent, right)
            ind[2 * p + 2] = right
        # 3. leaves: sum_l V_l * I_l
        leaves = [(n_int + i, m) for i, m in enumerate(group.leaves) if m is not None]
        score = plain_sum(ops, [ind[k] for k, _ in leaves], [plains[m] for _, m in leaves]) \
            if leaves else None
        if score is not None:
            total = score if total is None else ops.add(total, score)
    # 4. one relinearization, sum the blocks (trees), add the bias
    if depth >= 2:
        total = ops.relinearize(total)
    for step in lay.tree_sum_steps():
        total = ops.add(total, ops.rotate_rows(total, step))
    total = ops.add(total, ops.rotate_columns(total))
    return ops.add_plain(total, plains[plan.bias])


def predicted_counts(plan: Plan, n_batches: int = 1) -> dict[str, int]:
    """Operation counts of :func:`evaluate` from the plan's shape (per the module docstring):
    selections, 2^D - 2 products per group, the tree sum and the bias."""
    lay = plan.layout
    c = Counter({k: 0 for k in OPS})
    n_int = _n_internal(plan.depth)
    tree_rot = len(lay.tree_sum_steps()) + 1
    for g in plan.groups:
        for sels in g.bits:
            terms = sum(len(s.terms) for s in sels)
            c["multiply_plain"] += terms
            c["add"] += terms - 1
            c["rotate"] += sum(1 for s in sels if s.offset)
        nz = sum(1 for m in g.leaves if m is not None)
        c["multiply_plain"] += nz
        c["add"] += max(nz - 1, 0)
        c["multiply"] += n_int - 1
        c["relinearize"] += max((1 << (plan.depth - 1)) - 2, 0)
        c["sub"] += n_int - 1
        c["negate"] += 1
        c["add_plain"] += 1
    c["add"] += sum(1 for g in plan.groups if any(m is not None for m in g.leaves)) - 1
    c["relinearize"] += 1 if plan.depth >= 2 else 0
    c["rotate"] += tree_rot
    c["add"] += tree_rot
    c["add_plain"] += 1
    return {k: v * n_batches for k, v in c.items()}


# ---- backends: Veil (pythonic API) and SEAL (seal-python) ---------------------------------------
def _center(values: np.ndarray, t: int) -> np.ndarray:
    """Residues mod t centered into (-t/2, t/2], int64."""
    v = np.asarray(values, dtype=np.int64) % t
    return np.where(v > t // 2, v - t, v)


class VeilOps:
    """:class:`ServerOps` on Veil's pythonic API with a server view (``ctx.public()``)."""

    def __init__(self, server: BFVContext, name: str) -> None:
        if server.secret_key is not None:
            raise ValueError("server: expected a public context (ctx.public()), not the client's")
        self.server = server
        self.name = name

    def __repr__(self) -> str:
        return (f"veil.apps.demo_xgboost.VeilOps(name={self.name!r}, "
                f"N={self.server.poly_modulus_degree}, device={self.server.device!r})")

    def encode(self, values):
        return self.server.encode(np.asarray(values, dtype=np.int64))

    def add(self, a, b):
        return a + b

    def sub(self, a, b):
        return a - b

    def negate(self, a):
        return -a

    def multiply(self, a, b):
        return Ciphertext(self.server, self.server.evaluator.multiply(a.raw, b.raw))

    def relinearize(self, a):
        return a.relinearize()

    def multiply_plain(self, a, p):
        return a * p

    def multiply_plain_sum(self, cts, plains):
        return self.server.multiply_plain_sum(cts, plains)

    def prepare_product(self, p):
        return self.server.encode_ntt(p)

    def add_plain(self, a, p):
        return a + p

    def rotate_rows(self, a, steps):
        return a.rotate_rows(steps)

    def rotate_columns(self, a):
        return a.rotate_columns()


class VeilBackend:
    """Client (secret key) and server (:class:`VeilOps` on ``client.public()``) on one device.

    ``threads``: CPU threads while this backend runs (None: leave as is); set by the runner.
    """

    kind = "veil"

    def __init__(self, plan: Plan, plain_modulus: int, device: str = "cpu",
                 seed: int | None = None, threads: int | None = None, label: str | None = None
                 ) -> None:
        self.device = resolve_device(device)
        self.threads = threads
        self.label = label or f"Veil {self.device}"
        self.t = int(plain_modulus)
        before = _core.num_threads()
        if threads is not None:
            _core.set_num_threads(threads)
        try:
            t0 = time.perf_counter()
            self.client = bfv(poly_modulus_degree=plan.layout.poly_modulus_degree,
                              plain_modulus=self.t, device=self.device, seed=seed,
                              galois_steps=plan.galois_steps)
            _core.synchronize(self.device)
            self.keygen_s = time.perf_counter() - t0
        finally:
            _core.set_num_threads(before)
        self.ops = VeilOps(self.client.public(), self.label)

    def __repr__(self) -> str:
        return (f"veil.apps.demo_xgboost.VeilBackend(label={self.label!r}, "
                f"N={self.client.poly_modulus_degree}, plain_modulus={self.t})")

    def encrypt(self, values: np.ndarray):
        return self.client.encrypt(values)

    def decrypt(self, ct) -> np.ndarray:
        return _center(self.client.decrypt(ct), self.t)

    def noise_budget(self, ct) -> int:
        return int(self.client.noise_budget(ct))

    def sync(self) -> None:
        _core.synchronize(self.device)

    def params(self) -> dict[str, Any]:
        return self.client.describe()


class SealOps:
    """:class:`ServerOps` on SEAL (seal-python): Evaluator, BatchEncoder, relinearization and
    Galois keys only."""

    def __init__(self, seal: Any, context: Any, relin_keys: Any, galois_keys: Any) -> None:
        self.name = "SEAL"
        self.encoder = seal.BatchEncoder(context)
        self.ev = seal.Evaluator(context)
        self.rk, self.gk = relin_keys, galois_keys

    def __repr__(self) -> str:
        return f"veil.apps.demo_xgboost.SealOps(name={self.name!r})"

    def encode(self, values):
        return self.encoder.encode(np.asarray(values, dtype=np.int64))

    def add(self, a, b):
        return self.ev.add(a, b)

    def sub(self, a, b):
        return self.ev.sub(a, b)

    def negate(self, a):
        return self.ev.negate(a)

    def multiply(self, a, b):
        return self.ev.multiply(a, b)

    def relinearize(self, a):
        return self.ev.relinearize(a, self.rk)

    def multiply_plain(self, a, p):
        return self.ev.multiply_plain(a, p)

    def add_plain(self, a, p):
        return self.ev.add_plain(a, p)

    def rotate_rows(self, a, steps):
        return self.ev.rotate_rows(a, steps, self.gk)

    def rotate_columns(self, a):
        return self.ev.rotate_columns(a, self.gk)


def import_seal() -> Any:
    """seal-python's module. Raises ImportError with the install hint when it is missing."""
    try:
        import seal
    except ImportError:
        raise ImportError("peer: the SEAL comparison needs seal-python: pip install "
                          "'seal-python>=4.1' (or pip install 'veil[bench]')") from None
    return seal


class SealBackend:
    """Microsoft SEAL through seal-python, single-threaded (SEAL does not thread internally),
    with the same N, coefficient primes and t as Veil. Its own keys; BEHZ multiplication."""

    kind = "seal"
    device = "cpu"
    threads = None

    def __init__(self, plan: Plan, plain_modulus: int, coeff_modulus: Sequence[int]) -> None:
        seal = import_seal()
        self.seal = seal
        self.t = int(plain_modulus)
        self.label = "SEAL (seal-python, 1 thread)"
        parms = seal.EncryptionParameters(seal.scheme_type.bfv)
        parms.set_poly_modulus_degree(plan.layout.poly_modulus_degree)
        parms.set_coeff_modulus([seal.Modulus(int(q)) for q in coeff_modulus])
        parms.set_plain_modulus(self.t)
        self.context = seal.SEALContext(parms)
        if not self.context.parameters_set():
            raise ValueError(f"SEAL rejected the parameters: "
                             f"{self.context.parameter_error_message()}")
        t0 = time.perf_counter()
        kg = seal.KeyGenerator(self.context)
        gk = seal.GaloisKeys()
        kg.create_galois_keys(list(plan.galois_steps) + [0], gk)  # step 0: the column rotation
        rk = kg.create_relin_keys()
        self.encryptor = seal.Encryptor(self.context, kg.create_public_key())
        self.keygen_s = time.perf_counter() - t0
        self.encoder = seal.BatchEncoder(self.context)
        self.decryptor = seal.Decryptor(self.context, kg.secret_key())
        self.ops = SealOps(seal, self.context, rk, gk)

    def __repr__(self) -> str:
        return f"veil.apps.demo_xgboost.SealBackend(label={self.label!r}, plain_modulus={self.t})"

    def encrypt(self, values: np.ndarray):
        return self.encryptor.encrypt(self.encoder.encode(np.asarray(values, dtype=np.int64)))

    def decrypt(self, ct) -> np.ndarray:
        return _center(self.encoder.decode(self.decryptor.decrypt(ct)), self.t)

    def noise_budget(self, ct) -> int:
        return int(self.decryptor.invariant_noise_budget(ct))

    def sync(self) -> None:
        pass


# ---- running one backend -------------------------------------------------------------------------
def run_backend(backend: Any, plan: Plan, batches: list[list[np.ndarray]], n_samples: int,
                runs: int = RUNS, warmup: bool = False) -> dict[str, Any]:
    """Encrypts, evaluates (``runs`` times, median) and decrypts on one backend.

    Returns a dict with ``scores`` ((n_samples,) int64), ``counts`` (operations of one
    evaluation of all batches), ``times_s`` (keys: encode_model, encrypt, evaluate, decrypt;
    medians in seconds), ``noise_budget_bits`` and ``result`` (the last result ciphertexts).

    Raises:
        ValueError: runs outside 1..1000.
        RuntimeError: the operation counts differ between runs.
    """
    if not isinstance(runs, (int, np.integer)) or not 1 <= runs <= 1000:
        raise ValueError(f"runs: expected an integer in 1..1000, got {runs!r}")
    before = _core.num_threads()
    if backend.threads is not None:
        _core.set_num_threads(backend.threads)
    try:
        t0 = time.perf_counter()
        plains = encode_plan(plan, backend.ops)
        backend.sync()
        t_model = time.perf_counter() - t0
        t_enc, t_eval, t_dec = [], [], []
        counts: Counter[str] | None = None
        results: list[Any] = []
        slots: list[np.ndarray] = []
        for rep in range(runs + (1 if warmup else 0)):
            t0 = time.perf_counter()
            cts = [[backend.encrypt(v) for v in batch] for batch in batches]
            backend.sync()
            t1 = time.perf_counter()
            counter = CountingOps(backend.ops)
            results = [evaluate(counter, plan, plains, batch) for batch in cts]
            backend.sync()
            t2 = time.perf_counter()
            slots = [backend.decrypt(r) for r in results]
            t3 = time.perf_counter()
            if counts is not None and counter.counts != counts:
                raise RuntimeError("evaluate: operation counts changed between runs")
            counts = counter.counts
            if warmup and rep == 0:
                continue
            t_enc.append(t1 - t0)
            t_eval.append(t2 - t1)
            t_dec.append(t3 - t2)
        noise = min(backend.noise_budget(r) for r in results)
    finally:
        _core.set_num_threads(before)
    assert counts is not None
    return {
        "label": backend.label,
        "kind": backend.kind,
        "device": backend.device,
        "threads": _threads_label(backend),
        "scores": decode_scores(slots, n_samples, plan.layout),
        "counts": dict(counts),
        "times_s": {
            "encode_model": t_model,
            "encrypt": float(np.median(t_enc)),
            "evaluate": float(np.median(t_eval)),
            "decrypt": float(np.median(t_dec)),
        },
        "runs": runs,
        "noise_budget_bits": noise,
        "result": results,
    }


def _threads_label(backend: Any) -> str:
    if backend.kind == "seal":
        return "1"
    if backend.device.startswith("cuda"):
        return "-"
    if backend.threads is None:
        return str(_core.num_threads())
    before = _core.num_threads()
    _core.set_num_threads(backend.threads)
    n = _core.num_threads()
    _core.set_num_threads(before)
    return str(n)


# ---- the demo ---------------------------------------------------------------------------------
@dataclass
class Prepared:
    """Everything plaintext: data, models, layout, plan, plain modulus (see :func:`prepare`)."""

    grid: Grid
    xq_train: np.ndarray
    xq_test: np.ndarray
    y_test: np.ndarray
    forest: Forest
    model: QuantizedForest
    layout: Layout
    plan: Plan
    plain_modulus: int
    q_scores: np.ndarray
    float_margins: np.ndarray
    reference_accuracy: float | None


def prepare(
    n_trees: int = N_TREES,
    depth: int = MAX_DEPTH,
    learning_rate: float = LEARNING_RATE,
    grid: Grid | None = None,
    leaf_bits: int = LEAF_BITS,
    poly_modulus_degree: int = POLY_MODULUS_DEGREE,
    block: int = BLOCK,
    levels_per_ciphertext: int = 0,
    n_test: int | None = None,
    reference: bool = True,
) -> Prepared:
    """Loads the data, trains and quantizes the model, and compiles the server's plan.

    ``n_test`` keeps the first n test samples (tests); ``reference`` also trains XGBoost on
    the unquantized features (only its accuracy is reported).

    Raises:
        ImportError: scikit-learn or xgboost missing. ValueError: bad sizes.
    """
    grid = grid or Grid()
    data = load_data()
    x_test, y_test = data.x_test, data.y_test
    if n_test is not None:
        if not 1 <= int(n_test) <= len(y_test):
            raise ValueError(f"n_test: expected 1..{len(y_test)}, got {n_test}")
        x_test, y_test = x_test[:n_test], y_test[:n_test]
    xq_train, xq_test = grid.quantize(data.x_train), grid.quantize(x_test)
    forest = train_forest(xq_train.astype(np.float64), data.y_train, n_trees, depth,
                          learning_rate)
    model = quantize_forest(forest, grid.levels, leaf_bits)
    layout = Layout(poly_modulus_degree, block, grid.levels, xq_train.shape[1],
                    levels_per_ciphertext)
    plan = compile_plan(model, layout)
    t_mod = choose_plain_modulus(model.score_bound(), poly_modulus_degree)
    plan.plain_modulus = t_mod
    ref_acc = None
    if reference:
        ref = train_forest(data.x_train, data.y_train, n_trees, depth, learning_rate)
        ref_acc = float(np.mean((ref.margins(x_test) > 0) == y_test))
    return Prepared(grid, xq_train, xq_test, y_test, forest, model, layout, plan, t_mod,
                    model.scores(xq_test), forest.margins(xq_test.astype(np.float64)), ref_acc)


def plan_backends(prep: Prepared, device: str | None, peer: str, seed: int | None
                  ) -> list[Any]:
    """The backends to run: without a peer, Veil on ``device``. With ``peer="seal"``: SEAL
    (1 thread), Veil CPU 1 thread and all threads, and Veil on the GPU when ``device`` is
    auto/cuda and one is present.

    Raises:
        ValueError: unknown peer. ImportError: seal-python missing for ``peer="seal"``.
    """
    if peer not in ("none", "seal"):
        raise ValueError(f"peer: expected 'none' or 'seal', got {peer!r}")
    dev = resolve_device(device)
    plan, t = prep.plan, prep.plain_modulus
    if peer == "none":
        return [VeilBackend(plan, t, dev, seed, label=f"Veil {_backend_name(dev)}")]
    import_seal()
    out: list[Any] = []
    all_threads = _core.num_threads()
    out.append(VeilBackend(plan, t, "cpu", seed, threads=1, label="Veil CPU, 1 thread"))
    if all_threads > 1:
        out.append(VeilBackend(plan, t, "cpu", seed, threads=all_threads,
                               label=f"Veil CPU, {all_threads} threads"))
    if dev.startswith("cuda"):
        out.append(VeilBackend(plan, t, dev, seed, label=f"Veil {_backend_name(dev)}"))
    primes = list(out[0].client.context.params.coeff_modulus)
    out.insert(0, SealBackend(plan, t, primes))
    return out


def run(
    device: str | None = "auto",
    seed: int | None = None,
    peer: str = "none",
    runs: int = RUNS,
    verbose: bool = True,
    prep: Prepared | None = None,
) -> dict[str, Any]:
    """Runs the encrypted XGBoost demo and returns its numbers.

    Args:
        device: ``"auto"`` (GPU when present), ``"cpu"``, ``"cuda"`` or ``"cuda:k"``.
        seed: fixes Veil's key and encryption randomness; None: OS entropy (SEAL always
            draws its own).
        peer: ``"none"`` (Veil on ``device``) or ``"seal"`` (like Table 6 of Özcan et al. 2023:
            SEAL 1 thread, Veil CPU 1 thread and all threads, Veil GPU when present).
        runs: timed evaluations per backend (median; GPUs get one more, untimed, first).
        prep: a :func:`prepare` result (default: the demo's model, all 143 test samples).

    Returns:
        dict with ``n_test``, ``params``, ``layout``, ``model`` (shape facts),
        ``accuracy`` (encrypted), ``float_accuracy`` (XGBoost on the grid, float leaves),
        ``reference_accuracy`` (XGBoost on unquantized features), ``quantized_accuracy``,
        ``float_agreement`` (quantized vs float decisions), ``agreement`` (encrypted vs
        quantized decisions, 0..1), ``exact`` (every backend's decrypted scores == the
        plaintext integer scores), ``backends_identical``, ``counts`` (operations),
        ``predicted_counts``, ``backends`` (per backend: label, times_s, speedup vs SEAL,
        noise budget), ``score_bound``, ``max_abs_score``.

    Raises:
        ValueError: bad device/peer/runs. ImportError: xgboost, scikit-learn or (peer) seal.
        RuntimeError: CUDA requested but unavailable; operation counts that differ between
            backends.
    """
    if not isinstance(runs, (int, np.integer)) or not 1 <= runs <= 1000:
        raise ValueError(f"runs: expected an integer in 1..1000, got {runs!r}")
    if peer not in ("none", "seal"):
        raise ValueError(f"peer: expected 'none' or 'seal', got {peer!r}")
    t_all = time.perf_counter()
    prep = prep or prepare()
    plan = prep.plan
    n = len(prep.y_test)
    batches = encode_inputs(prep.xq_test, prep.layout)
    backends = plan_backends(prep, device, peer, seed)
    results = []
    for be in backends:
        r = run_backend(be, plan, batches, n, runs, warmup=be.device.startswith("cuda"))
        r["times_s"]["keygen"] = be.keygen_s
        results.append(r)
    q = prep.q_scores
    exact = all(np.array_equal(r["scores"], q) for r in results)
    identical = all(np.array_equal(r["scores"], results[0]["scores"]) for r in results)
    counts0 = results[0]["counts"]
    if any(r["counts"] != counts0 for r in results):
        raise RuntimeError("evaluate: backends ran different operation counts")
    # Without a peer the only backend; with SEAL the last Veil (GPU, else all CPU threads).
    primary = results[-1]
    he = primary["scores"]
    he_pred = (he > 0).astype(np.int64)
    q_pred = (q > 0).astype(np.int64)
    f_pred = (prep.float_margins > 0).astype(np.int64)
    seal_eval = next((r["times_s"]["evaluate"] for r in results if r["kind"] == "seal"), None)
    vb = next(b for b in backends if b.kind == "veil")
    model = prep.model
    out: dict[str, Any] = {
        "n_test": n,
        "device": primary["device"],
        "backend": primary["label"],
        "params": vb.params(),
        "layout": {
            "block": prep.layout.block,
            "levels": prep.layout.levels,
            "levels_per_ciphertext": prep.layout.levels_per_ciphertext,
            "inputs_per_batch": prep.layout.n_inputs,
            "batches": len(batches),
            "groups": len(plan.groups),
            "trees_per_ciphertext": prep.layout.n_blocks,
            "grid": (prep.grid.lo, prep.grid.step, prep.grid.levels),
        },
        "model": {"n_trees": model.n_trees, "depth": model.depth,
                  "leaf_bits": model.leaf_bits, "mult_depth": max(model.depth - 1, 0)},
        "accuracy": float(np.mean(he_pred == prep.y_test)),
        "float_accuracy": float(np.mean(f_pred == prep.y_test)),
        "reference_accuracy": prep.reference_accuracy,
        "quantized_accuracy": float(np.mean(q_pred == prep.y_test)),
        "float_agreement": float(np.mean(q_pred == f_pred)),
        "agreement": float(np.mean(he_pred == q_pred)),
        "exact": bool(exact),
        "backends_identical": bool(identical),
        "mismatches": int(np.count_nonzero(he != q)),
        "max_abs_score": int(np.abs(q).max()),
        "score_bound": model.score_bound(),
        "counts": counts0,
        "predicted_counts": predicted_counts(plan, len(batches)),
        "noise_budget_bits": min(r["noise_budget_bits"] for r in results),
        "backends": [
            {
                "label": r["label"],
                "kind": r["kind"],
                "device": r["device"],
                "threads": r["threads"],
                "times_s": r["times_s"],
                "runs": r["runs"],
                "noise_budget_bits": r["noise_budget_bits"],
                "exact": bool(np.array_equal(r["scores"], q)),
                "speedup_vs_seal": (seal_eval / r["times_s"]["evaluate"]
                                    if seal_eval and r["times_s"]["evaluate"] > 0 else None),
            }
            for r in results
        ],
        "peer": peer,
    }
    out["samples_per_s"] = n / primary["times_s"]["evaluate"]
    out["total_s"] = time.perf_counter() - t_all
    out["_results"] = results  # ciphertexts, scores (tests)
    if verbose:
        print_report(out)
    return out


def _fmt_s(s: float) -> str:
    return f"{s * 1000:.1f} ms" if s < 1 else f"{s:.2f} s"


def print_report(r: dict[str, Any]) -> None:
    """Prints the demo's results as rich tables (plain text when not a terminal)."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    p, lay, m = r["params"], r["layout"], r["model"]
    console.print(
        "[bold]Veil demo: encrypted tumour classification with XGBoost[/bold] "
        "(Breast Cancer Wisconsin, gradient-boosted trees, BFV; the application of Özcan et al., "
        "IEEE Access 2023)"
    )
    setup = Table(show_header=False, box=None, pad_edge=False)
    setup.add_column(style="cyan")
    setup.add_column()
    sec = f"{p['security']}-bit (HE Standard)" if p["security"] else "not checked"
    setup.add_row("backend", r["backend"])
    setup.add_row(
        "parameters",
        f"N = {p['poly_modulus_degree']}, log2 Q = {p['log2_qp']} "
        f"({len(p['coeff_modulus_bits'])} primes: {p['coeff_modulus_bits']}, "
        f"{p['special_primes']} special), t = {p['plain_modulus']} "
        f"({int(p['plain_modulus']).bit_length()} bits); security {sec}",
    )
    setup.add_row(
        "model",
        f"XGBoost, {m['n_trees']} trees of depth {m['depth']} on a public {lay['grid'][2]}-level "
        f"grid (step {lay['grid'][1]} sd from {lay['grid'][0]}); leaves at 2^{m['leaf_bits']}; "
        f"multiplicative depth {m['mult_depth']}",
    )
    setup.add_row(
        "encoding",
        f"unary levels, {lay['levels_per_ciphertext']} per ciphertext: {lay['inputs_per_batch']} "
        f"ciphertexts per batch of {lay['block']} samples ({lay['batches']} batch(es) for "
        f"{r['n_test']} samples); {lay['trees_per_ciphertext']} trees per ciphertext "
        f"({lay['groups']} group(s))",
    )
    setup.add_row("score range",
                  f"max |score| = {r['max_abs_score']}, worst-case bound = {r['score_bound']} < t/2")
    console.print(setup)

    res = Table(title="Results", title_justify="left")
    res.add_column("metric")
    res.add_column("value", justify="right")
    res.add_row("accuracy, encrypted pipeline", f"{100 * r['accuracy']:.2f} %")
    if r["reference_accuracy"] is not None:
        res.add_row("accuracy, float XGBoost on unquantized features (reference)",
                    f"{100 * r['reference_accuracy']:.2f} %")
    res.add_row("accuracy, float XGBoost on the grid (float leaves)",
                f"{100 * r['float_accuracy']:.2f} %")
    res.add_row("accuracy, quantized integer model", f"{100 * r['quantized_accuracy']:.2f} %")
    res.add_row("quantized vs float decisions", f"{100 * r['float_agreement']:.2f} %")
    res.add_row("agreement with quantized plaintext", f"{100 * r['agreement']:.2f} %")
    res.add_row(
        "decrypted scores == plaintext integer scores",
        "[green]yes (exact)[/green]" if r["exact"] else f"[red]NO ({r['mismatches']} differ)[/red]",
    )
    if len(r["backends"]) > 1:
        res.add_row("every backend gives the same integer scores",
                    "[green]yes[/green]" if r["backends_identical"] else "[red]NO[/red]")
    res.add_row("noise budget left (smallest)", f"{r['noise_budget_bits']} bits")
    console.print(res)

    ops = Table(title=f"Operations (server, {r['n_test']} samples)", title_justify="left")
    ops.add_column("operation")
    ops.add_column("this run", justify="right")
    ops.add_column("per sample", justify="right")
    ops.add_column(f"Özcan et al. ({SEED_SAMPLES} samples)", justify="right")
    ops.add_column("theirs per sample", justify="right")
    names = {
        "multiply": "ct x ct multiplications",
        "relinearize": "relinearizations",
        "rotate": "rotations",
        "sub": "subtractions",
        "multiply_plain": "plaintext multiplications",
        "add": "additions",
        "add_plain": "plaintext additions",
        "negate": "negations",
    }
    n = r["n_test"]
    for k, label in names.items():
        c = r["counts"][k]
        seed_c = SEED_OP_COUNTS.get(k)
        ops.add_row(label, str(c), f"{c / n:.2f}",
                    str(seed_c) if seed_c is not None else "-",
                    f"{seed_c / SEED_SAMPLES:.2f}" if seed_c is not None else "-")
    console.print(ops)

    runs = r["backends"][0]["runs"]
    tim = Table(title=f"Wall time (median of {runs} run{'s' if runs > 1 else ''})",
                title_justify="left")
    tim.add_column("backend")
    for col in ("keygen", "encode model (server, once)", "encrypt (client)", "evaluate (server)",
                "decrypt (client)"):
        tim.add_column(col, justify="right")
    for b in r["backends"]:
        ts = b["times_s"]
        tim.add_row(b["label"], _fmt_s(ts["keygen"]), _fmt_s(ts["encode_model"]),
                    _fmt_s(ts["encrypt"]), _fmt_s(ts["evaluate"]), _fmt_s(ts["decrypt"]))
    console.print(tim)
    console.print(f"encrypted evaluation throughput: {r['samples_per_s']:.0f} samples/s "
                  f"({r['backend']}); whole demo incl. training {_fmt_s(r['total_s'])}")

    if r["peer"] == "seal":
        t6 = Table(title="Like Table 6 of Özcan et al. 2023 (N = 2^13, same circuit and samples)",
                   title_justify="left")
        t6.add_column("implementation")
        t6.add_column("threads", justify="right")
        t6.add_column("time per run", justify="right")
        t6.add_column("speed-up vs SEAL 1 thread", justify="right")
        for b in r["backends"]:
            sp = b["speedup_vs_seal"]
            t6.add_row(b["label"], b["threads"], _fmt_s(b["times_s"]["evaluate"]),
                       f"{sp:.2f}x" if sp else "-")
        s6 = SEED_TABLE6
        t6.add_row(f"Özcan et al.: SEAL ({SEED_SAMPLES} samples, their circuit)", "1",
                   _fmt_s(s6["seal_1t_s"]), "1.00x")
        t6.add_row("Özcan et al.: SEAL", "16", _fmt_s(s6["seal_16t_s"]),
                   f"{s6['seal_1t_s'] / s6['seal_16t_s']:.2f}x")
        t6.add_row(f"Özcan et al.: GPU ({s6['gpu_name']})", "-", _fmt_s(s6["gpu_s"]),
                   f"{s6['seal_1t_s'] / s6['gpu_s']:.2f}x")
        console.print(t6)


def main() -> int:
    """``python -m veil.apps.demo_xgboost``: default device; exit status 1 unless results are
    exact."""
    r = run()
    return 0 if r["exact"] and r["agreement"] == 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "CountingOps",
    "Forest",
    "Grid",
    "Layout",
    "Plan",
    "QuantizedForest",
    "SealBackend",
    "SealOps",
    "ServerOps",
    "VeilBackend",
    "VeilOps",
    "compile_plan",
    "decode_scores",
    "encode_inputs",
    "encode_plan",
    "evaluate",
    "forest_from_booster",
    "forest_from_model",
    "predicted_counts",
    "prepare",
    "quantize_forest",
    "run",
    "run_backend",
    "train_forest",
]
