#include "veil/rns/mod_down_ntt.h"

#include "veil/backend/launch.h"
#include "veil/core/error.h"
#include "veil/core/primes.h"
#include "veil/rns/conv_kernels.h"
#if defined(__CUDACC__)
#include "veil/ring/ntt_fused.cuh"
#endif

namespace veil {

template <class W>
Buffer<W> ModDownNtt::correction(const Device& dev, const NttTables& tables, W* drop_ntt,
                                 std::size_t n, std::size_t num_polys) const {
  VEIL_REQUIRE(keep_.size() > 0, "ModDownNtt: object is default-constructed");
  const std::size_t kk = keep_.size(), kt = target_.size();
  // 1. The dropped limbs in coefficient form.
  ntt_inverse(dev, drop_ntt, num_polys, drop_, tables);
  // 2. r = the centered lift of [x]_D to K (and t), by exact base conversion (HPS), so that
  //    (x - r) / D = round(x / D) for any number of dropped primes.
  Buffer<W> r(dev, num_polys * kt * n);
  conv_.exact_convert<W>(dev, drop_ntt, r.data(), n, num_polys);
  if (t_) {
    W* rr = r.data();
    const Modulus* tm = target_.moduli(dev);
    const u64* dk = d_mod_k_.data(dev);
    const u64 t = t_, dit = d_inv_mod_t_;
    for_each(dev, num_polys * n, VEIL_LAMBDA(std::size_t idx) {
      const std::size_t p = idx / n, c = idx % n;
      W* col = rr + p * kt * n + c;
      // delta = r + D * k with k = [-r * D^-1]_t centered: delta = 0 mod t, delta = x mod D.
      const Modulus tmod = tm[kk];
      const u64 rt = col[kk * n];
      const u64 k = mul_mod(neg_mod(rt, t), dit, tmod);
      const bool negative = k > (t >> 1);
      for (std::size_t l = 0; l < kk; ++l) {
        const Modulus m = tm[l];
        const u64 km = negative ? neg_mod(reduce_word(t - k, m), m.value) : reduce_word(k, m);
        col[l * n] = static_cast<W>(mul_add_mod(km, dk[l], u64(col[l * n]), m));
      }
    });
  }
  // 3. To the NTT domain over K.
  if (kt == kk) {  // no t limb between the polynomials: one batched transform
    ntt_forward(dev, r.data(), num_polys, keep_, tables);
  } else {
    for (std::size_t p = 0; p < num_polys; ++p) ntt_forward(dev, r.data() + p * kt * n, 1, keep_, tables);
  }
  return r;
}

namespace {
#if defined(__CUDACC__)
// The exact conversion drop -> keep as the producer of the fused forward NTT's column pass
// (ntt_fused.cuh): group g = polynomial g, output limb j = keep's limb j.
template <u32 kMax>
struct CorrectionSource {
  using W = u32;
  static constexpr u32 kCoeffs = 4, kTableWords = kMax;
  static constexpr int kMinBlocks = kMax <= 4 ? 2 : 1;
  struct State {
    W y[kCoeffs][kMax];
  };
  rns_detail::ConvView cv;  // with fractions: the v fold of the padded table's column kf
  const W* mat;             // [kt][stride]
  std::size_t stride, part;  // part = n / kCoeffs: a thread's coefficients are c0 + t * part
  u32 groups;
  RnsPolyView<const W> in;  // the dropped limbs in coefficient form, over drop
  RnsPolyView<W> out;       // the correction, over keep (its NTT ids)

  VEIL_HD u32 rows(u32) const { return static_cast<u32>(cv.kt); }
  VEIL_HD void load(u32 g, std::size_t c0, State& st) const {
    rns_detail::block_inputs<W, kMax, kCoeffs>(cv, in, g, 0, c0, part, groups, st.y);
  }
  VEIL_HD detail::PassTarget<W> target(u32 g, u32 j) const {
    return {out.ntt_ids[j], out.modulus(j), out.limb(g, j)};
  }
  VEIL_HD const W* table(u32, u32 j) const { return mat + j * stride; }
  VEIL_HD u32 table_words() const { return static_cast<u32>(stride); }
  VEIL_HD void produce(const State& st, u32, u32, const W* row, const Modulus& m,
                       W (&v)[kCoeffs]) const {
    rns_detail::block_row<W, kMax, kCoeffs>(st.y, row, groups, m, v);
  }
};

// The consumer of the fused row pass of ModDownNtt::apply: out = (x - r) * D^-1.
template <class W>
struct FinishInto {
  const W* in;
  W* out;
  std::size_t in_stride, out_stride, n;
  ModDownNtt::FinishView v;
  VEIL_HD void operator()(u32 p, u32 l, u32 off, W r) const {
    const std::size_t i = std::size_t(l) * n + off;
    out[p * out_stride + i] = mod_down_finish<W>(v, l, in[p * in_stride + i], r);
  }
};
#endif
}  // namespace

template <class W>
bool ModDownNtt::fused_applies(const Device& dev, int log_n) const {
  return dev.is_cuda() && t_ == 0 && drop_.size() < 16 && keep_.size() > 0 &&
         detail::fused_ntt_applies<W>(log_n);
}

template <class W>
Buffer<W> ModDownNtt::correction_first_pass(const Device& dev, const NttTables& tables,
                                            W* drop_ntt, std::size_t n,
                                            std::size_t num_polys) const {
  int log_n = 0;
  while ((std::size_t(1) << log_n) < n) ++log_n;
  if (!fused_applies<W>(dev, log_n)) {
    throw InvalidArgument("ModDownNtt::correction_first_pass: the fused path does not apply");
  }
#if defined(__CUDACC__)
  if constexpr (sizeof(W) == 4) {
    const std::size_t kt = target_.size();
    ntt_inverse(dev, drop_ntt, num_polys, drop_, tables);
    Buffer<W> r(dev, num_polys * kt * n);
    const rns_detail::ConvView cv = rns_detail::make_view(dev, conv_.tables(), drop_, target_,
                                                          conv_.fractions(dev));
    const W* mat = rns_detail::padded_table<W>(dev, conv_.tables(), n);
    VEIL_REQUIRE(mat != nullptr, "correction_first_pass: no padded table");
    const std::size_t stride = conv_.tables().stride;
    const W* tw = tables.twiddles_for<W>(dev);
    auto run = [&]<u32 kMax>() {
      const CorrectionSource<kMax> s{cv, mat, stride, n / 4, static_cast<u32>(stride / 4),
                                     make_view<const W>(dev, drop_ntt, num_polys, drop_, n),
                                     make_view<W>(dev, r.data(), num_polys, keep_, n)};
      return detail::ntt_forward_first_pass_from(dev, log_n, tw, s, static_cast<u32>(num_polys),
                                                 static_cast<u32>(kt));
    };
    bool ok;
    if (stride <= 4) {
      ok = run.template operator()<4>();
    } else if (stride <= 8) {
      ok = run.template operator()<8>();
    } else if (stride <= 12) {
      ok = run.template operator()<12>();
    } else {
      ok = run.template operator()<16>();
    }
    VEIL_REQUIRE(ok, "correction_first_pass: column pass");
    return r;
  }
#endif
  throw InvalidArgument("ModDownNtt::correction_first_pass: needs a CUDA build and 32-bit words");
}

template <class W>
void ModDownNtt::apply(const Device& dev, const NttTables& tables, const W* in, W* out,
                       std::size_t n, std::size_t num_polys) const {
  VEIL_REQUIRE(keep_.size() > 0, "ModDownNtt::apply: object is default-constructed");
  const std::size_t kk = keep_.size(), kd = drop_.size(), kt = target_.size();
  const std::size_t in_stride = (kk + kd) * n;
  const std::size_t out_stride = out == in ? in_stride : kk * n;
  Buffer<W> xd(dev, num_polys * kd * n);
  backend::copy_rows(dev, xd.data(), kd * n * sizeof(W), in + kk * n, in_stride * sizeof(W),
                     kd * n * sizeof(W), num_polys);
#if defined(__CUDACC__)
  if constexpr (sizeof(W) == 4) {
    if (fused_applies<W>(dev, tables.log_n())) {
    // The correction's conversion in its NTT's column pass, the last step in its row pass.
    Buffer<W> r = correction_first_pass<W>(dev, tables, xd.data(), n, num_polys);
    const RnsPolyView<W> v = make_view<W>(dev, r.data(), num_polys, keep_, n);
    const bool ok = detail::ntt_forward_last_pass_into(
        dev, v, tables.twiddles_for<W>(dev),
        FinishInto<W>{in, out, in_stride, out_stride, n, finish_view(dev)});
      VEIL_REQUIRE(ok, "ModDownNtt::apply: fused row pass");
      return;
    }
  }
#endif
  Buffer<W> r = correction<W>(dev, tables, xd.data(), n, num_polys);
  // 4. out = (x - delta) * D^-1.
  const W* rr = r.data();
  const FinishView v = finish_view(dev);
  for_each_limb(dev, num_polys, kk, n, VEIL_LAMBDA(std::size_t i, u32 l, u32 p32) {
    const std::size_t p = p32, rem = i - p * kk * n;
    out[p * out_stride + rem] = mod_down_finish<W>(v, l, in[p * in_stride + rem], rr[p * kt * n + rem]);
  });
}

template bool ModDownNtt::fused_applies<u32>(const Device&, int) const;
template bool ModDownNtt::fused_applies<u64>(const Device&, int) const;
template Buffer<u32> ModDownNtt::correction_first_pass<u32>(const Device&, const NttTables&, u32*,
                                                            std::size_t, std::size_t) const;
template Buffer<u64> ModDownNtt::correction_first_pass<u64>(const Device&, const NttTables&, u64*,
                                                            std::size_t, std::size_t) const;
template void ModDownNtt::apply<u32>(const Device&, const NttTables&, const u32*, u32*,
                                      std::size_t, std::size_t) const;
template Buffer<u32> ModDownNtt::correction<u32>(const Device&, const NttTables&, u32*, std::size_t,
                                                 std::size_t) const;
template Buffer<u64> ModDownNtt::correction<u64>(const Device&, const NttTables&, u64*, std::size_t,
                                                 std::size_t) const;
template void ModDownNtt::apply<u64>(const Device&, const NttTables&, const u64*, u64*,
                                      std::size_t, std::size_t) const;

void ModDownNtt::apply(const Device& dev, const NttTables& tables, ConstWordPtr in, WordPtr out,
                       std::size_t n, std::size_t num_polys) const {
  VEIL_WITH_WORD(out.word_bits(), apply<W>(dev, tables, in.as<W>(), out.as<W>(), n, num_polys));
}

}  // namespace veil
