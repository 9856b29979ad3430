// Internal to rns/: the CPU side of the base conversions with AVX-512 (64-bit words), shared by
// BaseConverter (base_converter.cpp) and BGV's ModDown correction (mod_down_ntt.cpp). A
// conversion from a few primes becomes, per polynomial, its input rows y_i = x'_i * scale_i mod
// q_i and v = round(sum_i y_i f_i) (conv_kernels.h's block_inputs, the same words), then one
// exact 128-bit dot product per output limb over whole rows (detail::dot_const_simd).
#pragma once
#include <cstddef>
#include <vector>

#include "veil/ring/rns_poly_view.h"
#include "veil/rns/conv_kernels.h"

namespace veil::rns_detail {

/// The input rows of a conversion on the CPU: kf rows y_i, then v when the view has fractions.
class ConversionRows {
 public:
  /// False from applies() when the vector kernels cannot take `cv` (no AVX-512, n not a
  /// multiple of 8, more than 15 terms - 64 when every input and output prime is below 2^32,
  /// detail::dot_const_simd's `small` - or an output prime of 62 bits or more).
  ConversionRows(const ConvView& cv, std::size_t n);
  bool applies() const { return applies_; }
  std::size_t terms() const { return terms_; }
  /// Fills the rows from polynomial `poly` of `in` (in parallel over chunks of coefficients).
  /// 32-bit words are widened as they are read: the rows hold the same values either way.
  void load(const RnsPolyView<const u64>& in, u32 poly);
  void load(const RnsPolyView<const u32>& in, u32 poly);
  /// r[c] = sum_t row_t[c] * w[t] mod m for the coefficients c in [c0, c1) (r: the output
  /// limb's first word; w: a table row of `terms` words; c1 - c0 a multiple of 8).
  void dot(u64* r, const u64* w, const Modulus& m, std::size_t c0, std::size_t c1) const {
    dot_chunk(r + c0, w, m, c0, c1 - c0);
  }
  /// The same sums for the coefficients [c0, c0 + len) into r[0 .. len) (len a multiple of 8).
  void dot_chunk(u64* r, const u64* w, const Modulus& m, std::size_t c0, std::size_t len) const;

 private:
  template <class W>
  void load_rows(const RnsPolyView<const W>& in, u32 poly);
  const ConvView& cv_;
  std::size_t n_, terms_;
  bool small_ = false;  // every prime below 2^32: rows, weights and products stay small
  bool applies_;
  std::vector<u64> ys_;
  std::vector<const u64*> rows_;
};

}  // namespace veil::rns_detail
