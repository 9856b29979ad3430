#include "veil/rlwe/keyswitch.h"

#include <atomic>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "veil/backend/launch.h"
#include "veil/core/env.h"
#include "veil/core/error.h"
#include "veil/core/primes.h"
#include "veil/ring/compact_uniform.h"
#include "veil/ring/eltwise_simd.h"
#include "veil/ring/ntt.h"
#include "veil/ring/ntt_simd.h"
#include "veil/ring/poly_ops.h"
#include "veil/ring/rns_poly_view.h"
#include "veil/ring/sampler.h"
#include "veil/rns/base_converter.h"
#include "veil/rns/conv_kernels.h"
#include "veil/rns/conv_tc.h"
#include "veil/rns/mod_down_ntt.h"

namespace veil {

namespace {
std::atomic<bool>& batched_loads_setting() {
  static std::atomic<bool> on{env_flag_on("VEIL_KS_BATCHED_LOADS")};
  return on;
}
}  // namespace

bool key_switch_batched_loads() { return batched_loads_setting().load(); }
void set_key_switch_batched_loads(bool on) { batched_loads_setting().store(on); }

namespace {
std::atomic<int>& mod_up_kernel_setting() {
  static std::atomic<int> k{static_cast<int>(env_integer("VEIL_MODUP_KERNEL", 0, 3, 3))};
  return k;
}
}  // namespace

int mod_up_kernel() { return mod_up_kernel_setting().load(); }
void set_mod_up_kernel(int kernel) {
  if (kernel < 0 || kernel > 3) {
    throw InvalidArgument(
        "kernel: expected 0 (generic), 1 or 2 (shared-memory tables) or 3 (tensor cores), got " +
        std::to_string(kernel));
  }
  mod_up_kernel_setting().store(kernel);
}

bool mod_up_tensor_cores_apply(const Context& ctx, std::size_t level) {
  const KeySwitchLevel& ks = ctx.key_switch(level);
  const std::size_t limbs = level + 1, alpha = ctx.alpha();
  const std::size_t last = limbs - (ks.dnum - 1) * alpha;  // the shortest digit
  return ctx.word_bits() == 32 && ks.modup_mont32.size() > 0 && ks.modup_stride <= 16 &&
         ctx.n() % 128 == 0 && ks.base_qp.size() - last <= 64 && ks.dnum <= 65535;
}

namespace {

// Device view of ModUp's tables (KeySwitchLevel) at one level: digit j owns the limbs
// [first(j), first(j) + size(j)) of Q_l; its output limbs r < rows(j) are the other primes of
// Q_l ∪ P in order (prime(j, r)), stored digit by digit (out_limb(j, r)); table row (j, prime)
// holds (D_j/q_i) mod prime for its size(j) inputs, zero-padded to `stride` words.
template <class W>
struct ModUpTables {
  const Modulus* mods;  // Q_l ∪ P
  const u64* scale;     // [dnum][alpha]: (D_j/q_i)^-1 mod q_i
  const u64* scale_shoup;
  const W* mat;         // [dnum][ext][stride]
  const u32* mont = nullptr;  // mat in Montgomery form (KeySwitchLevel::modup_mont32), or null
  std::size_t stride, ext, alpha, limbs;

  ModUpTables(const Context& ctx, const Device& dev, std::size_t level) {
    const KeySwitchLevel& ks = ctx.key_switch(level);
    mods = ks.base_qp.moduli(dev);
    scale = ks.modup_scale.data(dev);
    scale_shoup = ks.modup_scale_shoup.data(dev);
    if constexpr (sizeof(W) == 4) {
      mat = ks.modup_mat32.data(dev);
      if (ks.modup_mont32.size()) mont = ks.modup_mont32.data(dev);
    } else {
      mat = ks.modup_mat.data(dev);
    }
    stride = ks.modup_stride;
    ext = ks.base_qp.size();
    alpha = ctx.alpha();
    limbs = level + 1;
  }
  VEIL_HD std::size_t first(std::size_t j) const { return j * alpha; }
  VEIL_HD std::size_t size(std::size_t j) const {
    return limbs - j * alpha < alpha ? limbs - j * alpha : alpha;
  }
  VEIL_HD std::size_t rows(std::size_t j) const { return ext - size(j); }
  VEIL_HD std::size_t prime(std::size_t j, std::size_t r) const {
    return r < first(j) ? r : r + size(j);
  }
  VEIL_HD std::size_t out_limb(std::size_t j, std::size_t r) const { return j * (ext - alpha) + r; }
  VEIL_HD const W* row(std::size_t j, std::size_t r) const {
    return mat + (j * ext + prime(j, r)) * stride;
  }
  /// FastBaseConv from digit j's primes (no fractions: approximate, as ModUp needs).
  VEIL_HD rns_detail::ConvView view(std::size_t j) const {
    rns_detail::ConvView v;
    v.kf = size(j);
    v.from = mods + first(j);
    v.scale = scale + j * alpha;
    v.scale_shoup = scale_shoup + j * alpha;
    return v;
  }
};

#if defined(__CUDACC__)
inline constexpr unsigned kModUpThreads = 256;

// ModUp's conversion (mod_up_convert below) on the GPU with digit j's table rows and the moduli of
// Q_l ∪ P staged in shared memory (blockIdx.y = j: a block's threads all convert digit j). Read
// from global memory, the generic kernel's row loads missed L1 three times in four (Nsight
// Compute: L1 hit rate 26 %, 0.45 instructions issued per scheduler and cycle at 25 % occupancy),
// so each output row waited on L2 (bench/NOTES.md).
// kFull: every row has kMax / 4 groups of four words, so a row is one branch-free block and two
// rows are interleaved (unrolled by two): about twice the independent work in flight per warp.
// kMont (32-bit words): the rows come from the table in Montgomery form (ModUpTables::mont) and
// each is block_row_mont's lazy sum, with the moduli staged as their Mont32 constants.
template <class W, u32 kMax, u32 kC, bool kFull, bool kMont>
__global__ void __launch_bounds__(kModUpThreads)
    mod_up_smem_kernel(const ModUpTables<W> t, const RnsPolyView<const W> in, W* o, u32 n,
                       u32 part, u32 log_splits) {
  extern __shared__ __align__(16) unsigned char smem[];
  // blockIdx.y = (digit j, group g of its output rows): 2^log_splits groups per digit
  const u32 j = blockIdx.y >> log_splits, g = blockIdx.y & ((1u << log_splits) - 1);
  const u32 stride = static_cast<u32>(t.stride), ext = static_cast<u32>(t.ext);
  W* srow = reinterpret_cast<W*>(smem);  // [ext][stride], 16-byte rows (stride % 4 == 0)
  using M = std::conditional_t<kMont, Mont32, Modulus>;  // the moduli as staged
  M* sm = reinterpret_cast<M*>(smem + ext * stride * sizeof(W));
  const W* mat =
      (kMont ? reinterpret_cast<const W*>(t.mont) : t.mat) + std::size_t(j) * ext * stride;
  for (u32 i = threadIdx.x; i < ext * stride; i += blockDim.x) srow[i] = mat[i];
  for (u32 i = threadIdx.x; i < ext; i += blockDim.x) {
    sm[i] = rns_detail::staged_modulus<M>(t.mods[i]);
  }
  __syncthreads();
  const u32 c = blockIdx.x * kModUpThreads + threadIdx.x;  // < part
  const u32 groups = stride / 4, first = static_cast<u32>(t.first(j));
  const u32 size = static_cast<u32>(t.size(j)), rows = ext - size;
  const u32 per = (rows + (1u << log_splits) - 1) >> log_splits, r0 = g * per;
  const u32 r1 = r0 + per < rows ? r0 + per : rows;
  W y[kC][kMax];
  rns_detail::block_inputs<W, kMax, kC>(t.view(j), in, 0, first, c, part, groups, y);
  W* dst = o + (t.out_limb(j, 0) + r0) * n + c;
#pragma unroll(kFull ? 2 : 1)
  for (u32 r = r0; r < r1; ++r, dst += n) {
    const u32 p = r < first ? r : r + size;
    W v[kC];
    rns_detail::block_row<W, kMax, kC, kFull>(y, srow + p * stride, groups, sm[p], v);
#pragma unroll
    for (u32 k = 0; k < kC; ++k) dst[std::size_t(k) * part] = v[k];
  }
}
#endif

#if defined(__CUDACC__)
// ModUp's rows for the tensor-core conversion (rns_detail::tc_convert_kernel): blockIdx.y = digit
// j, whose rows are the other primes of Q_l ∪ P (at most 64: mod_up_tensor_cores_apply).
struct ModUpTcRows {
  ModUpTables<u32> t;
  RnsPolyView<const u32> in;
  u32* o;
  __device__ rns_detail::ConvView view(u32 j) const { return t.view(j); }
  __device__ u32 poly(u32) const { return 0; }
  __device__ u32 first(u32 j) const { return static_cast<u32>(t.first(j)); }
  __device__ u32 rows(u32 j) const { return static_cast<u32>(t.rows(j)); }
  __device__ u32 stride() const { return static_cast<u32>(t.stride); }
  __device__ const u32* table_row(u32 j, u32 r) const {
    return t.mont + (std::size_t(j) * t.ext + t.prime(j, r)) * t.stride;
  }
  __device__ const Modulus& modulus(u32 j, u32 r) const { return t.mods[t.prime(j, r)]; }
  __device__ u32* out_row(u32 j, u32 r) const { return o + t.out_limb(j, r) * in.n(); }
};

// The tensor-core conversion where it applies: 32-bit words with the Montgomery table, digits of
// at most 16 primes, at most 64 output rows a digit, N a multiple of kTcCoeffs.
template <class W, u32 kMax>
bool mod_up_convert_tc(const Context& ctx, const Device& dev, std::size_t level, const W* src,
                       W* o) {
  if constexpr (sizeof(W) != 4 || kMax > 16) {
    (void)ctx, (void)dev, (void)level, (void)src, (void)o;
    return false;
  } else {
    if (!conversion_montgomery() || !mod_up_tensor_cores_apply(ctx, level) ||
        !rns_detail::tc_supported(dev)) {
      return false;
    }
    const KeySwitchLevel& ks = ctx.key_switch(level);
    const ModUpTables<W> t(ctx, dev, level);
    const std::size_t n = ctx.n();
    const RnsPolyView<const W> in = make_view<const W>(dev, src, 1, ctx.base_q(level), n);
    backend::set_current(dev);
    rns_detail::with_tc_tiles(n, [&](auto tiles) {
      constexpr u32 kTiles = decltype(tiles)::value;
      const dim3 grid(unsigned(n / (kTiles * rns_detail::kTcCoeffs)), unsigned(ks.dnum), 1);
      rns_detail::tc_convert_kernel<kMax, ModUpTcRows, kTiles>
          <<<grid, rns_detail::kTcThreads, 0, backend::stream(dev)>>>(ModUpTcRows{t, in, o},
                                                                      static_cast<u32>(n));
    });
    backend::check_last_launch("ModUp conversion (tensor cores)");
    return true;
  }
}
#endif

// log_threads (0: no split): each digit's output rows split into groups until about
// 2^log_threads threads run (rns_detail::blocked_log_splits, as the blocked conversions do).
template <class W, u32 kMax, u32 kC>
bool mod_up_convert_smem(const Context& ctx, const Device& dev, std::size_t level, const W* src,
                         W* o, int log_threads) {
#if defined(__CUDACC__)
  const KeySwitchLevel& ks = ctx.key_switch(level);
  const ModUpTables<W> t(ctx, dev, level);
  const std::size_t n = ctx.n(), part = n / kC;
  const std::size_t bytes = t.ext * t.stride * sizeof(W) + t.ext * sizeof(Modulus);
  // (Within the 48 KiB a block gets without opting in: the generic kernel takes larger bases.)
  if (part % kModUpThreads != 0 || bytes > 48 * 1024) return false;
  const int log_splits =
      log_threads > 0 ? rns_detail::blocked_log_splits(ks.dnum, part, t.ext - t.alpha, log_threads)
                      : 0;
  if ((ks.dnum << log_splits) > 65535) return false;
  const RnsPolyView<const W> in = make_view<const W>(dev, src, 1, ctx.base_q(level), n);
  backend::set_current(dev);
  const dim3 grid(unsigned(part / kModUpThreads), unsigned(ks.dnum << log_splits), 1);
  auto launch = [&](auto full, auto lazy) {  // std::bool_constant: kFull, kMont
    mod_up_smem_kernel<W, kMax, kC, decltype(full)::value, decltype(lazy)::value>
        <<<grid, kModUpThreads, bytes, backend::stream(dev)>>>(
            t, in, o, static_cast<u32>(n), static_cast<u32>(part),
            static_cast<u32>(log_splits));
  };
  const bool full = conversion_full_rows() && t.stride == kMax;
  const bool lazy = t.mont != nullptr && conversion_montgomery();
  rns_detail::with_row_forms<W>(full, lazy, launch);
  backend::check_last_launch("ModUp conversion");
  return true;
#else
  (void)ctx, (void)dev, (void)level, (void)src, (void)o, (void)log_threads;
  throw_cuda_not_in_this_unit(__FILE__);
#endif
}

// The conversion of ModUp: for each digit j, the complement limbs of Q_l ∪ P from the digit's
// limbs of `src` (coefficient form), FastBaseConv (Bajard et al., SAC 2016) with the tables of
// KeySwitchLevel. One thread per (digit, kC coefficients n/kC apart, so a warp's accesses stay
// consecutive): the inputs y are scaled once into registers, and each table row (kMax >= the
// row stride, four words per load) serves kC coefficients (register blocking; bench/NOTES.md).
template <class W, u32 kMax, u32 kC = rns_detail::kBlockCoeffs<W, kMax>>
void mod_up_convert(const Context& ctx, const Device& dev, std::size_t level, const W* src,
                    W* o) {
  if (dev.is_cuda()) {
    constexpr u32 kHalf = kC > 1 ? kC / 2 : 1;
    const int kernel = mod_up_kernel();
#if defined(__CUDACC__)
    if (kernel == 3 && mod_up_convert_tc<W, kMax>(ctx, dev, level, src, o)) return;
#endif
    if (kernel == 1 && mod_up_convert_smem<W, kMax, kC>(ctx, dev, level, src, o, 0)) return;
    if (kernel >= 2 && mod_up_convert_smem<W, kMax, kHalf>(ctx, dev, level, src, o,
                                                           conversion_log_threads())) {
      return;
    }
  }
  const KeySwitchLevel& ks = ctx.key_switch(level);
  const ModUpTables<W> t(ctx, dev, level);
  const std::size_t n = ctx.n();
  const u32 groups = static_cast<u32>(t.stride / 4);
  const std::size_t part = n / kC;  // coefficient t of a thread is c + t * part
  const int log_part = log2_exact(part);
  // In: c in coefficient form over Q_l. Out: the digits' complement limbs in storage order
  // (digit by digit: ModUpTables::out_limb; modup_base lists them prime by prime).
  const RnsPolyView<const W> in = make_view<const W>(dev, src, 1, ctx.base_q(level), n);
  for_each(dev, ks.dnum * part, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t c = idx & (part - 1), j = idx >> log_part;
    W y[kC][kMax];
    rns_detail::block_inputs<W, kMax, kC>(t.view(j), in, 0, static_cast<u32>(t.first(j)), c, part,
                                          groups, y);
    const std::size_t rows = t.rows(j);
    for (std::size_t r = 0; r < rows; ++r) {
      W v[kC];
      rns_detail::block_row<W, kMax, kC>(y, t.row(j, r), groups, t.mods[t.prime(j, r)], v);
      W* dst = o + t.out_limb(j, r) * n + c;
#pragma unroll
      for (u32 k = 0; k < kC; ++k) dst[k * part] = v[k];
    }
  });
}

// ModUp's conversion for digits of one prime (alpha = 1, as SEAL's key switching has them) on
// the CPU: a digit's residue x < q_j is the integer itself, so FastBaseConv's scale (D_j/q_j)^-1
// is 1 and the residue on another prime p is x mod p: a copy when q_j <= p, one conditional
// subtraction when q_j <= 2p, else a Barrett reduction (SEAL's evaluator reduces a one-prime
// digit the same way). Exact, so the same words as mod_up_convert (which the GPU keeps).
template <class W>
void mod_up_one_prime_cpu(const Context& ctx, std::size_t level, const W* src, W* o) {
  const ModUpTables<W> t(ctx, Device::cpu(), level);
  const std::size_t n = ctx.n(), rows = t.ext - 1;
  const std::int64_t total = static_cast<std::int64_t>(ctx.key_switch(level).dnum * rows);
#pragma omp parallel for schedule(static) if (!backend::forked_child() && total > 1)
  for (std::int64_t k = 0; k < total; ++k) {
    const std::size_t j = static_cast<std::size_t>(k) / rows;
    const std::size_t r = static_cast<std::size_t>(k) % rows;
    const Modulus& p = t.mods[t.prime(j, r)];
    const W* in = src + j * n;  // digit j is limb j of Q_l
    W* out = o + t.out_limb(j, r) * n;
    const u64 qj = t.mods[j].value;
    if (qj <= p.value) {
      std::memcpy(out, in, n * sizeof(W));
    } else if (qj <= 2 * p.value) {
      const W pv = static_cast<W>(p.value);
      for (std::size_t i = 0; i < n; ++i) out[i] = in[i] >= pv ? in[i] - pv : in[i];
    } else {
      for (std::size_t i = 0; i < n; ++i) out[i] = static_cast<W>(reduce_word(in[i], p));
    }
  }
}

// ModUp of every digit in one pass (Han-Ki 2020; Phantom, Yang et al. 2024 §III-C): digit j = c's
// residues on its own primes D_j, fast-converted to every other prime of Q_l ∪ P. Only those other
// limbs are written ([j][complement of D_j], digit by digit) and transformed (prime by prime:
// KeySwitchLevel::modup_base); the own limbs are c's, whose NTT form is known (the input itself for
// NTT-form schemes). (A conversion fused into the NTT's column pass was measured slower on the
// H100: bench/NOTES.md, "Fused NTT passes".)
template <class W>
KeySwitchDigits mod_up_t(const Context& ctx, const Device& dev, std::size_t level, const W* c,
                         bool c_ntt) {
  const KeySwitchLevel& ks = ctx.key_switch(level);
  const std::size_t n = ctx.n();
  const std::size_t limbs = level + 1;
  const RnsBase& q = ctx.base_q(level);
  KeySwitchDigits out;
  out.level = level;
  Buffer<W> coeff;  // c in coefficient form (the conversion's input)
  const W* src = c;
  if (c_ntt) {
    coeff = Buffer<W>(dev, limbs * n);
    backend::copy(dev, coeff.data(), dev, c, limbs * n * sizeof(W));
    ntt_inverse(dev, coeff.data(), 1, q, ctx.ntt());
    src = coeff.data();
    out.own = ConstWordPtr(c);
  } else {
    Buffer<W> own(dev, limbs * n);
    backend::copy(dev, own.data(), dev, c, limbs * n * sizeof(W));
    ntt_forward(dev, own.data(), 1, q, ctx.ntt());
    out.own_copy = WordBuffer(std::move(own));
    out.own = out.own_copy.data();
  }
  Buffer<W> digits(dev, ks.modup_base.size() * n);
  W* o = digits.data();
  if (dev.is_cpu() && ctx.alpha() == 1) {
    mod_up_one_prime_cpu<W>(ctx, level, src, o);
  } else if (ks.modup_stride <= 8) {
    mod_up_convert<W, 8>(ctx, dev, level, src, o);
  } else if (ks.modup_stride == 12 && dev.is_cuda()) {
    // Digits of 9-12 primes (Cheddar's bootparam_40 shape): rows of exactly three groups, so
    // the GPU's shared-memory kernel takes its branch-free form (mod_up_smem_kernel, kFull).
    mod_up_convert<W, 12>(ctx, dev, level, src, o);
  } else if (ks.modup_stride <= 16) {
    mod_up_convert<W, 16>(ctx, dev, level, src, o);
  } else {
    mod_up_convert<W, 32>(ctx, dev, level, src, o);
  }
  RnsPolyView<W> v = make_view<W>(dev, o, 1, ks.modup_base, n);
  v.slots = ks.modup_slots.data(dev);  // prime by prime: each twiddle table read once
  ntt_forward(dev, v, ctx.ntt());
  out.complement = WordBuffer(std::move(digits));
  return out;
}

// Epilogues of the inner product (called per coefficient with limb lp's two results):
// StoreRows writes limbs [lo, hi) to [2][hi - lo][n] (poly_stride apart); ModDownRows finishes a
// ModDownNtt on a kept limb, (x - r) * D^-1, and stores or accumulates it, so the kept limbs of
// the inner product are never written and read back (bench/NOTES.md, "Key switching,
// element-wise kernels and launch counts").
// kAccumulate: out += (r0, r1) instead (the extended accumulators of double hoisting; `mods`
// are the moduli of the limbs [0, hi), only read then).
template <class W, bool kAccumulate = false>
struct StoreRows {
  W* out;
  std::size_t lo, n, poly_stride;
  const Modulus* mods = nullptr;
  VEIL_HD void operator()(std::size_t lp, std::size_t coeff, W r0, W r1) const {
    W* o = out + (lp - lo) * n + coeff;
    if constexpr (kAccumulate) {
      const W q = static_cast<W>(mods[lp].value);
      o[0] = add_mod(o[0], r0, q);
      o[poly_stride] = add_mod(o[poly_stride], r1, q);
    } else {
      o[0] = r0;
      o[poly_stride] = r1;
    }
  }
};

template <class W, bool kAccumulate>
struct ModDownRows {
  const W* r;  // [2][r_stride]: the correction of ModDownNtt::correction
  std::size_t r_stride, n;
  ModDownNtt::FinishView v;
  W* out0;
  W* out1;
  VEIL_HD void operator()(std::size_t lp, std::size_t coeff, W r0, W r1) const {
    const std::size_t i = lp * n + coeff;
    const W y0 = mod_down_finish<W>(v, lp, r0, r[i]);
    const W y1 = mod_down_finish<W>(v, lp, r1, r[r_stride + i]);
    if constexpr (kAccumulate) {
      const W q = static_cast<W>(v.keep[lp].value);
      out0[i] = add_mod(out0[i], y0, q);
      out1[i] = add_mod(out1[i], y1, q);
    } else {
      out0[i] = y0;
      out1[i] = y1;
    }
  }
};

void check_inner(const Context& ctx, const Device& dev, std::size_t level,
                 const KeySwitchDigits& digits, const KSwitchKey& key) {
  const KeySwitchLevel& ks = ctx.key_switch(level);
  if (key.context()->parameter_hash() != ctx.parameter_hash()) {
    throw InvalidArgument("key: belongs to a different context");
  }
  if (key.device() != dev) {
    throw TypeMismatch("key: lives on " + key.device().str() + ", operand on " + dev.str());
  }
  if (key.level() < level) {
    throw InvalidArgument("key: serves levels <= " + std::to_string(key.level()) +
                          " (KSwitchKey::level), the ciphertext is at level " +
                          std::to_string(level));
  }
  if (key.dnum() < ks.dnum) throw InvalidArgument("key: has too few digits for this level");
  if (digits.level != level || digits.complement.empty()) {
    throw InvalidArgument("digits: were decomposed at level " + std::to_string(digits.level) +
                          ", not " + std::to_string(level));
  }
  if (ks.dnum > kMaxKeySwitchDigits) {
    throw InvalidArgument("key switching: more than 60 digits is not supported");
  }
}

// What the inner product adds to its two results, read through the same automorphism as the
// digits: nothing (p0 = p1 = null); with `by_p`, P * (p0, p1) on the Q limbs, p0/p1 over Q_l
// (the lift of (c0, c1) to Q_l ∪ P, whose P limbs are 0); else (p0, p1) on every limb, p0/p1
// over Q_l ∪ P (an extended polynomial). p1 may be null alone.
template <class W>
struct Addend {
  const W* p0 = nullptr;
  const W* p1 = nullptr;
  bool by_p = true;
};

// The inner product of the digits with a key at one coefficient of one limb of Q_l ∪ P (NTT
// form), both key polynomials at once. With a Galois element, coefficient i reads the digits at
// sigma_g's source slot (the NTT-form automorphism is a permutation: poly::automorphism_ntt), so
// no permuted copy is made. With an Addend (a key switch fused with a rescale: P * (c0, c1); double
// hoisting: P * sigma_g(c0), or an extended sigma_g(u0)), it is added in the same pass, read at
// the same permuted slot: the result is then the key-switched ciphertext plus the addend, over
// Q_l ∪ P.
template <class W>
struct InnerProduct {
  const Modulus* mods;
  const W* kd;   // the key: [2 dnum][key_poly]
  const W* dg;   // the digits' complement limbs (KeySwitchDigits::complement)
  const W* own;  // c in NTT form (the digits' own limbs)
  const W* lift0;
  const W* lift1;
  const u64* pq;   // P mod q_i (null: the addend is added as it is)
  const u64* pqs;
  std::size_t lift_limbs;  // limbs the addend covers: l + 1 (times P) or l + 1 + k
  // key_q: the Q limbs the key stores (KSwitchKey::level + 1); num_q: the context's.
  std::size_t n, limbs, ext_limbs, num_q, key_q, alpha, dnum, key_poly, level;
  u64 g, mask;
  int log_n;
  bool batched;  // inner_product_fixed for dnum <= 8 (key_switch_batched_loads()), else the loop
  // A compact key (KSwitchKey::compact): kd holds the b_j only ([dnum][key_poly]) and the a_j
  // are regenerated from `seed` by ks_inner_compact_kernel, the only reader of such a key.
  bool compact;
  ChaChaKey seed;

  InnerProduct(const Context& ctx, const Device& dev, std::size_t level_,
               const KeySwitchDigits& digits, const KSwitchKey& key, u32 galois_elt,
               const Addend<W>& add) {
    const KeySwitchLevel& ks = ctx.key_switch(level_);
    mods = ks.base_qp.moduli(dev);
    kd = key.data<W>();
    dg = digits.complement.data<W>();
    own = digits.own.as<W>();
    lift0 = add.p0;
    lift1 = add.p1;
    const bool by_p = lift0 != nullptr && add.by_p;
    VEIL_REQUIRE(!by_p || ks.p_mod_q.size() == level_ + 1,
                 "key switching: no P mod q table at this level");
    pq = by_p ? ks.p_mod_q.data(dev) : nullptr;
    pqs = by_p ? ks.p_mod_q_shoup.data(dev) : nullptr;
    lift_limbs = by_p ? level_ + 1 : ks.base_qp.size();
    n = ctx.n();
    level = level_;
    limbs = level + 1;
    ext_limbs = limbs + ctx.num_p();
    num_q = ctx.num_q();
    key_q = key.level() + 1;
    alpha = ctx.alpha();
    dnum = ks.dnum;
    key_poly = key.poly_words();
    compact = key.compact();
    seed = ChaChaKey{};
    if (compact) {
      VEIL_REQUIRE(key.uniform_seed().has_value(), "key: a compact key without its seed");
      for (int i = 0; i < 8; ++i) seed.words[i] = (*key.uniform_seed())[i];
    }
    g = galois_elt;
    mask = 2 * n - 1;
    log_n = ctx.log_n();
    batched = key_switch_batched_loads();
  }

  /// The slot whose digits coefficient `coeff` reads: sigma_g's source (or coeff itself). 32-bit
  /// arithmetic (N <= 2^17): the exponent is needed mod 2N only, so the product may wrap.
  VEIL_HD u32 source(u32 coeff) const {
    if (g == 0) return coeff;
    const u32 e = ((2 * bit_reverse(coeff, log_n) + 1) * static_cast<u32>(g)) &
                  static_cast<u32>(mask);
    return bit_reverse((e - 1) >> 1, log_n);
  }
  /// The key's stored limb that limb lp of Q_l ∪ P reads.
  VEIL_HD std::size_t key_limb(std::size_t lp) const {
    return lp <= level ? lp : key_q + (lp - limbs);
  }
  /// Its index in Q ∪ P: the compact sampler's limb address (KSwitchKey::limb_addresses).
  VEIL_HD std::size_t key_limb_address(std::size_t lp) const {
    return lp <= level ? lp : num_q + (lp - limbs);
  }
  /// Digit j's limb lp (the own limbs of c, or the complement ModUp wrote).
  /// (Branch-free: a select, so that dot_fixed's loads of all digits issue together.)
  VEIL_HD const W* digit_row(std::size_t j, std::size_t lp) const {
    const std::size_t first = j * alpha;
    const std::size_t size = (limbs - first) < alpha ? (limbs - first) : alpha;
    const std::size_t idx = lp < first ? lp : lp - size;
    const bool mine = lp >= first && lp < first + size;
    return mine ? own + lp * n : dg + (j * (ext_limbs - alpha) + idx) * n;
  }

  VEIL_HD void operator()(std::size_t lp, std::size_t coeff, W& r0, W& r1) const {
    const std::size_t from = source(static_cast<u32>(coeff));
    dot_loop(lp, from, coeff, r0, r1);
    add_addend(lp, from, r0, r1);
  }

  /// The dot products of any number of digits, one digit after another.
  VEIL_HD void dot_loop(std::size_t lp, std::size_t from, std::size_t coeff, W& r0,
                        W& r1) const {
    const std::size_t kl = key_limb(lp);
    WideAcc<W> d0, d1;
    for (std::size_t j = 0; j < dnum; ++j) {
      const W d = digit_row(j, lp)[from];
      d0.add(d, kd[(2 * j) * key_poly + kl * n + coeff]);
      d1.add(d, kd[(2 * j + 1) * key_poly + kl * n + coeff]);
    }
    const Modulus m = mods[lp];
    r0 = d0.reduce(m);
    r1 = d1.reduce(m);
  }

  /// The dot products of D = dnum digits with every load issued before the first product (the
  /// CPU's form of ks_inner_kernel). The loop above, with its run-time trip count, had a branch
  /// choosing each digit's row between one digit's loads and the next (now a select), and on the
  /// GPU waited for each digit in turn.
  template <int D>
  VEIL_HD void dot_fixed(std::size_t lp, std::size_t from, std::size_t coeff, W& r0,
                         W& r1) const {
    const W* key = kd + key_limb(lp) * n + coeff;
    W d[D], a[D], b[D];
#pragma unroll
    for (int j = 0; j < D; ++j) {
      d[j] = digit_row(std::size_t(j), lp)[from];
      a[j] = key[(2 * std::size_t(j)) * key_poly];
      b[j] = key[(2 * std::size_t(j) + 1) * key_poly];
    }
    combine<D>(d, a, b, mods[lp], r0, r1);
  }

  /// r0 = sum_j d[j] a[j] mod m, r1 = sum_j d[j] b[j] mod m. 32-bit words: up to four products
  /// of residues below 2^31 sum in one 64-bit word (dot_accumulate's grouping). The sums are
  /// exact, so the words equal dot_loop's.
  template <int D>
  VEIL_HD static void combine(const W (&d)[D], const W (&a)[D], const W (&b)[D],
                              const Modulus& m, W& r0, W& r1) {
    WideAcc<W> d0, d1;
    if constexpr (sizeof(W) == 4) {
#pragma unroll
      for (int g0 = 0; g0 < D; g0 += 4) {
        u64 s0 = 0, s1 = 0;
#pragma unroll
        for (int j = g0; j < g0 + 4 && j < D; ++j) {
          s0 = mad_wide(d[j], a[j], s0);
          s1 = mad_wide(d[j], b[j], s1);
        }
        d0.add_word(s0);
        d1.add_word(s1);
      }
    } else {
#pragma unroll
      for (int j = 0; j < D; ++j) {
        d0.add(d[j], a[j]);
        d1.add(d[j], b[j]);
      }
    }
    r0 = d0.reduce(m);
    r1 = d1.reduce(m);
  }

  /// r += the addend's words at slot `from` of limb lp (nothing without an addend).
  VEIL_HD void add_addend(std::size_t lp, std::size_t from, W& r0, W& r1) const {
    if (lift0 != nullptr && lp < lift_limbs) {
      const W qv = static_cast<W>(mods[lp].value);
      W a0 = lift0[lp * n + from], a1 = lift1 != nullptr ? lift1[lp * n + from] : W(0);
      if (pq != nullptr) {
        const W w = static_cast<W>(pq[lp]), wq = shoup_for<W>(pqs[lp]);
        a0 = mul_shoup(a0, w, wq, qv);
        a1 = mul_shoup(a1, w, wq, qv);
      }
      r0 = add_mod(r0, a0, qv);
      r1 = add_mod(r1, a1, qv);
    }
  }
};

// The inner product on the CPU, limb by limb: the dot products of a limb in one pass of the IFMA
// kernel (eltwise_simd.h) where its prime allows (32-bit words read zero-extended by the kernel
// itself; widened per block of kDotWide32 coefficients for the AVX512F/DQ one), else of
// dot_mod_scalar; then the addend and the epilogue per coefficient.
template <class W, class Epi>
void inner_product_cpu(const InnerProduct<W>& ip, std::size_t lo, std::size_t hi,
                       const Epi& epi) {
  const std::size_t n = ip.n, dnum = ip.dnum, count = hi - lo;
  // All scratch up front (an allocation failure inside a parallel loop would end the process):
  // the Galois table, each limb's row pointers, and the two results of every limb.
  std::vector<u64> perm(ip.g != 0 ? n : 0);
  if (ip.g != 0) {
    cpu_row_chunks(1, n, [&](std::size_t, std::size_t c0, std::size_t c1) {
      for (std::size_t c = c0; c < c1; ++c) perm[c] = ip.source(static_cast<u32>(c));
    });
  }
  std::vector<const W*> ptrs(3 * dnum * count);
  for (std::size_t li = 0; li < count; ++li) {
    const std::size_t lp = lo + li, kl = ip.key_limb(lp);
    for (std::size_t j = 0; j < dnum; ++j) {
      ptrs[3 * dnum * li + j] = ip.digit_row(j, lp);
      ptrs[3 * dnum * li + dnum + j] = ip.kd + (2 * j) * ip.key_poly + kl * n;
      ptrs[3 * dnum * li + 2 * dnum + j] = ip.kd + (2 * j + 1) * ip.key_poly + kl * n;
    }
  }
  Buffer<W> results(Device::cpu(), 2 * n * count);
  const u64* table = perm.empty() ? nullptr : perm.data();
  cpu_row_chunks(count, n, [&](std::size_t li, std::size_t c0, std::size_t c1) {
    const std::size_t lp = lo + li;
    const W* const* rows = ptrs.data() + 3 * dnum * li;
    const W* d[kMaxKeySwitchDigits];  // a chunk's rows (gathered digits keep whole rows)
    const W* k0[kMaxKeySwitchDigits];
    const W* k1[kMaxKeySwitchDigits];
    for (std::size_t j = 0; j < dnum; ++j) {
      d[j] = table ? rows[j] : rows[j] + c0;
      k0[j] = rows[dnum + j] + c0;
      k1[j] = rows[2 * dnum + j] + c0;
    }
    W* r0 = results.data() + 2 * n * li;
    W* r1 = r0 + n;
    const u64* from = table ? table + c0 : nullptr;
    if (!detail::dot_mod_simd(r0 + c0, r1 + c0, d, k0, k1, dnum, from, c1 - c0, ip.mods[lp])) {
      detail::dot_mod_scalar<W>(r0 + c0, r1 + c0, d, k0, k1, dnum, from, c1 - c0, ip.mods[lp]);
    }
    for (std::size_t c = c0; c < c1; ++c) {
      ip.add_addend(lp, table ? table[c] : c, r0[c], r1[c]);
      epi(lp, c, r0[c], r1[c]);
    }
  });
}

inline constexpr unsigned kInnerThreads = 256;
inline constexpr int kInnerCoeffs = 2;  // coefficients per thread

#if defined(__CUDACC__)
// The inner product of D digits on the GPU (Han-Ki 2020's key switching): one grid row per limb
// lp of Q_l ∪ P (blockIdx.y), whose digit rows, key rows and modulus each thread looks up once;
// K coefficients per thread, each 256 apart (coalesced), with all 3 D loads of every coefficient
// issued before the first product; 32-bit coefficient indexing. The generic kernel (for_each_limb
// over InnerProduct::operator()) ran at 2.5x its byte floor at the top level of a bootstrap: its
// 64-bit index arithmetic per word outweighed the products (~770 instructions issued per word
// pair in a build where it also held the eight dot_fixed paths; Nsight Compute, bench/NOTES.md).
// N >= 1024, so N is always a multiple of the 512 coefficients of a block.
template <class W, int D, int K, class Epi>
__global__ void __launch_bounds__(kInnerThreads)
    ks_inner_kernel(const InnerProduct<W> ip, u32 lo, Epi epi) {
  const u32 lp = lo + blockIdx.y;
  const u32 n = static_cast<u32>(ip.n);
  const W* row[D];
  const W* key0[D];
  const W* key1[D];
  const W* key = ip.kd + std::size_t(ip.key_limb(lp)) * n;
#pragma unroll
  for (int j = 0; j < D; ++j) {
    row[j] = ip.digit_row(std::size_t(j), lp);
    key0[j] = key + (2 * std::size_t(j)) * ip.key_poly;
    key1[j] = key + (2 * std::size_t(j) + 1) * ip.key_poly;
  }
  const u32 first = blockIdx.x * (kInnerThreads * K) + threadIdx.x;
  W d[K][D], a[K][D], b[K][D];
  u32 from[K];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    const u32 c = first + k * kInnerThreads;
    from[k] = ip.source(c);
#pragma unroll
    for (int j = 0; j < D; ++j) {
      d[k][j] = row[j][from[k]];
      a[k][j] = key0[j][c];
      b[k][j] = key1[j][c];
    }
  }
  const Modulus m = ip.mods[lp];
#pragma unroll
  for (int k = 0; k < K; ++k) {
    W r0, r1;
    InnerProduct<W>::template combine<D>(d[k], a[k], b[k], m, r0, r1);
    ip.add_addend(lp, from[k], r0, r1);
    epi(lp, first + k * kInnerThreads, r0, r1);
  }
}

// The inner product with a compact key (KSwitchKey::compact): ks_inner_kernel's sums with each
// a_j regenerated in the kernel (compact_uniform.h) instead of read, so the key's bytes halve.
// Each thread takes the kCompactPerColumn<W> consecutive coefficients (4 with 32-bit words, 2
// with 64-bit) that its column of a ChaCha block gives; four lanes compute one block together.
// The b_j rows (and the digits, without an automorphism) are read 16 bytes at a time.
template <class W>
__device__ __forceinline__ void load_column(const W* p, W (&out)[kCompactPerColumn<W>]) {
  if constexpr (sizeof(W) == 4) {
    const uint4 v = *reinterpret_cast<const uint4*>(p);
    out[0] = v.x;
    out[1] = v.y;
    out[2] = v.z;
    out[3] = v.w;
  } else {
    const ulonglong2 v = *reinterpret_cast<const ulonglong2*>(p);
    out[0] = v.x;
    out[1] = v.y;
  }
}

template <class W, int D, class Epi>
__global__ void __launch_bounds__(kInnerThreads)
    ks_inner_compact_kernel(const InnerProduct<W> ip, u32 lo, Epi epi) {
  constexpr int C = kCompactPerColumn<W>;
  const u32 lp = lo + blockIdx.y;
  const u32 kl = static_cast<u32>(ip.key_limb(lp));
  const u32 n = static_cast<u32>(ip.n);
  const u32 lane = blockIdx.x * kInnerThreads + threadIdx.x;  // within the limb
  const u32 first = lane * C;
  const W* key = ip.kd + std::size_t(kl) * n + first;
  W d[C][D], b[C][D];
  u32 from[C];
#pragma unroll
  for (int c = 0; c < C; ++c) from[c] = ip.source(first + c);
#pragma unroll
  for (int j = 0; j < D; ++j) {
    const W* row = ip.digit_row(std::size_t(j), lp);
    W v[C];
    load_column<W>(key + std::size_t(j) * ip.key_poly, v);
#pragma unroll
    for (int c = 0; c < C; ++c) b[c][j] = v[c];
    if (ip.g == 0) {
      load_column<W>(row + first, v);
#pragma unroll
      for (int c = 0; c < C; ++c) d[c][j] = v[c];
    } else {
#pragma unroll
      for (int c = 0; c < C; ++c) d[c][j] = row[from[c]];
    }
  }
  const Modulus m = ip.mods[lp];
  const u64 bound = compact_bound<W>(m.value);
  W gen[D][C];  // all D digits' a_j at once (independent ChaCha chains, interleaved)
  compact_uniform_columns<W, D>(ip.seed, 0, static_cast<u32>(ip.key_limb_address(lp)), lane >> 2,
                                m, bound, gen);
  W a[C][D];
#pragma unroll
  for (int j = 0; j < D; ++j) {
#pragma unroll
    for (int c = 0; c < C; ++c) a[c][j] = gen[j][c];
  }
#pragma unroll
  for (int c = 0; c < C; ++c) {
    W r0, r1;
    InnerProduct<W>::template combine<D>(d[c], b[c], a[c], m, r0, r1);
    ip.add_addend(lp, from[c], r0, r1);
    epi(lp, first + c, r0, r1);
  }
}
#endif

// Whether the inner product reads a compact key as it is (ks_inner_compact_kernel: the GPU,
// at most 8 digits, N a multiple of its coefficients per block); readable_key expands it
// elsewhere.
bool compact_in_kernel(const Device& dev, std::size_t n, std::size_t dnum, int word_bits) {
  const std::size_t per_block = kInnerThreads * (word_bits == 32 ? kCompactPerColumn<u32>
                                                                 : kCompactPerColumn<u64>);
  return dev.is_cuda() && dnum <= 8 && n % per_block == 0;
}

// The key the inner product at `level` reads: `key` itself, unless it is compact and no kernel
// regenerates its a_j there; then its expansion, held by `full`.
const KSwitchKey& readable_key(const Context& ctx, const Device& dev, std::size_t level,
                               const KSwitchKey& key, std::optional<KSwitchKey>& full) {
  if (!key.compact() ||
      compact_in_kernel(dev, ctx.n(), ctx.key_switch(level).dnum, ctx.word_bits())) {
    return key;
  }
  full.emplace(expand_compact_key(key));
  return *full;
}

// The inner product with a compact key on the GPU (compact_in_kernel holds).
template <class W, int D, class Epi>
void inner_product_compact(const Device& dev, const InnerProduct<W>& ip, std::size_t lo,
                           std::size_t hi, Epi epi) {
#if defined(__CUDACC__)
  backend::set_current(dev);
  const dim3 grid(unsigned(ip.n / (kInnerThreads * kCompactPerColumn<W>)), unsigned(hi - lo), 1);
  ks_inner_compact_kernel<W, D><<<grid, kInnerThreads, 0, backend::stream(dev)>>>(
      ip, static_cast<u32>(lo), epi);
  backend::check_last_launch("key switching inner product (compact key)");
#else
  (void)dev, (void)ip, (void)lo, (void)hi, (void)epi;
  throw_cuda_not_in_this_unit(__FILE__);
#endif
}

// The inner product of D = ip.dnum digits over limbs [lo, hi): ks_inner_kernel on the GPU
// (N a multiple of its 512 coefficients per block), InnerProduct::dot_fixed per word otherwise.
template <class W, int D, class Epi>
void inner_product_fixed(const Device& dev, const InnerProduct<W>& ip, std::size_t lo,
                         std::size_t hi, Epi epi) {
  const std::size_t n = ip.n;
  if (dev.is_cuda() && n % (kInnerThreads * kInnerCoeffs) == 0 && hi - lo <= 65535) {
#if defined(__CUDACC__)
    backend::set_current(dev);
    const dim3 grid(unsigned(n / (kInnerThreads * kInnerCoeffs)), unsigned(hi - lo), 1);
    ks_inner_kernel<W, D, kInnerCoeffs><<<grid, kInnerThreads, 0, backend::stream(dev)>>>(
        ip, static_cast<u32>(lo), epi);
    backend::check_last_launch("key switching inner product");
    return;
#else
    throw_cuda_not_in_this_unit(__FILE__);
#endif
  }
  for_each_limb(dev, 1, hi - lo, n, VEIL_LAMBDA(std::size_t i, u32 row) {
    const std::size_t lp = lo + row, coeff = i & (n - 1);
    const std::size_t from = ip.source(static_cast<u32>(coeff));
    W r0, r1;
    ip.template dot_fixed<D>(lp, from, coeff, r0, r1);
    ip.add_addend(lp, from, r0, r1);
    epi(lp, coeff, r0, r1);
  });
}

// Calls f(std::integral_constant<int, D>{}) with D = dnum when 1 <= dnum <= 8 (the digit counts
// the fixed kernels are instantiated for) and says whether it did.
template <class F>
bool with_digit_count(std::size_t dnum, F&& f) {
  switch (dnum) {
    case 1: return f(std::integral_constant<int, 1>{}), true;
    case 2: return f(std::integral_constant<int, 2>{}), true;
    case 3: return f(std::integral_constant<int, 3>{}), true;
    case 4: return f(std::integral_constant<int, 4>{}), true;
    case 5: return f(std::integral_constant<int, 5>{}), true;
    case 6: return f(std::integral_constant<int, 6>{}), true;
    case 7: return f(std::integral_constant<int, 7>{}), true;
    case 8: return f(std::integral_constant<int, 8>{}), true;
    default: return false;
  }
}

// The inner product over limbs [lo, hi) of Q_l ∪ P; epi(lp, coeff, r0, r1) consumes limb lp's
// results.
template <class W, class Epi>
void inner_product(const Device& dev, const InnerProduct<W>& ip, std::size_t lo, std::size_t hi,
                   Epi epi) {
  if (ip.compact) {  // readable_key passes a compact key only where compact_in_kernel holds
    VEIL_REQUIRE(compact_in_kernel(dev, ip.n, ip.dnum, int(8 * sizeof(W))) && hi - lo <= 65535,
                 "key switching: a compact key reached a path that cannot regenerate its a_j");
    const bool launched = with_digit_count(ip.dnum, [&](auto d) {
      inner_product_compact<W, decltype(d)::value>(dev, ip, lo, hi, epi);
    });
    VEIL_REQUIRE(launched, "key switching: a compact key with more than 8 digits here");
    return;
  }
  if (dev.is_cpu()) {
    inner_product_cpu(ip, lo, hi, epi);
    return;
  }
  // One kernel per digit count: each keeps only its own registers.
  if (ip.batched && with_digit_count(ip.dnum, [&](auto d) {
        inner_product_fixed<W, decltype(d)::value>(dev, ip, lo, hi, epi);
      })) {
    return;
  }
  const std::size_t n = ip.n;
  for_each_limb(dev, 1, hi - lo, n, VEIL_LAMBDA(std::size_t i, u32 row) {
    const std::size_t lp = lo + row, coeff = i & (n - 1);
    W r0, r1;
    ip(lp, coeff, r0, r1);
    epi(lp, coeff, r0, r1);
  });
}

// Inner product + ModDownNtt `md` (its kept limbs are Q_l's first |K|, its dropped ones the rest
// of Q_l ∪ P): the dropped limbs' inner product first, their correction r, then the kept limbs'
// inner product finished in the same kernel (out = (x - r) * D^-1, stored or accumulated).
template <class W, bool kAccumulate>
void inner_mod_down(const Context& ctx, const Device& dev, std::size_t level,
                    const KeySwitchDigits& digits, const KSwitchKey& key, u32 galois_elt,
                    const Addend<W>& add, const ModDownNtt& md, W* out0, W* out1) {
  check_inner(ctx, dev, level, digits, key);
  std::optional<KSwitchKey> full;
  const KSwitchKey& k = readable_key(ctx, dev, level, key, full);
  const std::size_t n = ctx.n(), kk = md.keep().size(), kd = md.drop().size();
  VEIL_REQUIRE(kk + kd == level + 1 + ctx.num_p(), "inner_mod_down: ModDown bases do not match");
  const InnerProduct<W> ip(ctx, dev, level, digits, k, galois_elt, add);
  Buffer<W> xd(dev, 2 * kd * n);
  inner_product<W>(dev, ip, kk, kk + kd, StoreRows<W>{xd.data(), kk, n, kd * n});
  Buffer<W> r = md.correction<W>(dev, ctx.ntt(), xd.data(), n, 2);
  inner_product<W>(dev, ip, 0, kk,
                   ModDownRows<W, kAccumulate>{r.data(), md.target_size() * n, n,
                                               md.finish_view(dev), out0, out1});
}

// The fused kernel reads the digits' own limbs while it writes the accumulators: they must not
// share words (a silently wrong result otherwise).
// (acc_words: the accumulator's words; own_words: the own limbs', acc_words when 0.)
template <class W>
void check_disjoint(const W* acc, const W* own, std::size_t acc_words, const char* name,
                    std::size_t own_words = 0) {
  const auto a = reinterpret_cast<std::uintptr_t>(acc), o = reinterpret_cast<std::uintptr_t>(own);
  const std::uintptr_t abytes = acc_words * sizeof(W);
  const std::uintptr_t obytes = (own_words ? own_words : acc_words) * sizeof(W);
  if (own != nullptr && a < o + obytes && o < a + abytes) {
    throw InvalidArgument(std::string(name) +
                          ": overlaps the polynomial being key-switched (expected a separate "
                          "accumulator)");
  }
}

template <class W>
void inner_t(const Context& ctx, const Device& dev, std::size_t level,
             const KeySwitchDigits& digits, const KSwitchKey& key, W* acc0, W* acc1, bool acc_ntt,
             u32 galois_elt) {
  const KeySwitchLevel& ks = ctx.key_switch(level);
  const std::size_t words = (level + 1) * ctx.n();
  check_disjoint<W>(acc0, digits.own.as<W>(), words, "acc0");
  check_disjoint<W>(acc1, digits.own.as<W>(), words, "acc1");
  if (acc_ntt) {
    // NTT-form schemes: only P's limbs leave the NTT domain (Phantom, Yang et al. 2024 "NTT +
    // ModDown"), and the Q limbs' inner product is finished and accumulated in one pass.
    inner_mod_down<W, true>(ctx, dev, level, digits, key, galois_elt, Addend<W>{},
                            ks.mod_down_ntt, acc0, acc1);
    return;
  }
  // Coefficient form: the whole inner product, INTT, then ModDown fused with the
  // accumulation.
  check_inner(ctx, dev, level, digits, key);
  std::optional<KSwitchKey> full;
  const KSwitchKey& k = readable_key(ctx, dev, level, key, full);
  const std::size_t n = ctx.n(), ext = ks.base_qp.size();
  Buffer<W> out(dev, 2 * ext * n);
  const InnerProduct<W> ip(ctx, dev, level, digits, k, galois_elt, Addend<W>{});
  inner_product<W>(dev, ip, 0, ext, StoreRows<W>{out.data(), 0, n, ext * n});
  ntt_inverse(dev, out.data(), 2, ks.base_qp, ctx.ntt());
  ks.mod_down.apply_accumulate(dev, out.data(), acc0, acc1, n, 2);
}

// The extended-basis primitives of double hoisting need NTT-form ciphertexts and a ModDown
// without the plain-modulus correction (a lift by P would have to match it).
void check_ext(const Context& ctx, const char* op) {
  const SchemeDefinition& def = ctx.scheme_definition();
  if (!def.ntt_form || def.errors_times_plain) {
    throw InvalidArgument(std::string(op) + ": the extended basis Q_l ∪ P is not available to " +
                          def.name +
                          " (it needs NTT-form ciphertexts whose errors are not multiples of t)");
  }
}

// A caller's ModDown target from Q_l ∪ P (key_switch_rescale, key_switch_mod_down): it must
// keep a prefix Q_t of Q_l (t <= l) and divide by the rest of Q_l and by P.
void check_down(const Context& ctx, std::size_t level, const ModDownNtt& down, const char* what) {
  const std::size_t kept = down.keep().size();
  if (kept == 0 || kept > level + 1 || kept + down.drop().size() != level + 1 + ctx.num_p()) {
    throw InvalidArgument(std::string(what) + ": is not a ModDown from Q_" +
                          std::to_string(level) + " ∪ P to a prefix of Q_" +
                          std::to_string(level));
  }
}

template <class W>
void rescale_t(const Context& ctx, const Device& dev, std::size_t level,
               const KeySwitchDigits& digits, const KSwitchKey& key, const W* c0, const W* c1,
               const ModDownNtt& down, W* out) {
  check_ext(ctx, "key_switch_rescale");  // a rescale's division: no t-correction, NTT form
  check_down(ctx, level, down, "down");
  // (P c + c') / (P * B) = round(switched / B) up to the rounding of one division.
  const std::size_t kept = down.keep().size();
  inner_mod_down<W, false>(ctx, dev, level, digits, key, 0, Addend<W>{c0, c1, true}, down, out,
                           out + kept * ctx.n());
}

// Double hoisting (Bossuat-Mouchet-Troncoso-Hubaux, Eurocrypt 2021, §4, Alg. 6; Lattigo v6
// rlwe.Evaluator.GadgetProductHoistedLazy / AutomorphismHoistedLazy): the inner product over all
// of Q_l ∪ P with the addend, stored or accumulated, and no ModDown.
template <class W>
void inner_ext_t(const Context& ctx, const Device& dev, std::size_t level,
                 const KeySwitchDigits& digits, const KSwitchKey& key, const W* add0,
                 ExtAddend mode, W* out, bool accumulate, u32 galois_elt) {
  check_ext(ctx, "key_switch_inner_ext");
  check_inner(ctx, dev, level, digits, key);
  const KeySwitchLevel& ks = ctx.key_switch(level);
  const std::size_t n = ctx.n(), ext = ks.base_qp.size(), limbs = level + 1;
  if (mode != ExtAddend::none && add0 == nullptr) {
    throw InvalidArgument("add0: is null but an addend was requested");
  }
  // The kernel reads the own limbs and the addend at permuted slots while it writes `out`.
  check_disjoint<W>(out, digits.own.as<W>(), 2 * ext * n, "out", limbs * n);
  if (mode != ExtAddend::none) {
    check_disjoint<W>(out, add0, 2 * ext * n, "out", (mode == ExtAddend::lift ? limbs : ext) * n);
  }
  Addend<W> a;
  if (mode != ExtAddend::none) a = Addend<W>{add0, nullptr, mode == ExtAddend::lift};
  std::optional<KSwitchKey> full;
  const InnerProduct<W> ip(ctx, dev, level, digits, readable_key(ctx, dev, level, key, full),
                           galois_elt, a);
  if (accumulate) {
    inner_product<W>(dev, ip, 0, ext,
                     StoreRows<W, true>{out, 0, n, ext * n, ks.base_qp.moduli(dev)});
  } else {
    inner_product<W>(dev, ip, 0, ext, StoreRows<W>{out, 0, n, ext * n});
  }
}

// out = P * in on the Q limbs, 0 on P's: the lift of Q_l polynomials to Q_l ∪ P.
template <class W>
void lift_t(const Context& ctx, const Device& dev, std::size_t level, const W* in, W* out,
            std::size_t num_polys) {
  check_ext(ctx, "key_switch_lift");
  const KeySwitchLevel& ks = ctx.key_switch(level);
  const std::size_t n = ctx.n(), limbs = level + 1, ext = ks.base_qp.size();
  check_disjoint<W>(out, in, num_polys * ext * n, "out", num_polys * limbs * n);
  const Modulus* mods = ks.base_qp.moduli(dev);
  const u64* pq = ks.p_mod_q.data(dev);
  const u64* pqs = ks.p_mod_q_shoup.data(dev);
  for_each_limb(dev, num_polys, ext, n, VEIL_LAMBDA(std::size_t i, u32 l, u32 p) {
    if (l < limbs) {
      const W q = static_cast<W>(mods[l].value);
      const W x = in[(std::size_t(p) * limbs + l) * n + (i & (n - 1))];
      out[i] = mul_shoup(x, static_cast<W>(pq[l]), shoup_for<W>(pqs[l]), q);
    } else {
      out[i] = 0;
    }
  });
}

}  // namespace

KSwitchKey expand_compact_key(const KSwitchKey& key) {
  if (!key.compact()) return key;
  VEIL_REQUIRE(key.uniform_seed().has_value(), "key: a compact key without its seed");
  const Context& ctx = *key.context();
  const Device& dev = key.device();
  KSwitchKey full(key.context(), dev, key.dnum(), false, key.level());
  const std::size_t pw = key.poly_words();
  for (std::size_t j = 0; j < key.dnum(); ++j) {
    copy_words(dev, full.data() + 2 * j * pw, dev, key.b(j), pw);
    sample_uniform_compact(dev, full.data() + (2 * j + 1) * pw, ctx.n(),
                           ctx.key_switch(key.level()).base_qp,
                           uniform_stream(*key.uniform_seed(), j), key.limb_addresses());
  }
  full.set_key_id(key.key_id());
  return full;
}

void copy_key_limbs(const Context& ctx, const Device& dev, ConstWordPtr src, std::size_t src_q,
                    WordPtr dst, std::size_t level) {
  const std::size_t n = ctx.n(), q = level + 1, p = ctx.num_p();
  copy_words(dev, dst, dev, src, q * n);
  copy_words(dev, dst + q * n, dev, src + src_q * n, p * n);
}

KSwitchKey lower_key_level(const KSwitchKey& key, std::size_t level) {
  if (key.empty()) throw InvalidArgument("key: is empty");
  if (level > key.level()) {
    throw InvalidArgument("level: the key serves levels <= " + std::to_string(key.level()) +
                          ", it cannot be raised to " + std::to_string(level));
  }
  if (level == key.level()) return key;
  const Context& ctx = *key.context();
  const Device& dev = key.device();
  const std::size_t dnum = ctx.key_switch(level).dnum, polys = key.compact() ? 1 : 2;
  KSwitchKey out(key.context(), dev, dnum, key.compact(), level);
  for (std::size_t i = 0; i < dnum * polys; ++i) {
    copy_key_limbs(ctx, dev, key.data() + i * key.poly_words(), key.level() + 1,
                   out.data() + i * out.poly_words(), level);
  }
  // The projection keeps every a_j's addresses, so the seed still regenerates them.
  out.set_uniform_seed(key.uniform_seed());
  if (key.seed_known_to_match()) out.note_seed_matches();
  out.set_key_id(key.key_id());
  return out;
}

void key_switch_inner_ext(const Context& ctx, const Device& dev, std::size_t level,
                          const KeySwitchDigits& digits, const KSwitchKey& key, ConstWordPtr add0,
                          ExtAddend mode, WordPtr out, bool accumulate, u32 galois_elt) {
  VEIL_WITH_WORD(out.word_bits(),
                 inner_ext_t<W>(ctx, dev, level, digits, key,
                                add0.null() ? nullptr : add0.as<W>(), mode, out.as<W>(),
                                accumulate, galois_elt));
}

void key_switch_lift(const Context& ctx, const Device& dev, std::size_t level, ConstWordPtr in,
                     WordPtr out, std::size_t num_polys) {
  VEIL_WITH_WORD(out.word_bits(),
                 lift_t<W>(ctx, dev, level, in.as<W>(), out.as<W>(), num_polys));
}

void key_switch_mod_down(const Context& ctx, const Device& dev, std::size_t level,
                         ConstWordPtr in, WordPtr out, std::size_t num_polys,
                         const ModDownNtt* down) {
  check_ext(ctx, "key_switch_mod_down");
  if (down) check_down(ctx, level, *down, "down");
  const ModDownNtt& d = down ? *down : ctx.key_switch(level).mod_down_ntt;
  d.apply(dev, ctx.ntt(), in, out, ctx.n(), num_polys);
}

KeySwitchDigits key_switch_mod_up(const Context& ctx, const Device& dev, std::size_t level,
                                  ConstWordPtr c, bool c_ntt) {
  return VEIL_WITH_WORD(c.word_bits(), return mod_up_t<W>(ctx, dev, level, c.as<W>(), c_ntt));
}

void key_switch_inner(const Context& ctx, const Device& dev, std::size_t level,
                      const KeySwitchDigits& digits, const KSwitchKey& key, WordPtr acc0,
                      WordPtr acc1, bool acc_ntt, u32 galois_elt) {
  VEIL_WITH_WORD(acc0.word_bits(), inner_t<W>(ctx, dev, level, digits, key, acc0.as<W>(),
                                              acc1.as<W>(), acc_ntt, galois_elt));
}

void key_switch_rescale(const Context& ctx, const Device& dev, std::size_t level,
                        const KeySwitchDigits& digits, const KSwitchKey& key, ConstWordPtr c0,
                        ConstWordPtr c1, const ModDownNtt& down, WordPtr out) {
  VEIL_WITH_WORD(out.word_bits(), rescale_t<W>(ctx, dev, level, digits, key, c0.as<W>(),
                                               c1.as<W>(), down, out.as<W>()));
}

void key_switch_accumulate(const Context& ctx, const Device& dev, std::size_t level,
                           ConstWordPtr c, bool c_ntt, const KSwitchKey& key, WordPtr acc0,
                           WordPtr acc1, bool acc_ntt) {
  const KeySwitchDigits digits = key_switch_mod_up(ctx, dev, level, c, c_ntt);
  key_switch_inner(ctx, dev, level, digits, key, acc0, acc1, acc_ntt);
}

}  // namespace veil
