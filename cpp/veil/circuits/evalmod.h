// EvalMod: the homomorphic reduction modulo q_0 of CKKS bootstrapping. After ModRaise and
// CoeffToSlot the slots hold x = t / (q_0 K1) with t = Delta m + q_0 I (|I| <= K, K1 = K + 1);
// sin(2 pi K1 x) / (2 pi) = sin(2 pi t / q_0) / (2 pi) ~ Delta m / q_0 removes I (Cheon-Han-Kim-
// Kim-Song, Eurocrypt 2018, §3.2). The sine is computed as cos(2 pi (K1 x - 1/4)) from a
// Chebyshev interpolant of cos(2 pi (K1 y - 1/4) / 2^r) on [-1, 1] followed by r double-angle
// steps cos(2a) = 2 cos(a)^2 - 1 (Han-Ki, CT-RSA 2020, §4; Bossuat-Mouchet-Troncoso-Hubaux,
// Eurocrypt 2021, §4), the interpolant evaluated by polynomial.h. The double angles square the
// scale (S -> S^2 / D), so the interpolant's target scale is found from the end backwards,
// S = sqrt(S' D), and the result lands exactly on the requested output scale.
// The even form (the default): cos(2 pi (K1 y - 1/4) / 2^r) is even in v = y - 1/(4 K1), so
// its interpolant is a polynomial in T_2(v) = 2 v^2 - 1 of half the degree; one product makes
// T_2(v) and the polynomial of degree floor(d / 2) needs fewer products than the one of degree
// d (degree 31: 11 relinearizations per EvalMod instead of 13, the same depth; Cheddar, Kim et
// al., arXiv 2407.13055, also evaluates an even cosine). It interpolates over v in [-1, 1], i.e.
// for x in [-1 + 1/(4 K1), 1 + 1/(4 K1)], which holds bootstrapping's |x| <= (K + 1/2) / K1.
// At N = 2^16 (32-bit words, four key sets, CPU = GPU words) the bootstrap's worst slot is
// 19.62-19.87 bits against 19.75-20.15 in y, the mean 23.14-23.16 bits either way.
// VEIL_EVALMOD_EVEN=0 (read at construction) keeps the interpolant in y (the A/B switch, and
// the form of the Python oracle, tests/python/oracles).
// Python: veil._bootstrap.Bootstrapper._evalmod / _evalmod_plan.
#pragma once
#include <cstddef>
#include <utility>
#include <vector>

#include "veil/circuits/polynomial.h"

namespace veil::circuits {

/// EvalMod's polynomial and its evaluation (file comment): the Chebyshev interpolant of the
/// scaled cosine, fixed at construction, then r double angles. Immutable; the even form is
/// chosen at construction from VEIL_EVALMOD_EVEN.
class EvalMod {
 public:
  /// Interpolates the scaled cosine (chebyshev_interpolate) in both forms.
  /// @param k_range K, the bound on |I| (the interval is [-(K + 1), K + 1] before scaling).
  /// @param degree d, the degree of the Chebyshev interpolant (2..1023).
  /// @param double_angle r, the number of double-angle steps (0..16).
  /// @throws InvalidArgument naming `k_range` (< 1 or > 2^20), `degree` or `double_angle`.
  EvalMod(std::size_t k_range, std::size_t degree, std::size_t double_angle);

  /// @return K, the bound on |I|, as given.
  std::size_t k_range() const { return k_range_; }
  /// @return d, the interpolant's degree, as given.
  std::size_t degree() const { return degree_; }
  /// @return r, the number of double-angle steps, as given.
  std::size_t double_angle() const { return double_angle_; }
  /// @return the interpolant's Chebyshev coefficients c_0..c_d of
  ///         cos(2 pi (K1 y - 1/4) / 2^r) on [-1, 1].
  const std::vector<double>& coefficients() const { return coeffs_; }
  /// The even form's coefficients: P(u) = sum_k p_k T_k(u), P(T_2(v)) = the interpolant of
  /// cos(2 pi K1 v / 2^r) (k = 0..floor(d / 2)).
  /// @return p_0..p_floor(d/2).
  const std::vector<double>& even_coefficients() const { return even_coeffs_; }
  /// @return whether evaluate() uses the even form (file comment; VEIL_EVALMOD_EVEN=0 turns it
  ///         off).
  bool even() const { return even_; }
  /// Rescale levels consumed: ceil(log2(d + 1)) (the Chebyshev evaluation; in the even form
  /// 1 + ceil(log2(floor(d / 2) + 1)), T_2 then the half-degree polynomial, which is the same
  /// for every d >= 2) + r.
  /// @return the rescale blocks consumed.
  std::size_t depth() const;

  /// sin(2 pi K1 x) on an operand x (at a rescale-block top), landing exactly on
  /// `output_scale`, depth() blocks below x (planned or evaluated, as `ops`). Approximates for
  /// x in [-1, 1] (the even form: x in [-1 + 1/(4 K1), 1]).
  /// @param ops the arithmetic; @param x the input; @param output_scale finite, > 0.
  /// @return sin(2 pi K1 x) (scaled as the file comment says) at (level, output_scale).
  /// @throws InvalidArgument naming `x` (empty), `output_scale`, or as ScaleOps when the chain
  ///         below x has fewer than depth() blocks.
  OperandPtr evaluate(const ScaleOps& ops, OperandPtr x, double output_scale) const;
  /// The (level, scale) evaluate() lands on for an input at (level, scale) (levels and scales
  /// only).
  /// @param chain the context's rescale structure.
  /// @param level the input's level (a block top).
  /// @param scale the input's scale.
  /// @param output_scale the requested output scale (finite, > 0).
  /// @return (the output level, the output scale).
  /// @throws InvalidArgument as evaluate().
  std::pair<std::size_t, double> plan(const RescaleChain& chain, std::size_t level, double scale,
                                      double output_scale) const;
  /// sin(2 pi K1 x) slot-wise (real slots) for a size-2 ciphertext x at a block top; the levels
  /// and scales are planned first, so that an error comes before any work.
  /// @param ev a CKKS evaluator of ct's context.
  /// @param relin_keys relinearization keys of ct's key set.
  /// @param chain the context's rescale structure.
  /// @param ct the input, size 2, at a block top with depth() blocks below it.
  /// @param output_scale the scale of the result (finite, > 0).
  /// @throws InvalidArgument naming `ct` (empty, size != 2, not at a block top, too few levels)
  ///         or `output_scale`; the evaluator's errors for mismatched keys.
  /// @return the result, size 2, depth() blocks below ct, at output_scale.
  Ciphertext evaluate(const Evaluator& ev, const RelinKeys& relin_keys, const RescaleChain& chain,
                      const Ciphertext& ct, double output_scale) const;

 private:
  std::size_t k_range_, degree_, double_angle_;
  std::vector<double> coeffs_, even_coeffs_;
  bool even_ = true;
};

}  // namespace veil::circuits
