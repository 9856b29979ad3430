// BaseConverter hot paths (one for_each thread per coefficient of each polynomial).
#include "veil/rns/base_converter.h"

#include <string>
#include <utility>

#include "veil/ring/rns_poly_view.h"
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

/// The blocked conversion's threads (for_each_blocked): kC coefficients and a group of output
/// limbs each.
template <class W, u32 kMax>
void convert_blocked_k(const Device& dev, const ConvView& cv, const W* mat, std::size_t stride,
                       const RnsPolyView<const W>& in, const RnsPolyView<W>& out) {
  constexpr u32 kC = kBlockCoeffs<W, kMax>;
  for_each_blocked<kC>(dev, out.num_polys, out.n(), cv.kt,
                       VEIL_LAMBDA(u32 p, std::size_t c, std::size_t part, std::size_t j0,
                                   std::size_t j1) {
    auto store = [&](u32 t, std::size_t j, W r) { out.at(p, static_cast<u32>(j), c + t * part) = r; };
    convert_block<W, kMax, kC>(cv, mat, stride, in, p, c, part, j0, j1, store);
  });
}

template <class W>
void convert_blocked(const Device& dev, const ConvView& cv, const W* mat, std::size_t stride,
                     const RnsPolyView<const W>& in, const RnsPolyView<W>& out) {
  if (cv.kf < 4) {  // the kf inputs and v
    convert_blocked_k<W, 4>(dev, cv, mat, stride, in, out);
  } else if (cv.kf < 8) {
    convert_blocked_k<W, 8>(dev, cv, mat, stride, in, out);
  } else if (cv.kf < 16) {
    convert_blocked_k<W, 16>(dev, cv, mat, stride, in, out);
  } else {
    convert_blocked_k<W, 32>(dev, cv, mat, stride, in, out);
  }
}

/// Views of a conversion's input (over `from`) and output (over `to`): polynomials in_stride /
/// out_stride words apart (0: contiguous). Throws InvalidArgument if a stride is not a whole
/// number of limbs at least the base's.
template <class W, class Wo>
std::pair<RnsPolyView<const W>, RnsPolyView<Wo>> conversion_views(
    const Device& dev, const W* in, Wo* out, std::size_t n, std::size_t num_polys,
    const RnsBase& from, const RnsBase& to, std::size_t in_stride, std::size_t out_stride) {
  if (in_stride % n != 0 || out_stride % n != 0) {
    throw InvalidArgument("BaseConverter: in_stride/out_stride: expected multiples of n = " +
                          std::to_string(n));
  }
  return {make_view<const W>(dev, in, num_polys, from, n, in_stride / n),
          make_view<Wo>(dev, out, num_polys, to, n, out_stride / n)};
}
}  // namespace rns_detail

template <class W>
void BaseConverter::fast_convert(const Device& dev, const W* in, W* out, std::size_t n,
                                 std::size_t num_polys, std::size_t in_stride,
                                 std::size_t out_stride) const {
  using namespace rns_detail;
  VEIL_REQUIRE(conv_.k_from > 0, "BaseConverter::fast_convert: converter is default-constructed");
  const ConvView cv = rns_detail::make_view(dev, conv_, from_, to_);
  const std::size_t kf = cv.kf, kt = cv.kt;
  // Named copies, not structured bindings: lambdas may not capture bindings before C++20's
  // P1091, which clang 14 (the fuzz build) lacks.
  const auto views = conversion_views(dev, in, out, n, num_polys, from_, to_, in_stride,
                                      out_stride);
  const auto iv = views.first;
  const auto ov = views.second;
  if (const W* mat = padded_table<W>(dev, conv_, n)) {
    convert_blocked<W>(dev, cv, mat, conv_.stride, iv, ov);
    return;
  }
  Buffer<W> scratch = partial_scratch<W>(dev, kf, kt, n, num_polys);
  W* part = scratch.data();
  for_each_coefficient(dev, num_polys, n, VEIL_LAMBDA(std::size_t p, std::size_t c) {
    StoreEpi<W> epi{ov.limb(u32(p), 0) + c, n};
    convert_coeff<W>(cv, iv.limb(u32(p), 0) + c, part ? part + p * kt * n + c : nullptr, n, epi);
  });
}

template <class W, class Wo>
void BaseConverter::exact_convert(const Device& dev, const W* in, Wo* out, std::size_t n,
                                  std::size_t num_polys, std::size_t in_stride,
                                  std::size_t out_stride) const {
  using namespace rns_detail;
  VEIL_REQUIRE(conv_.k_from > 0, "BaseConverter::exact_convert: converter is default-constructed");
  const ConvView cv = rns_detail::make_view(dev, conv_, from_, to_, frac_.data(dev));
  const std::size_t kf = cv.kf, kt = cv.kt;
  // Named copies, not structured bindings: lambdas may not capture bindings before C++20's
  // P1091, which clang 14 (the fuzz build) lacks.
  const auto views = conversion_views(dev, in, out, n, num_polys, from_, to_, in_stride,
                                      out_stride);
  const auto iv = views.first;
  const auto ov = views.second;
  const Modulus* to = cv.to;
  const u64* q_mod_p = conv_.q_mod_p.data(dev);
  if constexpr (std::is_same_v<W, Wo>) {
    if (const W* mat = padded_table<W>(dev, conv_, n)) {
      convert_blocked<W>(dev, cv, mat, conv_.stride, iv, ov);
      return;
    }
  }
  Buffer<Wo> scratch = partial_scratch<Wo>(dev, kf, kt, n, num_polys);
  Wo* part = scratch.data();
  for_each_coefficient(dev, num_polys, n, VEIL_LAMBDA(std::size_t p, std::size_t c) {
    ExactEpi<Wo> epi{ov.limb(u32(p), 0) + c, n, to, q_mod_p};
    convert_coeff<W, Wo>(cv, iv.limb(u32(p), 0) + c, part ? part + p * kt * n + c : nullptr, n,
                         epi);
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
