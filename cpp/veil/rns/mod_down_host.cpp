// Host-side precomputation for ModDown, and the exact max_centered_log2 oracle helper.
#include <cmath>
#include <string>

#include "veil/rns/host_util.h"
#include "veil/rns/mod_down.h"

namespace veil {

using rns_host::cpp_int;

ModDown::ModDown(const RnsBase& keep, const RnsBase& drop)
    : keep_(keep), drop_(drop), conv_(drop, keep, {}, "ModDown") {
  // FastConvTables has checked: both bases non-empty, disjoint, drop co-prime.
  rns_host::check_coprime(keep, "ModDown", "keep");
  const cpp_int D = rns_host::product(drop);
  const cpp_int half = D / 2;
  std::vector<u64> hd(drop.size()), hk(keep.size()), dinv(keep.size()), dinv_sh(keep.size());
  for (std::size_t j = 0; j < drop.size(); ++j) hd[j] = rns_host::mod_word(half, drop[j].value);
  for (std::size_t i = 0; i < keep.size(); ++i) {
    const u64 k = keep[i].value;
    hk[i] = rns_host::mod_word(half, k);
    dinv[i] = inv_mod(rns_host::mod_word(D, k), k);
    dinv_sh[i] = shoup_quotient(dinv[i], k);
  }
  half_mod_d_ = DeviceTable<u64>(std::move(hd));
  half_mod_k_ = DeviceTable<u64>(std::move(hk));
  d_inv_ = DeviceTable<u64>(std::move(dinv));
  d_inv_shoup_ = DeviceTable<u64>(std::move(dinv_sh));
}

namespace {
cpp_int max_centered(const u64* host_in, std::size_t n, const RnsBase& base) {
  if (base.size() == 0) throw InvalidArgument("max_centered_log2: base 'base' is empty");
  if (n == 0) return 0;
  if (host_in == nullptr) throw InvalidArgument("max_centered_log2: 'host_in' is null");
  rns_host::check_coprime(base, "max_centered_log2", "base");
  const std::size_t k = base.size();
  const cpp_int Q = rns_host::product(base);
  // CRT basis e_i = (Q/q_i) * [(Q/q_i)^-1]_{q_i}, so x = sum_i x_i e_i mod Q.
  std::vector<cpp_int> e(k);
  for (std::size_t i = 0; i < k; ++i) {
    const u64 qi = base[i].value;
    const cpp_int qhat = Q / qi;
    e[i] = qhat * inv_mod(rns_host::mod_word(qhat, qi), qi);
  }
  const cpp_int half = Q / 2;
  cpp_int best = 0, x;
  for (std::size_t c = 0; c < n; ++c) {
    x = 0;
    for (std::size_t i = 0; i < k; ++i) x += e[i] * host_in[i * n + c];
    x %= Q;
    if (x > half) x = Q - x;  // |centered value|, centered into (-Q/2, Q/2]
    if (x > best) best = x;
  }
  return best;
}
}  // namespace

int max_centered_bit_count(const u64* host_in, std::size_t n, const RnsBase& base) {
  const cpp_int best = max_centered(host_in, n, base);
  return best == 0 ? 0 : static_cast<int>(boost::multiprecision::msb(best)) + 1;
}

double max_centered_log2(const u64* host_in, std::size_t n, const RnsBase& base) {
  const cpp_int best = max_centered(host_in, n, base);
  if (best == 0) return 0.0;
  const std::size_t msb = boost::multiprecision::msb(best);
  if (msb < 63) return std::log2(static_cast<double>(static_cast<u64>(best)));
  const std::size_t shift = msb - 62;
  return std::log2(static_cast<double>(static_cast<u64>(best >> shift))) + double(shift);
}

}  // namespace veil
