// CKKS bootstrapping parameters: the configuration (slots, levels of each phase, EvalMod's
// interval and polynomial, the sparse secret's weight), a matching modulus chain, and the
// level layout a bootstrapper derives from a context (Lattigo: circuits/ckks/bootstrapping/
// parameters.go). Python: veil._bootstrap.BootstrapConfig, BootstrapChain, bootstrap_chain,
// preset_chain and the level bookkeeping of Bootstrapper.__init__.
//
// The pipeline (bootstrapper.h) runs SlotToCoeff first (Chen-Chillotti-Song, Eurocrypt 2019),
// at the bottom of the chain, then the sparse-secret encapsulation and ModRaise, SubSum,
// CoeffToSlot at the top of the chain and EvalMod below it; the levels between EvalMod's output
// and SlotToCoeff's input are the user's.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "veil/circuits/rescale_chain.h"
#include "veil/rlwe/params.h"

namespace veil::circuits {

/// What to bootstrap and how (defaults: full slots, Cheddar-like level budget).
struct BootstrapConfig {
  /// Slots refreshed: a power of two in 2..N/2; 0 = N/2 (full slots). Sparse slots need a
  /// ciphertext whose N/2 slots repeat with this period.
  std::size_t slots = 0;
  /// Levels (rescale blocks) of CoeffToSlot, 1..16: more levels, fewer rotations.
  std::size_t cts_levels = 3;
  /// Levels (rescale blocks) of SlotToCoeff, 1..16: more levels, fewer rotations.
  std::size_t stc_levels = 3;
  /// K, the bound on |I| (EvalMod's interval is [-(K + 1), K + 1]); with h = 32 the
  /// coefficients of I have a standard deviation of about sqrt(h / 12) = 1.6, so K = 12 is 7
  /// standard deviations (Bossuat-Troncoso-Hubaux, eprint 2022/024, §5).
  std::size_t k_range = 12;
  /// Degree of the Chebyshev interpolant of the scaled cosine.
  std::size_t evalmod_degree = 31;
  /// r, the number of double-angle steps.
  std::size_t double_angle = 3;
  /// h, the Hamming weight of the encapsulated sparse secret.
  std::size_t hamming_weight = 32;
  /// Sparse slots (n <= N/4) only: the real and imaginary parts go through one EvalMod, packed
  /// side by side in 2n-periodic slots, instead of two (Chen-Chillotti-Song, Eurocrypt 2019,
  /// §4.2; Lattigo's RepackImag2Real). Free on the way in (CoeffToSlot's last level writes the
  /// lower n of every 2n slots only); on the way out the two halves are separated by a 0/1
  /// mask, which costs one level: bootstrap_chain adds it above the user levels (a preset
  /// chain has one user level less), and on a chain without it levels_left() is one less.
  bool pack_sparse = false;

  /// @return the levels EvalMod consumes: ceil(log2(d + 1)) (the Chebyshev evaluation,
  ///         polynomial.h) + r.
  std::size_t evalmod_depth() const;
  /// @return the levels bootstrapping consumes in all: cts_levels + evalmod_depth() +
  ///         stc_levels (without pack_sparse's mask level).
  std::size_t depth() const;
  /// Checks every field (slots against N when n > 0; pack_sparse needs 2 <= slots <= N/4).
  /// @param n N, the ring degree, or 0 to check without it.
  /// @throws InvalidArgument naming the field.
  void validate(std::size_t n = 0) const;
};

/// A modulus chain for bootstrapping, as bit sizes (special primes last) and rescale blocks.
struct BootstrapChain {
  /// The prime sizes in bits, q_0 first, the special primes last.
  std::vector<int> coeff_modulus_bits;
  /// The rescale blocks of Q, from q_0's up (EncryptionParameters::rescale_groups).
  std::vector<std::size_t> rescale_groups;
  /// k, the number of special primes.
  std::size_t special_primes = 0;
  /// Primes per key-switching digit.
  std::size_t alpha = 0;
  /// The scale of the user levels (2^40).
  double scale = 0.0;
  /// The levels left to the user after a bootstrap.
  std::size_t user_levels = 0;

  /// CKKS EncryptionParameters of degree n with this chain (CoeffModulus::create's primes).
  /// @param n N, a power of two.
  /// @param word_bits 0 (the context chooses), 32 or 64.
  /// @return the parameters (Context::create validates them).
  /// @throws InvalidArgument naming `poly_modulus_degree`, `word_bits` or `bit_sizes` (via
  ///         CoeffModulus::create), or when not enough primes of a size exist.
  EncryptionParameters parameters(std::size_t n, int word_bits = 0) const;
};

/// A chain at N = 2^log_n with `user_levels` levels left after bootstrapping. Bottom up: q_0
/// (55 bits), the SlotToCoeff levels (40), the user levels (40, scale 2^40), the EvalMod levels
/// (60) and the CoeffToSlot levels (56), then the special primes (60 bits; default 5, digits of
/// 4 primes). word_bits = 32: blocks of ~30-bit primes (q_0 and each EvalMod and CoeffToSlot
/// level two primes, each SlotToCoeff level one, the user levels alternating one and two primes
/// from the top) and 12 special primes of 31 bits with digits of 12 primes (Cheddar's
/// bootparam_40 shape). EvalMod's 60-bit levels cannot shrink (about one bit of precision per
/// bit); SlotToCoeff's can (bench/NOTES.md, "Levels, measured small"). config.pack_sparse adds
/// the unpacking mask's level above the user levels (40 bits, or one ~30-bit prime).
/// @param log_n log2 N, 10..17.
/// @param user_levels the levels left after bootstrapping.
/// @param config the bootstrapping configuration (validated against N).
/// @param word_bits 32 or 64.
/// @param special the number of special primes (default: 5 with 64-bit words, 12 with 32).
/// @param alpha primes per digit (default: special - 1 with 64-bit words, special with 32).
/// @return the chain, scale 2^40.
/// @throws InvalidArgument naming `word_bits` (not 32 or 64), `log_n` (outside 10..17) or the
///         config's fields.
BootstrapChain bootstrap_chain(int log_n, std::size_t user_levels,
                               const BootstrapConfig& config = {}, int word_bits = 64,
                               std::optional<std::size_t> special = std::nullopt,
                               std::optional<std::size_t> alpha = std::nullopt);
/// bootstrap_chain with as many user levels as the security bound allows (SecurityLevel::none:
/// two, for tests at small N). N = 2^16 at 128 bits: 15 user levels with 64-bit words
/// (nominal log2 QP = 1723 <= 1747), 13 with 32-bit words (1747).
/// @param n N, a power of two in 2^10..2^17.
/// @param security the bound (max_coeff_modulus_bits over the nominal bit sizes).
/// @param config the bootstrapping configuration.
/// @param word_bits 32 or 64.
/// @return the chain with the most user levels that fit.
/// @throws InvalidArgument naming `poly_modulus_degree` (N out of range, or the bound leaves
///         no user level), `word_bits` or the config's fields.
BootstrapChain preset_chain(std::size_t n, SecurityLevel security,
                            const BootstrapConfig& config = {}, int word_bits = 64);

/// The level layout of bootstrapping on one context: validated configuration, the levels each
/// phase starts at, the scale factors and the rotations the transforms need.
class BootstrapParameters {
 public:
  /// @param ctx a CKKS context whose chain has config.depth() rescale blocks above q_0's and at
  ///        least one user level (see bootstrap_chain).
  /// @param config the configuration.
  /// @param scale Delta, the scale ciphertexts are bootstrapped at (finite, >= 2).
  /// @throws InvalidArgument naming `context` (not CKKS), `coeff_modulus` (chain too short),
  ///         `slots` (not a power of two in 2..N/2, or fewer FFT stages than transform levels),
  ///         `scale`, or the config's other fields.
  BootstrapParameters(ContextPtr ctx, const BootstrapConfig& config, double scale);

  /// @return the CKKS context.
  const ContextPtr& context() const { return chain_.context(); }
  /// @return the context's rescale structure.
  const RescaleChain& chain() const { return chain_; }
  /// @return the (validated) configuration, as given (slots 0 stays 0; slots() resolves it).
  const BootstrapConfig& config() const { return config_; }
  /// @return Delta.
  double scale() const { return scale_; }
  /// @return n, the slots refreshed.
  std::size_t slots() const { return slots_; }
  /// @return the level bootstrapping starts at (SlotToCoeff's top; higher inputs are switched
  ///         down).
  std::size_t input_level() const { return input_level_; }
  /// @return the level of a refreshed ciphertext: below CoeffToSlot and EvalMod (and the
  ///         unpacking mask's block with pack_sparse).
  std::size_t output_level() const { return output_level_; }
  /// @return where EvalMod ends: output_level(), or the block above it with pack_sparse.
  std::size_t evalmod_output_level() const { return evalmod_output_level_; }
  /// @return whether EvalMod runs once on both halves (config().pack_sparse).
  bool packed() const { return config_.pack_sparse; }
  /// Rescales a refreshed ciphertext allows before it reaches input_level() again: the
  /// multiplications the user has between bootstraps (output_level() down to input_level()).
  /// @return the number of rescale blocks.
  std::size_t levels_left() const { return levels_left_; }
  /// The level of a refreshed ciphertext whose input lay below input_level() (SlotToCoeff's or
  /// q_0's levels): bootstrapped in the original order (ModRaise, CoeffToSlot, EvalMod, then
  /// SlotToCoeff), it comes back stc_levels rescale blocks below output_level().
  /// @return that level.
  std::size_t low_output_level() const { return low_output_level_; }
  /// @return the top of q_0's block (where ModRaise starts).
  std::size_t q0_level() const { return chain_.tops().front(); }
  /// @return q_0's block product as a double (the exact product rounded once).
  double q0() const { return q0_; }
  /// @return the top level (CoeffToSlot starts there after ModRaise).
  std::size_t top_level() const { return chain_.tops().back(); }
  /// @return EvalMod's input level.
  std::size_t evalmod_level() const { return evalmod_level_; }
  /// @return EvalMod's working scale (the product of its top block, ~2^60).
  double evalmod_scale() const { return evalmod_scale_; }
  /// CoeffToSlot's constant: Delta / (q_0 (K + 1)) / 2 / (N / 2n) (EvalMod's interval, the
  /// real/imaginary split, SubSum's repetition).
  /// @return the constant.
  double coeff_to_slot_constant() const { return cts_constant_; }
  /// gamma = q_0 / (2 pi Delta): EvalMod's output sin(2 pi t / q_0) is read as the message by
  /// declaring its scale Delta gamma as Delta (no level).
  /// @return gamma.
  double gamma() const { return gamma_; }
  /// @return the signed rotation steps of every transform and SubSum (ascending, no 0).
  const std::vector<int>& rotation_steps() const { return rotation_steps_; }
  /// Galois elements of rotation_steps() and the conjugation (2N - 1), ascending: the keys
  /// BootstrapKeys must hold.
  /// @return the elements (a copy).
  std::vector<std::uint32_t> galois_elements() const;
  /// For each of galois_elements(), the highest level the bootstrapper uses its key at
  /// (CoeffToSlot's levels, SubSum and the conjugation at the top; SlotToCoeff at input_level()
  /// and, for inputs below it, at output_level()): the level its key needs (KSwitchKey::level).
  /// @return one level per element.
  const std::vector<std::size_t>& galois_key_levels() const { return galois_key_levels_; }
  /// For each of galois_elements(), the key polynomials (digits x limbs of Q_l ∪ P) one
  /// bootstrap of an input at input_level() reads from its key, summed over its uses
  /// (LinearTransform::rotation_uses_of: a baby step once per input of its transform level, a
  /// giant step once per output): what regenerating a compact key's a_j costs per bootstrap
  /// (BootstrapKeyStorage::max_bytes ranks the keys by it).
  /// @return one count per element.
  const std::vector<std::size_t>& galois_key_reads() const { return galois_key_reads_; }
  /// A rotation step of the n-slot vector as a signed step of the N/2 slots (k mod n, in
  /// (-n/2, n/2]).
  /// @param k a step (any sign).
  /// @return the signed step.
  int step(long long k) const;

 private:
  RescaleChain chain_;
  BootstrapConfig config_;
  double scale_ = 0, q0_ = 0, evalmod_scale_ = 0, cts_constant_ = 0, gamma_ = 0;
  std::size_t slots_ = 0, input_level_ = 0, output_level_ = 0, levels_left_ = 0, evalmod_level_ = 0;
  std::size_t low_output_level_ = 0, evalmod_output_level_ = 0;
  std::vector<int> rotation_steps_;
  std::vector<std::uint32_t> galois_elements_;
  std::vector<std::size_t> galois_key_levels_, galois_key_reads_;
};

}  // namespace veil::circuits
