// BFV end to end: every Evaluator operation checked against plaintext arithmetic mod t computed
// here, independently of the library (DESIGN.md "Tests": plaintext arithmetic mod t for BFV).
// Slots are SEAL's 2 x N/2 matrix: rotate_rows(k) maps slot (r, c) <- (r, (c + k) mod N/2),
// rotate_columns swaps the rows, and a Galois element g = +-3^k mod 2N acts as rotation by k
// (with a row swap for the minus sign).
//
// Parameter sets: N = 2^12..2^15, SEAL's default chains plus custom chains (3 x 60-bit, 30-bit
// primes, 2 and 3 special primes with alpha > 1), t = 65537 and 20..30-bit batching primes, both
// multiplication methods (HPS and BEHZ). N = 2^15 runs only the end-to-end case (BfvLarge):
// its Galois keys are the slow part of the suite.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "batch_util.h"
#include "veil/rlwe/checks.h"

namespace {

using namespace veil;
using namespace veil::test;

// ---- parameter sets ---------------------------------------------------------------------------

struct BfvCase {
  std::string name;
  std::size_t n;
  std::vector<int> bits; // empty: CoeffModulus::bfv_default(n)
  std::size_t special_primes;
  std::size_t alpha; // 0: default (= special_primes)
  int t_bits;        // 0: t = 65537
  MulMethod method;
  int depth; // multiplicative depth these parameters support (measured noise budget)
};

void PrintTo(const BfvCase &c, std::ostream *os) { *os << c.name; }

EncryptionParameters make_params(const BfvCase& c) {
  return bfv_params(c.n, c.bits, c.special_primes, c.alpha, c.t_bits, c.method);
}

std::vector<int> rep(int count, int bits) { return std::vector<int>(count, bits); }
std::vector<int> cat(std::vector<int> a, const std::vector<int> &b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

const MulMethod HPS = MulMethod::hps;
const MulMethod BEHZ = MulMethod::behz;

const std::vector<BfvCase> kCases = {
    {"n4096_default_t65537_hps", 4096, {}, 1, 0, 0, HPS, 1},
    {"n4096_default_t65537_behz", 4096, {}, 1, 0, 0, BEHZ, 1},
    {"n8192_default_t20_hps", 8192, {}, 1, 0, 20, HPS, 3},
    {"n8192_default_t65537_behz", 8192, {}, 1, 0, 0, BEHZ, 3},
    {"n8192_60x3_t65537_hps", 8192, rep(3, 60), 1, 0, 0, HPS, 2},
    {"n8192_60x3_t25_behz", 8192, rep(3, 60), 1, 0, 25, BEHZ, 2},
    {"n8192_30x7_t65537_behz", 8192, rep(7, 30), 1, 0, 0, BEHZ, 3},
    {"n8192_30x7_t22_hps", 8192, rep(7, 30), 1, 0, 22, HPS, 3},
    {"n8192_36x6_sp2_a2_t65537_hps", 8192, rep(6, 36), 2, 2, 0, HPS, 3},
    {"n8192_36x6_sp2_a2_t20_behz", 8192, rep(6, 36), 2, 2, 20, BEHZ, 3},
    {"n16384_default_t65537_hps", 16384, {}, 1, 0, 0, HPS, 3},
    {"n16384_45x6_50x3_sp3_a3_t30_behz", 16384, cat(rep(6, 45), rep(3, 50)), 3, 3, 30, BEHZ, 3},
};

// Rotation keys: powers of two in both directions, a subset only (keygen is the slow part).
const std::vector<int> kKeySteps = {1, -1, 2, 4, -4, 8};
// Steps with a direct key, and steps composed from them along the non-adjacent form:
// 3 = 4 - 1, -3 = -4 + 1, 5 = 4 + 1, -5 = -4 - 1, 7 = 8 - 1, 10 = 8 + 2.
const std::vector<int> kComposedSteps = {3, -3, 5, -5, 7, 10};

struct Env {
  explicit Env(const BfvCase &cs)
      : c(cs), ctx(veil::Context::create(make_params(cs))), n(ctx->n()), row(n / 2),
        t(ctx->plain_modulus()), kg(ctx, Device::cpu(), 1000 + cs.n), pk(kg.create_public_key()),
        encoder(ctx), encryptor(ctx, pk, 11), sym_encryptor(ctx, kg.secret_key(), 12),
        decryptor(ctx, kg.secret_key()), evaluator(ctx) {}

  const RelinKeys &rlk() {
    if (!rlk_)
      rlk_ = kg.create_relin_keys();
    return *rlk_;
  }
  const GaloisKeys &gk() {
    if (!gk_)
      gk_ = kg.create_galois_keys(kKeySteps, true);
    return *gk_;
  }
  Ciphertext encrypt(const Vec &v) const { return encryptor.encrypt(encoder.encode(v)); }
  Vec decrypt(const Ciphertext &ct) const { return encoder.decode(decryptor.decrypt(ct)); }
  int budget(const Ciphertext &ct) const { return decryptor.invariant_noise_budget(ct); }
  Vec random(std::mt19937_64& rng) const { return random_words(rng, n, t); }

  BfvCase c;
  ContextPtr ctx;
  std::size_t n, row;
  u64 t;
  KeyGenerator kg;
  PublicKey pk;
  BatchEncoder encoder;
  Encryptor encryptor, sym_encryptor;
  Decryptor decryptor;
  Evaluator evaluator;
  std::optional<RelinKeys> rlk_;
  std::optional<GaloisKeys> gk_;
};

class BfvOps : public ::testing::TestWithParam<BfvCase> {
protected:
  static std::map<std::string, std::unique_ptr<Env>> &cache() {
    static std::map<std::string, std::unique_ptr<Env>> m;
    return m;
  }
  static void TearDownTestSuite() { cache().clear(); }

  void SetUp() override {
    auto &slot = cache()[GetParam().name];
    if (!slot)
      slot = std::make_unique<Env>(GetParam());
    e = slot.get();
    rng.seed(test_seed(GetParam().name));
  }

  Env *e = nullptr;
  std::mt19937_64 rng;
};

// ---- encryption -------------------------------------------------------------------------------

TEST_P(BfvOps, EncodeDecodeRoundTrip) {
  const Vec a = e->random(rng);
  EXPECT_TRUE(same_slots(e->encoder.decode(e->encoder.encode(a)), a));
  // Missing slots are zero.
  Vec head(a.begin(), a.begin() + 10);
  Vec padded = head;
  padded.resize(e->n, 0);
  EXPECT_TRUE(same_slots(e->encoder.decode(e->encoder.encode(head)), padded));
  EXPECT_TRUE(same_slots(e->encoder.decode(e->encoder.encode(Vec{})), Vec(e->n, 0)));
}

TEST_P(BfvOps, EncryptDecryptPublicKey) {
  const Vec a = e->random(rng);
  const Plaintext pa = e->encoder.encode(a);
  const Ciphertext ct = e->encryptor.encrypt(pa);
  EXPECT_EQ(ct.size(), 2u);
  EXPECT_EQ(ct.level(), e->ctx->max_level());
  EXPECT_FALSE(ct.is_ntt_form());
  EXPECT_GT(e->budget(ct), 0);
  EXPECT_TRUE(same_slots(e->decrypt(ct), a));
  // Encryption is randomized: a second encryption differs but decrypts the same.
  const Ciphertext ct2 = e->encryptor.encrypt(pa);
  EXPECT_FALSE(same_words(ct, ct2));
  EXPECT_TRUE(same_slots(e->decrypt(ct2), a));
  // Encryption of zero.
  const Ciphertext z = e->encryptor.encrypt_zero();
  EXPECT_GT(e->budget(z), 0);
  EXPECT_TRUE(same_slots(e->decrypt(z), Vec(e->n, 0)));
}

TEST_P(BfvOps, EncryptDecryptSymmetric) {
  const Vec a = e->random(rng);
  const Ciphertext ct = e->sym_encryptor.encrypt(e->encoder.encode(a));
  EXPECT_EQ(ct.size(), 2u);
  EXPECT_GT(e->budget(ct), 0);
  // Symmetric encryption has no u*e term: at least as much budget as public-key encryption.
  EXPECT_GE(e->budget(ct), e->budget(e->encrypt(a)));
  EXPECT_TRUE(same_slots(e->decrypt(ct), a));
  const Ciphertext z = e->sym_encryptor.encrypt_zero();
  EXPECT_TRUE(same_slots(e->decrypt(z), Vec(e->n, 0)));
  // Symmetric and public-key ciphertexts combine.
  const Vec b = e->random(rng);
  EXPECT_TRUE(same_slots(e->decrypt(e->evaluator.add(ct, e->encrypt(b))), vadd(a, b, e->t)));
}

// ---- additive operations ----------------------------------------------------------------------

TEST_P(BfvOps, AddSubNegate) {
  const u64 t = e->t;
  const Vec a = e->random(rng), b = e->random(rng), c = e->random(rng);
  const Ciphertext ca = e->encrypt(a), cb = e->encrypt(b), cc = e->encrypt(c);
  const Evaluator &ev = e->evaluator;
  EXPECT_TRUE(same_slots(e->decrypt(ev.add(ca, cb)), vadd(a, b, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.sub(ca, cb)), vsub(a, b, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.sub(cb, ca)), vsub(b, a, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.negate(ca)), vneg(a, t)));
  // c + (-c) is transparent: rejected as by SEAL; with the check off it decrypts to zero.
  EXPECT_THROW(ev.add(ca, ev.negate(ca)), veil::InvalidArgument);
  veil::set_transparent_check(false);
  EXPECT_TRUE(same_slots(e->decrypt(ev.add(ca, ev.negate(ca))), Vec(e->n, 0)));
  veil::set_transparent_check(true);
  EXPECT_TRUE(same_slots(e->decrypt(ev.add_many({ca, cb, cc})), vadd(vadd(a, b, t), c, t)));
  // In-place forms match the out-of-place ones bit for bit.
  Ciphertext x = ca;
  ev.add_inplace(x, cb);
  EXPECT_TRUE(same_ct(x, ev.add(ca, cb)));
  ev.sub_inplace(x, cc);
  EXPECT_TRUE(same_slots(e->decrypt(x), vsub(vadd(a, b, t), c, t)));
  ev.negate_inplace(x);
  EXPECT_TRUE(same_slots(e->decrypt(x), vsub(c, vadd(a, b, t), t)));
  // Addition is exact in Z_Q: commutative bit for bit; the inputs are untouched.
  EXPECT_TRUE(same_ct(ev.add(ca, cb), ev.add(cb, ca)));
  EXPECT_TRUE(same_slots(e->decrypt(ca), a));
  EXPECT_GT(e->budget(x), 0);
}

TEST_P(BfvOps, AddSubNegateMixedSizes) {
  const u64 t = e->t;
  const Vec a = e->random(rng), b = e->random(rng), c = e->random(rng);
  const Evaluator &ev = e->evaluator;
  const Ciphertext c3 = ev.multiply(e->encrypt(a), e->encrypt(b)); // size 3
  const Ciphertext c2 = e->encrypt(c);                             // size 2
  ASSERT_EQ(c3.size(), 3u);
  const Vec ab = vmul(a, b, t);
  const Ciphertext s32 = ev.add(c3, c2), s23 = ev.add(c2, c3);
  EXPECT_EQ(s32.size(), 3u);
  EXPECT_EQ(s23.size(), 3u);
  EXPECT_TRUE(same_slots(e->decrypt(s32), vadd(ab, c, t)));
  EXPECT_TRUE(same_slots(e->decrypt(s23), vadd(ab, c, t)));
  const Ciphertext d32 = ev.sub(c3, c2), d23 = ev.sub(c2, c3);
  EXPECT_EQ(d23.size(), 3u);
  EXPECT_TRUE(same_slots(e->decrypt(d32), vsub(ab, c, t)));
  EXPECT_TRUE(same_slots(e->decrypt(d23), vsub(c, ab, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.negate(c3)), vneg(ab, t)));
  Ciphertext x = c2;
  ev.add_inplace(x, c3);
  EXPECT_EQ(x.size(), 3u);
  EXPECT_TRUE(same_slots(e->decrypt(x), vadd(ab, c, t)));
  // Relinearizing the mixed sum still decrypts to ab + c.
  const Ciphertext r = ev.relinearize(s23, e->rlk());
  EXPECT_EQ(r.size(), 2u);
  EXPECT_GT(e->budget(r), 0);
  EXPECT_TRUE(same_slots(e->decrypt(r), vadd(ab, c, t)));
}

TEST_P(BfvOps, PlainOps) {
  const u64 t = e->t;
  const Vec a = e->random(rng), b = e->random(rng);
  const Ciphertext ca = e->encrypt(a);
  const Plaintext pb = e->encoder.encode(b);
  const Evaluator &ev = e->evaluator;
  EXPECT_TRUE(same_slots(e->decrypt(ev.add_plain(ca, pb)), vadd(a, b, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.sub_plain(ca, pb)), vsub(a, b, t)));
  const Ciphertext m = ev.multiply_plain(ca, pb);
  EXPECT_EQ(m.size(), 2u);
  EXPECT_GT(e->budget(m), 0);
  EXPECT_TRUE(same_slots(e->decrypt(m), vmul(a, b, t)));
  // In-place forms agree bit for bit.
  Ciphertext x = ca;
  ev.add_plain_inplace(x, pb);
  EXPECT_TRUE(same_ct(x, ev.add_plain(ca, pb)));
  x = ca;
  ev.sub_plain_inplace(x, pb);
  EXPECT_TRUE(same_ct(x, ev.sub_plain(ca, pb)));
  x = ca;
  ev.multiply_plain_inplace(x, pb);
  EXPECT_TRUE(same_ct(x, m));
  // add_plain then sub_plain of the same plaintext is the identity on the ciphertext.
  EXPECT_TRUE(same_ct(ev.sub_plain(ev.add_plain(ca, pb), pb), ca));
  // Multiplying by the all-ones plaintext (the constant polynomial 1) keeps the values.
  EXPECT_TRUE(same_slots(e->decrypt(ev.multiply_plain(ca, e->encoder.encode(Vec(e->n, 1)))), a));
  // The all-zero plaintext annihilates: a transparent result, rejected unless the check is off.
  EXPECT_THROW(ev.multiply_plain(ca, e->encoder.encode(Vec(e->n, 0))), veil::InvalidArgument);
  veil::set_transparent_check(false);
  EXPECT_TRUE(
      same_slots(e->decrypt(ev.multiply_plain(ca, e->encoder.encode(Vec(e->n, 0)))), Vec(e->n, 0)));
  veil::set_transparent_check(true);
  // A plaintext with t-1 (= -1) in every slot negates.
  EXPECT_TRUE(same_slots(e->decrypt(ev.multiply_plain(ca, e->encoder.encode(Vec(e->n, t - 1)))),
                         vneg(a, t)));
  // Plain ops on a size-3 ciphertext.
  const Vec c = e->random(rng);
  const Ciphertext c3 = ev.multiply(ca, e->encrypt(c));
  const Ciphertext s = ev.add_plain(c3, pb);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_TRUE(same_slots(e->decrypt(s), vadd(vmul(a, c, t), b, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.sub_plain(c3, pb)), vsub(vmul(a, c, t), b, t)));
}

// ---- multiplication ---------------------------------------------------------------------------

TEST_P(BfvOps, MultiplyRelinearize) {
  const u64 t = e->t;
  const Vec a = e->random(rng), b = e->random(rng);
  const Ciphertext ca = e->encrypt(a), cb = e->encrypt(b);
  const Evaluator &ev = e->evaluator;
  const Ciphertext m = ev.multiply(ca, cb);
  EXPECT_EQ(m.size(), 3u);
  EXPECT_GT(e->budget(m), 0);
  EXPECT_LT(e->budget(m), e->budget(ca));
  EXPECT_TRUE(same_slots(e->decrypt(m), vmul(a, b, t)));
  const Ciphertext r = ev.relinearize(m, e->rlk());
  EXPECT_EQ(r.size(), 2u);
  EXPECT_GT(e->budget(r), 0);
  EXPECT_TRUE(same_slots(e->decrypt(r), vmul(a, b, t)));
  Ciphertext x = m;
  ev.relinearize_inplace(x, e->rlk());
  EXPECT_TRUE(same_ct(x, r));
  // Multiplication is commutative on the plaintexts.
  EXPECT_TRUE(same_slots(e->decrypt(ev.multiply(cb, ca)), vmul(a, b, t)));
  // Products involving the constant 0 and 1 plaintexts, encrypted.
  EXPECT_TRUE(same_slots(e->decrypt(ev.multiply(ca, e->encrypt(Vec(e->n, 1)))), a));
  EXPECT_TRUE(same_slots(e->decrypt(ev.multiply(ca, e->encrypt(Vec(e->n, 0)))), Vec(e->n, 0)));
  // A multiplied-then-relinearized ciphertext adds to a fresh one.
  const Vec c = e->random(rng);
  EXPECT_TRUE(same_slots(e->decrypt(ev.add(r, e->encrypt(c))), vadd(vmul(a, b, t), c, t)));
}

TEST_P(BfvOps, MultiplyHigherSizes) {
  if (e->c.depth < 2)
    GTEST_SKIP() << "needs depth 2";
  const u64 t = e->t;
  const Vec a = e->random(rng), b = e->random(rng), c = e->random(rng), d = e->random(rng);
  const Evaluator &ev = e->evaluator;
  const Ciphertext ab = ev.multiply(e->encrypt(a), e->encrypt(b)); // size 3
  const Ciphertext cd = ev.multiply(e->encrypt(c), e->encrypt(d)); // size 3
  const Ciphertext abc = ev.multiply(ab, e->encrypt(c));           // size 4
  EXPECT_EQ(abc.size(), 4u);
  EXPECT_GT(e->budget(abc), 0);
  EXPECT_TRUE(same_slots(e->decrypt(abc), vmul(vmul(a, b, t), c, t)));
  const Ciphertext abcd = ev.multiply(ab, cd); // size 5
  EXPECT_EQ(abcd.size(), 5u);
  EXPECT_GT(e->budget(abcd), 0);
  EXPECT_TRUE(same_slots(e->decrypt(abcd), vmul(vmul(a, b, t), vmul(c, d, t), t)));
}

TEST_P(BfvOps, Square) {
  const u64 t = e->t;
  const Vec a = e->random(rng);
  const Ciphertext ca = e->encrypt(a);
  const Evaluator &ev = e->evaluator;
  const Ciphertext s = ev.square(ca);
  EXPECT_EQ(s.size(), 3u);
  EXPECT_GT(e->budget(s), 0);
  EXPECT_TRUE(same_slots(e->decrypt(s), vmul(a, a, t)));
  // square(a) computes the same function as multiply(a, a') for an identical copy a'.
  const Ciphertext copy = ca;
  EXPECT_TRUE(same_ct(s, ev.multiply(ca, copy)));
  const Ciphertext r = ev.relinearize(s, e->rlk());
  EXPECT_TRUE(same_slots(e->decrypt(r), vmul(a, a, t)));
}

TEST_P(BfvOps, MultiplyMany) {
  const u64 t = e->t;
  const int depth = e->c.depth;
  const std::size_t count = depth >= 3 ? 5 : depth == 2 ? 3 : 2;
  std::vector<Vec> vals;
  std::vector<Ciphertext> cts;
  Vec want(e->n, 1);
  for (std::size_t i = 0; i < count; ++i) {
    vals.push_back(e->random(rng));
    cts.push_back(e->encrypt(vals.back()));
    want = vmul(want, vals.back(), t);
  }
  const Ciphertext p = e->evaluator.multiply_many(cts, e->rlk());
  EXPECT_EQ(p.size(), 2u);
  EXPECT_GT(e->budget(p), 0);
  EXPECT_TRUE(same_slots(e->decrypt(p), want)) << count << " factors";
  // One factor: the product is that ciphertext.
  const Ciphertext one = e->evaluator.multiply_many({cts[0]}, e->rlk());
  EXPECT_TRUE(same_ct(one, cts[0]));
}

TEST_P(BfvOps, Exponentiate) {
  const u64 t = e->t;
  const int depth = e->c.depth;
  const Vec a = e->random(rng);
  const Ciphertext ca = e->encrypt(a);
  std::vector<u64> exps = {1, 2};
  if (depth >= 2)
    exps.push_back(3);
  if (depth >= 3)
    exps.push_back(7);
  for (u64 k : exps) {
    const Ciphertext p = e->evaluator.exponentiate(ca, k, e->rlk());
    EXPECT_EQ(p.size(), 2u) << "exponent " << k;
    EXPECT_GT(e->budget(p), 0) << "exponent " << k;
    EXPECT_TRUE(same_slots(e->decrypt(p), vpow(a, k, t))) << "exponent " << k;
  }
}

// ---- rotations --------------------------------------------------------------------------------

TEST_P(BfvOps, RotateRows) {
  const Vec a = e->random(rng);
  const Ciphertext ca = e->encrypt(a);
  const long long row = static_cast<long long>(e->row);
  std::vector<long long> steps(kKeySteps.begin(), kKeySteps.end());
  steps.insert(steps.end(), kComposedSteps.begin(), kComposedSteps.end());
  // row - 1 is the same Galois element as -1, -(row - 1) the same as 1.
  steps.push_back(row - 1);
  steps.push_back(-(row - 1));
  for (long long s : steps) {
    const Ciphertext r = e->evaluator.rotate_rows(ca, static_cast<int>(s), e->gk());
    EXPECT_EQ(r.size(), 2u);
    EXPECT_GT(e->budget(r), 0) << "step " << s;
    EXPECT_TRUE(same_slots(e->decrypt(r), rot_rows(a, s))) << "step " << s;
  }
  // Step 0 is the identity.
  EXPECT_TRUE(same_ct(e->evaluator.rotate_rows(ca, 0, e->gk()), ca));
  // Rotations compose: (a << 1) << -1 == a.
  const Ciphertext back =
      e->evaluator.rotate_rows(e->evaluator.rotate_rows(ca, 1, e->gk()), -1, e->gk());
  EXPECT_TRUE(same_slots(e->decrypt(back), a));
}

TEST_P(BfvOps, RotateColumns) {
  const Vec a = e->random(rng);
  const Ciphertext ca = e->encrypt(a);
  const Ciphertext r = e->evaluator.rotate_columns(ca, e->gk());
  EXPECT_EQ(r.size(), 2u);
  EXPECT_GT(e->budget(r), 0);
  EXPECT_TRUE(same_slots(e->decrypt(r), swap_rows(a)));
  EXPECT_TRUE(same_slots(e->decrypt(e->evaluator.rotate_columns(r, e->gk())), a));
  // Column swap commutes with row rotation.
  const Ciphertext rc = e->evaluator.rotate_rows(r, 2, e->gk());
  EXPECT_TRUE(same_slots(e->decrypt(rc), swap_rows(rot_rows(a, 2))));
}

TEST_P(BfvOps, ApplyGalois) {
  const Vec a = e->random(rng);
  const Ciphertext ca = e->encrypt(a);
  const u64 m = 2 * e->n;
  // The element for step 2 (3^2 = 9) and the column element 2N - 1 from the shared keys.
  const std::uint32_t e9 = 9, ecol = static_cast<std::uint32_t>(m - 1);
  ASSERT_EQ(e->ctx->galois_elt_from_step(2), e9);
  ASSERT_EQ(e->ctx->galois_elt_column(), ecol);
  EXPECT_TRUE(
      same_slots(e->decrypt(e->evaluator.apply_galois(ca, e9, e->gk())), galois_slots(a, e9)));
  EXPECT_TRUE(same_slots(e->decrypt(e->evaluator.apply_galois(ca, ecol, e->gk())), swap_rows(a)));
  // rotate_rows with a direct key is apply_galois with that element.
  EXPECT_TRUE(same_ct(e->evaluator.apply_galois(ca, e9, e->gk()),
                      e->evaluator.rotate_rows(ca, 2, e->gk())));
  // Elements outside the row-rotation keys: -3 (rotate by 1 and swap) and 3^5.
  const std::uint32_t eneg3 = static_cast<std::uint32_t>(m - 3),
                      e243 = static_cast<std::uint32_t>(243 % m);
  const GaloisKeys extra = e->kg.create_galois_keys_from_elts({eneg3, e243});
  EXPECT_TRUE(extra.has_key(eneg3));
  EXPECT_TRUE(extra.has_key(e243));
  const Vec g1 = e->decrypt(e->evaluator.apply_galois(ca, eneg3, extra));
  EXPECT_TRUE(same_slots(g1, galois_slots(a, eneg3)));
  EXPECT_TRUE(same_slots(g1, swap_rows(rot_rows(a, 1))));
  EXPECT_TRUE(same_slots(e->decrypt(e->evaluator.apply_galois(ca, e243, extra)), rot_rows(a, 5)));
}

TEST_P(BfvOps, RotateManyMatchesRotateRows) {
  const Vec a = e->random(rng);
  const Ciphertext ca = e->encrypt(a);
  const std::vector<int> steps = kKeySteps;
  const std::vector<Ciphertext> many = e->evaluator.rotate_many(ca, steps, e->gk());
  ASSERT_EQ(many.size(), steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const Ciphertext one = e->evaluator.rotate_rows(ca, steps[i], e->gk());
    EXPECT_TRUE(same_ct(many[i], one)) << "step " << steps[i];
    EXPECT_TRUE(same_slots(e->decrypt(many[i]), rot_rows(a, steps[i]))) << "step " << steps[i];
  }
}

TEST_P(BfvOps, RotateAfterMultiply) {
  const u64 t = e->t;
  const Vec a = e->random(rng), b = e->random(rng);
  const Ciphertext p =
      e->evaluator.relinearize(e->evaluator.multiply(e->encrypt(a), e->encrypt(b)), e->rlk());
  const Vec ab = vmul(a, b, t);
  EXPECT_TRUE(same_slots(e->decrypt(e->evaluator.rotate_rows(p, 3, e->gk())), rot_rows(ab, 3)));
  EXPECT_TRUE(same_slots(e->decrypt(e->evaluator.rotate_columns(p, e->gk())), swap_rows(ab)));
}

// ---- signed values ----------------------------------------------------------------------------

TEST_P(BfvOps, SignedEncodeDecode) {
  const u64 t = e->t;
  const std::int64_t bound = static_cast<std::int64_t>((t - 1) / 2);
  std::uniform_int_distribution<std::int64_t> d(-bound, bound);
  SVec a(e->n), b(e->n);
  for (auto &x : a)
    x = d(rng);
  for (auto &x : b)
    x = d(rng);
  a[0] = bound;
  a[1] = -bound;
  a[2] = 0;
  a[3] = -1;
  Vec au(e->n), bu(e->n);
  for (std::size_t i = 0; i < e->n; ++i) {
    au[i] = a[i] >= 0 ? static_cast<u64>(a[i]) : t - static_cast<u64>(-a[i]);
    bu[i] = b[i] >= 0 ? static_cast<u64>(b[i]) : t - static_cast<u64>(-b[i]);
  }
  const Plaintext pa = e->encoder.encode_signed(a);
  EXPECT_TRUE(same_slots(e->encoder.decode_signed(pa), a));
  EXPECT_TRUE(same_slots(e->encoder.decode(pa), au));
  // encode_signed(x) is encode(x mod t), coefficient for coefficient.
  EXPECT_EQ(pa.buffer().to_host(), e->encoder.encode(au).buffer().to_host());
  const Ciphertext ca = e->encryptor.encrypt(pa);
  const Ciphertext cb = e->encryptor.encrypt(e->encoder.encode_signed(b));
  EXPECT_TRUE(same_slots(e->encoder.decode_signed(e->decryptor.decrypt(ca)), a));
  const Ciphertext p = e->evaluator.relinearize(e->evaluator.multiply(ca, cb), e->rlk());
  EXPECT_TRUE(
      same_slots(e->encoder.decode_signed(e->decryptor.decrypt(p)), centered(vmul(au, bu, t), t)));
  EXPECT_TRUE(same_slots(e->encoder.decode_signed(e->decryptor.decrypt(e->evaluator.negate(ca))),
                         centered(vneg(au, t), t)));
  // Small signed values survive arithmetic without wrapping.
  SVec s(e->n), u(e->n), want(e->n);
  std::uniform_int_distribution<std::int64_t> small(-100, 100);
  for (std::size_t i = 0; i < e->n; ++i) {
    s[i] = small(rng);
    u[i] = small(rng);
    want[i] = s[i] * u[i] - s[i];
  }
  const Ciphertext cs = e->encryptor.encrypt(e->encoder.encode_signed(s));
  const Ciphertext cu = e->encryptor.encrypt(e->encoder.encode_signed(u));
  const Ciphertext r = e->evaluator.sub(e->evaluator.multiply(cs, cu), cs);
  EXPECT_TRUE(same_slots(e->encoder.decode_signed(e->decryptor.decrypt(r)), want));
}

// ---- noise budget -----------------------------------------------------------------------------

TEST_P(BfvOps, NoiseBudget) {
  const u64 t = e->t;
  Vec a = e->random(rng);
  Ciphertext ct = e->encrypt(a);
  int prev = e->budget(ct);
  EXPECT_GT(prev, 0);
  EXPECT_GT(e->budget(e->sym_encryptor.encrypt(e->encoder.encode(a))), 0);
  // Additions and rotations cost little; a multiplication costs at least log2(t) bits.
  EXPECT_GE(e->budget(e->evaluator.add(ct, ct)), prev - 2);
  // A short chain of squarings: strictly decreasing budget, correct while positive.
  const int steps = std::min(e->c.depth, 3);
  for (int k = 1; k <= steps; ++k) {
    ct = e->evaluator.relinearize(e->evaluator.square(ct), e->rlk());
    a = vmul(a, a, t);
    const int b = e->budget(ct);
    EXPECT_LT(b, prev) << "after " << k << " squarings";
    EXPECT_GT(b, 0) << "after " << k << " squarings (depth " << e->c.depth << " expected)";
    if (b > 0)
      EXPECT_TRUE(same_slots(e->decrypt(ct), a)) << "after " << k << " squarings";
    prev = b;
  }
}

INSTANTIATE_TEST_SUITE_P(Bfv, BfvOps, ::testing::ValuesIn(kCases),
                         [](const ::testing::TestParamInfo<BfvCase> &i) { return i.param.name; });

// ---- depth until the budget is exhausted (N = 2^13, SEAL's default chain) ----------------------

class BfvDepth : public ::testing::TestWithParam<MulMethod> {};

TEST_P(BfvDepth, SquaringChainUntilBudgetExhausted) {
  const BfvCase cs{"depth", 8192, {}, 1, 0, 0, GetParam(), 0};
  Env env(cs);
  std::mt19937_64 rng(77);
  Vec a = env.random(rng);
  Ciphertext ct = env.encrypt(a);
  int prev = env.budget(ct);
  ASSERT_GT(prev, 0);
  std::string trace = std::to_string(prev);
  int depth = 0;
  for (int k = 1; k <= 20; ++k) {
    ct = env.evaluator.relinearize(env.evaluator.square(ct), env.rlk());
    a = vmul(a, a, env.t);
    const int b = env.budget(ct);
    trace += " " + std::to_string(b);
    if (b == 0)
      break;
    EXPECT_LT(b, prev) << "squaring " << k;
    ASSERT_TRUE(same_slots(env.decrypt(ct), a))
        << "decryption wrong at depth " << k << " with budget " << b;
    depth = k;
    prev = b;
  }
  EXPECT_EQ(env.budget(ct), 0) << "budget never reached 0 in 20 squarings";
  const std::string method = veil::to_string(GetParam());
  RecordProperty("max_depth_" + method, depth);
  RecordProperty("budget_trace_" + method, trace);
  std::printf(
      "[ BfvDepth ] N=8192 bfv_default t=65537 %s: depth %d with budget > 0 (budgets: %s)\n",
      method.c_str(), depth, trace.c_str());
  // About 30 bits per level from ~145 fresh bits: fewer than 3 levels would mean excess noise.
  EXPECT_GE(depth, 3);
}

INSTANTIATE_TEST_SUITE_P(Bfv, BfvDepth, ::testing::Values(MulMethod::hps, MulMethod::behz),
                         [](const ::testing::TestParamInfo<MulMethod> &i) {
                           return veil::to_string(i.param);
                         });

// ---- determinism ------------------------------------------------------------------------------

ContextPtr small_context(MulMethod m = MulMethod::hps) {
  veil::EncryptionParameters p(veil::SchemeType::bfv);
  p.poly_modulus_degree = 4096;
  p.coeff_modulus = CoeffModulus::bfv_default(4096);
  p.plain_modulus = 65537;
  p.mul_method = m;
  return veil::Context::create(p);
}

std::vector<u64> galois_words(const GaloisKeys &gk) {
  std::vector<u64> out;
  for (const auto &[elt, k] : gk.keys()) {
    out.push_back(elt);
    auto w = k.buffer().to_host();
    out.insert(out.end(), w.begin(), w.end());
  }
  return out;
}

TEST(BfvDeterminism, SameSeedSameKeysAndCiphertexts) {
  const ContextPtr ctx = small_context();
  KeyGenerator k1(ctx, Device::cpu(), 42), k2(ctx, Device::cpu(), 42);
  EXPECT_EQ(k1.secret_key().buffer().to_host(), k2.secret_key().buffer().to_host());
  const PublicKey p1 = k1.create_public_key(), p2 = k2.create_public_key();
  EXPECT_EQ(p1.buffer().to_host(), p2.buffer().to_host());
  EXPECT_EQ(k1.create_relin_keys().key().buffer().to_host(),
            k2.create_relin_keys().key().buffer().to_host());
  const GaloisKeys g1 = k1.create_galois_keys({1, -2}, true),
                   g2 = k2.create_galois_keys({1, -2}, true);
  EXPECT_EQ(g1.keys().size(), 3u);
  EXPECT_EQ(galois_words(g1), galois_words(g2));

  BatchEncoder enc(ctx);
  std::mt19937_64 rng(5);
  const Plaintext pt = enc.encode(random_words(rng, 4096, 65537));
  Encryptor e1(ctx, p1, 7), e2(ctx, p2, 7);
  const Ciphertext c1 = e1.encrypt(pt), c2 = e2.encrypt(pt);
  EXPECT_TRUE(same_ct(c1, c2));
  // The stream advances: the next encryption differs from the first, identically on both.
  const Ciphertext c1b = e1.encrypt(pt), c2b = e2.encrypt(pt);
  EXPECT_TRUE(same_ct(c1b, c2b));
  EXPECT_FALSE(same_words(c1, c1b));
  Encryptor s1(ctx, k1.secret_key(), 9), s2(ctx, k2.secret_key(), 9);
  EXPECT_TRUE(same_ct(s1.encrypt(pt), s2.encrypt(pt)));
  // A KeyGenerator over an existing secret key with the same seed makes the same public key
  // as another such generator.
  KeyGenerator k3(ctx, k1.secret_key(), 5), k4(ctx, k1.secret_key(), 5);
  EXPECT_EQ(k3.create_public_key().buffer().to_host(), k4.create_public_key().buffer().to_host());
  // Evaluations of identical inputs are identical (for both methods).
  Evaluator ev(ctx);
  EXPECT_TRUE(same_ct(ev.multiply(c1, c1b), ev.multiply(c2, c2b)));
}

TEST(BfvDeterminism, DifferentSeedsDiffer) {
  const ContextPtr ctx = small_context();
  KeyGenerator k1(ctx, Device::cpu(), 42), k2(ctx, Device::cpu(), 43);
  EXPECT_NE(k1.secret_key().buffer().to_host(), k2.secret_key().buffer().to_host());
  const PublicKey p1 = k1.create_public_key(), p2 = k2.create_public_key();
  EXPECT_NE(p1.buffer().to_host(), p2.buffer().to_host());
  EXPECT_NE(k1.create_relin_keys().key().buffer().to_host(),
            k2.create_relin_keys().key().buffer().to_host());
  EXPECT_NE(galois_words(k1.create_galois_keys({1}, false)),
            galois_words(k2.create_galois_keys({1}, false)));
  // Unseeded generators draw from the OS.
  KeyGenerator r1(ctx), r2(ctx);
  EXPECT_NE(r1.secret_key().buffer().to_host(), r2.secret_key().buffer().to_host());

  BatchEncoder enc(ctx);
  std::mt19937_64 rng(6);
  const Vec v = random_words(rng, 4096, 65537);
  const Plaintext pt = enc.encode(v);
  Encryptor e1(ctx, p1, 7), e2(ctx, p1, 8);
  const Ciphertext c1 = e1.encrypt(pt), c2 = e2.encrypt(pt);
  EXPECT_FALSE(same_words(c1, c2));
  Encryptor s1(ctx, k1.secret_key(), 7), s2(ctx, k1.secret_key(), 8);
  EXPECT_FALSE(same_words(s1.encrypt(pt), s2.encrypt(pt)));
  Encryptor u1(ctx, p1), u2(ctx, p1);
  EXPECT_FALSE(same_words(u1.encrypt(pt), u2.encrypt(pt)));
  // All of them still decrypt correctly.
  Decryptor dec(ctx, k1.secret_key());
  EXPECT_TRUE(same_slots(enc.decode(dec.decrypt(c1)), v));
  EXPECT_TRUE(same_slots(enc.decode(dec.decrypt(c2)), v));
}

TEST(BfvRotateMany, ZeroStepIsIdentity) {
  // rotate_many promises rotate_rows(a, step) bit for bit for each step; rotate_rows(a, 0) is a
  // (no key needed), so rotate_many(a, {0, 1}) must return {a, rotate_rows(a, 1)}.
  const ContextPtr ctx = small_context();
  KeyGenerator kg(ctx, Device::cpu(), 3);
  const GaloisKeys gk = kg.create_galois_keys({1}, false);
  BatchEncoder enc(ctx);
  Encryptor encryptor(ctx, kg.create_public_key(), 4);
  std::mt19937_64 rng(8);
  const Ciphertext ca = encryptor.encrypt(enc.encode(random_words(rng, 4096, 65537)));
  Evaluator ev(ctx);
  std::vector<Ciphertext> many;
  try {
    many = ev.rotate_many(ca, {0, 1}, gk);
  } catch (const std::exception &ex) {
    FAIL() << "rotate_many(a, {0, 1}) threw: " << ex.what();
  }
  ASSERT_EQ(many.size(), 2u);
  EXPECT_TRUE(same_ct(many[0], ev.rotate_rows(ca, 0, gk)));
  EXPECT_TRUE(same_ct(many[1], ev.rotate_rows(ca, 1, gk)));
}

// ---- the encoding itself, against an independent evaluation map ------------------------------

// Horner evaluation of the polynomial with coefficients c at x mod t.
u64 eval_poly(const Vec &c, u64 x, u64 t) {
  u64 acc = 0;
  for (std::size_t i = c.size(); i-- > 0;)
    acc = addm(mulm(acc, x, t), c[i], t);
  return acc;
}

TEST(BfvEncoding, SlotsAreEvaluationsAtPowersOfThree) {
  // SEAL's batching: with psi the minimal primitive 2N-th root of unity mod t, slot (0, c) holds
  // m(psi^(3^c)) and slot (1, c) holds m(psi^(-3^c)), where m is the plaintext polynomial.
  for (const int tbits : {0, 20}) {
    veil::EncryptionParameters p(veil::SchemeType::bfv);
    const std::size_t n = 4096, row = n / 2;
    const u64 m = 2 * n;
    p.poly_modulus_degree = n;
    p.coeff_modulus = CoeffModulus::bfv_default(n);
    p.plain_modulus = tbits ? PlainModulus::batching(n, tbits) : 65537;
    const ContextPtr ctx = veil::Context::create(p);
    const u64 t = ctx->plain_modulus();
    ASSERT_EQ((t - 1) % m, 0u);
    // A primitive 2N-th root: x^((t-1)/2N) for the first x where it has order exactly 2N.
    u64 w = 0;
    for (u64 x = 2; x < t && !w; ++x) {
      const u64 c = powm(x, (t - 1) / m, t);
      if (powm(c, n, t) == t - 1)
        w = c;
    }
    ASSERT_NE(w, 0u);
    u64 psi = t, wk = w;
    const u64 w2 = mulm(w, w, t);
    for (u64 k = 1; k < m; k += 2, wk = mulm(wk, w2, t))
      psi = std::min(psi, wk); // all w^odd
    std::mt19937_64 rng(tbits + 1);
    BatchEncoder enc(ctx);
    const Vec v = random_words(rng, n, t);
    const Vec coeffs = enc.encode(v).buffer().to_host();
    ASSERT_EQ(coeffs.size(), n);
    Vec want(n);
    u64 g = 1; // 3^c mod 2N
    for (std::size_t c = 0; c < row; ++c, g = g * 3 % m) {
      want[c] = eval_poly(coeffs, powm(psi, g, t), t);
      want[row + c] = eval_poly(coeffs, powm(psi, m - g, t), t);
    }
    EXPECT_TRUE(same_slots(v, want)) << "t = " << t << ", psi = " << psi;
  }
}

TEST(BfvEncoding, ConstantSlotsAreConstantPolynomial) {
  const ContextPtr ctx = small_context();
  BatchEncoder enc(ctx);
  const Vec coeffs = enc.encode(Vec(4096, 1234)).buffer().to_host();
  Vec want(4096, 0);
  want[0] = 1234;
  EXPECT_TRUE(same_slots(coeffs, want));
}

// ---- N = 2^15: one end-to-end pass per case (keys for steps 1 and the column swap only) --------

class BfvLarge : public ::testing::TestWithParam<BfvCase> {};

TEST_P(BfvLarge, EndToEnd) {
  Env env(GetParam());
  const u64 t = env.t;
  std::mt19937_64 rng(2024);
  const Vec a = env.random(rng), b = env.random(rng);
  const Ciphertext ca = env.encrypt(a);
  const Ciphertext cb = env.sym_encryptor.encrypt(env.encoder.encode(b));
  EXPECT_GT(env.budget(ca), 0);
  EXPECT_GT(env.budget(cb), 0);
  EXPECT_TRUE(same_slots(env.decrypt(ca), a));
  EXPECT_TRUE(same_slots(env.decrypt(cb), b));
  const Evaluator &ev = env.evaluator;
  EXPECT_TRUE(same_slots(env.decrypt(ev.add(ca, cb)), vadd(a, b, t)));
  EXPECT_TRUE(same_slots(env.decrypt(ev.sub(ca, cb)), vsub(a, b, t)));
  EXPECT_TRUE(same_slots(env.decrypt(ev.negate(ca)), vneg(a, t)));
  const Plaintext pb = env.encoder.encode(b);
  EXPECT_TRUE(same_slots(env.decrypt(ev.add_plain(ca, pb)), vadd(a, b, t)));
  EXPECT_TRUE(same_slots(env.decrypt(ev.multiply_plain(ca, pb)), vmul(a, b, t)));
  const RelinKeys rlk = env.kg.create_relin_keys();
  const Ciphertext m = ev.multiply(ca, cb);
  EXPECT_TRUE(same_slots(env.decrypt(m), vmul(a, b, t)));
  const Ciphertext r = ev.relinearize(m, rlk);
  EXPECT_GT(env.budget(r), 0);
  EXPECT_TRUE(same_slots(env.decrypt(r), vmul(a, b, t)));
  const Ciphertext sq = ev.relinearize(ev.square(r), rlk);
  EXPECT_LT(env.budget(sq), env.budget(r));
  EXPECT_TRUE(same_slots(env.decrypt(sq), vpow(vmul(a, b, t), 2, t)));
  const GaloisKeys gk = env.kg.create_galois_keys({1}, true);
  EXPECT_TRUE(same_slots(env.decrypt(ev.rotate_rows(ca, 1, gk)), rot_rows(a, 1)));
  // -(N/2 - 1) uses the same element as 1.
  const int far = -static_cast<int>(env.row - 1);
  EXPECT_TRUE(same_slots(env.decrypt(ev.rotate_rows(r, far, gk)), rot_rows(vmul(a, b, t), far)));
  EXPECT_TRUE(same_slots(env.decrypt(ev.rotate_columns(ca, gk)), swap_rows(a)));
  const std::vector<Ciphertext> many = ev.rotate_many(ca, {1}, gk);
  ASSERT_EQ(many.size(), 1u);
  EXPECT_TRUE(same_ct(many[0], ev.rotate_rows(ca, 1, gk)));
}

INSTANTIATE_TEST_SUITE_P(
    Bfv, BfvLarge,
    ::testing::Values(BfvCase{"n32768_default_t65537_hps", 32768, {}, 1, 0, 0, HPS, 0},
                      BfvCase{"n32768_default_t28_behz", 32768, {}, 1, 0, 28, BEHZ, 0}),
    [](const ::testing::TestParamInfo<BfvCase> &i) { return i.param.name; });

} // namespace
