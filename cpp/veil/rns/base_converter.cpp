// BaseConverter hot paths (one for_each thread per coefficient of each polynomial).
#include "veil/rns/base_converter.h"

#include <atomic>
#include <cstring>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "veil/core/env.h"
#include "veil/ring/eltwise_simd.h"
#include "veil/ring/ntt_simd.h"
#include "veil/ring/rns_poly_view.h"
#include "veil/rns/conv_cpu.h"
#include "veil/rns/conv_kernels.h"
#include "veil/rns/conv_tc.h"

namespace veil {

namespace {
std::atomic<int>& conversion_kernel_setting() {
  static std::atomic<int> kernel{static_cast<int>(env_integer("VEIL_CONV_KERNEL", 0, 3, 3))};
  return kernel;
}
std::atomic<bool>& full_rows_setting() {
  static std::atomic<bool> on{env_integer("VEIL_CONV_FULL_ROWS", 0, 1, 1) == 1};
  return on;
}
std::atomic<bool>& montgomery_setting() {
  static std::atomic<bool> on{env_integer("VEIL_CONV_MONT", 0, 1, 1) == 1};
  return on;
}
std::atomic<int>& log_threads_setting() {
  static std::atomic<int> v{static_cast<int>(env_integer("VEIL_CONV_LOG_THREADS", 15, 20, 16))};
  return v;
}
}  // namespace

int conversion_log_threads() { return log_threads_setting().load(); }
void set_conversion_log_threads(int log_threads) {
  if (log_threads < 15 || log_threads > 20) {
    throw InvalidArgument("log_threads: expected 15..20, got " + std::to_string(log_threads));
  }
  log_threads_setting().store(log_threads);
}

bool conversion_montgomery() { return montgomery_setting().load(); }
void set_conversion_montgomery(bool on) { montgomery_setting().store(on); }

bool conversion_full_rows() { return full_rows_setting().load(); }
void set_conversion_full_rows(bool on) { full_rows_setting().store(on); }

namespace {
std::atomic<int>& tc_tiles_setting() {
  static std::atomic<int> tiles{static_cast<int>(env_integer("VEIL_TC_TILES", 1, 4, 1))};
  return tiles;
}
}  // namespace

int conversion_tc_tiles() { return tc_tiles_setting().load(); }
void set_conversion_tc_tiles(int tiles) {
  if (tiles != 1 && tiles != 2 && tiles != 4) {
    throw InvalidArgument("tiles: expected 1, 2 or 4, got " + std::to_string(tiles));
  }
  tc_tiles_setting().store(tiles);
}

int conversion_kernel() { return conversion_kernel_setting().load(); }
void set_conversion_kernel(int kernel) {
  if (kernel < 0 || kernel > 3) {
    throw InvalidArgument("kernel: expected 0, 1, 2 or 3, got " + std::to_string(kernel));
  }
  conversion_kernel_setting().store(kernel);
}

namespace rns_detail {
/// Exact conversion epilogue: out_j = r_j - v * Q mod p_j (HPS 2019, §2.2 / Al Badawi et al. 2021
/// §II-D.2).
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

inline constexpr unsigned kConvThreads = 256;

#if defined(__CUDACC__)
// convert_blocked_k on the GPU with the table rows and the target moduli staged in shared memory
// (ModUp's mod_up_smem_kernel does the same: from global memory the row loads mostly missed L1
// and waited on L2). for_each_blocked's threads: blockIdx.y = (polynomial, group of output
// limbs), blockIdx.x * 256 + threadIdx.x = the first of the thread's kC coefficients.
// kFull: every row has kMax / 4 groups (convert_block), so each output limb is one branch-free
// block and two of them are interleaved (unrolled by two).
// kMont (32-bit words): `mat` is the table in Montgomery form (FastConvTables::mat_mont32) and
// each row is block_row_mont's lazy sum; the target moduli are staged as their Mont32 constants.
template <class W, u32 kMax, u32 kC, bool kFull, bool kMont>
__global__ void __launch_bounds__(kConvThreads)
    convert_smem_kernel(const ConvView cv, const W* mat, u32 stride, const RnsPolyView<const W> in,
                        const RnsPolyView<W> out, u32 part, u32 log_splits, u32 per) {
  extern __shared__ __align__(16) unsigned char smem[];
  const u32 kt = static_cast<u32>(cv.kt);
  W* smat = reinterpret_cast<W*>(smem);  // [kt][stride], 16-byte rows (stride % 4 == 0)
  using M = std::conditional_t<kMont, Mont32, Modulus>;  // the target moduli as staged
  M* sto = reinterpret_cast<M*>(smem + std::size_t(kt) * stride * sizeof(W));
  for (u32 i = threadIdx.x; i < kt * stride; i += blockDim.x) smat[i] = mat[i];
  for (u32 i = threadIdx.x; i < kt; i += blockDim.x) sto[i] = staged_modulus<M>(cv.to[i]);
  __syncthreads();
  const u32 g = blockIdx.y & ((1u << log_splits) - 1), p = blockIdx.y >> log_splits;
  const u32 c = blockIdx.x * kConvThreads + threadIdx.x;
  const u32 j0 = g * per, j1 = j0 + per < kt ? j0 + per : kt;
  auto store = [&](u32 t, std::size_t j, W r) {
    out.at(p, static_cast<u32>(j), c + std::size_t(t) * part) = r;
  };
  convert_block<W, kMax, kC, decltype(store), kFull>(cv, smat, stride, in, p, c, part, j0, j1,
                                                     store, sto);
}
#endif

/// convert_blocked_k on the GPU through convert_smem_kernel with kC coefficients per thread and
/// the output limbs split until about 2^log_threads threads run; false (nothing launched) where
/// it does not apply (the tables beyond the 48 KiB a block gets without opting in, or n / kC not
/// a multiple of 256). `mont` (32-bit words, or null): the table in Montgomery form, taken with
/// the lazy rows when conversion_montgomery() is on.
template <class W, u32 kMax, u32 kC>
bool convert_smem(const Device& dev, const ConvView& cv, const W* mat, std::size_t stride,
                  const RnsPolyView<const W>& in, const RnsPolyView<W>& out, int log_threads,
                  const W* mont) {
  const std::size_t n = out.n(), part = n / kC, kt = cv.kt;
  const std::size_t bytes = kt * stride * sizeof(W) + kt * sizeof(Modulus);
  const int log_splits = blocked_log_splits(out.num_polys, part, kt, log_threads);
  const std::size_t splits = std::size_t(1) << log_splits, per = (kt + splits - 1) / splits;
  if (part % kConvThreads != 0 || bytes > 48 * 1024 || out.num_polys * splits > 65535) {
    return false;
  }
#if defined(__CUDACC__)
  backend::set_current(dev);
  const dim3 grid(unsigned(part / kConvThreads), unsigned(out.num_polys * splits), 1);
  // (The lazy rows need every input y_i < q_i: block_inputs' Shoup product reduces any word.)
  const bool lazy = mont != nullptr && cv.scale != nullptr && conversion_montgomery();
  auto launch = [&](auto full, auto lazy_rows) {  // std::bool_constant: kFull, kMont
    convert_smem_kernel<W, kMax, kC, decltype(full)::value, decltype(lazy_rows)::value>
        <<<grid, kConvThreads, bytes, backend::stream(dev)>>>(
            cv, lazy_rows ? mont : mat, static_cast<u32>(stride), in, out,
            static_cast<u32>(part), static_cast<u32>(log_splits), static_cast<u32>(per));
  };
  const bool full = conversion_full_rows() && (cv.kf + 4) / 4 == kMax / 4;
  with_row_forms<W>(full, lazy, launch);
  backend::check_last_launch("BaseConverter: blocked conversion");
  return true;
#else
  (void)dev, (void)cv, (void)mat, (void)in, (void)per, (void)mont;
  throw_cuda_not_in_this_unit(__FILE__);
#endif
}

#if defined(__CUDACC__)
/// The conversion's rows for the tensor-core kernel (tc_convert_kernel): blockIdx.y = polynomial
/// y / chunks and its output rows [64 (y % chunks), + 64).
struct ConvTcRows {
  ConvView cv;
  const u32* mont;  // [kt][stride], Montgomery form
  u32 stride_, chunks;
  RnsPolyView<const u32> in;
  RnsPolyView<u32> out;
  __device__ ConvView view(u32) const { return cv; }
  __device__ u32 poly(u32 y) const { return y / chunks; }
  __device__ u32 first(u32) const { return 0; }
  __device__ u32 row0(u32 y) const { return 64 * (y % chunks); }
  __device__ u32 rows(u32 y) const {
    const u32 kt = static_cast<u32>(cv.kt);
    return kt - row0(y) < 64 ? kt - row0(y) : 64;
  }
  __device__ u32 stride() const { return stride_; }
  __device__ const u32* table_row(u32 y, u32 r) const {
    return mont + std::size_t(row0(y) + r) * stride_;
  }
  __device__ const Modulus& modulus(u32 y, u32 r) const { return cv.to[row0(y) + r]; }
  __device__ u32* out_row(u32 y, u32 r) const { return out.limb(poly(y), row0(y) + r); }
};
#endif

/// convert_blocked_k on the tensor cores (tc_convert_kernel; set_conversion_kernel(3)); false
/// (nothing launched) where it does not apply: 64-bit words, no Montgomery table (or the lazy rows
/// off), rows over 16 words, inputs not reduced (no scale), N not a multiple of 128.
template <class W, u32 kMax>
bool convert_tc(const Device& dev, const ConvView& cv, std::size_t stride,
                const RnsPolyView<const W>& in, const RnsPolyView<W>& out, const W* mont) {
  if constexpr (sizeof(W) != 4 || kMax > 16) {
    (void)dev, (void)cv, (void)stride, (void)in, (void)out, (void)mont;
    return false;
  } else {
    const std::size_t n = out.n(), chunks = (cv.kt + 63) / 64;
    if (mont == nullptr || cv.scale == nullptr || !conversion_montgomery() || stride > 16 ||
        n % 128 != 0 || out.num_polys * chunks > 65535) {
      return false;
    }
#if defined(__CUDACC__)
    // 8-byte stores (the limbs are n % 128 == 0 words apart, so the first limb decides)
    if ((reinterpret_cast<std::uintptr_t>(out.limb(0, 0)) & 7) != 0 || !tc_supported(dev)) {
      return false;
    }
    backend::set_current(dev);
    const ConvTcRows rows{cv, mont, static_cast<u32>(stride), static_cast<u32>(chunks), in, out};
    with_tc_tiles(n, [&](auto tiles) {
      constexpr u32 kTiles = decltype(tiles)::value;
      const dim3 grid(unsigned(n / (kTiles * kTcCoeffs)), unsigned(out.num_polys * chunks), 1);
      tc_convert_kernel<kMax, ConvTcRows, kTiles>
          <<<grid, kTcThreads, 0, backend::stream(dev)>>>(rows, static_cast<u32>(n));
    });
    backend::check_last_launch("BaseConverter: tensor-core conversion");
    return true;
#else
    (void)dev, (void)in;
    throw_cuda_not_in_this_unit(__FILE__);
#endif
  }
}

/// The blocked conversion's threads (for_each_blocked): kC coefficients and a group of output
/// limbs each. On the GPU, conversion_kernel() 1 runs the same threads through
/// convert_smem_kernel (tables in shared memory), and 2 runs it with half the coefficients per
/// thread and twice the threads (the same words each way).
template <class W, u32 kMax>
void convert_blocked_k(const Device& dev, const ConvView& cv, const W* mat, std::size_t stride,
                       const RnsPolyView<const W>& in, const RnsPolyView<W>& out,
                       const W* mont) {
  constexpr u32 kC = kBlockCoeffs<W, kMax>;
  if (dev.is_cuda()) {
    constexpr u32 kHalf = kC > 1 ? kC / 2 : 1;
    const int kernel = conversion_kernel();
    if (kernel == 3 && convert_tc<W, kMax>(dev, cv, stride, in, out, mont)) return;
    if (kernel == 1 && convert_smem<W, kMax, kC>(dev, cv, mat, stride, in, out, 16, mont)) return;
    if (kernel >= 2 && convert_smem<W, kMax, kHalf>(dev, cv, mat, stride, in, out,
                                                    conversion_log_threads(), mont)) {
      return;
    }
  }
  for_each_blocked<kC>(dev, out.num_polys, out.n(), cv.kt,
                       VEIL_LAMBDA(u32 p, std::size_t c, std::size_t part, std::size_t j0,
                                   std::size_t j1) {
    auto store = [&](u32 t, std::size_t j, W r) { out.at(p, static_cast<u32>(j), c + t * part) = r; };
    convert_block<W, kMax, kC>(cv, mat, stride, in, p, c, part, j0, j1, store, cv.to);
  });
}

/// A conversion from one prime q on the CPU (ModDown and rescaling by one prime, as SEAL's
/// chains have them): y = x' * scale mod q and, with fractions (exact conversion, HPS 2019
/// §2.2), v = round(y / q) through the same fixed-point sum as block_inputs, once per
/// coefficient; then r_j = y * mat[j][0] + v * mat[j][1] mod p_j limb by limb over consecutive
/// coefficients. With mat[j][0] = 1 ((Q/q) mod p_j for Q = q) the product is y mod p_j: a copy
/// when q <= p_j. Exact, so the blocked kernel's words.
template <class W>
void convert_one_prime_cpu(const ConvView& cv, const W* mat, std::size_t stride,
                           const RnsPolyView<const W>& in, const RnsPolyView<W>& out) {
  const std::size_t n = out.n();
  const Modulus& from = cv.from[0];
  std::vector<W> y(n);
  std::vector<u64> v(cv.frac ? n : 0);
  const bool scaled = cv.scale != nullptr && cv.scale[0] != 1;
  for (u32 p = 0; p < out.num_polys; ++p) {
    const W* x = in.limb(p, 0);
    cpu_row_chunks(1, n, [&](std::size_t, std::size_t i0, std::size_t i1) {
      for (std::size_t i = i0; i < i1; ++i) {
        u64 vi;
        one_prime_input<W>(cv, x[i], scaled, y[i], vi);
        if (cv.frac) v[i] = vi;
      }
    });
    cpu_row_chunks(cv.kt, n, [&](std::size_t j, std::size_t i0, std::size_t i1) {
      const Modulus& m = cv.to[j];
      const W mv = static_cast<W>(m.value), w = mat[j * stride];
      W* o = out.limb(p, static_cast<u32>(j)) + i0;
      const W* yc = y.data() + i0;
      const std::size_t len = i1 - i0;
      const W c = cv.frac ? mat[j * stride + 1] : W(0);  // + v (-Q mod p_j), v in {0, 1}
      if constexpr (sizeof(W) == 8) {
        if (w == 1 && detail::reduce_rows_simd(o, yc, cv.frac ? v.data() + i0 : nullptr, len,
                                               from.value, m, c)) {
          return;
        }
      }
      if (w != 1) {
        for (std::size_t i = 0; i < len; ++i) o[i] = mul_mod(yc[i], w, m);
      } else if (from.value <= m.value) {
        std::memcpy(o, yc, len * sizeof(W));
      } else if (from.value <= 2 * m.value) {
        for (std::size_t i = 0; i < len; ++i) o[i] = yc[i] >= mv ? yc[i] - mv : yc[i];
      } else {
        for (std::size_t i = 0; i < len; ++i) o[i] = static_cast<W>(reduce_word(yc[i], m));
      }
      if (cv.frac) {
        for (std::size_t i = 0; i < len; ++i) o[i] = v[i0 + i] ? add_mod(o[i], c, mv) : o[i];
      }
    });
  }
}

/// A conversion from a few primes (2..14) on the CPU with AVX-512 (ModDown of P and q_l together
/// in the fused relinearize-rescale, BFV's conversions): the input rows once per polynomial, then
/// each output limb as exact 128-bit sums (conv_cpu.h). The blocked kernel's words. 32-bit words
/// are widened into the rows and each output chunk is narrowed from 64-bit scratch (its values
/// are below the output prime). False, touching nothing, where the vector kernel does not apply.
template <class W>
bool convert_few_primes_cpu(const ConvView& cv, const W* mat, std::size_t stride,
                            const RnsPolyView<const W>& in, const RnsPolyView<W>& out) {
  ConversionRows rows(cv, out.n());
  if (!rows.applies()) return false;
  const std::size_t terms = rows.terms();
  for (u32 p = 0; p < out.num_polys; ++p) {
    rows.load(in, p);
    cpu_row_chunks(cv.kt, out.n(), [&](std::size_t j, std::size_t c0, std::size_t c1) {
      W* o = out.limb(p, static_cast<u32>(j));
      if constexpr (sizeof(W) == 8) {
        rows.dot(o, mat + j * stride, cv.to[j], c0, c1);
      } else {
        u64 w[detail::kDotTermsSmall];  // terms <= 64 (applies())
        for (std::size_t t = 0; t < terms; ++t) w[t] = mat[j * stride + t];
        alignas(64) u64 wide[4096];  // cpu_row_chunks' chunks: at most 4096 coefficients
        rows.dot_chunk(wide, w, cv.to[j], c0, c1 - c0);
        for (std::size_t c = c0; c < c1; ++c) o[c] = static_cast<W>(wide[c - c0]);
      }
    });
  }
  return true;
}

template <class W>
void convert_blocked(const Device& dev, const ConvView& cv, const W* mat, std::size_t stride,
                     const RnsPolyView<const W>& in, const RnsPolyView<W>& out,
                     const W* mont = nullptr) {
  if (dev.is_cpu() && cv.kf == 1) {
    convert_one_prime_cpu<W>(cv, mat, stride, in, out);
    return;
  }
  if (dev.is_cpu() && convert_few_primes_cpu<W>(cv, mat, stride, in, out)) return;
  if (cv.kf < 4) {  // the kf inputs and v
    convert_blocked_k<W, 4>(dev, cv, mat, stride, in, out, mont);
  } else if (cv.kf < 8) {
    convert_blocked_k<W, 8>(dev, cv, mat, stride, in, out, mont);
  } else if (cv.kf < 16) {
    convert_blocked_k<W, 16>(dev, cv, mat, stride, in, out, mont);
  } else {
    convert_blocked_k<W, 32>(dev, cv, mat, stride, in, out, mont);
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
    convert_blocked<W>(dev, cv, mat, conv_.stride, iv, ov, mont_table<W>(dev, conv_, n));
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
      convert_blocked<W>(dev, cv, mat, conv_.stride, iv, ov, mont_table<W>(dev, conv_, n));
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

template <class W>
PendingAny BaseConverter::exact_convert_checked(const Device& dev, const W* in, u64* out,
                                                std::size_t n, u64 factor,
                                                const NoiseTest& test) const {
  using namespace rns_detail;
  VEIL_REQUIRE(conv_.k_from > 0,
               "BaseConverter::exact_convert_checked: converter is default-constructed");
  for (std::size_t j = 0; j < to_.size(); ++j) {
    if (factor >= to_[j].value) {
      throw InvalidArgument("factor: " + std::to_string(factor) + " is not below the prime " +
                            std::to_string(to_[j].value) + " of the target base");
    }
  }
  if (test.on() && test.limbs != from_.size()) {
    throw InvalidArgument("test: the noise test is over " + std::to_string(test.limbs) +
                          " limbs, the conversion reads " + std::to_string(from_.size()));
  }
  const ConvView cv = rns_detail::make_view(dev, conv_, from_, to_, frac_.data(dev));
  const std::size_t kt = cv.kt;
  const Modulus* to = cv.to;
  const u64* q_mod_p = conv_.q_mod_p.data(dev);
  if (dev.is_cuda() && kt == 1) {  // NoiseTest::kLanes threads per coefficient
    auto finish = VEIL_LAMBDA(std::size_t c, u64 r, u64 v_hi, u64 v_lo) {
      ExactEpi<u64> epi{out + c, n, to, q_mod_p};
      epi(0, r, v_hi, v_lo);
      if (factor != 1) out[c] = mul_mod(out[c], factor, to[0]);
    };
    return convert_to_one_lanes(dev, cv, in, n, test, finish,
                                "BaseConverter::exact_convert_checked",
                                test.on() && test.factor_is(conv_.scale.host()));
  }
  // The CPU (and several target primes): the test queued first, then exact_convert (the CPU's
  // vector kernels; a fused scalar pass measured slower there) and the factor.
  PendingAny hit = test.on() ? any_of_async(dev, n, VEIL_LAMBDA(std::size_t c) {
    return test.exceeds(in, n, c);
  })
                             : PendingAny(false);
  exact_convert<W, u64>(dev, in, out, n, 1);
  if (factor != 1) {
    for_each(dev, kt * n, VEIL_LAMBDA(std::size_t i) {
      out[i] = mul_mod(out[i], factor, to[i / n]);
    });
  }
  return hit;
}

template PendingAny BaseConverter::exact_convert_checked<u32>(const Device&, const u32*, u64*,
                                                              std::size_t, u64,
                                                              const NoiseTest&) const;
template PendingAny BaseConverter::exact_convert_checked<u64>(const Device&, const u64*, u64*,
                                                              std::size_t, u64,
                                                              const NoiseTest&) const;

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
