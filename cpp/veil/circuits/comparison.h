// Comparison on CKKS ciphertexts: sign(x) by the composite polynomials of
// Cheon, Kim and Kim, "Efficient Homomorphic Comparison Methods with Optimal
// Complexity" (Asiacrypt 2020, eprint 2019/1234): d_g stages of g_n (their Table, §3.5,
// which widens the interval around 0 fast) then d_f stages of f_n(x) =
// sum_{i=0}^{n} binom(2i, i) / 4^i x (1 - x^2)^i (§3.1, Eq. (2): odd, f_n(±1) =
// ±1, flat there to order n, so each stage contracts the distance to ±1). The
// counts d_g, d_f are the smallest that bring the image of [epsilon, 1] within
// 2^-(bits + 1) of 1 (the scalar map iterated in double precision: plan_sign);
// the spare bit absorbs the CKKS noise. Built on it, as in §5 of the paper:
// compare (sign(a - b) + 1) / 2, max and min ((a + b ± (a - b) sign(a - b)) /
// 2) and relu ((x + x sign(x)) / 2). Every stage is one Chebyshev evaluation
// (polynomial.h: ceil(log2(2n + 2)) levels, exact scales); results land on the
// input's scale. Python: veil._functions (ct.sign, ct.relu, ct.maximum,
// ct.minimum, ct.greater).
#pragma once
#include <cstddef>
#include <functional>
#include <utility>
#include <vector>

#include "veil/circuits/polynomial.h"

namespace veil::circuits {

/// Power-basis coefficients (lowest degree first, degree 2n + 1) of f_n(x) =
/// sum_{i=0}^{n} binom(2i, i) / 4^i x (1 - x^2)^i (Cheon et al., Asiacrypt
/// 2020, §3.1); f_3 = (35x - 35x^3 + 21x^5 - 5x^7) / 16.
/// @param n 1..8.
/// @return 2n + 2 coefficients (the even ones 0).
/// @throws InvalidArgument naming `n`.
std::vector<double> sign_f_coefficients(std::size_t n);

/// Power-basis coefficients (degree 2n + 1) of the paper's g_n (Cheon et al.,
/// Asiacrypt 2020, §3.5, the table of g_n with coefficients over 2^10; τ = 1/4:
/// g_n maps [1/4, 1] into about [3/4, 1]: g_3's minimum there is 0.748);
/// g_3 = (4589x - 16577x^3 + 25614x^5 - 12860x^7) / 2^10.
/// @param n 1..4 (the table's rows).
/// @return 2n + 2 coefficients (the even ones 0).
/// @throws InvalidArgument naming `n`.
std::vector<double> sign_g_coefficients(std::size_t n);

/// The composite sign approximation for inputs with |x| in [epsilon, 1].
struct SignPlan {
  std::size_t n = 3;        ///< f_n and g_n (degree 2n + 1)
  std::size_t g_stages = 0; ///< d_g: g_n applied first
  std::size_t f_stages = 0; ///< d_f: then f_n
  double epsilon = 0;       ///< the smallest |x| the precision holds for
  int bits = 0;             ///< requested precision (bits) for |x| >= epsilon
  double scalar_bits = 0;   ///< -log2 max_{x in [epsilon, 1]} |1 - F(x)| of the scalar map F
  /// Rescale levels: (g_stages + f_stages) ceil(log2(2n + 2)) on chains of
  /// one-prime blocks.
  /// @return the depth.
  std::size_t depth() const;
  /// F(x) = f_n^(d_f)(g_n^(d_g)(x)) in double precision (Horner).
  /// @param x a real number.
  /// @return F(x).
  /// @throws InvalidArgument naming `n` when n is outside 1..4.
  double scalar(double x) const;
};

/// The smallest d_g + d_f (then the smallest d_g) such that |1 - F(x)| <=
/// 2^-(bits + 1) for every x in [epsilon, 1] (F odd: the same on [-1,
/// -epsilon]). The worst case is the image of [epsilon, 1], propagated stage by
/// stage as an interval (each stage's extremes over a grid of 4096 points plus
/// its end points: f_n is monotone on [-1, 1], g_n's interior extremes are
/// flat).
/// @param epsilon in (0, 1): the half-width of the interval around 0 left out.
/// @param bits 1..30.
/// @param n 1..4 (g_n's table).
/// @return the plan (at most 64 stages).
/// @throws InvalidArgument naming `epsilon` (outside (0, 1), or too small for 64 stages),
///         `bits` or `n`.
SignPlan plan_sign(double epsilon, int bits, std::size_t n = 3);

/// sign, compare, maximum, minimum and relu on CKKS ciphertexts (slot-wise,
/// real parts). Precision (absolute error, as veil.ckks.precision) >= plan.bits
/// bits where the input is at least epsilon from 0 (sign, compare: from each
/// other), given CKKS noise below 2^-(bits+2) (scale 2^40: ~2^-25); inside
/// (-epsilon, epsilon) sign lies in [-1, 1] only.
class ComparisonEvaluator {
public:
  /// @param ctx a CKKS context.
  /// @throws InvalidArgument naming `context` when it is empty or not a CKKS context.
  explicit ComparisonEvaluator(ContextPtr ctx);

  /// sign(x) slot-wise: ±1 within 2^-bits for x in [-1, -epsilon] ∪ [epsilon,
  /// 1]. Depth: plan.depth() (epsilon 2^-8, 12 bits, n = 3: 3 g_3 + 3 f_3
  /// stages, 18 levels). The input is dropped to the block top at or below its
  /// level; the result has its scale.
  /// @param ct a size-2 CKKS ciphertext with real values in [-1, 1].
  /// @param relin_keys relinearization keys of ct's key set.
  /// @param plan from plan_sign.
  /// @return a ciphertext plan.depth() rescale levels below ct's block top.
  /// @throws InvalidArgument naming `ct` (empty, size != 2, another context,
  ///         inside q_0's block, or fewer levels left than the plan needs: the
  ///         message gives both) or the evaluator's errors.
  Ciphertext sign(const Ciphertext& ct, const RelinKeys& relin_keys, const SignPlan& plan) const;
  /// (sign(a - b) + 1) / 2: 1 where a > b, 0 where a < b (within 2^-bits when
  /// |a - b| >= epsilon), 1/2 at a = b. The affine map is folded into the last
  /// f_n stage: depth plan.depth(). a and b are brought to one level (the
  /// lower); their scales must agree.
  /// @param a a size-2 CKKS ciphertext.
  /// @param b a size-2 CKKS ciphertext of a's scale, with a - b in [-1, 1] (e.g.
  ///        a, b in [-1/2, 1/2]).
  /// @param relin_keys relinearization keys of the operands' key set.
  /// @param plan from plan_sign.
  /// @return a ciphertext plan.depth() rescale levels below the operands' common
  ///         block top, at their scale.
  /// @throws InvalidArgument naming `a`/`b` (empty, another context, size != 2,
  ///         scales differ) or `ct` as sign (too few levels).
  Ciphertext compare(const Ciphertext& a, const Ciphertext& b, const RelinKeys& relin_keys,
                     const SignPlan& plan) const;
  /// max(a, b) = (a + b + (a - b) sign(a - b)) / 2 (Cheon et al. 2020, §5):
  /// absolute error
  /// <= |a - b| 2^-(bits+1) + noise where |a - b| >= epsilon, <= |a - b| / 2 <=
  /// epsilon / 2 elsewhere. Depth plan.depth() + 1; the result has a's scale.
  /// @param a a size-2 CKKS ciphertext.
  /// @param b as compare.
  /// @param relin_keys relinearization keys of the operands' key set.
  /// @param plan from plan_sign.
  /// @return max(a, b), plan.depth() + 1 levels below the common block top.
  /// @throws InvalidArgument as compare.
  Ciphertext maximum(const Ciphertext& a, const Ciphertext& b, const RelinKeys& relin_keys,
                     const SignPlan& plan) const;
  /// min(a, b) = (a + b - (a - b) sign(a - b)) / 2; as maximum.
  /// @param a a size-2 CKKS ciphertext.
  /// @param b as compare.
  /// @param relin_keys relinearization keys of the operands' key set.
  /// @param plan from plan_sign.
  /// @return min(a, b), plan.depth() + 1 levels below the common block top.
  /// @throws InvalidArgument as compare.
  Ciphertext minimum(const Ciphertext& a, const Ciphertext& b, const RelinKeys& relin_keys,
                     const SignPlan& plan) const;
  /// relu(x) = (x + x sign(x)) / 2 for x in [-1, 1]: absolute error <=
  /// 2^-(bits+1) + noise for |x| >= epsilon and <= epsilon / 2 inside. Depth
  /// plan.depth() + 1.
  /// @param ct as sign.
  /// @param relin_keys relinearization keys of ct's key set.
  /// @param plan from plan_sign.
  /// @return relu(x), plan.depth() + 1 levels below ct's block top, at ct's scale.
  /// @throws InvalidArgument as sign.
  Ciphertext relu(const Ciphertext& ct, const RelinKeys& relin_keys, const SignPlan& plan) const;

  /// @return the chain's rescale structure.
  const RescaleChain& chain() const { return pe_.chain(); }

private:
  /// alpha sign(x) + beta on operands (planning or evaluating); x at a block
  /// top.
  OperandPtr sign_operand(const ScaleOps& ops, const OperandPtr& x, const SignPlan& plan,
                          double alpha, double beta) const;
  /// half (s + c d sign(d)) with c = ±1 (max, min, relu), landing one level
  /// below sign(d) at d's scale: c d / 2 is a scalar product at sign(d)'s level
  /// whose scale makes the product's scale exact, and s / 2 one scalar
  /// combination there.
  OperandPtr combine(const ScaleOps& ops, const OperandPtr& d, const OperandPtr& s, double c,
                     const SignPlan& plan) const;
  /// `what`'s circuit on (d, s) (s may be empty): planned on levels and scales
  /// first (the depth error names `ct`, with the levels needed and left), then
  /// run on ciphertexts.
  Ciphertext run(const Ciphertext& d, const Ciphertext* s, const char* what, std::size_t depth,
                 const RelinKeys& relin_keys,
                 const std::function<OperandPtr(const ScaleOps&, const OperandPtr&,
                                                const OperandPtr&)>& circuit) const;
  /// ct checked (non-empty, size 2, this context) and dropped to the block top
  /// at or below it.
  Ciphertext prepare(const Ciphertext& ct, const char* name) const;
  /// (a, b) checked and brought to one block top with equal scales.
  std::pair<Ciphertext, Ciphertext> align(const Ciphertext& a, const Ciphertext& b) const;

  PolynomialEvaluator pe_;
  Evaluator ev_;
};

} // namespace veil::circuits
