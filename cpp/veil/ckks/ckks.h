// CKKS (Cheon-Kim-Kim-Song 2017) in full RNS (Cheon-Han-Kim-Kim-Song 2018): ciphertexts and
// plaintexts in NTT form over Q_level, each with a scale; rescaling divides by the last prime.
#pragma once
#include <vector>

#include "veil/ring/prng.h"
#include "veil/rlwe/objects.h"

namespace veil::ckks {

/// Relative tolerance within which two scales count as equal (SEAL compares scales for
/// equality after rescaling by nearly-equal primes; differences beyond this are an error).
inline constexpr double kScaleTolerance = 1e-6;

/// Throws InvalidArgument naming `what` if the scales differ by more than the tolerance.
void check_scales(double a, double b, const char* what);

Ciphertext encrypt(const PublicKey& pk, const Plaintext& pt, const Prng& prng);
Ciphertext encrypt_symmetric(const SecretKey& sk, const Plaintext& pt, const Prng& prng);
/// The phase c0 + c1 s as an NTT-form plaintext at the ciphertext's level and scale. With
/// flooding_bits > 0 a fresh error uniform in [-2^b, 2^b) is added first (noise flooding against
/// IND-CPA-D key recovery, Li-Micciancio 2021; OpenFHE's NOISE_FLOODING_DECRYPT): it costs about
/// b - log2(error) bits of precision. `prng` (tests) fixes that error; default: OS entropy.
/// Throws InvalidArgument naming `noise_flooding_bits` if 2^b and the scale do not fit in Q_l.
Plaintext decrypt(const SecretKey& sk, const Ciphertext& ct, int flooding_bits = 0,
                  const Prng* prng = nullptr);

/// Tensor product; scale = product of the scales. Throws if log2(scale) would reach log2(Q_l).
Ciphertext multiply(const Ciphertext& a, const Ciphertext& b);
/// out = ct * pt (NTT form, slot-wise), scale = the product of the scales. `out` has ct's shape
/// and may be ct itself. Throws InvalidArgument naming `plain` if the scale would reach Q_l.
void multiply_plain(const Ciphertext& ct, const Plaintext& pt, Ciphertext& out);
void multiply_plain_inplace(Ciphertext& ct, const Plaintext& pt);
/// sum_i cts[i] * pts[i] in one pass (poly::dot_broadcast): the inner sums of baby-step
/// giant-step linear transforms (Halevi-Shoup 2018), which as separate products and additions
/// read and write a ciphertext three times per term. Every ciphertext has the same size and
/// level, every plaintext that level; the scales of the products agree (tolerance
/// kScaleTolerance) and become the result's.
/// @throws InvalidArgument naming `encrypted` or `plain` (empty lists, different lengths,
///         mismatched size, level or scale) as multiply_plain does.
Ciphertext multiply_plain_sum(const std::vector<const Ciphertext*>& cts,
                              const std::vector<const Plaintext*>& pts);
void add_plain_inplace(Ciphertext& ct, const Plaintext& pt, bool subtract);
/// Divides by the block of primes holding q_l (rounding) and drops it: scale /= their product
/// (one prime, q_l, with SEAL's default blocks; EncryptionParameters::rescale_groups). Throws at
/// a level in q_0's block.
void rescale_to_next_inplace(Ciphertext& ct);
/// The level and scale a rescale of `ct` lands on (rescale_to_next_inplace and the fused
/// Evaluator::relinearize_rescale share it). Throws InvalidArgument naming `encrypted` at level 0
/// or in q_0's block, or when the new scale would be out of range.
struct RescaleStep {
  std::size_t target;
  double scale;
};
RescaleStep rescale_step(const Ciphertext& ct);
/// ModRaise (Cheon-Han-Kim-Kim-Song, Eurocrypt 2018, §3.1 "modulus raising"): lifts a size-2
/// ciphertext from a level inside q_0's rescale block (level < rescale_groups[0]) to the top
/// level. Each coefficient of c0 and c1 is taken as its centered representative modulo Q_level
/// (exact RNS conversion, Halevi-Polyakov-Shoup 2019) and reduced modulo the primes above, so
/// the phase becomes m + Q_level * I(X) with |I| bounded by about the secret's Hamming weight
/// (the term that bootstrapping's EvalMod removes). The scale is kept. Costs one inverse NTT
/// over Q_level, one conversion and one forward NTT over Q_top.
/// @throws InvalidArgument naming `encrypted` if it is not CKKS, not size 2, above q_0's block,
///         or if the context has no level above that block.
Ciphertext mod_raise(const Ciphertext& ct);
/// ct * X^k (negacyclic, k in [0, 2N); X^N = -1): an exact product, so the scale and level are
/// unchanged. With SEAL's slot order (generator 3) X^(N/2) multiplies slot j by i * (-1)^j.
/// @throws InvalidArgument naming `encrypted` (not CKKS) or `k` (>= 2N).
void multiply_monomial_inplace(Ciphertext& ct, std::size_t k);
/// ct *= value, the real constant taken as round(value * scale) (exact in RNS however large:
/// value * scale is split as m * 2^e with m a 53-bit integer); ct's scale is multiplied by
/// `scale`. No plaintext is built (OpenFHE's EvalMult by a double; SEAL encodes a constant
/// plaintext instead).
/// @throws InvalidArgument naming `value` (not finite) or `scale` (below 1, not finite, or a
///         product scale that would reach Q at ct's level).
void multiply_scalar_inplace(Ciphertext& ct, double value, double scale);
/// constant + sum_i values[i] * cts[i] at `level` and scale `scale` in one pass: each term's
/// integer multiplier is round(values[i] * scale / cts[i].scale) (so every product lands on
/// `scale`), the constant round(constant * scale); ciphertexts above `level` are read at its
/// limbs only (no mod-switched copies). The leaves of a Chebyshev-basis polynomial evaluation.
/// @throws InvalidArgument naming `encrypted` (empty, not size 2, below `level`, a term whose
///         multiplier scale scale / cts[i].scale is below 1) or `scale` (not finite or beyond
///         Q at `level`) or `values` (a length other than the ciphertexts', not finite).
Ciphertext scalar_combination(const std::vector<const Ciphertext*>& cts,
                              const std::vector<double>& values, double constant, double scale,
                              std::size_t level);
/// ct += value (real) at ct's scale: round(value * ct.scale) added to c0's constant term.
/// @throws InvalidArgument naming `value` (not finite or beyond Q at ct's level).
void add_scalar_inplace(Ciphertext& ct, double value);
/// Drops the last prime without dividing (level alignment; the scale is unchanged).
void mod_switch_to_next_inplace(Ciphertext& ct);
/// The same for a plaintext.
void mod_switch_to_next_inplace(Plaintext& pt);

}  // namespace veil::ckks
