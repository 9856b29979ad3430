// CUDA batched negacyclic NTT: every limb of every polynomial in each launch.
//
// Floor (DESIGN.md, "Benchmark method"): a one-pass NTT of one ciphertext at N = 2^16 with 2 x 36
// limbs must read and write every word once: 2 * 36 * 2^16 * 8 B * 2 = 75 MB, about 25 us at the
// H100's ~3.0 TB/s. Phantom's NTT takes about 4.4x a device-to-device copy of the same data; the
// goal here is <= 1.5x a copy. Integer work is the other floor: a 64-bit Shoup butterfly is ~27
// SASS instructions (6 IMAD.WIDE), so 2^16 x 62 limbs x 16 stages / 2 butterflies issue for
// ~26 us on an H200 at one instruction per scheduler per clock; large batches are as much
// compute- as memory-bound, and the variants below trade between the two.
//
// Design: the "NWT-2D" two-kernel NTT of Phantom (Yang et al., IEEE TDSC 2024, Sec. IV) and the
// merged register-resident NTT of HEonGPU (Ozcan et al., IEEE Access 2023, Alg. 6). View one
// polynomial of N = N1 * N2 words as an N1 x N2 row-major matrix (x = r * N2 + c). The first
// log2(N1) Cooley-Tukey stages touch only the row bits, so they are N2 independent N1-point
// transforms over the columns; the remaining log2(N2) stages are N1 independent transforms over
// the contiguous rows. The Gentleman-Sande inverse runs the same passes in the opposite order.
//   - Column pass: a block takes S adjacent columns (a tile of T words); adjacent threads own
//     adjacent columns, so every global access goes coalesced straight to registers.
//     Row pass: a block takes T / N2 whole rows (T contiguous words). N <= T: one pass, one block
//     per (polynomial, limb).
//   - Grid: blockIdx.x = (limb, tile, polynomial), polynomial fastest, so the polynomials over one
//     prime run together and share its twiddles in L2.
// Inside a pass each thread keeps P = 2^p words in registers and performs p butterfly stages on
// them (radix-P per thread) before exchanging through shared memory, so an L-point pass costs
// ceil(log2(L) / p) register rounds and one barrier per exchange. Row tiles in shared memory are
// padded or swizzled against bank conflicts; row passes whose first (last) round works on the low
// bits load (store) through shared memory to stay coalesced.
//
// Variants (VEIL_NTT_VARIANT, read once; detail::set_ntt_variant for benchmarks):
//   0 "r16": two passes (one for N <= 2^12), P = 16, 256 threads, T = 4096, <= 128 registers
//     (2 blocks/SM), N1 = 2^floor(logN/2). Harvey's arithmetic exactly as the CPU reference.
//   1 "r8": two passes (one for N <= 2^11), P = 8, 256 threads, T = 2048, <= 64 registers
//     (4 blocks/SM: twice the resident warps to overlap memory and integer work), N1 = 128 (S = 16
//     columns = 128 B per row segment), lean arithmetic (below).
//   2 "cluster-r8": one kernel for 2^12 <= N <= 2^16 on Hopper thread-block clusters: the C = N/T
//     blocks of a cluster hold one (polynomial, limb); each runs the column pass on its S columns
//     and keeps the result in its shared memory, the cluster syncs, and each block reads its rows
//     from the other blocks' shared memory (distributed shared memory), runs the row pass and
//     stores. Device memory is read and written once (the floor of a one-pass NTT) and there is
//     one launch. P = 8, (C, T) = (4, 1K), (8, 1K), (8, 2K), (16, 2K), (16, 4K) for logN = 12..16,
//     32 resident warps/SM; otherwise (or when the GPU cannot run the cluster) variant 1.
//   3 "cluster-r16": the same with P = 16 and (C, T) = (4, 1K), (4, 2K), (8, 2K), (8, 4K),
//     (16, 4K), (16, 8K) for logN = 12..17, 16 resident warps/SM; otherwise r16 with lean
//     arithmetic.
// Lean arithmetic (variants 1-3): the output must only be fully reduced to be bit-identical to
// the CPU (a residue in [0, q) is unique), so the lazy bounds may differ from the CPU's:
//   - forward: Harvey's butterfly reduces its upper input only on stages s = 2, 4, 6, ... (by 4q
//     when >= 4q). Inputs < 4q; after stage s values are < 6q (s even) or < 8q (s odd): u < 6q,
//     t = Shoup(y) < 2q for any 64-bit y, u + t and u + 2q - t < 8q <= 2^64 since q < 2^61.
//     The last pass reduces [0, 8q) to [0, q) in three steps. Half the corrections of the CPU's.
//   - inverse: the last stage (one twiddle, psi^-bitrev(1)) is merged with the N^-1 scaling:
//     x' = (u + v) N^-1 and y' = (u - v + 2q) (w N^-1), each one fully reduced Shoup product, with
//     (w N^-1)'s Shoup quotient derived from the Barrett constant; no separate N^-1 pass.
// Resources (ptxas -v, sm_90, CUDA 13.0; no spills anywhere): r16 121-128 registers, 32 KiB
// (columns) / 34 KiB (rows) static shared memory; r8 62-64 registers, 16 KiB; cluster-r8 64
// registers, 16 / 16 / 32 / 32 / 64 KiB dynamic (both tiles); cluster-r16 125-128 registers,
// 16.5 / 33 / 33 / 66 / 66 / 132 KiB. Single-block kernels (N <= T) may use up to 128 registers.
//
// Twiddle of the butterfly on global index bit b whose lower element has index x (SEAL's table,
// tw[m + i] with m = 2^(logN-1-b), i = x >> (b+1)): tw[(N | x) >> (b + 1)].
//
// Setting VEIL_NTT_SIMPLE=1 in the environment (read once) selects the simple one-launch-per-stage
// kernels at the end of this file instead, to bisect a suspected fault of the fast path.
#include <cooperative_groups.h>

#include <array>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>

#include "veil/backend/cluster.h"
#include "veil/backend/memory.h"
#include "veil/core/error.h"
#include "veil/ring/ntt.h"

// Not every pass configuration reads every one of Pass's constants (nvcc warning 177).
#pragma nv_diag_suppress 177

#include "veil/ring/ntt_cuda_pass.cuh"

namespace veil::detail {

namespace {

// ---- kernel families ------------------------------------------------------------------------

// Launch bounds: kWarps resident warps per SM (registers are allocated per warp), at most 16
// blocks (so one-warp blocks of small degrees keep 128 registers).
template <int kThreads, int kWarps>
constexpr int min_blocks() {
  constexpr int warps = (kThreads + 31) / 32;
  constexpr int b = kWarps / warps;
  return b < 1 ? 1 : (b > 16 ? 16 : b);
}

// Two-pass family: radix 2^kLogP, tiles of 2^kTileBits words, N1 = 2^floor(logN/2) (kHalfRows)
// or 2^(kTileBits - 4) (16 columns per column tile).
template <int kLogP_, int kTileBits_, int kWarps_, bool kLean_, bool kHalfRows>
struct TwoPass {
  static constexpr int kLogP = kLogP_, kTileBits = kTileBits_, kWarps = kWarps_;
  static constexpr bool kLean = kLean_;
  static constexpr int col_bits(int log_n) { return kHalfRows ? log_n / 2 : kTileBits - 4; }
};
using FamR16 = TwoPass<4, 12, 16, false, true>;     // variant 0 (the original kernels)
using FamR8 = TwoPass<3, 11, 32, true, false>;      // variant 1
using FamR16Lean = TwoPass<4, 12, 16, true, true>;  // fallback of variant 3

// Cluster family: tile bits per degree (0: no cluster kernel); C = N / T <= 16 blocks. (Tiles
// twice as long for 32-bit words from 2^15, the same shared memory in bytes and C = 4, 8, 8, were
// measured slower on an H100: 43 vs 36 us for 2 x 31 limbs at 2^16; bench/NOTES.md.)
template <int kLogP_, int kWarps_, int kTable>
struct Cluster {
  static constexpr int kLogP = kLogP_, kWarps = kWarps_;
  static constexpr bool kLean = true;
  static constexpr int tile_bits(int log_n) {
    if (kTable == 0) {  // radix 8
      constexpr int t[] = {10, 10, 11, 11, 12};
      return log_n >= 12 && log_n <= 16 ? t[log_n - 12] : 0;
    }
    constexpr int t[] = {10, 11, 11, 12, 12, 13};  // radix 16
    return log_n >= 12 && log_n <= 17 ? t[log_n - 12] : 0;
  }
};
using FamClusterR8 = Cluster<3, 32, 0>;   // variant 2
using FamClusterR16 = Cluster<4, 16, 1>;  // variant 3

// Blocks per launch of pass P: one per (polynomial, limb, tile).
template <class P>
std::size_t pass_blocks(std::size_t num_pl, int log_n) {
  return num_pl * ((std::size_t(1) << log_n) >> P::kLog) / std::size_t(P::kSeqsPerBlock);
}

// Calls visit.template operator()<P>() for each pass of the transform, in order.
template <bool kFwd, class F, class W, int kLogN, class Visit>
void visit_passes(Visit&& visit) {
  constexpr int tile = 1 << F::kTileBits;
  if constexpr ((1 << kLogN) <= tile) {
    visit.template operator()<Pass<kFwd, false, kLogN, kLogN, 1, true, F::kLogP, F::kLean, W>>();
  } else {
    constexpr int l1 = F::col_bits(kLogN), l2 = kLogN - l1;  // N1 = 2^l1 rows of N2 = 2^l2 words
    using Cols = Pass<kFwd, true, kLogN, l1, (tile >> l1), !kFwd, F::kLogP, F::kLean, W>;
    using Rows = Pass<kFwd, false, kLogN, l2, (tile >> l2), kFwd, F::kLogP, F::kLean, W>;
    static_assert(Cols::kThreads == (tile >> F::kLogP) && Rows::kThreads == Cols::kThreads);
    if constexpr (kFwd) {
      visit.template operator()<Cols>();
      visit.template operator()<Rows>();
    } else {
      visit.template operator()<Rows>();
      visit.template operator()<Cols>();
    }
  }
}

// Calls visit.template operator()<P1, P2, kC>() (first pass, second pass, blocks per cluster) and
// returns its result, or false where the family has no cluster kernel for this degree.
template <bool kFwd, class F, class W, int kLogN, class Visit>
bool visit_cluster(Visit&& visit) {
  constexpr int tb = F::tile_bits(kLogN);
  if constexpr (tb == 0) {
    return false;
  } else {
    constexpr int l1 = tb - 4, l2 = kLogN - l1, kC = 1 << (kLogN - tb);
    using Cols = Pass<kFwd, true, kLogN, l1, ((1 << tb) >> l1), !kFwd, F::kLogP, F::kLean, W>;
    using Rows = Pass<kFwd, false, kLogN, l2, ((1 << tb) >> l2), kFwd, F::kLogP, F::kLean, W>;
    static_assert(kC >= 2 && kC <= 16 && (1 << l1) >= kC && l2 <= tb);
    static_assert(Cols::kThreads == Rows::kThreads && Cols::kSeqsPerBlock * kC == (1 << l2) &&
                  Rows::kSeqsPerBlock * kC == (1 << l1));
    if constexpr (kFwd) {
      return visit.template operator()<Cols, Rows, kC>();
    } else {
      return visit.template operator()<Rows, Cols, kC>();
    }
  }
}

#define VEIL_NTT_DEGREES(X) \
  X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17)

// Runtime degree -> visit_passes. Returns false where there is no fast configuration for this
// degree (N < 2^4 or N > 2^17); the caller then uses the simple kernels.
template <bool kFwd, class F, class W, class Visit>
bool for_each_pass(int log_n, Visit&& visit) {
  switch (log_n) {
#define VEIL_NTT_CASE(L)                \
  case L:                               \
    visit_passes<kFwd, F, W, L>(visit); \
    return true;
    VEIL_NTT_DEGREES(VEIL_NTT_CASE)
#undef VEIL_NTT_CASE
    default:
      return false;
  }
}

template <bool kFwd, class F, class W, class Visit>
bool for_cluster(int log_n, Visit&& visit) {
  switch (log_n) {
#define VEIL_NTT_CASE(L) \
  case L:                \
    return visit_cluster<kFwd, F, W, L>(visit);
    VEIL_NTT_DEGREES(VEIL_NTT_CASE)
#undef VEIL_NTT_CASE
    default:
      return false;
  }
}

// ---- kernels --------------------------------------------------------------------------------

// One (polynomial, limb) per cluster of kC blocks: block = (limb, polynomial, rank), rank fastest.
// Dynamic shared memory: the first pass's tile (read by the whole cluster after the cluster
// barrier, never written again), then the second pass's exchange tile.
template <class P1, class P2, int kC, int kMinBlocks>
__global__ void __launch_bounds__(P1::kThreads, kMinBlocks)
    ntt_cluster_kernel(NttArgs<typename P1::Word> a) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  using W = typename P1::Word;
  extern __shared__ ulonglong2 dyn_sm[];
  W* tile1 = reinterpret_cast<W*>(dyn_sm);
  W* tile2 = tile1 + P1::kSmemWords;
  const u32 rank = cg::cluster_group::block_rank();
  const u32 pl = blockIdx.x / u32(kC);
  const u32 poly_i = pl % a.v.num_polys, limb = pl / a.v.num_polys;
  {
    P1 p;
    p.init_at(a, poly_i, limb, rank, threadIdx.x);
    ThreadEx<P1> ex{p, tile1};
    pass_load(ex);
    pass_rounds(ex);
    pass_keep(ex);
  }
  cg::cluster_group::sync();  // every tile1 complete and visible; every block has started
  P2 p;
  p.init_at(a, poly_i, limb, rank, threadIdx.x);
  p.template read_remote<P1>([&](u32 r) { return cg::cluster_group::map_shared_rank(tile1, r); });
  auto token = cg::cluster_group::barrier_arrive();  // done reading the other blocks' tiles
  ThreadEx<P2> ex{p, tile2};
  pass_rounds(ex);
  pass_store(ex);
  cg::cluster_group::barrier_wait(std::move(token));  // keep tile1 alive until all have read it
#endif
}

// ---- simple fallback: one launch per stage, one butterfly per thread ------------------------
// The butterflies of the CPU reference (ntt.cpp) for either word; the last forward stage reduces
// to [0, q), the last inverse stage multiplies by N^-1.

template <class W>
__global__ void fwd_stage(RnsPolyView<W> v, std::size_t total_bfly, std::size_t m,
                          const W* twiddles, bool last) {
  constexpr bool k32 = sizeof(W) == 4;
  const std::size_t n = v.n();
  const std::size_t half = n >> 1;
  for (std::size_t g = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; g < total_bfly;
       g += std::size_t(blockDim.x) * gridDim.x) {
    const std::size_t poly_limb = g / half;
    const std::size_t k = g % half;
    const u32 limb = u32(poly_limb % v.num_limbs);
    const u32 id = v.ntt_ids[limb];
    const W q = W(v.modulus(limb).value), two_q = 2 * q;
    const W* tw = twiddles + std::size_t(id) * 4 * n;
    const std::size_t t = half / m;  // butterfly span
    const std::size_t i = k / t, j = k % t;
    W* x = v.limb(u32(poly_limb)) + 2 * i * t + j;
    W* y = x + t;
    const W w = tw[m + i], ws = tw[n + m + i];
    W a, b;
    if constexpr (k32) {
      const W u = reduce_once(*x, q), t2 = mul_shoup(*y, w, ws, q);
      a = u + t2;
      b = u + q - t2;
    } else {
      W u = *x;
      if (u >= two_q) u -= two_q;
      const W t2 = mul_shoup_lazy(*y, w, ws, q);
      a = u + t2;
      b = u + two_q - t2;
    }
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

template <class W>
__global__ void inv_stage(RnsPolyView<W> v, std::size_t total_bfly, std::size_t m,
                          const W* twiddles, const W* inv_n, bool last) {
  constexpr bool k32 = sizeof(W) == 4;
  constexpr std::size_t kInvStride = k32 ? 4 : 2;
  const std::size_t n = v.n();
  const std::size_t half = n >> 1;
  for (std::size_t g = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; g < total_bfly;
       g += std::size_t(blockDim.x) * gridDim.x) {
    const std::size_t poly_limb = g / half;
    const std::size_t k = g % half;
    const u32 limb = u32(poly_limb % v.num_limbs);
    const u32 id = v.ntt_ids[limb];
    const W q = W(v.modulus(limb).value), two_q = 2 * q;
    const W* tw = twiddles + std::size_t(id) * 4 * n;
    const std::size_t t = half / m;
    const std::size_t i = k / t, j = k % t;
    W* x = v.limb(u32(poly_limb)) + 2 * i * t + j;
    W* y = x + t;
    const W w = tw[2 * n + m + i], ws = tw[3 * n + m + i];
    const W u = *x, d0 = *y;
    W s, d;
    if constexpr (k32) {
      s = reduce_once(u + d0, q);
      d = mul_shoup(u + q - d0, w, ws, q);
    } else {
      s = u + d0;
      if (s >= two_q) s -= two_q;
      d = mul_shoup_lazy(u + two_q - d0, w, ws, q);
    }
    if (last) {
      const W ni = inv_n[kInvStride * id], nis = inv_n[kInvStride * id + 1];
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
bool use_simple(const void* twiddles) {
  static const bool simple = [] {
    const char* e = std::getenv("VEIL_NTT_SIMPLE");
    return e != nullptr && e[0] != '\0' && std::strcmp(e, "0") != 0;
  }();
  return simple || reinterpret_cast<std::uintptr_t>(twiddles) % 16 != 0;
}

// ---- variant selection and launches ---------------------------------------------------------

constexpr int kNumVariants = 4;
// Default (-1, "auto", bench/NOTES.md, veil_ntt_bench): the one-pass cluster kernel for N <= 2^14
// (64-bit words on an H200: 11.0 vs 15.5 us for 2 x 7 limbs at 2^14; 32-bit words on an H100:
// 9-11 us vs 12-15 us); above, the two-pass r8 kernel for 64-bit words (75.5 vs 94.3 us for 2 x 31
// limbs at 2^16) and r16 for 32-bit words (H100: 32.6-33.8 vs 38-40 us for 2 x 31 limbs at 2^16).
constexpr int kDefaultVariant = -1;
template <class W>
constexpr int auto_variant(int log_n) {
  if (log_n <= 14) return 2;
  return sizeof(W) == 4 ? 0 : 1;
}
// Resident warps per SM asked of the launch bounds: 32-bit words need half the registers per
// word, so twice the warps (at most 64 on Hopper) fit the same register file.
template <class F, class W>
constexpr int kWarpsFor = sizeof(W) == 4 ? (2 * F::kWarps > 64 ? 64 : 2 * F::kWarps) : F::kWarps;
constexpr const char* kVariantNames[kNumVariants] = {"r16", "r8", "cluster-r8", "cluster-r16"};

std::atomic<int> g_variant_override{-1};

int env_variant() {
  static const int v = [] {
    const char* e = std::getenv("VEIL_NTT_VARIANT");
    if (e == nullptr || e[0] == '\0') return kDefaultVariant;
    char* end = nullptr;
    const long x = std::strtol(e, &end, 10);
    return (end != e && *end == '\0' && x >= 0 && x < kNumVariants) ? int(x) : kDefaultVariant;
  }();
  return v;
}

template <class P, int kMinBlocks>
void launch_pass(const NttArgs<typename P::Word>& args, std::size_t num_pl, int log_n,
                 backend::StreamHandle stream, const char* what) {
  ntt_pass_kernel<P, kMinBlocks>
      <<<unsigned(pass_blocks<P>(num_pl, log_n)), P::kThreads, 0, stream>>>(args);
  backend::check_last_launch(what);
}

template <bool kFwd, class F, class W>
bool run_two_pass(const NttArgs<W>& args, std::size_t num_pl, int log_n,
                  backend::StreamHandle stream) {
  return for_each_pass<kFwd, F, W>(log_n, [&]<class P>() {
    // One block per (polynomial, limb) for N <= T: few blocks, so registers over occupancy.
    constexpr int kWarps = P::kL == P::kN ? 16 : kWarpsFor<F, W>;
    launch_pass<P, min_blocks<P::kThreads, kWarps>()>(args, num_pl, log_n, stream,
                                                      kFwd ? "ntt_forward" : "ntt_inverse");
  });
}

// Launches the cluster kernel; false (nothing launched) where this device cannot run one cluster
// of it (checked once per device: backend::prepare_cluster_kernel).
template <class P1, class P2, int kC, int kMinBlocks>
bool launch_cluster(const NttArgs<typename P1::Word>& args, std::size_t num_pl, const Device& dev,
                    backend::StreamHandle stream) {
  auto* kernel = &ntt_cluster_kernel<P1, P2, kC, kMinBlocks>;
  constexpr std::size_t smem =
      std::size_t(P1::kSmemWords + P2::kSmemWords) * sizeof(typename P1::Word);
  constexpr int kMaxDevices = 64;
  static std::array<std::once_flag, kMaxDevices> once;
  static std::array<bool, kMaxDevices> usable{};
  const int device = dev.index;
  if (device < 0 || device >= kMaxDevices) return false;
  const backend::ClusterLaunch cfg{.grid = unsigned(num_pl * kC),
                                   .block = P1::kThreads,
                                   .cluster = kC,
                                   .smem = smem,
                                   .stream = stream};
  std::call_once(once[device],
                 [&] { usable[device] = backend::prepare_cluster_kernel(dev, kernel, cfg); });
  if (!usable[device]) return false;
  backend::launch_cluster(dev, kernel, cfg, "ntt (cluster kernel) launch", args);
  return true;
}

template <bool kFwd, class F, class W>
bool run_cluster(const NttArgs<W>& args, std::size_t num_pl, int log_n, const Device& dev,
                 backend::StreamHandle stream) {
  return for_cluster<kFwd, F, W>(log_n, [&]<class P1, class P2, int kC>() {
    return launch_cluster<P1, P2, kC, min_blocks<P1::kThreads, kWarpsFor<F, W>>()>(args, num_pl,
                                                                                   dev, stream);
  });
}

// The fast path of the selected variant; false where it has no configuration (simple kernels).
template <bool kFwd, class W>
bool run_fast(const Device& dev, const NttArgs<W>& args, std::size_t num_pl, int log_n) {
  if (use_simple(args.twiddles)) return false;
  auto stream = backend::stream(dev);
  int variant = ntt_variant();
  if (variant < 0) variant = auto_variant<W>(log_n);
  switch (variant) {
    case 0:
      return run_two_pass<kFwd, FamR16>(args, num_pl, log_n, stream);
    case 1:
      return run_two_pass<kFwd, FamR8>(args, num_pl, log_n, stream);
    case 2:
      return run_cluster<kFwd, FamClusterR8>(args, num_pl, log_n, dev, stream) ||
             run_two_pass<kFwd, FamR8>(args, num_pl, log_n, stream);
    default:
      return run_cluster<kFwd, FamClusterR16>(args, num_pl, log_n, dev, stream) ||
             run_two_pass<kFwd, FamR16Lean>(args, num_pl, log_n, stream);
  }
}

}  // namespace

void set_ntt_variant(int variant) {
  if (variant >= kNumVariants) {
    throw InvalidArgument("set_ntt_variant: expected -1 (environment/default) or 0.." +
                          std::to_string(kNumVariants - 1) + ", got " + std::to_string(variant));
  }
  g_variant_override.store(variant < 0 ? -1 : variant);
}

int ntt_variant() {
  const int v = g_variant_override.load(std::memory_order_relaxed);
  return v >= 0 ? v : env_variant();
}

int ntt_variant_count() { return kNumVariants; }

namespace {
std::atomic<int> g_fused_override{-1};
}  // namespace

bool fused_ntt_enabled() {
  static const bool env = [] {
    const char* e = std::getenv("VEIL_FUSED_NTT");
    return !(e != nullptr && std::strcmp(e, "0") == 0);
  }();
  const int v = g_fused_override.load(std::memory_order_relaxed);
  return v >= 0 ? v != 0 : env;
}

void set_fused_ntt(int enabled) { g_fused_override.store(enabled < 0 ? -1 : (enabled ? 1 : 0)); }

const char* ntt_variant_name(int variant) {
  if (variant < 0) return "auto";
  return variant < kNumVariants ? kVariantNames[variant] : "?";
}

template <class W>
void ntt_forward_cuda(const Device& dev, const RnsPolyView<W>& v, const W* twiddles) {
  const std::size_t num_pl = std::size_t(v.num_polys) * v.num_limbs;
  if (num_pl == 0) return;
  backend::set_current(dev);
  const NttArgs<W> args{.v = v, .twiddles = twiddles, .inv_n = nullptr};
  if (run_fast<true>(dev, args, num_pl, v.log_n)) return;
  auto stream = backend::stream(dev);
  const std::size_t n = v.n();
  const std::size_t total = num_pl * (n / 2);
  for (std::size_t m = 1; m < n; m <<= 1) {
    fwd_stage<W><<<grid_for(total), 256, 0, stream>>>(v, total, m, twiddles, (m << 1) == n);
    backend::check_last_launch("ntt_forward (simple)");
  }
}

template <class W>
void ntt_inverse_cuda(const Device& dev, const RnsPolyView<W>& v, const W* twiddles,
                      const W* inv_n) {
  const std::size_t num_pl = std::size_t(v.num_polys) * v.num_limbs;
  if (num_pl == 0) return;
  backend::set_current(dev);
  const NttArgs<W> args{.v = v, .twiddles = twiddles, .inv_n = inv_n};
  if (run_fast<false>(dev, args, num_pl, v.log_n)) return;
  auto stream = backend::stream(dev);
  const std::size_t n = v.n();
  const std::size_t total = num_pl * (n / 2);
  for (std::size_t m = n >> 1; m >= 1; m >>= 1) {
    inv_stage<W><<<grid_for(total), 256, 0, stream>>>(v, total, m, twiddles, inv_n, m == 1);
    backend::check_last_launch("ntt_inverse (simple)");
  }
}

template void ntt_forward_cuda<u64>(const Device&, const RnsPolyView<u64>&, const u64*);
template void ntt_forward_cuda<u32>(const Device&, const RnsPolyView<u32>&, const u32*);
template void ntt_inverse_cuda<u64>(const Device&, const RnsPolyView<u64>&, const u64*, const u64*);
template void ntt_inverse_cuda<u32>(const Device&, const RnsPolyView<u32>&, const u32*, const u32*);

}  // namespace veil::detail
