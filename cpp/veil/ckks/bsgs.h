// Plaintext-matrix products of CKKS slots by baby-step giant-step with double hoisting
// (Bossuat, Mouchet, Troncoso, Hubaux, "Efficient Bootstrapping for Approximate Homomorphic
// Encryption with Non-Sparse Keys", Eurocrypt 2021, §4 and Alg. 6; Lattigo v6
// circuits/common/lintrans Evaluator.MultiplyByDiagMatrixBSGS):
//
//   out = rescale( sum_G rot_G( sum_b pt(G, b) * rot_b(in) ) )
//
// 1. One ModUp of each input's c1 (key_switch_mod_up), shared by its baby steps (hoisting).
// 2. Each baby rotation stays in the extended basis Q_l ∪ P: (P sigma_b(c0) + IP0, IP1), no
//    ModDown (key_switch_inner_ext); the baby step 0 is (P c0, P c1) (key_switch_lift).
// 3. Each giant step's inner sum runs over Q_l ∪ P with plaintexts encoded there
//    (CKKSEncoder::encode_extended): u = sum_b pt(G, b) * ext_b.
// 4. G != 0: only u1 goes down to Q_l (its digits must be decomposed over Q_l); its key switch
//    by sigma_G lands in Q_l ∪ P again and sigma_G(u0) is added there, no ModDown (as Lattigo:
//    u0 never leaves the extended basis). G = 0: u is added as it is. Both accumulate over
//    Q_l ∪ P.
// 5. One ModDown of the accumulator, fused with the rescale (key_switch_rescale_down: divides by
//    the rescale block B and P at once).
// Per transform level the baby steps' ModDowns disappear, and the giant steps' become one at
// the end (fused with the rescale). The result differs from the single-hoisted path
// (Evaluator::rotate_many, multiply_plain_sum, rotate_vector, rescale_to_next) by roundings
// only: each ModDown's rounding error is now divided by the plaintexts' scale instead of
// multiplied by it.
#pragma once
#include <cstddef>
#include <vector>

#include "veil/rlwe/objects.h"

namespace veil::ckks {

/// One term of a giant step's inner sum: plain * rot_step(inputs[input]).
struct BsgsTerm {
  /// index into multiply_diagonals_bsgs's inputs
  std::size_t input = 0;
  int step = 0;                      ///< baby step: a rotation of the N/2 slots (|step| < N/2)
  /// over Q_l ∪ P (CKKSEncoder::encode_extended, or encode_extended_periodic with `shift`)
  const Plaintext* plain = nullptr;
  /// plain is stored as one period (CKKSEncoder::encode_extended_periodic with this shift):
  /// limbs of N >> shift words; 0: the full form.
  unsigned shift = 0;
};

/// One giant step: rot_step(sum of its terms).
struct BsgsGiant {
  /// giant step: a rotation of the N/2 slots (|step| < N/2) applied to the inner sum
  int step = 0;
  /// the terms of the inner sum
  std::vector<BsgsTerm> terms;
};

/// The branches multiply_diagonals_bsgs deals its work to (backend::run_branches), which run side
/// by side in a captured graph (Cerium, SOSP 2026, runs independent operations of its bootstrap
/// graph concurrently): the ModUps of the inputs that rotate (one branch each, whatever this
/// setting), the baby steps (dealt round robin to this many branches) and the giant steps (in
/// contiguous groups, max(1, setting / outputs) per output, so at least one per output). Each
/// group of giant steps sums into its own accumulator, added before the ModDown: one more
/// addition per group, and the same words (the sums are exact). Side streams are shared beyond 8
/// (backend::run_branches). 4: on an H200 the full-slot
/// bootstrap at N = 2^16 took 25.25 / 24.98 / 24.88 ms with 2 / 4 / 8 in one call, 24.84 with
/// both 4 and 8 in another (bench/NOTES.md, "Concurrent branches").
inline constexpr std::size_t kDefaultBsgsBranches = 4;
/// The largest branch count set_bsgs_branches (and VEIL_BSGS_BRANCHES) accepts.
inline constexpr std::size_t kMaxBsgsBranches = 16;
/// The setting in use: kDefaultBsgsBranches, VEIL_BSGS_BRANCHES (1..16) when set at the first
/// call, or set_bsgs_branches'.
/// @return the branch count, 1..kMaxBsgsBranches.
std::size_t bsgs_branches();
/// @param n 1 (no grouping: the order of the single-branch evaluation) to kMaxBsgsBranches.
/// @throws InvalidArgument naming `n` outside 1..kMaxBsgsBranches.
void set_bsgs_branches(std::size_t n);

/// outputs[o] = rescale(sum_{G in outputs[o]} rot_G.step(sum_{t in G.terms} t.plain *
/// rot_t.step(inputs[t.input]))), by double hoisting (file comment). Every input: CKKS, size
/// 2, NTT form, at one level l that can rescale, on one device; every plaintext: extended at
/// level l on that device; every product's scale (input scale * plaintext scale) equal within
/// kScaleTolerance. Each output is at Context::rescale_target(l), its scale the first term's
/// product scale divided by the rescale block's primes (as rescale_to_next); its key set is
/// not set (the Evaluator joins them).
/// @param inputs the input ciphertexts (size 2, NTT form, one level l and device).
/// @param outputs per output, its giant steps, each with its terms.
/// @param galois_keys a key for every nonzero baby and giant step (no composition).
/// @return one size-2 ciphertext per output, at Context::rescale_target(l).
/// @throws InvalidArgument naming `inputs` (empty, null, not CKKS, size, level, device, form),
///         `outputs` (empty, an empty giant step, a term's input out of range), `plain` (null,
///         not extended, level, device, scale, a word count other than its shift's, a shift
///         above log2(N) - 2), `galois_keys` (another context or device, a
///         missing key), `steps` (|step| >= N/2), or `encrypted` (a level in q_0's block, an
///         output scale out of range).
std::vector<Ciphertext> multiply_diagonals_bsgs(const std::vector<const Ciphertext*>& inputs,
                                                const std::vector<std::vector<BsgsGiant>>& outputs,
                                                const GaloisKeys& galois_keys);

}  // namespace veil::ckks
