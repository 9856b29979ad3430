#include "veil/circuits/scale_ops.h"

#include <cmath>
#include <string>

#include "veil/core/error.h"

namespace veil::circuits {

OperandPtr ScaleOps::fresh(std::size_t level, double scale) const {
  if (!planning()) throw InvalidArgument("fresh: evaluating operations need ciphertexts (wrap)");
  auto r = std::make_shared<Operand>();
  r->level = level;
  r->scale = scale;
  return r;
}

OperandPtr ScaleOps::wrap(Ciphertext ct) const {
  if (planning()) throw InvalidArgument("ct: planning operations take no ciphertext (fresh)");
  if (ct.empty()) throw InvalidArgument("ct: is empty");
  return share(std::make_shared<Ciphertext>(std::move(ct)));
}

OperandPtr ScaleOps::share(std::shared_ptr<Ciphertext> ct) const {
  auto r = std::make_shared<Operand>();
  r->level = ct->level();
  r->scale = ct->scale();
  r->ct = std::move(ct);
  return r;
}

const std::shared_ptr<Ciphertext>& ScaleOps::lowered(const OperandPtr& a, std::size_t level) const {
  if (a->level == level) return a->ct;
  auto it = a->lowered.find(level);
  if (it == a->lowered.end()) {
    it = a->lowered.emplace(level, std::make_shared<Ciphertext>(ev_->mod_switch_to(*a->ct, level)))
             .first;
  }
  return it->second;
}

void ScaleOps::check_operand(const OperandPtr& a, const char* what) const {
  if (!a || (!planning() && !a->ct)) throw InvalidArgument(std::string(what) + ": is empty");
}

void ScaleOps::check_aligned(const OperandPtr& a, const OperandPtr& b) const {
  check_operand(a, "a");
  check_operand(b, "b");
  if (a->level != b->level || std::fabs(a->scale / b->scale - 1.0) > 1e-9) {
    throw InvalidArgument("misaligned operands: levels " + std::to_string(a->level) + "/" +
                          std::to_string(b->level) + ", scales 2^" +
                          std::to_string(std::log2(a->scale)) + "/2^" +
                          std::to_string(std::log2(b->scale)));
  }
}

OperandPtr ScaleOps::mul(const OperandPtr& a, const OperandPtr& b) const {
  check_operand(a, "a");
  check_operand(b, "b");
  const std::size_t lvl = a->level < b->level ? a->level : b->level;
  if (planning()) {
    auto r = std::make_shared<Operand>();
    r->level = below(lvl);
    r->scale = a->scale * b->scale / chain_.block_product(lvl);
    return r;
  }
  return wrap(ev_->relinearize_rescale(tensor(a, b, lvl), *rlk_));
}

Ciphertext ScaleOps::tensor(const OperandPtr& a, const OperandPtr& b, std::size_t level) const {
  const Ciphertext& x = *lowered(a, level);
  return a == b ? ev_->square(x) : ev_->multiply(x, *lowered(b, level));
}

OperandPtr ScaleOps::mul_sum(const std::vector<std::pair<OperandPtr, OperandPtr>>& pairs,
                             std::size_t level, double scale) const {
  if (pairs.empty()) throw InvalidArgument("pairs: expected at least one pair");
  const std::size_t top = above(level);
  const double want = scale * chain_.block_product(top);
  for (const auto& [a, b] : pairs) {
    check_operand(a, "pairs");
    check_operand(b, "pairs");
    if (a->level < top || b->level < top) {
      throw InvalidArgument("pairs: an operand lies below level " + std::to_string(top) +
                            ", the block above the target " + std::to_string(level));
    }
    if (std::fabs(a->scale * b->scale / want - 1.0) > 1e-9) {
      throw InvalidArgument("pairs: a scale product 2^" +
                            std::to_string(std::log2(a->scale * b->scale)) + " is not 2^" +
                            std::to_string(std::log2(want)));
    }
  }
  if (planning()) return fresh(level, scale);
  Ciphertext acc;
  for (const auto& [a, b] : pairs) {
    Ciphertext t = tensor(a, b, top);
    t.set_scale(want);  // equal up to the double rounding of each operand's scale
    if (acc.empty()) {
      acc = std::move(t);
    } else {
      ev_->add_inplace(acc, t);
    }
  }
  Ciphertext r = ev_->relinearize_rescale(acc, *rlk_);
  r.set_scale(scale);
  return wrap(std::move(r));
}

OperandPtr ScaleOps::add(const OperandPtr& a, const OperandPtr& b) const {
  check_aligned(a, b);
  if (planning()) return fresh(a->level, a->scale);
  Ciphertext r = ev_->add(*a->ct, *b->ct);
  r.set_scale(a->scale);
  return wrap(std::move(r));
}

OperandPtr ScaleOps::sub(const OperandPtr& a, const OperandPtr& b) const {
  check_aligned(a, b);
  if (planning()) return fresh(a->level, a->scale);
  Ciphertext r = ev_->sub(*a->ct, *b->ct);
  r.set_scale(a->scale);
  return wrap(std::move(r));
}

OperandPtr ScaleOps::add_const(const OperandPtr& a, double c) const {
  check_operand(a, "a");
  if (planning()) return fresh(a->level, a->scale);
  return wrap(ev_->add_scalar(*a->ct, c));
}

OperandPtr ScaleOps::linear_to(const std::vector<std::pair<OperandPtr, double>>& terms, double c0,
                               std::size_t level, double scale) const {
  if (terms.empty()) throw InvalidArgument("terms: expected at least one term");
  for (const auto& [a, c] : terms) check_operand(a, "terms");
  const std::size_t top = above(level);
  for (const auto& [a, c] : terms) {
    if (a->level < top) {
      throw InvalidArgument("coeffs: no level left for a constant product (" +
                            std::to_string(a->level) + " -> " + std::to_string(level) + ")");
    }
  }
  if (planning()) return fresh(level, scale);
  const double target = scale * chain_.block_product(top);
  std::vector<const Ciphertext*> cts;
  std::vector<double> values;
  for (const auto& [a, c] : terms) {
    cts.push_back(a->ct.get());
    values.push_back(c);
  }
  Ciphertext r = ev_->rescale_to_next(ev_->scalar_combination(cts, values, c0, target, top));
  r.set_scale(scale);  // equal up to the double rounding of the block's product
  return wrap(std::move(r));
}

OperandPtr ScaleOps::to_level(const OperandPtr& a, std::size_t level) const {
  check_operand(a, "a");
  if (a->level < level) {
    throw InvalidArgument("coeffs: operand at level " + std::to_string(a->level) +
                          " is below the target level " + std::to_string(level));
  }
  if (planning()) return fresh(level, a->scale);
  return share(lowered(a, level));
}

}  // namespace veil::circuits
