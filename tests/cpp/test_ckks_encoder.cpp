// CKKSEncoder against oracles written here, independent of the encoder's FFT:
//  - round trips of random complex vectors (precision reported in bits);
//  - a direct O(N^2) evaluation of the encoded polynomial at zeta^(3^j) in long double
//    (the canonical embedding of CKKS 2017 §3.1 with SEAL's slot order), with the coefficients
//    recovered from the plaintext by the (separately tested) inverse NTT and an exact CRT here;
//  - slot-wise products (NTT-form pointwise product) and rotations / conjugation (Galois
//    automorphisms 3^k and 2N - 1 on NTT-form data);
//  - scales above 2^63 (coefficients reduced exactly through the IEEE-754 fields);
//  - every error case, and CPU vs CUDA bit-identity (skipped without a GPU).
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "veil/backend/device.h"
#include "veil/ckks/encoder.h"
#include "veil/core/error.h"
#include "veil/ring/ntt.h"
#include "veil/ring/poly_ops.h"
#include "veil/rlwe/context.h"
#include "veil/rlwe/params.h"

namespace {

using veil::CKKSEncoder;
using veil::CoeffModulus;
using veil::ContextPtr;
using veil::Device;
using veil::Plaintext;
using cd = std::complex<double>;
using u64 = std::uint64_t;
using u128 = unsigned __int128;
using i128 = __int128;
using CVec = std::vector<cd>;

ContextPtr make_ctx(std::size_t n, const std::vector<int>& bits) {
  veil::EncryptionParameters p(veil::SchemeType::ckks);
  p.poly_modulus_degree = n;
  p.coeff_modulus = CoeffModulus::create(n, bits);
  p.special_primes = 1;
  return veil::Context::create(p, veil::SecurityLevel::none);
}

CVec random_complex(std::size_t count, std::uint32_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> r01(0.0, 1.0), ang(0.0, 2.0 * M_PI);
  CVec v(count);
  for (auto& z : v) z = std::polar(r01(rng), ang(rng));  // |z| <= 1
  return v;
}

double max_abs_err(const CVec& a, const CVec& b) {
  double e = 0.0;
  for (std::size_t i = 0; i < a.size(); ++i) e = std::max(e, std::abs(a[i] - b[i]));
  return e;
}

double bits_of(double err) { return err > 0 ? -std::log2(err) : 1100.0; }

u64 pow_mod_u(u64 b, u64 e, u64 q) {
  u64 r = 1 % q;
  b %= q;
  while (e) {
    if (e & 1) r = static_cast<u64>(static_cast<u128>(r) * b % q);
    b = static_cast<u64>(static_cast<u128>(b) * b % q);
    e >>= 1;
  }
  return r;
}

/// Coefficient-form residues [level+1][N] of a plaintext (NTT form undone on the CPU).
std::vector<u64> coefficients(const Plaintext& pt) {
  const auto& ctx = pt.context();
  Plaintext c = pt.to(Device::cpu());
  veil::ntt_inverse(Device::cpu(), c.data(), 1, ctx->base_q(pt.level()), ctx->ntt());
  return c.buffer().to_host();
}

/// Signed coefficients from limbs 0 and 1 by CRT in 128 bits (|x| < q0*q1/2), and a check that
/// every other limb holds the same integer's residue.
std::vector<i128> signed_coefficients(const Plaintext& pt) {
  const auto& ctx = pt.context();
  const std::size_t n = ctx->n(), limbs = pt.level() + 1;
  const std::vector<u64> w = coefficients(pt);
  std::vector<i128> out(n);
  const auto& base = ctx->base_q(pt.level());
  const u64 q0 = base[0].value;
  for (std::size_t k = 0; k < n; ++k) {
    i128 x;
    if (limbs == 1) {
      x = w[k] > q0 / 2 ? i128(w[k]) - i128(q0) : i128(w[k]);
    } else {
      const u64 q1 = base[1].value;
      const u64 inv = pow_mod_u(q0 % q1, q1 - 2, q1);  // q1 prime
      const u64 d = (w[n + k] + q1 - w[k] % q1) % q1;
      const u64 v2 = static_cast<u64>(static_cast<u128>(d) * inv % q1);
      const u128 big = static_cast<u128>(v2) * q0 + w[k];
      const u128 qq = static_cast<u128>(q0) * q1;
      x = big > qq / 2 ? i128(big) - i128(qq) : i128(big);
    }
    out[k] = x;
    for (std::size_t l = 0; l < limbs; ++l) {
      const u64 q = base[l].value;
      i128 r = x % i128(q);
      if (r < 0) r += q;
      if (static_cast<u64>(r) != w[l * n + k]) {
        ADD_FAILURE() << "limb " << l << " coefficient " << k << " is not the residue of "
                      << static_cast<double>(x);
        return out;
      }
    }
  }
  return out;
}

/// The O(N^2) oracle: slot j = m(zeta^(3^j mod 2N)) / scale, zeta = exp(i pi / N), long double.
std::vector<std::complex<long double>> evaluate_slots(const std::vector<i128>& m, long double scale,
                                                      const std::vector<std::size_t>& slots) {
  const std::size_t n = m.size(), two_n = 2 * n;
  const long double pi = 3.141592653589793238462643383279502884L;
  std::vector<long double> cs(two_n), sn(two_n);
  for (std::size_t k = 0; k < two_n; ++k) {
    cs[k] = std::cos(pi * static_cast<long double>(k) / static_cast<long double>(n));
    sn[k] = std::sin(pi * static_cast<long double>(k) / static_cast<long double>(n));
  }
  std::vector<long double> mf(n);
  for (std::size_t k = 0; k < n; ++k) mf[k] = static_cast<long double>(m[k]);
  std::vector<std::complex<long double>> out;
  for (std::size_t j : slots) {
    const u64 e = pow_mod_u(3, j, two_n);
    long double re = 0, im = 0;
    for (std::size_t k = 0; k < n; ++k) {
      const std::size_t idx = (e * k) % two_n;
      re += mf[k] * cs[idx];
      im += mf[k] * sn[idx];
    }
    out.emplace_back(re / scale, im / scale);
  }
  return out;
}

template <class F>
void expect_invalid(F&& f, const std::string& arg) {
  try {
    f();
    ADD_FAILURE() << "expected InvalidArgument naming " << arg;
  } catch (const veil::InvalidArgument& e) {
    EXPECT_EQ(std::string(e.what()).rfind(arg + ":", 0), 0u) << e.what();
  }
}

// ---- (1) round trip --------------------------------------------------------------------------

TEST(CkksEncoder, RoundTripRandomComplex) {
  for (std::size_t n : {4096u, 8192u, 16384u, 32768u}) {
    auto ctx = make_ctx(n, {60, 40, 40, 60});
    CKKSEncoder enc(ctx);
    ASSERT_EQ(enc.slot_count(), n / 2);
    const CVec z = random_complex(n / 2, 7u + n);
    for (std::size_t level : {std::size_t(0), ctx->max_level()}) {
      const Plaintext pt = enc.encode(z, std::ldexp(1.0, 40), level, Device::cpu());
      EXPECT_EQ(pt.level(), level);
      EXPECT_TRUE(pt.is_ntt_form());
      EXPECT_EQ(pt.scale(), std::ldexp(1.0, 40));
      EXPECT_EQ(pt.word_count(), (level + 1) * n);
      const CVec back = enc.decode(pt);
      ASSERT_EQ(back.size(), n / 2);
      const double err = max_abs_err(z, back);
      std::printf("  [ckks] N=%zu level=%zu scale=2^40: max error 2^-%.1f\n", n, level,
                  bits_of(err));
      EXPECT_LT(err, std::ldexp(1.0, -25));
    }
  }
}

TEST(CkksEncoder, PartialVectorZeroPads) {
  auto ctx = make_ctx(4096, {60, 40, 40, 60});
  CKKSEncoder enc(ctx);
  const CVec z = random_complex(100, 3);
  const CVec back = enc.decode(enc.encode(z, std::ldexp(1.0, 40), 1, Device::cpu()));
  for (std::size_t j = 0; j < back.size(); ++j) {
    const cd want = j < z.size() ? z[j] : cd(0, 0);
    EXPECT_LT(std::abs(back[j] - want), 1e-8) << j;
  }
  const CVec zero = enc.decode(enc.encode(CVec{}, std::ldexp(1.0, 40), 0, Device::cpu()));
  for (const cd& v : zero) EXPECT_EQ(v, cd(0, 0));
}

// ---- (2) direct evaluation oracle -----------------------------------------------------------

TEST(CkksEncoder, MatchesDirectEvaluation) {
  for (std::size_t n : {4096u, 8192u}) {
    auto ctx = make_ctx(n, {60, 40, 40, 60});
    CKKSEncoder enc(ctx);
    const CVec z = random_complex(n / 2, 11u + n);
    const double scale = std::ldexp(1.0, 40);
    const Plaintext pt = enc.encode(z, scale, ctx->max_level(), Device::cpu());
    const std::vector<i128> m = signed_coefficients(pt);
    std::vector<std::size_t> slots;
    for (std::size_t j = 0; j < n / 2; j += (n == 4096 ? 1 : 7)) slots.push_back(j);
    const auto vals = evaluate_slots(m, scale, slots);
    double err = 0;
    for (std::size_t i = 0; i < slots.size(); ++i) {
      const std::complex<long double> d = vals[i] - std::complex<long double>(z[slots[i]]);
      err = std::max(err, static_cast<double>(std::abs(d)));
    }
    std::printf("  [ckks] N=%zu direct evaluation vs input: max error 2^-%.1f\n", n,
                bits_of(err));
    EXPECT_LT(err, 1e-6);
  }
}

// ---- (3) real inputs ------------------------------------------------------------------------

TEST(CkksEncoder, RealInputsDecodeReal) {
  auto ctx = make_ctx(8192, {60, 40, 40, 60});
  CKKSEncoder enc(ctx);
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1.0, 1.0);
  std::vector<double> x(4096);
  for (auto& v : x) v = u(rng);
  const Plaintext pt = enc.encode(x, std::ldexp(1.0, 40), 2, Device::cpu());
  const CVec back = enc.decode(pt);
  double err_re = 0, err_im = 0;
  for (std::size_t j = 0; j < x.size(); ++j) {
    err_re = std::max(err_re, std::abs(back[j].real() - x[j]));
    err_im = std::max(err_im, std::abs(back[j].imag()));
  }
  std::printf("  [ckks] real input: real error 2^-%.1f, imaginary part 2^-%.1f\n",
              bits_of(err_re), bits_of(err_im));
  EXPECT_LT(err_re, std::ldexp(1.0, -25));
  EXPECT_LT(err_im, std::ldexp(1.0, -25));
  // Oracle: the polynomial takes real values at zeta^(3^j) (and so conjugate-symmetric ones).
  const auto vals = evaluate_slots(signed_coefficients(pt), std::ldexp(1.0L, 40), {0, 1, 2, 77});
  for (const auto& v : vals) EXPECT_LT(std::abs(static_cast<double>(v.imag())), 1e-6);
}

// ---- (4) slot-wise product --------------------------------------------------------------------

TEST(CkksEncoder, PointwiseProductMultipliesSlots) {
  auto ctx = make_ctx(8192, {60, 50, 50, 60});
  CKKSEncoder enc(ctx);
  const std::size_t level = ctx->max_level();
  const double s = std::ldexp(1.0, 30);
  const CVec z1 = random_complex(4096, 21), z2 = random_complex(4096, 22);
  const Plaintext p1 = enc.encode(z1, s, level, Device::cpu());
  const Plaintext p2 = enc.encode(z2, s, level, Device::cpu());
  Plaintext prod = p1;
  veil::poly::multiply(Device::cpu(), ctx->base_q(level), ctx->n(), 1, p1.data(), p2.data(),
                       prod.data());
  prod.set_scale(s * s);
  const CVec back = enc.decode(prod);
  CVec want(z1.size());
  for (std::size_t j = 0; j < z1.size(); ++j) want[j] = z1[j] * z2[j];
  const double err = max_abs_err(want, back);
  std::printf("  [ckks] product at scale 2^30 * 2^30: max error 2^-%.1f\n", bits_of(err));
  EXPECT_LT(err, std::ldexp(1.0, -18));
}

// ---- (5) rotations and conjugation --------------------------------------------------------------

TEST(CkksEncoder, GaloisAutomorphismsRotateAndConjugate) {
  const std::size_t n = 4096, half = n / 2;
  auto ctx = make_ctx(n, {60, 40, 40, 60});
  CKKSEncoder enc(ctx);
  const std::size_t level = 1;
  const CVec z = random_complex(half, 31);
  const Plaintext pt = enc.encode(z, std::ldexp(1.0, 40), level, Device::cpu());
  auto apply = [&](std::uint32_t g) {
    Plaintext out = pt;
    veil::poly::automorphism_ntt(Device::cpu(), ctx->base_q(level), n, 1, g, pt.data(),
                                 out.data());
    return enc.decode(out);
  };
  for (std::size_t k : {std::size_t(1), std::size_t(2), std::size_t(5), half - 1}) {
    const auto g = static_cast<std::uint32_t>(pow_mod_u(3, k, 2 * n));
    const CVec back = apply(g);
    CVec want(half);
    for (std::size_t j = 0; j < half; ++j) want[j] = z[(j + k) % half];
    EXPECT_LT(max_abs_err(want, back), 1e-8) << "rotation by " << k;
  }
  const CVec conj = apply(static_cast<std::uint32_t>(2 * n - 1));
  CVec want(half);
  for (std::size_t j = 0; j < half; ++j) want[j] = std::conj(z[j]);
  EXPECT_LT(max_abs_err(want, conj), 1e-8);
}

// ---- (6) scales above 2^63 --------------------------------------------------------------------

TEST(CkksEncoder, LargeScaleRoundTrip) {
  auto ctx = make_ctx(8192, {60, 60, 60, 60});
  CKKSEncoder enc(ctx);
  const double scale = std::ldexp(1.0, 80);
  const CVec z = random_complex(4096, 41);
  const Plaintext pt = enc.encode(z, scale, ctx->max_level(), Device::cpu());
  const double err = max_abs_err(z, enc.decode(pt));
  std::printf("  [ckks] scale 2^80: max error 2^-%.1f\n", bits_of(err));
  EXPECT_LT(err, std::ldexp(1.0, -40));
}

TEST(CkksEncoder, LargeScaleCoefficientsAreExact) {
  // Coefficients of ~2^74..2^80 reconstructed by CRT here; every limb must hold their residue
  // (signed_coefficients checks), and they must evaluate to the input (direct oracle).
  const std::size_t n = 4096;
  auto ctx = make_ctx(n, {60, 60, 60, 60});
  CKKSEncoder enc(ctx);
  const double scale = std::ldexp(1.0, 80);
  const CVec z = random_complex(n / 2, 43);
  const Plaintext pt = enc.encode(z, scale, 2, Device::cpu());
  const std::vector<i128> m = signed_coefficients(pt);
  std::size_t above = 0;
  for (i128 c : m) above += (c >= (i128(1) << 63) || c <= -(i128(1) << 63)) ? 1 : 0;
  EXPECT_GT(above, n / 2) << "expected most coefficients above 2^63";
  const auto vals = evaluate_slots(m, std::ldexp(1.0L, 80), {0, 1, 100, 2047});
  const std::vector<std::size_t> idx{0, 1, 100, 2047};
  for (std::size_t i = 0; i < idx.size(); ++i) {
    EXPECT_LT(std::abs(static_cast<double>(std::abs(vals[i] - std::complex<long double>(
                  z[idx[i]])))), 1e-6);
  }
}

TEST(CkksEncoder, ConstantEncoding) {
  const std::size_t n = 4096;
  auto ctx = make_ctx(n, {60, 60, 60, 60});
  CKKSEncoder enc(ctx);
  // Real constant at scale 2^80: the constant polynomial 3 * 2^78, in every NTT position.
  const Plaintext pt = enc.encode(cd(0.75, 0.0), std::ldexp(1.0, 80), 2, Device::cpu());
  const std::vector<u64> w = pt.buffer().to_host();
  for (std::size_t l = 0; l < 3; ++l) {
    const u64 q = ctx->base_q(2)[l].value;
    const u64 want = static_cast<u64>(static_cast<u128>(3) * pow_mod_u(2, 78, q) % q);
    for (std::size_t k = 0; k < n; ++k) ASSERT_EQ(w[l * n + k], want) << l << " " << k;
  }
  for (const cd& v : enc.decode(pt)) EXPECT_LT(std::abs(v - cd(0.75, 0)), 1e-15);
  // Negative real and complex constants.
  for (const cd c : {cd(-1.25, 0.0), cd(0.5, -0.25)}) {
    const CVec back = enc.decode(enc.encode(c, std::ldexp(1.0, 40), 1, Device::cpu()));
    for (const cd& v : back) EXPECT_LT(std::abs(v - c), 1e-9);
  }
}

// ---- (7) errors -------------------------------------------------------------------------------

TEST(CkksEncoder, Errors) {
  veil::EncryptionParameters bp(veil::SchemeType::bfv);
  bp.poly_modulus_degree = 4096;
  bp.coeff_modulus = CoeffModulus::create(4096, {40, 40, 40});
  bp.plain_modulus = 65537;
  auto bfv = veil::Context::create(bp, veil::SecurityLevel::none);
  expect_invalid([&] { CKKSEncoder e(bfv); }, "context");

  auto ctx = make_ctx(4096, {60, 40, 40, 60});
  CKKSEncoder enc(ctx);
  const double s = std::ldexp(1.0, 40);
  const Device cpu = Device::cpu();
  expect_invalid([&] { enc.encode(CVec(2049), s, 0, cpu); }, "values");
  expect_invalid([&] { enc.encode(std::vector<double>(2049), s, 0, cpu); }, "values");
  expect_invalid([&] { enc.encode(CVec(4), s, 3, cpu); }, "level");
  expect_invalid([&] { enc.encode(cd(1, 0), s, 3, cpu); }, "level");
  for (double bad : {0.0, -1.0, std::nan(""), double(INFINITY)}) {
    expect_invalid([&] { enc.encode(CVec(4), bad, 0, cpu); }, "scale");
    expect_invalid([&] { enc.encode(cd(1, 1), bad, 0, cpu); }, "scale");
  }
  expect_invalid([&] { enc.encode(CVec{cd(1, 0), cd(std::nan(""), 0)}, s, 0, cpu); }, "values");
  expect_invalid([&] { enc.encode(CVec{cd(0, INFINITY)}, s, 0, cpu); }, "values");
  expect_invalid([&] { enc.encode(std::vector<double>{-INFINITY}, s, 0, cpu); }, "values");
  expect_invalid([&] { enc.encode(cd(std::nan(""), 0), s, 0, cpu); }, "value");
  // Too large: 2^30 * 2^40 needs ~71 bits at level 0 (one 60-bit prime).
  try {
    enc.encode(CVec(2048, cd(std::ldexp(1.0, 30), 0)), s, 0, cpu);
    ADD_FAILURE() << "expected InvalidArgument";
  } catch (const veil::InvalidArgument& e) {
    const std::string msg = e.what();
    EXPECT_NE(msg.find("values: the scaled input needs"), std::string::npos) << msg;
    EXPECT_NE(msg.find("bits but Q at level 0 has"), std::string::npos) << msg;
  }
  // ... but fits at the top level (140 bits).
  EXPECT_NO_THROW(enc.encode(CVec(2048, cd(std::ldexp(1.0, 30), 0)), s, 2, cpu));
  expect_invalid([&] { enc.encode(cd(std::ldexp(1.0, 30), 0), s, 0, cpu); }, "value");
  expect_invalid([&] { enc.encode(cd(1e300, 1), 1e300, 2, cpu); }, "scale");  // scale above Q_2
  expect_invalid([&] { enc.encode(cd(1e300, 1), 1e10, 2, cpu); }, "value");  // overflows double
  // decode
  expect_invalid([&] { enc.decode(Plaintext()); }, "plain");
  auto other = make_ctx(4096, {60, 40, 60});
  CKKSEncoder enc2(other);
  expect_invalid([&] { enc.decode(enc2.encode(CVec(4), s, 0, cpu)); }, "plain");
  Plaintext odd(ctx, cpu, 4096, 1, true);  // level 1 needs 2 * N words
  odd.set_scale(s);
  expect_invalid([&] { enc.decode(odd); }, "plain");
  Plaintext zero_scale = enc.encode(CVec(4), s, 0, cpu);
  zero_scale.set_scale(0.0);
  expect_invalid([&] { enc.decode(zero_scale); }, "plain");
}

// ---- (8) CUDA parity --------------------------------------------------------------------------

TEST(CkksEncoderCuda, EncodeDecodeBitIdenticalToCpu) {
  if (veil::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const Device gpu = Device::parse("cuda:0");
  // 1024 and 4096: every FFT stage in the GPU's fused chunk kernel (N/2 <= its 2048-value chunk);
  // 8192 and 32768: the large-gap stages one kernel each, then the fused ones.
  for (std::size_t n : {1024u, 4096u, 8192u, 32768u}) {
    auto ctx = make_ctx(n, {60, 40, 40, 60});
    CKKSEncoder enc(ctx);
    const CVec z = random_complex(n / 2, 51);
    for (double scale : {std::ldexp(1.0, 40), std::ldexp(1.0, 100)}) {
      // 2^100 (coefficients above 2^63) fits the 140-bit top level.
      const std::size_t level = ctx->max_level();
      const Plaintext pc = enc.encode(z, scale, level, Device::cpu());
      const Plaintext pg = enc.encode(z, scale, level, gpu);
      // The real-valued overload from host memory (the bindings' path) matches the general one.
      std::vector<double> re(z.size());
      for (std::size_t j = 0; j < z.size(); ++j) re[j] = z[j].real();
      EXPECT_EQ(enc.encode(re.data(), re.size(), scale, level, gpu).buffer().to_host(),
                enc.encode(std::vector<std::complex<double>>(re.begin(), re.end()), scale, level,
                           Device::cpu()).buffer().to_host()) << "N=" << n;
      EXPECT_EQ(pg.device(), gpu);
      EXPECT_EQ(pc.buffer().to_host(), pg.buffer().to_host()) << "N=" << n;
      const CVec dc = enc.decode(pc), dg = enc.decode(pg);
      EXPECT_EQ(dc, dg) << "N=" << n;
      // Cross-device: decode the GPU plaintext moved to the CPU and vice versa.
      EXPECT_EQ(enc.decode(pg.to(Device::cpu())), dc);
      EXPECT_EQ(enc.decode(pc.to(gpu)), dc);
    }
    const Plaintext kc = enc.encode(cd(0.5, 0.25), std::ldexp(1.0, 40), 1, Device::cpu());
    const Plaintext kg = enc.encode(cd(0.5, 0.25), std::ldexp(1.0, 40), 1, gpu);
    EXPECT_EQ(kc.buffer().to_host(), kg.buffer().to_host());
  }
}

}  // namespace
