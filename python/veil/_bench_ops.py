"""Timing of single operations for ``veil bench``: Veil's and SEAL's SEAL-style APIs side by side.

Each operation is timed alone with :class:`veil.Timer` around the call (``start(); op; stop()``:
CUDA events on a GPU, the steady clock on the CPU); the figure is the median in microseconds
after warm-up. Every result is then checked once against an independent oracle: numpy arithmetic
mod t for BFV/BGV (exact), numpy float64 for CKKS (precision in bits, see :func:`ckks_ok`).
"""

from __future__ import annotations

import contextlib
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from . import _core
from ._bench_rows import Row, make_context
from ._ckks import precision
from ._energy import EnergyError

#: Operations in table order, per scheme; values are column labels. "multiply" is multiply plus
#: relinearize; "rotate_many_8" is one hoisted rotate_many by steps 1..8, "rotate_8" the same
#: eight rotations as separate calls (each with its own key, no composition).
OPS_BY_SCHEME: dict[str, dict[str, str]] = {
    "bfv": {
        "keygen": "keygen",
        "encode": "encode",
        "encrypt": "encrypt",
        "decrypt": "decrypt",
        "add": "add",
        "multiply_plain": "mul_plain",
        "multiply_hps": "mul+relin HPS",
        "multiply_behz": "mul+relin BEHZ",
        "rotate_rows": "rotate_rows(1)",
    },
    "bgv": {
        "keygen": "keygen",
        "encode": "encode",
        "decode": "decode",
        "encrypt": "encrypt",
        "decrypt": "decrypt",
        "add": "add",
        "multiply_plain": "mul_plain",
        "multiply": "mul+relin",
        "mod_switch_to_next": "mod_switch",
        "rotate_rows": "rotate_rows(1)",
        "rotate_many_8": "hoisted 8 rot",
        "rotate_8": "8 × rotate",
    },
    "ckks": {
        "keygen": "keygen",
        "encode": "encode",
        "decode": "decode",
        "encrypt": "encrypt",
        "decrypt": "decrypt",
        "add": "add",
        "multiply_plain": "mul_plain",
        "multiply": "mul+relin",
        "rescale": "rescale",
        "rotate": "rotate_vector(1)",
        "rotate_many_8": "hoisted 8 rot",
        "rotate_8": "8 × rotate",
    },
}

#: Steps of the hoisted / individual rotation ops.
ROTATION_STEPS = list(range(1, 9))
#: CKKS correctness: mean precision (Lattigo's "mean bits") and worst slot, in bits.
CKKS_MEAN_BITS = 20.0
CKKS_MIN_BITS = 10.0


# ---- timing policy ------------------------------------------------------------------------------
@dataclass
class Policy:
    """How many times to run each operation."""

    warmup: int  # untimed runs first
    max_runs: int  # timed runs (exactly this many without a budget)
    budget_s: float | None  # per-operation time budget, seconds (CPU); None: always max_runs
    min_runs: int = 3  # at least this many timed runs under a budget
    keygen_runs: int = 10  # at most this many timed key generations


def policy_for(device: str, quick: bool, runs: int | None) -> Policy:
    """GPU: 10 warm-up + 100 runs (quick 2 + 10); CPU: 1 warm-up + runs in 2 s (quick 0.25 s)."""
    if device.startswith("cuda"):
        if quick:
            return Policy(warmup=2, max_runs=runs or 10, budget_s=None, keygen_runs=3)
        return Policy(warmup=10, max_runs=runs or 100, budget_s=None,
                      keygen_runs=min(runs or 20, 20))
    if quick:
        return Policy(warmup=1, max_runs=runs or 10, budget_s=0.25, keygen_runs=3)
    return Policy(warmup=1, max_runs=runs or 100, budget_s=2.0, keygen_runs=runs or 10)


def time_op(
    fn: Callable[[], Any], timer: Any, policy: Policy, keygen: bool = False
) -> tuple[float, int]:
    """Median of ``timer.start(); fn(); timer.stop()`` in µs, and the number of timed runs."""
    last_ms = 0.0
    warmup = max(policy.warmup, 1) if policy.budget_s is not None else policy.warmup
    for _ in range(warmup):  # the last warm-up run sizes the budget
        timer.start()
        fn()
        last_ms = timer.stop()
    cap = policy.keygen_runs if keygen else policy.max_runs
    n = cap
    if policy.budget_s is not None and last_ms > 0:
        n = int(min(cap, max(policy.min_runs, policy.budget_s * 1000.0 / last_ms)))
    n = max(n, 1)
    samples = []
    for _ in range(n):
        timer.start()
        fn()
        samples.append(timer.stop())
    return 1000.0 * statistics.median(samples), n


# ---- oracles ------------------------------------------------------------------------------------
def _values(row: Row, seed: int) -> np.ndarray:
    """Test slots: N integers uniform mod t (BFV/BGV, uint64) or N/2 reals in [-1, 1] (CKKS)."""
    rng = np.random.default_rng(seed)
    if row.scheme == "ckks":
        return rng.uniform(-1.0, 1.0, row.n // 2)
    assert row.plain_modulus is not None
    return rng.integers(0, row.plain_modulus, size=row.n, dtype=np.uint64)


def _rotated(x: np.ndarray, steps: int, scheme: str) -> np.ndarray:
    """Slots after a left rotation: CKKS one cycle of N/2; BFV/BGV each row of the 2 x N/2 matrix."""
    if scheme == "ckks":
        return np.roll(x, -steps)
    return np.roll(x.reshape(2, -1), -steps, axis=1).reshape(-1)


def ckks_ok(expected: np.ndarray, got: np.ndarray) -> tuple[bool, dict[str, float]]:
    """CKKS check: mean precision >= 20 bits and worst slot >= 10 bits (values in [-1, 1]).

    The worst slot is held to less because key switching at scale 2^40 leaves a few slots with
    errors near 2^-20 at N = 2^13 growing about as N^1.5 (SEAL shows the same), while a wrong
    operation gives errors of order 1 (0 bits). Returns (ok, {"min_bits", "mean_bits"}).
    """
    p = precision(expected, got)
    bits = {"min_bits": round(p["min_bits"], 2), "mean_bits": round(p["mean_bits"], 2)}
    return p["mean_bits"] >= CKKS_MEAN_BITS and p["min_bits"] >= CKKS_MIN_BITS, bits


# ---- the libraries ------------------------------------------------------------------------------
class _Lib:
    """The calls the timing suite makes; subclasses wrap Veil's and SEAL's SEAL-style APIs."""

    scheme = "bfv"
    ev: Any
    gk: Any
    encryptor: Any
    decryptor: Any

    def encrypt(self, p: Any) -> Any:
        return self.encryptor.encrypt(p)

    def decrypt(self, c: Any) -> Any:
        return self.decryptor.decrypt(c)

    def add(self, a: Any, b: Any) -> Any:
        return self.ev.add(a, b)

    def multiply_plain(self, a: Any, p: Any) -> Any:
        return self.ev.multiply_plain(a, p)

    def rotate(self, a: Any, steps: int = 1) -> Any:
        if self.scheme == "ckks":
            return self.ev.rotate_vector(a, steps, self.gk)
        return self.ev.rotate_rows(a, steps, self.gk)

    def rotate_each(self, a: Any) -> list[Any]:
        """The rotations by ROTATION_STEPS as separate calls."""
        return [self.rotate(a, s) for s in ROTATION_STEPS]

    def rescale(self, a: Any) -> Any:
        return self.ev.rescale_to_next(a)

    def mod_switch(self, a: Any) -> Any:
        return self.ev.mod_switch_to_next(a)


class VeilLib(_Lib):
    """Veil's SEAL-style API (veil._core) for one row on one device (BFV: one mul_method)."""

    def __init__(self, row: Row, device: str, mul_method: str | None = None) -> None:
        self.scheme = row.scheme
        self.ctx, self.secure = make_context(row, mul_method)
        self.device = device
        self.scale = row.scale
        self.level = row.level(self.ctx.max_level)
        if row.source == "Cheddar" and self.level > 0:
            # Cheddar's levels rescale by 40-60-bit blocks: encode at sqrt(2^40 D) so that the
            # rescaled product lands at 2^40 (at 2^40 it would land at 2^80 / D, as low as
            # 2^20 and too imprecise for the check); the timings do not depend on the scale.
            target = self.ctx.rescale_target(self.level)
            log_d = sum(math.log2(q) for q in self.ctx.coeff_modulus_at(self.level)[target + 1:])
            self.scale = 2.0 ** ((40 + log_d) / 2)
        self.log2_qp = int(self.ctx.total_coeff_modulus_bits)
        if row.scheme == "ckks":
            self.encoder = _core.CKKSEncoder(self.ctx)
        else:
            self.encoder = _core.BatchEncoder(self.ctx)
        self.ev = _core.Evaluator(self.ctx)

    def keygen(self) -> tuple[Any, ...]:
        """Secret, public and relinearization keys (the timed 'keygen')."""
        kg = _core.KeyGenerator(self.ctx, self.device, None)
        return kg, kg.secret_key(), kg.create_public_key(), kg.create_relin_keys()

    def setup(self, rotations: Sequence[int]) -> None:
        """Keys for the suite; Galois keys for exactly ``rotations`` (none if empty)."""
        kg, sk, pk, self.rlk = self.keygen()
        self.gk = kg.create_galois_keys(list(rotations), False) if rotations else None
        self.encryptor = _core.Encryptor(self.ctx, pk, None)
        self.decryptor = _core.Decryptor(self.ctx, sk)

    def encode(self, x: np.ndarray) -> Any:
        if self.scheme == "ckks":
            return self.encoder.encode_real(x, self.scale, self.level, self.device)
        return self.encoder.encode_unsigned(x, self.device)

    def decode(self, p: Any) -> np.ndarray:
        if self.scheme == "ckks":
            return np.asarray(self.encoder.decode(p)).real
        return np.asarray(self.encoder.decode_unsigned(p), dtype=np.uint64)

    def mul_relin(self, a: Any, b: Any) -> Any:
        return self.ev.relinearize(self.ev.multiply(a, b), self.rlk)

    def rotate_many(self, a: Any) -> list[Any]:
        """One hoisted rotate_many by ROTATION_STEPS."""
        return self.ev.rotate_many(a, ROTATION_STEPS, self.gk)


class SealLib(_Lib):
    """SEAL via seal-python (one special prime; BFV multiplies with BEHZ). No hoisting."""

    def __init__(self, row: Row) -> None:
        import seal

        self.seal = seal
        self.scheme = row.scheme
        parms = seal.EncryptionParameters(getattr(seal.scheme_type, row.scheme))
        parms.set_poly_modulus_degree(row.n)
        if row.bit_sizes is None:
            parms.set_coeff_modulus(seal.CoeffModulus.BFVDefault(row.n))
        else:  # SEAL's own primes of the same sizes
            parms.set_coeff_modulus(seal.CoeffModulus.Create(row.n, row.bit_sizes))
        if row.plain_modulus is not None:
            parms.set_plain_modulus(row.plain_modulus)
        self.ctx = seal.SEALContext(parms)
        if not self.ctx.parameters_set():
            raise ValueError(f"SEAL rejected {row.name}: {self.ctx.parameter_error_message()}")
        self.secure = True
        self.log2_qp = sum(q.bit_count() for q in parms.coeff_modulus())
        if row.scheme == "ckks":
            self.encoder = seal.CKKSEncoder(self.ctx)
        else:
            self.encoder = seal.BatchEncoder(self.ctx)
        self.ev = seal.Evaluator(self.ctx)
        self.t = row.plain_modulus
        self.scale = row.scale

    def keygen(self) -> tuple[Any, ...]:
        kg = self.seal.KeyGenerator(self.ctx)
        return kg, kg.secret_key(), kg.create_public_key(), kg.create_relin_keys()

    def setup(self, rotations: Sequence[int]) -> None:
        kg, sk, pk, self.rlk = self.keygen()
        self.gk = self.seal.GaloisKeys()
        if rotations:
            kg.create_galois_keys(list(rotations), self.gk)
        self.encryptor = self.seal.Encryptor(self.ctx, pk)
        self.decryptor = self.seal.Decryptor(self.ctx, sk)

    def encode(self, x: np.ndarray) -> Any:
        if self.scheme == "ckks":
            return self.encoder.encode(x, self.scale)
        return self.encoder.encode(x)

    def decode(self, p: Any) -> np.ndarray:
        if self.scheme == "ckks":
            return np.asarray(self.encoder.decode(p), dtype=np.float64)
        assert self.t is not None
        return (np.asarray(self.encoder.decode(p)).astype(np.int64) % self.t).astype(np.uint64)

    def mul_relin(self, a: Any, b: Any) -> Any:
        c = self.ev.multiply(a, b)
        self.ev.relinearize_inplace(c, self.rlk)
        return c


# ---- the suite ----------------------------------------------------------------------------------
Case = tuple[Callable[[], Any], Callable[[], list[tuple[Any, np.ndarray]]] | None]


def _cases(lib: Any, row: Row, mul_name: str) -> tuple[dict[str, Case], Callable[..., Any]]:
    """{op: (timed call, checker inputs)} and the decrypt-and-compare function for this row.

    A checker returns [(ciphertext or plaintext, expected slots)]; None: not checked.
    """
    scheme = row.scheme
    x, y = _values(row, 1), _values(row, 2)
    px, py = lib.encode(x), lib.encode(y)
    cx, cy = lib.encrypt(px), lib.encrypt(py)
    if scheme == "ckks":
        add, prod = x + y, x * y
    else:
        t = row.plain_modulus
        add, prod = (x + y) % t, (x * y) % t  # t < 2^20: no uint64 overflow
    rot = "rotate" if scheme == "ckks" else "rotate_rows"
    product: list[Any] = []  # multiply+relinearize once, lazily, for rescale

    def prod_ct() -> Any:
        if not product:
            product.append(lib.mul_relin(cx, cy))
        return product[0]

    cases: dict[str, Case] = {
        "encode": (lambda: lib.encode(x), lambda: [(px, x)]),
        "decode": (lambda: lib.decode(px), None),
        "encrypt": (lambda: lib.encrypt(px), lambda: [(cx, x)]),
        "decrypt": (lambda: lib.decrypt(cx), None),
        "add": (lambda: lib.add(cx, cy), lambda: [(lib.add(cx, cy), add)]),
        "multiply_plain": (lambda: lib.multiply_plain(cx, py),
                           lambda: [(lib.multiply_plain(cx, py), prod)]),
        mul_name: (lambda: lib.mul_relin(cx, cy), lambda: [(lib.mul_relin(cx, cy), prod)]),
        rot: (lambda: lib.rotate(cx), lambda: [(lib.rotate(cx), _rotated(x, 1, scheme))]),
        "rescale": (lambda: lib.rescale(prod_ct()), lambda: [(lib.rescale(prod_ct()), prod)]),
        "mod_switch_to_next": (lambda: lib.mod_switch(cx), lambda: [(lib.mod_switch(cx), x)]),
        "rotate_many_8": (
            lambda: lib.rotate_many(cx),
            lambda: list(zip(lib.rotate_many(cx), [_rotated(x, s, scheme) for s in ROTATION_STEPS],
                             strict=True)),
        ),
        "rotate_8": (
            lambda: lib.rotate_each(cx),
            lambda: list(zip(lib.rotate_each(cx), [_rotated(x, s, scheme) for s in ROTATION_STEPS],
                             strict=True)),
        ),
    }
    return cases, lambda obj, plain: lib.decode(obj if plain else lib.decrypt(obj))


def _measure(energy: Any, fn: Callable[[], Any], median_us: float,
             idle_w: float | None) -> dict[str, Any]:
    """The meter's figures for ``fn``, or {"error": ...} when a reading (not ``fn``) failed."""
    try:
        return energy.measure(fn, median_us, idle_w)
    except EnergyError as e:
        return {"error": str(e)}


def time_suite(
    lib: Any, row: Row, timer: Any, policy: Policy, ops: Sequence[str], mul_name: str = "multiply",
    energy: Any = None,
) -> dict[str, Any]:
    """Times ``ops`` (names of OPS_BY_SCHEME; the multiplication is called ``mul_name``) and
    checks each result once (BFV/BGV: exact mod t; CKKS: :func:`ckks_ok`).

    Returns {"median_us": {op: µs}, "runs": {op: n}, "correct": {op: bool}} and, for CKKS,
    "precision_bits": {op: {"min_bits", "mean_bits"}} (the worst output of each op). With an
    ``energy`` meter (:class:`veil._energy.EnergyMeter`), also "idle_w" and "energy": {op:
    :func:`veil._energy.summarize`'s figures}, each op run back-to-back after its timing.
    """
    med: dict[str, float] = {}
    runs: dict[str, int] = {}
    correct: dict[str, bool] = {}
    bits: dict[str, dict[str, float]] = {}
    joules: dict[str, dict[str, Any]] = {}
    idle_w = None
    if energy is not None:
        with contextlib.suppress(EnergyError):  # then no above-idle figures
            idle_w = energy.idle_w()
    if "keygen" in ops:
        med["keygen"], runs["keygen"] = time_op(lib.keygen, timer, policy, keygen=True)
        if energy is not None:
            joules["keygen"] = _measure(energy, lib.keygen, med["keygen"], idle_w)
    rotations = set()
    if "rotate_rows" in ops or "rotate" in ops:
        rotations.add(1)
    if "rotate_many_8" in ops or "rotate_8" in ops:
        rotations.update(ROTATION_STEPS)
    lib.setup(sorted(rotations))
    cases, read = _cases(lib, row, mul_name)
    for op in ops:
        if op == "keygen":
            continue
        fn, check = cases[op]
        med[op], runs[op] = time_op(fn, timer, policy)
        if energy is not None:
            joules[op] = _measure(energy, fn, med[op], idle_w)
        if check is None:
            continue
        verdicts = []
        for obj, expected in check():
            got = read(obj, op == "encode")
            if row.scheme == "ckks":
                ok, b = ckks_ok(expected, got)
                if op not in bits or b["min_bits"] < bits[op]["min_bits"]:
                    bits[op] = b
                verdicts.append(ok)
            else:
                verdicts.append(bool(np.array_equal(got, expected)))
        correct[op] = all(verdicts)
    out: dict[str, Any] = {"median_us": med, "runs": runs, "correct": correct}
    if row.scheme == "ckks":
        out["precision_bits"] = bits
    if energy is not None:
        out.update(idle_w=idle_w, energy=joules)
    return out


def bench_veil(row: Row, device: str, policy: Policy, energy: Any = None) -> dict[str, Any]:
    """Times every operation of one row on one Veil backend; checks each result once.

    BFV: HPS and BEHZ use separate contexts (and keys); everything but multiply runs on the HPS
    one. Returns {"median_us", "runs", "correct", ["precision_bits"], "secure", "log2_qp"}, and
    "idle_w" and "energy" with an ``energy`` meter (see :func:`time_suite`).
    """
    timer = _core.Timer(device)
    ops = list(OPS_BY_SCHEME[row.scheme])
    if row.scheme != "bfv":
        lib = VeilLib(row, device)
        out = time_suite(lib, row, timer, policy, ops, energy=energy)
        out.update(secure=lib.secure, log2_qp=lib.log2_qp)
        return out
    hps = VeilLib(row, device, "hps")
    out = time_suite(hps, row, timer, policy, [op for op in ops if op != "multiply_behz"],
                     "multiply_hps", energy=energy)
    behz = time_suite(VeilLib(row, device, "behz"), row, timer, policy, ["multiply_behz"],
                      "multiply_behz", energy=energy)
    for k in ("median_us", "runs", "correct", "energy"):
        if k in out:
            out[k].update(behz[k])
    out.update(secure=hps.secure, log2_qp=hps.log2_qp)
    return out


def bench_seal(row: Row, policy: Policy) -> dict[str, Any]:
    """Times SEAL (seal-python, single-threaded: SEAL does not thread internally) on one row.

    SEAL has no hoisted rotations (no rotate_many_8); BFV multiplies with BEHZ, so its
    multiply+relinearize fills the BEHZ column. Raises ImportError without seal-python.
    """
    lib = SealLib(row)
    ops = [op for op in OPS_BY_SCHEME[row.scheme] if op not in ("multiply_hps", "rotate_many_8")]
    mul = "multiply_behz" if row.scheme == "bfv" else "multiply"
    out = time_suite(lib, row, _core.Timer("cpu"), policy, ops, mul)
    out.update(secure=True, log2_qp=lib.log2_qp)
    return out


__all__ = [
    "CKKS_MEAN_BITS",
    "CKKS_MIN_BITS",
    "OPS_BY_SCHEME",
    "ROTATION_STEPS",
    "Policy",
    "SealLib",
    "VeilLib",
    "bench_seal",
    "bench_veil",
    "ckks_ok",
    "policy_for",
    "time_op",
    "time_suite",
]
