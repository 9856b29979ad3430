"""Encrypted tumour classification: logistic regression on encrypted Breast Cancer data.

The client holds the secret key and patient data; the server holds a trained model and only the
public evaluation keys. The model is logistic regression on the 30 standardized features of the
Breast Cancer Wisconsin (Diagnostic) data set *and their squares*, so the server's work includes
one ciphertext x ciphertext product (``x * x``, multiply + relinearize) per ciphertext::

    score_i = sum_j w_j x_ij + sum_j v_j x_ij^2 + b,        malignant/benign = score_i > 0

Integers only: features, weights and bias are fixed-point numbers with scales

    x_q = round(clip(x) * 2^s_x)           (scale 2^s_x)
    w_q = round(w * 2^(s_w + s_x))          (w_q x_q has scale 2^(2 s_x + s_w))
    v_q = round(v * 2^s_w)                  (v_q x_q^2 has scale 2^(2 s_x + s_w))
    b_q = round(b * 2^(2 s_x + s_w))

so the quantized score is an exact integer that BFV computes mod t; t is chosen larger than twice
the worst-case |score| over every input the client may send, which makes the decrypted score
equal the plaintext integer score *exactly*.

Packing: each sample takes a block of 32 slots (30 features + 2 zeros); a ciphertext of N = 8192
slots carries 256 samples. After the slot-wise products the server sums every block with
rotations by 16, 8, 4, 2, 1 (SEAL-style ``rotate_rows``; a row has N/2 slots and 32 divides N/2,
so no block straddles a row), leaving sample i's score in slot 32 i.

Data: scikit-learn's bundled copy of the UCI data set (569 samples, 30 features; no download).
Run it with ``veil demo`` or ``python -m veil.apps.demo``. The CKKS variant (real-valued scores
and a polynomial sigmoid under encryption) is :mod:`veil.apps.demo_ckks` (``veil demo --scheme
ckks``).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np

from .. import _core
from .._device import device_info, resolve_device
from .._integer import BFVContext, Ciphertext, bfv

#: Slots per sample: 30 features padded to a power of two so that blocks tile a row of N/2 slots.
BLOCK = 32
#: Number of input features of the data set.
N_FEATURES = 30
#: Ring degree N of the demo's BFV parameters (SEAL's default 218-bit coefficient modulus).
POLY_MODULUS_DEGREE = 8192
#: Standardized features are clipped to [-CLIP, CLIP] (standard deviations) before quantizing.
CLIP = 6.0
#: Fractional bits of the features (x_q = round(x * 2^S_X)).
S_X = 4
#: Fractional bits of the weights (v_q = round(v * 2^S_W); linear weights get S_W + S_X).
S_W = 8
#: Inverse regularization strength of the logistic regression.
C_REG = 0.3
#: Test fraction and split seed (fixed: the demo is reproducible).
TEST_SIZE = 0.25
SPLIT_SEED = 0


# ---- data and model (plaintext, pure functions) -------------------------------------------------
@dataclass
class Dataset:
    """Standardized and clipped features (float64, in standard deviations) and 0/1 labels.

    Label 1 is *malignant* (scikit-learn's target 0), so a positive score flags a tumour.
    """

    x_train: np.ndarray  # (n_train, 30)
    x_test: np.ndarray  # (n_test, 30)
    y_train: np.ndarray  # (n_train,) int64
    y_test: np.ndarray  # (n_test,) int64


def load_data(
    test_size: float = TEST_SIZE, random_state: int = SPLIT_SEED, clip: float = CLIP
) -> Dataset:
    """Loads the data, makes a stratified split, standardizes (fit on train) and clips.

    Raises:
        ImportError: scikit-learn is not installed (``pip install veil[demo]``).
    """
    from sklearn.datasets import load_breast_cancer
    from sklearn.model_selection import train_test_split

    x, y = load_breast_cancer(return_X_y=True)
    y = (y == 0).astype(np.int64)  # 1 = malignant
    x_tr, x_te, y_tr, y_te = train_test_split(
        x, y, test_size=test_size, stratify=y, random_state=random_state
    )
    x_tr, x_te = standardize(x_tr, x_te, clip)
    return Dataset(x_tr, x_te, y_tr, y_te)


def standardize(
    x_train: np.ndarray, x_test: np.ndarray, clip: float = CLIP
) -> tuple[np.ndarray, np.ndarray]:
    """Zero mean / unit variance per feature from the *training* rows only, then clip to ±clip."""
    mean = x_train.mean(axis=0)
    std = x_train.std(axis=0)
    std = np.where(std > 0, std, 1.0)
    return (
        np.clip((x_train - mean) / std, -clip, clip),
        np.clip((x_test - mean) / std, -clip, clip),
    )


def with_squares(x: np.ndarray) -> np.ndarray:
    """The model's 60 inputs: features followed by their squares, shape (n, 2 d)."""
    return np.hstack([x, x * x])


@dataclass
class FloatModel:
    """Logistic regression on [x, x^2]: score = x @ w + (x^2) @ v + b (float64)."""

    w: np.ndarray  # (30,) linear weights
    v: np.ndarray  # (30,) weights of the squares
    b: float

    def scores(self, x: np.ndarray) -> np.ndarray:
        """Decision values (log-odds of malignancy) for standardized features x, shape (n,)."""
        return x @ self.w + (x * x) @ self.v + self.b


def train_model(x_train: np.ndarray, y_train: np.ndarray, c: float = C_REG) -> FloatModel:
    """Fits L2-regularized logistic regression (scikit-learn, lbfgs) on [x, x^2]."""
    from sklearn.linear_model import LogisticRegression

    clf = LogisticRegression(C=c, max_iter=5000).fit(with_squares(x_train), y_train)
    coef = clf.coef_[0]
    d = x_train.shape[1]
    return FloatModel(w=coef[:d].copy(), v=coef[d:].copy(), b=float(clf.intercept_[0]))


@dataclass
class QuantizedModel:
    """Integer model: score = x_q @ w + (x_q^2) @ v + b, every term at scale 2^(2 s_x + s_w)."""

    w: np.ndarray  # (30,) int64, scale 2^(s_w + s_x)
    v: np.ndarray  # (30,) int64, scale 2^s_w
    b: int  # scale 2^(2 s_x + s_w)
    s_x: int
    s_w: int
    x_max: int  # largest |x_q| a client may send (= round(clip * 2^s_x))

    def scores(self, xq: np.ndarray) -> np.ndarray:
        """Exact integer scores for quantized features xq (int64, shape (n, 30)) -> (n,) int64."""
        xq = np.asarray(xq, dtype=np.int64)
        return xq @ self.w + (xq * xq) @ self.v + np.int64(self.b)

    def score_bound(self) -> int:
        """Worst-case |score| over all inputs with |x_q| <= x_max (triangle inequality; exact int)."""
        xm = int(self.x_max)
        lin = sum(abs(int(a)) for a in self.w) * xm
        sq = sum(abs(int(a)) for a in self.v) * xm * xm
        return lin + sq + abs(int(self.b))


def quantize_features(x: np.ndarray, s_x: int = S_X, clip: float = CLIP) -> np.ndarray:
    """round(clip(x) * 2^s_x) as int64: integers in [-x_max, x_max] with x_max = round(clip 2^s_x)."""
    x_max = round(clip * 2**s_x)
    return np.clip(np.round(np.asarray(x) * 2**s_x), -x_max, x_max).astype(np.int64)


def quantize_model(
    model: FloatModel, s_x: int = S_X, s_w: int = S_W, clip: float = CLIP
) -> QuantizedModel:
    """Fixed-point model whose linear and square terms and bias share scale 2^(2 s_x + s_w)."""
    return QuantizedModel(
        w=np.round(model.w * 2 ** (s_w + s_x)).astype(np.int64),
        v=np.round(model.v * 2**s_w).astype(np.int64),
        b=round(model.b * 2 ** (2 * s_x + s_w)),
        s_x=s_x,
        s_w=s_w,
        x_max=round(clip * 2**s_x),
    )


# ---- plain modulus ------------------------------------------------------------------------------
def check_plain_modulus(bound: int, plain_modulus: int) -> None:
    """Raises ValueError unless every integer in [-bound, bound] is representable mod t.

    BFV decodes slots centered into (-t/2, t/2], so |score| <= bound needs 2 bound < t.
    """
    if bound < 0:
        raise ValueError(f"bound: expected a non-negative integer, got {bound}")
    if 2 * bound >= plain_modulus:
        raise ValueError(
            f"plain_modulus: {plain_modulus} cannot hold scores up to ±{bound} "
            f"(needs t > 2 * bound = {2 * bound})"
        )


def choose_plain_modulus(bound: int, poly_modulus_degree: int = POLY_MODULUS_DEGREE) -> int:
    """Smallest-bit-size batching prime t (t = 1 mod 2N, SEAL's PlainModulus.Batching) with t > 2 bound."""
    bits = max(17, (2 * bound).bit_length() + 1)
    while bits <= 60:
        t = int(_core.PlainModulus.batching(poly_modulus_degree, bits))
        if t > 2 * bound:
            check_plain_modulus(bound, t)
            return t
        bits += 1
    raise ValueError(f"bound: no batching plain modulus of at most 60 bits exceeds 2 * {bound}")


# ---- packing ------------------------------------------------------------------------------------
def samples_per_ciphertext(slot_count: int, block: int = BLOCK) -> int:
    """How many BLOCK-slot samples fit in one ciphertext of slot_count slots."""
    if block <= 0 or block & (block - 1):
        raise ValueError(f"block: expected a power of two, got {block}")
    if slot_count % (2 * block):
        raise ValueError(f"slot_count: expected a multiple of 2 * block = {2 * block}, got {slot_count}")
    return slot_count // block


def pack_features(xq: np.ndarray, slot_count: int, block: int = BLOCK) -> list[np.ndarray]:
    """Lays quantized samples out as slot vectors: sample k of a ciphertext in slots [k B, k B + d).

    Args:
        xq: (n, d) int64 with d <= block.
    Returns:
        ceil(n / (slot_count / block)) int64 arrays of slot_count values; pads are zero.
    """
    xq = np.asarray(xq, dtype=np.int64)
    n, d = xq.shape
    if d > block:
        raise ValueError(f"xq: expected at most block = {block} features per sample, got {d}")
    per = samples_per_ciphertext(slot_count, block)
    out = []
    for start in range(0, max(n, 1), per):
        chunk = xq[start : start + per]
        slots = np.zeros((per, block), dtype=np.int64)
        slots[: len(chunk), :d] = chunk
        out.append(slots.reshape(-1))
    return out


def tile_vector(values: np.ndarray, slot_count: int, block: int = BLOCK) -> np.ndarray:
    """Repeats a length-d vector (d <= block, zero-padded to block) over all slot_count slots."""
    values = np.asarray(values, dtype=np.int64)
    if values.size > block:
        raise ValueError(f"values: expected at most {block} entries, got {values.size}")
    row = np.zeros(block, dtype=np.int64)
    row[: values.size] = values
    return np.tile(row, samples_per_ciphertext(slot_count, block))


def bias_vector(bias: int, slot_count: int, block: int = BLOCK) -> np.ndarray:
    """bias in the first slot of every block (where the block sum lands), zero elsewhere."""
    out = np.zeros(slot_count, dtype=np.int64)
    out[::block] = bias
    return out


def block_sum_steps(block: int = BLOCK) -> list[int]:
    """Left-rotation steps that sum each block into its first slot: block/2, ..., 2, 1."""
    steps = []
    s = block // 2
    while s >= 1:
        steps.append(s)
        s //= 2
    return steps


def block_sum_plain(slots: np.ndarray, block: int = BLOCK) -> np.ndarray:
    """Plaintext model of the rotate-and-add block sum on a 2 x (N/2) slot matrix (SEAL layout)."""
    slots = np.asarray(slots, dtype=np.int64)
    rows = slots.reshape(2, -1)
    acc = rows.copy()
    for step in block_sum_steps(block):
        acc = acc + np.roll(acc, -step, axis=1)
    return acc.reshape(-1)


def unpack_scores(slot_vectors: list[np.ndarray], n_samples: int, block: int = BLOCK) -> np.ndarray:
    """Reads slot k * block of each decrypted vector: the first n_samples scores, int64."""
    flat = [np.asarray(v, dtype=np.int64)[::block] for v in slot_vectors]
    scores = np.concatenate(flat) if flat else np.zeros(0, dtype=np.int64)
    if scores.size < n_samples:
        raise ValueError(f"n_samples: expected at most {scores.size}, got {n_samples}")
    return scores[:n_samples]


# ---- the encrypted pipeline ---------------------------------------------------------------------
def server_evaluate(
    server: BFVContext,
    cts: list[Ciphertext],
    w_tiled: np.ndarray,
    v_tiled: np.ndarray,
    bias_slots: np.ndarray,
    block: int = BLOCK,
) -> list[Ciphertext]:
    """What the server computes, holding only public, relinearization and Galois keys.

    For each ciphertext x: sq = x * x (multiply + relinearize); p = x * W + sq * V
    (multiply_plain); block sums by rotate_rows(16, 8, 4, 2, 1) + add; + bias (add_plain).
    """
    out = []
    for ct in cts:
        sq = ct * ct  # ciphertext x ciphertext: multiply + relinearize
        acc = ct * w_tiled + sq * v_tiled  # multiply_plain (numpy arrays are batch-encoded)
        for step in block_sum_steps(block):
            acc = acc + acc.rotate_rows(step)
        out.append(acc + bias_slots)  # add_plain
    return out


def _backend_name(device: str) -> str:
    if device == "cpu":
        return f"CPU (OpenMP, {_core.num_threads()} threads)"
    info = device_info()
    idx = int(device.split(":")[1]) if ":" in device else 0
    gpus = info.get("gpus", [])
    name = gpus[idx]["name"] if idx < len(gpus) else "GPU"
    return f"CUDA ({name})"


def _sync(device: str) -> None:
    _core.synchronize(device)


def run(
    device: str | None = "auto",
    seed: int | None = None,
    scheme: str = "bfv",
    verbose: bool = True,
) -> dict[str, Any]:
    """Runs the whole demo and returns its numbers.

    Args:
        device: ``"auto"`` (GPU when present), ``"cpu"``, ``"cuda"`` or ``"cuda:k"``.
        seed: fixes key and encryption randomness (reproducible runs); None: OS entropy.
        scheme: ``"bfv"`` (exact integer scores, this module) or ``"ckks"`` (real-valued scores
            and a polynomial sigmoid: :func:`veil.apps.demo_ckks.run`, whose keys the result has).
        verbose: print the report (rich tables).

    Returns:
        dict with keys ``device``, ``backend``, ``params`` (BFVContext.describe()), ``n_test``,
        ``accuracy`` (encrypted pipeline vs true labels), ``float_accuracy``,
        ``quantized_accuracy``, ``agreement`` (encrypted vs plaintext quantized decisions, 0..1),
        ``exact`` (decrypted scores == plaintext integer scores), ``max_abs_score``,
        ``score_bound``, ``times_s`` (keygen, encrypt, evaluate, decrypt; seconds),
        ``samples_per_s``, ``noise_budget_bits``, ``n_ciphertexts``.

    Raises:
        ValueError: unknown scheme or device string. RuntimeError: CUDA requested but unavailable.
    """
    if scheme == "ckks":
        from . import demo_ckks

        return demo_ckks.run(device=device, seed=seed, verbose=verbose)
    if scheme != "bfv":
        raise ValueError(f"scheme: the demo supports 'bfv' and 'ckks', got {scheme!r}")
    t_all = time.perf_counter()
    dev = resolve_device(device)

    # Plaintext side: data, float model, quantized model.
    data = load_data()
    model = train_model(data.x_train, data.y_train)
    qmodel = quantize_model(model)
    xq = quantize_features(data.x_test)
    float_pred = (model.scores(data.x_test) > 0).astype(np.int64)
    q_scores = qmodel.scores(xq)
    q_pred = (q_scores > 0).astype(np.int64)
    bound = qmodel.score_bound()
    if int(np.abs(q_scores).max()) > bound:  # cannot happen: the bound is a worst case
        raise RuntimeError(f"score bound {bound} does not cover the data")
    t_mod = choose_plain_modulus(bound, POLY_MODULUS_DEGREE)
    check_plain_modulus(bound, t_mod)

    # Client: keys (context creation), packing, encryption with the public key.
    t0 = time.perf_counter()
    client = bfv(
        poly_modulus_degree=POLY_MODULUS_DEGREE,
        plain_modulus=t_mod,
        device=dev,
        seed=seed,
        galois_steps=block_sum_steps(),
    )
    _sync(dev)
    t_keygen = time.perf_counter() - t0
    server = client.public()
    slots = client.slot_count

    t0 = time.perf_counter()
    cts = [client.encrypt(v) for v in pack_features(xq, slots)]
    _sync(dev)
    t_encrypt = time.perf_counter() - t0

    # Server: no secret key.
    w_tiled = tile_vector(qmodel.w, slots)
    v_tiled = tile_vector(qmodel.v, slots)
    t0 = time.perf_counter()
    results = server_evaluate(server, cts, w_tiled, v_tiled, bias_vector(qmodel.b, slots))
    _sync(dev)
    t_eval = time.perf_counter() - t0

    # Client: decrypt, read slot 32 i, threshold.
    t0 = time.perf_counter()
    decrypted = [client.decrypt(r) for r in results]
    t_decrypt = time.perf_counter() - t0
    n_test = len(data.y_test)
    he_scores = unpack_scores(decrypted, n_test)
    he_pred = (he_scores > 0).astype(np.int64)
    noise = min(client.noise_budget(r) for r in results)

    exact = bool(np.array_equal(he_scores, q_scores))
    out: dict[str, Any] = {
        "device": dev,
        "backend": _backend_name(dev),
        "params": client.describe(),
        "n_test": n_test,
        "n_ciphertexts": len(cts),
        "samples_per_ciphertext": samples_per_ciphertext(slots),
        "accuracy": float(np.mean(he_pred == data.y_test)),
        "float_accuracy": float(np.mean(float_pred == data.y_test)),
        "quantized_accuracy": float(np.mean(q_pred == data.y_test)),
        "agreement": float(np.mean(he_pred == q_pred)),
        "float_agreement": float(np.mean(q_pred == float_pred)),
        "exact": exact,
        "mismatches": int(np.count_nonzero(he_scores != q_scores)),
        "max_abs_score": int(np.abs(q_scores).max()),
        "score_bound": bound,
        "noise_budget_bits": int(noise),
        "times_s": {
            "keygen": t_keygen,
            "encrypt": t_encrypt,
            "evaluate": t_eval,
            "decrypt": t_decrypt,
        },
        "samples_per_s": n_test / t_eval if t_eval > 0 else math.inf,
    }
    out["total_s"] = time.perf_counter() - t_all
    if verbose:
        print_report(out)
    return out


def print_report(r: dict[str, Any]) -> None:
    """Prints the demo's results as rich tables (plain text when not a terminal)."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    p = r["params"]
    console.print(
        "[bold]Veil demo: encrypted tumour classification[/bold] "
        "(Breast Cancer Wisconsin, logistic regression on x and x², BFV)"
    )
    setup = Table(show_header=False, box=None, pad_edge=False)
    setup.add_column(style="cyan")
    setup.add_column()
    sec = f"{p['security']}-bit (HE Standard)" if p["security"] else "not checked"
    setup.add_row("device", f"{r['device']}  [{r['backend']}]")
    setup.add_row(
        "parameters",
        f"N = {p['poly_modulus_degree']}, log2 Q = {p['log2_qp']} "
        f"({len(p['coeff_modulus_bits'])} primes: {p['coeff_modulus_bits']}, "
        f"{p['special_primes']} special), t = {p['plain_modulus']} "
        f"({int(p['plain_modulus']).bit_length()} bits), mul = {p['mul_method'].upper()}",
    )
    setup.add_row("security", sec)
    setup.add_row(
        "packing",
        f"{r['n_test']} test samples x {BLOCK} slots ({r['samples_per_ciphertext']} per "
        f"ciphertext): {r['n_ciphertexts']} ciphertext(s)",
    )
    setup.add_row(
        "score range",
        f"max |score| = {r['max_abs_score']}, worst-case bound = {r['score_bound']} < t/2",
    )
    console.print(setup)

    res = Table(title="Results", title_justify="left")
    res.add_column("metric")
    res.add_column("value", justify="right")
    res.add_row("accuracy, encrypted pipeline", f"{100 * r['accuracy']:.2f} %")
    res.add_row("accuracy, float model", f"{100 * r['float_accuracy']:.2f} %")
    res.add_row("accuracy, quantized plaintext model", f"{100 * r['quantized_accuracy']:.2f} %")
    res.add_row("agreement with quantized plaintext", f"{100 * r['agreement']:.2f} %")
    res.add_row(
        "decrypted scores == plaintext integer scores",
        "[green]yes (exact)[/green]" if r["exact"] else f"[red]NO ({r['mismatches']} differ)[/red]",
    )
    res.add_row("noise budget left", f"{r['noise_budget_bits']} bits")
    console.print(res)

    tim = Table(title="Wall time", title_justify="left")
    tim.add_column("step")
    tim.add_column("ms", justify="right")
    labels = {
        "keygen": "keygen (context, public/relin/Galois keys)",
        "encrypt": "encode + encrypt (client)",
        "evaluate": "evaluate (server: x², dot products, rotations)",
        "decrypt": "decrypt + decode (client)",
    }
    for k, label in labels.items():
        tim.add_row(label, f"{1000 * r['times_s'][k]:.1f}")
    tim.add_row("encrypted evaluation throughput", f"{r['samples_per_s']:.0f} samples/s")
    tim.add_row("whole demo incl. training", f"{1000 * r['total_s']:.0f}")
    console.print(tim)


def main() -> int:
    """``python -m veil.apps.demo``: runs on the default device; exit status 1 unless results are
    exact."""
    r = run()
    return 0 if r["exact"] and r["agreement"] == 1.0 else 1


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "BLOCK",
    "Dataset",
    "FloatModel",
    "QuantizedModel",
    "bias_vector",
    "block_sum_plain",
    "block_sum_steps",
    "check_plain_modulus",
    "choose_plain_modulus",
    "load_data",
    "pack_features",
    "quantize_features",
    "quantize_model",
    "run",
    "samples_per_ciphertext",
    "server_evaluate",
    "standardize",
    "tile_vector",
    "train_model",
    "unpack_scores",
    "with_squares",
]
