// Bad inputs to the NTT-form schemes (CKKS, BGV) and to hybrid key switching: each raises
// veil::InvalidArgument (core/error.h) whose message names the offending argument
// (DESIGN.md "Errors": no segfault, no silent wrong answer). Each test also checks the nearest
// valid input is accepted, so that a check firing on everything would fail.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "veil/api/encryptor.h"
#include "veil/api/evaluator.h"
#include "veil/bfv/batch_encoder.h"
#include "veil/ckks/encoder.h"
#include "veil/core/error.h"
#include "veil/rlwe/context.h"
#include "veil/rlwe/keygen.h"
#include "veil/rlwe/params.h"

namespace {

using veil::BatchEncoder;
using veil::Ciphertext;
using veil::CKKSEncoder;
using veil::CoeffModulus;
using veil::ContextPtr;
using veil::Device;
using veil::Encryptor;
using veil::Evaluator;
using veil::GaloisKeys;
using veil::InvalidArgument;
using veil::KeyGenerator;
using veil::PlainModulus;
using veil::Plaintext;
using veil::SchemeType;
using cd = std::complex<double>;

// Runs `stmt`, expects exactly `Type` (not merely a std::exception) and `word` in the message.
#define EXPECT_THROW_NAMING(stmt, Type, word)                                                      \
  do {                                                                                             \
    bool caught_ = false;                                                                          \
    std::string msg_;                                                                              \
    try {                                                                                          \
      stmt;                                                                                        \
    } catch (const Type &ex_) {                                                                    \
      caught_ = true;                                                                              \
      msg_ = ex_.what();                                                                           \
    } catch (const std::exception &ex_) {                                                          \
      ADD_FAILURE() << #stmt " threw the wrong type (want " #Type "): " << ex_.what();             \
    }                                                                                              \
    EXPECT_TRUE(caught_) << #stmt " did not throw " #Type;                                         \
    if (caught_) {                                                                                 \
      EXPECT_NE(msg_.find(word), std::string::npos)                                                \
          << #stmt ": message \"" << msg_ << "\" does not name " << word;                          \
    }                                                                                              \
  } while (0)

constexpr std::size_t kN = 8192;
const double kScale = std::ldexp(1.0, 40);

// CKKS: Q = 60 + 3 x 40 bits (levels 0..3), one 60-bit special prime (280 bits; the 128-bit
// bound for N = 2^13 is 218, so security is off: these tests are about argument checking).
struct Ckks {
  Ckks()
      : ctx(make()), kg(ctx, Device::cpu(), 3), pk(kg.create_public_key()), encoder(ctx),
        encryptor(ctx, pk, 4), ev(ctx) {}
  static ContextPtr make() {
    veil::EncryptionParameters p(SchemeType::ckks);
    p.poly_modulus_degree = kN;
    p.coeff_modulus = CoeffModulus::create(kN, {60, 40, 40, 40, 60});
    return veil::Context::create(p, veil::SecurityLevel::none);
  }
  Ciphertext encrypt(double value, double scale, std::size_t level) const {
    return encryptor.encrypt(
        encoder.encode(std::vector<cd>(encoder.slot_count(), cd(value, 0)), scale, level));
  }
  ContextPtr ctx;
  KeyGenerator kg;
  veil::PublicKey pk;
  CKKSEncoder encoder;
  Encryptor encryptor;
  Evaluator ev;
};
Ckks &ckks() {
  static Ckks c;
  return c;
}

// BGV: N = 2^13, Q = 3 x 40 bits + a 50-bit special prime, t a 20-bit batching prime.
struct Bgv {
  Bgv()
      : ctx(make()), kg(ctx, Device::cpu(), 5), encoder(ctx),
        encryptor(ctx, kg.create_public_key(), 6), ev(ctx) {}
  static ContextPtr make() {
    veil::EncryptionParameters p(SchemeType::bgv);
    p.poly_modulus_degree = kN;
    p.coeff_modulus = CoeffModulus::create(kN, {40, 40, 40, 50});
    p.plain_modulus = PlainModulus::batching(kN, 20);
    return veil::Context::create(p);
  }
  Ciphertext encrypt(std::uint64_t v) const {
    return encryptor.encrypt(encoder.encode(std::vector<std::uint64_t>(kN, v)));
  }
  ContextPtr ctx;
  KeyGenerator kg;
  BatchEncoder encoder;
  Encryptor encryptor;
  Evaluator ev;
};
Bgv &bgv() {
  static Bgv b;
  return b;
}

TEST(Issue3BadInput, CkksScaleMismatchInAdd) {
  Ckks &C = ckks();
  const Ciphertext a = C.encrypt(0.5, kScale, 3), b = C.encrypt(0.25, std::ldexp(1.0, 30), 3);
  EXPECT_THROW_NAMING(C.ev.add(a, b), InvalidArgument, "scale");
  EXPECT_THROW_NAMING(C.ev.add(a, b), InvalidArgument, "encrypted2");
  EXPECT_THROW_NAMING(C.ev.sub(a, b), InvalidArgument, "scale");
  Ciphertext x = a;
  EXPECT_THROW_NAMING(C.ev.add_inplace(x, b), InvalidArgument, "scale");
  EXPECT_THROW_NAMING(C.ev.add_many({a, a, b}), InvalidArgument, "scale");
  // A plaintext at another scale in add_plain / sub_plain.
  const Plaintext p30 = C.encoder.encode(cd(0.25, 0), std::ldexp(1.0, 30), 3);
  EXPECT_THROW_NAMING(C.ev.add_plain(a, p30), InvalidArgument, "plain");
  EXPECT_THROW_NAMING(C.ev.sub_plain(a, p30), InvalidArgument, "scale");
  // Just beyond the tolerance (relative 1e-6): 1e-5 is rejected...
  const Ciphertext c = C.encrypt(0.25, kScale * (1 + 1e-5), 3);
  EXPECT_THROW_NAMING(C.ev.add(a, c), InvalidArgument, "scale");
  // ...while equal scales, and scales within the tolerance, are accepted.
  EXPECT_NO_THROW(C.ev.add(a, C.encrypt(0.25, kScale, 3)));
  EXPECT_NO_THROW(C.ev.add(a, C.encrypt(0.25, kScale * (1 + 1e-9), 3)));
  EXPECT_NO_THROW(C.ev.add_plain(a, C.encoder.encode(cd(0.25, 0), kScale, 3)));
  // A product (scale 2^80) plus a fresh ciphertext (2^40) is a mismatch too.
  EXPECT_THROW_NAMING(C.ev.add(C.ev.multiply(a, a), a), InvalidArgument, "scale");
}

TEST(Issue3BadInput, RescaleAtLevelZero) {
  Ckks &C = ckks();
  const Ciphertext top = C.encrypt(0.5, kScale, 3);
  const Ciphertext zero = C.ev.mod_switch_to(top, 0);
  ASSERT_EQ(zero.level(), 0u);
  EXPECT_THROW_NAMING(C.ev.rescale_to_next(zero), InvalidArgument, "encrypted");
  EXPECT_THROW_NAMING(C.ev.rescale_to_next(zero), InvalidArgument, "0");
  Ciphertext x = zero;
  EXPECT_THROW_NAMING(C.ev.rescale_to_next_inplace(x), InvalidArgument, "encrypted");
  EXPECT_THROW_NAMING(C.ev.mod_switch_to_next(zero), InvalidArgument, "encrypted");
  // Switching "down" to a higher level.
  EXPECT_THROW_NAMING(C.ev.mod_switch_to(zero, 1), InvalidArgument, "level");
  const Plaintext p0 = C.encoder.encode(cd(0.5, 0), kScale, 0);
  EXPECT_THROW_NAMING(C.ev.mod_switch_to(p0, 2), InvalidArgument, "level");
  // BGV at level 0.
  Bgv &B = bgv();
  const Ciphertext b0 = B.ev.mod_switch_to(B.encrypt(7), 0);
  EXPECT_THROW_NAMING(B.ev.mod_switch_to_next(b0), InvalidArgument, "encrypted");
  // Level 1 rescales fine.
  EXPECT_NO_THROW(C.ev.rescale_to_next(C.ev.mod_switch_to(C.ev.multiply(top, top), 1)));
}

TEST(Issue3BadInput, OperandsAtDifferentLevels) {
  {
    Ckks &C = ckks();
    const Ciphertext a = C.encrypt(0.5, kScale, 3), b = C.ev.mod_switch_to(a, 2);
    EXPECT_THROW_NAMING(C.ev.add(a, b), InvalidArgument, "level");
    EXPECT_THROW_NAMING(C.ev.add(a, b), InvalidArgument, "encrypted2");
    EXPECT_THROW_NAMING(C.ev.sub(b, a), InvalidArgument, "level");
    EXPECT_THROW_NAMING(C.ev.multiply(a, b), InvalidArgument, "level");
    EXPECT_THROW_NAMING(C.ev.multiply(b, a), InvalidArgument, "encrypted2");
    // A plaintext at another level.
    const Plaintext p3 = C.encoder.encode(cd(0.5, 0), kScale, 3);
    EXPECT_THROW_NAMING(C.ev.multiply_plain(b, p3), InvalidArgument, "plain");
    EXPECT_THROW_NAMING(C.ev.add_plain(b, p3), InvalidArgument, "level");
    // Aligned, they are accepted.
    EXPECT_NO_THROW(C.ev.add(C.ev.mod_switch_to(a, 2), b));
    EXPECT_NO_THROW(C.ev.multiply_plain(b, C.ev.mod_switch_to(p3, 2)));
  }
  {
    Bgv &B = bgv();
    const Ciphertext a = B.encrypt(3), b = B.ev.mod_switch_to_next(a);
    EXPECT_THROW_NAMING(B.ev.add(a, b), InvalidArgument, "level");
    EXPECT_THROW_NAMING(B.ev.sub(a, b), InvalidArgument, "encrypted2");
    EXPECT_THROW_NAMING(B.ev.multiply(a, b), InvalidArgument, "level");
    EXPECT_NO_THROW(B.ev.multiply(B.ev.mod_switch_to_next(a), b));
  }
}

TEST(Issue3BadInput, CkksEncodeOverflowsQAtLevel) {
  Ckks &C = ckks();
  const std::size_t slots = C.encoder.slot_count();
  // Level 0 has one 60-bit prime: scale 2^70 is itself above Q_0 (the scale is named first).
  EXPECT_THROW_NAMING(C.encoder.encode(std::vector<cd>(slots, cd(1, 0)), std::ldexp(1.0, 70), 0),
                      InvalidArgument, "scale");
  EXPECT_THROW_NAMING(C.encoder.encode(std::vector<double>(slots, 1.0), std::ldexp(1.0, 70), 0),
                      InvalidArgument, "scale");
  EXPECT_THROW_NAMING(C.encoder.encode(cd(1, 0), std::ldexp(1.0, 70), 0), InvalidArgument, "scale");
  // A scale below Q_0 with values too large for it names the values.
  EXPECT_THROW_NAMING(C.encoder.encode(std::vector<cd>(slots, cd(1e6, 0)), std::ldexp(1.0, 50), 0),
                      InvalidArgument, "values");
  // Huge values at scale 2^40: 1e9 in every slot puts 1e9 * 2^40 ~ 2^70 > 2^60 in a coefficient.
  const std::vector<cd> huge(slots, cd(1e9, -1e9));
  EXPECT_THROW_NAMING(C.encoder.encode(huge, kScale, 0), InvalidArgument, "values");
  // The same inputs fit at the top level (60 + 3 x 40 = 180 bits).
  EXPECT_NO_THROW(C.encoder.encode(huge, kScale, 3));
  EXPECT_NO_THROW(C.encoder.encode(std::vector<cd>(slots, cd(1, 0)), std::ldexp(1.0, 70), 3));
  // Values that are not finite, scales that are not positive.
  std::vector<cd> nan(4, cd(0.5, 0));
  nan[2] = cd(std::nan(""), 0);
  EXPECT_THROW_NAMING(C.encoder.encode(nan, kScale, 3), InvalidArgument, "values");
  EXPECT_THROW_NAMING(C.encoder.encode(std::vector<cd>(4, cd(1, 0)), -1.0, 3), InvalidArgument,
                      "scale");
  EXPECT_THROW_NAMING(C.encoder.encode(std::vector<cd>(4, cd(1, 0)), kScale, 4), InvalidArgument,
                      "level");
  // A product whose scale (2^80) would exceed Q at its level: level 0 has 60 bits; level 1 (100
  // bits) holds it.
  const Ciphertext a = C.ev.mod_switch_to(C.encrypt(0.5, kScale, 3), 0);
  EXPECT_THROW_NAMING(C.ev.multiply(a, a), InvalidArgument, "scale");
  EXPECT_THROW_NAMING(C.ev.square(a), InvalidArgument, "scale");
  const Ciphertext a1 = C.ev.mod_switch_to(C.encrypt(0.5, kScale, 3), 1);
  EXPECT_NO_THROW(C.ev.multiply(a1, a1));
}

TEST(Issue3BadInput, WrongSlotCount) {
  Ckks &C = ckks();
  const std::size_t slots = C.encoder.slot_count();
  ASSERT_EQ(slots, kN / 2);
  EXPECT_THROW_NAMING(C.encoder.encode(std::vector<cd>(slots + 1, cd(0.1, 0)), kScale, 3),
                      InvalidArgument, "values");
  EXPECT_THROW_NAMING(C.encoder.encode(std::vector<double>(kN, 0.1), kScale, 3), InvalidArgument,
                      "values");
  EXPECT_NO_THROW(C.encoder.encode(std::vector<cd>(slots, cd(0.1, 0)), kScale, 3));
  // BGV's BatchEncoder takes at most N values.
  Bgv &B = bgv();
  EXPECT_THROW_NAMING(B.encoder.encode(std::vector<std::uint64_t>(kN + 1, 1)), InvalidArgument,
                      "values");
  EXPECT_NO_THROW(B.encoder.encode(std::vector<std::uint64_t>(kN, 1)));
}

TEST(Issue3BadInput, ConjugateOrRotateWithoutKey) {
  Ckks &C = ckks();
  const Ciphertext a = C.encrypt(0.5, kScale, 3);
  // Only the key for step 1: no conjugation key, and 3 = 4 - 1 lacks the key for 4.
  const GaloisKeys one = C.kg.create_galois_keys({1}, false);
  EXPECT_THROW_NAMING(C.ev.conjugate(a, one), InvalidArgument, "galois_keys");
  EXPECT_THROW_NAMING(C.ev.rotate_vector(a, 3, one), InvalidArgument, "galois_keys");
  EXPECT_THROW_NAMING(C.ev.rotate_vector(a, -2, one), InvalidArgument, "galois_keys");
  EXPECT_THROW_NAMING(C.ev.rotate_many(a, {1, 2}, one), InvalidArgument, "galois_keys");
  EXPECT_THROW_NAMING(C.ev.apply_galois(a, C.ctx->galois_elt_column(), one), InvalidArgument,
                      "galois_keys");
  EXPECT_NO_THROW(C.ev.rotate_vector(a, 1, one));
  // Only the conjugation key: no rotation at all.
  const GaloisKeys conj = C.kg.create_galois_keys({}, true);
  EXPECT_THROW_NAMING(C.ev.rotate_vector(a, 1, conj), InvalidArgument, "galois_keys");
  EXPECT_NO_THROW(C.ev.conjugate(a, conj));
  // An empty set of keys (no elements).
  const GaloisKeys none(C.ctx, Device::cpu());
  EXPECT_THROW_NAMING(C.ev.conjugate(a, none), InvalidArgument, "galois_keys");
  EXPECT_THROW_NAMING(C.ev.rotate_vector(a, 5, none), InvalidArgument, "galois_keys");
  // BGV: rotate_columns without the column key.
  Bgv &B = bgv();
  const GaloisKeys bone = B.kg.create_galois_keys({1}, false);
  EXPECT_THROW_NAMING(B.ev.rotate_columns(B.encrypt(2), bone), InvalidArgument, "galois_keys");
}

TEST(Issue3BadInput, SpecialPrimesTooSmallForAlpha) {
  for (SchemeType s : {SchemeType::ckks, SchemeType::bgv}) {
    SCOPED_TRACE(s == SchemeType::ckks ? "ckks" : "bgv");
    veil::EncryptionParameters p(s);
    p.poly_modulus_degree = kN;
    // Digits of alpha = 3 forty-bit primes (120 bits) against one 60-bit special prime.
    p.coeff_modulus = CoeffModulus::create(kN, {40, 40, 40, 40, 40, 40, 60});
    p.special_primes = 1;
    p.alpha = 3;
    if (s == SchemeType::bgv)
      p.plain_modulus = PlainModulus::batching(kN, 20);
    EXPECT_THROW_NAMING(veil::Context::create(p, veil::SecurityLevel::none), InvalidArgument,
                        "special_primes");
    EXPECT_THROW_NAMING(veil::Context::create(p, veil::SecurityLevel::none), InvalidArgument,
                        "alpha");
    // The default alpha (= special_primes = 1) is accepted with the same primes.
    p.alpha = 0;
    EXPECT_NO_THROW(veil::Context::create(p, veil::SecurityLevel::none));
    // alpha = 1 but the special prime (30 bits) is smaller than a 40-bit digit.
    p.coeff_modulus = CoeffModulus::create(kN, {40, 40, 40, 40, 40, 40, 30});
    p.alpha = 1;
    EXPECT_THROW_NAMING(veil::Context::create(p, veil::SecurityLevel::none), InvalidArgument,
                        "special_primes");
  }
}

} // namespace
