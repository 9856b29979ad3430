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
#include <cuda_runtime.h>

#include <array>
#include <atomic>
#include <cassert>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string>
#include <type_traits>

#include "veil/backend/memory.h"
#include "veil/core/error.h"
#include "veil/ring/ntt.h"

// Not every pass configuration reads every one of Pass's constants (nvcc warning 177).
#pragma nv_diag_suppress 177

namespace veil::detail {

namespace {

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

// Exact Shoup quotient floor(w 2^64 / q) of w < q from the Barrett constant R = floor(2^128 / q):
// floor(w R / 2^64) = w R_hi + hi(w R_lo) is exact or one short (R = 2^128/q - f, f < 1, w < 2^64),
// and the remainder w 2^64 - qt q (< 2q, formed mod 2^64) decides.
VEIL_HD u64 shoup_quotient_barrett(u64 w, const Modulus& m) {
  const u64 qt = w * m.ratio_hi + mul_hi(w, m.ratio_lo);
  const u64 r = u64(0) - qt * m.value;
  return r >= m.value ? qt + 1 : qt;
}

// One pass of an NTT: a 2^kLogL-point sub-transform over kSeqs sequences per block.
// kCols: sequences are columns (element k of column c at k * N2 + c); otherwise rows (contiguous,
// element k of row r at r * 2^kLogL + k). kFinal: this pass holds the transform's last stage and
// applies the epilogue (forward: reduce to [0, q); inverse: multiply by N^-1). kLogP: words per
// thread (log2). kLean: the lean arithmetic of the header.
// One object is one thread's state; the drivers below call the phases with barriers between them
// (written once for the kernels and for a host harness that replays them in lock step; shared
// memory is any `Sm` indexable like a u64*).
template <bool kFwd, bool kCols, int kLogN, int kLogL, int kSeqs, bool kFinal, int kLogP_ = 4,
          bool kLean = false>
struct Pass {
  static constexpr int kLogP = kLogP_;
  static constexpr u32 kP = 1u << kLogP;  // words per thread
  static_assert(kLogL >= kLogP && kLogL <= kLogN, "a pass needs P to N points");
  static constexpr int kLog = kLogL;
  static constexpr u32 kN = 1u << kLogN;
  static constexpr u32 kGoff = kCols ? kLogN - kLogL : 0;  // global index bit of sequence bit 0
  static constexpr int kSeqsPerBlock = kSeqs;
  static constexpr u32 kL = 1u << kLogL;
  static constexpr u32 kF = kL / kP;  // threads per sequence
  static constexpr int kThreads = kSeqs * int(kF);
  // Row tiles in shared memory: radix 16 pads one word per 16; radix 8 (3-bit windows, which the
  // padding leaves 2-way conflicted) XOR-swizzles the low 4 bits of k with k >> 3, k >> 7 and the
  // row (searched exhaustively: conflict-free for every row length and window used).
  static constexpr bool kSwizzle = kLogP == 3 && kLogL >= 4;
  static constexpr u32 kPitch = kSwizzle ? kL : kL + kL / 16;  // row length in shared memory
  static constexpr int kSmemWords = kCols ? kSeqs * int(kL) : kSeqs * int(kPitch);
  static constexpr int kFull = kLogL / kLogP, kRem = kLogL % kLogP;
  static constexpr int kRounds = kFull + (kRem ? 1 : 0);

  // Round r owns the p-bit window [lo(r), lo(r) + p) of the sequence index and runs the stages on
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
  u64 w1n, w1n_shoup;  // lean inverse: psi^-bitrev(1) * N^-1 (the merged last stage) and quotient
  u32 first;           // first column / row of the tile
  u32 seq;             // this thread's column / row
  u32 s, f;            // sequence within the tile; thread within the sequence
  u32 tid;

  // Two-pass grid: block = (limb, tile, polynomial), polynomial fastest (they share twiddles).
  VEIL_HD void init(const NttArgs& a, u32 block, u32 thread) {
    constexpr u32 nseg = (kN >> kLogL) / u32(kSeqs);
    const u32 poly_i = block % a.num_polys;
    const u32 rest = block / a.num_polys;
    init_at(a, poly_i, rest / nseg, rest % nseg, thread);
  }
  VEIL_HD void init_at(const NttArgs& a, u32 poly_i, u32 limb, u32 seg, u32 thread) {
    tid = thread;
    const u32 id = a.ids[limb];
    const Modulus& m = a.moduli[id];
    q = m.value;
    two_q = 2 * q;
    const u64* t = a.twiddles + std::size_t(id) * 4 * kN + (kFwd ? 0 : 2 * std::size_t(kN));
    w_tab = t;
    ws_tab = t + kN;
    ninv = ninv_shoup = w1n = w1n_shoup = 0;
    if constexpr (kFinal && !kFwd) {
      ninv = a.inv_n[2 * id];
      ninv_shoup = a.inv_n[2 * id + 1];
      if constexpr (kLean) {
        w1n = mul_shoup(ninv, w_tab[1], ws_tab[1], q);
        w1n_shoup = shoup_quotient_barrett(w1n, m);
      }
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
  // Shared-memory slot of element k of the tile's sequence s_.
  static VEIL_HD u32 sofs_of(u32 s_, u32 k) {
    if constexpr (kCols) return k * u32(kSeqs) + s_;
    if constexpr (kSwizzle) return s_ * kPitch + (k ^ (((k >> 3) ^ (k >> 7) ^ (s_ * 10)) & 15));
    return s_ * kPitch + k + (k >> 4);
  }
  VEIL_HD u32 sofs(u32 k) const { return sofs_of(s, k); }
  // Shared-memory slot of the tile's e-th word in memory order (row tiles only).
  static VEIL_HD u32 flat_sofs(u32 e) { return sofs_of(e >> kLogL, e & (kL - 1)); }
  // Where the word at offset g of the polynomial lies once this pass has run as the first pass of
  // a cluster kernel (the layout of write<kRounds - 1>): block `rank` of the cluster, `slot`.
  static VEIL_HD void locate(u32 g, u32& rank, u32& slot) {
    if constexpr (kCols) {
      const u32 c = g & ((1u << kGoff) - 1), k = g >> kGoff;
      rank = c / u32(kSeqs);
      slot = sofs_of(c % u32(kSeqs), k);
    } else {
      const u32 r = g >> kLogL, k = g & (kL - 1);
      rank = r / u32(kSeqs);
      slot = sofs_of(r % u32(kSeqs), k);
    }
  }

  VEIL_HD void load_direct() {
#pragma unroll
    for (u32 j = 0; j < kP; ++j) v[j] = poly[gofs(k_of<0>(j))];
  }
  template <class Sm>
  VEIL_HD void load_staged(Sm sm) const {  // coalesced global -> shared (row tiles)
    const u64* src = poly + (first << kLogL);
#pragma unroll
    for (u32 i = 0; i < kP; ++i) {
      const u32 e = tid + u32(kThreads) * i;
      sm[flat_sofs(e)] = src[e];
    }
  }
  template <int kR, class Sm>
  VEIL_HD void read(Sm sm) {
#pragma unroll
    for (u32 j = 0; j < kP; ++j) v[j] = sm[sofs(k_of<kR>(j))];
  }
  template <int kR, class Sm>
  VEIL_HD void write(Sm sm) const {
#pragma unroll
    for (u32 j = 0; j < kP; ++j) sm[sofs(k_of<kR>(j))] = v[j];
  }
  // Round-0 words from the tiles that pass Src left in the shared memory of the cluster's blocks;
  // rem(rank) is block rank's tile.
  template <class Src, class Rem>
  VEIL_HD void read_remote(Rem&& rem) {
#pragma unroll
    for (u32 j = 0; j < kP; ++j) {
      u32 rank, slot;
      Src::locate(gofs(k_of<0>(j)), rank, slot);
      v[j] = rem(rank)[slot];
    }
  }
  VEIL_HD void store_direct() const {
#pragma unroll
    for (u32 j = 0; j < kP; ++j) poly[gofs(k_of<kRounds - 1>(j))] = v[j];
  }
  template <class Sm>
  VEIL_HD void store_staged(Sm sm) const {  // coalesced shared -> global (row tiles)
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
  // Lean forward butterfly (header): the upper input is reduced by 4q only when kCorrect.
  template <bool kCorrect>
  VEIL_HD void ct_lean(u64& x, u64& y, u64 w, u64 ws) const {
    u64 u = x;
    if constexpr (kCorrect) {
      const u64 four_q = 2 * two_q;
      if (u >= four_q) u -= four_q;
    }
    const u64 t = mul_shoup_lazy(y, w, ws, q);
    x = u + t;
    y = u + two_q - t;
  }
  // Lean inverse butterfly: the sum (< 4q < 2^63) is corrected by its sign after subtracting 2q.
  VEIL_HD void gs_lean(u64& x, u64& y, u64 w, u64 ws) const {
    const u64 u = x, t = y;
    const u64 sum = u + t;
    const i64 d = static_cast<i64>(sum - two_q);
    y = mul_shoup_lazy(u + two_q - t, w, ws, q);
    x = d < 0 ? sum : static_cast<u64>(d);
  }

  // The 2^(p-1-i) twiddles of window position i start at tb, which is a multiple of 2^(p-1-i)
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
    constexpr int kGbit = int(kGoff) + lo(kR) + kI;  // global index bit of this stage
    constexpr int kStageNo = kLogN - 1 - kGbit;      // forward stage number (m = 2^kStageNo)
    if constexpr (kLean && !kFwd && kFinal && kGbit == kLogN - 1) {
      // Last inverse stage (twiddle index 1) merged with the N^-1 scaling; fully reduced.
      static_assert(kCount == 1, "the top bit is a window's last position");
#pragma unroll
      for (u32 j = 0; j < kP; ++j) {
        if (j & kBit) continue;
        const u64 u = v[j], t = v[j | kBit];
        v[j] = mul_shoup(u + t, ninv, ninv_shoup, q);
        v[j | kBit] = mul_shoup(u + two_q - t, w1n, w1n_shoup, q);
      }
      return;
    }
    u64 w[kCount], ws[kCount];
    load_twiddles<kCount>((kN | x0) >> (kGoff + u32(lo(kR) + kI + 1)), w, ws);
#pragma unroll
    for (u32 j = 0; j < kP; ++j) {
      if (j & kBit) continue;
      const u32 m = j >> (kI + 1);
      if constexpr (kFwd && kLean) {
        ct_lean<(kStageNo >= 2 && kStageNo % 2 == 0)>(v[j], v[j | kBit], w[m], ws[m]);
      } else if constexpr (kFwd) {
        ct(v[j], v[j | kBit], w[m], ws[m]);
      } else if constexpr (kLean) {
        gs_lean(v[j], v[j | kBit], w[m], ws[m]);
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
        if constexpr (kFwd && kLean) {  // [0, 8q) -> [0, q)
          u64 x = v[j];
          const u64 four_q = 2 * two_q;
          if (x >= four_q) x -= four_q;
          const i64 d2 = static_cast<i64>(x - two_q);
          x = d2 < 0 ? x : static_cast<u64>(d2);
          const i64 d1 = static_cast<i64>(x - q);
          v[j] = d1 < 0 ? x : static_cast<u64>(d1);
        } else if constexpr (kFwd) {
          u64 x = v[j];
          if (x >= two_q) x -= two_q;
          if (x >= q) x -= q;
          v[j] = x;
        } else if constexpr (!kLean) {  // lean: N^-1 already applied by the last stage
          v[j] = mul_shoup(v[j], ninv, ninv_shoup, q);
        }
      }
    }
  }
};

// ---- drivers: the phase sequence of a pass, shared by the kernels and the host harness ------
// `ex.each(f)` runs f(P&, sm) for every thread of the block (on the GPU: for the calling thread);
// `ex.sync()` is the block barrier.

template <class P_, class Sm = u64*>
struct ThreadEx {
  using P = P_;
  P& p;
  Sm sm;
  template <class F>
  VEIL_HD void each(F&& f) {
    f(p, sm);
  }
  VEIL_HD void sync() {
#if VEIL_DEVICE_CODE
    __syncthreads();
#endif
  }
};

template <class Ex>
VEIL_HD void pass_load(Ex& ex) {  // global -> registers, round 0
  using P = typename Ex::P;
  if constexpr (P::kLoadDirect) {
    ex.each([](P& p, auto) { p.load_direct(); });
  } else {
    ex.each([](P& p, auto sm) { p.load_staged(sm); });
    ex.sync();
    ex.each([](P& p, auto sm) { p.template read<0>(sm); });
  }
}

template <class Ex>
VEIL_HD void pass_rounds(Ex& ex) {  // all rounds; exchanges through shared memory between them
  using P = typename Ex::P;
  static_for<0, P::kRounds>([&](auto rc) {
    constexpr int r = decltype(rc)::value;
    ex.each([](P& p, auto) { p.template compute<r>(); });
    if constexpr (r + 1 < P::kRounds) {
      ex.each([](P& p, auto sm) { p.template write<r>(sm); });
      ex.sync();
      ex.each([](P& p, auto sm) { p.template read<r + 1>(sm); });
    }
  });
}

template <class Ex>
VEIL_HD void pass_store(Ex& ex) {  // registers -> global
  using P = typename Ex::P;
  if constexpr (P::kStoreDirect) {
    ex.each([](P& p, auto) { p.store_direct(); });
  } else {
    ex.each([](P& p, auto sm) { p.template write<P::kRounds - 1>(sm); });
    ex.sync();
    ex.each([](P& p, auto sm) { p.store_staged(sm); });
  }
}

// Registers -> this block's tile in shared memory, for the cluster's second pass. Each thread
// writes the slots it read for its last round (or that nobody else touched), so no barrier.
template <class Ex>
VEIL_HD void pass_keep(Ex& ex) {
  using P = typename Ex::P;
  ex.each([](P& p, auto sm) { p.template write<P::kRounds - 1>(sm); });
}

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

// Cluster family: tile bits per degree (0: no cluster kernel); C = N / T <= 16 blocks.
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
template <bool kFwd, class F, int kLogN, class Visit>
void visit_passes(Visit&& visit) {
  constexpr int tile = 1 << F::kTileBits;
  if constexpr ((1 << kLogN) <= tile) {
    visit.template operator()<Pass<kFwd, false, kLogN, kLogN, 1, true, F::kLogP, F::kLean>>();
  } else {
    constexpr int l1 = F::col_bits(kLogN), l2 = kLogN - l1;  // N1 = 2^l1 rows of N2 = 2^l2 words
    using Cols = Pass<kFwd, true, kLogN, l1, (tile >> l1), !kFwd, F::kLogP, F::kLean>;
    using Rows = Pass<kFwd, false, kLogN, l2, (tile >> l2), kFwd, F::kLogP, F::kLean>;
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
template <bool kFwd, class F, int kLogN, class Visit>
bool visit_cluster(Visit&& visit) {
  constexpr int tb = F::tile_bits(kLogN);
  if constexpr (tb == 0) {
    return false;
  } else {
    constexpr int l1 = tb - 4, l2 = kLogN - l1, kC = 1 << (kLogN - tb);
    using Cols = Pass<kFwd, true, kLogN, l1, ((1 << tb) >> l1), !kFwd, F::kLogP, F::kLean>;
    using Rows = Pass<kFwd, false, kLogN, l2, ((1 << tb) >> l2), kFwd, F::kLogP, F::kLean>;
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
template <bool kFwd, class F, class Visit>
bool for_each_pass(int log_n, Visit&& visit) {
  switch (log_n) {
#define VEIL_NTT_CASE(L)             \
  case L:                            \
    visit_passes<kFwd, F, L>(visit); \
    return true;
    VEIL_NTT_DEGREES(VEIL_NTT_CASE)
#undef VEIL_NTT_CASE
    default:
      return false;
  }
}

template <bool kFwd, class F, class Visit>
bool for_cluster(int log_n, Visit&& visit) {
  switch (log_n) {
#define VEIL_NTT_CASE(L) \
  case L:                \
    return visit_cluster<kFwd, F, L>(visit);
    VEIL_NTT_DEGREES(VEIL_NTT_CASE)
#undef VEIL_NTT_CASE
    default:
      return false;
  }
}

// ---- kernels --------------------------------------------------------------------------------

template <class P, int kMinBlocks>
__global__ void __launch_bounds__(P::kThreads, kMinBlocks) ntt_pass_kernel(NttArgs a) {
  __shared__ u64 sm[P::kSmemWords];
  P p;
  p.init(a, blockIdx.x, threadIdx.x);
  ThreadEx<P> ex{p, sm};
  pass_load(ex);
  pass_rounds(ex);
  pass_store(ex);
}

// One (polynomial, limb) per cluster of kC blocks: block = (limb, polynomial, rank), rank fastest.
// Dynamic shared memory: the first pass's tile (read by the whole cluster after the cluster
// barrier, never written again), then the second pass's exchange tile.
template <class P1, class P2, int kC, int kMinBlocks>
__global__ void __launch_bounds__(P1::kThreads, kMinBlocks) ntt_cluster_kernel(NttArgs a) {
#if !defined(__CUDA_ARCH__) || __CUDA_ARCH__ >= 900
  namespace cg = cooperative_groups;
  extern __shared__ ulonglong2 dyn_sm[];
  u64* tile1 = reinterpret_cast<u64*>(dyn_sm);
  u64* tile2 = tile1 + P1::kSmemWords;
  const u32 rank = cg::cluster_group::block_rank();
  const u32 pl = blockIdx.x / u32(kC);
  const u32 poly_i = pl % a.num_polys, limb = pl / a.num_polys;
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

// ---- variant selection and launches ---------------------------------------------------------

constexpr int kNumVariants = 4;
// Default (-1, "auto"): measured on an H200 (bench/NOTES.md, veil_ntt_bench): the one-pass
// cluster kernel wins for N <= 2^14 (11.0 vs 15.5 us for 2 x 7 limbs at 2^14), the two-pass r8
// kernel for larger N (75.5 vs 94.3 us for 2 x 31 limbs at 2^16).
constexpr int kDefaultVariant = -1;
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

void throw_if(cudaError_t err, const char* what) {
  if (err == cudaSuccess) return;
  cudaGetLastError();
  throw RuntimeError(std::string(what) + ": " + cudaGetErrorString(err));
}

template <class P, int kMinBlocks>
void launch_pass(const NttArgs& args, std::size_t num_pl, int log_n, cudaStream_t stream,
                 const char* what) {
  ntt_pass_kernel<P, kMinBlocks>
      <<<unsigned(pass_blocks<P>(num_pl, log_n)), P::kThreads, 0, stream>>>(args);
  backend::check_last_launch(what);
}

template <bool kFwd, class F>
bool run_two_pass(const NttArgs& args, std::size_t num_pl, int log_n, cudaStream_t stream) {
  return for_each_pass<kFwd, F>(log_n, [&]<class P>() {
    // One block per (polynomial, limb) for N <= T: few blocks, so registers over occupancy.
    constexpr int kWarps = P::kL == P::kN ? 16 : F::kWarps;
    launch_pass<P, min_blocks<P::kThreads, kWarps>()>(args, num_pl, log_n, stream,
                                                      kFwd ? "ntt_forward" : "ntt_inverse");
  });
}

// Launches the cluster kernel; false (nothing launched) where this device cannot run one cluster
// of it (checked once per device: cudaOccupancyMaxActiveClusters).
template <class P1, class P2, int kC, int kMinBlocks>
bool launch_cluster(const NttArgs& args, std::size_t num_pl, int device, cudaStream_t stream) {
  auto* kernel = &ntt_cluster_kernel<P1, P2, kC, kMinBlocks>;
  constexpr std::size_t smem = std::size_t(P1::kSmemWords + P2::kSmemWords) * sizeof(u64);
  constexpr int kMaxDevices = 64;
  static std::array<std::once_flag, kMaxDevices> once;
  static std::array<bool, kMaxDevices> usable{};
  if (device < 0 || device >= kMaxDevices) return false;
  cudaLaunchConfig_t cfg{};
  cudaLaunchAttribute attr[1];
  attr[0].id = cudaLaunchAttributeClusterDimension;
  attr[0].val.clusterDim.x = kC;
  attr[0].val.clusterDim.y = 1;
  attr[0].val.clusterDim.z = 1;
  cfg.blockDim = dim3(P1::kThreads, 1, 1);
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cfg.attrs = attr;
  cfg.numAttrs = 1;
  std::call_once(once[device], [&] {
    bool ok = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                   int(smem)) == cudaSuccess;
    if (ok && kC > 8) {
      ok = cudaFuncSetAttribute(kernel, cudaFuncAttributeNonPortableClusterSizeAllowed, 1) ==
           cudaSuccess;
    }
    int clusters = 0;
    cfg.gridDim = dim3(kC, 1, 1);
    ok = ok && cudaOccupancyMaxActiveClusters(&clusters, kernel, &cfg) == cudaSuccess &&
         clusters > 0;
    cudaGetLastError();  // a refusal here only selects the two-pass kernels
    usable[device] = ok;
  });
  if (!usable[device]) return false;
  cfg.gridDim = dim3(unsigned(num_pl * kC), 1, 1);
  throw_if(cudaLaunchKernelEx(&cfg, kernel, args), "ntt (cluster kernel) launch");
  return true;
}

template <bool kFwd, class F>
bool run_cluster(const NttArgs& args, std::size_t num_pl, int log_n, int device,
                 cudaStream_t stream) {
  return for_cluster<kFwd, F>(log_n, [&]<class P1, class P2, int kC>() {
    return launch_cluster<P1, P2, kC, min_blocks<P1::kThreads, F::kWarps>()>(args, num_pl, device,
                                                                             stream);
  });
}

// The fast path of the selected variant; false where it has no configuration (simple kernels).
template <bool kFwd>
bool run_fast(const Device& dev, const NttArgs& args, std::size_t num_pl, int log_n) {
  if (use_simple(args.twiddles)) return false;
  auto stream = backend::stream(dev);
  int variant = ntt_variant();
  if (variant < 0) variant = log_n <= 14 ? 2 : 1;
  switch (variant) {
    case 0:
      return run_two_pass<kFwd, FamR16>(args, num_pl, log_n, stream);
    case 1:
      return run_two_pass<kFwd, FamR8>(args, num_pl, log_n, stream);
    case 2:
      return run_cluster<kFwd, FamClusterR8>(args, num_pl, log_n, dev.index, stream) ||
             run_two_pass<kFwd, FamR8>(args, num_pl, log_n, stream);
    default:
      return run_cluster<kFwd, FamClusterR16>(args, num_pl, log_n, dev.index, stream) ||
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

const char* ntt_variant_name(int variant) {
  if (variant < 0) return "auto";
  return variant < kNumVariants ? kVariantNames[variant] : "?";
}

void ntt_forward_cuda(const Device& dev, u64* data, std::size_t num_polys, std::size_t num_limbs,
                      const u32* ids, const Modulus* moduli, const u64* twiddles, int log_n) {
  const std::size_t num_pl = num_polys * num_limbs;
  if (num_pl == 0) return;
  backend::set_current(dev);
  const NttArgs args{.data = data,
                     .ids = ids,
                     .moduli = moduli,
                     .twiddles = twiddles,
                     .inv_n = nullptr,
                     .num_polys = u32(num_polys),
                     .num_limbs = u32(num_limbs)};
  if (run_fast<true>(dev, args, num_pl, log_n)) return;
  auto stream = backend::stream(dev);
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
  const NttArgs args{.data = data,
                     .ids = ids,
                     .moduli = moduli,
                     .twiddles = twiddles,
                     .inv_n = inv_n,
                     .num_polys = u32(num_polys),
                     .num_limbs = u32(num_limbs)};
  if (run_fast<false>(dev, args, num_pl, log_n)) return;
  auto stream = backend::stream(dev);
  const std::size_t n = std::size_t(1) << log_n;
  const std::size_t total = num_pl * (n / 2);
  for (std::size_t m = n >> 1; m >= 1; m >>= 1) {
    inv_stage<<<grid_for(total), 256, 0, stream>>>(data, total, log_n, m, num_limbs, ids, moduli,
                                                   twiddles, inv_n, m == 1);
    backend::check_last_launch("ntt_inverse (simple)");
  }
}

}  // namespace veil::detail
