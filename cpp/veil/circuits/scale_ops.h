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
  /// The level (a rescale-block top wherever the circuits use it).
  std::size_t level = 0;
  /// The scale (exact bookkeeping: set on the ciphertext too).
  double scale = 1.0;
  /// The ciphertext when evaluating; null while planning.
  std::shared_ptr<Ciphertext> ct;
  /// Copies switched down to lower levels (the baby steps meet the same levels many times).
  mutable std::map<std::size_t, std::shared_ptr<Ciphertext>> lowered;
};
/// Operands are shared: the powers of a Chebyshev evaluation are read by many products.
using OperandPtr = std::shared_ptr<Operand>;

/// Level and scale arithmetic on Operands; with an evaluator, on their ciphertexts too.
/// Holds references to the chain, evaluator and key: they must outlive it.
class ScaleOps {
 public:
  /// Planning only: operands carry levels and scales, no ciphertext.
  /// @param chain the context's rescale structure (referenced; must outlive this object).
  explicit ScaleOps(const RescaleChain& chain) : chain_(chain) {}
  /// Evaluating: every operation runs on `ev`; products relinearize with `relin_keys`.
  /// @param chain the context's rescale structure.
  /// @param ev a CKKS evaluator of the same context.
  /// @param relin_keys the relinearization keys of the operands' key set.
  /// (All three referenced; they must outlive this object.)
  ScaleOps(const RescaleChain& chain, const Evaluator& ev, const RelinKeys& relin_keys)
      : chain_(chain), ev_(&ev), rlk_(&relin_keys) {}

  /// @return true without an evaluator (operands carry no ciphertext).
  bool planning() const { return ev_ == nullptr; }
  /// @return the chain's rescale structure.
  const RescaleChain& chain() const { return chain_; }

  /// A planned operand.
  /// @param level its level.
  /// @param scale its scale.
  /// @return an operand without ciphertext.
  /// @throws InvalidArgument naming `fresh` when evaluating (operands then hold ciphertexts).
  OperandPtr fresh(std::size_t level, double scale) const;
  /// An operand holding `ct`, at its level and scale.
  /// @param ct a size-2 CKKS ciphertext (moved in).
  /// @return the operand (ct's level and scale).
  /// @throws InvalidArgument naming `ct` when planning or when ct is empty.
  OperandPtr wrap(Ciphertext ct) const;

  /// The level a rescale from `level` lands on (RescaleChain::below).
  /// @param level a level above q_0's block.
  /// @return the top of the block below.
  /// @throws InvalidArgument naming `encrypted` in q_0's block or `level` above the top.
  std::size_t below(std::size_t level) const { return chain_.below(level); }
  /// The block top whose rescale lands on `level` (RescaleChain::above).
  /// @param level a block top below the highest.
  /// @return the top of the next block up.
  /// @throws InvalidArgument naming `level` when there is none.
  std::size_t above(std::size_t level) const { return chain_.above(level); }

  /// a * b, both dropped to min(a.level, b.level), relinearized and rescaled once there
  /// (Evaluator::relinearize_rescale): scale a.scale b.scale / D, one block lower.
  /// @param a an operand.
  /// @param b an operand (the same pointer as a: a square, through Evaluator::square).
  /// @return the product, at below(min level).
  /// @throws InvalidArgument naming `a`/`b` (empty) or the chain's and evaluator's errors (no
  ///         block left to rescale, mismatched keys).
  OperandPtr mul(const OperandPtr& a, const OperandPtr& b) const;
  /// a^2: mul(a, a).
  /// @param a an operand.
  /// @return the square, one block below a.
  /// @throws InvalidArgument as mul.
  OperandPtr square(const OperandPtr& a) const { return mul(a, a); }
  /// sum_i a_i b_i landing on (level, scale) with one relinearization and one rescale (lazy
  /// relinearization): every pair dropped to above(level) and tensored (a_i == b_i: squared),
  /// the size-3 tensors summed, then relinearized and rescaled once (Evaluator::
  /// relinearize_rescale). One pair at above(level) is exactly mul() with its scale set to
  /// `scale`.
  /// @param pairs at least one pair; each a_i.scale * b_i.scale must equal scale * D (D the
  ///        block product of above(level)) to a relative 1e-9.
  /// @param level where the sum lands (a rescale target).
  /// @param scale the result's scale (set exactly).
  /// @return the sum at (level, scale).
  /// @throws InvalidArgument naming `pairs` (empty, an empty operand, an operand below
  ///         above(level), or a scale product off scale * D), `level` (no rescale lands there),
  ///         or the evaluator's errors.
  OperandPtr mul_sum(const std::vector<std::pair<OperandPtr, OperandPtr>>& pairs,
                     std::size_t level, double scale) const;
  /// a + b: the result keeps a's level and scale.
  /// @param a an operand.
  /// @param b an operand at a's level with a scale equal to a's to a relative 1e-9.
  /// @return the sum.
  /// @throws InvalidArgument naming `a`/`b` (empty) or reporting misaligned operands.
  OperandPtr add(const OperandPtr& a, const OperandPtr& b) const;
  /// a - b, as add.
  /// @param a an operand.
  /// @param b an operand at a's level with a scale equal to a's to a relative 1e-9.
  /// @return the difference, at a's level and scale.
  /// @throws InvalidArgument naming `a`/`b` (empty) or reporting misaligned operands.
  OperandPtr sub(const OperandPtr& a, const OperandPtr& b) const;
  /// a + c (Evaluator::add_scalar: the real constant at a's scale; level and scale unchanged).
  /// @param a an operand.
  /// @param c the real constant.
  /// @return the sum.
  /// @throws InvalidArgument naming `a` (empty) or `value` (not finite or too large).
  OperandPtr add_const(const OperandPtr& a, double c) const;
  /// c0 + sum_i c_i a_i landing exactly on (level, scale): one scalar combination at
  /// above(level), whose terms are multiplied at the scale that makes the sum scale * D, and one
  /// rescale (Evaluator::scalar_combination, then rescale_to_next).
  /// @param terms (operand, coefficient) pairs, at least one.
  /// @param c0 the constant term.
  /// @param level where the result lands (a rescale target).
  /// @param scale the result's scale (set exactly).
  /// @return the combination at (level, scale).
  /// @throws InvalidArgument naming `terms` (empty, or an empty operand), `level` (no rescale
  ///         lands there) or `coeffs` (an operand below above(level): "no level left for a
  ///         constant product"), or the evaluator's errors.
  OperandPtr linear_to(const std::vector<std::pair<OperandPtr, double>>& terms, double c0,
                       std::size_t level, double scale) const;
  /// c * a landing on (level, scale): linear_to with one term.
  /// @param a an operand at or above above(level).
  /// @param c the constant.
  /// @param level where the result lands (a rescale target).
  /// @param scale the result's scale.
  /// @return c a at (level, scale).
  /// @throws InvalidArgument as linear_to.
  OperandPtr const_to(const OperandPtr& a, double c, std::size_t level, double scale) const {
    return linear_to({{a, c}}, 0.0, level, scale);
  }
  /// a dropped to `level` (primes dropped, scale unchanged; the copy is cached in a).
  /// @param a an operand.
  /// @param level a level at or below a's.
  /// @return the operand at `level` (sharing the cached copy).
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
