// Word-level modular arithmetic for 64-bit RNS words (moduli < 2^61) and 32-bit words (moduli
// < 2^31), host and device.
//
// Barrett reduction of a 128-bit product uses the two-word constant floor(2^128 / q)
// (Barrett, CRYPTO'86; the two-word variant as in SEAL's util/uintarithsmallmod.h semantics).
// Shoup multiplication by a constant w uses w' = floor(w * 2^64 / q) (Shoup, NTL; Harvey,
// "Faster arithmetic for number-theoretic transforms", J. Symb. Comp. 2014, Alg. 2), and its
// lazy form returns a value in [0, 2q) that the NTT butterflies consume directly.
#pragma once
#include <cstdint>

#include "veil/core/hd.h"

namespace veil {

/// An unsigned 64-bit word: the default RNS word (residues of primes q < 2^61).
using u64 = std::uint64_t;
/// An unsigned 32-bit word: the narrow RNS word (residues of primes q < 2^31, fits_word32).
using u32 = std::uint32_t;
/// A signed 64-bit integer (centered coefficients, sampler outputs).
using i64 = std::int64_t;
#if defined(__SIZEOF_INT128__)
/// An unsigned 128-bit integer (GCC/Clang's __int128): host-side exact products and quotients.
using u128 = unsigned __int128;
#endif

/// A word modulus q < 2^61 with its Barrett constant floor(2^128/q) = (ratio_hi, ratio_lo).
/// Plain-old-data so it can live in device tables.
struct Modulus {
  /// The modulus q itself (2 <= q < 2^61; 0 in a default-constructed Modulus).
  u64 value = 0;
  /// floor(2^128 / q) >> 64 = floor(2^64 / q): the high word of the Barrett constant.
  u64 ratio_hi = 0;
  /// floor(2^128 / q) mod 2^64: the low word of the Barrett constant.
  u64 ratio_lo = 0;
  /// The bit length of q (std::bit_width(q)), b with 2^(b-1) <= q < 2^b.
  int bit_count = 0;
  /// q < 2^31 only (else 0): floor(2^(2b) / q) with b = bit_count, the constant of the 32-bit
  /// Barrett reduction (mul_mod on u32 words). Below 2^(b+1) <= 2^32.
  u32 barrett32 = 0;

  Modulus() = default;
  /// Builds the modulus q with its Barrett constants (ratio_hi, ratio_lo, bit_count, and barrett32
  /// when fits_word32(q)), computing floor(2^128 / q) exactly by two-word long division.
  /// @param q the modulus, 2 <= q < 2^61 (need not be prime).
  /// @throws veil::InvalidArgument if q < 2 or q >= 2^61.
  explicit Modulus(u64 q);
};

/// The high word of the 128-bit product a * b (__umul64hi on the GPU).
/// @param a a 64-bit word.
/// @param b a 64-bit word.
/// @return floor(a * b / 2^64).
VEIL_HD u64 mul_hi(u64 a, u64 b) {
#if VEIL_DEVICE_CODE
  return __umul64hi(a, b);
#else
  return static_cast<u64>((static_cast<u128>(a) * b) >> 64);
#endif
}

/// The full 128-bit product of two 64-bit words: (hi, lo) = a * b.
/// @param a a 64-bit word.
/// @param b a 64-bit word.
/// @param hi receives floor(a * b / 2^64).
/// @param lo receives a * b mod 2^64.
VEIL_HD void mul_wide(u64 a, u64 b, u64& hi, u64& lo) {
  lo = a * b;
  hi = mul_hi(a, b);
}

/// 128-bit accumulate: (hi, lo) += (bhi, blo), modulo 2^128 (the carry out of hi is lost).
/// @param hi the high word of the accumulator, updated in place.
/// @param lo the low word of the accumulator, updated in place.
/// @param bhi the high word of the addend.
/// @param blo the low word of the addend.
VEIL_HD void add_wide(u64& hi, u64& lo, u64 bhi, u64 blo) {
  lo += blo;
  hi += bhi + (lo < blo ? 1 : 0);
}

/// Modular addition of two residues with one conditional subtraction.
/// @param a a residue in [0, q).
/// @param b a residue in [0, q).
/// @param q the modulus, below 2^63 (so that a + b does not wrap).
/// @return (a + b) mod q in [0, q).
VEIL_HD u64 add_mod(u64 a, u64 b, u64 q) {
  u64 s = a + b;
  return s >= q ? s - q : s;
}

/// Modular subtraction of two residues.
/// @param a a residue in [0, q).
/// @param b a residue in [0, q).
/// @param q the modulus.
/// @return (a - b) mod q in [0, q).
VEIL_HD u64 sub_mod(u64 a, u64 b, u64 q) { return a >= b ? a - b : a + q - b; }

/// Modular negation of a residue.
/// @param a a residue in [0, q).
/// @param q the modulus.
/// @return (-a) mod q in [0, q) (0 for a = 0).
VEIL_HD u64 neg_mod(u64 a, u64 q) { return a == 0 ? 0 : q - a; }

/// x mod q for any single 64-bit word: Barrett reduction with the high ratio word floor(2^64 / q)
/// (the estimated quotient is at most one below the true one, so one conditional subtraction).
/// @param x any 64-bit word.
/// @param m the modulus q with its Barrett constants.
/// @return x mod q in [0, q).
VEIL_HD u64 reduce_word(u64 x, const Modulus& m) {
  u64 qhat = mul_hi(x, m.ratio_hi);
  u64 r = x - qhat * m.value;
  return r >= m.value ? r - m.value : r;
}

/// (hi * 2^64 + lo) mod q, for hi < q (any 128-bit value whose quotient fits; products of two
/// residues always qualify). Barrett with the two-word ratio; one final conditional subtraction.
/// (Barrett, "Implementing the Rivest Shamir and Adleman public key encryption algorithm on a
/// standard digital signal processor", CRYPTO 1986; the two-word form of SEAL's
/// util/uintarithsmallmod.h.)
/// @param hi the high word, below q.
/// @param lo the low word.
/// @param m the modulus q with its Barrett constants.
/// @return (hi * 2^64 + lo) mod q in [0, q).
VEIL_HD u64 reduce_wide(u64 hi, u64 lo, const Modulus& m) {
  // floor((hi*2^64 + lo) * ratio / 2^128), keeping only the terms that matter.
  u64 carry = mul_hi(lo, m.ratio_lo);
  u64 t_hi, t_lo;
  mul_wide(lo, m.ratio_hi, t_hi, t_lo);
  u64 mid = t_lo + carry;
  u64 c1 = t_hi + (mid < t_lo ? 1 : 0);
  u64 u_hi, u_lo;
  mul_wide(hi, m.ratio_lo, u_hi, u_lo);
  mid += u_lo;
  c1 += u_hi + (mid < u_lo ? 1 : 0);
  u64 qhat = hi * m.ratio_hi + c1;
  u64 r = lo - qhat * m.value;
  return r >= m.value ? r - m.value : r;
}

/// Modular multiplication of two 64-bit residues: the 128-bit product, then reduce_wide.
/// @param a a residue in [0, q) (more generally, a * b < q * 2^64).
/// @param b a residue in [0, q).
/// @param m the modulus q < 2^61 with its Barrett constants.
/// @return a * b mod q in [0, q).
VEIL_HD u64 mul_mod(u64 a, u64 b, const Modulus& m) {
  u64 hi, lo;
  mul_wide(a, b, hi, lo);
  return reduce_wide(hi, lo, m);
}

/// Modular multiply-add: a * b + c mod q, reduced once from the exact 128-bit value.
/// @param a a residue in [0, q).
/// @param b a residue in [0, q).
/// @param c a residue in [0, q) (any word that keeps a * b + c below q * 2^64).
/// @param m the modulus q < 2^61 with its Barrett constants.
/// @return (a * b + c) mod q in [0, q).
VEIL_HD u64 mul_add_mod(u64 a, u64 b, u64 c, const Modulus& m) {
  u64 hi, lo;
  mul_wide(a, b, hi, lo);
  add_wide(hi, lo, 0, c);
  return reduce_wide(hi, lo, m);
}

/// Shoup precomputation for multiplications by the constant w: w' = floor(w * 2^64 / q). Host
/// only (uses 128-bit division). (Shoup's NTL MulModPrecon; Harvey, "Faster arithmetic for
/// number-theoretic transforms", J. Symb. Comp. 2014, Alg. 2.)
/// @param w the constant, w < q.
/// @param q the modulus, q < 2^63.
/// @return floor(w * 2^64 / q).
inline u64 shoup_quotient(u64 w, u64 q) {
  return static_cast<u64>((static_cast<u128>(w) << 64) / q);
}

/// Lazy Shoup multiplication by a precomputed constant: x * w mod q up to one multiple of q,
/// with one high and two low products and no division (Harvey, J. Symb. Comp. 2014, Alg. 2; the
/// NTT butterflies consume the [0, 2q) result directly).
/// @param x any 64-bit word.
/// @param w the constant, w < q.
/// @param wq its Shoup quotient floor(w * 2^64 / q) (shoup_quotient).
/// @param q the modulus, q < 2^63.
/// @return a value in [0, 2q) congruent to x * w mod q.
VEIL_HD u64 mul_shoup_lazy(u64 x, u64 w, u64 wq, u64 q) {
  u64 qhat = mul_hi(x, wq);
  return x * w - qhat * q;
}

/// Shoup multiplication by a precomputed constant, fully reduced: mul_shoup_lazy and one
/// conditional subtraction.
/// @param x any 64-bit word.
/// @param w the constant, w < q.
/// @param wq its Shoup quotient floor(w * 2^64 / q).
/// @param q the modulus, q < 2^63.
/// @return x * w mod q in [0, q).
VEIL_HD u64 mul_shoup(u64 x, u64 w, u64 wq, u64 q) {
  u64 r = mul_shoup_lazy(x, w, wq, q);
  return r >= q ? r - q : r;
}

// ---- 32-bit words (primes q < 2^31) -----------------------------------------------------------
// The same Shoup multiplication on 32-bit words: w' = floor(w * 2^32 / q), qhat = hi32(x w'),
// x w - qhat q in [0, 2q) for any 32-bit x (Harvey 2014, Alg. 2 with beta = 2^32). Every product
// is a native 32-bit IMAD on the GPU (Hopper has no 64-bit integer multiply-add), which is why
// 32-bit words roughly halve the instructions of an NTT butterfly (bench/NOTES.md). With q < 2^31
// a sum of two values in [0, q) and a lazy product in [0, 2q) both fit a word; values are kept in
// [0, q) or [0, 2q) and corrected by one `reduce_once` (a subtraction and an unsigned minimum).

/// A modulus that fits a 32-bit word (q < 2^31): 32-bit words may hold its residues. 2^30 is
/// the one such modulus whose Barrett constant floor(2^62 / q) = 2^32 would not fit 32 bits; it
/// is excluded (a power of two is never an RNS prime).
/// @param q a modulus.
/// @return true when 2 <= q < 2^31 and q != 2^30.
constexpr bool fits_word32(u64 q) { return q >= 2 && q < (u64(1) << 31) && q != (u64(1) << 30); }

/// The high word of the 64-bit product of two 32-bit words (__umulhi on the GPU).
/// @param a a 32-bit word.
/// @param b a 32-bit word.
/// @return floor(a * b / 2^32).
VEIL_HD u32 mul_hi(u32 a, u32 b) {
#if VEIL_DEVICE_CODE
  return __umulhi(a, b);
#else
  return static_cast<u32>((static_cast<u64>(a) * b) >> 32);
#endif
}

/// x mod q for x in [0, 2q): min(x, x - q) (the difference wraps above x when x < q).
/// @param x a value in [0, 2q).
/// @param q the modulus, q < 2^31.
/// @return x mod q in [0, q).
VEIL_HD u32 reduce_once(u32 x, u32 q) {
  const u32 d = x - q;
  return d < x ? d : x;
}

/// Modular addition on 32-bit words (the sum fits a word because q < 2^31).
/// @param a a residue in [0, q).
/// @param b a residue in [0, q).
/// @param q the modulus, q < 2^31.
/// @return (a + b) mod q in [0, q).
VEIL_HD u32 add_mod(u32 a, u32 b, u32 q) { return reduce_once(a + b, q); }
/// Modular subtraction on 32-bit words, as reduce_once(a + q - b).
/// @param a a residue in [0, q).
/// @param b a residue in [0, q).
/// @param q the modulus, q < 2^31.
/// @return (a - b) mod q in [0, q).
VEIL_HD u32 sub_mod(u32 a, u32 b, u32 q) { return reduce_once(a + q - b, q); }

/// Shoup precomputation on 32-bit words: floor(w * 2^32 / q), for w < q < 2^31.
/// @param w the constant, w < q.
/// @param q the modulus, q < 2^31.
/// @return floor(w * 2^32 / q).
constexpr u32 shoup_quotient32(u32 w, u32 q) {
  return static_cast<u32>((static_cast<u64>(w) << 32) / q);
}

/// x * w mod q in [0, 2q) given wq = floor(w 2^32 / q); x may be any 32-bit word.
/// (Harvey, J. Symb. Comp. 2014, Alg. 2 with beta = 2^32.)
/// @param x any 32-bit word.
/// @param w the constant, w < q.
/// @param wq its Shoup quotient floor(w * 2^32 / q) (shoup_quotient32 or shoup32_from64).
/// @param q the modulus, q < 2^31.
/// @return a value in [0, 2q) congruent to x * w mod q.
VEIL_HD u32 mul_shoup_lazy(u32 x, u32 w, u32 wq, u32 q) {
  const u32 qhat = mul_hi(x, wq);
  return x * w - qhat * q;
}

/// x * w mod q in [0, q) on 32-bit words: mul_shoup_lazy then reduce_once.
/// @param x any 32-bit word.
/// @param w the constant, w < q.
/// @param wq its Shoup quotient floor(w * 2^32 / q).
/// @param q the modulus, q < 2^31.
/// @return x * w mod q in [0, q).
VEIL_HD u32 mul_shoup(u32 x, u32 w, u32 wq, u32 q) {
  return reduce_once(mul_shoup_lazy(x, w, wq, q), q);
}

/// Modular negation on 32-bit words.
/// @param a a residue in [0, q).
/// @param q the modulus.
/// @return (-a) mod q in [0, q) (0 for a = 0).
VEIL_HD u32 neg_mod(u32 a, u32 q) { return a == 0 ? 0 : q - a; }

/// a * b + c for 32-bit a, b as one 32 x 32 -> 64-bit multiply-add (mad.wide.u32: a single
/// IMAD.WIDE.U32 on the GPU; the front end otherwise emits a 64 x 64 multiply of zero-extended
/// operands, which ptxas may not narrow).
/// @param a a 32-bit word.
/// @param b a 32-bit word.
/// @param c a 64-bit addend (the sum wraps modulo 2^64).
/// @return a * b + c modulo 2^64.
VEIL_HD u64 mad_wide(u32 a, u32 b, u64 c) {
#if VEIL_DEVICE_CODE
  u64 r;
  asm("mad.wide.u32 %0, %1, %2, %3;" : "=l"(r) : "r"(a), "r"(b), "l"(c));
  return r;
#else
  return static_cast<u64>(a) * b + c;
#endif
}

/// p mod q for a product p < 2^(2b) of two residues (b = bit_count of q < 2^31): Barrett's
/// reduction with radix 2 (Menezes-van Oorschot-Vanstone, Handbook of Applied Cryptography,
/// Alg. 14.42): qhat = floor(floor(p / 2^(b-1)) * mu / 2^(b+1)), mu = floor(2^(2b) / q), is at
/// most 2 below floor(p / q), so p - qhat q < 3q takes two conditional subtractions. Every
/// multiplication is 32 x 32 -> 64 bits (one IMAD.WIDE.U32 on the GPU).
/// @param p the value to reduce, below 2^(2b).
/// @param m the modulus q < 2^31 with its 32-bit Barrett constant barrett32 (fits_word32(q)).
/// @return p mod q in [0, q).
VEIL_HD u32 reduce_product(u64 p, const Modulus& m) {
  const int b = m.bit_count;
  const u64 q = m.value;
  const u32 x1 = static_cast<u32>(p >> (b - 1));  // < 2^(b+1) <= 2^32
  const u32 qhat = static_cast<u32>(mad_wide(x1, m.barrett32, 0) >> (b + 1));
  u64 r = p - mad_wide(qhat, static_cast<u32>(q), 0);  // < 3q
  r = r >= q ? r - q : r;
  r = r >= q ? r - q : r;
  return static_cast<u32>(r);
}

/// Modular multiplication on 32-bit words (a, b < q < 2^31): the 64-bit product, then
/// reduce_product.
/// @param a a residue in [0, q).
/// @param b a residue in [0, q).
/// @param m the modulus with its 32-bit Barrett constant (fits_word32).
/// @return a * b mod q in [0, q).
VEIL_HD u32 mul_mod(u32 a, u32 b, const Modulus& m) {
  return reduce_product(mad_wide(a, b, 0), m);
}

/// a * b + c mod q on 32-bit words (a, b, c < q < 2^31; q(q - 1) + q - 1 < 2^(2b)).
/// @param a a residue in [0, q).
/// @param b a residue in [0, q).
/// @param c a residue in [0, q).
/// @param m the modulus with its 32-bit Barrett constant (fits_word32).
/// @return (a * b + c) mod q in [0, q).
VEIL_HD u32 mul_add_mod(u32 a, u32 b, u32 c, const Modulus& m) {
  return reduce_product(mad_wide(a, b, c), m);
}

/// The 32-bit Shoup quotient floor(w 2^32 / q) from the 64-bit one floor(w 2^64 / q): the
/// floor of a floor divided by 2^32 is the floor of the quotient, so one table serves both words.
/// @param wq64 floor(w * 2^64 / q) for w < q < 2^31.
/// @return floor(w * 2^32 / q).
VEIL_HD u32 shoup32_from64(u64 wq64) { return static_cast<u32>(wq64 >> 32); }

// ---- word-generic helpers (W = u32 or u64) ----------------------------------------------------

/// x mod q for x in [0, 2q), 64-bit words (one conditional subtraction).
/// @param x a value in [0, 2q).
/// @param q the modulus.
/// @return x mod q in [0, q).
VEIL_HD u64 reduce_once_word(u64 x, u64 q) { return x >= q ? x - q : x; }
/// x mod q for x in [0, 2q), 32-bit words (reduce_once).
/// @param x a value in [0, 2q).
/// @param q the modulus, q < 2^31.
/// @return x mod q in [0, q).
VEIL_HD u32 reduce_once_word(u32 x, u32 q) { return reduce_once(x, q); }

/// The Shoup quotient of a table constant for words W (tables store floor(w 2^64 / q)).
/// @tparam W the word type, u32 or u64.
/// @param wq64 floor(w * 2^64 / q), as the tables store it.
/// @return floor(w * 2^32 / q) for W = u32 (shoup32_from64), wq64 itself for W = u64.
template <class W>
VEIL_HD W shoup_for(u64 wq64) {
  if constexpr (sizeof(W) == 4) {
    return shoup32_from64(wq64);
  } else {
    return wq64;
  }
}

/// x mod q for any 64-bit word, as a word W (q must fit W).
/// @tparam W the word type, u32 or u64.
/// @param x any 64-bit word.
/// @param m the modulus q (below 2^31 when W = u32).
/// @return x mod q (reduce_word) converted to W.
template <class W>
VEIL_HD W reduce_to(u64 x, const Modulus& m) {
  return static_cast<W>(reduce_word(x, m));
}

/// Lazily reduced sum of products of words W: sum_i a_i b_i with a_i, b_i < 2^61 (u64) or
/// < 2^31 (u32), exact in 128 bits (u64) or 64 + 32 bits (u32; each product < 2^62, so up to
/// 2^32 products), reduced once at the end. The dot products of base conversion and of the
/// key-switching inner product accumulate here.
/// @tparam W the word type, u32 or u64; only the two specializations below are defined.
template <class W>
struct WideAcc;

template <>
/// The 64-bit word accumulator: an exact 128-bit sum (hi, lo).
struct WideAcc<u64> {
  /// The 128-bit sum hi * 2^64 + lo, starting at 0.
  u64 hi = 0, lo = 0;
  /// Adds the 128-bit product a * b (a, b < 2^61 in the dot products it serves).
  /// @param a a 64-bit word.
  /// @param b a 64-bit word.
  VEIL_HD void add(u64 a, u64 b) {
    u64 ph, pl;
    mul_wide(a, b, ph, pl);
    add_wide(hi, lo, ph, pl);
  }
  /// Adds a word below 2^64.
  /// @param c the word to add.
  VEIL_HD void add_word(u64 c) { add_wide(hi, lo, 0, c); }
  /// The sum modulo q: hi reduced first (so that reduce_wide's hi < q holds), then reduce_wide.
  /// @param m the modulus q < 2^61.
  /// @return (hi * 2^64 + lo) mod q in [0, q).
  VEIL_HD u64 reduce(const Modulus& m) const { return reduce_wide(reduce_word(hi, m), lo, m); }
};

template <>
/// The 32-bit word accumulator: a 64-bit sum with a 32-bit carry count, hi * 2^64 + lo.
struct WideAcc<u32> {
  /// The low 64 bits of the sum.
  u64 lo = 0;
  /// The carries out of lo: the sum is hi * 2^64 + lo.
  u32 hi = 0;
  /// Adds the 64-bit product a * b (one mad_wide) with a carry into hi.
  /// @param a a 32-bit word below 2^31.
  /// @param b a 32-bit word below 2^31.
  VEIL_HD void add(u32 a, u32 b) {
    const u64 p = mad_wide(a, b, 0);
    lo += p;
    hi += lo < p ? 1u : 0u;
  }
  /// Adds a word below 2^64 with a carry into hi.
  /// @param c the word to add.
  VEIL_HD void add_word(u64 c) {
    lo += c;
    hi += lo < c ? 1u : 0u;
  }
  /// hi * 2^64 + lo mod q (q < 2^31; hi < 2^31, as 2^32 products of words below 2^31 leave
  /// it below 2^30): one fold, hi (2^64 mod q) + (lo >> 32)(2^32 mod q) + (lo mod 2^32) < 2^62 +
  /// 2^63 + 2^32 < 2^64 (two 32 x 32 -> 64-bit multiply-adds; both constants below q come from
  /// the Barrett ratio floor(2^64 / q) with one 32-bit multiply each), then one single-word
  /// Barrett reduction, with no branch. (Before: a Barrett reduction of lo and, when a carry
  /// had happened, a second one: twice the 64-bit multiplies and a branch, in every
  /// conversion's inner loop.)
  /// @param m the modulus q < 2^31 (fits_word32).
  /// @return (hi * 2^64 + lo) mod q in [0, q).
  VEIL_HD u32 reduce(const Modulus& m) const {
    const u32 q = static_cast<u32>(m.value);
    const u32 r32 = 0u - q * static_cast<u32>(m.ratio_hi >> 32);  // 2^32 - q floor(2^32 / q)
    const u32 r64 = 0u - q * static_cast<u32>(m.ratio_hi);        // 2^64 mod q, below 2^31
    const u64 w = mad_wide(hi, r64, mad_wide(static_cast<u32>(lo >> 32), r32, lo & 0xFFFFFFFFull));
    return static_cast<u32>(reduce_word(w, m));
  }
};

/// Montgomery constants of an odd modulus p < 2^31 for dot products of 32-bit words (the
/// conversions' lazy rows, rns/conv_kernels.h: block_row_mont): r32 = 2^32 mod p and
/// pinv = -p^-1 mod 2^32 (Montgomery, "Modular multiplication without trial division", Math.
/// Comp. 44, 1985).
struct Mont32 {
  /// p: the modulus; r32: 2^32 mod p; pinv: -p^-1 mod 2^32; pad: unused (16-byte size).
  u32 p = 0, r32 = 0, pinv = 0, pad = 0;
};

/// The Mont32 constants of m (odd, below 2^31): the inverse by Newton's iteration x <- x(2 - px),
/// which doubles the correct low bits from the 3 of x = p (p^2 = 1 mod 8 for odd p).
/// @param m the modulus p, odd and below 2^31, with its Barrett constants.
/// @return {p, 2^32 mod p, -p^-1 mod 2^32, 0}.
VEIL_HD Mont32 mont32_of(const Modulus& m) {
  const u32 p = static_cast<u32>(m.value);
  u32 inv = p;
  for (int i = 0; i < 4; ++i) inv *= 2u - p * inv;  // 6, 12, 24, 48 bits
  Mont32 r;
  r.p = p;
  r.r32 = 0u - p * static_cast<u32>(m.ratio_hi >> 32);  // 2^32 - p floor(2^32 / p)
  r.pinv = 0u - inv;
  return r;
}

/// s = h 2^32 + l -> h (2^32 mod p) + l, the same residue, at most p 2^32 - p (one 32 x 32 + 64-bit
/// multiply-add).
/// @param s a 64-bit sum h * 2^32 + l.
/// @param r32 2^32 mod p (Mont32::r32).
/// @return h * r32 + l, congruent to s mod p.
VEIL_HD u64 fold32(u64 s, u32 r32) {
  return mad_wide(static_cast<u32>(s >> 32), r32, s & 0xFFFFFFFFull);
}

/// Montgomery's REDC: w 2^-32 mod p for w < p 2^32 (p odd, below 2^31, so w + k p < p 2^33 <
/// 2^64): two multiplies and one conditional subtraction.
/// (Montgomery, "Modular multiplication without trial division", Math. Comp. 44, 1985.)
/// @param w the value to reduce, w < p * 2^32.
/// @param m the Montgomery constants of p (mont32_of).
/// @return w * 2^-32 mod p in [0, p).
VEIL_HD u32 redc32(u64 w, const Mont32& m) {
  const u32 k = static_cast<u32>(w) * m.pinv;
  const u32 t = static_cast<u32>(mad_wide(k, m.p, w) >> 32);  // < 2p
  return t >= m.p ? t - m.p : t;
}

/// Whether block_row_mont's schedule holds for inputs below `in_bound` and table entries below
/// `out_bound` (the largest output modulus, odd, below 2^31): every product below 2^61, so eight
/// of them sum below 2^64, and a folded sum (below p 2^32 <= 2^63) plus four more stays below
/// 2^64.
/// @param in_bound an exclusive bound on the inputs.
/// @param out_bound an exclusive bound on the table entries (the largest output modulus).
/// @return true when (in_bound - 1)(out_bound - 1) < 2^61 and out_bound < 2^31.
constexpr bool mont32_lazy_fits(u64 in_bound, u64 out_bound) {
  return in_bound >= 1 && out_bound >= 1 && out_bound < (u64(1) << 31) &&
         static_cast<u128>(in_bound - 1) * (out_bound - 1) < (u64(1) << 61);
}

/// acc += sum_{i < count} y[i] * row[i] (entries read as words W; count <= kMax). u64: one
/// 128-bit multiply-accumulate per term. u32 (every y[i], row[i] < 2^31): four products of
/// 31-bit values sum below 2^64, so terms go four at a time into a plain 64-bit sum (one
/// IMAD.WIDE.U32 each on a GPU) and only that sum enters the wide accumulator: about a third of
/// the instructions of carrying every term. y is a register array: the loops unroll over kMax
/// with a guard, so y[i] has a constant index and stays in registers (a run-time index puts the
/// array in local memory, which made the conversion kernels instruction-bound on address
/// arithmetic; bench/NOTES.md).
/// @tparam kMax the compile-time bound on count (a multiple of 4 for W = u32).
/// @tparam W the accumulator's word, u32 or u64.
/// @tparam Wy the input word (u32 when W = u32).
/// @tparam R the row's entry type.
/// @param acc the accumulator, updated in place.
/// @param y the inputs, a register array of kMax words (the first count are read).
/// @param row the table row, count entries.
/// @param count the number of terms, at most kMax.
template <u32 kMax, class W, class Wy, class R>
VEIL_HD void dot_accumulate(WideAcc<W>& acc, const Wy (&y)[kMax], const R* row, u32 count) {
  if constexpr (sizeof(W) == 8) {
#pragma unroll
    for (u32 i = 0; i < kMax; ++i) {
      if (i >= count) break;
      acc.add(static_cast<u64>(y[i]), static_cast<u64>(row[i]));
    }
  } else {
    static_assert(sizeof(Wy) == 4, "32-bit accumulation takes 32-bit inputs");
    static_assert(kMax % 4 == 0, "groups of four");
#pragma unroll
    for (u32 i = 0; i < kMax; i += 4) {
      if (i >= count) break;
      u64 s = mad_wide(y[i], static_cast<u32>(row[i]), 0);
      if (i + 1 < count) s = mad_wide(y[i + 1], static_cast<u32>(row[i + 1]), s);
      if (i + 2 < count) s = mad_wide(y[i + 2], static_cast<u32>(row[i + 2]), s);
      if (i + 3 < count) s = mad_wide(y[i + 3], static_cast<u32>(row[i + 3]), s);
      acc.add_word(s);
    }
  }
}

/// Modular exponentiation by square-and-multiply. Host helper (exact, slow), defined in
/// modarith.cpp.
/// @param base any 64-bit word (reduced mod q first).
/// @param exp the exponent (0 gives 1 mod q).
/// @param m the modulus q.
/// @return base^exp mod q in [0, q).
u64 pow_mod(u64 base, u64 exp, const Modulus& m);
/// Modular inverse by the extended Euclidean algorithm on signed 128-bit values. Host helper,
/// defined in modarith.cpp.
/// @param a the value to invert (reduced mod q first).
/// @param q the modulus, q < 2^63.
/// @return a^-1 mod q in [0, q).
/// @throws veil::InvalidArgument if gcd(a, q) != 1 (no inverse exists).
u64 inv_mod(u64 a, u64 q);

}  // namespace veil
