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
}  // namespace rns_detail

namespace {
// Shared body of apply / apply_accumulate: polynomial p's output starts at
// outs[p] (p < 2) or at outs[0] + p * out_stride.
template <bool kAccumulate>
void mod_down_run(const Device& dev, const detail::FastConvTables& conv, const RnsBase& keep,
                  const RnsBase& drop, const u64* half_d, const u64* half_k, const u64* d_inv,
                  const u64* d_inv_shoup, const u64* in, u64* out0, u64* out1,
                  std::size_t out_stride, std::size_t n, std::size_t num_polys) {
  using namespace rns_detail;
  VEIL_REQUIRE(conv.k_from > 0, "ModDown::apply: object is default-constructed");
  ConvView cv = make_view(dev, conv, drop, keep);
  cv.offset = half_d;
  const std::size_t kk = keep.size(), kd = drop.size();
  const std::size_t in_stride = (kk + kd) * n;
  const Modulus* km = cv.to;
  Buffer<u64> scratch = partial_scratch(dev, kd, kk, n, num_polys);
  u64* part = scratch.data();
  for_each(dev, num_polys * n, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t p = idx / n, c = idx % n;
    const u64* x = in + p * in_stride + c;
    u64* o = (out1 != nullptr && p == 1) ? out1 : out0 + (out1 != nullptr ? 0 : p * out_stride);
    ModDownEpiT<kAccumulate> epi{o + c, x, n, km, half_k, d_inv, d_inv_shoup};
    convert_coeff(cv, x + kk * n, part ? part + p * kk * n + c : nullptr, n, epi);
  });
}
}  // namespace

void ModDown::apply(const Device& dev, const u64* in, u64* out, std::size_t n,
                    std::size_t num_polys) const {
  const std::size_t kk = keep_.size(), kd = drop_.size();
  const std::size_t out_stride = out == in ? (kk + kd) * n : kk * n;
  mod_down_run<false>(dev, conv_, keep_, drop_, half_mod_d_.data(dev), half_mod_k_.data(dev),
                      d_inv_.data(dev), d_inv_shoup_.data(dev), in, out, nullptr, out_stride, n,
                      num_polys);
}

void ModDown::apply_accumulate(const Device& dev, const u64* in, u64* acc0, u64* acc1,
                               std::size_t n, std::size_t num_polys) const {
  VEIL_REQUIRE(num_polys >= 1 && num_polys <= 2, "ModDown::apply_accumulate: 1 or 2 polynomials");
  mod_down_run<true>(dev, conv_, keep_, drop_, half_mod_d_.data(dev), half_mod_k_.data(dev),
                     d_inv_.data(dev), d_inv_shoup_.data(dev), in, acc0,
                     num_polys == 2 ? acc1 : nullptr, 0, n, num_polys);
}

}  // namespace veil
