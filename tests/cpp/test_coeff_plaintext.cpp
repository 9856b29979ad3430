// Plaintexts without batching (SEAL semantics, rlwe/plaintext.h): any plain modulus t >= 2 for
// BFV (HPS and BEHZ) and BGV. Oracle: schoolbook negacyclic convolution mod t, computed here on
// plain integers, independent of the NTT and RNS code under test.
#include <gtest/gtest.h>

#include <random>

#include "ring_util.h"
#include "rlwe_util.h"
#include "veil/rlwe/plaintext.h"

namespace {

using namespace veil;
using namespace veil::test;
using Poly = std::vector<std::uint64_t>;

struct Case {
  SchemeType scheme;
  MulMethod mul;
  std::uint64_t t;
};

class CoeffPlaintext : public ::testing::TestWithParam<Case> {};

TEST_P(CoeffPlaintext, ArithmeticMatchesSchoolbookModT) {
  const Case c = GetParam();
  EncryptionParameters p = small_params(c.scheme, 4096, c.t);
  p.mul_method = c.mul;
  const ContextPtr ctx = Context::create(p, SecurityLevel::none);
  EXPECT_FALSE(ctx->batching_enabled());
  std::mt19937_64 rng(c.t * 7 + static_cast<int>(c.scheme));
  const std::size_t n = ctx->n();
  for (const Device& dev : devices()) {
    SCOPED_TRACE(dev.str());
    KeySet keys(ctx, dev, 3);
    const Encryptor enc(ctx, keys.pk, 4);
    const Encryptor sym(ctx, keys.sk, 5);
    const Decryptor dec(ctx, keys.sk);
    const Evaluator ev(ctx);
    const Poly a = random_words(rng, n, c.t), b = random_words(rng, n, c.t);
    const Plaintext pa = make_plaintext(ctx, a, dev), pb = make_plaintext(ctx, b, dev);
    EXPECT_EQ(plaintext_coefficients(pa), a);
    const Ciphertext ca = enc.encrypt(pa), cb = sym.encrypt(pb);
    auto decrypt = [&](const Ciphertext& ct) { return plaintext_coefficients(dec.decrypt(ct)); };
    EXPECT_EQ(decrypt(ca), a);
    EXPECT_EQ(decrypt(cb), b);
    EXPECT_EQ(decrypt(ev.add(ca, cb)), add_poly(a, b, c.t));
    Poly neg_b(n);
    for (std::size_t i = 0; i < n; ++i) neg_b[i] = (c.t - b[i]) % c.t;
    EXPECT_EQ(decrypt(ev.sub(ca, cb)), add_poly(a, neg_b, c.t));
    EXPECT_EQ(decrypt(ev.negate(cb)), neg_b);
    EXPECT_EQ(decrypt(ev.add_plain(ca, pb)), add_poly(a, b, c.t));
    EXPECT_EQ(decrypt(ev.sub_plain(ca, pb)), add_poly(a, neg_b, c.t));
    const Poly ab = negacyclic_schoolbook(a, b, c.t);
    EXPECT_EQ(decrypt(ev.multiply_plain(ca, pb)), ab);
    const Ciphertext prod = ev.relinearize(ev.multiply(ca, cb), keys.rk);
    EXPECT_EQ(decrypt(prod), ab);
    if (c.scheme == SchemeType::bgv) {
      EXPECT_EQ(decrypt(ev.mod_switch_to_next(prod)), ab);
    }
    // x -> x^3 (an automorphism of the polynomial itself, no batching involved).
    const u32 g = 3;
    Poly rotated(n, 0);
    for (std::size_t i = 0; i < n; ++i) {
      const std::size_t e = (i * g) % (2 * n);
      if (e < n) {
        rotated[e] = (rotated[e] + a[i]) % c.t;
      } else {
        rotated[e - n] = (rotated[e - n] + c.t - a[i]) % c.t;
      }
    }
    EXPECT_EQ(decrypt(ev.apply_galois(ca, g, keys.gk)), rotated);
  }
}

INSTANTIATE_TEST_SUITE_P(
    Coefficients, CoeffPlaintext,
    ::testing::Values(Case{SchemeType::bfv, MulMethod::hps, 2}, Case{SchemeType::bfv, MulMethod::behz, 2},
                      Case{SchemeType::bgv, MulMethod::hps, 2}, Case{SchemeType::bfv, MulMethod::hps, 1024},
                      Case{SchemeType::bfv, MulMethod::behz, 1024}, Case{SchemeType::bgv, MulMethod::hps, 1024},
                      Case{SchemeType::bfv, MulMethod::hps, 3}, Case{SchemeType::bgv, MulMethod::hps, 255}),
    [](const auto& info) {
      return to_string(info.param.scheme) + "_" + to_string(info.param.mul) + "_t" +
             std::to_string(info.param.t);
    });

TEST(CoeffPlaintext, BadInputIsRejected) {
  const ContextPtr ctx = small_context(SchemeType::bfv, 4096, 1024);
  expect_invalid([&] { make_plaintext(ctx, {1, 2, 1024}); }, "coefficient 2");
  expect_invalid([&] { make_plaintext(ctx, Poly(4097, 0)); }, "at most N");
  expect_invalid([&] { make_plaintext(small_context(SchemeType::ckks), {1}); }, "context");
  const Plaintext pt = make_plaintext(ctx, {5, 0, 7});
  const Poly back = plaintext_coefficients(pt);
  ASSERT_EQ(back.size(), 4096u);
  EXPECT_EQ(back[0], 5u);
  EXPECT_EQ(back[2], 7u);
  EXPECT_EQ(back[3], 0u);
}

}  // namespace
