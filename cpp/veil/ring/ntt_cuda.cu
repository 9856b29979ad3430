// CUDA batched NTT: every limb of every polynomial in each launch.
// Simple radix-2 version: one launch per stage; each thread performs one butterfly.
// Produces exactly the CPU reference's output (all values fully reduced).
#include <cuda_runtime.h>

#include "veil/backend/memory.h"
#include "veil/ring/ntt.h"

namespace veil::detail {

namespace {

__global__ void fwd_stage(u64* data, std::size_t total_bfly, int log_n, std::size_t m,
                          std::size_t limbs, const u32* ids, const Modulus* moduli,
                          const u64* twiddles, bool last) {
  const std::size_t n = std::size_t(1) << log_n;
  const std::size_t half = n >> 1;
  for (std::size_t g = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; g < total_bfly;
       g += std::size_t(blockDim.x) * gridDim.x) {
    const std::size_t poly_limb = g / half;
    const std::size_t k = g % half;
    const std::size_t limb = poly_limb % limbs;
    const u32 id = ids[limb];
    const u64 q = moduli[id].value, two_q = 2 * q;
    const u64* tw = twiddles + std::size_t(id) * 4 * n;
    const std::size_t t = half / m;  // butterfly span
    const std::size_t i = k / t, j = k % t;
    u64* x = data + poly_limb * n + 2 * i * t + j;
    u64* y = x + t;
    const u64 w = tw[m + i], ws = tw[n + m + i];
    u64 u = *x;
    if (u >= two_q) u -= two_q;
    u64 v = mul_shoup_lazy(*y, w, ws, q);
    u64 a = u + v, b = u + two_q - v;
    if (last) {
      if (a >= two_q) a -= two_q;
      if (a >= q) a -= q;
      if (b >= two_q) b -= two_q;
      if (b >= q) b -= q;
    }
    *x = a;
    *y = b;
  }
}

__global__ void inv_stage(u64* data, std::size_t total_bfly, int log_n, std::size_t m,
                          std::size_t limbs, const u32* ids, const Modulus* moduli,
                          const u64* twiddles, const u64* inv_n, bool last) {
  const std::size_t n = std::size_t(1) << log_n;
  const std::size_t half = n >> 1;
  for (std::size_t g = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; g < total_bfly;
       g += std::size_t(blockDim.x) * gridDim.x) {
    const std::size_t poly_limb = g / half;
    const std::size_t k = g % half;
    const std::size_t limb = poly_limb % limbs;
    const u32 id = ids[limb];
    const u64 q = moduli[id].value, two_q = 2 * q;
    const u64* tw = twiddles + std::size_t(id) * 4 * n;
    const std::size_t t = half / m;
    const std::size_t i = k / t, j = k % t;
    u64* x = data + poly_limb * n + 2 * i * t + j;
    u64* y = x + t;
    const u64 w = tw[2 * n + m + i], ws = tw[3 * n + m + i];
    u64 u = *x, v = *y;
    u64 s = u + v;
    if (s >= two_q) s -= two_q;
    u64 d = mul_shoup_lazy(u + two_q - v, w, ws, q);
    if (last) {
      const u64 ni = inv_n[2 * id], nis = inv_n[2 * id + 1];
      s = mul_shoup(s, ni, nis, q);
      d = mul_shoup(d, ni, nis, q);
    }
    *x = s;
    *y = d;
  }
}

unsigned grid_for(std::size_t work) {
  std::size_t b = (work + 255) / 256;
  return unsigned(b > 65535u * 8u ? 65535u * 8u : b);
}

}  // namespace

void ntt_forward_cuda(const Device& dev, u64* data, std::size_t num_polys, std::size_t num_limbs,
                      const u32* ids, const Modulus* moduli, const u64* twiddles, int log_n) {
  backend::set_current(dev);
  const std::size_t n = std::size_t(1) << log_n;
  const std::size_t total = num_polys * num_limbs * (n / 2);
  if (total == 0) return;
  auto s = backend::stream(dev);
  for (std::size_t m = 1; m < n; m <<= 1) {
    fwd_stage<<<grid_for(total), 256, 0, s>>>(data, total, log_n, m, num_limbs, ids, moduli,
                                              twiddles, (m << 1) == n);
  }
  backend::check_last_launch("ntt_forward");
}

void ntt_inverse_cuda(const Device& dev, u64* data, std::size_t num_polys, std::size_t num_limbs,
                      const u32* ids, const Modulus* moduli, const u64* twiddles,
                      const u64* inv_n, int log_n) {
  backend::set_current(dev);
  const std::size_t n = std::size_t(1) << log_n;
  const std::size_t total = num_polys * num_limbs * (n / 2);
  if (total == 0) return;
  auto s = backend::stream(dev);
  for (std::size_t m = n >> 1; m >= 1; m >>= 1) {
    inv_stage<<<grid_for(total), 256, 0, s>>>(data, total, log_n, m, num_limbs, ids, moduli,
                                              twiddles, inv_n, m == 1);
  }
  backend::check_last_launch("ntt_inverse");
}

}  // namespace veil::detail
