#include "veil/circuits/inverse.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "veil/circuits/numeric.h"
#include "veil/core/error.h"

namespace veil::circuits {

namespace {

void check_interval(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b) || !(a > 0.0) || !(a < b) || b / a > 0x1p20) {
    throw InvalidArgument("interval: expected finite 0 < a < b with b / a <= 2^20, got (" +
                          std::to_string(a) + ", " + std::to_string(b) + ")");
  }
}

void check_bits(int bits) {
  if (bits < 1 || bits > 30)
    throw InvalidArgument("bits: expected 1..30, got " + std::to_string(bits));
}

/// sum_i c_i T_i(t) by Clenshaw's recurrence.
double clenshaw(const std::vector<double>& c, double t) {
  double b1 = 0, b2 = 0;
  for (std::size_t i = c.size(); i-- > 1;) {
    const double b0 = 2.0 * t * b1 - b2 + c[i];
    b2 = b1;
    b1 = b0;
  }
  return t * b1 - b2 + c[0];
}

Ciphertext release(const OperandPtr& y) {
  return y->ct.use_count() == 1 ? std::move(*y->ct) : Ciphertext(*y->ct);
}

} // namespace

// ---- plans
// ------------------------------------------------------------------------------------

double InversePlan::scalar(double x) const {
  const double c = (a + b) / 2;
  double bb = 1.0 - x / c, aa = (2.0 - x / c) / c;
  for (std::size_t i = 0; i < iterations; ++i) {
    bb = bb * bb;
    aa = aa * (1.0 + bb);
  }
  return aa;
}

InversePlan plan_inverse(double a, double b, int bits) {
  check_interval(a, b);
  check_bits(bits);
  InversePlan p;
  p.a = a;
  p.b = b;
  p.bits = bits;
  const double r = (b - a) / (b + a);
  // log2 of r^(2^(d+1)) / a, in logs (r^(2^(d+1)) underflows for large d)
  const double target = -(bits + 1.0);
  auto log2_error = [&](std::size_t d) {
    return std::ldexp(std::log2(r), static_cast<int>(d + 1)) - std::log2(a);
  };
  while (log2_error(p.iterations) > target)
    ++p.iterations;
  p.scalar_bits = -log2_error(p.iterations);
  return p;
}

std::size_t InvSqrtPlan::depth() const {
  return 1 + static_cast<std::size_t>(detail::ceil_log2(initial_degree + 1)) + 2 * newton_steps +
         (sqrt ? 1 : 0);
}

double InvSqrtPlan::scalar(double x) const {
  double y = clenshaw(coeffs, (2.0 * x - a - b) / (b - a));
  for (std::size_t i = 0; i < newton_steps; ++i)
    y = 1.5 * y - 0.5 * x * y * y * y;
  return sqrt ? x * y : y;
}

InvSqrtPlan plan_inv_sqrt(double a, double b, int bits, bool sqrt) {
  check_interval(a, b);
  check_bits(bits);
  constexpr int grid = 1 << 13;
  std::vector<double> xs;
  xs.reserve(2 * grid + 2);
  for (int i = 0; i <= grid; ++i) {
    xs.push_back(a * std::pow(b / a, static_cast<double>(i) / grid));
    xs.push_back(a + (b - a) * i / grid);
  }
  const double target = std::ldexp(1.0, -(bits + 1)) / (sqrt ? b : 1.0);
  InvSqrtPlan best;
  std::size_t best_depth = std::numeric_limits<std::size_t>::max();
  for (std::size_t degree : {1u, 3u, 7u, 15u}) {
    InvSqrtPlan p;
    p.a = a;
    p.b = b;
    p.bits = bits;
    p.sqrt = sqrt;
    p.initial_degree = degree;
    p.coeffs = chebyshev_interpolate(
        [&](double t) { return 1.0 / std::sqrt(a + (t + 1.0) * (b - a) / 2.0); }, degree);
    std::vector<double> y(xs.size());
    bool basin = true;
    for (std::size_t j = 0; j < xs.size(); ++j) {
      y[j] = clenshaw(p.coeffs, (2.0 * xs[j] - a - b) / (b - a));
      const double rel = y[j] * std::sqrt(xs[j]);
      basin = basin && rel > 0.0 && rel < std::sqrt(3.0);
    }
    if (!basin)
      continue;
    for (std::size_t k = 0; k <= 20; ++k) {
      double err = 0;
      for (std::size_t j = 0; j < xs.size(); ++j) {
        err = std::max(err, std::abs(y[j] - 1.0 / std::sqrt(xs[j])));
      }
      if (err <= target) {
        p.newton_steps = k;
        p.scalar_bits = err > 0 ? -std::log2(err * (sqrt ? b : 1.0)) : 99.0;
        if (p.depth() < best_depth) {
          best_depth = p.depth();
          best = p;
        }
        break;
      }
      for (std::size_t j = 0; j < xs.size(); ++j) {
        y[j] = 1.5 * y[j] - 0.5 * xs[j] * y[j] * y[j] * y[j];
      }
    }
  }
  if (best_depth == std::numeric_limits<std::size_t>::max()) {
    throw InvalidArgument("interval: no initial approximation of degree <= 15 converges to " +
                          std::to_string(bits) + " bits on (" + std::to_string(a) + ", " +
                          std::to_string(b) + ") within 20 Newton steps");
  }
  return best;
}

// ---- InverseEvaluator
// -------------------------------------------------------------------------

InverseEvaluator::InverseEvaluator(ContextPtr ctx) : pe_(ctx), ev_(std::move(ctx)) {}

Ciphertext InverseEvaluator::run(
    const Ciphertext& ct, const char* what, std::size_t depth, const RelinKeys& relin_keys,
    const std::function<OperandPtr(const ScaleOps&, const OperandPtr&)>& circuit) const {
  if (ct.empty())
    throw InvalidArgument("ct: is empty");
  if (ct.context()->parameter_hash() != chain().context()->parameter_hash()) {
    throw InvalidArgument("ct: belongs to another context");
  }
  if (ct.size() != 2) {
    throw InvalidArgument("ct: expected size 2 (relinearize first), got " +
                          std::to_string(ct.size()));
  }
  const RescaleChain& ch = chain();
  const std::size_t top = ch.top_at_or_below(ct.level());
  try { // planned first: no work on ciphertexts when the chain is too short
    ScaleOps plan(ch);
    circuit(plan, plan.fresh(top, ct.scale()));
  } catch (const InvalidArgument& e) {
    throw InvalidArgument(
        "ct: " + std::string(what) + " needs " + std::to_string(depth) +
        " rescale levels but the ciphertext (level " + std::to_string(ct.level()) + ") has " +
        std::to_string(ch.top_index(top)) +
        " left above q_0's block; bootstrap it or use a longer chain (" + e.what() + ")");
  }
  ScaleOps ops(ch, ev_, relin_keys);
  return release(circuit(ops, ops.wrap(top != ct.level() ? ev_.mod_switch_to(ct, top) : ct)));
}

OperandPtr InverseEvaluator::inverse_operand(const ScaleOps& ops, const OperandPtr& x,
                                             const InversePlan& plan, double a0_scale) const {
  const double c = (plan.a + plan.b) / 2;
  const std::size_t l1 = ops.below(x->level);
  // b_0 = 1 - x / c and a_0 = (2 - x / c) / c = 1 / c + b_0 / c: a_d = (1 -
  // b_0^(2^(d+1))) / x
  OperandPtr bb = ops.linear_to({{x, -1.0 / c}}, 1.0, l1, x->scale);
  OperandPtr aa = ops.linear_to({{x, -1.0 / (c * c)}}, 2.0 / c, l1, a0_scale);
  for (std::size_t i = 0; i < plan.iterations; ++i) {
    bb = ops.square(bb);
    aa = ops.mul(aa, ops.add_const(bb, 1.0));
  }
  return aa;
}

OperandPtr InverseEvaluator::inv_sqrt_operand(const ScaleOps& ops, const OperandPtr& x,
                                              const InvSqrtPlan& plan) const {
  const double s = x->scale, a = plan.a, b = plan.b;
  const RescaleChain& ch = ops.chain();
  // y_0: the Chebyshev interpolant at t = (2x - a - b) / (b - a)
  OperandPtr t = ops.linear_to({{x, 2.0 / (b - a)}}, -(a + b) / (b - a), ops.below(x->level), s);
  OperandPtr y;
  if (plan.coeffs.size() == 2) {
    y = ops.linear_to({{t, plan.coeffs[1]}}, plan.coeffs[0], ops.below(t->level), s);
  } else {
    const std::size_t level = pe_.plan_level(t->level, t->scale, plan.coeffs);
    ChebyshevEvaluation cheb(ops, t, plan.coeffs);
    y = cheb.evaluate(plan.coeffs, level, s);
  }
  // Newton: y <- 1.5 y + (-x/2 y)(y^2); -x/2 enters at the scale that lands the
  // product on s
  for (std::size_t i = 0; i < plan.newton_steps; ++i) {
    const std::size_t ly = y->level;
    const double d0 = ch.block_product(ly), d1 = ch.block_product(ops.below(ly));
    OperandPtr xh = ops.const_to(x, -0.5, ly, s * d0 * d0 * d1 / (y->scale * y->scale * y->scale));
    OperandPtr prod = ops.mul(ops.mul(xh, y), ops.square(y));
    y = ops.add(prod, ops.const_to(y, 1.5, prod->level, prod->scale));
  }
  if (plan.sqrt) { // sqrt(x) = x (1/sqrt(x))
    OperandPtr xs = ops.const_to(x, 1.0, y->level, s * ch.block_product(y->level) / y->scale);
    y = ops.mul(xs, y);
  }
  return y;
}

Ciphertext InverseEvaluator::inverse(const Ciphertext& ct, const RelinKeys& relin_keys,
                                     const InversePlan& plan) const {
  return run(ct, "inverse", plan.depth(), relin_keys,
             [&](const ScaleOps& ops, const OperandPtr& x) {
               // a_d's scale is a_0's times a factor fixed by the chain:
               // planned once with a_0 at x's scale, then a_0 chosen so that
               // a_d lands on x's scale exactly
               ScaleOps plan_ops(ops.chain());
               const OperandPtr planned =
                   inverse_operand(plan_ops, plan_ops.fresh(x->level, x->scale), plan, x->scale);
               return inverse_operand(ops, x, plan, x->scale * x->scale / planned->scale);
             });
}

Ciphertext InverseEvaluator::inv_sqrt(const Ciphertext& ct, const RelinKeys& relin_keys,
                                      const InvSqrtPlan& plan) const {
  if (plan.sqrt)
    throw InvalidArgument("plan: was planned for sqrt (use plan_inv_sqrt(a, b, bits))");
  return run(
      ct, "inv_sqrt", plan.depth(), relin_keys,
      [&](const ScaleOps& ops, const OperandPtr& x) { return inv_sqrt_operand(ops, x, plan); });
}

Ciphertext InverseEvaluator::sqrt(const Ciphertext& ct, const RelinKeys& relin_keys,
                                  const InvSqrtPlan& plan) const {
  if (!plan.sqrt) {
    throw InvalidArgument("plan: was not planned for sqrt (use plan_inv_sqrt(a, b, bits, true))");
  }
  return run(ct, "sqrt", plan.depth(), relin_keys, [&](const ScaleOps& ops, const OperandPtr& x) {
    return inv_sqrt_operand(ops, x, plan);
  });
}

} // namespace veil::circuits
