#include "veil/ring/ntt.h"

#include "veil/backend/device.h"

#include <string>

#include "veil/core/error.h"
#include "veil/core/primes.h"

namespace veil {

NttTables::NttTables(std::size_t n, const std::vector<Modulus>& primes) : n_(n) {
  if (!is_power_of_two(n) || n < 2) {
    throw InvalidArgument("poly_modulus_degree: expected a power of two, got " + std::to_string(n));
  }
  log_n_ = log2_exact(n);
  std::vector<u64> tw(primes.size() * 4 * n);
  std::vector<u64> inv(primes.size() * 2);
  for (std::size_t p = 0; p < primes.size(); ++p) {
    const Modulus& m = primes[p];
    const u64 q = m.value;
    u64 psi = minimal_primitive_root(2 * n, m);
    u64 psi_inv = inv_mod(psi, q);
    psi_.push_back(psi);
    u64* fwd = tw.data() + p * 4 * n;
    u64* fwd_s = fwd + n;
    u64* bwd = fwd + 2 * n;
    u64* bwd_s = fwd + 3 * n;
    u64 power = 1, ipower = 1;
    for (std::size_t i = 0; i < n; ++i) {
      u32 r = reverse_bits(static_cast<u32>(i), log_n_);
      fwd[r] = power;
      bwd[r] = ipower;
      power = mul_mod(power, psi, m);
      ipower = mul_mod(ipower, psi_inv, m);
    }
    for (std::size_t i = 0; i < n; ++i) {
      fwd_s[i] = shoup_quotient(fwd[i], q);
      bwd_s[i] = shoup_quotient(bwd[i], q);
    }
    u64 ninv = inv_mod(n % q, q);
    inv[2 * p] = ninv;
    inv[2 * p + 1] = shoup_quotient(ninv, q);
  }
  primes_ = DeviceTable<Modulus>(primes);
  twiddles_ = DeviceTable<u64>(std::move(tw));
  inv_n_ = DeviceTable<u64>(std::move(inv));
}

u32 NttTables::index_of(u64 q) const {
  for (std::size_t i = 0; i < primes().size(); ++i) {
    if (primes()[i].value == q) return static_cast<u32>(i);
  }
  throw InvalidArgument("NttTables: prime " + std::to_string(q) + " has no NTT table");
}

namespace detail {

void ntt_forward_limb(u64* a, const u64* tw, const u64* tw_shoup, std::size_t n, u64 q) {
  const u64 two_q = 2 * q;
  std::size_t t = n;
  for (std::size_t m = 1; m < n; m <<= 1) {
    t >>= 1;
    for (std::size_t i = 0; i < m; ++i) {
      const u64 w = tw[m + i], ws = tw_shoup[m + i];
      u64* x = a + 2 * i * t;
      u64* y = x + t;
      for (std::size_t j = 0; j < t; ++j) {
        u64 u = x[j];
        if (u >= two_q) u -= two_q;
        u64 v = mul_shoup_lazy(y[j], w, ws, q);
        x[j] = u + v;
        y[j] = u + two_q - v;
      }
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    u64 v = a[j];
    if (v >= two_q) v -= two_q;
    if (v >= q) v -= q;
    a[j] = v;
  }
}

void ntt_inverse_limb(u64* a, const u64* itw, const u64* itw_shoup, std::size_t n, u64 q,
                      u64 inv_n, u64 inv_n_shoup) {
  const u64 two_q = 2 * q;
  std::size_t t = 1;
  for (std::size_t m = n >> 1; m >= 1; m >>= 1) {
    for (std::size_t i = 0; i < m; ++i) {
      const u64 w = itw[m + i], ws = itw_shoup[m + i];
      u64* x = a + 2 * i * t;
      u64* y = x + t;
      for (std::size_t j = 0; j < t; ++j) {
        u64 u = x[j], v = y[j];
        u64 s = u + v;
        if (s >= two_q) s -= two_q;
        x[j] = s;
        y[j] = mul_shoup_lazy(u + two_q - v, w, ws, q);
      }
    }
    t <<= 1;
  }
  for (std::size_t j = 0; j < n; ++j) a[j] = mul_shoup(a[j], inv_n, inv_n_shoup, q);
}

}  // namespace detail

namespace {
void check_base(const RnsBase& base, const char* what) {
  if (!base.has_ntt()) throw InvalidArgument(std::string(what) + ": base has no NTT tables");
}
}  // namespace

void ntt_forward(const Device& dev, u64* data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables) {
  check_base(base, "ntt_forward");
  const std::size_t n = tables.n(), limbs = base.size();
  if (dev.is_cuda()) {
    detail::ntt_forward_cuda(dev, data, num_polys, limbs, base.ntt_ids(dev), tables.moduli(dev),
                             tables.twiddles(dev), tables.log_n());
    return;
  }
  const u64* tw = tables.twiddles(dev);
  const auto& ids = base.ntt_ids();
  const std::int64_t total = static_cast<std::int64_t>(num_polys * limbs);
#pragma omp parallel for schedule(static) if (!backend::forked_child())
  for (std::int64_t k = 0; k < total; ++k) {
    const std::size_t l = static_cast<std::size_t>(k) % limbs;
    const u64* t = tw + std::size_t(ids[l]) * 4 * n;
    detail::ntt_forward_limb(data + std::size_t(k) * n, t, t + n, n, base[l].value);
  }
}

void ntt_inverse(const Device& dev, u64* data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables) {
  check_base(base, "ntt_inverse");
  const std::size_t n = tables.n(), limbs = base.size();
  if (dev.is_cuda()) {
    detail::ntt_inverse_cuda(dev, data, num_polys, limbs, base.ntt_ids(dev), tables.moduli(dev),
                             tables.twiddles(dev), tables.inv_n(dev), tables.log_n());
    return;
  }
  const u64* tw = tables.twiddles(dev);
  const u64* inv = tables.inv_n(dev);
  const auto& ids = base.ntt_ids();
  const std::int64_t total = static_cast<std::int64_t>(num_polys * limbs);
#pragma omp parallel for schedule(static) if (!backend::forked_child())
  for (std::int64_t k = 0; k < total; ++k) {
    const std::size_t l = static_cast<std::size_t>(k) % limbs;
    const std::size_t id = ids[l];
    const u64* t = tw + id * 4 * n;
    detail::ntt_inverse_limb(data + std::size_t(k) * n, t + 2 * n, t + 3 * n, n, base[l].value,
                             inv[2 * id], inv[2 * id + 1]);
  }
}

}  // namespace veil
