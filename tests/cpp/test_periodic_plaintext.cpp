// Plaintexts stored as one period (CKKSEncoder::periodic_shift, encode_extended_periodic,
// expand_periodic; the diagonals of CKKS bootstrapping's DFT factors). Oracles:
// - the period of a slot vector built here with a known period (numpy-style tiling);
// - the coefficient form (inverse NTT of the expanded words): every coefficient off the
//   multiples of 2^shift is 0 in every limb, and every one on them equals encode_extended's
//   coefficient there (the same rounded double), word for word;
// - the compact words are word i * 2^shift of the expanded ones;
// - CPU and GPU words agree when a GPU is visible; the errors name their argument.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <vector>

#include "ckks_util.h"
#include "veil/ring/ntt.h"

namespace {

using namespace veil;
using namespace veil::test;

ContextPtr ext_context(int word_bits) {
  return word_bits == 64 ? ckks_context(2048, {60, 45, 45, 55, 55}, 2)
                         : ckks_context(2048, {30, 30, 30, 30, 31, 31}, 2);
}

/// N/2 slots repeating `period` random values.
CVec periodic(std::size_t half, std::size_t period, std::uint64_t seed) {
  return tile(random_values(period, seed), half);
}

/// The coefficient-form words of an extended NTT-form plaintext (a copy).
std::vector<std::uint64_t> coefficients(const ContextPtr& ctx, const Plaintext& pt) {
  WordBuffer w = pt.buffer().clone();
  ntt_inverse(pt.device(), w.data(), 1, ctx->key_switch(pt.level()).base_qp, ctx->ntt());
  return w.to_host();
}

TEST(PeriodicPlaintext, ShiftIsTheLog2OfTheRepetitions) {
  ContextPtr ctx = ext_context(64);
  const CKKSEncoder enc(ctx);
  const std::size_t half = ctx->n() / 2;  // 1024
  for (std::size_t period = 2; period <= half; period *= 2) {
    const unsigned want = static_cast<unsigned>(std::log2(double(half / period)));
    EXPECT_EQ(enc.periodic_shift(periodic(half, period, period)), want) << "period " << period;
  }
  // a constant vector repeats with period 1, counted as 2 (period 1 is not m(X^k) in SEAL's
  // slot order: X^(N/2) alternates +-i over the powers of 3)
  EXPECT_EQ(enc.periodic_shift(CVec(half, {0.25, -0.5})), 9u);
  CVec broken = periodic(half, 8, 3);
  broken[half - 1] += 1e-12;  // equality, not closeness
  EXPECT_EQ(enc.periodic_shift(broken), 0u);
  EXPECT_EQ(enc.periodic_shift(periodic(half / 2, 8, 3)), 0u);  // not N/2 values
}

TEST(PeriodicPlaintext, EncodeKeepsTheMultiplesOfKAndZeroesTheRest) {
  for (int bits : {64, 32}) {
    ContextPtr ctx = ext_context(bits);
    const CKKSEncoder enc(ctx);
    const std::size_t n = ctx->n(), half = n / 2, level = ctx->max_level();
    const std::size_t limbs = level + 1 + ctx->num_p();
    const double scale = std::ldexp(1.0, bits == 64 ? 50 : 40);
    for (const Device& dev : veil::test::devices()) {
      for (std::size_t period : {2, 16, 256, 512}) {
        const CVec v = periodic(half, period, 7 * period + bits);
        const unsigned shift = enc.periodic_shift(v);
        const std::size_t k = std::size_t(1) << shift;
        ASSERT_EQ(k, half / period);
        const Plaintext full = enc.encode_extended(v, scale, level, dev);
        const Plaintext compact = enc.encode_extended_periodic(v, scale, level, shift, dev);
        EXPECT_EQ(compact.word_count(), limbs * n / k);
        EXPECT_EQ(compact.level(), level);
        EXPECT_EQ(compact.scale(), scale);
        EXPECT_TRUE(compact.is_ntt_form());
        const Plaintext expanded = CKKSEncoder::expand_periodic(compact, shift);
        ASSERT_EQ(expanded.word_count(), limbs * n);
        const auto cw = veil::test::words(compact), ew = veil::test::words(expanded);
        for (std::size_t i = 0; i < cw.size(); ++i) ASSERT_EQ(cw[i], ew[i * k]) << "word " << i;
        const auto got = coefficients(ctx, expanded), want = coefficients(ctx, full);
        std::size_t noise = 0;  // encode_extended's nonzero coefficients off the multiples of k
        for (std::size_t l = 0; l < limbs; ++l) {
          for (std::size_t i = 0; i < n; ++i) {
            const std::size_t w = l * n + i;
            if (i % k == 0) {
              ASSERT_EQ(got[w], want[w]) << dev.str() << " limb " << l << " coefficient " << i;
            } else {
              ASSERT_EQ(got[w], 0u) << dev.str() << " limb " << l << " coefficient " << i;
              noise += want[w] != 0;
            }
          }
        }
        std::printf("[ periodic  ] %s, %d-bit words, period %zu: %zu of %zu words (1/%zu); "
                    "encode_extended had %zu nonzero words off the multiples of %zu\n",
                    dev.str().c_str(), bits, period, cw.size(), ew.size(), k, noise, k);
        // the claim itself: periodic slots are m(X^k), so encode_extended's coefficients off
        // the multiples of k are at most the FFT's rounding (here exactly 0)
        EXPECT_EQ(noise, 0u) << dev.str() << " period " << period;
        // and the expanded Q limbs decode to the values (the ordinary plaintext's words)
        Plaintext q(ctx, dev, (level + 1) * n, level, /*ntt=*/true);
        const auto qw = std::vector<std::uint64_t>(ew.begin(), ew.begin() + (level + 1) * n);
        copy_words_from_host(dev, q.data(), qw.data(), qw.size());
        q.set_scale(scale);
        const CVec back = enc.decode(q);
        double worst = 0;
        for (std::size_t j = 0; j < half; ++j) worst = std::max(worst, std::abs(back[j] - v[j]));
        EXPECT_LT(worst, 1e-9) << dev.str() << " period " << period;
      }
    }
  }
}

TEST(PeriodicPlaintext, ShiftZeroIsEncodeExtended) {
  ContextPtr ctx = ext_context(64);
  const CKKSEncoder enc(ctx);
  const CVec v = random_values(ctx->n() / 2, 5);
  const double s = std::ldexp(1.0, 45);
  EXPECT_EQ(veil::test::words(enc.encode_extended_periodic(v, s, 2, 0)),
            veil::test::words(enc.encode_extended(v, s, 2)));
}

TEST(PeriodicPlaintext, GpuWordsEqualTheCpus) {
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  for (int bits : {64, 32}) {
    ContextPtr ctx = ext_context(bits);
    const CKKSEncoder enc(ctx);
    const std::size_t half = ctx->n() / 2, level = ctx->max_level();
    const CVec v = periodic(half, 32, 11);
    const unsigned shift = enc.periodic_shift(v);
    const double s = std::ldexp(1.0, 40);
    const Plaintext c = enc.encode_extended_periodic(v, s, level, shift);
    const Plaintext g = enc.encode_extended_periodic(v, s, level, shift, veil::test::gpu());
    EXPECT_EQ(veil::test::words(c), veil::test::words(g)) << bits;
    EXPECT_EQ(veil::test::words(CKKSEncoder::expand_periodic(c, shift)),
              veil::test::words(CKKSEncoder::expand_periodic(g, shift)))
        << bits;
  }
}

TEST(PeriodicPlaintext, ErrorsNameTheArgument) {
  ContextPtr ctx = ext_context(64);
  const CKKSEncoder enc(ctx);
  const std::size_t half = ctx->n() / 2;
  const double s = std::ldexp(1.0, 40);
  const CVec v = periodic(half, 64, 1);  // shift 4
  veil::test::expect_invalid([&] { enc.encode_extended_periodic(v, s, 2, 5); },
                             "shift: the values do not repeat with period N/2^(shift+1) = 32");
  veil::test::expect_invalid([&] { enc.encode_extended_periodic(v, -1.0, 2, 4); }, "scale");
  const Plaintext c = enc.encode_extended_periodic(v, s, 2, 4);
  veil::test::expect_invalid([&] { CKKSEncoder::expand_periodic(c, 10); }, "shift");
  veil::test::expect_invalid([&] { CKKSEncoder::expand_periodic(c, ~0u); }, "shift");
  veil::test::expect_invalid([&] { CKKSEncoder::expand_periodic(Plaintext(), 1); },
                             "compact: is empty");
  // 5 limbs of 128 words are not 5 limbs of 2048 / 2^3 = 256 words, nor of 2^5 = 64
  veil::test::expect_invalid([&] { CKKSEncoder::expand_periodic(c, 3); },
                             "compact: expected an NTT-form plaintext over Q_l ∪ P of");
  veil::test::expect_invalid([&] { CKKSEncoder::expand_periodic(c, 5); }, "= 320 words");
  // an even number of limbs (level 1: 2 + 2 special) with a shift too small or too large
  const Plaintext c1 = enc.encode_extended_periodic(v, s, 1, 4);
  EXPECT_EQ(CKKSEncoder::expand_periodic(c1, 4).word_count(), 4u * 2048);
  veil::test::expect_invalid([&] { CKKSEncoder::expand_periodic(c1, 3); }, "= 1024 words");
  veil::test::expect_invalid([&] { CKKSEncoder::expand_periodic(c1, 5); }, "= 256 words");
  // shift checked first, and values of another length than N/2 never repeat
  veil::test::expect_invalid([&] { enc.encode_extended_periodic(v, s, 2, 40); },
                             "shift: expected at most log2(N) - 2 = 9, got 40");
  veil::test::expect_invalid(
      [&] { enc.encode_extended_periodic(CVec(half + 1, 1.0), s, 2, 1); }, "values");
  veil::test::expect_invalid([&] { enc.encode_extended_periodic(CVec(64, 1.0), s, 2, 1); },
                             "for 64 values, shift is 1");
  // the ordinary plaintext operations refuse a plaintext stored as one period
  {
    const veil::test::CkksKeys k(ctx, Device::cpu(), 3);
    const Ciphertext ct = k.encrypt(v, s, 2);
    veil::test::expect_invalid([&] { k.ev.multiply_plain(ct, c); },
                               "plain: expected at least (level + 1) * N = 6144 words, got 640");
    veil::test::expect_invalid([&] { k.encryptor.encrypt(c); }, "plain: expected at least");
  }
  EncryptionParameters p(SchemeType::ckks);
  p.poly_modulus_degree = 2048;
  p.coeff_modulus = CoeffModulus::create(2048, {60, 45, 60});
  p.special_primes = 0;
  const CKKSEncoder plain_enc(Context::create(p, SecurityLevel::none));
  veil::test::expect_invalid([&] { plain_enc.encode_extended_periodic(v, s, 1, 4); },
                             "context: encode_extended needs special primes");
}

}  // namespace
