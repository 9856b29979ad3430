#include "veil/circuits/bootstrap_keys.h"

#include <string>

#include "veil/core/error.h"
#include "veil/rlwe/keygen.h"

namespace veil::circuits {

BootstrapKeys BootstrapKeys::generate(const BootstrapParameters& params,
                                      const SecretKey& secret_key,
                                      const std::optional<RelinKeys>& relin_keys,
                                      std::optional<std::uint64_t> seed, bool compact) {
  const ContextPtr& ctx = params.context();
  if (secret_key.empty()) throw InvalidArgument("secret_key: is empty");
  if (secret_key.context()->parameter_hash() != ctx->parameter_hash()) {
    throw InvalidArgument("secret_key: belongs to another context");
  }
  auto derived = [&](std::uint64_t k) -> std::optional<std::uint64_t> {
    if (!seed) return std::nullopt;
    return *seed + k;
  };
  KeyGenerator sparse(ctx, secret_key.device(), derived(11), params.config().hamming_weight);
  KeyGenerator dense(ctx, secret_key, derived(12));
  BootstrapKeys keys;
  keys.to_sparse = sparse.create_switching_key(secret_key, params.q0_level());
  keys.to_dense = dense.create_switching_key(sparse.secret_key());
  keys.galois_keys = dense.create_galois_keys_from_elts(params.galois_elements(), compact);
  if (relin_keys) {
    if (relin_keys->empty()) throw InvalidArgument("relin_keys: is empty");
    keys.relin_keys = *relin_keys;
  } else {
    keys.relin_keys = dense.create_relin_keys();
  }
  return keys;
}

void BootstrapKeys::check(const BootstrapParameters& params) const {
  const Context& ctx = *params.context();
  auto same_context = [&](const ContextPtr& c, const char* what) {
    if (!c) throw InvalidArgument(std::string(what) + ": is empty");
    if (c->parameter_hash() != ctx.parameter_hash()) {
      throw InvalidArgument(std::string(what) + ": belongs to another context");
    }
  };
  same_context(relin_keys.context(), "relin_keys");
  same_context(galois_keys.context(), "galois_keys");
  same_context(to_sparse.context(), "to_sparse");
  same_context(to_dense.context(), "to_dense");
  const Device& dev = galois_keys.device();
  auto same_device = [&](const Device& d, const char* what) {
    if (d != dev) {
      throw InvalidArgument(std::string(what) + ": on " + d.str() + ", the Galois keys on " +
                            dev.str());
    }
  };
  same_device(relin_keys.device(), "relin_keys");
  same_device(to_sparse.device(), "to_sparse");
  same_device(to_dense.device(), "to_dense");
  for (std::uint32_t e : params.galois_elements()) {
    if (!galois_keys.has_key(e)) {
      throw InvalidArgument("galois_keys: no key for Galois element " + std::to_string(e) +
                            " (BootstrapParameters::galois_elements lists those needed)");
    }
  }
  if (to_sparse.max_level() < params.q0_level()) {
    throw InvalidArgument("to_sparse: serves levels <= " + std::to_string(to_sparse.max_level()) +
                          ", below q_0's top " + std::to_string(params.q0_level()));
  }
  const u64 dense_id = galois_keys.key_id();
  if (dense_id != 0 && relin_keys.key_id() != 0 && relin_keys.key_id() != dense_id) {
    throw InvalidArgument("relin_keys: belong to another key set than the Galois keys");
  }
  if (dense_id != 0 && to_dense.key_id() != 0 && to_dense.key_id() != dense_id) {
    throw InvalidArgument("to_dense: switches to another key set than the Galois keys'");
  }
  if (dense_id != 0 && to_sparse.from_key_id() != 0 && to_sparse.from_key_id() != dense_id) {
    throw InvalidArgument("to_sparse: switches from another key set than the Galois keys'");
  }
  if (to_sparse.key_id() != 0 && to_dense.from_key_id() != 0 &&
      to_sparse.key_id() != to_dense.from_key_id()) {
    throw InvalidArgument("to_dense: does not switch from to_sparse's sparse secret");
  }
}

std::size_t BootstrapKeys::bytes() const {
  std::size_t b = to_sparse.key().buffer().bytes() + to_dense.key().buffer().bytes();
  for (const auto& [e, k] : galois_keys.keys()) b += k.buffer().bytes();
  return b;
}

BootstrapKeys BootstrapKeys::to(const Device& dev) const {
  BootstrapKeys k;
  k.relin_keys = relin_keys.to(dev);
  k.galois_keys = galois_keys.to(dev);
  k.to_sparse = to_sparse.to(dev);
  k.to_dense = to_dense.to(dev);
  return k;
}

}  // namespace veil::circuits
