// BaseConverter hot paths (one for_each thread per coefficient of each polynomial).
#include "veil/rns/base_converter.h"

#include "veil/rns/conv_kernels.h"

namespace veil {

namespace rns_detail {
/// Exact conversion epilogue: out_j = r_j - v * Q mod p_j (HPS 2019, §2.2 / seed 002 §II-D.2).
template <class Wo>
struct ExactEpi {
  Wo* out;
  std::size_t n;
  const Modulus* to;
  const u64* q_mod_p;
  VEIL_HD void operator()(std::size_t j, Wo r, u64 v_hi, u64 v_lo) const {
    const Modulus& p = to[j];
    const Wo v = static_cast<Wo>(reduce_rounded(v_hi, v_lo, p));
    const Wo vq = mul_mod(v, static_cast<Wo>(q_mod_p[j]), p);
    out[j * n] = sub_mod(r, vq, static_cast<Wo>(p.value));
  }
};
}  // namespace rns_detail

template <class W>
void BaseConverter::fast_convert(const Device& dev, const W* in, W* out, std::size_t n,
                                 std::size_t num_polys, std::size_t in_stride,
                                 std::size_t out_stride) const {
  using namespace rns_detail;
  VEIL_REQUIRE(conv_.k_from > 0, "BaseConverter::fast_convert: converter is default-constructed");
  const ConvView cv = make_view(dev, conv_, from_, to_);
  const std::size_t kf = cv.kf, kt = cv.kt;
  const std::size_t is = in_stride ? in_stride : kf * n, os = out_stride ? out_stride : kt * n;
  Buffer<W> scratch = partial_scratch<W>(dev, kf, kt, n, num_polys);
  W* part = scratch.data();
  for_each_coefficient(dev, num_polys, n, VEIL_LAMBDA(std::size_t p, std::size_t c) {
    StoreEpi<W> epi{out + p * os + c, n};
    convert_coeff<W>(cv, in + p * is + c, part ? part + p * kt * n + c : nullptr, n, epi);
  });
}

template <class W, class Wo>
void BaseConverter::exact_convert(const Device& dev, const W* in, Wo* out, std::size_t n,
                                  std::size_t num_polys, std::size_t in_stride,
                                  std::size_t out_stride) const {
  using namespace rns_detail;
  VEIL_REQUIRE(conv_.k_from > 0, "BaseConverter::exact_convert: converter is default-constructed");
  const ConvView cv = make_view(dev, conv_, from_, to_, frac_.data(dev));
  const std::size_t kf = cv.kf, kt = cv.kt;
  const std::size_t is = in_stride ? in_stride : kf * n, os = out_stride ? out_stride : kt * n;
  const Modulus* to = cv.to;
  const u64* q_mod_p = conv_.q_mod_p.data(dev);
  Buffer<Wo> scratch = partial_scratch<Wo>(dev, kf, kt, n, num_polys);
  Wo* part = scratch.data();
  for_each_coefficient(dev, num_polys, n, VEIL_LAMBDA(std::size_t p, std::size_t c) {
    ExactEpi<Wo> epi{out + p * os + c, n, to, q_mod_p};
    convert_coeff<W, Wo>(cv, in + p * is + c, part ? part + p * kt * n + c : nullptr, n, epi);
  });
}

template void BaseConverter::fast_convert<u32>(const Device&, const u32*, u32*, std::size_t,
                                               std::size_t, std::size_t, std::size_t) const;
template void BaseConverter::fast_convert<u64>(const Device&, const u64*, u64*, std::size_t,
                                               std::size_t, std::size_t, std::size_t) const;
template void BaseConverter::exact_convert<u32, u32>(const Device&, const u32*, u32*, std::size_t,
                                                     std::size_t, std::size_t, std::size_t) const;
template void BaseConverter::exact_convert<u32, u64>(const Device&, const u32*, u64*, std::size_t,
                                                     std::size_t, std::size_t, std::size_t) const;
template void BaseConverter::exact_convert<u64, u64>(const Device&, const u64*, u64*, std::size_t,
                                                     std::size_t, std::size_t, std::size_t) const;

void BaseConverter::fast_convert(const Device& dev, ConstWordPtr in, WordPtr out, std::size_t n,
                                 std::size_t num_polys, std::size_t in_stride,
                                 std::size_t out_stride) const {
  VEIL_WITH_WORD(out.word_bits(), fast_convert<W>(dev, in.as<W>(), out.as<W>(), n, num_polys,
                                                  in_stride, out_stride));
}

void BaseConverter::exact_convert(const Device& dev, ConstWordPtr in, WordPtr out, std::size_t n,
                                  std::size_t num_polys, std::size_t in_stride,
                                  std::size_t out_stride) const {
  VEIL_WITH_WORD(out.word_bits(), exact_convert<W, W>(dev, in.as<W>(), out.as<W>(), n,
                                                      num_polys, in_stride, out_stride));
}

}  // namespace veil
