// The extended-basis key-switching primitives of double hoisting (rlwe/keyswitch.h:
// key_switch_lift, key_switch_inner_ext, key_switch_mod_down, key_switch_rescale_down) and
// CKKSEncoder::encode_extended, each against an independent oracle:
// - big-integer CRT (Boost cpp_int): the lift is P * x, ModDown is round(x / P), the fused
//   rescale round(x / (B P)), for random polynomials over Q_l ∪ P;
// - the ordinary operations: the extended rotation ModDown'ed equals Evaluator::rotate_vector
//   word for word (P sigma(c0) is a multiple of P, so the rounding is the key switch's own), the
//   fused rescale is within one of ModDown then rescale_to_next;
// - encode(): the extended plaintext's first l+1 limbs are encode()'s words and its P limbs the
//   same integer coefficients modulo the special primes.
// 64-bit words (two special primes, alpha = 2) and 32-bit words (rescale blocks of 2 and 1).
// GPU parity (word for word with the CPU) runs when a CUDA device is visible.
#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "ckks_util.h"
#include "rns_util.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/ring/ntt.h"
#include "veil/ring/ntt_simd.h"
#include "veil/rlwe/keyswitch.h"
#include "veil/rns/mod_down_ntt.h"

namespace {

using namespace veil;
using namespace veil::test;

ContextPtr ext_context(int word_bits) {
  if (word_bits == 64)
    return ckks_context(4096, {60, 40, 40, 40, 40, 55, 55}, 2);
  EncryptionParameters p =
      make_params(SchemeType::ckks, 4096, {30, 30, 30, 30, 30, 30, 30, 30, 31, 31}, 2);
  p.rescale_groups = {2, 1, 2, 1, 2};
  return Context::create(p, SecurityLevel::none);
}

/// The primes of base[first, first + count) (all of it by default).
std::vector<u64> primes_of(const RnsBase& base, std::size_t first = 0,
                           std::size_t count = std::size_t(-1)) {
  std::vector<u64> q;
  for (std::size_t i = first; i < base.size() && i - first < count; ++i)
    q.push_back(base[i].value);
  return q;
}

/// num_polys polynomials over `base`, uniform residues (the same for any device).
std::vector<u64> random_words(const RnsBase& base, std::size_t n, std::size_t num_polys,
                              std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  return random_residues(rng, primes_of(base), n, num_polys);
}

WordBuffer upload(const Context& ctx, const Device& dev, const std::vector<u64>& host) {
  WordBuffer b(dev, host.size(), ctx.word_bits());
  copy_words_from_host(dev, b.data(), host.data(), host.size());
  return b;
}

std::vector<u64> to_coeff(const Context& ctx, const Device& dev, const WordBuffer& b,
                          std::size_t num_polys, const RnsBase& base) {
  WordBuffer c = b.clone();
  ntt_inverse(dev, c.data(), num_polys, base, ctx.ntt());
  return c.to_host();
}

Ciphertext as_ciphertext(const ContextPtr& ctx, const Device& dev, const std::vector<u64>& host,
                         std::size_t level, double scale) {
  Ciphertext ct(ctx, dev, 2, level, true);
  copy_words_from_host(dev, ct.data(), host.data(), host.size());
  ct.set_scale(scale);
  return ct;
}

class KeySwitchExt : public ::testing::TestWithParam<int> {};

TEST_P(KeySwitchExt, LiftIsExactAndModDownUndoesIt) {
  ContextPtr ctx = ext_context(GetParam());
  const Device dev = Device::cpu();
  const std::size_t n = ctx->n();
  Evaluator ev(ctx);
  for (std::size_t level : {ctx->max_level(), std::size_t{2}}) {
    const KeySwitchLevel& ks = ctx->key_switch(level);
    const RnsBase& q = ctx->base_q(level);
    const std::size_t limbs = level + 1, ext = ks.base_qp.size();
    const std::vector<u64> x = random_words(q, n, 2, 7 + level);
    const WordBuffer xb = upload(*ctx, dev, x);
    WordBuffer y(dev, 2 * ext * n, ctx->word_bits());
    key_switch_lift(*ctx, dev, level, xb.data(), y.data(), 2);
    const std::vector<u64> yh = y.to_host();
    const cpp_int p = prod(primes_of(ks.base_qp, limbs, ext - limbs));
    for (std::size_t poly = 0; poly < 2; ++poly) {
      for (std::size_t l = 0; l < ext; ++l) {
        const u64 pm = l < limbs ? mod_u(p, ks.base_qp[l].value) : 0;
        for (std::size_t i = 0; i < n; i += 97) {
          const u64 want =
              l < limbs ? mul_mod(x[(poly * limbs + l) * n + i], pm, ks.base_qp[l]) : 0;
          ASSERT_EQ(yh[(poly * ext + l) * n + i], want) << "limb " << l;
        }
      }
    }
    // round(P x / P) = x, word for word; in place too.
    WordBuffer z(dev, 2 * limbs * n, ctx->word_bits());
    key_switch_mod_down(*ctx, dev, level, y.data(), z.data(), 2);
    EXPECT_EQ(z.to_host(), x);
    key_switch_mod_down(*ctx, dev, level, y.data(), y.data(), 1);
    const std::vector<u64> inplace = y.to_host();
    EXPECT_TRUE(std::equal(x.begin(), x.begin() + limbs * n, inplace.begin()));
    // round(P x / (B P)) = round(x / B): the ordinary rescale, word for word.
    double scale = 32.0;  // the rescale block times 2^5: in range before and after
    for (std::size_t i = ckks::rescale_target(*ctx, level) + 1; i <= level; ++i)
      scale *= double(q[i].value);
    const Ciphertext ct = as_ciphertext(ctx, dev, x, level, scale);
    WordBuffer y2(dev, 2 * ext * n, ctx->word_bits());
    key_switch_lift(*ctx, dev, level, ct.data(), y2.data(), 2);
    const Ciphertext r = ev.rescale_to_next(ct);
    WordBuffer rd(dev, r.word_count(), ctx->word_bits());
    key_switch_rescale_down(*ctx, dev, level, y2.data(), rd.data(), 2);
    EXPECT_EQ(rd.to_host(), veil::test::words(r)) << "level " << level;
  }
}

TEST_P(KeySwitchExt, ModDownAndRescaleDownRoundLikeBigIntegers) {
  ContextPtr ctx = ext_context(GetParam());
  const Device dev = Device::cpu();
  const std::size_t n = ctx->n(), level = ctx->max_level();
  const KeySwitchLevel& ks = ctx->key_switch(level);
  const std::size_t limbs = level + 1, ext = ks.base_qp.size();
  const std::size_t target = ckks::rescale_target(*ctx, level);
  const WordBuffer y = upload(*ctx, dev, random_words(ks.base_qp, n, 2, 3));
  WordBuffer z(dev, 2 * limbs * n, ctx->word_bits()),
      w(dev, 2 * (target + 1) * n, ctx->word_bits());
  key_switch_mod_down(*ctx, dev, level, y.data(), z.data(), 2);
  key_switch_rescale_down(*ctx, dev, level, y.data(), w.data(), 2);
  const std::vector<u64> yc = to_coeff(*ctx, dev, y, 2, ks.base_qp);
  const std::vector<u64> zc = to_coeff(*ctx, dev, z, 2, ctx->base_q(level));
  const std::vector<u64> wc = to_coeff(*ctx, dev, w, 2, ctx->base_q(target));
  const cpp_int p = prod(primes_of(ks.base_qp, limbs, ext - limbs));
  const cpp_int bp = p * prod(primes_of(ks.base_qp, target + 1, level - target));
  const Crt crt(primes_of(ks.base_qp));
  std::size_t checked = 0;
  for (std::size_t poly = 0; poly < 2; ++poly) {
    const u64* yp = yc.data() + poly * ext * n;
    for (std::size_t i = 0; i < n; i += 7) {
      const cpp_int x = crt.centered(yp + i, n);
      const cpp_int down = round_div(x, p), both = round_div(x, bp);
      for (std::size_t l = 0; l < limbs; ++l) {
        ASSERT_EQ(zc[(poly * limbs + l) * n + i], mod_u(down, ks.base_qp[l].value))
            << "ModDown, coefficient " << i << " limb " << l;
      }
      for (std::size_t l = 0; l <= target; ++l) {
        ASSERT_EQ(wc[(poly * (target + 1) + l) * n + i], mod_u(both, ks.base_qp[l].value))
            << "rescale_down, coefficient " << i << " limb " << l;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 1000u);
}

// The hoisted rotation left in Q_l ∪ P, ModDown'ed, is Evaluator::rotate_vector word for word
// (both addend forms); accumulation adds; the fused rescale is within one of ModDown + rescale.
TEST_P(KeySwitchExt, ExtendedRotationEqualsTheOrdinaryRotation) {
  ContextPtr ctx = ext_context(GetParam());
  const Device dev = Device::cpu();
  CkksKeys k(ctx, dev, 5);
  const std::size_t n = ctx->n(), level = ctx->max_level(), limbs = level + 1;
  const std::size_t ext = ctx->key_switch(level).base_qp.size();
  const std::vector<int> steps{1, -3, 5};
  const GaloisKeys gk = k.galois(steps);
  const Ciphertext ct = k.encrypt(random_values(n / 2, 1), std::ldexp(1.0, 40), level);
  const Ciphertext ct2 = k.encrypt(random_values(n / 2, 2), std::ldexp(1.0, 40), level);
  const KeySwitchDigits digits = key_switch_mod_up(*ctx, dev, level, ct.poly(1), true);
  // (P c0, P c1) with c1 ModDown'ed: c1 exactly, whose digits are ct's
  WordBuffer u(dev, 2 * ext * n, ctx->word_bits());
  key_switch_lift(*ctx, dev, level, ct.data(), u.data(), 2);
  const WordPtr u1 = u.data() + ext * n;
  key_switch_mod_down(*ctx, dev, level, u1, u1, 1);
  const std::vector<u64> uh = u.to_host(), ch = veil::test::words(ct);
  EXPECT_TRUE(std::equal(ch.begin() + limbs * n, ch.end(), uh.begin() + ext * n));
  const KeySwitchDigits du = key_switch_mod_up(*ctx, dev, level, u1, true);
  for (int step : steps) {
    const u32 e = ctx->galois_elt_from_step(step);
    const std::vector<u64> want = veil::test::words(k.ev.rotate_vector(ct, step, gk));
    Ciphertext got(ctx, dev, 2, level, true);
    WordBuffer x(dev, 2 * ext * n, ctx->word_bits());
    key_switch_inner_ext(*ctx, dev, level, digits, gk.key(e), ct.poly(0), ExtAddend::lift, x.data(),
                         false, e);
    key_switch_mod_down(*ctx, dev, level, x.data(), got.data(), 2);
    EXPECT_EQ(veil::test::words(got), want) << "lift, step " << step;
    key_switch_inner_ext(*ctx, dev, level, du, gk.key(e), u.data(), ExtAddend::extended, x.data(),
                         false, e);
    key_switch_mod_down(*ctx, dev, level, x.data(), got.data(), 2);
    EXPECT_EQ(veil::test::words(got), want) << "extended addend, step " << step;
    // accumulated onto the lift of ct2: ct2 + rot(ct) exactly
    key_switch_lift(*ctx, dev, level, ct2.data(), x.data(), 2);
    key_switch_inner_ext(*ctx, dev, level, digits, gk.key(e), ct.poly(0), ExtAddend::lift, x.data(),
                         true, e);
    key_switch_mod_down(*ctx, dev, level, x.data(), got.data(), 2);
    EXPECT_EQ(veil::test::words(got),
              veil::test::words(k.ev.add(k.ev.rotate_vector(ct, step, gk), ct2)))
        << "accumulate, step " << step;
    // one rounding (by B P) against two: the integer results differ by at most 1
    key_switch_inner_ext(*ctx, dev, level, digits, gk.key(e), ct.poly(0), ExtAddend::lift, x.data(),
                         false, e);
    key_switch_mod_down(*ctx, dev, level, x.data(), got.data(), 2);
    got.set_scale(std::ldexp(1.0, 70));  // (any scale the block can divide)
    const Ciphertext two = k.ev.rescale_to_next(got);
    WordBuffer one(dev, two.word_count(), ctx->word_bits());
    key_switch_rescale_down(*ctx, dev, level, x.data(), one.data(), 2);
    const RnsBase& qt = ctx->base_q(two.level());
    const std::vector<u64> a = to_coeff(*ctx, dev, one, 2, qt);
    const std::vector<u64> b = to_coeff(*ctx, dev, two.buffer(), 2, qt);
    int max_diff = 0;
    for (std::size_t poly = 0; poly < 2; ++poly) {
      for (std::size_t i = 0; i < n; ++i) {
        long long d0 = 0;
        for (std::size_t l = 0; l < qt.size(); ++l) {
          const u64 q = qt[l].value, idx = (poly * qt.size() + l) * n + i;
          const u64 d = sub_mod(a[idx], b[idx], q);
          const long long sd =
              d > q / 2 ? -static_cast<long long>(q - d) : static_cast<long long>(d);
          if (l == 0) d0 = sd;
          ASSERT_EQ(sd, d0) << "the difference is one small integer in every limb";
        }
        max_diff = std::max<int>(max_diff, static_cast<int>(std::llabs(d0)));
      }
    }
    EXPECT_LE(max_diff, 1) << "step " << step;
  }
}

TEST_P(KeySwitchExt, EncodeExtendedExtendsTheEncoding) {
  ContextPtr ctx = ext_context(GetParam());
  CKKSEncoder enc(ctx);
  const std::size_t n = ctx->n();
  const auto vals = random_values(n / 2, 4);
  for (std::size_t level : {std::size_t{0}, ctx->max_level()}) {
    const double scale = std::ldexp(1.0, 26);
    const Plaintext a = enc.encode(vals, scale, level);
    const Plaintext b = enc.encode_extended(vals, scale, level);
    const KeySwitchLevel& ks = ctx->key_switch(level);
    EXPECT_EQ(b.level(), level);
    EXPECT_EQ(b.scale(), scale);
    EXPECT_EQ(b.word_count(), ks.base_qp.size() * n);
    const std::vector<u64> aw = veil::test::words(a), bw = veil::test::words(b);
    EXPECT_TRUE(std::equal(aw.begin(), aw.end(), bw.begin())) << "the Q_l limbs are encode()'s";
    // the P limbs hold the same integer coefficients (|c| < 2^27 < q_0 / 2)
    const std::vector<u64> c = to_coeff(*ctx, Device::cpu(), b.buffer(), 1, ks.base_qp);
    const u64 q0 = ks.base_qp[0].value;
    for (std::size_t l = level + 1; l < ks.base_qp.size(); ++l) {
      const u64 p = ks.base_qp[l].value;
      for (std::size_t i = 0; i < n; ++i) {
        const u64 r = c[i];
        const u64 want = r > q0 / 2 ? (p - (q0 - r) % p) % p : r % p;
        ASSERT_EQ(c[l * n + i], want) << "limb " << l << " coefficient " << i;
      }
    }
  }
  veil::test::expect_invalid([&] { enc.encode_extended(vals, 0.0, 0); }, "scale");
}

INSTANTIATE_TEST_SUITE_P(Words, KeySwitchExt, ::testing::Values(64, 32),
                         [](const auto& info) { return "W" + std::to_string(info.param); });

TEST(KeySwitchExtErrors, NameTheArgument) {
  ContextPtr ctx = ext_context(64);
  const Device dev = Device::cpu();
  CkksKeys k(ctx, dev, 9);
  const std::size_t n = ctx->n(), level = ctx->max_level();
  const std::size_t ext = ctx->key_switch(level).base_qp.size();
  const GaloisKeys gk = k.galois({1});
  const u32 e = ctx->galois_elt_from_step(1);
  const Ciphertext ct = k.encrypt(random_values(8, 1), std::ldexp(1.0, 40), level);
  const KeySwitchDigits d = key_switch_mod_up(*ctx, dev, level, ct.poly(1), true);
  WordBuffer out(dev, 2 * ext * n, ctx->word_bits());
  veil::test::expect_invalid(
      [&] {
        key_switch_inner_ext(*ctx, dev, level, d, gk.key(e), ConstWordPtr(), ExtAddend::lift,
                             out.data(), false, e);
      },
      "add0: is null");
  // the result must not overwrite what the kernel reads at permuted slots
  Ciphertext own = ct;
  const KeySwitchDigits d2 = key_switch_mod_up(*ctx, dev, level, own.poly(1), true);
  veil::test::expect_invalid(
      [&] {
        key_switch_inner_ext(*ctx, dev, level, d2, gk.key(e), ct.poly(0), ExtAddend::lift,
                             own.data(), false, e);
      },
      "out: overlaps");
  veil::test::expect_invalid(
      [&] {
        key_switch_inner_ext(*ctx, dev, 2, d, gk.key(e), ct.poly(0), ExtAddend::lift, out.data(),
                             false, e);
      },
      "digits: were decomposed at level");
  veil::test::expect_invalid(
      [&] { key_switch_rescale_down(*ctx, dev, 0, out.data(), out.data(), 1); }, "encrypted");
  ContextPtr bfv = veil::test::small_context(SchemeType::bfv);
  WordBuffer b(dev, 8 * bfv->n(), bfv->word_bits());
  veil::test::expect_invalid([&] { key_switch_lift(*bfv, dev, 1, b.data(), b.data(), 1); },
                             "not available to BFV");
}

// ---- GPU parity ----------------------------------------------------------------------------

TEST(KeySwitchExtGpu, PrimitivesMatchTheCpuWordForWord) {
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  for (int bits : {64, 32}) {
    ContextPtr ctx = ext_context(bits);
    const std::size_t n = ctx->n(), level = ctx->max_level(), limbs = level + 1;
    const KeySwitchLevel& ks = ctx->key_switch(level);
    const std::size_t ext = ks.base_qp.size(), target = ckks::rescale_target(*ctx, level);
    std::vector<std::vector<u64>> got[2];
    for (int d = 0; d < 2; ++d) {
      const Device dev = d ? veil::test::gpu() : Device::cpu();
      CkksKeys k(ctx, dev, 31);
      const GaloisKeys gk = k.galois({3});
      const u32 e = ctx->galois_elt_from_step(3);
      const Ciphertext ct = k.encrypt(random_values(n / 2, 6), std::ldexp(1.0, 40), level);
      auto& g = got[d];
      g.push_back(veil::test::words(ct));
      WordBuffer lift(dev, 2 * ext * n, bits), x(dev, 2 * ext * n, bits);
      key_switch_lift(*ctx, dev, level, ct.data(), lift.data(), 2);
      g.push_back(lift.to_host());
      const KeySwitchDigits dg = key_switch_mod_up(*ctx, dev, level, ct.poly(1), true);
      key_switch_inner_ext(*ctx, dev, level, dg, gk.key(e), ct.poly(0), ExtAddend::lift, x.data(),
                           false, e);
      g.push_back(x.to_host());
      key_switch_inner_ext(*ctx, dev, level, dg, gk.key(e), lift.data(), ExtAddend::extended,
                           x.data(), true, e);
      g.push_back(x.to_host());
      WordBuffer z(dev, 2 * limbs * n, bits), w(dev, 2 * (target + 1) * n, bits);
      key_switch_mod_down(*ctx, dev, level, x.data(), z.data(), 2);
      key_switch_rescale_down(*ctx, dev, level, x.data(), w.data(), 2);
      g.push_back(z.to_host());
      g.push_back(w.to_host());
      const WordBuffer r = upload(*ctx, dev, random_words(ks.base_qp, n, 2, 17));
      key_switch_mod_down(*ctx, dev, level, r.data(), z.data(), 2);
      key_switch_rescale_down(*ctx, dev, level, r.data(), w.data(), 2);
      g.push_back(z.to_host());
      g.push_back(w.to_host());
      g.push_back(veil::test::words(
          k.encoder.encode_extended(random_values(n / 2, 8), std::ldexp(1.0, 30), level, dev)));
    }
    ASSERT_EQ(got[0].size(), got[1].size());
    for (std::size_t i = 0; i < got[0].size(); ++i)
      EXPECT_EQ(got[0][i], got[1][i]) << bits << "-bit words, result " << i;
  }
}

}  // namespace

namespace {

// The fused ModDown's reach (set_fused_mod_down_max_drop) and its narrow producer
// (set_fused_mod_down_narrow; both GPU only) change the kernels, not the words: the extended
// rotation's ModDown, the fused rescale, a relinearize-rescale and rescales by two and by one
// prime are the same for every setting, and the GPU's equal the CPU's.
TEST(KeySwitchSettings, FusedModDownKeepsTheWords) {
  const std::size_t drop0 = fused_mod_down_max_drop();
  const bool narrow0 = fused_mod_down_narrow();
  std::vector<Device> devs{Device::cpu()};
  if (veil::test::have_gpu()) devs.push_back(veil::test::gpu());
  for (int bits : {64, 32}) {
    ContextPtr ctx = ext_context(bits);
    const std::size_t n = ctx->n(), level = ctx->max_level(), limbs = level + 1;
    const KeySwitchLevel& ks = ctx->key_switch(level);
    const std::size_t ext = ks.base_qp.size(), target = ckks::rescale_target(*ctx, level);
    std::vector<std::vector<u64>> want;
    for (const Device& dev : devs) {
      CkksKeys k(ctx, dev, 41);
      const GaloisKeys gk = k.galois({5});
      const u32 e = ctx->galois_elt_from_step(5);
      const Ciphertext a = k.encrypt(random_values(n / 2, 9), std::ldexp(1.0, 40), level);
      const Ciphertext b = k.encrypt(random_values(n / 2, 10), std::ldexp(1.0, 40), level);
      for (std::size_t drops : {0u, 2u, 4u, 15u}) {
        for (bool narrow : {true, false}) {
          set_fused_mod_down_max_drop(drops);
          set_fused_mod_down_narrow(narrow);
          std::vector<std::vector<u64>> got;
          const KeySwitchDigits dg = key_switch_mod_up(*ctx, dev, level, a.poly(1), true);
          WordBuffer x(dev, 2 * ext * n, bits), z(dev, 2 * limbs * n, bits);
          WordBuffer w(dev, 2 * (target + 1) * n, bits);
          key_switch_inner_ext(*ctx, dev, level, dg, gk.key(e), a.poly(0), ExtAddend::lift,
                               x.data(), false, e);
          key_switch_mod_down(*ctx, dev, level, x.data(), z.data(), 2);
          key_switch_rescale_down(*ctx, dev, level, x.data(), w.data(), 2);
          got.push_back(z.to_host());
          got.push_back(w.to_host());
          got.push_back(veil::test::words(k.ev.relinearize_rescale(k.ev.multiply(a, b), k.rk)));
          const Ciphertext once = k.ev.rescale_to_next(k.ev.multiply(a, b));
          got.push_back(veil::test::words(once));
          got.push_back(veil::test::words(k.ev.rescale_to_next(k.ev.multiply(once, once))));
          if (want.empty()) {
            want = got;
          } else {
            EXPECT_EQ(got, want) << bits << "-bit words on " << dev.str()
                                 << ", fused ModDown up to " << drops << " drops, narrow "
                                 << narrow;
          }
        }
      }
    }
  }
  set_fused_mod_down_max_drop(drop0);
  set_fused_mod_down_narrow(narrow0);
  veil::test::expect_invalid([] { set_fused_mod_down_max_drop(16); }, "drops: expected 0..15");
}

// Restores the process-wide settings the tests below change, also when an ASSERT leaves early.
struct RestoreSettings {
  bool batched = key_switch_batched_loads();
  int modup = mod_up_kernel();
  bool full_rows = veil::conversion_full_rows();
  bool mont = veil::conversion_montgomery();
  int log_threads = veil::conversion_log_threads();
  int tc_tiles = veil::conversion_tc_tiles();
  ~RestoreSettings() {
    veil::set_conversion_log_threads(log_threads);
    veil::set_conversion_tc_tiles(tc_tiles);
    set_key_switch_batched_loads(batched);
    set_mod_up_kernel(modup);
    veil::set_conversion_full_rows(full_rows);
    veil::set_conversion_montgomery(mont);
    detail::set_cpu_simd(-1);
  }
};

// A CKKS context at N with `q_primes` primes of `bits` bits and `special` special primes
// (digits of `special` primes).
ContextPtr settings_context(std::size_t n, std::size_t q_primes, int bits, std::size_t special) {
  EncryptionParameters p(SchemeType::ckks);
  p.poly_modulus_degree = n;
  p.coeff_modulus = CoeffModulus::create(n, std::vector<int>(q_primes + special, bits));
  p.special_primes = special;
  return Context::create(p, SecurityLevel::none);
}

// The inner products' batched loads (set_key_switch_batched_loads) change the order of the loads
// and the grouping of exact sums, not the words: a hoisted rotation left in Q_l ∪ P (stored and
// accumulated), an ordinary rotation and a relinearization are the same either way. Every level
// of digits of one prime (dnum 1..8: the GPU's ks_inner_kernel<D> and the CPU's dot_fixed<D> for
// each D, 32-bit words grouping four products and then a second group), digits of 2 primes,
// both word sizes; the CPU with and without its vector kernels (64-bit words take the IFMA inner
// product where the processor has it); the GPU. (Correctness against independent oracles is
// AlphaK/KeySwitch's and Words/KeySwitchExt's; this checks that the kernels agree.)
TEST(KeySwitchSettings, BatchedLoadsKeepTheWords) {
  const RestoreSettings restore;
  const std::vector<ContextPtr> ctxs{ext_context(64), ext_context(32),
                                     settings_context(4096, 8, 30, 1),
                                     settings_context(4096, 8, 50, 1)};
  ASSERT_EQ(ctxs[2]->key_switch(ctxs[2]->max_level()).dnum, 8u);
  ASSERT_EQ(ctxs[3]->word_bits(), 64);
  struct Where {
    Device dev;
    int simd;  // set_cpu_simd's cap (-1: what the processor has)
  };
  std::vector<Where> wheres{{Device::cpu(), 0}, {Device::cpu(), -1}};
  if (veil::test::have_gpu()) wheres.push_back({veil::test::gpu(), -1});
  for (const ContextPtr& ctx : ctxs) {
    const std::size_t n = ctx->n();
    const int bits = ctx->word_bits();
    const double scale = std::ldexp(1.0, 12);  // a product at level 0 stays below q_0
    for (const Where& w : wheres) {
      detail::set_cpu_simd(w.simd);
      const Device& dev = w.dev;
      CkksKeys k(ctx, dev, 43);
      const GaloisKeys gk = k.galois({7});
      const u32 e = ctx->galois_elt_from_step(7);
      for (std::size_t level = 0; level <= ctx->max_level(); ++level) {
        const std::size_t ext = ctx->key_switch(level).base_qp.size();
        const Ciphertext a = k.encrypt(random_values(n / 2, 11), scale, level);
        const Ciphertext b = k.encrypt(random_values(n / 2, 12), scale, level);
        std::vector<std::vector<u64>> want;
        for (bool batched : {false, true}) {
          set_key_switch_batched_loads(batched);
          std::vector<std::vector<u64>> got;
          const KeySwitchDigits dg = key_switch_mod_up(*ctx, dev, level, a.poly(1), true);
          WordBuffer x(dev, 2 * ext * n, bits);
          key_switch_inner_ext(*ctx, dev, level, dg, gk.key(e), a.poly(0), ExtAddend::lift,
                               x.data(), false, e);
          got.push_back(x.to_host());
          key_switch_inner_ext(*ctx, dev, level, dg, gk.key(e), ConstWordPtr{}, ExtAddend::none,
                               x.data(), true, 0);
          got.push_back(x.to_host());
          got.push_back(veil::test::words(k.ev.rotate_vector(a, 7, gk)));
          got.push_back(veil::test::words(k.ev.relinearize(k.ev.multiply(a, b), k.rk)));
          if (want.empty()) {
            want = got;
            continue;
          }
          ASSERT_EQ(got.size(), want.size());
          for (std::size_t i = 0; i < got.size(); ++i) {
            EXPECT_EQ(got[i], want[i])
                << bits << "-bit words, N = " << n << ", alpha " << ctx->alpha() << ", level "
                << level << " (dnum " << ctx->key_switch(level).dnum << ") on " << dev.str()
                << " (CPU vector cap " << w.simd << "), result " << i;
          }
        }
      }
    }
  }
}

// Compact keys (KSwitchKey::compact): the GPU regenerates the a_j inside its inner-product
// kernel, every other path expands them first (expand_compact_key). Either way the words are
// those of the expanded key used as an ordinary one: a hoisted rotation left in Q_l ∪ P, a
// rotation and a relinearization (a compact relinearization key), at every level, both word
// sizes, dnum 1..8. The keys come out bit for bit alike on the CPU and the GPU, and so do the
// results; a rotation with a compact key decrypts to the input rotated (the oracle).
TEST(KeySwitchSettings, CompactKeysKeepTheWords) {
  const std::vector<ContextPtr> ctxs{ext_context(64), ext_context(32),
                                     settings_context(4096, 8, 30, 1)};
  std::vector<Device> devs{Device::cpu()};
  if (veil::test::have_gpu()) devs.push_back(veil::test::gpu());
  for (const ContextPtr& ctx : ctxs) {
    const std::size_t n = ctx->n();
    const int bits = ctx->word_bits();
    const u32 e = ctx->galois_elt_from_step(7);
    std::vector<std::vector<u64>> keys, results;
    for (const Device& dev : devs) {
      SCOPED_TRACE(std::to_string(bits) + "-bit words, alpha " + std::to_string(ctx->alpha()) +
                   " on " + dev.str());
      CkksKeys k(ctx, dev, 43);
      const GaloisKeys gk = k.kg.create_galois_keys_from_elts({e}, true);
      const RelinKeys crk = k.kg.create_relin_keys(true);
      ASSERT_TRUE(gk.key(e).compact());
      ASSERT_TRUE(crk.key().compact());
      EXPECT_EQ(gk.key(e).word_count(), gk.key(e).dnum() * gk.key(e).poly_words());
      EXPECT_THROW((void)gk.key(e).a(0), InvalidArgument);
      GaloisKeys full(ctx, dev);
      full.insert(e, expand_compact_key(gk.key(e)));
      const RelinKeys frk(expand_compact_key(crk.key()));
      EXPECT_FALSE(full.key(e).compact());
      GaloisKeys mixed = full;  // forms may mix in a set (serialized with a form per key)
      mixed.insert(e + 2, gk.key(e));
      EXPECT_TRUE(mixed.key(e + 2).compact() && !mixed.key(e).compact());
      keys.push_back(gk.key(e).buffer().to_host());
      const std::vector<u64> rk_words = crk.key().buffer().to_host();
      keys.back().insert(keys.back().end(), rk_words.begin(), rk_words.end());
      const double scale = std::ldexp(1.0, 12);  // a product at level 0 stays below q_0
      std::vector<u64> all;
      for (std::size_t level = 0; level <= ctx->max_level(); ++level) {
        const std::size_t ext = ctx->key_switch(level).base_qp.size();
        const Ciphertext a = k.encrypt(random_values(n / 2, 11), scale, level);
        const Ciphertext b = k.encrypt(random_values(n / 2, 12), scale, level);
        const KeySwitchDigits dg = key_switch_mod_up(*ctx, dev, level, a.poly(1), true);
        std::vector<std::vector<u64>> got[2];
        for (int f = 0; f < 2; ++f) {
          const GaloisKeys& g = f == 0 ? gk : full;
          WordBuffer x(dev, 2 * ext * n, bits);
          key_switch_inner_ext(*ctx, dev, level, dg, g.key(e), a.poly(0), ExtAddend::lift,
                               x.data(), false, e);
          got[f].push_back(x.to_host());
          got[f].push_back(veil::test::words(k.ev.rotate_vector(a, 7, g)));
          got[f].push_back(veil::test::words(
              k.ev.relinearize(k.ev.multiply(a, b), f == 0 ? crk : frk)));
        }
        for (std::size_t i = 0; i < got[0].size(); ++i) {
          EXPECT_EQ(got[0][i], got[1][i]) << "level " << level << " (dnum "
                                          << ctx->key_switch(level).dnum << "), result " << i;
          all.insert(all.end(), got[0][i].begin(), got[0][i].end());
        }
      }
      results.push_back(std::move(all));
      // The oracle: slot i of the rotation holds input slot i + 7 (at scale 2^40 the key
      // switch's noise, about 2^18 with these small special primes, is 2^-22 of a slot).
      const veil::test::CVec v = random_values(n / 2, 13);
      const veil::test::CVec r = k.decrypt(
          k.ev.rotate_vector(k.encrypt(v, std::ldexp(1.0, 40), ctx->max_level()), 7, gk));
      double worst = 0;
      for (std::size_t i = 0; i < n / 2; ++i) {
        worst = std::max(worst, std::abs(r[i] - v[(i + 7) % (n / 2)]));
      }
      EXPECT_LT(worst, 1e-4);
    }
    if (devs.size() == 2) {
      EXPECT_EQ(keys[0], keys[1]) << "the compact keys differ between the CPU and the GPU";
      EXPECT_EQ(results[0], results[1]) << "the GPU's in-kernel a_j give other words";
    }
  }
}

// ModUp's conversion kernels on the GPU (set_mod_up_kernel: generic, tables in shared memory,
// the same with half the coefficients per thread), each with and without the branch-free rows
// (set_conversion_full_rows) and the lazy Montgomery rows (set_conversion_montgomery: every
// 32-bit context here has products below 2^61, so its Montgomery table exists), give the CPU's
// digits, at the top level and one below (another
// digit count and a shorter last digit): digits of 2, 8, 10, 12, 16 and 20 primes, both word
// sizes (table rows of 4, 8, 12, 12, 16 and 20 words: the GPU's kMax 8, 8, 12, 12, 16 and 32, so
// full rows at 8, 12 and 16 and padded rows at 4, 10 and 20; 12 is the bootstrap's). (N >= 1024,
// so N / coefficients per thread is always a multiple of the shared-memory kernel's 256 threads,
// and these tables fit its 48 KiB: the generic fallback is a guard.)
TEST(KeySwitchSettings, ModUpKernelsKeepTheWords) {
  veil::test::expect_invalid([] { set_mod_up_kernel(4); }, "kernel: expected 0");
  veil::test::expect_invalid([] { veil::set_conversion_tc_tiles(3); },
                             "tiles: expected 1, 2 or 4, got 3");
  veil::test::expect_invalid([] { veil::set_conversion_log_threads(14); },
                             "log_threads: expected 15..20, got 14");
  std::vector<ContextPtr> ctxs{ext_context(64), ext_context(32)};
  for (std::size_t alpha : {8u, 10u, 12u, 16u, 20u}) {
    for (int bits : {30, 50}) {
      ctxs.push_back(settings_context(4096, alpha + 26, bits, alpha));
      ASSERT_EQ(ctxs.back()->alpha(), alpha);
      ASSERT_EQ(ctxs.back()->word_bits(), bits == 30 ? 32 : 64);
    }
  }
  // 30-bit inputs and outputs of at most 31 bits: the lazy rows' tables exist with 32-bit words;
  // with 31-bit primes in Q too (products up to 2^62) they do not
  for (const ContextPtr& ctx : ctxs) {
    for (std::size_t level : {ctx->max_level(), ctx->max_level() - 1}) {
      EXPECT_EQ(ctx->key_switch(level).modup_mont32.size() > 0, ctx->word_bits() == 32);
    }
  }
  // the tensor-core conversion (set_mod_up_kernel(3)) takes the 32-bit digits of at most 16
  // primes, so that the loop below really runs it
  for (const ContextPtr& ctx : ctxs) {
    const std::size_t level = ctx->max_level();
    EXPECT_EQ(mod_up_tensor_cores_apply(*ctx, level),
              ctx->word_bits() == 32 && ctx->key_switch(level).modup_stride <= 16)
        << "alpha " << ctx->alpha();
  }
  const ContextPtr wide = settings_context(4096, 12, 31, 4);
  ASSERT_EQ(wide->word_bits(), 32);
  EXPECT_EQ(wide->key_switch(wide->max_level()).modup_mont32.size(), 0u);
  if (!veil::test::have_gpu()) GTEST_SKIP() << "no CUDA device";
  const RestoreSettings restore;
  for (const ContextPtr& ctx : ctxs) {
    const int bits = ctx->word_bits();
    const std::size_t n = ctx->n();
    for (std::size_t level : {ctx->max_level(), ctx->max_level() - 1}) {
      const RnsBase& q = ctx->base_q(level);
      const std::vector<u64> c = random_words(q, n, 1, 50 + level);
      const WordBuffer on_cpu = upload(*ctx, Device::cpu(), c);
      const std::vector<u64> want =
          key_switch_mod_up(*ctx, Device::cpu(), level, on_cpu.data(), false).complement.to_host();
      const WordBuffer on_gpu = upload(*ctx, veil::test::gpu(), c);
      // kernel 3: the tensor cores where they apply (32-bit words, the Montgomery rows on;
      // digits of at most 16 primes), else kernel 2; 5 and 6 here: kernel 3 with blocks of 2
      // and 4 tiles (set_conversion_tc_tiles). Kernel 4 here: kernel 2 with log2 threads 18
      // instead of the default 16, so each digit's rows are split into other groups (N = 4096
      // splits them at either: set_conversion_log_threads)
      for (int kernel : {0, 1, 2, 3, 4, 5, 6}) {
        for (int rows = 0; rows < 4; ++rows) {
          const bool full = rows % 2 == 1, mont = rows / 2 == 1;
          set_mod_up_kernel(kernel == 4 ? 2 : kernel > 4 ? 3 : kernel);
          veil::set_conversion_tc_tiles(kernel == 5 ? 2 : kernel == 6 ? 4 : 1);
          veil::set_conversion_log_threads(kernel == 4 ? 18 : 16);
          veil::set_conversion_full_rows(full);  // the branch-free rows
          veil::set_conversion_montgomery(mont);  // the lazy rows
          const KeySwitchDigits d =
              key_switch_mod_up(*ctx, veil::test::gpu(), level, on_gpu.data(), false);
          EXPECT_EQ(d.complement.to_host(), want)
              << bits << "-bit words, alpha " << ctx->alpha() << ", level " << level
              << ", kernel " << kernel << ", full rows " << full << ", Montgomery rows " << mont;
        }
      }
    }
  }
}

}  // namespace
