// BGV end to end against plaintext arithmetic mod t computed here (unsigned __int128), independent
// of the library (DESIGN.md "Tests": plaintext arithmetic mod t for BFV/BGV).
//
// Slots are SEAL's 2 x N/2 matrix: rotate_rows(k) maps slot (r, c) <- (r, (c + k) mod N/2),
// rotate_columns swaps the two rows. BGV ciphertexts are in NTT form and carry a correction
// factor (Kim-Polyakov-Zucca 2021): mod switching and multiplication change it, additions of
// ciphertexts with different factors must align them. The tests check decryptions only, never the
// factor's value (an implementation may fold it into the ciphertext instead), except that the
// mixed-factor test asserts its operands really have different factors.
//
// Parameters: N = 2^14, Q = 50 + 5 x 40 bits (levels 0..5), one 50-bit special prime
// (log2 QP = 300 <= 438, the 128-bit bound), t = the largest 20-bit batching prime.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "batch_util.h"
#include "veil/core/error.h"
#include "veil/rlwe/checks.h"
#include "veil/rns/mod_down_ntt.h"

namespace {

using namespace veil;
using namespace veil::test;

// ---- shared environment ------------------------------------------------------------------------

constexpr std::size_t kN = 16384;
// Direct keys (powers of two, both directions, a subset: Galois keygen is the slow part).
const std::vector<int> kKeySteps = {1, -1, 2, 4, -4, 8};
// Composed along the non-adjacent form from the keys above:
// 3 = 4 - 1, -3 = -4 + 1, 5 = 4 + 1, -5 = -4 - 1, 7 = 8 - 1, 10 = 8 + 2,
// N/2 - 3 (= -3 mod N/2, NAF 8192 - 4 + 1 with the 8192 part the identity).
const std::vector<int> kComposedSteps = {3, -3, 5, -5, 7, 10, static_cast<int>(kN / 2) - 3};

EncryptionParameters bgv_params() {
  return veil::test::bgv_params(kN, {50, 40, 40, 40, 40, 40, 50});
}

struct Env {
  Env()
      : ctx(veil::Context::create(bgv_params())), t(ctx->plain_modulus()),
        kg(ctx, Device::cpu(), 0xB64), pk(kg.create_public_key()), rlk(kg.create_relin_keys()),
        gk(kg.create_galois_keys(kKeySteps, true)), encoder(ctx), encryptor(ctx, pk, 21),
        sym_encryptor(ctx, kg.secret_key(), 22), decryptor(ctx, kg.secret_key()), ev(ctx) {}

  Ciphertext encrypt(const Vec &v) const { return encryptor.encrypt(encoder.encode(v)); }
  Vec decrypt(const Ciphertext &ct) const { return encoder.decode(decryptor.decrypt(ct)); }
  int budget(const Ciphertext &ct) const { return decryptor.invariant_noise_budget(ct); }

  ContextPtr ctx;
  u64 t;
  KeyGenerator kg;
  PublicKey pk;
  RelinKeys rlk;
  GaloisKeys gk;
  BatchEncoder encoder;
  Encryptor encryptor, sym_encryptor;
  Decryptor decryptor;
  Evaluator ev;
};

class Bgv : public SharedEnvTest<Env> {
protected:
  Vec random() { return random_words(rng, kN, e->t); }
};

// ---- parameters -------------------------------------------------------------------------------

TEST_F(Bgv, ContextShape) {
  EXPECT_EQ(e->ctx->scheme(), veil::SchemeType::bgv);
  EXPECT_EQ(e->ctx->max_level(), 5u);
  EXPECT_LE(e->ctx->total_qp_bits(), 438);
  EXPECT_TRUE(e->ctx->batching_enabled());
  // t is a 20-bit prime with t = 1 mod 2N (checked here by trial division).
  const u64 t = e->t;
  EXPECT_EQ(t >> 19, 1u);
  EXPECT_EQ(t % (2 * kN), 1u);
  for (u64 d = 2; d * d <= t; ++d)
    ASSERT_NE(t % d, 0u) << "t = " << t << " has divisor " << d;
}

// ---- encryption -------------------------------------------------------------------------------

TEST_F(Bgv, EncryptDecryptPublicAndSymmetric) {
  const Vec a = random(), b = random();
  const Ciphertext pa = e->encrypt(a);
  const Ciphertext sb = e->sym_encryptor.encrypt(e->encoder.encode(b));
  for (const Ciphertext *c : {&pa, &sb}) {
    EXPECT_EQ(c->size(), 2u);
    EXPECT_EQ(c->level(), e->ctx->max_level());
    EXPECT_TRUE(c->is_ntt_form());
    EXPECT_GT(e->budget(*c), 0);
  }
  EXPECT_TRUE(same_slots(e->decrypt(pa), a));
  EXPECT_TRUE(same_slots(e->decrypt(sb), b));
  // Symmetric encryption has no u * e term: at least as much budget.
  EXPECT_GE(e->budget(sb), e->budget(pa));
  // Randomized: a second encryption differs, decrypts the same.
  const Ciphertext pa2 = e->encrypt(a);
  EXPECT_FALSE(same_words(pa, pa2));
  EXPECT_TRUE(same_slots(e->decrypt(pa2), a));
  // Encryptions of zero, both kinds.
  EXPECT_TRUE(same_slots(e->decrypt(e->encryptor.encrypt_zero()), Vec(kN, 0)));
  EXPECT_TRUE(same_slots(e->decrypt(e->sym_encryptor.encrypt_zero()), Vec(kN, 0)));
  // Symmetric and public-key ciphertexts combine.
  EXPECT_TRUE(same_slots(e->decrypt(e->ev.add(pa, sb)), vadd(a, b, e->t)));
  EXPECT_TRUE(
      same_slots(e->decrypt(e->ev.relinearize(e->ev.multiply(pa, sb), e->rlk)), vmul(a, b, e->t)));
}

TEST_F(Bgv, DeterministicWithSeeds) {
  const veil::EncryptionParameters p = bgv_params();
  KeyGenerator k1(e->ctx, Device::cpu(), 99), k2(e->ctx, Device::cpu(), 99);
  KeyGenerator k3(e->ctx, Device::cpu(), 100);
  EXPECT_TRUE(same_words(k1.secret_key(), k2.secret_key()));
  EXPECT_FALSE(same_words(k1.secret_key(), k3.secret_key()));
  const PublicKey p1 = k1.create_public_key(), p2 = k2.create_public_key();
  EXPECT_TRUE(same_words(p1, p2));
  EXPECT_FALSE(same_words(p1, k3.create_public_key()));
  const RelinKeys r1 = k1.create_relin_keys(), r2 = k2.create_relin_keys();
  EXPECT_TRUE(same_words(r1.key(), r2.key()));
  const GaloisKeys g1 = k1.create_galois_keys({1}, false), g2 = k2.create_galois_keys({1}, false);
  ASSERT_EQ(g1.keys().size(), 1u);
  const std::uint32_t e3 = e->ctx->galois_elt_from_step(1);
  ASSERT_TRUE(g1.has_key(e3) && g2.has_key(e3));
  EXPECT_TRUE(same_words(g1.key(e3), g2.key(e3)));
  // A context built again from the same parameters gives the same keys for the same seed.
  const ContextPtr ctx2 = veil::Context::create(p);
  KeyGenerator k4(ctx2, Device::cpu(), 99);
  EXPECT_TRUE(same_words(k4.secret_key(), k1.secret_key()));

  const Vec a = random(), b = random();
  const Plaintext pa = e->encoder.encode(a), pb = e->encoder.encode(b);
  Encryptor x1(e->ctx, p1, 5), x2(e->ctx, p2, 5), x3(e->ctx, p1, 6);
  const Ciphertext c1 = x1.encrypt(pa), c2 = x2.encrypt(pa), c3 = x3.encrypt(pa);
  EXPECT_TRUE(same_ct(c1, c2));
  EXPECT_FALSE(same_words(c1, c3));
  // The stream continues identically: the second encryption of each matches too.
  const Ciphertext d1 = x1.encrypt(pb), d2 = x2.encrypt(pb);
  EXPECT_TRUE(same_ct(d1, d2));
  EXPECT_FALSE(same_words(c1, d1));
  Encryptor s1(e->ctx, k1.secret_key(), 7), s2(e->ctx, k2.secret_key(), 7);
  EXPECT_TRUE(same_ct(s1.encrypt(pa), s2.encrypt(pa)));
  // Evaluation is deterministic.
  const Evaluator &ev = e->ev;
  const Ciphertext m1 = ev.mod_switch_to_next(ev.relinearize(ev.multiply(c1, d1), r1));
  const Ciphertext m2 = ev.mod_switch_to_next(ev.relinearize(ev.multiply(c2, d2), r2));
  EXPECT_TRUE(same_ct(m1, m2));
  EXPECT_TRUE(same_ct(ev.rotate_rows(m1, 1, g1), ev.rotate_rows(m2, 1, g2)));
  Decryptor dec(e->ctx, k1.secret_key());
  EXPECT_TRUE(same_slots(e->encoder.decode(dec.decrypt(m1)), vmul(a, b, e->t)));
}

// ---- a depth-4 circuit with modulus switching ------------------------------------------------

TEST_F(Bgv, DepthFourCircuitWithModSwitch) {
  const u64 t = e->t;
  const Evaluator &ev = e->ev;
  const Vec a = random(), b = random(), c = random(), d = random(), f = random(), g = random();
  const Ciphertext ca = e->encrypt(a), cb = e->encrypt(b), cc = e->encrypt(c), cd = e->encrypt(d),
                   cf = e->encrypt(f);
  const Plaintext pg = e->encoder.encode(g);
  std::printf("[ BGV ] fresh budget %d bits (level %zu)\n", e->budget(ca), ca.level());

  // Checks one stage: level, size, value and a positive budget.
  auto check = [&](const Ciphertext &x, std::size_t level, const Vec &want, const char *what) {
    EXPECT_EQ(x.level(), level) << what;
    EXPECT_EQ(x.size(), 2u) << what;
    EXPECT_GT(e->budget(x), 0) << what;
    EXPECT_TRUE(same_slots(e->decrypt(x), want)) << what;
  };

  // 1: a * b at level 5, then switch to 4.
  const Vec ab = vmul(a, b, t);
  const Ciphertext m1 = ev.multiply(ca, cb);
  EXPECT_EQ(m1.size(), 3u);
  EXPECT_TRUE(same_slots(e->decrypt(m1), ab)) << "size-3 product";
  const Ciphertext r1 = ev.relinearize(m1, e->rlk);
  check(r1, 5, ab, "a*b");
  EXPECT_LT(e->budget(r1), e->budget(ca));
  const Ciphertext x1 = ev.mod_switch_to_next(r1);
  check(x1, 4, ab, "a*b switched");
  std::printf("[ BGV ] a*b: budget %d -> %d after mod switch\n", e->budget(r1), e->budget(x1));

  // 2: (a*b + c) * d at level 4, then switch to 3.
  const Vec s2 = vadd(ab, c, t);
  const Ciphertext y2 = ev.add(x1, ev.mod_switch_to(cc, 4));
  check(y2, 4, s2, "a*b + c");
  const Vec v2 = vmul(s2, d, t);
  const Ciphertext r2 = ev.relinearize(ev.multiply(y2, ev.mod_switch_to(cd, 4)), e->rlk);
  check(r2, 4, v2, "(a*b + c) * d");
  EXPECT_LT(e->budget(r2), e->budget(y2));
  const Ciphertext x2 = ev.mod_switch_to_next(r2);
  check(x2, 3, v2, "(a*b + c) * d switched");

  // 3: square, minus the plaintext g, at level 3, then switch to 2.
  const Vec v3 = vsub(vmul(v2, v2, t), g, t);
  const Ciphertext sq = ev.square(x2);
  EXPECT_EQ(sq.size(), 3u);
  const Ciphertext r3 = ev.sub_plain(ev.relinearize(sq, e->rlk), pg);
  check(r3, 3, v3, "((a*b + c) * d)^2 - g");
  EXPECT_LT(e->budget(r3), e->budget(x2));
  const Ciphertext x3 = ev.mod_switch_to_next(r3);
  check(x3, 2, v3, "stage 3 switched");

  // 4: times f (switched from level 5 to 2: a different correction factor), negated, + a*b (at
  // level 4, switched to 2), at level 2, then switch to 1.
  const Vec v4 = vadd(vneg(vmul(v3, f, t), t), ab, t);
  const Ciphertext r4 =
      ev.add(ev.negate(ev.relinearize(ev.multiply(x3, ev.mod_switch_to(cf, 2)), e->rlk)),
             ev.mod_switch_to(x1, 2));
  check(r4, 2, v4, "stage 4");
  EXPECT_LT(e->budget(r4), e->budget(x3));
  const Ciphertext x4 = ev.mod_switch_to_next(r4);
  check(x4, 1, v4, "stage 4 switched");
  // And down to level 0, still correct.
  const Ciphertext x5 = ev.mod_switch_to_next(x4);
  check(x5, 0, v4, "stage 4 at level 0");
  std::printf("[ BGV ] depth 4: budgets by stage %d, %d, %d, %d; level 0: %d\n", e->budget(x1),
              e->budget(x2), e->budget(x3), e->budget(x4), e->budget(x5));
  // Level 0 cannot be switched further.
  EXPECT_THROW(ev.mod_switch_to_next(x5), veil::InvalidArgument);
}

TEST_F(Bgv, ModSwitchToEveryLevel) {
  const Vec a = random();
  const Ciphertext ca = e->encrypt(a);
  // mod_switch_to the current level is the identity.
  EXPECT_TRUE(same_ct(e->ev.mod_switch_to(ca, ca.level()), ca));
  Ciphertext step = ca;
  for (std::size_t l = ca.level(); l-- > 0;) {
    const Ciphertext direct = e->ev.mod_switch_to(ca, l);
    step = e->ev.mod_switch_to_next(step);
    EXPECT_EQ(direct.level(), l);
    EXPECT_TRUE(same_ct(direct, step)) << "level " << l;
    EXPECT_GT(e->budget(direct), 0) << "level " << l;
    EXPECT_TRUE(same_slots(e->decrypt(direct), a)) << "level " << l;
  }
  // In place matches out of place.
  Ciphertext x = ca;
  e->ev.mod_switch_to_next_inplace(x);
  EXPECT_TRUE(same_ct(x, e->ev.mod_switch_to_next(ca)));
}

// ---- different correction factors ------------------------------------------------------------

TEST_F(Bgv, AddSubWithDifferentCorrectionFactors) {
  const u64 t = e->t;
  const Evaluator &ev = e->ev;
  const Vec a = random(), b = random(), c = random();
  const Ciphertext ca = e->encrypt(a), cb = e->encrypt(b), cc = e->encrypt(c);
  // x: product of two ciphertexts switched to level 4 (factor f^2 with f = q_5^-1 mod t);
  // y: one fresh ciphertext switched to level 4 (factor f); z: fresh at level 5, not switched.
  const Ciphertext x =
      ev.relinearize(ev.multiply(ev.mod_switch_to_next(ca), ev.mod_switch_to_next(cb)), e->rlk);
  const Ciphertext y = ev.mod_switch_to(cc, 4);
  ASSERT_EQ(x.level(), 4u);
  ASSERT_EQ(y.level(), 4u);
  ASSERT_NE(x.correction_factor() % t, y.correction_factor() % t)
      << "test precondition: operands with different correction factors";
  const Vec ab = vmul(a, b, t);
  EXPECT_TRUE(same_slots(e->decrypt(ev.add(x, y)), vadd(ab, c, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.add(y, x)), vadd(ab, c, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.sub(x, y)), vsub(ab, c, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.sub(y, x)), vsub(c, ab, t)));
  Ciphertext in = y;
  ev.sub_inplace(in, x);
  EXPECT_TRUE(same_slots(e->decrypt(in), vsub(c, ab, t)));
  ev.add_inplace(in, x);
  EXPECT_TRUE(same_slots(e->decrypt(in), c));
  EXPECT_TRUE(same_slots(e->decrypt(ev.add_many({x, y, x})), vadd(vadd(ab, ab, t), c, t)));

  // A size-3 operand with one factor plus a size-2 operand with another.
  const Ciphertext x3 = ev.multiply(ev.mod_switch_to_next(ca), ev.mod_switch_to_next(cb));
  ASSERT_EQ(x3.size(), 3u);
  EXPECT_TRUE(same_slots(e->decrypt(ev.add(y, x3)), vadd(ab, c, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.sub(y, x3)), vsub(c, ab, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.relinearize(ev.add(x3, y), e->rlk)), vadd(ab, c, t)));

  // Fresh at level 5 switched to 3 (factor f_5 f_4) against x switched to 3 (f_5^2 f_4).
  const Ciphertext z = ev.mod_switch_to(cc, 3), x_3 = ev.mod_switch_to(x, 3);
  EXPECT_NE(z.correction_factor() % t, x_3.correction_factor() % t);
  EXPECT_TRUE(same_slots(e->decrypt(ev.sub(z, x_3)), vsub(c, ab, t)));
  // Multiplying operands with different factors, then adding a third factor.
  const Ciphertext p = ev.relinearize(ev.multiply(x_3, z), e->rlk);
  const Vec abc = vmul(ab, c, t);
  EXPECT_TRUE(same_slots(e->decrypt(p), abc));
  EXPECT_TRUE(same_slots(e->decrypt(ev.add(p, z)), vadd(abc, c, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.sub(ev.mod_switch_to(cb, 3), p)), vsub(b, abc, t)));
}

// ---- plaintext operations ----------------------------------------------------------------------

TEST_F(Bgv, PlainOpsAtSeveralLevels) {
  const u64 t = e->t;
  const Evaluator &ev = e->ev;
  const Vec a = random(), b = random();
  const Plaintext pb = e->encoder.encode(b);
  const Ciphertext ca = e->encrypt(a);
  // Level 5 with factor 1; level 3 (switched: factor != 1); level 3 after a multiplication;
  // level 1 (90 bits: a general plaintext multiplies the noise by ~2^26, more than level 0's
  // 50 bits can hold after switching).
  const Vec sq = vmul(a, a, t);
  const Ciphertext prod = ev.mod_switch_to(ev.relinearize(ev.multiply(ca, ca), e->rlk), 3);
  struct Item {
    const char *name;
    Ciphertext ct;
    Vec v;
  };
  const std::vector<Item> items = {{"fresh", ca, a},
                                   {"switched to 3", ev.mod_switch_to(ca, 3), a},
                                   {"a^2 at 3", prod, sq},
                                   {"a at 1", ev.mod_switch_to(ca, 1), a}};
  for (const Item &it : items) {
    SCOPED_TRACE(it.name);
    EXPECT_TRUE(same_slots(e->decrypt(ev.add_plain(it.ct, pb)), vadd(it.v, b, t)));
    EXPECT_TRUE(same_slots(e->decrypt(ev.sub_plain(it.ct, pb)), vsub(it.v, b, t)));
    const Ciphertext m = ev.multiply_plain(it.ct, pb);
    EXPECT_EQ(m.level(), it.ct.level());
    EXPECT_GT(e->budget(m), 0);
    EXPECT_TRUE(same_slots(e->decrypt(m), vmul(it.v, b, t)));
    // In place agrees bit for bit.
    Ciphertext x = it.ct;
    ev.add_plain_inplace(x, pb);
    EXPECT_TRUE(same_ct(x, ev.add_plain(it.ct, pb)));
    ev.sub_plain_inplace(x, pb);
    EXPECT_TRUE(same_slots(e->decrypt(x), it.v));
    x = it.ct;
    ev.multiply_plain_inplace(x, pb);
    EXPECT_TRUE(same_ct(x, m));
  }
  // Constant plaintexts: all ones keeps, all t-1 negates, zero annihilates.
  EXPECT_TRUE(same_slots(e->decrypt(ev.multiply_plain(ca, e->encoder.encode(Vec(kN, 1)))), a));
  EXPECT_TRUE(
      same_slots(e->decrypt(ev.multiply_plain(ca, e->encoder.encode(Vec(kN, t - 1)))), vneg(a, t)));
  // Zero gives a transparent result: SEAL raises, so does Veil unless the check is off.
  EXPECT_THROW(ev.multiply_plain(ca, e->encoder.encode(Vec(kN, 0))), veil::InvalidArgument);
  veil::set_transparent_check(false);
  EXPECT_TRUE(
      same_slots(e->decrypt(ev.multiply_plain(ca, e->encoder.encode(Vec(kN, 0)))), Vec(kN, 0)));
  veil::set_transparent_check(true);
  // Signed encoding: -1 everywhere negates too.
  EXPECT_TRUE(same_slots(e->decrypt(ev.multiply_plain(
                             ca, e->encoder.encode_signed(std::vector<std::int64_t>(kN, -1)))),
                         vneg(a, t)));
  // Plain ops on a size-3 ciphertext.
  const Ciphertext c3 = ev.multiply(ca, ca);
  EXPECT_TRUE(same_slots(e->decrypt(ev.add_plain(c3, pb)), vadd(sq, b, t)));
  EXPECT_TRUE(same_slots(e->decrypt(ev.multiply_plain(c3, pb)), vmul(sq, b, t)));
}

// ---- rotations ---------------------------------------------------------------------------------

TEST_F(Bgv, RotateRowsAtSeveralLevels) {
  const u64 t = e->t;
  const Evaluator &ev = e->ev;
  const Vec a = random(), b = random();
  const Ciphertext ca = e->encrypt(a);
  // A ciphertext with a non-trivial correction factor at level 3: a * b switched twice.
  const Vec ab = vmul(a, b, t);
  const Ciphertext cab =
      ev.mod_switch_to(ev.relinearize(ev.multiply(ca, e->encrypt(b)), e->rlk), 3);
  struct Item {
    const char *name;
    Ciphertext ct;
    Vec v;
  };
  const std::vector<Item> items = {
      {"level 5", ca, a}, {"a*b at level 3", cab, ab}, {"level 0", ev.mod_switch_to(ca, 0), a}};
  std::vector<int> steps = kKeySteps;
  steps.insert(steps.end(), kComposedSteps.begin(), kComposedSteps.end());
  steps.push_back(static_cast<int>(kN / 2) - 1); // same element as -1
  for (const Item &it : items) {
    SCOPED_TRACE(it.name);
    for (int s : steps) {
      const Ciphertext r = ev.rotate_rows(it.ct, s, e->gk);
      EXPECT_EQ(r.level(), it.ct.level()) << "step " << s;
      EXPECT_EQ(r.size(), 2u);
      EXPECT_GT(e->budget(r), 0) << "step " << s;
      EXPECT_TRUE(same_slots(e->decrypt(r), rot_rows(it.v, s))) << "step " << s;
    }
    // Step 0 is the identity; (x << 1) << -1 == x.
    EXPECT_TRUE(same_ct(ev.rotate_rows(it.ct, 0, e->gk), it.ct));
    EXPECT_TRUE(
        same_slots(e->decrypt(ev.rotate_rows(ev.rotate_rows(it.ct, 1, e->gk), -1, e->gk)), it.v));
  }
  // A composed step equals the chain of its NAF parts: 7 = 8 - 1 (same result bit for bit).
  EXPECT_TRUE(same_ct(ev.rotate_rows(ca, 7, e->gk),
                      ev.rotate_rows(ev.rotate_rows(ca, -1, e->gk), 8, e->gk)));
  // Rotation commutes with mod switching (on the values).
  const Ciphertext rs = ev.mod_switch_to(ev.rotate_rows(ca, 5, e->gk), 2);
  const Ciphertext sr = ev.rotate_rows(ev.mod_switch_to(ca, 2), 5, e->gk);
  EXPECT_TRUE(same_slots(e->decrypt(rs), e->decrypt(sr)));
  // A rotated product keeps being usable in arithmetic.
  const Ciphertext r = ev.rotate_rows(cab, 3, e->gk);
  EXPECT_TRUE(
      same_slots(e->decrypt(ev.add(r, ev.mod_switch_to(ca, 3))), vadd(rot_rows(ab, 3), a, t)));
}

TEST_F(Bgv, RotateColumnsAtSeveralLevels) {
  const u64 t = e->t;
  const Evaluator &ev = e->ev;
  const Vec a = random(), b = random();
  const Ciphertext ca = e->encrypt(a);
  const Ciphertext cab =
      ev.mod_switch_to(ev.relinearize(ev.multiply(ca, e->encrypt(b)), e->rlk), 2);
  const Vec ab = vmul(a, b, t);
  for (const auto &[ct, v] :
       std::vector<std::pair<Ciphertext, Vec>>{{ca, a}, {cab, ab}, {ev.mod_switch_to(ca, 0), a}}) {
    SCOPED_TRACE("level " + std::to_string(ct.level()));
    const Ciphertext r = ev.rotate_columns(ct, e->gk);
    EXPECT_EQ(r.level(), ct.level());
    EXPECT_GT(e->budget(r), 0);
    EXPECT_TRUE(same_slots(e->decrypt(r), swap_rows(v)));
    EXPECT_TRUE(same_slots(e->decrypt(ev.rotate_columns(r, e->gk)), v));
    // Column swap commutes with row rotation.
    EXPECT_TRUE(same_slots(e->decrypt(ev.rotate_rows(r, -4, e->gk)), swap_rows(rot_rows(v, -4))));
  }
  // apply_galois with the column element is rotate_columns bit for bit.
  EXPECT_TRUE(same_ct(ev.apply_galois(ca, e->ctx->galois_elt_column(), e->gk),
                      ev.rotate_columns(ca, e->gk)));
  EXPECT_EQ(e->ctx->galois_elt_column(), 2 * kN - 1);
}

TEST_F(Bgv, RotateManyMatchesRotateRows) {
  const Evaluator &ev = e->ev;
  const Vec a = random(), b = random();
  const Ciphertext ca = e->encrypt(a);
  const Ciphertext low =
      ev.mod_switch_to(ev.relinearize(ev.multiply(ca, e->encrypt(b)), e->rlk), 1);
  const Vec ab = vmul(a, b, e->t);
  // Direct keys, composed steps (no key: NAF fallback) and 0, in mixed order.
  const std::vector<int> steps = {1, 3, -4, 0, 8, -1, -5, 2, 10, 4};
  for (const auto &[ct, v] : std::vector<std::pair<Ciphertext, Vec>>{{ca, a}, {low, ab}}) {
    SCOPED_TRACE("level " + std::to_string(ct.level()));
    const std::vector<Ciphertext> many = ev.rotate_many(ct, steps, e->gk);
    ASSERT_EQ(many.size(), steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
      EXPECT_TRUE(same_ct(many[i], ev.rotate_rows(ct, steps[i], e->gk))) << "step " << steps[i];
      EXPECT_EQ(many[i].correction_factor(), ct.correction_factor());
      EXPECT_TRUE(same_slots(e->decrypt(many[i]), rot_rows(v, steps[i]))) << "step " << steps[i];
    }
  }
}

// ---- noise budget
// --------------------------------------------------------------------------------

TEST_F(Bgv, NoiseBudgetDecreasesAndDecryptionCorrectWhilePositive) {
  const u64 t = e->t;
  const Evaluator &ev = e->ev;
  // Repeated squaring at the top level without mod switching: the noise roughly doubles in bits
  // each time, so the budget must run out within a few squarings.
  const Vec a = random();
  Ciphertext x = e->encrypt(a);
  Vec want = a;
  int budget = e->budget(x);
  ASSERT_GT(budget, 0);
  std::printf("[ BGV ] squaring at level 5: budget %d", budget);
  int squarings = 0;
  for (; squarings < 8 && budget > 0; ++squarings) {
    x = ev.relinearize(ev.square(x), e->rlk);
    want = vmul(want, want, t);
    const int nb = e->budget(x);
    std::printf(" -> %d", nb);
    EXPECT_LT(nb, budget) << "squaring " << squarings + 1;
    budget = nb;
    if (budget > 0)
      EXPECT_TRUE(same_slots(e->decrypt(x), want)) << "squaring " << squarings + 1;
  }
  std::printf("\n");
  EXPECT_EQ(budget, 0) << "the budget should be exhausted by repeated squaring";
  EXPECT_GE(squarings, 2);
  // With mod switching after each squaring, the same circuit stays decryptable longer.
  Ciphertext y = e->encrypt(a);
  want = a;
  for (int i = 0; i < 4; ++i) {
    y = ev.mod_switch_to_next(ev.relinearize(ev.square(y), e->rlk));
    want = vmul(want, want, t);
    ASSERT_GT(e->budget(y), 0) << "squaring " << i + 1;
    EXPECT_TRUE(same_slots(e->decrypt(y), want)) << "squaring " << i + 1;
  }
  EXPECT_GT(4, squarings - 1) << "mod switching should extend the depth";
}

} // namespace

// The CPU's own pass for BGV's t-corrected correction from one dropped prime
// (set_t_corrected_one_prime_cpu) and the register-blocked conversion give the same words:
// public-key encryption (one special prime), modulus switching, relinearization and a rotation,
// on 64- and 32-bit words. (Their correctness against plaintext arithmetic is the tests above'.)
TEST(BgvSettings, OnePrimeTCorrectionKeepsTheWords) {
  struct Restore {
    ~Restore() { veil::set_t_corrected_one_prime_cpu(true); }
  } restore;
  for (const std::vector<int>& bits : {std::vector<int>{50, 40, 40, 50},
                                       std::vector<int>{30, 30, 30, 30}}) {
    veil::EncryptionParameters p(veil::SchemeType::bgv);
    p.poly_modulus_degree = 4096;
    p.coeff_modulus = CoeffModulus::create(4096, bits);
    p.special_primes = 1;
    p.plain_modulus = PlainModulus::batching(4096, 20);
    const ContextPtr ctx = veil::Context::create(p, veil::SecurityLevel::none);
    SCOPED_TRACE(std::to_string(ctx->word_bits()) + "-bit words");
    std::vector<std::vector<std::uint64_t>> want;
    for (bool own_pass : {true, false}) {
      veil::set_t_corrected_one_prime_cpu(own_pass);
      KeyGenerator kg(ctx, Device::cpu(), 5);
      const PublicKey pk = kg.create_public_key();
      const RelinKeys rlk = kg.create_relin_keys();
      const GaloisKeys gk = kg.create_galois_keys({1}, true);
      const BatchEncoder enc(ctx);
      const Encryptor encryptor(ctx, pk, 6);
      const Evaluator ev(ctx);
      Vec v(4096);
      for (std::size_t i = 0; i < v.size(); ++i) v[i] = (i * 7919) % ctx->plain_modulus();
      const Ciphertext ct = encryptor.encrypt(enc.encode(v));
      std::vector<std::vector<std::uint64_t>> got{
          veil::test::words(ct), veil::test::words(ev.mod_switch_to_next(ct)),
          veil::test::words(ev.relinearize(ev.multiply(ct, ct), rlk)),
          veil::test::words(ev.rotate_rows(ct, 1, gk))};
      if (want.empty()) {
        want = got;
      } else {
        EXPECT_EQ(got, want);
      }
    }
  }
}
