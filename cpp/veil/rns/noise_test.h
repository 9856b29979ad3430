// The noise test of BFV/BGV decryption: whether the phase x (an integer mod Q given by its
// residues) is so large that the decryption may be wrong, i.e. the noise budget is exhausted.
#pragma once
#include <cmath>
#include <cstddef>

#include "veil/core/hd.h"
#include "veil/core/modarith.h"

namespace veil {

/// |x/Q| >= threshold for x centered mod Q, per coefficient. x/Q mod 1 is
/// sum_i [x_i * (Q/q_i)^-1]_{q_i} / q_i mod 1, so factor[i] = f * (Q/q_i)^-1 mod q_i (f = t for
/// BFV's t * phase, 1 for BGV) and the test is exact up to double rounding, far below the
/// threshold's own margin. A default-constructed test is off: exceeds() is never called then.
struct NoiseTest {
  const Modulus* mods = nullptr;  // [limbs] on the device of the data
  const u64* factor = nullptr;    // [limbs]
  std::size_t limbs = 0;
  double threshold = 0;

  VEIL_HD bool on() const { return mods != nullptr; }

  /// Coefficient j of x ([limbs][n] words W).
  template <class W>
  VEIL_HD bool exceeds(const W* x, std::size_t n, std::size_t j) const {
    double s = 0;
    for (std::size_t i = 0; i < limbs; ++i) {
      const Modulus m = mods[i];
      s += static_cast<double>(mul_mod(u64(x[i * n + j]), factor[i], m)) /
           static_cast<double>(m.value);
    }
    s -= floor(s + 0.5);  // the centered fraction x/Q in [-1/2, 1/2]
    return fabs(s) >= threshold;
  }
};

}  // namespace veil
