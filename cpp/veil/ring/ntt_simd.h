// The CPU NTT's vector kernels (ntt_avx512_host.cpp, ntt_avx2_host.cpp), chosen at run time by
// the processor's instruction sets: AVX512-IFMA52 for primes below 2^50, AVX512F/DQ for the
// others, AVX2 without AVX-512 (primes below 2^61; 64-bit words). The scalar reference (ntt.cpp's
// detail::ntt_*_limb) serves everything else, and the outputs of all are canonical, so equal
// word for word.
#pragma once
#include <cstddef>

#include "veil/core/modarith.h"

namespace veil::detail {

/// The vector instruction sets the CPU kernels may use, in increasing order.
/// kAvx2 serves the NTT only (the element-wise kernels, conversions and inner products take
/// AVX-512 or their scalar loops).
enum class CpuSimd { kScalar = 0, kAvx2 = 1, kAvx512 = 2, kAvx512Ifma = 3 };

/// What this processor offers (read once): VEIL_CPU_SIMD=0 ("off", "scalar") in the environment
/// forces the scalar kernels, VEIL_CPU_SIMD=avx2 leaves AVX-512 out and VEIL_CPU_SIMD=avx512
/// leaves IFMA out (for A/B measurements; any other value: what the processor offers). It
/// removes vector instructions only: the scalar fast paths (one-prime ModUp and conversions) run
/// at every level.
CpuSimd cpu_simd_detected();
/// What the kernels use now: cpu_simd_detected(), or less after set_cpu_simd.
CpuSimd cpu_simd();
/// Caps the kernels at `level` (a CpuSimd value) for this process; -1 restores the detected
/// level. For benchmarks and tests: not synchronized with transforms running on other threads.
void set_cpu_simd(int level);
/// "scalar", "avx2", "avx512" or "avx512ifma".
const char* cpu_simd_name(CpuSimd level);

/// One limb's forward (inverse) NTT with the vector kernels, as ntt_forward_limb<u64>
/// (ntt_inverse_limb<u64>): false, and `a` untouched, when no vector kernel applies (a scalar
/// processor, n < 16).
bool ntt_forward_limb_simd(u64* a, const u64* tw, const u64* tw_shoup, std::size_t n, u64 q);
bool ntt_inverse_limb_simd(u64* a, const u64* itw, const u64* itw_shoup, std::size_t n, u64 q,
                           u64 inv_n, u64 inv_n_shoup);
/// The AVX2 kernels (ntt_avx2_host.cpp) the two above call at CpuSimd::kAvx2: false, and `a`
/// untouched, for n < 16 or q >= 2^61 (and on processors other than x86-64).
bool ntt_forward_limb_avx2(u64* a, const u64* tw, const u64* tw_shoup, std::size_t n, u64 q);
bool ntt_inverse_limb_avx2(u64* a, const u64* itw, const u64* itw_shoup, std::size_t n, u64 q,
                           u64 inv_n, u64 inv_n_shoup);
/// The same on a limb of 32-bit words (primes below 2^31) with the 64-bit tables: the first pass
/// reads `a` zero-extended, the passes work in `scratch` (n words), the last pass writes `a`
/// (no widening copy before and no narrowing copy after). False, and `a` untouched, when no
/// vector kernel applies (no AVX-512, n < 16).
bool ntt_forward_limb_simd(u32* a, u64* scratch, const u64* tw, const u64* tw_shoup,
                           std::size_t n, u64 q);
bool ntt_inverse_limb_simd(u32* a, u64* scratch, const u64* itw, const u64* itw_shoup,
                           std::size_t n, u64 q, u64 inv_n, u64 inv_n_shoup);

}  // namespace veil::detail
