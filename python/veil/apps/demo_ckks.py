"""Encrypted tumour classification with CKKS: logistic regression *with its sigmoid* under encryption.

The same task as the BFV demo (:mod:`veil.apps.demo`: Breast Cancer Wisconsin, logistic regression
on the 30 standardized features and their squares), but with real numbers throughout. The client
encrypts its standardized features; the server, holding only public, relinearization and Galois
keys, computes every sample's malignancy *probability*::

    score_i = sum_j w_j x_ij + sum_j v_j x_ij^2 + b          (linear score, log-odds)
    p_i     = c0 + c1 score_i + c2 score_i^2 + c3 score_i^3   (polynomial sigmoid)

and the client decrypts p_i and thresholds it at 0.5. The sigmoid cannot be evaluated exactly
under encryption, so it is replaced by its degree-3 least-squares fit on [-R, R], R = 1.25 x the
largest |score| of the training set (a public fact of the model, as in HELR, Kim et al. 2018).
The server works with the normalized score u = s / R (1/R folded into the weights) and the
coefficients c_k R^k, which keeps every intermediate near 1 and the error small.
The plaintext reference for the encrypted result is the *same polynomial* applied to the float
score; the report also compares the decisions with the exact-sigmoid float model.

Packing is the BFV demo's: 32-slot blocks (30 features + 2 zeros), N/2 = 8192 CKKS slots carry
256 samples; slot-wise products with the tiled weights, then ``rotate_vector`` by 16, 8, 4, 2, 1
and add leave each block's sum in its first slot.

Levels and scales (N = 16384, primes [60, 40, 40, 40, 40 | 60], scale 2^40; q_l is the prime
that rescaling at level l drops). Every plaintext multiplier is encoded at the scale that makes
the rescaled product land exactly on the scale of the term it is added to, so no scale is ever
forced:

* level 4, scale D = 2^40: x (fresh ciphertext)
* level 3, scale A = D^2/q_4: x^2 = rescale(x * x); x*w = rescale(x * W), W at scale D
* level 2, scale A: (x^2)*v = rescale(x^2 * V), V at scale q_3; the block sums; + b -> score u
* level 1: u^2 = rescale(u * u); d3*u (scale of u^2)
* level 0: d3 u^3 = rescale(u^2 * d3 u); d2 u^2; d1 u (rescaled once, mod-switched once); + d0

Run it with ``veil demo --scheme ckks`` or ``python -m veil.apps.demo_ckks``.
"""

from __future__ import annotations

import math
import time
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._ckks import CKKSCiphertext, CKKSContext, ckks, precision
from .._device import resolve_device
from .demo import (
    BLOCK,
    FloatModel,
    _backend_name,
    _sync,
    block_sum_steps,
    load_data,
    samples_per_ciphertext,
    train_model,
)

#: Ring degree N (8192 slots; the 280-bit chain below needs N >= 16384 for 128-bit security).
POLY_MODULUS_DEGREE = 16384
#: Bit sizes of the primes: base prime, four rescaling primes (two for the score, two for the
#: cubic), one special prime for key switching (last).
COEFF_MODULUS_BITS = [60, 40, 40, 40, 40, 60]
#: Encoding scale 2^SCALE_BITS (equal to the rescaling primes' size, so scales stay near 2^40).
SCALE_BITS = 40
#: Degree of the least-squares polynomial that replaces the sigmoid.
SIGMOID_DEGREE = 3
#: The fit interval is [-R, R] with R = SIGMOID_MARGIN x max |training score|.
SIGMOID_MARGIN = 1.25
#: Points of the uniform least-squares grid on [-R, R].
FIT_POINTS = 2001
#: Decision threshold on the probability.
THRESHOLD = 0.5
#: Least acceptable agreement between encrypted and plaintext-polynomial decisions.
AGREEMENT_MIN = 0.99


# ---- plaintext model ----------------------------------------------------------------------------
def sigmoid(z: np.ndarray) -> np.ndarray:
    """The logistic function 1 / (1 + e^-z), element-wise, float64."""
    return 1.0 / (1.0 + np.exp(-np.asarray(z, dtype=np.float64)))


def fit_sigmoid(radius: float, degree: int = SIGMOID_DEGREE, points: int = FIT_POINTS) -> np.ndarray:
    """Least-squares polynomial fit of the sigmoid on a uniform grid over [-radius, radius].

    Returns the coefficients c_0..c_degree (lowest degree first, float64). Raises ValueError for
    a non-positive radius, a degree outside 1..7 or fewer grid points than coefficients.
    """
    if not (radius > 0 and math.isfinite(radius)):
        raise ValueError(f"radius: expected a positive finite number, got {radius!r}")
    if not 1 <= degree <= 7:
        raise ValueError(f"degree: expected 1..7, got {degree}")
    if points <= degree:
        raise ValueError(f"points: expected more than degree = {degree}, got {points}")
    grid = np.linspace(-radius, radius, points)
    return np.polynomial.polynomial.polyfit(grid, sigmoid(grid), degree)


def poly_eval(coeffs: Sequence[float], z: np.ndarray) -> np.ndarray:
    """sum_k coeffs[k] z^k in float64 (the plaintext reference of the encrypted evaluation)."""
    return np.polynomial.polynomial.polyval(np.asarray(z, dtype=np.float64), np.asarray(coeffs))


# ---- packing (real-valued twins of the BFV demo's helpers) --------------------------------------
def pack_real(x: np.ndarray, slot_count: int, block: int = BLOCK) -> list[np.ndarray]:
    """Sample k of a ciphertext in slots [k block, k block + d); pads are 0.0.

    Args:
        x: (n, d) float64 with d <= block. slot_count: CKKS slots (N/2).
    Returns:
        ceil(n / (slot_count / block)) float64 arrays of slot_count values.
    """
    x = np.asarray(x, dtype=np.float64)
    if x.ndim != 2:
        raise ValueError(f"x: expected a 2-D array (samples, features), got shape {x.shape}")
    n, d = x.shape
    if d > block:
        raise ValueError(f"x: expected at most block = {block} features per sample, got {d}")
    per = samples_per_ciphertext(slot_count, block)
    out = []
    for start in range(0, max(n, 1), per):
        chunk = x[start : start + per]
        slots = np.zeros((per, block))
        slots[: len(chunk), :d] = chunk
        out.append(slots.reshape(-1))
    return out


def tile_real(values: np.ndarray, slot_count: int, block: int = BLOCK) -> np.ndarray:
    """A length-d vector (zero-padded to block) repeated over all slot_count slots, float64."""
    values = np.asarray(values, dtype=np.float64).ravel()
    if values.size > block:
        raise ValueError(f"values: expected at most {block} entries, got {values.size}")
    row = np.zeros(block)
    row[: values.size] = values
    return np.tile(row, samples_per_ciphertext(slot_count, block))


def first_slots(slot_vectors: list[np.ndarray], n_samples: int, block: int = BLOCK) -> np.ndarray:
    """Slot k * block of each decrypted vector (where each block's result lands), first n_samples."""
    flat = [np.asarray(v, dtype=np.float64)[::block] for v in slot_vectors]
    vals = np.concatenate(flat) if flat else np.zeros(0)
    if vals.size < n_samples:
        raise ValueError(f"n_samples: expected at most {vals.size}, got {n_samples}")
    return vals[:n_samples]


# ---- homomorphic evaluation ---------------------------------------------------------------------
def _dropped_prime(ctx: CKKSContext, level: int) -> int:
    """q_level: the prime that rescaling a level-``level`` ciphertext divides by."""
    return int(ctx.context.coeff_modulus_at(level)[-1])


def mul_plain_rescale(ct: CKKSCiphertext, values: Any, target_scale: float) -> CKKSCiphertext:
    """ct * values, rescaled once, with the plaintext encoded so that the result's scale is
    ``target_scale`` (plaintext scale = target * q_level / ct.scale). One level."""
    q = _dropped_prime(ct.ctx, ct.level)
    pt = ct.ctx.encode(values, target_scale * q / ct.scale, ct.level)
    return (ct * pt).rescale()


def linear_score(
    ct: CKKSCiphertext, w_tiled: np.ndarray, v_tiled: np.ndarray, bias_slots: np.ndarray,
    block: int = BLOCK,
) -> CKKSCiphertext:
    """Block-wise w.x + v.x^2 + b, in the first slot of every block. Two levels.

    x^2 = x * x (multiply + relinearize + rescale); x*W and x^2*V by multiply_plain + rescale at
    matching scales; block sums by rotate_vector(16, 8, 4, 2, 1) + add; + b by add_plain.
    """
    sq = (ct * ct).rescale()  # ciphertext x ciphertext
    lin = mul_plain_rescale(ct, w_tiled, sq.scale).mod_switch_to_next()
    acc = lin + mul_plain_rescale(sq, v_tiled, sq.scale)
    for step in block_sum_steps(block):
        acc = acc + acc.rotate(step)
    return acc + bias_slots  # encoded at acc's scale and level


def poly_cubic(s: CKKSCiphertext, coeffs: Sequence[float]) -> CKKSCiphertext:
    """c0 + c1 s + c2 s^2 + c3 s^3 under encryption with exact scale alignment. Two levels.

    s^3 = s^2 * (c3 s) keeps the depth at two; c2 s^2 and c1 s are multiplied by plaintexts
    encoded so that every term reaches level(s) - 2 at the scale of c3 s^3.
    """
    if len(coeffs) != 4:
        raise ValueError(f"coeffs: expected 4 coefficients (degree 3), got {len(coeffs)}")
    if s.level < 2:
        raise ValueError(f"s: needs level >= 2 for a cubic, got level {s.level}")
    c0, c1, c2, c3 = (float(c) for c in coeffs)
    s2 = s.square().rescale()  # level - 1, scale S^2 / q
    c3s = mul_plain_rescale(s, c3, s2.scale)
    cube = (s2 * c3s).rescale()  # level - 2
    target = cube.scale
    out = cube
    # A zero term is skipped, not multiplied in: a product by zero is a transparent
    # ciphertext (its c1 vanishes and c0 reveals the result), which Veil, like SEAL, rejects.
    # Exact: a constant that encodes to 0 contributes exactly nothing.
    if round(c2 * target * _dropped_prime(s.ctx, s2.level) / s2.scale) != 0:
        out = out + mul_plain_rescale(s2, c2, target)
    if round(c1 * target * _dropped_prime(s.ctx, s.level) / s.scale) != 0:
        out = out + mul_plain_rescale(s, c1, target).mod_switch_to_next()
    return out + c0


def normalized_coeffs(coeffs: Sequence[float], radius: float) -> np.ndarray:
    """Coefficients d_k = c_k R^k of the same polynomial in u = s / R: p(s) = sum_k d_k u^k."""
    return np.asarray(coeffs, dtype=np.float64) * float(radius) ** np.arange(len(coeffs))


def server_evaluate(
    cts: list[CKKSCiphertext], model: FloatModel, coeffs: Sequence[float], radius: float,
    block: int = BLOCK,
) -> list[CKKSCiphertext]:
    """What the server computes (public keys only): the polynomial sigmoid of each block's score.

    The score is computed normalized, u = s / R in [-1, 1] (1/R folded into the weights and the
    bias: no extra level), and the cubic evaluated in u with coefficients c_k R^k. With |u| <= 1
    every intermediate (u^2, d_3 u, d_3 u^3) stays near 1, so no product multiplies the absolute
    noise of one factor by a large value of the other (in s, s^2 reaches ~10^3).
    """
    slots = cts[0].ctx.slot_count if cts else 0
    w_tiled = tile_real(model.w / radius, slots, block)
    v_tiled = tile_real(model.v / radius, slots, block)
    bias = np.zeros(slots)
    bias[::block] = model.b / radius
    d = normalized_coeffs(coeffs, radius)
    return [poly_cubic(linear_score(ct, w_tiled, v_tiled, bias, block), d) for ct in cts]


# ---- the demo -----------------------------------------------------------------------------------
def make_context(device: str, seed: int | None) -> CKKSContext:
    """The demo's CKKS context: N = 16384, [60, 4 x 40 | 60], 2^40, Galois keys for 16..1."""
    return ckks(
        poly_modulus_degree=POLY_MODULUS_DEGREE,
        coeff_modulus=COEFF_MODULUS_BITS,
        scale=2.0**SCALE_BITS,
        device=device,
        seed=seed,
        galois_steps=block_sum_steps(),
        auto_rescale=False,  # the pipeline rescales by hand, as SEAL's would
    )


def run(device: str | None = "auto", seed: int | None = None, verbose: bool = True) -> dict[str, Any]:
    """Runs the CKKS demo and returns its numbers.

    Args:
        device: ``"auto"`` (GPU when present), ``"cpu"``, ``"cuda"`` or ``"cuda:k"``.
        seed: fixes key and encryption randomness; None: OS entropy.
        verbose: print the report.

    Returns:
        dict with ``device``, ``backend``, ``params`` (CKKSContext.describe()), ``n_test``,
        ``n_ciphertexts``, ``accuracy`` (encrypted decisions vs labels), ``float_accuracy``
        (exact sigmoid), ``poly_accuracy`` (plaintext polynomial sigmoid), ``agreement``
        (encrypted vs plaintext-polynomial decisions, 0..1), ``float_agreement`` (encrypted vs
        exact-sigmoid decisions), ``max_abs_error`` (decrypted probabilities vs the plaintext
        polynomial), ``precision_bits`` (min/mean bits of that error), ``sigmoid_coeffs``,
        ``fit_radius``, ``max_abs_score``, ``poly_vs_sigmoid_max``, ``final_level``,
        ``times_s`` (keygen, encrypt, evaluate, decrypt; seconds), ``samples_per_s``,
        ``passed`` (agreement >= AGREEMENT_MIN), ``total_s``.
    """
    t_all = time.perf_counter()
    dev = resolve_device(device)

    # Plaintext side: data, float model, polynomial sigmoid fitted on the training score range.
    data = load_data()
    model = train_model(data.x_train, data.y_train)
    radius = SIGMOID_MARGIN * float(np.abs(model.scores(data.x_train)).max())
    coeffs = fit_sigmoid(radius)
    scores = model.scores(data.x_test)
    p_poly = poly_eval(coeffs, scores)
    poly_pred = (p_poly > THRESHOLD).astype(np.int64)
    float_pred = (sigmoid(scores) > THRESHOLD).astype(np.int64)

    # Client: keys, packing, encryption.
    t0 = time.perf_counter()
    client = make_context(dev, seed)
    _sync(dev)
    t_keygen = time.perf_counter() - t0
    server = client.public()
    slots = client.slot_count

    t0 = time.perf_counter()
    cts = [client.encrypt(v) for v in pack_real(data.x_test, slots)]
    _sync(dev)
    t_encrypt = time.perf_counter() - t0
    cts = [CKKSCiphertext(server, c.raw, False) for c in cts]  # handed to the server

    # Server: public evaluation keys only.
    t0 = time.perf_counter()
    results = server_evaluate(cts, model, coeffs, radius)
    _sync(dev)
    t_eval = time.perf_counter() - t0

    # Client: decrypt, read slot 32 i, threshold at 0.5.
    t0 = time.perf_counter()
    decrypted = [client.decrypt(r) for r in results]
    t_decrypt = time.perf_counter() - t0
    n_test = len(data.y_test)
    p_he = first_slots(decrypted, n_test)
    he_pred = (p_he > THRESHOLD).astype(np.int64)
    prec = precision(p_poly, p_he)

    agreement = float(np.mean(he_pred == poly_pred))
    out: dict[str, Any] = {
        "scheme": "ckks",
        "device": dev,
        "backend": _backend_name(dev),
        "params": client.describe(),
        "scale_bits": SCALE_BITS,
        "n_test": n_test,
        "n_ciphertexts": len(cts),
        "samples_per_ciphertext": samples_per_ciphertext(slots),
        "accuracy": float(np.mean(he_pred == data.y_test)),
        "float_accuracy": float(np.mean(float_pred == data.y_test)),
        "poly_accuracy": float(np.mean(poly_pred == data.y_test)),
        "agreement": agreement,
        "float_agreement": float(np.mean(he_pred == float_pred)),
        "disagreements": int(np.count_nonzero(he_pred != poly_pred)),
        "max_abs_error": prec["max_error"],
        "precision_bits": {"min": prec["min_bits"], "mean": prec["mean_bits"]},
        "sigmoid_coeffs": [float(c) for c in coeffs],
        "fit_radius": radius,
        "max_abs_score": float(np.abs(scores).max()),
        "poly_vs_sigmoid_max": float(np.abs(p_poly - sigmoid(scores)).max()),
        "min_margin": float(np.abs(p_poly - THRESHOLD).min()),
        "final_level": int(results[0].level),
        "times_s": {"keygen": t_keygen, "encrypt": t_encrypt, "evaluate": t_eval,
                    "decrypt": t_decrypt},
        "samples_per_s": n_test / t_eval if t_eval > 0 else math.inf,
        "passed": agreement >= AGREEMENT_MIN,
    }
    out["total_s"] = time.perf_counter() - t_all
    if verbose:
        print_report(out)
    return out


def format_poly(coeffs: Sequence[float], var: str = "s") -> str:
    """'0.5 + 0.03586 s - 1.829e-05 s³' (4 significant digits, signs folded)."""
    sup = {2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷"}
    out = ""
    for k, c in enumerate(coeffs):
        mono = "" if k == 0 else f" {var}" + sup.get(k, "" if k == 1 else f"^{k}")
        mag = f"{abs(c):.4g}{mono}"
        if not out:
            out = ("-" if c < 0 else "") + mag
        else:
            out += (" - " if c < 0 else " + ") + mag
    return out


def print_report(r: dict[str, Any]) -> None:
    """Prints the CKKS demo's results as rich tables (plain text when not a terminal)."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    p = r["params"]
    console.print(
        "[bold]Veil demo: encrypted tumour classification[/bold] (Breast Cancer Wisconsin, "
        "logistic regression on x and x² with a polynomial sigmoid, CKKS)"
    )
    setup = Table(show_header=False, box=None, pad_edge=False)
    setup.add_column(style="cyan")
    setup.add_column()
    sec = f"{p['security']}-bit (HE Standard)" if p["security"] else "not checked"
    setup.add_row("device", f"{r['device']}  [{r['backend']}]")
    setup.add_row(
        "parameters",
        f"N = {p['poly_modulus_degree']}, log2 QP = {p['log2_qp']} "
        f"({len(p['coeff_modulus_bits'])} primes: {p['coeff_modulus_bits']}, "
        f"{p['special_primes']} special), scale = 2^{r['scale_bits']}, "
        f"levels {p['max_level']} -> {r['final_level']}",
    )
    setup.add_row("security", sec)
    setup.add_row(
        "packing",
        f"{r['n_test']} test samples x {BLOCK} slots ({r['samples_per_ciphertext']} per "
        f"ciphertext): {r['n_ciphertexts']} ciphertext(s)",
    )
    setup.add_row(
        "sigmoid",
        f"degree-3 least squares on [-{r['fit_radius']:.1f}, {r['fit_radius']:.1f}]: "
        f"{format_poly(r['sigmoid_coeffs'])} (max |score| on test = {r['max_abs_score']:.1f})",
    )
    console.print(setup)

    res = Table(title="Results", title_justify="left")
    res.add_column("metric")
    res.add_column("value", justify="right")
    res.add_row("accuracy, encrypted pipeline", f"{100 * r['accuracy']:.2f} %")
    res.add_row("accuracy, float model (exact sigmoid)", f"{100 * r['float_accuracy']:.2f} %")
    res.add_row("accuracy, plaintext polynomial sigmoid", f"{100 * r['poly_accuracy']:.2f} %")
    ok = "green" if r["passed"] else "red"
    res.add_row(
        "agreement with plaintext polynomial model",
        f"[{ok}]{100 * r['agreement']:.2f} %[/{ok}] ({r['disagreements']} differ; "
        f"need >= {100 * AGREEMENT_MIN:.0f} %)",
    )
    res.add_row("agreement with exact-sigmoid float model", f"{100 * r['float_agreement']:.2f} %")
    res.add_row(
        "max |decrypted p - plaintext polynomial p|",
        f"{r['max_abs_error']:.2e} ({r['precision_bits']['min']:.1f} bits; "
        f"mean {r['precision_bits']['mean']:.1f} bits)",
    )
    res.add_row("closest plaintext p to the 0.5 threshold", f"{r['min_margin']:.2e} away")
    res.add_row("max |polynomial - exact sigmoid| on test scores", f"{r['poly_vs_sigmoid_max']:.3f}")
    console.print(res)

    tim = Table(title="Wall time", title_justify="left")
    tim.add_column("step")
    tim.add_column("ms", justify="right")
    labels = {
        "keygen": "keygen (context, public/relin/Galois keys)",
        "encrypt": "encode + encrypt (client)",
        "evaluate": "evaluate (server: x², dot products, rotations, cubic)",
        "decrypt": "decrypt + decode (client)",
    }
    for k, label in labels.items():
        tim.add_row(label, f"{1000 * r['times_s'][k]:.1f}")
    tim.add_row("encrypted evaluation throughput", f"{r['samples_per_s']:.0f} samples/s")
    tim.add_row("whole demo incl. training", f"{1000 * r['total_s']:.0f}")
    console.print(tim)


def main() -> int:
    """``python -m veil.apps.demo_ckks``: default device; exit status 1 below the agreement
    bound."""
    return 0 if run()["passed"] else 1


if __name__ == "__main__":
    raise SystemExit(main())


__all__ = [
    "AGREEMENT_MIN",
    "COEFF_MODULUS_BITS",
    "POLY_MODULUS_DEGREE",
    "first_slots",
    "fit_sigmoid",
    "format_poly",
    "linear_score",
    "make_context",
    "mul_plain_rescale",
    "normalized_coeffs",
    "pack_real",
    "poly_cubic",
    "poly_eval",
    "run",
    "server_evaluate",
    "sigmoid",
    "tile_real",
]
