// Polynomial evaluation on CKKS ciphertexts in the Chebyshev basis: the baby-step giant-step
// recursion of Bossuat-Mouchet-Troncoso-Hubaux ("Efficient Bootstrapping for Approximate
// Homomorphic Encryption with Non-Sparse Keys", Eurocrypt 2021, Alg. 2) with exact scale
// management (scale_ops.h): every addition meets equal scales exactly, the target scales being
// chosen from the top down, and the leaves are one-pass scalar combinations. Depth:
// ceil(log2(d + 1)) rescale levels for degree d, the depth Bossuat et al. count: a leaf whose
// baby steps lie too low for its constant product (one level) is split once more instead.
// Python: veil._bootstrap._ChebEval and veil._tensor.cheb_eval / polyval.
#pragma once
#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <vector>

#include "veil/circuits/scale_ops.h"

namespace veil::circuits {

/// Chebyshev coefficients c_0..c_d of the degree-d interpolant of `f` at the d + 1 Chebyshev
/// points of the first kind on [-1, 1] (numpy.polynomial.chebyshev.chebinterpolate, the same
/// formulas; its sums may differ from numpy's BLAS in the last bits).
/// @param f the function, called once at each of the d + 1 points.
/// @param degree d, 1..1023.
/// @return c_0..c_d (d + 1 coefficients).
/// @throws InvalidArgument naming `degree` (0 or above 1023) or `f` (empty, or a value that is
/// not finite).
std::vector<double> chebyshev_interpolate(const std::function<double(double)>& f,
                                          std::size_t degree);

/// The Chebyshev-basis coefficients of the power-basis polynomial sum_i coeffs[i] x^i
/// (numpy.polynomial.chebyshev.poly2cheb, bit for bit). The identity holds for every x.
/// @param coeffs the power-basis coefficients, lowest degree first.
/// @return the Chebyshev coefficients, trailing zeros dropped (at least one).
/// @throws InvalidArgument naming `coeffs` (empty or not finite).
std::vector<double> power_to_chebyshev(const std::vector<double>& coeffs);

/// One evaluation of p(x) = sum_i c_i T_i(x) on an operand x (planned or on ciphertexts): the
/// baby-step giant-step method of Paterson-Stockmeyer ("On the Number of Nonscalar
/// Multiplications Necessary to Evaluate Polynomials", SIAM J. Comput. 1973) in the Chebyshev
/// basis, as Han-Ki (CT-RSA 2020) and Bossuat-Mouchet-Troncoso-Hubaux (Eurocrypt 2021, Alg. 2).
/// Baby steps T_0..T_m (m = 2^ceil(k / 2) or 2^floor(k / 2) for k = ceil(log2(d + 1))),
/// from T_2k = 2 T_k^2 - 1 and T_2k+1 = 2 T_k+1 T_k - T_1; giant steps T_m, T_2m, T_4m, ...
/// by doubling; then p = q T_g + r with T_g T_i = (T_g+i + T_g-i) / 2 recursively (Alg. 2).
/// The powers are computed once at construction and shared by every evaluate() call. The
/// products that land on one level (q T_g and the remainder's own q' T_g') are tensored,
/// summed and relinearized once (lazy relinearization: one key switch fewer per such pair).
class ChebyshevEvaluation {
 public:
  /// The baby-step set, with k = ceil(log2(d + 1)): m = 2^ceil(k / 2) (many: the default) or
  /// 2^floor(k / 2) (few: fewer key switches once the products landing on one level share a
  /// relinearization; EvalMod uses it, its blocks all being two primes).
  enum class BabySteps { many, few };
  /// @param ops the arithmetic (planning or evaluating); must outlive this object.
  /// @param x the input operand (at a rescale-block top).
  /// @param coeffs c_0..c_d, d >= 1 (trailing zeros allowed).
  /// @param baby_steps the baby-step set (above).
  /// @throws InvalidArgument naming `coeffs` (fewer than two, not finite), `x` (empty) or as
  ///         ScaleOps when the chain has too few levels for the powers.
  ChebyshevEvaluation(const ScaleOps& ops, OperandPtr x, std::vector<double> coeffs,
                      BabySteps baby_steps = BabySteps::many);

  /// @return the number m of baby steps (T_0..T_{m-1}; T_m is the first giant step).
  std::size_t baby_steps() const { return m_; }
  /// @return the level of result(): the input level lowered by ceil(log2(d + 1)) blocks.
  /// @throws InvalidArgument naming `encrypted` when the chain has fewer blocks.
  std::size_t output_level() const;
  /// p(x) at output_level() and `scale` (default: the input's scale).
  /// @param scale the result's scale (finite, > 0), or nothing for x's.
  /// @return p(x).
  /// @throws InvalidArgument as evaluate.
  OperandPtr result(std::optional<double> scale = std::nullopt);
  /// sum_i c[i] T_i(x) landing exactly on (level, scale) (the recursion of Alg. 2).
  /// @param c Chebyshev coefficients, degree at most the constructor's (trailing zeros dropped).
  /// @param level a rescale target at least ceil(log2(deg + 1)) blocks below x.
  /// @param scale the result's scale (finite, > 0).
  /// @return the polynomial's value at (level, scale).
  /// @throws InvalidArgument naming `coeffs` (empty, not finite, a constant polynomial, or no
  ///         level left for a step), `scale`, or `level` (no rescale lands there).
  OperandPtr evaluate(std::vector<double> c, std::size_t level, double scale);

 private:
  /// What a polynomial at (level, scale) sums: the products landing there (q T_g, and those of
  /// the remainders' own splits, relinearized together), the leaves and scalar products, and
  /// the constant.
  struct Parts {
    std::vector<std::pair<OperandPtr, OperandPtr>> pairs;
    std::vector<OperandPtr> terms;
    double constant = 0.0;
  };
  void collect(std::vector<double> c, std::size_t level, double scale, Parts& parts);
  OperandPtr power(std::size_t i);
  const ScaleOps& ops_;
  std::vector<double> coeffs_;
  std::size_t m_ = 2;
  std::map<std::size_t, OperandPtr> t_;
};

/// p(x) slot-wise for a ciphertext and a polynomial in the Chebyshev basis (or the power
/// basis), at the input's scale and the highest level the recursion reaches: the pythonic
/// ct.polyval / ct.evaluate (veil._tensor.cheb_eval).
class PolynomialEvaluator {
 public:
  /// @param ctx a CKKS context.
  /// @throws InvalidArgument naming `context` when it is empty or not a CKKS context.
  explicit PolynomialEvaluator(ContextPtr ctx);

  /// p(y) = sum_i coeffs[i] T_i(y) with y = (2x - a - b) / (b - a) for domain [a, b], slot-wise.
  /// The input is first dropped to the highest rescale-block top at or below its level; the
  /// result keeps its scale and lands ceil(log2(d + 1)) blocks lower (one more when the
  /// domain is not [-1, 1]; the level is planned first).
  /// @param ct a size-2 CKKS ciphertext.
  /// @param coeffs Chebyshev coefficients c_0..c_d (finite, d >= 0; trailing zeros dropped).
  /// @param relin_keys relinearization keys of ct's key set.
  /// @param a the domain's lower end (finite).
  /// @param b the domain's upper end (finite, > a).
  /// @return p(x), size 2, at the level planned, with ct's scale.
  /// @throws InvalidArgument naming `coeffs` (empty, not finite, or more levels than the
  ///         ciphertext has left), `domain` (a >= b or not finite) or `ct` (empty, another
  ///         context, size != 2, inside q_0's block); the evaluator's errors for mismatched
  ///         keys.
  Ciphertext evaluate_chebyshev(const Ciphertext& ct, const std::vector<double>& coeffs,
                                const RelinKeys& relin_keys, double a = -1.0, double b = 1.0) const;
  /// p(x) = sum_i coeffs[i] x^i (lowest degree first, as numpy.polynomial), through
  /// power_to_chebyshev and evaluate_chebyshev on [-1, 1] (no interval is assumed: the identity
  /// holds everywhere).
  /// @param ct a size-2 CKKS ciphertext.
  /// @param coeffs the power-basis coefficients (finite, at least one).
  /// @param relin_keys relinearization keys of ct's key set.
  /// @return p(x), as evaluate_chebyshev.
  /// @throws InvalidArgument as evaluate_chebyshev.
  Ciphertext evaluate_power(const Ciphertext& ct, const std::vector<double>& coeffs,
                            const RelinKeys& relin_keys) const;
  /// The level evaluate_chebyshev's result lands on for an input at block top `level` and
  /// `scale` (planned on levels and scales only).
  /// @param level the input's level, a block top.
  /// @param scale the input's scale.
  /// @param coeffs the Chebyshev coefficients (finite, at least one).
  /// @return the highest block top the evaluation can land on.
  /// @throws InvalidArgument naming `coeffs` (empty, not finite, or no level low enough) or
  ///         `level` (not a block top).
  std::size_t plan_level(std::size_t level, double scale, const std::vector<double>& coeffs) const;

  /// @return the context's rescale structure.
  const RescaleChain& chain() const { return chain_; }

 private:
  RescaleChain chain_;
  Evaluator ev_;
};

}  // namespace veil::circuits
