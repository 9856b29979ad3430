// Exact scale management: the arithmetic of polynomial evaluation (and of EvalMod) on operands
// that carry a level and a scale, either with ciphertexts (every call runs on the evaluator) or
// without them (the same bookkeeping alone, to plan an evaluation before any ciphertext exists).
// Every addition meets equal levels and scales exactly (up to the double rounding of scales):
// constants and linear combinations land on a requested (level, scale) by one scalar
// combination at the block top above it and one rescale (the scale adjustment of
// Kim-Papadimitriou-Polyakov, CT-RSA 2022; the target scales chosen top-down as Bossuat-Mouchet-
// Troncoso-Hubaux, Eurocrypt 2021, §4.2). Python: veil._bootstrap._ScaleOnly / _CipherOps.
#pragma once
#include <cstddef>
#include <map>
#include <memory>
#include <utility>
#include <vector>

#include "veil/api/evaluator.h"
#include "veil/circuits/rescale_chain.h"

namespace veil::circuits {

/// A value of the evaluation: its level and scale and, when evaluating, its ciphertext (shared:
/// an operand moved to a lower level by to_level shares the switched copy, not a new one).
struct Operand {
  std::size_t level = 0;
  double scale = 1.0;
  std::shared_ptr<Ciphertext> ct;  // null while planning
  /// Copies switched down to lower levels (the baby steps meet the same levels many times).
  mutable std::map<std::size_t, std::shared_ptr<Ciphertext>> lowered;
};
using OperandPtr = std::shared_ptr<Operand>;

/// Level and scale arithmetic on Operands; with an evaluator, on their ciphertexts too.
/// Holds references to the chain, evaluator and key: they must outlive it.
class ScaleOps {
 public:
  /// Planning only: operands carry levels and scales, no ciphertext.
  explicit ScaleOps(const RescaleChain& chain) : chain_(chain) {}
  /// Evaluating: every operation runs on `ev`; products relinearize with `relin_keys`.
  ScaleOps(const RescaleChain& chain, const Evaluator& ev, const RelinKeys& relin_keys)
      : chain_(chain), ev_(&ev), rlk_(&relin_keys) {}

  /// True without an evaluator (operands carry no ciphertext).
  bool planning() const { return ev_ == nullptr; }
  /// The chain's rescale structure.
  const RescaleChain& chain() const { return chain_; }

  /// A planned operand.
  /// @param level, scale its level and scale.
  /// @throws InvalidArgument naming `fresh` when evaluating (operands then hold ciphertexts).
  OperandPtr fresh(std::size_t level, double scale) const;
  /// An operand holding `ct`, at its level and scale.
  /// @param ct a size-2 CKKS ciphertext.
  /// @throws InvalidArgument naming `ct` when planning or when ct is empty.
  OperandPtr wrap(Ciphertext ct) const;

  /// The level a rescale from `level` lands on.
  std::size_t below(std::size_t level) const { return chain_.below(level); }
  /// The block top whose rescale lands on `level`.
  /// @throws InvalidArgument naming `level` when there is none.
  std::size_t above(std::size_t level) const { return chain_.above(level); }

  /// a * b, both dropped to min(a.level, b.level), relinearized and rescaled once there
  /// (Evaluator::relinearize_rescale): scale a.scale b.scale / D, one block lower.
  /// @param a, b operands (the same pointer: a square, through Evaluator::square).
  /// @throws InvalidArgument naming `a`/`b` (empty) or the chain's and evaluator's errors (no
  ///         block left to rescale, mismatched keys).
  OperandPtr mul(const OperandPtr& a, const OperandPtr& b) const;
  /// a^2: mul(a, a).
  OperandPtr square(const OperandPtr& a) const { return mul(a, a); }
  /// sum_i a_i b_i landing on (level, scale) with one relinearization and one rescale (lazy
  /// relinearization): every pair dropped to above(level) and tensored (a_i == b_i: squared),
  /// the size-3 tensors summed, then relinearized and rescaled once (Evaluator::
  /// relinearize_rescale). One pair at above(level) is exactly mul() with its scale set to
  /// `scale`.
  /// @param pairs at least one pair; each a_i.scale * b_i.scale must equal scale * D (D the
  ///        block product of above(level)) to a relative 1e-9.
  /// @throws InvalidArgument naming `pairs` (empty, an empty operand, an operand below
  ///         above(level), or a scale product off scale * D), `level` (no rescale lands there),
  ///         or the evaluator's errors.
  OperandPtr mul_sum(const std::vector<std::pair<OperandPtr, OperandPtr>>& pairs,
                     std::size_t level, double scale) const;
  /// a + b: the result keeps a's level and scale.
  /// @param a, b operands at one level with scales equal to a relative 1e-9.
  /// @throws InvalidArgument naming `a`/`b` (empty) or reporting misaligned operands.
  OperandPtr add(const OperandPtr& a, const OperandPtr& b) const;
  /// a - b, as add.
  OperandPtr sub(const OperandPtr& a, const OperandPtr& b) const;
  /// a + c (Evaluator::add_scalar: the real constant at a's scale; level and scale unchanged).
  /// @throws InvalidArgument naming `a` (empty) or `value` (not finite or too large).
  OperandPtr add_const(const OperandPtr& a, double c) const;
  /// c0 + sum_i c_i a_i landing exactly on (level, scale): one scalar combination at
  /// above(level), whose terms are multiplied at the scale that makes the sum scale * D, and one
  /// rescale (Evaluator::scalar_combination, then rescale_to_next).
  /// @param terms (operand, coefficient) pairs, at least one.
  /// @param c0 the constant term.
  /// @param level, scale where the result lands.
  /// @throws InvalidArgument naming `terms` (empty, or an empty operand), `level` (no rescale
  ///         lands there) or `coeffs` (an operand below above(level): "no level left for a
  ///         constant product"), or the evaluator's errors.
  OperandPtr linear_to(const std::vector<std::pair<OperandPtr, double>>& terms, double c0,
                       std::size_t level, double scale) const;
  /// c * a landing on (level, scale): linear_to with one term (same errors).
  OperandPtr const_to(const OperandPtr& a, double c, std::size_t level, double scale) const {
    return linear_to({{a, c}}, 0.0, level, scale);
  }
  /// a dropped to `level` (primes dropped, scale unchanged; the copy is cached in a).
  /// @throws InvalidArgument naming `a` (empty) or `coeffs` (a lies below `level`).
  OperandPtr to_level(const OperandPtr& a, std::size_t level) const;

 private:
  const std::shared_ptr<Ciphertext>& lowered(const OperandPtr& a, std::size_t level) const;
  /// a * b (a == b: a^2) with both dropped to `level`, not relinearized (size 3).
  Ciphertext tensor(const OperandPtr& a, const OperandPtr& b, std::size_t level) const;
  OperandPtr share(std::shared_ptr<Ciphertext> ct) const;
  void check_aligned(const OperandPtr& a, const OperandPtr& b) const;
  void check_operand(const OperandPtr& a, const char* what) const;

  const RescaleChain& chain_;
  const Evaluator* ev_ = nullptr;
  const RelinKeys* rlk_ = nullptr;
};

}  // namespace veil::circuits
