// Key-switching keys of a level (KSwitchKey::level): a key that serves the ciphertexts at levels
// <= l stores the digits that meet Q_l over Q_l ∪ P only. Checked against independent oracles:
// the RLWE relation b_j + a_j s = e_j + P [D_j] s' with a small e_j, recomputed here limb by limb
// with 128-bit products; the slots of a rotation against the input rotated. The projection
// property (a key of level l equals the top-level key of the same seed restricted to its limbs)
// is what lets the words of a per-level bootstrap equal those of a top-level one.
#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

#include "ckks_util.h"
#include "test_util.h"
#include "veil/ring/ntt.h"
#include "veil/rlwe/keyswitch.h"

namespace {

using namespace veil;
using namespace veil::test;

// CKKS at N = 4096: 64-bit words, 7 Q primes and 2 special (digits of 2: dnum 4 at the top);
// 32-bit words, 8 Q primes and 3 special (digits of 3: dnum 3).
ContextPtr level_context(int bits) {
  return bits == 64 ? ckks_context(4096, std::vector<int>(9, 50), 2)
                    : ckks_context(4096, std::vector<int>(11, 30), 3);
}

// The key's limb i as an index of Q ∪ P (q_0..q_level, then the special primes).
std::size_t context_limb(const Context& ctx, std::size_t level, std::size_t i) {
  return i <= level ? i : ctx.num_q() + (i - level - 1);
}

// Digit j of `key` (full form) against its definition: e_j = b_j + a_j s - P [D_j] s' has
// coefficients of magnitude <= 21 (the centered binomial's support) on every stored limb.
void expect_rlwe_relation(const KSwitchKey& key, const SecretKey& sk, const SecretKey& target) {
  const Context& ctx = *key.context();
  const std::size_t n = ctx.n(), level = key.level(), limbs = key.limbs();
  const RnsBase& base = ctx.key_switch(level).base_qp;
  const std::vector<u64> k = key.buffer().to_host(), s = sk.buffer().to_host(),
                         t = target.buffer().to_host();
  for (std::size_t j = 0; j < key.dnum(); ++j) {
    std::vector<u64> e(limbs * n);
    for (std::size_t i = 0; i < limbs; ++i) {
      const std::size_t c = context_limb(ctx, level, i);
      const u64 q = base[i].value;
      const bool in_digit = c < ctx.num_q() && c / ctx.alpha() == j;
      const u64 pq = in_digit ? ctx.special_product_mod_q()[c] : 0;
      for (std::size_t x = 0; x < n; ++x) {
        const u64 b = k[(2 * j * limbs + i) * n + x], a = k[((2 * j + 1) * limbs + i) * n + x];
        const u64 as = mulm(a, s[c * n + x], q);
        const u64 ps = mulm(pq, t[c * n + x], q);
        e[i * n + x] = ((b + as) % q + q - ps) % q;
      }
    }
    ntt_inverse(Device::cpu(), e.data(), 1, base, ctx.ntt());
    u64 worst = 0;
    for (std::size_t i = 0; i < limbs; ++i) {
      const u64 q = base[i].value;
      for (std::size_t x = 0; x < n; ++x) {
        const u64 v = e[i * n + x];
        worst = std::max(worst, std::min(v, q - v));
      }
    }
    EXPECT_LE(worst, 21u) << "digit " << j << " of a key of level " << level;
  }
}

// A key of level l: the right shape, the RLWE relation on its limbs, and the words of the
// top-level key of the same seed on those limbs; the generator goes on as after a top-level key;
// lower_key_level gives the same key, in either form, and keeps the seed.
TEST(KeyLevels, KeyOfALevelIsTheProjectionOfTheTopKey) {
  for (int bits : {64, 32}) {
    const ContextPtr ctx = level_context(bits);
    const Context& c = *ctx;
    const std::size_t n = c.n(), top = c.max_level(), alpha = c.alpha();
    ASSERT_GE(c.dnum(), 3u);
    const KeyGenerator other(ctx, Device::cpu(), 9);
    const SecretKey& target = other.secret_key();
    for (std::size_t level : {std::size_t(0), alpha - 1, alpha, top - 1, top}) {
      SCOPED_TRACE(std::to_string(bits) + "-bit words, level " + std::to_string(level));
      const KeyGenerator a(ctx, Device::cpu(), 5), b(ctx, Device::cpu(), 5);
      const KSwitchKey full = a.create_kswitch_key(target.data());
      const KSwitchKey low = b.create_kswitch_key(target.data(), false, level);
      ASSERT_EQ(low.level(), level);
      ASSERT_EQ(low.dnum(), (level + alpha) / alpha);
      ASSERT_EQ(low.limbs(), level + 1 + c.num_p());
      ASSERT_EQ(low.word_count(), low.dnum() * 2 * low.limbs() * n);
      expect_rlwe_relation(low, a.secret_key(), target);
      const std::vector<u64> fw = full.buffer().to_host(), lw = low.buffer().to_host();
      bool same = true;
      for (std::size_t p = 0; p < 2 * low.dnum(); ++p) {
        for (std::size_t i = 0; i < low.limbs(); ++i) {
          const std::size_t cl = context_limb(c, level, i);
          for (std::size_t x = 0; x < n; ++x) {
            same = same && lw[(p * low.limbs() + i) * n + x] ==
                               fw[(p * full.limbs() + cl) * n + x];
          }
        }
      }
      EXPECT_TRUE(same) << "the key of a level is not the top-level key's projection";
      EXPECT_EQ(a.create_kswitch_key(target.data()).buffer().to_host(),
                b.create_kswitch_key(target.data()).buffer().to_host())
          << "the generator's next key depends on the level of the one before";
      const KSwitchKey lowered = lower_key_level(full, level);
      EXPECT_EQ(lowered.buffer().to_host(), lw);
      EXPECT_EQ(lowered.uniform_seed(), low.uniform_seed());
      EXPECT_TRUE(lowered.seed_known_to_match());
      // Compact keys: the key of a level regenerates the same a_j as the top-level one there.
      const KeyGenerator ca(ctx, Device::cpu(), 6), cb(ctx, Device::cpu(), 6);
      const KSwitchKey cfull = ca.create_kswitch_key(target.data(), true);
      const KSwitchKey clow = cb.create_kswitch_key(target.data(), true, level);
      ASSERT_TRUE(clow.compact());
      EXPECT_EQ(lower_key_level(cfull, level).buffer().to_host(), clow.buffer().to_host());
      const KSwitchKey cexp = expand_compact_key(clow);
      EXPECT_EQ(cexp.level(), level);
      EXPECT_EQ(cexp.buffer().to_host(),
                lower_key_level(expand_compact_key(cfull), level).buffer().to_host());
      expect_rlwe_relation(cexp, ca.secret_key(), target);
    }
    veil::test::expect_invalid(
        [&] { (void)other.create_kswitch_key(target.data(), false, top + 1); }, "level");
    const KSwitchKey low = other.create_kswitch_key(target.data(), false, 1);
    veil::test::expect_invalid([&] { (void)lower_key_level(low, 2); }, "level");
    veil::test::expect_invalid([&] { (void)lower_key_level(KSwitchKey(), 0); }, "key");
  }
}

// Rotations with Galois keys of a level: at every level they serve, the words of the top-level
// keys of the same seed, in both forms, on the CPU and the GPU (the GPU regenerates a compact
// key's a_j in its kernel at each limb's address in Q ∪ P), and (64-bit words, whose special
// primes leave the noise far below the tolerance) the slots of the input rotated; above their
// level they are refused, naming the key.
TEST(KeyLevels, RotationsAtTheKeysLevelsKeepTheWords) {
  for (int bits : {64, 32}) {
    const ContextPtr ctx = level_context(bits);
    const std::size_t n = ctx->n();
    const u32 e = ctx->galois_elt_from_step(5);
    const std::size_t key_level = ctx->alpha();  // one digit more than level 0 needs
    std::vector<std::vector<u64>> per_device;
    for (const Device& dev : veil::test::devices()) {
      SCOPED_TRACE(std::to_string(bits) + "-bit words on " + dev.str());
      std::vector<u64> all;
      for (bool compact : {false, true}) {
        const CkksKeys k(ctx, dev, 17), k2(ctx, dev, 17);
        const GaloisKeys full = k.kg.create_galois_keys_from_elts({e}, compact);
        const GaloisKeys low = k2.kg.create_galois_keys_from_elts({e}, compact, {key_level});
        ASSERT_EQ(low.key(e).level(), key_level);
        ASSERT_EQ(low.key(e).compact(), compact);
        const double scale = std::ldexp(1.0, bits == 64 ? 30 : 20);  // below q_0
        const veil::test::CVec v = random_values(n / 2, 3);
        for (std::size_t level = 0; level <= key_level; ++level) {
          const Ciphertext x = k.encrypt(v, scale, level);
          const Ciphertext r = k.ev.rotate_vector(x, 5, low);
          EXPECT_EQ(veil::test::words(r), veil::test::words(k.ev.rotate_vector(x, 5, full)))
              << "level " << level << (compact ? ", compact" : "");
          const std::vector<u64> w = veil::test::words(r);
          all.insert(all.end(), w.begin(), w.end());
          if (bits == 32) continue;  // 30-bit special primes: the noise is a few percent
          const veil::test::CVec got = k.decrypt(r);
          double worst = 0;
          for (std::size_t i = 0; i < n / 2; ++i) {
            worst = std::max(worst, std::abs(got[i] - v[(i + 5) % (n / 2)]));
          }
          EXPECT_LT(worst, 1e-3) << "level " << level;
        }
        const Ciphertext above = k.encrypt(v, scale, key_level + 1);
        veil::test::expect_invalid([&] { (void)k.ev.rotate_vector(above, 5, low); },
                                   "key: serves levels <= " + std::to_string(key_level));
      }
      per_device.push_back(std::move(all));
    }
    if (per_device.size() == 2) {
      EXPECT_EQ(per_device[0], per_device[1]) << "the GPU's rotations with keys of a level differ";
    }
  }
}

}  // namespace
