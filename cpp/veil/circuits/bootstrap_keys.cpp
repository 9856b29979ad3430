#include "veil/circuits/bootstrap_keys.h"

#include <algorithm>
#include <string>

#include "veil/core/error.h"
#include "veil/rlwe/keygen.h"

namespace veil::circuits {

namespace {
// Bytes of a key of level `level` on the device: its digits x 1 or 2 polynomials x limbs x N.
std::size_t key_bytes(const Context& ctx, std::size_t level, bool compact) {
  const std::size_t digits = (level + ctx.alpha()) / ctx.alpha();
  return digits * (compact ? 1 : 2) * (level + 1 + ctx.num_p()) * ctx.n() *
         (ctx.word_bits() / 8);
}
}  // namespace

std::vector<bool> BootstrapKeys::compact_choice(const BootstrapParameters& params,
                                                const BootstrapKeyStorage& storage,
                                                std::size_t* bytes) {
  const Context& ctx = *params.context();
  const std::vector<std::uint32_t> elts = params.galois_elements();
  const std::size_t top = ctx.max_level();
  auto level_of = [&](std::size_t i) {
    return storage.per_level ? params.galois_key_levels()[i] : top;
  };
  std::vector<bool> compact(elts.size(), storage.compact);
  // The switching keys: dense -> sparse at q_0's top, sparse -> dense at the top.
  std::size_t total = key_bytes(ctx, params.q0_level(), false) + key_bytes(ctx, top, false);
  for (std::size_t i = 0; i < elts.size(); ++i) total += key_bytes(ctx, level_of(i), compact[i]);
  if (!storage.compact && storage.max_bytes > 0 && total > storage.max_bytes) {
    // Cheapest first: the fewest a_j words regenerated per bootstrap per byte saved.
    std::vector<std::size_t> order(elts.size());
    for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
    auto cost = [&](std::size_t i) {
      const double saved = double(key_bytes(ctx, level_of(i), false) / 2);
      return double(params.galois_key_reads()[i]) * double(ctx.n()) / saved;
    };
    std::stable_sort(order.begin(), order.end(),
                     [&](std::size_t a, std::size_t b) { return cost(a) < cost(b); });
    for (std::size_t i : order) {
      if (total <= storage.max_bytes) break;
      compact[i] = true;
      total -= key_bytes(ctx, level_of(i), false) - key_bytes(ctx, level_of(i), true);
    }
    if (total > storage.max_bytes) {
      throw InvalidArgument("storage.max_bytes: the keys take at least " + std::to_string(total) +
                            " bytes even compact, more than " +
                            std::to_string(storage.max_bytes));
    }
  }
  if (bytes) *bytes = total;
  return compact;
}

BootstrapKeys BootstrapKeys::generate(const BootstrapParameters& params,
                                      const SecretKey& secret_key,
                                      const std::optional<RelinKeys>& relin_keys,
                                      std::optional<std::uint64_t> seed,
                                      const BootstrapKeyStorage& storage) {
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
  // One key at a time in element order, each in its form and at its level (a generator's keys
  // do not depend on the others' forms and levels, except that a compact key draws its a_j from
  // the compact sampler).
  const std::vector<std::uint32_t> elts = params.galois_elements();
  const std::vector<bool> compact = compact_choice(params, storage);
  keys.galois_keys = GaloisKeys(ctx, secret_key.device());
  for (std::size_t i = 0; i < elts.size(); ++i) {
    const std::vector<std::size_t> level{storage.per_level ? params.galois_key_levels()[i]
                                                           : ctx->max_level()};
    GaloisKeys one = dense.create_galois_keys_from_elts({elts[i]}, compact[i], level);
    keys.galois_keys.insert(elts[i], one.keys().at(elts[i]));
  }
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
  const std::vector<std::uint32_t> elts = params.galois_elements();
  for (std::size_t i = 0; i < elts.size(); ++i) {
    const std::uint32_t e = elts[i];
    if (!galois_keys.has_key(e)) {
      throw InvalidArgument("galois_keys: no key for Galois element " + std::to_string(e) +
                            " (BootstrapParameters::galois_elements lists those needed)");
    }
    const std::size_t need = params.galois_key_levels()[i];
    if (galois_keys.key(e).level() < need) {
      throw InvalidArgument("galois_keys: the key for Galois element " + std::to_string(e) +
                            " serves levels <= " + std::to_string(galois_keys.key(e).level()) +
                            ", bootstrapping uses it at level " + std::to_string(need));
    }
  }
  if (to_sparse.max_level() < params.q0_level()) {
    throw InvalidArgument("to_sparse: serves levels <= " + std::to_string(to_sparse.max_level()) +
                          ", below q_0's top " + std::to_string(params.q0_level()));
  }
  if (to_dense.max_level() < params.top_level()) {
    throw InvalidArgument("to_dense: serves levels <= " + std::to_string(to_dense.max_level()) +
                          ", below the top level " + std::to_string(params.top_level()) +
                          " where ModRaise lands");
  }
  for (const auto& [key, what] : {std::pair<const SwitchingKey*, const char*>{&to_sparse,
                                                                               "to_sparse"},
                                  {&to_dense, "to_dense"}}) {
    if (key->key().level() < key->max_level()) {
      throw InvalidArgument(std::string(what) + ": its key serves levels <= " +
                            std::to_string(key->key().level()) + ", below its max_level " +
                            std::to_string(key->max_level()));
    }
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
