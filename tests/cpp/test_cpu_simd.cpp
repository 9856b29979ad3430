// The CPU backend's vector kernels (ring/eltwise_simd.h; the NTT's are in test_ntt.cpp), against
// 128-bit integer products: every modulus size the IFMA path takes (up to 2^50), with random and
// extreme residues, and the refusal of the sizes it does not take.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "veil/core/modarith.h"
#include "veil/core/primes.h"
#include "veil/ring/eltwise_simd.h"
#include "veil/ring/ntt_simd.h"

namespace {

using veil::Modulus;
using veil::u64;
using veil::u32;
using u128 = unsigned __int128;

u64 oracle_mul(u64 a, u64 b, u64 q) { return static_cast<u64>((u128(a) * b) % q); }

// Residues below q: random, then 0, 1, q - 1 and q - 2 at the front.
std::vector<u64> residues(u64 q, std::size_t n, std::mt19937_64& rng) {
  std::vector<u64> v(n);
  for (u64& x : v) x = rng() % q;
  v[0] = 0, v[1] = 1, v[2] = q - 1, v[3] = q - 2, v[4] = q - 1;
  return v;
}

bool have_ifma() { return veil::detail::cpu_simd() == veil::detail::CpuSimd::kAvx512Ifma; }

TEST(CpuSimd, MulModMatchesTheWideProduct) {
  if (!have_ifma()) GTEST_SKIP() << "no AVX512-IFMA52 on this processor";
  std::mt19937_64 rng(3);
  const std::size_t n = 4096;
  for (int bits : {17, 20, 30, 36, 40, 45, 49, 50}) {
    for (u64 q : veil::generate_ntt_primes(bits, n, 2, {})) {
      const std::vector<u64> x = residues(q, n, rng), y = residues(q, n, rng);
      std::vector<u64> o(n, ~u64(0));
      ASSERT_TRUE(veil::detail::mul_mod_simd(o.data(), x.data(), y.data(), n, Modulus(q)));
      for (std::size_t i = 0; i < n; ++i) {
        ASSERT_EQ(o[i], oracle_mul(x[i], y[i], q)) << "q=" << q << " i=" << i;
      }
      std::vector<u64> alias = x;  // in place, as binary_op allows
      ASSERT_TRUE(veil::detail::mul_mod_simd(alias.data(), alias.data(), y.data(), n, Modulus(q)));
      EXPECT_EQ(alias, o) << "q=" << q;
    }
  }
}

TEST(CpuSimd, MulAddModMatchesTheWideProduct) {
  if (!have_ifma()) GTEST_SKIP() << "no AVX512-IFMA52 on this processor";
  std::mt19937_64 rng(8);
  const std::size_t n = 2048;
  for (int bits : {20, 40, 50}) {
    const u64 q = veil::generate_ntt_primes(bits, n, 1, {})[0];
    const std::vector<u64> x = residues(q, n, rng), y = residues(q, n, rng);
    const std::vector<u64> z = residues(q, n, rng);
    std::vector<u64> o = z;  // accumulating in place, as multiply_accumulate does
    ASSERT_TRUE(veil::detail::mul_add_mod_simd(o.data(), x.data(), y.data(), o.data(), n,
                                               Modulus(q)));
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(o[i], static_cast<u64>((u128(x[i]) * y[i] + z[i]) % q)) << "q=" << q;
    }
  }
}

TEST(CpuSimd, TensorMatchesTheWideProducts) {
  if (!have_ifma()) GTEST_SKIP() << "no AVX512-IFMA52 on this processor";
  std::mt19937_64 rng(4);
  const std::size_t n = 1024;
  for (int bits : {20, 40, 50}) {
    const u64 q = veil::generate_ntt_primes(bits, n, 1, {})[0];
    const std::vector<u64> a0 = residues(q, n, rng), a1 = residues(q, n, rng);
    const std::vector<u64> b0 = residues(q, n, rng), b1 = residues(q, n, rng);
    std::vector<u64> o0(n), o1(n), o2(n);
    ASSERT_TRUE(veil::detail::tensor_simd(o0.data(), o1.data(), o2.data(), a0.data(), a1.data(),
                                          b0.data(), b1.data(), n, Modulus(q)));
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(o0[i], oracle_mul(a0[i], b0[i], q));
      ASSERT_EQ(o1[i], static_cast<u64>((u128(a0[i]) * b1[i] + u128(a1[i]) * b0[i]) % q));
      ASSERT_EQ(o2[i], oracle_mul(a1[i], b1[i], q)) << "q=" << q << " i=" << i;
    }
  }
}

// With every row word and weight below 2^32 (`small`), up to 64 terms: 32 terms of 31-bit
// values against 128-bit sums; more than 15 terms are refused without `small`.
TEST(CpuSimd, DotConstTakesMoreTermsOfSmallWords) {
  if (veil::detail::cpu_simd() < veil::detail::CpuSimd::kAvx512) GTEST_SKIP() << "no AVX-512";
  std::mt19937_64 rng(64);
  const std::size_t n = 64, terms = 32;
  const u64 p = veil::generate_ntt_primes(31, 1024, 1, {})[0];
  std::vector<std::vector<u64>> rows(terms);
  std::vector<const u64*> y;
  std::vector<u64> w(terms);
  for (std::size_t t = 0; t < terms; ++t) {
    rows[t] = residues(u64(1) << 31, n, rng);  // includes 2^31 - 1
    y.push_back(rows[t].data());
    w[t] = t == 0 ? p - 1 : rng() % p;
  }
  std::vector<u64> o(n);
  EXPECT_FALSE(veil::detail::dot_const_simd(o.data(), y.data(), w.data(), terms, n, Modulus(p)));
  ASSERT_TRUE(veil::detail::dot_const_simd(o.data(), y.data(), w.data(), terms, n, Modulus(p),
                                           /*small=*/true));
  for (std::size_t i = 0; i < n; ++i) {
    u128 sum = 0;
    for (std::size_t t = 0; t < terms; ++t) sum += u128(rows[t][i]) * w[t];
    ASSERT_EQ(o[i], static_cast<u64>(sum % p)) << "i=" << i;
  }
  // The extremes of `small`: 64 terms of (2^32 - 1) (p - 1) for a 32-bit p, a carry into the
  // high word at almost every term (the one-multiply kernel's carries).
  const u64 p32 = veil::generate_ntt_primes(32, 1024, 1, {})[0];
  std::vector<u64> top(n, (u64(1) << 32) - 1), w64(64, p32 - 1);
  std::vector<const u64*> y64(64, top.data());
  ASSERT_TRUE(veil::detail::dot_const_simd(o.data(), y64.data(), w64.data(), 64, n,
                                           Modulus(p32), /*small=*/true));
  const u128 want = u128(64) * top[0] * (p32 - 1);
  for (std::size_t i = 0; i < n; ++i) ASSERT_EQ(o[i], static_cast<u64>(want % p32)) << i;
}

// The 32-bit overloads widen blocks of 512 words to the 64-bit kernels: several blocks and a
// partial one (n = 1544), outputs aliasing inputs as the callers allow, primes of 17..31 bits.
TEST(CpuSimd, ThirtyTwoBitWordsMatchTheWideProducts) {
  if (!have_ifma()) GTEST_SKIP() << "no AVX512-IFMA52 on this processor";
  std::mt19937_64 rng(32);
  const std::size_t n = 1544;  // 3 x 512 + 8
  const auto narrow = [](const std::vector<u64>& v) { return std::vector<u32>(v.begin(), v.end()); };
  for (int bits : {17, 25, 30, 31}) {
    const u64 q = veil::generate_ntt_primes(bits, 1024, 1, {})[0];
    const Modulus m(q);
    const std::vector<u32> x = narrow(residues(q, n, rng)), y = narrow(residues(q, n, rng));
    const std::vector<u32> z = narrow(residues(q, n, rng)), w = narrow(residues(q, n, rng));
    std::vector<u32> o = x;  // in place
    ASSERT_TRUE(veil::detail::mul_mod_simd(o.data(), o.data(), y.data(), n, m));
    std::vector<u32> acc = z;  // accumulating in place
    ASSERT_TRUE(veil::detail::mul_add_mod_simd(acc.data(), x.data(), y.data(), acc.data(), n, m));
    std::vector<u32> o0(n), o1(n), o2(n);
    ASSERT_TRUE(veil::detail::tensor_simd(o0.data(), o1.data(), o2.data(), x.data(), y.data(),
                                          z.data(), w.data(), n, m));
    for (std::size_t i = 0; i < n; ++i) {
      ASSERT_EQ(o[i], oracle_mul(x[i], y[i], q)) << "q=" << q << " i=" << i;
      ASSERT_EQ(acc[i], static_cast<u64>((u128(x[i]) * y[i] + z[i]) % q)) << "i=" << i;
      ASSERT_EQ(o0[i], oracle_mul(x[i], z[i], q));
      ASSERT_EQ(o1[i], static_cast<u64>((u128(x[i]) * w[i] + u128(y[i]) * z[i]) % q));
      ASSERT_EQ(o2[i], oracle_mul(y[i], w[i], q)) << "i=" << i;
    }
  }
  // n not a multiple of 8: refused, nothing written.
  std::vector<u32> o(12, 7u), x(12, 1u);
  EXPECT_FALSE(veil::detail::mul_mod_simd(o.data(), x.data(), x.data(), 12, Modulus(65537)));
  EXPECT_EQ(o, std::vector<u32>(12, 7u));
}

// r0[i] = sum_j d[j][from(i)] k0[j][i] mod q and r1 likewise with k1 (from(i) = perm[i], or i),
// checked against __int128 sums.
template <class W>
void expect_dot_mod(const std::vector<W>& r0, const std::vector<W>& r1,
                    const std::vector<std::vector<W>>& dv, const std::vector<std::vector<W>>& k0v,
                    const std::vector<std::vector<W>>& k1v, const u64* perm, u64 q, int level) {
  for (std::size_t i = 0; i < r0.size(); ++i) {
    const std::size_t from = perm ? perm[i] : i;
    u128 s0 = 0, s1 = 0;
    for (std::size_t j = 0; j < dv.size(); ++j) {
      s0 += u128(dv[j][from]) * k0v[j][i];
      s1 += u128(dv[j][from]) * k1v[j][i];
    }
    ASSERT_EQ(u64(r0[i]), static_cast<u64>(s0 % q)) << "level " << level << " q=" << q << " i " << i;
    ASSERT_EQ(u64(r1[i]), static_cast<u64>(s1 % q)) << "level " << level << " q=" << q << " i " << i;
  }
}

// The key-switching inner product, with and without a permutation of the digits' slots, at
// both vector levels (IFMA below 2^50; AVX512F/DQ's exact 128-bit sums up to 61-bit primes).
TEST(CpuSimd, DotModMatchesTheWideSums) {
  const int top = static_cast<int>(veil::detail::cpu_simd_detected());
  const int first = static_cast<int>(veil::detail::CpuSimd::kAvx512);
  if (top < first) GTEST_SKIP() << "no AVX-512 on this processor";
  std::mt19937_64 rng(9);
  const std::size_t n = 512;
  std::vector<u64> perm(n);
  for (std::size_t i = 0; i < n; ++i) perm[i] = (i * 5 + 3) % n;  // a permutation (5 odd)
  for (int level = first; level <= top; ++level) {
    veil::detail::set_cpu_simd(level);
    for (int bits : {30, 49, 55, 61}) {
      for (std::size_t terms : {1, 3, 15}) {
        const u64 q = veil::generate_ntt_primes(bits, n, 1, {})[0];
        std::vector<std::vector<u64>> dv, k0v, k1v;
        std::vector<const u64*> d, k0, k1;
        for (std::size_t j = 0; j < terms; ++j) {
          dv.push_back(residues(q, n, rng));
          k0v.push_back(residues(q, n, rng));
          k1v.push_back(residues(q, n, rng));
        }
        for (std::size_t j = 0; j < terms; ++j) {
          d.push_back(dv[j].data()), k0.push_back(k0v[j].data()), k1.push_back(k1v[j].data());
        }
        const u64* perm_data = perm.data();
        for (const u64* pp : {static_cast<const u64*>(nullptr), perm_data}) {
          std::vector<u64> r0(n), r1(n);
          ASSERT_TRUE(veil::detail::dot_mod_simd(r0.data(), r1.data(), d.data(), k0.data(),
                                                 k1.data(), terms, pp, n, Modulus(q)))
              << "level " << level << " bits " << bits;
          expect_dot_mod(r0, r1, dv, k0v, k1v, pp, q, level);
        }
      }
    }
  }
  veil::detail::set_cpu_simd(-1);
}

// The same on 32-bit words (widened per block of kDotWide32 coefficients to the 64-bit kernels):
// 20- to 31-bit primes, up to kDotTerms32 digits, with and without the permutation, n not a
// multiple of the block; refused with nothing written above kDotTerms32 digits or for n % 8 != 0.
TEST(CpuSimd, DotMod32MatchesTheWideSums) {
  const int top = static_cast<int>(veil::detail::cpu_simd_detected());
  const int first = static_cast<int>(veil::detail::CpuSimd::kAvx512);
  if (top < first) GTEST_SKIP() << "no AVX-512 on this processor";
  std::mt19937_64 rng(19);
  const std::size_t n = 520;  // 16 blocks of 32 and one of 8
  std::vector<u64> perm(n);
  for (std::size_t i = 0; i < n; ++i) perm[i] = (i * 7 + 5) % n;  // a permutation (7 prime to n)
  for (int level = first; level <= top; ++level) {
    veil::detail::set_cpu_simd(level);
    for (int bits : {20, 30, 31}) {
      const u64 q = veil::generate_ntt_primes(bits, 8, 1, {})[0];
      for (std::size_t terms : {std::size_t(1), std::size_t(13), veil::detail::kDotTerms32}) {
        // AVX512F/DQ's exact sums take up to 15 terms (IFMA's up to kDotTerms32)
        if (level == first && terms > 15) continue;
        std::vector<std::vector<u32>> dv, k0v, k1v;
        std::vector<const u32*> d, k0, k1;
        for (std::size_t j = 0; j < terms; ++j) {
          std::vector<u32> a(n), b(n), c(n);
          for (std::size_t i = 0; i < n; ++i) {
            a[i] = static_cast<u32>(i == 0 ? q - 1 : rng() % q);
            b[i] = static_cast<u32>(i == 0 ? q - 1 : rng() % q);
            c[i] = static_cast<u32>(rng() % q);
          }
          dv.push_back(a), k0v.push_back(b), k1v.push_back(c);
        }
        for (std::size_t j = 0; j < terms; ++j) {
          d.push_back(dv[j].data()), k0.push_back(k0v[j].data()), k1.push_back(k1v[j].data());
        }
        const u64* perm_data = perm.data();
      for (const u64* pp : {static_cast<const u64*>(nullptr), perm_data}) {
          std::vector<u32> r0(n), r1(n);
          ASSERT_TRUE(veil::detail::dot_mod_simd(r0.data(), r1.data(), d.data(), k0.data(),
                                                 k1.data(), terms, pp, n, Modulus(q)))
              << "level " << level << " bits " << bits << " terms " << terms;
          expect_dot_mod(r0, r1, dv, k0v, k1v, pp, q, level);
        }
      }
    }
  }
  veil::detail::set_cpu_simd(-1);
  // refusals: nothing written
  const u64 q = veil::generate_ntt_primes(30, 8, 1, {})[0];
  std::vector<u32> row(16, 1u), r0(16, 7u), r1(16, 7u);
  std::vector<const u32*> rows(veil::detail::kDotTerms32 + 1, row.data());
  EXPECT_FALSE(veil::detail::dot_mod_simd(r0.data(), r1.data(), rows.data(), rows.data(),
                                          rows.data(), rows.size(), nullptr, 16, Modulus(q)));
  EXPECT_FALSE(veil::detail::dot_mod_simd(r0.data(), r1.data(), rows.data(), rows.data(),
                                          rows.data(), 2, nullptr, 12, Modulus(q)));
  EXPECT_EQ(r0, std::vector<u32>(16, 7u));
  EXPECT_EQ(r1, std::vector<u32>(16, 7u));
}

// A base conversion's output limb from a few primes: sum_t y[t][i] w[t] mod p, y up to 61 bits
// (the inputs' own primes) and p of 30..61 bits, 1..15 terms, against 128-bit sums.
TEST(CpuSimd, DotConstMatchesTheWideSums) {
  if (veil::detail::cpu_simd() < veil::detail::CpuSimd::kAvx512) GTEST_SKIP() << "no AVX-512";
  std::mt19937_64 rng(12);
  const std::size_t n = 256;
  for (int bits : {30, 50, 61}) {
    const u64 p = veil::generate_ntt_primes(bits, n, 1, {})[0];
    for (std::size_t terms : {1, 2, 15}) {
      std::vector<std::vector<u64>> yv;
      std::vector<const u64*> y;
      std::vector<u64> w;
      for (std::size_t t = 0; t < terms; ++t) {
        yv.push_back(residues((u64(1) << 61) - 1, n, rng));  // any word below 2^61
        w.push_back(t == 0 ? p - 1 : rng() % p);
      }
      for (const auto& r : yv) y.push_back(r.data());
      std::vector<u64> o(n);
      ASSERT_TRUE(veil::detail::dot_const_simd(o.data(), y.data(), w.data(), terms, n,
                                               Modulus(p)));
      for (std::size_t i = 0; i < n; ++i) {
        u128 s = 0;
        for (std::size_t t = 0; t < terms; ++t) s += u128(yv[t][i]) * w[t];
        ASSERT_EQ(o[i], static_cast<u64>(s % p)) << "p=" << p << " terms=" << terms;
      }
    }
  }
}

// A conversion from one prime q0: y mod p (copy, one subtraction or Barrett, by q0's size
// against p), plus c where v is set.
TEST(CpuSimd, ReduceRowsMatchesTheRemainder) {
  if (veil::detail::cpu_simd() < veil::detail::CpuSimd::kAvx512) GTEST_SKIP() << "no AVX-512";
  std::mt19937_64 rng(13);
  const std::size_t n = 512;
  for (int qbits : {40, 60}) {
    for (int pbits : {36, 40, 41, 60}) {
      const u64 q0 = veil::generate_ntt_primes(qbits, n, 1, {})[0];
      const u64 p = veil::generate_ntt_primes(pbits, n, 1, {q0})[0];
      const std::vector<u64> y = residues(q0, n, rng);
      std::vector<u64> v(n);
      for (u64& b : v) b = rng() & 1;
      const u64 c = p - 1;
      for (const u64* vp : {static_cast<const u64*>(nullptr), static_cast<const u64*>(v.data())}) {
        std::vector<u64> o(n);
        ASSERT_TRUE(veil::detail::reduce_rows_simd(o.data(), y.data(), vp, n, q0, Modulus(p), c));
        for (std::size_t i = 0; i < n; ++i) {
          const u64 want = (y[i] % p + (vp != nullptr && vp[i] ? c : 0)) % p;
          ASSERT_EQ(o[i], want) << "q0=" << q0 << " p=" << p;
        }
      }
    }
  }
}

// BGV's correction: k in [0, t) read centered, times dk, plus o, modulo m (t of 16..60 bits, m
// smaller and larger than t), against integer arithmetic.
TEST(CpuSimd, BgvCorrectionMatchesTheCenteredProduct) {
  if (veil::detail::cpu_simd() < veil::detail::CpuSimd::kAvx512) GTEST_SKIP() << "no AVX-512";
  std::mt19937_64 rng(14);
  const std::size_t n = 256;
  for (int tbits : {16, 40, 60}) {
    for (int mbits : {30, 50, 61}) {
      const u64 t = veil::generate_ntt_primes(tbits, n, 1, {})[0];
      const u64 m = veil::generate_ntt_primes(mbits, n, 1, {t})[0];
      std::vector<u64> k = residues(t, n, rng), o = residues(m, n, rng);
      k[5] = t / 2, k[6] = t / 2 + 1, k[7] = 0;  // the centering's edges
      const std::vector<u64> o0 = o;
      const u64 dk = rng() % m;
      ASSERT_TRUE(veil::detail::bgv_correct_simd(o.data(), k.data(), n, t, Modulus(m), dk));
      for (std::size_t i = 0; i < n; ++i) {
        const bool neg = k[i] > t / 2;
        const u64 mag = (neg ? t - k[i] : k[i]) % m;
        const u64 km = neg ? (m - mag) % m : mag;
        ASSERT_EQ(o[i], static_cast<u64>((u128(km) * dk + o0[i]) % m)) << "t=" << t << " m=" << m;
      }
    }
  }
}

// Where the kernels do not apply they say so and write nothing: primes of 2^50 and more, a
// length not a multiple of 8, the scalar level (VEIL_CPU_SIMD=0 or set_cpu_simd(0)).
TEST(CpuSimd, RefusesWhatItCannotDo) {
  const std::size_t n = 64;
  std::vector<u64> x(n, 5), y(n, 7), o(n, 0);
  const u64 big = veil::generate_ntt_primes(51, n, 1, {})[0];
  EXPECT_FALSE(veil::detail::mul_mod_simd(o.data(), x.data(), y.data(), n, Modulus(big)));
  const u64 q = veil::generate_ntt_primes(40, n, 1, {})[0];
  EXPECT_FALSE(veil::detail::mul_mod_simd(o.data(), x.data(), y.data(), 12, Modulus(q)));
  veil::detail::set_cpu_simd(0);
  EXPECT_FALSE(veil::detail::mul_mod_simd(o.data(), x.data(), y.data(), n, Modulus(q)));
  veil::detail::set_cpu_simd(-1);
  EXPECT_EQ(o, std::vector<u64>(n, 0));
  if (have_ifma()) {
    EXPECT_TRUE(veil::detail::mul_mod_simd(o.data(), x.data(), y.data(), n, Modulus(q)));
    EXPECT_EQ(o, std::vector<u64>(n, 35));
  }
}

}  // namespace

// The encoders' range check and staging copy (narrow_below, copy_below) at every vector level
// (below AVX-512: narrow_below's SSE2 groups, which every x86-64 processor has; then AVX-512's):
// the words copied (narrowed to their low 32 bits) whatever the verdict, and the verdict true
// exactly when every word is below the bound, with the offending word in a vector group or in the
// tail, at bound - 1 (accepted), at bound and far above it (refused).
TEST(CpuSimd, RangeCheckedCopiesMatchTheScalarLoop) {
  using veil::detail::CpuSimd;
  const int top = static_cast<int>(veil::detail::cpu_simd_detected());
  std::mt19937_64 rng(41);
  const u64 bound = 114689;  // a batching plain modulus
  for (int level = 0; level <= top; ++level) {
    SCOPED_TRACE(veil::detail::cpu_simd_name(static_cast<CpuSimd>(level)));
    veil::detail::set_cpu_simd(level);
    for (std::size_t len : {0u, 1u, 7u, 8u, 9u, 64u, 1003u}) {
      std::vector<u64> s(len);
      for (u64& x : s) x = rng() % bound;
      if (len) s[len / 2] = bound - 1;
      std::vector<std::ptrdiff_t> bad_at{-1};  // -1: none
      if (len) bad_at.insert(bad_at.end(), {0, static_cast<std::ptrdiff_t>(len) - 1,
                                            static_cast<std::ptrdiff_t>(len / 2)});
      for (std::ptrdiff_t at : bad_at) {
        for (u64 bad : {bound, bound + 1, ~u64{0}, u64{1} << 32}) {
          std::vector<u64> in = s;
          if (at >= 0) in[static_cast<std::size_t>(at)] = bad;
          std::vector<u32> n32(len, 7);
          std::vector<u64> n64(len, 7);
          const bool ok32 = veil::detail::narrow_below(n32.data(), in.data(), len, bound);
          const bool ok64 = veil::detail::copy_below(n64.data(), in.data(), len, bound);
          EXPECT_EQ(ok32, at < 0) << "len " << len << " at " << at;
          EXPECT_EQ(ok64, at < 0) << "len " << len << " at " << at;
          for (std::size_t i = 0; i < len; ++i) {
            ASSERT_EQ(n32[i], static_cast<u32>(in[i])) << i;
            ASSERT_EQ(n64[i], in[i]) << i;
          }
          if (at < 0) break;  // the clean input once
        }
      }
    }
  }
  veil::detail::set_cpu_simd(-1);  // the levels below AVX-512 ran the SSE2 groups
}

// The inner product's scalar form (dot_mod_scalar, the CPU without AVX-512), on both word sizes,
// against __int128 sums: up to 60 terms (kMaxKeySwitchDigits) of primes up to 61 bits (64-bit
// words) or 31 bits (32-bit words), n not a multiple of its block (a tail), with and without a
// permutation of the digits' slots.
template <class W>
void expect_scalar_dot_mod(std::initializer_list<int> bit_sizes) {
  std::mt19937_64 rng(19);
  const std::size_t n = 600;  // two blocks of 256 and a tail
  std::vector<u64> perm(n);
  for (std::size_t i = 0; i < n; ++i) perm[i] = (i * 7 + 5) % n;  // a permutation (gcd(7, 600) = 1)
  for (int bits : bit_sizes) {
    for (std::size_t terms : {1, 13, 60}) {
      const u64 q = veil::generate_ntt_primes(bits, 512, 1, {})[0];
      std::vector<std::vector<W>> dv, k0v, k1v;
      std::vector<const W*> d, k0, k1;
      for (std::size_t j = 0; j < terms; ++j) {
        for (auto* v : {&dv, &k0v, &k1v}) {
          const std::vector<u64> r = residues(q, n, rng);
          v->emplace_back(r.begin(), r.end());
        }
      }
      for (std::size_t j = 0; j < terms; ++j) {
        d.push_back(dv[j].data()), k0.push_back(k0v[j].data()), k1.push_back(k1v[j].data());
      }
      const u64* perm_data = perm.data();
      for (const u64* pp : {static_cast<const u64*>(nullptr), perm_data}) {
        std::vector<W> r0(n, 7), r1(n, 7);
        veil::detail::dot_mod_scalar<W>(r0.data(), r1.data(), d.data(), k0.data(), k1.data(),
                                        terms, pp, n, Modulus(q));
        expect_dot_mod(r0, r1, dv, k0v, k1v, pp, q, 0);
      }
    }
  }
}

TEST(CpuSimd, DotModScalarMatchesTheWideSums) {
  expect_scalar_dot_mod<u64>({30, 49, 55, 61});
  expect_scalar_dot_mod<u32>({20, 30, 31});
}
