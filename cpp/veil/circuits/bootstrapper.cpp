#include "veil/circuits/bootstrapper.h"

#include <cmath>
#include <cstdio>
#include <string>

#include "veil/backend/graph.h"
#include "veil/circuits/dft.h"
#include "veil/circuits/scale_ops.h"
#include "veil/core/error.h"

namespace veil::circuits {

namespace {

/// Encodes a chain of transform levels that takes ciphertexts from scale s_first to s_last
/// (the intermediate scales share the precision evenly: shared_precision_scales).
std::vector<LinearTransform> encode_levels(const CKKSEncoder& encoder, const RescaleChain& chain,
                                           const std::vector<DftLevel>& levels, std::size_t slots,
                                           double s_first, double s_last, const Device& dev) {
  std::vector<double> products;
  for (const DftLevel& lv : levels) products.push_back(chain.block_product(lv.level));
  const std::vector<double> scales = shared_precision_scales(levels, products, s_first, s_last);
  std::vector<LinearTransform> out;
  for (std::size_t i = 0; i < levels.size(); ++i) {
    out.emplace_back(encoder, levels[i].matrices, levels[i].slots_or(slots), levels[i].level,
                     scales[i], scales[i + 1], dev);
  }
  return out;
}

std::string log2_text(double s) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "2^%.2f", std::log2(s));
  return buf;
}

}  // namespace

Bootstrapper::Bootstrapper(BootstrapParameters params, BootstrapKeys keys)
    : params_(std::move(params)),
      keys_(std::move(keys)),
      ev_(params_.context()),
      evalmod_(params_.config().k_range, params_.config().evalmod_degree,
               params_.config().double_angle) {
  keys_.check(params_);
  const Context& ctx = *params_.context();
  const CKKSEncoder encoder(params_.context());
  const std::size_t n = params_.slots();
  const Device& dev = keys_.device();
  cts_ = encode_levels(encoder, params_.chain(),
                       coeff_to_slot_levels(n, params_.config().cts_levels, params_.top_level(),
                                            params_.coeff_to_slot_constant(), ctx,
                                            params_.packed()),
                       n, params_.scale(), params_.evalmod_scale(), dev);
  stc_ = encode_levels(
      encoder, params_.chain(),
      slot_to_coeff_levels(n, params_.config().stc_levels, params_.input_level(), ctx), n,
      params_.scale(), params_.scale(), dev);
  const auto [level, scale] =
      evalmod_.plan(params_.chain(), params_.evalmod_level(), params_.evalmod_scale(),
                    params_.scale() * params_.gamma());
  (void)scale;
  if (level != params_.evalmod_output_level()) {
    throw RuntimeError("bootstrapping: EvalMod ends at level " + std::to_string(level) +
                       ", not at " + std::to_string(params_.evalmod_output_level()));
  }
  if (params_.packed()) {  // 1 in the lower n of every 2n slots, at EvalMod's output level
    std::vector<double> lower(ctx.n() / 2, 0.0);  // encode() does not tile: all N/2 slots
    for (std::size_t j = 0; j < lower.size(); ++j) lower[j] = j % (2 * n) < n ? 1.0 : 0.0;
    mask_ = encoder.encode(lower, params_.chain().block_product(level), level, dev);
  }
}

void Bootstrapper::check_operand(const Ciphertext& ct) const {
  if (ct.empty()) throw InvalidArgument("ct: is empty");
  if (ct.context()->parameter_hash() != params_.context()->parameter_hash()) {
    throw InvalidArgument("ct: belongs to another context");
  }
  if (ct.size() != 2) {
    throw InvalidArgument("ct: expected size 2 (relinearize first), got " +
                          std::to_string(ct.size()));
  }
}

void Bootstrapper::check_input(const Ciphertext& ct, std::size_t level, const char* step) const {
  check_operand(ct);
  if (ct.level() != level) {
    throw InvalidArgument(std::string("ct: ") + step + " starts at level " + std::to_string(level) +
                          ", got level " + std::to_string(ct.level()));
  }
}

Ciphertext Bootstrapper::prepare(const Ciphertext& ct) const {
  check_operand(ct);
  if (ct.level() < params_.q0_level()) {
    throw InvalidArgument("ct: level " + std::to_string(ct.level()) +
                          " lies inside q_0's block below its top " +
                          std::to_string(params_.q0_level()) +
                          ": the message no longer fits the modulus, nothing can refresh it");
  }
  const double delta = params_.scale();
  Ciphertext x = ct;
  if (!near_delta(ct.scale())) {
    // Brought to Delta exactly by one constant product and rescale (ScaleOps::const_to), one
    // block lower: needs a block above q_0's top.
    if (ct.level() < params_.chain().tops()[1]) {
      throw InvalidArgument("ct: expected a scale within 2^4 of the context's " +
                            log2_text(delta) + " (q_0 / scale sets EvalMod's message ratio), got " +
                            log2_text(ct.scale()) + ", and no level is left above q_0's block "
                            "to bring it there");
    }
    const ScaleOps ops(params_.chain(), ev_, keys_.relin_keys);
    const std::size_t top = params_.chain().top_at_or_below(ct.level());
    x = *ops.const_to(ops.wrap(ct), 1.0, params_.chain().below(top), delta)->ct;
  }
  // SlotToCoeff first from input_level(); below it, the original order from q_0's top.
  const std::size_t start =
      x.level() >= params_.input_level() ? params_.input_level() : params_.q0_level();
  if (x.level() > start) x = ev_.mod_switch_to(x, start);
  x.set_scale(delta);
  return x;
}

bool Bootstrapper::near_delta(double scale) const {
  return std::fabs(std::log2(scale / params_.scale())) <= 4;
}

Ciphertext Bootstrapper::bootstrap(const Ciphertext& ct) const {
  const Ciphertext x = prepare(ct);
  Ciphertext out;
  if (x.level() == params_.input_level()) {
    // The whole pipeline is one CUDA graph after the first call (GraphReplay).
    out = replay_->run(x, [this](const Ciphertext& c) { return pipeline(c); });
  } else {  // the original order (file comment), run directly
    out = slot_to_coeff(eval_mod(coeff_to_slot(mod_raise(x))));
  }
  // The pipeline ran as if the scale were Delta: t comes back as t, read at the input's scale
  // (or at Delta when prepare() brought the input there).
  out.set_scale(output_scale(ct.scale()));
  return out;
}

double Bootstrapper::output_scale(double input_scale) const {
  return near_delta(input_scale) ? input_scale : params_.scale();
}

Ciphertext Bootstrapper::pipeline(const Ciphertext& x) const {
  return eval_mod(coeff_to_slot(mod_raise(slot_to_coeff(x))));
}

Ciphertext Bootstrapper::slot_to_coeff(const Ciphertext& ct) const {
  if (!ct.empty() && ct.level() == params_.output_level()) {
    check_input(ct, params_.output_level(), "SlotToCoeff");
    return run_slot_to_coeff(ct, late_slot_to_coeff());
  }
  check_input(ct, params_.input_level(), "SlotToCoeff");
  return run_slot_to_coeff(ct, stc_);
}

Ciphertext Bootstrapper::run_slot_to_coeff(const Ciphertext& ct,
                                           const std::vector<LinearTransform>& levels) const {
  const GaloisKeys& gk = keys_.galois_keys;
  Ciphertext cur = ct;
  cur.set_scale(params_.scale());
  for (std::size_t i = 0; i + 1 < levels.size(); ++i)
    cur = std::move(levels[i].apply(ev_, {&cur}, gk)[0]);
  std::vector<Ciphertext> ab = levels.back().apply(ev_, {&cur}, gk);
  Ciphertext out = ev_.add(ab[0], ev_.conjugate(ab[1], gk));
  out.set_scale(params_.scale());  // it is, up to the double rounding of the plaintext scales
  return out;
}

const std::vector<LinearTransform>& Bootstrapper::late_slot_to_coeff() const {
  // The same matrices as stc_ (same rotations: the keys cover them), one level set higher.
  std::call_once(late_->once, [this] {
    const CKKSEncoder encoder(params_.context());
    late_->stc = encode_levels(encoder, params_.chain(),
                               slot_to_coeff_levels(params_.slots(), params_.config().stc_levels,
                                                    params_.output_level(), *params_.context()),
                               params_.slots(), params_.scale(), params_.scale(), device());
    late_->ready = true;
  });
  return late_->stc;
}

Ciphertext Bootstrapper::mod_raise(const Ciphertext& ct) const {
  check_input(ct, params_.q0_level(), "ModRaise");
  Ciphertext x = ev_.switch_key(ct, keys_.to_sparse);
  x = ev_.mod_raise(x);
  x = ev_.switch_key(x, keys_.to_dense);
  const std::size_t half = params_.context()->n() / 2;
  for (std::size_t s = params_.slots(); s < half; s *= 2) {  // SubSum onto the n-slot subring
    x = ev_.add(x, ev_.rotate_vector(x, static_cast<int>(s), keys_.galois_keys));
  }
  return x;
}

Ciphertext Bootstrapper::coeff_to_slot(const Ciphertext& ct) const {
  check_input(ct, params_.top_level(), "CoeffToSlot");
  const GaloisKeys& gk = keys_.galois_keys;
  const Ciphertext conj = ev_.conjugate(ct, gk);
  Ciphertext cur = std::move(cts_[0].apply(ev_, {&ct, &conj}, gk)[0]);
  for (std::size_t i = 1; i < cts_.size(); ++i) cur = std::move(cts_[i].apply(ev_, {&cur}, gk)[0]);
  return cur;
}

Ciphertext Bootstrapper::eval_mod(const Ciphertext& ct) const {
  check_input(ct, params_.evalmod_level(), "EvalMod");
  const GaloisKeys& gk = keys_.galois_keys;
  const std::size_t half = params_.context()->n() / 2;
  // re = w + conj w; im' = X^(N/2) (w - conj w) = -s_j Im (SEAL's slot order)
  const Ciphertext conj = ev_.conjugate(ct, gk);
  const Ciphertext re = ev_.add(ct, conj);
  const Ciphertext im = ev_.multiply_monomial(ev_.sub(ct, conj), half);
  const double out_scale = params_.scale() * params_.gamma();
  if (params_.packed()) {
    // CoeffToSlot left the upper n of every 2n slots 0: [re, im'] side by side, one EvalMod.
    const int n = static_cast<int>(params_.slots());
    const Ciphertext both = ev_.add(re, ev_.rotate_vector(im, n, gk));
    const Ciphertext f = evalmod_.evaluate(ev_, keys_.relin_keys, params_.chain(), both,
                                           out_scale);
    // Unpack with the mask (one level): [f(re) - X^(N/2) f(im'), 0] from one plaintext
    // product and one rescale of f - X^(N/2) rot(f, n), then the copy above it.
    const Ciphertext both_low =
        ev_.sub(f, ev_.multiply_monomial(ev_.rotate_vector(f, n, gk), half));
    const Ciphertext low = ev_.rescale_to_next(ev_.multiply_plain(both_low, mask_));
    Ciphertext out = ev_.add(low, ev_.rotate_vector(low, n, gk));  // period 2n: n = -n
    out.set_scale(params_.scale());
    return out;
  }
  // The two halves are independent: concurrent branches of the captured graph (the same words
  // as one after the other; Cerium, SOSP 2026, evaluates them as one batched pair).
  Ciphertext fre, fim;
  backend::run_branches(
      device(),
      {[&] { fre = evalmod_.evaluate(ev_, keys_.relin_keys, params_.chain(), re, out_scale); },
       [&] { fim = evalmod_.evaluate(ev_, keys_.relin_keys, params_.chain(), im, out_scale); }});
  // f(Re) + i f(Im) = f(re) - X^(N/2) f(im'); its scale Delta gamma read as Delta
  Ciphertext out = ev_.sub(fre, ev_.multiply_monomial(fim, half));
  out.set_scale(params_.scale());
  return out;
}

std::size_t Bootstrapper::plaintext_bytes() const {
  std::size_t total = 0;
  for (const auto& lt : cts_) total += lt.plaintext_bytes();
  for (const auto& lt : stc_) total += lt.plaintext_bytes();
  if (late_->ready) {  // made by the first input below input_level()
    for (const auto& lt : late_->stc) total += lt.plaintext_bytes();
  }
  return total;
}

}  // namespace veil::circuits
