// CKKS end to end against a float64 oracle computed here with std::complex<double> (DESIGN.md
// "Tests": float64 oracle for CKKS, precision reported in bits).
//
// Slot j of a plaintext is the value at zeta^(3^j); rotate_vector(k) maps slot j <- slot j + k
// (mod N/2), conjugate takes the complex conjugate of every slot (element 2N - 1), and the
// element -3^k mod 2N is conjugation composed with rotation by k.
//
// Parameters: N = 2^14, Q = 60 + 6 x 40 bits (levels 0..6), one 60-bit special prime
// (log2 QP = 360 <= 438), scale 2^40.
//
// Error model (why the bounds below hold; "rms" over the slots, at scale 2^40):
//  - symmetric encryption adds e (sigma = 3.2): sqrt(N) sigma ~ 2^8.7, i.e. 2^-31.3 rms;
//  - public-key encryption: Veil (as SEAL) encrypts over Q ∪ P and divides by P, so the textbook
//    noise u e + e0 + e1 s (sigma^2 (1 + 4N/3) per coefficient: 2^-24.1 rms, max ~2^-22) shrinks
//    by P and the rounding r0 + r1 s remains: sqrt(N) sqrt(N / 18) ~ 2^11.9, i.e. 2^-28.1 rms;
//    r1 s is a product of two embeddings, so its maximum over the slots is ~2^-25.5;
//  - rescaling adds the same kind of rounding (2^-28.1 rms);
//  - key switching (rotations, conjugation) adds an error dominated by the 60-bit digit q_0
//    (q_0 / P ~ 1): ~2^-25.7 rms, with a heavy tail at the slots nearest the points zeta^(+-1)
//    (up to ~2^-18): the digits are taken in [0, q_j) as SEAL does, so they have mean q_j / 2, a
//    constant term whose embedding is ~N / (pi pos) at zeta^pos.
// Hence, for max |error| / max |value| after one multiplication + relinearization + rescale:
// <= 2^-25 for symmetric encryptions (measured 2^-25.6) and <= 2^-24 for public-key ones
// (measured 2^-25.0; the textbook encryption would give ~2^-21.5). Operations that key-switch
// are allowed 2^-16 on the max error and must keep >= 21 bits of mean precision.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "ckks_util.h"
#include "veil/core/error.h"
#include "veil/rlwe/checks.h"

namespace {

using namespace veil;
using namespace veil::test;

constexpr std::size_t kN = 16384;
constexpr std::size_t kSlots = kN / 2;
const double kScale = std::ldexp(1.0, 40);
const std::vector<int> kBits = {60, 40, 40, 40, 40, 40, 40, 60};

// ---- float64 oracle ---------------------------------------------------------------------------

// Error statistics of `got` against `want`: absolute errors |got - want|, relative ones divided
// by |want| (the test values are bounded away from 0), and the precision -log2|err| in bits.
struct Stats {
  double max_abs = 0, max_rel = 0, mean_bits = 0, min_bits = 0;
};
Stats stats(const CVec &got, const CVec &want) {
  Stats s;
  s.min_bits = 1e300;
  EXPECT_EQ(got.size(), want.size());
  const std::size_t n = std::min(got.size(), want.size());
  double sum_bits = 0;
  for (std::size_t i = 0; i < n; ++i) {
    const double err = std::abs(got[i] - want[i]);
    const double bits = -std::log2(std::max(err, 1e-300));
    s.max_abs = std::max(s.max_abs, err);
    if (std::abs(want[i]) > 0)
      s.max_rel = std::max(s.max_rel, err / std::abs(want[i]));
    sum_bits += bits;
    s.min_bits = std::min(s.min_bits, bits);
  }
  s.mean_bits = n ? sum_bits / static_cast<double>(n) : 0;
  if (!std::isfinite(s.max_abs))
    s.max_rel = s.max_abs;
  return s;
}
// Max absolute error <= max_abs and mean precision >= min_mean_bits.
::testing::AssertionResult close(const CVec &got, const CVec &want, double max_abs,
                                 double min_mean_bits = 21.0) {
  const Stats s = stats(got, want);
  if (s.max_abs <= max_abs && s.mean_bits >= min_mean_bits)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << "max abs error 2^" << std::log2(s.max_abs) << " (bound 2^" << std::log2(max_abs)
         << "), mean precision " << s.mean_bits << " bits (bound " << min_mean_bits << ")";
}
// max |got - want| / max |want| (relative error in the max norm).
double rel_max_norm(const CVec &got, const CVec &want) {
  double e = 0, w = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    e = std::max(e, std::abs(got[i] - want[i]));
    w = std::max(w, std::abs(want[i]));
  }
  return e / w;
}

// ---- shared environment ------------------------------------------------------------------------

// Direct keys (a subset of SEAL's power-of-two default, both directions) and the conjugation key.
const std::vector<int> kKeySteps = {1, -1, 2, 4, -4, 8};
// Composed along the NAF: 3 = 4 - 1, -3 = -4 + 1, 5 = 4 + 1, 7 = 8 - 1, 10 = 8 + 2,
// N/2 - 3 (= -3 mod N/2).
const std::vector<int> kComposedSteps = {3, -3, 5, 7, 10, static_cast<int>(kSlots) - 3};

// Bounds on the max absolute slot error (values of modulus <= 1), from the error model above
// with margin: fresh public-key encryption ~2^-25.5 max, symmetric ~2^-29.6; after a few
// operations including key switches 2^-16 (see the header comment).
const double kFreshPk = std::ldexp(1.0, -23);
const double kFreshSym = std::ldexp(1.0, -27);
const double kOps = std::ldexp(1.0, -16);

EncryptionParameters ckks_params() { return make_params(SchemeType::ckks, kN, kBits); }

struct Env {
  Env()
      : ctx(veil::Context::create(ckks_params())), kg(ctx, Device::cpu(), 0xC445),
        pk(kg.create_public_key()), rlk(kg.create_relin_keys()),
        gk(kg.create_galois_keys(kKeySteps, true)), encoder(ctx), encryptor(ctx, pk, 31),
        sym_encryptor(ctx, kg.secret_key(), 32), decryptor(ctx, kg.secret_key()), ev(ctx) {}

  Ciphertext encrypt(const CVec &v, std::size_t level) const {
    return encryptor.encrypt(encoder.encode(v, kScale, level));
  }
  Ciphertext encrypt(const CVec &v) const { return encrypt(v, ctx->max_level()); }
  CVec decrypt(const Ciphertext &ct) const { return encoder.decode(decryptor.decrypt(ct)); }
  // q_l, from the parameters (not from the library's tables).
  double prime(std::size_t level) const {
    return static_cast<double>(ctx->params().coeff_modulus.at(level));
  }

  ContextPtr ctx;
  KeyGenerator kg;
  PublicKey pk;
  RelinKeys rlk;
  GaloisKeys gk;
  CKKSEncoder encoder;
  Encryptor encryptor, sym_encryptor;
  Decryptor decryptor;
  Evaluator ev;
};

class Ckks : public SharedEnvTest<Env> {
protected:
  // Complex values of modulus in [0.5, 1] (bounded away from 0 so relative errors are meaningful).
  CVec random(double lo = 0.5, double hi = 1.0) {
    std::uniform_real_distribution<double> r(lo, hi), ang(0.0, 2.0 * M_PI);
    CVec v(kSlots);
    for (auto &z : v)
      z = std::polar(r(rng), ang(rng));
    return v;
  }
  // Values on the unit circle: products keep modulus 1 along long chains.
  CVec unit() { return random(1.0, 1.0); }
};

// ---- encryption -------------------------------------------------------------------------------

TEST_F(Ckks, EncryptDecryptPublicAndSymmetric) {
  const CVec a = random();
  const Plaintext pa = e->encoder.encode(a, kScale, e->ctx->max_level());
  const Ciphertext cp = e->encryptor.encrypt(pa), cs = e->sym_encryptor.encrypt(pa);
  for (const Ciphertext *c : {&cp, &cs}) {
    EXPECT_EQ(c->size(), 2u);
    EXPECT_EQ(c->level(), e->ctx->max_level());
    EXPECT_TRUE(c->is_ntt_form());
    EXPECT_EQ(c->scale(), kScale);
  }
  const Stats sp = stats(e->decrypt(cp), a), ss = stats(e->decrypt(cs), a);
  std::printf("[ CKKS ] fresh precision: public key mean %.1f / min %.1f bits, symmetric mean "
              "%.1f / min %.1f bits\n",
              sp.mean_bits, sp.min_bits, ss.mean_bits, ss.min_bits);
  EXPECT_LE(sp.max_abs, kFreshPk);
  EXPECT_LE(ss.max_abs, kFreshSym);
  // Randomized encryption; zero.
  EXPECT_FALSE(same_words(cp, e->encryptor.encrypt(pa)));
  // Encryptions of zero carry scale 1: read them at scale 2^40.
  Ciphertext zp = e->encryptor.encrypt_zero(), zs = e->sym_encryptor.encrypt_zero();
  EXPECT_EQ(zp.level(), e->ctx->max_level());
  zp.set_scale(kScale);
  zs.set_scale(kScale);
  EXPECT_TRUE(close(e->decrypt(zp), CVec(kSlots), kFreshPk, 0));
  EXPECT_TRUE(close(e->decrypt(zs), CVec(kSlots), kFreshSym, 0));
  // Real inputs stay real.
  std::vector<double> re(kSlots);
  CVec rec(kSlots);
  for (std::size_t i = 0; i < kSlots; ++i)
    rec[i] = re[i] = std::cos(0.001 * static_cast<double>(i));
  EXPECT_TRUE(
      close(e->decrypt(e->encryptor.encrypt(e->encoder.encode(re, kScale, 6))), rec, kFreshPk));
}

TEST_F(Ckks, EncodeAtLowerLevelThenEncrypt) {
  const CVec a = random(), b = random();
  for (std::size_t level : {std::size_t(0), std::size_t(2), std::size_t(5)}) {
    SCOPED_TRACE("level " + std::to_string(level));
    const Plaintext pa = e->encoder.encode(a, kScale, level);
    EXPECT_EQ(pa.level(), level);
    EXPECT_EQ(pa.word_count(), (level + 1) * kN);
    const Ciphertext cp = e->encryptor.encrypt(pa), cs = e->sym_encryptor.encrypt(pa);
    EXPECT_EQ(cp.level(), level);
    EXPECT_EQ(cs.level(), level);
    EXPECT_EQ(cp.word_count(), 2 * (level + 1) * kN);
    EXPECT_TRUE(close(e->decrypt(cp), a, kFreshPk));
    EXPECT_TRUE(close(e->decrypt(cs), a, kFreshSym));
    EXPECT_EQ(e->decryptor.decrypt(cp).level(), level);
    if (level > 0) {
      // Multiply and rescale from there.
      const Ciphertext m = e->ev.rescale_to_next(
          e->ev.relinearize(e->ev.multiply(cp, e->encrypt(b, level)), e->rlk));
      EXPECT_EQ(m.level(), level - 1);
      EXPECT_TRUE(close(e->decrypt(m), vmul(a, b), kOps));
    }
  }
}

// ---- multiplication precision
// --------------------------------------------------------------------

TEST_F(Ckks, MultiplyRelinearizeRescalePrecision) {
  const CVec a = random(), b = random();
  const CVec want = vmul(a, b);
  const Evaluator &ev = e->ev;
  const std::size_t top = e->ctx->max_level();
  struct Run {
    const char *name;
    const Encryptor *enc;
    double bound;
  };
  for (const Run &r : {Run{"symmetric", &e->sym_encryptor, std::ldexp(1.0, -25)},
                       Run{"public key", &e->encryptor, std::ldexp(1.0, -24)}}) {
    SCOPED_TRACE(r.name);
    const Ciphertext ca = r.enc->encrypt(e->encoder.encode(a, kScale, top));
    const Ciphertext cb = r.enc->encrypt(e->encoder.encode(b, kScale, top));
    const Ciphertext m = ev.multiply(ca, cb);
    EXPECT_EQ(m.size(), 3u);
    EXPECT_EQ(m.scale(), kScale * kScale);
    const Ciphertext rl = ev.relinearize(m, e->rlk);
    EXPECT_EQ(rl.size(), 2u);
    EXPECT_EQ(rl.scale(), kScale * kScale);
    const Ciphertext rs = ev.rescale_to_next(rl);
    EXPECT_EQ(rs.level(), top - 1);
    // scale 2^80 / q_top, computed from the parameters.
    EXPECT_DOUBLE_EQ(rs.scale(), kScale * kScale / e->prime(top));
    const CVec got = e->decrypt(rs);
    const Stats s = stats(got, want);
    const double rel = rel_max_norm(got, want);
    std::printf("[ CKKS ] %s encryption, multiply+relinearize+rescale at 2^40: max error / max "
                "|value| 2^%.2f, max per-slot relative error 2^%.2f, precision -log2|err| mean "
                "%.2f / min %.2f bits\n",
                r.name, std::log2(rel), std::log2(s.max_rel), s.mean_bits, s.min_bits);
    EXPECT_LE(rel, r.bound);
    // Before rescaling (size 3 and relinearized) the error is no larger.
    EXPECT_LE(rel_max_norm(e->decrypt(m), want), r.bound);
    EXPECT_LE(rel_max_norm(e->decrypt(rl), want), r.bound);
    // Square equals multiply by an identical copy bit for bit.
    const Ciphertext copy = ca;
    EXPECT_TRUE(same_ct(ev.square(ca), ev.multiply(ca, copy)));
    EXPECT_LE(rel_max_norm(e->decrypt(ev.rescale_to_next(ev.relinearize(ev.square(ca), e->rlk))),
                           vmul(a, a)),
              r.bound);
  }
  // In-place forms agree.
  const Ciphertext ca = e->encrypt(a), cb = e->encrypt(b);
  Ciphertext x = ev.multiply(ca, cb);
  const Ciphertext y = ev.rescale_to_next(ev.relinearize(x, e->rlk));
  ev.relinearize_inplace(x, e->rlk);
  ev.rescale_to_next_inplace(x);
  EXPECT_TRUE(same_ct(x, y));
}

// ---- additive operations ----------------------------------------------------------------------

TEST_F(Ckks, AddSubNegate) {
  const CVec a = random(), b = random(), c = random();
  const Ciphertext ca = e->encrypt(a), cb = e->encrypt(b), cc = e->encrypt(c);
  const Evaluator &ev = e->ev;
  EXPECT_TRUE(close(e->decrypt(ev.add(ca, cb)), vadd(a, b), kOps));
  EXPECT_TRUE(close(e->decrypt(ev.sub(ca, cb)), vsub(a, b), kOps));
  EXPECT_TRUE(close(e->decrypt(ev.negate(ca)), vscale(a, -1.0), kOps));
  EXPECT_TRUE(close(e->decrypt(ev.add_many({ca, cb, cc})), vadd(vadd(a, b), c), kOps));
  // x - x is transparent (SEAL raises); with the check off it is exactly the zero ciphertext,
  // and x + (-x) too.
  EXPECT_THROW(ev.sub(ca, ca), veil::InvalidArgument);
  veil::set_transparent_check(false);
  const Ciphertext z = ev.sub(ca, ca);
  for (u64 w : z.buffer().to_host())
    ASSERT_EQ(w, 0u);
  EXPECT_TRUE(same_words(ev.add(ca, ev.negate(ca)), z));
  EXPECT_TRUE(close(e->decrypt(z), CVec(kSlots), 1e-300));
  veil::set_transparent_check(true);
  // The scale is kept; in place agrees; commutative bit for bit.
  EXPECT_EQ(ev.add(ca, cb).scale(), kScale);
  Ciphertext x = ca;
  ev.add_inplace(x, cb);
  EXPECT_TRUE(same_ct(x, ev.add(cb, ca)));
  ev.sub_inplace(x, cc);
  EXPECT_TRUE(close(e->decrypt(x), vsub(vadd(a, b), c), kOps));
  ev.negate_inplace(x);
  EXPECT_TRUE(close(e->decrypt(x), vsub(c, vadd(a, b)), kOps));
  // At a lower level after rescaling (both operands with the rescaled scale).
  const Ciphertext ab = ev.rescale_to_next(ev.relinearize(ev.multiply(ca, cb), e->rlk));
  const Ciphertext cc2 = ev.rescale_to_next(ev.relinearize(ev.multiply(cc, cc), e->rlk));
  EXPECT_EQ(ab.scale(), cc2.scale());
  EXPECT_TRUE(close(e->decrypt(ev.sub(ab, cc2)), vsub(vmul(a, b), vmul(c, c)), kOps));
  // Size 3 + size 2.
  const Ciphertext m = ev.multiply(ca, cb);
  const Ciphertext fresh_at_scale =
      e->encryptor.encrypt(e->encoder.encode(c, kScale * kScale, e->ctx->max_level()));
  EXPECT_TRUE(close(e->decrypt(ev.add(fresh_at_scale, m)), vadd(vmul(a, b), c), kOps));
  EXPECT_TRUE(close(e->decrypt(ev.sub(fresh_at_scale, m)), vsub(c, vmul(a, b)), kOps));
}

// ---- plaintext operations ----------------------------------------------------------------------

TEST_F(Ckks, PlainOpsAtMatchingLevelsAndScales) {
  const CVec a = random(), b = random();
  const Evaluator &ev = e->ev;
  const Ciphertext ca = e->encrypt(a);
  // Level 6 (fresh), level 4 (a product rescaled twice: scale != 2^40) and level 1 (switched).
  const CVec u = unit();
  const Ciphertext cu = e->encrypt(u);
  Ciphertext prod = ev.rescale_to_next(ev.relinearize(ev.multiply(ca, cu), e->rlk));
  prod = ev.rescale_to_next(
      ev.relinearize(ev.multiply(prod, ev.mod_switch_to(cu, prod.level())), e->rlk));
  const CVec au2 = vmul(vmul(a, u), u);
  struct Item {
    const char *name;
    Ciphertext ct;
    CVec v;
  };
  for (const Item &it : {Item{"fresh level 6", ca, a}, Item{"a*u*u level 4", prod, au2},
                         Item{"switched to level 1", ev.mod_switch_to(ca, 1), a}}) {
    SCOPED_TRACE(it.name);
    const std::size_t l = it.ct.level();
    // add/sub: the plaintext at the ciphertext's level and scale.
    const Plaintext pb = e->encoder.encode(b, it.ct.scale(), l);
    EXPECT_TRUE(close(e->decrypt(ev.add_plain(it.ct, pb)), vadd(it.v, b), kOps));
    EXPECT_TRUE(close(e->decrypt(ev.sub_plain(it.ct, pb)), vsub(it.v, b), kOps));
    Ciphertext x = it.ct;
    ev.add_plain_inplace(x, pb);
    EXPECT_TRUE(same_ct(x, ev.add_plain(it.ct, pb)));
    ev.sub_plain_inplace(x, pb);
    EXPECT_TRUE(same_ct(x, it.ct)); // exact in Z_Q
    // multiply_plain at scale 2^40, then rescale.
    const Plaintext pm = e->encoder.encode(b, kScale, l);
    const Ciphertext m = ev.multiply_plain(it.ct, pm);
    EXPECT_EQ(m.scale(), it.ct.scale() * kScale);
    EXPECT_TRUE(close(e->decrypt(m), vmul(it.v, b), kOps));
    x = it.ct;
    ev.multiply_plain_inplace(x, pm);
    EXPECT_TRUE(same_ct(x, m));
    if (l > 0) {
      const Ciphertext r = ev.rescale_to_next(m);
      EXPECT_DOUBLE_EQ(r.scale(), it.ct.scale() * kScale / e->prime(l));
      EXPECT_TRUE(close(e->decrypt(r), vmul(it.v, b), kOps));
    }
  }
}

TEST_F(Ckks, MultiplyByConstant) {
  const CVec a = random();
  const Evaluator &ev = e->ev;
  const Ciphertext ca = e->encrypt(a);
  const std::size_t top = e->ctx->max_level();
  for (cd c : {cd(3.25, 0.0), cd(-0.7, 0.0), cd(0.5, -1.25), cd(0.0, 1.0)}) {
    SCOPED_TRACE("constant (" + std::to_string(c.real()) + ", " + std::to_string(c.imag()) + ")");
    const Plaintext pc = e->encoder.encode(c, kScale, top);
    EXPECT_EQ(pc.scale(), kScale);
    const Ciphertext r = ev.rescale_to_next(ev.multiply_plain(ca, pc));
    EXPECT_TRUE(close(e->decrypt(r), vscale(a, c), 4 * kOps));
    // Adding a constant: encoded at the ciphertext's scale.
    EXPECT_TRUE(close(e->decrypt(ev.add_plain(ca, e->encoder.encode(c, kScale, top))),
                      vadd(a, CVec(kSlots, c)), kOps));
    // At a lower level, after a rescale.
    const Plaintext pl = e->encoder.encode(c, kScale, r.level());
    EXPECT_TRUE(close(e->decrypt(ev.rescale_to_next(ev.multiply_plain(r, pl))),
                      vscale(vscale(a, c), c), 16 * kOps));
  }
  // A real constant encodes as round(c * scale) in every NTT slot of every prime: multiplying by
  // 1 then keeps the ciphertext's values (scale doubles).
  const Plaintext one = e->encoder.encode(cd(1.0, 0.0), kScale, top);
  EXPECT_TRUE(close(e->decrypt(ev.multiply_plain(ca, one)), a, kOps));
}

// ---- rescaling chain and level alignment ----------------------------------------------------

TEST_F(Ckks, RescaleChainToLevelZero) {
  const Evaluator &ev = e->ev;
  // x_{k+1} = x_k * u_k with unit-modulus u_k (fresh at level 6, switched down to x_k's level):
  // six multiplications take level 6 to 0.
  CVec want = unit();
  Ciphertext x = e->encrypt(want);
  double scale = kScale;
  for (std::size_t l = e->ctx->max_level(); l > 0; --l) {
    const CVec u = unit();
    const Ciphertext cu = ev.mod_switch_to(e->encrypt(u), l);
    EXPECT_EQ(cu.level(), l);
    EXPECT_EQ(cu.scale(), kScale); // mod switching keeps the scale
    x = ev.rescale_to_next(ev.relinearize(ev.multiply(x, cu), e->rlk));
    want = vmul(want, u);
    scale = scale * kScale / e->prime(l);
    EXPECT_EQ(x.level(), l - 1);
    EXPECT_DOUBLE_EQ(x.scale(), scale);
    const Stats s = stats(e->decrypt(x), want);
    std::printf("[ CKKS ] chain: level %zu, scale 2^%.6f, precision mean %.2f / min %.2f bits\n",
                x.level(), std::log2(x.scale()), s.mean_bits, s.min_bits);
    EXPECT_LE(s.max_abs, kOps * static_cast<double>(8 - l));
  }
  EXPECT_EQ(x.level(), 0u);
  EXPECT_THROW(ev.rescale_to_next(x), veil::InvalidArgument);
  EXPECT_THROW(ev.mod_switch_to_next(x), veil::InvalidArgument);
}

TEST_F(Ckks, ModSwitchAlignsLevels) {
  const CVec a = random(), b = random(), c = random();
  const Evaluator &ev = e->ev;
  const Ciphertext ca = e->encrypt(a), cb = e->encrypt(b);
  // mod_switch_to drops primes without changing the scale or the values.
  for (std::size_t l = 0; l <= e->ctx->max_level(); ++l) {
    const Ciphertext s = ev.mod_switch_to(ca, l);
    EXPECT_EQ(s.level(), l);
    EXPECT_EQ(s.scale(), kScale);
    EXPECT_TRUE(close(e->decrypt(s), a, kFreshPk)) << "level " << l;
  }
  EXPECT_TRUE(same_ct(ev.mod_switch_to(ca, 6), ca));
  EXPECT_TRUE(same_ct(ev.mod_switch_to(ev.mod_switch_to(ca, 4), 2), ev.mod_switch_to(ca, 2)));
  EXPECT_TRUE(same_ct(ev.mod_switch_to_next(ca), ev.mod_switch_to(ca, 5)));
  // A product rescaled to level 5 (scale 2^80 / q_6) plus c encoded at that scale at level 6 and
  // switched down.
  const Ciphertext ab = ev.rescale_to_next(ev.relinearize(ev.multiply(ca, cb), e->rlk));
  const Ciphertext cc = e->encryptor.encrypt(e->encoder.encode(c, ab.scale(), 6));
  EXPECT_TRUE(
      close(e->decrypt(ev.add(ab, ev.mod_switch_to(cc, ab.level()))), vadd(vmul(a, b), c), kOps));
  // Multiplying operands from different depths after aligning.
  const Ciphertext abc =
      ev.rescale_to_next(ev.relinearize(ev.multiply(ab, ev.mod_switch_to(cc, ab.level())), e->rlk));
  EXPECT_EQ(abc.level(), 4u);
  EXPECT_TRUE(close(e->decrypt(abc), vmul(vmul(a, b), c), kOps));
  // Plaintexts: switching down equals encoding at the lower level, bit for bit (the same integer
  // coefficients, fewer residues).
  const Plaintext p6 = e->encoder.encode(b, kScale, 6);
  for (std::size_t l : {std::size_t(5), std::size_t(3), std::size_t(0)}) {
    const Plaintext pl = ev.mod_switch_to(p6, l);
    EXPECT_EQ(pl.level(), l);
    EXPECT_EQ(pl.scale(), kScale);
    EXPECT_TRUE(same_words(pl, e->encoder.encode(b, kScale, l))) << "level " << l;
    EXPECT_TRUE(close(e->encoder.decode(pl), b, 1e-9)) << "level " << l;
  }
  // A switched plaintext in multiply_plain / add_plain at the ciphertext's level.
  const Ciphertext a3 = ev.mod_switch_to(ca, 3);
  EXPECT_TRUE(close(e->decrypt(ev.rescale_to_next(ev.multiply_plain(a3, ev.mod_switch_to(p6, 3)))),
                    vmul(a, b), kOps));
  EXPECT_TRUE(close(e->decrypt(ev.add_plain(a3, ev.mod_switch_to(p6, 3))), vadd(a, b), kOps));
}

// ---- rotations and conjugation -----------------------------------------------------------------

TEST_F(Ckks, RotateVectorAtSeveralLevels) {
  const CVec a = random();
  const Evaluator &ev = e->ev;
  const Ciphertext ca = e->encrypt(a);
  std::vector<int> steps = kKeySteps;
  steps.insert(steps.end(), kComposedSteps.begin(), kComposedSteps.end());
  steps.push_back(static_cast<int>(kSlots) - 1); // same element as -1
  // Level 6 fresh, level 3 after a rescale (scale != 2^40), level 0 switched.
  const CVec u = unit();
  const Ciphertext au =
      ev.rescale_to_next(ev.relinearize(ev.multiply(ca, e->encrypt(u)), e->rlk)); // level 5
  const Ciphertext au3 = ev.mod_switch_to(au, 3);
  const CVec wau = vmul(a, u);
  for (const auto &[ct, v] : std::vector<std::pair<Ciphertext, CVec>>{
           {ca, a}, {au3, wau}, {ev.mod_switch_to(ca, 0), a}}) {
    SCOPED_TRACE("level " + std::to_string(ct.level()));
    for (int s : steps) {
      const Ciphertext r = ev.rotate_vector(ct, s, e->gk);
      EXPECT_EQ(r.level(), ct.level()) << "step " << s;
      EXPECT_EQ(r.scale(), ct.scale()) << "step " << s;
      EXPECT_TRUE(close(e->decrypt(r), rot(v, s), kOps)) << "step " << s;
    }
    EXPECT_TRUE(same_ct(ev.rotate_vector(ct, 0, e->gk), ct));
    EXPECT_TRUE(
        close(e->decrypt(ev.rotate_vector(ev.rotate_vector(ct, 4, e->gk), -4, e->gk)), v, kOps));
  }
  // A composed step is the chain of its NAF parts bit for bit: 7 = 8 - 1.
  EXPECT_TRUE(same_ct(ev.rotate_vector(ca, 7, e->gk),
                      ev.rotate_vector(ev.rotate_vector(ca, -1, e->gk), 8, e->gk)));
}

TEST_F(Ckks, Conjugate) {
  const CVec a = random(), b = random();
  const Evaluator &ev = e->ev;
  const Ciphertext ca = e->encrypt(a);
  const Ciphertext ab = ev.mod_switch_to(
      ev.rescale_to_next(ev.relinearize(ev.multiply(ca, e->encrypt(b)), e->rlk)), 2);
  for (const auto &[ct, v] : std::vector<std::pair<Ciphertext, CVec>>{
           {ca, a}, {ab, vmul(a, b)}, {ev.mod_switch_to(ca, 0), a}}) {
    SCOPED_TRACE("level " + std::to_string(ct.level()));
    const Ciphertext c = ev.conjugate(ct, e->gk);
    EXPECT_EQ(c.level(), ct.level());
    EXPECT_EQ(c.scale(), ct.scale());
    EXPECT_TRUE(close(e->decrypt(c), vconj(v), kOps));
    EXPECT_TRUE(close(e->decrypt(ev.conjugate(c, e->gk)), v, kOps));
    // Real part: (x + conj(x)) / 2 via the constant 0.5.
    const Ciphertext sum = ev.add(ct, c);
    CVec re(v.size());
    for (std::size_t i = 0; i < v.size(); ++i)
      re[i] = v[i].real();
    if (ct.level() > 0) {
      const Ciphertext half = ev.rescale_to_next(
          ev.multiply_plain(sum, e->encoder.encode(cd(0.5, 0.0), kScale, ct.level())));
      EXPECT_TRUE(close(e->decrypt(half), re, kOps));
    }
    // Conjugation commutes with rotation.
    EXPECT_TRUE(close(e->decrypt(ev.rotate_vector(c, 2, e->gk)), vconj(rot(v, 2)), kOps));
  }
}

TEST_F(Ckks, ApplyGalois) {
  const CVec a = random();
  const Evaluator &ev = e->ev;
  const Ciphertext ca = e->encrypt(a);
  const std::uint32_t m = 2 * kN;
  // 3^2 = 9 is rotate_vector(2); 2N - 1 is conjugate.
  ASSERT_EQ(e->ctx->galois_elt_from_step(2), 9u);
  ASSERT_EQ(e->ctx->galois_elt_column(), m - 1);
  EXPECT_TRUE(same_ct(ev.apply_galois(ca, 9, e->gk), ev.rotate_vector(ca, 2, e->gk)));
  EXPECT_TRUE(same_ct(ev.apply_galois(ca, m - 1, e->gk), ev.conjugate(ca, e->gk)));
  EXPECT_TRUE(close(e->decrypt(ev.apply_galois(ca, 9, e->gk)), rot(a, 2), kOps));
  // Elements without row-rotation keys: -3 (conjugate after rotating by 1), 3^5 (rotate by 5)
  // and 3^(N/2 - 1) = 3^-1 (rotate by -1) computed here by repeated multiplication.
  std::uint64_t g_inv = 1;
  for (std::size_t i = 0; i < kSlots - 1; ++i)
    g_inv = g_inv * 3 % m;
  const std::uint32_t eneg3 = m - 3, e243 = 243, einv = static_cast<std::uint32_t>(g_inv);
  const GaloisKeys extra = e->kg.create_galois_keys_from_elts({eneg3, e243, einv});
  EXPECT_TRUE(close(e->decrypt(ev.apply_galois(ca, eneg3, extra)), vconj(rot(a, 1)), kOps));
  EXPECT_TRUE(close(e->decrypt(ev.apply_galois(ca, e243, extra)), rot(a, 5), kOps));
  EXPECT_TRUE(close(e->decrypt(ev.apply_galois(ca, einv, extra)), rot(a, -1), kOps));
  // The step -1 key of the shared set is the same element.
  EXPECT_EQ(e->ctx->galois_elt_from_step(-1), einv);
  // At a lower level.
  const Ciphertext low = ev.mod_switch_to(ca, 1);
  EXPECT_TRUE(close(e->decrypt(ev.apply_galois(low, eneg3, extra)), vconj(rot(a, 1)), kOps));
}

TEST_F(Ckks, RotateManyMatchesRotateVector) {
  const CVec a = random(), b = random();
  const Evaluator &ev = e->ev;
  const Ciphertext ca = e->encrypt(a);
  const Ciphertext low = ev.mod_switch_to(
      ev.rescale_to_next(ev.relinearize(ev.multiply(ca, e->encrypt(b)), e->rlk)), 2);
  const std::vector<int> steps = {1, 3, -4, 0, 8, -1, 5, 2, 10, 4, -3};
  for (const auto &[ct, v] : std::vector<std::pair<Ciphertext, CVec>>{{ca, a}, {low, vmul(a, b)}}) {
    SCOPED_TRACE("level " + std::to_string(ct.level()));
    const std::vector<Ciphertext> many = ev.rotate_many(ct, steps, e->gk);
    ASSERT_EQ(many.size(), steps.size());
    for (std::size_t i = 0; i < steps.size(); ++i) {
      EXPECT_TRUE(same_ct(many[i], ev.rotate_vector(ct, steps[i], e->gk))) << "step " << steps[i];
      EXPECT_TRUE(close(e->decrypt(many[i]), rot(v, steps[i]), kOps)) << "step " << steps[i];
    }
  }
}

} // namespace
