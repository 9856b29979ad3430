// BFV/BGV plaintexts in NTT form (Evaluator::transform_to_ntt) and the one-pass plaintext
// weighted sum (Evaluator::multiply_plain_sum): the decryption against the negacyclic
// schoolbook products mod t, the words against the multiply_plain and add chain, the GPU's words
// against the CPU's, and the errors.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "ring_util.h"
#include "rlwe_util.h"
#include "veil/api/encryptor.h"
#include "veil/api/evaluator.h"
#include "veil/bfv/bfv_tables.h"
#include "veil/io/serialize.h"
#include "veil/ring/ntt_simd.h"
#include "veil/rlwe/plaintext.h"

namespace {

using namespace veil;
using namespace veil::test;

// sum_i a_i * b_i in Z_t[x]/(x^N + 1), schoolbook.
std::vector<u64> schoolbook_sum(const std::vector<std::vector<u64>>& a,
                                const std::vector<std::vector<u64>>& b, u64 t) {
  std::vector<u64> out(a[0].size(), 0);
  for (std::size_t k = 0; k < a.size(); ++k)
    out = add_poly(out, negacyclic_schoolbook(a[k], b[k], t), t);
  return out;
}

std::vector<u64> random_coeffs(std::size_t n, u64 t, std::size_t nonzero, std::mt19937_64& rng) {
  std::vector<u64> c(n, 0);
  for (std::size_t i = 0; i < nonzero; ++i) c[rng() % n] = rng() % t;
  return c;
}

struct Case {
  std::vector<Ciphertext> cts;
  std::vector<Plaintext> pts, ntt_pts;
  std::vector<std::vector<u64>> msgs, plains;
};

Case make_case(const KeySet& k, std::size_t terms, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  const u64 t = k.ctx->plain_modulus();
  const std::size_t n = k.ctx->n();
  Encryptor enc(k.ctx, k.pk, seed);
  const Evaluator ev(k.ctx);
  Case c;
  for (std::size_t i = 0; i < terms; ++i) {
    c.msgs.push_back(random_coeffs(n, t, 24, rng));
    c.plains.push_back(random_coeffs(n, t, 24, rng));
    c.cts.push_back(enc.encrypt(veil::make_plaintext(k.ctx, c.msgs.back(), k.dev)));
    c.pts.push_back(veil::make_plaintext(k.ctx, c.plains.back(), k.dev));
    c.ntt_pts.push_back(ev.transform_to_ntt(c.pts.back(), c.cts.back().level()));
  }
  return c;
}

std::vector<const Ciphertext*> ptrs(const std::vector<Ciphertext>& v) {
  std::vector<const Ciphertext*> p;
  for (const auto& x : v) p.push_back(&x);
  return p;
}
std::vector<const Plaintext*> ptrs(const std::vector<Plaintext>& v) {
  std::vector<const Plaintext*> p;
  for (const auto& x : v) p.push_back(&x);
  return p;
}

class PlainNtt : public ::testing::TestWithParam<SchemeType> {};

TEST_P(PlainNtt, WeightedSumDecryptsToTheSchoolbookSumAndEqualsTheChain) {
  for (const Device& dev : veil::test::devices()) {
    const KeySet k(veil::test::small_context(GetParam()), dev, 5);
    const Evaluator ev(k.ctx);
    const Case c = make_case(k, 3, 11);
    // The chain: multiply_plain and add.
    Ciphertext chain = ev.multiply_plain(c.cts[0], c.pts[0]);
    for (std::size_t i = 1; i < c.cts.size(); ++i) {
      chain = ev.add(chain, ev.multiply_plain(c.cts[i], c.pts[i]));
    }
    const Ciphertext sum = ev.multiply_plain_sum(ptrs(c.cts), ptrs(c.pts));
    const Ciphertext sum_ntt = ev.multiply_plain_sum(ptrs(c.cts), ptrs(c.ntt_pts));
    EXPECT_EQ(words(sum), words(chain)) << dev.str();
    EXPECT_EQ(words(sum_ntt), words(chain)) << dev.str();
    EXPECT_EQ(sum.is_ntt_form(), chain.is_ntt_form());
    EXPECT_EQ(sum.key_id(), chain.key_id());
    const Plaintext dec = Decryptor(k.ctx, k.sk).decrypt(sum_ntt);
    EXPECT_EQ(veil::plaintext_coefficients(dec.to(Device::cpu())),
              schoolbook_sum(c.msgs, c.plains, k.ctx->plain_modulus()))
        << dev.str();
    // One product with a prepared plaintext: the same words as with the coefficient one.
    EXPECT_EQ(words(ev.multiply_plain(c.cts[1], c.ntt_pts[1])),
              words(ev.multiply_plain(c.cts[1], c.pts[1])));
  }
}

TEST_P(PlainNtt, GpuWordsEqualTheCpus) {
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  std::vector<u64> out[2];
  for (int d = 0; d < 2; ++d) {
    const Device dev = d ? veil::test::gpu() : Device::cpu();
    const KeySet k(veil::test::small_context(GetParam()), dev, 6);
    const Case c = make_case(k, 4, 12);
    out[d] = words(Evaluator(k.ctx).multiply_plain_sum(ptrs(c.cts), ptrs(c.ntt_pts)));
  }
  EXPECT_EQ(out[0], out[1]);
}

TEST_P(PlainNtt, Errors) {
  const KeySet k(veil::test::small_context(GetParam()), Device::cpu(), 7);
  const Evaluator ev(k.ctx);
  const Case c = make_case(k, 2, 13);
  expect_invalid([&] { ev.multiply_plain_sum({}, {}); }, "encrypted: expected at least one");
  expect_invalid([&] { ev.multiply_plain_sum(ptrs(c.cts), {&c.pts[0]}); },
                 "plain: expected 2 plaintexts");
  expect_invalid([&] { ev.transform_to_ntt(c.ntt_pts[0], 0); }, "plain: expected a plaintext mod t");
  expect_invalid([&] { ev.transform_to_ntt(c.pts[0], k.ctx->max_level() + 1); }, "level");
  const Plaintext low = ev.transform_to_ntt(c.pts[0], 0);
  expect_invalid([&] { ev.multiply_plain(c.cts[0], low); }, "plain: is in NTT form at level 0");
  expect_invalid([&] { ev.multiply_plain_sum({&c.cts[0]}, {&low}); }, "at level 0");
  const Plaintext zero = veil::make_plaintext(k.ctx, {}, Device::cpu());  // transparent sum
  expect_invalid([&] { ev.multiply_plain_sum(ptrs(c.cts), {&zero, &zero}); },
                 "multiply_plain_sum: the result ciphertext is transparent");
  const auto ckks = veil::test::small_context(SchemeType::ckks);
  expect_invalid([&] { Evaluator(ckks).transform_to_ntt(c.pts[0], 0); }, "plain");
  if (GetParam() == SchemeType::bgv) {  // ciphertexts at two levels
    const Ciphertext down = ev.mod_switch_to_next(c.cts[1]);
    expect_invalid([&] { ev.multiply_plain_sum({&c.cts[0], &down}, ptrs(c.pts)); },
                   "encrypted: expected one level");
  }
}

INSTANTIATE_TEST_SUITE_P(Schemes, PlainNtt, ::testing::Values(SchemeType::bfv, SchemeType::bgv),
                         [](const auto& info) {
                           return info.param == SchemeType::bfv ? "Bfv" : "Bgv";
                         });

}  // namespace

namespace {

// 32-bit words on the CPU go through the 64-bit vector kernels widened (products, Horner, the
// tensor, the conversions from a few primes): BFV HPS and BGV on ~30-bit primes give the same
// words at the vector level as at the scalar one (set_cpu_simd(0)), and the products decrypt to
// the schoolbook products mod t.
// Restores the detected vector level even when an assertion fails.
struct SimdLevelGuard {
  ~SimdLevelGuard() { veil::detail::set_cpu_simd(-1); }
};

TEST(CpuWords32, VectorAndScalarLevelsGiveTheSameWords) {
  if (veil::detail::cpu_simd_detected() < veil::detail::CpuSimd::kAvx512) {
    GTEST_SKIP() << "no AVX-512 here: the vector level is the scalar one";
  }
  const SimdLevelGuard guard;
  // 5 primes: conversions of a few terms; 15 Q primes: BFV HPS's R -> Q conversion has more
  // than 15 terms (16 ~30-bit R primes and v), the dot products' 32-bit-prime bound.
  const std::vector<int> few{30, 30, 30, 30, 31}, many(16, 30);
  for (const auto& [s, bits] : {std::pair{SchemeType::bfv, few}, std::pair{SchemeType::bgv, few},
                                std::pair{SchemeType::bfv, many}}) {
    SCOPED_TRACE(veil::to_string(s) + " with " + std::to_string(bits.size()) + " primes");
    veil::EncryptionParameters p(s);
    p.poly_modulus_degree = 4096;
    p.coeff_modulus = veil::CoeffModulus::create(4096, bits);
    p.plain_modulus = veil::PlainModulus::batching(4096, 17);
    p.word_bits = 32;
    const auto ctx = veil::Context::create(p, veil::SecurityLevel::none);
    ASSERT_EQ(ctx->word_bits(), 32);
    std::vector<std::vector<u64>> got;
    std::vector<u64> msg, plain;
    for (int level : {-1, 0}) {  // detected, then scalar
      veil::detail::set_cpu_simd(level);
      const KeySet k(ctx, Device::cpu(), 9);
      const Evaluator ev(ctx);
      std::mt19937_64 rng(4);
      msg = random_coeffs(ctx->n(), ctx->plain_modulus(), 40, rng);
      plain = random_coeffs(ctx->n(), ctx->plain_modulus(), 40, rng);
      const Ciphertext c = Encryptor(ctx, k.pk, 3).encrypt(veil::make_plaintext(ctx, msg, k.dev));
      const Ciphertext sq = ev.relinearize(ev.multiply(c, c), k.rk);
      const Ciphertext mp = ev.multiply_plain(c, veil::make_plaintext(ctx, plain, k.dev));
      const Decryptor dec(ctx, k.sk);
      got.push_back(words(sq));
      got.push_back(words(mp));
      got.push_back(veil::plaintext_coefficients(dec.decrypt(sq)));
      got.push_back(veil::plaintext_coefficients(dec.decrypt(mp)));
    }
    veil::detail::set_cpu_simd(-1);
    for (std::size_t i = 0; i < 4; ++i) EXPECT_EQ(got[i], got[4 + i]) << "result " << i;
    if (s == SchemeType::bfv && bits.size() > 10) {  // the case the larger bound is for
      EXPECT_GT(veil::bfv_tables(*ctx, ctx->max_level()).base_r.size() + 1, 15u);
    }
    const u64 t = ctx->plain_modulus();
    EXPECT_EQ(got[2], schoolbook_sum({msg}, {msg}, t));
    EXPECT_EQ(got[3], schoolbook_sum({msg}, {plain}, t));
  }
}

}  // namespace

namespace {

// BFV ciphertexts in NTT form (Evaluator::transform_to_ntt, SEAL's): a plaintext-product chain
// pays one transform each way; its words equal the coefficient-form chain's and decrypt to the
// schoolbook sum; serialization keeps the form; other operations refuse it by name.
TEST(BfvNttForm, PlainProductChainsMatchTheCoefficientChain) {
  for (const Device& dev : veil::test::devices()) {
    SCOPED_TRACE(dev.str());
    const KeySet k(veil::test::small_context(SchemeType::bfv), dev, 21);
    const Evaluator ev(k.ctx);
    const Case c = make_case(k, 2, 17);
    // Coefficient form: the reference chain.
    const Ciphertext chain = ev.add(ev.multiply_plain(c.cts[0], c.pts[0]),
                                    ev.multiply_plain(c.cts[1], c.pts[1]));
    // NTT form: one plaintext prepared, one in coefficient form; no transform in between.
    const Ciphertext a = ev.transform_to_ntt(c.cts[0]), b = ev.transform_to_ntt(c.cts[1]);
    EXPECT_TRUE(a.is_ntt_form());
    EXPECT_EQ(words(ev.transform_from_ntt(a)), words(c.cts[0])) << "round trip";
    Ciphertext sum = ev.add(ev.multiply_plain(a, c.ntt_pts[0]), ev.multiply_plain(b, c.pts[1]));
    EXPECT_TRUE(sum.is_ntt_form());
    EXPECT_EQ(words(ev.transform_from_ntt(sum)), words(chain));
    // The weighted sum on NTT-form inputs stays in NTT form and has the same words.
    const Ciphertext wsum = ev.multiply_plain_sum({&a, &b}, ptrs(c.ntt_pts));
    EXPECT_TRUE(wsum.is_ntt_form());
    EXPECT_EQ(words(wsum), words(sum));
    // sub and negate are linear too.
    EXPECT_EQ(words(ev.transform_from_ntt(ev.sub(a, b))), words(ev.sub(c.cts[0], c.cts[1])));
    EXPECT_EQ(words(ev.transform_from_ntt(ev.negate(a))), words(ev.negate(c.cts[0])));
    ev.transform_from_ntt_inplace(sum);
    const Plaintext dec = Decryptor(k.ctx, k.sk).decrypt(sum);
    EXPECT_EQ(veil::plaintext_coefficients(dec.to(Device::cpu())),
              schoolbook_sum(c.msgs, c.plains, k.ctx->plain_modulus()));
    // Serialization keeps the form and the words.
    const Ciphertext back = veil::io::load_ciphertext(veil::io::save(a), k.ctx, dev);
    EXPECT_TRUE(back.is_ntt_form());
    EXPECT_EQ(words(back), words(a));
    // Everything else refuses NTT form, naming the way back.
    const Decryptor decryptor(k.ctx, k.sk);
    expect_invalid([&] { decryptor.decrypt(a); }, "transform_from_ntt");
    expect_invalid([&] { ev.multiply(a, b); }, "transform_from_ntt");
    expect_invalid([&] { ev.rotate_rows(a, 1, k.gk); }, "transform_from_ntt");
    expect_invalid([&] { ev.add_plain(a, c.pts[0]); }, "transform_from_ntt");
    expect_invalid([&] { ev.add(a, c.cts[1]); }, "coefficient form");
    expect_invalid([&] { ev.multiply_plain_sum({&a, &c.cts[1]}, ptrs(c.pts)); }, "NTT and in");
    expect_invalid([&] { ev.transform_to_ntt(a); }, "already in NTT form");
    expect_invalid([&] { ev.transform_from_ntt(c.cts[0]); }, "already in coefficient form");
  }
  const KeySet g(veil::test::small_context(SchemeType::bgv), Device::cpu(), 3);
  const Ciphertext x = Encryptor(g.ctx, g.pk, 1).encrypt(
      veil::make_plaintext(g.ctx, std::vector<u64>{1, 2, 3}, Device::cpu()));
  expect_invalid([&] { Evaluator(g.ctx).transform_to_ntt(x); }, "always in NTT form");
}

}  // namespace
