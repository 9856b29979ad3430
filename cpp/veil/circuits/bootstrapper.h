// CKKS bootstrapping: refreshes a ciphertext near the bottom of the modulus chain to a higher
// level (Cheon-Han-Kim-Kim-Song, "Bootstrapping for Approximate Homomorphic Encryption",
// Eurocrypt 2018), with SlotToCoeff first (Chen-Chillotti-Song, Eurocrypt 2019), sparse-secret
// encapsulation (Bossuat-Troncoso-Hubaux, eprint 2022/024, §5), factored transforms evaluated by
// hoisted baby-step giant-step products (Halevi-Shoup, CRYPTO 2014/2018; Han-Ki, CT-RSA 2020)
// and EvalMod by a Chebyshev interpolant and double angles evaluated with exact scales
// (Bossuat-Mouchet-Troncoso-Hubaux, Eurocrypt 2021). Lattigo: circuits/ckks/bootstrapping/
// evaluator.go. Python (the oracle these equal word for word): veil._bootstrap.Bootstrapper.
//
// Everything runs through the Evaluator on the keys' device, so the CPU and the GPU compute the
// same words. The steps are public so that a caller can time or replace one:
//   bootstrap(ct) = eval_mod(coeff_to_slot(mod_raise(slot_to_coeff(prepare(ct))))), with the
//   input's scale restored at the end.
//
// Inputs below input_level() (a ciphertext spent into SlotToCoeff's levels or down to q_0's):
// SlotToCoeff cannot run first any more (it needs stc_levels blocks above q_0's), so such an
// input is bootstrapped in the papers' original order (CHKKS18 §4): ModRaise at q_0, CoeffToSlot,
// EvalMod, then SlotToCoeff from output_level() down to low_output_level(), with a second set of
// SlotToCoeff matrices encoded there on first use:
//   bootstrap(ct) = slot_to_coeff(eval_mod(coeff_to_slot(mod_raise(prepare(ct))))).
// Why not reserve the bottom levels instead (never let a ciphertext go below input_level()): the
// user would lose stc_levels usable levels on every ciphertext that is decrypted without a further
// bootstrap, and a ciphertext that got there anyway (manual mod_switch, auto_rescale=False, bytes
// from elsewhere) could never be refreshed. The cost of the original order, paid only by such
// inputs: the result lands stc_levels blocks lower, and precision drops by about log2(sqrt(n))
// bits for n slots (EvalMod's error on each coefficient is spread over every slot by the final
// SlotToCoeff, whereas with SlotToCoeff first the coefficients are the slot values themselves):
// measured at N = 2^11, full slots, 64-bit words: mean 25.5 -> 20.5 bits, worst slot 23.7 -> 16.7
// (tests/cpp/test_bootstrap.cpp and tests/python/test_bootstrap.py print them).
#pragma once
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "veil/api/evaluator.h"
#include "veil/circuits/bootstrap_keys.h"
#include "veil/circuits/bootstrap_parameters.h"
#include "veil/circuits/evalmod.h"
#include "veil/circuits/graph_replay.h"
#include "veil/circuits/linear_transform.h"
#include "veil/ckks/encoder.h"

namespace veil::circuits {

/// Bootstraps ciphertexts of one context with one key set. Immutable after construction and
/// safe to share between threads (as the Evaluator).
///
/// Memory: the keys (BootstrapKeys::bytes(); about 6.3 GiB at N = 2^16 with 32-bit words, 15 GiB
/// with 64-bit words) and the encoded transform matrices (plaintext_bytes(); 1.2-1.4 GiB there,
/// 0.18 GiB at 4096 slots: the DFT factors' diagonals repeat with their block size and are
/// stored as one period, LinearTransform; 3.3-3.9 GiB in full form).
class Bootstrapper {
 public:
  /// Encodes the transforms' matrices on the keys' device and checks the keys.
  /// @param params the level layout (BootstrapParameters).
  /// @param keys the evaluation keys (BootstrapKeys::generate, or loaded), moved in.
  /// @throws InvalidArgument naming the missing or mismatched key (BootstrapKeys::check);
  ///         RuntimeError if EvalMod's planned output level is not params' (an internal
  ///         inconsistency).
  Bootstrapper(BootstrapParameters params, BootstrapKeys keys);

  /// Refreshes `ct` to output_level(), keeping its scale: the slots come back with about 20 bits
  /// of precision for values of magnitude <= 1 (full slots, N = 2^16, the default config). A
  /// ciphertext above input_level() is first switched down (its extra levels are not used); one
  /// below it (down to q0_level()) is bootstrapped in the original order and comes back at
  /// low_output_level() with about log2(sqrt(slots)) fewer bits (file comment). The pipeline
  /// runs as if the scale were Delta: the plaintext t (message m = t / s_in) comes back as t,
  /// which the output's scale s_in reads as m again. That needs s_in within 2^4 of Delta
  /// (q_0 / s_in sets EvalMod's message ratio); a ciphertext at another scale (the 2^50 that
  /// 32-bit chains' one-prime blocks leave on every other level, a 2^30 encryption) is first
  /// brought to Delta by one constant product and rescale (ScaleOps::const_to: one level) and
  /// comes back at scale Delta.
  /// @param ct a size-2 CKKS ciphertext of the keys' key set and device, at a level >=
  ///        q0_level() (above q_0's block when its scale is not within 2^4 of Delta). For
  ///        sparse slots its N/2 slots repeat with period slots().
  /// @return a size-2 ciphertext at output_level() (low_output_level() when the input, after a
  ///         scale adjustment, lies below input_level()) with ct's scale (or Delta).
  /// @throws InvalidArgument naming `ct` (empty, another context, size != 2, level inside q_0's
  ///         block below its top, a scale far from Delta with no level left to adjust it), and
  ///         the evaluator's errors (other key set or device).
  Ciphertext bootstrap(const Ciphertext& ct) const;

  /// The checks of bootstrap() and the input where the pipeline starts, at scale Delta:
  /// brought to Delta if its scale is not within 2^4 of it (one level), then switched down to
  /// input_level() when at or above it (SlotToCoeff first), else to q0_level() (ModRaise
  /// first). bootstrap(ct) runs the steps on it and restores ct's scale.
  /// @param ct as bootstrap().
  /// @return the pipeline's input: size 2, at input_level() or q0_level(), scale Delta.
  /// @throws InvalidArgument as bootstrap().
  Ciphertext prepare(const Ciphertext& ct) const;
  /// The scale bootstrap() returns for an input at `input_scale`.
  /// @param input_scale the input's scale.
  /// @return input_scale when within 2^4 of Delta, else Delta.
  double output_scale(double input_scale) const;

  /// SlotToCoeff: the slots z (read as a bit-reversed coefficient vector) become the
  /// plaintext's coefficients, stc_levels levels down (CHKKS18 §4.1). At input_level() it runs
  /// first (Chen-Chillotti-Song 2019) and lands on q_0's top; at output_level() it is the last
  /// step of the original order (EvalMod's output: the coefficients come back in place) and
  /// lands on low_output_level(), with its matrices encoded there on the first such call. The
  /// last level's two outputs are added after conjugating the second (SEAL's odd slots sit at
  /// the conjugate roots).
  /// @param ct size 2, at input_level() or output_level(); its scale is taken as Delta.
  /// @return a ciphertext at q0_level() (or low_output_level()) with scale Delta.
  /// @throws InvalidArgument naming `ct` for another level or size.
  Ciphertext slot_to_coeff(const Ciphertext& ct) const;
  /// Sparse-secret encapsulation and ModRaise (CHKKS18 §3.1; BTH22 §5): the key switched to the
  /// sparse secret at q_0, the modulus raised to the top (phase t = Delta z + q_0 I(X)), the key
  /// switched back; then SubSum (CHKKS18 §4.2) for sparse slots.
  /// @param ct size 2, at q0_level().
  /// @return a ciphertext at the top level, same scale.
  /// @throws InvalidArgument naming `ct` for another level or size.
  Ciphertext mod_raise(const Ciphertext& ct) const;
  /// CoeffToSlot (CHKKS18 §4.1, factored as Han-Ki 2020): the slots become t's coefficients
  /// divided by q_0 (K + 1), w = (t_lo + i t_hi) / (q_0 (K + 1)), cts_levels levels down.
  /// @param ct size 2, at the top level.
  /// @return a ciphertext at evalmod_level() with scale evalmod_scale().
  /// @throws InvalidArgument naming `ct` for another level or size.
  Ciphertext coeff_to_slot(const Ciphertext& ct) const;
  /// EvalMod on the real and imaginary parts (split by a conjugation; the imaginary part
  /// through X^(N/2) and the oddness of sine): f(Re w) + i f(Im w), f(x) = sin(2 pi K1 x),
  /// at output_level() with scale Delta gamma, which is read as Delta (the factor q_0 / (2 pi
  /// Delta) costs no level).
  /// @param ct size 2, at evalmod_level().
  /// @return a ciphertext at output_level() with scale Delta (declared).
  /// @throws InvalidArgument naming `ct` for another level or size.
  Ciphertext eval_mod(const Ciphertext& ct) const;

  /// @return the level layout this bootstrapper was built with.
  const BootstrapParameters& parameters() const { return params_; }
  /// @return the evaluation keys.
  const BootstrapKeys& keys() const { return keys_; }
  /// @return EvalMod's polynomial.
  const EvalMod& evalmod() const { return evalmod_; }
  /// @return the CoeffToSlot levels, in the order they run.
  const std::vector<LinearTransform>& coeff_to_slot_transforms() const { return cts_; }
  /// @return the SlotToCoeff levels (from input_level()), in the order they run.
  const std::vector<LinearTransform>& slot_to_coeff_transforms() const { return stc_; }
  /// @return bytes of the encoded transform matrices on the device (with the original order's
  ///         SlotToCoeff matrices once an input below input_level() made them).
  std::size_t plaintext_bytes() const;
  /// @return the device of the keys and plaintexts (ciphertexts must live there).
  const Device& device() const { return keys_.device(); }
  /// @return true once bootstrap() replays a captured CUDA graph (GPU, after the first call;
  ///         see GraphReplay: VEIL_GRAPHS=0 turns graphs off).
  bool uses_graph() const { return replay_->active(); }
  /// @return why the graph capture failed, or "" (bootstrap() then runs its steps directly).
  std::string graph_failure() const { return replay_->failure(); }

 private:
  /// The four steps in order, on a ciphertext at input_level() with scale Delta.
  Ciphertext pipeline(const Ciphertext& x) const;
  /// Throws InvalidArgument naming `ct` unless it is a size-2 ciphertext of this context.
  void check_operand(const Ciphertext& ct) const;
  void check_input(const Ciphertext& ct, std::size_t level, const char* step) const;
  /// Whether `scale` is within 2^4 of Delta (the pipeline then reads it as Delta).
  bool near_delta(double scale) const;
  Ciphertext run_slot_to_coeff(const Ciphertext& ct, const std::vector<LinearTransform>& levels) const;
  /// The original order's SlotToCoeff levels (from output_level()), encoded on first use.
  const std::vector<LinearTransform>& late_slot_to_coeff() const;
  struct Late {
    std::once_flag once;
    std::atomic<bool> ready{false};
    std::vector<LinearTransform> stc;
  };
  BootstrapParameters params_;
  BootstrapKeys keys_;
  Evaluator ev_;
  EvalMod evalmod_;
  std::vector<LinearTransform> cts_, stc_;
  Plaintext mask_;  // pack_sparse: 1 in the lower n of every 2n slots, at EvalMod's output
  std::shared_ptr<GraphReplay> replay_ = std::make_shared<GraphReplay>();
  std::shared_ptr<Late> late_ = std::make_shared<Late>();
};

}  // namespace veil::circuits

namespace veil::ckks {
/// The CKKS bootstrapper under the scheme's name (it lives in the circuits layer).
using Bootstrapper = circuits::Bootstrapper;
/// The bootstrapping configuration under the scheme's name (circuits::BootstrapConfig).
using BootstrapConfig = circuits::BootstrapConfig;
/// The bootstrapping level layout under the scheme's name (circuits::BootstrapParameters).
using BootstrapParameters = circuits::BootstrapParameters;
/// The bootstrapping keys under the scheme's name (circuits::BootstrapKeys).
using BootstrapKeys = circuits::BootstrapKeys;
}  // namespace veil::ckks
