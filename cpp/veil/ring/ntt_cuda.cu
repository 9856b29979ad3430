// CUDA batched negacyclic NTT: every limb of every polynomial in each launch.
//
// Floor (DESIGN.md, "Benchmark method"): a one-pass NTT of one ciphertext at N = 2^16 with 2 x 36
// limbs must read and write every word once: 2 * 36 * 2^16 * 8 B * 2 = 75 MB, about 25 us at the
// H100's ~3.0 TB/s. Phantom's NTT takes about 4.4x a device-to-device copy of the same data; the
// goal here is <= 1.5x a copy. A two-pass (two-kernel) design moves the data twice, so ~2x a copy
// is the practical target; twiddle reads (L2-resident, shared by every polynomial over the same
// prime; blocks are ordered so those polynomials run together) come on top.
//
// Design: the "NWT-2D" two-kernel NTT of Phantom (Yang et al., IEEE TDSC 2024, Sec. IV) and the
// merged register-resident NTT of HEonGPU (Ozcan et al., IEEE Access 2023, Alg. 6). View one
// polynomial of N = N1 * N2 words as an N1 x N2 row-major matrix (x = r * N2 + c). The first
// log2(N1) Cooley-Tukey stages touch only the row bits, so they are N2 independent N1-point
// transforms over the columns; the remaining log2(N2) stages are N1 independent transforms over
// the contiguous rows. The Gentleman-Sande inverse runs the same passes in the opposite order.
//   - N >= 2^13: two launches per direction, N1 = 2^floor(logN/2) (2^6..2^8), N2 = N / N1.
//     Column pass: a block takes S = 4096 / N1 adjacent columns (a 4096-word tile); adjacent
//     threads own adjacent columns, so every global access goes coalesced straight to registers.
//     Row pass: a block takes R = 4096 / N2 whole rows (4096 contiguous words).
//   - 2^4 <= N <= 2^12: one launch, one block of N/16 threads per (polynomial, limb).
//   - Grid: blockIdx.x = (limb, tile, polynomial), polynomial fastest, so the polynomials over one
//     prime run together and share its twiddles in L2.
// Inside a pass each thread keeps 16 words in registers and performs 4 butterfly stages on them
// (radix-16 per thread) before exchanging through shared memory, so an L-point pass costs
// ceil(log2(L) / 4) register rounds and one barrier per exchange. Row tiles in shared memory are
// padded (one word per 16) so that both the strided and the contiguous windows are free of bank
// conflicts; row passes whose first (last) round works on the low bits load (store) through
// shared memory to stay coalesced. The forward pass holding the last stage fully reduces to
// [0, q); the inverse pass holding the last stage multiplies by N^-1. Arithmetic is Harvey's lazy
// Shoup butterflies (values in [0, 4q)), the same operations as the CPU reference; the output is
// fully reduced, hence bit-identical to it.
// Resources (ptxas, sm_90): 256 threads, <= 128 registers (launch bounds: 2 blocks/SM), no spills;
// 32 KiB (columns) or 34 KiB (rows) of static shared memory per block.
//
// Twiddle of the butterfly on global index bit b whose lower element has index x (SEAL's table,
// tw[m + i] with m = 2^(logN-1-b), i = x >> (b+1)): tw[(N | x) >> (b + 1)].
//
// Setting VEIL_NTT_SIMPLE=1 in the environment (read once) selects the simple one-launch-per-stage
// kernels at the end of this file instead, to bisect a suspected fault of the fast path.
#include <cuda_runtime.h>

#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "veil/backend/memory.h"
#include "veil/ring/ntt.h"

namespace veil::detail {

namespace {

constexpr int kLogP = 4;          // log2 of words per thread
constexpr int kP = 1 << kLogP;    // words per thread (radix-16 per round)
constexpr int kTileWords = 4096;  // words per block tile (256 threads x 16)

struct NttArgs {
  u64* data;
  const u32* ids;
  const Modulus* moduli;
  const u64* twiddles;
  const u64* inv_n;
  u32 num_polys;
  u32 num_limbs;
};

template <int I, int N, class F>
VEIL_HD void static_for(F&& f) {
  if constexpr (I < N) {
    f(std::integral_constant<int, I>{});
    static_for<I + 1, N>(f);
  }
}

// One pass of an NTT: a 2^kLogL-point sub-transform over kSeqs sequences per block.
// kCols: sequences are columns (element k of column c at k * N2 + c); otherwise rows (contiguous,
// element k of row r at r * 2^kLogL + k). kFinal: this pass holds the transform's last stage and
// applies the epilogue (forward: reduce to [0, q); inverse: multiply by N^-1).
// One object is one thread's state; the kernel calls the phases below with barriers between them
// (split this way so that a host harness can replay the exact per-thread index arithmetic).
template <bool kFwd, bool kCols, int kLogN, int kLogL, int kSeqs, bool kFinal>
struct Pass {
  static_assert(kLogL >= kLogP && kLogL <= kLogN, "a pass needs 16 to N points");
  static constexpr int kLog = kLogL;
  static constexpr u32 kN = 1u << kLogN;
  static constexpr u32 kGoff = kCols ? kLogN - kLogL : 0;  // global index bit of sequence bit 0
  static constexpr int kSeqsPerBlock = kSeqs;
  static constexpr u32 kL = 1u << kLogL;
  static constexpr u32 kF = kL / kP;  // threads per sequence
  static constexpr int kThreads = kSeqs * int(kF);
  static constexpr u32 kPitch = kL + kL / 16;  // padded row length in shared memory (rows)
  static constexpr int kSmemWords = kCols ? kSeqs * int(kL) : kSeqs * int(kPitch);
  static constexpr int kFull = kLogL / kLogP, kRem = kLogL % kLogP;
  static constexpr int kRounds = kFull + (kRem ? 1 : 0);

  // Round r owns the 4-bit window [lo(r), lo(r) + 4) of the sequence index and runs the stages on
  // the window positions [act_lo(r), act_hi(r)): forward from the top bit down, inverse upwards.
  static constexpr int lo(int r) {
    if (kFwd) return r < kFull ? kLogL - kLogP * (r + 1) : 0;
    return r < kFull ? kLogP * r : kLogL - kLogP;
  }
  static constexpr int act_lo(int r) { return (r < kFull || kFwd) ? 0 : kLogP - kRem; }
  static constexpr int act_hi(int r) { return (r < kFull || !kFwd) ? kLogP : kRem; }
  // Global memory is touched straight from registers when the window is the top bits (adjacent
  // threads then hold adjacent words); columns are always coalesced across threads.
  static constexpr bool kLoadDirect = kCols || lo(0) == kLogL - kLogP;
  static constexpr bool kStoreDirect = kCols || lo(kRounds - 1) == kLogL - kLogP;

  u64 v[kP];
  u64* poly;          // this (polynomial, limb)
  const u64* w_tab;   // psi^bitrev (forward) or psi^-bitrev (inverse) for this limb's prime
  const u64* ws_tab;  // their Shoup quotients
  u64 q, two_q;
  u64 ninv, ninv_shoup;
  u32 first;  // first column / row of the tile
  u32 seq;    // this thread's column / row
  u32 s, f;   // sequence within the tile; thread within the sequence
  u32 tid;

  VEIL_HD void init(const NttArgs& a, u32 block, u32 thread) {
    tid = thread;
    constexpr u32 nseg = (kN >> kLogL) / u32(kSeqs);
    const u32 poly_i = block % a.num_polys;  // polynomials fastest: they share twiddles in L2
    const u32 rest = block / a.num_polys;
    const u32 seg = rest % nseg;
    const u32 limb = rest / nseg;
    const u32 id = a.ids[limb];
    q = a.moduli[id].value;
    two_q = 2 * q;
    const u64* t = a.twiddles + std::size_t(id) * 4 * kN + (kFwd ? 0 : 2 * std::size_t(kN));
    w_tab = t;
    ws_tab = t + kN;
    ninv = ninv_shoup = 0;
    if constexpr (kFinal && !kFwd) {
      ninv = a.inv_n[2 * id];
      ninv_shoup = a.inv_n[2 * id + 1];
    }
    poly = a.data + (std::size_t(poly_i) * a.num_limbs + limb) * kN;
    if constexpr (kCols) {
      s = thread % u32(kSeqs);
      f = thread / u32(kSeqs);
    } else {
      f = thread % kF;
      s = thread / kF;
    }
    first = seg * u32(kSeqs);
    seq = first + s;
  }

  // Sequence index of this thread's word j in round r: j fills the window, f the other bits.
  template <int kR>
  VEIL_HD u32 k_of(u32 j) const {
    constexpr int l = lo(kR);
    return ((f >> l) << (l + kLogP)) | (j << l) | (f & ((1u << l) - 1));
  }
  // Offset within the (polynomial, limb) of sequence element k; also its NTT index x.
  VEIL_HD u32 gofs(u32 k) const { return kCols ? (k << kGoff) | seq : (seq << kLogL) | k; }
  // Shared-memory slot of sequence element k.
  VEIL_HD u32 sofs(u32 k) const { return kCols ? k * u32(kSeqs) + s : s * kPitch + k + (k >> 4); }
  // Shared-memory slot of the tile's e-th word in memory order (row tiles only).
  static VEIL_HD u32 flat_sofs(u32 e) {
    const u32 k = e & (kL - 1);
    return (e >> kLogL) * kPitch + k + (k >> 4);
  }

  VEIL_HD void load_direct() {
#pragma unroll
    for (u32 j = 0; j < kP; ++j) v[j] = poly[gofs(k_of<0>(j))];
  }
  VEIL_HD void load_staged(u64* sm) const {  // coalesced global -> shared (row tiles)
    const u64* src = poly + (first << kLogL);
#pragma unroll
    for (u32 i = 0; i < kP; ++i) {
      const u32 e = tid + u32(kThreads) * i;
      sm[flat_sofs(e)] = src[e];
    }
  }
  template <int kR>
  VEIL_HD void read(const u64* sm) {
#pragma unroll
    for (u32 j = 0; j < kP; ++j) v[j] = sm[sofs(k_of<kR>(j))];
  }
  template <int kR>
  VEIL_HD void write(u64* sm) const {
#pragma unroll
    for (u32 j = 0; j < kP; ++j) sm[sofs(k_of<kR>(j))] = v[j];
  }
  VEIL_HD void store_direct() const {
#pragma unroll
    for (u32 j = 0; j < kP; ++j) poly[gofs(k_of<kRounds - 1>(j))] = v[j];
  }
  VEIL_HD void store_staged(const u64* sm) const {  // coalesced shared -> global (row tiles)
    u64* dst = poly + (first << kLogL);
#pragma unroll
    for (u32 i = 0; i < kP; ++i) {
      const u32 e = tid + u32(kThreads) * i;
      dst[e] = sm[flat_sofs(e)];
    }
  }

  // Harvey's butterflies, exactly as the CPU reference (ntt.cpp).
  VEIL_HD void ct(u64& x, u64& y, u64 w, u64 ws) const {
    u64 u = x;
    if (u >= two_q) u -= two_q;
    const u64 t = mul_shoup_lazy(y, w, ws, q);
    x = u + t;
    y = u + two_q - t;
  }
  VEIL_HD void gs(u64& x, u64& y, u64 w, u64 ws) const {
    const u64 u = x, t = y;
    u64 sum = u + t;
    if (sum >= two_q) sum -= two_q;
    y = mul_shoup_lazy(u + two_q - t, w, ws, q);
    x = sum;
  }

  // The 2^(3-i) twiddles of window position i start at tb, which is a multiple of 2^(3-i)
  // (the window bits of x are zero), so pairs load as aligned 16-byte words.
  template <int kCount>
  VEIL_HD void load_twiddles(u32 tb, u64 (&w)[kCount], u64 (&ws)[kCount]) const {
#if VEIL_DEVICE_CODE
    if constexpr (kCount >= 2) {
      const auto* pw = reinterpret_cast<const ulonglong2*>(w_tab + tb);
      const auto* ps = reinterpret_cast<const ulonglong2*>(ws_tab + tb);
#pragma unroll
      for (int m = 0; m < kCount / 2; ++m) {
        const ulonglong2 a = __ldg(pw + m), b = __ldg(ps + m);
        w[2 * m] = a.x;
        w[2 * m + 1] = a.y;
        ws[2 * m] = b.x;
        ws[2 * m + 1] = b.y;
      }
    } else {
      w[0] = __ldg(w_tab + tb);
      ws[0] = __ldg(ws_tab + tb);
    }
#else
    assert(tb % kCount == 0);
    for (int m = 0; m < kCount; ++m) {
      w[m] = w_tab[tb + m];
      ws[m] = ws_tab[tb + m];
    }
#endif
  }

  // All butterflies of round r on window position i (global bit kGoff + lo(r) + i).
  template <int kR, int kI>
  VEIL_HD void stage(u32 x0) {
    constexpr int kCount = 1 << (kLogP - 1 - kI);
    constexpr u32 kBit = 1u << kI;
    u64 w[kCount], ws[kCount];
    load_twiddles<kCount>((kN | x0) >> (kGoff + u32(lo(kR) + kI + 1)), w, ws);
#pragma unroll
    for (u32 j = 0; j < kP; ++j) {
      if (j & kBit) continue;
      const u32 m = j >> (kI + 1);
      if constexpr (kFwd) {
        ct(v[j], v[j | kBit], w[m], ws[m]);
      } else {
        gs(v[j], v[j | kBit], w[m], ws[m]);
      }
    }
  }

  template <int kR>
  VEIL_HD void compute() {
    const u32 x0 = gofs(k_of<kR>(0));  // NTT index of the thread's words with window bits zero
    constexpr int a = act_lo(kR), b = act_hi(kR);
    if constexpr (kFwd) {
      static_for<0, b - a>([&](auto ic) { stage<kR, b - 1 - decltype(ic)::value>(x0); });
    } else {
      static_for<0, b - a>([&](auto ic) { stage<kR, a + decltype(ic)::value>(x0); });
    }
    if constexpr (kFinal && kR == kRounds - 1) {
#pragma unroll
      for (u32 j = 0; j < kP; ++j) {
        if constexpr (kFwd) {
          u64 x = v[j];
          if (x >= two_q) x -= two_q;
          if (x >= q) x -= q;
          v[j] = x;
        } else {
          v[j] = mul_shoup(v[j], ninv, ninv_shoup, q);
        }
      }
    }
  }
};

// Blocks per launch of pass P: one per (polynomial, limb, tile).
template <class P>
std::size_t pass_blocks(std::size_t num_pl, int log_n) {
  return num_pl * ((std::size_t(1) << log_n) >> P::kLog) / std::size_t(P::kSeqsPerBlock);
}

// Calls visit.template operator()<P>() for each pass of the transform, in order.
template <bool kFwd, int kLogN, class Visit>
void visit_passes(Visit&& visit) {
  if constexpr (kLogN <= 12) {
    visit.template operator()<Pass<kFwd, false, kLogN, kLogN, 1, true>>();
  } else {
    constexpr int l1 = kLogN / 2, l2 = kLogN - l1;  // N1 = 2^l1 rows of N2 = 2^l2 words
    using Cols = Pass<kFwd, true, kLogN, l1, (kTileWords >> l1), !kFwd>;
    using Rows = Pass<kFwd, false, kLogN, l2, (kTileWords >> l2), kFwd>;
    static_assert(Cols::kThreads == 256 && Rows::kThreads == 256);
    if constexpr (kFwd) {
      visit.template operator()<Cols>();
      visit.template operator()<Rows>();
    } else {
      visit.template operator()<Rows>();
      visit.template operator()<Cols>();
    }
  }
}

// Runtime degree -> visit_passes. Returns false where there is no fast configuration for this
// degree (N < 2^4 or N > 2^17); the caller then uses the simple kernels.
template <bool kFwd, class Visit>
bool for_each_pass(int log_n, Visit&& visit) {
  switch (log_n) {
#define VEIL_NTT_CASE(L)          \
  case L:                         \
    visit_passes<kFwd, L>(visit); \
    return true;
    VEIL_NTT_CASE(4)
    VEIL_NTT_CASE(5)
    VEIL_NTT_CASE(6)
    VEIL_NTT_CASE(7)
    VEIL_NTT_CASE(8)
    VEIL_NTT_CASE(9)
    VEIL_NTT_CASE(10)
    VEIL_NTT_CASE(11)
    VEIL_NTT_CASE(12)
    VEIL_NTT_CASE(13)
    VEIL_NTT_CASE(14)
    VEIL_NTT_CASE(15)
    VEIL_NTT_CASE(16)
    VEIL_NTT_CASE(17)
#undef VEIL_NTT_CASE
    default:
      return false;
  }
}

// At most 128 registers per thread: the launch bounds ask for 16 resident warps per SM (2 blocks
// of 256 threads; more, smaller blocks for N < 2^12).
template <int kThreads>
constexpr int min_blocks() {
  constexpr int warps = (kThreads + 31) / 32;  // registers are allocated per warp
  return 16 / warps < 1 ? 1 : 16 / warps;
}

template <class P>
__global__ void __launch_bounds__(P::kThreads, min_blocks<P::kThreads>())
    ntt_pass_kernel(NttArgs a) {
  __shared__ u64 sm[P::kSmemWords];
  P p;
  p.init(a, blockIdx.x, threadIdx.x);
  if constexpr (P::kLoadDirect) {
    p.load_direct();
  } else {
    p.load_staged(sm);
    __syncthreads();
    p.template read<0>(sm);
  }
  static_for<0, P::kRounds>([&](auto rc) {
    constexpr int r = decltype(rc)::value;
    p.template compute<r>();
    if constexpr (r + 1 < P::kRounds) {
      p.template write<r>(sm);
      __syncthreads();
      p.template read<r + 1>(sm);
    }
  });
  if constexpr (P::kStoreDirect) {
    p.store_direct();
  } else {
    p.template write<P::kRounds - 1>(sm);
    __syncthreads();
    p.store_staged(sm);
  }
}

// ---- simple fallback: one launch per stage, one butterfly per thread ------------------------

__global__ void fwd_stage(u64* data, std::size_t total_bfly, int log_n, std::size_t m,
                          std::size_t limbs, const u32* ids, const Modulus* moduli,
                          const u64* twiddles, bool last) {
  const std::size_t n = std::size_t(1) << log_n;
  const std::size_t half = n >> 1;
  for (std::size_t g = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; g < total_bfly;
       g += std::size_t(blockDim.x) * gridDim.x) {
    const std::size_t poly_limb = g / half;
    const std::size_t k = g % half;
    const std::size_t limb = poly_limb % limbs;
    const u32 id = ids[limb];
    const u64 q = moduli[id].value, two_q = 2 * q;
    const u64* tw = twiddles + std::size_t(id) * 4 * n;
    const std::size_t t = half / m;  // butterfly span
    const std::size_t i = k / t, j = k % t;
    u64* x = data + poly_limb * n + 2 * i * t + j;
    u64* y = x + t;
    const u64 w = tw[m + i], ws = tw[n + m + i];
    u64 u = *x;
    if (u >= two_q) u -= two_q;
    u64 v = mul_shoup_lazy(*y, w, ws, q);
    u64 a = u + v, b = u + two_q - v;
    if (last) {
      if (a >= two_q) a -= two_q;
      if (a >= q) a -= q;
      if (b >= two_q) b -= two_q;
      if (b >= q) b -= q;
    }
    *x = a;
    *y = b;
  }
}

__global__ void inv_stage(u64* data, std::size_t total_bfly, int log_n, std::size_t m,
                          std::size_t limbs, const u32* ids, const Modulus* moduli,
                          const u64* twiddles, const u64* inv_n, bool last) {
  const std::size_t n = std::size_t(1) << log_n;
  const std::size_t half = n >> 1;
  for (std::size_t g = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; g < total_bfly;
       g += std::size_t(blockDim.x) * gridDim.x) {
    const std::size_t poly_limb = g / half;
    const std::size_t k = g % half;
    const std::size_t limb = poly_limb % limbs;
    const u32 id = ids[limb];
    const u64 q = moduli[id].value, two_q = 2 * q;
    const u64* tw = twiddles + std::size_t(id) * 4 * n;
    const std::size_t t = half / m;
    const std::size_t i = k / t, j = k % t;
    u64* x = data + poly_limb * n + 2 * i * t + j;
    u64* y = x + t;
    const u64 w = tw[2 * n + m + i], ws = tw[3 * n + m + i];
    u64 u = *x, v = *y;
    u64 s = u + v;
    if (s >= two_q) s -= two_q;
    u64 d = mul_shoup_lazy(u + two_q - v, w, ws, q);
    if (last) {
      const u64 ni = inv_n[2 * id], nis = inv_n[2 * id + 1];
      s = mul_shoup(s, ni, nis, q);
      d = mul_shoup(d, ni, nis, q);
    }
    *x = s;
    *y = d;
  }
}

unsigned grid_for(std::size_t work) {
  std::size_t b = (work + 255) / 256;
  return unsigned(b > 65535u * 8u ? 65535u * 8u : b);
}

// The fast kernels read twiddle pairs as 16-byte words; tables come from the pool (256-byte
// aligned), so the second condition is only a guard.
bool use_simple(const u64* twiddles) {
  static const bool simple = [] {
    const char* e = std::getenv("VEIL_NTT_SIMPLE");
    return e != nullptr && e[0] != '\0' && std::strcmp(e, "0") != 0;
  }();
  return simple || reinterpret_cast<std::uintptr_t>(twiddles) % 16 != 0;
}

}  // namespace

void ntt_forward_cuda(const Device& dev, u64* data, std::size_t num_polys, std::size_t num_limbs,
                      const u32* ids, const Modulus* moduli, const u64* twiddles, int log_n) {
  const std::size_t num_pl = num_polys * num_limbs;
  if (num_pl == 0) return;
  backend::set_current(dev);
  auto stream = backend::stream(dev);
  const NttArgs args{.data = data,
                     .ids = ids,
                     .moduli = moduli,
                     .twiddles = twiddles,
                     .inv_n = nullptr,
                     .num_polys = u32(num_polys),
                     .num_limbs = u32(num_limbs)};
  if (!use_simple(twiddles) && for_each_pass<true>(log_n, [&]<class P>() {
        ntt_pass_kernel<P>
            <<<unsigned(pass_blocks<P>(num_pl, log_n)), P::kThreads, 0, stream>>>(args);
        backend::check_last_launch("ntt_forward");
      })) {
    return;
  }
  const std::size_t n = std::size_t(1) << log_n;
  const std::size_t total = num_pl * (n / 2);
  for (std::size_t m = 1; m < n; m <<= 1) {
    fwd_stage<<<grid_for(total), 256, 0, stream>>>(data, total, log_n, m, num_limbs, ids, moduli,
                                                   twiddles, (m << 1) == n);
    backend::check_last_launch("ntt_forward (simple)");
  }
}

void ntt_inverse_cuda(const Device& dev, u64* data, std::size_t num_polys, std::size_t num_limbs,
                      const u32* ids, const Modulus* moduli, const u64* twiddles, const u64* inv_n,
                      int log_n) {
  const std::size_t num_pl = num_polys * num_limbs;
  if (num_pl == 0) return;
  backend::set_current(dev);
  auto stream = backend::stream(dev);
  const NttArgs args{.data = data,
                     .ids = ids,
                     .moduli = moduli,
                     .twiddles = twiddles,
                     .inv_n = inv_n,
                     .num_polys = u32(num_polys),
                     .num_limbs = u32(num_limbs)};
  if (!use_simple(twiddles) && for_each_pass<false>(log_n, [&]<class P>() {
        ntt_pass_kernel<P>
            <<<unsigned(pass_blocks<P>(num_pl, log_n)), P::kThreads, 0, stream>>>(args);
        backend::check_last_launch("ntt_inverse");
      })) {
    return;
  }
  const std::size_t n = std::size_t(1) << log_n;
  const std::size_t total = num_pl * (n / 2);
  for (std::size_t m = n >> 1; m >= 1; m >>= 1) {
    inv_stage<<<grid_for(total), 256, 0, stream>>>(data, total, log_n, m, num_limbs, ids, moduli,
                                                   twiddles, inv_n, m == 1);
    backend::check_last_launch("ntt_inverse (simple)");
  }
}

}  // namespace veil::detail
