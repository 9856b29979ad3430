#include "veil/rlwe/ntt_ops.h"

#include <string>

#include "veil/core/error.h"
#include "veil/ring/poly_ops.h"

namespace veil {

Ciphertext tensor_ntt(const Ciphertext& a, const Ciphertext& b) {
  const ContextPtr& ctx = a.context();
  const Device& dev = a.device();
  const RnsBase& q = ctx->base_q(a.level());
  const std::size_t n = ctx->n();
  const std::size_t sa = a.size(), sb = b.size();
  Ciphertext out(ctx, dev, sa + sb - 1, a.level(), true);
  poly::tensor(dev, q, n, a.data(), sa, b.data(), sb, out.data());
  return out;
}

Ciphertext divide_by_top_primes(const Ciphertext& ct, std::size_t target, const ModDownNtt& down,
                                const char* what) {
  const ContextPtr& ctx = ct.context();
  const std::size_t level = ct.level();
  if (level == 0) {
    throw InvalidArgument(std::string(what) +
                          ": is at the last level (0); there is no next level to switch to");
  }
  const Device& dev = ct.device();
  VEIL_REQUIRE(target < level, "divide_by_top_primes: target must be below the level");
  VEIL_REQUIRE(down.keep().size() == target + 1 && down.drop().size() == level - target,
               "divide_by_top_primes: `down` must divide Q_level by the primes above `target`");
  Ciphertext out(ctx, dev, ct.size(), target, true);
  down.apply(dev, ctx->ntt(), ct.data(), out.data(), ctx->n(), ct.size());
  out.set_scale(ct.scale());
  out.set_correction_factor(ct.correction_factor());
  return out;
}

}  // namespace veil
