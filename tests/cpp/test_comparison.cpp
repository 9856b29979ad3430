// Non-polynomial functions on CKKS (circuits/comparison.h, circuits/inverse.h)
// on the CPU at N = 4096 (security off: mechanics, not parameters). Oracles are
// float64 and independent of the code under test: f_n from its defining sum
// (Cheon et al., Asiacrypt 2020, §3.1) rather than its expanded coefficients,
// g_n from the paper's table, std::sqrt / division for the rest. Precision is
// absolute error in bits, printed as "[ precision ]". A GPU test checks that
// sign on the CUDA backend gives the CPU's words (skipped without a CUDA
// device).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <vector>

#include "ckks_util.h"
#include "veil/circuits/comparison.h"
#include "veil/circuits/inverse.h"

namespace {

using namespace veil;
using namespace veil::circuits;
using namespace veil::test;

const double k2_40 = std::ldexp(1.0, 40);

ContextPtr long_chain(std::size_t levels) {
  EncryptionParameters p(SchemeType::ckks);
  p.poly_modulus_degree = 4096;
  std::vector<int> bits{60};
  for (std::size_t i = 0; i < levels; ++i)
    bits.push_back(40);
  bits.push_back(60);
  p.coeff_modulus = CoeffModulus::create(4096, bits);
  p.special_primes = 1;
  return Context::create(p, SecurityLevel::none);
}

/// f_n(x) = sum_{i=0}^{n} binom(2i, i) / 4^i x (1 - x^2)^i, from the
/// definition.
double f_def(std::size_t n, double x) {
  double sum = 0, w = 1, p = 1; // w = binom(2i, i) / 4^i, p = (1 - x^2)^i
  for (std::size_t i = 0; i <= n; ++i) {
    sum += w * x * p;
    w *=
        static_cast<double>((2 * i + 1) * (2 * i + 2)) / static_cast<double>((i + 1) * (i + 1)) / 4;
    p *= 1 - x * x;
  }
  return sum;
}

/// g_n as printed in Cheon et al. 2020 (§3.5), coefficients over 2^10.
double g_table(std::size_t n, double x) {
  static const std::vector<std::vector<double>> t{{2126, -1359},
                                                  {3334, -6108, 3796},
                                                  {4589, -16577, 25614, -12860},
                                                  {5850, -34974, 97015, -113492, 46623}};
  double y = 0, xp = x;
  for (double c : t[n - 1]) {
    y += c / 1024 * xp;
    xp *= x * x;
  }
  return y;
}

/// -log2 of the largest |got - want| over the slots where mask holds.
double bits_where(const CVec& want, const CVec& got, const std::vector<bool>& mask) {
  double e = 0;
  for (std::size_t i = 0; i < want.size(); ++i) {
    if (mask[i])
      e = std::max(e, std::abs(want[i] - got[i]));
  }
  return e == 0 ? 99 : -std::log2(e);
}

CVec uniform(std::size_t n, double lo, double hi, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(lo, hi);
  CVec v(n);
  for (auto& x : v)
    x = u(rng);
  return v;
}

// ---- the scalar maps
// ----------------------------------------------------------------------------

TEST(CircuitsSign, CoefficientsAreThePapers) {
  const auto f3 = sign_f_coefficients(3);
  const std::vector<double> want{0, 35.0 / 16, 0, -35.0 / 16, 0, 21.0 / 16, 0, -5.0 / 16};
  ASSERT_EQ(f3.size(), want.size());
  for (std::size_t i = 0; i < want.size(); ++i)
    EXPECT_DOUBLE_EQ(f3[i], want[i]) << i;
  for (std::size_t n = 1; n <= 4; ++n) {
    const auto f = sign_f_coefficients(n), g = sign_g_coefficients(n);
    for (double x = -1; x <= 1; x += 1.0 / 64) {
      double fx = 0, gx = 0;
      for (std::size_t i = f.size(); i-- > 0;)
        fx = fx * x + f[i];
      for (std::size_t i = g.size(); i-- > 0;)
        gx = gx * x + g[i];
      EXPECT_NEAR(fx, f_def(n, x), 1e-13) << "n " << n << " x " << x;
      EXPECT_NEAR(gx, g_table(n, x), 1e-13) << "n " << n << " x " << x;
    }
  }
}

TEST(CircuitsSign, ScalarCompositeReachesThePlannedPrecision) {
  for (double eps : {0x1p-4, 0x1p-6, 0x1p-8, 0x1p-10}) {
    for (int bits : {8, 12, 16, 20}) {
      const SignPlan plan = plan_sign(eps, bits);
      // the grid of the oracle: 2^15 geometric and 2^15 uniform points of [eps,
      // 1]
      double worst = 0;
      const int m = 1 << 15;
      for (int i = 0; i <= m; ++i) {
        for (double x : {eps * std::pow(1 / eps, double(i) / m), eps + (1 - eps) * i / m}) {
          double y = x;
          for (std::size_t k = 0; k < plan.g_stages; ++k)
            y = g_table(plan.n, y);
          for (std::size_t k = 0; k < plan.f_stages; ++k)
            y = f_def(plan.n, y);
          worst = std::max(worst, std::abs(1 - y));
          EXPECT_NEAR(plan.scalar(-x), -y, 1e-12); // odd
        }
      }
      const double got = -std::log2(worst);
      std::printf("[ precision ] scalar sign eps 2^%g, %d bits: d_g %zu, d_f "
                  "%zu, depth %zu: "
                  "%.2f bits\n",
                  std::log2(eps), bits, plan.g_stages, plan.f_stages, plan.depth(), got);
      EXPECT_GE(got, bits + 0.9) << "eps " << eps << " bits " << bits; // one spare bit
      // the smallest: one stage fewer (either kind) misses the target
      if (plan.f_stages > 0) {
        SignPlan less = plan;
        --less.f_stages;
        double w = 0;
        for (int i = 0; i <= m; ++i)
          w = std::max(w, 1 - less.scalar(eps + (1 - eps) * i / m));
        w = std::max(w, 1 - less.scalar(eps));
        EXPECT_GT(w, std::ldexp(1.0, -(bits + 1)));
      }
    }
  }
  const SignPlan p = plan_sign(0x1p-8, 12);
  EXPECT_EQ(p.g_stages, 3u);
  EXPECT_EQ(p.f_stages, 3u);
  EXPECT_EQ(p.depth(), 18u);
}

TEST(CircuitsInverse, ScalarPlansReachThePrecision) {
  for (auto [a, b] : {std::pair{0x1p-6, 1.0}, std::pair{0.25, 4.0}, std::pair{0x1p-10, 1.0}}) {
    for (int bits : {8, 12, 20}) {
      const InversePlan ip = plan_inverse(a, b, bits);
      const InvSqrtPlan sp = plan_inv_sqrt(a, b, bits), qp = plan_inv_sqrt(a, b, bits, true);
      double ei = 0, es = 0, eq = 0;
      for (int i = 0; i <= 1 << 14; ++i) {
        for (double x : {a * std::pow(b / a, i / 16384.0), a + (b - a) * i / 16384.0}) {
          ei = std::max(ei, std::abs(ip.scalar(x) - 1 / x));
          es = std::max(es, std::abs(sp.scalar(x) - 1 / std::sqrt(x)));
          eq = std::max(eq, std::abs(qp.scalar(x) - std::sqrt(x)));
        }
      }
      std::printf("[ precision ] scalar [%g, %g] %d bits: inverse d %zu (depth "
                  "%zu) %.2f, "
                  "inv_sqrt deg %zu + %zu steps (depth %zu) %.2f, sqrt (depth "
                  "%zu) %.2f bits\n",
                  a, b, bits, ip.iterations, ip.depth(), -std::log2(ei), sp.initial_degree,
                  sp.newton_steps, sp.depth(), -std::log2(es), qp.depth(), -std::log2(eq));
      EXPECT_GE(-std::log2(ei), bits + 0.9);
      EXPECT_GE(-std::log2(es), bits + 0.9);
      EXPECT_GE(-std::log2(eq), bits + 0.9);
    }
  }
}

// ---- on ciphertexts
// -----------------------------------------------------------------------------

struct Fixture {
  ContextPtr ctx = long_chain(20);
  CkksKeys k{ctx, Device::cpu(), 11};
};

Fixture& fixture() {
  static Fixture f;
  return f;
}

TEST(CircuitsSign, SignAndReluMatchFloat64) {
  auto& [ctx, k] = fixture();
  ComparisonEvaluator ce(ctx);
  const SignPlan plan = plan_sign(0x1p-8, 12);
  CVec x = uniform(2048, -1, 1, 5);
  x[0] = 0x1p-8; // the edges of the domain
  x[1] = -0x1p-8;
  x[2] = 1;
  x[3] = -1;
  x[4] = 0;
  const Ciphertext ct = k.encrypt(x, k2_40, ctx->max_level());
  const Ciphertext s = ce.sign(ct, k.rk, plan);
  EXPECT_EQ(s.level(), ctx->max_level() - plan.depth());
  EXPECT_DOUBLE_EQ(s.scale(), ct.scale());
  std::vector<bool> away(x.size());
  CVec want(x.size()), want_relu(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    away[i] = std::abs(x[i].real()) >= 0x1p-8;
    want[i] = x[i].real() > 0 ? 1.0 : (x[i].real() < 0 ? -1.0 : 0.0);
    want_relu[i] = std::max(x[i].real(), 0.0);
  }
  const CVec got = k.decrypt(s);
  const double sb = bits_where(want, got, away);
  for (std::size_t i = 0; i < x.size(); ++i) {
    EXPECT_LE(std::abs(got[i].real()), 1 + 0x1p-12) << i; // inside (-eps, eps) too
  }
  const Ciphertext r = ce.relu(ct, k.rk, plan);
  EXPECT_EQ(r.level(), ctx->max_level() - plan.depth() - 1);
  EXPECT_DOUBLE_EQ(r.scale(), ct.scale());
  const CVec gr = k.decrypt(r);
  const double rb = bits_where(want_relu, gr, away);
  const double rall = bits_where(want_relu, gr, std::vector<bool>(x.size(), true));
  std::printf("[ precision ] sign eps 2^-8, 12 bits (depth %zu): %.2f bits for "
              "|x| >= eps; "
              "relu: %.2f bits for |x| >= eps, %.2f bits on [-1, 1]\n",
              plan.depth(), sb, rb, rall);
  EXPECT_GE(sb, 12);
  EXPECT_GE(rb, 12);
  EXPECT_GE(rall, 9); // inside: error <= eps / 2 = 2^-9
}

TEST(CircuitsSign, CompareMaxMinMatchFloat64) {
  auto& [ctx, k] = fixture();
  ComparisonEvaluator ce(ctx);
  const SignPlan plan = plan_sign(0x1p-6, 12);
  const CVec a = uniform(2048, -0.5, 0.5, 6), b = uniform(2048, -0.5, 0.5, 7);
  const Ciphertext ca = k.encrypt(a, k2_40, ctx->max_level());
  // b one level lower: the operands are brought to one level
  const Ciphertext cb =
      k.ev.mod_switch_to(k.encrypt(b, k2_40, ctx->max_level()), ctx->max_level() - 1);
  std::vector<bool> away(a.size()), all(a.size(), true);
  CVec wc(a.size()), wmax(a.size()), wmin(a.size());
  for (std::size_t i = 0; i < a.size(); ++i) {
    const double p = a[i].real(), q = b[i].real();
    away[i] = std::abs(p - q) >= 0x1p-6;
    wc[i] = p > q ? 1.0 : (p < q ? 0.0 : 0.5);
    wmax[i] = std::max(p, q);
    wmin[i] = std::min(p, q);
  }
  const double cbits = bits_where(wc, k.decrypt(ce.compare(ca, cb, k.rk, plan)), away);
  const Ciphertext mx = ce.maximum(ca, cb, k.rk, plan);
  EXPECT_EQ(mx.level(), ctx->max_level() - 1 - plan.depth() - 1);
  const CVec gmax = k.decrypt(mx), gmin = k.decrypt(ce.minimum(ca, cb, k.rk, plan));
  const double maxb = bits_where(wmax, gmax, away), minb = bits_where(wmin, gmin, away);
  const double maxall = bits_where(wmax, gmax, all), minall = bits_where(wmin, gmin, all);
  std::printf("[ precision ] eps 2^-6, 12 bits (depth %zu): compare %.2f, max "
              "%.2f (%.2f on "
              "all), min %.2f (%.2f on all) bits\n",
              plan.depth(), cbits, maxb, maxall, minb, minall);
  EXPECT_GE(cbits, 12);
  EXPECT_GE(maxb, 12);
  EXPECT_GE(minb, 12);
  EXPECT_GE(maxall, 7); // |a - b| < eps: error <= eps / 2 = 2^-7
  EXPECT_GE(minall, 7);
}

TEST(CircuitsInverse, InverseSqrtInvSqrtMatchFloat64) {
  auto& [ctx, k] = fixture();
  InverseEvaluator ie(ctx);
  const double a = 0x1p-6, b = 1.0;
  CVec x = uniform(2048, a, b, 8);
  x[0] = a;
  x[1] = b;
  const Ciphertext ct = k.encrypt(x, k2_40, ctx->max_level());
  CVec wi(x.size()), ws(x.size()), wq(x.size());
  for (std::size_t i = 0; i < x.size(); ++i) {
    wi[i] = 1 / x[i].real();
    ws[i] = 1 / std::sqrt(x[i].real());
    wq[i] = std::sqrt(x[i].real());
  }
  const std::vector<bool> all(x.size(), true);
  const InversePlan ip = plan_inverse(a, b, 12);
  const Ciphertext inv = ie.inverse(ct, k.rk, ip);
  EXPECT_EQ(inv.level(), ctx->max_level() - ip.depth());
  EXPECT_DOUBLE_EQ(inv.scale(), ct.scale());
  const InvSqrtPlan sp = plan_inv_sqrt(a, b, 12), qp = plan_inv_sqrt(a, b, 12, true);
  const Ciphertext is = ie.inv_sqrt(ct, k.rk, sp), sq = ie.sqrt(ct, k.rk, qp);
  EXPECT_EQ(is.level(), ctx->max_level() - sp.depth());
  EXPECT_EQ(sq.level(), ctx->max_level() - qp.depth());
  EXPECT_DOUBLE_EQ(sq.scale(), ct.scale());
  const double ib = bits_where(wi, k.decrypt(inv), all);
  const double sb = bits_where(ws, k.decrypt(is), all);
  const double qb = bits_where(wq, k.decrypt(sq), all);
  std::printf("[ precision ] [2^-6, 1], 12 bits: inverse (depth %zu) %.2f, "
              "inv_sqrt (depth %zu) "
              "%.2f, sqrt (depth %zu) %.2f bits\n",
              ip.depth(), ib, sp.depth(), sb, qp.depth(), qb);
  EXPECT_GE(ib, 12);
  EXPECT_GE(sb, 12);
  EXPECT_GE(qb, 12);
}

TEST(CircuitsSign, ErrorsNameTheArgument) {
  using veil::test::expect_invalid;
  expect_invalid([] { plan_sign(0.0, 12); }, "epsilon");
  expect_invalid([] { plan_sign(1.0, 12); }, "epsilon");
  expect_invalid([] { plan_sign(NAN, 12); }, "epsilon");
  expect_invalid([] { plan_sign(0.01, 0); }, "bits");
  expect_invalid([] { plan_sign(0.01, 31); }, "bits");
  expect_invalid([] { plan_sign(0.01, 12, 5); }, "n:");
  expect_invalid([] { sign_f_coefficients(0); }, "n:");
  expect_invalid([] { plan_inverse(0.0, 1.0, 12); }, "interval");
  expect_invalid([] { plan_inverse(1.0, 0.5, 12); }, "interval");
  expect_invalid([] { plan_inverse(0.5, 1.0, 40); }, "bits");
  expect_invalid([] { plan_inv_sqrt(-1.0, 1.0, 12); }, "interval");
  expect_invalid([] { plan_inv_sqrt(0.5, 1.0, 0); }, "bits");
  auto& [ctx, k] = fixture();
  ComparisonEvaluator ce(ctx);
  InverseEvaluator ie(ctx);
  const Ciphertext ct = k.encrypt(uniform(8, 0.1, 0.9, 9), k2_40, ctx->max_level());
  const Ciphertext low = k.ev.mod_switch_to(ct, 10);
  expect_invalid([&] { ce.sign(low, k.rk, plan_sign(0x1p-8, 12)); },
                 "ct: sign needs 18 rescale levels but the ciphertext (level "
                 "10) has 10 left");
  expect_invalid([&] { ce.relu(low, k.rk, plan_sign(0x1p-8, 12)); }, "ct: relu needs 19");
  expect_invalid([&] { ie.inverse(k.ev.mod_switch_to(ct, 3), k.rk, plan_inverse(0x1p-6, 1, 12)); },
                 "ct: inverse needs 10 rescale levels");
  expect_invalid([&] { ie.sqrt(ct, k.rk, plan_inv_sqrt(0.1, 1, 12)); }, "plan");
  Ciphertext other_scale = ct;
  other_scale.set_scale(k2_40 * 2);
  expect_invalid([&] { ce.maximum(ct, other_scale, k.rk, plan_sign(0x1p-4, 8)); }, "b: scale");
  expect_invalid([&] { ce.sign(Ciphertext(), k.rk, plan_sign(0x1p-4, 8)); }, "ct: is empty");
  EXPECT_THROW(ComparisonEvaluator(veil::test::small_context(SchemeType::bfv)), InvalidArgument);
}

// ---- GPU parity
// ----------------------------------------------------------------------------------

TEST(CircuitsSignGpu, SignMatchesTheCpuWordForWord) {
  if (!veil::test::have_gpu())
    GTEST_SKIP() << "no CUDA device";
  ContextPtr ctx = long_chain(16);
  const SignPlan plan = plan_sign(0x1p-6, 12);
  std::vector<std::uint64_t> words[2];
  CVec got[2];
  for (int d = 0; d < 2; ++d) {
    const Device dev = d ? veil::test::gpu() : Device::cpu();
    CkksKeys k(ctx, dev, 29);
    ComparisonEvaluator ce(ctx);
    const Ciphertext ct = k.encrypt(uniform(2048, -1, 1, 3), k2_40, ctx->max_level());
    const Ciphertext s = ce.sign(ct, k.rk, plan);
    words[d] = veil::test::words(s);
    got[d] = k.decrypt(s);
  }
  EXPECT_EQ(words[0], words[1]);
  double e = 0;
  for (std::size_t i = 0; i < got[0].size(); ++i)
    e = std::max(e, std::abs(got[0][i] - got[1][i]));
  EXPECT_LE(e, 0x1p-20);
}

} // namespace
