"""``veil bench``: times Veil's BFV operations beside SEAL (same run) and Phantom (published here).

Method (docs: /work/shared/DESIGN.md, "Benchmark method"):

* Every operation is timed alone with :class:`veil.Timer` around the call (``start(); op;
  stop()``): CUDA events on a GPU, the steady clock on the CPU. The figure is the **median** in
  microseconds after warm-up runs.
* GPU: 10 warm-up runs and 100 timed runs (``--runs``). CPU: one warm-up, then as many runs as fit
  in a per-operation time budget (at least 3, at most ``--runs`` or 100), so the total stays
  bounded even where one call takes seconds. ``--quick`` runs two small rows with few runs.
* Rows: SEAL's default coefficient moduli for N = 2^13..2^16 (``CoeffModulus.bfv_default``;
  t = 65537, which supports batching only for N <= 2^15, so N = 2^16 uses t = 786433 = 3 * 2^18 + 1),
  and Phantom's 13 BFV parameter rows from ANCHORS.md (primes from ``CoeffModulus.create``, the
  row's number of special primes P, alpha = |P|). Rows whose log2(QP) exceeds the HE-Standard
  128-bit bound run with ``security=None`` and are marked.
* Backends: Veil's CPU backend single-threaded and with the default (all-core) thread count,
  Veil's GPU when present, and SEAL 4.x through seal-python, single-threaded on the same CPU, for
  rows it supports (N <= 2^15 with one special prime; SEAL multiplies with BEHZ).
* "multiply" is multiply **plus relinearize**, timed separately for HPS and BEHZ (two contexts);
  "keygen" is secret + public + relinearization keys; "encode" includes the host-to-device copy
  on a GPU; "decrypt" excludes decoding (as SEAL and Phantom count it).
* Every backend's results are checked once against plaintext arithmetic mod t.

Output: a dict (and ``--json``) with all raw medians, device and CPU names, the git commit and
the date; markdown tables (``--markdown``) with one row per parameter set and backend, Phantom's
H100 number for multiply (HPS) and the time ratio Veil / peer.
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from . import _core
from ._device import device_info, resolve_device

#: Operations in table order; values are column labels.
OPS: dict[str, str] = {
    "keygen": "keygen",
    "encode": "encode",
    "encrypt": "encrypt",
    "decrypt": "decrypt",
    "add": "add",
    "multiply_plain": "mul_plain",
    "multiply_hps": "mul+relin HPS",
    "multiply_behz": "mul+relin BEHZ",
    "rotate_rows": "rotate_rows(1)",
}

#: t for N <= 2^15 (SEAL's examples and Phantom's benchmarks) and for N = 2^16 (65537 is not
#: = 1 mod 2^17, so it cannot batch there; 786433 = 3 * 2^18 + 1 is the smallest 20-bit choice).
PLAIN_MODULUS = 65537
PLAIN_MODULUS_2_16 = 786433

# Phantom BFV, copied verbatim from /work/shared/ANCHORS.md ("Phantom BFV (µs, median of 100;
# H100 / H200)", measured 2026-11-21 on this project's GPU machines, phantom-fhe commit 1f4a198,
# its bfv_bench; multiply = multiply + relinearize). Columns: variant | N | primes | log QP |
# multiply | rotate_rows | multiply_plain | encrypt | decrypt.
_PHANTOM_BFV_TABLE = """
| BEHZ | 4096 | 2×35 + 1×38 | 108 | 328 / 315 | 79 / 75 | 57 / 54 | 189 / 176 | 51 / 47 |
| BEHZ | 8192 | 3×54 + 1×56 | 218 | 356 / 348 | 94 / 91 | 59 / 57 | 191 / 180 | 52 / 49 |
| BEHZ | 8192 | 5×36 + 1×38 | 218 | 389 / 382 | 121 / 117 | 60 / 58 | 194 / 184 | 52 / 51 |
| BEHZ | 8192 | 4×36 + 2×37 | 218 | 360 / 353 | 100 / 96 | 59 / 58 | 194 / 192 | 53 / 50 |
| BEHZ | 16384 | 7×54 + 1×60 | 438 | 517 / 504 | 182 / 175 | 72 / 71 | 208 / 196 | 59 / 56 |
| BEHZ | 16384 | 11×36 + 1×42 | 438 | 685 / 673 | 302 / 296 | 75 / 74 | 220 / 211 | 62 / 60 |
| BEHZ | 16384 | 8×36 + 2×37 + 2×38 | 438 | 465 / 457 | 124 / 120 | 72 / 72 | 218 / 210 | 59 / 57 |
| BEHZ | 32768 | 15×55 + 1×56 | 881 | 1213 / 1179 | 583 / 561 | 121 / 119 | 289 / 269 | 90 / 87 |
| BEHZ | 32768 | 23×36 + 1×53 | 881 | 2005 / 1920 | 1092 / 1037 | 165 / 160 | 346 / 335 | 113 / 109 |
| BEHZ | 32768 | 16×36 + 7×38 + 1×39 | 881 | 1023 / 1001 | 252 / 245 | 122 / 121 | 351 / 338 | 90 / 86 |
| BEHZ | 65536 | 15×55 + 17×56 | 1777 | 5091 / 4780 | 2980 / 2776 | 331 / 318 | 718 / 683 | 219 / 203 |
| BEHZ | 65536 | 10×36 + 37×37 + 1×48 | 1777 | 9837 / 9132 | 6188 / 5693 | 485 / 455 | 1025 / 961 | 318 / 283 |
| BEHZ | 65536 | 32×36 + 15×39 + 1×40 | 1777 | 4066 / 3907 | 979 / 916 | 343 / 328 | 1130 / 1078 | 225 / 208 |
| HPS | 4096 | 2×35 + 1×38 | 108 | 222 / 213 | 80 / 75 | 57 / 54 | 195 / 172 | 40 / 36 |
| HPS | 8192 | 3×54 + 1×56 | 218 | 245 / 235 | 94 / 90 | 59 / 57 | 191 / 180 | 40 / 38 |
| HPS | 8192 | 5×36 + 1×38 | 218 | 291 / 283 | 121 / 117 | 59 / 58 | 199 / 185 | 42 / 40 |
| HPS | 8192 | 4×36 + 2×37 | 218 | 253 / 245 | 100 / 95 | 60 / 57 | 195 / 188 | 41 / 38 |
| HPS | 16384 | 7×54 + 1×60 | 438 | 408 / 401 | 181 / 176 | 72 / 71 | 208 / 197 | 47 / 44 |
| HPS | 16384 | 11×36 + 1×42 | 438 | 580 / 576 | 301 / 294 | 75 / 74 | 226 / 213 | 50 / 47 |
| HPS | 16384 | 8×36 + 2×37 + 2×38 | 438 | 358 / 352 | 124 / 120 | 72 / 72 | 220 / 214 | 48 / 45 |
| HPS | 32768 | 15×55 + 1×56 | 881 | 1147 / 1098 | 582 / 562 | 122 / 118 | 288 / 274 | 73 / 69 |
| HPS | 32768 | 23×36 + 1×53 | 881 | 2043 / 1943 | 1091 / 1036 | 164 / 158 | 350 / 335 | 96 / 92 |
| HPS | 32768 | 16×36 + 7×38 + 1×39 | 881 | 869 / 859 | 253 / 245 | 122 / 121 | 347 / 338 | 74 / 69 |
| HPS | 65536 | 15×55 + 17×56 | 1777 | 5466 / 5251 | 2972 / 2775 | 330 / 317 | 718 / 682 | 186 / 174 |
| HPS | 65536 | 10×36 + 37×37 + 1×48 | 1777 | 11032 / 10400 | 6186 / 5689 | 485 / 456 | 1022 / 961 | 277 / 244 |
| HPS | 65536 | 32×36 + 15×39 + 1×40 | 1777 | 3736 / 3586 | 979 / 917 | 342 / 328 | 1129 / 1074 | 190 / 176 |
"""
# ANCHORS.md: "BFV/BGV rows use 1,1,1,2,1,1,4,1,1,8,1,1,16 [special primes] in order".
_PHANTOM_SPECIAL = (1, 1, 1, 2, 1, 1, 4, 1, 1, 8, 1, 1, 16)
_PHANTOM_OPS = ("multiply", "rotate_rows", "multiply_plain", "encrypt", "decrypt")
#: Phantom column -> Veil op, per variant.
_PHANTOM_TO_VEIL = {
    "HPS": {"multiply": "multiply_hps", "rotate_rows": "rotate_rows",
            "multiply_plain": "multiply_plain", "encrypt": "encrypt", "decrypt": "decrypt"},
    "BEHZ": {"multiply": "multiply_behz"},
}


def parse_bit_sizes(spec: str) -> list[int]:
    """'7×54 + 1×60' (or '7x54+1x60') -> [54]*7 + [60]. Raises ValueError on other text."""
    out: list[int] = []
    for term in spec.replace(" ", "").split("+"):
        m = re.fullmatch(r"(\d+)[×x*](\d+)", term)
        if not m:
            raise ValueError(f"spec: expected terms like '7×54' joined by '+', got {spec!r}")
        out += [int(m.group(2))] * int(m.group(1))
    return out


def _parse_phantom() -> dict[tuple[int, str], dict[str, dict[str, tuple[float, float]]]]:
    """{(N, primes): {variant: {op: (H100 µs, H200 µs)}}} from the table above."""
    table: dict[tuple[int, str], dict[str, dict[str, tuple[float, float]]]] = {}
    for line in _PHANTOM_BFV_TABLE.strip().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        variant, n, primes = cells[0], int(cells[1]), cells[2]
        ops = {}
        for op, cell in zip(_PHANTOM_OPS, cells[4:]):
            h100, h200 = (float(x) for x in cell.split("/"))
            ops[op] = (h100, h200)
        table.setdefault((n, primes), {})[variant] = ops
    return table


#: Phantom's BFV numbers keyed by (N, prime list as written in ANCHORS.md).
PHANTOM_BFV = _parse_phantom()


# ---- parameter rows -------------------------------------------------------------------------------
@dataclass
class Row:
    """One parameter set: N, primes (Q then P) and t."""

    source: str  # "SEAL default" (CoeffModulus.bfv_default) or "Phantom" (ANCHORS.md)
    n: int  # poly_modulus_degree
    primes_spec: str  # as ANCHORS.md writes it ("3×54 + 1×56"), or "BFVDefault"
    bit_sizes: list[int] | None  # bit size of every prime; None for BFVDefault
    special: int  # special primes P (alpha = special)
    plain_modulus: int  # t

    @property
    def name(self) -> str:
        """Short label, e.g. 'N=8192 3×54 + 1×56 (P=1)'."""
        return f"N={self.n} {self.primes_spec} (P={self.special})"

    def primes(self) -> list[int]:
        """The coefficient modulus (Q primes then P primes)."""
        if self.bit_sizes is None:
            return [int(q) for q in _core.CoeffModulus.bfv_default(self.n)]
        return [int(q) for q in _core.CoeffModulus.create(self.n, self.bit_sizes)]

    def phantom(self) -> dict[str, dict[str, tuple[float, float]]] | None:
        """Phantom's numbers for this exact row, or None."""
        if self.source != "Phantom":
            return None
        return PHANTOM_BFV.get((self.n, self.primes_spec))


def plain_modulus_for(n: int) -> int:
    """t = 65537 up to N = 2^15, 786433 at N >= 2^16 (both batching primes: t = 1 mod 2N)."""
    return PLAIN_MODULUS if n <= 32768 else PLAIN_MODULUS_2_16


def default_rows() -> list[Row]:
    """SEAL's BFVDefault moduli for N = 2^13..2^16 (one special prime)."""
    return [
        Row("SEAL default", n, "BFVDefault", None, 1, plain_modulus_for(n))
        for n in (8192, 16384, 32768, 65536)
    ]


def phantom_rows() -> list[Row]:
    """Phantom's 13 BFV parameter sets (ANCHORS.md order), with their special-prime counts."""
    keys = list(PHANTOM_BFV)  # insertion order = the table's order
    return [
        Row("Phantom", n, spec, parse_bit_sizes(spec), p, plain_modulus_for(n))
        for (n, spec), p in zip(keys, _PHANTOM_SPECIAL)
    ]


def select_rows(rows: str = "all", quick: bool = False, max_n: int | None = None) -> list[Row]:
    """Rows for ``--rows default|phantom|all`` (``--quick``: the two quick rows), N <= max_n."""
    if quick:  # two small rows: Phantom's N=4096 and SEAL's default N=8192
        out = [phantom_rows()[0], default_rows()[0]]
    elif rows == "default":
        out = default_rows()
    elif rows == "phantom":
        out = phantom_rows()
    elif rows == "all":
        out = default_rows() + phantom_rows()
    else:
        raise ValueError(f"rows: expected 'default', 'phantom' or 'all', got {rows!r}")
    if max_n is not None:
        out = [r for r in out if r.n <= max_n]
    return out


def make_context(row: Row, mul_method: str) -> tuple[Any, bool]:
    """Builds the Veil Context for a row; returns (context, secure).

    The HE-Standard check runs at 128 bits unless log2(QP) exceeds the bound, where the context is
    built with security=None and ``secure`` is False.
    """
    params = _core.EncryptionParameters("bfv")
    params.poly_modulus_degree = row.n
    primes = row.primes()
    params.coeff_modulus = primes
    params.special_primes = row.special
    params.alpha = row.special
    params.plain_modulus = row.plain_modulus
    params.mul_method = mul_method
    log_qp = sum(q.bit_length() for q in primes)
    secure = log_qp <= _core.CoeffModulus.max_bit_count(row.n, 128)
    return _core.Context(params, 128 if secure else None), secure


# ---- timing -------------------------------------------------------------------------------------
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


def _values(n: int, t: int, seed: int) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, t, size=n, dtype=np.uint64)


def _rotated(x: np.ndarray, steps: int) -> np.ndarray:
    """SEAL's rotate_rows on a 2 x N/2 slot matrix: each row rotated left by steps."""
    return np.roll(x.reshape(2, -1), -steps, axis=1).reshape(-1)


class _Lib:
    """The calls the timing suite makes; subclasses wrap Veil's and SEAL's SEAL-style APIs."""

    def encrypt(self, p: Any) -> Any:
        return self.encryptor.encrypt(p)

    def decrypt(self, c: Any) -> Any:
        return self.decryptor.decrypt(c)

    def add(self, a: Any, b: Any) -> Any:
        return self.ev.add(a, b)

    def multiply_plain(self, a: Any, p: Any) -> Any:
        return self.ev.multiply_plain(a, p)

    def rotate(self, a: Any) -> Any:
        return self.ev.rotate_rows(a, 1, self.gk)


class _VeilLib(_Lib):
    """Veil's SEAL-style API (veil._core) on one device with one multiplication method."""

    def __init__(self, row: Row, device: str, mul_method: str) -> None:
        self.ctx, self.secure = make_context(row, mul_method)
        self.device = device
        self.log2_qp = int(self.ctx.total_coeff_modulus_bits)
        self.encoder = _core.BatchEncoder(self.ctx)
        self.ev = _core.Evaluator(self.ctx)

    def keygen(self) -> tuple[Any, ...]:
        """Secret, public and relinearization keys (the timed 'keygen')."""
        kg = _core.KeyGenerator(self.ctx, self.device, None)
        return kg, kg.secret_key(), kg.create_public_key(), kg.create_relin_keys()

    def setup(self, rotations: bool) -> None:
        kg, sk, pk, self.rlk = self.keygen()
        self.gk = kg.create_galois_keys([1], False) if rotations else None
        self.encryptor = _core.Encryptor(self.ctx, pk, None)
        self.decryptor = _core.Decryptor(self.ctx, sk)

    def encode(self, x: np.ndarray) -> Any:
        return self.encoder.encode_unsigned(x, self.device)

    def decode(self, p: Any) -> np.ndarray:
        return np.asarray(self.encoder.decode_unsigned(p), dtype=np.uint64)

    def mul_relin(self, a: Any, b: Any) -> Any:
        return self.ev.relinearize(self.ev.multiply(a, b), self.rlk)


class _SealLib(_Lib):
    """SEAL via seal-python (BEHZ multiplication, one special prime)."""

    def __init__(self, row: Row) -> None:
        import seal

        self.seal = seal
        parms = seal.EncryptionParameters(seal.scheme_type.bfv)
        parms.set_poly_modulus_degree(row.n)
        if row.bit_sizes is None:
            parms.set_coeff_modulus(seal.CoeffModulus.BFVDefault(row.n))
        else:
            parms.set_coeff_modulus(seal.CoeffModulus.Create(row.n, row.bit_sizes))
        parms.set_plain_modulus(row.plain_modulus)
        self.ctx = seal.SEALContext(parms)
        if not self.ctx.parameters_set():
            raise ValueError(f"SEAL rejected {row.name}: {self.ctx.parameter_error_message()}")
        self.secure = True
        self.log2_qp = sum(q.bit_count() for q in parms.coeff_modulus())
        self.encoder = seal.BatchEncoder(self.ctx)
        self.ev = seal.Evaluator(self.ctx)
        self.t = row.plain_modulus

    def keygen(self) -> tuple[Any, ...]:
        kg = self.seal.KeyGenerator(self.ctx)
        return kg, kg.secret_key(), kg.create_public_key(), kg.create_relin_keys()

    def setup(self, rotations: bool) -> None:
        kg, sk, pk, self.rlk = self.keygen()
        self.gk = self.seal.GaloisKeys()
        if rotations:
            kg.create_galois_keys([1], self.gk)
        self.encryptor = self.seal.Encryptor(self.ctx, pk)
        self.decryptor = self.seal.Decryptor(self.ctx, sk)

    def encode(self, x: np.ndarray) -> Any:
        return self.encoder.encode(x)

    def decode(self, p: Any) -> np.ndarray:
        return (np.asarray(self.encoder.decode(p)).astype(np.int64) % self.t).astype(np.uint64)

    def mul_relin(self, a: Any, b: Any) -> Any:
        c = self.ev.multiply(a, b)
        self.ev.relinearize_inplace(c, self.rlk)
        return c


def _time_suite(
    lib: Any, row: Row, timer: Any, policy: Policy, ops: Sequence[str], mul_name: str
) -> dict[str, Any]:
    """Times ``ops`` (names of OPS, multiply as ``mul_name``) and checks each result once."""
    t = row.plain_modulus
    med: dict[str, float] = {}
    runs: dict[str, int] = {}
    correct: dict[str, bool] = {}
    if "keygen" in ops:
        med["keygen"], runs["keygen"] = time_op(lib.keygen, timer, policy, keygen=True)
    lib.setup(rotations="rotate_rows" in ops)
    x, y = _values(row.n, t, 1), _values(row.n, t, 2)
    px, py = lib.encode(x), lib.encode(y)
    cx, cy = lib.encrypt(px), lib.encrypt(py)
    prod = (x * y) % t  # t < 2^20: no uint64 overflow
    cases: dict[str, tuple[Callable[[], Any], np.ndarray | None]] = {
        "encode": (lambda: lib.encode(x), None),
        "encrypt": (lambda: lib.encrypt(px), None),
        "decrypt": (lambda: lib.decrypt(cx), None),
        "add": (lambda: lib.add(cx, cy), (x + y) % t),
        "multiply_plain": (lambda: lib.multiply_plain(cx, py), prod),
        mul_name: (lambda: lib.mul_relin(cx, cy), prod),
        "rotate_rows": (lambda: lib.rotate(cx), _rotated(x, 1)),
    }
    if "encrypt" in ops:
        correct["encrypt"] = bool(np.array_equal(lib.decode(lib.decrypt(cx)), x))
    for op in ops:
        if op == "keygen":
            continue
        fn, expected = cases[op]
        med[op], runs[op] = time_op(fn, timer, policy)
        if expected is not None:
            correct[op] = bool(np.array_equal(lib.decode(lib.decrypt(fn())), expected))
    return {"median_us": med, "runs": runs, "correct": correct}


def bench_veil(row: Row, device: str, policy: Policy) -> dict[str, Any]:
    """Times every operation of one row on one Veil backend; checks each result once.

    HPS and BEHZ use separate contexts (and keys); everything but multiply runs on the HPS one.
    Returns {"median_us": {op: µs}, "runs": {op: n}, "correct": {op: bool}, "secure": bool,
    "log2_qp": int}.
    """
    timer = _core.Timer(device)
    hps = _VeilLib(row, device, "hps")
    ops = [op for op in OPS if op != "multiply_behz"]
    out = _time_suite(hps, row, timer, policy, ops, "multiply_hps")
    behz = _time_suite(_VeilLib(row, device, "behz"), row, timer, policy,
                       ["multiply_behz"], "multiply_behz")
    for k in ("median_us", "runs", "correct"):
        out[k].update(behz[k])
    out.update(secure=hps.secure, log2_qp=hps.log2_qp)
    return out


def seal_supports(row: Row) -> bool:
    """SEAL runs N <= 2^15 with one special prime (its key switching), with batching t."""
    return row.n <= 32768 and row.special == 1


def bench_seal(row: Row, policy: Policy) -> dict[str, Any]:
    """Times SEAL (seal-python, single-threaded: SEAL does not thread internally) on one row.

    SEAL multiplies with BEHZ, so its multiply+relinearize fills the BEHZ column. Raises
    ImportError without seal-python.
    """
    lib = _SealLib(row)
    ops = [op for op in OPS if op != "multiply_hps"]
    out = _time_suite(lib, row, _core.Timer("cpu"), policy, ops, "multiply_behz")
    out.update(secure=True, log2_qp=lib.log2_qp)
    return out


# ---- environment facts --------------------------------------------------------------------------
def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo, else platform.processor()."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_commit() -> str | None:
    """Short commit of the Veil checkout being measured, or None.

    ``VEIL_GIT_COMMIT`` wins; otherwise the git work tree around this module or the current
    directory counts only if it is Veil's (holds ``python/veil/bench.py``): an installed package
    may sit inside an unrelated repository (e.g. a pyenv checkout).
    """
    if os.environ.get("VEIL_GIT_COMMIT"):
        return os.environ["VEIL_GIT_COMMIT"]
    here = os.path.dirname(os.path.abspath(__file__))
    for cwd in (here, os.getcwd()):
        try:
            top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=cwd,
                                 capture_output=True, text=True, timeout=5, check=False)
            if top.returncode or not os.path.isfile(
                os.path.join(top.stdout.strip(), "python", "veil", "bench.py")
            ):
                continue
            out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=cwd,
                                 capture_output=True, text=True, timeout=5, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
    return None


def _seal_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("seal-python")
    except Exception:  # noqa: BLE001 - any failure means "unknown"
        return None


# ---- the run ------------------------------------------------------------------------------------
@dataclass
class Backend:
    """One timed backend: ``kind`` is 'veil' or 'seal'; threads 0 = default."""

    kind: str
    device: str
    threads: int | None
    label: str


def plan_backends(device: str, threads: Sequence[int], seal: bool) -> list[Backend]:
    """Backends for ``--device``: auto = CPU configs + GPU when present; cpu; cuda[:k]."""
    out: list[Backend] = []
    want_cpu = device in ("auto", "cpu")
    gpu: str | None = None
    if device == "auto":
        default = resolve_device("auto")
        gpu = default if default.startswith("cuda") else None
    elif device.startswith("cuda"):
        gpu = resolve_device(device)
    elif device != "cpu":
        raise ValueError(f"device: expected auto, cpu, cuda or cuda:k, got {device!r}")
    if want_cpu:
        before, seen = _core.num_threads(), set()
        for n in threads:  # thread counts as the backend resolves them (0 = default), deduplicated
            _core.set_num_threads(int(n))
            eff = _core.num_threads()
            if eff not in seen:
                seen.add(eff)
                out.append(Backend("veil", "cpu", int(n), f"veil cpu {eff}t"))
        _core.set_num_threads(before)
    if gpu is not None:
        info = device_info()["gpus"]
        idx = int(gpu.split(":")[1])
        name = info[idx]["name"] if idx < len(info) else gpu
        out.append(Backend("veil", gpu, None, f"veil {gpu} ({name})"))
    if seal:
        out.append(Backend("seal", "cpu", 1, f"SEAL {_seal_version() or '?'} 1t"))
    return out


def _gpu_model(label: str) -> str:
    """'H200' when the backend's GPU is an H200, else 'H100' (the Phantom column used)."""
    return "H200" if "H200" in label.upper() else "H100"


def run(
    scheme: str = "bfv",
    device: str = "auto",
    quick: bool = False,
    runs: int | None = None,
    json_path: str | None = None,
    markdown_path: str | None = None,
    seal: bool = True,
    threads: Sequence[int] | None = None,
    rows: str = "all",
    max_n: int | None = None,
    cpu_max_n: int | None = None,
    verbose: bool = True,
) -> dict[str, Any]:
    """Runs the benchmark and returns every number (see the module docstring for the method).

    Args:
        device: ``"auto"`` (Veil CPU with each of ``threads``, plus the GPU when present),
            ``"cpu"``, or ``"cuda"``/``"cuda:k"`` (GPU only). SEAL runs unless ``seal`` is False.
        quick: two small rows, few runs. runs: timed runs per op (CPU: at most, under a budget).
        json_path, markdown_path: where to write the JSON record and the markdown tables.
        threads: CPU thread counts (0 = default; default ``[1, 0]``). rows: ``"default"``,
            ``"phantom"`` or ``"all"``. max_n: skip rows above this N. cpu_max_n: largest N on
            Veil's CPU backend (default 16384: its larger rows take minutes to hours today).

    Returns:
        {"meta": {...}, "results": [{"row", "backend", "median_us", "runs", "correct", ...}],
        "notes": [...], "all_correct": bool, "markdown": str}.

    Raises:
        ValueError: unknown scheme, rows, device or negative threads/runs.
    """
    if scheme != "bfv":
        raise ValueError(f"scheme: the benchmark supports 'bfv', got {scheme!r}")
    if runs is not None and runs < 1:
        raise ValueError(f"runs: expected a positive integer, got {runs}")
    threads = [1, 0] if threads is None else [int(n) for n in threads]
    if any(n < 0 for n in threads):
        raise ValueError(f"threads: expected thread counts >= 0, got {threads}")
    cpu_max_n = 16384 if cpu_max_n is None else int(cpu_max_n)
    notes: list[str] = []
    if seal:
        try:
            import seal as _seal  # noqa: F401
        except ImportError:
            seal = False
            notes.append("SEAL not timed: seal-python is not installed (pip install seal-python).")
    backends = plan_backends(device, threads, seal)
    selected = select_rows(rows, quick, max_n)
    if any(r.n >= 65536 for r in selected):
        notes.append("N = 65536 uses t = 786433 (65537 is not = 1 mod 2N there: no batching).")
    if any(r.n > cpu_max_n for r in selected) and any(b.device == "cpu" for b in backends):
        notes.append(f"Veil's CPU backend timed for N <= {cpu_max_n} only (--cpu-max-n).")
    if seal:
        notes.append("SEAL multiplies with BEHZ: its multiply+relinearize is in the BEHZ column.")

    results: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    load_start = _load_avg()
    threads_before = _core.num_threads()
    try:
        for row in selected:
            for be in backends:
                if be.kind == "veil" and be.device == "cpu" and row.n > cpu_max_n:
                    continue
                if be.kind == "seal" and not seal_supports(row):
                    continue
                pol = policy_for(be.device, quick, runs)
                t0 = time.perf_counter()
                rec: dict[str, Any] = {"row": _row_record(row), "backend": be.label,
                                       "kind": be.kind, "device": be.device}
                try:
                    if be.kind == "seal":
                        rec.update(bench_seal(row, pol))
                    else:
                        if be.threads is not None:
                            _core.set_num_threads(be.threads)
                        rec["threads"] = _core.num_threads() if be.device == "cpu" else None
                        rec.update(bench_veil(row, be.device, pol))
                except (ValueError, RuntimeError, MemoryError, TypeError) as e:  # keep going
                    rec["error"] = f"{type(e).__name__}: {e}"
                finally:
                    _core.set_num_threads(threads_before)
                rec["wall_s"] = time.perf_counter() - t0
                results.append(rec)
                if verbose:
                    print(_progress_line(rec), flush=True)
    finally:
        _core.set_num_threads(threads_before)

    info = device_info()
    meta = {
        "scheme": scheme,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": git_commit(),
        "veil_version": info["version"],
        "cuda_built": info["cuda_built"],
        "gpus": info["gpus"],
        "cpu_model": cpu_model(),
        "cpu_threads_default": info["cpu_threads"],
        "seal_version": _seal_version() if seal else None,
        "python": platform.python_version(),
        "quick": quick,
        "device_arg": device,
        "units": "microseconds (median)",
        "wall_s": time.perf_counter() - t_start,
        "load_avg_1min": {"start": load_start, "end": _load_avg()},
        "phantom_source": "/work/shared/ANCHORS.md, Phantom BFV table (H100 / H200, µs)",
    }
    busy = max(x for x in (load_start, meta["load_avg_1min"]["end"], 0.0) if x is not None)
    if busy > (os.cpu_count() or 1) and any(r["device"] == "cpu" for r in results):
        notes.append(f"CPU was busy (1-min load average up to {busy:.1f} on {os.cpu_count()} "
                     "cores): CPU timings, multi-threaded ones most, are unreliable.")
    out: dict[str, Any] = {"meta": meta, "results": results, "notes": notes}
    out["all_correct"] = all(
        "error" not in r and all(r.get("correct", {}).values()) for r in results
    )
    out["markdown"] = to_markdown(out)
    if verbose:  # raw markdown: wide tables stay readable in logs and terminals alike
        print("\n" + out["markdown"], end="")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump({k: v for k, v in out.items() if k != "markdown"}, f, indent=1)
    if markdown_path:
        with open(markdown_path, "w", encoding="utf-8") as f:
            f.write(out["markdown"])
    return out


def _load_avg() -> float | None:
    """1-minute load average (None where the OS has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def _row_record(row: Row) -> dict[str, Any]:
    d = asdict(row)
    d["name"] = row.name
    ph = row.phantom()
    d["phantom_us"] = (
        {v: {op: {"H100": a, "H200": b} for op, (a, b) in ops.items()} for v, ops in ph.items()}
        if ph else None
    )
    return d


def _progress_line(rec: dict[str, Any]) -> str:
    status = rec.get("error") or (
        "ok" if all(rec.get("correct", {}).values()) else
        "WRONG: " + ", ".join(k for k, v in rec["correct"].items() if not v)
    )
    return f"{rec['row']['name']} | {rec['backend']} | {rec['wall_s']:.1f} s | {status}"


# ---- tables -------------------------------------------------------------------------------------
def _fmt_us(v: float | None) -> str:
    if v is None:
        return "—"
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.0f}"
    return f"{v:.1f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "—" if not a or not b else f"{a / b:.2f}"


def to_markdown(result: dict[str, Any]) -> str:
    """Markdown: header facts, the timings table and the ratio table."""
    meta = result["meta"]
    gpus = ", ".join(g.get("name", "?") for g in meta["gpus"]) or "none"
    lines = [
        f"## Veil benchmark: {meta['scheme'].upper()}",
        "",
        f"- date {meta['date']}, commit {meta['git_commit'] or 'unknown'}, veil {meta['veil_version']}",
        f"- CPU: {meta['cpu_model']} ({meta['cpu_threads_default']} threads by default); GPU: {gpus}",
        f"- SEAL: {meta['seal_version'] or 'not timed'}; quick: {meta['quick']}",
        (
            "- µs, median after warm-up (GPU: CUDA events; CPU: steady clock); mul+relin = "
            "multiply plus relinearize; keygen = secret + public + relin keys."
        ),
        (
            "- Phantom: H100 numbers from ANCHORS.md (median of 100); ratio = Veil / Phantom "
            "time on the same GPU model (< 1: Veil faster; only meaningful on GPU rows)."
        ),
    ]
    lines += [f"- {n}" for n in result["notes"]]
    lines.append("")
    head = ["params", "log QP", "backend"] + list(OPS.values()) + [
        "Phantom H100 mul+relin HPS", "veil/Phantom"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for r in result["results"]:
        row = r["row"]
        qp = f"{r.get('log2_qp', '?')}" + ("" if r.get("secure", True) else " (insecure)")
        cells = [row["name"], qp, r["backend"]]
        if "error" in r:
            cells += [r["error"]] + ["—"] * (len(OPS) - 1) + ["—", "—"]
        else:
            med = r["median_us"]
            for op in OPS:
                c = _fmt_us(med.get(op))
                if op in r["correct"] and not r["correct"][op]:
                    c += " ✗"
                cells.append(c)
            ph = row.get("phantom_us")
            ph_hps = ph["HPS"]["multiply"]["H100"] if ph and "HPS" in ph else None
            model = _gpu_model(r["backend"])
            ph_same = ph["HPS"]["multiply"][model] if ph and "HPS" in ph else None
            cells.append(_fmt_us(ph_hps))
            ratio = _ratio(med.get("multiply_hps"), ph_same) if r["kind"] == "veil" else "—"
            if ratio != "—" and model == "H200":
                ratio += " (H200)"
            cells.append(ratio)
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", *_ratio_table(result)]
    return "\n".join(lines) + "\n"


def _ratio_table(result: dict[str, Any]) -> list[str]:
    """Time ratios Veil / peer: GPU rows vs Phantom (same GPU model), CPU rows vs SEAL."""
    seal_by_row = {
        r["row"]["name"]: r for r in result["results"] if r["kind"] == "seal" and "error" not in r
    }
    ops = list(OPS)
    body = []
    for r in result["results"]:
        if r["kind"] != "veil" or "error" in r:
            continue
        med = r["median_us"]
        if r["device"] == "cpu":
            peer = seal_by_row.get(r["row"]["name"])
            if peer is None:
                continue
            name = peer["backend"]
            pm = {op: peer["median_us"].get(op) for op in ops}
            pm["multiply_hps"] = None  # SEAL has BEHZ only
        else:
            ph = r["row"].get("phantom_us")
            if not ph:
                continue
            model = _gpu_model(r["backend"])
            name = f"Phantom {model}"
            pm = {op: None for op in ops}
            for variant, mapping in _PHANTOM_TO_VEIL.items():
                for ph_op, veil_op in mapping.items():
                    if variant in ph:
                        pm[veil_op] = ph[variant][ph_op][model]
        cells = [r["row"]["name"], r["backend"], name] + [_ratio(med.get(op), pm[op]) for op in ops]
        body.append("| " + " | ".join(cells) + " |")
    if not body:
        return []
    head = ["params", "backend", "peer"] + list(OPS.values())
    return [
        "Time ratio Veil / peer (< 1: Veil faster; — where the peer has no number):",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *body,
    ]

