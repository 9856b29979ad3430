// Element-wise modular products of the CPU backend with AVX512-IFMA52 (eltwise_avx512_host.cpp),
// chosen at run time like the NTT's kernels (ntt_simd.h: the same VEIL_CPU_SIMD switch), for
// primes below 2^50 on 64-bit words (the inner product also with AVX512F/DQ up to 2^62). Each
// returns false, touching nothing, where it does not apply (no IFMA, a larger prime, n not a
// multiple of 8); the caller then runs its scalar loop.
// Inputs must be reduced (below q), as every stored word is; outputs are reduced.
#pragma once
#include <cstddef>

#include "veil/core/modarith.h"

namespace veil::detail {

/// o[i] = x[i] * y[i] mod q for i < n (o may alias x or y).
bool mul_mod_simd(u64* o, const u64* x, const u64* y, std::size_t n, const Modulus& q);

/// o[i] = x[i] * y[i] + z[i] mod q for i < n (o may alias x, y or z).
bool mul_add_mod_simd(u64* o, const u64* x, const u64* y, const u64* z, std::size_t n,
                      const Modulus& q);

/// The tensor product of two ciphertexts on one limb: o0 = a0 b0, o1 = a0 b1 + a1 b0,
/// o2 = a1 b1 mod q (no output may alias an input).
bool tensor_simd(u64* o0, u64* o1, u64* o2, const u64* a0, const u64* a1, const u64* b0,
                 const u64* b1, std::size_t n, const Modulus& q);

/// The inner product of key switching on one limb: r0[i] = sum_j d[j][from(i)] k0[j][i] mod q
/// and r1[i] likewise with k1, for i < n and j < terms, from(i) = perm[i] (the Galois
/// automorphism's source slot) or i when perm is null. With IFMA (q < 2^50) each product is
/// reduced and their sum at the end (terms q below 2^(2 bitlen(q))); with AVX512F/DQ (any
/// q < 2^62, at most 15 terms) the sums are exact 128-bit words, each reduced once.
bool dot_mod_simd(u64* r0, u64* r1, const u64* const* d, const u64* const* k0,
                  const u64* const* k1, std::size_t terms, const u64* perm, std::size_t n,
                  const Modulus& q);

/// The scalar form of dot_mod_simd (any word, any q its words hold, any number of terms whose
/// exact sum fits WideAcc: 60 terms of 61-bit primes), for processors without AVX-512: digit
/// after digit over blocks of kScalarDotBlock coefficients with exact wide sums, each reduced
/// once, so the words of a coefficient-by-coefficient dot product. One digit row and its two key
/// rows are read at a time: the key-switching inner product read all 3 terms rows at once per
/// coefficient (24 streams at 8 digits), more than a core's prefetchers follow, and stalled on
/// its loads (bench/NOTES.md, "The CPU backend without AVX-512").
inline constexpr std::size_t kScalarDotBlock = 256;
template <class W>
void dot_mod_scalar(W* r0, W* r1, const W* const* d, const W* const* k0, const W* const* k1,
                    std::size_t terms, const u64* perm, std::size_t n, const Modulus& q) {
  for (std::size_t b0 = 0; b0 < n; b0 += kScalarDotBlock) {
    const std::size_t len = n - b0 < kScalarDotBlock ? n - b0 : kScalarDotBlock;
    WideAcc<W> s0[kScalarDotBlock], s1[kScalarDotBlock];
    for (std::size_t j = 0; j < terms; ++j) {
      const W* dj = d[j];
      const W* aj = k0[j] + b0;
      const W* bj = k1[j] + b0;
      if (perm != nullptr) {
        const u64* from = perm + b0;
        for (std::size_t i = 0; i < len; ++i) {
          const W x = dj[from[i]];
          s0[i].add(x, aj[i]);
          s1[i].add(x, bj[i]);
        }
      } else {
        const W* dx = dj + b0;
        for (std::size_t i = 0; i < len; ++i) {
          s0[i].add(dx[i], aj[i]);
          s1[i].add(dx[i], bj[i]);
        }
      }
    }
    for (std::size_t i = 0; i < len; ++i) {
      r0[b0 + i] = static_cast<W>(s0[i].reduce(q));
      r1[b0 + i] = static_cast<W>(s1[i].reduce(q));
    }
  }
}

/// One output limb of a conversion from one prime q0 (AVX512F/DQ): o[i] = y[i] mod p, plus c
/// mod p where v[i] != 0, for y[i] < q0 < 2^62 and c < p (rns/base_converter.cpp's
/// convert_one_prime_cpu). False where it does not apply (no AVX-512, n not a multiple of 8).
bool reduce_rows_simd(u64* o, const u64* y, const u64* v, std::size_t n, u64 q0,
                      const Modulus& p, u64 c);

/// o[i] = sum_t y[t][i] w[t] mod p for i < n, t < terms (AVX512F/DQ, exact 128-bit sums): an
/// output limb of a base conversion from a few primes, y[t] < 2^62 and w[t] < p < 2^62. False
/// where it does not apply (no AVX-512, more than kDotTerms terms, n not a multiple of 8).
/// `small`: the caller guarantees y[t] < 2^32 and w[t] < 2^32 (32-bit words), so each product
/// is below 2^64 and up to kDotTermsSmall terms fit the 128-bit sum.
inline constexpr std::size_t kDotTerms = 15, kDotTermsSmall = 64;
bool dot_const_simd(u64* o, const u64* const* y, const u64* w, std::size_t terms, std::size_t n,
                    const Modulus& p, bool small = false);

/// BGV's ModDown correction on one kept limb (rns/mod_down_ntt.cpp, AVX512F/DQ): with k_c in
/// [0, t) read centered (k - t above t / 2), o[c] = k_c * dk + o[c] mod m for c < n; o < m,
/// dk < m. False where it does not apply (no AVX-512, n not a multiple of 8, t or m of 62 bits
/// or more).
bool bgv_correct_simd(u64* o, const u64* k, std::size_t n, u64 t, const Modulus& m, u64 dk);

/// d[i] = s[i] (zero-extended) / d[i] = the low 32 bits of s[i], for i < len: the widening of
/// 32-bit words to the 64-bit kernels and back (AVX-512 conversions where present).
void widen_words(u64* d, const u32* s, std::size_t len);
void narrow_words(u32* d, const u64* s, std::size_t len);

/// d[i] = the low 32 bits of s[i] / d[i] = s[i], for i < len, in one pass that also tests every
/// s[i] against `bound`: true when all are below it (the encoders' range check and staging copy;
/// AVX-512 where present, else narrow_below's SSE2 groups on x86-64 for bounds up to 2^32, else
/// the scalar loop; d is written either way).
bool narrow_below(u32* d, const u64* s, std::size_t len, u64 bound);
bool copy_below(u64* d, const u64* s, std::size_t len, u64 bound);

/// The same three on 32-bit words (primes below 2^31): widened per block of 512 words to the
/// 64-bit kernels, with the same results and the same false where those do not apply.
bool mul_mod_simd(u32* o, const u32* x, const u32* y, std::size_t n, const Modulus& q);
bool mul_add_mod_simd(u32* o, const u32* x, const u32* y, const u32* z, std::size_t n,
                      const Modulus& q);
bool tensor_simd(u32* o0, u32* o1, u32* o2, const u32* a0, const u32* a1, const u32* b0,
                 const u32* b1, std::size_t n, const Modulus& q);
/// dot_mod_simd on 32-bit words: the IFMA kernel reads the 32-bit rows itself (loaded and
/// gathered zero-extended into 64-bit lanes, results stored narrowed); the AVX512F/DQ kernel
/// takes blocks of kDotWide32 coefficients, each digit row gathered (through perm) and every key
/// row widened to 64-bit scratch on the stack. The same words; false, with nothing written, where
/// the 64-bit kernels do not apply or terms exceeds kDotTerms32.
inline constexpr std::size_t kDotTerms32 = 64, kDotWide32 = 32;
bool dot_mod_simd(u32* r0, u32* r1, const u32* const* d, const u32* const* k0,
                  const u32* const* k1, std::size_t terms, const u64* perm, std::size_t n,
                  const Modulus& q);

}  // namespace veil::detail
