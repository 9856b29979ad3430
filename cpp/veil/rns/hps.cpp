// HPS scale-and-round hot paths (one for_each thread per coefficient of each polynomial).
#include "veil/rns/hps.h"

#include "veil/rns/conv_kernels.h"

namespace veil {

namespace rns_detail {
/// out_j = r_j + v + x_{R,j} * lambda_j mod r_j, with r_j = sum_i x_i omega_ij and
/// v = round(sum_i x_i theta_i).
struct HpsQREpi {
  u64* out;
  const u64* x_r;  // the coefficient's R limbs in the input
  std::size_t n;
  const Modulus* r;
  const u64* lambda;
  const u64* lambda_shoup;
  VEIL_HD void operator()(std::size_t j, u64 s, u64 v_hi, u64 v_lo) const {
    const Modulus& m = r[j];
    const u64 a = add_mod(s, reduce_u128(v_hi, v_lo, m), m.value);
    out[j * n] = add_mod(a, mul_shoup(x_r[j * n], lambda[j], lambda_shoup[j], m.value), m.value);
  }
};

/// out = s + v mod t.
struct HpsQEpi {
  u64* out;
  const Modulus* t;
  VEIL_HD void operator()(std::size_t, u64 s, u64 v_hi, u64 v_lo) const {
    *out = add_mod(s, reduce_u128(v_hi, v_lo, *t), t->value);
  }
};
}  // namespace rns_detail

void HpsScaleAndRoundQR::apply(const Device& dev, const u64* in, u64* out, std::size_t n,
                               std::size_t num_polys) const {
  using namespace rns_detail;
  VEIL_REQUIRE(q_.size() > 0, "HpsScaleAndRoundQR::apply: object is default-constructed");
  ConvView cv;
  cv.kf = q_.size();
  cv.kt = r_.size();
  cv.from = q_.moduli(dev);
  cv.to = r_.moduli(dev);
  cv.mat = omega_.data(dev);
  cv.frac = theta_.data(dev);
  const std::size_t kq = cv.kf, kr = cv.kt;
  const Modulus* rm = cv.to;
  const u64* lam = lambda_.data(dev);
  const u64* lam_sh = lambda_shoup_.data(dev);
  Buffer<u64> scratch = partial_scratch(dev, kq, kr, n, num_polys);
  u64* part = scratch.data();
  for_each(dev, num_polys * n, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t p = idx / n, c = idx % n;
    const u64* x = in + p * (kq + kr) * n + c;
    HpsQREpi epi{out + p * kr * n + c, x + kq * n, n, rm, lam, lam_sh};
    convert_coeff(cv, x, part ? part + p * kr * n + c : nullptr, n, epi);
  });
}

void HpsScaleAndRoundQ::apply(const Device& dev, const u64* in, u64* out, std::size_t n) const {
  using namespace rns_detail;
  VEIL_REQUIRE(q_.size() > 0, "HpsScaleAndRoundQ::apply: object is default-constructed");
  ConvView cv;
  cv.kf = q_.size();
  cv.kt = 1;
  cv.from = q_.moduli(dev);
  cv.to = t_.data(dev);
  cv.mat = omega_.data(dev);
  cv.frac = theta_.data(dev);
  const Modulus* tm = cv.to;
  Buffer<u64> scratch = partial_scratch(dev, cv.kf, 1, n, 1);
  u64* part = scratch.data();
  for_each(dev, n, VEIL_LAMBDA(std::size_t c) {
    HpsQEpi epi{out + c, tm};
    convert_coeff(cv, in + c, part ? part + c : nullptr, n, epi);
  });
}

}  // namespace veil
