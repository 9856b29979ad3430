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

#include "veil/backend/buffer.h"
#include "veil/backend/launch.h"
#include "veil/core/modarith.h"
#include "veil/rns/base_converter.h"

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

/// Converts one coefficient. `in` points at limb 0 of the coefficient (limb stride n); `partial`
/// at limb 0 of its scratch column (only used when kf > kChunk). For every output limb j, calls
/// epi(j, r_j, v_hi, v_lo) with r_j = out_j in [0, p_j) (a word W) and v the rounded fraction sum
/// (zero when the view has no fractions). Output limbs are produced in order j = 0, 1, ...
/// Input words W, output words Wo (default W): Wo = u32 needs every modulus of both bases below
/// 2^31 (the products are then 32 x 32 -> 64-bit and accumulate in WideAcc<u32>,
/// core/modarith.h); 32-bit inputs may convert to a base of larger moduli with Wo = u64 (CKKS
/// decoding's three 61-bit primes).
/// Only output limbs [j0, j1) are produced when given (a thread may handle a group of them:
/// for_each_output_group).
template <class W, class Wo = W, class Epi>
VEIL_HD void convert_coeff(const ConvView& c, const W* in, Wo* partial, std::size_t n, Epi& epi,
                           std::size_t j0 = 0, std::size_t j1 = ~std::size_t(0)) {
  if (j1 > c.kt) j1 = c.kt;
  W y[kChunk];
  FixedAcc acc;
  for (std::size_t c0 = 0; c0 < c.kf; c0 += kChunk) {
    const std::size_t cn = c.kf - c0 < kChunk ? c.kf - c0 : kChunk;
    const bool last = c0 + cn == c.kf;
#pragma unroll
    for (std::size_t i = 0; i < kChunk; ++i) {  // unrolled: y stays in registers
      if (i >= cn) break;
      const std::size_t l = c0 + i;
      const W q = static_cast<W>(c.from[l].value);
      W x = in[l * n];
      if (c.offset) x = add_mod(x, static_cast<W>(c.offset[l]), q);
      const W v = c.scale ? mul_shoup(x, static_cast<W>(c.scale[l]),
                                      shoup_for<W>(c.scale_shoup[l]), q)
                          : x;
      y[i] = v;
      if (c.frac) acc.add(v, c.frac[2 * l], c.frac[2 * l + 1]);
    }
    u64 v_hi = 0, v_lo = 0;
    if (last && c.frac) acc.round(v_hi, v_lo);
    for (std::size_t j = j0; j < j1; ++j) {
      const u64* row = c.mat + j * c.kf + c0;
      WideAcc<Wo> dot;
      dot_accumulate_regs(dot, y, row, static_cast<u32>(cn));
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

/// Output limbs per thread of a grouped conversion (0: all of them in one thread). More, smaller
/// threads hide the latency of the dependent multiply-accumulate chains; each recomputes the
/// scaled inputs y_i (and the fraction sum) of its coefficient. Read once from
/// VEIL_CONV_GROUP (for benchmarks), default 0: on the H100 groups of 4, 8 and 16 limbs were
/// no faster than whole rows (bench/NOTES.md), the kernels being instruction-bound.
std::size_t conv_group();

/// Calls f(p, c, j0, j1) for every coefficient c of every polynomial p < num_polys and every
/// group [j0, j1) of `group` output limbs out of kt (one thread each; group 0: all kt at once).
/// Coefficients vary fastest, so the threads of a warp read and write consecutive words.
template <class F>
void for_each_output_group(const Device& dev, std::size_t num_polys, std::size_t n, int log_n,
                           std::size_t kt, std::size_t group, F f) {
  if (group == 0 || group > kt) group = kt;
  const std::size_t groups = (kt + group - 1) / group;
  const std::size_t mask = n - 1;
  for_each(dev, num_polys * groups * n, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t c = idx & mask, pg = idx >> log_n;
    const std::size_t p = pg / groups, j0 = (pg - p * groups) * group;
    f(p, c, j0, j0 + group);
  });
}

/// Epilogue that stores r_j at out[j * n].
template <class W>
struct StoreEpi {
  W* out;
  std::size_t n;
  VEIL_HD void operator()(std::size_t j, W r, u64, u64) const { out[j * n] = r; }
};

}  // namespace veil::rns_detail
