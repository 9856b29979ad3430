// CKKSEncoder: N/2 complex slots <-> one CKKS plaintext (Cheon-Kim-Kim-Song, "Homomorphic
// Encryption for Arithmetic of Approximate Numbers", ASIACRYPT 2017, §3.1; conventions of SEAL's
// CKKSEncoder, native/src/seal/ckks.{h,cpp}).
//
// The canonical embedding. With zeta = exp(i*pi/N), a real polynomial m(X) of degree < N is
// identified with its values at the primitive 2N-th roots of unity. Slot j (0 <= j < N/2) is the
// value at zeta^(3^j mod 2N); the value at zeta^(-3^j) is its complex conjugate (generator 3 and
// the element 2N - 1, as SEAL's rotations). Encoding with scale Delta finds m with
// m(zeta^(3^j)) = Delta * z_j and rounds its coefficients to integers (the paper's
// Ecd(z; Delta) = round(Delta * sigma^-1(pi^-1(z)))); decoding evaluates m / Delta.
//
// SEAL's index map (matrix_reps_index_map): with pos = 3^i mod 2N,
//   map[i] = bitrev((pos - 1) / 2, logN),  map[N/2 + i] = bitrev((2N - pos - 1) / 2, logN),
// i.e. the position of the point zeta^pos in a negacyclic transform with bit-reversed output.
// Exactly one of pos, 2N - pos is 1 mod 4; those N/2 points are the outputs of the "special FFT"
// of size N/2 implemented here (the first Cooley-Tukey stage of SEAL's size-N transform, for a
// real input, packs m into c_k = m_k + i*m_{k+N/2}: Kim-Song's/HEAAN's half-size transform), and
// their positions bitrev((pos-1)/2, logN) < N/2 are the bit-reversed positions of that transform.
//
// Every per-slot, per-butterfly and per-coefficient step runs through for_each on the plaintext's
// device, using IEEE double + - * / and round only (no fused multiply-add: the CUDA build compiles
// with --fmad=false), so the CPU and the GPU produce bit-identical plaintexts and decodings.
#pragma once
#include <complex>
#include <cstddef>
#include <vector>

#include "veil/backend/array_view.h"
#include "veil/backend/table.h"
#include "veil/rlwe/objects.h"
#include "veil/rns/base_converter.h"

namespace veil {

namespace detail {
/// A complex double as plain data, usable in device tables and kernels (std::complex is not).
struct Complex64 {
  double re = 0.0;
  double im = 0.0;
};

/// Tables of one CKKSEncoder, built once on the host (encoder_host.cpp).
struct CkksEncoderTables {
  std::size_t n = 0;  // N
  int log_n = 0;
  /// [N/2] roots of the half-size transform: roots[m + i] = zeta^bitrev(2m + i, logN) for the
  /// stage with m blocks (m = 1, 2, ..., N/4) and block i < m; roots[0] is unused.
  DeviceTable<Complex64> roots;
  /// [N/2] where slot j lives in the half-size transform's bit-reversed output: the position in
  /// bits 0..30 and, in bit 31, whether that position holds conj(z_j) (the point zeta^(-3^j)).
  DeviceTable<u32> slot_pos;
  /// [N] SEAL's matrix_reps_index_map (see the file comment).
  std::vector<u32> index_map;
  /// Three 61-bit primes p1, p2, p3 outside the context, for exact decoding.
  RnsBase decode_base;
  /// Per level l: Q_l -> {p1, p2, p3}, exact centered conversion.
  std::vector<BaseConverter> to_decode;
  /// Garner constants: p1^-1 mod p2, p1^-1 mod p3, p2^-1 mod p3.
  u64 inv_p1_mod_p2 = 0, inv_p1_mod_p3 = 0, inv_p2_mod_p3 = 0;
  /// Per level l: log2(Q_l) = sum of log2(q_i), i <= l.
  std::vector<double> log2_q;
};

/// Builds every table for `ctx` (a CKKS context).
CkksEncoderTables build_ckks_encoder_tables(const Context& ctx);
}  // namespace detail

/// Encodes vectors of up to N/2 complex (or real) numbers into CKKS plaintexts and back
/// (Cheon-Kim-Kim-Song, Asiacrypt 2017, §3.1: the canonical embedding sigma; SEAL's
/// CKKSEncoder, with its slot order).
/// Immutable after construction; safe to share between threads.
class CKKSEncoder {
 public:
  /// Builds the root tables, the slot map and the decoding converters for every level.
  /// @param ctx a CKKS context.
  /// @throws InvalidArgument naming `context` unless `ctx` is a CKKS context.
  explicit CKKSEncoder(ContextPtr ctx);

  /// Number of complex slots, N/2.
  /// @return N/2.
  std::size_t slot_count() const { return tables_.n / 2; }
  /// The context this encoder was built for.
  /// @return the context.
  const ContextPtr& context() const { return ctx_; }

  /// Encodes `values` (at most N/2; missing slots are 0) with scale `scale` at level `level`
  /// (level + 1 primes q_0..q_level) on `dev`.
  /// Returns a Plaintext of (level + 1) * N words ([level+1][N], NTT form over Q_level), with
  /// plain.scale() == scale. Its coefficients are round(scale * sigma^-1(z)) (CKKS §3.1), reduced
  /// exactly modulo each prime (also above 2^63).
  /// @param values at most N/2 complex slot values.
  /// @param scale the scale Delta, finite and > 0.
  /// @param level the plaintext's level, at most max_level.
  /// @param dev the device the plaintext is made on.
  /// @return the NTT-form plaintext, [level+1][N] words.
  /// @throws InvalidArgument naming the argument: "values" if there are more than N/2 values, a
  /// value is not finite, or the scaled polynomial does not fit ("values: the scaled input needs
  /// X bits but Q at level L has Y bits", X = log2(2 * max |coefficient|), Y = log2(Q_level));
  /// "level" if level > max_level; "scale" if scale is not finite or <= 0.
  Plaintext encode(const std::vector<std::complex<double>>& values, double scale, std::size_t level,
                   const Device& dev = Device::cpu()) const;
  /// The same plaintext over the extended basis Q_level ∪ P (the special primes of key
  /// switching): the coefficients of encode(values, scale, level), reduced modulo the level+1 Q
  /// primes and then the k special primes, in NTT form: [level+1+k][N] words, whose first
  /// level+1 limbs equal encode()'s word for word (so a Q_level operation reading them sees the
  /// ordinary plaintext). Plaintexts of double-hoisted linear transforms (Bossuat et al.,
  /// Eurocrypt 2021, §4: the diagonals multiply key switches still over Q_l ∪ P;
  /// Evaluator::multiply_diagonals_bsgs); costs (level+1+k)/(level+1) times encode()'s memory.
  /// plain.level() == level; decode() refuses it (its word count).
  /// @param values at most N/2 complex slot values.
  /// @param scale the scale, as encode.
  /// @param level the plaintext's level.
  /// @param dev the device the plaintext is made on.
  /// @return the NTT-form plaintext over Q_level ∪ P, [level+1+k][N] words.
  /// @throws InvalidArgument as encode, and naming `context` without special primes.
  Plaintext encode_extended(const std::vector<std::complex<double>>& values, double scale,
                            std::size_t level, const Device& dev = Device::cpu()) const;
  /// The largest shift s such that `values` (exactly N/2 slots) repeat with period
  /// N/2^(s+1) >= 2 in Veil's slot order (slot j at the root zeta^(3^j), as SEAL), compared as
  /// doubles for equality; 0 for any other length. Slots of period p are fixed by the
  /// automorphism X -> X^(3^p), whose fixed polynomials are those in X^(N/2p) (for p >= 2 the
  /// powers 3^p generate the units = 1 mod 4p), so the encoded polynomial is m(X^(2^s)).
  /// @param values slot values.
  /// @return the shift s (0: no period found, or not N/2 values).
  unsigned periodic_shift(const std::vector<std::complex<double>>& values) const;
  /// encode_extended for slots of period N/2^(shift+1) (periodic_shift(values) >= shift), stored
  /// as one period: [level+1+|P|][N/2^shift] words, word i of a limb being word i * 2^shift of
  /// the full limb. In Veil's bit-reversed NTT order (value j at the root psi^(2 brev(j) + 1))
  /// the values of m(X^(2^shift)) come in runs of 2^shift equal words, so nothing is lost; the
  /// diagonals of CKKS bootstrapping's DFT factors repeat with the factors' block size (Cerium,
  /// SOSP 2026: diagonals stored as one period). The coefficients are encode_extended's with
  /// those off the multiples of 2^shift set to 0 (0 in exact arithmetic; the FFT's rounding
  /// noise otherwise). shift 0 gives encode_extended's plaintext. Operand of
  /// Evaluator::multiply_diagonals_bsgs (ckks::BsgsTerm::shift); expand_periodic restores the
  /// full form.
  /// @throws InvalidArgument naming `shift` (above log2(N) - 2, or values that do not repeat
  ///         with that period: shift > 0 needs exactly N/2 values), and as encode_extended.
  /// @param values slot values (exactly N/2 when shift > 0).
  /// @param scale the scale, as encode.
  /// @param level the plaintext's level.
  /// @param shift the period's shift, at most periodic_shift(values) and log2(N) - 2.
  /// @param dev the device the plaintext is made on.
  /// @return the compact NTT-form plaintext, [level+1+|P|][N/2^shift] words.
  /// @throws RuntimeError if a run of the NTT values is not constant (an internal error: the
  ///         NTT order this layout relies on changed).
  Plaintext encode_extended_periodic(const std::vector<std::complex<double>>& values,
                                     double scale, std::size_t level, unsigned shift,
                                     const Device& dev = Device::cpu()) const;
  /// The full form of a plaintext stored as one period with `shift` (encode_extended_periodic):
  /// [level+1+|P|][N/2^shift] words -> [level+1+|P|][N], on compact's device, same level and
  /// scale (a new buffer: the full form's memory).
  /// @throws InvalidArgument naming `compact` (empty, not NTT form, or not (level+1+|P|) *
  ///         N/2^shift words) or `shift` (above log2(N) - 2).
  /// @param compact a plaintext from encode_extended_periodic.
  /// @param shift the shift it was encoded with.
  /// @return the full plaintext, [level+1+|P|][N] words.
  static Plaintext expand_periodic(const Plaintext& compact, unsigned shift);
  /// Real values: the decoded slots are real (imaginary parts ~ 0). Same shapes and errors.
  /// @param values at most N/2 real slot values.
  /// @param scale the scale, finite and > 0.
  /// @param level the plaintext's level.
  /// @param dev the device the plaintext is made on.
  /// @return the NTT-form plaintext, [level+1][N] words.
  /// @throws InvalidArgument as the complex overload.
  Plaintext encode(const std::vector<double>& values, double scale, std::size_t level,
                   const Device& dev = Device::cpu()) const;
  /// The same from `count` real values in host memory at `values` (no intermediate host copy).
  /// @param values host pointer to `count` doubles.
  /// @param count the number of values, at most N/2.
  /// @param scale the scale, finite and > 0.
  /// @param level the plaintext's level.
  /// @param dev the device the plaintext is made on.
  /// @return the NTT-form plaintext, [level+1][N] words.
  /// @throws InvalidArgument as above.
  Plaintext encode(const double* values, std::size_t count, double scale, std::size_t level,
                   const Device& dev) const;
  /// Every slot = `value`. A real value is encoded as the constant polynomial round(value*scale)
  /// (as SEAL does: exact, no FFT noise); a complex one through the general path. Same errors.
  /// @param value the slot value.
  /// @param scale the scale, finite and > 0.
  /// @param level the plaintext's level.
  /// @param dev the device the plaintext is made on.
  /// @return the NTT-form plaintext, [level+1][N] words.
  /// @throws InvalidArgument as the vector overloads.
  Plaintext encode(std::complex<double> value, double scale, std::size_t level,
                   const Device& dev = Device::cpu()) const;
  /// Encodes values that live in memory Veil does not own (a CuPy/PyTorch/JAX array reached
  /// through DLPack, or host memory) on their own device, with no copy through the host: the
  /// plaintext is created on values.device. Same shapes and errors as the vector overloads
  /// ("values: a slot is not finite" without the slot's index).
  /// @param values at most N/2 complex values on a device.
  /// @param scale the scale, finite and > 0.
  /// @param level the plaintext's level.
  /// @return the NTT-form plaintext on values.device, [level+1][N] words.
  /// @throws InvalidArgument as the vector overloads.
  Plaintext encode_view(const ArrayView<const std::complex<double>>& values, double scale,
                        std::size_t level) const;
  /// Real values on a device; see the complex overload.
  /// @param values at most N/2 real values on a device.
  /// @param scale the scale, finite and > 0.
  /// @param level the plaintext's level.
  /// @return the NTT-form plaintext on values.device, [level+1][N] words.
  /// @throws InvalidArgument as the vector overloads.
  Plaintext encode_view(const ArrayView<const double>& values, double scale,
                        std::size_t level) const;

  /// The N/2 slot values of `plain` divided by plain.scale(). `plain`: [level+1][N] words over
  /// Q_level, in NTT form (as encode returns) or in coefficient form (is_ntt_form() false).
  /// Runs on plain.device(); the result is copied to the host.
  /// Each coefficient's centered value x in (-Q_level/2, Q_level/2] is recovered exactly by an
  /// exact conversion to three 61-bit primes and Garner's mixed radix, which is exact for
  /// |x| < p1*p2*p3/2 (about 2^182; larger values - never a meaningful plaintext - wrap), then
  /// converted to double (relative error below 2^-50).
  /// @param plain a CKKS plaintext of this context.
  /// @return the N/2 slot values on the host.
  /// @throws InvalidArgument naming `plain` if the plaintext is empty, from another context, of
  ///         the wrong size, or has a non-finite or non-positive scale.
  std::vector<std::complex<double>> decode(const Plaintext& plain) const;
  /// Decodes into `out`: exactly N/2 elements on plain.device() (e.g. a CUDA array reached through
  /// DLPack; nothing crosses to the host).
  /// @param plain a CKKS plaintext of this context.
  /// @param out N/2 complex values on plain.device().
  /// @throws InvalidArgument as decode, and naming `out` for a view on another device or of
  ///         another length.
  void decode_view(const Plaintext& plain, const ArrayView<std::complex<double>>& out) const;
  /// The real parts of the N/2 slots into `out` (N/2 doubles on plain.device()).
  /// @param plain a CKKS plaintext of this context.
  /// @param out N/2 doubles on plain.device().
  /// @throws InvalidArgument as the complex overload.
  void decode_view(const Plaintext& plain, const ArrayView<double>& out) const;

 private:
  Plaintext encode_impl(const std::vector<std::complex<double>>& values, double scale,
                        std::size_t level, const Device& dev, bool extended) const;
  ContextPtr ctx_;
  detail::CkksEncoderTables tables_;
};

}  // namespace veil
