// Element-wise modular products with AVX512-IFMA52 (eltwise_simd.h). Host-only, built for IFMA
// with a target attribute and called only where the processor has it (ntt_simd.h's detection).
//
// x y mod q for x, y < q < 2^50 is Barrett's reduction (Menezes et al., Handbook of Applied
// Cryptography, Alg. 14.42, radix 2) with k = bitlen(q) <= 50: the 104-bit product comes out of
// two 52-bit multiply-adds (lo, hi); q1 = floor(x y / 2^(k-1)) < 2^(k+1) and
// mu = floor(2^(2k) / q) < 2^(k+1) both fit 52 bits, q3 = floor(q1 mu / 2^(k+1)) from two more,
// and x y - q3 q, computed modulo 2^52, lies in [0, 3q): two conditional subtractions. Intel
// HEXL's EltwiseMultMod takes the same route with IFMA (Boemer et al., WAHC 2021, §4).
#include "veil/ring/eltwise_simd.h"

#include "veil/ring/ntt_simd.h"

#include "veil/ring/x86_simd.h"

namespace veil::detail {

#if VEIL_X86_SIMD
namespace {

#define VEIL_TI __attribute__((target("avx512f,avx512dq,avx512ifma"), always_inline)) inline
#define VEIL_TF __attribute__((target("avx512f,avx512dq,avx512ifma")))
using V = __m512i;

// Barrett's constants of one prime (scalars: built outside the IFMA-targeted code).
struct BarrettConst {
  u64 q, mu;
  int k;
};

BarrettConst barrett_for(const Modulus& m) {
  const u64 q = m.value;
  int k = 0;
  while ((q >> k) != 0) ++k;
  return {q, static_cast<u64>((static_cast<u128>(1) << (2 * k)) / q), k};
}

// The same as vectors and shift counts: k - 1, k + 1, 53 - k, 51 - k.
struct Barrett52 {
  V q, mu, mask;
  __m128i k_minus_1, k_plus_1, up_hi, up_t;
};

VEIL_TI Barrett52 vectors(const BarrettConst& c) {
  return {_mm512_set1_epi64(static_cast<long long>(c.q)),
          _mm512_set1_epi64(static_cast<long long>(c.mu)), _mm512_set1_epi64((1LL << 52) - 1),
          _mm_set_epi64x(0, c.k - 1), _mm_set_epi64x(0, c.k + 1), _mm_set_epi64x(0, 53 - c.k),
          _mm_set_epi64x(0, 51 - c.k)};
}

using x86::mulhi64;
using x86::sub_if_ge;

// The 104-bit x y as (lo, hi) in 52-bit halves, reduced.
VEIL_TI V reduce104(V lo, V hi, const Barrett52& b) {
  const V zero = _mm512_setzero_si512();
  const V q1 = _mm512_or_si512(_mm512_sll_epi64(hi, b.up_hi), _mm512_srl_epi64(lo, b.k_minus_1));
  const V t_lo = _mm512_madd52lo_epu64(zero, q1, b.mu);
  const V t_hi = _mm512_madd52hi_epu64(zero, q1, b.mu);
  const V q3 = _mm512_or_si512(_mm512_sll_epi64(t_hi, b.up_t), _mm512_srl_epi64(t_lo, b.k_plus_1));
  const V r = _mm512_and_si512(_mm512_sub_epi64(lo, _mm512_madd52lo_epu64(zero, q3, b.q)), b.mask);
  return sub_if_ge(sub_if_ge(r, b.q), b.q);
}

VEIL_TI V mul_mod(V x, V y, const Barrett52& b) {
  const V zero = _mm512_setzero_si512();
  return reduce104(_mm512_madd52lo_epu64(zero, x, y), _mm512_madd52hi_epu64(zero, x, y), b);
}

VEIL_TF void mul_mod_ifma(u64* o, const u64* x, const u64* y, std::size_t n,
                          const BarrettConst& c) {
  const Barrett52 b = vectors(c);
  for (std::size_t i = 0; i < n; i += 8) {
    _mm512_storeu_si512(o + i,
                        mul_mod(_mm512_loadu_si512(x + i), _mm512_loadu_si512(y + i), b));
  }
}

VEIL_TF void mul_add_mod_ifma(u64* o, const u64* x, const u64* y, const u64* z, std::size_t n,
                              const BarrettConst& c) {
  const Barrett52 b = vectors(c);
  for (std::size_t i = 0; i < n; i += 8) {
    const V p = mul_mod(_mm512_loadu_si512(x + i), _mm512_loadu_si512(y + i), b);
    _mm512_storeu_si512(o + i, sub_if_ge(_mm512_add_epi64(p, _mm512_loadu_si512(z + i)), b.q));
  }
}

VEIL_TF void tensor_ifma(u64* o0, u64* o1, u64* o2, const u64* a0, const u64* a1, const u64* b0,
                         const u64* b1, std::size_t n, const BarrettConst& c) {
  const Barrett52 b = vectors(c);
  for (std::size_t i = 0; i < n; i += 8) {
    const V x0 = _mm512_loadu_si512(a0 + i), x1 = _mm512_loadu_si512(a1 + i);
    const V y0 = _mm512_loadu_si512(b0 + i), y1 = _mm512_loadu_si512(b1 + i);
    _mm512_storeu_si512(o0 + i, mul_mod(x0, y0, b));
    const V mid = _mm512_add_epi64(mul_mod(x0, y1, b), mul_mod(x1, y0, b));
    _mm512_storeu_si512(o1 + i, sub_if_ge(mid, b.q));
    _mm512_storeu_si512(o2 + i, mul_mod(x1, y1, b));
  }
}

// Eight words of a row as 64-bit lanes (32-bit words zero-extended in the register), the gather
// of eight through perm, and the store of eight lanes as words W.
VEIL_TI V load8(const u64* p) { return _mm512_loadu_si512(p); }
VEIL_TI V load8(const u32* p) {
  return _mm512_cvtepu32_epi64(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(p)));
}
VEIL_TI V gather8(V idx, const u64* row) {
  return _mm512_i64gather_epi64(idx, reinterpret_cast<const long long*>(row), 8);
}
VEIL_TI V gather8(V idx, const u32* row) {
  return _mm512_cvtepu32_epi64(_mm512_i64gather_epi32(idx, reinterpret_cast<const int*>(row), 4));
}
VEIL_TI void store8(u64* p, V v) { _mm512_storeu_si512(p, v); }
VEIL_TI void store8(u32* p, V v) {
  _mm256_storeu_si256(reinterpret_cast<__m256i*>(p), _mm512_cvtepi64_epi32(v));
}

// W = u64, or u32 read and written as 32-bit words (the same arithmetic on the zero-extended
// lanes, so the same results as the widened rows).
template <class W>
VEIL_TF void dot_mod_ifma(W* r0, W* r1, const W* const* d, const W* const* k0,
                          const W* const* k1, std::size_t terms, const u64* perm,
                          std::size_t n, const BarrettConst& c) {
  const Barrett52 b = vectors(c);
  const V mask = b.mask;
  for (std::size_t i = 0; i < n; i += 8) {
    V acc0 = _mm512_setzero_si512(), acc1 = _mm512_setzero_si512();
    const V idx = perm ? _mm512_loadu_si512(perm + i) : _mm512_setzero_si512();
    for (std::size_t j = 0; j < terms; ++j) {
      const V dv = perm ? gather8(idx, d[j]) : load8(d[j] + i);
      acc0 = _mm512_add_epi64(acc0, mul_mod(dv, load8(k0[j] + i), b));
      acc1 = _mm512_add_epi64(acc1, mul_mod(dv, load8(k1[j] + i), b));
    }
    // sums below terms q < 2^(2k): one more reduction, the sum as its two 52-bit halves
    store8(r0 + i, reduce104(_mm512_and_si512(acc0, mask), _mm512_srli_epi64(acc0, 52), b));
    store8(r1 + i, reduce104(_mm512_and_si512(acc1, mask), _mm512_srli_epi64(acc1, 52), b));
  }
}

#undef VEIL_TI
#undef VEIL_TF

// ---- AVX512F/DQ (any prime below 2^62): the inner product's sums as exact 128-bit words ----
#define VEIL_TD __attribute__((target("avx512f,avx512dq"), always_inline)) inline
#define VEIL_FD __attribute__((target("avx512f,avx512dq")))

// (hi, lo) += x y for x, y < 2^62: the product from four 32 x 32-bit products (the middle sum
// stays below 2^63), the carries by unsigned compares.
VEIL_TD void mac128(__m512i x, __m512i y, __m512i& hi, __m512i& lo) {
  const __m512i one = _mm512_set1_epi64(1);
  const __m512i x1 = _mm512_srli_epi64(x, 32), y1 = _mm512_srli_epi64(y, 32);
  const __m512i p00 = _mm512_mul_epu32(x, y), p11 = _mm512_mul_epu32(x1, y1);
  const __m512i mid = _mm512_add_epi64(_mm512_mul_epu32(x, y1), _mm512_mul_epu32(x1, y));
  const __m512i plo = _mm512_add_epi64(p00, _mm512_slli_epi64(mid, 32));
  __m512i phi = _mm512_add_epi64(p11, _mm512_srli_epi64(mid, 32));
  phi = _mm512_mask_add_epi64(phi, _mm512_cmplt_epu64_mask(plo, p00), phi, one);
  lo = _mm512_add_epi64(lo, plo);
  hi = _mm512_add_epi64(hi, phi);
  hi = _mm512_mask_add_epi64(hi, _mm512_cmplt_epu64_mask(lo, plo), hi, one);
}

VEIL_FD void dot_mod_dq(u64* r0, u64* r1, const u64* const* d, const u64* const* k0,
                        const u64* const* k1, std::size_t terms, const u64* perm, std::size_t n,
                        const Modulus& m) {
  alignas(64) u64 h0[8], l0[8], h1[8], l1[8];
  for (std::size_t i = 0; i < n; i += 8) {
    __m512i a0h = _mm512_setzero_si512(), a0l = a0h, a1h = a0h, a1l = a0h;
    const __m512i idx = perm ? _mm512_loadu_si512(perm + i) : _mm512_setzero_si512();
    for (std::size_t j = 0; j < terms; ++j) {
      const __m512i dv = perm
          ? _mm512_i64gather_epi64(idx, reinterpret_cast<const long long*>(d[j]), 8)
          : _mm512_loadu_si512(d[j] + i);
      mac128(dv, _mm512_loadu_si512(k0[j] + i), a0h, a0l);
      mac128(dv, _mm512_loadu_si512(k1[j] + i), a1h, a1l);
    }
    _mm512_store_si512(h0, a0h), _mm512_store_si512(l0, a0l);
    _mm512_store_si512(h1, a1h), _mm512_store_si512(l1, a1l);
    for (int t = 0; t < 8; ++t) {  // below terms q^2 < 2^128: Barrett with the two-word ratio
      r0[i + t] = reduce_wide(reduce_word(h0[t], m), l0[t], m);
      r1[i + t] = reduce_wide(reduce_word(h1[t], m), l1[t], m);
    }
  }
}

// reduce_word on vectors: x mod p for any word x (Barrett with the high ratio word).
VEIL_TD __m512i reduce_word_dq(__m512i x, __m512i pv, __m512i ratio) {
  const __m512i qhat = mulhi64(x, ratio);
  return sub_if_ge(_mm512_sub_epi64(x, _mm512_mullo_epi64(qhat, pv)), pv);
}

VEIL_FD void reduce_rows_dq(u64* o, const u64* y, const u64* v, std::size_t n, u64 q0,
                            const Modulus& p, u64 c) {
  const __m512i pv = _mm512_set1_epi64(static_cast<long long>(p.value));
  const __m512i cv = _mm512_set1_epi64(static_cast<long long>(c));
  const __m512i ratio = _mm512_set1_epi64(static_cast<long long>(p.ratio_hi));
  const int mode = q0 <= p.value ? 0 : (q0 <= 2 * p.value ? 1 : 2);
  for (std::size_t i = 0; i < n; i += 8) {
    __m512i x = _mm512_loadu_si512(y + i);
    if (mode == 1) {
      x = sub_if_ge(x, pv);
    } else if (mode == 2) {
      x = reduce_word_dq(x, pv, ratio);
    }
    if (v != nullptr) {
      const __m512i vv = _mm512_loadu_si512(v + i);
      x = _mm512_mask_add_epi64(x, _mm512_test_epi64_mask(vv, vv), x, cv);
      x = sub_if_ge(x, pv);
    }
    _mm512_storeu_si512(o + i, x);
  }
}

VEIL_FD void dot_const_dq(u64* o, const u64* const* y, const u64* w, std::size_t terms,
                          std::size_t n, const Modulus& p) {
  alignas(64) u64 hs[8], ls[8];
  for (std::size_t i = 0; i < n; i += 8) {
    __m512i hi = _mm512_setzero_si512(), lo = hi;
    for (std::size_t t = 0; t < terms; ++t) {
      mac128(_mm512_loadu_si512(y[t] + i), _mm512_set1_epi64(static_cast<long long>(w[t])), hi,
             lo);
    }
    _mm512_store_si512(hs, hi), _mm512_store_si512(ls, lo);
    for (int k = 0; k < 8; ++k) o[i + k] = reduce_wide(reduce_word(hs[k], p), ls[k], p);
  }
}

// The same sums when every y[t] and w[t] is below 2^32 (`small`): each product is one
// vpmuludq, exact in 64 bits, and the 128-bit sum takes a carry per term: a quarter of
// mac128's multiplies. The same words.
VEIL_FD void dot_const_small_dq(u64* o, const u64* const* y, const u64* w, std::size_t terms,
                                std::size_t n, const Modulus& p) {
  alignas(64) u64 hs[8], ls[8];
  const __m512i one = _mm512_set1_epi64(1);
  for (std::size_t i = 0; i < n; i += 8) {
    __m512i hi = _mm512_setzero_si512(), lo = hi;
    for (std::size_t t = 0; t < terms; ++t) {
      const __m512i prod = _mm512_mul_epu32(_mm512_loadu_si512(y[t] + i),
                                            _mm512_set1_epi64(static_cast<long long>(w[t])));
      lo = _mm512_add_epi64(lo, prod);
      hi = _mm512_mask_add_epi64(hi, _mm512_cmplt_epu64_mask(lo, prod), hi, one);
    }
    _mm512_store_si512(hs, hi), _mm512_store_si512(ls, lo);
    for (int k = 0; k < 8; ++k) o[i + k] = reduce_wide(reduce_word(hs[k], p), ls[k], p);
  }
}

VEIL_FD void bgv_correct_dq(u64* o, const u64* k, std::size_t n, u64 t, const Modulus& m,
                            u64 dk) {
  const __m512i pv = _mm512_set1_epi64(static_cast<long long>(m.value));
  const __m512i ratio = _mm512_set1_epi64(static_cast<long long>(m.ratio_hi));
  const __m512i tv = _mm512_set1_epi64(static_cast<long long>(t));
  const __m512i half = _mm512_set1_epi64(static_cast<long long>(t >> 1));
  const __m512i w = _mm512_set1_epi64(static_cast<long long>(dk));
  const __m512i ws = _mm512_set1_epi64(static_cast<long long>(shoup_quotient(dk, m.value)));
  const __m512i zero = _mm512_setzero_si512();
  for (std::size_t i = 0; i < n; i += 8) {
    const __m512i kv = _mm512_loadu_si512(k + i);
    const __mmask8 neg = _mm512_cmpgt_epu64_mask(kv, half);
    // |k| mod m, then negated where k stands for k - t (neg_mod: 0 stays 0)
    __m512i a = reduce_word_dq(_mm512_mask_sub_epi64(kv, neg, tv, kv), pv, ratio);
    const __mmask8 flip = neg & _mm512_cmpneq_epu64_mask(a, zero);
    a = _mm512_mask_sub_epi64(a, flip, pv, a);
    // a dk mod m (Shoup), plus o
    const __m512i r = sub_if_ge(x86::mul_shoup_lazy(a, w, ws, pv), pv);
    _mm512_storeu_si512(o + i, sub_if_ge(_mm512_add_epi64(r, _mm512_loadu_si512(o + i)), pv));
  }
}

#undef VEIL_TD
#undef VEIL_FD

bool ifma_applies(std::size_t n, const Modulus& m) {
  return n % 8 == 0 && m.value < (u64(1) << 50) && m.value > 2 &&
         cpu_simd() == CpuSimd::kAvx512Ifma;
}

// dot_mod_ifma's condition: the sum of `terms` reduced products below 2^(2k) for the final
// Barrett reduction, and within a 64-bit word.
bool dot_mod_ifma_applies(std::size_t terms, std::size_t n, const Modulus& q) {
  if (!ifma_applies(n, q)) return false;
  const BarrettConst c = barrett_for(q);
  const u128 sum_bound = static_cast<u128>(terms) * q.value;
  return (sum_bound >> (2 * c.k)) == 0 && (sum_bound >> 64) == 0;
}

}  // namespace

bool mul_mod_simd(u64* o, const u64* x, const u64* y, std::size_t n, const Modulus& q) {
  if (!ifma_applies(n, q)) return false;
  mul_mod_ifma(o, x, y, n, barrett_for(q));
  return true;
}

bool mul_add_mod_simd(u64* o, const u64* x, const u64* y, const u64* z, std::size_t n,
                      const Modulus& q) {
  if (!ifma_applies(n, q)) return false;
  mul_add_mod_ifma(o, x, y, z, n, barrett_for(q));
  return true;
}

bool tensor_simd(u64* o0, u64* o1, u64* o2, const u64* a0, const u64* a1, const u64* b0,
                 const u64* b1, std::size_t n, const Modulus& q) {
  if (!ifma_applies(n, q)) return false;
  tensor_ifma(o0, o1, o2, a0, a1, b0, b1, n, barrett_for(q));
  return true;
}

bool dot_mod_simd(u64* r0, u64* r1, const u64* const* d, const u64* const* k0,
                  const u64* const* k1, std::size_t terms, const u64* perm, std::size_t n,
                  const Modulus& q) {
  if (terms == 0 || n % 8 != 0) return false;
  if (dot_mod_ifma_applies(terms, n, q)) {
    dot_mod_ifma(r0, r1, d, k0, k1, terms, perm, n, barrett_for(q));
    return true;
  }
  // the sum of terms products below 2^128: terms < 2^(128 - 2 bitlen(q)), with q < 2^62
  if (cpu_simd() < CpuSimd::kAvx512 || q.value >= (u64(1) << 62) || terms > 15) return false;
  dot_mod_dq(r0, r1, d, k0, k1, terms, perm, n, q);
  return true;
}

bool reduce_rows_simd(u64* o, const u64* y, const u64* v, std::size_t n, u64 q0,
                      const Modulus& p, u64 c) {
  if (n % 8 != 0 || cpu_simd() < CpuSimd::kAvx512 || q0 >= (u64(1) << 62)) return false;
  reduce_rows_dq(o, y, v, n, q0, p, c);
  return true;
}

bool dot_const_simd(u64* o, const u64* const* y, const u64* w, std::size_t terms, std::size_t n,
                    const Modulus& p, bool small) {
  if (n % 8 != 0 || cpu_simd() < CpuSimd::kAvx512 || terms == 0 ||
      terms > (small ? kDotTermsSmall : kDotTerms) || p.value >= (u64(1) << 62)) {
    return false;
  }
  if (small) {
    dot_const_small_dq(o, y, w, terms, n, p);
  } else {
    dot_const_dq(o, y, w, terms, n, p);
  }
  return true;
}

bool bgv_correct_simd(u64* o, const u64* k, std::size_t n, u64 t, const Modulus& m, u64 dk) {
  const u64 top = u64(1) << 62;
  if (n % 8 != 0 || cpu_simd() < CpuSimd::kAvx512 || t >= top || m.value >= top) return false;
  bgv_correct_dq(o, k, n, t, m, dk);
  return true;
}

#else

bool bgv_correct_simd(u64*, const u64*, std::size_t, u64, const Modulus&, u64) { return false; }
bool dot_const_simd(u64*, const u64* const*, const u64*, std::size_t, std::size_t,
                    const Modulus&, bool) {
  return false;
}
bool reduce_rows_simd(u64*, const u64*, const u64*, std::size_t, u64, const Modulus&, u64) {
  return false;
}
bool dot_mod_simd(u64*, u64*, const u64* const*, const u64* const*, const u64* const*,
                  std::size_t, const u64*, std::size_t, const Modulus&) {
  return false;
}
bool mul_mod_simd(u64*, const u64*, const u64*, std::size_t, const Modulus&) { return false; }
bool mul_add_mod_simd(u64*, const u64*, const u64*, const u64*, std::size_t, const Modulus&) {
  return false;
}
bool tensor_simd(u64*, u64*, u64*, const u64*, const u64*, const u64*, const u64*, std::size_t,
                 const Modulus&) {
  return false;
}

#endif

// ---- 32-bit words through the 64-bit kernels --------------------------------------------------
// Blocks of kWide words are widened into 64-bit scratch on the stack, run through the kernel and
// narrowed back (the NTT's cpu_transform_widened does the same per limb). Whether the kernel
// applies depends on n % 8, q and the CPU only, so the first block decides for all: on false
// nothing has been written. Outputs may alias inputs: each block is read whole before its
// results are written.
namespace {
constexpr std::size_t kWide = 512;

#if VEIL_X86_SIMD
// The whole groups of eight words; each returns how many words it converted.
__attribute__((target("avx512f"))) std::size_t widen_avx512(u64* d, const u32* s,
                                                             std::size_t len) {
  std::size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    _mm512_storeu_si512(d + i, _mm512_cvtepu32_epi64(_mm256_loadu_si256(
                                   reinterpret_cast<const __m256i*>(s + i))));
  }
  return i;
}
__attribute__((target("avx512f"))) std::size_t narrow_avx512(u32* d, const u64* s,
                                                              std::size_t len) {
  std::size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(d + i),
                        _mm512_cvtepi64_epi32(_mm512_loadu_si512(s + i)));
  }
  return i;
}
// narrow_below / copy_below's whole groups of eight words: the words stored, the lanes at or
// above `bound` OR-ed into *hit; returns how many words it converted.
template <bool kNarrow>
__attribute__((target("avx512f"))) std::size_t below_avx512(void* d, const u64* s,
                                                            std::size_t len, u64 bound,
                                                            bool* hit) {
  const __m512i b = _mm512_set1_epi64(static_cast<long long>(bound));
  __mmask8 any = 0;
  std::size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    const __m512i v = _mm512_loadu_si512(s + i);
    any |= _mm512_cmpge_epu64_mask(v, b);
    if constexpr (kNarrow) {
      _mm256_storeu_si256(reinterpret_cast<__m256i*>(static_cast<u32*>(d) + i),
                          _mm512_cvtepi64_epi32(v));
    } else {
      _mm512_storeu_si512(static_cast<u64*>(d) + i, v);
    }
  }
  *hit = any != 0;
  return i;
}
#endif
}  // namespace

#if VEIL_X86_SIMD
namespace {
// narrow_below's groups of eight words with SSE2 (every x86-64 processor; the baseline build's
// scalar loop took ~1.5 ns a word, this ~0.3), for 0 < bound <= 2^32: a word is below the bound
// when its high half is 0 and its low half minus the bound borrows (bit 63 of the 64-bit
// difference). Returns how many words it converted; *hit as below_avx512's.
std::size_t narrow_below_sse2(u32* d, const u64* s, std::size_t len, u64 bound, bool* hit) {
  const __m128i lo32 = _mm_set1_epi64x(0xffffffffLL);
  const __m128i b = _mm_set1_epi64x(static_cast<long long>(bound));
  __m128i high = _mm_setzero_si128(), borrow = _mm_set1_epi64x(-1);
  auto check = [&](__m128i v) {
    high = _mm_or_si128(high, _mm_srli_epi64(v, 32));
    borrow = _mm_and_si128(borrow, _mm_sub_epi64(_mm_and_si128(v, lo32), b));
  };
  auto low_halves = [](__m128i x, __m128i y) {  // (x0, x1), (y0, y1) -> their low 32 bits
    return _mm_unpacklo_epi64(_mm_shuffle_epi32(x, 0x08), _mm_shuffle_epi32(y, 0x08));
  };
  std::size_t i = 0;
  for (; i + 8 <= len; i += 8) {
    const __m128i* in = reinterpret_cast<const __m128i*>(s + i);
    const __m128i v0 = _mm_loadu_si128(in), v1 = _mm_loadu_si128(in + 1);
    const __m128i v2 = _mm_loadu_si128(in + 2), v3 = _mm_loadu_si128(in + 3);
    check(v0), check(v1), check(v2), check(v3);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i), low_halves(v0, v1));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(d + i + 4), low_halves(v2, v3));
  }
  alignas(16) u64 h[2], w[2];
  _mm_store_si128(reinterpret_cast<__m128i*>(h), high);
  _mm_store_si128(reinterpret_cast<__m128i*>(w), borrow);
  *hit = (h[0] | h[1]) != 0 || ((w[0] & w[1]) >> 63) == 0;
  return i;
}
}  // namespace
#endif

bool narrow_below(u32* d, const u64* s, std::size_t len, u64 bound) {
  std::size_t i = 0;
  bool hit = false;
#if VEIL_X86_SIMD
  if (cpu_simd() >= CpuSimd::kAvx512) {
    i = below_avx512<true>(d, s, len, bound, &hit);
  } else if (bound != 0 && bound <= (u64{1} << 32)) {
    i = narrow_below_sse2(d, s, len, bound, &hit);
  }
#endif
  u64 b = 0;
  for (; i < len; ++i) {
    b |= u64(s[i] >= bound);
    d[i] = static_cast<u32>(s[i]);
  }
  return !hit && b == 0;
}

bool copy_below(u64* d, const u64* s, std::size_t len, u64 bound) {
  std::size_t i = 0;
  bool hit = false;
#if VEIL_X86_SIMD
  if (cpu_simd() >= CpuSimd::kAvx512) i = below_avx512<false>(d, s, len, bound, &hit);
#endif
  u64 b = 0;
  for (; i < len; ++i) {
    b |= u64(s[i] >= bound);
    d[i] = s[i];
  }
  return !hit && b == 0;
}

void widen_words(u64* d, const u32* s, std::size_t len) {
  std::size_t i = 0;
#if VEIL_X86_SIMD
  if (cpu_simd() >= CpuSimd::kAvx512) i = widen_avx512(d, s, len);
#endif
  for (; i < len; ++i) d[i] = s[i];
}

void narrow_words(u32* d, const u64* s, std::size_t len) {
  std::size_t i = 0;
#if VEIL_X86_SIMD
  if (cpu_simd() >= CpuSimd::kAvx512) i = narrow_avx512(d, s, len);
#endif
  for (; i < len; ++i) d[i] = static_cast<u32>(s[i]);
}

bool mul_mod_simd(u32* o, const u32* x, const u32* y, std::size_t n, const Modulus& q) {
  if (n % 8 != 0) return false;
  alignas(64) u64 wx[kWide], wy[kWide];
  for (std::size_t i = 0; i < n; i += kWide) {
    const std::size_t len = n - i < kWide ? n - i : kWide;
    widen_words(wx, x + i, len);
    widen_words(wy, y + i, len);
    if (!mul_mod_simd(wx, wx, wy, len, q)) return false;
    narrow_words(o + i, wx, len);
  }
  return true;
}

bool mul_add_mod_simd(u32* o, const u32* x, const u32* y, const u32* z, std::size_t n,
                      const Modulus& q) {
  if (n % 8 != 0) return false;
  alignas(64) u64 wx[kWide], wy[kWide], wz[kWide];
  for (std::size_t i = 0; i < n; i += kWide) {
    const std::size_t len = n - i < kWide ? n - i : kWide;
    widen_words(wx, x + i, len);
    widen_words(wy, y + i, len);
    widen_words(wz, z + i, len);
    if (!mul_add_mod_simd(wx, wx, wy, wz, len, q)) return false;
    narrow_words(o + i, wx, len);
  }
  return true;
}

bool tensor_simd(u32* o0, u32* o1, u32* o2, const u32* a0, const u32* a1, const u32* b0,
                 const u32* b1, std::size_t n, const Modulus& q) {
  if (n % 8 != 0) return false;
  alignas(64) u64 w0[kWide], w1[kWide], v0[kWide], v1[kWide], r0[kWide], r1[kWide], r2[kWide];
  for (std::size_t i = 0; i < n; i += kWide) {
    const std::size_t len = n - i < kWide ? n - i : kWide;
    widen_words(w0, a0 + i, len);
    widen_words(w1, a1 + i, len);
    widen_words(v0, b0 + i, len);
    widen_words(v1, b1 + i, len);
    if (!tensor_simd(r0, r1, r2, w0, w1, v0, v1, len, q)) return false;
    narrow_words(o0 + i, r0, len);
    narrow_words(o1 + i, r1, len);
    narrow_words(o2 + i, r2, len);
  }
  return true;
}

bool dot_mod_simd(u32* r0, u32* r1, const u32* const* d, const u32* const* k0,
                  const u32* const* k1, std::size_t terms, const u64* perm, std::size_t n,
                  const Modulus& q) {
  if (terms == 0 || terms > kDotTerms32 || n % 8 != 0) return false;
#if VEIL_X86_SIMD
  if (dot_mod_ifma_applies(terms, n, q)) {  // the IFMA kernel reads 32-bit rows itself
    dot_mod_ifma(r0, r1, d, k0, k1, terms, perm, n, barrett_for(q));
    return true;
  }
#endif
  // [terms][kDotWide32] rows of each operand, and the rows' pointers for the 64-bit kernel
  alignas(64) u64 wd[kDotTerms32 * kDotWide32], w0[kDotTerms32 * kDotWide32],
      w1[kDotTerms32 * kDotWide32], o0[kDotWide32], o1[kDotWide32];
  const u64* pd[kDotTerms32];
  const u64* p0[kDotTerms32];
  const u64* p1[kDotTerms32];
  for (std::size_t j = 0; j < terms; ++j) {
    pd[j] = wd + j * kDotWide32, p0[j] = w0 + j * kDotWide32, p1[j] = w1 + j * kDotWide32;
  }
  for (std::size_t i = 0; i < n; i += kDotWide32) {
    const std::size_t len = n - i < kDotWide32 ? n - i : kDotWide32;
    for (std::size_t j = 0; j < terms; ++j) {
      u64* dj = wd + j * kDotWide32;
      if (perm != nullptr) {
        for (std::size_t t = 0; t < len; ++t) dj[t] = d[j][perm[i + t]];
      } else {
        widen_words(dj, d[j] + i, len);
      }
      widen_words(w0 + j * kDotWide32, k0[j] + i, len);
      widen_words(w1 + j * kDotWide32, k1[j] + i, len);
    }
    if (!dot_mod_simd(o0, o1, pd, p0, p1, terms, nullptr, len, q)) return false;
    narrow_words(r0 + i, o0, len);
    narrow_words(r1 + i, o1, len);
  }
  return true;
}

}  // namespace veil::detail
