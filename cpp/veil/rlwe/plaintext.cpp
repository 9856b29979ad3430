#include "veil/rlwe/plaintext.h"

#include <string>

#include "veil/core/error.h"
#include "veil/ring/ntt.h"
#include "veil/ring/poly_ops.h"
#include "veil/rlwe/checks.h"

namespace veil {

Plaintext make_plaintext(const ContextPtr& ctx, const std::vector<std::uint64_t>& coefficients,
                         const Device& dev) {
  if (!ctx) throw InvalidArgument("context: is empty");
  const SchemeDefinition& def = ctx->scheme_definition();
  if (!def.has_plain_modulus) {
    throw InvalidArgument(std::string("context: coefficient plaintexts are for schemes with a "
                                      "plain modulus (") +
                          def.name + " encodes with " + def.name + "Encoder)");
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
  backend::upload(dev, pt.data<u64>(), full.data(), n * sizeof(u64));
  return pt;
}

std::vector<std::uint64_t> plaintext_coefficients(const Plaintext& plain) {
  if (plain.empty()) throw InvalidArgument("plain: is empty");
  if (!plain.context()->scheme_definition().has_plain_modulus || plain.is_ntt_form() ||
      plain.word_count() != plain.context()->n()) {
    throw InvalidArgument("plain: expected a plaintext mod t in coefficient form");
  }
  return plain.buffer().to_host();
}

WordBuffer lift_plain_ntt(const Context& ctx, const Device& dev, const Plaintext& plain,
                          std::size_t level) {
  const RnsBase& q = ctx.base_q(level);
  WordBuffer m(dev, q.size() * ctx.n(), ctx.word_bits());
  poly::lift_small(dev, q, ctx.n(), plain.data<u64>(), ctx.plain_modulus(), true, m.data());
  ntt_forward(dev, m.data(), 1, q, ctx.ntt());
  return m;
}

Plaintext plain_to_ntt(const Plaintext& plain, std::size_t level) {
  if (plain.empty()) throw InvalidArgument("plain: is empty");
  const ContextPtr& ctx = plain.context();
  if (!ctx->scheme_definition().has_plain_modulus) {
    throw InvalidArgument(std::string("plain: ") + ctx->scheme_definition().name +
                          " plaintexts are encoded in NTT form already");
  }
  if (plain.is_ntt_form() || plain.word_count() != ctx->n()) {
    throw InvalidArgument("plain: expected a plaintext mod t in coefficient form (from "
                          "encode), got one in NTT form");
  }
  if (level > ctx->max_level()) {
    throw InvalidArgument("level: expected 0.." + std::to_string(ctx->max_level()) + ", got " +
                          std::to_string(level));
  }
  Plaintext out(ctx, plain.device(), 0, level, true);
  out.buffer() = lift_plain_ntt(*ctx, plain.device(), plain, level);  // its words, no copy
  return out;
}

void check_coeff_plain(const Context& ctx, const Device& dev, const Plaintext& plain,
                       const char* what) {
  if (plain.empty()) throw InvalidArgument(std::string(what) + ": is empty");
  check_compatible(ctx, dev, plain.context(), plain.device(), what);
  if (plain.is_ntt_form() || plain.word_count() != ctx.n()) {
    throw InvalidArgument(std::string(what) + ": expected a " + to_string(ctx.scheme()) +
                          " plaintext of N coefficients mod t (from encode)");
  }
}

void check_ntt_plain(const Context& ctx, const Device& dev, const Plaintext& plain,
                     std::size_t level, const char* what) {
  check_compatible(ctx, dev, plain.context(), plain.device(), what);
  if (!plain.is_ntt_form() || plain.word_count() != (plain.level() + 1) * ctx.n()) {
    throw InvalidArgument(std::string(what) + ": expected a plaintext in NTT form (plain_to_ntt)");
  }
  if (plain.level() != level) {
    throw InvalidArgument(std::string(what) + ": is in NTT form at level " +
                          std::to_string(plain.level()) + ", the ciphertext at level " +
                          std::to_string(level) + " (prepare it at the ciphertext's level)");
  }
}

}  // namespace veil
