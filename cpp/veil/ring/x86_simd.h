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
#else
#define VEIL_X86_SIMD 0
#endif
