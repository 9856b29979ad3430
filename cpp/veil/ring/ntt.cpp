#include "veil/ring/ntt.h"

#include <atomic>
#include <string>
#include <vector>

#if defined(_OPENMP)
#include <omp.h>
#endif

#include "veil/backend/device.h"
#include "veil/core/error.h"
#include "veil/core/primes.h"
#include "veil/ring/ntt_simd.h"

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

const NttTables::Tables32& NttTables::tables32() const {
  std::call_once(tables32_->once, [this] {
    const std::size_t n = n_;
    const std::vector<Modulus>& primes = primes_.host();
    const std::vector<u64>& tw = twiddles_.host();
    const std::vector<u64>& inv = inv_n_.host();
    std::vector<u32> tw32(primes.size() * 4 * n, 0);
    std::vector<u32> inv32(primes.size() * 4, 0);
    for (std::size_t p = 0; p < primes.size(); ++p) {
      const u64 q = primes[p].value;
      if (!fits_word32(q)) continue;  // a zero row: make_view refuses such a prime for u32
      const u32 q32 = static_cast<u32>(q);
      const u64* src = tw.data() + p * 4 * n;
      u32* dst = tw32.data() + p * 4 * n;
      for (std::size_t i = 0; i < n; ++i) {
        dst[i] = static_cast<u32>(src[i]);
        dst[n + i] = shoup_quotient32(dst[i], q32);
        dst[2 * n + i] = static_cast<u32>(src[2 * n + i]);
        dst[3 * n + i] = shoup_quotient32(dst[2 * n + i], q32);
      }
      const u32 ninv = static_cast<u32>(inv[2 * p]);
      const u32 w1n = static_cast<u32>(mul_mod(src[2 * n + 1], u64(ninv), primes[p]));
      inv32[4 * p] = ninv;
      inv32[4 * p + 1] = shoup_quotient32(ninv, q32);
      inv32[4 * p + 2] = w1n;
      inv32[4 * p + 3] = shoup_quotient32(w1n, q32);
    }
    tables32_->twiddles = DeviceTable<u32>(std::move(tw32));
    tables32_->inv_n = DeviceTable<u32>(std::move(inv32));
  });
  return *tables32_;
}

u32 NttTables::index_of(u64 q) const {
  for (std::size_t i = 0; i < primes().size(); ++i) {
    if (primes()[i].value == q) return static_cast<u32>(i);
  }
  throw InvalidArgument("NttTables: prime " + std::to_string(q) + " has no NTT table");
}

namespace detail {

// Harvey's lazy butterflies on 64-bit words (values in [0, 4q) between stages); on 32-bit words
// (q < 2^31, so 4q may not fit) the forward keeps values in [0, 2q) and the inverse in [0, q),
// one reduce_once per operand (core/modarith.h).
template <class W>
void ntt_forward_limb(W* a, const W* tw, const W* tw_shoup, std::size_t n, W q) {
  constexpr bool k32 = sizeof(W) == 4;
  const W two_q = 2 * q;
  std::size_t t = n;
  for (std::size_t m = 1; m < n; m <<= 1) {
    t >>= 1;
    for (std::size_t i = 0; i < m; ++i) {
      const W w = tw[m + i], ws = tw_shoup[m + i];
      W* x = a + 2 * i * t;
      W* y = x + t;
      for (std::size_t j = 0; j < t; ++j) {
        if constexpr (k32) {
          const W u = reduce_once(x[j], q);
          const W v = mul_shoup(y[j], w, ws, q);
          x[j] = u + v;
          y[j] = u + q - v;
        } else {
          W u = x[j];
          if (u >= two_q) u -= two_q;
          const W v = mul_shoup_lazy(y[j], w, ws, q);
          x[j] = u + v;
          y[j] = u + two_q - v;
        }
      }
    }
  }
  for (std::size_t j = 0; j < n; ++j) {
    W v = a[j];
    if (v >= two_q) v -= two_q;
    if (v >= q) v -= q;
    a[j] = v;
  }
}

template <class W>
void ntt_inverse_limb(W* a, const W* itw, const W* itw_shoup, std::size_t n, W q, W inv_n,
                      W inv_n_shoup) {
  constexpr bool k32 = sizeof(W) == 4;
  const W two_q = 2 * q;
  std::size_t t = 1;
  for (std::size_t m = n >> 1; m >= 1; m >>= 1) {
    for (std::size_t i = 0; i < m; ++i) {
      const W w = itw[m + i], ws = itw_shoup[m + i];
      W* x = a + 2 * i * t;
      W* y = x + t;
      for (std::size_t j = 0; j < t; ++j) {
        const W u = x[j], v = y[j];
        if constexpr (k32) {
          x[j] = reduce_once(u + v, q);
          y[j] = mul_shoup(u + q - v, w, ws, q);
        } else {
          W s = u + v;
          if (s >= two_q) s -= two_q;
          x[j] = s;
          y[j] = mul_shoup_lazy(u + two_q - v, w, ws, q);
        }
      }
    }
    t <<= 1;
  }
  for (std::size_t j = 0; j < n; ++j) a[j] = mul_shoup(a[j], inv_n, inv_n_shoup, q);
}

template void ntt_forward_limb<u64>(u64*, const u64*, const u64*, std::size_t, u64);
template void ntt_forward_limb<u32>(u32*, const u32*, const u32*, std::size_t, u32);
template void ntt_inverse_limb<u64>(u64*, const u64*, const u64*, std::size_t, u64, u64, u64);
template void ntt_inverse_limb<u32>(u32*, const u32*, const u32*, std::size_t, u32, u32, u32);

}  // namespace detail

namespace {

template <class W>
void check_view(const RnsPolyView<W>& v, const NttTables& tables, const char* what) {
  if (v.ntt_ids == nullptr) throw InvalidArgument(std::string(what) + ": base has no NTT tables");
  if (v.log_n != tables.log_n()) {
    throw InvalidArgument(std::string(what) + ": poly: degree 2^" + std::to_string(v.log_n) +
                          " differs from the tables' 2^" + std::to_string(tables.log_n()));
  }
}

// 32-bit words on a CPU with the vector kernels: each limb transformed by the 64-bit kernel with
// the 64-bit tables (its primes are below 2^31, so IFMA's), its first pass reading the 32-bit
// words and its last pass writing them, through a 64-bit scratch limb per thread. The outputs
// are canonical, so these are the 32-bit scalar kernel's words. False when no vector kernel
// applies (no AVX-512, n < 16).
bool cpu_transform_widened(bool forward, const RnsPolyView<u32>& v, const NttTables& tables) {
  const std::size_t n = v.n(), limbs = v.num_limbs;
  if (detail::cpu_simd() < detail::CpuSimd::kAvx512 || n < 16) return false;
  const Device cpu = Device::cpu();
  const u64* tw = tables.twiddles_for<u64>(cpu);
  const u64* inv = tables.inv_n_for<u64>(cpu);
  const std::int64_t total = static_cast<std::int64_t>(std::size_t(v.num_polys) * limbs);
  int threads = 1;
#if defined(_OPENMP)
  if (!backend::forked_child()) threads = omp_get_max_threads();
#endif
  std::vector<u64> scratch(static_cast<std::size_t>(threads) * n);  // one limb per thread
  std::atomic<bool> refused{false};  // cannot happen after the checks above; never silent
#pragma omp parallel for schedule(static) if (!backend::forked_child())
  for (std::int64_t k = 0; k < total; ++k) {
    int me = 0;
#if defined(_OPENMP)
    me = omp_get_thread_num();
#endif
    u64* b = scratch.data() + static_cast<std::size_t>(me) * n;
    const std::size_t id = v.ntt_ids[static_cast<std::size_t>(k) % limbs];
    const u64 q = tables.prime(id).value;
    const u64* t = tw + id * 4 * n;
    u32* a = v.limb(static_cast<u32>(k));
    const bool done =
        forward ? detail::ntt_forward_limb_simd(a, b, t, t + n, n, q)
                : detail::ntt_inverse_limb_simd(a, b, t + 2 * n, t + 3 * n, n, q, inv[2 * id],
                                                inv[2 * id + 1]);
    if (!done) refused.store(true, std::memory_order_relaxed);
  }
  VEIL_REQUIRE(!refused.load(), "ntt: the 32-bit vector kernel refused a limb");
  return true;
}

template <class W>
void cpu_transform(bool forward, const RnsPolyView<W>& v, const NttTables& tables) {
  if constexpr (sizeof(W) == 4) {
    if (cpu_transform_widened(forward, v, tables)) return;
  }
  const u32* ids = v.ntt_ids;  // host memory: the view is of CPU data
  const Device cpu = Device::cpu();
  const std::size_t n = v.n(), limbs = v.num_limbs;
  const W* tw = tables.twiddles_for<W>(cpu);
  const W* inv = tables.inv_n_for<W>(cpu);
  constexpr std::size_t kInvStride = sizeof(W) == 4 ? 4 : 2;
  const std::int64_t total = static_cast<std::int64_t>(std::size_t(v.num_polys) * limbs);
#pragma omp parallel for schedule(static) if (!backend::forked_child())
  for (std::int64_t k = 0; k < total; ++k) {
    const std::size_t l = static_cast<std::size_t>(k) % limbs;
    const std::size_t id = ids[l];
    const W q = static_cast<W>(tables.prime(id).value);
    const W* t = tw + id * 4 * n;
    W* a = v.limb(static_cast<u32>(k));
    if (forward) {
      if constexpr (sizeof(W) == 8) {
        if (detail::ntt_forward_limb_simd(a, t, t + n, n, q)) continue;
      }
      detail::ntt_forward_limb<W>(a, t, t + n, n, q);
    } else {
      if constexpr (sizeof(W) == 8) {
        if (detail::ntt_inverse_limb_simd(a, t + 2 * n, t + 3 * n, n, q, inv[kInvStride * id],
                                          inv[kInvStride * id + 1])) {
          continue;
        }
      }
      detail::ntt_inverse_limb<W>(a, t + 2 * n, t + 3 * n, n, q, inv[kInvStride * id],
                                  inv[kInvStride * id + 1]);
    }
  }
}

template <class W>
void view_transform(bool forward, const Device& dev, const RnsPolyView<W>& poly,
                    const NttTables& tables) {
  check_view(poly, tables, forward ? "ntt_forward" : "ntt_inverse");
  if (poly.num_polys == 0 || poly.num_limbs == 0) return;
  if (dev.is_cuda()) {
    if (forward) {
      detail::ntt_forward_cuda<W>(dev, poly, tables.twiddles_for<W>(dev));
    } else {
      detail::ntt_inverse_cuda<W>(dev, poly, tables.twiddles_for<W>(dev), tables.inv_n_for<W>(dev));
    }
    return;
  }
  cpu_transform<W>(forward, poly, tables);
}

// The pointer API: a view of `num_polys` polynomials over `base` (checked), then as above.
template <class W>
void transform(bool forward, const Device& dev, W* data, std::size_t num_polys, const RnsBase& base,
               const NttTables& tables) {
  if (!base.has_ntt()) {
    throw InvalidArgument(std::string(forward ? "ntt_forward" : "ntt_inverse") +
                          ": base has no NTT tables");
  }
  view_transform<W>(forward, dev, make_view<W>(dev, data, num_polys, base, tables.n()), tables);
}

}  // namespace

template <class W>
void ntt_forward(const Device& dev, const RnsPolyView<W>& poly, const NttTables& tables) {
  view_transform<W>(true, dev, poly, tables);
}

template <class W>
void ntt_inverse(const Device& dev, const RnsPolyView<W>& poly, const NttTables& tables) {
  view_transform<W>(false, dev, poly, tables);
}

template void ntt_forward<u64>(const Device&, const RnsPolyView<u64>&, const NttTables&);
template void ntt_forward<u32>(const Device&, const RnsPolyView<u32>&, const NttTables&);
template void ntt_inverse<u64>(const Device&, const RnsPolyView<u64>&, const NttTables&);
template void ntt_inverse<u32>(const Device&, const RnsPolyView<u32>&, const NttTables&);

void ntt_forward(const Device& dev, u64* data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables) {
  transform<u64>(true, dev, data, num_polys, base, tables);
}
void ntt_inverse(const Device& dev, u64* data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables) {
  transform<u64>(false, dev, data, num_polys, base, tables);
}
void ntt_forward(const Device& dev, u32* data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables) {
  transform<u32>(true, dev, data, num_polys, base, tables);
}
void ntt_inverse(const Device& dev, u32* data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables) {
  transform<u32>(false, dev, data, num_polys, base, tables);
}

void ntt_forward(const Device& dev, WordPtr data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables) {
  VEIL_WITH_WORD(data.word_bits(), transform<W>(true, dev, data.as<W>(), num_polys, base, tables));
}
void ntt_inverse(const Device& dev, WordPtr data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables) {
  VEIL_WITH_WORD(data.word_bits(), transform<W>(false, dev, data.as<W>(), num_polys, base, tables));
}

}  // namespace veil
