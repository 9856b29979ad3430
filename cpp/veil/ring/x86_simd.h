// The x86 vector kernels' common preamble (ntt_avx512_host.cpp, eltwise_avx512_host.cpp; host
// code only): VEIL_X86_SIMD is 1 where GCC or Clang builds for x86-64, and <immintrin.h> is then
// included. Each kernel names its instruction sets with a target attribute, so the library still
// runs on baseline x86-64, and a kernel runs only where ntt_simd.h's detection allows it.
#pragma once

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define VEIL_X86_SIMD 1
// GCC 12's AVX-512 headers start vectors from an undefined value (_mm512_undefined_*), which
// -Wmaybe-uninitialized reports at every inlined intrinsic: a known false positive.
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

namespace veil::detail::x86 {

// AVX512F/DQ building blocks shared by the kernels of both instruction sets (an always-inline
// function built for F/DQ inlines into IFMA-targeted callers too, whose sets include them).
#define VEIL_X86_DQ_INLINE __attribute__((target("avx512f,avx512dq"), always_inline)) inline

/// v - m in the lanes where v >= m (unsigned), v elsewhere.
VEIL_X86_DQ_INLINE __m512i sub_if_ge(__m512i v, __m512i m) {
  return _mm512_mask_sub_epi64(v, _mm512_cmpge_epu64_mask(v, m), v, m);
}

/// hi64(a b) for unsigned 64-bit lanes, from four 32 x 32 -> 64-bit products.
VEIL_X86_DQ_INLINE __m512i mulhi64(__m512i a, __m512i b) {
  const __m512i lo32 = _mm512_set1_epi64(0xffffffff);
  const __m512i a_hi = _mm512_srli_epi64(a, 32), b_hi = _mm512_srli_epi64(b, 32);
  const __m512i ll = _mm512_mul_epu32(a, b), lh = _mm512_mul_epu32(a, b_hi);
  const __m512i hl = _mm512_mul_epu32(a_hi, b), hh = _mm512_mul_epu32(a_hi, b_hi);
  const __m512i mid = _mm512_add_epi64(lh, _mm512_srli_epi64(ll, 32));
  const __m512i mid2 = _mm512_add_epi64(hl, _mm512_and_si512(mid, lo32));
  return _mm512_add_epi64(_mm512_add_epi64(hh, _mm512_srli_epi64(mid, 32)),
                          _mm512_srli_epi64(mid2, 32));
}

/// Shoup's x w mod q in [0, 2q) for any 64-bit x, ws = floor(w 2^64 / q) (core/modarith.h's
/// mul_shoup_lazy, eight lanes): x w - hi64(x ws) q modulo 2^64.
VEIL_X86_DQ_INLINE __m512i mul_shoup_lazy(__m512i x, __m512i w, __m512i ws, __m512i q) {
  return _mm512_sub_epi64(_mm512_mullo_epi64(x, w), _mm512_mullo_epi64(mulhi64(x, ws), q));
}

}  // namespace veil::detail::x86
#else
#define VEIL_X86_SIMD 0
#endif
