// The CPU NTT on 64-bit words with AVX-512, chosen at run time (ntt_simd.h). Host-only: compiled
// as C++ (never by nvcc), each function built for its instruction set with a target attribute,
// so the library still runs on baseline x86-64.
//
// The butterflies are the scalar reference's (ntt.cpp: Harvey, "Faster arithmetic for
// number-theoretic transforms", J. Symb. Comp. 2014, Alg. 4 and 2 with lazy values in [0, 4q)),
// eight at a time. Stages whose butterfly span t is 8 or more take eight consecutive words;
// the last three forward (first three inverse) stages, t = 4, 2, 1, gather the eight x and
// eight y of 16 consecutive words with two-source permutes, as Intel HEXL does (Boemer et al.,
// "Intel HEXL: Accelerating Homomorphic Encryption with Intel AVX512-IFMA52", WAHC 2021, §4).
// The Shoup product x w mod q in [0, 2q):
// - AVX512-IFMA52, primes below 2^50 (so lazy values stay below 2^52): qhat = hi52(x w') with
//   w' = floor(w 2^52 / q) = floor(w 2^64 / q) >> 12 (the table's quotient shifted), and
//   x w - qhat q from two low-52 products, modulo 2^52;
// - AVX512F/DQ, any prime below 2^62: hi64(x w') from four 32 x 32-bit products, and the two
//   low 64-bit products.
// The outputs are canonical (in [0, q)), so they equal the scalar reference's word for word.
#include "veil/ring/ntt_simd.h"

#include <atomic>
#include <cstdlib>
#include <cstring>

#include "veil/ring/x86_simd.h"

namespace veil::detail {

#if VEIL_X86_SIMD

namespace {

// Two copies of the kernels (ntt_avx512.inc), one per instruction set.
namespace dq {
#define VEIL_NTT_TARGET "avx512f,avx512dq"
#define VEIL_NTT_IFMA 0
#include "veil/ring/ntt_avx512.inc"
#undef VEIL_NTT_TARGET
#undef VEIL_NTT_IFMA
}  // namespace dq
namespace ifma {
#define VEIL_NTT_TARGET "avx512f,avx512dq,avx512ifma"
#define VEIL_NTT_IFMA 1
#include "veil/ring/ntt_avx512.inc"
#undef VEIL_NTT_TARGET
#undef VEIL_NTT_IFMA
}  // namespace ifma

CpuSimd detect() {
  const char* env = std::getenv("VEIL_CPU_SIMD");
  if (env != nullptr && (std::strcmp(env, "0") == 0 || std::strcmp(env, "off") == 0 ||
                         std::strcmp(env, "scalar") == 0)) {
    return CpuSimd::kScalar;
  }
  __builtin_cpu_init();
  const CpuSimd avx2 = __builtin_cpu_supports("avx2") ? CpuSimd::kAvx2 : CpuSimd::kScalar;
  if (!__builtin_cpu_supports("avx512f") || !__builtin_cpu_supports("avx512dq")) return avx2;
  if (env != nullptr && std::strcmp(env, "avx2") == 0) return avx2;
  if (env != nullptr && std::strcmp(env, "avx512") == 0) return CpuSimd::kAvx512;
  return __builtin_cpu_supports("avx512ifma") ? CpuSimd::kAvx512Ifma : CpuSimd::kAvx512;
}

}  // namespace

CpuSimd cpu_simd_detected() {
  static const CpuSimd level = detect();
  return level;
}

#else  // not x86-64 with GCC or Clang: the scalar reference only

CpuSimd cpu_simd_detected() { return CpuSimd::kScalar; }

#endif

namespace {
std::atomic<int> g_override{-1};
}

CpuSimd cpu_simd() {
  const int cap = g_override.load(std::memory_order_relaxed);
  if (cap >= 0) {
    const auto want = static_cast<CpuSimd>(cap);
    return want < cpu_simd_detected() ? want : cpu_simd_detected();
  }
  return cpu_simd_detected();
}

void set_cpu_simd(int level) { g_override.store(level, std::memory_order_relaxed); }

const char* cpu_simd_name(CpuSimd level) {
  switch (level) {
    case CpuSimd::kAvx512Ifma:
      return "avx512ifma";
    case CpuSimd::kAvx512:
      return "avx512";
    case CpuSimd::kAvx2:
      return "avx2";
    default:
      return "scalar";
  }
}

bool ntt_forward_limb_simd(u64* a, const u64* tw, const u64* tw_shoup, std::size_t n, u64 q) {
#if VEIL_X86_SIMD
  if (n < 16) return false;
  const CpuSimd level = cpu_simd();
  if (level == CpuSimd::kAvx512Ifma && q < (u64(1) << 50)) {
    ifma::forward(a, tw, tw_shoup, n, q);
    return true;
  }
  if (level >= CpuSimd::kAvx512) {
    dq::forward(a, tw, tw_shoup, n, q);
    return true;
  }
  if (level == CpuSimd::kAvx2) return ntt_forward_limb_avx2(a, tw, tw_shoup, n, q);
#else
  (void)a, (void)tw, (void)tw_shoup, (void)n, (void)q;
#endif
  return false;
}

bool ntt_inverse_limb_simd(u64* a, const u64* itw, const u64* itw_shoup, std::size_t n, u64 q,
                           u64 inv_n, u64 inv_n_shoup) {
#if VEIL_X86_SIMD
  if (n < 16) return false;
  const CpuSimd level = cpu_simd();
  if (level == CpuSimd::kAvx512Ifma && q < (u64(1) << 50)) {
    ifma::inverse(a, itw, itw_shoup, n, q, inv_n, inv_n_shoup);
    return true;
  }
  if (level >= CpuSimd::kAvx512) {
    dq::inverse(a, itw, itw_shoup, n, q, inv_n, inv_n_shoup);
    return true;
  }
  if (level == CpuSimd::kAvx2) {
    return ntt_inverse_limb_avx2(a, itw, itw_shoup, n, q, inv_n, inv_n_shoup);
  }
#else
  (void)a, (void)itw, (void)itw_shoup, (void)n, (void)q, (void)inv_n, (void)inv_n_shoup;
#endif
  return false;
}

bool ntt_forward_limb_simd(u32* a, u64* scratch, const u64* tw, const u64* tw_shoup,
                           std::size_t n, u64 q) {
#if VEIL_X86_SIMD
  if (n < 16) return false;
  const CpuSimd level = cpu_simd();
  if (level == CpuSimd::kAvx512Ifma && q < (u64(1) << 50)) {
    ifma::forward_io<u32>(a, scratch, a, tw, tw_shoup, n, q);
    return true;
  }
  if (level >= CpuSimd::kAvx512) {
    dq::forward_io<u32>(a, scratch, a, tw, tw_shoup, n, q);
    return true;
  }
#else
  (void)a, (void)scratch, (void)tw, (void)tw_shoup, (void)n, (void)q;
#endif
  return false;
}

bool ntt_inverse_limb_simd(u32* a, u64* scratch, const u64* itw, const u64* itw_shoup,
                           std::size_t n, u64 q, u64 inv_n, u64 inv_n_shoup) {
#if VEIL_X86_SIMD
  if (n < 16) return false;
  const CpuSimd level = cpu_simd();
  if (level == CpuSimd::kAvx512Ifma && q < (u64(1) << 50)) {
    ifma::inverse_io<u32>(a, scratch, a, itw, itw_shoup, n, q, inv_n, inv_n_shoup);
    return true;
  }
  if (level >= CpuSimd::kAvx512) {
    dq::inverse_io<u32>(a, scratch, a, itw, itw_shoup, n, q, inv_n, inv_n_shoup);
    return true;
  }
#else
  (void)a, (void)scratch, (void)itw, (void)itw_shoup, (void)n, (void)q, (void)inv_n,
      (void)inv_n_shoup;
#endif
  return false;
}

}  // namespace veil::detail
