// Tests for the RLWE samplers (veil/ring/sampler.h): distributions on the CPU, determinism, the
// keystream layout, and bit-for-bit agreement of the CUDA backend with the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "veil/backend/buffer.h"
#include "veil/backend/word_buffer.h"
#include "veil/core/error.h"
#include "veil/backend/device.h"
#include "veil/core/primes.h"
#include "veil/ring/prng.h"
#include "veil/ring/rns_base.h"
#include "veil/ring/sampler.h"

namespace {

using veil::i64;
using veil::u128;
using veil::u64;

constexpr std::size_t kN = std::size_t(1) << 14;
constexpr u64 kSentinel = ~u64(0);

// 30-, 50- and 60-bit NTT primes for N = 2^14.
veil::RnsBase make_base() {
  std::vector<veil::Modulus> m;
  for (int bits : {30, 50, 60}) m.emplace_back(veil::generate_ntt_primes(bits, kN, 1)[0]);
  return veil::RnsBase(m);
}

using SampleFn = void (*)(const veil::Device&, u64*, std::size_t, const veil::RnsBase&,
                          const veil::PrngStream&);

std::vector<u64> sample_cpu(SampleFn f, std::size_t n, const veil::RnsBase& base,
                            const veil::PrngStream& s) {
  std::vector<u64> out(base.size() * n, kSentinel);
  f(veil::Device::cpu(), out.data(), n, base, s);
  return out;
}

// Signed value of a residue v mod q known to be small (|value| <= bound); fails otherwise.
i64 to_signed(u64 v, u64 q, i64 bound) {
  if (v <= u64(bound)) return static_cast<i64>(v);
  EXPECT_GE(v, q - u64(bound)) << "residue " << v << " mod " << q << " is not small";
  return -static_cast<i64>(q - v);
}

// Every limb holds the same small signed polynomial; returns it (from limb 0).
std::vector<i64> small_values(const std::vector<u64>& out, std::size_t n,
                              const veil::RnsBase& base, i64 bound) {
  std::vector<i64> vals(n);
  for (std::size_t j = 0; j < n; ++j) vals[j] = to_signed(out[j], base[0].value, bound);
  for (std::size_t l = 1; l < base.size(); ++l) {
    for (std::size_t j = 0; j < n; ++j) {
      const u64 q = base[l].value;
      const u64 want = vals[j] >= 0 ? u64(vals[j]) : q - u64(-vals[j]);
      EXPECT_EQ(out[l * n + j], want) << "limb " << l << " coefficient " << j;
      if (out[l * n + j] != want) return vals;
    }
  }
  return vals;
}

std::size_t count_equal(const std::vector<u64>& a, const std::vector<u64>& b) {
  std::size_t c = 0;
  for (std::size_t i = 0; i < a.size() && i < b.size(); ++i) c += a[i] == b[i];
  return c;
}

// ---- uniform --------------------------------------------------------------------------------

TEST(SamplerTest, UniformRangeAndMoments) {
  const veil::RnsBase base = make_base();
  ASSERT_EQ(base.size(), 3u);
  EXPECT_EQ(base[0].bit_count, 30);
  EXPECT_EQ(base[1].bit_count, 50);
  EXPECT_EQ(base[2].bit_count, 60);
  veil::Prng prng = veil::Prng::from_u64(1234);
  const std::vector<u64> out = sample_cpu(veil::sample_uniform, kN, base, prng.next());
  for (std::size_t l = 0; l < base.size(); ++l) {
    SCOPED_TRACE("limb " + std::to_string(l));
    const u64 q = base[l].value;
    double sum = 0, sum2 = 0;
    std::vector<double> buckets(16, 0);
    for (std::size_t j = 0; j < kN; ++j) {
      const u64 v = out[l * kN + j];
      ASSERT_LT(v, q) << "coefficient " << j;
      const double x = static_cast<double>(v) / static_cast<double>(q);
      sum += x;
      sum2 += x * x;
      buckets[static_cast<std::size_t>((u128(v) * 16) / q)] += 1;
    }
    const double mean = sum / kN, var = sum2 / kN - mean * mean;
    // Uniform on [0, 1): mean 1/2 (sd of the mean 1/sqrt(12 N) ~ 0.0023), variance 1/12
    // (sd of the sample variance ~ 0.0006).
    EXPECT_NEAR(mean, 0.5, 0.015);
    EXPECT_NEAR(var, 1.0 / 12, 0.005);
    double chi2 = 0;
    const double expected = kN / 16.0;
    for (double c : buckets) chi2 += (c - expected) * (c - expected) / expected;
    // 15 degrees of freedom: mean 15, sd 5.5; 60 is far in the tail.
    EXPECT_LT(chi2, 60.0);
    // And not suspiciously perfect (e.g. a counter instead of a keystream).
    EXPECT_GT(chi2, 1.0);
  }
}

TEST(SamplerTest, UniformLimbsAreIndependent) {
  const veil::RnsBase base = make_base();
  veil::Prng prng = veil::Prng::from_u64(99);
  const std::vector<u64> out = sample_cpu(veil::sample_uniform, kN, base, prng.next());
  for (std::size_t a = 0; a < base.size(); ++a) {
    for (std::size_t b = a + 1; b < base.size(); ++b) {
      // Reduced into the smaller modulus, two independent limbs agree with probability 1/q_a.
      std::size_t same = 0;
      const u64 q = base[a].value;
      for (std::size_t j = 0; j < kN; ++j) same += out[a * kN + j] % q == out[b * kN + j] % q;
      EXPECT_LT(same, 3u) << "limbs " << a << " and " << b;
    }
  }
  // Coefficients within a limb are not repeated in blocks.
  std::size_t adjacent = 0;
  for (std::size_t j = 1; j < kN; ++j) adjacent += out[j] == out[j - 1];
  EXPECT_LT(adjacent, 3u);
}

TEST(SamplerTest, UniformMatchesKeystreamLayout) {
  // Pins the keystream layout (sampler.cpp): limb l uses sub-stream l; coefficient j takes
  // block j / 4, 64-bit words 2k (low) and 2k+1 (high) for k = j % 4, and returns x mod q via
  // exact 128-bit division. Changing it changes every seeded key and ciphertext.
  const veil::RnsBase base = make_base();
  veil::Prng prng = veil::Prng::from_u64(5);
  const veil::PrngStream s = prng.next();
  const std::size_t n = 4096;
  const std::vector<u64> out = sample_cpu(veil::sample_uniform, n, base, s);
  for (std::size_t l = 0; l < base.size(); ++l) {
    for (std::size_t j = 0; j < n; ++j) {
      u64 w[8];
      s.block64(static_cast<veil::u32>(l), static_cast<veil::u32>(j / 4), w);
      const std::size_t k = j % 4;
      const u128 x = (u128(w[2 * k + 1]) << 64) | w[2 * k];
      ASSERT_EQ(out[l * n + j], static_cast<u64>(x % base[l].value))
          << "limb " << l << " coefficient " << j;
    }
  }
}

// ---- compact (the keys' sampler, regenerated inside the inner-product kernel) ---------------

// ChaCha with `rounds` rounds written out from RFC 8439 §2.3 again, independently of
// ring/chacha20.h: the oracle of the compact sampler's keystream.
void ref_chacha(const std::uint32_t key[8], std::uint32_t counter, const std::uint32_t nonce[3],
                int rounds, std::uint32_t out[16]) {
  auto rotl = [](std::uint32_t x, int k) { return (x << k) | (x >> (32 - k)); };
  std::uint32_t st[16] = {0x61707865u, 0x3320646eu, 0x79622d32u, 0x6b206574u};
  for (int i = 0; i < 8; ++i) st[4 + i] = key[i];
  st[12] = counter;
  for (int i = 0; i < 3; ++i) st[13 + i] = nonce[i];
  std::uint32_t x[16];
  for (int i = 0; i < 16; ++i) x[i] = st[i];
  auto qr = [&](int a, int b, int c, int d) {
    x[a] += x[b]; x[d] = rotl(x[d] ^ x[a], 16);
    x[c] += x[d]; x[b] = rotl(x[b] ^ x[c], 12);
    x[a] += x[b]; x[d] = rotl(x[d] ^ x[a], 8);
    x[c] += x[d]; x[b] = rotl(x[b] ^ x[c], 7);
  };
  for (int r = 0; r < rounds; r += 2) {
    qr(0, 4, 8, 12); qr(1, 5, 9, 13); qr(2, 6, 10, 14); qr(3, 7, 11, 15);
    qr(0, 5, 10, 15); qr(1, 6, 11, 12); qr(2, 7, 8, 13); qr(3, 4, 9, 14);
  }
  for (int i = 0; i < 16; ++i) out[i] = x[i] + st[i];
}

TEST(SamplerTest, ReferenceChachaIsRfc8439) {
  // RFC 8439 §2.3.2's test vector: key 00..1f, counter 1,
  // nonce 00:00:00:09:00:00:00:4a:00:00:00:00.
  std::uint32_t key[8];
  for (int i = 0; i < 8; ++i) {
    key[i] = std::uint32_t(4 * i) | std::uint32_t(4 * i + 1) << 8 | std::uint32_t(4 * i + 2) << 16 |
             std::uint32_t(4 * i + 3) << 24;
  }
  const std::uint32_t nonce[3] = {0x09000000u, 0x4a000000u, 0};
  std::uint32_t out[16];
  ref_chacha(key, 1, nonce, 20, out);
  const std::uint32_t want[16] = {0xe4e7f110u, 0x15593bd1u, 0x1fdd0f50u, 0xc47120a3u,
                                  0xc7f4d1c7u, 0x0368c033u, 0x9aaa2204u, 0x4e6cd4c3u,
                                  0x466482d2u, 0x09aa9f07u, 0x05d7c214u, 0xa2028bd9u,
                                  0xd19c12b5u, 0xb94e16deu, 0xe883d0cbu, 0x4e3c50a2u};
  for (int i = 0; i < 16; ++i) EXPECT_EQ(out[i], want[i]) << "word " << i;
  // And the library's ChaCha20 agrees with it.
  veil::ChaChaKey k{};
  for (int i = 0; i < 8; ++i) k.words[i] = key[i];
  std::uint32_t lib[16];
  veil::chacha20_block(k, 1, nonce[0], nonce[1], nonce[2], lib);
  for (int i = 0; i < 16; ++i) EXPECT_EQ(lib[i], want[i]) << "word " << i;
}

// Moduli for the compact sampler's tests: NTT primes as the keys use, and odd moduli that
// reject often (about 1/4 of 32-bit candidates, 1/8 of 64-bit ones), so the attempt blocks run.
std::vector<veil::Modulus> compact_moduli(int word_bits, std::size_t n) {
  std::vector<veil::Modulus> m;
  if (word_bits == 32) {
    for (int bits : {25, 30, 31}) m.emplace_back(veil::generate_ntt_primes(bits, n, 1)[0]);
    m.emplace_back((u64(3) << 30) + 1);  // floor(2^32 / q) = 1: rejects about 1/4
  } else {
    for (int bits : {30, 50, 60}) m.emplace_back(veil::generate_ntt_primes(bits, n, 1)[0]);
    m.emplace_back((u64(1) << 60) + (u64(1) << 59) + 1);  // floor(2^64 / q) = 10: rejects ~1/16
  }
  return m;
}

// The compact sampler's definition (ring/compact_uniform.h), checked word by word against the
// reference ChaCha: coefficient k of block b takes column i = k / C's candidate p = k % C, from
// the block of attempt 0, else of the first attempt whose candidate at that position is below
// floor(2^w / q) q; the value is the candidate mod q.
template <class W>
void check_compact_definition(std::size_t n) {
  constexpr int C = sizeof(W) == 4 ? 4 : 2;
  const veil::RnsBase base(compact_moduli(8 * sizeof(W), n));
  veil::Prng prng = veil::Prng::from_u64(77);
  veil::PrngStream s = prng.next();
  s.domain = 0x0000000300000005ull;  // both halves of the index used
  std::vector<W> out(base.size() * n, W(~W(0)));
  veil::sample_uniform_compact<W>(veil::Device::cpu(), out.data(), n, base, s);
  std::size_t rejected = 0;
  for (std::size_t l = 0; l < base.size(); ++l) {
    const u64 q = base[l].value;
    const u64 top = sizeof(W) == 4 ? u64(0xFFFFFFFFu) : ~u64(0);
    const u64 bound = q * (top / q);
    double sum = 0;
    for (std::size_t j = 0; j < n; ++j) {
      const std::size_t b = j / (4 * C), i = (j % (4 * C)) / C, p = j % C;
      u64 cand = 0;
      for (std::uint32_t attempt = 0;; ++attempt) {
        const std::uint32_t nonce[3] = {std::uint32_t(s.domain), std::uint32_t(s.domain >> 32),
                                        0x80000000u | attempt << 16 | std::uint32_t(l)};
        std::uint32_t w[16];
        ref_chacha(s.key.words, std::uint32_t(b), nonce, 12, w);
        cand = sizeof(W) == 4 ? u64(w[i + 4 * p])
                              : (u64(w[i + 4 * (2 * p)]) | u64(w[i + 4 * (2 * p + 1)]) << 32);
        if (cand < bound) break;
        ++rejected;
      }
      ASSERT_EQ(u64(out[l * n + j]), cand % q) << "limb " << l << " coefficient " << j;
      sum += double(cand % q) / double(q);
    }
    EXPECT_NEAR(sum / double(n), 0.5, 0.02) << "limb " << l;  // 6 sigma at n = 4096
  }
  EXPECT_GT(rejected, n / 32) << "the rejecting moduli never rejected";
}

TEST(SamplerTest, CompactUniformMatchesItsDefinition) {
  check_compact_definition<std::uint32_t>(4096);
  check_compact_definition<u64>(4096);
}

TEST(SamplerTest, CompactUniformRejectsNOffItsBlock) {
  const veil::RnsBase base(compact_moduli(32, 4096));
  std::vector<std::uint32_t> out(base.size() * 24);
  EXPECT_THROW(veil::sample_uniform_compact<std::uint32_t>(veil::Device::cpu(), out.data(), 24,
                                                          base, veil::Prng::from_u64(1).next()),
               veil::InvalidArgument);
}

TEST(SamplerCuda, CompactUniformMatchesCpu) {
  if (veil::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const veil::Device dev(veil::Device::Kind::cuda, 0);
  for (int bits : {32, 64}) {
    const veil::RnsBase base(compact_moduli(bits, std::size_t(1) << 16));
    const veil::PrngStream s = veil::Prng::from_u64(bits).next();
    for (std::size_t n : {std::size_t(4096), std::size_t(1) << 16}) {
      veil::WordBuffer cpu(veil::Device::cpu(), base.size() * n, bits);
      veil::WordBuffer gpu(dev, base.size() * n, bits);
      veil::sample_uniform_compact(veil::Device::cpu(), cpu.data(), n, base, s);
      veil::sample_uniform_compact(dev, gpu.data(), n, base, s);
      EXPECT_EQ(gpu.to_host(), cpu.to_host()) << bits << "-bit words, n = " << n;
    }
  }
}

// ---- ternary --------------------------------------------------------------------------------

TEST(SamplerTest, TernaryValueFunction) {
  EXPECT_EQ(veil::ternary_value(0), -1);
  EXPECT_EQ(veil::ternary_value(0x5555555555555555ull), -1);
  EXPECT_EQ(veil::ternary_value(0x5555555555555556ull), 0);
  EXPECT_EQ(veil::ternary_value(0xAAAAAAAAAAAAAAAAull), 0);
  EXPECT_EQ(veil::ternary_value(0xAAAAAAAAAAAAAAABull), 1);
  EXPECT_EQ(veil::ternary_value(~u64(0)), 1);
}

TEST(SamplerTest, TernaryValuesAndFrequencies) {
  const veil::RnsBase base = make_base();
  veil::Prng prng = veil::Prng::from_u64(777);
  const std::vector<u64> out = sample_cpu(veil::sample_ternary, kN, base, prng.next());
  const std::vector<i64> vals = small_values(out, kN, base, 1);
  int counts[3] = {0, 0, 0};
  for (i64 v : vals) {
    ASSERT_GE(v, -1);
    ASSERT_LE(v, 1);
    ++counts[v + 1];
  }
  for (int c : counts) {
    // sd of each frequency ~ sqrt(2/9 / N) ~ 0.0037.
    EXPECT_NEAR(static_cast<double>(c) / kN, 1.0 / 3, 0.02);
  }
}

TEST(SamplerTest, TernaryMatchesKeystreamLayout) {
  // Pins the layout: one ternary polynomial from sub-stream 0xFFFFFFFF, coefficient j from block
  // j / 8, word j % 8, value floor(3x / 2^64) - 1.
  const veil::RnsBase base = make_base();
  veil::Prng prng = veil::Prng::from_u64(6);
  const veil::PrngStream s = prng.next();
  const std::size_t n = 4096;
  const std::vector<u64> out = sample_cpu(veil::sample_ternary, n, base, s);
  const std::vector<i64> vals = small_values(out, n, base, 1);
  for (std::size_t j = 0; j < n; ++j) {
    u64 w[8];
    s.block64(0xFFFFFFFFu, static_cast<veil::u32>(j / 8), w);
    const i64 want = static_cast<i64>((u128(w[j % 8]) * 3) >> 64) - 1;
    ASSERT_EQ(vals[j], want) << "coefficient " << j;
  }
}

// ---- centered binomial ----------------------------------------------------------------------

TEST(SamplerTest, CbdValueFunction) {
  EXPECT_EQ(veil::cbd_value(0), 0);
  EXPECT_EQ(veil::cbd_value(0x1FFFFFull), 21);
  EXPECT_EQ(veil::cbd_value(0x1FFFFFull << 21), -21);
  EXPECT_EQ(veil::cbd_value(~u64(0)), 0);
  EXPECT_EQ(veil::cbd_value(~u64(0) << 42), 0);  // bits 42..63 unused
  EXPECT_EQ(veil::cbd_value(0b1011), 3);
  EXPECT_EQ(veil::cbd_value(u64(0b11) << 21 | 1), -1);
}

TEST(SamplerTest, CbdValuesAndMoments) {
  const veil::RnsBase base = make_base();
  veil::Prng prng = veil::Prng::from_u64(4242);
  const std::vector<u64> out = sample_cpu(veil::sample_cbd, kN, base, prng.next());
  const std::vector<i64> vals = small_values(out, kN, base, 21);
  double sum = 0, sum2 = 0;
  std::vector<double> hist(43, 0);
  for (i64 v : vals) {
    ASSERT_LE(std::abs(v), 21);
    sum += v;
    sum2 += double(v) * v;
    hist[v + 21] += 1;
  }
  const double mean = sum / kN, var = sum2 / kN - mean * mean;
  EXPECT_NEAR(mean, 0.0, 0.15);         // sd of the mean ~ 0.025
  EXPECT_NEAR(var, 10.5, 10.5 * 0.05);  // sd of the sample variance ~ 0.115
  // Chi-square against the exact law P(k) = C(42, 21 + k) / 2^42, tails |k| >= 10 merged.
  std::vector<double> p(43);
  double c = 1;  // C(42, i) built up iteratively
  for (int i = 0; i <= 42; ++i) {
    p[i] = c / std::ldexp(1.0, 42);
    c = c * (42 - i) / (i + 1);
  }
  double chi2 = 0, tail_obs[2] = {0, 0}, tail_exp[2] = {0, 0};
  int cells = 0;
  for (int i = 0; i <= 42; ++i) {
    const int k = i - 21;
    if (std::abs(k) >= 10) {
      tail_obs[k > 0] += hist[i];
      tail_exp[k > 0] += p[i] * kN;
    } else {
      const double e = p[i] * kN;
      chi2 += (hist[i] - e) * (hist[i] - e) / e;
      ++cells;
    }
  }
  for (int t = 0; t < 2; ++t) {
    chi2 += (tail_obs[t] - tail_exp[t]) * (tail_obs[t] - tail_exp[t]) / tail_exp[t];
    ++cells;
  }
  // cells - 1 = 20 degrees of freedom: mean 20, sd 6.3.
  EXPECT_LT(chi2, 75.0) << "cells " << cells;
}

TEST(SamplerTest, CbdMatchesKeystreamLayout) {
  const veil::RnsBase base = make_base();
  veil::Prng prng = veil::Prng::from_u64(8);
  const veil::PrngStream s = prng.next();
  const std::size_t n = 4096;
  const std::vector<u64> out = sample_cpu(veil::sample_cbd, n, base, s);
  const std::vector<i64> vals = small_values(out, n, base, 21);
  for (std::size_t j = 0; j < n; ++j) {
    u64 w[8];
    s.block64(0xFFFFFFFFu, static_cast<veil::u32>(j / 8), w);
    const u64 x = w[j % 8];
    const i64 want = __builtin_popcountll(x & 0x1FFFFF) - __builtin_popcountll((x >> 21) & 0x1FFFFF);
    ASSERT_EQ(vals[j], want) << "coefficient " << j;
  }
}

// ---- all samplers ---------------------------------------------------------------------------

struct NamedSampler {
  const char* name;
  SampleFn fn;
};
const NamedSampler kSamplers[] = {{"uniform", veil::sample_uniform},
                                  {"ternary", veil::sample_ternary},
                                  {"cbd", veil::sample_cbd}};

TEST(SamplerTest, DeterministicPerStream) {
  const veil::RnsBase base = make_base();
  for (const auto& s : kSamplers) {
    SCOPED_TRACE(s.name);
    veil::Prng p1 = veil::Prng::from_u64(31337), p2 = veil::Prng::from_u64(31337);
    const veil::PrngStream a0 = p1.next(), a1 = p1.next();
    const veil::PrngStream b0 = p2.next();
    const std::vector<u64> x = sample_cpu(s.fn, kN, base, a0);
    EXPECT_EQ(x, sample_cpu(s.fn, kN, base, a0)) << "same stream, different output";
    EXPECT_EQ(x, sample_cpu(s.fn, kN, base, b0)) << "same seed, different output";
    const std::vector<u64> y = sample_cpu(s.fn, kN, base, a1);
    EXPECT_NE(x, y) << "different domain, same output";
    // Ternary values agree by chance 1/3 of the time, CBD ~12%, uniform never.
    EXPECT_LT(count_equal(x, y), x.size() * 2 / 5);
    const std::vector<u64> z = sample_cpu(s.fn, kN, base, veil::Prng::from_u64(31338).next());
    EXPECT_LT(count_equal(x, z), x.size() * 2 / 5) << "different seed";
  }
}

TEST(SamplerTest, WritesExactlyTheOutputForAnyN) {
  // n not a multiple of the 4 (uniform) or 8 (ternary, CBD) coefficients per block.
  const veil::RnsBase base = make_base();
  for (const auto& s : kSamplers) {
    for (std::size_t n : {std::size_t(1), std::size_t(3), std::size_t(13), std::size_t(1029)}) {
      SCOPED_TRACE(std::string(s.name) + " n=" + std::to_string(n));
      const std::size_t body = base.size() * n, guard = 32;
      std::vector<u64> out(body + guard, kSentinel);
      s.fn(veil::Device::cpu(), out.data(), n, base, veil::Prng::from_u64(n).next());
      for (std::size_t l = 0; l < base.size(); ++l) {
        for (std::size_t j = 0; j < n; ++j) {
          ASSERT_LT(out[l * n + j], base[l].value) << "limb " << l << " coefficient " << j;
        }
      }
      for (std::size_t i = body; i < out.size(); ++i) ASSERT_EQ(out[i], kSentinel) << i;
    }
  }
}

TEST(SamplerTest, SingleLimbBase) {
  const veil::RnsBase base(std::vector<veil::Modulus>{veil::Modulus(12289)});
  veil::Prng prng = veil::Prng::from_u64(3);
  const auto u = sample_cpu(veil::sample_uniform, 1024, base, prng.next());
  for (u64 v : u) ASSERT_LT(v, 12289u);
  const auto t = sample_cpu(veil::sample_ternary, 1024, base, prng.next());
  for (u64 v : t) ASSERT_TRUE(v == 0 || v == 1 || v == 12288) << v;
}

// ---- CUDA vs CPU ----------------------------------------------------------------------------

TEST(SamplerCuda, MatchesCpuBitForBit) {
  if (veil::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const veil::Device dev(veil::Device::Kind::cuda, 0);
  const veil::RnsBase base = make_base();
  veil::Prng prng = veil::Prng::from_u64(2024);
  for (const auto& s : kSamplers) {
    for (std::size_t n : {kN, std::size_t(13), std::size_t(4096 + 5), std::size_t(1) << 16}) {
      SCOPED_TRACE(std::string(s.name) + " n=" + std::to_string(n));
      const veil::PrngStream stream = prng.next();
      const std::vector<u64> want = sample_cpu(s.fn, n, base, stream);
      veil::Buffer<u64> buf(dev, base.size() * n);
      s.fn(dev, buf.data(), n, base, stream);
      const std::vector<u64> got = buf.to_host();
      ASSERT_EQ(got.size(), want.size());
      std::size_t diff = 0, first = got.size();
      for (std::size_t i = 0; i < got.size(); ++i) {
        if (got[i] != want[i]) {
          ++diff;
          if (first == got.size()) first = i;
        }
      }
      EXPECT_EQ(diff, 0u) << "first difference at " << first << ": cuda "
                          << (diff ? got[first] : 0) << " cpu " << (diff ? want[first] : 0);
    }
  }
}

TEST(SamplerCuda, DeterministicOnDevice) {
  if (veil::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const veil::Device dev(veil::Device::Kind::cuda, 0);
  const veil::RnsBase base = make_base();
  veil::Prng prng = veil::Prng::from_u64(11);
  const veil::PrngStream a = prng.next(), b = prng.next();
  for (const auto& s : kSamplers) {
    SCOPED_TRACE(s.name);
    veil::Buffer<u64> x(dev, base.size() * kN), y(dev, base.size() * kN), z(dev, base.size() * kN);
    s.fn(dev, x.data(), kN, base, a);
    s.fn(dev, y.data(), kN, base, a);
    s.fn(dev, z.data(), kN, base, b);
    const auto hx = x.to_host();
    EXPECT_EQ(hx, y.to_host());
    EXPECT_NE(hx, z.to_host());
  }
}

}  // namespace

// ---- sparse ternary secrets (CKKS bootstrapping) ---------------------------------------------

namespace {
std::vector<u64> sparse_on(const veil::Device& dev, std::size_t n, const veil::RnsBase& base,
                           const veil::PrngStream& s, std::size_t h) {
  veil::WordBuffer buf(dev, base.size() * n, 64);
  veil::sample_sparse_ternary(dev, buf.data(), n, base, s, h);
  return buf.to_host();
}
}  // namespace

TEST(SamplerTest, SparseTernaryHasExactWeightInEveryLimb) {
  const veil::RnsBase base = make_base();
  veil::Prng prng = veil::Prng::from_u64(31);
  std::size_t plus = 0, minus = 0;
  for (std::size_t h : {std::size_t(1), std::size_t(32), std::size_t(192), kN}) {
    for (int rep = 0; rep < 8; ++rep) {
      const auto out = sparse_on(veil::Device::cpu(), kN, base, prng.next(), h);
      const std::vector<i64> vals = small_values(out, kN, base, 1);
      std::size_t weight = 0;
      for (std::size_t j = 0; j < kN; ++j) {
        if (vals[j] != 0) ++weight;
        plus += vals[j] == 1;
        minus += vals[j] == -1;
      }
      ASSERT_EQ(weight, h);
    }
  }
  // signs balanced (8 * (1 + 32 + 192 + 16384) = 132872 draws: 5 sigma is about 815)
  EXPECT_LT(std::abs(static_cast<long long>(plus) - static_cast<long long>(minus)), 1630);
  // positions uniform: 200 draws of h = 32 put 400 hits in each sixteenth of the positions
  // on average (binomial, sigma ~ 19.4); each count must lie within 6 sigma
  std::vector<long long> bucket(16, 0);
  for (int rep = 0; rep < 200; ++rep) {
    const auto out = sparse_on(veil::Device::cpu(), kN, base, prng.next(), 32);
    for (std::size_t j = 0; j < kN; ++j) bucket[j / (kN / 16)] += out[j] != 0;
  }
  for (long long c : bucket) EXPECT_LT(std::abs(c - 400), 117) << c;
  veil::WordBuffer bad(veil::Device::cpu(), base.size() * 8, 64);
  EXPECT_THROW(veil::sample_sparse_ternary(veil::Device::cpu(), bad.data(), 8, base,
                                           prng.next(), 9),
               veil::InvalidArgument);
  EXPECT_THROW(veil::sample_sparse_ternary(veil::Device::cpu(), bad.data(), 8, base,
                                           prng.next(), 0),
               veil::InvalidArgument);
}

TEST(SamplerCuda, SparseTernaryMatchesCpu) {
  if (veil::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
  const veil::Device dev(veil::Device::Kind::cuda, 0);
  const veil::RnsBase base = make_base();
  const veil::PrngStream s = veil::Prng::from_u64(77).next();
  EXPECT_EQ(sparse_on(dev, kN, base, s, 32), sparse_on(veil::Device::cpu(), kN, base, s, 32));
}
