#include "veil/rlwe/plaintext.h"

#include <string>

#include "veil/core/error.h"

namespace veil {

Plaintext make_plaintext(const ContextPtr& ctx, const std::vector<std::uint64_t>& coefficients,
                         const Device& dev) {
  if (!ctx) throw InvalidArgument("context: is empty");
  if (ctx->scheme() == SchemeType::ckks) {
    throw InvalidArgument("context: coefficient plaintexts are for BFV and BGV (CKKS encodes with CKKSEncoder)");
  }
  const std::size_t n = ctx->n();
  if (coefficients.size() > n) {
    throw InvalidArgument("coefficients: " + std::to_string(coefficients.size()) +
                          " coefficients, at most N = " + std::to_string(n));
  }
  const u64 t = ctx->plain_modulus();
  for (std::size_t i = 0; i < coefficients.size(); ++i) {
    if (coefficients[i] >= t) {
      // The value itself stays out of the message (plaintexts are the user's data).
      throw InvalidArgument("coefficients: coefficient " + std::to_string(i) +
                            " is not below plain_modulus " + std::to_string(t));
    }
  }
  std::vector<u64> full(n, 0);
  std::copy(coefficients.begin(), coefficients.end(), full.begin());
  Plaintext pt(ctx, dev, n, ctx->max_level(), false);
  backend::copy(dev, pt.data<u64>(), Device::cpu(), full.data(), n * sizeof(u64));
  return pt;
}

std::vector<std::uint64_t> plaintext_coefficients(const Plaintext& plain) {
  if (plain.empty()) throw InvalidArgument("plain: is empty");
  if (plain.context()->scheme() == SchemeType::ckks || plain.is_ntt_form() ||
      plain.word_count() != plain.context()->n()) {
    throw InvalidArgument("plain: expected a BFV/BGV plaintext in coefficient form");
  }
  return plain.buffer().to_host();
}

}  // namespace veil
