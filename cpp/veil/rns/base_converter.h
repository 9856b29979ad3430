// RNS base conversion (Al Badawi et al. 2021 §II-D; Phantom, Yang et al. 2024 §III-B).
//
// FastBaseConv (Bajard et al. 2016): for x given by residues x_i modulo the primes q_i of base
// `from` (product Q), returns  sum_i [x_i * (Q/q_i)^-1]_{q_i} * (Q/q_i)  mod p_j  for every p_j of
// base `to`. The result equals x + u*Q with 0 <= u < |from| (approximate).
//
// Exact conversion (Halevi-Polyakov-Shoup 2019, Al Badawi et al. 2021 §II-D.2): subtracts v*Q where
// v = round(sum_i [x_i (Q/q_i)^-1]_{q_i} / q_i), giving the centered representative of x in (-Q/2,
// Q/2]. The fractions are held in 0.128 fixed point rather than double: with 61-bit primes double
// precision (nu = 53) only supports q_i <= 2^(nu-3)/k (Al Badawi et al. 2021 Table 1), while 128
// fractional bits keep the total error below k * 2^-67, far inside the 1/4 margin.
#pragma once
#include <cstddef>
#include <vector>

#include "veil/backend/launch.h"
#include "veil/backend/table.h"
#include "veil/backend/word_buffer.h"
#include "veil/ring/rns_base.h"
#include "veil/rns/noise_test.h"

namespace veil {

namespace detail {
/// Constants of one fast base conversion from -> to whose inputs are first multiplied by a
/// per-limb scalar c_i (c = 1 for a plain conversion; m_tilde or t*gamma for BEHZ):
///   y_i = [x_i * c_i * (Q/q_i)^-1]_{q_i},  out_j = sum_i y_i * (Q/q_i)  mod p_j.
/// Built on the host (base_converter_host.cpp); used by the kernels in rns/conv_kernels.h.
struct FastConvTables {
  std::size_t k_from = 0, k_to = 0;
  DeviceTable<u64> scale;        // [from]: c_i * (Q/q_i)^-1 mod q_i
  DeviceTable<u64> scale_shoup;  // [from]
  DeviceTable<u64> qhat_mod_p;   // [to][from]: (Q/q_i) mod p_j
  DeviceTable<u64> q_mod_p;      // [to]: Q mod p_j
  // [to][stride]: row j = qhat_mod_p's row, then (-Q) mod p_j, then zeros to `stride` (a
  // multiple of four) words, for the register-blocked kernels (conv_kernels.h: convert_block);
  // only when k_from < 32. The 32-bit copy exists when every modulus of both bases is below 2^31.
  std::size_t stride = 0;
  DeviceTable<u64> mat_padded;
  DeviceTable<u32> mat_padded32;
  // mat_padded32 in Montgomery form (entry * 2^32 mod p_j), for the GPU's lazy rows
  // (conv_kernels.h: block_row_mont); only where mont32_lazy_fits holds for the two bases and
  // every target modulus is odd.
  DeviceTable<u32> mat_mont32;

  FastConvTables() = default;
  /// `c_mod_q`: c mod q_i per limb of `from` (empty: c = 1). Throws InvalidArgument if either
  /// base is empty or they share a modulus (`what` names the caller in the message).
  FastConvTables(const RnsBase& from, const RnsBase& to, const std::vector<u64>& c_mod_q,
                 const char* what);
};
/// The lazy rows' table (rns/conv_kernels.h: block_row_mont) for a padded table `mat` of rows of
/// `stride` words, row r reduced mod row_moduli[r % row_moduli.size()]: each entry times 2^32 mod
/// its row's prime. Empty (the rows keep block_row) unless every modulus of row_moduli is odd and
/// mont32_lazy_fits(in_bound, their largest) holds; in_bound bounds the conversion's inputs
/// (y_i < q_i and v <= k_from). Used by FastConvTables and the key switching's ModUp tables.
std::vector<u32> montgomery32_table(const std::vector<u64>& mat, std::size_t stride,
                                    const RnsBase& row_moduli, u64 in_bound);
}  // namespace detail

/// Fast (approximate) and exact RNS base conversion from base `from` (product Q) to base `to`,
/// with the tables built once on the host (FastBaseConv: Bajard-Eynard-Hasan-Zucca, SAC 2016;
/// exact: Halevi-Polyakov-Shoup, CT-RSA 2019).
class BaseConverter {
 public:
  BaseConverter() = default;
  /// Precomputes (Q/q_i)^-1 mod q_i, (Q/q_i) mod p_j, Q mod p_j and the 0.128 fixed-point
  /// fractions 1/q_i. Throws InvalidArgument if a base is empty or the bases share a modulus.
  /// @param from the source base (co-prime moduli).
  /// @param to the target base, disjoint from `from`.
  /// @throws InvalidArgument if a base is empty, `from` has moduli that are not co-prime, or the
  ///         bases share a modulus.
  BaseConverter(const RnsBase& from, const RnsBase& to);

  /// The source base.
  /// @return the base the inputs are over.
  const RnsBase& from() const { return from_; }
  /// The target base.
  /// @return the base the outputs are over.
  const RnsBase& to() const { return to_; }
  /// The conversion's tables and the 0.128 fixed-point fractions 1/q_i ([from][2], on dev), for
  /// kernels that fuse the conversion into another pass (ModDownNtt::correction_first_pass).
  /// @return the fast conversion's tables (c = 1).
  const detail::FastConvTables& tables() const { return conv_; }
  /// The 0.128 fixed-point fractions floor(2^128 / q_i) as (hi, lo) pairs, [from][2], on `dev`.
  /// @param dev the device.
  /// @return the fractions on `dev`.
  const u64* fractions(const Device& dev) const { return frac_.data(dev); }

  /// in: [num_polys][from.size()][n] (residues in [0, q_i)); out: [num_polys][to.size()][n].
  /// Approximate (x + u*Q, 0 <= u < |from|). `out` must not alias `in`.
  /// `in_stride` / `out_stride`: words between consecutive polynomials (0: contiguous), so a
  /// conversion can read from or write into a larger layout such as [poly][Q ∪ R][n].
  /// W = u32 needs every modulus of both bases below 2^31.
  /// @tparam W u32 or u64.
  /// @param dev the device of `in` and `out`.
  /// @param in [num_polys][from.size()][n] residues (coefficient form).
  /// @param out [num_polys][to.size()][n]; receives the converted residues.
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @param in_stride words between input polynomials (0: from.size() * n); a multiple of n.
  /// @param out_stride words between output polynomials (0: to.size() * n); a multiple of n.
  /// @throws InvalidArgument if the converter is default-constructed, a stride is not a multiple of
  ///         n (or below its base's limbs), or W = u32 and a modulus is not below 2^31.
  template <class W>
  void fast_convert(const Device& dev, const W* in, W* out, std::size_t n,
                    std::size_t num_polys = 1, std::size_t in_stride = 0,
                    std::size_t out_stride = 0) const;
  /// Exact, centered: out = x' mod p_j where x' in (-Q/2, Q/2] and x' = x mod Q.
  /// v is rounded from 0.128 fixed point with truncated fractions, so the sum is never
  /// over-estimated: every x' <= (Q-1)/2 is exact, and only x with x mod Q in
  /// ((Q+1)/2, (Q+1)/2 + |from| * 2^-67 * Q) may come out uncentered (as x mod Q instead of
  /// x mod Q - Q); no other error. `out` must not alias `in`. Out words may be 64-bit for
  /// 32-bit inputs (Wo = u64: conversion to a plain modulus stored in 64-bit words).
  /// (Halevi-Polyakov-Shoup, CT-RSA 2019; the rounding in 0.128 fixed point instead of
  /// double.)
  /// @tparam W the input word, u32 or u64.
  /// @tparam Wo the output word (W, or u64 for 32-bit inputs).
  /// @param dev the device of `in` and `out`.
  /// @param in [num_polys][from.size()][n] residues (coefficient form).
  /// @param out [num_polys][to.size()][n]; receives the centered representative mod each p_j.
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @param in_stride words between input polynomials (0: contiguous); a multiple of n.
  /// @param out_stride words between output polynomials (0: contiguous); a multiple of n.
  /// @throws InvalidArgument if the converter is default-constructed, a stride is not a multiple of
  ///         n (or below its base's limbs), or W or Wo is u32 and a modulus is not below 2^31.
  template <class W, class Wo = W>
  void exact_convert(const Device& dev, const W* in, Wo* out, std::size_t n,
                     std::size_t num_polys = 1, std::size_t in_stride = 0,
                     std::size_t out_stride = 0) const;
  /// exact_convert of one polynomial into 64-bit words, each output word then multiplied by
  /// `factor` (< every p_j; 1: none) mod p_j, and `test` on `in` when it is on (BGV decryption:
  /// the conversion to t, the correction factor's inverse and the noise test). On a GPU with one
  /// target prime that is one pass, NoiseTest::kLanes threads per coefficient (n must be a
  /// multiple of 8 there); elsewhere the test, then exact_convert, then the factor. Queued:
  /// wait() on the result says whether the test held for some coefficient (false when it is
  /// off). Throws InvalidArgument if factor is not below every p_j or the test is over another
  /// number of limbs.
  /// @tparam W the input word, u32 or u64.
  /// @param dev the device of `in` and `out`.
  /// @param in [from.size()][n] residues (one polynomial).
  /// @param out [to.size()][n] 64-bit words; receives the converted (and multiplied) values.
  /// @param n the ring degree N (a multiple of 8 on a GPU with one target prime).
  /// @param factor the multiplier, below every p_j (1: none).
  /// @param test the noise test on `in` (off: none).
  /// @return the pending answer of the test (false when it is off).
  /// @throws InvalidArgument if the converter is default-constructed, factor is too large, the test
  ///         is over another number of limbs, or n is not a multiple of 8 where the fused GPU pass
  ///         runs.
  template <class W>
  PendingAny exact_convert_checked(const Device& dev, const W* in, u64* out, std::size_t n,
                                   u64 factor, const NoiseTest& test) const;
  /// The same on words of a run-time size (in and out of the same size).
  /// @param dev the device of `in` and `out`.
  /// @param in [num_polys][from.size()][n] words.
  /// @param out [num_polys][to.size()][n] words of in's size.
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @param in_stride words between input polynomials (0: contiguous).
  /// @param out_stride words between output polynomials (0: contiguous).
  /// @throws InvalidArgument as fast_convert, and if the two word sizes differ.
  void fast_convert(const Device& dev, ConstWordPtr in, WordPtr out, std::size_t n,
                    std::size_t num_polys = 1, std::size_t in_stride = 0,
                    std::size_t out_stride = 0) const;
  /// exact_convert on words of a run-time size (in and out of the same size).
  /// @param dev the device of `in` and `out`.
  /// @param in [num_polys][from.size()][n] words.
  /// @param out [num_polys][to.size()][n] words of in's size.
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @param in_stride words between input polynomials (0: contiguous).
  /// @param out_stride words between output polynomials (0: contiguous).
  /// @throws InvalidArgument as exact_convert, and if the two word sizes differ.
  void exact_convert(const Device& dev, ConstWordPtr in, WordPtr out, std::size_t n,
                     std::size_t num_polys = 1, std::size_t in_stride = 0,
                     std::size_t out_stride = 0) const;

 private:
  RnsBase from_, to_;
  detail::FastConvTables conv_;  // c = 1
  DeviceTable<u64> frac_;        // [from][2]: 0.128 fixed point of 1/q_i (hi, lo)
};

/// The GPU kernel of the register-blocked conversions (BaseConverter's fast and exact
/// conversions, hence CKKS key switching's ModDown P -> Q); the words are the same for each.
/// 0 the generic one (tables read from global memory, about 2^16 threads); 1 the table rows and
/// target moduli staged in shared memory, as ModUp's conversion does (set_mod_up_kernel); 2 the
/// same with half the coefficients per thread and about 2^17 threads. Measured with
/// 32-bit words at N = 2^16 (a full-slot bootstrap on an H200: 18.80 / 18.72 / 18.58 ms with
/// 0 / 1 / 2; bench/NOTES.md); 64-bit words take 2 unmeasured. 3 (the default): the tensor
/// cores (u8 matrix products, TensorFHE, arXiv 2212.14191; rns/conv_tc.h) where they apply
/// (32-bit words with the Montgomery table and the lazy rows on, rows of at most 16 words, N a
/// multiple of 128, 8-byte aligned outputs, compute capability 8.0 or later), else 2: ModDown's
/// P -> Q at bootparam_40's top level 48.6 -> 35.8 us (H200, ncu). VEIL_CONV_KERNEL (0..3, read
/// once) or set_conversion_kernel choose it (A/B in bench/boot_bench.cpp).
/// @return the kernel in use, 0..3.
int conversion_kernel();
/// Chooses the register-blocked conversions' GPU kernel for the whole process (see
/// conversion_kernel).
/// @param kernel 0, 1, 2 or 3.
/// @throws InvalidArgument naming `kernel` outside 0..3.
void set_conversion_kernel(int kernel);
/// Tiles of 128 coefficients each block of the tensor-core conversions takes (set_conversion_kernel
/// 3, set_mod_up_kernel 3; rns/conv_tc.h): 1 (the default), 2 or 4 (each thread's table fragments
/// serve more coefficients; fewer blocks). The words are the same for each. VEIL_TC_TILES (read
/// once) or set_conversion_tc_tiles choose it.
/// @return the tiles a block takes: 1, 2 or 4.
int conversion_tc_tiles();
/// Chooses the tensor-core conversions' tiles a block for the whole process (see
/// conversion_tc_tiles).
/// @param tiles 1, 2 or 4.
/// @throws InvalidArgument naming `tiles` other than 1, 2 or 4.
void set_conversion_tc_tiles(int tiles);
/// Whether the shared-memory conversion kernels (set_conversion_kernel 1-2, set_mod_up_kernel
/// 1-2) take their branch-free form where every table row has exactly the kernel's groups of
/// four words (ModDown from 12 special primes, ModUp of digits of 9-12 primes): the group count
/// is then a compile-time constant, each output row one block, and two rows interleave. The
/// words are the same. On by default; VEIL_CONV_FULL_ROWS=0 (read once) or
/// set_conversion_full_rows(false) turn it off (A/B in bench/boot_bench.cpp).
/// @return true when the branch-free form is on.
bool conversion_full_rows();
/// Turns the branch-free full-row form on or off for the whole process (see
/// conversion_full_rows).
/// @param on true: on.
void set_conversion_full_rows(bool on);
/// Whether the shared-memory conversion kernels (set_conversion_kernel 1-2, set_mod_up_kernel
/// 1-2) take their lazy rows with 32-bit words where the bases allow it (mont32_lazy_fits:
/// every product below 2^61, as in ModUp and ModDown at Cheddar's bootparam_40): the table in
/// Montgomery form, one 64-bit sum per coefficient folded every four products, and one REDC per
/// output word (conv_kernels.h: block_row_mont) instead of a 96-bit sum and a 64-bit Barrett
/// reduction. The words are the same. On by default; VEIL_CONV_MONT=0 (read once) or
/// set_conversion_montgomery(false) turn it off (A/B in bench/boot_bench.cpp, token l).
/// @return true when the lazy Montgomery rows are on.
bool conversion_montgomery();
/// Turns the lazy Montgomery rows on or off for the whole process (see conversion_montgomery).
/// @param on true: on.
void set_conversion_montgomery(bool on);
/// log2 of the threads the shared-memory conversion kernels aim at with half the coefficients
/// per thread (set_conversion_kernel 2, set_mod_up_kernel 2): the output limbs are split into
/// groups (each recomputing its inputs) until about 2^log_threads threads run. Default 16:
/// with the lazy rows (set_conversion_montgomery) fewer, longer threads won (a full-slot
/// bootstrap at N = 2^16 on an H200: 16.79 / 16.79 / 17.06 / 17.66 / 18.84 ms at 15 / 16 / 17 /
/// 18 / 19; multiply+relinearize at bootparam_40's top 390-392 us at 15-17; bench/NOTES.md).
/// 15 and 16 launch the same grids at N = 2^16's top level; 16 keeps more threads at smaller N,
/// where neither was timed.
/// VEIL_CONV_LOG_THREADS (15..20, read once) or set_conversion_log_threads choose it (A/B in
/// bench/boot_bench.cpp, token t). The words are the same.
/// @return the log2 of the target thread count, 15..20.
int conversion_log_threads();
/// Sets conversion_log_threads for the whole process.
/// @param log_threads 15..20.
/// @throws InvalidArgument naming `log_threads` outside 15..20.
void set_conversion_log_threads(int log_threads);

}  // namespace veil
