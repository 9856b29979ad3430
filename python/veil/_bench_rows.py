"""Parameter rows of ``veil bench`` and the peers' numbers (package data ``data/peers.json``).

One :class:`Row` is one parameter set of one scheme: N, the bit size of every prime (Q then the
special primes P), the number of special primes (alpha = |P|), and t (BFV/BGV) or the scale
(CKKS). Rows come from SEAL's defaults (``CoeffModulus.bfv_default`` for BFV/BGV, 60 + k x 40 +
60 for CKKS) and from Phantom's benchmark grids, whose measured times (µs, H100 / H200) ship as
package data (:func:`load_peers`; converted once from the project's ANCHORS.md by
``bench/peers_from_anchors.py``) so that the report can show them beside Veil's.
"""

from __future__ import annotations

import functools
import json
import re
from dataclasses import dataclass
from importlib import resources
from typing import Any

from . import _core

#: Schemes the benchmark knows.
SCHEMES = ("bfv", "bgv", "ckks")

#: Phantom's column names, per table.
_PHANTOM_COLUMNS = {
    "bfv": ("multiply", "rotate_rows", "multiply_plain", "encrypt", "decrypt"),
    "bgv": ("multiply", "rotate_rows", "multiply_plain", "encrypt", "decrypt"),
    "ckks": ("multiply", "rotate", "rescale", "multiply_plain", "add", "encrypt", "decrypt",
             "encode", "decode"),
}

#: Phantom column -> Veil op name, per scheme and variant (the op names of bench.OPS_BY_SCHEME).
PHANTOM_TO_VEIL: dict[str, dict[str, dict[str, str]]] = {
    "bfv": {
        "HPS": {"multiply": "multiply_hps", "rotate_rows": "rotate_rows",
                "multiply_plain": "multiply_plain", "encrypt": "encrypt", "decrypt": "decrypt"},
        "BEHZ": {"multiply": "multiply_behz"},
    },
    "bgv": {"BGV": {c: c for c in _PHANTOM_COLUMNS["bgv"]}},
    "ckks": {"CKKS": {c: c for c in _PHANTOM_COLUMNS["ckks"]}},
}

#: The Phantom op shown in the main table's Phantom column, per scheme: (variant, column).
PHANTOM_HEADLINE = {"bfv": ("HPS", "multiply"), "bgv": ("BGV", "multiply"),
                    "ckks": ("CKKS", "multiply")}

PhantomRow = dict[str, dict[str, tuple[float, float]]]  # {variant: {column: (H100, H200)}}

#: Cheddar's parameter shapes (its parameters/*.json): prime bit sizes (Q from q_0 up, then P),
#: special primes, rescale blocks and word size. bootparam_40: 23 + 16 + 4 main primes of
#: 30/29/30 bits and 4 terminal primes of 25 bits (top, rescaled in pairs as Cheddar's top
#: levels drop two terminal primes), 12 special primes of 31 bits (dnum 4), 32-bit words.
#: bootparam_40_64bit: 50 + 12 x 40 + 13 x 55 bits, 7 special primes of 56 bits (dnum 4).
CHEDDAR_SHAPES: dict[str, dict[str, Any]] = {
    "bootparam_40": {
        "spec": "23×30 + 16×29 + 4×30 + 4×25 + 12×31",
        "special": 12,
        # q_0's block (2), blocks of 1 and 2 (scales alternate ~2^50 and ~2^40), the terminal pairs
        "rescale_groups": [2] + [1, 2] * 13 + [2] + [2, 2],
        "word_bits": 32,
        "limbs": (47, 23),
    },
    "bootparam_40_64bit": {
        "spec": "1×50 + 12×40 + 13×55 + 7×56",
        "special": 7,
        "rescale_groups": None,
        "word_bits": 64,
        "limbs": (26, 14),
    },
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


#: Where the peers' numbers live inside the package (importlib.resources).
PEERS_RESOURCE = "data/peers.json"


@functools.lru_cache(maxsize=None)
def load_peers() -> dict[str, Any]:
    """The peers' published or measured numbers shipped with Veil (``veil/data/peers.json``).

    Loaded once with :mod:`importlib.resources` (works from a wheel or a source tree) and
    checked by :func:`check_peers`; treat the result as read-only. Layout (schema 1):

    * ``"phantom"``: provenance (``source``, ``measured_on``, ``gpus``, ``device`` = "gpu",
      ``what``, ``units`` = "us") and ``"tables"``: {scheme: {"columns": [op, ...], "rows":
      [{"n", "primes" (as written, e.g. "3×54 + 1×56"), "log_qp", "special", "variants":
      {variant: {op: {"H100": µs, "H200": µs}}}}]}} (variants: HPS and BEHZ for BFV, "BGV",
      "CKKS").
    * ``"cheddar"``: provenance and ``"rows"``: [{"shape", "limbs", "us": {op: µs}}] (H100).
    * ``"bootstrapping"``: {"units": "ms", "peers": [{"label", "system", "gpu", "kind"
      (measured/published), "ms", "source"}]}.

    Source: the project's anchors page (ANCHORS.md), converted by ``bench/peers_from_anchors.py``.

    Raises:
        ValueError: the file does not follow the layout above (names the offending entry).
    """
    text = resources.files(__package__).joinpath(PEERS_RESOURCE).read_text(encoding="utf-8")
    data = json.loads(text)
    check_peers(data)
    return data


def _positive(v: Any, where: str) -> float:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
        raise ValueError(f"peers.json: {where}: expected a positive number, got {v!r}")
    return float(v)


def check_peers(data: Any) -> None:
    """Checks peers.json's layout (see :func:`load_peers`); raises ValueError naming the entry.

    Beyond types: every Phantom row's primes parse (:func:`parse_bit_sizes`) and sum to its
    log QP, its ops are the table's columns, and every time is positive.
    """
    if not isinstance(data, dict) or data.get("schema") != 1:
        raise ValueError("peers.json: expected an object with \"schema\": 1")
    for block in ("phantom", "cheddar", "bootstrapping"):
        if not isinstance(data.get(block), dict):
            raise ValueError(f"peers.json: missing object {block!r}")
    ph = data["phantom"]
    for key in ("source", "what", "units", "device", "gpus", "tables"):
        if key not in ph:
            raise ValueError(f"peers.json: phantom: missing {key!r}")
    if ph["units"] != "us" or ph["device"] != "gpu":
        raise ValueError("peers.json: phantom: expected units 'us' on device 'gpu'")
    for scheme in SCHEMES:
        t = ph["tables"].get(scheme)
        if not isinstance(t, dict) or tuple(t.get("columns", ())) != _PHANTOM_COLUMNS[scheme]:
            raise ValueError(f"peers.json: phantom.tables.{scheme}: expected columns "
                             f"{list(_PHANTOM_COLUMNS[scheme])}")
        for i, r in enumerate(t.get("rows") or ()):
            where = f"phantom.tables.{scheme}.rows[{i}]"
            try:
                bits = parse_bit_sizes(r["primes"])
                ok = (isinstance(r["n"], int) and r["n"] > 0 and r["n"] & (r["n"] - 1) == 0
                      and sum(bits) == r["log_qp"] and 1 <= r["special"] < len(bits))
            except (KeyError, TypeError, ValueError) as e:
                raise ValueError(f"peers.json: {where}: {type(e).__name__}: {e}") from None
            if not ok:
                raise ValueError(f"peers.json: {where}: n, primes, log_qp or special "
                                 "inconsistent")
            for variant, ops in r["variants"].items():
                if not set(ops) <= set(t["columns"]):
                    raise ValueError(f"peers.json: {where}.{variant}: unknown ops "
                                     f"{sorted(set(ops) - set(t['columns']))}")
                for op, times in ops.items():
                    for gpu in ("H100", "H200"):
                        _positive(times.get(gpu), f"{where}.{variant}.{op}.{gpu}")
        if not t.get("rows"):
            raise ValueError(f"peers.json: phantom.tables.{scheme}: no rows")
    ch = data["cheddar"]
    if ch.get("units") != "us" or not ch.get("rows"):
        raise ValueError("peers.json: cheddar: expected units 'us' and rows")
    for i, r in enumerate(ch["rows"]):
        if not isinstance(r.get("shape"), str) or not isinstance(r.get("limbs"), int):
            raise ValueError(f"peers.json: cheddar.rows[{i}]: expected shape and limbs")
        for op, v in (r.get("us") or {}).items():
            _positive(v, f"cheddar.rows[{i}].us.{op}")
    boot = data["bootstrapping"]
    if boot.get("units") != "ms" or not boot.get("peers"):
        raise ValueError("peers.json: bootstrapping: expected units 'ms' and peers")
    for i, p in enumerate(boot["peers"]):
        if not isinstance(p.get("label"), str):
            raise ValueError(f"peers.json: bootstrapping.peers[{i}]: expected a label")
        _positive(p.get("ms"), f"bootstrapping.peers[{i}].ms")


def _phantom_table(scheme: str) -> dict[tuple[int, str], PhantomRow]:
    """{(N, primes as written): {variant: {column: (H100 µs, H200 µs)}}}, in table order, from
    peers.json. BFV rows carry two variants (HPS, BEHZ); BGV and CKKS one, named after the scheme.
    """
    rows = load_peers()["phantom"]["tables"][scheme]["rows"]
    return {
        (int(r["n"]), r["primes"]): {
            variant: {op: (float(t["H100"]), float(t["H200"])) for op, t in ops.items()}
            for variant, ops in r["variants"].items()
        }
        for r in rows
    }


#: Phantom's numbers per scheme, keyed by (N, prime list as written in ANCHORS.md).
PHANTOM: dict[str, dict[tuple[int, str], PhantomRow]] = {s: _phantom_table(s) for s in SCHEMES}
PHANTOM_BFV = PHANTOM["bfv"]
PHANTOM_BGV = PHANTOM["bgv"]
PHANTOM_CKKS = PHANTOM["ckks"]
#: Special primes P of each Phantom row, in table order (BFV and BGV share the grid).
_PHANTOM_SPECIAL_BY_SCHEME = {
    s: tuple(int(r["special"]) for r in load_peers()["phantom"]["tables"][s]["rows"])
    for s in SCHEMES
}
_PHANTOM_SPECIAL_INTEGER = _PHANTOM_SPECIAL_BY_SCHEME["bfv"]
_PHANTOM_SPECIAL_CKKS = _PHANTOM_SPECIAL_BY_SCHEME["ckks"]

#: Cheddar's H100 numbers (peers.json "cheddar"): µs, median of 50 runs, CUDA events, keyed by
#: (parameter set, RNS limbs of the ciphertext). "multiply" = HMult (tensor + relinearize).
CHEDDAR_H100: dict[tuple[str, int], dict[str, float]] = {
    (r["shape"], int(r["limbs"])): {op: float(v) for op, v in r["us"].items()}
    for r in load_peers()["cheddar"]["rows"]
}


#: t for N <= 2^15 (SEAL's examples and Phantom's benchmarks) and for N = 2^16 (65537 is not
#: = 1 mod 2^17, so it cannot batch there; 786433 = 3 * 2^18 + 1 is the smallest 20-bit choice).
PLAIN_MODULUS = 65537
PLAIN_MODULUS_2_16 = 786433
#: CKKS scale: 2^40, the size of the rescaling primes of every CKKS row.
CKKS_SCALE_BITS = 40


# ---- parameter rows -------------------------------------------------------------------------------
@dataclass
class Row:
    """One parameter set: N, primes (Q then P), t (BFV/BGV) and the scheme."""

    source: str  # "SEAL default" or "Phantom" (ANCHORS.md)
    n: int  # poly_modulus_degree
    primes_spec: str  # as ANCHORS.md writes it ("3×54 + 1×56"), or "BFVDefault"
    bit_sizes: list[int] | None  # bit size of every prime; None for BFVDefault
    special: int  # special primes P (alpha = special)
    plain_modulus: int | None  # t (None for CKKS)
    scheme: str = "bfv"
    word_bits: int = 0  # 0: the context chooses (32 when every residue fits)
    rescale_groups: list[int] | None = None  # CKKS rescale blocks (None: one prime each)
    limbs: int | None = None  # RNS limbs of the timed ciphertexts (None: the top level)
    shape: str | None = None  # Cheddar's parameter set for "Cheddar" rows
    peer: tuple[int, str] | None = None  # a "32-bit" row's Phantom row (N, primes as written)

    @property
    def name(self) -> str:
        """Short label, e.g. 'N=8192 3×54 + 1×56 (P=1)'."""
        if self.shape:
            return f"{self.shape} N={self.n} {self.limbs} limbs (P={self.special})"
        if self.source == "32-bit":
            return f"N={self.n} {self.primes_spec} (P={self.special}, 32-bit)"
        return f"N={self.n} {self.primes_spec} (P={self.special})"

    @property
    def scale(self) -> float | None:
        """CKKS encoding scale (2^40), None for BFV/BGV."""
        return 2.0**CKKS_SCALE_BITS if self.scheme == "ckks" else None

    def primes(self) -> list[int]:
        """The coefficient modulus (Q primes then P primes)."""
        if self.bit_sizes is None:
            return [int(q) for q in _core.CoeffModulus.bfv_default(self.n)]
        return [int(q) for q in _core.CoeffModulus.create(self.n, self.bit_sizes)]

    def log2_qp(self) -> int:
        """Sum of the primes' bit counts (ANCHORS.md's 'log QP')."""
        return sum(q.bit_length() for q in self.primes())

    def secure(self) -> bool:
        """log2(QP) within the HE-Standard bound for 128-bit security at this N."""
        return self.log2_qp() <= _core.CoeffModulus.max_bit_count(self.n, 128)

    def cheddar(self) -> dict[str, float] | None:
        """Cheddar's H100 numbers for this row's shape and limb count, or None."""
        if self.source != "Cheddar" or self.shape is None or self.limbs is None:
            return None
        return CHEDDAR_H100.get((self.shape, self.limbs))

    def level(self, max_level: int) -> int:
        """The level the timed ciphertexts are encrypted at (limbs - 1, or the top)."""
        return max_level if self.limbs is None else self.limbs - 1

    def phantom(self) -> PhantomRow | None:
        """Phantom's numbers for this exact row (same N, primes and special count), or for a
        32-bit row the Phantom row of the same N and log Q it stands beside; else None."""
        if self.source == "32-bit" and self.peer is not None:
            return PHANTOM[self.scheme].get(self.peer)
        if self.source != "Phantom":
            return None
        return PHANTOM[self.scheme].get((self.n, self.primes_spec))


def plain_modulus_for(n: int) -> int:
    """t = 65537 up to N = 2^15, 786433 at N >= 2^16 (both batching primes: t = 1 mod 2N)."""
    return PLAIN_MODULUS if n <= 32768 else PLAIN_MODULUS_2_16


def _check_scheme(scheme: str) -> None:
    if scheme not in SCHEMES:
        raise ValueError(f"scheme: expected one of {', '.join(SCHEMES)}, got {scheme!r}")


def default_rows(scheme: str = "bfv") -> list[Row]:
    """SEAL's defaults for N = 2^13..2^16, one special prime.

    BFV/BGV: ``CoeffModulus.bfv_default`` (SEAL's BFVDefault). CKKS: 60 + k x 40 + 60 with the
    largest k within the 128-bit bound (SEAL's examples' shape).
    """
    _check_scheme(scheme)
    if scheme == "ckks":
        out = []
        for n in (8192, 16384, 32768, 65536):
            k = max(1, (_core.CoeffModulus.max_bit_count(n, 128) - 120) // CKKS_SCALE_BITS)
            spec = f"1×60 + {k}×40 + 1×60"
            out.append(Row("SEAL default", n, spec, parse_bit_sizes(spec), 1, None, "ckks"))
        return out
    return [
        Row("SEAL default", n, "BFVDefault", None, 1, plain_modulus_for(n), scheme)
        for n in (8192, 16384, 32768, 65536)
    ]


def phantom_rows(scheme: str = "bfv") -> list[Row]:
    """Phantom's parameter sets for ``scheme`` (ANCHORS.md order), with their special primes."""
    _check_scheme(scheme)
    keys = list(PHANTOM[scheme])  # insertion order = the table's order
    special = _PHANTOM_SPECIAL_CKKS if scheme == "ckks" else _PHANTOM_SPECIAL_INTEGER
    return [
        Row("Phantom", n, spec, parse_bit_sizes(spec), p,
            None if scheme == "ckks" else plain_modulus_for(n), scheme)
        for (n, spec), p in zip(keys, special, strict=True)
    ]


#: 32-bit rows: Phantom's headline shapes with (at least) the same log Q in ~30-bit primes, so
#: that 32-bit words serve them (the BFV/BGV targets of the 32-bit work), and CKKS's 32-bit default chain.
#: (scheme, N, primes, special primes, Phantom row (N, primes) beside it, rescale blocks).
_WORDS32 = (
    ("bfv", 16384, "13×30 + 1×31", 1, (16384, "7×54 + 1×60"), None),
    ("bfv", 65536, "58×30 + 4×31", 4, (65536, "15×55 + 17×56"), None),
    ("bgv", 65536, "39×30 + 16×31", 16, (65536, "32×36 + 15×39 + 1×40"), None),
    ("ckks", 65536, "46×30 + 11×31", 11, None, "default32"),
)


def words32_rows(scheme: str = "bfv") -> list[Row]:
    """The 32-bit rows of ``scheme`` (``_WORDS32``), word size forced to 32."""
    _check_scheme(scheme)
    out = []
    for s, n, spec, special, peer, groups in _WORDS32:
        if s != scheme:
            continue
        rescale = None
        if groups == "default32":
            from ._ckks import default_ckks_chain_32

            _, rescale, _ = default_ckks_chain_32(n, 128)
        out.append(Row("32-bit", n, spec, parse_bit_sizes(spec), special,
                       None if s == "ckks" else plain_modulus_for(n), s, 32, rescale, None, None,
                       peer))
    return out


def cheddar_rows(scheme: str = "ckks") -> list[Row]:
    """Cheddar's two N = 2^16 shapes (CHEDDAR_SHAPES), each at its top level and at the lower
    level ANCHORS.md reports (CKKS only; no rows for BFV/BGV)."""
    _check_scheme(scheme)
    if scheme != "ckks":
        return []
    out = []
    for shape, d in CHEDDAR_SHAPES.items():
        for limbs in d["limbs"]:
            out.append(Row("Cheddar", 65536, d["spec"], parse_bit_sizes(d["spec"]), d["special"],
                           None, "ckks", d["word_bits"], d["rescale_groups"], limbs, shape))
    return out


def select_rows(
    rows: str = "all", quick: bool = False, max_n: int | None = None, scheme: str = "bfv"
) -> list[Row]:
    """Rows for ``--rows default|phantom|cheddar|all`` (``--quick``: two small rows), N <= max_n.

    "all" drops a default row whose primes and special count equal a Phantom row's (the CKKS
    defaults are Phantom rows), keeping the Phantom one, which carries Phantom's numbers; for
    CKKS it ends with Cheddar's shapes.
    Quick rows: BFV Phantom N=4096 and SEAL's N=8192; BGV Phantom N=4096 and N=8192 4×36 + 2×37
    (two special primes); CKKS Phantom's two N=8192 rows.
    """
    _check_scheme(scheme)
    if quick:
        ph = phantom_rows(scheme)
        out = {"bfv": [ph[0], default_rows("bfv")[0]], "bgv": [ph[0], ph[3]],
               "ckks": [ph[0], ph[1]]}[scheme]
    elif rows == "default":
        out = default_rows(scheme)
    elif rows == "phantom":
        out = phantom_rows(scheme)
    elif rows == "cheddar":
        out = cheddar_rows(scheme)
        if not out:
            raise ValueError(f"rows: 'cheddar' rows are CKKS only, not {scheme}")
    elif rows == "words32":
        out = words32_rows(scheme)
    elif rows == "all":
        ph = phantom_rows(scheme)
        seen = {(r.n, tuple(r.bit_sizes or ()), r.special) for r in ph}
        out = [r for r in default_rows(scheme)
               if (r.n, tuple(r.bit_sizes or ()), r.special) not in seen] + ph
        out += words32_rows(scheme) + cheddar_rows(scheme)
    else:
        raise ValueError(
            f"rows: expected 'default', 'phantom', 'cheddar', 'words32' or 'all', got {rows!r}")
    if max_n is not None:
        out = [r for r in out if r.n <= max_n]
    return out


def make_context(row: Row, mul_method: str | None = None) -> tuple[Any, bool]:
    """Builds the Veil Context for a row; returns (context, secure).

    alpha = the row's special-prime count. The HE-Standard check runs at 128 bits unless
    log2(QP) exceeds the bound, where the context is built with security=None and ``secure`` is
    False. ``mul_method`` ("hps"/"behz") applies to BFV only.
    """
    params = _core.EncryptionParameters(row.scheme)
    params.poly_modulus_degree = row.n
    params.coeff_modulus = row.primes()
    params.special_primes = row.special
    params.alpha = row.special
    if row.plain_modulus is not None:
        params.plain_modulus = row.plain_modulus
    if row.scheme == "bfv":
        params.mul_method = mul_method or "hps"
    # BEHZ needs 64-bit words (its m~ = 2^32 and 61-bit Bsk primes): a 32-bit row's BEHZ
    # column runs on the same primes in 64-bit words.
    params.word_bits = 0 if row.scheme == "bfv" and params.mul_method == "behz" else row.word_bits
    if row.rescale_groups:
        params.rescale_groups = list(row.rescale_groups)
    secure = row.secure()
    return _core.Context(params, 128 if secure else None), secure


def seal_supports(row: Row) -> bool:
    """SEAL runs N <= 2^15 with one special prime (its key switching) within its 128-bit bound."""
    return row.n <= 32768 and row.special == 1 and row.secure()


def row_record(row: Row) -> dict[str, Any]:
    """The row as JSON: its fields, name, log2 QP, security and Phantom's numbers (or None)."""
    from dataclasses import asdict

    d = asdict(row)
    d["name"] = row.name
    d["log2_qp"] = row.log2_qp()
    d["secure"] = row.secure()
    ch = row.cheddar()
    d["cheddar_us_h100"] = dict(ch) if ch else None
    ph = row.phantom()
    d["phantom_us"] = (
        {v: {op: {"H100": a, "H200": b} for op, (a, b) in ops.items()} for v, ops in ph.items()}
        if ph else None
    )
    return d


__all__ = [
    "CHEDDAR_H100",
    "CHEDDAR_SHAPES",
    "PHANTOM",
    "PHANTOM_BFV",
    "PHANTOM_BGV",
    "PHANTOM_CKKS",
    "PHANTOM_HEADLINE",
    "PHANTOM_TO_VEIL",
    "PLAIN_MODULUS",
    "PLAIN_MODULUS_2_16",
    "SCHEMES",
    "Row",
    "cheddar_rows",
    "check_peers",
    "default_rows",
    "load_peers",
    "make_context",
    "parse_bit_sizes",
    "phantom_rows",
    "plain_modulus_for",
    "row_record",
    "seal_supports",
    "select_rows",
    "words32_rows",
]
