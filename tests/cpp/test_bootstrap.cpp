// CKKS bootstrapping in C++ (circuits/bootstrapper.h) on the CPU at N = 2^11 (security off, as
// tests/python/test_bootstrap.py): the chain and level layout, each public step, the full
// bootstrap's precision against the input (printed in bits), sparse slots, 32-bit words, the
// errors. GPU parity (word for word with the CPU) runs when a CUDA device is visible.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "ckks_util.h"
#include "veil/backend/graph.h"
#include "veil/circuits/bootstrapper.h"
#include "veil/circuits/dft.h"
#include "veil/ckks/bsgs.h"
#include "veil/rlwe/keyswitch.h"

namespace {

using namespace veil;
using namespace veil::circuits;
using namespace veil::test;

constexpr int kLogN = 11;
constexpr std::size_t kN = std::size_t{1} << kLogN;

ContextPtr boot_context(const BootstrapConfig& cfg, int word_bits) {
  const BootstrapChain chain = bootstrap_chain(kLogN, 2, cfg, word_bits);
  return Context::create(chain.parameters(kN, word_bits), SecurityLevel::none);
}

struct BootSetup {
  ContextPtr ctx;
  CkksKeys keys;
  BootstrapParameters params;
  Bootstrapper bt;
  BootSetup(const BootstrapConfig& cfg, int word_bits, const Device& dev, std::uint64_t seed)
      : ctx(boot_context(cfg, word_bits)),
        keys(ctx, dev, seed),
        params(ctx, cfg, std::ldexp(1.0, 40)),
        bt(params, BootstrapKeys::generate(params, keys.sk, keys.rk, seed)) {}
};

TEST(BootstrapChain, MatchesThePythonChains) {
  const BootstrapConfig cfg;
  EXPECT_EQ(cfg.evalmod_depth(), 8u);  // ceil(log2(31 + 1)) + 3 double angles
  EXPECT_EQ(cfg.depth(), 14u);
  const BootstrapChain c64 = bootstrap_chain(16, 13, cfg, 64);
  std::vector<int> want{55, 40, 40, 40};
  want.insert(want.end(), 13, 40);
  want.insert(want.end(), 8, 60);
  want.insert(want.end(), 3, 56);
  want.insert(want.end(), 5, 60);
  EXPECT_EQ(c64.coeff_modulus_bits, want);
  EXPECT_EQ(c64.special_primes, 5u);
  EXPECT_EQ(c64.alpha, 4u);
  const BootstrapChain c32 = bootstrap_chain(16, 3, cfg, 32);
  EXPECT_EQ(c32.rescale_groups,
            (std::vector<std::size_t>{2, 1, 1, 1, 1, 2, 1, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}));
  EXPECT_EQ(c32.coeff_modulus_bits.front(), 28);
  EXPECT_EQ(c32.special_primes, 12u);
  // N = 2^16 at 128 bits: 15 user levels with 64-bit words (log2 QP <= 1723 <= 1747), 13 with
  // 32-bit words (<= 1747 bits: SlotToCoeff on one prime per level, EvalMod in 8 levels)
  EXPECT_EQ(preset_chain(65536, SecurityLevel::tc128, cfg, 64).user_levels, 15u);
  EXPECT_EQ(preset_chain(65536, SecurityLevel::tc128, cfg, 32).user_levels, 13u);
  veil::test::expect_invalid([&] { preset_chain(4096, SecurityLevel::tc128, cfg, 64); },
                             "poly_modulus_degree: bootstrapping at N = 4096 does not fit");
  veil::test::expect_invalid([&] { bootstrap_chain(11, 2, cfg, 16); }, "word_bits");
  BootstrapConfig bad;
  bad.slots = 3;
  veil::test::expect_invalid([&] { bad.validate(kN); }, "slots: expected a power of two");
  bad = {};
  bad.evalmod_degree = 1;
  veil::test::expect_invalid([&] { bad.validate(kN); }, "evalmod_degree");
}

TEST(BootstrapParameters, LevelLayoutAndErrors) {
  const BootstrapConfig cfg;
  ContextPtr ctx = boot_context(cfg, 64);
  const BootstrapParameters p(ctx, cfg, std::ldexp(1.0, 40));
  // 1 + 3 + 2 + 8 + 3 = 17 levels: q_0 at 0, SlotToCoeff 1..3, users 4..5, EvalMod 6..13, CTS
  EXPECT_EQ(p.slots(), kN / 2);
  EXPECT_EQ(p.input_level(), 3u);
  EXPECT_EQ(p.output_level(), 5u);
  EXPECT_EQ(p.levels_left(), 2u);
  EXPECT_EQ(p.evalmod_level(), 13u);
  EXPECT_EQ(p.top_level(), 16u);
  EXPECT_NEAR(p.gamma(), p.q0() / (2 * std::numbers::pi * p.scale()), 0.0);
  const auto elts = p.galois_elements();
  EXPECT_TRUE(std::find(elts.begin(), elts.end(), ctx->galois_elt_column()) != elts.end());
  BootstrapConfig sparse = cfg;
  sparse.slots = 4;
  veil::test::expect_invalid([&] { BootstrapParameters(ctx, sparse, 1e12); },
                             "slots: 4 slots have 2 FFT stages, fewer than the 3");
  veil::test::expect_invalid([&] { BootstrapParameters(ctx, cfg, NAN); }, "scale");
  ContextPtr short_ctx =
      Context::create(veil::test::small_params(SchemeType::ckks), SecurityLevel::none);
  veil::test::expect_invalid([&] { BootstrapParameters(short_ctx, cfg, 1e12); },
                             "coeff_modulus: bootstrapping needs 14 rescale blocks");
}

void check_bootstrap(const BootstrapConfig& cfg, int word_bits, const char* what) {
  BootSetup s(cfg, word_bits, Device::cpu(), 3);
  const BootstrapParameters& p = s.params;
  const CVec vals = veil::test::tile(random_values(p.slots(), 8), kN / 2);
  const Ciphertext ct = s.keys.encrypt(vals, p.scale(), p.input_level());
  const Ciphertext y = s.bt.bootstrap(ct);
  EXPECT_EQ(y.level(), p.output_level());
  EXPECT_EQ(y.scale(), p.scale());
  const auto pr = precision(vals, s.keys.decrypt(y));
  std::printf("[ precision ] bootstrap, %s, %zu slots: min %.2f bits, mean %.2f bits\n", what,
              p.slots(), pr.min_bits, pr.mean_bits);
  EXPECT_GT(pr.mean_bits, 20);
  EXPECT_GT(pr.min_bits, 16);
}

TEST(Bootstrapper, FullSlotsPrecision) { check_bootstrap(BootstrapConfig{}, 64, "64-bit words"); }

TEST(Bootstrapper, SparseSlotsPrecision) {
  BootstrapConfig cfg;
  cfg.slots = 32;
  check_bootstrap(cfg, 64, "64-bit words");
}

TEST(Bootstrapper, ThirtyTwoBitWordsPrecision) {
  BootstrapConfig cfg;
  cfg.slots = 64;
  check_bootstrap(cfg, 32, "32-bit words");
}

/// Bootstraps one ciphertext `rounds` times in a row, each output the next input (it comes back at
/// output_level and is switched down to input_level by bootstrap()), and checks the documented
/// bound (docs/guide/ckks.md, "Bootstrapping"): the errors of k bootstraps add up at most
/// linearly, so after k bootstraps the mean and the worst-slot error are at most k times one
/// bootstrap's bound at this N (2^-25 mean, 2^-23.5 worst; a single bootstrap measures 25.6-25.8
/// and 24.0-24.2 bits here); level and scale come back exact every time. Part of each bootstrap's
/// error has the same sign every time (EvalMod's approximation error is a function of the
/// message), so the growth is faster than sqrt(k): 3.5 bits of the mean after 20 (log2(20) =
/// 4.3). A message that drifts by 2^-24 per bootstrap (a scale or gamma off) breaks the bound.
void check_bootstraps_in_a_row(const BootstrapConfig& cfg, int word_bits, const Device& dev,
                               std::size_t rounds) {
  BootSetup s(cfg, word_bits, dev, 17);
  const BootstrapParameters& p = s.params;
  const CVec vals = veil::test::tile(random_values(p.slots(), 18), kN / 2);
  Ciphertext ct = s.keys.encrypt(vals, p.scale(), p.input_level());
  const double mean_bound = std::ldexp(1.0, -25), worst_bound = std::pow(2.0, -23.5);
  for (std::size_t k = 1; k <= rounds; ++k) {
    ct = s.bt.bootstrap(ct);
    ASSERT_EQ(ct.level(), p.output_level()) << "bootstrap " << k;
    ASSERT_EQ(ct.scale(), p.scale()) << "bootstrap " << k;
    const auto pr = precision(vals, s.keys.decrypt(ct));
    const double kd = static_cast<double>(k);
    EXPECT_LE(pr.mean_error, kd * mean_bound) << "bootstrap " << k;
    EXPECT_LE(pr.max_error, kd * worst_bound) << "bootstrap " << k;
    if (k == 1 || k % 5 == 0) {
      std::printf("[ precision ] %d-bit words, %zu slots, after %zu bootstraps: min %.2f bits, "
                  "mean %.2f bits (bound %.2f, %.2f)\n",
                  word_bits, p.slots(), k, pr.min_bits, pr.mean_bits, -std::log2(kd * worst_bound),
                  -std::log2(kd * mean_bound));
    }
  }
}

TEST(Bootstrapper, TwentyInARowStayWithinTheDocumentedBound) {
  check_bootstraps_in_a_row(BootstrapConfig{}, 64, Device::cpu(), 20);
  BootstrapConfig sparse;
  sparse.slots = 64;
  sparse.pack_sparse = true;
  check_bootstraps_in_a_row(sparse, 32, Device::cpu(), 20);
}

TEST(Bootstrapper, StepsComposeAndKeepTheirContracts) {
  BootSetup s(BootstrapConfig{}, 64, Device::cpu(), 5);
  const BootstrapParameters& p = s.params;
  const CVec vals = random_values(p.slots(), 9);
  // another scale near Delta, from the top level: comes back at that scale
  const double s_in = p.scale() * 1.7;
  const Ciphertext top = s.keys.encrypt(vals, s_in, s.ctx->max_level());
  const Ciphertext y = s.bt.bootstrap(top);
  EXPECT_EQ(y.scale(), s_in);
  const auto pr = precision(vals, s.keys.decrypt(y));
  report("bootstrap from the top level at scale 1.7 Delta", pr);
  EXPECT_GT(pr.mean_bits, 19);
  // the public steps, one by one, give the same words as bootstrap()
  Ciphertext x = s.keys.ev.mod_switch_to(top, p.input_level());
  x.set_scale(p.scale());
  const Ciphertext a = s.bt.slot_to_coeff(x);
  EXPECT_EQ(a.level(), p.q0_level());
  const Ciphertext b = s.bt.mod_raise(a);
  EXPECT_EQ(b.level(), p.top_level());
  const Ciphertext c = s.bt.coeff_to_slot(b);
  EXPECT_EQ(c.level(), p.evalmod_level());
  EXPECT_NEAR(c.scale() / p.evalmod_scale(), 1.0, 1e-9);
  // CoeffToSlot's slots are w = t / (2 q_0 K1): the slots z scaled by Delta / (2 q_0 K1)
  const CVec w = s.keys.decrypt(c);
  CVec want(w.size());
  const double k = p.coeff_to_slot_constant();
  for (std::size_t i = 0; i < w.size(); ++i) want[i] = vals[i] * k;
  CVec diff(w.size());
  for (std::size_t i = 0; i < w.size(); ++i) {  // modulo the multiples of 1/(2 K1) from q_0 I
    const cd r = (w[i] - want[i]) * (2.0 * 13.0);
    diff[i] = r - cd(std::round(r.real()), std::round(r.imag()));
  }
  EXPECT_LT(precision(CVec(w.size(), 0.0), diff).max_error, 1e-3);
  Ciphertext d = s.bt.eval_mod(c);
  d.set_scale(s_in);
  EXPECT_EQ(veil::test::words(d), veil::test::words(y));
  // errors name the argument
  veil::test::expect_invalid([&] { s.bt.slot_to_coeff(b); }, "ct: SlotToCoeff starts at level 3");
  veil::test::expect_invalid([&] { s.bt.mod_raise(x); }, "ct: ModRaise starts at level 0");
  veil::test::expect_invalid([&] { s.bt.coeff_to_slot(a); }, "ct: CoeffToSlot starts at level");
  veil::test::expect_invalid([&] { s.bt.eval_mod(b); }, "ct: EvalMod starts at level");
}

TEST(Bootstrapper, ErrorsNameTheArgument) {
  BootSetup s(BootstrapConfig{}, 64, Device::cpu(), 6);
  const BootstrapParameters& p = s.params;
  const CVec vals = random_values(8, 1);
  veil::test::expect_invalid([&] { s.bt.bootstrap(Ciphertext()); }, "ct: is empty");
  veil::test::expect_invalid(
      [&] { s.bt.bootstrap(s.keys.encrypt(vals, std::ldexp(1.0, 30), p.q0_level())); },
      "ct: expected a scale within 2^4 of the context's 2^40.00");
  const Ciphertext ct = s.keys.encrypt(vals, p.scale(), p.input_level());
  veil::test::expect_invalid([&] { s.bt.bootstrap(s.keys.ev.multiply(ct, ct)); },
                             "ct: expected size 2");
  // keys: a missing Galois key, keys of another context
  BootstrapKeys partial = s.bt.keys();
  partial.galois_keys = s.keys.galois({1});
  veil::test::expect_invalid([&] { Bootstrapper(p, partial); },
                             "galois_keys: no key for Galois element");
  ContextPtr other = boot_context(BootstrapConfig{}, 32);
  CkksKeys ok(other, Device::cpu(), 1);
  veil::test::expect_invalid([&] { BootstrapKeys::generate(p, ok.sk); },
                             "secret_key: belongs to another context");
  // the bootstrapper's keys belong to the secret key: another key set's ciphertext is refused
  CkksKeys stranger(s.ctx, Device::cpu(), 99);
  EXPECT_THROW(s.bt.bootstrap(stranger.encrypt(vals, p.scale(), p.input_level())), InvalidArgument);
}

// Inputs below input_level() (SlotToCoeff's levels, q_0's top) run the original order and come
// back at low_output_level(); the precision is lower by about log2(sqrt(slots)) bits (printed).
TEST(Bootstrapper, PackSparseOneEvalModForBothHalves) {
  // pack_sparse: the chain gets one more block (the mask's) above the user levels, which keep
  // their count and blocks; precision as two EvalMods; the original order (inputs below the
  // input level) refreshes too.
  for (int word_bits : {64, 32}) {
    BootstrapConfig cfg;
    cfg.slots = 64;
    BootstrapConfig packed = cfg;
    packed.pack_sparse = true;
    const BootstrapChain a = bootstrap_chain(kLogN, 2, cfg, word_bits);
    const BootstrapChain b = bootstrap_chain(kLogN, 2, packed, word_bits);
    EXPECT_EQ(b.rescale_groups.size(), a.rescale_groups.size() + 1);
    check_bootstrap(packed, word_bits, word_bits == 64 ? "64-bit words, pack_sparse"
                                                       : "32-bit words, pack_sparse");
    BootSetup s(packed, word_bits, Device::cpu(), 9);
    const BootstrapParameters& p = s.params;
    EXPECT_TRUE(p.packed());
    EXPECT_EQ(p.levels_left(), 2u);
    EXPECT_GT(p.evalmod_output_level(), p.output_level());
    const CVec vals = veil::test::tile(random_values(p.slots(), 14), kN / 2);
    const Ciphertext x = s.keys.encrypt(vals, p.scale(), p.q0_level());
    const Ciphertext y = s.bt.bootstrap(x);
    EXPECT_EQ(y.level(), p.low_output_level());
    const auto pr = precision(s.keys.decrypt(x), s.keys.decrypt(y));
    EXPECT_GT(pr.mean_bits, 18) << word_bits;
    EXPECT_GT(pr.min_bits, 14) << word_bits;
  }
  // N = 2^16 at 128 bits: one user level less than without packing
  BootstrapConfig big;
  big.slots = 4096;
  big.pack_sparse = true;
  EXPECT_EQ(preset_chain(65536, SecurityLevel::tc128, big, 32).user_levels, 12u);
  EXPECT_EQ(preset_chain(65536, SecurityLevel::tc128, big, 64).user_levels, 14u);
  BootstrapConfig full;
  full.pack_sparse = true;
  veil::test::expect_invalid([&] { full.validate(kN); }, "pack_sparse: needs sparse slots");
  full.slots = kN / 2;
  veil::test::expect_invalid([&] { full.validate(kN); }, "pack_sparse: needs sparse slots");
}

TEST(Bootstrapper, InputsBelowTheInputLevel) {
  BootSetup s(BootstrapConfig{}, 64, Device::cpu(), 7);
  const BootstrapParameters& p = s.params;
  EXPECT_EQ(p.low_output_level(), 2u);  // output_level 5 lowered by SlotToCoeff's 3 blocks
  const CVec vals = random_values(p.slots(), 13);
  const std::size_t bytes = s.bt.plaintext_bytes();
  for (std::size_t level = 0; level < p.input_level(); ++level) {
    const Ciphertext x = s.keys.encrypt(vals, p.scale() * 1.3, level);
    const Ciphertext y = s.bt.bootstrap(x);
    EXPECT_EQ(y.level(), p.low_output_level());
    EXPECT_EQ(y.scale(), x.scale());
    const auto pr = precision(s.keys.decrypt(x), s.keys.decrypt(y));
    std::printf("[ precision ] bootstrap from level %zu (original order), %zu slots: min %.2f "
                "bits, mean %.2f bits\n", level, p.slots(), pr.min_bits, pr.mean_bits);
    EXPECT_GT(pr.mean_bits, 18);
    EXPECT_GT(pr.min_bits, 14);
  }
  EXPECT_GT(s.bt.plaintext_bytes(), bytes);  // the second SlotToCoeff, made on first use
  // the steps in the original order give bootstrap()'s words
  const Ciphertext x = s.keys.encrypt(vals, p.scale(), 1);
  const Ciphertext in = s.bt.prepare(x);
  EXPECT_EQ(in.level(), p.q0_level());
  const Ciphertext e = s.bt.eval_mod(s.bt.coeff_to_slot(s.bt.mod_raise(in)));
  EXPECT_EQ(veil::test::words(s.bt.slot_to_coeff(e)), veil::test::words(s.bt.bootstrap(x)));
  // 32-bit words: q_0's block holds two primes, and its lower level cannot be refreshed
  BootstrapConfig sparse;
  sparse.slots = 64;
  BootSetup t(sparse, 32, Device::cpu(), 8);
  ASSERT_EQ(t.params.q0_level(), 1u);
  const Ciphertext low = t.keys.ev.mod_switch_to(
      t.keys.encrypt(vals, t.params.scale(), t.params.q0_level()), 0);
  veil::test::expect_invalid([&] { t.bt.bootstrap(low); },
                             "ct: level 0 lies inside q_0's block below its top 1");
}

// A scale far from Delta (the 2^50 of 32-bit chains' alternate levels, a 2^30 encryption) is
// brought to Delta by one constant product first: the result comes back at Delta.
TEST(Bootstrapper, InputsAtAnotherScale) {
  BootstrapConfig cfg;
  cfg.slots = 64;
  BootSetup s(cfg, 32, Device::cpu(), 9);
  const BootstrapParameters& p = s.params;
  const CVec vals = veil::test::tile(random_values(p.slots(), 14), kN / 2);
  const std::size_t above = s.params.chain().above(p.input_level());
  for (double log_scale : {50.0, 30.0}) {
    // one block above input_level: lands on it (SlotToCoeff first); at it: below (original order)
    for (std::size_t level : {above, p.input_level()}) {
      const Ciphertext x = s.keys.encrypt(vals, std::ldexp(1.0, int(log_scale)), level);
      const Ciphertext y = s.bt.bootstrap(x);
      EXPECT_EQ(y.scale(), p.scale());
      EXPECT_EQ(s.bt.output_scale(x.scale()), p.scale());
      EXPECT_EQ(y.level(), level == above ? p.output_level() : p.low_output_level());
      const auto pr = precision(s.keys.decrypt(x), s.keys.decrypt(y));
      std::printf("[ precision ] bootstrap from scale 2^%.0f at level %zu: min %.2f bits, mean "
                  "%.2f bits\n", log_scale, level, pr.min_bits, pr.mean_bits);
      EXPECT_GT(pr.mean_bits, log_scale > 40 ? 18 : 14);
    }
  }
  EXPECT_EQ(s.bt.output_scale(p.scale() * 3), p.scale() * 3);
}

TEST(BootstrapKeys, SeededKeysAreReproducible) {
  const BootstrapConfig cfg;
  ContextPtr ctx = boot_context(cfg, 64);
  CkksKeys k(ctx, Device::cpu(), 8);
  const BootstrapParameters p(ctx, cfg, std::ldexp(1.0, 40));
  const BootstrapKeys a = BootstrapKeys::generate(p, k.sk, k.rk, 42);
  const BootstrapKeys b = BootstrapKeys::generate(p, k.sk, std::nullopt, 42);
  EXPECT_EQ(veil::test::words(a.to_sparse.key()), veil::test::words(b.to_sparse.key()));
  EXPECT_EQ(veil::test::words(a.to_dense.key()), veil::test::words(b.to_dense.key()));
  ASSERT_EQ(a.galois_keys.keys().size(), p.galois_elements().size());
  for (const auto& [e, key] : a.galois_keys.keys()) {
    EXPECT_EQ(veil::test::words(key), veil::test::words(b.galois_keys.key(e)));
  }
  EXPECT_FALSE(b.relin_keys.empty());
  EXPECT_EQ(a.to_sparse.max_level(), p.q0_level());
  EXPECT_GT(a.bytes(), 0u);
  a.check(p);
  b.check(p);
}

// Key storage (BootstrapKeyStorage). Per-level keys are the projections of the top-level keys
// of the same seed, so both bootstrap to the same words, from input_level and from below it
// (the late SlotToCoeff at output_level: the keys' levels cover it). Each key sits at the level
// galois_key_levels() gives, which is the highest level a Galois element is used at (recounted
// here from the transforms' rotation steps); a key below its level is refused by check(). A
// byte budget makes the cheapest keys compact: compact_choice's bytes are the generated keys'
// bytes, within the budget, and such keys still bootstrap with the precision of full keys.
TEST(BootstrapKeys, PerLevelAndBudgetedKeys) {
  BootstrapConfig cfg;
  cfg.slots = 64;
  for (int word_bits : {64, 32}) {
    SCOPED_TRACE(std::to_string(word_bits) + "-bit words");
    ContextPtr ctx = boot_context(cfg, word_bits);
    CkksKeys k(ctx, Device::cpu(), 8);
    const BootstrapParameters p(ctx, cfg, std::ldexp(1.0, 40));
    BootstrapKeyStorage top_level;
    top_level.per_level = false;
    const BootstrapKeys full = BootstrapKeys::generate(p, k.sk, k.rk, 42, top_level);
    const BootstrapKeys low = BootstrapKeys::generate(p, k.sk, k.rk, 42);
    const std::vector<std::uint32_t> elts = p.galois_elements();
    ASSERT_EQ(p.galois_key_levels().size(), elts.size());
    // The oracle for the levels: every transform level's steps, SubSum at the top, and the
    // conjugation at the top.
    std::map<std::uint32_t, std::size_t> want;
    const std::size_t top = p.top_level();
    for (const auto& levels :
         {coeff_to_slot_levels(p.slots(), cfg.cts_levels, top, p.coeff_to_slot_constant(), *ctx),
          slot_to_coeff_levels(p.slots(), cfg.stc_levels, p.input_level(), *ctx),
          slot_to_coeff_levels(p.slots(), cfg.stc_levels, p.output_level(), *ctx)}) {
      for (const DftLevel& lv : levels) {
        for (int st : LinearTransform::rotation_steps_of(lv.matrices, lv.slots_or(p.slots()))) {
          if (st == 0) continue;
          std::size_t& l = want[ctx->galois_elt_from_step(st)];
          l = std::max(l, lv.level);
        }
      }
    }
    for (std::size_t st = p.slots(); st < kN / 2; st *= 2) {
      want[ctx->galois_elt_from_step(static_cast<int>(st))] = top;
    }
    want[ctx->galois_elt_column()] = top;
    ASSERT_EQ(want.size(), elts.size());
    std::size_t below_top = 0;
    for (std::size_t i = 0; i < elts.size(); ++i) {
      EXPECT_EQ(p.galois_key_levels()[i], want.at(elts[i])) << "element " << elts[i];
      EXPECT_EQ(low.galois_keys.key(elts[i]).level(), want.at(elts[i]));
      EXPECT_EQ(full.galois_keys.key(elts[i]).level(), ctx->max_level());
      below_top += want.at(elts[i]) < top ? 1 : 0;
    }
    EXPECT_GT(below_top, 0u);
    EXPECT_LT(low.bytes(), full.bytes());
    EXPECT_EQ(low.to_sparse.key().level(), p.q0_level());
    const CVec vals = random_values(p.slots(), 5);
    for (std::size_t level : {p.input_level(), p.input_level() - 1}) {
      const Ciphertext x = k.encrypt(veil::test::tile(vals, kN / 2), std::ldexp(1.0, 40), level);
      EXPECT_EQ(veil::test::words(Bootstrapper(p, full).bootstrap(x)),
                veil::test::words(Bootstrapper(p, low).bootstrap(x)))
          << "per-level keys change the words, input at level " << level;
    }
    // A key below the level it is used at is refused by name.
    BootstrapKeys short_key = low;
    const std::uint32_t e0 = elts.front();
    ASSERT_GT(p.galois_key_levels().front(), 0u);
    short_key.galois_keys = GaloisKeys(ctx, Device::cpu());
    for (const auto& [e, key] : low.galois_keys.keys()) {
      short_key.galois_keys.insert(e, e == e0 ? lower_key_level(key, 0) : key);
    }
    veil::test::expect_invalid([&] { short_key.check(p); }, "galois_keys: the key for Galois");
    // A dense key below the top level, where ModRaise lands, is refused before any bootstrap.
    BootstrapKeys short_dense = low;
    short_dense.to_dense = KeyGenerator(ctx, k.sk).create_switching_key(
        KeyGenerator(ctx, Device::cpu(), 99, 32).secret_key(), p.top_level() - 1);
    veil::test::expect_invalid([&] { short_dense.check(p); }, "to_dense: serves levels <=");
    // A budget between all-compact and all-full.
    std::size_t bytes_full = 0, bytes_compact = 0, bytes_budget = 0;
    (void)BootstrapKeys::compact_choice(p, {}, &bytes_full);
    BootstrapKeyStorage all;
    all.compact = true;
    (void)BootstrapKeys::compact_choice(p, all, &bytes_compact);
    EXPECT_EQ(bytes_full, low.bytes());
    BootstrapKeyStorage budget;
    budget.max_bytes = (bytes_full + bytes_compact) / 2;
    const std::vector<bool> chosen = BootstrapKeys::compact_choice(p, budget, &bytes_budget);
    EXPECT_LE(bytes_budget, budget.max_bytes);
    const BootstrapKeys mixed = BootstrapKeys::generate(p, k.sk, k.rk, 42, budget);
    EXPECT_EQ(mixed.bytes(), bytes_budget);
    std::size_t compact_keys = 0;
    for (std::size_t i = 0; i < elts.size(); ++i) {
      EXPECT_EQ(mixed.galois_keys.key(elts[i]).compact(), bool(chosen[i]));
      compact_keys += chosen[i] ? 1 : 0;
    }
    EXPECT_GT(compact_keys, 0u);
    EXPECT_LT(compact_keys, elts.size());
    const Ciphertext x = k.encrypt(veil::test::tile(vals, kN / 2), std::ldexp(1.0, 40),
                                   p.input_level());
    const auto pf = precision(k.decrypt(x), k.decrypt(Bootstrapper(p, full).bootstrap(x)));
    const auto pm = precision(k.decrypt(x), k.decrypt(Bootstrapper(p, mixed).bootstrap(x)));
    report("bootstrap with keys of one form", pf);
    report("bootstrap with the budget's mixed keys", pm);
    EXPECT_GT(pm.mean_bits, pf.mean_bits - 1.0);
    BootstrapKeyStorage tiny;
    tiny.max_bytes = bytes_compact / 2;
    veil::test::expect_invalid([&] { (void)BootstrapKeys::compact_choice(p, tiny); },
                               "storage.max_bytes");
  }
}

/// Bootstraps the same ciphertext on the CPU and the GPU (same seeds): the words must agree.
void expect_gpu_matches_cpu(const BootstrapConfig& cfg, int word_bits, std::uint64_t seed) {
  std::vector<std::uint64_t> out[2];
  for (int d = 0; d < 2; ++d) {
    const Device dev = d ? veil::test::gpu() : Device::cpu();
    BootSetup s(cfg, word_bits, dev, seed);
    const CVec vals = veil::test::tile(random_values(s.params.slots(), seed), kN / 2);
    const Ciphertext y =
        s.bt.bootstrap(s.keys.encrypt(vals, s.params.scale(), s.params.input_level()));
    EXPECT_GT(precision(vals, s.keys.decrypt(y)).mean_bits, 20);
    out[d] = veil::test::words(y);
  }
  EXPECT_EQ(out[0], out[1]) << word_bits << "-bit words";
}

TEST(BootstrapperGpu, MatchesTheCpuWordForWord) {
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  expect_gpu_matches_cpu(BootstrapConfig{}, 64, 21);
  BootstrapConfig sparse;
  sparse.slots = 64;
  expect_gpu_matches_cpu(sparse, 32, 21);
}

TEST(BootstrapperGpu, TwentyInARowStayWithinTheDocumentedBound) {
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  check_bootstraps_in_a_row(BootstrapConfig{}, 64, veil::test::gpu(), 20);
  BootstrapConfig sparse;
  sparse.slots = 64;
  sparse.pack_sparse = true;
  check_bootstraps_in_a_row(sparse, 32, veil::test::gpu(), 20);
}

TEST(BootstrapperGpu, PackSparseMatchesTheCpuWordForWord) {
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  BootstrapConfig cfg;
  cfg.slots = 64;
  cfg.pack_sparse = true;
  for (int word_bits : {64, 32}) expect_gpu_matches_cpu(cfg, word_bits, 22);
}

TEST(BootstrapperGpu, OriginalOrderMatchesTheCpuWordForWord) {
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  BootstrapConfig cfg;
  cfg.slots = 64;
  std::vector<std::uint64_t> out[2];
  for (int d = 0; d < 2; ++d) {
    const Device dev = d ? veil::test::gpu() : Device::cpu();
    BootSetup s(cfg, 32, dev, 22);
    const CVec vals = veil::test::tile(random_values(s.params.slots(), 15), kN / 2);
    const Ciphertext x = s.keys.encrypt(vals, s.params.scale(), s.params.q0_level());
    const Ciphertext y = s.bt.bootstrap(x);
    EXPECT_EQ(y.level(), s.params.low_output_level());
    EXPECT_GT(precision(vals, s.keys.decrypt(y)).mean_bits, 16);
    out[d] = veil::test::words(y);
  }
  EXPECT_EQ(out[0], out[1]);
}

}  // namespace

// The CUDA graph replay (circuits/graph_replay.h) computes the same words as the direct run:
// bootstrapper A bootstraps x (direct, then captured) and then y (replayed); bootstrapper B,
// fresh, bootstraps y directly. Both must be equal word for word, and the CPU's too.
TEST(BootstrapperGpu, GraphReplayEqualsTheDirectRun) {
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  if (!veil::circuits::GraphReplay::enabled()) GTEST_SKIP() << "VEIL_GRAPHS=0";
  BootstrapConfig cfg;
  cfg.slots = 64;
  BootSetup a(cfg, 32, veil::test::gpu(), 23);
  BootSetup b(cfg, 32, veil::test::gpu(), 23);
  BootSetup c(cfg, 32, Device::cpu(), 23);
  const CVec xv = veil::test::tile(random_values(a.params.slots(), 11), kN / 2);
  const CVec yv = veil::test::tile(random_values(a.params.slots(), 12), kN / 2);
  const Ciphertext x = a.keys.encrypt(xv, a.params.scale(), a.params.input_level());
  const Ciphertext y = a.keys.encrypt(yv, a.params.scale(), a.params.input_level());
  const Ciphertext ax = a.bt.bootstrap(x);
  EXPECT_TRUE(a.bt.uses_graph()) << a.bt.graph_failure();
  const Ciphertext ay = a.bt.bootstrap(y);
  const Ciphertext ay2 = a.bt.bootstrap(y);
  const Ciphertext by = b.bt.bootstrap(y);
  const Ciphertext cy = c.bt.bootstrap(y.to(Device::cpu()));
  EXPECT_EQ(veil::test::words(ay), veil::test::words(by));
  EXPECT_EQ(veil::test::words(ay2), veil::test::words(by));
  EXPECT_EQ(veil::test::words(ay), veil::test::words(cy));
  EXPECT_NE(veil::test::words(ax), veil::test::words(ay));
  EXPECT_EQ(ay.scale(), by.scale());
  EXPECT_GT(precision(yv, a.keys.decrypt(ay)).mean_bits, 20);
  // A ciphertext above input_level() is switched down first, so it replays the same graph.
  const Ciphertext up = a.keys.encrypt(yv, a.params.scale(), a.params.input_level() + 1);
  EXPECT_GT(precision(yv, a.keys.decrypt(a.bt.bootstrap(up))).mean_bits, 20);
}

// Concurrent branches (backend::run_branches: the two EvalMods of full slots, the BSGS baby
// steps and giant-step groups) change the graph's schedule, not the words: for full and sparse
// slots, graphs captured with branches on and off and with 1 or 4 BSGS branches all replay the
// CPU's words (the CPU runs the same grouping one branch after another).
TEST(BootstrapperGpu, ConcurrentBranchesKeepTheWords) {
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  if (!veil::circuits::GraphReplay::enabled()) GTEST_SKIP() << "VEIL_GRAPHS=0";
  const bool branches = veil::backend::graph_branches();
  const std::size_t ways = veil::ckks::bsgs_branches();
  for (std::size_t slots : {std::size_t{0}, std::size_t{64}}) {
    BootstrapConfig cfg;
    cfg.slots = slots;
    const int bits = slots == 0 ? 64 : 32;  // as MatchesTheCpuWordForWord
    std::vector<std::uint64_t> want;
    {
      BootSetup c(cfg, bits, Device::cpu(), 24);
      const CVec xv = veil::test::tile(random_values(c.params.slots(), 13), kN / 2);
      want = veil::test::words(c.bt.bootstrap(
          c.keys.encrypt(xv, c.params.scale(), c.params.input_level())));
    }
    for (bool g : {true, false}) {
      for (std::size_t b : {std::size_t{1}, std::size_t{4}}) {
        veil::backend::set_graph_branches(g);
        veil::ckks::set_bsgs_branches(b);
        BootSetup a(cfg, bits, veil::test::gpu(), 24);
        const CVec xv = veil::test::tile(random_values(a.params.slots(), 13), kN / 2);
        const Ciphertext x = a.keys.encrypt(xv, a.params.scale(), a.params.input_level());
        const Ciphertext first = a.bt.bootstrap(x);  // direct, then captured
        const Ciphertext again = a.bt.bootstrap(x);  // replayed
        EXPECT_TRUE(a.bt.uses_graph()) << a.bt.graph_failure();
        const std::string what = std::to_string(slots) + " slots, branches " +
                                 std::to_string(g) + ", bsgs " + std::to_string(b);
        EXPECT_EQ(veil::test::words(first), want) << what;
        EXPECT_EQ(veil::test::words(again), want) << what;
        EXPECT_GT(precision(xv, a.keys.decrypt(again)).mean_bits, 20);
      }
    }
  }
  veil::backend::set_graph_branches(branches);
  veil::ckks::set_bsgs_branches(ways);
}
