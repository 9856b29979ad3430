// The CPU NTT on 64-bit words with AVX2, for processors without AVX-512 (ntt_simd.h's
// CpuSimd::kAvx2: most client processors, and AMD before Zen 4). Host-only: compiled as C++
// (never by nvcc), each function built for AVX2 with a target attribute, so the library still
// runs on baseline x86-64.
//
// The butterflies are the scalar reference's (ntt.cpp: Harvey, "Faster arithmetic for
// number-theoretic transforms", J. Symb. Comp. 2014, Alg. 4 and 2, lazy values in [0, 4q)), four
// at a time. AVX2 has no 64 x 64-bit product: the Shoup product x w - hi64(x w') q takes the
// high half from four 32 x 32-bit products (vpmuludq) and each low half from three, as the
// AVX512F/DQ kernel's high half does (ntt_avx512.inc). Stages whose butterfly span t is 4 or
// more take four consecutive words; t = 2 and t = 1 regroup two registers with 128-bit lane
// permutes and 64-bit unpacks. Comparisons are signed (AVX2 has no unsigned 64-bit compare),
// exact for values below 2^63: primes below 2^61 keep the lazy values below 4q < 2^63. The
// outputs are canonical, so they equal the scalar reference's word for word.
#include "veil/ring/ntt_simd.h"

#include "veil/ring/x86_simd.h"

namespace veil::detail {

#if VEIL_X86_SIMD

namespace {

#define VEIL_T2 __attribute__((target("avx2"), always_inline)) inline
#define VEIL_T2F __attribute__((target("avx2")))
using V = __m256i;

VEIL_T2 V load(const u64* p) { return _mm256_loadu_si256(reinterpret_cast<const V*>(p)); }
VEIL_T2 void store(u64* p, V v) { _mm256_storeu_si256(reinterpret_cast<V*>(p), v); }
VEIL_T2 V splat(u64 x) { return _mm256_set1_epi64x(static_cast<long long>(x)); }

// The high 64 bits of a b, lane by lane, from four 32 x 32-bit products.
VEIL_T2 V mulhi64(V a, V b) {
  const V low = _mm256_set1_epi64x(0xffffffffLL);
  const V ah = _mm256_srli_epi64(a, 32), bh = _mm256_srli_epi64(b, 32);
  const V ll = _mm256_mul_epu32(a, b), lh = _mm256_mul_epu32(a, bh);
  const V hl = _mm256_mul_epu32(ah, b), hh = _mm256_mul_epu32(ah, bh);
  const V mid = _mm256_add_epi64(_mm256_add_epi64(_mm256_srli_epi64(ll, 32),
                                                  _mm256_and_si256(lh, low)),
                                 _mm256_and_si256(hl, low));
  return _mm256_add_epi64(_mm256_add_epi64(hh, _mm256_srli_epi64(lh, 32)),
                          _mm256_add_epi64(_mm256_srli_epi64(hl, 32), _mm256_srli_epi64(mid, 32)));
}

// The low 64 bits of a b (mod 2^64), from three 32 x 32-bit products.
VEIL_T2 V mullo64(V a, V b) {
  const V cross = _mm256_add_epi64(_mm256_mul_epu32(a, _mm256_srli_epi64(b, 32)),
                                   _mm256_mul_epu32(_mm256_srli_epi64(a, 32), b));
  return _mm256_add_epi64(_mm256_mul_epu32(a, b), _mm256_slli_epi64(cross, 32));
}

// mul_shoup_lazy: x w - hi64(x w') q, in [0, 2q).
VEIL_T2 V shoup_lazy(V x, V w, V ws, V q) {
  return _mm256_sub_epi64(mullo64(x, w), mullo64(mulhi64(x, ws), q));
}

// v - b where v >= b (signed compare: v < 2^63), else v.
VEIL_T2 V sub_if_ge(V v, V b) {
  const V ge = _mm256_cmpgt_epi64(v, _mm256_sub_epi64(b, _mm256_set1_epi64x(1)));
  return _mm256_sub_epi64(v, _mm256_and_si256(ge, b));
}

// One forward butterfly on four lanes (ntt_forward_limb<u64>): u = x reduced below 2q,
// v = y w mod q lazily, x = u + v, y = u + 2q - v.
VEIL_T2 void forward_bf(V& x, V& y, V w, V ws, V q, V two_q) {
  const V u = sub_if_ge(x, two_q);
  const V v = shoup_lazy(y, w, ws, q);
  x = _mm256_add_epi64(u, v);
  y = _mm256_sub_epi64(_mm256_add_epi64(u, two_q), v);
}

// One inverse butterfly (ntt_inverse_limb<u64>): x = (u + v) reduced below 2q,
// y = (u + 2q - v) w mod q lazily.
VEIL_T2 void inverse_bf(V& x, V& y, V w, V ws, V q, V two_q) {
  const V u = x, v = y;
  x = sub_if_ge(_mm256_add_epi64(u, v), two_q);
  y = shoup_lazy(_mm256_sub_epi64(_mm256_add_epi64(u, two_q), v), w, ws, q);
}

template <bool kForward>
VEIL_T2 void butterfly(V& x, V& y, V w, V ws, V q, V two_q) {
  if constexpr (kForward) {
    forward_bf(x, y, w, ws, q, two_q);
  } else {
    inverse_bf(x, y, w, ws, q, two_q);
  }
}

// [t[i0], t[i1], t[i2], t[i3]] as lanes 0..3.
VEIL_T2 V lanes(const u64* t, std::size_t i0, std::size_t i1, std::size_t i2, std::size_t i3) {
  return _mm256_set_epi64x(static_cast<long long>(t[i3]), static_cast<long long>(t[i2]),
                           static_cast<long long>(t[i1]), static_cast<long long>(t[i0]));
}

// The stages of span t = 2 and t = 1, eight words (two registers) at a time:
// - t = 2: blocks i, i + 1 hold [x0 x1 y0 y1 | x0' x1' y0' y1'], regrouped by 128-bit lane
//   permutes as X = [x0 x1 x0' x1'], Y = [y0 y1 y0' y1'], twiddles [w_i w_i w_i+1 w_i+1];
// - t = 1: blocks i..i+3 hold [x0 y0 x1 y1 | x2 y2 x3 y3], regrouped by 64-bit unpacks (within
//   128-bit lanes) as X = [x0 x2 x1 x3], Y = [y0 y2 y1 y3], twiddles [w0 w2 w1 w3];
// and back after the butterflies.
template <bool kForward, std::size_t kT>
VEIL_T2 void span_narrow(u64* a, const u64* tw, const u64* tws, std::size_t n, V q, V two_q) {
  const std::size_t m = n / (2 * kT);
  for (std::size_t i = 0; i < m; i += 4 / kT) {
    u64* p = a + 2 * kT * i;
    const V v0 = load(p), v1 = load(p + 4);
    const std::size_t k = m + i;
    if constexpr (kT == 2) {
      V x = _mm256_permute2x128_si256(v0, v1, 0x20), y = _mm256_permute2x128_si256(v0, v1, 0x31);
      butterfly<kForward>(x, y, lanes(tw, k, k, k + 1, k + 1), lanes(tws, k, k, k + 1, k + 1),
                          q, two_q);
      store(p, _mm256_permute2x128_si256(x, y, 0x20));
      store(p + 4, _mm256_permute2x128_si256(x, y, 0x31));
    } else {
      V x = _mm256_unpacklo_epi64(v0, v1), y = _mm256_unpackhi_epi64(v0, v1);
      butterfly<kForward>(x, y, lanes(tw, k, k + 2, k + 1, k + 3),
                          lanes(tws, k, k + 2, k + 1, k + 3), q, two_q);
      store(p, _mm256_unpacklo_epi64(x, y));
      store(p + 4, _mm256_unpackhi_epi64(x, y));
    }
  }
}

// A stage of span t >= 4: m blocks of 2t words, one twiddle per block.
template <bool kForward>
VEIL_T2 void span_wide(u64* a, const u64* tw, const u64* tws, std::size_t m, std::size_t t, V q,
                       V two_q) {
  for (std::size_t i = 0; i < m; ++i) {
    const V w = splat(tw[m + i]), ws = splat(tws[m + i]);
    u64* x = a + 2 * i * t;
    u64* y = x + t;
    for (std::size_t j = 0; j < t; j += 4) {
      V vx = load(x + j), vy = load(y + j);
      butterfly<kForward>(vx, vy, w, ws, q, two_q);
      store(x + j, vx);
      store(y + j, vy);
    }
  }
}

VEIL_T2F void forward(u64* a, const u64* tw, const u64* tws, std::size_t n, u64 qv) {
  const V q = splat(qv), two_q = splat(2 * qv);
  std::size_t t = n;
  for (std::size_t m = 1; m < n; m <<= 1) {
    t >>= 1;
    if (t >= 4) {
      span_wide<true>(a, tw, tws, m, t, q, two_q);
    } else if (t == 2) {
      span_narrow<true, 2>(a, tw, tws, n, q, two_q);
    } else {
      span_narrow<true, 1>(a, tw, tws, n, q, two_q);
    }
  }
  for (std::size_t j = 0; j < n; j += 4) {
    store(a + j, sub_if_ge(sub_if_ge(load(a + j), two_q), q));
  }
}

VEIL_T2F void inverse(u64* a, const u64* itw, const u64* itws, std::size_t n, u64 qv, u64 inv_n,
                      u64 inv_n_shoup) {
  const V q = splat(qv), two_q = splat(2 * qv);
  std::size_t t = 1;
  for (std::size_t m = n >> 1; m >= 1; m >>= 1) {
    if (t >= 4) {
      span_wide<false>(a, itw, itws, m, t, q, two_q);
    } else if (t == 2) {
      span_narrow<false, 2>(a, itw, itws, n, q, two_q);
    } else {
      span_narrow<false, 1>(a, itw, itws, n, q, two_q);
    }
    t <<= 1;
  }
  const V w = splat(inv_n), ws = splat(inv_n_shoup);
  for (std::size_t j = 0; j < n; j += 4) {
    store(a + j, sub_if_ge(shoup_lazy(load(a + j), w, ws, q), q));
  }
}

}  // namespace

bool ntt_forward_limb_avx2(u64* a, const u64* tw, const u64* tw_shoup, std::size_t n, u64 q) {
  if (n < 16 || q >= (u64(1) << 61)) return false;
  forward(a, tw, tw_shoup, n, q);
  return true;
}

bool ntt_inverse_limb_avx2(u64* a, const u64* itw, const u64* itw_shoup, std::size_t n, u64 q,
                           u64 inv_n, u64 inv_n_shoup) {
  if (n < 16 || q >= (u64(1) << 61)) return false;
  inverse(a, itw, itw_shoup, n, q, inv_n, inv_n_shoup);
  return true;
}

#else

bool ntt_forward_limb_avx2(u64*, const u64*, const u64*, std::size_t, u64) { return false; }
bool ntt_inverse_limb_avx2(u64*, const u64*, const u64*, std::size_t, u64, u64, u64) {
  return false;
}

#endif

}  // namespace veil::detail
