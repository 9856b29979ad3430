// HPS scale-and-round hot paths (one for_each thread per coefficient of each polynomial).
#include "veil/rns/hps.h"

#include "veil/rns/conv_kernels.h"

namespace veil {

namespace rns_detail {
/// out_j = r_j + v + x_{R,j} * lambda_j mod r_j, with r_j = sum_i x_i omega_ij and
/// v = round(sum_i x_i theta_i).
template <class W>
struct HpsQREpi {
  W* out;
  const W* x_r;  // the coefficient's R limbs in the input
  std::size_t n;
  const Modulus* r;
  const u64* lambda;
  const u64* lambda_shoup;
  VEIL_HD void operator()(std::size_t j, W s, u64 v_hi, u64 v_lo) const {
    const Modulus& m = r[j];
    const W q = static_cast<W>(m.value);
    const W a = add_mod(s, static_cast<W>(reduce_rounded(v_hi, v_lo, m)), q);
    out[j * n] = add_mod(
        a, mul_shoup(x_r[j * n], static_cast<W>(lambda[j]), shoup_for<W>(lambda_shoup[j]), q), q);
  }
};

/// out = s + v mod t.
template <class W>
struct HpsQEpi {
  u64* out;
  const Modulus* t;
  VEIL_HD void operator()(std::size_t, W s, u64 v_hi, u64 v_lo) const {
    *out = add_mod(u64(s), reduce_rounded(v_hi, v_lo, *t), t->value);
  }
};
}  // namespace rns_detail

template <class W>
void HpsScaleAndRoundQR::apply(const Device& dev, const W* in, W* out, std::size_t n,
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
  Buffer<W> scratch = partial_scratch<W>(dev, kq, kr, n, num_polys);
  W* part = scratch.data();
  for_each_coefficient(dev, num_polys, n, VEIL_LAMBDA(std::size_t p, std::size_t c) {
    const W* x = in + p * (kq + kr) * n + c;
    HpsQREpi<W> epi{out + p * kr * n + c, x + kq * n, n, rm, lam, lam_sh};
    convert_coeff<W>(cv, x, part ? part + p * kr * n + c : nullptr, n, epi);
  });
}

rns_detail::ConvView HpsScaleAndRoundQ::view(const Device& dev) const {
  VEIL_REQUIRE(q_.size() > 0, "HpsScaleAndRoundQ::apply: object is default-constructed");
  rns_detail::ConvView cv;
  cv.kf = q_.size();
  cv.kt = 1;
  cv.from = q_.moduli(dev);
  cv.to = t_.data(dev);
  cv.mat = omega_.data(dev);
  cv.frac = theta_.data(dev);
  return cv;
}

template <class W>
void HpsScaleAndRoundQ::apply(const Device& dev, const W* in, u64* out, std::size_t n) const {
  using namespace rns_detail;
  const ConvView cv = view(dev);
  const Modulus* tm = cv.to;
  Buffer<W> scratch = partial_scratch<W>(dev, cv.kf, 1, n, 1);
  W* part = scratch.data();
  for_each(dev, n, VEIL_LAMBDA(std::size_t c) {
    HpsQEpi<W> epi{out + c, tm};
    convert_coeff<W>(cv, in + c, part ? part + c : nullptr, n, epi);
  });
}

template <class W>
PendingAny HpsScaleAndRoundQ::apply_checked(const Device& dev, const W* in, u64* out,
                                            std::size_t n, const NoiseTest& test) const {
  using namespace rns_detail;
  const ConvView cv = view(dev);
  VEIL_REQUIRE(!test.on() || test.limbs == cv.kf,
               "HpsScaleAndRoundQ::apply_checked: the noise test is not over this base");
  const Modulus* tm = cv.to;
  if (dev.is_cuda()) {  // NoiseTest::kLanes threads per coefficient
    auto finish = VEIL_LAMBDA(std::size_t c, u64 r, u64 v_hi, u64 v_lo) {
      out[c] = add_mod(r, reduce_rounded(v_hi, v_lo, *tm), tm->value);
    };
    return convert_to_one_lanes(dev, cv, in, n, test, finish, "HpsScaleAndRoundQ::apply_checked");
  }
  if (!test.on()) {
    apply(dev, in, out, n);
    return PendingAny(false);
  }
  Buffer<W> scratch = partial_scratch<W>(dev, cv.kf, 1, n, 1);
  W* part = scratch.data();
  return for_each_any(dev, n, VEIL_LAMBDA(std::size_t c) {
    HpsQEpi<W> epi{out + c, tm};
    convert_coeff<W>(cv, in + c, part ? part + c : nullptr, n, epi);
    return test.exceeds(in, n, c);
  });
}

template void HpsScaleAndRoundQR::apply<u32>(const Device&, const u32*, u32*, std::size_t,
                                             std::size_t) const;
template void HpsScaleAndRoundQR::apply<u64>(const Device&, const u64*, u64*, std::size_t,
                                             std::size_t) const;
template void HpsScaleAndRoundQ::apply<u32>(const Device&, const u32*, u64*, std::size_t) const;
template void HpsScaleAndRoundQ::apply<u64>(const Device&, const u64*, u64*, std::size_t) const;
template PendingAny HpsScaleAndRoundQ::apply_checked<u32>(const Device&, const u32*, u64*,
                                                          std::size_t, const NoiseTest&) const;
template PendingAny HpsScaleAndRoundQ::apply_checked<u64>(const Device&, const u64*, u64*,
                                                          std::size_t, const NoiseTest&) const;

}  // namespace veil
