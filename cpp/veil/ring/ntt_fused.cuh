// Forward NTTs fused with their producer and their consumer (CUDA; issue 7 "fusion where the
// passes are"). The two-pass forward NTT of ntt_cuda.cu views a polynomial of N = N1 * N2 words
// as N1 rows of N2: a column pass (the first log2 N1 stages) and a row pass (the rest). Here
//
//   - the column pass takes its input from a producer that computes it in registers (a
//     register-blocked base conversion), so the converted limbs are never written in coefficient
//     form and read back. One block holds its tile's conversion inputs in registers for all the
//     output limbs it transforms, one limb after the other (`first_pass_from_block`), with those
//     limbs' twiddles, table rows and primes in shared memory;
//   - the row pass hands its output to a consumer instead of storing it
//     (`last_pass_into_block`), so the transform's output is never stored and read back.
//
// User: ModDownNtt::apply, the CKKS rescale: the correction's exact conversion in the column
// pass, the last step (x - r) * D^-1 in the row pass, two kernels instead of four. The same
// fusion of key switching (ModUp's conversion; ModDown's correction with the kept limbs' inner
// product in the row pass) ran 15-20 % slower than the separate kernels on the H100 and is not
// used: bench/NOTES.md, "Fused NTT passes", has the floors, the kernel times and why.
//
// The block bodies are written over an execution policy `Ex` (ntt_cuda_pass.cuh: `each` runs a
// step for the block's threads, `sync` is the block barrier), so a host harness replays them
// thread by thread in lock step (tests/cpp/test_ntt_fused.cpp); the kernels and launchers below
// them are CUDA-only. Word size: 32-bit words (the conversions' inputs for four coefficients per
// thread fit the registers of a 512-thread block only with 32-bit words; 64-bit contexts keep the
// separate kernels).
#pragma once
#include <cstddef>
#include <cstdlib>

#include "veil/backend/memory.h"
#include "veil/core/error.h"
#include "veil/ring/ntt.h"
#include "veil/ring/ntt_cuda_pass.cuh"

namespace veil::detail {

/// Where a fused producer's output limb goes: the row of the NTT tables of its prime, the prime,
/// and the limb's N words (written in the column pass's output layout, in place for the row pass).
template <class W>
struct PassTarget {
  u32 ntt_id;
  Modulus m;
  W* data;
};

namespace {

// The column pass of the fused forward transform: N1 = 2^floor(logN / 2) (the split of the r16
// kernels, so the row pass is theirs), 8 columns per block (32-byte row segments of 32-bit
// words: whole sectors), 4 words per thread (so the producer's per-thread state covers 4
// coefficients: N / 4 apart).
template <int kLogN, class W>
using FusedCols = Pass<true, true, kLogN, kLogN / 2, 8, false, 2, false, W, true>;
// The row pass: 2^(logN - floor(logN / 2)) points, 16 words per thread, 4096-word tiles.
template <int kLogN, class W>
using FusedRows =
    Pass<true, false, kLogN, kLogN - kLogN / 2, ((1 << 12) >> (kLogN - kLogN / 2)), true, 4, false,
         W>;

// The column pass of the narrow producer (load_from_inputs, ntt_forward_first_pass_from_inputs):
// the r16 kernels' own column pass, 16 words per thread, 256 threads, tiles of 4096 words, the
// same split as FusedCols.
template <int kLogN, class W>
using NarrowCols =
    Pass<true, true, kLogN, kLogN / 2, ((1 << 12) >> (kLogN / 2)), false, 4, false, W>;

// A column-pass thread with the producer's per-thread state (e.g. its conversion inputs).
template <class P_, class State>
struct WithState : P_ {
  State st;
};

}  // namespace

/// Output limbs one block of the fused column pass transforms at most (its shared memory holds
/// their twiddles, table rows and targets).
inline constexpr u32 kFusedMaxRows = 16;

/// Shared memory of a fused column-pass block beside its exchange tile: for each of its output
/// limbs, the column pass's twiddles (the first 2^log2(N1) entries of the prime's table and
/// their quotients: the only ones its stages read), the producer's table row and the target.
/// Filled once per block, so the per-limb loop reads no global memory but its producer's.
template <class P, class Src>
struct FirstPassShared {
  using W = typename P::Word;
  W tw[kFusedMaxRows][2][P::kL];
  W table[kFusedMaxRows][Src::kTableWords];
  PassTarget<W> target[kFusedMaxRows];
};

/// The fused column pass of one block: group g's output limbs [r0, r1) (r1 - r0 <=
/// kFusedMaxRows) over the block's tile. `Ex::P` is WithState<FusedCols<...>, Src::State> with
/// set_thread already called; `sh` is the block's FirstPassShared. Src:
///   kCoeffs, kTableWords      4 (the words per thread), the table row's capacity
///   load(g, c0, st)           the thread's state for coefficients c0 + t * N/4, t < 4
///   target(g, r)              PassTarget of output limb r
///   table(g, r), table_words()   output limb r's table row (table_words() <= kTableWords words)
///   produce(st, g, r, row, m, v)  v[t] = limb r's value (in [0, q), q = m) at coefficient
///                             c0 + t * N/4; `row` its table row and m its prime, both in shared
///                             memory
template <class Ex, class Src, class Sh>
VEIL_HD void first_pass_from_block(Ex& ex, const typename Ex::P::Word* twiddles, const Src& src,
                                   Sh& sh, u32 g, u32 r0, u32 r1) {
  using P = typename Ex::P;
  using W = typename P::Word;
  static_assert(Src::kCoeffs == P::kP, "one producer coefficient per word of the thread");
  const u32 nr = r1 - r0, words = src.table_words();
  ex.each([&](P& p, auto) {
    for (u32 i = p.tid; i < nr; i += u32(P::kThreads)) sh.target[i] = src.target(g, r0 + i);
    for (u32 i = p.tid; i < nr * words; i += u32(P::kThreads)) {
      sh.table[i / words][i % words] = src.table(g, r0 + i / words)[i % words];
    }
  });
  ex.sync();
  ex.each([&](P& p, auto) {
    for (u32 i = p.tid; i < nr * 2 * P::kL; i += u32(P::kThreads)) {
      const u32 r = i / (2 * P::kL), k = i % (2 * P::kL);
      const u32 half = k / P::kL, e = k % P::kL;  // half 0: twiddles, 1: their quotients
      sh.tw[r][half][e] = twiddles[std::size_t(sh.target[r].ntt_id) * 4 * P::kN + half * P::kN + e];
    }
    src.load(g, p.gofs(p.template k_of<0>(0)), p.st);
  });
  ex.sync();
  for (u32 r = 0; r < nr; ++r) {
    ex.each([&](P& p, auto) {
      const PassTarget<W>& t = sh.target[r];
      p.set_limb_tables(sh.tw[r][0], sh.tw[r][1], nullptr, t.ntt_id, t.m, t.data);
      src.produce(p.st, g, r0 + r, sh.table[r], t.m, p.v);
    });
    pass_rounds(ex);
    pass_store(ex);
    ex.sync();  // the next limb's first exchange reuses the tile
  }
}

/// The fused row pass of one block: limb `limb` of polynomial `poly` of a.v, the block's tile,
/// with set_thread already called. The row pass runs into the shared tile `sm`; then, for every
/// word of the tile, x = cons.load(poly, limb, offset) (the consumer's own word there), and
/// cons.finish(poly, limb, offset, x, r) with r the transform (fully reduced) at `offset` within
/// the limb; each thread issues all its loads before its first finish. Nothing is stored unless
/// the consumer stores it. (A consumer writing where it reads, as the in-place ModDown does,
/// keeps the compiler from moving a load above the previous offset's store: with one call per
/// word, the row pass into ModDownNtt's last step waited for one global load per word, 8.7 of its
/// 15.5 cycles per instruction.)
template <class Ex, class Cons>
VEIL_HD void last_pass_into_block(Ex& ex, const NttArgs<typename Ex::P::Word>& a,
                                  const Cons& cons, u32 poly, u32 limb) {
  using P = typename Ex::P;
  ex.each([&](P& p, auto) {
    p.set_limb(a.twiddles, a.inv_n, a.v.ntt_ids[limb], a.v.modulus(limb), a.v.limb(poly, limb));
  });
  pass_load(ex);
  pass_rounds(ex);
  ex.each([](P& p, auto sm) { p.template write<P::kRounds - 1>(sm); });
  ex.sync();
  ex.each([&](P& p, auto sm) {
    const u32 base = p.first << P::kLog;
    typename P::Word x[P::kP];
#pragma unroll
    for (u32 i = 0; i < P::kP; ++i) {
      x[i] = cons.load(poly, limb, base + p.tid + u32(P::kThreads) * i);
    }
#pragma unroll
    for (u32 i = 0; i < P::kP; ++i) {
      const u32 e = p.tid + u32(P::kThreads) * i;
      cons.finish(poly, limb, base + e, x[i], sm[P::flat_sofs(e)]);
    }
  });
}

/// The narrow producer's words, the column pass's round-0 input: for each of the thread's words
/// (offset x of its limb), sum_{i < 4} in4[4 x + i] * row[i] mod m. in4 holds four words per
/// coefficient (a conversion's at most three inputs y_i and its v, zero-padded: block_inputs of
/// rns/conv_kernels.h), row the output limb's padded table row. Four products of words below
/// 2^31 sum below 2^64, so one 64-bit reduction gives the conversion's residue exactly. In place
/// of pass_load: the thread's words are a column's (kCols), so adjacent threads read adjacent
/// 16-byte groups.
template <class P>
VEIL_HD void load_from_inputs(P& p, const u32* in4, const u32 (&row)[4], const Modulus& m) {
  static_assert(P::kColumns && P::k32, "the narrow producer feeds a 32-bit column pass");
#pragma unroll
  for (u32 j = 0; j < P::kP; ++j) {
    const u32 x = p.gofs(p.template k_of<0>(j));
#if VEIL_DEVICE_CODE
    const uint4 y4 = __ldg(reinterpret_cast<const uint4*>(in4) + x);
    const u32 y[4] = {y4.x, y4.y, y4.z, y4.w};
#else
    const u32* y = in4 + 4 * std::size_t(x);
#endif
    u64 s = mad_wide(y[0], row[0], 0);
    s = mad_wide(y[1], row[1], s);
    s = mad_wide(y[2], row[2], s);
    s = mad_wide(y[3], row[3], s);
    p.v[j] = static_cast<u32>(reduce_word(s, m));
  }
}

/// Calls visit.template operator()<kLogN>() for the degrees the fused passes serve (2^12..2^17);
/// false for others.
template <class Visit>
bool visit_fused_degree(int log_n, Visit&& visit) {
  switch (log_n) {
    case 12: visit.template operator()<12>(); return true;
    case 13: visit.template operator()<13>(); return true;
    case 14: visit.template operator()<14>(); return true;
    case 15: visit.template operator()<15>(); return true;
    case 16: visit.template operator()<16>(); return true;
    case 17: visit.template operator()<17>(); return true;
    default: return false;
  }
}

#if defined(__CUDACC__)
namespace {

template <class P, class Src, int kMinBlocks>
__global__ void __launch_bounds__(P::kThreads, kMinBlocks)
    ntt_first_pass_from_kernel(const typename P::Word* twiddles, Src src, u32 tiles, u32 splits) {
  using W = typename P::Word;
  using Sh = FirstPassShared<P, Src>;
  __shared__ W sm[P::kSmemWords];
  // Raw bytes: PassTarget's Modulus has default member initializers, which __shared__ forbids.
  __shared__ alignas(16) unsigned char sh_raw[sizeof(Sh)];
  Sh& sh = *reinterpret_cast<Sh*>(sh_raw);
  const u32 tile = blockIdx.x % tiles, rest = blockIdx.x / tiles;
  const u32 split = rest % splits, g = rest / splits;
  const u32 rows = src.rows(g), per = (rows + splits - 1) / splits;
  const u32 r0 = split * per, r1 = r0 + per < rows ? r0 + per : rows;
  if (r0 >= r1) return;  // the whole block: no barrier is skipped by part of it
  WithState<P, typename Src::State> p;
  p.set_thread(tile, threadIdx.x);
  ThreadEx<WithState<P, typename Src::State>> ex{p, sm};
  first_pass_from_block(ex, twiddles, src, sh, g, r0, r1);
}

// Block = (limb, tile, polynomial), polynomial fastest (they share twiddles).
template <class P, class Cons, int kMinBlocks>
__global__ void __launch_bounds__(P::kThreads, kMinBlocks)
    ntt_last_pass_into_kernel(NttArgs<typename P::Word> a, Cons cons) {
  __shared__ typename P::Word sm[P::kSmemWords];
  constexpr u32 nseg = (P::kN >> P::kLog) / u32(P::kSeqsPerBlock);
  const u32 poly = blockIdx.x % a.v.num_polys, rest = blockIdx.x / a.v.num_polys;
  P p;
  p.set_thread(rest % nseg, threadIdx.x);
  ThreadEx<P> ex{p, sm};
  last_pass_into_block(ex, a, cons, poly, rest / nseg);
}

// The narrow producer's column pass: block = (limb, tile, polynomial), polynomial fastest, as
// ntt_pass_kernel; in4 is [num_polys][N][4], mat the output limbs' rows of four words.
template <class P>
__global__ void __launch_bounds__(P::kThreads, 4)
    ntt_cols_from_inputs_kernel(NttArgs<u32> a, const u32* in4, const u32* mat) {
  __shared__ u32 sm[P::kSmemWords];
  constexpr u32 nseg = (P::kN >> P::kLog) / u32(P::kSeqsPerBlock);
  const u32 poly = blockIdx.x % a.v.num_polys, rest = blockIdx.x / a.v.num_polys;
  const u32 limb = rest / nseg;
  P p;
  p.init_at(a, poly, limb, rest % nseg, threadIdx.x);
  const uint4 r4 = __ldg(reinterpret_cast<const uint4*>(mat) + limb);
  const u32 row[4] = {r4.x, r4.y, r4.z, r4.w};
  load_from_inputs(p, in4 + std::size_t(poly) * 4 * P::kN, row, a.v.modulus(limb));
  ThreadEx<P> ex{p, sm};
  pass_rounds(ex);
  pass_store(ex);
}

// Blocks a fused column pass aims for (about four per SM of an H100 at one resident block each;
// VEIL_FUSED_BLOCKS overrides it for tuning runs, read once).
u32 fused_target_blocks() {
  static const u32 v = [] {
    const char* e = std::getenv("VEIL_FUSED_BLOCKS");
    const long x = e ? std::strtol(e, nullptr, 10) : 0;
    return x > 0 ? u32(x) : 512u;
  }();
  return v;
}

}  // namespace

/// The column pass of a forward NTT whose input comes from `src` (see first_pass_from_block) on
/// dev's stream, for groups g < `groups` of at most `max_rows` output limbs each; the row pass
/// (ntt_forward_last_pass_into) completes the transform. Output limbs are split over blocks
/// until about fused_target_blocks() blocks run, and at most kFusedMaxRows to a block (each
/// split reloads its inputs). Returns false, launching nothing, where the degree is not served.
template <class W, class Src>
bool ntt_forward_first_pass_from(const Device& dev, int log_n, const W* twiddles, const Src& src,
                                 u32 groups, u32 max_rows) {
  if (groups == 0 || max_rows == 0) return true;
  return visit_fused_degree(log_n, [&]<int kLogN>() {
    using P = WithState<FusedCols<kLogN, W>, typename Src::State>;
    const u32 tiles = u32((std::size_t(1) << kLogN) / (P::kSeqsPerBlock * P::kL));
    u32 splits = (fused_target_blocks() + groups * tiles - 1) / (groups * tiles);
    if (splits > max_rows) splits = max_rows;
    if (splits < (max_rows + kFusedMaxRows - 1) / kFusedMaxRows) {
      splits = (max_rows + kFusedMaxRows - 1) / kFusedMaxRows;  // at most kFusedMaxRows a block
    }
    backend::set_current(dev);
    ntt_first_pass_from_kernel<FusedCols<kLogN, W>, Src, Src::kMinBlocks>
        <<<groups * splits * tiles, P::kThreads, 0, backend::stream(dev)>>>(twiddles, src, tiles,
                                                                           splits);
    backend::check_last_launch("ntt_forward_first_pass_from");
  });
}

/// The column pass of the forward NTT of every limb of v (words in [0, 2q) in the column pass's
/// output layout, for ntt_forward_last_pass_into) whose input is a narrow conversion: limb j of
/// polynomial p is sum_i in4[p][x][i] * mat[j][i] mod q_j at each offset x (load_from_inputs).
/// in4: [v.num_polys][N][4] words, mat: [v.num_limbs][4], both 16-byte aligned. One pass
/// instead of a conversion kernel, its output stored and read back, and a column pass. False
/// (nothing launched) where the degree is not served.
inline bool ntt_forward_first_pass_from_inputs(const Device& dev, const RnsPolyView<u32>& v,
                                               const u32* twiddles, const u32* in4,
                                               const u32* mat) {
  if (v.num_polys == 0 || v.num_limbs == 0) return true;
  return visit_fused_degree(v.log_n, [&]<int kLogN>() {
    using P = NarrowCols<kLogN, u32>;
    const NttArgs<u32> a{.v = v, .twiddles = twiddles, .inv_n = nullptr};
    const std::size_t blocks = std::size_t(v.num_polys) * v.num_limbs * (P::kN >> P::kLog) /
                               std::size_t(P::kSeqsPerBlock);
    backend::set_current(dev);
    ntt_cols_from_inputs_kernel<P>
        <<<unsigned(blocks), P::kThreads, 0, backend::stream(dev)>>>(a, in4, mat);
    backend::check_last_launch("ntt_forward_first_pass_from_inputs");
  });
}

/// The row pass of the fused forward NTT over v (column pass's output layout), handing each
/// word to `cons` (see last_pass_into_block) instead of storing it. False (nothing launched)
/// where the degree is not served.
template <class W, class Cons>
bool ntt_forward_last_pass_into(const Device& dev, const RnsPolyView<W>& v, const W* twiddles,
                                const Cons& cons) {
  if (v.num_polys == 0 || v.num_limbs == 0) return true;
  return visit_fused_degree(v.log_n, [&]<int kLogN>() {
    using P = FusedRows<kLogN, W>;
    const NttArgs<W> a{.v = v, .twiddles = twiddles, .inv_n = nullptr};
    const std::size_t blocks = std::size_t(v.num_polys) * v.num_limbs * (P::kN >> P::kLog) /
                               std::size_t(P::kSeqsPerBlock);
    backend::set_current(dev);
    ntt_last_pass_into_kernel<P, Cons, 4>
        <<<unsigned(blocks), P::kThreads, 0, backend::stream(dev)>>>(a, cons);
    backend::check_last_launch("ntt_forward_last_pass_into");
  });
}
#endif

}  // namespace veil::detail
