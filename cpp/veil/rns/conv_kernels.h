// Internal to rns/ and the key switching's ModUp (rlwe/keyswitch.cpp): the per-coefficient kernel
// shared by every RNS conversion (fast and exact base conversion, HPS scale-and-round, the BEHZ
// steps, ModDown). Included only by files that build for both backends; nothing here touches the
// CUDA runtime.
//
// One for_each thread handles one coefficient of one polynomial: it reads that coefficient's
// input limbs once into registers/local memory (in chunks of kChunk limbs), then produces every
// output limb as a lazily reduced dot product. A 128-bit accumulator holds kChunk products of two
// words below 2^61 (each < 2^122) without overflow, so each output limb costs one Barrett
// reduction per chunk. Bases longer than kChunk limbs keep per-output partial sums in a scratch
// array between chunks (see partial_scratch).
//
// Fractions (1/q_i, HPS theta_i) are in 0.128 fixed point: f = (hi, lo) = floor(f * 2^128). The
// sum of y_i * f_i (y_i < 2^63) is accumulated exactly in four words and rounded to the nearest
// integer v; only v mod p_j is ever needed. No floating point, so CPU and GPU agree bit for bit.
#pragma once
#include <cstddef>
#include <string>
#include <type_traits>

#include "veil/backend/buffer.h"
#include "veil/backend/launch.h"
#include "veil/core/error.h"
#include "veil/core/modarith.h"
#include "veil/core/primes.h"
#include "veil/ring/rns_poly_view.h"
#include "veil/rns/base_converter.h"
#include "veil/rns/noise_test.h"

namespace veil::rns_detail {

inline constexpr std::size_t kChunk = 32;

/// (hi * 2^64 + lo) mod m for any two words (reduce_wide alone needs hi < m).
VEIL_HD u64 reduce_u128(u64 hi, u64 lo, const Modulus& m) {
  return reduce_wide(reduce_word(hi, m), lo, m);
}

/// The rounded fraction sum v = (hi, lo) mod m. v is at most the number of input limbs (each
/// term y_i f_i is below 1), so it is almost always already below m: no reduction then.
VEIL_HD u64 reduce_rounded(u64 hi, u64 lo, const Modulus& m) {
  return hi == 0 && lo < m.value ? lo : reduce_u128(hi, lo, m);
}

/// Exact 256-bit accumulator of sum_i y_i * f_i, y_i < 2^63, f_i in 0.128 fixed point.
struct FixedAcc {
  u64 w0 = 0, w1 = 0, w2 = 0, w3 = 0;  // little-endian words; the binary point is above w1

  VEIL_HD void add(u64 y, u64 f_hi, u64 f_lo) {
    u64 ah, al, bh, bl;
    mul_wide(y, f_lo, ah, al);  // ah <= 2^64 - 2, so ah + 1 cannot wrap
    mul_wide(y, f_hi, bh, bl);  // bh < 2^62 since y < 2^63
    w0 += al;
    const u64 t = ah + (w0 < al ? 1 : 0);
    w1 += t;
    u64 c = w1 < t ? 1 : 0;
    w1 += bl;
    c += w1 < bl ? 1 : 0;
    const u64 s = bh + c;
    w2 += s;
    w3 += w2 < s ? 1 : 0;
  }
  /// Adds another accumulator's exact sum (256-bit addition; the sums never overflow).
  VEIL_HD void merge(u64 o0, u64 o1, u64 o2, u64 o3) {
    w0 += o0;
    u64 c = w0 < o0 ? 1 : 0;
    w1 += c;
    c = w1 < c ? 1 : 0;
    w1 += o1;
    c += w1 < o1 ? 1 : 0;
    w2 += c;
    c = w2 < c ? 1 : 0;
    w2 += o2;
    c += w2 < o2 ? 1 : 0;
    w3 += o3 + c;
  }
  /// v = round(sum) = floor(sum + 1/2), as (hi, lo).
  VEIL_HD void round(u64& hi, u64& lo) const {
    lo = w2 + (w1 >> 63);
    hi = w3 + (lo < w2 ? 1 : 0);
  }
};

/// Raw device view of one conversion: x'_i = x_i + offset_i mod q_i (x'_i = x_i when offset is
/// null), y_i = x'_i * scale_i mod q_i (y_i = x'_i when scale is null),
/// out_j = sum_i y_i * mat[j][i] mod p_j, and optionally v = round(sum_i y_i * frac_i).
struct ConvView {
  std::size_t kf = 0, kt = 0;
  const Modulus* from = nullptr;
  const Modulus* to = nullptr;
  const u64* scale = nullptr;
  const u64* scale_shoup = nullptr;
  const u64* offset = nullptr;  // [kf] or null
  const u64* mat = nullptr;   // [kt][kf]
  const u64* frac = nullptr;  // [kf][2] or null
};

/// The input of a conversion from one prime (kf = 1) on the CPU: y = (x + offset) * scale mod q
/// and, with fractions, v = round(y / q), which is 0 or 1 (block_inputs' words for one input
/// limb). `scaled`: cv.scale[0] != 1.
template <class W>
inline void one_prime_input(const ConvView& cv, W x, bool scaled, W& y, u64& v) {
  const W q = static_cast<W>(cv.from[0].value);
  if (cv.offset) x = add_mod(x, static_cast<W>(cv.offset[0]), q);
  if (scaled) x = mul_shoup(x, static_cast<W>(cv.scale[0]), shoup_for<W>(cv.scale_shoup[0]), q);
  y = x;
  v = 0;
  if (cv.frac) {
    FixedAcc acc;
    acc.add(x, cv.frac[0], cv.frac[1]);
    u64 v_hi;  // y / q is below 1
    acc.round(v_hi, v);
  }
}

inline ConvView make_view(const Device& dev, const detail::FastConvTables& t, const RnsBase& from,
                          const RnsBase& to, const u64* frac = nullptr) {
  ConvView v;
  v.kf = t.k_from;
  v.kt = t.k_to;
  v.from = from.moduli(dev);
  v.to = to.moduli(dev);
  v.scale = t.scale.data(dev);
  v.scale_shoup = t.scale_shoup.data(dev);
  v.mat = t.qhat_mod_p.data(dev);
  v.frac = frac;
  return v;
}

/// Scratch for partial sums between chunks: [num_polys][kt][n] words W when kf > kChunk, else
/// empty.
template <class W>
Buffer<W> partial_scratch(const Device& dev, std::size_t kf, std::size_t kt, std::size_t n,
                          std::size_t num_polys) {
  if (kf <= kChunk) return Buffer<W>();
  return Buffer<W>(dev, num_polys * kt * n);
}

/// y_l of the view for input limb l of one coefficient (`in` at its limb 0, limb stride n):
/// x_l (+ offset_l) (* scale_l) mod q_l.
template <class W>
VEIL_HD W conv_input(const ConvView& c, const W* in, std::size_t n, std::size_t l) {
  const W q = static_cast<W>(c.from[l].value);
  W x = in[l * n];
  if (c.offset) x = add_mod(x, static_cast<W>(c.offset[l]), q);
  return c.scale ? mul_shoup(x, static_cast<W>(c.scale[l]), shoup_for<W>(c.scale_shoup[l]), q) : x;
}

/// Converts one coefficient. `in` points at limb 0 of the coefficient (limb stride n); `partial`
/// at limb 0 of its scratch column (only used when kf > kChunk). For every output limb j, calls
/// epi(j, r_j, v_hi, v_lo) with r_j = out_j in [0, p_j) (a word W) and v the rounded fraction sum
/// (zero when the view has no fractions). Output limbs are produced in order j = 0, 1, ...
/// Input words W, output words Wo (default W): Wo = u32 needs every modulus of both bases below
/// 2^31 (the products are then 32 x 32 -> 64-bit and accumulate in WideAcc<u32>,
/// core/modarith.h); 32-bit inputs may convert to a base of larger moduli with Wo = u64 (CKKS
/// decoding's three 61-bit primes).
template <class W, class Wo = W, class Epi>
VEIL_HD void convert_coeff(const ConvView& c, const W* in, Wo* partial, std::size_t n, Epi& epi) {
  W y[kChunk];
  FixedAcc acc;
  for (std::size_t c0 = 0; c0 < c.kf; c0 += kChunk) {
    const std::size_t cn = c.kf - c0 < kChunk ? c.kf - c0 : kChunk;
    const bool last = c0 + cn == c.kf;
#pragma unroll
    for (std::size_t i = 0; i < kChunk; ++i) {  // unrolled: y stays in registers
      if (i >= cn) break;
      const std::size_t l = c0 + i;
      const W v = conv_input(c, in, n, l);
      y[i] = v;
      if (c.frac) acc.add(v, c.frac[2 * l], c.frac[2 * l + 1]);
    }
    u64 v_hi = 0, v_lo = 0;
    if (last && c.frac) acc.round(v_hi, v_lo);
    for (std::size_t j = 0; j < c.kt; ++j) {
      const u64* row = c.mat + j * c.kf + c0;
      WideAcc<Wo> dot;
      dot_accumulate(dot, y, row, static_cast<u32>(cn));
      if (c0 != 0) dot.add_word(partial[j * n]);
      const Wo r = dot.reduce(c.to[j]);
      if (last) {
        epi(j, r, v_hi, v_lo);
      } else {
        partial[j * n] = r;
      }
    }
  }
}

/// Sum of `v` over the kLanes consecutive lanes of a warp that share a coefficient (a butterfly:
/// lane 0 ends with (v0 + v1) + (v2 + v3) for four lanes, every lane with the same value).
/// CUDA device code only; on the host (one lane) it returns v.
template <u32 kLanes, class T>
VEIL_HD T lanes_sum(T v) {
#if defined(__CUDA_ARCH__)
#pragma unroll
  for (u32 m = 1; m < kLanes; m <<= 1) v += __shfl_xor_sync(0xffffffffu, v, m, kLanes);
#endif
  return v;
}

/// convert_coeff for one target limb (kt == 1, 64-bit output), split over kLanes consecutive
/// threads of a warp (CUDA): lane `lane` takes input limbs lane, lane + kLanes, ..., and the
/// partial sums are combined by shuffles (the dot product mod p_0 and the exact fixed-point
/// fraction sum), so every lane ends with the r and v that convert_coeff gives. A one-thread
/// conversion of a coefficient walks all kf limbs in sequence; at N = 2^16 that is one thread
/// per coefficient, a quarter of an H100's thread slots, and the kernel waits on its loads
/// (bench/NOTES.md). The sums are exact, so the split changes no word. Host: kLanes must be 1.
///
/// With `test_sum` (non-null), also adds NoiseTest::term(y_l, q_l) for the lane's limbs in
/// order into *test_sum: NoiseTest::partial(.., lane) when the test's factors are the view's
/// scales (NoiseTest::factor_is), without reading x again or a second product.
template <u32 kLanes, class W>
VEIL_HD void convert_coeff_to_one(const ConvView& c, const W* in, std::size_t n, u32 lane, u64& r,
                                  u64& v_hi, u64& v_lo, double* test_sum = nullptr) {
  const Modulus& p = c.to[0];
  FixedAcc acc;
  WideAcc<u64> dot;
  u32 terms = 0;
  for (std::size_t l = lane; l < c.kf; l += kLanes) {
    const W y = conv_input(c, in, n, l);
    if (test_sum) *test_sum += NoiseTest::term(static_cast<u64>(y), c.from[l].value);
    if (c.frac) acc.add(y, c.frac[2 * l], c.frac[2 * l + 1]);
    if (++terms == 16) {  // products below 2^124: fold before the 128-bit sum can overflow
      const u64 folded = dot.reduce(p);
      dot = WideAcc<u64>();
      dot.add_word(folded);
      terms = 1;
    }
    dot.add(static_cast<u64>(y), c.mat[l]);
  }
  u64 part = dot.reduce(p);
#if defined(__CUDA_ARCH__)
#pragma unroll
  for (u32 m = 1; m < kLanes; m <<= 1) {
    part = add_mod(part, __shfl_xor_sync(0xffffffffu, part, m, kLanes), p.value);
    const u64 o0 = __shfl_xor_sync(0xffffffffu, acc.w0, m, kLanes);
    const u64 o1 = __shfl_xor_sync(0xffffffffu, acc.w1, m, kLanes);
    const u64 o2 = __shfl_xor_sync(0xffffffffu, acc.w2, m, kLanes);
    const u64 o3 = __shfl_xor_sync(0xffffffffu, acc.w3, m, kLanes);
    acc.merge(o0, o1, o2, o3);
  }
#endif
  r = part;
  v_hi = v_lo = 0;
  if (c.frac) acc.round(v_hi, v_lo);
}

/// The GPU's one-target conversion of n coefficients with decryption's noise test in the same
/// pass: NoiseTest::kLanes threads per coefficient (convert_coeff_to_one), and lane 0 calls
/// finish(c, r, v_hi, v_lo) to write coefficient c. Queued like for_each_any; false when the test
/// is off. Throws (naming `who`) unless n fills whole warps of lanes (n % 8 == 0).
/// `test_on_inputs`: the test's factors are the view's scales (NoiseTest::factor_is, checked by
/// the caller on the host), so the test's terms come from the conversion's inputs y (the same
/// doubles in the same order: the same answer, one product and one load fewer per word).
template <class W, class Finish>
PendingAny convert_to_one_lanes(const Device& dev, const ConvView& cv, const W* in, std::size_t n,
                                const NoiseTest& test, Finish finish, const char* who,
                                bool test_on_inputs = false) {
  constexpr u32 kLanes = NoiseTest::kLanes;
  if (n % (32 / kLanes) != 0) {
    throw InvalidArgument(std::string(who) + ": n must fill whole warps of lanes (a multiple of " +
                          std::to_string(32 / kLanes) + "), got " + std::to_string(n));
  }
  const bool from_y = test.on() && test_on_inputs && cv.offset == nullptr && cv.scale != nullptr;
  auto lanes = VEIL_LAMBDA(std::size_t i) {
    const std::size_t c = i / kLanes;
    const u32 lane = static_cast<u32>(i % kLanes);
    u64 r, v_hi, v_lo;
    double part = 0.0;
    convert_coeff_to_one<kLanes>(cv, in + c, n, lane, r, v_hi, v_lo, from_y ? &part : nullptr);
    if (test.on() && !from_y) part = test.partial(in, n, c, lane);
    const double s = test.on() ? lanes_sum<kLanes>(part) : 0.0;
    if (lane != 0) return false;
    finish(c, r, v_hi, v_lo);
    return test.on() && test.exceeds_sum(s);
  };
  if (test.on()) return for_each_any(dev, n * kLanes, lanes);
  for_each(dev, n * kLanes, lanes);
  return PendingAny(false);
}

/// r = p[0..3]. On the GPU one 16-byte load when W = u32, two when W = u64 (p must be aligned
/// to four words: tables padded to rows of a multiple of four words).
template <class W>
VEIL_HD void load4(const W* p, W (&r)[4]) {
#if defined(__CUDA_ARCH__)
  if constexpr (sizeof(W) == 4) {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    r[0] = v.x, r[1] = v.y, r[2] = v.z, r[3] = v.w;
  } else {
    const ulonglong2 a = reinterpret_cast<const ulonglong2*>(p)[0];
    const ulonglong2 b = reinterpret_cast<const ulonglong2*>(p)[1];
    r[0] = a.x, r[1] = a.y, r[2] = b.x, r[3] = b.y;
  }
#else
  for (int i = 0; i < 4; ++i) r[i] = p[i];
#endif
}

/// Register-blocked dot products of kC coefficients with one table row: acc[t] += sum_{i <
/// 4 groups} y[t][i] * row[i], row padded with zeros to a multiple of four words. Each group of
/// four table words is loaded once and serves all kC coefficients (a tile of the small matrix
/// product a base conversion is); with 32-bit words the four products of a group sum in one
/// 64-bit word (each below 2^62) before entering the wide accumulator, and no product is
/// predicated, so each is one IMAD.WIDE.U32 with accumulation.
/// kFull: the caller guarantees groups == kMax / 4, so the row is one branch-free block (the
/// scheduler can interleave consecutive rows).
template <u32 kMax, u32 kC, class W, bool kFull = false>
VEIL_HD void dot_rows4(WideAcc<W> (&acc)[kC], const W (&y)[kC][kMax], const W* row, u32 groups) {
  static_assert(kMax % 4 == 0, "groups of four");
#pragma unroll
  for (u32 g = 0; g < kMax / 4; ++g) {
    if (!kFull && g >= groups) break;
    W r[4];
    load4(row + 4 * g, r);
#pragma unroll
    for (u32 t = 0; t < kC; ++t) {
      if constexpr (sizeof(W) == 4) {
        u64 s = mad_wide(y[t][4 * g], r[0], 0);
        s = mad_wide(y[t][4 * g + 1], r[1], s);
        s = mad_wide(y[t][4 * g + 2], r[2], s);
        s = mad_wide(y[t][4 * g + 3], r[3], s);
        acc[t].add_word(s);
      } else {
#pragma unroll
        for (u32 k = 0; k < 4; ++k) acc[t].add(y[t][4 * g + k], r[k]);
      }
    }
  }
}

/// Coefficients per thread of the register-blocked conversions (ModUp, BaseConverter): as many
/// as keep the inputs within about 64 registers. Measured on the H100 (bench/NOTES.md): 32-bit
/// words with rows of up to 16 inputs 4 (ModUp at bootparam_40 -13 % mul+relin against 1);
/// 64-bit words 2 (4 was slower than 1).
template <class W, u32 kMax>
inline constexpr u32 kBlockCoeffs = sizeof(W) == 4 ? (kMax <= 16 ? 4 : 2) : (kMax <= 16 ? 2 : 1);

/// The inputs of a register-blocked conversion of the kC coefficients c0 + t * part (t < kC) of
/// polynomial `poly` of `in`, from its limbs first, first + 1, ... (x_i = limb first + i):
/// y[t][i] = x'_i * scale_i mod q_i for i < kf (x'_i = x_i + offset_i when the conversion has
/// offsets); then, when it has fractions (exact conversion, HPS 2019 §2.2),
/// y[t][kf] = v = round(sum_i y_i / q_i), the multiplier of the padded table's column kf
/// (-Q mod p_j); zeros up to 4 * groups words (the table's padding is zero too). kf < 4 * groups
/// <= kMax when the view has fractions, kf <= 4 * groups otherwise.
template <class W, u32 kMax, u32 kC>
VEIL_HD void block_inputs(const ConvView& c, const RnsPolyView<const W>& in, u32 poly, u32 first,
                          std::size_t c0, std::size_t part, u32 groups, W (&y)[kC][kMax]) {
  FixedAcc acc[kC];
#pragma unroll
  for (u32 i = 0; i < kMax; ++i) {  // unrolled: y stays in registers
    if (i >= 4 * groups) break;
    if (i < c.kf) {
      const W q = static_cast<W>(c.from[i].value);
      const W* limb = in.limb(poly, first + i) + c0;
#pragma unroll
      for (u32 t = 0; t < kC; ++t) {
        W x = limb[t * part];
        if (c.offset) x = add_mod(x, static_cast<W>(c.offset[i]), q);
        y[t][i] = c.scale ? mul_shoup(x, static_cast<W>(c.scale[i]),
                                      shoup_for<W>(c.scale_shoup[i]), q)
                          : x;
        if (c.frac) acc[t].add(y[t][i], c.frac[2 * i], c.frac[2 * i + 1]);
      }
    } else {
#pragma unroll
      for (u32 t = 0; t < kC; ++t) y[t][i] = 0;  // v's slot (set below) and the zero padding
    }
  }
  if (c.frac) {
#pragma unroll
    for (u32 t = 0; t < kC; ++t) {
      u64 v_hi, v_lo;  // v <= kf: each term y_i / q_i is below 1, so v_hi = 0
      acc[t].round(v_hi, v_lo);
#pragma unroll
      for (u32 i = 0; i < kMax; ++i) {  // constant indices (selects) keep y in registers
        if (i >= 4 * groups) break;
        y[t][i] = i == c.kf ? static_cast<W>(v_lo) : y[t][i];
      }
    }
  }
}

/// One output limb of a register-blocked conversion: r[t] = sum_{i < 4 groups} y[t][i] * row[i]
/// mod m for each of the kC coefficients (one dot product and one reduction each).
template <class W, u32 kMax, u32 kC, bool kFull = false>
VEIL_HD void block_row(const W (&y)[kC][kMax], const W* row, u32 groups, const Modulus& m,
                       W (&r)[kC]) {
  WideAcc<W> dot[kC];
  dot_rows4<kMax, kC, W, kFull>(dot, y, row, groups);
#pragma unroll
  for (u32 t = 0; t < kC; ++t) r[t] = dot[t].reduce(m);
}

/// block_row on 32-bit words with a table in Montgomery form (entries T 2^32 mod p, built where
/// mont32_lazy_fits holds for the conversion's bases: every product below 2^61): each
/// coefficient's products chain into one 64-bit sum, folded (fold32) before every group of four
/// after the second, and the last fold ends in one REDC (redc32), which takes the 2^32 out. The
/// same residues as block_row, in about half the instructions per output word: block_row
/// carries every group into a 96-bit sum and ends in a 64-bit Barrett reduction.
template <u32 kMax, u32 kC, bool kFull = false>
VEIL_HD void block_row_mont(const u32 (&y)[kC][kMax], const u32* row, u32 groups,
                            const Mont32& m, u32 (&r)[kC]) {
  static_assert(kMax % 4 == 0, "groups of four");
  u64 s[kC];
#pragma unroll
  for (u32 t = 0; t < kC; ++t) s[t] = 0;
#pragma unroll
  for (u32 g = 0; g < kMax / 4; ++g) {
    if (!kFull && g >= groups) break;
    u32 w[4];
    load4(row + 4 * g, w);
#pragma unroll
    for (u32 t = 0; t < kC; ++t) {
      u64 a = g >= 2 ? fold32(s[t], m.r32) : s[t];  // below 2^63 either way
      a = mad_wide(y[t][4 * g], w[0], a);
      a = mad_wide(y[t][4 * g + 1], w[1], a);
      a = mad_wide(y[t][4 * g + 2], w[2], a);
      s[t] = mad_wide(y[t][4 * g + 3], w[3], a);
    }
  }
#pragma unroll
  for (u32 t = 0; t < kC; ++t) r[t] = redc32(fold32(s[t], m.r32), m);
}

/// block_row for a target given by its Mont32 constants: the lazy rows (block_row_mont; `row` in
/// Montgomery form, 32-bit words).
template <class W, u32 kMax, u32 kC, bool kFull = false>
VEIL_HD void block_row(const W (&y)[kC][kMax], const W* row, u32 groups, const Mont32& m,
                       W (&r)[kC]) {
  static_assert(sizeof(W) == 4, "Montgomery rows take 32-bit words");
  block_row_mont<kMax, kC, kFull>(y, row, groups, m, r);
}

/// A target modulus as a shared-memory conversion kernel stages it: the Modulus itself, or its
/// Mont32 constants for the lazy rows (M = Mont32).
template <class M>
VEIL_HD M staged_modulus(const Modulus& m) {
  if constexpr (std::is_same_v<M, Mont32>) {
    return mont32_of(m);
  } else {
    return m;
  }
}

/// Register-blocked conversion of the kC coefficients c0 + t * part of polynomial `poly` of `in`
/// (limbs 0..kf-1). `mat` (words W) has rows of `stride` words (a multiple of four,
/// zero-padded): the kf entries (Q/q_i) mod p_j, then -Q mod p_j (FastConvTables::mat_padded).
/// Column kf multiplies v = round(sum_i y_i / q_i) when the view has fractions (exact
/// conversion, HPS 2019 §2.2), zero otherwise, so r_j = sum_i y_i (Q/q_i) - v Q mod p_j comes
/// out of one dot product and one reduction. For every output limb j in [j0, j1) and coefficient
/// t, calls epi(t, j, r_j). Each group of four table words is loaded once for the kC
/// coefficients (dot_rows4); kf + 1 <= kMax. kFull: (kf + 4) / 4 == kMax / 4 (dot_rows4).
/// `to`: the target moduli (c.to or a staged copy), or their Mont32 constants with `mat` in
/// Montgomery form (the lazy rows, block_row_mont).
template <class W, u32 kMax, u32 kC, class Epi, bool kFull = false, class M = Modulus>
VEIL_HD void convert_block(const ConvView& c, const W* mat, std::size_t stride,
                           const RnsPolyView<const W>& in, u32 poly, std::size_t c0,
                           std::size_t part, std::size_t j0, std::size_t j1, Epi& epi,
                           const M* to) {
  const u32 groups = static_cast<u32>((c.kf + 4) / 4);  // the kf inputs and v
  W y[kC][kMax];
  block_inputs<W, kMax, kC>(c, in, poly, 0, c0, part, groups, y);
#pragma unroll(kFull ? 2 : 1)
  for (std::size_t j = j0; j < j1; ++j) {
    W r[kC];
    block_row<W, kMax, kC, kFull>(y, mat + j * stride, groups, to[j], r);
#pragma unroll
    for (u32 t = 0; t < kC; ++t) epi(t, j, r[t]);
  }
}

/// The padded table in words W, or null when the blocked kernels do not apply (32 or more
/// inputs, 32-bit words with a modulus of 2^31 or more, or fewer than four coefficients).
template <class W>
const W* padded_table(const Device& dev, const detail::FastConvTables& t, std::size_t n) {
  if (n < 4) return nullptr;
  if constexpr (sizeof(W) == 4) {
    return t.mat_padded32.size() ? t.mat_padded32.data(dev) : nullptr;
  } else {
    return t.mat_padded.size() ? t.mat_padded.data(dev) : nullptr;
  }
}

/// Calls launch(std::bool_constant<kFull>{}, std::bool_constant<kMont>{}) for the run-time
/// choices `full` (the branch-free rows) and `lazy` (the lazy Montgomery rows, block_row_mont;
/// taken only with 32-bit words), so that a shared-memory conversion kernel is instantiated for
/// each form it can take.
template <class W, class Launch>
void with_row_forms(bool full, bool lazy, Launch&& launch) {
  if constexpr (sizeof(W) == 4) {
    if (lazy) {
      if (full) {
        launch(std::true_type{}, std::true_type{});
      } else {
        launch(std::false_type{}, std::true_type{});
      }
      return;
    }
  }
  if (full) {
    launch(std::true_type{}, std::false_type{});
  } else {
    launch(std::false_type{}, std::false_type{});
  }
}

/// The padded table in Montgomery form for the lazy rows (block_row_mont), or null (64-bit words,
/// or bases where mont32_lazy_fits does not hold).
template <class W>
const W* mont_table(const Device& dev, const detail::FastConvTables& t, std::size_t n) {
  if constexpr (sizeof(W) == 4) {
    return n >= 4 && t.mat_mont32.size() ? t.mat_mont32.data(dev) : nullptr;
  } else {
    (void)dev, (void)t, (void)n;
    return nullptr;
  }
}

/// log2 of for_each_blocked's groups of output limbs for `part` coefficients per polynomial:
/// split until about 2^log_threads threads run (or one output limb per group).
inline int blocked_log_splits(std::size_t num_polys, std::size_t part, std::size_t kt,
                              int log_threads = 16) {
  int log_splits = 0;
  while ((std::size_t(2) << log_splits) <= kt &&
         (num_polys * part << log_splits) < (std::size_t(1) << log_threads)) {
    ++log_splits;
  }
  return log_splits;
}

/// The threads of a register-blocked conversion of num_polys polynomials of n coefficients to kt
/// output limbs: body(p, c, part, j0, j1) for polynomial p, coefficients c + t * part (t < kC,
/// part = n / kC, so a warp's accesses stay consecutive) and output limbs [j0, j1). The output
/// limbs are split into groups (a power of two) until about 2^16 threads run: with four
/// coefficients per thread, a conversion of one or two polynomials otherwise has too few warps to
/// hide latency (12 % occupancy); each group recomputes its inputs. Measured on the H100 at
/// bootparam_40 (bench/NOTES.md): 2^16 threads beat 2^15 (no split), 2^17 and 2^18.
template <u32 kC, class Body>
void for_each_blocked(const Device& dev, std::size_t num_polys, std::size_t n, std::size_t kt,
                      Body body) {
  const std::size_t part = n / kC;
  const int log_part = log2_exact(part);
  const int log_splits = blocked_log_splits(num_polys, part, kt);
  const std::size_t splits = std::size_t(1) << log_splits, per = (kt + splits - 1) / splits;
  for_each(dev, (num_polys * part) << log_splits, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t c = idx & (part - 1), rest = idx >> log_part;
    const std::size_t g = rest & (splits - 1);
    const std::size_t j0 = g * per, j1 = j0 + per < kt ? j0 + per : kt;
    body(static_cast<u32>(rest >> log_splits), c, part, j0, j1);
  });
}

/// Calls f(p, c) for every coefficient c of every polynomial p < num_polys, one thread each
/// (the index split by a shift and a mask).
/// Coefficients vary fastest, so the threads of a warp read and write consecutive words. (One
/// thread per group of output limbs instead was no faster on the H100: bench/NOTES.md.)
template <class F>
void for_each_coefficient(const Device& dev, std::size_t num_polys, std::size_t n, F f) {
  const std::size_t mask = n - 1;
  const int log_n = log2_exact(n);
  for_each(dev, num_polys * n, VEIL_LAMBDA(std::size_t idx) { f(idx >> log_n, idx & mask); });
}

/// Epilogue that stores r_j at out[j * n].
template <class W>
struct StoreEpi {
  W* out;
  std::size_t n;
  VEIL_HD void operator()(std::size_t j, W r, u64, u64) const { out[j * n] = r; }
};

}  // namespace veil::rns_detail
