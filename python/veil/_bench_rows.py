"""Parameter rows of ``veil bench`` and Phantom's published numbers (copied from ANCHORS.md).

One :class:`Row` is one parameter set of one scheme: N, the bit size of every prime (Q then the
special primes P), the number of special primes (alpha = |P|), and t (BFV/BGV) or the scale
(CKKS). Rows come from SEAL's defaults (``CoeffModulus.bfv_default`` for BFV/BGV, 60 + k x 40 +
60 for CKKS) and from Phantom's benchmark grids, whose measured times (µs, H100 / H200) are kept
here verbatim so that the report can show them beside Veil's and divide.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from . import _core

#: Schemes the benchmark knows.
SCHEMES = ("bfv", "bgv", "ckks")

# Phantom's tables, copied verbatim from /work/shared/ANCHORS.md (measured 2026-11-21 on this
# project's GPU machines; phantom-fhe commit 1f4a198, its bfv_bench / bgv_bench / ckks_bench;
# median of 100 runs, CUDA events; "multiply" = multiply + relinearize; µs as "H100 / H200").

# "Phantom BFV": variant | N | primes | log QP | multiply | rotate_rows | multiply_plain |
# encrypt | decrypt.
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

# "Phantom BGV": N | primes | log QP | multiply | rotate_rows | multiply_plain | encrypt | decrypt.
_PHANTOM_BGV_TABLE = """
| 4096 | 2×35 + 1×38 | 108 | 121 / 108 | 123 / 111 | 26 / 24 | 261 / 245 | 25 / 22 |
| 8192 | 3×54 + 1×56 | 218 | 137 / 126 | 140 / 128 | 37 / 34 | 276 / 256 | 26 / 24 |
| 8192 | 5×36 + 1×38 | 218 | 166 / 153 | 168 / 155 | 57 / 52 | 298 / 282 | 27 / 25 |
| 8192 | 4×36 + 2×37 | 218 | 138 / 126 | 140 / 129 | 47 / 43 | 290 / 269 | 27 / 25 |
| 16384 | 7×54 + 1×60 | 438 | 236 / 220 | 242 / 220 | 81 / 75 | 351 / 328 | 30 / 28 |
| 16384 | 11×36 + 1×42 | 438 | 362 / 341 | 363 / 340 | 123 / 115 | 411 / 385 | 33 / 30 |
| 16384 | 8×36 + 2×37 + 2×38 | 438 | 168 / 158 | 169 / 158 | 91 / 85 | 380 / 361 | 31 / 28 |
| 32768 | 15×55 + 1×56 | 881 | 674 / 632 | 666 / 626 | 189 / 171 | 566 / 527 | 46 / 43 |
| 32768 | 23×36 + 1×53 | 881 | 1215 / 1136 | 1205 / 1130 | 307 / 279 | 741 / 705 | 59 / 55 |
| 32768 | 16×36 + 7×38 + 1×39 | 881 | 323 / 307 | 318 / 304 | 204 / 176 | 657 / 627 | 45 / 43 |
| 65536 | 15×55 + 17×56 | 1777 | 3191 / 2948 | 3147 / 2914 | 446 / 422 | 1369 / 1302 | 119 / 108 |
| 65536 | 10×36 + 37×37 + 1×48 | 1777 | 6509 / 5950 | 6446 / 5907 | 673 / 638 | 1973 / 1868 | 178 / 158 |
| 65536 | 32×36 + 15×39 + 1×40 | 1777 | 1158 / 1078 | 1117 / 1046 | 458 / 437 | 1842 / 1769 | 124 / 112 |
"""

# "Phantom CKKS": N | primes | log QP | multiply | rotate | rescale | multiply_plain | add |
# encrypt | decrypt | encode | decode.
_PHANTOM_CKKS_TABLE = """
| 8192 | 1×60 + 1×40 + 1×60 | 160 | 110 / 103 | 112 / 105 | 54 / 51 | 6 / 6 | 6 / 6 | 225 / 210 | 10 / 9 | 89 / 84 | 71 / 71 |
| 8192 | 1×60 + 2×40 + 1×60 | 200 | 123 / 116 | 126 / 118 | 55 / 52 | 6 / 6 | 6 / 6 | 226 / 205 | 10 / 9 | 87 / 82 | 74 / 69 |
| 16384 | 1×60 + 7×40 + 1×60 | 400 | 246 / 234 | 245 / 233 | 66 / 64 | 8 / 7 | 7 / 7 | 253 / 235 | 11 / 10 | 115 / 108 | 124 / 116 |
| 16384 | 1×60 + 5×40 + 2×60 | 380 | 155 / 153 | 156 / 156 | 58 / 56 | 7 / 7 | 7 / 7 | 250 / 247 | 11 / 12 | 116 / 125 | 107 / 114 |
| 32768 | 1×60 + 19×40 + 1×60 | 880 | 875 / 831 | 863 / 826 | 104 / 100 | 14 / 14 | 13 / 12 | 386 / 369 | 17 / 15 | 201 / 177 | 776 / 654 |
| 32768 | 1×60 + 17×40 + 2×60 | 860 | 513 / 493 | 505 / 486 | 99 / 97 | 13 / 13 | 12 / 11 | 370 / 360 | 15 / 14 | 183 / 174 | 641 / 581 |
| 32768 | 1×60 + 14×40 + 3×60 | 800 | 345 / 334 | 340 / 329 | 95 / 94 | 12 / 12 | 11 / 11 | 356 / 342 | 14 / 13 | 185 / 171 | 475 / 417 |
| 32768 | 1×60 + 11×40 + 4×60 | 740 | 251 / 243 | 245 / 240 | 87 / 85 | 11 / 11 | 10 / 10 | 340 / 333 | 13 / 12 | 182 / 168 | 306 / 277 |
| 65536 | 1×60 + 41×40 + 1×60 | 1760 | 5181 / 4774 | 5121 / 4731 | 269 / 251 | 52 / 43 | 51 / 39 | 1029 / 985 | 50 / 41 | 358 / 331 | 11669 / 7374 |
| 65536 | 1×60 + 39×40 + 2×60 | 1740 | 2963 / 2706 | 2911 / 2666 | 259 / 242 | 50 / 41 | 50 / 37 | 1013 / 972 | 47 / 38 | 400 / 356 | 8619 / 5806 |
| 65536 | 1×60 + 38×40 + 3×60 | 1760 | 2136 / 1951 | 2086 / 1911 | 255 / 238 | 49 / 41 | 49 / 37 | 1013 / 972 | 47 / 38 | 387 / 334 | 8674 / 5506 |
| 65536 | 1×60 + 35×40 + 4×60 | 1700 | 1552 / 1415 | 1505 / 1378 | 238 / 224 | 45 / 38 | 45 / 34 | 975 / 932 | 43 / 35 | 384 / 318 | 5729 / 4108 |
| 65536 | 1×60 + 34×40 + 5×60 | 1720 | 1330 / 1213 | 1282 / 1178 | 235 / 222 | 44 / 37 | 44 / 34 | 975 / 939 | 42 / 35 | 355 / 320 | 5460 / 4059 |
| 65536 | 1×60 + 29×40 + 6×60 | 1580 | 977 / 900 | 936 / 869 | 208 / 196 | 38 / 32 | 39 / 30 | 891 / 863 | 35 / 30 | 373 / 321 | 3289 / 2666 |
"""

# ANCHORS.md: "CKKS rows use 1,1,1,2,1,2,3,4,1,2,3,4,5,6 [special primes] in order; BFV/BGV rows
# use 1,1,1,2,1,1,4,1,1,8,1,1,16 in order".
_PHANTOM_SPECIAL_INTEGER = (1, 1, 1, 2, 1, 1, 4, 1, 1, 8, 1, 1, 16)
_PHANTOM_SPECIAL_CKKS = (1, 1, 1, 2, 1, 2, 3, 4, 1, 2, 3, 4, 5, 6)
#: Kept under its old name (the BFV benchmark's).
_PHANTOM_SPECIAL = _PHANTOM_SPECIAL_INTEGER

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

# Cheddar (scale-snu/cheddar-fhe @ 8df8b26, CUDA 13.0, sm_90) measured on this project's H100,
# copied from /work/shared/ANCHORS.md ("Cheddar on this project's H100", 2026-11-22): µs, median
# of 50 runs, CUDA events. Keyed by (parameter set, RNS limbs of the ciphertext): the top level
# and the lower level ANCHORS.md reports. "multiply" = HMult (tensor + relinearize).
CHEDDAR_H100: dict[tuple[str, int], dict[str, float]] = {
    ("bootparam_40", 47): {"multiply": 466, "relinearize": 440, "rotate": 447, "rescale": 103,
                           "add": 33},
    ("bootparam_40", 23): {"multiply": 250, "relinearize": 239, "rotate": 244, "rescale": 71,
                           "add": 19},
    ("bootparam_40_64bit", 26): {"multiply": 800, "relinearize": 767, "rotate": 772,
                                 "rescale": 195, "add": 36},
    ("bootparam_40_64bit", 14): {"multiply": 378, "relinearize": 366, "rotate": 369,
                                 "rescale": 136, "add": 21},
}

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


def _parse_phantom(scheme: str) -> dict[tuple[int, str], PhantomRow]:
    """{(N, primes as written): {variant: {column: (H100 µs, H200 µs)}}}, in table order.

    BFV rows carry their variant (HPS, BEHZ) in the first cell; BGV and CKKS rows have one
    variant named after the scheme.
    """
    text = {"bfv": _PHANTOM_BFV_TABLE, "bgv": _PHANTOM_BGV_TABLE,
            "ckks": _PHANTOM_CKKS_TABLE}[scheme]
    table: dict[tuple[int, str], PhantomRow] = {}
    for line in text.strip().splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if scheme == "bfv":
            variant, cells = cells[0], cells[1:]
        else:
            variant = scheme.upper()
        n, primes = int(cells[0]), cells[1]
        ops = {}
        for op, cell in zip(_PHANTOM_COLUMNS[scheme], cells[3:], strict=True):
            h100, h200 = (float(x) for x in cell.split("/"))
            ops[op] = (h100, h200)
        table.setdefault((n, primes), {})[variant] = ops
    return table


#: Phantom's numbers per scheme, keyed by (N, prime list as written in ANCHORS.md).
PHANTOM: dict[str, dict[tuple[int, str], PhantomRow]] = {s: _parse_phantom(s) for s in SCHEMES}
PHANTOM_BFV = PHANTOM["bfv"]
PHANTOM_BGV = PHANTOM["bgv"]
PHANTOM_CKKS = PHANTOM["ckks"]

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
#: that 32-bit words serve them (issue 7's BFV/BGV targets), and CKKS's 32-bit default chain.
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
    "default_rows",
    "make_context",
    "parse_bit_sizes",
    "phantom_rows",
    "plain_modulus_for",
    "row_record",
    "seal_supports",
    "select_rows",
    "words32_rows",
]
