// Issue 8 (hardening): key-set identity, transparent results, exhausted noise, BFV modulus
// switching, CKKS scale bounds, parameter validation, zeroization and flooding. Oracles are
// plaintext arithmetic mod t, exact big-integer budgets and explicit prime products, never the
// code under test. Runs on the CPU and, when visible, on cuda:0.
#include <gtest/gtest.h>

#include <boost/multiprecision/cpp_int.hpp>
#include <cmath>
#include <complex>
#include <random>

#include "rlwe_util.h"
#include "veil/backend/memory.h"
#include "veil/bfv/batch_encoder.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/ckks/encoder.h"
#include "veil/core/primes.h"
#include "veil/io/seal.h"
#include "veil/io/serialize.h"
#include "veil/rlwe/checks.h"

namespace veil::test {
namespace {

Vec random_slots(std::size_t n, u64 t, unsigned seed) {
  std::mt19937_64 g(seed);
  return random_words(g, n, t);
}

// A BFV/BGV key set plus encoder helpers on one device.
struct IntEnv {
  ContextPtr ctx;
  KeySet keys;
  BatchEncoder enc;
  Encryptor encryptor;
  Decryptor decryptor;
  Evaluator ev;
  IntEnv(SchemeType s, const Device& d, std::uint64_t seed, ContextPtr c = nullptr)
      : ctx(c ? c : small_context(s)),
        keys(ctx, d, seed),
        enc(ctx),
        encryptor(ctx, keys.pk, seed + 1),
        decryptor(ctx, keys.sk),
        ev(ctx) {}
  Ciphertext encrypt(const Vec& v) const { return encryptor.encrypt(enc.encode(v, keys.dev)); }
  Vec decrypt(const Ciphertext& c, bool check = true) const {
    return enc.decode(decryptor.decrypt(c, check));
  }
};

class Hardening : public ::testing::TestWithParam<Device> {};

INSTANTIATE_TEST_SUITE_P(Devices, Hardening, ::testing::ValuesIn(devices()),
                         [](const auto& info) { return info.param.is_cpu() ? "cpu" : "cuda"; });

// ---- key-set identity --------------------------------------------------------------------------

TEST_P(Hardening, MixingKeySetsRaisesBeforeAnyGarbage) {
  for (SchemeType s : {SchemeType::bfv, SchemeType::bgv}) {
    SCOPED_TRACE(to_string(s));
    const ContextPtr ctx = small_context(s);
    IntEnv a(s, GetParam(), 11, ctx), b(s, GetParam(), 12, ctx);  // same parameters
    const u64 t = ctx->plain_modulus();
    const Vec x = random_slots(ctx->n(), t, 1);
    const Ciphertext ca = a.encrypt(x), cb = b.encrypt(x);
    EXPECT_NE(ca.key_id(), 0u);
    EXPECT_EQ(ca.key_id(), a.keys.sk.key_id());
    EXPECT_NE(ca.key_id(), cb.key_id());
    expect_invalid([&] { a.ev.add(ca, cb); }, "encrypted2");
    expect_invalid([&] { a.ev.multiply(ca, cb); }, "encrypted2");
    expect_invalid([&] { a.ev.relinearize(a.ev.multiply(ca, ca), b.keys.rk); }, "relin_keys");
    expect_invalid([&] { a.ev.rotate_rows(ca, 1, b.keys.gk); }, "galois_keys");
    expect_invalid([&] { a.ev.rotate_many(ca, {1, -1}, b.keys.gk); }, "galois_keys");
    expect_invalid([&] { a.decryptor.decrypt(cb); }, "encrypted");
    expect_invalid([&] { a.decryptor.invariant_noise_budget(cb); }, "encrypted");
    expect_invalid([&] { a.ev.add_many({ca, cb}); }, "encrypted2");
    // The same key set keeps working and results keep the identity.
    const Ciphertext sq = a.ev.relinearize(a.ev.multiply(ca, ca), a.keys.rk);
    EXPECT_EQ(sq.key_id(), ca.key_id());
    Vec want(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) want[i] = static_cast<u64>((__uint128_t(x[i]) * x[i]) % t);
    EXPECT_EQ(a.decrypt(sq), want);
    EXPECT_EQ(a.ev.rotate_rows(ca, 1, a.keys.gk).key_id(), ca.key_id());
  }
}

TEST_P(Hardening, KeySetIdentitySurvivesSerializationAndDevices) {
  const ContextPtr ctx = small_context(SchemeType::bfv);
  IntEnv a(SchemeType::bfv, GetParam(), 21, ctx), b(SchemeType::bfv, GetParam(), 22, ctx);
  const Ciphertext ca = a.encrypt(Vec(ctx->n(), 3));
  const Ciphertext loaded = io::load_ciphertext(io::save(ca), ctx, GetParam());
  EXPECT_EQ(loaded.key_id(), ca.key_id());
  expect_invalid([&] { b.decryptor.decrypt(loaded); }, "encrypted");
  const RelinKeys rk = io::load_relin_keys(io::save(b.keys.rk), ctx, GetParam());
  EXPECT_EQ(rk.key_id(), b.keys.sk.key_id());
  expect_invalid([&] { a.ev.relinearize(a.ev.multiply(ca, ca), rk); }, "relin_keys");
  const GaloisKeys gk = io::load_galois_keys(io::save(b.keys.gk), ctx, GetParam());
  EXPECT_EQ(gk.key_id(), b.keys.sk.key_id());
  // The secret key's identity is recomputed from its words, and equal across devices.
  const SecretKey sk = io::load_secret_key(io::save(a.keys.sk), ctx, GetParam());
  EXPECT_EQ(sk.key_id(), a.keys.sk.key_id());
  EXPECT_EQ(key_set_id(a.keys.sk.to(Device::cpu())), a.keys.sk.key_id());
  EXPECT_EQ(ca.to(Device::cpu()).key_id(), ca.key_id());
  // Objects without an identity (SEAL's format, older files) are accepted by every key set.
  Ciphertext anonymous = ca;
  anonymous.set_key_id(0);
  EXPECT_EQ(a.decrypt(anonymous), Vec(ctx->n(), 3));
  EXPECT_EQ(a.ev.add(anonymous, ca).key_id(), ca.key_id());
}

// ---- transparent results (SEAL's check) --------------------------------------------------------

// On the CPU the operation raises; on a GPU the operation does not synchronize to test, and every
// save (Veil's format and SEAL's) raises instead (checks.h).
template <class Op>
void expect_transparent(const Device& dev, Op&& op) {
  if (dev.is_cpu()) {
    expect_invalid([&] { op(); }, "transparent");
    return;
  }
  Ciphertext r;
  ASSERT_NO_THROW(r = op());
  expect_invalid([&] { (void)veil::io::save(r); }, "transparent");
}

TEST_P(Hardening, TransparentResultsRaiseUnlessTurnedOff) {
  for (SchemeType s : {SchemeType::bfv, SchemeType::bgv}) {
    SCOPED_TRACE(to_string(s));
    IntEnv e(s, GetParam(), 31);
    const Vec x = random_slots(e.ctx->n(), e.ctx->plain_modulus(), 2);
    const Ciphertext c = e.encrypt(x);
    expect_transparent(GetParam(), [&] { return e.ev.sub(c, c); });
    expect_transparent(GetParam(), [&] { return e.ev.add(c, e.ev.negate(c)); });
    expect_transparent(GetParam(), [&] {
      return e.ev.multiply_plain(c, e.enc.encode(Vec(e.ctx->n(), 0), GetParam()));
    });
    expect_transparent(GetParam(), [&] {
      Ciphertext inplace = c;
      e.ev.sub_inplace(inplace, c);
      return inplace;
    });
    set_transparent_check(false);
    const Ciphertext zero = e.ev.sub(c, c);
    EXPECT_EQ(e.decrypt(zero), Vec(e.ctx->n(), 0));
    EXPECT_NO_THROW((void)veil::io::save(zero));
    set_transparent_check(true);
    // Made with the check off, refused by both formats' save once it is on.
    expect_invalid([&] { (void)veil::io::save(zero); }, "transparent");
    expect_invalid([&] { (void)veil::io::seal::save(zero); }, "transparent");
    // A non-zero plaintext is fine, and so is saving its result.
    Ciphertext ok;
    EXPECT_NO_THROW(ok = e.ev.multiply_plain(c, e.enc.encode(Vec(e.ctx->n(), 1), GetParam())));
    EXPECT_NO_THROW((void)veil::io::save(ok));
  }
  // CKKS too.
  const ContextPtr ctx = small_context(SchemeType::ckks);
  KeySet k(ctx, GetParam(), 33);
  CKKSEncoder enc(ctx);
  Encryptor encryptor(ctx, k.pk, 34);
  Evaluator ev(ctx);
  const Ciphertext c = encryptor.encrypt(enc.encode(std::vector<double>{1, 2, 3}, std::exp2(30), 2, GetParam()));
  expect_transparent(GetParam(), [&] { return ev.sub(c, c); });
}

// ---- exhausted noise -----------------------------------------------------------------------------

TEST_P(Hardening, DecryptionWithExhaustedNoiseRaises) {
  for (SchemeType s : {SchemeType::bfv, SchemeType::bgv}) {
    SCOPED_TRACE(to_string(s));
    IntEnv e(s, GetParam(), 41);
    Ciphertext c = e.encrypt(random_slots(e.ctx->n(), e.ctx->plain_modulus(), 3));
    bool saw_zero = false;
    for (int i = 0; i < 8 && !saw_zero; ++i) {
      // The one-pass test at decryption agrees with the exact big-integer budget.
      const int budget = e.decryptor.invariant_noise_budget(c);
      if (budget == 0) {
        saw_zero = true;
        expect_invalid([&] { e.decrypt(c); }, "noise budget");
        EXPECT_NO_THROW(e.decrypt(c, /*check=*/false));
        if (GetParam().is_cuda()) {
          // Every host-mapped flag taken: the fused scaling-and-test pass falls back to a device
          // flag and must give the same answers.
          struct Flags {  // released even when an assertion below fails
            Device dev;
            std::vector<std::uint32_t*> held;
            ~Flags() {
              for (std::uint32_t* f : held) veil::backend::flag_release(dev, f);
            }
          } flags{GetParam(), {}};
          while (std::uint32_t* f = veil::backend::flag_acquire(GetParam())) {
            flags.held.push_back(f);
          }
          expect_invalid([&] { e.decrypt(c); }, "noise budget");
          const Vec x = random_slots(e.ctx->n(), e.ctx->plain_modulus(), 4);
          EXPECT_EQ(e.decrypt(e.encrypt(x)), x) << "fresh ciphertext, no mapped flag free";
        }
      } else {
        EXPECT_NO_THROW(e.decrypt(c)) << "budget " << budget;
        c = e.ev.relinearize(e.ev.multiply(c, c), e.keys.rk);
      }
    }
    EXPECT_TRUE(saw_zero);
  }
}

// Decryption over more limbs than one conversion chunk (32) and than the GPU's lanes per
// coefficient divide evenly (37 = 4 x 9 + 1), with 32-bit (30-bit primes) and 64-bit words (50):
// the words equal the CPU's decryption of the same ciphertext and the values are right (BGV
// after a modulus switch: correction factor != 1).
TEST_P(Hardening, DecryptionOverManyLimbsMatchesTheCpu) {
  for (const auto& [s, bits] : {std::pair{SchemeType::bfv, 30}, std::pair{SchemeType::bgv, 30},
                                std::pair{SchemeType::bfv, 50}, std::pair{SchemeType::bgv, 50}}) {
    SCOPED_TRACE(to_string(s) + ", primes of " + std::to_string(bits) + " bits");
    EncryptionParameters p(s);
    p.poly_modulus_degree = 4096;
    p.coeff_modulus = CoeffModulus::create(4096, std::vector<int>(38, bits));
    p.plain_modulus = PlainModulus::batching(4096, 20);
    const ContextPtr ctx = Context::create(p, SecurityLevel::none);
    IntEnv e(s, GetParam(), 61, ctx);
    const Vec x = random_slots(ctx->n(), ctx->plain_modulus(), 7);
    Ciphertext c = e.encrypt(x);
    const Decryptor on_cpu(ctx, e.keys.sk.to(Device::cpu()));
    Vec want = x;
    for (int round = 0; round < 2; ++round) {
      const Plaintext here = e.decryptor.decrypt(c), there = on_cpu.decrypt(c.to(Device::cpu()));
      EXPECT_EQ(here.buffer().to_host(), there.buffer().to_host()) << "round " << round;
      EXPECT_EQ(e.enc.decode(here), want) << "round " << round;
      if (s == SchemeType::bgv) {
        c = e.ev.mod_switch_to_next(c);  // correction factor != 1
      } else {
        c = e.ev.add(c, c);
        for (u64& w : want) w = (2 * w) % ctx->plain_modulus();
      }
    }
  }
}

// ---- BFV modulus switching (SEAL's mod_switch_to_next) -----------------------------------------

TEST_P(Hardening, BfvModSwitchKeepsTheMessageAndOperationsWorkBelowTheTop) {
  EncryptionParameters p(SchemeType::bfv);
  p.poly_modulus_degree = 4096;
  p.coeff_modulus = CoeffModulus::create(4096, {36, 36, 36, 37});
  p.plain_modulus = PlainModulus::batching(4096, 17);
  for (MulMethod mm : {MulMethod::hps, MulMethod::behz}) {
    SCOPED_TRACE(to_string(mm));
    p.mul_method = mm;
    const ContextPtr ctx = Context::create(p, SecurityLevel::none);
    IntEnv e(SchemeType::bfv, GetParam(), 51, ctx);
    const u64 t = ctx->plain_modulus();
    const Vec x = random_slots(ctx->n(), t, 4), y = random_slots(ctx->n(), t, 5);
    const Ciphertext cx = e.encrypt(x), cy = e.encrypt(y);
    const Ciphertext x1 = e.ev.mod_switch_to_next(cx), y1 = e.ev.mod_switch_to_next(cy);
    EXPECT_EQ(x1.level(), ctx->max_level() - 1);
    EXPECT_EQ(e.decrypt(x1), x);
    EXPECT_EQ(e.decrypt(e.ev.mod_switch_to(cx, 0)), x);
    Vec prod(x.size()), sum(x.size());
    for (std::size_t i = 0; i < x.size(); ++i) {
      prod[i] = static_cast<u64>((__uint128_t(x[i]) * y[i]) % t);
      sum[i] = (x[i] + y[i]) % t;
    }
    const Ciphertext m = e.ev.relinearize(e.ev.multiply(x1, y1), e.keys.rk);
    EXPECT_EQ(m.level(), x1.level());
    EXPECT_EQ(e.decrypt(m), prod);
    EXPECT_EQ(e.decrypt(e.ev.add(x1, y1)), sum);
    EXPECT_GT(e.decryptor.invariant_noise_budget(m), 0);
    expect_invalid([&] { e.ev.add(cx, y1); }, "level");
    // Bit for bit the same on every device.
    if (!GetParam().is_cpu()) {
      const Ciphertext cpu = e.ev.mod_switch_to_next(cx.to(Device::cpu()));
      EXPECT_EQ(words(cpu), words(x1));
    }
  }
}

// ---- CKKS scale bounds ---------------------------------------------------------------------------

TEST_P(Hardening, CkksScaleStaysWithinOneAndQ) {
  const ContextPtr ctx = small_context(SchemeType::ckks);  // Q_2 = 50 + 40 + 40 bits
  KeySet k(ctx, GetParam(), 61);
  CKKSEncoder enc(ctx);
  Encryptor encryptor(ctx, k.pk, 62);
  Evaluator ev(ctx);
  const std::vector<double> v{0.5, -0.25};
  expect_invalid([&] { enc.encode(v, 0.5, 2, GetParam()); }, "scale");
  expect_invalid([&] { enc.encode(v, std::exp2(131), 2, GetParam()); }, "scale");
  expect_invalid([&] { enc.encode(v, std::nan(""), 2, GetParam()); }, "scale");
  // 2^30 rescaled twice by 40-bit primes would leave 2^-50: the second rescale raises.
  const Ciphertext c = encryptor.encrypt(enc.encode(v, std::exp2(30), 2, GetParam()));
  const Ciphertext r1 = ev.rescale_to_next(ev.multiply(c, c));  // 2^60 / 2^40
  expect_invalid([&] { ev.rescale_to_next(r1); }, "scale");
  expect_invalid([&] { check_ckks_scale(*ctx, std::exp2(90.5), 1, "scale"); }, "scale");
  EXPECT_NO_THROW(check_ckks_scale(*ctx, std::exp2(89.5), 1, "scale"));
}

// ---- noise flooding (IND-CPA-D) ------------------------------------------------------------------

TEST_P(Hardening, CkksNoiseFloodingCostsTheDocumentedPrecision) {
  const ContextPtr ctx = small_context(SchemeType::ckks);
  KeySet k(ctx, GetParam(), 71);
  CKKSEncoder enc(ctx);
  Encryptor encryptor(ctx, k.pk, 72);
  std::vector<double> v(ctx->n() / 2);
  for (std::size_t i = 0; i < v.size(); ++i) v[i] = std::sin(0.01 * double(i));
  const double scale = std::exp2(40);
  const Ciphertext c = encryptor.encrypt(enc.encode(v, scale, 2, GetParam()));
  Decryptor plain_dec(ctx, k.sk), flood_dec(ctx, k.sk);
  flood_dec.set_noise_flooding(30);
  auto max_err = [&](const Decryptor& d) {
    const auto out = enc.decode(d.decrypt(c));
    double e = 0;
    for (std::size_t i = 0; i < v.size(); ++i) e = std::max(e, std::abs(out[i] - v[i]));
    return e;
  };
  const double e0 = max_err(plain_dec), e1 = max_err(flood_dec);
  // Uniform noise in [-2^30, 2^30) per coefficient, then the embedding (a sum of N terms): the
  // slot error is about 2^30 * sqrt(N / 3) / scale, far above the unflooded error.
  const double expect = std::exp2(30) * std::sqrt(double(ctx->n()) / 3.0) / scale;
  EXPECT_GT(e1, 10 * e0);
  EXPECT_GT(e1, 0.5 * expect);
  EXPECT_LT(e1, 20 * expect);
  // Fresh noise each time: two flooded decryptions differ.
  EXPECT_NE(words(flood_dec.decrypt(c)), words(flood_dec.decrypt(c)));
  expect_invalid([&] { flood_dec.set_noise_flooding(63); }, "bits");
  flood_dec.set_noise_flooding(20);  // 2^40 * 2^20 does not fit Q_0 (50 bits)
  Evaluator ev(ctx);
  expect_invalid([&] { flood_dec.decrypt(ev.mod_switch_to(c, 0)); }, "noise_flooding_bits");
}

// ---- zeroization -------------------------------------------------------------------------------

TEST_P(Hardening, SecretKeysAreZeroizedWhenFreed) {
  const ContextPtr ctx = small_context(SchemeType::bfv);
  const std::size_t sk_bytes = ctx->base_qp_full().size() * ctx->n() * sizeof(u64);
  const std::size_t before = backend::zeroized_bytes(GetParam());
  {
    KeyGenerator kg(ctx, GetParam(), 81);
  }
  EXPECT_GE(backend::zeroized_bytes(GetParam()) - before, sk_bytes);
  if (GetParam().is_cuda()) {
    // The pool hands the same block out again: it must hold zeros, not the key.
    const std::size_t words = sk_bytes / sizeof(u64);
    {
      KeyGenerator kg(ctx, GetParam(), 82);
      backend::synchronize(GetParam());
    }
    Buffer<u64> reuse(GetParam(), words);
    std::vector<u64> host = reuse.to_host();
    std::size_t nonzero = 0;
    for (u64 w : host) nonzero += w != 0;
    EXPECT_EQ(nonzero, 0u);
  }
}

}  // namespace

// ---- parameter validation (host only) ----------------------------------------------------------

TEST(HardeningParams, RejectsParametersThatCannotWork) {
  EncryptionParameters p(SchemeType::bfv);
  p.poly_modulus_degree = 4096;
  p.coeff_modulus = CoeffModulus::create(4096, {30, 30});
  p.plain_modulus = (u64(1) << 40) + 1;  // t > Q = one 30-bit prime
  while (!is_prime(p.plain_modulus)) p.plain_modulus += 2;
  expect_invalid([&] { Context::create(p, SecurityLevel::none); }, "plain_modulus");
  // Fresh ciphertexts without budget: Q = 30 + 30 bits, t = 58 bits (t < Q, but the fresh error
  // of ~2^7 times t fills Q).
  p.coeff_modulus = CoeffModulus::create(4096, {30, 30, 37});
  p.plain_modulus = PlainModulus::batching(4096, 58);
  expect_invalid([&] { Context::create(p, SecurityLevel::none); }, "noise budget");
  // CKKS with a plain modulus (SEAL: "plain_modulus is not supported for this scheme").
  EncryptionParameters c(SchemeType::ckks);
  c.poly_modulus_degree = 4096;
  c.coeff_modulus = CoeffModulus::create(4096, {40, 40, 40});
  c.plain_modulus = 65537;
  expect_invalid([&] { Context::create(c, SecurityLevel::none); }, "plain_modulus");
  // alpha above the number of Q primes is an error, not silently capped.
  c.plain_modulus = 0;
  c.alpha = 3;
  expect_invalid([&] { Context::create(c, SecurityLevel::none); }, "alpha");
  // Too many key-switching digits is found at creation.
  EncryptionParameters d(SchemeType::ckks);
  d.poly_modulus_degree = 8192;
  d.coeff_modulus = CoeffModulus::create(8192, std::vector<int>(62, 30));
  d.special_primes = 1;
  expect_invalid([&] { Context::create(d, SecurityLevel::none); }, "digits");
  // BGV's ModDown corrects for t inside the register-blocked conversion from P: at most 31
  // special primes (31 is accepted).
  EncryptionParameters g(SchemeType::bgv);
  g.poly_modulus_degree = 8192;
  g.plain_modulus = PlainModulus::batching(8192, 20);
  g.coeff_modulus = CoeffModulus::create(8192, std::vector<int>(34, 30));
  g.special_primes = 32;
  expect_invalid([&] { Context::create(g, SecurityLevel::none); }, "special_primes");
  g.special_primes = 31;
  EXPECT_NO_THROW(Context::create(g, SecurityLevel::none));
  // Degrees that would overflow the prime search or loop forever.
  expect_invalid([&] { CoeffModulus::create(std::size_t(1) << 63, {50}); }, "poly_modulus_degree");
  expect_invalid([&] { PlainModulus::batching(std::size_t(1) << 63, 20); }, "poly_modulus_degree");
}

TEST(HardeningParams, SecurityBoundUsesTheProductsBitCount) {
  // Two 55-bit primes whose product has 109 bits (the 128-bit bound at N = 4096): SEAL counts
  // bits of the product, so this is accepted though the bit sizes sum to 110.
  const u64 step = 2 * 4096;
  std::vector<u64> primes;
  for (u64 q = (u64(1) << 54) + 1; primes.size() < 2; q += step)
    if (is_prime(q)) primes.push_back(q);
  boost::multiprecision::cpp_int prod = primes[0];
  prod *= primes[1];
  ASSERT_EQ(boost::multiprecision::msb(prod) + 1, 109u);  // the oracle: an exact product
  EncryptionParameters p(SchemeType::ckks);
  p.poly_modulus_degree = 4096;
  p.coeff_modulus = primes;
  EXPECT_NO_THROW(Context::create(p, SecurityLevel::tc128));
}

TEST(HardeningParams, BfvDefaultIsSealsTable) {
  // SEAL 4.x's BFVDefault values (util/globals.cpp), spot-checked where Veil used to differ.
  EXPECT_EQ(CoeffModulus::bfv_default(1024), std::vector<u64>{132120577ull});
  EXPECT_EQ(CoeffModulus::bfv_default(2048), std::vector<u64>{18014398492704769ull});
  EXPECT_EQ(CoeffModulus::bfv_default(2048, SecurityLevel::tc192), std::vector<u64>{137438691329ull});
  EXPECT_EQ(CoeffModulus::bfv_default(4096, SecurityLevel::tc256),
            std::vector<u64>{288230376135196673ull});
}

TEST(HardeningThreads, ThreadCountsAreBounded) {
  expect_invalid([] { set_num_threads(-1); }, "n");
  expect_invalid([] { set_num_threads(max_num_threads() + 1); }, "n");
  const int before = num_threads();
  set_num_threads(1);
  EXPECT_EQ(num_threads(), 1);
  set_num_threads(0);
  EXPECT_EQ(num_threads(), before);
}

}  // namespace veil::test
