// Bad input: every public entry rejects what is outside its domain with a typed exception whose
// message names the argument (DESIGN.md "Errors": no segfault, no silent wrong answer). One test
// per case; each asserts the exception type (veil::InvalidArgument or veil::TypeMismatch, which
// are unrelated types) and the name. The parameter and BFV cases come first; the NTT-form schemes
// (CKKS, BGV: scales, levels, slot counts, Galois keys) and hybrid key switching follow, where each
// test also checks the nearest valid input is accepted, so that a check firing on everything would
// fail.
#include <gtest/gtest.h>

#include <cmath>
#include <complex>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "batch_util.h"
#include "ckks_util.h"
#include "veil/backend/device.h"
#include "veil/core/error.h"

namespace {

using namespace veil;
using namespace veil::test;

// ---- moduli for bad parameters (primality by test_util.h's Miller-Rabin) -----------------------

// The largest q < 2^bits with q = 1 mod 2N and is_prime(q) == want_prime.
u64 find_ntt_shaped(int bits, u64 n, bool want_prime) {
  const u64 m = 2 * n;
  u64 q = ((u64(1) << bits) - 1) / m * m + 1;
  while (is_prime(q) != want_prime)
    q -= m;
  return q;
}

// The largest prime q < 2^bits with q != 1 mod 2N.
u64 find_non_ntt_prime(int bits, u64 n) {
  u64 q = (u64(1) << bits) - 1;
  while (!is_prime(q) || (q - 1) % (2 * n) == 0)
    q -= 2;
  return q;
}

// ---- shared small parameters ------------------------------------------------------------------

constexpr std::size_t kN = 4096;

EncryptionParameters base_params(u64 t = 65537) {
  EncryptionParameters p(veil::SchemeType::bfv);
  p.poly_modulus_degree = kN;
  p.coeff_modulus = CoeffModulus::bfv_default(kN);
  p.plain_modulus = t;
  return p;
}

// Two contexts with different parameters (different t) and their objects.
struct Pair {
  ContextPtr a = Context::create(base_params());
  ContextPtr b = Context::create(base_params(PlainModulus::batching(kN, 20)));
  KeyGenerator kga{a, Device::cpu(), 1}, kgb{b, Device::cpu(), 2};
  PublicKey pka = kga.create_public_key(), pkb = kgb.create_public_key();
  BatchEncoder enca{a}, encb{b};
  Encryptor ea{a, pka, 3}, eb{b, pkb, 4};
  Evaluator eva{a};
  Ciphertext ca = ea.encrypt(enca.encode({1, 2, 3}));
  Ciphertext cb = eb.encrypt(encb.encode({4, 5, 6}));
};

Pair &pair() {
  static Pair p;
  return p;
}

// ---- parameters -------------------------------------------------------------------------------

TEST(BadInput, PolyModulusDegreeNotPowerOfTwo) {
  EncryptionParameters p = base_params();
  p.poly_modulus_degree = 3000;
  EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "poly_modulus_degree");
  p.poly_modulus_degree = 4097;
  EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "poly_modulus_degree");
  EXPECT_THROW_NAMING(CoeffModulus::create(3000, {40, 40}), InvalidArgument, "poly_modulus_degree");
}

TEST(BadInput, PolyModulusDegreeOutOfRange) {
  for (std::size_t n : {std::size_t(0), std::size_t(512), std::size_t(1) << 18}) {
    EncryptionParameters p = base_params();
    p.poly_modulus_degree = n;
    if (n > 131072) {  // beyond SEAL's range: even the prime search refuses it
      EXPECT_THROW_NAMING(CoeffModulus::create(n, {50, 50}), InvalidArgument, "poly_modulus_degree");
      continue;
    }
    if (n)
      p.coeff_modulus = CoeffModulus::create(n, {50, 50});
    EXPECT_THROW_NAMING(Context::create(p, SecurityLevel::none), InvalidArgument,
                        "poly_modulus_degree");
  }
  EXPECT_THROW_NAMING(CoeffModulus::bfv_default(512), InvalidArgument, "poly_modulus_degree");
}

TEST(BadInput, CoeffModulusNotNttFriendly) {
  const u64 q = find_non_ntt_prime(40, kN);
  ASSERT_TRUE(is_prime(q));
  ASSERT_NE((q - 1) % (2 * kN), 0u);
  EncryptionParameters p = base_params();
  p.coeff_modulus[1] = q;
  EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "coeff_modulus");
  // Friendly for N = 2048 (q = 1 mod 4096) but not for N = 4096.
  const u64 half = find_ntt_shaped(36, 2048, true);
  if ((half - 1) % (2 * kN) != 0) {
    p.coeff_modulus[1] = half;
    EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "NTT-friendly");
  }
}

TEST(BadInput, CoeffModulusRepeated) {
  EncryptionParameters p = base_params();
  p.coeff_modulus = {p.coeff_modulus[0], p.coeff_modulus[0], p.coeff_modulus[2]};
  EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "coeff_modulus");
  EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "repeated");
}

TEST(BadInput, CoeffModulusTooLarge) {
  // A genuine 61-bit NTT-friendly prime: only its size is wrong.
  const u64 q61 = find_ntt_shaped(61, kN, true);
  ASSERT_EQ(q61 >> 60, 1u);
  EncryptionParameters p = base_params();
  p.coeff_modulus = {q61, CoeffModulus::create(kN, {40})[0]};
  EXPECT_THROW_NAMING(Context::create(p, SecurityLevel::none), InvalidArgument, "coeff_modulus");
  EXPECT_THROW_NAMING(Context::create(p, SecurityLevel::none), InvalidArgument, "60 bits");
  EXPECT_THROW_NAMING(CoeffModulus::create(kN, {61}), InvalidArgument, "bit_sizes");
  EXPECT_THROW_NAMING(CoeffModulus::create(kN, {40, 1}), InvalidArgument, "bit_sizes");
}

TEST(BadInput, CoeffModulusNotPrime) {
  const u64 c = find_ntt_shaped(36, kN, false); // = 1 mod 2N, composite
  ASSERT_FALSE(is_prime(c));
  EncryptionParameters p = base_params();
  p.coeff_modulus[0] = c;
  EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "coeff_modulus");
  EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "not prime");
}

TEST(BadInput, CoeffModulusEmpty) {
  EncryptionParameters p = base_params();
  p.coeff_modulus.clear();
  EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "coeff_modulus");
}

TEST(BadInput, SpecialPrimesLeaveNoCiphertextPrime) {
  EncryptionParameters p = base_params();
  p.special_primes = p.coeff_modulus.size();
  EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "special_primes");
}

TEST(BadInput, PlainModulusNotBatchingFriendly) {
  // 65521 is prime but 65520 is not a multiple of 2N = 8192; 1000 is composite. Both are valid
  // BFV plain moduli (co-prime to Q), so the context accepts them; the BatchEncoder does not.
  for (u64 t : {u64(65521), u64(1000)}) {
    const ContextPtr ctx = Context::create(base_params(t));
    EXPECT_FALSE(ctx->batching_enabled()) << t;
    EXPECT_THROW_NAMING(BatchEncoder{ctx}, InvalidArgument, "plain_modulus");
  }
}

TEST(BadInput, PlainModulusInvalid) {
  EncryptionParameters p = base_params();
  for (u64 t : {u64(0), u64(1), u64(1) << 60, p.coeff_modulus[1]}) {
    p.plain_modulus = t;
    EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "plain_modulus");
  }
  EXPECT_THROW_NAMING(PlainModulus::batching(kN, 61), InvalidArgument, "bits");
  EXPECT_THROW_NAMING(PlainModulus::batching(kN, 1), InvalidArgument, "bits");
}

TEST(BadInput, AboveSecurityBound) {
  // 2 x 60 bits = 120 > 109, the 128-bit bound for N = 4096.
  EncryptionParameters p = base_params();
  p.coeff_modulus = CoeffModulus::create(kN, {60, 60});
  EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "coeff_modulus");
  EXPECT_THROW_NAMING(Context::create(p, SecurityLevel::tc128), InvalidArgument, "security");
  // Accepted when the check is switched off explicitly, and usable.
  ContextPtr ctx;
  ASSERT_NO_THROW(ctx = Context::create(p, SecurityLevel::none));
  EXPECT_EQ(ctx->security(), SecurityLevel::none);
  EXPECT_EQ(ctx->total_qp_bits(), 120);
  // SEAL's 128-bit default chain is above the 192-bit bound for N = 8192 (218 > 152).
  EncryptionParameters q = base_params();
  q.poly_modulus_degree = 8192;
  q.coeff_modulus = CoeffModulus::bfv_default(8192);
  EXPECT_NO_THROW(Context::create(q));
  EXPECT_THROW_NAMING(Context::create(q, SecurityLevel::tc192), InvalidArgument, "coeff_modulus");
  // The 192-bit default chain is within it.
  q.coeff_modulus = CoeffModulus::bfv_default(8192, SecurityLevel::tc192);
  EXPECT_NO_THROW(Context::create(q, SecurityLevel::tc192));
}

TEST(BadInput, ParameterNamesFromStrings) {
  EXPECT_THROW_NAMING(veil::mul_method_from_string("karatsuba"), InvalidArgument, "mul_method");
  EXPECT_THROW_NAMING(veil::scheme_from_string("tfhe"), InvalidArgument, "scheme");
}

// ---- encoding ---------------------------------------------------------------------------------

TEST(BadInput, EncodeValueNotBelowPlainModulus) {
  BatchEncoder &enc = pair().enca;
  const u64 t = pair().a->plain_modulus();
  std::vector<u64> v(kN, 1);
  v[17] = t;
  EXPECT_THROW_NAMING(enc.encode(v), InvalidArgument, "values");
  EXPECT_THROW_NAMING(enc.encode(v), InvalidArgument, "plain_modulus");
  v[17] = ~u64(0);
  EXPECT_THROW_NAMING(enc.encode(v), InvalidArgument, "values");
  v[17] = t - 1;
  EXPECT_NO_THROW(enc.encode(v));
  const std::int64_t half = static_cast<std::int64_t>((t - 1) / 2);
  EXPECT_THROW_NAMING(enc.encode_signed({half + 1}), InvalidArgument, "values");
  EXPECT_THROW_NAMING(enc.encode_signed({0, -half - 1}), InvalidArgument, "values");
  EXPECT_NO_THROW(enc.encode_signed({half, -half}));
}

TEST(BadInput, EncodeTooManyValues) {
  BatchEncoder &enc = pair().enca;
  EXPECT_THROW_NAMING(enc.encode(std::vector<u64>(kN + 1, 0)), InvalidArgument, "values");
  EXPECT_THROW_NAMING(enc.encode_signed(std::vector<std::int64_t>(2 * kN, 0)), InvalidArgument,
                      "values");
}

// ---- mixing contexts --------------------------------------------------------------------------

TEST(BadInput, OperandsFromDifferentContexts) {
  Pair &P = pair();
  ASSERT_NE(P.a->parameter_hash(), P.b->parameter_hash());
  const Evaluator &ev = P.eva;
  EXPECT_THROW_NAMING(ev.add(P.ca, P.cb), InvalidArgument, "encrypted2");
  EXPECT_THROW_NAMING(ev.sub(P.ca, P.cb), InvalidArgument, "encrypted2");
  EXPECT_THROW_NAMING(ev.multiply(P.ca, P.cb), InvalidArgument, "encrypted2");
  EXPECT_THROW_NAMING(ev.add(P.cb, P.ca), InvalidArgument, "encrypted1");
  EXPECT_THROW_NAMING(ev.negate(P.cb), InvalidArgument, "encrypted");
  EXPECT_THROW_NAMING(ev.square(P.cb), InvalidArgument, "encrypted");
  const Plaintext pb = P.encb.encode({1});
  EXPECT_THROW_NAMING(ev.add_plain(P.ca, pb), InvalidArgument, "plain");
  EXPECT_THROW_NAMING(ev.sub_plain(P.ca, pb), InvalidArgument, "plain");
  EXPECT_THROW_NAMING(ev.multiply_plain(P.ca, pb), InvalidArgument, "plain");
  EXPECT_THROW_NAMING(P.ea.encrypt(pb), InvalidArgument, "plain");
  EXPECT_THROW_NAMING(P.enca.decode(pb), InvalidArgument, "plain");
  const Ciphertext prod = ev.multiply(P.ca, P.ca);
  EXPECT_THROW_NAMING(ev.relinearize(prod, P.kgb.create_relin_keys()), InvalidArgument,
                      "relin_keys");
  const GaloisKeys gkb = P.kgb.create_galois_keys({1}, true);
  EXPECT_THROW_NAMING(ev.rotate_rows(P.ca, 1, gkb), InvalidArgument, "galois_keys");
  EXPECT_THROW_NAMING(ev.rotate_columns(P.ca, gkb), InvalidArgument, "galois_keys");
  EXPECT_THROW_NAMING(ev.rotate_many(P.ca, {1}, gkb), InvalidArgument, "galois_keys");
  Decryptor da(P.a, P.kga.secret_key());
  EXPECT_THROW_NAMING(da.decrypt(P.cb), InvalidArgument, "encrypted");
  EXPECT_THROW_NAMING(da.invariant_noise_budget(P.cb), InvalidArgument, "encrypted");
}

// The one "same context" gate (check_compatible) gives both parameter sets; the key gate
// (check_key) names the key and refuses another key set of the same parameters; the
// CKKS-only operations are refused at the operation, before the scheme's code runs.
TEST(BadInput, OneGateNamesTheArgumentAndBothParameterSets) {
  Pair &P = pair();
  const std::string primes = std::to_string(base_params().coeff_modulus.size()) + " primes";
  const std::string ours = "BFV, poly_modulus_degree 4096, " + primes + ", plain_modulus 65537";
  const std::string theirs = "BFV, poly_modulus_degree 4096, " + primes + ", plain_modulus " +
                             std::to_string(PlainModulus::batching(kN, 20));
  try {
    P.eva.add(P.ca, P.cb);
    ADD_FAILURE() << "no exception";
  } catch (const InvalidArgument &e) {
    const std::string m = e.what();
    EXPECT_EQ(m.rfind("encrypted2: belongs to a different context", 0), 0u) << m;
    EXPECT_NE(m.find("(" + theirs + "; the operation's: " + ours + ")"), std::string::npos) << m;
  }
  // Same parameters, another secret key: the keys' gate names the key.
  KeyGenerator other(P.a, Device::cpu(), 99);
  const Ciphertext prod = P.eva.multiply(P.ca, P.ca);
  EXPECT_THROW_NAMING(P.eva.relinearize(prod, other.create_relin_keys()), InvalidArgument,
                      "relin_keys: belongs to another key set");
  const GaloisKeys gk = other.create_galois_keys({1}, true);
  EXPECT_THROW_NAMING(P.eva.rotate_rows(P.ca, 1, gk), InvalidArgument,
                      "galois_keys: belongs to another key set");
  EXPECT_THROW_NAMING(P.eva.rotate_many(P.ca, {1}, gk), InvalidArgument,
                      "galois_keys: belongs to another key set");
  EXPECT_THROW_NAMING(Decryptor(P.a, other.secret_key()).decrypt(P.ca), InvalidArgument,
                      "encrypted: belongs to another key set");
  // The nearest valid input passes.
  EXPECT_NO_THROW(P.eva.relinearize(prod, P.kga.create_relin_keys()));
  // CKKS-only operations on a BFV ciphertext.
  EXPECT_THROW_NAMING(P.eva.multiply_scalar(P.ca, 2.0, 1.0), InvalidArgument,
                      "multiply_scalar is a CKKS operation");
  EXPECT_THROW_NAMING(P.eva.add_scalar(P.ca, 2.0), InvalidArgument,
                      "add_scalar is a CKKS operation");
  EXPECT_THROW_NAMING(P.eva.multiply_monomial(P.ca, 1), InvalidArgument,
                      "multiply_monomial is a CKKS operation");
  EXPECT_THROW_NAMING(P.eva.mod_raise(P.ca), InvalidArgument, "mod_raise is a CKKS operation");
  EXPECT_THROW_NAMING(P.eva.scalar_combination({&P.ca}, {1.0}, 0.0, 1.0, 0), InvalidArgument,
                      "scalar_combination is a CKKS operation");
  EXPECT_THROW_NAMING(P.eva.multiply_relinearize_rescale(P.ca, P.ca, P.kga.create_relin_keys()),
                      InvalidArgument, "multiply_relinearize_rescale is a CKKS operation");
  // Lists of operands: a null entry is named, not dereferenced.
  EXPECT_THROW_NAMING(P.eva.scalar_combination({&P.ca, nullptr}, {1.0, 1.0}, 0.0, 1.0, 0),
                      InvalidArgument, "encrypted: a ciphertext is null");
  const Plaintext one = P.enca.encode({1});
  EXPECT_THROW_NAMING(P.eva.multiply_plain_sum({&P.ca}, {nullptr}), InvalidArgument,
                      "plain: a plaintext is null");
  EXPECT_NO_THROW(P.eva.multiply_plain_sum({&P.ca}, {&one}));
}

// Two contexts whose summaries read the same (scheme, N, prime count, t) but whose primes
// differ: the message says what differs instead of printing two equal summaries.
TEST(BadInput, SameSummaryDifferentPrimesSaysWhatDiffers) {
  EncryptionParameters p = base_params();
  const std::size_t count = p.coeff_modulus.size();
  p.coeff_modulus = CoeffModulus::create(kN, std::vector<int>(count, 30));
  const ContextPtr other = Context::create(p);
  KeyGenerator kg(other, Device::cpu(), 5);
  BatchEncoder enc(other);
  const Ciphertext c = Encryptor(other, kg.create_public_key(), 6).encrypt(enc.encode({1}));
  Pair &P = pair();
  std::string bits;
  for (std::size_t i = 0; i < count; ++i) bits += (i ? ",30" : "30");
  EXPECT_THROW_NAMING(P.eva.add(P.ca, c), InvalidArgument,
                      "they differ in the primes' bit sizes (" + bits + " against ");
}

TEST(BadInput, EncryptorDecryptorFromKeyOfAnotherContext) {
  // Decrypting with a public key does not compile; a key of another context must be refused.
  static_assert(!std::is_constructible_v<Decryptor, ContextPtr, const PublicKey &>);
  static_assert(!std::is_convertible_v<const PublicKey &, const SecretKey &>);
  static_assert(!std::is_convertible_v<const SecretKey &, const PublicKey &>);
  Pair &P = pair();
  EXPECT_THROW_NAMING(Encryptor(P.b, P.pka), InvalidArgument, "public_key");
  EXPECT_THROW_NAMING(Encryptor(P.b, P.kga.secret_key()), InvalidArgument, "secret_key");
  EXPECT_THROW_NAMING(Decryptor(P.b, P.kga.secret_key()), InvalidArgument, "secret_key");
  EXPECT_THROW_NAMING(KeyGenerator(P.b, P.kga.secret_key()), InvalidArgument, "secret_key");
}

// ---- operation preconditions ------------------------------------------------------------------

TEST(BadInput, RelinearizeNeedsSizeThree) {
  Pair &P = pair();
  const RelinKeys rlk = P.kga.create_relin_keys();
  ASSERT_EQ(P.ca.size(), 2u);
  EXPECT_THROW_NAMING(P.eva.relinearize(P.ca, rlk), InvalidArgument, "encrypted");
  const Ciphertext four = P.eva.multiply(P.eva.multiply(P.ca, P.ca), P.ca);
  ASSERT_EQ(four.size(), 4u);
  EXPECT_THROW_NAMING(P.eva.relinearize(four, rlk), InvalidArgument, "size");
  Ciphertext x = P.ca;
  EXPECT_THROW_NAMING(P.eva.relinearize_inplace(x, rlk), InvalidArgument, "encrypted");
  EXPECT_THROW_NAMING(P.eva.relinearize(P.eva.multiply(P.ca, P.ca), RelinKeys{}), InvalidArgument,
                      "relin_keys");
}

TEST(BadInput, MissingGaloisKey) {
  Pair &P = pair();
  const Evaluator &ev = P.eva;
  // Only the column key: no key for step 1 and nothing to compose it from.
  const GaloisKeys cols = P.kga.create_galois_keys({}, true);
  EXPECT_THROW_NAMING(ev.rotate_rows(P.ca, 1, cols), InvalidArgument, "galois_keys");
  EXPECT_THROW_NAMING(ev.apply_galois(P.ca, 9, cols), InvalidArgument, "galois_keys");
  EXPECT_THROW_NAMING(ev.rotate_many(P.ca, {2}, cols), InvalidArgument, "galois_keys");
  // Only step 1: step 3 = 4 - 1 has neither a direct key nor the power-of-two keys it needs.
  const GaloisKeys one = P.kga.create_galois_keys({1}, false);
  EXPECT_THROW_NAMING(ev.rotate_rows(P.ca, 3, one), InvalidArgument, "galois_keys");
  EXPECT_THROW_NAMING(ev.rotate_columns(P.ca, one), InvalidArgument, "galois_keys");
  EXPECT_NO_THROW(ev.rotate_rows(P.ca, 1, one));
}

TEST(BadInput, GaloisArgumentsOutOfRange) {
  Pair &P = pair();
  const GaloisKeys gk = P.kga.create_galois_keys({1}, true);
  EXPECT_THROW_NAMING(P.kga.create_galois_keys({static_cast<int>(kN / 2)}, false), InvalidArgument,
                      "steps");
  EXPECT_THROW_NAMING(P.kga.create_galois_keys({-static_cast<int>(kN / 2)}, false), InvalidArgument,
                      "steps");
  EXPECT_THROW_NAMING(P.kga.create_galois_keys_from_elts({4}), InvalidArgument, "galois_elts");
  EXPECT_THROW_NAMING(P.kga.create_galois_keys_from_elts({std::uint32_t(2 * kN + 1)}),
                      InvalidArgument, "galois_elts");
  EXPECT_THROW_NAMING(P.eva.apply_galois(P.ca, 6, gk), InvalidArgument, "galois_elt");
  EXPECT_THROW_NAMING(P.eva.apply_galois(P.ca, 2 * kN + 3, gk), InvalidArgument, "galois_elt");
  // Automorphisms need a relinearized (size 2) ciphertext.
  EXPECT_THROW_NAMING(P.eva.apply_galois(P.eva.multiply(P.ca, P.ca), 3, gk), InvalidArgument,
                      "encrypted");
  EXPECT_THROW_NAMING(P.eva.rotate_many(P.eva.multiply(P.ca, P.ca), {1}, gk), InvalidArgument,
                      "encrypted");
}

TEST(BadInput, ExponentAndEmptyLists) {
  Pair &P = pair();
  const RelinKeys rlk = P.kga.create_relin_keys();
  EXPECT_THROW_NAMING(P.eva.exponentiate(P.ca, 0, rlk), InvalidArgument, "exponent");
  EXPECT_THROW_NAMING(P.eva.add_many({}), InvalidArgument, "encrypteds");
  EXPECT_THROW_NAMING(P.eva.multiply_many({}, rlk), InvalidArgument, "encrypteds");
}

TEST(BadInput, EmptyObjects) {
  Pair &P = pair();
  EXPECT_THROW_NAMING(P.eva.add(Ciphertext{}, P.ca), InvalidArgument, "encrypted1");
  EXPECT_THROW_NAMING(P.eva.add(P.ca, Ciphertext{}), InvalidArgument, "encrypted2");
  EXPECT_THROW_NAMING(P.eva.negate(Ciphertext{}), InvalidArgument, "encrypted");
  EXPECT_THROW_NAMING(P.ea.encrypt(Plaintext{}), InvalidArgument, "plain");
  EXPECT_THROW_NAMING(Evaluator(nullptr), InvalidArgument, "context");
}

TEST(BadInput, KeySwitchingWithoutSpecialPrime) {
  EncryptionParameters p = base_params();
  p.special_primes = 0;
  const ContextPtr ctx = Context::create(p);
  KeyGenerator kg(ctx, Device::cpu(), 1);
  EXPECT_THROW_NAMING(kg.create_relin_keys(), InvalidArgument, "special_primes");
  EXPECT_THROW_NAMING(kg.create_galois_keys({1}, false), InvalidArgument, "special_primes");
}

// ---- devices ----------------------------------------------------------------------------------

TEST(BadInput, CudaObjectWithCpuObject) {
  if (veil::cuda_device_count() == 0)
    GTEST_SKIP() << "no CUDA device";
  Pair &P = pair();
  const Device gpu(Device::Kind::cuda, 0);
  const Ciphertext cg = P.ca.to(gpu);
  const Evaluator &ev = P.eva;
  EXPECT_THROW_NAMING(ev.add(P.ca, cg), TypeMismatch, "encrypted2");
  EXPECT_THROW_NAMING(ev.add(cg, P.ca), TypeMismatch, "encrypted2");
  EXPECT_THROW_NAMING(ev.multiply(cg, P.ca), TypeMismatch, "encrypted2");
  const Plaintext pt = P.enca.encode({1, 2});
  EXPECT_THROW_NAMING(ev.add_plain(cg, pt), TypeMismatch, "plain");
  EXPECT_THROW_NAMING(ev.multiply_plain(cg, pt), TypeMismatch, "plain");
  // Keys on the CPU, ciphertext on the GPU.
  const RelinKeys rlk = P.kga.create_relin_keys();
  EXPECT_THROW_NAMING(ev.relinearize(ev.multiply(cg, cg), rlk), TypeMismatch, "relin_keys");
  const GaloisKeys gk = P.kga.create_galois_keys({1}, true);
  EXPECT_THROW_NAMING(ev.rotate_rows(cg, 1, gk), TypeMismatch, "galois_keys");
  EXPECT_THROW_NAMING(ev.rotate_columns(cg, gk), TypeMismatch, "galois_keys");
  // Encryptor with a CPU key, plaintext on the GPU; decryptor with a CPU key, GPU ciphertext.
  EXPECT_THROW_NAMING(P.ea.encrypt(P.enca.encode({1}, gpu)), TypeMismatch, "plain");
  Decryptor dec(P.a, P.kga.secret_key());
  EXPECT_THROW_NAMING(dec.decrypt(cg), TypeMismatch, "encrypted");
  // Everything on the GPU works.
  Decryptor dg(P.a, P.kga.secret_key().to(gpu));
  EXPECT_EQ(P.enca.decode(dg.decrypt(cg)).at(2), 3u);
}

// ---- the NTT-form schemes (CKKS, BGV) ----------------------------------------------------------

constexpr std::size_t kNttN = 8192;
const double kScale = std::ldexp(1.0, 40);

// CKKS: Q = 60 + 3 x 40 bits (levels 0..3), one 60-bit special prime (280 bits; the 128-bit
// bound for N = 2^13 is 218, so security is off: these tests are about argument checking).
struct Ckks {
  Ckks()
      : ctx(make()), kg(ctx, Device::cpu(), 3), pk(kg.create_public_key()), encoder(ctx),
        encryptor(ctx, pk, 4), ev(ctx) {}
  static ContextPtr make() {
    return Context::create(make_params(SchemeType::ckks, kNttN, {60, 40, 40, 40, 60}),
                           SecurityLevel::none);
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
Ckks& ckks() {
  static Ckks c;
  return c;
}

// BGV: N = 2^13, Q = 3 x 40 bits + a 50-bit special prime, t a 20-bit batching prime.
struct Bgv {
  Bgv()
      : ctx(make()), kg(ctx, Device::cpu(), 5), encoder(ctx),
        encryptor(ctx, kg.create_public_key(), 6), ev(ctx) {}
  static ContextPtr make() { return Context::create(bgv_params(kNttN, {40, 40, 40, 50})); }
  Ciphertext encrypt(std::uint64_t v) const {
    return encryptor.encrypt(encoder.encode(std::vector<std::uint64_t>(kNttN, v)));
  }
  ContextPtr ctx;
  KeyGenerator kg;
  BatchEncoder encoder;
  Encryptor encryptor;
  Evaluator ev;
};
Bgv& bgv() {
  static Bgv b;
  return b;
}

TEST(BadInput, CkksScaleMismatchInAdd) {
  Ckks& C = ckks();
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

TEST(BadInput, RescaleAtLevelZero) {
  Ckks& C = ckks();
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
  Bgv& B = bgv();
  const Ciphertext b0 = B.ev.mod_switch_to(B.encrypt(7), 0);
  EXPECT_THROW_NAMING(B.ev.mod_switch_to_next(b0), InvalidArgument, "encrypted");
  // Level 1 rescales fine.
  EXPECT_NO_THROW(C.ev.rescale_to_next(C.ev.mod_switch_to(C.ev.multiply(top, top), 1)));
}

TEST(BadInput, OperandsAtDifferentLevels) {
  {
    Ckks& C = ckks();
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
    Bgv& B = bgv();
    const Ciphertext a = B.encrypt(3), b = B.ev.mod_switch_to_next(a);
    EXPECT_THROW_NAMING(B.ev.add(a, b), InvalidArgument, "level");
    EXPECT_THROW_NAMING(B.ev.sub(a, b), InvalidArgument, "encrypted2");
    EXPECT_THROW_NAMING(B.ev.multiply(a, b), InvalidArgument, "level");
    EXPECT_NO_THROW(B.ev.multiply(B.ev.mod_switch_to_next(a), b));
  }
}

TEST(BadInput, CkksEncodeOverflowsQAtLevel) {
  Ckks& C = ckks();
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

TEST(BadInput, WrongSlotCount) {
  Ckks& C = ckks();
  const std::size_t slots = C.encoder.slot_count();
  ASSERT_EQ(slots, kNttN / 2);
  EXPECT_THROW_NAMING(C.encoder.encode(std::vector<cd>(slots + 1, cd(0.1, 0)), kScale, 3),
                      InvalidArgument, "values");
  EXPECT_THROW_NAMING(C.encoder.encode(std::vector<double>(kNttN, 0.1), kScale, 3), InvalidArgument,
                      "values");
  EXPECT_NO_THROW(C.encoder.encode(std::vector<cd>(slots, cd(0.1, 0)), kScale, 3));
  // BGV's BatchEncoder takes at most N values.
  Bgv& B = bgv();
  EXPECT_THROW_NAMING(B.encoder.encode(std::vector<std::uint64_t>(kNttN + 1, 1)), InvalidArgument,
                      "values");
  EXPECT_NO_THROW(B.encoder.encode(std::vector<std::uint64_t>(kNttN, 1)));
}

TEST(BadInput, ConjugateOrRotateWithoutKey) {
  Ckks& C = ckks();
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
  Bgv& B = bgv();
  const GaloisKeys bone = B.kg.create_galois_keys({1}, false);
  EXPECT_THROW_NAMING(B.ev.rotate_columns(B.encrypt(2), bone), InvalidArgument, "galois_keys");
}

// Key-switching digits larger than P, for every scheme: BFV at N = 2^13 with a 30-bit P, then
// CKKS and BGV with digits of alpha = 3 forty-bit primes.
TEST(BadInput, SpecialPrimesTooSmallForAlpha) {
  {
    // Digits of alpha = 2 forty-bit primes (80 bits) need P >= 80 bits; one 30-bit prime is not.
    EncryptionParameters p(veil::SchemeType::bfv);
    p.poly_modulus_degree = 8192;
    p.coeff_modulus = CoeffModulus::create(8192, {40, 40, 40, 40, 30});
    p.special_primes = 1;
    p.alpha = 2;
    p.plain_modulus = 65537;
    EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "special_primes");
    EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "alpha");
    // alpha = 1 (digits of one 40-bit prime) is still too much for a 30-bit P...
    p.alpha = 1;
    EXPECT_THROW_NAMING(Context::create(p), InvalidArgument, "special_primes");
    // ...while a 60-bit special prime with alpha = 1 is accepted.
    p.coeff_modulus = CoeffModulus::create(8192, {40, 40, 40, 40, 50});
    EXPECT_NO_THROW(Context::create(p));
  }
  for (SchemeType s : {SchemeType::ckks, SchemeType::bgv}) {
    SCOPED_TRACE(s == SchemeType::ckks ? "ckks" : "bgv");
    veil::EncryptionParameters p(s);
    p.poly_modulus_degree = kNttN;
    // Digits of alpha = 3 forty-bit primes (120 bits) against one 60-bit special prime.
    p.coeff_modulus = CoeffModulus::create(kNttN, {40, 40, 40, 40, 40, 40, 60});
    p.special_primes = 1;
    p.alpha = 3;
    if (s == SchemeType::bgv)
      p.plain_modulus = PlainModulus::batching(kNttN, 20);
    EXPECT_THROW_NAMING(veil::Context::create(p, veil::SecurityLevel::none), InvalidArgument,
                        "special_primes");
    EXPECT_THROW_NAMING(veil::Context::create(p, veil::SecurityLevel::none), InvalidArgument,
                        "alpha");
    // The default alpha (= special_primes = 1) is accepted with the same primes.
    p.alpha = 0;
    EXPECT_NO_THROW(veil::Context::create(p, veil::SecurityLevel::none));
    // alpha = 1 but the special prime (30 bits) is smaller than a 40-bit digit.
    p.coeff_modulus = CoeffModulus::create(kNttN, {40, 40, 40, 40, 40, 40, 30});
    p.alpha = 1;
    EXPECT_THROW_NAMING(veil::Context::create(p, veil::SecurityLevel::none), InvalidArgument,
                        "special_primes");
  }
}

} // namespace
