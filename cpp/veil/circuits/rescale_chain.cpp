#include "veil/circuits/rescale_chain.h"

#include <bit>
#include <cmath>
#include <string>

#include "veil/circuits/numeric.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/core/error.h"

namespace veil::circuits {

namespace detail {

double exact_product(const std::vector<std::uint64_t>& factors) {
  // The product in 64-bit limbs, least significant first.
  std::vector<std::uint64_t> p{1};
  for (std::uint64_t f : factors) {
    unsigned __int128 carry = 0;
    for (auto& limb : p) {
      const unsigned __int128 t = static_cast<unsigned __int128>(limb) * f + carry;
      limb = static_cast<std::uint64_t>(t);
      carry = t >> 64;
    }
    if (carry) p.push_back(static_cast<std::uint64_t>(carry));
  }
  while (p.size() > 1 && p.back() == 0) p.pop_back();
  if (p.size() == 1 && p[0] < (std::uint64_t{1} << 53)) return static_cast<double>(p[0]);
  auto bit = [&](std::size_t i) { return (p[i / 64] >> (i % 64)) & 1; };
  const std::size_t msb =
      64 * (p.size() - 1) + (63 - static_cast<std::size_t>(std::countl_zero(p.back())));
  // Keep 53 significant bits; round to nearest on the dropped ones, ties to even.
  const std::size_t drop = msb - 52;
  std::uint64_t mant = 0;
  for (std::size_t i = msb + 1; i-- > drop;) mant = (mant << 1) | bit(i);
  const bool half = bit(drop - 1) != 0;
  bool sticky = false;
  for (std::size_t i = 0; i + 1 < drop && !sticky; ++i) sticky = bit(i) != 0;
  if (half && (sticky || (mant & 1))) ++mant;  // may reach 2^53: still exact
  return std::ldexp(static_cast<double>(mant), static_cast<int>(drop));
}

}  // namespace detail

RescaleChain::RescaleChain(ContextPtr ctx) : ctx_(std::move(ctx)) {
  if (!ctx_) throw InvalidArgument("context: is empty");
  if (ctx_->scheme() != SchemeType::ckks) {
    throw InvalidArgument("context: the circuits need a CKKS context, got " +
                          to_string(ctx_->scheme()));
  }
  std::size_t acc = 0;
  for (std::size_t g : ckks_context_tables(*ctx_).groups) {
    acc += g;
    tops_.push_back(acc - 1);
  }
  const std::size_t num_q = ctx_->num_q();
  products_.assign(num_q, 0.0);
  above_.assign(num_q, -1);
  // levels below lie in q_0's block
  const std::size_t first = ckks_context_tables(*ctx_).groups.front();
  for (std::size_t level = first; level < num_q; ++level) {
    const std::size_t t = ckks::rescale_target(*ctx_, level);
    std::vector<std::uint64_t> primes;
    for (std::size_t i = t + 1; i <= level; ++i) primes.push_back(ctx_->base_q(level)[i].value);
    products_[level] = detail::exact_product(primes);
  }
  for (std::size_t i = 1; i < tops_.size(); ++i) {
    above_[ckks::rescale_target(*ctx_, tops_[i])] = static_cast<std::ptrdiff_t>(tops_[i]);
  }
}

double RescaleChain::block_product(std::size_t level) const {
  if (level >= products_.size() || products_[level] == 0.0) {
    throw InvalidArgument("level: " + std::to_string(level) +
                          " has no rescale block (it lies in q_0's block or above the top level " +
                          std::to_string(ctx_->max_level()) + ")");
  }
  return products_[level];
}

std::size_t RescaleChain::above(std::size_t level) const {
  if (level >= above_.size() || above_[level] < 0) {
    throw InvalidArgument("level: " + std::to_string(level) + " is not a rescale target");
  }
  return static_cast<std::size_t>(above_[level]);
}

std::size_t RescaleChain::top_at_or_below(std::size_t level) const {
  std::size_t best = 0;
  bool found = false;
  for (std::size_t t : tops_) {
    if (t <= level) {
      best = t;
      found = true;
    }
  }
  if (!found) {
    throw InvalidArgument("ct: no rescale block below its level (it is inside q_0's block)");
  }
  return best;
}

std::size_t RescaleChain::top_index(std::size_t level) const {
  for (std::size_t i = 0; i < tops_.size(); ++i) {
    if (tops_[i] == level) return i;
  }
  throw InvalidArgument("level: " + std::to_string(level) + " is not the top of a rescale block");
}

}  // namespace veil::circuits
