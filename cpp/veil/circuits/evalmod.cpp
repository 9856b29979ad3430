#include "veil/circuits/evalmod.h"

#include <cmath>
#include <numbers>
#include <string>

#include "veil/circuits/numeric.h"
#include "veil/core/env.h"
#include "veil/core/error.h"

namespace veil::circuits {

EvalMod::EvalMod(std::size_t k_range, std::size_t degree, std::size_t double_angle)
    : k_range_(k_range), degree_(degree), double_angle_(double_angle) {
  if (k_range < 1 || k_range > (1u << 20)) {
    throw InvalidArgument("k_range: expected 1..2^20, got " + std::to_string(k_range));
  }
  if (degree < 2 || degree > 1023) {
    throw InvalidArgument("degree: expected 2..1023, got " + std::to_string(degree));
  }
  if (double_angle > 16) {
    throw InvalidArgument("double_angle: expected 0..16, got " + std::to_string(double_angle));
  }
  // numpy: np.cos(2 * np.pi * (k1 * y - 0.25) / 2 ** r)
  const double k1 = static_cast<double>(k_range + 1);
  const double div = std::ldexp(1.0, static_cast<int>(double_angle));
  coeffs_ = chebyshev_interpolate(
      [&](double y) { return std::cos(2.0 * std::numbers::pi * (k1 * y - 0.25) / div); }, degree);
  // The even form: g(v) = cos(2 pi K1 v / 2^r) at v = y - 1/(4 K1). Its interpolant at the
  // Chebyshev nodes is even (odd coefficients 0 up to rounding, dropped), and since
  // T_2k(v) = T_k(T_2(v)) it is P(T_2(v)) with P's coefficient k = g's coefficient 2k.
  const std::vector<double> g = chebyshev_interpolate(
      [&](double v) { return std::cos(2.0 * std::numbers::pi * k1 * v / div); }, degree);
  for (std::size_t k = 0; 2 * k <= degree; ++k) even_coeffs_.push_back(g[2 * k]);
  even_ = env_flag_on("VEIL_EVALMOD_EVEN");
}

std::size_t EvalMod::depth() const {
  return static_cast<std::size_t>(detail::ceil_log2(degree_ + 1)) + double_angle_;
}

OperandPtr EvalMod::evaluate(const ScaleOps& ops, OperandPtr x, double output_scale) const {
  if (!x) throw InvalidArgument("x: is empty");
  if (!std::isfinite(output_scale) || output_scale <= 0) {
    throw InvalidArgument("output_scale: expected a finite scale > 0");
  }
  OperandPtr arg = std::move(x);
  const std::vector<double>* coeffs = &coeffs_;
  if (even_) {
    // u = T_2(v) = 2 v^2 - 1 with v = x - 1/(4 K1): one product, then P(u) of degree
    // floor(d / 2). The factor 2 is an addition, not a halved scale: u keeps x's scale (~ the
    // block product), so the powers T_2^j(u) keep theirs too (a scale s / 2 would fall to
    // s / 2^(2^j) at T_2^j(u) and cost about a bit of precision per squaring at N = 2^16).
    const double k1 = static_cast<double>(k_range_ + 1);
    OperandPtr sq = ops.square(ops.add_const(arg, -0.25 / k1));
    arg = ops.add_const(ops.add(sq, sq), -1.0);
    coeffs = &even_coeffs_;
  }
  ChebyshevEvaluation cheb(ops, std::move(arg), *coeffs, ChebyshevEvaluation::BabySteps::few);
  std::size_t level = cheb.output_level();
  std::vector<std::size_t> levels;
  for (std::size_t i = 0; i < double_angle_; ++i) {
    levels.push_back(level);
    level = ops.below(level);
  }
  double scale = output_scale;
  for (std::size_t i = levels.size(); i-- > 0;) {
    scale = std::sqrt(scale * ops.chain().block_product(levels[i]));
  }
  OperandPtr y = cheb.result(scale);
  for (std::size_t i = 0; i < double_angle_; ++i) {
    OperandPtr y2 = ops.square(y);
    y = ops.add_const(ops.add(y2, y2), -1.0);
  }
  return y;
}

std::pair<std::size_t, double> EvalMod::plan(const RescaleChain& chain, std::size_t level,
                                             double scale, double output_scale) const {
  ScaleOps ops(chain);
  OperandPtr out = evaluate(ops, ops.fresh(level, scale), output_scale);
  return {out->level, out->scale};
}

Ciphertext EvalMod::evaluate(const Evaluator& ev, const RelinKeys& relin_keys,
                             const RescaleChain& chain, const Ciphertext& ct,
                             double output_scale) const {
  if (ct.empty()) throw InvalidArgument("ct: is empty");
  if (ct.size() != 2) {
    throw InvalidArgument("ct: expected size 2 (relinearize first), got " +
                          std::to_string(ct.size()));
  }
  if (!std::isfinite(output_scale) || output_scale <= 0) {
    throw InvalidArgument("output_scale: expected a finite scale > 0");
  }
  try {  // a block top with enough levels below (checked before any work)
    chain.top_index(ct.level());
    plan(chain, ct.level(), ct.scale(), output_scale);
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("ct: EvalMod needs " + std::to_string(depth()) +
                          " rescale blocks below level " + std::to_string(ct.level()) +
                          ", starting at a block top (" + e.what() + ")");
  }
  ScaleOps ops(chain, ev, relin_keys);
  OperandPtr y = evaluate(ops, ops.wrap(ct), output_scale);
  return y->ct.use_count() == 1 ? std::move(*y->ct) : Ciphertext(*y->ct);
}

}  // namespace veil::circuits
