// BEHZ hot paths (Bajard-Eynard-Hasan-Zucca 2016; SEAL RNSTool semantics). One for_each thread
// per coefficient of each polynomial; conversions fused with their epilogues.
#include "veil/rns/behz.h"

#include "veil/rns/conv_kernels.h"

namespace veil {

namespace rns_detail {

/// fast_floor epilogue: out_j = (x_j - r_j) * Q^-1 mod b_j (x_j the Bsk input limb).
struct FloorEpi {
  u64* out;
  const u64* x_bsk;
  std::size_t n;
  const Modulus* bsk;
  const u64* q_inv;
  const u64* q_inv_shoup;
  VEIL_HD void operator()(std::size_t j, u64 r, u64, u64) const {
    const u64 b = bsk[j].value;
    // x_j + b - r < 2b: Shoup accepts any word, so no reduction is needed first.
    out[j * n] = mul_shoup(x_bsk[j * n] + b - r, q_inv[j], q_inv_shoup[j], b);
  }
};

/// Shenoy-Kumaresan epilogue. Limb 0 of the conversion is m_sk: alpha = (r - x_msk) * B^-1 mod
/// m_sk, taken centered. Limbs 1.. are Q: out_i = r - alpha * B mod q_i.
struct SkEpi {
  u64* out;
  u64 x_msk;
  std::size_t n;
  const Modulus* msk_q;
  const u64* b_mod_q;
  const u64* b_mod_q_shoup;
  u64 b_inv_msk, b_inv_msk_shoup;
  u64 alpha = 0;
  bool negative = false;
  VEIL_HD void operator()(std::size_t j, u64 r, u64, u64) {
    const u64 m = msk_q[j].value;
    if (j == 0) {
      const u64 a = mul_shoup(r + m - x_msk, b_inv_msk, b_inv_msk_shoup, m);
      negative = a > (m >> 1);
      alpha = negative ? m - a : a;  // |alpha|
      return;
    }
    const std::size_t i = j - 1;
    const u64 ab = mul_shoup(alpha, b_mod_q[i], b_mod_q_shoup[i], m);
    out[i * n] = negative ? add_mod(r, ab, m) : sub_mod(r, ab, m);
  }
};

/// Decryption epilogue (SEAL decrypt_scale_and_round): limb 0 is t, limb 1 is gamma; both are
/// multiplied by -Q^-1, then the centered gamma residue is subtracted and the result divided by
/// gamma mod t.
struct DecryptEpi {
  u64* out;
  Modulus t, gamma;
  u64 neg_inv_q_t, neg_inv_q_gamma, gamma_inv_t;
  u64 a = 0;
  VEIL_HD void operator()(std::size_t j, u64 r, u64, u64) {
    if (j == 0) {
      a = mul_mod(r, neg_inv_q_t, t);
      return;
    }
    const u64 g = mul_mod(r, neg_inv_q_gamma, gamma);
    u64 res = g > (gamma.value >> 1) ? add_mod(a, reduce_word(gamma.value - g, t), t.value)
                                     : sub_mod(a, reduce_word(g, t), t.value);
    *out = mul_mod(res, gamma_inv_t, t);
  }
};

}  // namespace rns_detail

void BehzTools::fastbconv_m_tilde(const Device& dev, const u64* in, u64* out, std::size_t n,
                                  std::size_t num_polys) const {
  using namespace rns_detail;
  VEIL_REQUIRE(q_.size() > 0, "BehzTools::fastbconv_m_tilde: object is default-constructed");
  const ConvView cv = make_view(dev, q_to_bsk_mtilde_, q_, bsk_mtilde_);
  const std::size_t kf = cv.kf, kt = cv.kt;
  Buffer<u64> scratch = partial_scratch<u64>(dev, kf, kt, n, num_polys);
  u64* part = scratch.data();
  for_each(dev, num_polys * n, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t p = idx / n, c = idx % n;
    StoreEpi<u64> epi{out + p * kt * n + c, n};
    convert_coeff(cv, in + p * kf * n + c, part ? part + p * kt * n + c : nullptr, n, epi);
  });
}

void BehzTools::sm_mrq(const Device& dev, const u64* in, u64* out, std::size_t n,
                       std::size_t num_polys) const {
  VEIL_REQUIRE(q_.size() > 0, "BehzTools::sm_mrq: object is default-constructed");
  const std::size_t kb = bsk_.size();
  const Modulus* bm = bsk_.moduli(dev);
  const u64* qb = q_mod_bsk_.data(dev);
  const u64* qb_sh = q_mod_bsk_shoup_.data(dev);
  const u64* mi = mtilde_inv_bsk_.data(dev);
  const u64* mi_sh = mtilde_inv_bsk_shoup_.data(dev);
  const u64 neg_inv_q = neg_inv_q_mod_mtilde_;
  for_each(dev, num_polys * n, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t p = idx / n, c = idx % n;
    const u64* x = in + p * (kb + 1) * n + c;
    u64* y = out + p * kb * n + c;
    // r = [-x_mtilde Q^-1]_{m_tilde} with m_tilde = 2^32, centered in [-2^31, 2^31).
    const u64 r = (x[kb * n] * neg_inv_q) & 0xFFFFFFFFull;
    const bool negative = r >= (u64(1) << 31);
    const u64 mag = negative ? (u64(1) << 32) - r : r;
    for (std::size_t j = 0; j < kb; ++j) {
      const u64 b = bm[j].value;
      const u64 qr = mul_shoup(mag, qb[j], qb_sh[j], b);
      const u64 s = negative ? sub_mod(x[j * n], qr, b) : add_mod(x[j * n], qr, b);
      y[j * n] = mul_shoup(s, mi[j], mi_sh[j], b);
    }
  });
}

void BehzTools::fast_floor(const Device& dev, const u64* in, u64* out, std::size_t n,
                           std::size_t num_polys) const {
  using namespace rns_detail;
  VEIL_REQUIRE(q_.size() > 0, "BehzTools::fast_floor: object is default-constructed");
  const ConvView cv = make_view(dev, q_to_bsk_, q_, bsk_);
  const std::size_t kq = cv.kf, kb = cv.kt;
  const Modulus* bm = cv.to;
  const u64* qi = q_inv_bsk_.data(dev);
  const u64* qi_sh = q_inv_bsk_shoup_.data(dev);
  Buffer<u64> scratch = partial_scratch<u64>(dev, kq, kb, n, num_polys);
  u64* part = scratch.data();
  for_each(dev, num_polys * n, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t p = idx / n, c = idx % n;
    const u64* x = in + p * (kq + kb) * n + c;
    FloorEpi epi{out + p * kb * n + c, x + kq * n, n, bm, qi, qi_sh};
    convert_coeff(cv, x, part ? part + p * kb * n + c : nullptr, n, epi);
  });
}

void BehzTools::fastbconv_sk(const Device& dev, const u64* in, u64* out, std::size_t n,
                             std::size_t num_polys) const {
  using namespace rns_detail;
  VEIL_REQUIRE(q_.size() > 0, "BehzTools::fastbconv_sk: object is default-constructed");
  const ConvView cv = make_view(dev, b_to_msk_q_, b_, msk_q_);
  const std::size_t kb = cv.kf, kt = cv.kt, kq = kt - 1;
  const Modulus* mq = cv.to;
  const u64* bq = b_mod_q_.data(dev);
  const u64* bq_sh = b_mod_q_shoup_.data(dev);
  const u64 binv = b_inv_msk_, binv_sh = b_inv_msk_shoup_;
  Buffer<u64> scratch = partial_scratch<u64>(dev, kb, kt, n, num_polys);
  u64* part = scratch.data();
  for_each(dev, num_polys * n, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t p = idx / n, c = idx % n;
    const u64* x = in + p * (kb + 1) * n + c;
    SkEpi epi{out + p * kq * n + c, x[kb * n], n, mq, bq, bq_sh, binv, binv_sh};
    convert_coeff(cv, x, part ? part + p * kt * n + c : nullptr, n, epi);
  });
}

void BehzTools::decrypt_scale_and_round(const Device& dev, const u64* in, u64* out,
                                        std::size_t n) const {
  using namespace rns_detail;
  VEIL_REQUIRE(q_.size() > 0,
               "BehzTools::decrypt_scale_and_round: object is default-constructed");
  const ConvView cv = make_view(dev, q_to_t_gamma_, q_, t_gamma_);
  const Modulus tm = t_gamma_[0], gm = t_gamma_[1];
  const u64 nt = neg_inv_q_mod_t_, ng = neg_inv_q_mod_gamma_, gi = gamma_inv_mod_t_;
  Buffer<u64> scratch = partial_scratch<u64>(dev, cv.kf, cv.kt, n, 1);
  u64* part = scratch.data();
  for_each(dev, n, VEIL_LAMBDA(std::size_t c) {
    DecryptEpi epi{out + c, tm, gm, nt, ng, gi};
    convert_coeff(cv, in + c, part ? part + c : nullptr, n, epi);
  });
}

}  // namespace veil
