// ModDown hot path: divide-and-round by the dropped primes (one for_each thread per coefficient
// of each polynomial; the D -> K conversion and the final scaling are fused).
#include "veil/rns/mod_down.h"

#include "veil/rns/conv_kernels.h"

namespace veil {

namespace rns_detail {
/// out_k = (x_k + floor(D/2) - r_k) * D^-1 mod k, r_k = FastBaseConv([x + floor(D/2)]_D) mod k.
/// Reads x_k before writing out_k, so out may be the same location (in-place ModDown).
template <class W, bool kAccumulate>
struct ModDownEpiT {
  W* out;
  const W* x_k;
  std::size_t n;
  const Modulus* keep;
  const u64* half_k;
  const u64* d_inv;
  const u64* d_inv_shoup;
  VEIL_HD void operator()(std::size_t i, W r, u64, u64) const {
    const W k = static_cast<W>(keep[i].value);
    // < 3k < 2^63 (u64) / 2^32 (u32: k < 2^31, so reduce the first sum once to stay below 2k).
    const W s = reduce_once_word(x_k[i * n] + static_cast<W>(half_k[i]), k) + (k - r);
    const W v = mul_shoup(s, static_cast<W>(d_inv[i]), shoup_for<W>(d_inv_shoup[i]), k);
    out[i * n] = kAccumulate ? add_mod(out[i * n], v, k) : v;
  }
};
}  // namespace rns_detail

namespace {
// Shared body of apply / apply_accumulate: polynomial p's output starts at
// outs[p] (p < 2) or at outs[0] + p * out_stride.
template <class W, bool kAccumulate>
void mod_down_run(const Device& dev, const detail::FastConvTables& conv, const RnsBase& keep,
                  const RnsBase& drop, const u64* half_d, const u64* half_k, const u64* d_inv,
                  const u64* d_inv_shoup, const W* in, W* out0, W* out1,
                  std::size_t out_stride, std::size_t n, std::size_t num_polys) {
  using namespace rns_detail;
  VEIL_REQUIRE(conv.k_from > 0, "ModDown::apply: object is default-constructed");
  ConvView cv = make_view(dev, conv, drop, keep);
  cv.offset = half_d;
  const std::size_t kk = keep.size(), kd = drop.size();
  const std::size_t in_stride = (kk + kd) * n;
  const Modulus* km = cv.to;
  Buffer<W> scratch = partial_scratch<W>(dev, kd, kk, n, num_polys);
  W* part = scratch.data();
  for_each_coefficient(dev, num_polys, n, VEIL_LAMBDA(std::size_t p, std::size_t c) {
    const W* x = in + p * in_stride + c;
    W* o = (out1 != nullptr && p == 1) ? out1 : out0 + (out1 != nullptr ? 0 : p * out_stride);
    ModDownEpiT<W, kAccumulate> epi{o + c, x, n, km, half_k, d_inv, d_inv_shoup};
    convert_coeff<W>(cv, x + kk * n, part ? part + p * kk * n + c : nullptr, n, epi);
  });
}
}  // namespace

template <class W>
void ModDown::apply(const Device& dev, const W* in, W* out, std::size_t n,
                    std::size_t num_polys) const {
  const std::size_t kk = keep_.size(), kd = drop_.size();
  const std::size_t out_stride = out == in ? (kk + kd) * n : kk * n;
  mod_down_run<W, false>(dev, conv_, keep_, drop_, half_mod_d_.data(dev), half_mod_k_.data(dev),
                      d_inv_.data(dev), d_inv_shoup_.data(dev), in, out, nullptr, out_stride, n,
                      num_polys);
}

template <class W>
void ModDown::apply_accumulate(const Device& dev, const W* in, W* acc0, W* acc1,
                               std::size_t n, std::size_t num_polys) const {
  VEIL_REQUIRE(num_polys >= 1 && num_polys <= 2, "ModDown::apply_accumulate: 1 or 2 polynomials");
  mod_down_run<W, true>(dev, conv_, keep_, drop_, half_mod_d_.data(dev), half_mod_k_.data(dev),
                     d_inv_.data(dev), d_inv_shoup_.data(dev), in, acc0,
                     num_polys == 2 ? acc1 : nullptr, 0, n, num_polys);
}

template void ModDown::apply<u32>(const Device&, const u32*, u32*, std::size_t, std::size_t) const;
template void ModDown::apply<u64>(const Device&, const u64*, u64*, std::size_t, std::size_t) const;
template void ModDown::apply_accumulate<u32>(const Device&, const u32*, u32*, u32*, std::size_t,
                                             std::size_t) const;
template void ModDown::apply_accumulate<u64>(const Device&, const u64*, u64*, u64*, std::size_t,
                                             std::size_t) const;

void ModDown::apply(const Device& dev, ConstWordPtr in, WordPtr out, std::size_t n,
                    std::size_t num_polys) const {
  VEIL_WITH_WORD(out.word_bits(), apply<W>(dev, in.as<W>(), out.as<W>(), n, num_polys));
}

}  // namespace veil
