// Inverse and square roots on CKKS ciphertexts, by iterations whose counts
// follow from the requested precision:
// * 1/x by Goldschmidt's iteration as in Cheon, Kim, Kim, Lee and Lee,
// "Numerical Method for
//   Comparison on Homomorphically Encrypted Numbers" (Asiacrypt 2019, Algorithm
//   Inverse(x; d)), after the affine map x -> x / c with c = (a + b) / 2 that
//   puts [a, b] in (0, 2);
// * 1/sqrt(x) by Newton's iteration y <- y (3 - x y^2) / 2 from a low-degree
// polynomial initial
//   approximation, the structure of Panda, "Polynomial Approximation of Inverse
//   sqrt Function for FHE" (CSCML 2022); here the initial approximation is the
//   Chebyshev interpolant of 1/sqrt on [a, b] (degree 1, 3, 7 or 15, whichever
//   gives the smallest total depth), and sqrt(x) = x (1/sqrt(x)).
// Precision is absolute error (as veil.ckks.precision), planned with one spare
// bit for the CKKS noise. Results land on the input's scale exactly (the free
// scale of one scalar product per step is chosen so). Python: veil._functions
// (ct.inverse, ct.sqrt, ct.inv_sqrt).
#pragma once
#include <cstddef>
#include <functional>
#include <vector>

#include "veil/circuits/polynomial.h"

namespace veil::circuits {

/// Goldschmidt's inverse (division by convergence: R. E. Goldschmidt,
/// "Applications of Division by Convergence", MSc thesis, MIT, 1964) on [a, b]
/// (0 < a < b): with c = (a + b) / 2 and b_0 = 1 - x / c, a_0 = (2 - x / c) / c,
/// b_{i+1} = b_i^2, a_{i+1} = a_i (1 + b_{i+1}), a_d = (1 - b_0^(2^(d+1))) / x:
/// absolute error <= r^(2^(d+1)) / a with r = (b - a) / (b + a) (the identity
/// behind Cheon et al. 2019's Algorithm Inverse(x; d), which takes x in (0, 2)).
struct InversePlan {
  double a = 0, b = 0;        ///< the interval [a, b]
  int bits = 0;               ///< requested precision (absolute, bits)
  std::size_t iterations = 0; ///< d
  double scalar_bits = 0;     ///< -log2 of the bound above
  /// Rescale levels: d + 2 (the affine map, then d squarings and d + 1 products
  /// in two chains).
  /// @return the depth.
  std::size_t depth() const { return iterations + 2; }
  /// a_d(x) in double precision.
  /// @param x a real number (in [a, b] for the bound to hold).
  /// @return a_d(x).
  double scalar(double x) const;
};

/// The smallest d with r^(2^(d+1)) / a <= 2^-(bits + 1).
/// @param a the interval's lower end (finite, > 0).
/// @param b the interval's upper end (finite, a < b <= 2^20 a).
/// @param bits 1..30.
/// @return the plan.
/// @throws InvalidArgument naming `interval` or `bits`.
InversePlan plan_inverse(double a, double b, int bits);

/// Newton's inverse square root on [a, b] from a Chebyshev interpolant of
/// degree initial_degree, then newton_steps steps of y <- 1.5 y - 0.5 x y^3.
struct InvSqrtPlan {
  double a = 0, b = 0;            ///< the interval [a, b]
  int bits = 0;                   ///< requested precision (absolute, bits)
  bool sqrt = false;              ///< planned for sqrt(x) = x / sqrt(x) (error scaled by b)
  std::size_t initial_degree = 0; ///< degree of the initial approximation
  std::size_t newton_steps = 0;   ///< Newton steps after the initial approximation
  std::vector<double> coeffs; ///< its Chebyshev coefficients on [a, b]
  double scalar_bits = 0;     ///< -log2 max abs error of the scalar map over the planning grid
  /// Rescale levels: 1 (map onto [-1, 1]) + ceil(log2(degree + 1)) + 2 per
  /// Newton step (+1 for sqrt).
  /// @return the depth.
  std::size_t depth() const;
  /// The scalar map in double precision (1/sqrt(x), or sqrt(x) when planned for
  /// it).
  /// @param x a real number (in [a, b] for the bound to hold).
  /// @return the map's value.
  double scalar(double x) const;
};

/// The initial degree in {1, 3, 7, 15} and the Newton steps of the smallest
/// depth (then the smallest degree) whose scalar map is within 2^-(bits + 1) of
/// 1/sqrt(x) (sqrt(x) when `sqrt`) on a grid of 2^13 geometric and 2^13 uniform
/// points of [a, b], the initial approximation within Newton's basin (0 < y_0
/// sqrt(x) < sqrt(3)) there.
/// @param a the interval's lower end (finite, > 0).
/// @param b the interval's upper end (finite, a < b <= 2^20 a).
/// @param bits 1..30.
/// @param sqrt plan sqrt(x) = x (1/sqrt(x)) instead (1/sqrt(x) is then planned b times
///        more precisely, since the product by x <= b scales its error).
/// @return the plan.
/// @throws InvalidArgument naming `interval` (also when no initial degree <= 15 converges) or
///         `bits`.
InvSqrtPlan plan_inv_sqrt(double a, double b, int bits, bool sqrt = false);

/// inverse, inv_sqrt and sqrt on CKKS ciphertexts (slot-wise, real values in
/// the plan's interval; outside it the results are unbounded).
class InverseEvaluator {
public:
  /// @param ctx a CKKS context.
  /// @throws InvalidArgument naming `context` when it is empty or not a CKKS context.
  explicit InverseEvaluator(ContextPtr ctx);

  /// 1/x within 2^-bits for x in [a, b]. Depth plan.depth(); the result has
  /// ct's scale.
  /// @param ct a size-2 CKKS ciphertext (dropped to the block top at or below
  /// its level).
  /// @param relin_keys relinearization keys of ct's key set.
  /// @param plan from plan_inverse.
  /// @return 1/x, plan.depth() rescale levels below ct's block top, at ct's scale.
  /// @throws InvalidArgument naming `ct` (empty, size != 2, another context,
  ///         inside q_0's block, or fewer levels left than the plan needs: the
  ///         message gives both) or the evaluator's errors.
  Ciphertext inverse(const Ciphertext& ct, const RelinKeys& relin_keys,
                     const InversePlan& plan) const;
  /// 1/sqrt(x) within 2^-bits for x in [a, b] (Newton's iteration; Panda, CSCML 2022).
  /// Depth plan.depth(). As inverse.
  /// @param ct a size-2 CKKS ciphertext (dropped to the block top at or below its level).
  /// @param relin_keys relinearization keys of ct's key set.
  /// @param plan from plan_inv_sqrt(a, b, bits).
  /// @return 1/sqrt(x), plan.depth() rescale levels below ct's block top, at ct's scale.
  /// @throws InvalidArgument naming `plan` when it was planned for sqrt, or as inverse.
  Ciphertext inv_sqrt(const Ciphertext& ct, const RelinKeys& relin_keys,
                      const InvSqrtPlan& plan) const;
  /// sqrt(x) = x / sqrt(x) within 2^-bits for x in [a, b]. Depth plan.depth().
  /// As inverse.
  /// @param ct a size-2 CKKS ciphertext (dropped to the block top at or below its level).
  /// @param relin_keys relinearization keys of ct's key set.
  /// @param plan from plan_inv_sqrt(a, b, bits, true).
  /// @return sqrt(x), plan.depth() rescale levels below ct's block top, at ct's scale.
  /// @throws InvalidArgument naming `plan` when it was not planned for sqrt, or as inverse.
  Ciphertext sqrt(const Ciphertext& ct, const RelinKeys& relin_keys, const InvSqrtPlan& plan) const;

  /// @return the chain's rescale structure.
  const RescaleChain& chain() const { return pe_.chain(); }

private:
  OperandPtr inverse_operand(const ScaleOps& ops, const OperandPtr& x, const InversePlan& plan,
                             double a0_scale) const;
  OperandPtr inv_sqrt_operand(const ScaleOps& ops, const OperandPtr& x,
                              const InvSqrtPlan& plan) const;
  Ciphertext
  run(const Ciphertext& ct, const char* what, std::size_t depth, const RelinKeys& relin_keys,
      const std::function<OperandPtr(const ScaleOps&, const OperandPtr&)>& circuit) const;

  PolynomialEvaluator pe_;
  Evaluator ev_;
};

} // namespace veil::circuits
