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

/// Stores r at out[j * n + t * part] (the register-blocked conversions; convert_block).
template <class W>
struct BlockStoreEpi {
  W* out;
  std::size_t n, part;
  VEIL_HD void operator()(u32 t, std::size_t j, W r) const { out[j * n + t * part] = r; }
};

/// One thread per kC coefficients n/kC apart (warps stay on consecutive words) and per group of
/// output limbs of each polynomial. The output limbs are split in `splits` groups (a power of
/// two) until about 2^16 threads run: with four coefficients per thread, a conversion of one or
/// two polynomials otherwise has too few warps to hide latency (12 % occupancy); each group
/// recomputes the inputs. Measured on the H100 at bootparam_40 (bench/NOTES.md): 2^16 threads
/// beat 2^15 (no split), 2^17 and 2^18. `epi` is the epilogue of polynomial 0, coefficient 0;
/// each thread moves its `out` by p * out_stride + c.
template <class W, u32 kMax, class Epi>
void convert_blocked_k(const Device& dev, const ConvView& cv, const W* mat, std::size_t stride,
                       const W* in, std::size_t in_stride, std::size_t out_stride, std::size_t n,
                       std::size_t num_polys, Epi epi0) {
  constexpr u32 kC = kBlockCoeffs<W, kMax>;
  const std::size_t part = n / kC;
  const int log_part = log2_exact(part);
  int log_splits = 0;
  while ((std::size_t(2) << log_splits) <= cv.kt &&
         (num_polys * part << log_splits) < (std::size_t(1) << 16)) {
    ++log_splits;
  }
  const std::size_t splits = std::size_t(1) << log_splits;
  const std::size_t per = (cv.kt + splits - 1) / splits, kt = cv.kt;
  epi0.part = part;
  for_each(dev, (num_polys * part) << log_splits, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t c = idx & (part - 1), rest = idx >> log_part;
    const std::size_t g = rest & (splits - 1), p = rest >> log_splits;
    const std::size_t j0 = g * per, j1 = j0 + per < kt ? j0 + per : kt;
    Epi epi = epi0;
    epi.out += p * out_stride + c;
    convert_block<W, kMax, kC>(cv, mat, stride, in + p * in_stride + c, part, n, j0, j1, epi);
  });
}

template <class W, class Epi>
void convert_blocked(const Device& dev, const ConvView& cv, const W* mat, std::size_t stride,
                     const W* in, std::size_t in_stride, std::size_t out_stride, std::size_t n,
                     std::size_t num_polys, Epi epi0) {
  if (cv.kf < 4) {  // the kf inputs and v
    convert_blocked_k<W, 4>(dev, cv, mat, stride, in, in_stride, out_stride, n, num_polys, epi0);
  } else if (cv.kf < 8) {
    convert_blocked_k<W, 8>(dev, cv, mat, stride, in, in_stride, out_stride, n, num_polys, epi0);
  } else if (cv.kf < 16) {
    convert_blocked_k<W, 16>(dev, cv, mat, stride, in, in_stride, out_stride, n, num_polys, epi0);
  } else {
    convert_blocked_k<W, 32>(dev, cv, mat, stride, in, in_stride, out_stride, n, num_polys, epi0);
  }
}
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
  if (const W* mat = padded_table<W>(dev, conv_, n)) {
    convert_blocked<W>(dev, cv, mat, conv_.stride, in, is, os, n, num_polys,
                       BlockStoreEpi<W>{out, n, 0});
    return;
  }
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
  if constexpr (std::is_same_v<W, Wo>) {
    if (const W* mat = padded_table<W>(dev, conv_, n)) {
      convert_blocked<W>(dev, cv, mat, conv_.stride, in, is, os, n, num_polys,
                         BlockStoreEpi<W>{out, n, 0});
      return;
    }
  }
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
