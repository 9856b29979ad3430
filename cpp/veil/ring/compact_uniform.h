// The compact keys' uniform sampler: the a_j halves of a key-switching key regenerated where
// they are read, so that a key holds only its b_j (half the memory; KSwitchKey::compact).
//
// The 128-bit sampler (sampler.h) spends a ChaCha20 block on 4 coefficients, about 250 integer
// operations a coefficient: too many to repeat inside the key-switching inner product. This one
// draws one candidate of the word's width per coefficient with exact rejection, from ChaCha with
// kCompactRounds rounds:
//
// - Address. Polynomial `index` (digit j of a key) of a seed: ChaCha key = the seed, counter =
//   the block b, nonce = (index low 32 bits, index high 32 bits, 0x80000000 | attempt << 16 |
//   limb), limb < 2^15 its row in Q ∪ P, attempt < 2^15. The top bit of the last nonce word keeps
//   these blocks apart from the 128-bit sampler's (whose third nonce word is a limb index).
// - Candidates. A block's 16 words are read as 4 columns (column i: words i, 4 + i, 8 + i,
//   12 + i, the state layout of RFC 8439 §2.3). With 32-bit words each word is a candidate:
//   coefficient 16 b + 4 i + r takes column i's word r. With 64-bit words two words make one:
//   coefficient 8 b + 2 i + p takes column i's words 2p (low) and 2p + 1 (high).
// - Rejection. A candidate c is accepted when c < floor(2^w / q) q (w = 32 or 64) and gives
//   c mod q: exactly uniform. A rejected coefficient takes the candidate at the same position of
//   the block with attempt 1, then 2, ... (each coefficient independently), so any coefficient is
//   computed from (seed, index, limb, b) alone, the same on every backend and in any grouping.
//   For the primes CoeffModulus::create picks (just below a power of two) a candidate is
//   rejected with probability (2^w mod q) / 2^w: below 2^-7 for 25-bit primes with 32-bit words.
//
// Rounds. 12 (ChaCha12: the rand crate's StdRng; Aumasson, "Too Much Crypto", eprint 2019/1492,
// §5.3, argues 8 suffice, the best attack reaching 7). The a_j are public; what matters is that
// they are indistinguishable from uniform and reveal nothing of the seed's source, which
// derive_uniform_seed (ChaCha20) already keeps one-way.
#pragma once
#include <cstdint>

#include "veil/core/hd.h"
#include "veil/core/modarith.h"
#include "veil/ring/chacha20.h"

namespace veil {

/// The compact sampler's ChaCha rounds (ChaCha12; see above).
inline constexpr int kCompactRounds = 12;

/// Coefficients one column (a quarter of a block) gives: 4 with 32-bit words, 2 with 64-bit.
template <class W>
inline constexpr int kCompactPerColumn = sizeof(W) == 4 ? 4 : 2;
/// Coefficients one block gives.
template <class W>
inline constexpr int kCompactPerBlock = 4 * kCompactPerColumn<W>;

/// The third nonce word of (limb, attempt).
/// @param limb the limb's address, below 2^15.
/// @param attempt the rejection attempt, below 2^15.
/// @return 0x80000000 | attempt << 16 | limb.
VEIL_HD std::uint32_t compact_stream(std::uint32_t limb, std::uint32_t attempt) {
  return 0x80000000u | (attempt << 16) | limb;
}

/// floor(2^w / q) q, the rejection bound of w-bit candidates (w = 8 sizeof(W); q odd, > 1).
/// @tparam W u32 or u64 (w = 32 or 64).
/// @param q the modulus, odd and > 1.
/// @return the largest multiple of q that is at most 2^w - 1; candidates below it are accepted.
template <class W>
VEIL_HD u64 compact_bound(u64 q) {
  const u64 top = sizeof(W) == 4 ? u64(0xFFFFFFFFu) : ~u64(0);
  return (top / q) * q;  // q does not divide 2^w, so floor((2^w - 1) / q) = floor(2^w / q)
}

/// Candidate p of a column's four words.
/// @tparam W u32 (the word col[p]) or u64 (words 2p, low, and 2p + 1, high).
/// @param col the column's four words.
/// @param p the candidate, below kCompactPerColumn<W>.
/// @return the candidate.
template <class W>
VEIL_HD u64 compact_candidate(const std::uint32_t (&col)[4], int p) {
  if constexpr (sizeof(W) == 4) {
    return col[p];
  } else {
    return u64(col[2 * p]) | (u64(col[2 * p + 1]) << 32);
  }
}

/// Block b of polynomial `index`, limb `limb` (mod m): out[k] is coefficient
/// kCompactPerBlock<W> b + k. The reference form (one thread computes the whole block, and a
/// block again for each rejected coefficient); the GPU's inner product computes the same words
/// four lanes to a block (keyswitch.cpp).
/// @tparam W u32 or u64.
/// @param key the seed.
/// @param index the polynomial's index (a key's digit).
/// @param limb the limb's address, below 2^15.
/// @param b the block.
/// @param m the limb's modulus (odd).
/// @param out receives kCompactPerBlock<W> coefficients in [0, q).
template <class W>
VEIL_HD void compact_uniform_block(const ChaChaKey& key, u64 index, std::uint32_t limb,
                                   std::uint32_t b, const Modulus& m, W* out) {
  const u64 bound = compact_bound<W>(m.value);
  const auto lo = static_cast<std::uint32_t>(index), hi = static_cast<std::uint32_t>(index >> 32);
  std::uint32_t w[16];
  chacha_block<kCompactRounds>(key, b, lo, hi, compact_stream(limb, 0), w);
  for (int i = 0; i < 4; ++i) {
    const std::uint32_t col[4] = {w[i], w[4 + i], w[8 + i], w[12 + i]};
    for (int p = 0; p < kCompactPerColumn<W>; ++p) {
      u64 c = compact_candidate<W>(col, p);
      for (std::uint32_t attempt = 1; c >= bound; ++attempt) {
        std::uint32_t v[16];
        chacha_block<kCompactRounds>(key, b, lo, hi, compact_stream(limb, attempt), v);
        const std::uint32_t again[4] = {v[i], v[4 + i], v[8 + i], v[12 + i]};
        c = compact_candidate<W>(again, p);
      }
      out[i * kCompactPerColumn<W> + p] = static_cast<W>(reduce_word(c, m));
    }
  }
}

#if defined(__CUDACC__)
/// Column lane & 3 of block (b, attempt), limb `limb`, of D polynomials at once (index
/// index0 + j for polynomial j: a key's digits from 0), computed by the four lanes
/// lane & ~3 .. lane | 3 together (every lane of the warp must call it, as __shfl_sync
/// requires): the column round is each lane's own quarter round, the diagonal round rotates
/// rows 1-3 by 1-3 lanes first and back after (the SIMD layout of ChaCha). The D states are
/// independent chains, interleaved so that each lane has D instructions to issue between
/// dependent ones. col[j][r] is polynomial j's column word r, as compact_uniform_block reads it.
/// @tparam D the number of polynomials.
/// @param key the seed.
/// @param index0 the first polynomial's index.
/// @param limb the limb's address, below 2^15.
/// @param b the block.
/// @param attempt the rejection attempt.
/// @param col receives each polynomial's column words.
template <int D>
__device__ __forceinline__ void compact_columns(const ChaChaKey& key, u64 index0,
                                                std::uint32_t limb, std::uint32_t b,
                                                std::uint32_t attempt,
                                                std::uint32_t (&col)[D][4]) {
  const unsigned i = threadIdx.x & 3u;
  // The lane's column of the initial state: sigma_i, key_i, key_{4+i}, and row 3 (counter b,
  // nonce (index low, index high, stream)).
  const std::uint32_t s0 = i == 0   ? 0x61707865u
                           : i == 1 ? 0x3320646eu
                           : i == 2 ? 0x79622d32u
                                    : 0x6b206574u;
  const std::uint32_t s1 = key.words[i];
  const std::uint32_t s2 = key.words[4 + i];
  const std::uint32_t stream = compact_stream(limb, attempt);
  const auto row3 = [&](u64 index) {
    return i == 0   ? b
           : i == 1 ? static_cast<std::uint32_t>(index)
           : i == 2 ? static_cast<std::uint32_t>(index >> 32)
                    : stream;
  };
  std::uint32_t a[D], bb[D], c[D], d[D];
#pragma unroll
  for (int j = 0; j < D; ++j) {
    a[j] = s0;
    bb[j] = s1;
    c[j] = s2;
    d[j] = row3(index0 + u64(j));
  }
  constexpr unsigned kAll = 0xFFFFFFFFu;
#pragma unroll
  for (int r = 0; r < kCompactRounds / 2; ++r) {
#pragma unroll
    for (int j = 0; j < D; ++j) {
      chacha_qr(a[j], bb[j], c[j], d[j]);
    }
#pragma unroll
    for (int j = 0; j < D; ++j) {
      bb[j] = __shfl_sync(kAll, bb[j], (i + 1) & 3u, 4);
      c[j] = __shfl_sync(kAll, c[j], (i + 2) & 3u, 4);
      d[j] = __shfl_sync(kAll, d[j], (i + 3) & 3u, 4);
    }
#pragma unroll
    for (int j = 0; j < D; ++j) {
      chacha_qr(a[j], bb[j], c[j], d[j]);
    }
#pragma unroll
    for (int j = 0; j < D; ++j) {
      bb[j] = __shfl_sync(kAll, bb[j], (i + 3) & 3u, 4);
      c[j] = __shfl_sync(kAll, c[j], (i + 2) & 3u, 4);
      d[j] = __shfl_sync(kAll, d[j], (i + 1) & 3u, 4);
    }
  }
#pragma unroll
  for (int j = 0; j < D; ++j) {
    col[j][0] = a[j] + s0;
    col[j][1] = bb[j] + s1;
    col[j][2] = c[j] + s2;
    col[j][3] = d[j] + row3(index0 + u64(j));
  }
}

/// Each still-rejected candidate c[j][p] (>= bound) takes column word(s) p of polynomial j's
/// block; says whether any is still rejected.
/// @tparam W u32 or u64.
/// @tparam D the number of polynomials.
/// @param col each polynomial's column words.
/// @param bound the rejection bound (compact_bound).
/// @param c the candidates, updated where still rejected.
/// @return whether any candidate is still rejected.
template <class W, int D>
__device__ __forceinline__ bool take_candidates(const std::uint32_t (&col)[D][4], u64 bound,
                                                u64 (&c)[D][kCompactPerColumn<W>]) {
  bool bad = false;
#pragma unroll
  for (int j = 0; j < D; ++j) {
#pragma unroll
    for (int p = 0; p < kCompactPerColumn<W>; ++p) {
      if (c[j][p] >= bound) c[j][p] = compact_candidate<W>(col[j], p);
      bad |= c[j][p] >= bound;
    }
  }
  return bad;
}

/// The lane's kCompactPerColumn<W> coefficients of block b (column lane & 3) of polynomials
/// index0 .. index0 + D - 1, limb `limb`, mod m: out[j][p] is polynomial index0 + j's
/// coefficient kCompactPerBlock<W> b + kCompactPerColumn<W> (lane & 3) + p, equal to
/// compact_uniform_block's.
/// Every lane of the warp must call it (the rejection loop votes across the warp).
/// @tparam W u32 or u64.
/// @tparam D the number of polynomials.
/// @param key the seed.
/// @param index0 the first polynomial's index.
/// @param limb the limb's address, below 2^15.
/// @param b the block.
/// @param m the limb's modulus (odd).
/// @param bound compact_bound<W>(m.value).
/// @param out receives each polynomial's kCompactPerColumn<W> coefficients of this lane.
template <class W, int D>
__device__ __forceinline__ void compact_uniform_columns(const ChaChaKey& key, u64 index0,
                                                        std::uint32_t limb, std::uint32_t b,
                                                        const Modulus& m, u64 bound,
                                                        W (&out)[D][kCompactPerColumn<W>]) {
  constexpr int C = kCompactPerColumn<W>;
  std::uint32_t col[D][4];
  u64 c[D][C];  // every candidate starts rejected, so attempt 0 fills them all
#pragma unroll
  for (int j = 0; j < D; ++j) {
#pragma unroll
    for (int p = 0; p < C; ++p) c[j][p] = ~u64(0);
  }
  // Attempt 0 outside the loop: straight-line code, which the compiler schedules with the
  // caller's loads (with it inside the loop, behind a vote, a bootstrap measured 0.75 ms more).
  compact_columns<D>(key, index0, limb, b, 0, col);
  bool bad = take_candidates<W, D>(col, bound, c);
  for (std::uint32_t attempt = 1; __any_sync(0xFFFFFFFFu, bad); ++attempt) {
    compact_columns<D>(key, index0, limb, b, attempt, col);
    bad = take_candidates<W, D>(col, bound, c);
  }
#pragma unroll
  for (int j = 0; j < D; ++j) {
#pragma unroll
    for (int p = 0; p < C; ++p) out[j][p] = static_cast<W>(reduce_word(c[j][p], m));
  }
}
#endif

}  // namespace veil
