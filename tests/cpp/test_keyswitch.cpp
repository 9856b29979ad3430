// Hybrid key switching (Han-Ki 2020; Phantom, Yang et al. 2024 §III-C) for every alpha (primes per
// digit) in {1, 2, 3, 6} and k (special primes) in {1, 2, 6}, for CKKS and BGV: relinearization and
// rotations at the top level and at lower levels (after rescale / mod switch, including levels with
// fewer primes than one digit), against oracles computed here (float64 slots for CKKS, arithmetic
// mod t for BGV), with the key-switching error bounded.
//
// Parameters: N = 2^13, Q = 12 x 40-bit primes, P = k x 60-bit primes. The context requires
// P >= every digit D_j (2^(40 alpha) <= 2^(60 k)): (alpha, k) = (2, 1), (3, 1), (6, 1), (6, 2)
// are rejected with InvalidArgument naming special_primes; (3, 2) is the boundary (120 = 120
// bits) and accepted. log2 QP is up to 840 bits, above the 128-bit bound for N = 2^13: the
// contexts are built with SecurityLevel::none (these tests are about correctness, and N = 2^15
// Galois keys would dominate the suite's runtime).
//
// Error measures. CKKS: the key-switching error alone is isolated by comparing with the same
// ciphertext decrypted without switching (size-3 decryption for relinearization; rotating the
// decrypted slots for rotations), in "scaled units" (slot error times the scale, i.e. the error
// polynomial's canonical embedding). Expected: the ModDown rounding r0 + r1 s (~N / 4 rms ~ 2^11),
// sum_j d_j e_j / P with |d_j| < alpha D_j (~N sigma D_j / P rms), and tails at the slots near
// zeta^(+-1) from non-centered terms: the digits (mean ~D_j / 2; see test_ckks.cpp) and the
// ModDown's fast base conversion P -> Q, whose overflow u in [0, k) has mean (k - 1) / 2 (measured
// max: 2^13.6 for k = 1, 2^16.3 for k = 2, 2^19.6..2^20.7 for k = 6 at alpha <= 6, 2^23.2 for
// alpha = 3, k = 2 where D = P). The bounds are in ks_error_bound / fresh_bound below.
// BGV: decryption exact, and the noise budget after a key switch at least that of the input
// minus a few bits (the key-switching noise is t times the CKKS one).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "batch_util.h"
#include "ckks_util.h"
#include "veil/rlwe/keyswitch.h"

namespace {

using namespace veil;
using namespace veil::test;

constexpr std::size_t kN = 8192;
constexpr std::size_t kNumQ = 12;
constexpr int kQBits = 40, kPBits = 60;

struct KsCase {
  SchemeType scheme;
  std::size_t alpha, k;
};
std::string case_name(const KsCase &c) {
  return std::string(c.scheme == SchemeType::ckks ? "ckks" : "bgv") + "_alpha" +
         std::to_string(c.alpha) + "_k" + std::to_string(c.k);
}
void PrintTo(const KsCase &c, std::ostream *os) { *os << case_name(c); }
bool accepted(const KsCase &c) {
  return static_cast<int>(c.alpha) * kQBits <= static_cast<int>(c.k) * kPBits;
}

EncryptionParameters ks_params(const KsCase& c) {
  std::vector<int> bits(kNumQ, kQBits);
  bits.insert(bits.end(), c.k, kPBits);
  return make_params(c.scheme, kN, bits, c.k, c.alpha,
                     c.scheme == SchemeType::bgv ? PlainModulus::batching(kN, 20) : 0);
}

// D / P for the largest key-switching digit D, from the parameters.
double digit_over_p(const veil::Context &ctx) {
  const auto &q = ctx.params().coeff_modulus;
  double log2_p = 0;
  for (std::size_t i = ctx.num_q(); i < q.size(); ++i)
    log2_p += std::log2(static_cast<double>(q[i]));
  double log2_d = 0;
  for (std::size_t first = 0; first < ctx.num_q(); first += ctx.alpha()) {
    double bits = 0;
    for (std::size_t i = first; i < std::min(ctx.num_q(), first + ctx.alpha()); ++i)
      bits += std::log2(static_cast<double>(q[i]));
    log2_d = std::max(log2_d, bits);
  }
  return std::exp2(log2_d - log2_p);
}

// Error bounds in scaled units (max over the slots), from the header comment's model with
// margin (the measured key-switching errors are printed).
// ModDown by P: 2^18 for the rounding r0 + r1 s; (k - 1) * 2^20 for the fast conversion's
// overflow u in [0, k) (an integer per coefficient with mean (k - 1) / 2: at the slots near
// zeta^(+-1) the term u1 s reaches ~0.64 N (k - 1) / 2 |s(zeta)|, and |s(zeta)| varies with the
// key, up to ~4 sqrt(2N/3)).
double mod_down_bound(const veil::Context &ctx) {
  return std::ldexp(1.0, 18) + std::ldexp(1.0, 20) * static_cast<double>(ctx.num_p() - 1);
}
// Key switching: ModDown plus 2^25 * D / P for the digits' term sum_j d_j e_j / P.
double ks_error_bound(const veil::Context &ctx) {
  return mod_down_bound(ctx) + std::ldexp(1.0, 25) * digit_over_p(ctx);
}
// Fresh public-key encryption: the textbook u e + e0 + e1 s has sigma sqrt(N (1 + 4N/3)) ~ 2^15
// rms, max < 2^18; with the public key over Q ∪ P divided by P at encryption (SEAL's noise
// reduction, which Veil does) only a ModDown error remains. Either is covered.
double fresh_bound(const veil::Context &ctx) { return std::ldexp(1.0, 19) + mod_down_bound(ctx); }

class KeySwitch : public ::testing::TestWithParam<KsCase> {};

TEST_P(KeySwitch, ContextAcceptsOnlyLargeEnoughP) {
  const KsCase c = GetParam();
  const veil::EncryptionParameters p = ks_params(c);
  if (!accepted(c)) {
    // P smaller than a digit.
    expect_invalid([&] { Context::create(p, SecurityLevel::none); }, "special_primes");
    return;
  }
  const ContextPtr ctx = veil::Context::create(p, veil::SecurityLevel::none);
  EXPECT_EQ(ctx->alpha(), c.alpha);
  EXPECT_EQ(ctx->num_p(), c.k);
  EXPECT_EQ(ctx->num_q(), kNumQ);
  // dnum = ceil((l + 1) / alpha) at every level l.
  for (std::size_t l : {std::size_t(0), std::size_t(1), std::size_t(5), kNumQ - 1}) {
    EXPECT_EQ(ctx->key_switch(l).dnum, (l + 1 + c.alpha - 1) / c.alpha) << "level " << l;
  }
  // With the default security level these parameters exceed the bound for N = 2^13.
  EXPECT_THROW(veil::Context::create(p), veil::InvalidArgument);
}

TEST_P(KeySwitch, RelinearizeAndRotateAtSeveralLevels) {
  const KsCase c = GetParam();
  if (!accepted(c))
    GTEST_SKIP() << "rejected by the context (checked in ContextAcceptsOnlyLargeEnoughP)";
  const ContextPtr ctx = veil::Context::create(ks_params(c), veil::SecurityLevel::none);
  const std::uint64_t seed = 0x5EED + 16 * c.alpha + c.k;
  KeyGenerator kg(ctx, Device::cpu(), seed);
  const RelinKeys rlk = kg.create_relin_keys();
  EXPECT_EQ(rlk.key().dnum(), (kNumQ + c.alpha - 1) / c.alpha);
  const GaloisKeys gk = kg.create_galois_keys({1, -2}, true);
  Encryptor enc(ctx, kg.create_public_key(), seed + 1);
  Decryptor dec(ctx, kg.secret_key());
  const Evaluator ev(ctx);
  std::mt19937_64 rng(seed);
  const std::size_t top = ctx->max_level();

  if (c.scheme == SchemeType::ckks) {
    const CKKSEncoder ecd(ctx);
    const std::size_t slots = ecd.slot_count();
    std::uniform_real_distribution<double> r(0.5, 1.0), ang(0.0, 2.0 * M_PI);
    auto random = [&] {
      CVec v(slots);
      for (auto &z : v)
        z = std::polar(r(rng), ang(rng));
      return v;
    };
    auto decode = [&](const Ciphertext &x) { return ecd.decode(dec.decrypt(x)); };
    const double ks_bound = ks_error_bound(*ctx), fresh = fresh_bound(*ctx);
    double worst_ks = 0;
    // Checks, for x ~ a and y ~ b at one level with scales sx, sy:
    //  - relinearization of x * y when the product's scale fits in Q_l: the key-switching error
    //    alone (against the size-3 decryption) when sx * sy <= 2^50 (above, decoding in double
    //    precision cannot resolve it), and against the oracle a * b;
    //  - rescaling of the product when the rescaled scale stays >= 2^30;
    //  - rotations by 1 and -2 and conjugation of x: the key-switching error alone (against the
    //    rotated decryption of x) and against the oracle.
    auto check = [&](const Ciphertext &x, const CVec &a, const Ciphertext &y, const CVec &b,
                     const std::string &what) {
      SCOPED_TRACE(what + " (level " + std::to_string(x.level()) + ")");
      ASSERT_EQ(x.level(), y.level());
      const double sx = x.scale(), sy = y.scale();
      double log2q = 0;
      for (std::size_t i = 0; i <= x.level(); ++i)
        log2q += std::log2(static_cast<double>(ctx->params().coeff_modulus[i]));
      const CVec da = decode(x);
      EXPECT_LE(max_err(da, a) * sx, fresh) << "input";
      if (std::log2(sx * sy) < log2q - 2) {
        const Ciphertext m = ev.multiply(x, y);
        const Ciphertext rl = ev.relinearize(m, rlk);
        EXPECT_EQ(rl.size(), 2u);
        const CVec got = decode(rl), want = vmul(a, b);
        if (sx * sy <= std::ldexp(1.0, 50)) {
          const double ks = max_err(got, decode(m)) * sx * sy;
          worst_ks = std::max(worst_ks, ks);
          EXPECT_LE(ks, ks_bound) << "relinearization error (scaled units)";
        }
        // (a + ea)(b + eb) - ab with |a|, |b| <= 1, plus the key switch.
        const double ea = fresh / sx, eb = fresh / sy;
        const double bound = ea + eb + ea * eb + ks_bound / (sx * sy);
        EXPECT_LE(max_err(got, want), bound) << "relinearized product";
        const double ql = static_cast<double>(ctx->params().coeff_modulus[x.level()]);
        if (x.level() > 0 && sx * sy / ql >= std::ldexp(1.0, 30)) {
          const Ciphertext rs = ev.rescale_to_next(rl);
          EXPECT_EQ(rs.level(), x.level() - 1);
          EXPECT_LE(max_err(decode(rs), want), bound + fresh / rs.scale()) << "rescaled";
        }
      }
      for (int step : {1, -2}) {
        const Ciphertext rx = ev.rotate_vector(x, step, gk);
        EXPECT_EQ(rx.level(), x.level());
        const CVec got = decode(rx);
        const double ks = max_err(got, rot(da, step)) * sx;
        worst_ks = std::max(worst_ks, ks);
        EXPECT_LE(ks, ks_bound) << "rotation " << step << " error (scaled units)";
        EXPECT_LE(max_err(got, rot(a, step)) * sx, fresh + ks_bound) << "rotation " << step;
      }
      const CVec got = decode(ev.conjugate(x, gk));
      const double ks = max_err(got, vconj(da)) * sx;
      worst_ks = std::max(worst_ks, ks);
      EXPECT_LE(ks, ks_bound) << "conjugation error (scaled units)";
      EXPECT_LE(max_err(got, vconj(a)) * sx, fresh + ks_bound) << "conjugation";
    };

    const double s40 = std::ldexp(1.0, 40), s20 = std::ldexp(1.0, 20), s16 = std::ldexp(1.0, 16);
    const CVec a = random(), b = random();
    auto encrypt = [&](const CVec &v, double scale) {
      return enc.encrypt(ecd.encode(v, scale, top));
    };
    // Scale 2^40 (products rescaled and compared with the oracle), 2^20 (relinearization error
    // isolated at product scale 2^40), 2^16 (products that fit in Q_0 = 40 bits).
    const Ciphertext ca = encrypt(a, s40), cb = encrypt(b, s40);
    const Ciphertext ma = encrypt(a, s20), mb = encrypt(b, s20);
    const Ciphertext sa = encrypt(a, s16), sb = encrypt(b, s16);
    check(ca, a, cb, b, "top, scale 2^40");
    check(ma, a, mb, b, "top, scale 2^20");
    // After a rescale: a*b at level 10 (scale ~2^40), times b switched down.
    const Ciphertext ab = ev.rescale_to_next(ev.relinearize(ev.multiply(ca, cb), rlk));
    check(ab, vmul(a, b), ev.mod_switch_to(cb, ab.level()), b, "after rescale");
    // After mod switching: level 6 (7 primes: a partial last digit for alpha = 2, 3, 6).
    check(ev.mod_switch_to(ca, 6), a, ev.mod_switch_to(cb, 6), b, "switched, scale 2^40");
    check(ev.mod_switch_to(ma, 6), a, ev.mod_switch_to(mb, 6), b, "switched, scale 2^20");
    // Levels 1 and 0 (fewer primes than one digit for alpha >= 3).
    check(ev.mod_switch_to(sa, 1), a, ev.mod_switch_to(sb, 1), b, "switched, scale 2^16");
    check(ev.mod_switch_to(sa, 0), a, ev.mod_switch_to(sb, 0), b, "switched, scale 2^16");
    std::printf("[ KeySwitch ] %s: worst key-switching error 2^%.1f (bound 2^%.1f, scaled units)\n",
                case_name(c).c_str(), std::log2(worst_ks), std::log2(ks_bound));
    return;
  }

  // ---- BGV
  const BatchEncoder ecd(ctx);
  const u64 t = ctx->plain_modulus();
  std::uniform_int_distribution<u64> d(0, t - 1);
  auto random = [&] {
    Vec v(kN);
    for (auto &x : v)
      x = d(rng);
    return v;
  };
  auto decrypt = [&](const Ciphertext &x) { return ecd.decode(dec.decrypt(x)); };
  auto budget = [&](const Ciphertext &x) { return dec.invariant_noise_budget(x); };
  int worst_drop = 0;
  // A key switch adds t times the CKKS key-switching error: far below a fresh ciphertext's noise
  // (t sqrt(N) sigma-ish) unless a digit is as large as P, where sum_j d_j e_j / P ~ N sigma
  // alpha costs ~sqrt(N) = 2^6.5 more.
  const int max_drop = digit_over_p(*ctx) > 1e-3 ? 8 : 3;
  auto check = [&](const Ciphertext &x, const Vec &a, const Ciphertext &y, const Vec &b,
                   const std::string &what) {
    SCOPED_TRACE(what + " (level " + std::to_string(x.level()) + ")");
    ASSERT_EQ(decrypt(x), a);
    const int bx = budget(x);
    ASSERT_GT(bx, 0);
    if (x.level() > 0) {
      const Ciphertext m = ev.multiply(x, y);
      const Ciphertext rl = ev.relinearize(m, rlk);
      EXPECT_EQ(rl.size(), 2u);
      EXPECT_GT(budget(rl), 0);
      // The key-switching noise is far below the product's.
      EXPECT_GE(budget(rl), budget(m) - 1);
      EXPECT_EQ(decrypt(rl), vmul(a, b, t));
      const Ciphertext sw = ev.mod_switch_to_next(rl);
      EXPECT_EQ(decrypt(sw), vmul(a, b, t));
    }
    for (int step : {1, -2}) {
      const Ciphertext rx = ev.rotate_rows(x, step, gk);
      EXPECT_EQ(decrypt(rx), rot_rows(a, step)) << "step " << step;
      worst_drop = std::max(worst_drop, bx - budget(rx));
      EXPECT_GE(budget(rx), bx - max_drop) << "step " << step;
    }
    const Ciphertext cx = ev.rotate_columns(x, gk);
    EXPECT_EQ(decrypt(cx), swap_rows(a));
    worst_drop = std::max(worst_drop, bx - budget(cx));
    EXPECT_GE(budget(cx), bx - max_drop);
  };
  const Vec a = random(), b = random();
  const Ciphertext ca = enc.encrypt(ecd.encode(a)), cb = enc.encrypt(ecd.encode(b));
  check(ca, a, cb, b, "top");
  const Ciphertext ab = ev.mod_switch_to_next(ev.relinearize(ev.multiply(ca, cb), rlk));
  check(ab, vmul(a, b, t), ev.mod_switch_to(cb, ab.level()), b, "after multiply + mod switch");
  check(ev.mod_switch_to(ca, 6), a, ev.mod_switch_to(cb, 6), b, "level 6");
  check(ev.mod_switch_to(ca, 1), a, ev.mod_switch_to(cb, 1), b, "level 1");
  check(ev.mod_switch_to(ca, 0), a, ev.mod_switch_to(cb, 0), b, "level 0");
  std::printf("[ KeySwitch ] %s: largest budget drop in a rotation %d bits\n", case_name(c).c_str(),
              worst_drop);
}

std::vector<KsCase> all_cases() {
  std::vector<KsCase> v;
  for (SchemeType s : {SchemeType::ckks, SchemeType::bgv})
    for (std::size_t k : {1, 2, 6})
      for (std::size_t alpha : {1, 2, 3, 6})
        v.push_back({s, alpha, k});
  return v;
}

INSTANTIATE_TEST_SUITE_P(AlphaK, KeySwitch, ::testing::ValuesIn(all_cases()),
                         [](const ::testing::TestParamInfo<KsCase> &i) {
                           return case_name(i.param);
                         });

TEST(KeySwitchParams, SpecialPrimesTooSmallForAlpha) {
  for (SchemeType s : {SchemeType::ckks, SchemeType::bgv}) {
    SCOPED_TRACE(s == SchemeType::ckks ? "ckks" : "bgv");
    // Digits of 3 x 40 = 120 bits against P = 60 bits.
    veil::EncryptionParameters p = ks_params({s, 3, 1});
    try {
      veil::Context::create(p, veil::SecurityLevel::none);
      ADD_FAILURE() << "P of 60 bits accepted for digits of 120 bits";
    } catch (const veil::InvalidArgument &ex) {
      const std::string msg = ex.what();
      EXPECT_NE(msg.find("special_primes"), std::string::npos) << msg;
      EXPECT_NE(msg.find("alpha"), std::string::npos) << msg;
    }
    // Two bits short: two 59-bit special primes (118 bits) against 3-prime digits (120 bits)
    // are rejected; two 60-bit primes (120 bits) are accepted.
    p = ks_params({s, 3, 2});
    std::vector<int> bits(kNumQ, kQBits);
    bits.push_back(59);
    bits.push_back(59);
    p.coeff_modulus = CoeffModulus::create(kN, bits);
    EXPECT_THROW(veil::Context::create(p, veil::SecurityLevel::none), veil::InvalidArgument);
    p = ks_params({s, 3, 2});
    EXPECT_NO_THROW(veil::Context::create(p, veil::SecurityLevel::none));
  }
}

// The fused inner product reads the digits' own limbs while it writes the accumulators: an
// accumulator that shares their words is rejected, naming it, instead of computing garbage.
TEST(KeySwitchParams, AccumulatorOverlappingTheInputIsRejected) {
  const ContextPtr ctx =
      veil::Context::create(ks_params({SchemeType::ckks, 1, 1}), veil::SecurityLevel::none);
  KeyGenerator kg(ctx, Device::cpu(), 7);
  const RelinKeys rlk = kg.create_relin_keys();
  const CKKSEncoder ecd(ctx);
  Encryptor enc(ctx, kg.create_public_key(), 8);
  const std::size_t top = ctx->max_level();
  Ciphertext ct = enc.encrypt(ecd.encode(std::vector<double>(4, 0.5), std::pow(2.0, 30), top));
  const veil::KeySwitchDigits digits =
      veil::key_switch_mod_up(*ctx, Device::cpu(), top, ct.poly(1), true);
  Ciphertext out = ct;
  for (int which = 0; which < 2; ++which) {
    try {  // one accumulator is c_1 itself, the polynomial the digits came from
      veil::key_switch_inner(*ctx, Device::cpu(), top, digits, rlk.key(),
                             which == 0 ? ct.poly(1) : out.poly(0),
                             which == 0 ? out.poly(1) : ct.poly(1), true);
      ADD_FAILURE() << "an accumulator overlapping the input was accepted";
    } catch (const veil::InvalidArgument &ex) {
      EXPECT_NE(std::string(ex.what()).find(which == 0 ? "acc0" : "acc1"), std::string::npos)
          << ex.what();
    }
  }
  // Separate accumulators are accepted.
  EXPECT_NO_THROW(veil::key_switch_inner(*ctx, Device::cpu(), top, digits, rlk.key(),
                                         out.poly(0), out.poly(1), true));
}

} // namespace
