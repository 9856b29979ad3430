#include "veil/circuits/comparison.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <string>

#include "veil/circuits/numeric.h"
#include "veil/core/error.h"

namespace veil::circuits {

namespace {

/// The rows of Cheon et al.'s table of g_n (Asiacrypt 2020, §3.5): the odd
/// coefficients (x, x^3, ..., x^(2n+1)) times 2^10.
const std::vector<std::vector<double>>& g_table() {
  static const std::vector<std::vector<double>> t{
      {2126, -1359},
      {3334, -6108, 3796},
      {4589, -16577, 25614, -12860},
      {5850, -34974, 97015, -113492, 46623},
  };
  return t;
}

double binomial(std::size_t n, std::size_t k) {
  double r = 1.0; // exact in double for the n <= 16 used here
  for (std::size_t i = 1; i <= k; ++i)
    r = r * static_cast<double>(n - k + i) / static_cast<double>(i);
  return r;
}

double horner(const std::vector<double>& c, double x) {
  double y = 0.0;
  for (std::size_t i = c.size(); i-- > 0;)
    y = std::fma(y, x, c[i]);
  return y;
}

/// The image [lo', hi'] of [lo, hi] under the polynomial c: the extremes over
/// 4096 grid points and the end points (a continuous map sends an interval onto
/// an interval).
std::pair<double, double> image(const std::vector<double>& c, double lo, double hi) {
  double mn = std::min(horner(c, lo), horner(c, hi));
  double mx = std::max(horner(c, lo), horner(c, hi));
  constexpr int grid = 4096;
  for (int i = 1; i < grid; ++i) {
    const double v = horner(c, lo + (hi - lo) * i / grid);
    mn = std::min(mn, v);
    mx = std::max(mx, v);
  }
  return {mn, mx};
}

double worst(std::pair<double, double> iv) { return std::max(1.0 - iv.first, iv.second - 1.0); }

void check_n(std::size_t n, std::size_t hi) {
  if (n < 1 || n > hi) {
    throw InvalidArgument("n: expected 1.." + std::to_string(hi) + ", got " + std::to_string(n));
  }
}

} // namespace

std::vector<double> sign_f_coefficients(std::size_t n) {
  check_n(n, 8);
  // x (1 - x^2)^i = sum_k binom(i, k) (-1)^k x^(2k+1)
  std::vector<double> c(2 * n + 2, 0.0);
  for (std::size_t i = 0; i <= n; ++i) {
    const double w = std::ldexp(binomial(2 * i, i), -2 * static_cast<int>(i));
    for (std::size_t k = 0; k <= i; ++k) {
      c[2 * k + 1] += w * binomial(i, k) * (k % 2 ? -1.0 : 1.0);
    }
  }
  return c;
}

std::vector<double> sign_g_coefficients(std::size_t n) {
  check_n(n, 4);
  std::vector<double> c(2 * n + 2, 0.0);
  const auto& row = g_table()[n - 1];
  for (std::size_t k = 0; k < row.size(); ++k)
    c[2 * k + 1] = std::ldexp(row[k], -10);
  return c;
}

std::size_t SignPlan::depth() const {
  return (g_stages + f_stages) * static_cast<std::size_t>(detail::ceil_log2(2 * n + 2));
}

double SignPlan::scalar(double x) const {
  const std::vector<double> g = sign_g_coefficients(n), f = sign_f_coefficients(n);
  for (std::size_t i = 0; i < g_stages; ++i)
    x = horner(g, x);
  for (std::size_t i = 0; i < f_stages; ++i)
    x = horner(f, x);
  return x;
}

SignPlan plan_sign(double epsilon, int bits, std::size_t n) {
  if (!std::isfinite(epsilon) || !(epsilon > 0.0) || !(epsilon < 1.0)) {
    throw InvalidArgument("epsilon: expected 0 < epsilon < 1 (the half-width of the interval "
                          "around 0 left out), got " +
                          std::to_string(epsilon));
  }
  if (bits < 1 || bits > 30) {
    throw InvalidArgument("bits: expected 1..30, got " + std::to_string(bits));
  }
  check_n(n, 4);
  const std::vector<double> g = sign_g_coefficients(n), f = sign_f_coefficients(n);
  const double target = std::ldexp(1.0, -(bits + 1));
  constexpr std::size_t max_stages = 64;
  SignPlan best;
  std::size_t best_total = std::numeric_limits<std::size_t>::max();
  std::pair<double, double> after_g{epsilon, 1.0};
  for (std::size_t dg = 0; dg < max_stages && dg < best_total; ++dg) {
    if (dg > 0)
      after_g = image(g, after_g.first, after_g.second);
    std::pair<double, double> iv = after_g;
    for (std::size_t df = 0; dg + df < best_total && dg + df <= max_stages; ++df) {
      if (df > 0)
        iv = image(f, iv.first, iv.second);
      if (worst(iv) <= target && dg + df >= 1) {
        best_total = dg + df;
        best.g_stages = dg;
        best.f_stages = df;
        best.scalar_bits = worst(iv) > 0 ? -std::log2(worst(iv)) : 99.0;
        break;
      }
      // f_n only contracts towards 1 from inside (0, 1]: stop once it no longer
      // helps
      if (df > 0 && iv.first <= 0.0)
        break;
    }
  }
  if (best_total == std::numeric_limits<std::size_t>::max()) {
    throw InvalidArgument("epsilon: " + std::to_string(epsilon) + " is too small for " +
                          std::to_string(bits) + " bits within " + std::to_string(max_stages) +
                          " composite stages");
  }
  best.n = n;
  best.epsilon = epsilon;
  best.bits = bits;
  return best;
}

// ---- ComparisonEvaluator
// --------------------------------------------------------------------

ComparisonEvaluator::ComparisonEvaluator(ContextPtr ctx) : pe_(ctx), ev_(std::move(ctx)) {}

Ciphertext ComparisonEvaluator::prepare(const Ciphertext& ct, const char* name) const {
  if (ct.empty())
    throw InvalidArgument(std::string(name) + ": is empty");
  if (ct.context()->parameter_hash() != chain().context()->parameter_hash()) {
    throw InvalidArgument(std::string(name) + ": belongs to another context");
  }
  if (ct.size() != 2) {
    throw InvalidArgument(std::string(name) + ": expected size 2 (relinearize first), got " +
                          std::to_string(ct.size()));
  }
  const std::size_t top = chain().top_at_or_below(ct.level());
  return top != ct.level() ? ev_.mod_switch_to(ct, top) : ct;
}

std::pair<Ciphertext, Ciphertext> ComparisonEvaluator::align(const Ciphertext& a,
                                                             const Ciphertext& b) const {
  Ciphertext x = prepare(a, "a"), y = prepare(b, "b");
  if (x.level() > y.level())
    x = ev_.mod_switch_to(x, y.level());
  if (y.level() > x.level())
    y = ev_.mod_switch_to(y, x.level());
  if (!(std::abs(x.scale() / y.scale() - 1.0) <= 1e-9)) {
    throw InvalidArgument("b: scale 2^" + std::to_string(std::log2(y.scale())) +
                          " differs from a's 2^" + std::to_string(std::log2(x.scale())) +
                          " (expected equal scales)");
  }
  return {std::move(x), std::move(y)};
}

OperandPtr ComparisonEvaluator::sign_operand(const ScaleOps& ops, const OperandPtr& x,
                                             const SignPlan& plan, double alpha,
                                             double beta) const {
  const std::vector<double> g = power_to_chebyshev(sign_g_coefficients(plan.n));
  const std::vector<double> f = power_to_chebyshev(sign_f_coefficients(plan.n));
  const std::size_t total = plan.g_stages + plan.f_stages;
  if (total == 0)
    throw InvalidArgument("plan: has no stage (use plan_sign)");
  const double scale = x->scale;
  OperandPtr y = x;
  for (std::size_t k = 0; k < total; ++k) {
    std::vector<double> c = k < plan.g_stages ? g : f;
    if (k + 1 == total && (alpha != 1.0 || beta != 0.0)) { // folded into the last stage
      for (double& v : c)
        v *= alpha;
      c[0] += beta;
    }
    const std::size_t level = pe_.plan_level(y->level, y->scale, c);
    ChebyshevEvaluation cheb(ops, y, c);
    y = cheb.evaluate(c, level, scale);
  }
  return y;
}

OperandPtr ComparisonEvaluator::combine(const ScaleOps& ops, const OperandPtr& d,
                                        const OperandPtr& s, double c, const SignPlan& plan) const {
  OperandPtr sg = sign_operand(ops, d, plan, 1.0, 0.0);
  const double target = d->scale;
  const double block = ops.chain().block_product(sg->level);
  // c d / 2 at sign(d)'s level, at the scale that puts the product exactly on
  // `target`
  OperandPtr h = ops.const_to(d, 0.5 * c, sg->level, target * block / sg->scale);
  OperandPtr prod = ops.mul(h, sg);
  return ops.add(prod, ops.const_to(s, 0.5, prod->level, prod->scale));
}

Ciphertext ComparisonEvaluator::run(
    const Ciphertext& d, const Ciphertext* s, const char* what, std::size_t depth,
    const RelinKeys& relin_keys,
    const std::function<OperandPtr(const ScaleOps&, const OperandPtr&, const OperandPtr&)>& circuit)
    const {
  const RescaleChain& ch = chain();
  try { // planned first: no work on ciphertexts when the chain is too short
    ScaleOps plan(ch);
    circuit(plan, plan.fresh(d.level(), d.scale()),
            s ? plan.fresh(s->level(), s->scale()) : OperandPtr());
  } catch (const InvalidArgument& e) {
    throw InvalidArgument("ct: " + std::string(what) + " needs " + std::to_string(depth) +
                          " rescale levels but the ciphertext (level " + std::to_string(d.level()) +
                          ") has " + std::to_string(ch.top_index(d.level())) +
                          " left above q_0's block; bootstrap it or use a longer chain (" +
                          e.what() + ")");
  }
  ScaleOps ops(ch, ev_, relin_keys);
  OperandPtr y = circuit(ops, ops.wrap(d), s ? ops.wrap(*s) : OperandPtr());
  return y->ct.use_count() == 1 ? std::move(*y->ct) : Ciphertext(*y->ct);
}

Ciphertext ComparisonEvaluator::sign(const Ciphertext& ct, const RelinKeys& relin_keys,
                                     const SignPlan& plan) const {
  const Ciphertext x = prepare(ct, "ct");
  return run(x, nullptr, "sign", plan.depth(), relin_keys,
             [&](const ScaleOps& ops, const OperandPtr& d, const OperandPtr&) {
               return sign_operand(ops, d, plan, 1.0, 0.0);
             });
}

Ciphertext ComparisonEvaluator::compare(const Ciphertext& a, const Ciphertext& b,
                                        const RelinKeys& relin_keys, const SignPlan& plan) const {
  const auto [x, y] = align(a, b);
  const Ciphertext d = ev_.sub(x, y);
  return run(d, nullptr, "compare", plan.depth(), relin_keys,
             [&](const ScaleOps& ops, const OperandPtr& dd, const OperandPtr&) {
               return sign_operand(ops, dd, plan, 0.5, 0.5);
             });
}

Ciphertext ComparisonEvaluator::maximum(const Ciphertext& a, const Ciphertext& b,
                                        const RelinKeys& relin_keys, const SignPlan& plan) const {
  const auto [x, y] = align(a, b);
  const Ciphertext d = ev_.sub(x, y), s = ev_.add(x, y);
  return run(d, &s, "maximum", plan.depth() + 1, relin_keys,
             [&](const ScaleOps& ops, const OperandPtr& dd, const OperandPtr& ss) {
               return combine(ops, dd, ss, 1.0, plan);
             });
}

Ciphertext ComparisonEvaluator::minimum(const Ciphertext& a, const Ciphertext& b,
                                        const RelinKeys& relin_keys, const SignPlan& plan) const {
  const auto [x, y] = align(a, b);
  const Ciphertext d = ev_.sub(x, y), s = ev_.add(x, y);
  return run(d, &s, "minimum", plan.depth() + 1, relin_keys,
             [&](const ScaleOps& ops, const OperandPtr& dd, const OperandPtr& ss) {
               return combine(ops, dd, ss, -1.0, plan);
             });
}

Ciphertext ComparisonEvaluator::relu(const Ciphertext& ct, const RelinKeys& relin_keys,
                                     const SignPlan& plan) const {
  const Ciphertext x = prepare(ct, "ct");
  return run(x, nullptr, "relu", plan.depth() + 1, relin_keys,
             [&](const ScaleOps& ops, const OperandPtr& d, const OperandPtr&) {
               return combine(ops, d, d, 1.0, plan);
             });
}

} // namespace veil::circuits
