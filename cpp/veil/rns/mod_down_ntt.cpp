#include "veil/rns/mod_down_ntt.h"

#include "veil/backend/launch.h"
#include "veil/core/error.h"
#include "veil/core/primes.h"

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
  Buffer<W> r = correction<W>(dev, tables, xd.data(), n, num_polys);
  // 4. out = (x - delta) * D^-1.
  const W* rr = r.data();
  const FinishView v = finish_view(dev);
  for_each_limb(dev, num_polys, kk, n, VEIL_LAMBDA(std::size_t i, u32 l, u32 p32) {
    const std::size_t p = p32, rem = i - p * kk * n;
    out[p * out_stride + rem] = mod_down_finish<W>(v, l, in[p * in_stride + rem], rr[p * kt * n + rem]);
  });
}

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
