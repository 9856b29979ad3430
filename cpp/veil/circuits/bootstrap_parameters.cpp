#include "veil/circuits/bootstrap_parameters.h"

#include <bit>
#include <cmath>
#include <algorithm>
#include <map>
#include <numbers>
#include <set>
#include <string>

#include "veil/circuits/dft.h"
#include "veil/circuits/numeric.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/core/error.h"

namespace veil::circuits {

// ---- BootstrapConfig ----------------------------------------------------------------------

std::size_t BootstrapConfig::evalmod_depth() const {
  return static_cast<std::size_t>(detail::ceil_log2(evalmod_degree + 1)) + double_angle;
}

std::size_t BootstrapConfig::depth() const { return cts_levels + evalmod_depth() + stc_levels; }

void BootstrapConfig::validate(std::size_t n) const {
  if (slots != 0 && (slots < 2 || !std::has_single_bit(slots) || (n && slots > n / 2))) {
    throw InvalidArgument("slots: expected a power of two in 2.." +
                          (n ? std::to_string(n / 2) : std::string("N/2")) + " (0: N/2), got " +
                          std::to_string(slots));
  }
  if (cts_levels < 1 || cts_levels > 16) {
    throw InvalidArgument("cts_levels: expected 1..16, got " + std::to_string(cts_levels));
  }
  if (stc_levels < 1 || stc_levels > 16) {
    throw InvalidArgument("stc_levels: expected 1..16, got " + std::to_string(stc_levels));
  }
  if (k_range < 1 || k_range > (1u << 20)) {
    throw InvalidArgument("k_range: expected 1..2^20, got " + std::to_string(k_range));
  }
  if (evalmod_degree < 2 || evalmod_degree > 1023) {
    throw InvalidArgument("evalmod_degree: expected 2..1023, got " +
                          std::to_string(evalmod_degree));
  }
  if (double_angle > 16) {
    throw InvalidArgument("double_angle: expected 0..16, got " + std::to_string(double_angle));
  }
  if (pack_sparse && (slots == 0 || (n && slots > n / 4))) {
    throw InvalidArgument("pack_sparse: needs sparse slots (2.." +
                          (n ? std::to_string(n / 4) : std::string("N/4")) +
                          "), got slots=" + std::to_string(slots) + (slots ? "" : " (N/2)"));
  }
  if (hamming_weight < 1 || (n && hamming_weight > n)) {
    throw InvalidArgument("hamming_weight: expected 1.." +
                          (n ? std::to_string(n) : std::string("N")) + ", got " +
                          std::to_string(hamming_weight));
  }
}

// ---- chains -------------------------------------------------------------------------------

EncryptionParameters BootstrapChain::parameters(std::size_t n, int word_bits) const {
  if (word_bits != 0 && word_bits != 32 && word_bits != 64) {
    throw InvalidArgument("word_bits: expected 0, 32 or 64, got " + std::to_string(word_bits));
  }
  EncryptionParameters p(SchemeType::ckks);
  p.poly_modulus_degree = n;
  p.coeff_modulus = CoeffModulus::create(n, coeff_modulus_bits);
  p.special_primes = special_primes;
  p.alpha = alpha;
  p.word_bits = word_bits;
  p.rescale_groups = rescale_groups;
  return p;
}

BootstrapChain bootstrap_chain(int log_n, std::size_t user_levels, const BootstrapConfig& config,
                               int word_bits, std::optional<std::size_t> special,
                               std::optional<std::size_t> alpha) {
  if (log_n < 10 || log_n > 17) {
    throw InvalidArgument("log_n: expected 10..17, got " + std::to_string(log_n));
  }
  config.validate(std::size_t{1} << log_n);
  BootstrapChain c;
  c.scale = std::ldexp(1.0, 40);
  c.user_levels = user_levels;
  const std::size_t em = config.evalmod_depth();
  if (word_bits == 64) {
    std::vector<int> levels{55};
    levels.insert(levels.end(), config.stc_levels + user_levels + (config.pack_sparse ? 1 : 0),
                  40);  // pack_sparse: the unpacking mask's level above the user's
    levels.insert(levels.end(), em, 60);
    levels.insert(levels.end(), config.cts_levels, 56);
    const std::size_t k = special ? *special : 5;
    c.rescale_groups.assign(levels.size(), 1);
    c.coeff_modulus_bits = levels;
    c.coeff_modulus_bits.insert(c.coeff_modulus_bits.end(), k, 60);
    c.special_primes = k;
    c.alpha = alpha ? *alpha : std::max<std::size_t>(1, k - 1);
    return c;
  }
  if (word_bits != 32) {
    throw InvalidArgument("word_bits: expected 32 or 64, got " + std::to_string(word_bits));
  }
  // q_0: 28 + 27 bits; SlotToCoeff: one ~30-bit prime per level (its diagonals' rounding at
  // scale 2^30 cost <= 0.4 bits of mean precision and nothing in the worst slot, measured at
  // N = 2^14..2^16: bench/NOTES.md), which leaves 90 bits for two more user levels.
  std::vector<std::size_t> groups{2};
  groups.insert(groups.end(), config.stc_levels, 1);
  for (std::size_t i = 0; i < user_levels; ++i)
    groups.push_back((user_levels - i) % 2 == 1 ? 1 : 2);
  // pack_sparse: one prime for the unpacking mask above the user's levels, which keep their
  // blocks (a refreshed ciphertext's first product still rescales by one ~30-bit prime).
  if (config.pack_sparse) groups.push_back(1);
  groups.insert(groups.end(), em + config.cts_levels, 2);
  const std::size_t k = special ? *special : 12;
  std::size_t primes = 0;
  for (std::size_t g : groups) primes += g;
  c.coeff_modulus_bits = {28, 27};
  c.coeff_modulus_bits.insert(c.coeff_modulus_bits.end(), primes - 2, 30);
  c.coeff_modulus_bits.insert(c.coeff_modulus_bits.end(), k, 31);
  c.rescale_groups = groups;
  c.special_primes = k;
  c.alpha = alpha ? *alpha : k;
  return c;
}

BootstrapChain preset_chain(std::size_t n, SecurityLevel security, const BootstrapConfig& config,
                            int word_bits) {
  if (n < 1024 || n > 131072 || !std::has_single_bit(n)) {
    throw InvalidArgument("poly_modulus_degree: expected a power of two in 2^10..2^17, got " +
                          std::to_string(n));
  }
  const int log_n = std::countr_zero(n);
  if (security == SecurityLevel::none) return bootstrap_chain(log_n, 2, config, word_bits);
  const int bound = max_coeff_modulus_bits(n, security);
  auto bits = [&](std::size_t users) {
    int s = 0;
    for (int b : bootstrap_chain(log_n, users, config, word_bits).coeff_modulus_bits) s += b;
    return s;
  };
  std::size_t users = 0;
  while (bits(users + 1) <= bound) ++users;
  if (users == 0) {
    throw InvalidArgument("poly_modulus_degree: bootstrapping at N = " + std::to_string(n) +
                          " does not fit the " + std::to_string(static_cast<int>(security)) +
                          "-bit bound of " + std::to_string(bound) + " bits (it needs " +
                          std::to_string(config.depth()) +
                          " levels); use N = 65536 or pass coeff_modulus with security=None "
                          "for tests");
  }
  return bootstrap_chain(log_n, users, config, word_bits);
}

// ---- BootstrapParameters ------------------------------------------------------------------

BootstrapParameters::BootstrapParameters(ContextPtr ctx, const BootstrapConfig& config,
                                         double scale)
    : chain_(std::move(ctx)), config_(config), scale_(scale) {
  const Context& c = *chain_.context();
  const std::size_t n_full = c.n() / 2;
  config.validate(c.n());
  if (!std::isfinite(scale) || scale < 2.0) {
    throw InvalidArgument("scale: expected a finite scale >= 2");
  }
  const std::size_t slots = config.slots == 0 ? n_full : config.slots;
  const std::size_t stages = static_cast<std::size_t>(std::countr_zero(slots));
  const std::size_t most = std::max(config.cts_levels, config.stc_levels);
  if (stages < most) {
    throw InvalidArgument("slots: " + std::to_string(slots) + " slots have " +
                          std::to_string(stages) + " FFT stages, fewer than the " +
                          std::to_string(most) +
                          " CoeffToSlot/SlotToCoeff levels; use more slots or fewer "
                          "cts_levels/stc_levels");
  }
  slots_ = slots;
  const auto& tops = chain_.tops();
  const std::size_t pack = config.pack_sparse ? 1 : 0;  // the unpacking mask's block
  const std::size_t need = config.depth() + 1 + pack;  // + q_0's block
  if (tops.size() < need + 1) {
    throw InvalidArgument("coeff_modulus: bootstrapping needs " + std::to_string(config.depth()) +
                          " rescale blocks above q_0's and at least one user level (CoeffToSlot " +
                          std::to_string(config.cts_levels) + ", EvalMod " +
                          std::to_string(config.evalmod_depth()) + ", SlotToCoeff " +
                          std::to_string(config.stc_levels) +
                          (pack ? ", the pack_sparse mask 1" : "") + "); this chain has " +
                          std::to_string(tops.size() - 1) + " (see bootstrap_chain)");
  }
  std::vector<std::uint64_t> q0_primes;
  for (std::size_t i = 0; i <= tops[0]; ++i) q0_primes.push_back(c.base_q(tops[0])[i].value);
  q0_ = detail::exact_product(q0_primes);
  const std::size_t top_idx = tops.size() - 1;
  input_level_ = tops[config.stc_levels];
  evalmod_output_level_ = tops[top_idx - config.cts_levels - config.evalmod_depth()];
  output_level_ = tops[top_idx - config.cts_levels - config.evalmod_depth() - pack];
  levels_left_ = top_idx - config.cts_levels - config.evalmod_depth() - config.stc_levels - pack;
  low_output_level_ = tops[levels_left_];  // output_level's index lowered by stc_levels
  evalmod_level_ = tops[top_idx - config.cts_levels];
  evalmod_scale_ = chain_.block_product(tops[top_idx - config.cts_levels]);
  // Python: self.scale / (self.q0 * k1) / 2.0 / gap, the integer q0 * k1 rounded once.
  std::vector<std::uint64_t> q0k1 = q0_primes;
  q0k1.push_back(config.k_range + 1);
  const double gap = static_cast<double>(n_full / slots);
  cts_constant_ = scale_ / detail::exact_product(q0k1) / 2.0 / gap;
  gamma_ = q0_ / (2 * std::numbers::pi * scale_);
  // The rotations: every transform level's baby and giant steps, and SubSum's; for each, the
  // highest level it is used at (SlotToCoeff also runs at output_level() for an input below
  // input_level(): late_slot_to_coeff) and the key limbs it reads per bootstrap on the main path
  // (a baby step once per input of its transform level, a giant step once per output).
  const std::size_t alpha = c.alpha(), k = c.num_p();
  auto key_polys = [&](std::size_t lv) {  // digits x limbs of a key read at level lv
    return ((lv + alpha) / alpha) * (lv + 1 + k);
  };
  std::map<int, std::size_t> top_of, reads_of;
  auto use = [&](int s, std::size_t lv, bool main_path, std::size_t times) {
    auto [it, fresh] = top_of.emplace(s, lv);
    if (!fresh) it->second = std::max(it->second, lv);
    if (main_path) reads_of[s] += times * key_polys(lv);
  };
  const std::vector<DftLevel> cts = coeff_to_slot_levels(slots, config.cts_levels, top_level(),
                                                         cts_constant_, c, config.pack_sparse);
  const std::vector<DftLevel> stc = slot_to_coeff_levels(slots, config.stc_levels, input_level_, c);
  auto uses_of = [&](const DftLevel& lv) {
    return LinearTransform::rotation_uses_of(lv.matrices, lv.slots_or(slots));
  };
  for (const DftLevel& lv : cts) {
    for (const auto& [s, times] : uses_of(lv)) {
      if (s) use(s, lv.level, true, times);
    }
  }
  // The late SlotToCoeff has SlotToCoeff's matrices one level set higher: the same steps, from
  // output_level() down one rescale block a level.
  std::size_t late_level = output_level_;
  for (const DftLevel& lv : stc) {
    for (const auto& [s, times] : uses_of(lv)) {
      if (!s) continue;
      use(s, lv.level, true, times);
      use(s, late_level, false, times);
    }
    if (&lv != &stc.back()) late_level = ckks::rescale_target(c, late_level);
  }
  for (std::size_t s = slots; s < n_full; s *= 2) use(static_cast<int>(s), top_level(), true, 1);
  for (const auto& [s, lv] : top_of) rotation_steps_.push_back(s);
  // Each Galois element's level and reads (galois_elements() order): the conjugation serves
  // CoeffToSlot's top, EvalMod's input and SlotToCoeff's end.
  std::map<std::uint32_t, std::pair<std::size_t, std::size_t>> by_elt;
  auto merge = [&](std::uint32_t e, std::size_t lv, std::size_t reads) {
    auto [it, fresh] = by_elt.emplace(e, std::make_pair(lv, reads));
    if (!fresh) it->second = {std::max(it->second.first, lv), it->second.second + reads};
  };
  for (const auto& [s, lv] : top_of) merge(c.galois_elt_from_step(s), lv, reads_of[s]);
  merge(c.galois_elt_column(), top_level(),
        key_polys(top_level()) + key_polys(evalmod_level_) + key_polys(input_level_));
  for (const auto& [e, lr] : by_elt) {
    galois_elements_.push_back(e);
    galois_key_levels_.push_back(lr.first);
    galois_key_reads_.push_back(lr.second);
  }
}

std::vector<std::uint32_t> BootstrapParameters::galois_elements() const { return galois_elements_; }

int BootstrapParameters::step(long long k) const { return LinearTransform::signed_step(k, slots_); }

}  // namespace veil::circuits
