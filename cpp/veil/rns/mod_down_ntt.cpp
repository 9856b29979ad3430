#include "veil/rns/mod_down_ntt.h"

#include <atomic>
#include <cstdlib>
#include <string>
#include <vector>

#include "veil/backend/launch.h"
#include "veil/core/env.h"
#include "veil/core/error.h"
#include "veil/core/primes.h"
#include "veil/ring/eltwise_simd.h"
#include "veil/rns/conv_cpu.h"
#include "veil/rns/conv_kernels.h"
#if defined(__CUDACC__)
#include "veil/ring/ntt_fused.cuh"
#endif

namespace veil {

namespace {
// BGV's correction in one pass: the exact conversion drop -> K ∪ {t} (register-blocked,
// conv_kernels.h: for_each_blocked) with delta = r + D k, k = [-r_t D^-1]_t centered (Phantom, Yang
// et al. 2024 §II-C, eq. 3) applied as each kept limb is produced: every thread converts its
// coefficients to t first (one more dot product per group of output limbs), then writes r_l + k D
// mod k_l for its kept limbs. The t limb itself is not stored (nothing reads it after the
// correction).
template <class W, u32 kMax>
void convert_t_corrected(const Device& dev, const rns_detail::ConvView& cv, const W* mat,
                         std::size_t stride, const RnsPolyView<const W>& in,
                         const RnsPolyView<W>& out, const u64* dk, u64 t, u64 dit) {
  constexpr u32 kC = rns_detail::kBlockCoeffs<W, kMax>;
  const std::size_t kk = cv.kt - 1;
  const u32 groups = static_cast<u32>((cv.kf + 4) / 4);  // the kf inputs and v
  rns_detail::for_each_blocked<kC>(
      dev, out.num_polys, out.n(), kk,
      VEIL_LAMBDA(u32 p, std::size_t c, std::size_t part, std::size_t j0, std::size_t j1) {
        W y[kC][kMax];
        rns_detail::block_inputs<W, kMax, kC>(cv, in, p, 0, c, part, groups, y);
        W rt[kC];
        const Modulus tmod = cv.to[kk];
        rns_detail::block_row<W, kMax, kC>(y, mat + kk * stride, groups, tmod, rt);
        u64 k[kC];
        bool negative[kC];
#pragma unroll
        for (u32 i = 0; i < kC; ++i) {
          k[i] = mul_mod(neg_mod(u64(rt[i]), t), dit, tmod);
          negative[i] = k[i] > (t >> 1);
        }
        for (std::size_t j = j0; j < j1; ++j) {
          const Modulus m = cv.to[j];
          W r[kC];
          rns_detail::block_row<W, kMax, kC>(y, mat + j * stride, groups, m, r);
#pragma unroll
          for (u32 i = 0; i < kC; ++i) {
            const u64 km =
                negative[i] ? neg_mod(reduce_word(t - k[i], m), m.value) : reduce_word(k[i], m);
            out.at(p, static_cast<u32>(j), c + i * part) =
                static_cast<W>(mul_add_mod(km, dk[j], u64(r[i]), m));
          }
        }
      });
}

// convert_t_corrected on the CPU with 64-bit words and AVX-512 (conv_cpu.h): per polynomial the
// input rows, the t limb r_t as one dot product, k per coefficient, then each kept limb's r_l
// as a dot product and r_l + k D mod k_l. The blocked kernel's words; false, touching nothing,
// where the vector kernel does not apply.
bool t_corrected_cpu(const rns_detail::ConvView& cv, const u64* mat, std::size_t stride,
                     const RnsPolyView<const u64>& in, const RnsPolyView<u64>& out,
                     const u64* dk, u64 t, u64 dit) {
  rns_detail::ConversionRows rows(cv, out.n());
  if (!rows.applies()) return false;
  const std::size_t n = out.n(), kk = cv.kt - 1;
  const Modulus tmod = cv.to[kk];
  std::vector<u64> k(n);
  for (u32 p = 0; p < out.num_polys; ++p) {
    rows.load(in, p);
    cpu_row_chunks(1, n, [&](std::size_t, std::size_t c0, std::size_t c1) {
      rows.dot(k.data(), mat + kk * stride, tmod, c0, c1);  // r_t, then k = [-r_t D^-1]_t
      for (std::size_t c = c0; c < c1; ++c) k[c] = mul_mod(neg_mod(k[c], t), dit, tmod);
    });
    cpu_row_chunks(kk, n, [&](std::size_t j, std::size_t c0, std::size_t c1) {
      const Modulus m = cv.to[j];
      u64* o = out.limb(p, static_cast<u32>(j));
      rows.dot(o, mat + j * stride, m, c0, c1);
      if (detail::bgv_correct_simd(o + c0, k.data() + c0, c1 - c0, t, m, dk[j])) return;
      for (std::size_t c = c0; c < c1; ++c) {
        const u64 km = k[c] > (t >> 1) ? neg_mod(reduce_word(t - k[c], m), m.value)
                                       : reduce_word(k[c], m);
        o[c] = mul_add_mod(km, dk[j], o[c], m);
      }
    });
  }
  return true;
}

// convert_t_corrected on the CPU for one dropped prime (BGV's modulus switching; key switching
// and encryption with one special prime, as SEAL's chains have them) at any word size and
// without vector instructions: y and v once per coefficient (convert_one_prime_cpu's), r_t and
// k, then each kept limb's r_l + k D mod k_l over consecutive coefficients. Exact, so the
// blocked kernel's words (whose register blocking, built for the GPU, ran its input stage
// coefficient by coefficient on the CPU: BGV modulus switching at 2x SEAL's time on a processor
// without AVX-512).
template <class W>
void t_corrected_one_prime_cpu(const rns_detail::ConvView& cv, const W* mat, std::size_t stride,
                               const RnsPolyView<const W>& in, const RnsPolyView<W>& out,
                               const u64* dk, u64 t, u64 dit) {
  const std::size_t n = out.n(), kk = cv.kt - 1;
  const Modulus tmod = cv.to[kk];
  const bool scaled = cv.scale != nullptr && cv.scale[0] != 1;
  std::vector<W> y(n);
  std::vector<std::uint8_t> v(n, 0);
  std::vector<u64> k(n);
  for (u32 p = 0; p < out.num_polys; ++p) {
    const W* x = in.limb(p, 0);
    cpu_row_chunks(1, n, [&](std::size_t, std::size_t i0, std::size_t i1) {
      const u64 wt = mat[kk * stride], ct = cv.frac ? mat[kk * stride + 1] : 0;
      for (std::size_t i = i0; i < i1; ++i) {
        u64 vi;
        rns_detail::one_prime_input<W>(cv, x[i], scaled, y[i], vi);
        v[i] = static_cast<std::uint8_t>(vi);
        u64 rt = mul_mod(u64(y[i]), wt, tmod);
        if (v[i]) rt = add_mod(rt, ct, t);
        k[i] = mul_mod(neg_mod(rt, t), dit, tmod);
      }
    });
    cpu_row_chunks(kk, n, [&](std::size_t j, std::size_t i0, std::size_t i1) {
      const Modulus m = cv.to[j];
      const u64 w = mat[j * stride], c = cv.frac ? mat[j * stride + 1] : 0;
      W* o = out.limb(p, static_cast<u32>(j));
      for (std::size_t i = i0; i < i1; ++i) {
        u64 r = mul_mod(u64(y[i]), w, m);
        if (v[i]) r = add_mod(r, c, m.value);
        const u64 km = k[i] > (t >> 1) ? neg_mod(reduce_word(t - k[i], m), m.value)
                                       : reduce_word(k[i], m);
        o[i] = static_cast<W>(mul_add_mod(km, dk[j], r, m));
      }
    });
  }
}
}  // namespace

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
  const W* mat = rns_detail::padded_table<W>(dev, conv_.tables(), n);
  if (t_ == 0) {
    conv_.exact_convert<W>(dev, drop_ntt, r.data(), n, num_polys);
  } else {
    //    BGV: delta = r + D k (k = [-r_t D^-1]_t centered), so delta = x mod D and 0 mod t, in
    //    the conversion's own pass (the register-blocked tables exist below 32 dropped primes).
    VEIL_REQUIRE(mat != nullptr, "ModDownNtt: BGV needs the register-blocked conversion tables");
    const rns_detail::ConvView cv = rns_detail::make_view(dev, conv_.tables(), drop_, target_,
                                                          conv_.fractions(dev));
    const RnsPolyView<const W> in = make_view<const W>(dev, drop_ntt, num_polys, drop_, n);
    const RnsPolyView<W> out = make_view<W>(dev, r.data(), num_polys, target_, n);
    const std::size_t stride = conv_.tables().stride;
    const u64* dk = d_mod_k_.data(dev);
    bool done = false;
    if constexpr (sizeof(W) == 8) {
      done = dev.is_cpu() && t_corrected_cpu(cv, mat, stride, in, out, dk, t_, d_inv_mod_t_);
    }
    if (done) {
      // the CPU's vector path took it
    } else if (dev.is_cpu() && cv.kf == 1 && t_corrected_one_prime_cpu_on()) {
      t_corrected_one_prime_cpu<W>(cv, mat, stride, in, out, dk, t_, d_inv_mod_t_);
    } else if (cv.kf < 4) {
      convert_t_corrected<W, 4>(dev, cv, mat, stride, in, out, dk, t_, d_inv_mod_t_);
    } else if (cv.kf < 8) {
      convert_t_corrected<W, 8>(dev, cv, mat, stride, in, out, dk, t_, d_inv_mod_t_);
    } else if (cv.kf < 16) {
      convert_t_corrected<W, 16>(dev, cv, mat, stride, in, out, dk, t_, d_inv_mod_t_);
    } else {
      convert_t_corrected<W, 32>(dev, cv, mat, stride, in, out, dk, t_, d_inv_mod_t_);
    }
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

// The narrow producer's inputs (ModDownNtt::correction_first_pass): y4[p][c] = the conversion
// inputs y_i of coefficient c of polynomial p and its v, zero-padded to four words (block_inputs,
// so the words the blocked pass would hold in registers).
template <class W>
void narrow_inputs(const Device& dev, const rns_detail::ConvView& cv,
                   const RnsPolyView<const W>& in, W* y4, std::size_t n, std::size_t num_polys) {
  for_each(dev, num_polys * n, VEIL_LAMBDA(std::size_t i) {
    W y[1][4];
    rns_detail::block_inputs<W, 4, 1>(cv, in, static_cast<u32>(i / n), 0, i % n, 0, 1, y);
    for (int k = 0; k < 4; ++k) y4[4 * i + k] = y[0][k];
  });
}

// The consumer of the fused row pass of ModDownNtt::apply: out = (x - r) * D^-1, its loads of x
// issued before the first store (last_pass_into_block: out may be in).
template <class W>
struct FinishInto {
  const W* in;
  W* out;
  std::size_t in_stride, out_stride, n;
  ModDownNtt::FinishView v;
  VEIL_HD W load(u32 p, u32 l, u32 off) const {
    return in[p * in_stride + std::size_t(l) * n + off];
  }
  VEIL_HD void finish(u32 p, u32 l, u32 off, W x, W r) const {
    out[p * out_stride + std::size_t(l) * n + off] = mod_down_finish<W>(v, l, x, r);
  }
};
#endif
}  // namespace

namespace {
std::atomic<std::size_t>& max_drop_setting() {
  static std::atomic<std::size_t> v{static_cast<std::size_t>(env_integer(
      "VEIL_FUSED_MODDOWN_MAX_DROP", 0, 15, static_cast<long long>(kFusedModDownMaxDrop)))};
  return v;
}
}  // namespace

std::size_t fused_mod_down_max_drop() { return max_drop_setting().load(); }

namespace {
std::atomic<bool>& narrow_setting() {
  static std::atomic<bool> v{env_integer("VEIL_FUSED_MODDOWN_NARROW", 0, 1, 1) != 0};
  return v;
}
}  // namespace

bool fused_mod_down_narrow() { return narrow_setting().load(); }

namespace {
std::atomic<bool>& one_prime_setting() {
  static std::atomic<bool> on{true};
  return on;
}
}  // namespace

bool t_corrected_one_prime_cpu_on() { return one_prime_setting().load(); }
void set_t_corrected_one_prime_cpu(bool on) { one_prime_setting().store(on); }
void set_fused_mod_down_narrow(bool on) { narrow_setting().store(on); }

void set_fused_mod_down_max_drop(std::size_t drops) {
  if (drops > 15) {
    throw InvalidArgument("drops: expected 0..15 (the fused column pass takes at most 15), got " +
                          std::to_string(drops));
  }
  max_drop_setting().store(drops);
}

template <class W>
bool ModDownNtt::fused_applies(const Device& dev, int log_n) const {
  return dev.is_cuda() && t_ == 0 && drop_.size() <= fused_mod_down_max_drop() &&
         keep_.size() > 0 && detail::fused_ntt_applies<W>(log_n);
}

template <class W>
Buffer<W> ModDownNtt::correction_first_pass(const Device& dev, const NttTables& tables,
                                            W* drop_ntt, std::size_t n,
                                            std::size_t num_polys) const {
  const int log_n = log2_exact(n);
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
    if (stride == 4 && fused_mod_down_narrow()) {
      // The narrow producer (rows of four words: at most 3 dropped primes and v): y_i and v of
      // each coefficient once (block_inputs, the blocked pass's own words), then the r16 column
      // pass converts as it loads.
      Buffer<W> in4(dev, num_polys * n * 4);
      W* y4 = in4.data();
      narrow_inputs<W>(dev, cv, make_view<const W>(dev, drop_ntt, num_polys, drop_, n), y4, n,
                       num_polys);
      const bool ok = detail::ntt_forward_first_pass_from_inputs(
          dev, make_view<W>(dev, r.data(), num_polys, keep_, n), tw, y4, mat);
      VEIL_REQUIRE(ok, "correction_first_pass: narrow column pass");
      return r;
    }
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
  (void)tables, (void)drop_ntt, (void)num_polys;  // read by the CUDA path only
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
