// Double-hoisted BSGS linear transforms (Evaluator::multiply_diagonals_bsgs, ckks/bsgs.h) and
// their use in LinearTransform and the bootstrapper, against the single-hoisted path they
// replace (Hoisting::single, VEIL_DOUBLE_HOIST=0) and a float64 oracle: precision in bits for
// both (printed; the new path within 0.2-0.3 bits of the old or better), the same level and
// scale, the extended diagonals' memory ((l+1+k)/(l+1) times in full, 2^-shift of that when
// stored as one period), the fallback without a key per step, the errors. GPU parity (word for
// word with the CPU) runs when a CUDA device is visible.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdlib>
#include <optional>
#include <string>
#include <vector>

#include "ckks_util.h"
#include "veil/circuits/bootstrapper.h"
#include "veil/circuits/dft.h"
#include "veil/circuits/linear_transform.h"
#include "veil/circuits/rescale_chain.h"
#include "veil/ckks/bsgs.h"
#include "veil/ckks/ckks_tables.h"

namespace {

using namespace veil;
using namespace veil::circuits;
using namespace veil::test;

/// Sets an environment variable for a scope (VEIL_DOUBLE_HOIST: the bootstrapper's transforms
/// take the default; VEIL_PERIODIC_DIAGONALS: diagonals stored as one period or in full).
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    if (old) old_ = old;
    setenv(name, value, 1);
  }
  ~ScopedEnv() {
    if (old_) {
      setenv(name_.c_str(), old_->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }

 private:
  std::string name_;
  std::optional<std::string> old_;
};

/// 64-bit words, two special primes (alpha 2); 32-bit words with rescale blocks of 2 and 1.
ContextPtr lt_context(int word_bits) {
  EncryptionParameters p(SchemeType::ckks);
  p.poly_modulus_degree = 2048;
  if (word_bits == 64) {
    p.coeff_modulus = CoeffModulus::create(2048, {60, 45, 45, 55, 55});
  } else {
    p.coeff_modulus = CoeffModulus::create(2048, {30, 30, 30, 30, 30, 31, 31});
    p.rescale_groups = {2, 1, 2};
  }
  p.special_primes = 2;
  return Context::create(p, SecurityLevel::none);
}

std::vector<std::vector<Diagonals>> two_by_two(std::size_t n) {
  auto mat = [&](std::uint64_t seed) {
    Diagonals d(n);
    for (std::size_t key = 0; key < n; key += 1 + (seed % 3))
      d.add(static_cast<long long>(key), random_values(n, seed * 100 + key));
    return d;
  };
  return {{mat(1), mat(2)}, {mat(3), mat(4)}};
}

class DoubleHoist : public ::testing::TestWithParam<int> {};

// Two inputs, two outputs, 64 slots tiled: both evaluations against M x in float64.
TEST_P(DoubleHoist, LinearTransformMatchesTheSingleHoistedPrecision) {
  ContextPtr ctx = lt_context(GetParam());
  CkksKeys k(ctx, Device::cpu(), 11);
  const std::size_t n = 64, half = ctx->n() / 2, level = ctx->max_level();
  const auto m = two_by_two(n);
  const double s_in = std::ldexp(1.0, 40), s_out = std::ldexp(1.0, 38);
  const LinearTransform one(k.encoder, m, n, level, s_in, s_out, Device::cpu(), Hoisting::single);
  const ScopedEnv periodic("VEIL_PERIODIC_DIAGONALS", "1");  // whatever the caller set
  std::optional<ScopedEnv> full(std::in_place, "VEIL_PERIODIC_DIAGONALS", "0");
  const LinearTransform two(k.encoder, m, n, level, s_in, s_out, Device::cpu(),
                            Hoisting::double_hoisted);
  full.reset();
  // the 64-slot diagonals tiled to N/2 = 1024 slots repeat 16 times: one period each
  const LinearTransform three(k.encoder, m, n, level, s_in, s_out, Device::cpu(),
                              Hoisting::double_hoisted);
  EXPECT_EQ(two.plaintext_shifts(), std::vector<unsigned>(two.plaintext_shifts().size(), 0));
  EXPECT_EQ(three.plaintext_shifts(), std::vector<unsigned>(two.plaintext_shifts().size(), 4));
  EXPECT_EQ(three.plaintext_bytes() * 16, two.plaintext_bytes());
  EXPECT_EQ(three.rotation_steps(), two.rotation_steps());
  {  // expanded, the same words: this FFT leaves exact zeros off the multiples of 16
    const auto p2 = two.plaintexts(), p3 = three.plaintexts();
    ASSERT_EQ(p2.size(), p3.size());
    for (std::size_t i = 0; i < p2.size(); ++i)
      ASSERT_EQ(veil::test::words(p2[i]), veil::test::words(p3[i])) << "diagonal " << i;
  }
  EXPECT_EQ(one.hoisting(), Hoisting::single);
  EXPECT_EQ(two.hoisting(), Hoisting::double_hoisted);
  EXPECT_EQ(one.rotation_steps(), two.rotation_steps());
  // memory: (l+1+k)/(l+1), and the extended diagonals' Q limbs are the ordinary ones
  const std::size_t limbs = level + 1, ext = limbs + ctx->num_p();
  EXPECT_EQ(two.plaintext_bytes() * limbs, one.plaintext_bytes() * ext);
  std::printf(
      "[ memory    ] diagonals at level %zu (%zu-bit words): single %zu bytes, double "
      "%zu bytes (x%.3f)\n",
      level, static_cast<std::size_t>(GetParam()), one.plaintext_bytes(), two.plaintext_bytes(),
      double(ext) / double(limbs));
  const auto p1 = one.plaintexts(), p2 = two.plaintexts();
  ASSERT_EQ(p1.size(), p2.size());
  for (std::size_t i = 0; i < p1.size(); ++i) {
    const auto a = veil::test::words(p1[i]), b = veil::test::words(p2[i]);
    ASSERT_TRUE(std::equal(a.begin(), a.end(), b.begin())) << "diagonal " << i;
  }
  const GaloisKeys gk = k.galois(two.rotation_steps());
  const CVec x0 = random_values(n, 21), x1 = random_values(n, 22);
  const Ciphertext c0 = k.encrypt(veil::test::tile(x0, half), s_in, level);
  const Ciphertext c1 = k.encrypt(veil::test::tile(x1, half), s_in, level);
  const CVec d0 = k.decrypt(c0), d1 = k.decrypt(c1);
  const CVec x0d(d0.begin(), d0.begin() + n), x1d(d1.begin(), d1.begin() + n);
  const auto r1 = one.apply(k.ev, {&c0, &c1}, gk), r2 = two.apply(k.ev, {&c0, &c1}, gk);
  const auto r3 = three.apply(k.ev, {&c0, &c1}, gk);
  ASSERT_EQ(r2.size(), 2u);
  ASSERT_EQ(r3.size(), 2u);
  for (std::size_t o = 0; o < 2; ++o) {
    EXPECT_EQ(r2[o].level(), r1[o].level());
    EXPECT_EQ(r2[o].scale(), r1[o].scale());
    EXPECT_EQ(r2[o].key_id(), c0.key_id());
    const CVec a = m[o][0].apply(x0d), b = m[o][1].apply(x1d);
    CVec want(n);
    for (std::size_t j = 0; j < n; ++j) want[j] = a[j] + b[j];
    const auto e1 = precision(veil::test::tile(want, half), k.decrypt(r1[o]));
    const auto e2 = precision(veil::test::tile(want, half), k.decrypt(r2[o]));
    const auto e3 = precision(veil::test::tile(want, half), k.decrypt(r3[o]));
    std::printf(
        "[ precision ] linear transform output %zu, %d-bit words: single min %.2f mean "
        "%.2f bits; double min %.2f mean %.2f bits; double, one period min %.2f mean %.2f\n",
        o, GetParam(), e1.min_bits, e1.mean_bits, e2.min_bits, e2.mean_bits, e3.min_bits,
        e3.mean_bits);
    EXPECT_GT(e2.min_bits, 17);
    EXPECT_GT(e2.min_bits, e1.min_bits - 0.3);
    EXPECT_GT(e2.mean_bits, e1.mean_bits - 0.2);
    EXPECT_GT(e3.min_bits, e1.min_bits - 0.3);
    EXPECT_GT(e3.mean_bits, e1.mean_bits - 0.2);
    EXPECT_EQ(r3[o].level(), r2[o].level());
    EXPECT_EQ(r3[o].scale(), r2[o].scale());
    EXPECT_EQ(veil::test::words(r3[o]), veil::test::words(r2[o]));  // the same diagonals' words
    EXPECT_NE(veil::test::words(r1[o]), veil::test::words(r2[o]));  // other roundings
  }
  // Without a key per step the double-hoisted transform composes rotations single-hoisted:
  // word for word the single-hoisted transform's result (the extended diagonals' Q limbs).
  std::vector<int> pow2;
  for (int s = 1; s < static_cast<int>(half); s *= 2) {
    pow2.push_back(s);
    pow2.push_back(-s);
  }
  const GaloisKeys gk2 = k.galois(pow2);
  const auto f1 = one.apply(k.ev, {&c0, &c1}, gk2), f2 = two.apply(k.ev, {&c0, &c1}, gk2);
  EXPECT_EQ(veil::test::words(f1[0]), veil::test::words(f2[0]));
  EXPECT_EQ(veil::test::words(f1[1]), veil::test::words(f2[1]));
  // ... and with the diagonals stored as one period, expanded for the fallback: the same
  // transform up to the FFT noise those diagonals drop.
  const auto f3 = three.apply(k.ev, {&c0, &c1}, gk2);
  for (std::size_t o = 0; o < 2; ++o) {
    const auto a = m[o][0].apply(x0d), b = m[o][1].apply(x1d);
    CVec want(n);
    for (std::size_t j = 0; j < n; ++j) want[j] = a[j] + b[j];
    const auto e1 = precision(veil::test::tile(want, half), k.decrypt(f1[o]));
    const auto e3 = precision(veil::test::tile(want, half), k.decrypt(f3[o]));
    EXPECT_GT(e3.min_bits, e1.min_bits - 0.3) << "fallback output " << o;
    EXPECT_EQ(f3[o].level(), f1[o].level());
    EXPECT_EQ(veil::test::words(f3[o]), veil::test::words(f2[o]));  // expanded: the same words
  }
}

// The homomorphic DFT's factors (CoeffToSlot then SlotToCoeff, full slots, two inputs on the
// first level and two outputs on the last) in both evaluations, as CircuitsDft's round trip.
TEST_P(DoubleHoist, DftRoundTripMatchesTheSingleHoistedPrecision) {
  const ScopedEnv periodic("VEIL_PERIODIC_DIAGONALS", "1");  // whatever the caller set
  const std::size_t N = 2048, slots = 1024, levels = 3;
  EncryptionParameters p(SchemeType::ckks);
  p.poly_modulus_degree = N;
  if (GetParam() == 64) {
    std::vector<int> bits{60};
    bits.insert(bits.end(), 2 * levels, 50);
    bits.insert(bits.end(), {60, 60});
    p.coeff_modulus = CoeffModulus::create(N, bits);
  } else {  // blocks of two 30-bit primes (D ~ 2^60)
    p.coeff_modulus = CoeffModulus::create(N, std::vector<int>(2 * (2 * levels + 1) + 2, 30));
    p.rescale_groups = std::vector<std::size_t>(2 * levels + 1, 2);
  }
  p.special_primes = 2;
  ContextPtr ctx = Context::create(p, SecurityLevel::none);
  CkksKeys k(ctx, Device::cpu(), 17);
  const double s40 = std::ldexp(1.0, 40);
  const std::size_t top = ctx->max_level();
  const auto cts = coeff_to_slot_levels(slots, levels, top, 1.0, *ctx);
  const RescaleChain chain(ctx);
  const CVec z = random_values(slots, 31);
  const Ciphertext ct = k.encrypt(z, s40, top);
  const CVec zd = k.decrypt(ct);
  std::optional<GaloisKeys> gk;
  veil::test::Precision pr[2];
  std::size_t bytes[2] = {0, 0};
  for (int h = 0; h < 2; ++h) {
    const Hoisting mode = h ? Hoisting::double_hoisted : Hoisting::single;
    auto encode = [&](const std::vector<DftLevel>& lv) {
      std::vector<double> d;
      for (const auto& l : lv) d.push_back(chain.block_product(l.level));
      const auto sc = shared_precision_scales(lv, d, s40, s40);
      std::vector<LinearTransform> out;
      for (std::size_t i = 0; i < lv.size(); ++i) {
        out.emplace_back(k.encoder, lv[i].matrices, slots, lv[i].level, sc[i], sc[i + 1],
                         Device::cpu(), mode);
        bytes[h] += out.back().plaintext_bytes();
      }
      return out;
    };
    const auto cts_lt = encode(cts);
    const auto stc_lt = encode(
        slot_to_coeff_levels(slots, levels, ckks::rescale_target(*ctx, cts_lt.back().level()),
                             *ctx));
    if (!gk) {
      std::vector<int> steps;
      for (const auto* v : {&cts_lt, &stc_lt})
        for (const auto& lt : *v)
          for (int st : lt.rotation_steps()) steps.push_back(st);
      gk = k.galois(steps);
    }
    const Ciphertext conj = k.ev.conjugate(ct, *gk);
    Ciphertext cur = cts_lt[0].apply(k.ev, {&ct, &conj}, *gk)[0];
    for (std::size_t i = 1; i < cts_lt.size(); ++i) cur = cts_lt[i].apply(k.ev, {&cur}, *gk)[0];
    for (std::size_t i = 0; i + 1 < stc_lt.size(); ++i) cur = stc_lt[i].apply(k.ev, {&cur}, *gk)[0];
    const auto ab = stc_lt.back().apply(k.ev, {&cur}, *gk);
    const Ciphertext out = k.ev.add(ab[0], k.ev.conjugate(ab[1], *gk));
    EXPECT_EQ(out.level(), ckks::rescale_groups(*ctx).front() - 1);
    pr[h] = precision(zd, k.decrypt(out));
  }
  std::printf(
      "[ precision ] CoeffToSlot -> SlotToCoeff, %d-bit words: single min %.2f mean "
      "%.2f bits; double min %.2f mean %.2f bits; diagonals %zu -> %zu bytes\n",
      GetParam(), pr[0].min_bits, pr[0].mean_bits, pr[1].min_bits, pr[1].mean_bits, bytes[0],
      bytes[1]);
  EXPECT_GT(pr[1].min_bits, pr[0].min_bits - 0.3);
  EXPECT_GT(pr[1].mean_bits, pr[0].mean_bits - 0.2);
  EXPECT_GT(pr[1].min_bits, 18);
}

INSTANTIATE_TEST_SUITE_P(Words, DoubleHoist, ::testing::Values(64, 32),
                         [](const auto& info) { return "W" + std::to_string(info.param); });

TEST(DoubleHoistEvaluator, ChecksItsOperands) {
  ContextPtr ctx = lt_context(64);
  CkksKeys k(ctx, Device::cpu(), 2);
  const std::size_t level = ctx->max_level(), half = ctx->n() / 2;
  const double s = std::ldexp(1.0, 40);
  const Ciphertext ct = k.encrypt(random_values(8, 1), s, level);
  const GaloisKeys gk = k.galois({1});
  const Plaintext ext = k.encoder.encode_extended(random_values(half, 2), s, level);
  const Plaintext plain = k.encoder.encode(random_values(half, 2), s, level);
  using ckks::BsgsGiant;
  auto run = [&](const std::vector<const Ciphertext*>& in, const Plaintext& pt, int baby,
                 int giant) {
    return k.ev.multiply_diagonals_bsgs(in, {{BsgsGiant{giant, {{0, baby, &pt}}}}}, gk);
  };
  EXPECT_EQ(run({&ct}, ext, 1, 0)[0].level(), level - 1);
  veil::test::expect_invalid([&] { run({&ct}, plain, 1, 0); },
                             "plain: expected a plaintext over Q_l ∪ P");
  veil::test::expect_invalid([&] { run({&ct}, ext, 2, 0); }, "galois_keys: no key for step 2");
  veil::test::expect_invalid([&] { run({&ct}, ext, 0, -1); }, "galois_keys: no key for step -1");
  veil::test::expect_invalid([&] { run({&ct}, ext, 1, static_cast<int>(half)); }, "steps");
  veil::test::expect_invalid([&] { run({}, ext, 1, 0); }, "inputs");
  veil::test::expect_invalid(
      [&] {
        k.ev.multiply_diagonals_bsgs({&ct}, {{BsgsGiant{0, {{1, 0, &ext}}}}}, gk);
      },
      "outputs: a term reads input 1");
  veil::test::expect_invalid([&] { k.ev.multiply_diagonals_bsgs({&ct}, {{}}, gk); }, "outputs");
  // a diagonal stored as one period (64 values tiled: shift 4) gives the words of its full form
  // (the sums are exact); its word count must match its shift
  const CVec per = veil::test::tile(random_values(64, 9), half);
  const Plaintext compact = k.encoder.encode_extended_periodic(per, s, level, 4);
  const Plaintext expanded = CKKSEncoder::expand_periodic(compact, 4);
  auto run_s = [&](const Plaintext& pt, unsigned shift) {
    return k.ev.multiply_diagonals_bsgs(
        {&ct}, {{BsgsGiant{1, {{0, 1, &pt, shift}, {0, 0, &ext, 0}}}}}, gk)[0];
  };
  EXPECT_EQ(veil::test::words(run_s(compact, 4)), veil::test::words(run_s(expanded, 0)));
  veil::test::expect_invalid([&] { run_s(compact, 0); }, "plain: expected a plaintext over Q_l");
  veil::test::expect_invalid([&] { run_s(compact, 3); }, "(shift 3");
  veil::test::expect_invalid([&] { run_s(expanded, 10); }, "plain: a term's shift must be at most");
  const Ciphertext low = k.ev.mod_switch_to(ct, 0);
  const Plaintext ext0 = k.encoder.encode_extended(random_values(half, 2), s, 0);
  veil::test::expect_invalid([&] { run({&low}, ext0, 1, 0); }, "encrypted");
  CkksKeys other(ctx, Device::cpu(), 77);
  const GaloisKeys foreign = other.galois({1});
  veil::test::expect_invalid(
      [&] {
        k.ev.multiply_diagonals_bsgs({&ct}, {{BsgsGiant{0, {{0, 1, &ext}}}}}, foreign);
      },
      "galois_keys");
}

// The bootstrap in both evaluations (the transforms take VEIL_DOUBLE_HOIST): precision against
// the input, averaged over three key sets (at N = 2^11 EvalMod's error dominates and one run
// varies by a few tenths of a bit either way).
TEST(DoubleHoistBootstrap, PrecisionMatchesTheSingleHoistedPath) {
  const ScopedEnv periodic("VEIL_PERIODIC_DIAGONALS", "1");
  for (int word_bits : {64, 32}) {
    BootstrapConfig cfg;
    if (word_bits == 32) cfg.slots = 64;
    const BootstrapChain chain = bootstrap_chain(11, 2, cfg, word_bits);
    ContextPtr ctx = Context::create(chain.parameters(2048, word_bits), SecurityLevel::none);
    const BootstrapParameters params(ctx, cfg, std::ldexp(1.0, 40));
    double sum_min[2] = {0, 0}, sum_mean[2] = {0, 0};
    std::size_t bytes[2] = {0, 0};
    const int seeds = 3;
    for (int seed = 1; seed <= seeds; ++seed) {
      CkksKeys keys(ctx, Device::cpu(), seed);
      const BootstrapKeys bk = BootstrapKeys::generate(params, keys.sk, keys.rk, seed);
      const CVec vals = veil::test::tile(random_values(params.slots(), seed + 7), 1024);
      const Ciphertext ct = keys.encrypt(vals, params.scale(), params.input_level());
      for (int h = 0; h < 2; ++h) {
        std::optional<ScopedEnv> env;
        if (h == 0) env.emplace("VEIL_DOUBLE_HOIST", "0");
        const Bootstrapper bt(params, bk);
        env.reset();
        const Ciphertext y = bt.bootstrap(ct);
        EXPECT_EQ(y.level(), params.output_level());
        EXPECT_EQ(y.scale(), params.scale());
        const auto p = precision(vals, keys.decrypt(y));
        sum_min[h] += p.min_bits;
        sum_mean[h] += p.mean_bits;
        bytes[h] = bt.plaintext_bytes();
      }
    }
    for (double* s : {sum_min, sum_mean}) {
      s[0] /= seeds;
      s[1] /= seeds;
    }
    std::printf(
        "[ precision ] bootstrap, %d-bit words, %zu slots, mean of %d key sets: single "
        "min %.2f mean %.2f bits; double min %.2f mean %.2f bits; diagonals %zu -> %zu "
        "bytes\n",
        word_bits, params.slots(), seeds, sum_min[0], sum_mean[0], sum_min[1], sum_mean[1],
        bytes[0], bytes[1]);
    EXPECT_GT(sum_min[1], sum_min[0] - 0.3);
    EXPECT_GT(sum_mean[1], sum_mean[0] - 0.3);
    EXPECT_GT(sum_mean[1], 20);
    // the DFT factors' diagonals repeat with their block size and are stored as one period:
    // less than single's full diagonals over Q_l, though double's live over Q_l ∪ P
    EXPECT_LT(bytes[1], bytes[0]);
  }
}

// ---- GPU parity ----------------------------------------------------------------------------

TEST(DoubleHoistGpu, LinearTransformMatchesTheCpuWordForWord) {
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  const ScopedEnv periodic("VEIL_PERIODIC_DIAGONALS", "1");  // whatever the caller set
  for (int bits : {64, 32}) {
    ContextPtr ctx = lt_context(bits);
    const std::size_t n = 64, half = ctx->n() / 2, level = ctx->max_level();
    const auto m = two_by_two(n);
    const double s = std::ldexp(1.0, 40);
    std::vector<std::vector<std::uint64_t>> words[2];
    for (int d = 0; d < 2; ++d) {
      const Device dev = d ? veil::test::gpu() : Device::cpu();
      CkksKeys k(ctx, dev, 23);
      const Ciphertext c0 = k.encrypt(veil::test::tile(random_values(n, 1), half), s, level);
      const Ciphertext c1 = k.encrypt(veil::test::tile(random_values(n, 2), half), s, level);
      for (Hoisting h : {Hoisting::double_hoisted, Hoisting::single}) {
        const LinearTransform lt(k.encoder, m, n, level, s, s, dev, h);
        const GaloisKeys gk = k.galois(lt.rotation_steps());
        for (const Ciphertext& r : lt.apply(k.ev, {&c0, &c1}, gk))
          words[d].push_back(veil::test::words(r));
        for (const Plaintext& p : lt.plaintexts()) words[d].push_back(veil::test::words(p));
      }
    }
    ASSERT_EQ(words[0].size(), words[1].size());
    for (std::size_t i = 0; i < words[0].size(); ++i)
      EXPECT_EQ(words[0][i], words[1][i]) << bits << "-bit words, result " << i;
  }
}

TEST(DoubleHoistGpu, BootstrapMatchesTheCpuWordForWordInBothEvaluations) {
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  const ScopedEnv periodic("VEIL_PERIODIC_DIAGONALS", "1");  // whatever the caller set
  for (int word_bits : {64, 32}) {
    BootstrapConfig cfg;
    if (word_bits == 32) cfg.slots = 64;
    const BootstrapChain chain = bootstrap_chain(11, 2, cfg, word_bits);
    ContextPtr ctx = Context::create(chain.parameters(2048, word_bits), SecurityLevel::none);
    const BootstrapParameters params(ctx, cfg, std::ldexp(1.0, 40));
    for (const char* env : {"1", "0"}) {
      std::vector<std::uint64_t> out[2];
      for (int d = 0; d < 2; ++d) {
        const Device dev = d ? veil::test::gpu() : Device::cpu();
        CkksKeys keys(ctx, dev, 21);
        std::optional<ScopedEnv> e(std::in_place, "VEIL_DOUBLE_HOIST", env);
        const Bootstrapper bt(params, BootstrapKeys::generate(params, keys.sk, keys.rk, 21));
        e.reset();
        const CVec vals = veil::test::tile(random_values(params.slots(), 10), 1024);
        const Ciphertext y = bt.bootstrap(keys.encrypt(vals, params.scale(), params.input_level()));
        EXPECT_GT(precision(vals, keys.decrypt(y)).mean_bits, 20);
        out[d] = veil::test::words(y);
      }
      EXPECT_EQ(out[0], out[1]) << word_bits << "-bit words, VEIL_DOUBLE_HOIST=" << env;
    }
  }
}

}  // namespace

namespace {

// The BSGS branches (ckks::set_bsgs_branches: baby steps dealt round robin, giant steps in
// groups with their own accumulators) give the same words as one branch, whatever their number:
// the groups' sums are exact. Two inputs, two outputs, several giant steps per output.
TEST(DoubleHoistBranches, AnyNumberOfBranchesGivesTheSameWords) {
  const std::size_t ways = veil::ckks::bsgs_branches();
  for (int bits : {64, 32}) {
    ContextPtr ctx = lt_context(bits);
    const std::size_t n = 64, half = ctx->n() / 2, level = ctx->max_level();
    const double s = std::ldexp(1.0, 40);
    CkksKeys k(ctx, Device::cpu(), 31);
    const Ciphertext c0 = k.encrypt(veil::test::tile(random_values(n, 5), half), s, level);
    const Ciphertext c1 = k.encrypt(veil::test::tile(random_values(n, 6), half), s, level);
    const LinearTransform lt(k.encoder, two_by_two(n), n, level, s, s, Device::cpu(),
                             Hoisting::double_hoisted);
    const GaloisKeys gk = k.galois(lt.rotation_steps());
    std::vector<std::vector<std::uint64_t>> want;
    // two outputs: 1 (one group each), 4 and 5 (two groups each), 16 (eight, as many as it has)
    for (std::size_t b : {std::size_t{1}, std::size_t{4}, std::size_t{5}, std::size_t{16}}) {
      veil::ckks::set_bsgs_branches(b);
      std::vector<std::vector<std::uint64_t>> got;
      for (const Ciphertext& r : lt.apply(k.ev, {&c0, &c1}, gk))
        got.push_back(veil::test::words(r));
      if (want.empty()) {
        want = got;
        ASSERT_EQ(want.size(), 2u);
      } else {
        EXPECT_EQ(got, want) << bits << "-bit words, " << b << " branches";
      }
    }
  }
  veil::ckks::set_bsgs_branches(ways);
  veil::test::expect_invalid([] { veil::ckks::set_bsgs_branches(0); }, "n: expected 1..16, got 0");
  veil::test::expect_invalid([] { veil::ckks::set_bsgs_branches(17); },
                             "n: expected 1..16, got 17");
  EXPECT_EQ(veil::ckks::bsgs_branches(), ways);
}

}  // namespace
