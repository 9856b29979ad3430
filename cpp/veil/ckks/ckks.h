// CKKS (Cheon-Kim-Kim-Song 2017) in full RNS (Cheon-Han-Kim-Kim-Song 2018): ciphertexts and
// plaintexts in NTT form over Q_level, each with a scale; rescaling divides by the last prime.
//
// Operand checks: these functions run behind api/ (Evaluator, Encryptor, Decryptor), which checks
// every ciphertext and key once (rlwe/checks.h: check_ciphertext, check_ciphertext_pair,
// check_key). They check only what is the scheme's own (plaintexts, scales, levels left, noise)
// and do not check their ciphertext operands again: call them through api/.
#pragma once
#include <vector>

#include "veil/ring/prng.h"
#include "veil/rlwe/objects.h"

namespace veil::ckks {

/// Relative tolerance within which two scales count as equal (SEAL compares scales for
/// equality after rescaling by nearly-equal primes; differences beyond this are an error).
inline constexpr double kScaleTolerance = 1e-6;

/// Checks that two scales agree within kScaleTolerance (relative).
/// @param a the first scale.
/// @param b the second scale.
/// @param what the argument's name in messages.
/// @throws InvalidArgument naming `what` if the scales differ by more than the tolerance.
void check_scales(double a, double b, const char* what);

/// Public-key encryption (Cheon-Kim-Kim-Song, Asiacrypt 2017, Enc): an encryption of zero
/// at pt's level (rlwe/encrypt.h, NTT form) plus pt in c0; the result takes pt's scale.
/// @param pk a public key of the context.
/// @param pt a CKKS plaintext in NTT form, at least (level + 1) * N words.
/// @param prng the randomness of u and the errors.
/// @return a size-2 NTT-form ciphertext at pt's level and scale.
/// @throws InvalidArgument naming `plain` (empty, another context, coefficient form, too few
///         words); TypeMismatch naming `plain` on another device.
Ciphertext encrypt(const PublicKey& pk, const Plaintext& pt, const Prng& prng);
/// Secret-key encryption: (-a s + e + pt, a) at pt's level, a from a seed (rlwe/encrypt.h).
/// @param sk the secret key.
/// @param pt a CKKS plaintext in NTT form, at least (level + 1) * N words.
/// @param prng the randomness of a and e.
/// @return a size-2 NTT-form ciphertext at pt's level and scale.
/// @throws as encrypt.
Ciphertext encrypt_symmetric(const SecretKey& sk, const Plaintext& pt, const Prng& prng);
/// The phase c0 + c1 s as an NTT-form plaintext at the ciphertext's level and scale. With
/// flooding_bits > 0 a fresh error uniform in [-2^b, 2^b) is added first (noise flooding against
/// IND-CPA-D key recovery, Li-Micciancio 2021; OpenFHE's NOISE_FLOODING_DECRYPT): it costs about
/// b - log2(error) bits of precision. `prng` (tests) fixes that error; default: OS entropy.
/// @param sk the secret key.
/// @param ct a CKKS ciphertext (any size).
/// @param flooding_bits b, 0 for none.
/// @param prng the flooding error's randomness, or null for OS entropy.
/// @return the phase, an NTT-form plaintext at ct's level and scale.
/// @throws InvalidArgument naming `noise_flooding_bits` if b
///         exceeds 62 or 2^b and the scale do not fit in Q_l.
Plaintext decrypt(const SecretKey& sk, const Ciphertext& ct, int flooding_bits = 0,
                  const Prng* prng = nullptr);

/// Tensor product in NTT form (size s1 + s2 - 1); scale = product of the scales.
/// @param a the first CKKS ciphertext (`encrypted1`).
/// @param b the second CKKS ciphertext (`encrypted2`), at a's level.
/// @return the product at a's level.
/// @throws InvalidArgument naming `encrypted2` if log2(scale) would reach log2(Q_l) - 1.
Ciphertext multiply(const Ciphertext& a, const Ciphertext& b);
/// out = ct * pt (NTT form, slot-wise), scale = the product of the scales. `out` has ct's shape
/// and may be ct itself.
/// @param ct a CKKS ciphertext (`encrypted`).
/// @param pt a CKKS plaintext in NTT form at ct's level (`plain`).
/// @param out the product (resized to ct's shape).
/// @throws InvalidArgument naming `plain` (another context,
///         coefficient form, too few words, another level, or a scale that would reach Q_l);
///         TypeMismatch naming `plain` on another device.
void multiply_plain(const Ciphertext& ct, const Plaintext& pt, Ciphertext& out);
/// ct *= pt (multiply_plain with out = ct).
/// @param ct a CKKS ciphertext (`encrypted`), overwritten by the product.
/// @param pt a CKKS plaintext in NTT form at ct's level (`plain`).
/// @throws as multiply_plain.
void multiply_plain_inplace(Ciphertext& ct, const Plaintext& pt);
/// sum_i cts[i] * pts[i] in one pass (poly::dot_broadcast): the inner sums of baby-step
/// giant-step linear transforms (Halevi-Shoup 2018), which as separate products and additions
/// read and write a ciphertext three times per term. Every ciphertext has the same size and
/// level, every plaintext that level; the scales of the products agree (tolerance
/// kScaleTolerance) and become the result's.
/// @throws InvalidArgument naming `encrypted` or `plain` (empty lists, different lengths,
///         mismatched size, level or scale) as multiply_plain does.
/// @param cts one or more CKKS ciphertexts of one size and level.
/// @param pts one NTT-form plaintext per ciphertext, at that level.
/// @return the sum of the products, at the products' scale.
Ciphertext multiply_plain_sum(const std::vector<const Ciphertext*>& cts,
                              const std::vector<const Plaintext*>& pts);
/// ct += pt, or ct -= pt with `subtract` (c0 only; the scales must agree).
/// @param ct a CKKS ciphertext (`encrypted`), updated in place.
/// @param pt a CKKS plaintext in NTT form at ct's level and scale (`plain`).
/// @param subtract true: subtract pt instead of adding it.
/// @throws InvalidArgument naming `plain` (another context,
///         coefficient form, too few words, another level or scale); TypeMismatch naming
///         `plain` on another device.
void add_plain_inplace(Ciphertext& ct, const Plaintext& pt, bool subtract);
/// Divides by the block of primes holding q_l (rounding) and drops it: scale /= their product
/// (one prime, q_l, with SEAL's default blocks; EncryptionParameters::rescale_groups): the
/// full-RNS rescale of Cheon-Han-Kim-Kim-Song, SAC 2018.
/// @param ct a CKKS ciphertext above q_0's block (`encrypted`), replaced by the rescaled one.
/// @throws InvalidArgument naming `encrypted` (at level 0 or in q_0's block,
///         or a new scale out of range), as rescale_step.
void rescale_to_next_inplace(Ciphertext& ct);
/// The level and scale a rescale of `ct` lands on (rescale_to_next_inplace and the fused
/// Evaluator::relinearize_rescale share it). Throws InvalidArgument naming `encrypted` at level 0
/// or in q_0's block, or when the new scale would be out of range.
struct RescaleStep {
  /// The level after the rescale (Context::rescale_target of ct's level).
  std::size_t target;
  /// ct's scale divided by the primes dropped.
  double scale;
};
/// The target level and scale of a rescale of `ct` (see RescaleStep).
/// @param ct a CKKS ciphertext (`encrypted`).
/// @return the level and scale it rescales to.
/// @throws InvalidArgument naming `encrypted` (at level 0 or in q_0's block,
///         or a new scale out of range).
RescaleStep rescale_step(const Ciphertext& ct);
/// ModRaise (Cheon-Han-Kim-Kim-Song, Eurocrypt 2018, §3.1 "modulus raising"): lifts a size-2
/// ciphertext from a level inside q_0's rescale block (level < rescale_groups[0]) to the top
/// level. Each coefficient of c0 and c1 is taken as its centered representative modulo Q_level
/// (exact RNS conversion, Halevi-Polyakov-Shoup 2019) and reduced modulo the primes above, so
/// the phase becomes m + Q_level * I(X) with |I| bounded by about the secret's Hamming weight
/// (the term that bootstrapping's EvalMod removes). The scale is kept. Costs one inverse NTT
/// over Q_level, one conversion and one forward NTT over Q_top.
/// @throws InvalidArgument naming `encrypted` if it is not size 2, above q_0's block,
///         or if the context has no level above that block.
/// @param ct a size-2 CKKS ciphertext inside q_0's block (`encrypted`).
/// @return ct at the top level, NTT form, scale kept.
Ciphertext mod_raise(const Ciphertext& ct);
/// ct * X^k (negacyclic, k in [0, 2N); X^N = -1): an exact product, so the scale and level are
/// unchanged. With SEAL's slot order (generator 3) X^(N/2) multiplies slot j by i * (-1)^j.
/// @param ct a CKKS ciphertext in NTT form (`encrypted`), multiplied in place.
/// @param k the exponent, below 2N.
/// @throws InvalidArgument naming `encrypted` (not NTT form) or `k` (>= 2N).
void multiply_monomial_inplace(Ciphertext& ct, std::size_t k);
/// ct *= value, the real constant taken as round(value * scale) (exact in RNS however large:
/// value * scale is split as m * 2^e with m a 53-bit integer); ct's scale is multiplied by
/// `scale`. No plaintext is built (OpenFHE's EvalMult by a double; SEAL encodes a constant
/// plaintext instead).
/// @throws InvalidArgument naming `value` (not finite) or `scale` (below 1, not finite, or a
///         product scale that would reach Q at ct's level).
/// @param ct a CKKS ciphertext (`encrypted`), multiplied in place.
/// @param value the real constant.
/// @param scale the constant's scale, at least 1.
void multiply_scalar_inplace(Ciphertext& ct, double value, double scale);
/// constant + sum_i values[i] * cts[i] at `level` and scale `scale` in one pass: each term's
/// integer multiplier is round(values[i] * scale / cts[i].scale) (so every product lands on
/// `scale`), the constant round(constant * scale); ciphertexts above `level` are read at its
/// limbs only (no mod-switched copies). The leaves of a Chebyshev-basis polynomial evaluation.
/// @throws InvalidArgument naming `encrypted` (empty, not size 2, below `level`, a term whose
///         multiplier scale scale / cts[i].scale is below 1) or `scale` (not finite or beyond
///         Q at `level`) or `values` (a length other than the ciphertexts', not finite).
/// @param cts size-2 NTT-form CKKS ciphertexts at `level` or above, scales at most `scale`.
/// @param values one real weight per ciphertext.
/// @param constant the real constant term.
/// @param scale the result's scale.
/// @param level the result's level.
/// @return a size-2 ciphertext at `level` and `scale`.
Ciphertext scalar_combination(const std::vector<const Ciphertext*>& cts,
                              const std::vector<double>& values, double constant, double scale,
                              std::size_t level);
/// ct += value (real) at ct's scale: round(value * ct.scale) added to c0's constant term.
/// @param ct a CKKS ciphertext in NTT form (`encrypted`), updated in place.
/// @param value the real constant.
/// @throws InvalidArgument naming `encrypted` (not NTT form) or `value` (not
///         finite or beyond Q at ct's level).
void add_scalar_inplace(Ciphertext& ct, double value);
/// Drops the last prime without dividing (level alignment; the scale is unchanged).
/// @param ct a CKKS ciphertext above level 0 (`encrypted`), switched in place.
/// @throws InvalidArgument naming `encrypted` (at level 0).
void mod_switch_to_next_inplace(Ciphertext& ct);
/// The same for a plaintext.
/// @param pt a CKKS plaintext in NTT form above level 0 (`plain`), switched in place.
/// @throws InvalidArgument naming `plain` (coefficient form, at level 0).
void mod_switch_to_next_inplace(Plaintext& pt);

}  // namespace veil::ckks
