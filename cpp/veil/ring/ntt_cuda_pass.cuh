// Internal to ring/ntt_cuda.cu: the NTT pass templates (one butterfly network held in registers
// and exchanged through shared memory) and the phase drivers shared by the kernels and the
// host-side emulation harness. Included by ntt_cuda.cu and ntt_fused.cuh.
#pragma once
// CUDA's vector types (uint2, ulonglong2), also for the host harness, which a plain C++ compiler
// builds; the runtime API itself is backend/'s.
#include <vector_types.h>

#include <cassert>
#include <cstdint>
#include <type_traits>

#include "veil/core/modarith.h"
#include "veil/ring/rns_poly_view.h"

namespace veil::detail {

namespace {

// One launch's operands: the polynomials (a view whose ntt_ids index the tables) and the tables
// for words W (NttTables::twiddles_for / inv_n_for).
template <class W>
struct NttArgs {
  RnsPolyView<W> v;
  const W* twiddles;
  const W* inv_n;
};

// Two words loaded at once (twiddle pairs are 2-word aligned).
template <class W>
struct WordPair;
template <>
struct WordPair<u64> {
  using type = ulonglong2;
};
template <>
struct WordPair<u32> {
  using type = uint2;
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
// thread (log2). kLean: the lean arithmetic of the header. W: the word (u64, or u32 for primes
// < 2^31 with the 32-bit butterflies of ntt.cpp: forward values in [0, 2q), inverse values in
// [0, q), the last inverse stage always merged with N^-1).
// One object is one thread's state; the drivers below call the phases with barriers between them
// (written once for the kernels and for a host harness that replays them in lock step; shared
// memory is any `Sm` indexable like a W*).
template <bool kFwd, bool kCols, int kLogN, int kLogL, int kSeqs, bool kFinal, int kLogP_ = 4,
          bool kLean = false, class W = u64, bool kTwShared = false>
struct Pass {
  using Word = W;
  static constexpr bool k32 = sizeof(W) == 4;
  static constexpr bool kColumns = kCols;
  static constexpr bool kMergeLast = !kFwd && kFinal && (kLean || k32);
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

  W v[kP];
  W* poly;          // this (polynomial, limb)
  const W* w_tab;   // psi^bitrev (forward) or psi^-bitrev (inverse) for this limb's prime
  const W* ws_tab;  // their Shoup quotients
  W q, two_q;
  W ninv, ninv_shoup;
  W w1n, w1n_shoup;  // merged last inverse stage: psi^-bitrev(1) * N^-1 and its quotient
  u32 first;         // first column / row of the tile
  u32 seq;           // this thread's column / row
  u32 s, f;          // sequence within the tile; thread within the sequence
  u32 tid;

  // Two-pass grid: block = (limb, tile, polynomial), polynomial fastest (they share twiddles).
  VEIL_HD void init(const NttArgs<W>& a, u32 block, u32 thread) {
    constexpr u32 nseg = (kN >> kLogL) / u32(kSeqs);
    const u32 poly_i = block % a.v.num_polys;
    const u32 rest = block / a.v.num_polys;
    init_at(a, poly_i, rest / nseg, rest % nseg, thread);
  }
  VEIL_HD void init_at(const NttArgs<W>& a, u32 poly_i, u32 limb, u32 seg, u32 thread) {
    set_thread(seg, thread);
    set_limb(a.twiddles, a.inv_n, a.v.ntt_ids[limb], a.v.modulus(limb), a.v.limb(poly_i, limb));
  }
  // The thread's place in the tile: sequence `seg * kSeqs + s` of every limb this block runs.
  VEIL_HD void set_thread(u32 seg, u32 thread) {
    tid = thread;
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
  // The limb the pass transforms next: its words `data`, its prime m and that prime's row `id` of
  // the tables (inv_n only read by the inverse transform's last pass). Kernels that run several
  // limbs per block (the fused ones of ntt_fused.cuh) call it once per limb.
  VEIL_HD void set_limb(const W* twiddles, const W* inv_n, u32 id, const Modulus& m, W* data) {
    const W* t = twiddles + std::size_t(id) * 4 * kN + (kFwd ? 0 : 2 * std::size_t(kN));
    set_limb_tables(t, t + kN, inv_n, id, m, data);
  }
  // The same with the twiddles (w) and their quotients (ws) given directly: the passes read
  // w[i], ws[i] for the indices their stages use (a forward column pass of 2^kLogL points: the
  // first 2^kLogL entries). With kTwShared, w and ws are in shared memory.
  VEIL_HD void set_limb_tables(const W* w, const W* ws, const W* inv_n, u32 id, const Modulus& m,
                               W* data) {
    q = static_cast<W>(m.value);
    two_q = 2 * q;
    w_tab = w;
    ws_tab = ws;
    ninv = ninv_shoup = w1n = w1n_shoup = 0;
    if constexpr (kFinal && !kFwd && k32) {  // [prime][4] table with the merged constants
      ninv = inv_n[4 * id];
      ninv_shoup = inv_n[4 * id + 1];
      w1n = inv_n[4 * id + 2];
      w1n_shoup = inv_n[4 * id + 3];
    } else if constexpr (kFinal && !kFwd) {
      ninv = inv_n[2 * id];
      ninv_shoup = inv_n[2 * id + 1];
      if constexpr (kLean) {
        w1n = mul_shoup(ninv, w_tab[1], ws_tab[1], q);
        w1n_shoup = shoup_quotient_barrett(w1n, m);
      }
    }
    poly = data;
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
    const W* src = poly + (first << kLogL);
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
    W* dst = poly + (first << kLogL);
#pragma unroll
    for (u32 i = 0; i < kP; ++i) {
      const u32 e = tid + u32(kThreads) * i;
      dst[e] = sm[flat_sofs(e)];
    }
  }

  // 32-bit butterflies, as the CPU reference (ntt.cpp): forward x in [0, 2q), any y -> [0, 2q);
  // inverse [0, q) -> [0, q).
  VEIL_HD void ct32(W& x, W& y, W w, W ws) const {
    const W u = reduce_once(x, q);
    const W t = mul_shoup(y, w, ws, q);
    x = u + t;
    y = u + q - t;
  }
  VEIL_HD void gs32(W& x, W& y, W w, W ws) const {
    const W u = x, t = y;
    x = reduce_once(u + t, q);
    y = mul_shoup(u + q - t, w, ws, q);
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
  VEIL_HD void load_twiddles(u32 tb, W (&w)[kCount], W (&ws)[kCount]) const {
#if VEIL_DEVICE_CODE
    // Read-only cache loads from global memory; plain loads where the tables are in shared
    // memory (kTwShared).
    auto fetch = [](const auto* ptr) {
      if constexpr (kTwShared) {
        return *ptr;
      } else {
        return __ldg(ptr);
      }
    };
    if constexpr (kCount >= 2) {
      using Pair = typename WordPair<W>::type;
      const auto* pw = reinterpret_cast<const Pair*>(w_tab + tb);
      const auto* ps = reinterpret_cast<const Pair*>(ws_tab + tb);
#pragma unroll
      for (int m = 0; m < kCount / 2; ++m) {
        const Pair a = fetch(pw + m), b = fetch(ps + m);
        w[2 * m] = a.x;
        w[2 * m + 1] = a.y;
        ws[2 * m] = b.x;
        ws[2 * m + 1] = b.y;
      }
    } else {
      w[0] = fetch(w_tab + tb);
      ws[0] = fetch(ws_tab + tb);
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
    if constexpr (kMergeLast && kGbit == kLogN - 1) {
      // Last inverse stage (twiddle index 1) merged with the N^-1 scaling; fully reduced.
      // 64-bit inputs are in [0, 2q), 32-bit ones in [0, q) (u + q - t then stays below 2^32).
      static_assert(kCount == 1, "the top bit is a window's last position");
#pragma unroll
      for (u32 j = 0; j < kP; ++j) {
        if (j & kBit) continue;
        const W u = v[j], t = v[j | kBit];
        v[j] = mul_shoup(u + t, ninv, ninv_shoup, q);
        v[j | kBit] = mul_shoup(u + (k32 ? q : two_q) - t, w1n, w1n_shoup, q);
      }
      return;
    }
    W w[kCount], ws[kCount];
    load_twiddles<kCount>((kN | x0) >> (kGoff + u32(lo(kR) + kI + 1)), w, ws);
#pragma unroll
    for (u32 j = 0; j < kP; ++j) {
      if (j & kBit) continue;
      const u32 m = j >> (kI + 1);
      if constexpr (kFwd && k32) {
        ct32(v[j], v[j | kBit], w[m], ws[m]);
      } else if constexpr (k32) {
        gs32(v[j], v[j | kBit], w[m], ws[m]);
      } else if constexpr (kFwd && kLean) {
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
        if constexpr (kFwd && k32) {  // [0, 2q) -> [0, q)
          v[j] = reduce_once(v[j], q);
        } else if constexpr (k32) {
          // merged last stage: already scaled and reduced
        } else if constexpr (kFwd && kLean) {  // [0, 8q) -> [0, q)
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

template <class P_, class Sm = typename P_::Word*>
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

#if defined(__CUDACC__)
// One pass over every (polynomial, limb) of a.v: block = (limb, tile, polynomial).
template <class P, int kMinBlocks>
__global__ void __launch_bounds__(P::kThreads, kMinBlocks)
    ntt_pass_kernel(NttArgs<typename P::Word> a) {
  __shared__ typename P::Word sm[P::kSmemWords];
  P p;
  p.init(a, blockIdx.x, threadIdx.x);
  ThreadEx<P> ex{p, sm};
  pass_load(ex);
  pass_rounds(ex);
  pass_store(ex);
}
#endif

}  // namespace

}  // namespace veil::detail
