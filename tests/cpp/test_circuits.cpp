// The circuits layer, circuit by circuit, on the CPU at small N (security off: mechanics, not
// parameters): polynomial evaluation against the same polynomial in float64 on the decrypted
// input, linear transforms against the plaintext matrix product, the special FFT's factors
// against the dense matrix of its definition, CoeffToSlot/SlotToCoeff round trips against the
// identity, and EvalMod against sin(2 pi K1 x). Precision is printed in bits ("[ precision ]").
// GPU parity (word for word) runs when a CUDA device is visible and is skipped otherwise.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <numbers>
#include <vector>

#include "ckks_util.h"
#include "veil/circuits/dft.h"
#include "veil/circuits/evalmod.h"
#include "veil/circuits/linear_transform.h"
#include "veil/circuits/numeric.h"
#include "veil/circuits/polynomial.h"
#include "veil/circuits/scale_ops.h"

namespace {

using namespace veil;
using namespace veil::circuits;
using namespace veil::test;

const double k2_40 = std::ldexp(1.0, 40);

ContextPtr chain_context(std::size_t n, const std::vector<int>& bits, std::size_t special = 1,
                         std::vector<std::size_t> groups = {}) {
  EncryptionParameters p(SchemeType::ckks);
  p.poly_modulus_degree = n;
  p.coeff_modulus = CoeffModulus::create(n, bits);
  p.special_primes = special;
  p.rescale_groups = std::move(groups);
  return Context::create(p, SecurityLevel::none);
}

/// sum_i c_i T_i(z) by Clenshaw's recurrence (complex z).
cd chebyshev_value(const std::vector<double>& c, cd z) {
  cd b1 = 0, b2 = 0;
  for (std::size_t i = c.size(); i-- > 1;) {
    const cd b0 = 2.0 * z * b1 - b2 + c[i];
    b2 = b1;
    b1 = b0;
  }
  return z * b1 - b2 + c[0];
}

// ---- helpers of exact arithmetic ---------------------------------------------------------------

TEST(CircuitsNumeric, ExactProductRoundsOnceToNearestEven) {
  using detail_fn = double (*)(const std::vector<std::uint64_t>&);
  detail_fn f = &veil::circuits::detail::exact_product;
  EXPECT_EQ(f({3, 5}), 15.0);
  // 2^53 + 1 is a tie between 2^53 and 2^53 + 2: even mantissa wins.
  EXPECT_EQ(f({(1ull << 53) + 1}), std::ldexp(1.0, 53));
  EXPECT_EQ(f({(1ull << 53) + 3}), std::ldexp(1.0, 53) + 4);
  // (2^60 - 1)^2 = 2^120 - 2^61 + 1 rounds to 2^120 (sequential double products would too here,
  // but a three-factor product shows the single rounding).
  const std::uint64_t q = (1ull << 60) - 1;
  EXPECT_EQ(f({q, q}), std::ldexp(1.0, 120));
  const double seq = static_cast<double>(q) * static_cast<double>(q) * static_cast<double>(q);
  const double once = f({q, q, q});
  EXPECT_NEAR(once, seq, seq * 1e-15);
}

TEST(CircuitsPolynomial, PowerToChebyshevMatchesNumpyExamples) {
  // numpy.polynomial.chebyshev.poly2cheb(range(4)) = [1, 3.25, 1, 0.75]
  EXPECT_EQ(power_to_chebyshev({0, 1, 2, 3}), (std::vector<double>{1.0, 3.25, 1.0, 0.75}));
  EXPECT_EQ(power_to_chebyshev({2, 0, 0}), (std::vector<double>{2.0}));
  EXPECT_THROW(power_to_chebyshev({}), InvalidArgument);
  EXPECT_THROW(power_to_chebyshev({1.0, NAN}), InvalidArgument);
}

TEST(CircuitsPolynomial, InterpolantReproducesTheFunction) {
  const auto c = chebyshev_interpolate([](double x) { return std::exp(x); }, 20);
  ASSERT_EQ(c.size(), 21u);
  for (double x = -1; x <= 1; x += 0.125)
    EXPECT_NEAR(chebyshev_value(c, x).real(), std::exp(x), 1e-14);
  veil::test::expect_invalid([] { chebyshev_interpolate([](double) { return 0.0; }, 0); },
                             "degree");
  veil::test::expect_invalid([] { chebyshev_interpolate([](double) { return NAN; }, 3); }, "f:");
}

// ---- polynomial evaluation ---------------------------------------------------------------------

struct PolyCase {
  const char* name;
  std::vector<int> bits;
  std::vector<std::size_t> groups;
  double min_bits;  // the worst slot's precision required (the Python oracle gets the same)
};

class CircuitsPolynomialEval : public ::testing::TestWithParam<PolyCase> {};

TEST_P(CircuitsPolynomialEval, MatchesFloat64OnTheDecryptedInput) {
  const PolyCase& pc = GetParam();
  ContextPtr ctx = chain_context(4096, pc.bits, 1, pc.groups);
  CkksKeys k(ctx, Device::cpu(), 7);
  PolynomialEvaluator pe(ctx);
  const CVec x = random_values(2048, 1, 1.0, false);
  const Ciphertext ct = k.encrypt(x, k2_40, ctx->max_level());
  const CVec xd = k.decrypt(ct);
  const RescaleChain& chain = pe.chain();
  for (std::size_t degree : {2u, 5u, 7u, 8u, 15u, 27u, 31u}) {
    std::vector<double> c(degree + 1);
    for (std::size_t i = 0; i <= degree; ++i) c[i] = std::cos(1.0 + 0.7 * i) / (1.0 + i);
    const Ciphertext y = pe.evaluate_chebyshev(ct, c, k.rk);
    EXPECT_DOUBLE_EQ(y.scale(), ct.scale());  // the input's scale, exactly (up to its rounding)
    EXPECT_EQ(y.level(), pe.plan_level(ctx->max_level(), ct.scale(), c));
    // the depth Bossuat et al. count: ceil(log2(d + 1)) blocks, no extra level for the leaves
    std::size_t depth = 0, want_level = chain.top_at_or_below(ct.level());
    while ((std::size_t{1} << depth) < degree + 1) ++depth;
    for (std::size_t s = 0; s < depth; ++s) want_level = chain.below(want_level);
    EXPECT_EQ(y.level(), want_level) << "degree " << degree;
    CVec want(xd.size());
    for (std::size_t i = 0; i < xd.size(); ++i) want[i] = chebyshev_value(c, xd[i]);
    const auto p = precision(want, k.decrypt(y));
    std::printf(
        "[ precision ] %s, Chebyshev degree %zu (level %zu -> %zu): min %.2f, mean %.2f bits\n",
        pc.name, degree, ct.level(), y.level(), p.min_bits, p.mean_bits);
    EXPECT_GT(p.min_bits, degree <= 2 ? 20 : pc.min_bits);
  }
  // power basis and another domain
  const std::vector<double> pw{0.5, -1.0, 0.25, 2.0};
  const Ciphertext y = pe.evaluate_power(ct, pw, k.rk);
  CVec want(xd.size());
  for (std::size_t i = 0; i < xd.size(); ++i)
    want[i] = 0.5 - xd[i] + 0.25 * xd[i] * xd[i] + 2.0 * xd[i] * xd[i] * xd[i];
  auto p = precision(want, k.decrypt(y));
  report("power basis 0.5 - x + x^2/4 + 2x^3", p);
  EXPECT_GT(p.min_bits, 20);
  // With one-prime blocks at the top the domain map lands on a scale below 1 in the Python
  // oracle too (veil._tensor.cheb_eval raises the same error): only the 64-bit chain maps.
  if (!pc.groups.empty()) return;
  const auto tanh_c = chebyshev_interpolate([](double t) { return std::tanh(2.0 * t); }, 15);
  const Ciphertext z = pe.evaluate_chebyshev(ct, tanh_c, k.rk, -1.5, 2.5);
  for (std::size_t i = 0; i < xd.size(); ++i)
    want[i] = chebyshev_value(tanh_c, (2.0 * xd[i] - 1.0) / 4.0);
  p = precision(want, k.decrypt(z));
  report("domain [-1.5, 2.5]", p);
  EXPECT_GT(p.min_bits, 20);
}

INSTANTIATE_TEST_SUITE_P(
    Chains, CircuitsPolynomialEval,
    ::testing::Values(PolyCase{"64-bit words", {60, 40, 40, 40, 40, 40, 40, 40, 40, 60}, {}, 20},
                      // blocks of 1 and 2 ~30-bit primes (32-bit words): scales 2^40 <-> 2^50;
                      // the leaves' multipliers keep fewer bits there, in the Python oracle
                      // too (about 12 bits at degree 31 in ceil(log2(d + 1)) levels)
                      PolyCase{
                          "32-bit words",
                          {30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 30, 31, 31},
                          {2, 2, 1, 2, 1, 2, 1, 2, 1, 2, 1},
                          10}),
    [](const auto& info) {
      return std::string(info.param.groups.empty() ? "Words64" : "Words32");
    });

TEST(CircuitsPolynomial, ErrorsNameTheArgument) {
  ContextPtr ctx = chain_context(4096, {60, 40, 40, 60});
  CkksKeys k(ctx, Device::cpu(), 3);
  PolynomialEvaluator pe(ctx);
  const Ciphertext ct = k.encrypt(random_values(8, 2), k2_40, ctx->max_level());
  veil::test::expect_invalid([&] { pe.evaluate_chebyshev(ct, {}, k.rk); }, "coeffs");
  veil::test::expect_invalid([&] { pe.evaluate_chebyshev(ct, {1.0, INFINITY}, k.rk); }, "coeffs");
  veil::test::expect_invalid(
      [&] {
        pe.evaluate_chebyshev(ct, {0, 1, 1, 1, 1, 1, 1, 1}, k.rk);
      },
      "coeffs: a degree-7 polynomial needs at least 3 rescale levels");
  veil::test::expect_invalid([&] { pe.evaluate_chebyshev(ct, {0, 1}, k.rk, 1.0, 1.0); }, "domain");
  const Ciphertext low = k.ev.mod_switch_to(ct, 0);
  veil::test::expect_invalid(
      [&] {
        pe.evaluate_chebyshev(low, {0, 1}, k.rk);
      },
      "coeffs: a degree-1 polynomial needs at least 1 rescale levels");
  EXPECT_THROW(PolynomialEvaluator(
                   Context::create(veil::test::small_params(SchemeType::bfv), SecurityLevel::none)),
               InvalidArgument);
}

// ---- linear transforms -------------------------------------------------------------------------

TEST(CircuitsLinearTransform, BsgsSplitGroupsByGiantStep) {
  std::vector<std::size_t> keys;
  for (std::size_t k = 0; k < 16; ++k) keys.push_back(k);
  if (std::getenv("VEIL_BSGS_BABY_COST") != nullptr)
    GTEST_SKIP() << "VEIL_BSGS_BABY_COST is set: the split below is the default cost's";
  const BsgsSplit s = bsgs_split(keys, 16);
  // 16 signed diagonals -7..8: n1 = 8 costs 7 babies x 0.3 + 2 giants = 4.1, n1 = 4 costs
  // 3 x 0.3 + 4 = 4.9, n1 = 16 costs 15 x 0.3 + 1 = 5.5
  EXPECT_EQ(s.n1, 8u);
  std::size_t count = 0;
  for (const auto& [g, items] : s.giants) {
    EXPECT_EQ(g % 8, 0);
    for (const auto& [b, k] : items) {
      EXPECT_EQ(LinearTransform::signed_step(g + b, 16), LinearTransform::signed_step(k, 16));
      ++count;
    }
  }
  EXPECT_EQ(count, 16u);
  veil::test::expect_invalid([] { bsgs_split({0}, 12); }, "n:");
  veil::test::expect_invalid([] { bsgs_split({}, 16); }, "keys");
}

TEST(CircuitsLinearTransform, MatchesThePlaintextMatrixProduct) {
  // N = 2^11: 1024 slots; n = 64 slots tiled 16 times; two inputs, two outputs.
  ContextPtr ctx = chain_context(2048, {60, 45, 60});
  CkksKeys k(ctx, Device::cpu(), 11);
  CKKSEncoder& enc = k.encoder;
  const std::size_t n = 64;
  auto mat = [&](std::uint64_t seed) {
    Diagonals d(n);
    for (std::size_t key = 0; key < n; key += 1 + (seed % 3))
      d.add(static_cast<long long>(key), random_values(n, seed * 100 + key));
    return d;
  };
  const std::vector<std::vector<Diagonals>> m{{mat(1), mat(2)}, {mat(3), mat(4)}};
  const std::size_t level = 1;
  const double s_in = k2_40, s_out = std::ldexp(1.0, 38);
  LinearTransform lt(enc, m, n, level, s_in, s_out);
  EXPECT_EQ(lt.inputs(), 2u);
  EXPECT_EQ(lt.outputs(), 2u);
  EXPECT_EQ(lt.rotation_steps(), LinearTransform::rotation_steps_of(m, n));
  const GaloisKeys gk = k.galois(lt.rotation_steps());
  const CVec x0 = random_values(n, 21), x1 = random_values(n, 22);
  const Ciphertext c0 = k.encrypt(veil::test::tile(x0, 1024), s_in, level);
  const Ciphertext c1 = k.encrypt(veil::test::tile(x1, 1024), s_in, level);
  const CVec d0 = k.decrypt(c0), d1 = k.decrypt(c1);
  const CVec x0d(d0.begin(), d0.begin() + n), x1d(d1.begin(), d1.begin() + n);
  const std::vector<Ciphertext> out = lt.apply(k.ev, {&c0, &c1}, gk);
  ASSERT_EQ(out.size(), 2u);
  for (std::size_t o = 0; o < 2; ++o) {
    EXPECT_EQ(out[o].level(), 0u);
    EXPECT_NEAR(out[o].scale() / s_out, 1.0, 1e-12);
    const CVec a = m[o][0].apply(x0d), b = m[o][1].apply(x1d);
    CVec want(n);
    for (std::size_t j = 0; j < n; ++j) want[j] = a[j] + b[j];
    const CVec got = k.decrypt(out[o]);
    const auto p = precision(veil::test::tile(want, 1024), got);
    report(o ? "linear transform, output 1" : "linear transform, output 0", p);
    EXPECT_GT(p.min_bits, 17);  // entries |M x| ~ 10 from 64-term sums at scale 2^38
  }
  veil::test::expect_invalid([&] { lt.apply(k.ev, {&c0}, gk); }, "inputs: expected 2");
  veil::test::expect_invalid([&] { LinearTransform(enc, m, 48, level, s_in, s_out); }, "slots");
  veil::test::expect_invalid([&] { LinearTransform(enc, m, n, 0, s_in, s_out); }, "level");
  veil::test::expect_invalid([&] { LinearTransform(enc, {}, n, level, s_in, s_out); }, "matrices");
}

TEST(CircuitsLinearTransform, DenseMatrixFullSlots) {
  ContextPtr ctx = chain_context(2048, {60, 45, 60});
  CkksKeys k(ctx, Device::cpu(), 12);
  const std::size_t n = 1024;
  std::vector<std::vector<cd>> dense(n, std::vector<cd>(n));
  std::mt19937_64 rng(5);
  std::uniform_real_distribution<double> u(-1, 1);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < n; ++c)
      dense[r][c] = ((r * 7 + c * 3) % 97 == 0) ? cd(u(rng), u(rng)) : 0.0;
  }
  const Diagonals d = diagonals_of(dense);
  LinearTransform lt(k.encoder, {{d}}, n, 1, k2_40, k2_40);
  const GaloisKeys gk = k.galois(lt.rotation_steps());
  const Ciphertext ct = k.encrypt(random_values(n, 4), k2_40, 1);
  const CVec xd = k.decrypt(ct);
  CVec want(n, 0.0);
  for (std::size_t r = 0; r < n; ++r) {
    for (std::size_t c = 0; c < n; ++c) want[r] += dense[r][c] * xd[c];
  }
  const auto p = precision(want, k.decrypt(lt.apply(k.ev, {&ct}, gk)[0]));
  report("dense 1024 x 1024 matrix (full slots)", p);
  EXPECT_GT(p.min_bits, 20);
}

// ---- the special FFT and its factored levels
// -----------------------------------------------------

std::vector<std::size_t> bitrev(std::size_t n) {
  const int b = std::countr_zero(n);
  std::vector<std::size_t> r(n);
  for (std::size_t i = 0; i < n; ++i) {
    std::size_t x = 0;
    for (int j = 0; j < b; ++j) x |= ((i >> j) & 1) << (b - 1 - j);
    r[i] = x;
  }
  return r;
}

TEST(CircuitsDft, StagesFactorTheDenseMatrix) {
  for (std::size_t n : {4u, 16u, 64u}) {
    const std::size_t m = 4 * n, g = m - 3;
    const CVec x = random_values(n, n);
    const auto br = bitrev(n);
    CVec y(n);
    for (std::size_t i = 0; i < n; ++i) y[i] = x[br[i]];
    for (const Diagonals& st : special_fft_stages(n)) y = st.apply(y);
    std::size_t gj = 1;  // g^j mod 4n
    for (std::size_t j = 0; j < n; ++j) {
      cd want = 0;
      for (std::size_t c = 0; c < n; ++c) {
        want += std::exp(cd(0, 2 * std::numbers::pi * static_cast<double>(gj * c % m) /
                                   static_cast<double>(m))) *
                x[c];
      }
      EXPECT_LT(std::abs(want - y[j]), 1e-9) << "n=" << n << " j=" << j;
      gj = gj * g % m;
    }
    // the inverse stages, in reverse order, undo them; merged groups equal the stages
    const auto inv = special_ifft_stages(n);
    CVec z = y;
    for (std::size_t s = inv.size(); s-- > 0;) z = inv[s].apply(z);
    for (std::size_t i = 0; i < n; ++i) EXPECT_LT(std::abs(z[i] - x[br[i]]), 1e-9);
    const auto fft = special_fft_stages(n);
    std::vector<std::size_t> all(fft.size());
    for (std::size_t i = 0; i < all.size(); ++i) all[i] = i;
    CVec w(n);
    for (std::size_t i = 0; i < n; ++i) w[i] = x[br[i]];
    const CVec merged = merge_stages(fft, all, n).apply(w);
    for (std::size_t i = 0; i < n; ++i) EXPECT_LT(std::abs(merged[i] - y[i]), 1e-9);
  }
  EXPECT_EQ(split_stages(10, 3),
            (std::vector<std::vector<std::size_t>>{{0, 1, 2, 3}, {4, 5, 6}, {7, 8, 9}}));
  veil::test::expect_invalid([] { special_fft_stages(6); }, "n:");
}

/// Runs CoeffToSlot and SlotToCoeff levels (constant c = 1) in either order on one context and
/// checks that the slots come back.
void round_trip(bool cts_first, std::size_t slots, std::size_t levels) {
  const std::size_t N = 2048;
  std::vector<int> bits{60};
  bits.insert(bits.end(), 2 * levels, 50);
  bits.push_back(60);
  ContextPtr ctx = chain_context(N, bits);
  CkksKeys k(ctx, Device::cpu(), 17);
  const std::size_t top = ctx->max_level(), mid = top - levels;
  const auto cts = coeff_to_slot_levels(slots, levels, cts_first ? top : mid, 1.0, *ctx);
  const auto stc = slot_to_coeff_levels(slots, levels, cts_first ? mid : top, *ctx);
  RescaleChain chain(ctx);
  auto encode = [&](const std::vector<DftLevel>& lv) {
    std::vector<double> d;
    for (const auto& l : lv) d.push_back(chain.block_product(l.level));
    const auto s = shared_precision_scales(lv, d, k2_40, k2_40);
    std::vector<LinearTransform> out;
    for (std::size_t i = 0; i < lv.size(); ++i)
      out.emplace_back(k.encoder, lv[i].matrices, slots, lv[i].level, s[i], s[i + 1]);
    return out;
  };
  const auto cts_lt = encode(cts), stc_lt = encode(stc);
  std::vector<int> steps;
  for (const auto* v : {&cts_lt, &stc_lt}) {
    for (const auto& lt : *v) {
      for (int s : lt.rotation_steps()) steps.push_back(s);
    }
  }
  const GaloisKeys gk = k.galois(steps);
  const CVec z = veil::test::tile(random_values(slots, 30 + slots), N / 2);
  Ciphertext ct = k.encrypt(z, k2_40, top);
  const CVec zd = k.decrypt(ct);
  auto run_cts = [&](const Ciphertext& in) {
    const Ciphertext conj = k.ev.conjugate(in, gk);
    Ciphertext cur = cts_lt[0].apply(k.ev, {&in, &conj}, gk)[0];
    for (std::size_t i = 1; i < cts_lt.size(); ++i) cur = cts_lt[i].apply(k.ev, {&cur}, gk)[0];
    return cur;
  };
  auto run_stc = [&](const Ciphertext& in) {
    Ciphertext cur = in;
    for (std::size_t i = 0; i + 1 < stc_lt.size(); ++i) cur = stc_lt[i].apply(k.ev, {&cur}, gk)[0];
    auto ab = stc_lt.back().apply(k.ev, {&cur}, gk);
    return k.ev.add(ab[0], k.ev.conjugate(ab[1], gk));
  };
  const Ciphertext out = cts_first ? run_stc(run_cts(ct)) : run_cts(run_stc(ct));
  EXPECT_EQ(out.level(), 0u);
  const auto p = precision(zd, k.decrypt(out));
  std::printf("[ precision ] %s round trip, %zu slots, %zu levels each: min %.2f, mean %.2f bits\n",
              cts_first ? "CoeffToSlot -> SlotToCoeff" : "SlotToCoeff -> CoeffToSlot", slots,
              levels, p.min_bits, p.mean_bits);
  EXPECT_GT(p.min_bits, 20);
}

TEST(CircuitsDft, CoeffToSlotThenSlotToCoeffIsTheIdentity) {
  round_trip(true, 1024, 3);
  round_trip(true, 64, 2);
}

TEST(CircuitsDft, SlotToCoeffThenCoeffToSlotIsTheIdentity) {
  round_trip(false, 1024, 3);
  round_trip(false, 32, 1);
}

TEST(CircuitsDft, PackedLastLevelWritesTheLowerHalfOfEvery2nSlots) {
  // lower_half_of_2n(M) on [x, x] (period n) is [M x, 0], for every CoeffToSlot level matrix
  // (the dense oracle: Diagonals::apply in double); the packed levels keep the rotation steps.
  const std::size_t n = 64;
  ContextPtr ctx = chain_context(2048, {60, 50, 50, 50, 60});
  const auto plain = coeff_to_slot_levels(n, 2, ctx->max_level(), 0.5, *ctx);
  const auto packed = coeff_to_slot_levels(n, 2, ctx->max_level(), 0.5, *ctx, true);
  ASSERT_EQ(packed.size(), plain.size());
  EXPECT_EQ(packed.front().slots, 0u);
  EXPECT_EQ(packed.back().slots, 2 * n);
  const CVec x = random_values(n, 5);
  CVec xx = x;
  xx.insert(xx.end(), x.begin(), x.end());
  for (std::size_t in = 0; in < plain.back().matrices[0].size(); ++in) {
    const Diagonals& m = plain.back().matrices[0][in];
    const Diagonals& m2 = packed.back().matrices[0][in];
    EXPECT_EQ(m2.size(), m.size());
    const CVec want = m.apply(x), got = m2.apply(xx);
    for (std::size_t j = 0; j < n; ++j) {
      EXPECT_LT(std::abs(got[j] - want[j]), 1e-12);
      EXPECT_EQ(got[j + n], std::complex<double>(0.0, 0.0));
    }
  }
  EXPECT_EQ(LinearTransform::rotation_steps_of(packed.back().matrices, 2 * n),
            LinearTransform::rotation_steps_of(plain.back().matrices, n));
  veil::test::expect_invalid(
      [&] { coeff_to_slot_levels(1024, 2, ctx->max_level(), 0.5, *ctx, true); }, "n:");
}

TEST(CircuitsDft, LevelsCheckTheirArguments) {
  ContextPtr ctx = chain_context(2048, {60, 50, 50, 60});
  veil::test::expect_invalid([&] { coeff_to_slot_levels(1024, 3, 2, 1.0, *ctx); },
                             "top_level: 3 transform levels need as many rescale blocks");
  veil::test::expect_invalid([&] { coeff_to_slot_levels(1024, 1, 7, 1.0, *ctx); },
                             "top_level: 7 is above the top level 2");
  veil::test::expect_invalid([&] { coeff_to_slot_levels(1024, 1, 2, NAN, *ctx); }, "c:");
  veil::test::expect_invalid([&] { slot_to_coeff_levels(1000, 1, 2, *ctx); }, "n:");
  veil::test::expect_invalid([&] { slot_to_coeff_levels(1024, 0, 2, *ctx); }, "levels");
  const auto lv = slot_to_coeff_levels(1024, 2, 2, *ctx);
  ASSERT_EQ(lv.size(), 2u);
  EXPECT_EQ(lv[0].level, 2u);
  EXPECT_EQ(lv[1].level, 1u);
  EXPECT_EQ(lv[1].matrices.size(), 2u);  // the last level's two masked outputs
  veil::test::expect_invalid([&] { shared_precision_scales(lv, {1.0}, 1.0, 1.0); }, "levels");
  veil::test::expect_invalid([&] { shared_precision_scales(lv, {1.0, 1.0}, 0.0, 1.0); }, "s_first");
}

// ---- exact scale management
// ----------------------------------------------------------------------

TEST(CircuitsScaleOps, PlansLevelsAndScalesAndChecksOperands) {
  // 32-bit-style blocks {2, 1, 2}: tops 1, 2, 4
  ContextPtr ctx = chain_context(4096, {30, 30, 30, 30, 30, 31}, 1, {2, 1, 2});
  RescaleChain chain(ctx);
  EXPECT_EQ(chain.tops(), (std::vector<std::size_t>{1, 2, 4}));
  EXPECT_EQ(chain.above(2), 4u);
  EXPECT_EQ(chain.above(1), 2u);
  veil::test::expect_invalid([&] { chain.above(3); }, "level: 3 is not a rescale target");
  veil::test::expect_invalid([&] { chain.block_product(1); }, "level: 1 has no rescale block");
  const double d4 =
      static_cast<double>(ctx->base_q(4)[3].value) * static_cast<double>(ctx->base_q(4)[4].value);
  EXPECT_NEAR(chain.block_product(4) / d4, 1.0, 1e-15);
  ScaleOps plan(chain);
  const double s = std::ldexp(1.0, 40);
  const OperandPtr x = plan.fresh(4, s);
  const OperandPtr sq = plan.square(x);
  EXPECT_EQ(sq->level, 2u);
  EXPECT_EQ(sq->scale, s * s / chain.block_product(4));
  const OperandPtr c = plan.const_to(x, 0.5, 2, sq->scale);
  EXPECT_EQ(plan.add(sq, c)->scale, sq->scale);
  veil::test::expect_invalid([&] { plan.add(sq, plan.fresh(2, s)); }, "misaligned");
  veil::test::expect_invalid([&] { plan.linear_to({}, 0.0, 2, s); }, "terms");
  veil::test::expect_invalid([&] { plan.const_to(sq, 1.0, 2, s); },
                             "coeffs: no level left for a constant product");
  veil::test::expect_invalid([&] { plan.mul(x, nullptr); }, "b: is empty");
  veil::test::expect_invalid([&] { plan.wrap(Ciphertext()); }, "ct:");
}

TEST(CircuitsScaleOps, MulSumRelinearizesTheSumOfProductsOnce) {
  ContextPtr ctx = chain_context(4096, {60, 40, 40, 60});
  CkksKeys k(ctx, Device::cpu(), 5);
  RescaleChain chain(ctx);
  ScaleOps ops(chain, k.ev, k.rk);
  const std::size_t top = ctx->max_level();
  const double s = k2_40, d = chain.block_product(top), out = s * s / d;
  const CVec a = random_values(2048, 1, 1.0, false), b = random_values(2048, 2, 1.0, false),
             c = random_values(2048, 3, 1.0, false);
  const OperandPtr ea = ops.wrap(k.encrypt(a, s, top)), eb = ops.wrap(k.encrypt(b, s, top)),
                   ec = ops.wrap(k.encrypt(c, s, top));
  const OperandPtr y = ops.mul_sum({{ea, eb}, {ec, ec}, {ea, ec}}, chain.below(top), out);
  EXPECT_EQ(y->level, chain.below(top));
  EXPECT_EQ(y->ct->size(), 2u);  // relinearized
  CVec want(a.size());  // a b + c^2 + a c, on the decrypted inputs
  const CVec da = k.decrypt(*ea->ct), db = k.decrypt(*eb->ct), dc = k.decrypt(*ec->ct);
  for (std::size_t i = 0; i < want.size(); ++i)
    want[i] = da[i] * db[i] + dc[i] * dc[i] + da[i] * dc[i];
  const auto p = precision(want, k.decrypt(*y->ct));
  report("mul_sum a b + c^2 + a c", p);
  EXPECT_GT(p.min_bits, 20);
  // one pair is mul() word for word
  const OperandPtr one = ops.mul_sum({{ea, eb}}, chain.below(top), out);
  const OperandPtr ref = ops.mul(ea, eb);
  EXPECT_EQ(veil::test::words(*one->ct), veil::test::words(*ref->ct));
  ScaleOps plan(chain);
  const OperandPtr x = plan.fresh(top, s);
  veil::test::expect_invalid([&] { plan.mul_sum({}, chain.below(top), out); }, "pairs: expected");
  veil::test::expect_invalid([&] { plan.mul_sum({{x, x}}, chain.below(top), out * 2); },
                             "pairs: a scale product");
  const OperandPtr low = plan.fresh(chain.below(top), s);
  veil::test::expect_invalid([&] { plan.mul_sum({{x, low}}, chain.below(top), out); },
                             "pairs: an operand lies below");
}

// ---- EvalMod
// -------------------------------------------------------------------------------------

TEST(CircuitsEvalMod, ApproximatesTheScaledSine) {
  const EvalMod em(12, 31, 3);
  EXPECT_EQ(em.depth(), 8u);  // ceil(log2 32) + 3
  // The bootstrapping chain's bottom: q_0 (55 bits), one 40-bit level, EvalMod's eight 60-bit
  // levels; the output scale is q_0 / (2 pi) as bootstrapping's Delta gamma.
  std::vector<int> bits{55, 40};
  bits.insert(bits.end(), 8, 60);
  bits.insert(bits.end(), 2, 60);
  ContextPtr ctx = chain_context(4096, bits, 2);
  CkksKeys k(ctx, Device::cpu(), 19);
  RescaleChain chain(ctx);
  const std::size_t top = ctx->max_level();
  const double in_scale = chain.block_product(top);
  const double q0 = static_cast<double>(ctx->base_q(0)[0].value);
  const double out_scale = q0 / (2 * std::numbers::pi);
  const auto [lvl, sc] = em.plan(chain, top, in_scale, out_scale);
  EXPECT_EQ(lvl, 1u);
  EXPECT_NEAR(sc / out_scale, 1.0, 1e-14);  // lands on it (up to the rounding of sqrt)
  // inputs x = (I + e) / K1: near the integers (as after ModRaise) and anywhere in [-1, 1]
  CVec x(2048);
  std::mt19937_64 rng(3);
  std::uniform_int_distribution<int> ii(-12, 12);
  std::uniform_real_distribution<double> e(-1e-3, 1e-3), u(-1, 1);
  for (std::size_t i = 0; i < x.size(); ++i) x[i] = i % 2 ? (ii(rng) + e(rng)) / 13.0 : u(rng);
  const Ciphertext ct = k.encrypt(x, in_scale, top);
  const CVec xd = k.decrypt(ct);
  const Ciphertext y = em.evaluate(k.ev, k.rk, chain, ct, out_scale);
  EXPECT_EQ(y.level(), 1u);
  EXPECT_NEAR(y.scale() / out_scale, 1.0, 1e-12);
  CVec want(xd.size());
  for (std::size_t i = 0; i < xd.size(); ++i)
    want[i] = std::sin(2 * std::numbers::pi * 13.0 * xd[i].real());
  const CVec got = k.decrypt(y);
  CVec got_re(got.size());
  for (std::size_t i = 0; i < got.size(); ++i) got_re[i] = got[i].real();
  const auto p = precision(want, got_re);
  report("EvalMod sin(2 pi 13 x), degree 31, 3 double angles", p);
  EXPECT_GT(p.min_bits, 14);
  // The even form: P(T_2(y - 1/(4 K1))) equals the interpolant in y over bootstrapping's
  // |y| <= (K + 1/2) / K1, both near cos(2 pi (K1 y - 1/4) / 8) (evaluated here in double).
  ASSERT_EQ(em.even_coefficients().size(), 16u);
  auto cheb = [](const std::vector<double>& c, double t) {
    double sum = 0, prev = 1, cur = t;
    for (std::size_t k = 0; k < c.size(); ++k) {
      const double tk = k == 0 ? 1.0 : (k == 1 ? t : 2 * t * cur - prev);
      if (k >= 2) {
        prev = cur;
        cur = tk;
      }
      sum += c[k] * tk;
    }
    return sum;
  };
  double worst = 0;
  for (int i = -1000; i <= 1000; ++i) {
    const double yv = 12.5 / 13.0 * i / 1000.0, v = yv - 0.25 / 13.0;
    const double want_cos = std::cos(2 * std::numbers::pi * (13.0 * yv - 0.25) / 8.0);
    const double even = cheb(em.even_coefficients(), 2 * v * v - 1);
    const double in_y = cheb(em.coefficients(), yv);
    worst = std::max({worst, std::fabs(even - want_cos), std::fabs(even - in_y)});
  }
  EXPECT_LT(worst, 1e-9) << "even form against cos and the interpolant in y";
  veil::test::expect_invalid([] { EvalMod(0, 31, 3); }, "k_range");
  veil::test::expect_invalid([] { EvalMod(12, 1, 3); }, "degree");
  veil::test::expect_invalid([] { EvalMod(12, 31, 17); }, "double_angle");
  veil::test::expect_invalid(
      [&] { em.evaluate(k.ev, k.rk, chain, k.ev.mod_switch_to(ct, 5), out_scale); },
      "ct: EvalMod needs 8 rescale blocks below level 5");
}

// ---- GPU parity
// ----------------------------------------------------------------------------------

TEST(CircuitsGpu, PolynomialAndTransformsMatchTheCpuWordForWord) {
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  ContextPtr ctx = chain_context(4096, {60, 40, 40, 40, 40, 40, 40, 60});
  std::vector<std::vector<std::uint64_t>> words[2];
  for (int d = 0; d < 2; ++d) {
    const Device dev = d ? veil::test::gpu() : Device::cpu();
    CkksKeys k(ctx, dev, 23);
    PolynomialEvaluator pe(ctx);
    const Ciphertext ct = k.encrypt(random_values(2048, 9, 1.0, false), k2_40, ctx->max_level());
    words[d].push_back(veil::test::words(
        pe.evaluate_chebyshev(ct, {0.1, 0.5, -0.25, 0.125, 0.3, 0.2, -0.1, 0.05}, k.rk)));
    const auto stc = slot_to_coeff_levels(2048, 2, ctx->max_level(), *ctx);
    LinearTransform lt(k.encoder, stc[0].matrices, 2048, ctx->max_level(), k2_40, k2_40, dev);
    const GaloisKeys gk = k.galois(lt.rotation_steps());
    words[d].push_back(veil::test::words(lt.apply(k.ev, {&ct}, gk)[0]));
  }
  ASSERT_EQ(words[0].size(), words[1].size());
  for (std::size_t i = 0; i < words[0].size(); ++i)
    EXPECT_EQ(words[0][i], words[1][i]) << "result " << i;
}

}  // namespace
