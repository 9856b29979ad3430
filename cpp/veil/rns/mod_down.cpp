// ModDown hot path: divide-and-round by the dropped primes (one for_each thread per coefficient
// of each polynomial; the D -> K conversion and the final scaling are fused).
#include "veil/rns/mod_down.h"

#include "veil/rns/conv_kernels.h"

namespace veil {

namespace rns_detail {
/// out_k = (x_k + floor(D/2) - r_k) * D^-1 mod k, r_k = FastBaseConv([x + floor(D/2)]_D) mod k.
/// Reads x_k before writing out_k, so out may be the same location (in-place ModDown).
template <bool kAccumulate>
struct ModDownEpiT {
  u64* out;
  const u64* x_k;
  std::size_t n;
  const Modulus* keep;
  const u64* half_k;
  const u64* d_inv;
  const u64* d_inv_shoup;
  VEIL_HD void operator()(std::size_t i, u64 r, u64, u64) const {
    const u64 k = keep[i].value;
    const u64 s = x_k[i * n] + half_k[i] + (k - r);  // < 3k < 2^63
    const u64 v = mul_shoup(s, d_inv[i], d_inv_shoup[i], k);
    out[i * n] = kAccumulate ? add_mod(out[i * n], v, k) : v;
  }
};
using ModDownEpi = ModDownEpiT<false>;
}  // namespace rns_detail

void ModDown::apply(const Device& dev, const u64* in, u64* out, std::size_t n,
                    std::size_t num_polys) const {
  using namespace rns_detail;
  VEIL_REQUIRE(conv_.k_from > 0, "ModDown::apply: object is default-constructed");
  ConvView cv = make_view(dev, conv_, drop_, keep_);
  cv.offset = half_mod_d_.data(dev);
  const std::size_t kk = keep_.size(), kd = drop_.size();
  const std::size_t in_stride = (kk + kd) * n;
  const std::size_t out_stride = out == in ? in_stride : kk * n;
  const Modulus* km = cv.to;
  const u64* hk = half_mod_k_.data(dev);
  const u64* di = d_inv_.data(dev);
  const u64* di_sh = d_inv_shoup_.data(dev);
  Buffer<u64> scratch = partial_scratch(dev, kd, kk, n, num_polys);
  u64* part = scratch.data();
  for_each(dev, num_polys * n, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t p = idx / n, c = idx % n;
    const u64* x = in + p * in_stride + c;
    ModDownEpi epi{out + p * out_stride + c, x, n, km, hk, di, di_sh};
    convert_coeff(cv, x + kk * n, part ? part + p * kk * n + c : nullptr, n, epi);
  });
}

void ModDown::apply_accumulate(const Device& dev, const u64* in, u64* acc0, u64* acc1,
                               std::size_t n, std::size_t num_polys) const {
  using namespace rns_detail;
  VEIL_REQUIRE(conv_.k_from > 0, "ModDown::apply: object is default-constructed");
  VEIL_REQUIRE(num_polys >= 1 && num_polys <= 2, "ModDown::apply_accumulate: 1 or 2 polynomials");
  ConvView cv = make_view(dev, conv_, drop_, keep_);
  cv.offset = half_mod_d_.data(dev);
  const std::size_t kk = keep_.size(), kd = drop_.size();
  const std::size_t in_stride = (kk + kd) * n;
  const Modulus* km = cv.to;
  const u64* hk = half_mod_k_.data(dev);
  const u64* di = d_inv_.data(dev);
  const u64* di_sh = d_inv_shoup_.data(dev);
  Buffer<u64> scratch = partial_scratch(dev, kd, kk, n, num_polys);
  u64* part = scratch.data();
  for_each(dev, num_polys * n, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t p = idx / n, c = idx % n;
    const u64* x = in + p * in_stride + c;
    ModDownEpiT<true> epi{(p == 0 ? acc0 : acc1) + c, x, n, km, hk, di, di_sh};
    convert_coeff(cv, x + kk * n, part ? part + p * kk * n + c : nullptr, n, epi);
  });
}

}  // namespace veil
