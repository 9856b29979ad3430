// HPS (Halevi-Polyakov-Shoup 2019; Al Badawi et al. 2021 §IV) scale-and-round with fixed-point
// correction.
//
// ScaleAndRoundQR: given x by its residues over Q ∪ R, returns round(t * x / Q) mod r_j for
// every r_j in R (the tensor-product rescaling of HPS multiplication, Al Badawi et al. 2021 eq. for
// "ScaleAndRound"):
//   round(t x / Q) = round(sum_{i in Q} x_i * theta_i) + sum_{i in Q} x_i * omega_ij
//                    + x_j * lambda_j   (mod r_j),
// where t R [(QR/q_i)^-1]_{q_i} / q_i = omega_i + theta_i (integer + fraction, omega_ij = omega_i
// mod r_j) and lambda_j = t (R/r_j) [(QR/r_j)^-1]_{r_j} mod r_j.
//
// ScaleAndRoundQ (decryption): from residues over Q, returns round(t x / Q) mod t (x any
// representative), with t [(Q/q_i)^-1]_{q_i} / q_i = omega_i + theta_i.
//
// The fractions theta_i are kept in 0.128 fixed point (see base_converter.h for why); the
// rounding is exact except when the fractional part of t x / Q lies within |Q| * 2^-67 of 1/2
// (the HPS boundary case; BFV noise keeps real inputs far from it).
#pragma once
#include <cstddef>

#include "veil/backend/launch.h"
#include "veil/backend/table.h"
#include "veil/ring/rns_base.h"
#include "veil/rns/noise_test.h"

namespace veil {

namespace rns_detail {
struct ConvView;
}

/// HPS's ScaleAndRound from Q ∪ R to R: round(t x / Q) mod r_j for BFV's tensor-product
/// rescaling (Halevi-Polyakov-Shoup, CT-RSA 2019, Sec. 4), with the fractions in 0.128 fixed
/// point.
class HpsScaleAndRoundQR {
 public:
  HpsScaleAndRoundQR() = default;
  /// Throws InvalidArgument if a base is empty, the bases overlap or t < 2.
  /// @param q the ciphertext base Q.
  /// @param r the extension base R, disjoint from Q.
  /// @param t the plain modulus.
  /// @throws InvalidArgument as above.
  HpsScaleAndRoundQR(const RnsBase& q, const RnsBase& r, u64 t);
  /// in: [num_polys][|Q|+|R|][n] (Q limbs first); out: [num_polys][|R|][n]. W = u32 or u64.
  /// @tparam W u32 or u64.
  /// @param dev the device of `in` and `out`.
  /// @param in [num_polys][|Q|+|R|][n] residues (coefficient form).
  /// @param out [num_polys][|R|][n]; receives round(t x / Q) mod r_j.
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @throws InvalidArgument if the object is default-constructed.
  template <class W>
  void apply(const Device& dev, const W* in, W* out, std::size_t n,
             std::size_t num_polys = 1) const;

 private:
  RnsBase q_, r_;
  DeviceTable<u64> theta_;   // [Q][2] fixed point (hi, lo)
  DeviceTable<u64> omega_;   // [R][Q]: omega_i mod r_j
  DeviceTable<u64> lambda_;  // [R]
  DeviceTable<u64> lambda_shoup_;
};

/// HPS's ScaleAndRound from Q to t: round(t x / Q) mod t, BFV decryption (Halevi-Polyakov-Shoup,
/// CT-RSA 2019; Al Badawi et al. 2021 Sec. IV).
class HpsScaleAndRoundQ {
 public:
  HpsScaleAndRoundQ() = default;
  /// Throws InvalidArgument if q is empty, t is not in [2, 2^61) or shares a factor with Q.
  /// @param q the ciphertext base Q.
  /// @param t the plain modulus.
  /// @throws InvalidArgument as above.
  HpsScaleAndRoundQ(const RnsBase& q, u64 t);
  /// in: [|Q|][n] words W; out: [n] values in [0, t) (64-bit words, as plaintexts are stored).
  /// @tparam W u32 or u64.
  /// @param dev the device of `in` and `out`.
  /// @param in [|Q|][n] residues of the phase (coefficient form).
  /// @param out [n] words; receives round(t x / Q) mod t.
  /// @param n the ring degree N.
  /// @throws InvalidArgument if the object is default-constructed.
  template <class W>
  void apply(const Device& dev, const W* in, u64* out, std::size_t n) const;
  /// apply and, in the same pass (the thread that converts a coefficient also tests it),
  /// `test` on `in` when it is on (BFV decryption's noise test, NoiseTest's factors for t * in):
  /// queued, wait() on the result says whether it held for some coefficient (false when the
  /// test is off). `out` is written in full either way. On a GPU each coefficient takes
  /// NoiseTest::kLanes threads (convert_coeff_to_one), so n must be a multiple of 8 there.
  /// @tparam W u32 or u64.
  /// @param dev the device of `in` and `out`.
  /// @param in [|Q|][n] residues of the phase.
  /// @param out [n] words; receives round(t x / Q) mod t.
  /// @param n the ring degree N (a multiple of 8 on a GPU).
  /// @param test the noise test (off: none).
  /// @return the pending answer of the test.
  /// @throws InvalidArgument if the object is default-constructed, the test is over another number
  ///         of limbs, or (GPU) n is not a multiple of 8.
  template <class W>
  PendingAny apply_checked(const Device& dev, const W* in, u64* out, std::size_t n,
                           const NoiseTest& test) const;

 private:
  rns_detail::ConvView view(const Device& dev) const;
  RnsBase q_;
  DeviceTable<Modulus> t_;  // [1]: t
  DeviceTable<u64> theta_;  // [Q][2]
  DeviceTable<u64> omega_;  // [Q]: omega_i mod t
};

}  // namespace veil
