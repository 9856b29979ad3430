#include "veil/circuits/polynomial.h"

#include <cmath>
#include <numbers>
#include <string>

#include "veil/circuits/numeric.h"
#include "veil/core/error.h"

namespace veil::circuits {

namespace {

/// numpy.polynomial.polyutils.trimseq: trailing zeros dropped, at least one entry kept.
std::vector<double> trimmed(std::vector<double> c) {
  while (c.size() > 1 && c.back() == 0.0) c.pop_back();
  return c;
}

void check_finite(const std::vector<double>& c, const char* what) {
  if (c.empty()) throw InvalidArgument(std::string(what) + ": expected at least one coefficient");
  for (double v : c) {
    if (!std::isfinite(v)) throw InvalidArgument(std::string(what) + ": expected finite numbers");
  }
}

bool all_zero_after_first(const std::vector<double>& c) {
  for (std::size_t i = 1; i < c.size(); ++i) {
    if (c[i] != 0.0) return false;
  }
  return true;
}

}  // namespace

std::vector<double> chebyshev_interpolate(const std::function<double(double)>& f,
                                          std::size_t degree) {
  if (!f) throw InvalidArgument("f: expected a function");
  if (degree == 0 || degree > 1023) {
    throw InvalidArgument("degree: expected 1..1023, got " + std::to_string(degree));
  }
  const std::size_t order = degree + 1;
  // chebpts1: x_j = sin(pi / 2 / order * (2 j - order + 1)).
  const double step = 0.5 * std::numbers::pi / static_cast<double>(order);
  std::vector<double> x(order), y(order);
  for (std::size_t j = 0; j < order; ++j) {
    const double k = -static_cast<double>(order) + 1.0 + 2.0 * static_cast<double>(j);
    x[j] = std::sin(step * k);
    y[j] = f(x[j]);
    if (!std::isfinite(y[j])) throw InvalidArgument("f: returned a value that is not finite");
  }
  // c_i = sum_j T_i(x_j) y_j, T_i by chebvander's recurrence T_i = T_{i-1} * 2x - T_{i-2}.
  std::vector<double> c(order, 0.0), prev(order, 1.0), cur(x), next(order);
  for (std::size_t j = 0; j < order; ++j) c[0] = std::fma(prev[j], y[j], c[0]);
  for (std::size_t j = 0; j < order; ++j) c[1] = std::fma(cur[j], y[j], c[1]);
  for (std::size_t i = 2; i < order; ++i) {
    for (std::size_t j = 0; j < order; ++j) {
      next[j] = cur[j] * (2.0 * x[j]) - prev[j];
      c[i] = std::fma(next[j], y[j], c[i]);
    }
    prev.swap(cur);
    cur.swap(next);
  }
  c[0] /= static_cast<double>(order);
  for (std::size_t i = 1; i < order; ++i) c[i] /= 0.5 * static_cast<double>(order);
  return c;
}

std::vector<double> power_to_chebyshev(const std::vector<double>& coeffs) {
  check_finite(coeffs, "coeffs");
  const std::vector<double> pol = trimmed(coeffs);
  std::vector<double> res{0.0};
  for (std::size_t i = pol.size(); i-- > 0;) {
    // chebmulx(res): x T_0 = T_1, x T_k = (T_{k+1} + T_{k-1}) / 2.
    std::vector<double> c = trimmed(res), prd;
    if (c.size() == 1 && c[0] == 0.0) {
      prd = c;
    } else {
      prd.assign(c.size() + 1, 0.0);
      prd[0] = c[0] * 0.0;
      prd[1] = c[0];
      for (std::size_t k = 1; k < c.size(); ++k) prd[k + 1] = c[k] / 2.0;
      for (std::size_t k = 1; k < c.size(); ++k) prd[k - 1] += c[k] / 2.0;
    }
    // chebadd(prd, pol[i])
    std::vector<double> a = trimmed(prd), b = trimmed({pol[i]});
    if (a.size() > b.size()) {
      for (std::size_t k = 0; k < b.size(); ++k) a[k] += b[k];
      res = trimmed(a);
    } else {
      for (std::size_t k = 0; k < a.size(); ++k) b[k] += a[k];
      res = trimmed(b);
    }
  }
  return res;
}

// ---- ChebyshevEvaluation --------------------------------------------------------------------

ChebyshevEvaluation::ChebyshevEvaluation(const ScaleOps& ops, OperandPtr x,
                                         std::vector<double> coeffs, BabySteps baby_steps)
    : ops_(ops), coeffs_(std::move(coeffs)) {
  if (coeffs_.size() < 2) {
    throw InvalidArgument("coeffs: expected at least two Chebyshev coefficients (degree >= 1)");
  }
  check_finite(coeffs_, "coeffs");
  if (!x) throw InvalidArgument("x: is empty");
  const std::size_t d = coeffs_.size() - 1;
  const int logd = std::max(1, detail::ceil_log2(d + 1));
  // few: m = 2^floor(logd / 2); with the products lazily relinearized (mul_sum) it
  // needs fewer key switches (degree 31: 10 instead of 12; bench/NOTES.md), but more leaves
  // land on low blocks, whose one-prime constant products cost precision on chains that
  // alternate one and two primes. many: m = 2^ceil(logd / 2).
  m_ = std::size_t{1} << std::max(1, baby_steps == BabySteps::few ? logd / 2 : (logd + 1) / 2);
  t_[1] = std::move(x);
  for (std::size_t i = 2; i <= m_; ++i) power(i);
  for (std::size_t g = m_; g < d + 1; g *= 2) power(g);
}

OperandPtr ChebyshevEvaluation::power(std::size_t i) {
  auto it = t_.find(i);
  if (it != t_.end()) return it->second;
  const std::size_t a = (i + 1) / 2, b = i / 2;
  OperandPtr ta = power(a), tb = power(b);
  OperandPtr prod = a == b ? ops_.square(ta) : ops_.mul(ta, tb);
  OperandPtr two = ops_.add(prod, prod);
  OperandPtr t;
  if (a == b) {  // T_2k = 2 T_k^2 - 1
    t = ops_.add_const(two, -1.0);
  } else {  // T_2k+1 = 2 T_k+1 T_k - T_1
    OperandPtr t1 = ops_.const_to(t_.at(1), 1.0, two->level, two->scale);
    t = ops_.sub(two, t1);
  }
  t_[i] = t;
  return t;
}

std::size_t ChebyshevEvaluation::output_level() const {
  std::size_t lvl = t_.at(1)->level;
  const std::size_t d = coeffs_.size() - 1;
  const int steps = std::max(1, detail::ceil_log2(d + 1));
  for (int s = 0; s < steps; ++s) lvl = ops_.below(lvl);
  return lvl;
}

OperandPtr ChebyshevEvaluation::result(std::optional<double> scale) {
  return evaluate(coeffs_, output_level(), scale ? *scale : t_.at(1)->scale);
}

OperandPtr ChebyshevEvaluation::evaluate(std::vector<double> c, std::size_t level, double scale) {
  Parts parts;
  collect(std::move(c), level, scale, parts);
  // The products that land on `level` (q T_g here and down the chain of remainders) share one
  // relinearization and one rescale (ScaleOps::mul_sum); then the leaves and the constant.
  OperandPtr acc;
  if (!parts.pairs.empty()) acc = ops_.mul_sum(parts.pairs, level, scale);
  for (const OperandPtr& t : parts.terms) acc = acc ? ops_.add(acc, t) : t;
  if (parts.constant != 0.0) acc = ops_.add_const(acc, parts.constant);
  return acc;
}

void ChebyshevEvaluation::collect(std::vector<double> c, std::size_t level, double scale,
                                  Parts& parts) {
  check_finite(c, "coeffs");
  if (!std::isfinite(scale) || scale <= 0)
    throw InvalidArgument("scale: expected a finite scale > 0");
  std::size_t deg = c.size() - 1;
  while (deg > 0 && c[deg] == 0.0) --deg;
  c.resize(deg + 1);
  // A leaf (one scalar combination of baby steps) needs every T_i it uses a block above
  // `level`; where T_i with 2^(k-1) < i < 2^k sit too low, the polynomial is split once more
  // at a smaller power of two, so that degree d costs ceil(log2(d + 1)) levels, not one more.
  bool leaf = deg < m_;
  if (leaf && deg >= 2) {
    const std::size_t top = ops_.above(level);
    for (std::size_t i = 1; i <= deg && leaf; ++i) leaf = c[i] == 0.0 || t_.at(i)->level >= top;
  }
  if (leaf) {
    std::vector<std::pair<OperandPtr, double>> terms;
    for (std::size_t i = 1; i <= deg; ++i) {
      if (c[i] != 0.0) terms.emplace_back(t_.at(i), c[i]);
    }
    if (terms.empty())
      throw InvalidArgument("coeffs: a constant polynomial has no term to evaluate");
    parts.terms.push_back(ops_.linear_to(terms, c[0], level, scale));
    return;
  }
  std::size_t g = 1;
  while (g * 2 <= deg) g *= 2;
  // p = q T_g + r with T_g T_j = (T_{g+j} + T_{g-j}) / 2.
  std::vector<double> q(deg - g + 1, 0.0), r(c.begin(), c.begin() + static_cast<std::ptrdiff_t>(g));
  q[0] = c[g];
  for (std::size_t j = 1; j <= deg - g; ++j) {
    q[j] = 2 * c[g + j];
    r[g - j] -= c[g + j];
  }
  OperandPtr tg = t_.at(g);
  const std::size_t top = ops_.above(level);
  OperandPtr tgd = ops_.to_level(tg, top);
  if (all_zero_after_first(q)) {  // q is a constant: one scalar product instead of a product
    parts.terms.push_back(ops_.const_to(tgd, q[0], level, scale));
  } else {
    const double q_scale = scale * ops_.chain().block_product(top) / tgd->scale;
    parts.pairs.emplace_back(evaluate(q, top, q_scale), tgd);
  }
  if (all_zero_after_first(r)) {  // r is a constant
    parts.constant += r[0];
    return;
  }
  collect(std::move(r), level, scale, parts);  // its products land on `level` too
}

// ---- PolynomialEvaluator --------------------------------------------------------------------

PolynomialEvaluator::PolynomialEvaluator(ContextPtr ctx) : chain_(ctx), ev_(std::move(ctx)) {}

std::size_t PolynomialEvaluator::plan_level(std::size_t level, double scale,
                                            const std::vector<double>& coeffs) const {
  check_finite(coeffs, "coeffs");
  const std::vector<double> c = trimmed(coeffs);
  const auto& tops = chain_.tops();
  const std::size_t idx = chain_.top_index(level);
  const std::size_t deg = c.size() - 1;
  const std::size_t first =
      deg > 1 ? static_cast<std::size_t>(std::max(1, detail::ceil_log2(deg + 1))) : 1;
  for (std::size_t depth = first; depth <= idx; ++depth) {
    ScaleOps plan(chain_);
    try {
      if (deg <= 1) {
        plan.linear_to({{plan.fresh(level, scale), 1.0}}, 0.0, tops[idx - depth], scale);
      } else {
        ChebyshevEvaluation cheb(plan, plan.fresh(level, scale), c);
        cheb.evaluate(c, tops[idx - depth], scale);
      }
    } catch (const InvalidArgument&) {
      continue;
    }
    return tops[idx - depth];
  }
  throw InvalidArgument("coeffs: a degree-" + std::to_string(deg) + " polynomial needs at least " +
                        std::to_string(first) + " rescale levels but the ciphertext (level " +
                        std::to_string(level) + ") has " + std::to_string(idx) +
                        " left above q_0's block; bootstrap it or use a longer chain");
}

Ciphertext PolynomialEvaluator::evaluate_chebyshev(const Ciphertext& ct,
                                                   const std::vector<double>& coeffs,
                                                   const RelinKeys& relin_keys, double a,
                                                   double b) const {
  if (ct.empty()) throw InvalidArgument("ct: is empty");
  if (ct.context()->parameter_hash() != chain_.context()->parameter_hash()) {
    throw InvalidArgument("ct: belongs to another context");
  }
  if (ct.size() != 2) {
    throw InvalidArgument("ct: expected size 2 (relinearize first), got " +
                          std::to_string(ct.size()));
  }
  check_finite(coeffs, "coeffs");
  if (!std::isfinite(a) || !std::isfinite(b) || !(a < b)) {
    throw InvalidArgument("domain: expected finite a < b, got (" + std::to_string(a) + ", " +
                          std::to_string(b) + ")");
  }
  const std::vector<double> c = trimmed(coeffs);
  const std::size_t deg = c.size() - 1;
  ScaleOps ops(chain_, ev_, relin_keys);
  const std::size_t top = chain_.top_at_or_below(ct.level());
  OperandPtr x = ops.wrap(top != ct.level() ? ev_.mod_switch_to(ct, top) : ct);
  if (a != -1.0 || b != 1.0) {
    if (x->level == chain_.tops().front()) {
      throw InvalidArgument("coeffs: no level left to map x into [-1, 1] (level " +
                            std::to_string(ct.level()) + ")");
    }
    const double alpha = 2.0 / (b - a), beta = -(a + b) / (b - a);
    x = ops.linear_to({{x, alpha}}, beta, ops.below(x->level), x->scale);
  }
  const std::size_t level = plan_level(x->level, x->scale, c);
  OperandPtr y;
  if (deg <= 1) {
    y = ops.linear_to({{x, deg ? c[1] : 0.0}}, c[0], level, x->scale);
  } else {
    ChebyshevEvaluation cheb(ops, x, c);
    y = cheb.evaluate(c, level, x->scale);
  }
  return y->ct.use_count() == 1 ? std::move(*y->ct) : Ciphertext(*y->ct);
}

Ciphertext PolynomialEvaluator::evaluate_power(const Ciphertext& ct,
                                               const std::vector<double>& coeffs,
                                               const RelinKeys& relin_keys) const {
  return evaluate_chebyshev(ct, power_to_chebyshev(coeffs), relin_keys);
}

}  // namespace veil::circuits
