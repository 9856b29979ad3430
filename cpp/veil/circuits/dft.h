// The homomorphic DFT of CKKS bootstrapping: the "special FFT" of the encoding and its inverse
// as products of sparse radix-2 stages (Cheon-Han-Kim-Kim-Song, "Bootstrapping for Approximate
// Homomorphic Encryption", Eurocrypt 2018, §4; Han-Ki, "Better Bootstrapping for Approximate
// Homomorphic Encryption", CT-RSA 2020, §3), merged into a few levels of plaintext-matrix
// products (CoeffToSlot and SlotToCoeff), each evaluated by linear_transform.h.
//
// SEAL's slot order (generator 3) differs from the generator-5 order of the papers; the matrices
// use the generator -3 mod 4n, which generates the same subgroup as 5 (so the radix-2
// factorization applies), and the odd slots, which sit at the conjugate roots, are handled by
// masks folded into the first CoeffToSlot and the last SlotToCoeff level
// (python/veil/_bootstrap.py's module docstring has the derivation).
// Python: veil._bootstrap.special_fft_stages, special_ifft_stages, _groups, _merge.
#pragma once
#include <cstddef>
#include <vector>

#include "veil/circuits/linear_transform.h"

namespace veil::circuits {

/// The radix-2 stages of W x for W[j, k] = zeta^(g^j k), zeta = exp(2 pi i / 4n), g = -3 mod
/// 4n, x in bit-reversed order: W x = S_{log n} ... S_1 (bitrev x). Stage s (block length 2^s,
/// half h = 2^(s-1)) is the butterfly (u, v) -> (u + w v, u - w v) of positions p and p + h, so
/// its diagonals are 0 and +-h ([log2 n] stages of n slots). The special FFT as sparse
/// FFT-like levels: Chen-Chillotti-Song, "Improved Bootstrapping for Approximate Homomorphic
/// Encryption", Eurocrypt 2019; Han-Ki, CT-RSA 2020, §3.
/// @param n the slots, a power of two >= 2.
/// @return S_1 .. S_{log2 n}, each an n x n map.
/// @throws InvalidArgument naming `n` unless it is a power of two >= 2.
std::vector<Diagonals> special_fft_stages(std::size_t n);
/// The inverses S_s^-1, in the same order: (a, b) -> ((a + b) / 2, (a - b) / (2 w)).
/// @param n the slots, a power of two >= 2.
/// @return S_1^-1 .. S_{log2 n}^-1, each an n x n map.
/// @throws InvalidArgument naming `n` unless it is a power of two >= 2.
std::vector<Diagonals> special_ifft_stages(std::size_t n);

/// `count` consecutive stages split into `parts` groups (min(parts, count), at least one), the
/// larger groups first: the stage indices of each group.
/// @param count the number of stages.
/// @param parts the number of groups wanted.
/// @return the groups of indices 0..count-1, in order.
std::vector<std::vector<std::size_t>> split_stages(std::size_t count, std::size_t parts);
/// The product of stages[i] for i in `order`, the first applied first.
/// @param stages the stages (n x n maps).
/// @param order indices into stages.
/// @param n the slots.
/// @return the product (the identity when order is empty).
/// @throws InvalidArgument naming `order` for an index out of range.
Diagonals merge_stages(const std::vector<Diagonals>& stages, const std::vector<std::size_t>& order,
                       std::size_t n);

/// One level of a factored transform: outputs[o] = sum_i matrices[o][i] inputs[i] at `level`.
/// `slots`: the length of its diagonals when it differs from the transform's n (2n for
/// CoeffToSlot's packed last level), 0 otherwise.
struct DftLevel {
  /// [outputs][inputs] maps.
  std::vector<std::vector<Diagonals>> matrices;
  /// The inputs' level (a rescale-block top).
  std::size_t level = 0;
  /// The diagonals' length when it differs from the transform's n; 0 otherwise.
  std::size_t slots = 0;
  /// The diagonals' length.
  /// @param n the transform's slots.
  /// @return slots, or n when slots is 0.
  std::size_t slots_or(std::size_t n) const { return slots ? slots : n; }
};

/// An n x n map M as a 2n x 2n map that writes M x into the lower n of every 2n slots and 0
/// into the upper n, for an input that repeats with period n: diagonal k (taken signed, |k| <=
/// n/2, so its rotation step is the same) keeps its values in slots [0, n) and is 0 in [n, 2n).
/// Folds the mask of the packed EvalMod (BootstrapConfig::pack_sparse) into CoeffToSlot.
/// @param m an n x n map.
/// @return the 2n x 2n map.
Diagonals lower_half_of_2n(const Diagonals& m);

/// CoeffToSlot (CHKKS18 §4.1): w' = W^-1 (E z + O conj z) * c in bit-reversed order, as `levels`
/// merged groups of the inverse stages (from the last stage's inverse down to the first). The
/// first level takes two inputs (z and conj z, with the even/odd column masks E, O) and carries
/// the constant c; the levels start at `top_level` and go down one rescale block each.
/// @param n the slots (a power of two >= 2); @param levels the number of levels (1..log2 n;
///        more are capped at log2 n); @param c the constant (finite); @param ctx a CKKS context.
/// @param top_level the first level's input level (a block top).
/// @param pack the last level writes w' only into the lower n of every 2n slots
///        (lower_half_of_2n; its DftLevel::slots is 2n): BootstrapConfig::pack_sparse, n <= N/4.
/// @return min(levels, log2 n) levels, from top_level down.
/// @throws InvalidArgument naming `n` (not a power of two >= 2; above N/4 with pack),
///         `levels` (0), `c` or `top_level` (above the top level, or fewer than `levels`
///         rescale blocks at and below it above q_0's).
std::vector<DftLevel> coeff_to_slot_levels(std::size_t n, std::size_t levels, std::size_t top_level,
                                           double c, const Context& ctx, bool pack = false);
/// SlotToCoeff: the stages of W in `levels` merged groups from `input_level` down; the last
/// level has two outputs, its rows masked by E and O (the slots then satisfy
/// E (W w) + O conj(W w) = z once the second output is conjugated and added).
/// @param n the slots (a power of two >= 2).
/// @param levels the number of levels (1..log2 n; more are capped at log2 n).
/// @param input_level the first level's input level (a block top).
/// @param ctx a CKKS context.
/// @return min(levels, log2 n) levels, from input_level down.
/// @throws InvalidArgument naming `n`, `levels` or `input_level` as coeff_to_slot_levels.
std::vector<DftLevel> slot_to_coeff_levels(std::size_t n, std::size_t levels,
                                           std::size_t input_level, const Context& ctx);

/// The scales between a chain of levels that takes ciphertexts from scale s_first to s_last:
/// the plaintexts' largest encoded magnitude (pt scale x max |entry|, whose rounding error is
/// what a plaintext adds) is the same at every level, M = (s_last / s_first x prod D_i x prod
/// max|d_i|)^(1/L), since pt scale_i = s_out_i D_i / s_in_i telescopes. Returns the L + 1 scales
/// s_first, s_1, ..., s_last.
/// @param levels the transform's levels, in the order they run.
/// @param block_products D_i, the rescale block product at each level's level.
/// @param s_first the scale in (finite, > 0).
/// @param s_last the scale out (finite, > 0).
/// @return the L + 1 scales.
/// @throws InvalidArgument naming `levels` (empty, or not one product per level, or an
///         all-zero level) or `s_first`/`s_last`.
std::vector<double> shared_precision_scales(const std::vector<DftLevel>& levels,
                                            const std::vector<double>& block_products,
                                            double s_first, double s_last);

}  // namespace veil::circuits
