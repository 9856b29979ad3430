// The noise test of BFV/BGV decryption: whether the phase x (an integer mod Q given by its
// residues) is so large that the decryption may be wrong, i.e. the noise budget is exhausted.
#pragma once
#include <cmath>
#include <cstddef>
#include <vector>

#include "veil/core/hd.h"
#include "veil/core/modarith.h"

namespace veil {

/// |x/Q| >= threshold for x centered mod Q, per coefficient. x/Q mod 1 is
/// sum_i [x_i * (Q/q_i)^-1]_{q_i} / q_i mod 1, so factor[i] = f * (Q/q_i)^-1 mod q_i (f = t for
/// BFV's t * phase, 1 for BGV) and the test is exact up to double rounding, far below the
/// threshold's own margin. A default-constructed test is off: exceeds() is never called then.
struct NoiseTest {
  /// [limbs] moduli q_i, on the device of the data (null: the test is off).
  const Modulus* mods = nullptr;
  /// [limbs] factors f * (Q/q_i)^-1 mod q_i, on the device of the data.
  const u64* factor = nullptr;
  /// [limbs] the same factors on the host, or null.
  const u64* factor_host = nullptr;
  /// The number of limbs |Q| of the phase.
  std::size_t limbs = 0;
  /// The bound on |x/Q| (centered) at which decryption may fail.
  double threshold = 0;

  /// Whether the test is on (has moduli).
  /// @return mods != nullptr.
  VEIL_HD bool on() const { return mods != nullptr; }

  /// The test's limbs are summed in kLanes interleaved partial sums (limbs g, g + kLanes, ...),
  /// combined as ((s0 + s1) + (s2 + s3)): the order the GPU's lanes use (lanes_sum), so the
  /// double-precision answer is the same on every device.
  static constexpr unsigned kLanes = 4;

  /// One limb's term: y / q with y = [x_i * factor_i]_{q_i} (a conversion that already has y
  /// adds the same term, so its sum is the same double; convert_coeff_to_one).
  /// @param y the limb's scaled residue, below q.
  /// @param q the limb's modulus.
  /// @return y / q in double precision.
  VEIL_HD static double term(u64 y, u64 q) {
    return static_cast<double>(y) / static_cast<double>(q);
  }
  /// Partial sum of lane g: sum over limbs i = g mod kLanes of [x_i * factor_i]_{q_i} / q_i.
  /// @tparam W u32 or u64.
  /// @param x the phase, [limbs][n] words on the device of the test.
  /// @param n the ring degree N.
  /// @param j the coefficient.
  /// @param g the lane, below kLanes.
  /// @return the partial sum.
  template <class W>
  VEIL_HD double partial(const W* x, std::size_t n, std::size_t j, unsigned g) const {
    double s = 0;
    for (std::size_t i = g; i < limbs; i += kLanes) {
      const Modulus m = mods[i];
      s += term(mul_mod(u64(x[i * n + j]), factor[i], m), m.value);
    }
    return s;
  }
  /// Whether factor[i] is `scale`[i] for every limb (host words): then a conversion whose inputs
  /// are y_i = [x_i * scale_i]_{q_i} has the test's terms already.
  /// @param scale one word per limb.
  /// @return true when factor_host holds exactly `scale` (false without factor_host).
  bool factor_is(const std::vector<u64>& scale) const {
    if (factor_host == nullptr || scale.size() != limbs) return false;
    for (std::size_t i = 0; i < limbs; ++i) {
      if (factor_host[i] != scale[i]) return false;
    }
    return true;
  }
  /// Whether the fraction sum s (mod 1) is at least the threshold away from an integer.
  /// @param s the fraction sum of a coefficient.
  /// @return true when |s - round(s)| >= threshold.
  VEIL_HD bool exceeds_sum(double s) const {
    s -= floor(s + 0.5);  // the centered fraction x/Q in [-1/2, 1/2]
    return fabs(s) >= threshold;
  }
  /// Coefficient j of x ([limbs][n] words W).
  /// @tparam W u32 or u64.
  /// @param x the phase, [limbs][n] words.
  /// @param n the ring degree N.
  /// @param j the coefficient.
  /// @return whether coefficient j's centered |x_j / Q| reaches the threshold.
  template <class W>
  VEIL_HD bool exceeds(const W* x, std::size_t n, std::size_t j) const {
    static_assert(kLanes == 4, "the combination below is written for four lanes");
    const double s = (partial(x, n, j, 0) + partial(x, n, j, 1)) +
                     (partial(x, n, j, 2) + partial(x, n, j, 3));
    return exceeds_sum(s);
  }
};

}  // namespace veil
