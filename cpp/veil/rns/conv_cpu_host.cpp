// The CPU side of the base conversions with AVX-512 (conv_cpu.h). Host-only: compiled as C++.
#include "veil/rns/conv_cpu.h"

#include "veil/backend/launch.h"
#include "veil/ring/eltwise_simd.h"
#include "veil/ring/ntt_simd.h"

namespace veil::rns_detail {

ConversionRows::ConversionRows(const ConvView& cv, std::size_t n)
    : cv_(cv), n_(n), terms_(cv.kf + (cv.frac ? 1 : 0)) {
  // Below 2^32 everywhere: y_i < q_i, v <= kf and every table weight < p_j are all small.
  const u64 small = u64(1) << 32;
  small_ = true;
  for (std::size_t i = 0; i < cv.kf; ++i) small_ = small_ && cv.from[i].value < small;
  for (std::size_t j = 0; j < cv.kt; ++j) small_ = small_ && cv.to[j].value < small;
  const std::size_t limit = small_ ? detail::kDotTermsSmall : detail::kDotTerms;
  applies_ = detail::cpu_simd() >= detail::CpuSimd::kAvx512 && n % 8 == 0 && terms_ <= limit &&
             terms_ > 0;
  for (std::size_t j = 0; j < cv.kt && applies_; ++j) {
    applies_ = cv.to[j].value < (u64(1) << 62);
  }
  if (!applies_) return;
  ys_.resize(terms_ * n);
  for (std::size_t t = 0; t < terms_; ++t) rows_.push_back(ys_.data() + t * n);
}

void ConversionRows::load(const RnsPolyView<const u64>& in, u32 poly) { load_rows(in, poly); }
void ConversionRows::load(const RnsPolyView<const u32>& in, u32 poly) { load_rows(in, poly); }

template <class W>
void ConversionRows::load_rows(const RnsPolyView<const W>& in, u32 poly) {
  const std::size_t kf = cv_.kf, n = n_;
  cpu_row_chunks(1, n, [&](std::size_t, std::size_t c0, std::size_t c1) {
    for (std::size_t i = 0; i < kf; ++i) {
      const u64 q = cv_.from[i].value;
      const W* x = in.limb(poly, static_cast<u32>(i));
      u64* y = ys_.data() + i * n;
      for (std::size_t c = c0; c < c1; ++c) {
        u64 yi = x[c];
        if (cv_.offset) yi = add_mod(yi, cv_.offset[i], q);
        if (cv_.scale) yi = mul_shoup(yi, cv_.scale[i], cv_.scale_shoup[i], q);
        y[c] = yi;
      }
    }
    if (!cv_.frac) return;
    u64* v = ys_.data() + kf * n;
    for (std::size_t c = c0; c < c1; ++c) {
      FixedAcc acc;
      for (std::size_t i = 0; i < kf; ++i) {
        acc.add(ys_[i * n + c], cv_.frac[2 * i], cv_.frac[2 * i + 1]);
      }
      u64 v_hi, v_lo;  // v <= kf: each term y_i / q_i is below 1
      acc.round(v_hi, v_lo);
      v[c] = v_lo;
    }
  });
}

void ConversionRows::dot_chunk(u64* r, const u64* w, const Modulus& m, std::size_t c0,
                               std::size_t len) const {
  const u64* rows[detail::kDotTermsSmall];  // terms <= 64 (applies())
  for (std::size_t t = 0; t < terms_; ++t) rows[t] = rows_[t] + c0;
  // One input prime with (Q/q) mod p = 1: y mod p, plus w[1] where v is set (no products).
  if (cv_.kf == 1 && w[0] == 1 &&
      detail::reduce_rows_simd(r, rows[0], cv_.frac ? rows[1] : nullptr, len,
                               cv_.from[0].value, m, cv_.frac ? w[1] : 0)) {
    return;
  }
  if (detail::dot_const_simd(r, rows, w, terms_, len, m, small_)) return;
  // The vector level was lowered since applies() (set_cpu_simd): the same sums, one at a time.
  for (std::size_t c = 0; c < len; ++c) {
    u64 hi = 0, lo = 0;
    for (std::size_t t = 0; t < terms_; ++t) {
      u64 ph, pl;
      mul_wide(rows[t][c], w[t], ph, pl);
      lo += pl;
      hi += ph + (lo < pl ? 1 : 0);
    }
    r[c] = reduce_wide(reduce_word(hi, m), lo, m);
  }
}

}  // namespace veil::rns_detail
