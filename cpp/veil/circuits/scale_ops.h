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
#include <optional>
#include <utility>
#include <vector>

#include "veil/api/evaluator.h"
#include "veil/circuits/rescale_chain.h"

namespace veil::circuits {

/// A value of the evaluation: its level and scale and, when evaluating, its ciphertext.
struct Operand {
  std::size_t level = 0;
  double scale = 1.0;
  std::optional<Ciphertext> ct;  // absent while planning
  /// Copies switched down to lower levels (the baby steps meet the same levels many times).
  mutable std::map<std::size_t, Ciphertext> lowered;
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

  bool planning() const { return ev_ == nullptr; }
  const RescaleChain& chain() const { return chain_; }

  /// A planned operand at (level, scale). @throws InvalidArgument when evaluating.
  OperandPtr fresh(std::size_t level, double scale) const;
  /// An operand holding `ct` (at its level and scale). @throws InvalidArgument when planning.
  OperandPtr wrap(Ciphertext ct) const;

  /// The level a rescale from `level` lands on.
  std::size_t below(std::size_t level) const { return chain_.below(level); }
  /// The block top whose rescale lands on `level`.
  /// @throws InvalidArgument naming `level` when there is none.
  std::size_t above(std::size_t level) const { return chain_.above(level); }

  /// a * b, relinearized and rescaled once at min(a.level, b.level): scale a.scale b.scale / D.
  OperandPtr mul(const OperandPtr& a, const OperandPtr& b) const;
  /// a^2 (mul(a, a) through Evaluator::square).
  OperandPtr square(const OperandPtr& a) const { return mul(a, a); }
  /// a + b and a - b: equal levels and scales (relative 1e-9) required.
  /// @throws InvalidArgument ("misaligned") otherwise.
  OperandPtr add(const OperandPtr& a, const OperandPtr& b) const;
  OperandPtr sub(const OperandPtr& a, const OperandPtr& b) const;
  /// a + c (a real constant at a's scale).
  OperandPtr add_const(const OperandPtr& a, double c) const;
  /// c0 + sum_i c_i a_i landing exactly on (level, scale): one scalar combination at
  /// above(level), whose terms are multiplied at the scale that makes the sum scale * D, and one
  /// rescale. @throws InvalidArgument when `level` is no rescale target or an operand lies
  /// below above(level) ("no level left for a constant product").
  OperandPtr linear_to(const std::vector<std::pair<OperandPtr, double>>& terms, double c0,
                       std::size_t level, double scale) const;
  /// c * a landing on (level, scale): linear_to with one term.
  OperandPtr const_to(const OperandPtr& a, double c, std::size_t level, double scale) const {
    return linear_to({{a, c}}, 0.0, level, scale);
  }
  /// a dropped to `level` (primes dropped, scale unchanged).
  /// @throws InvalidArgument when a lies below `level`.
  OperandPtr to_level(const OperandPtr& a, std::size_t level) const;

 private:
  const Ciphertext& lowered(const OperandPtr& a, std::size_t level) const;
  void check_aligned(const OperandPtr& a, const OperandPtr& b) const;

  const RescaleChain& chain_;
  const Evaluator* ev_ = nullptr;
  const RelinKeys* rlk_ = nullptr;
};

}  // namespace veil::circuits
