// Tests for veil/core: word modular arithmetic (modarith.h), prime helpers (primes.h) and integer
// settings from the environment (env.h).
// Oracle: exact unsigned __int128 arithmetic and trial division, independent of the Barrett /
// Shoup / Miller-Rabin code under test.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "veil/core/env.h"
#include "veil/core/error.h"
#include "veil/core/modarith.h"
#include "veil/core/primes.h"

namespace {

using veil::u128;
using veil::u32;
using veil::u64;

constexpr u64 kMaxWord = ~u64(0);

// ---- oracles --------------------------------------------------------------------------------

u64 o_mul(u64 a, u64 b, u64 q) { return static_cast<u64>((u128(a) * b) % q); }

u64 o_pow(u64 b, u64 e, u64 q) {
  u64 r = 1 % q;
  b %= q;
  while (e) {
    if (e & 1) r = o_mul(r, b, q);
    b = o_mul(b, b, q);
    e >>= 1;
  }
  return r;
}

bool o_is_prime_trial(u64 n) {
  if (n < 2) return false;
  for (u64 d = 2; d * d <= n; ++d) {
    if (n % d == 0) return false;
  }
  return true;
}

// Moduli of every bit size 2..61: both ends of the range, a random one, and some primes.
std::vector<u64> test_moduli(std::mt19937_64& rng) {
  std::vector<u64> qs;
  for (int b = 2; b <= 61; ++b) {
    const u64 lo = u64(1) << (b - 1), hi = (u64(1) << b) - 1;
    qs.push_back(lo);
    qs.push_back(hi);
    qs.push_back(lo + rng() % (hi - lo + 1));
    qs.push_back(lo + rng() % (hi - lo + 1));
  }
  for (u64 q : {u64(2), u64(3), u64(5), u64(97), u64(12289), u64(65537), u64(998244353),
                (u64(1) << 61) - 1, u64(0x7fffffd8001), u64(0xfffffffc001),
                u64(0x1fffffffffe00001)})
    qs.push_back(q);
  return qs;
}

// Residues: edge values plus random ones.
std::vector<u64> residues(u64 q, std::mt19937_64& rng, int random_count) {
  std::vector<u64> v = {0, 1, q - 1, q / 2, (q - 1) / 2};
  if (q > 2) v.push_back(q - 2);
  for (int i = 0; i < random_count; ++i) v.push_back(rng() % q);
  return v;
}

// Arbitrary 64-bit words: edge values plus random ones.
std::vector<u64> words(u64 q, std::mt19937_64& rng, int random_count) {
  std::vector<u64> v = {0, 1, q - 1, q, q + 1, 2 * q - 1, 2 * q, kMaxWord, kMaxWord - 1,
                        u64(1) << 63, (u64(1) << 63) - 1, kMaxWord / q * q, kMaxWord / q * q - 1};
  for (int i = 0; i < random_count; ++i) v.push_back(rng());
  return v;
}

// ---- Modulus --------------------------------------------------------------------------------

TEST(ModulusTest, RejectsOutOfRange) {
  EXPECT_THROW((void)veil::Modulus(0), veil::InvalidArgument);
  EXPECT_THROW((void)veil::Modulus(1), veil::InvalidArgument);
  EXPECT_THROW((void)veil::Modulus(u64(1) << 61), veil::InvalidArgument);
  EXPECT_THROW((void)veil::Modulus((u64(1) << 61) + 1), veil::InvalidArgument);
  EXPECT_THROW((void)veil::Modulus(u64(1) << 62), veil::InvalidArgument);
  EXPECT_THROW((void)veil::Modulus(kMaxWord), veil::InvalidArgument);
  EXPECT_NO_THROW((void)veil::Modulus(2));
  EXPECT_NO_THROW((void)veil::Modulus((u64(1) << 61) - 1));
}

TEST(ModulusTest, InvalidArgumentIsAStdInvalidArgument) {
  // Python maps InvalidArgument -> ValueError; callers may catch the std base.
  EXPECT_THROW((void)veil::Modulus(1), std::invalid_argument);
}

TEST(ModulusTest, BarrettConstantsAndBitCount) {
  std::mt19937_64 rng(1);
  for (u64 q : test_moduli(rng)) {
    veil::Modulus m(q);
    EXPECT_EQ(m.value, q);
    // floor(2^128 / q) as (hi, lo): check hi*2^64 + lo <= 2^128/q < hi*2^64 + lo + 1 exactly:
    // hi = floor(2^64 / q) and lo = floor((2^64 mod q) * 2^64 / q).
    const u128 two64 = u128(1) << 64;
    EXPECT_EQ(m.ratio_hi, static_cast<u64>(two64 / q)) << q;
    EXPECT_EQ(m.ratio_lo, static_cast<u64>(((two64 % q) << 64) / q)) << q;
    int bits = 0;
    for (u64 v = q; v; v >>= 1) ++bits;
    EXPECT_EQ(m.bit_count, bits) << q;
  }
}

// ---- arithmetic against the __int128 oracle ------------------------------------------------

TEST(ArithTest, AddSubNegMod) {
  std::mt19937_64 rng(2);
  for (u64 q : test_moduli(rng)) {
    auto r = residues(q, rng, 40);
    for (u64 a : r) {
      EXPECT_EQ(veil::neg_mod(a, q), (q - a) % q) << "neg " << a << " mod " << q;
      for (u64 b : r) {
        ASSERT_EQ(veil::add_mod(a, b, q), static_cast<u64>((u128(a) + b) % q))
            << a << " + " << b << " mod " << q;
        ASSERT_EQ(veil::sub_mod(a, b, q), static_cast<u64>((u128(a) + q - b) % q))
            << a << " - " << b << " mod " << q;
      }
    }
  }
}

TEST(ArithTest, ReduceWordAnyWord) {
  std::mt19937_64 rng(3);
  for (u64 q : test_moduli(rng)) {
    veil::Modulus m(q);
    for (u64 x : words(q, rng, 2000)) {
      ASSERT_EQ(veil::reduce_word(x, m), x % q) << x << " mod " << q;
    }
  }
}

TEST(ArithTest, ReduceWideHighWordBelowQ) {
  std::mt19937_64 rng(4);
  for (u64 q : test_moduli(rng)) {
    veil::Modulus m(q);
    std::vector<u64> his = residues(q, rng, 30);
    std::vector<u64> los = words(q, rng, 30);
    for (u64 hi : his) {
      for (u64 lo : los) {
        const u128 x = (u128(hi) << 64) | lo;
        ASSERT_EQ(veil::reduce_wide(hi, lo, m), static_cast<u64>(x % q))
            << "(" << hi << " * 2^64 + " << lo << ") mod " << q;
      }
    }
  }
}

TEST(ArithTest, MulModAndMulAddMod) {
  std::mt19937_64 rng(5);
  for (u64 q : test_moduli(rng)) {
    veil::Modulus m(q);
    auto r = residues(q, rng, 40);
    for (u64 a : r) {
      for (u64 b : r) {
        ASSERT_EQ(veil::mul_mod(a, b, m), o_mul(a, b, q)) << a << " * " << b << " mod " << q;
      }
    }
    // a * b + c with c a residue, and with c any word (the 128-bit sum still has hi < q).
    for (int i = 0; i < 2000; ++i) {
      const u64 a = r[i % r.size()], b = rng() % q;
      for (u64 c : {rng() % q, q - 1, u64(0), rng(), kMaxWord}) {
        const u64 want = static_cast<u64>((u128(a) * b + c) % q);
        ASSERT_EQ(veil::mul_add_mod(a, b, c, m), want)
            << a << " * " << b << " + " << c << " mod " << q;
      }
    }
  }
}

TEST(ArithTest, MulWideAndAddWide) {
  std::mt19937_64 rng(6);
  for (int i = 0; i < 5000; ++i) {
    const u64 a = i < 4 ? (i & 1 ? kMaxWord : 0) : rng(), b = i < 4 ? (i & 2 ? kMaxWord : 1) : rng();
    u64 hi, lo;
    veil::mul_wide(a, b, hi, lo);
    const u128 p = u128(a) * b;
    ASSERT_EQ(lo, static_cast<u64>(p));
    ASSERT_EQ(hi, static_cast<u64>(p >> 64));
    ASSERT_EQ(veil::mul_hi(a, b), static_cast<u64>(p >> 64));
    const u64 bhi = rng() >> 1, blo = (i % 3 == 0) ? kMaxWord : rng();
    u64 shi = hi >> 1, slo = lo;
    veil::add_wide(shi, slo, bhi, blo);
    const u128 s = ((u128(hi >> 1) << 64) | lo) + ((u128(bhi) << 64) | blo);
    ASSERT_EQ(slo, static_cast<u64>(s));
    ASSERT_EQ(shi, static_cast<u64>(s >> 64));
  }
}

TEST(ArithTest, ShoupMultiplication) {
  std::mt19937_64 rng(7);
  for (u64 q : test_moduli(rng)) {
    for (u64 w : residues(q, rng, 12)) {
      const u64 wq = veil::shoup_quotient(w, q);
      ASSERT_EQ(wq, static_cast<u64>((u128(w) << 64) / q)) << w << " mod " << q;
      for (u64 x : words(q, rng, 200)) {
        const u64 want = static_cast<u64>((u128(x) * w) % q);
        const u64 lazy = veil::mul_shoup_lazy(x, w, wq, q);
        ASSERT_LT(lazy, 2 * q) << x << " * " << w << " mod " << q;
        ASSERT_EQ(lazy % q, want) << x << " * " << w << " mod " << q;
        ASSERT_EQ(veil::mul_shoup(x, w, wq, q), want) << x << " * " << w << " mod " << q;
      }
    }
  }
}

// ---- 32-bit words ----------------------------------------------------------------------------

// Moduli that fit a 32-bit word: every bit size 2..31 (both ends where admitted, random ones)
// and primes in use (Cheddar's 25- and 31-bit sizes among them).
std::vector<u64> word32_moduli(std::mt19937_64& rng) {
  std::vector<u64> qs;
  for (int b = 2; b <= 31; ++b) {
    const u64 lo = u64(1) << (b - 1), hi = (u64(1) << b) - 1;
    if (veil::fits_word32(lo)) qs.push_back(lo);
    qs.push_back(hi);
    for (int i = 0; i < 3; ++i) qs.push_back(lo + 1 + rng() % (hi - lo));
  }
  for (u64 q : {u64(3), u64(12289), u64(65537), u64(998244353), u64(2013265921), u64(30539777),
                u64(2147352577), u64(2147483647)})
    qs.push_back(q);
  return qs;
}

TEST(Word32Test, Fits) {
  EXPECT_TRUE(veil::fits_word32(2));
  EXPECT_TRUE(veil::fits_word32((u64(1) << 31) - 1));
  EXPECT_FALSE(veil::fits_word32(u64(1) << 31));
  EXPECT_FALSE(veil::fits_word32(u64(1) << 30));  // its Barrett constant would need 33 bits
  EXPECT_FALSE(veil::fits_word32(1));
  EXPECT_EQ(veil::Modulus(u64(1) << 31).barrett32, 0u);
}

TEST(Word32Test, BarrettReductionOfProducts) {
  std::mt19937_64 rng(21);
  for (u64 q : word32_moduli(rng)) {
    const veil::Modulus m(q);
    const u64 want_mu = static_cast<u64>((u128(1) << (2 * m.bit_count)) / q);
    ASSERT_EQ(u64(m.barrett32), want_mu) << q;
    // Every p < 2^(2b): edges and random values.
    const u64 top = m.bit_count == 32 ? kMaxWord : (u64(1) << (2 * m.bit_count)) - 1;
    std::vector<u64> ps = {0, 1, q - 1, q, q + 1, 2 * q, 3 * q - 1, (q - 1) * (q - 1), top,
                           top - 1, top - q};
    for (int i = 0; i < 3000; ++i) ps.push_back(rng() % (top + 1));
    for (u64 p : ps) ASSERT_EQ(u64(veil::reduce_product(p, m)), p % q) << p << " mod " << q;
    const auto r = residues(q, rng, 30);
    for (u64 a : r) {
      for (u64 b : r) {
        const u32 a32 = static_cast<u32>(a), b32 = static_cast<u32>(b);
        ASSERT_EQ(u64(veil::mul_mod(a32, b32, m)), o_mul(a, b, q)) << a << " * " << b << " % " << q;
        const u32 c32 = static_cast<u32>(r[(a + b) % r.size()]);
        ASSERT_EQ(u64(veil::mul_add_mod(a32, b32, c32, m)), (a * b + c32) % q);
      }
      ASSERT_EQ(u64(veil::neg_mod(static_cast<u32>(a), static_cast<u32>(q))), (q - a) % q);
      ASSERT_EQ(u64(veil::add_mod(static_cast<u32>(a), static_cast<u32>(q - 1 - a), static_cast<u32>(q))), q - 1);
    }
  }
}

TEST(Word32Test, ShoupQuotientFromTheSixtyFourBitOne) {
  std::mt19937_64 rng(22);
  for (u64 q : word32_moduli(rng)) {
    for (u64 w : residues(q, rng, 20)) {
      const u32 want = static_cast<u32>((u64(w) << 32) / q);
      ASSERT_EQ(veil::shoup32_from64(veil::shoup_quotient(w, q)), want) << w << " mod " << q;
      ASSERT_EQ(veil::shoup_for<u32>(veil::shoup_quotient(w, q)), want);
      ASSERT_EQ(veil::shoup_for<u64>(veil::shoup_quotient(w, q)), veil::shoup_quotient(w, q));
    }
  }
}

// Sums of up to 2000 products, against the __int128 oracle, for both words.
TEST(Word32Test, WideAccumulatorBothWords) {
  std::mt19937_64 rng(23);
  for (u64 q : {u64(2147352577), u64(30539777), u64(0x1fffffffffe00001), u64(0xfffffffc001)}) {
    const veil::Modulus m(q);
    for (int len : {1, 2, 5, 47, 2000}) {
      u128 want = 0;
      veil::WideAcc<u64> a64;
      veil::WideAcc<u32> a32;
      const bool small = veil::fits_word32(q);
      for (int i = 0; i < len; ++i) {
        const u64 a = i == 0 ? q - 1 : rng() % q, b = i == 0 ? q - 1 : rng() % q;
        want += u128(a) * b;
        a64.add(a, b);
        if (small) a32.add(static_cast<u32>(a), static_cast<u32>(b));
      }
      const u64 c = rng();
      want += c;
      a64.add_word(c);
      a32.add_word(c);
      ASSERT_EQ(a64.reduce(m), static_cast<u64>(want % q)) << q << " len " << len;
      if (small) ASSERT_EQ(u64(a32.reduce(m)), static_cast<u64>(want % q)) << q << " len " << len;
    }
  }
}

// The 32-bit accumulator's reduction at the ends of its range: lo at 0, 2^32 - 1 and 2^64 - 1, hi
// up to 2^31 - 1 (the bound reduce() documents; 2^32 products of words below 2^31 stay under
// 2^30), primes of 20, 25, 30 and 31 bits, against __int128.
TEST(Word32Test, WideAccumulatorReducesItsWholeRange) {
  std::mt19937_64 rng(25);
  for (u64 q : {u64(1038337), u64(30539777), u64(1073479681), u64(2147352577)}) {
    const veil::Modulus m(q);
    for (u64 lo : {u64(0), u64(0xFFFFFFFF), ~u64(0), rng(), rng()}) {
      for (u32 hi : {0u, 1u, 3u, 1u << 30, (1u << 31) - 1, static_cast<u32>(rng() >> 34)}) {
        veil::WideAcc<u32> a;
        a.lo = lo;
        a.hi = hi;
        const u128 v = (u128(hi) << 64) | lo;
        ASSERT_EQ(u64(a.reduce(m)), static_cast<u64>(v % q)) << q << " hi " << hi << " lo " << lo;
      }
    }
  }
}

// dot_accumulate: every length 0..40 (all remainders of the groups of four) with extreme and
// random 31-bit values, for both accumulators, against __int128.
TEST(Word32Test, DotAccumulateMatchesTheOracle) {
  std::mt19937_64 rng(24);
  const u64 q = 2147352577;  // 31 bits
  const veil::Modulus m(q);
  for (u32 len = 0; len <= 40; ++len) {
    std::vector<u32> y(len), row32(len);
    std::vector<u64> row64(len);
    u128 want = 0;
    for (u32 i = 0; i < len; ++i) {
      y[i] = (len % 3 == 0) ? static_cast<u32>(q - 1) : static_cast<u32>(rng() % q);
      row32[i] = (len % 3 == 0) ? static_cast<u32>(q - 1) : static_cast<u32>(rng() % q);
      row64[i] = row32[i];
      want += u128(y[i]) * row32[i];
    }
    u32 yr[40] = {};  // a register array, as the kernels pass it
    for (u32 i = 0; i < len; ++i) yr[i] = y[i];
    veil::WideAcc<u32> a32;
    veil::WideAcc<u64> a64;
    veil::dot_accumulate(a32, yr, row64.data(), len);
    veil::dot_accumulate(a64, yr, row32.data(), len);
    ASSERT_EQ(u64(a32.reduce(m)), static_cast<u64>(want % q)) << len;
    ASSERT_EQ(a64.reduce(m), static_cast<u64>(want % q)) << len;
  }
}

TEST(ArithTest, PowMod) {
  std::mt19937_64 rng(8);
  for (u64 q : test_moduli(rng)) {
    veil::Modulus m(q);
    for (int i = 0; i < 60; ++i) {
      const u64 base = i == 0 ? 0 : i == 1 ? q - 1 : i == 2 ? kMaxWord : rng();
      const u64 exp = i == 3 ? 0 : i == 4 ? 1 : i == 5 ? kMaxWord : rng() >> (rng() % 64);
      ASSERT_EQ(veil::pow_mod(base, exp, m), o_pow(base, exp, q))
          << base << "^" << exp << " mod " << q;
    }
  }
  // x^0 = 1 and 0^0 = 1 (mod q > 1); Fermat for primes.
  EXPECT_EQ(veil::pow_mod(0, 0, veil::Modulus(97)), 1u);
  EXPECT_EQ(veil::pow_mod(5, 96, veil::Modulus(97)), 1u);
  const u64 p61 = (u64(1) << 61) - 1;
  EXPECT_EQ(veil::pow_mod(3, p61 - 1, veil::Modulus(p61)), 1u);
  EXPECT_EQ(veil::pow_mod(2, 61, veil::Modulus(p61)), 1u);
}

TEST(ArithTest, InvMod) {
  std::mt19937_64 rng(9);
  for (u64 q : test_moduli(rng)) {
    for (int i = 0; i < 200; ++i) {
      const u64 a = i == 0 ? 1 : i == 1 ? q - 1 : rng() % q;
      u64 g = a, h = q;
      while (h) {
        u64 t = g % h;
        g = h;
        h = t;
      }
      if (g != 1) {
        EXPECT_THROW(veil::inv_mod(a, q), veil::InvalidArgument) << a << " mod " << q;
        continue;
      }
      const u64 inv = veil::inv_mod(a, q);
      ASSERT_LT(inv, q);
      ASSERT_EQ(o_mul(a % q, inv, q), 1 % q) << a << "^-1 mod " << q;
    }
  }
  // Inputs >= q are reduced first.
  EXPECT_EQ(veil::inv_mod(97 + 2, 97), veil::inv_mod(2, 97));
  EXPECT_EQ(veil::inv_mod(2, 97), 49u);
  // Full-width modulus (2^64 - 59 is prime).
  const u64 p64 = kMaxWord - 58;
  EXPECT_EQ(o_mul(veil::inv_mod(kMaxWord, p64), kMaxWord % p64, p64), 1u);
  // Not invertible.
  EXPECT_THROW(veil::inv_mod(0, 97), veil::InvalidArgument);
  EXPECT_THROW(veil::inv_mod(97, 97), veil::InvalidArgument);
  EXPECT_THROW(veil::inv_mod(6, 9), veil::InvalidArgument);
  EXPECT_THROW(veil::inv_mod(u64(1) << 20, u64(1) << 40), veil::InvalidArgument);
}

// ---- primes ---------------------------------------------------------------------------------

TEST(PrimeTest, IsPrimeMatchesTrialDivisionBelowOneMillion) {
  int count = 0;
  for (u64 n = 0; n < 1000000; ++n) {
    const bool want = o_is_prime_trial(n);
    ASSERT_EQ(veil::is_prime(n), want) << n;
    count += want;
  }
  EXPECT_EQ(count, 78498);  // pi(10^6)
}

// Primality of every n in [lo, lo + width) by a segmented sieve of Eratosthenes (an oracle with no
// modular exponentiation): sieve the primes up to sqrt(lo + width), then strike their multiples.
std::vector<bool> o_sieve_window(u64 lo, u64 width) {
  const u64 hi = lo + width;
  u64 root = 1;
  while (u128(root) * root < hi) ++root;  // root = ceil(sqrt(hi)) (at most 2^25 + 1 here)
  std::vector<bool> small_composite(root + 1, false);
  std::vector<bool> prime(width, true);
  for (u64 n = lo; n < hi && n < 2; ++n) prime[n - lo] = false;
  for (u64 p = 2; p <= root; ++p) {
    if (small_composite[p]) continue;
    for (u64 m = p * p; m <= root; m += p) small_composite[m] = true;
    // First multiple of p in the window that is not p itself.
    u64 m = std::max(p * p, (lo + p - 1) / p * p);
    for (; m < hi; m += p) prime[m - lo] = false;
  }
  return prime;
}

TEST(PrimeTest, IsPrimeMatchesSegmentedSieveInWindows) {
  // Around 2^32, around 2^50 (sieving primes up to 2^25), and above 10^15.
  for (u64 lo : {(u64(1) << 32) - (u64(1) << 16), (u64(1) << 50) - (u64(1) << 16),
                 u64(1000000000000000) - (u64(1) << 16)}) {
    const u64 width = u64(1) << 17;
    const std::vector<bool> want = o_sieve_window(lo, width);
    int primes = 0;
    for (u64 i = 0; i < width; ++i) {
      ASSERT_EQ(veil::is_prime(lo + i), static_cast<bool>(want[i])) << lo + i;
      primes += want[i];
    }
    EXPECT_GT(primes, 1000) << lo;  // the window is not vacuous (about width / ln(lo) primes)
  }
}

TEST(PrimeTest, IsPrimeKnownLargePrimes) {
  for (u64 p : {u64(2147483647),                // 2^31 - 1
                (u64(1) << 61) - 1,             // Mersenne M61
                u64(4294967291),                // largest prime < 2^32
                u64(4294967311),                // smallest prime > 2^32
                u64(1000000007), u64(998244353), u64(0x7fffffd8001), u64(0x7fffffc8001),
                u64(0xfffffffc001), u64(0xffffff6c001), u64(0xfffffebc001),
                kMaxWord - 58,                  // largest prime < 2^64
                u64(1) << 63 | 29}) {           // smallest prime > 2^63
    EXPECT_TRUE(veil::is_prime(p)) << p;
  }
}

TEST(PrimeTest, IsPrimeKnownCompositesAndPseudoprimes) {
  // Carmichael numbers (Fermat liars to every coprime base).
  for (u64 n : {561, 1105, 1729, 2465, 2821, 6601, 8911, 41041, 62745, 63973, 75361, 101101,
                126217, 172081, 188461, 252601, 278545, 294409, 314821, 334153, 340561, 399001,
                410041, 449065, 488881, 512461}) {
    EXPECT_FALSE(veil::is_prime(n)) << n;
  }
  // Strong pseudoprimes: 2047 (base 2), 3215031751 = 151*751*28351 (bases 2..7),
  // 2152302898747 (bases 2..11), 3474749660383 (bases 2..13), 341550071728321 (2..19),
  // 3825123056546413051 = 149491*747451*34233211 (bases 2..31; only 37 is a witness).
  for (u64 n : {u64(2047), u64(3215031751), u64(2152302898747), u64(3474749660383),
                u64(341550071728321), u64(3825123056546413051)}) {
    EXPECT_FALSE(veil::is_prime(n)) << n;
  }
  // Chernick's Carmichael numbers (6k+1)(12k+1)(18k+1) with all three factors prime and above
  // 227: no factor up to 227 and a Fermat liar to base 228, so Boost's filter in is_prime passes
  // them and the strong tests must reject them. k = 45, 51, 55 and the three largest below 2^64.
  for (u64 k : {45, 51, 55, 239575, 239661, 239841}) {
    const u64 n = (6 * k + 1) * (12 * k + 1) * (18 * k + 1);
    EXPECT_EQ(o_pow(228, n - 1, n), 1u) << n;  // a Fermat pseudoprime to base 228
    EXPECT_FALSE(veil::is_prime(n)) << n;
    EXPECT_TRUE(veil::is_prime(6 * k + 1) && veil::is_prime(12 * k + 1) &&
                veil::is_prime(18 * k + 1))
        << k;
  }
  // Fermat pseudoprimes to base 228 with no factor up to 227 (not Carmichael numbers).
  for (u64 n : {64349, 104653, 146611, 152021, 162361, 184573}) {
    EXPECT_EQ(o_pow(228, n - 1, n), 1u) << n;
    EXPECT_FALSE(veil::is_prime(n)) << n;
  }
  // Products of two large primes, prime squares, powers of two, the word edges.
  EXPECT_FALSE(veil::is_prime(u64(4294967291) * 4294967291u));
  EXPECT_FALSE(veil::is_prime(u64(4294967291) * 4294967279u));
  EXPECT_FALSE(veil::is_prime(u64(2147483647) * 2147483629u));
  EXPECT_FALSE(veil::is_prime(u64(1000000007) * 998244353u));
  EXPECT_FALSE(veil::is_prime(u64(1) << 61));
  EXPECT_FALSE(veil::is_prime(kMaxWord));
  EXPECT_FALSE(veil::is_prime(kMaxWord - 1));
  EXPECT_FALSE(veil::is_prime(0));
  EXPECT_FALSE(veil::is_prime(1));
}

TEST(PrimeTest, GenerateNttPrimesMatchesSealBfvDefaults) {
  // SEAL CoeffModulus::BFVDefault(8192) = {43, 43, 44, 44, 44} bits.
  EXPECT_EQ(veil::generate_ntt_primes(43, 8192, 2),
            (std::vector<u64>{0x7fffffd8001, 0x7fffffc8001}));
  EXPECT_EQ(veil::generate_ntt_primes(44, 8192, 3),
            (std::vector<u64>{0xfffffffc001, 0xffffff6c001, 0xfffffebc001}));
}

// The chains the prime search gave before is_prime moved to Boost.Multiprecision, each checked
// independently (sympy.isprime over every candidate q = 1 mod 2N from the top): the search must
// keep returning exactly these, or SEAL-compatible chains and saved parameters change.
TEST(PrimeTest, GenerateNttPrimesChainsUnchanged) {
  struct Chain {
    int bits;
    u64 n;
    std::vector<u64> primes;
  };
  const Chain chains[] = {
      {20, 1024, {0xfd801, 0xfc001, 0xf8801}},
      {30, 4096, {0x3fff4001, 0x3ffee001, 0x3ffea001}},
      {36, 8192, {0xffffc4001, 0xffff00001, 0xfffeec001}},
      {40, 16384, {0xffffe80001, 0xffffca8001, 0xffffc40001}},
      {50, 32768, {0x3ffffffdf0001, 0x3ffffffd20001, 0x3ffffffcd0001}},
      {60, 8192, {0xfffffffffffc001, 0xffffffffffe8001, 0xffffffffffd8001, 0xffffffffffc4001}},
      {60, 65536, {0xffffffffffc0001, 0xfffffffff840001, 0xfffffffff6a0001}},
      {61, 131072, {0x1fffffffffe00001, 0x1fffffffffc80001, 0x1fffffffffb40001}},
      {59, 16384, {0x7fffffffff18001, 0x7ffffffffeb8001, 0x7ffffffffe70001}},
      {55, 4096, {0x7ffffffffb4001, 0x7ffffffff96001, 0x7ffffffff56001}},
      {49, 2048, {0x1ffffffff9001, 0x1fffffffe7001, 0x1fffffffd7001}},
      {17, 2048, {0x1c001, 0x15001}},
  };
  for (const Chain& c : chains) {
    EXPECT_EQ(veil::generate_ntt_primes(c.bits, c.n, c.primes.size()), c.primes)
        << c.bits << "-bit, N = " << c.n;
  }
}

// Checks the documented contract; for small bit sizes also that no valid prime was skipped
// (trial division), otherwise with is_prime (tested above).
void check_ntt_primes(int bits, u64 n, std::size_t count, const std::vector<u64>& exclude = {}) {
  SCOPED_TRACE("bits=" + std::to_string(bits) + " n=" + std::to_string(n) +
               " count=" + std::to_string(count));
  const std::vector<u64> ps = veil::generate_ntt_primes(bits, n, count, exclude);
  ASSERT_EQ(ps.size(), count);
  const u64 lower = u64(1) << (bits - 1), upper = u64(1) << bits;
  auto prime = [&](u64 x) { return bits <= 32 ? o_is_prime_trial(x) : veil::is_prime(x); };
  std::set<u64> seen;
  u64 prev = upper;  // every candidate in (p_i, prev) that is 1 mod 2N must be non-prime or excluded
  for (u64 p : ps) {
    EXPECT_TRUE(prime(p)) << p;
    EXPECT_EQ(p % (2 * n), 1u) << p;
    EXPECT_GE(p, lower) << p;
    EXPECT_LT(p, upper) << p;
    EXPECT_LT(p, prev) << "not strictly descending at " << p;
    EXPECT_TRUE(seen.insert(p).second) << "duplicate " << p;
    EXPECT_EQ(std::find(exclude.begin(), exclude.end(), p), exclude.end()) << "excluded " << p;
    // Largest c < prev with c = 1 mod 2N, then down to p.
    for (u64 c = (prev - 2) / (2 * n) * (2 * n) + 1; c > p; c -= 2 * n) {
      const bool excluded = std::find(exclude.begin(), exclude.end(), c) != exclude.end();
      EXPECT_TRUE(excluded || !prime(c)) << "skipped prime " << c;
    }
    prev = p;
  }
}

TEST(PrimeTest, GenerateNttPrimesContract) {
  check_ntt_primes(20, 8, 30);
  check_ntt_primes(17, 4096, 1);
  check_ntt_primes(30, 1024, 12);
  check_ntt_primes(30, 1 << 14, 3);
  check_ntt_primes(36, 4096, 5);
  check_ntt_primes(50, 1 << 15, 4);
  check_ntt_primes(60, 1 << 16, 4);
  check_ntt_primes(61, 2048, 5);
  check_ntt_primes(61, 1 << 17, 3);
  // Small degrees: n = 1 (q odd) and 2-bit primes.
  EXPECT_EQ(veil::generate_ntt_primes(2, 1, 1), std::vector<u64>{3});
  EXPECT_EQ(veil::generate_ntt_primes(5, 1, 3), (std::vector<u64>{31, 29, 23}));
  EXPECT_EQ(veil::generate_ntt_primes(8, 8, 2), (std::vector<u64>{241, 193}));
  EXPECT_EQ(veil::generate_ntt_primes(14, 2048, 1), std::vector<u64>{12289});
  EXPECT_EQ(veil::generate_ntt_primes(8, 8, 0), std::vector<u64>{});
}

TEST(PrimeTest, GenerateNttPrimesExclude) {
  const auto all = veil::generate_ntt_primes(44, 8192, 5);
  const auto rest = veil::generate_ntt_primes(44, 8192, 3, {all[0], all[2]});
  EXPECT_EQ(rest, (std::vector<u64>{all[1], all[3], all[4]}));
  // Excluding numbers that would not be chosen anyway changes nothing.
  EXPECT_EQ(veil::generate_ntt_primes(44, 8192, 3, {12289, 0x7fffffd8001, 4}),
            (std::vector<u64>{all[0], all[1], all[2]}));
  check_ntt_primes(44, 8192, 4, {all[1], all[3]});
  // Exclude every prime there is.
  EXPECT_THROW(veil::generate_ntt_primes(14, 2048, 1, {12289}), veil::InvalidArgument);
}

TEST(PrimeTest, GenerateNttPrimesRejectsImpossibleRequests) {
  EXPECT_THROW(veil::generate_ntt_primes(1, 1, 1), veil::InvalidArgument);
  EXPECT_THROW(veil::generate_ntt_primes(0, 8, 1), veil::InvalidArgument);
  EXPECT_THROW(veil::generate_ntt_primes(62, 8, 1), veil::InvalidArgument);
  EXPECT_THROW(veil::generate_ntt_primes(64, 8, 1), veil::InvalidArgument);
  // 2^bits <= 2N: no candidate q = 1 mod 2N below 2^bits other than 1.
  EXPECT_THROW(veil::generate_ntt_primes(10, 1024, 1), veil::InvalidArgument);
  EXPECT_THROW(veil::generate_ntt_primes(11, 1024, 1), veil::InvalidArgument);
  // Only one 14-bit prime is 1 mod 4096 (12289).
  EXPECT_THROW(veil::generate_ntt_primes(14, 2048, 2), veil::InvalidArgument);
  // 8-bit primes = 1 mod 16: 193 and 241 only (17, 97, 113 have fewer bits).
  EXPECT_THROW(veil::generate_ntt_primes(8, 8, 3), veil::InvalidArgument);
  // Degree not a power of two.
  EXPECT_THROW(veil::generate_ntt_primes(40, 1000, 1), veil::InvalidArgument);
  EXPECT_THROW(veil::generate_ntt_primes(40, 0, 1), veil::InvalidArgument);
}

// The minimal primitive 2N-th root by brute force: smallest g with g^N = -1 mod q (for 2N a
// power of two, g^N = -1 is equivalent to g having order exactly 2N).
u64 brute_min_root(u64 two_n, u64 q) {
  for (u64 g = 2; g < q; ++g) {
    if (o_pow(g, two_n / 2, q) == q - 1) return g;
  }
  return 0;
}

TEST(PrimeTest, MinimalPrimitiveRootBruteForce) {
  {
    const u64 g = veil::minimal_primitive_root(16, veil::Modulus(97));
    EXPECT_EQ(g, brute_min_root(16, 97));
    EXPECT_EQ(o_pow(g, 8, 97), 96u);
  }
  for (u64 n = 16; n <= 2048; n *= 2) {
    const u64 g = veil::minimal_primitive_root(2 * n, veil::Modulus(12289));
    EXPECT_EQ(g, brute_min_root(2 * n, 12289)) << "N = " << n;
    EXPECT_EQ(o_pow(g, n, 12289), 12288u) << "N = " << n;
  }
  // 2N = 2: the only primitive square root of unity is -1.
  EXPECT_EQ(veil::minimal_primitive_root(2, veil::Modulus(97)), 96u);
  // A few more small primes and degrees, all brute-forced.
  for (u64 q : {u64(17), u64(257), u64(65537), u64(7681), u64(40961)}) {
    for (u64 two_n = 2; (q - 1) % two_n == 0; two_n *= 2) {
      EXPECT_EQ(veil::minimal_primitive_root(two_n, veil::Modulus(q)), brute_min_root(two_n, q))
          << "q = " << q << ", 2N = " << two_n;
    }
  }
}

TEST(PrimeTest, MinimalPrimitiveRootLargePrimes) {
  // For large q: g^N = -1 and g is the least of all primitive 2N-th roots g^k, k odd.
  for (auto [bits, n] : {std::pair{43, u64(8192)}, std::pair{44, u64(8192)},
                         std::pair{60, u64(4096)}, std::pair{30, u64(1024)}}) {
    for (u64 q : veil::generate_ntt_primes(bits, n, 2)) {
      const u64 g = veil::minimal_primitive_root(2 * n, veil::Modulus(q));
      ASSERT_EQ(o_pow(g, n, q), q - 1) << q;
      const u64 g2 = o_mul(g, g, q);
      u64 cur = g;
      for (u64 k = 1; k < 2 * n; k += 2) {
        ASSERT_GE(cur, g) << "g^" << k << " mod " << q << " is smaller";
        cur = o_mul(cur, g2, q);
      }
      EXPECT_EQ(cur, g);  // g^(2N+1) = g
    }
  }
}

TEST(PrimeTest, MinimalPrimitiveRootRejectsBadDegree) {
  EXPECT_THROW(veil::minimal_primitive_root(64, veil::Modulus(97)), veil::InvalidArgument);
  EXPECT_THROW(veil::minimal_primitive_root(8192, veil::Modulus(12289)), veil::InvalidArgument);
}

TEST(CoreTest, ReverseBits) {
  EXPECT_EQ(veil::reverse_bits(0, 0), 0u);
  EXPECT_EQ(veil::reverse_bits(1, 1), 1u);
  EXPECT_EQ(veil::reverse_bits(1, 3), 4u);
  EXPECT_EQ(veil::reverse_bits(6, 3), 3u);
  EXPECT_EQ(veil::reverse_bits(0b0001011, 7), 0b1101000u);
  EXPECT_EQ(veil::reverse_bits(1, 32), 0x80000000u);
  EXPECT_EQ(veil::reverse_bits(0x12345678u, 32), 0x1E6A2C48u);
  std::mt19937_64 rng(10);
  for (int bits = 0; bits <= 32; ++bits) {
    for (int i = 0; i < 200; ++i) {
      const u32 x = static_cast<u32>(rng()) & (bits == 32 ? ~u32(0) : (u32(1) << bits) - 1);
      u32 want = 0;
      for (int k = 0; k < bits; ++k) {
        if (x >> k & 1) want |= u32(1) << (bits - 1 - k);
      }
      const u32 r = veil::reverse_bits(x, bits);
      ASSERT_EQ(r, want) << x << " in " << bits << " bits";
      ASSERT_EQ(veil::reverse_bits(r, bits), x);
    }
  }
  // Permutation of [0, 2^k).
  for (int bits = 1; bits <= 12; ++bits) {
    std::vector<bool> hit(std::size_t(1) << bits, false);
    for (u32 x = 0; x < (u32(1) << bits); ++x) hit[veil::reverse_bits(x, bits)] = true;
    EXPECT_TRUE(std::all_of(hit.begin(), hit.end(), [](bool b) { return b; })) << bits;
  }
}

TEST(CoreTest, Log2AndPowerOfTwo) {
  EXPECT_EQ(veil::log2_exact(1), 0);
  EXPECT_EQ(veil::log2_exact(2), 1);
  EXPECT_EQ(veil::log2_exact(8192), 13);
  EXPECT_EQ(veil::log2_exact(u64(1) << 40), 40);
  EXPECT_TRUE(veil::is_power_of_two(1));
  EXPECT_TRUE(veil::is_power_of_two(u64(1) << 63));
  EXPECT_FALSE(veil::is_power_of_two(0));
  EXPECT_FALSE(veil::is_power_of_two(12));
  EXPECT_FALSE(veil::is_power_of_two(kMaxWord));
  // Against loops over the powers of two: log2_exact(n) is the least l with 2^l >= n, and only
  // the 2^l are powers of two; checked at and around every 2^l.
  for (int l = 0; l < 64; ++l) {
    const u64 p = u64(1) << l;
    for (u64 n : {p - 1, p, p + 1}) {
      int want_log = 0;
      while (want_log < 64 && (u64(1) << want_log) < n) ++want_log;
      bool want_pow2 = false;
      for (int k = 0; k < 64; ++k) want_pow2 = want_pow2 || n == (u64(1) << k);
      EXPECT_EQ(veil::log2_exact(n), want_log) << n;
      EXPECT_EQ(veil::is_power_of_two(n), want_pow2) << n;
    }
  }
  EXPECT_EQ(veil::log2_exact(0), 0);
  EXPECT_EQ(veil::log2_exact(kMaxWord), 64);
}

}  // namespace

// env_integer (core/env.h): a whole decimal integer in range, else the fallback.
TEST(CoreEnv, IntegerSettingsIgnoreWhatIsNotAnIntegerInRange) {
  const char* name = "VEIL_TEST_ENV_INTEGER";
  unsetenv(name);
  EXPECT_EQ(veil::env_integer(name, 0, 15, 4), 4);
  const std::pair<const char*, long long> cases[] = {
      {"7", 7}, {"0", 0}, {"15", 15}, {"16", 4}, {"-1", 4}, {"", 4}, {"off", 4}, {"3x", 4},
      {" 3", 3}};
  for (const auto& [text, want] : cases) {
    setenv(name, text, 1);
    EXPECT_EQ(veil::env_integer(name, 0, 15, 4), want) << "'" << text << "'";
  }
  unsetenv(name);
}

// env_flag_on: off only for exactly "0".
TEST(CoreEnv, FlagsAreOnUnlessExactlyZero) {
  const char* name = "VEIL_TEST_ENV_FLAG";
  unsetenv(name);
  EXPECT_TRUE(veil::env_flag_on(name));
  const std::pair<const char*, bool> cases[] = {{"0", false}, {"1", true}, {"", true},
                                                {"00", true}, {"off", true}};
  for (const auto& [text, want] : cases) {
    setenv(name, text, 1);
    EXPECT_EQ(veil::env_flag_on(name), want) << "'" << text << "'";
  }
  unsetenv(name);
}
