// Divide-and-round by a product of trailing primes (Phantom, Yang et al. 2024 §III-C "ModDown";
// CKKS rescale when one prime is dropped; SEAL's divide_and_round_q_last_inplace for one prime).
//
// Input x over base K ∪ D (K kept, D dropped, D's limbs last), coefficient form.
// Output over K: round(x / D) = (x + floor(D/2) - FastBaseConv_{D->K}([x + floor(D/2)]_D))
//                                * D^-1 mod k_i.
// With |D| > 1 the fast conversion is approximate (adds u*D, u < |D|), so the result is within
// |D| of the rounded quotient, which key switching absorbs into its error (Phantom, Yang et al.
// 2024 §III-C).
#pragma once
#include <cstddef>

#include "veil/backend/table.h"
#include "veil/backend/word_buffer.h"
#include "veil/rns/base_converter.h"

namespace veil {

/// Divide-and-round by the product D of trailing primes on coefficient-form data (key switching's
/// ModDown, CKKS/BFV rescaling by a prime): the formula above (Phantom, Yang et al. 2024 Sec.
/// III-C;
/// SEAL's divide_and_round_q_last_inplace for one prime).
class ModDown {
 public:
  ModDown() = default;
  /// Throws InvalidArgument if either base is empty or they share a modulus.
  /// @param keep the kept base K.
  /// @param drop the dropped base D (its limbs follow K's in the input).
  /// @throws InvalidArgument as above, or if either base has moduli that are not co-prime.
  ModDown(const RnsBase& keep, const RnsBase& drop);
  /// The kept base K.
  /// @return the base.
  const RnsBase& keep() const { return keep_; }
  /// The dropped base D.
  /// @return the base.
  const RnsBase& drop() const { return drop_; }
  /// in: [num_polys][|K|+|D|][n]; out: [num_polys][|K|][n] (may alias `in`'s K limbs only if
  /// out == in, in which case each polynomial's K limbs are overwritten in place, i.e. the
  /// output keeps the input's polynomial stride (|K|+|D|)*n and the D limbs are left as they were).
  /// Scratch is allocated from the device pool.
  /// W = u32 or u64 (u32: every modulus below 2^31).
  /// @tparam W u32 or u64.
  /// @param dev the device of `in` and `out`.
  /// @param in [num_polys][|K|+|D|][n] residues, coefficient form.
  /// @param out [num_polys][|K|][n], or `in` itself.
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @throws InvalidArgument if the object is default-constructed or (W = u32) a modulus is not
  ///         below 2^31.
  template <class W>
  void apply(const Device& dev, const W* in, W* out, std::size_t n,
             std::size_t num_polys = 1) const;
  /// acc_p += round(in[p] / D) for each polynomial p (one or two), coefficient form: the fused
  /// epilogue of key switching (Phantom, Yang et al. 2024 Sec. IV fusion).
  /// @tparam W u32 or u64.
  /// @param dev the device of the data.
  /// @param in [num_polys][|K|+|D|][n] residues.
  /// @param acc0 [|K|][n]; accumulates the first polynomial's quotient.
  /// @param acc1 [|K|][n]; accumulates the second's (unused with one polynomial).
  /// @param n the ring degree N.
  /// @param num_polys 1 or 2.
  /// @throws InvalidArgument if num_polys is not 1 or 2 or the object is default-constructed.
  template <class W>
  void apply_accumulate(const Device& dev, const W* in, W* acc0, W* acc1, std::size_t n,
                        std::size_t num_polys) const;
  /// apply() on words of a run-time size.
  /// @param dev the device of `in` and `out`.
  /// @param in [num_polys][|K|+|D|][n] words.
  /// @param out [num_polys][|K|][n] words of in's size (or `in` itself).
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @throws InvalidArgument as the typed apply, or if the word sizes differ.
  void apply(const Device& dev, ConstWordPtr in, WordPtr out, std::size_t n,
             std::size_t num_polys = 1) const;

 private:
  RnsBase keep_, drop_;
  detail::FastConvTables conv_;        // D -> K
  DeviceTable<u64> half_mod_d_;        // [D]: floor(D/2) mod d_j
  DeviceTable<u64> half_mod_k_;        // [K]: floor(D/2) mod k_i
  DeviceTable<u64> d_inv_, d_inv_shoup_;  // [K]: D^-1 mod k_i
};

/// Host-only oracle helper: for a polynomial over `base` ([base.size()][n] on the host), returns
/// log2 of the largest |x_j| with x_j the centered CRT composition (0 if all zero). Used by
/// invariant_noise_budget and tests. Exact (Boost.Multiprecision).
/// @param host_in [base.size()][n] residues on the host.
/// @param n the number of coefficients.
/// @param base the base (co-prime moduli).
/// @return log2 of the largest |x_j| (0 when all are zero).
/// @throws InvalidArgument if the base is empty, host_in is null or the moduli are not co-prime.
double max_centered_log2(const u64* host_in, std::size_t n, const RnsBase& base);
/// Exact bit count of that largest |x_j| (0 if all zero): SEAL's noise-budget norm.
/// @param host_in [base.size()][n] residues on the host.
/// @param n the number of coefficients.
/// @param base the base (co-prime moduli).
/// @return the bit count of the largest |x_j|.
/// @throws InvalidArgument if the base is empty, host_in is null or the moduli are not co-prime.
int max_centered_bit_count(const u64* host_in, std::size_t n, const RnsBase& base);

}  // namespace veil
