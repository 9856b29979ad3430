// CKKSEncoder: the canonical-embedding encoder (CKKS 2017 §3.1; SEAL's CKKSEncoder), every step
// as for_each kernels on the plaintext's device. See encoder.h for the conventions.
//
// Floating point: only + - * / and round on doubles, in the same order on both backends, and no
// fma calls. The CUDA build compiles device code with --fmad=false; on the host, GCC contracts
// a*b+c into an FMA only when the target has one (not baseline x86-64, which the build targets;
// a build with -march=native would also need -ffp-contract=off to keep CPU == GPU bit for bit).
#include "veil/ckks/encoder.h"

#include "veil/rlwe/checks.h"

#include <bit>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>

#include "veil/backend/launch.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/core/error.h"

namespace veil {

namespace {

using detail::Complex64;
using detail::CkksEncoderTables;

constexpr u32 kConjFlag = u32(1) << 31;
constexpr std::size_t kMaxBlock = 64;  // coefficients per thread in the max-|c| pre-reduction

VEIL_HD u64 double_bits(double x) {
#if VEIL_DEVICE_CODE
  return static_cast<u64>(__double_as_longlong(x));
#else
  u64 b;
  std::memcpy(&b, &x, sizeof b);
  return b;
#endif
}

/// 2^e mod q, square-and-multiply (e >= 0).
VEIL_HD u64 pow2_mod(int e, const Modulus& m) {
  u64 result = 1 % m.value, base = 2 % m.value;
  while (e > 0) {
    if (e & 1) result = mul_mod(result, base, m);
    base = mul_mod(base, base, m);
    e >>= 1;
  }
  return result;
}

/// c mod q, exactly, for an integer-valued finite double c. |c| < 2^63: a word cast. Otherwise
/// c = mant * 2^e with the 53-bit significand `mant` and e >= 11 read from the IEEE-754 fields
/// (what frexp/ldexp would give, without libm on the device): (mant mod q) * (2^e mod q) mod q.
VEIL_HD u64 reduce_integer_double(double c, const Modulus& m) {
  const bool neg = c < 0.0;
  const double a = neg ? -c : c;
  u64 r;
  if (a < 9223372036854775808.0) {  // 2^63
    r = reduce_word(static_cast<u64>(a), m);
  } else {
    const u64 bits = double_bits(a);
    const u64 mant = (bits & ((u64(1) << 52) - 1)) | (u64(1) << 52);
    const int e = static_cast<int>((bits >> 52) & 0x7FF) - 1075;
    r = mul_mod(reduce_word(mant, m), pow2_mod(e, m), m);
  }
  return neg ? neg_mod(r, m.value) : r;
}

// ---- the half-size special FFT ---------------------------------------------------------------
// Forward (decode): Cooley-Tukey with bit-reversed output. Stage with m blocks (m = 1..half/2),
// gap = half / (2m); butterfly b: block i = b / gap, x = 2*i*gap + b % gap, y = x + gap,
//   (v[x], v[y]) <- (v[x] + r*v[y], v[x] - r*v[y]),  r = roots[m + i].
// Inverse (encode): the same stages undone in reverse order, Gentleman-Sande:
//   (v[x], v[y]) <- (v[x] + v[y], (v[x] - v[y]) * conj(r)),
// which yields half * (input of the forward transform); the 1/half goes into the scale factor.

// One butterfly of each direction at (x, y = x + gap) with root r: the per-stage loops and the
// fused CUDA kernel below call these, so both give the same doubles.
VEIL_HD void forward_butterfly(Complex64* v, std::size_t x, std::size_t y, Complex64 r) {
  const Complex64 u = v[x], w = v[y];
  const double tr = w.re * r.re - w.im * r.im;
  const double ti = w.re * r.im + w.im * r.re;
  v[x] = Complex64{u.re + tr, u.im + ti};
  v[y] = Complex64{u.re - tr, u.im - ti};
}

VEIL_HD void inverse_butterfly(Complex64* v, std::size_t x, std::size_t y, Complex64 r) {
  const Complex64 u = v[x], w = v[y];
  const double dr = u.re - w.re, di = u.im - w.im;
  v[x] = Complex64{u.re + w.re, u.im + w.im};
  v[y] = Complex64{dr * r.re + di * r.im, di * r.re - dr * r.im};  // d * conj(r)
}

// One stage (m blocks of 2 * gap values) as one for_each over the half / 2 butterflies.
void fft_stage(const Device& dev, Complex64* v, std::size_t half, std::size_t m,
               const Complex64* roots, bool inverse) {
  const std::size_t gap = half / (2 * m);
  for_each(dev, half / 2, VEIL_LAMBDA(std::size_t b) {
    const std::size_t i = b / gap;
    const std::size_t x = 2 * i * gap + (b - i * gap);
    if (inverse) {
      inverse_butterfly(v, x, x + gap, roots[m + i]);
    } else {
      forward_butterfly(v, x, x + gap, roots[m + i]);
    }
  });
}

#if defined(__CUDACC__)
// On a GPU the stages whose blocks fit in kFftChunk values (gap <= kFftChunk / 2) run in one
// kernel: each thread block loads a chunk into shared memory (32 KiB), applies those stages in
// the per-stage loop's order with a barrier between them, and writes the chunk back. Same
// butterflies, same doubles (--fmad=false); one launch instead of up to 11.
constexpr std::size_t kFftChunk = 2048;
constexpr unsigned kFftThreads = 256;

// Stages m in [m_lo, m_hi], in increasing m (forward) or decreasing m (inverse).
__global__ void fft_chunk_kernel(Complex64* v, std::size_t half, std::size_t chunk,
                                 std::size_t m_lo, std::size_t m_hi, const Complex64* roots,
                                 bool inverse) {
  extern __shared__ double2 fft_shared[];
  Complex64* s = reinterpret_cast<Complex64*>(fft_shared);
  const std::size_t base = std::size_t(blockIdx.x) * chunk, first = base / 2;
  for (std::size_t k = threadIdx.x; k < chunk; k += blockDim.x) s[k] = v[base + k];
  __syncthreads();
  for (std::size_t step = 0, m = inverse ? m_hi : m_lo; m >= m_lo && m <= m_hi; ++step) {
    const std::size_t gap = half / (2 * m);
    for (std::size_t b = threadIdx.x; b < chunk / 2; b += blockDim.x) {
      const std::size_t g = first + b;  // the stage's butterfly index
      const std::size_t i = g / gap;
      const std::size_t x = 2 * i * gap + (g - i * gap) - base;
      if (inverse) {
        inverse_butterfly(s, x, x + gap, roots[m + i]);
      } else {
        forward_butterfly(s, x, x + gap, roots[m + i]);
      }
    }
    __syncthreads();
    m = inverse ? m / 2 : m * 2;
  }
  for (std::size_t k = threadIdx.x; k < chunk; k += blockDim.x) v[base + k] = s[k];
}

void fft_chunks(const Device& dev, Complex64* v, std::size_t half, std::size_t chunk,
                std::size_t m_lo, const Complex64* roots, bool inverse) {
  backend::set_current(dev);
  fft_chunk_kernel<<<unsigned(half / chunk), kFftThreads, chunk * sizeof(Complex64),
                     backend::stream(dev)>>>(v, half, chunk, m_lo, half / 2, roots, inverse);
  backend::check_last_launch("ckks fft");
}
#endif

void fft_forward(const Device& dev, Complex64* v, std::size_t half, const Complex64* roots) {
  std::size_t m_fused = half;  // the first stage that runs fused (none on the CPU)
#if defined(__CUDACC__)
  const std::size_t chunk = half < kFftChunk ? half : kFftChunk;
  if (dev.is_cuda() && half >= 2) m_fused = half / chunk;  // gap = chunk / 2 from there on
#endif
  for (std::size_t m = 1; m < half && m < m_fused; m <<= 1) fft_stage(dev, v, half, m, roots, false);
#if defined(__CUDACC__)
  if (m_fused < half) fft_chunks(dev, v, half, chunk, m_fused, roots, false);
#endif
}

void fft_inverse(const Device& dev, Complex64* v, std::size_t half, const Complex64* roots) {
  std::size_t m_fused = half;
#if defined(__CUDACC__)
  const std::size_t chunk = half < kFftChunk ? half : kFftChunk;
  if (dev.is_cuda() && half >= 2) {
    m_fused = half / chunk;
    fft_chunks(dev, v, half, chunk, m_fused, roots, true);  // m = half/2 .. m_fused first
  }
#endif
  for (std::size_t m = (m_fused < half ? m_fused : half) / 2; m >= 1; m >>= 1) {
    fft_stage(dev, v, half, m, roots, true);
  }
}

/// Slot j -> its position in the transform's bit-reversed order (conjugated for the points
/// zeta^(-3^j)): SEAL's index map restricted to the points = 1 mod 4.
void scatter_slots(const Device& dev, const Complex64* z, const u32* slot_pos, Complex64* v,
                   std::size_t half) {
  for_each(dev, half, VEIL_LAMBDA(std::size_t j) {
    const u32 p = slot_pos[j];
    const Complex64 s = z[j];
    v[p & ~kConjFlag] = (p & kConjFlag) ? Complex64{s.re, -s.im} : s;
  });
}

void gather_slots(const Device& dev, const Complex64* v, const u32* slot_pos, Complex64* z,
                  std::size_t half) {
  for_each(dev, half, VEIL_LAMBDA(std::size_t j) {
    const u32 p = slot_pos[j];
    const Complex64 s = v[p & ~kConjFlag];
    z[j] = (p & kConjFlag) ? Complex64{s.re, -s.im} : s;
  });
}

/// c_k = m_k + i*m_{k+half} -> coefficients round(f * m), f = scale / half.
void round_coefficients(const Device& dev, const Complex64* v, double f, double* coeffs,
                        std::size_t half) {
  for_each(dev, half, VEIL_LAMBDA(std::size_t k) {
    const Complex64 c = v[k];
    coeffs[k] = ::round(c.re * f);
    coeffs[k + half] = ::round(c.im * f);
  });
}

/// Per block of kMaxBlock coefficients, max |c| (non-finite -> +inf). Finished on the host.
std::vector<double> block_max_abs(const Device& dev, const double* coeffs, std::size_t n) {
  const std::size_t blocks = (n + kMaxBlock - 1) / kMaxBlock;
  const double inf = std::numeric_limits<double>::infinity();
  const double dbl_max = std::numeric_limits<double>::max();
  Buffer<double> out(dev, blocks);
  double* o = out.data();
  for_each(dev, blocks, VEIL_LAMBDA(std::size_t b) {
    const std::size_t end = (b + 1) * kMaxBlock < n ? (b + 1) * kMaxBlock : n;
    double best = 0.0;
    for (std::size_t k = b * kMaxBlock; k < end; ++k) {
      double a = coeffs[k] < 0.0 ? -coeffs[k] : coeffs[k];
      if (!(a <= dbl_max)) a = inf;  // NaN or inf
      if (a > best) best = a;
    }
    o[b] = best;
  });
  return out.to_host();
}

/// out[l][k] = coeffs[k] mod q_l for every limb of `base`.
template <class W>
void reduce_coefficients(const Device& dev, const double* coeffs, const RnsBase& base,
                         std::size_t n, W* out) {
  const Modulus* q = base.moduli(dev);
  for_each_limb(dev, 1, base.size(), n, VEIL_LAMBDA(std::size_t i, u32 l) {
    out[i] = static_cast<W>(reduce_integer_double(coeffs[i & (n - 1)], q[l]));
  });
}

/// Fills every word of limb l with res[l] (the NTT form of a constant polynomial is constant).
template <class W>
void fill_constant(const Device& dev, const u64* res, std::size_t limbs, std::size_t n, W* out) {
  for_each_limb(dev, 1, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) { out[i] = W(res[l]); });
}

/// Garner's mixed radix for the residues (r1, r2, r3) of the centered x modulo p1 > p2 > p3:
/// x mod P = v1 + v2 p1 + v3 p1 p2. P is odd, so (P - 1)/2 has digits ((p1-1)/2, (p2-1)/2,
/// (p3-1)/2) and x > (P-1)/2 (x negative) is a lexicographic comparison; then |x| = P - x has
/// digits (p1 - v1, p2 - 1 - v2, p3 - 1 - v3). Digits are non-negative, so the double Horner
/// evaluation has no cancellation (relative error < 2^-50). Writes v[k] = (x_k, x_{k+half}) /
/// scale, the packed input of the forward transform.
struct GarnerConsts {
  Modulus p1, p2, p3;
  u64 inv_p1_mod_p2, inv_p1_mod_p3, inv_p2_mod_p3;
};

VEIL_HD double garner_to_double(u64 r1, u64 r2, u64 r3, const GarnerConsts& g) {
  const u64 q1 = g.p1.value, q2 = g.p2.value, q3 = g.p3.value;
  const u64 v1 = r1;
  const u64 v2 = mul_mod(sub_mod(r2, reduce_word(v1, g.p2), q2), g.inv_p1_mod_p2, g.p2);
  u64 t = mul_mod(sub_mod(r3, reduce_word(v1, g.p3), q3), g.inv_p1_mod_p3, g.p3);
  t = sub_mod(t, reduce_word(v2, g.p3), q3);
  const u64 v3 = mul_mod(t, g.inv_p2_mod_p3, g.p3);
  const u64 h1 = (q1 - 1) / 2, h2 = (q2 - 1) / 2, h3 = (q3 - 1) / 2;
  const bool neg = v3 > h3 || (v3 == h3 && (v2 > h2 || (v2 == h2 && v1 > h1)));
  const u64 d1 = neg ? q1 - v1 : v1;
  const u64 d2 = neg ? q2 - 1 - v2 : v2;
  const u64 d3 = neg ? q3 - 1 - v3 : v3;
  const double mag = (static_cast<double>(d3) * static_cast<double>(q2) + static_cast<double>(d2)) *
                         static_cast<double>(q1) +
                     static_cast<double>(d1);
  return neg ? -mag : mag;
}

void garner_pack(const Device& dev, const u64* r, const GarnerConsts& g, double scale,
                 std::size_t n, Complex64* v) {
  const std::size_t half = n / 2;
  for_each(dev, half, VEIL_LAMBDA(std::size_t k) {
    const std::size_t k2 = k + half;
    const double a = garner_to_double(r[k], r[n + k], r[2 * n + k], g) / scale;
    const double b = garner_to_double(r[k2], r[n + k2], r[2 * n + k2], g) / scale;
    v[k] = Complex64{a, b};
  });
}

std::string fmt_bits(double bits) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.1f", bits);
  return buf;
}

void check_level_scale(const Context& ctx, double scale, std::size_t level) {
  if (level > ctx.max_level()) {
    throw InvalidArgument("level: expected at most max_level " + std::to_string(ctx.max_level()) +
                          ", got " + std::to_string(level));
  }
  check_ckks_scale(ctx, scale, level, "scale");  // in [1, Q_level)
}

/// Throws if the largest |coefficient| (max_abs) does not fit into (-Q_level/2, Q_level/2).
void check_fits(double max_abs, double log2_q, std::size_t level, const char* arg) {
  if (!std::isfinite(max_abs)) {
    throw InvalidArgument(std::string(arg) + ": the scaled input overflows double precision (scale * values "
                          "exceeds 2^1024); Q at level " + std::to_string(level) + " has " +
                          fmt_bits(log2_q) + " bits");
  }
  if (max_abs == 0.0) return;
  const double need = 1.0 + std::log2(max_abs);  // log2(2 * max |c|): magnitude and sign
  if (need >= log2_q) {
    throw InvalidArgument(std::string(arg) + ": the scaled input needs " + fmt_bits(need) +
                          " bits but Q at level " + std::to_string(level) + " has " +
                          fmt_bits(log2_q) + " bits");
  }
}

/// Word i of the compact form is word i << shift of the full one (whole limbs of N words, N a
/// multiple of 2^shift), after checking that every run of 2^shift words is constant (the NTT
/// order that encode_extended_periodic relies on; an internal error if it ever fails).
template <class W>
void gather_period(const Device& dev, const W* full, std::size_t full_words, unsigned shift,
                   W* out) {
  const std::size_t mask = (std::size_t(1) << shift) - 1;
  if (any_of(dev, full_words,
             VEIL_LAMBDA(std::size_t i) { return full[i] != full[i & ~mask]; })) {
    throw RuntimeError("encode_extended_periodic: the NTT values of m(X^k) are not in runs of k "
                       "(internal error: the NTT order changed)");
  }
  for_each(dev, full_words >> shift, VEIL_LAMBDA(std::size_t i) { out[i] = full[i << shift]; });
}

/// The inverse of gather_period: word i of the full form is word i >> shift of the compact one.
template <class W>
void repeat_period(const Device& dev, const W* compact, std::size_t full_words, unsigned shift,
                   W* out) {
  for_each(dev, full_words, VEIL_LAMBDA(std::size_t i) { out[i] = compact[i >> shift]; });
}

/// Slots -> bit-reversed positions -> inverse special FFT -> scaled, rounded coefficients ->
/// exact residues mod each q_i -> NTT. `z` holds N/2 finite slots; `arg` names the argument.
/// `extended`: over Q_level ∪ P (CKKSEncoder::encode_extended), the same coefficients.
/// `shift` > 0 (extended only; the slots repeat with period N/2^(shift+1), checked by the
/// caller): the coefficients off the multiples of 2^shift set to 0 and the plaintext stored as
/// one period (CKKSEncoder::encode_extended_periodic).
Plaintext encode_slots(const ContextPtr& ctx, const CkksEncoderTables& t,
                       const Buffer<Complex64>& zin, double scale, std::size_t level,
                       const char* arg, bool extended = false, unsigned shift = 0) {
  const std::size_t n = ctx->n(), half = n / 2;
  const Device& dev = zin.device();
  Buffer<Complex64> v(dev, half);
  scatter_slots(dev, zin.data(), t.slot_pos.data(dev), v.data(), half);
  fft_inverse(dev, v.data(), half, t.roots.data(dev));
  Buffer<double> coeffs(dev, n);
  round_coefficients(dev, v.data(), scale / static_cast<double>(half), coeffs.data(), half);
  if (shift != 0) {  // m(X^k): the coefficients off the multiples of k are 0 exactly
    double* c = coeffs.data();
    const std::size_t mask = (std::size_t(1) << shift) - 1;
    for_each(dev, n, VEIL_LAMBDA(std::size_t i) {
      if ((i & mask) != 0) c[i] = 0.0;
    });
  }

  double max_abs = 0.0;
  for (double b : block_max_abs(dev, coeffs.data(), n)) max_abs = b > max_abs ? b : max_abs;
  check_fits(max_abs, t.log2_q[level], level, arg);

  const RnsBase& base = extended ? ctx->key_switch(level).base_qp : ctx->base_q(level);
  Plaintext pt(ctx, dev, base.size() * n, level, /*ntt=*/true);
  VEIL_WITH_WORD(pt.word_bits(), reduce_coefficients<W>(dev, coeffs.data(), base, n, pt.data<W>()));
  ntt_forward(dev, pt.data(), 1, base, ctx->ntt());
  pt.set_scale(scale);
  if (shift == 0) return pt;
  Plaintext compact(ctx, dev, (base.size() * n) >> shift, level, /*ntt=*/true);
  VEIL_WITH_WORD(pt.word_bits(), gather_period<W>(dev, pt.data<W>(), base.size() * n, shift,
                                                  compact.data<W>()));
  compact.set_scale(scale);
  return compact;
}

/// N/2 slots on values.device from a view of `count` <= N/2 doubles (`parts` = 1: real values)
/// or complex numbers (`parts` = 2: interleaved real and imaginary parts), zero-padded.
/// Throws InvalidArgument naming `values` if one is not finite.
Buffer<Complex64> slots_from_view(const double* src, std::size_t count, std::size_t parts,
                                  std::size_t half, const Device& dev) {
  backend::synchronize_device(dev);  // the producer's writes (another framework's stream)
  const double dbl_max = std::numeric_limits<double>::max();
  if (any_of(dev, count * parts, VEIL_LAMBDA(std::size_t i) {
        return !(src[i] <= dbl_max && src[i] >= -dbl_max);  // NaN or infinite
      })) {
    throw InvalidArgument("values: a slot is not finite");
  }
  Buffer<Complex64> z(dev, half);
  z.zero();
  Complex64* o = z.data();
  for_each(dev, count, VEIL_LAMBDA(std::size_t j) {
    o[j] = parts == 2 ? Complex64{src[2 * j], src[2 * j + 1]} : Complex64{src[j], 0.0};
  });
  return z;
}

/// The N/2 decoded slots of `plain` on its device (CkksEncoder::decode's steps; `plain` checked).
Buffer<Complex64> decode_slots(const ContextPtr& ctx, const CkksEncoderTables& t,
                               const Plaintext& plain) {
  if (plain.empty()) throw InvalidArgument("plain: is empty");
  if (plain.context()->parameter_hash() != ctx->parameter_hash()) {
    throw InvalidArgument("plain: belongs to a different context than the encoder");
  }
  const std::size_t n = ctx->n(), half = n / 2, level = plain.level();
  if (level > ctx->max_level()) {
    throw InvalidArgument("plain: level " + std::to_string(level) + " exceeds max_level " +
                          std::to_string(ctx->max_level()));
  }
  if (plain.word_count() != (level + 1) * n) {
    throw InvalidArgument("plain: expected (level + 1) * N = " + std::to_string((level + 1) * n) +
                          " words at level " + std::to_string(level) + ", got " +
                          std::to_string(plain.word_count()));
  }
  const double scale = plain.scale();
  if (!(scale > 0.0) || !std::isfinite(scale)) {
    throw InvalidArgument("plain: scale must be finite and positive, got " +
                          std::to_string(scale));
  }
  const Device& dev = plain.device();
  const RnsBase& base = ctx->base_q(level);

  // Coefficients over Q_level -> exact centered residues mod p1, p2, p3 -> signed doubles.
  WordBuffer coeffs = plain.buffer().clone();
  if (plain.is_ntt_form()) ntt_inverse(dev, coeffs.data(), 1, base, ctx->ntt());
  Buffer<u64> r(dev, 3 * n);
  const BaseConverter& to_decode = t.to_decode[level];
  VEIL_WITH_WORD(coeffs.word_bits(),
                 to_decode.exact_convert<W, u64>(dev, coeffs.data<W>(), r.data(), n, 1));
  const RnsBase& pb = t.decode_base;
  const GarnerConsts g{pb[0], pb[1], pb[2], t.inv_p1_mod_p2, t.inv_p1_mod_p3, t.inv_p2_mod_p3};
  Buffer<Complex64> v(dev, half);
  garner_pack(dev, r.data(), g, scale, n, v.data());

  // Forward special FFT, then read each slot through the index map.
  fft_forward(dev, v.data(), half, t.roots.data(dev));
  Buffer<Complex64> z(dev, half);
  gather_slots(dev, v.data(), t.slot_pos.data(dev), z.data(), half);
  return z;
}

/// Copies decoded slots into `out` (`parts` doubles per slot: 1 = real parts only, 2 = complex).
void slots_to_view(const Buffer<Complex64>& z, double* out, std::size_t parts) {
  const Device& dev = z.device();
  const Complex64* s = z.data();
  for_each(dev, z.size(), VEIL_LAMBDA(std::size_t j) {
    out[parts * j] = s[j].re;
    if (parts == 2) out[2 * j + 1] = s[j].im;
  });
  backend::synchronize(dev);  // the consumer (another framework) reads it next
}

}  // namespace

CKKSEncoder::CKKSEncoder(ContextPtr ctx) : ctx_(std::move(ctx)) {
  if (!ctx_) throw InvalidArgument("context: is null");
  if (ctx_->scheme() != SchemeType::ckks) {
    throw InvalidArgument("context: CKKSEncoder needs a CKKS context, got " +
                          to_string(ctx_->scheme()) + " (use BatchEncoder)");
  }
  tables_ = detail::build_ckks_encoder_tables(*ctx_);
}

Plaintext CKKSEncoder::encode(const std::vector<std::complex<double>>& values, double scale,
                              std::size_t level, const Device& dev) const {
  return encode_impl(values, scale, level, dev, false);
}

Plaintext CKKSEncoder::encode_extended(const std::vector<std::complex<double>>& values,
                                       double scale, std::size_t level, const Device& dev) const {
  if (ctx_->num_p() == 0) {
    throw InvalidArgument("context: encode_extended needs special primes (the basis Q_l ∪ P)");
  }
  return encode_impl(values, scale, level, dev, true);
}

namespace {
Complex64 to_slot(double v) { return Complex64{v, 0.0}; }
Complex64 to_slot(const std::complex<double>& v) { return Complex64{v.real(), v.imag()}; }

/// The N/2 slots of `count` host values (real or complex), zero-padded, after the checks every
/// encode makes: the count, the level and scale, each value finite (named `values`).
template <class T>
std::vector<Complex64> host_slots(const Context& ctx, const T* values, std::size_t count,
                                  double scale, std::size_t level) {
  const std::size_t half = ctx.n() / 2;
  if (count > half) {
    throw InvalidArgument("values: expected at most " + std::to_string(half) +
                          " slots (N/2), got " + std::to_string(count));
  }
  check_level_scale(ctx, scale, level);
  std::vector<Complex64> z(half);
  for (std::size_t j = 0; j < count; ++j) {
    z[j] = to_slot(values[j]);
    if (!std::isfinite(z[j].re) || !std::isfinite(z[j].im)) {
      throw InvalidArgument("values: slot " + std::to_string(j) + " is not finite");
    }
  }
  return z;
}
}  // namespace

unsigned CKKSEncoder::periodic_shift(const std::vector<std::complex<double>>& values) const {
  const std::size_t half = ctx_->n() / 2;
  if (values.size() != half) return 0;
  std::size_t period = half;  // the smallest power-of-two period >= 2 (periods nest)
  while (period > 2) {
    const std::size_t p = period / 2;
    bool same = true;
    for (std::size_t j = p; j < half && same; ++j) same = values[j] == values[j - p];
    if (!same) break;
    period = p;
  }
  return static_cast<unsigned>(std::countr_zero(half / period));
}

namespace {
/// Throws naming `shift` unless it is at most log2(N) - 2 (a period of at least 2 slots).
void check_shift(std::size_t n, unsigned shift) {
  const unsigned top = static_cast<unsigned>(std::countr_zero(n)) - 2;
  if (shift > top) {
    throw InvalidArgument("shift: expected at most log2(N) - 2 = " + std::to_string(top) +
                          ", got " + std::to_string(shift));
  }
}
}  // namespace

Plaintext CKKSEncoder::encode_extended_periodic(const std::vector<std::complex<double>>& values,
                                                double scale, std::size_t level, unsigned shift,
                                                const Device& dev) const {
  if (ctx_->num_p() == 0) {
    throw InvalidArgument("context: encode_extended needs special primes (the basis Q_l ∪ P)");
  }
  check_shift(ctx_->n(), shift);
  const std::vector<Complex64> z = host_slots(*ctx_, values.data(), values.size(), scale, level);
  if (shift != 0 && periodic_shift(values) < shift) {
    throw InvalidArgument("shift: the values do not repeat with period N/2^(shift+1) = " +
                          std::to_string((ctx_->n() / 2) >> shift) + " (periodic_shift gives " +
                          std::to_string(periodic_shift(values)) + " for " +
                          std::to_string(values.size()) + " values, shift is " +
                          std::to_string(shift) + ")");
  }
  return encode_slots(ctx_, tables_, Buffer<Complex64>::upload(dev, z), scale, level, "values",
                      /*extended=*/true, shift);
}

Plaintext CKKSEncoder::expand_periodic(const Plaintext& compact, unsigned shift) {
  if (compact.empty()) throw InvalidArgument("compact: is empty");
  const Context& ctx = *compact.context();
  const std::size_t n = ctx.n();
  check_shift(n, shift);
  const std::size_t limbs = compact.level() + 1 + ctx.num_p(), per_limb = n >> shift;
  const std::size_t words = compact.word_count();
  if (!compact.is_ntt_form() || words != limbs * per_limb) {
    throw InvalidArgument("compact: expected an NTT-form plaintext over Q_l ∪ P of (level + 1 + "
                          "|P|) * N/2^shift = " + std::to_string(limbs * per_limb) +
                          " words, got " + std::to_string(words) + " words" +
                          (compact.is_ntt_form() ? "" : " in coefficient form"));
  }
  const Device& dev = compact.device();
  Plaintext full(compact.context(), dev, limbs * n, compact.level(), /*ntt=*/true);
  VEIL_WITH_WORD(compact.word_bits(),
                 repeat_period<W>(dev, compact.data<W>(), limbs * n, shift, full.data<W>()));
  full.set_scale(compact.scale());
  return full;
}

Plaintext CKKSEncoder::encode_impl(const std::vector<std::complex<double>>& values, double scale,
                                   std::size_t level, const Device& dev, bool extended) const {
  const std::vector<Complex64> z = host_slots(*ctx_, values.data(), values.size(), scale, level);
  return encode_slots(ctx_, tables_, Buffer<Complex64>::upload(dev, z), scale, level, "values",
                      extended);
}

Plaintext CKKSEncoder::encode(const std::vector<double>& values, double scale, std::size_t level,
                              const Device& dev) const {
  return encode(values.data(), values.size(), scale, level, dev);
}

Plaintext CKKSEncoder::encode(const double* values, std::size_t count, double scale,
                              std::size_t level, const Device& dev) const {
  const std::vector<Complex64> z = host_slots(*ctx_, values, count, scale, level);
  return encode_slots(ctx_, tables_, Buffer<Complex64>::upload(dev, z), scale, level, "values");
}

Plaintext CKKSEncoder::encode(std::complex<double> value, double scale, std::size_t level,
                              const Device& dev) const {
  check_level_scale(*ctx_, scale, level);
  if (!std::isfinite(value.real()) || !std::isfinite(value.imag())) {
    throw InvalidArgument("value: is not finite");
  }
  if (value.imag() != 0.0) {
    const std::vector<Complex64> z(slot_count(), Complex64{value.real(), value.imag()});
    return encode_slots(ctx_, tables_, Buffer<Complex64>::upload(dev, z), scale, level, "value");
  }
  // A real constant is the constant polynomial round(value * scale): its NTT form is that
  // constant in every position (SEAL's encode(double)).
  const double c = std::round(value.real() * scale);
  check_fits(std::fabs(c), tables_.log2_q[level], level, "value");
  const RnsBase& base = ctx_->base_q(level);
  std::vector<u64> res(level + 1);
  for (std::size_t l = 0; l <= level; ++l) res[l] = reduce_integer_double(c, base[l]);
  const Buffer<u64> r = Buffer<u64>::upload(dev, res);
  const std::size_t n = ctx_->n();
  Plaintext pt(ctx_, dev, (level + 1) * n, level, /*ntt=*/true);
  VEIL_WITH_WORD(pt.word_bits(), fill_constant<W>(dev, r.data(), level + 1, n, pt.data<W>()));
  pt.set_scale(scale);
  return pt;
}

std::vector<std::complex<double>> CKKSEncoder::decode(const Plaintext& plain) const {
  const std::vector<Complex64> host = decode_slots(ctx_, tables_, plain).to_host();
  std::vector<std::complex<double>> out(host.size());
  for (std::size_t j = 0; j < host.size(); ++j) out[j] = {host[j].re, host[j].im};
  return out;
}

void CKKSEncoder::decode_view(const Plaintext& plain, const ArrayView<std::complex<double>>& out) const {
  out.check(plain.device(), slot_count(), false, "out");
  slots_to_view(decode_slots(ctx_, tables_, plain), reinterpret_cast<double*>(out.data), 2);
}

void CKKSEncoder::decode_view(const Plaintext& plain, const ArrayView<double>& out) const {
  out.check(plain.device(), slot_count(), false, "out");
  slots_to_view(decode_slots(ctx_, tables_, plain), out.data, 1);
}

Plaintext CKKSEncoder::encode_view(const ArrayView<const std::complex<double>>& values, double scale,
                              std::size_t level) const {
  values.check(values.device, slot_count(), true, "values");
  check_level_scale(*ctx_, scale, level);
  const auto* src = reinterpret_cast<const double*>(values.data);
  return encode_slots(ctx_, tables_,
                      slots_from_view(src, values.count, 2, slot_count(), values.device), scale,
                      level, "values");
}

Plaintext CKKSEncoder::encode_view(const ArrayView<const double>& values, double scale,
                              std::size_t level) const {
  values.check(values.device, slot_count(), true, "values");
  check_level_scale(*ctx_, scale, level);
  return encode_slots(ctx_, tables_,
                      slots_from_view(values.data, values.count, 1, slot_count(), values.device),
                      scale, level, "values");
}

}  // namespace veil
