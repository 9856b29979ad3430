// Evaluator: homomorphic operations (SEAL's Evaluator API), dispatching to the scheme.
// Every method checks its operands (same context, same device, matching levels) and throws
// InvalidArgument / TypeMismatch naming the argument otherwise.
#pragma once
#include <vector>

#include "veil/ckks/bsgs.h"
#include "veil/rlwe/keyswitch.h"
#include "veil/rlwe/objects.h"

namespace veil {

// Throughout: a ciphertext operand is initialized, of this evaluator's context (same
// parameters and word size), of size >= 2 and in the scheme's form (BFV coefficient form unless a
// method says it takes NTT form, BGV and CKKS NTT form), checked by rlwe/checks.h's
// check_ciphertext; two operands also share device, level, form and key set
// (check_ciphertext_pair). A result that would be transparent (every polynomial but c0 zero:
// decryptable without the key) throws InvalidArgument naming the operation
// (check_not_transparent). Results keep their operands' key set, level and device.
/// Homomorphic operations on ciphertexts of one context (SEAL's Evaluator), dispatching to the
/// scheme: BFV (Fan-Vercauteren, eprint 2012/144), BGV (Brakerski-Gentry-Vaikuntanathan, ITCS
/// 2012; full RNS by Kim-Polyakov-Zucca, Asiacrypt 2021) or CKKS (Cheon-Kim-Kim-Song, Asiacrypt
/// 2017; full RNS by Cheon-Han-Kim-Kim-Song, SAC 2018).
class Evaluator {
 public:
  /// @param ctx the context every operand must belong to.
  /// @throws InvalidArgument naming `context` when it is empty.
  explicit Evaluator(ContextPtr ctx);

  /// a + b, slot- or coefficient-wise (SEAL's add). Sizes may differ: the sum has the larger.
  /// BFV operands may both be in NTT form (transform_to_ntt). BGV: b is brought to a's
  /// correction factor first; CKKS: the scales must agree (ckks::check_scales).
  /// @param a the first operand (`encrypted1` in messages).
  /// @param b the second operand (`encrypted2`).
  /// @return a + b, of the larger size, at the operands' level (and scale).
  /// @throws InvalidArgument naming `encrypted1` or `encrypted2` (invalid, another context,
  ///         level, form or key set; CKKS scales apart), or `add` for a transparent result;
  ///         TypeMismatch naming `encrypted2` on another device.
  Ciphertext add(const Ciphertext& a, const Ciphertext& b) const;
  /// a += b (add, in place; a grows to b's size when b is larger).
  /// @param a the first operand (`encrypted1`), overwritten by the sum.
  /// @param b the second operand (`encrypted2`).
  /// @throws as add.
  void add_inplace(Ciphertext& a, const Ciphertext& b) const;
  /// a - b (SEAL's sub); as add otherwise.
  /// @param a the minuend (`encrypted1`).
  /// @param b the subtrahend (`encrypted2`).
  /// @return a - b, of the larger size.
  /// @throws as add, naming `sub` for a transparent result.
  Ciphertext sub(const Ciphertext& a, const Ciphertext& b) const;
  /// a -= b (sub, in place).
  /// @param a the minuend (`encrypted1`), overwritten by the difference.
  /// @param b the subtrahend (`encrypted2`).
  /// @throws as sub.
  void sub_inplace(Ciphertext& a, const Ciphertext& b) const;
  /// -a, every polynomial negated (BFV: either form).
  /// @param a a ciphertext of this context (`encrypted`).
  /// @return -a, same size, level and form.
  /// @throws InvalidArgument naming `encrypted` for an invalid ciphertext.
  Ciphertext negate(const Ciphertext& a) const;
  /// a = -a.
  /// @param a a ciphertext of this context (`encrypted`), negated in place.
  /// @throws as negate.
  void negate_inplace(Ciphertext& a) const;
  /// The sum of one or more ciphertexts, left to right (SEAL's add_many).
  /// @param cts at least one ciphertext, all valid (each checked, even a single one).
  /// @return the sum, of the largest size.
  /// @throws InvalidArgument naming `encrypteds` (empty, or an invalid element) or the
  ///         operands of add.
  Ciphertext add_many(const std::vector<Ciphertext>& cts) const;

  /// a + p (SEAL's add_plain). BFV and BGV: p in coefficient form mod t (BatchEncoder), BFV
  /// scaling it by Delta = floor(Q/t), BGV lifting it to a's level times a's correction factor;
  /// CKKS: p at a's level and scale (NTT form, from CKKSEncoder).
  /// @param a a ciphertext of this context (`encrypted`).
  /// @param p a plaintext of this context for a's scheme (`plain`).
  /// @return a + p, same size, level and scale as a.
  /// @throws InvalidArgument naming `encrypted` (invalid) or `plain` (empty, another context,
  ///         the wrong form, level or scale).
  Ciphertext add_plain(const Ciphertext& a, const Plaintext& p) const;
  /// a - p; as add_plain.
  /// @param a a ciphertext of this context (`encrypted`).
  /// @param p a plaintext of this context for a's scheme (`plain`).
  /// @return a - p, same size, level and scale as a.
  /// @throws as add_plain.
  Ciphertext sub_plain(const Ciphertext& a, const Plaintext& p) const;
  /// a * p (SEAL's multiply_plain): size and level unchanged; CKKS scale multiplied by p's (no
  /// rescale). BFV: a may be in NTT form, and p may be one from transform_to_ntt at a's level.
  /// @param a a ciphertext of this context (`encrypted`).
  /// @param p a plaintext of this context for a's scheme (`plain`).
  /// @return a * p, a's size and level (CKKS: the product scale).
  /// @throws InvalidArgument naming `encrypted` (invalid), `plain` (empty, another context, the
  ///         wrong form or level; CKKS: a product scale out of range), or `multiply_plain` for a
  ///         transparent result (for example a zero plaintext).
  Ciphertext multiply_plain(const Ciphertext& a, const Plaintext& p) const;
  /// a += p.
  /// @param a a ciphertext of this context (`encrypted`), overwritten by the sum.
  /// @param p a plaintext of this context for a's scheme (`plain`).
  /// @throws as add_plain.
  void add_plain_inplace(Ciphertext& a, const Plaintext& p) const;
  /// a -= p.
  /// @param a a ciphertext of this context (`encrypted`), overwritten by the difference.
  /// @param p a plaintext of this context for a's scheme (`plain`).
  /// @throws as add_plain.
  void sub_plain_inplace(Ciphertext& a, const Plaintext& p) const;
  /// a *= p.
  /// @param a a ciphertext of this context (`encrypted`), overwritten by the product.
  /// @param p a plaintext of this context for a's scheme (`plain`).
  /// @throws as multiply_plain.
  void multiply_plain_inplace(Ciphertext& a, const Plaintext& p) const;

  /// Tensor product (size s1 + s2 - 1); relinearize afterwards. BFV: HPS or BEHZ by the
  /// context's mul_method (Halevi-Polyakov-Shoup, CT-RSA 2019; Bajard-Eynard-Hasan-Zucca, SAC
  /// 2016); BGV: the product in NTT form, correction factors multiplied; CKKS: scales multiplied
  /// (no rescale).
  /// @param a the first operand (`encrypted1`).
  /// @param b the second operand (`encrypted2`), at a's level.
  /// @return the tensor product, of size a.size() + b.size() - 1, at the operands' level.
  /// @throws InvalidArgument naming `encrypted1` or `encrypted2` (invalid, another context,
  ///         level or key set; BFV in NTT form; CKKS: a product scale out of range);
  ///         TypeMismatch naming `encrypted2` on another device.
  Ciphertext multiply(const Ciphertext& a, const Ciphertext& b) const;
  /// a * a (multiply with one operand read once).
  /// @param a a ciphertext of this context (`encrypted`).
  /// @return a * a, of size 2 * a.size() - 1.
  /// @throws InvalidArgument naming `encrypted` for an invalid ciphertext.
  Ciphertext square(const Ciphertext& a) const;
  /// Size 3 -> 2: key switching of c2 with the relinearization key (hybrid key switching,
  /// Han-Ki, CT-RSA 2020: ModUp of the digits, inner product, ModDown by P).
  /// @param a a size-3 ciphertext (`encrypted`).
  /// @param rlk the context's relinearization keys (`relin_keys`; a compact key is read as
  ///        KSwitchKey::compact says).
  /// @return a size-2 ciphertext decrypting under s to what a decrypted to.
  /// @throws InvalidArgument naming `encrypted` (invalid, or of size other than 3) or
  ///         `relin_keys` (empty, another context or key set); TypeMismatch naming `relin_keys`
  ///         on another device.
  Ciphertext relinearize(const Ciphertext& a, const RelinKeys& rlk) const;
  /// a = relinearize(a, rlk).
  /// @param a a size-3 ciphertext (`encrypted`), replaced by its size-2 relinearization.
  /// @param rlk the context's relinearization keys (`relin_keys`).
  /// @throws as relinearize.
  void relinearize_inplace(Ciphertext& a, const RelinKeys& rlk) const;
  /// Product of all inputs by a balanced tree, relinearizing after each multiplication.
  /// @param cts at least one ciphertext, all valid and at one level.
  /// @param rlk the context's relinearization keys (`relin_keys`).
  /// @return the product, relinearized after each multiplication.
  /// @throws InvalidArgument naming `encrypteds` (empty, or an invalid element), `relin_keys`,
  ///         or the operands of multiply.
  Ciphertext multiply_many(const std::vector<Ciphertext>& cts, const RelinKeys& rlk) const;
  /// a^exponent (exponent >= 1) by square-and-multiply with relinearization.
  /// @param a a ciphertext of this context (`encrypted`).
  /// @param exponent the power, at least 1.
  /// @param rlk the context's relinearization keys (`relin_keys`).
  /// @return a^exponent, relinearized to size 2 when exponent > 1 (a copy of a when it is 1).
  /// @throws InvalidArgument naming `encrypted`, `exponent` (0) or `relin_keys`.
  Ciphertext exponentiate(const Ciphertext& a, std::uint64_t exponent, const RelinKeys& rlk) const;

  /// Applies X -> X^galois_elt and switches back to s (SEAL's apply_galois).
  /// @param a a size-2 ciphertext (`encrypted`).
  /// @param galois_elt an odd element below 2N (1 is the identity and needs no key).
  /// @param gk Galois keys holding galois_elt's key (`galois_keys`).
  /// @return the automorphism of a, a size-2 ciphertext under s.
  /// @throws InvalidArgument naming `encrypted` (invalid, size other than 2), `galois_elt`, or
  ///         `galois_keys` (another context, key set, or no key for the element); TypeMismatch
  ///         naming `galois_keys` on another device.
  Ciphertext apply_galois(const Ciphertext& a, u32 galois_elt, const GaloisKeys& gk) const;
  /// BFV/BGV: rotates both rows left by `steps` (negative: right; 0 returns a copy, no key).
  /// Without a key for the step it composes the power-of-two keys along the step's non-adjacent
  /// form (naf_decompose).
  /// @param a a size-2 BFV/BGV ciphertext (`encrypted`).
  /// @param steps the rotation, |steps| < N/2.
  /// @param gk Galois keys (`galois_keys`).
  /// @return the rotated ciphertext.
  /// @throws InvalidArgument naming `encrypted`, `steps` (|steps| >= N/2), `galois_keys` (no
  ///         key for the step or its non-adjacent form), or `rotate_rows` on a CKKS context.
  Ciphertext rotate_rows(const Ciphertext& a, int steps, const GaloisKeys& gk) const;
  /// BFV/BGV: swaps the two rows (Galois element 2N - 1).
  /// @param a a size-2 BFV/BGV ciphertext (`encrypted`).
  /// @param gk Galois keys holding the key of 2N - 1 (`galois_keys`).
  /// @return the ciphertext with its rows swapped.
  /// @throws as apply_galois, or naming `rotate_columns` on a CKKS context.
  Ciphertext rotate_columns(const Ciphertext& a, const GaloisKeys& gk) const;
  /// Hoisted rotations: one decomposition (ModUp) shared by every step (Halevi-Shoup 2018,
  /// Phantom, Yang et al. 2024 §III-C); each result equals rotate_rows(a, step) bit for bit.
  /// @param a a size-2 ciphertext (`encrypted`).
  /// @param steps rotation steps, each with a key in gk (no composition).
  /// @param gk Galois keys (`galois_keys`).
  /// @return one rotated ciphertext per step, in the order of `steps`.
  /// @throws InvalidArgument naming `encrypted` (invalid, size other than 2) or `galois_keys`
  ///         (another context, or a missing key); TypeMismatch naming `galois_keys` on another
  ///         device.
  std::vector<Ciphertext> rotate_many(const Ciphertext& a, const std::vector<int>& steps,
                                      const GaloisKeys& gk) const;

  /// BGV: modulus switching to the next level (Phantom, Yang et al. 2024 eq. 3); BFV: c ->
  /// round(c / q_l) over Q_{l-1} (SEAL's); CKKS: drops the last prime without rescaling (level
  /// alignment).
  /// @param a a ciphertext of this context above level 0 (`encrypted`).
  /// @return a at level - 1 (BGV: correction factor updated; CKKS: scale unchanged).
  /// @throws InvalidArgument naming `encrypted` (invalid, or at level 0).
  Ciphertext mod_switch_to_next(const Ciphertext& a) const;
  /// a = mod_switch_to_next(a).
  /// @param a a ciphertext of this context above level 0 (`encrypted`), switched in place.
  /// @throws as mod_switch_to_next.
  void mod_switch_to_next_inplace(Ciphertext& a) const;
  /// Switches down to `level` (<= the current level) by repeated mod_switch_to_next.
  /// @param a a ciphertext of this context (`encrypted`).
  /// @param level the target level, at most a's.
  /// @return a at `level` (a copy when already there).
  /// @throws InvalidArgument naming `encrypted` or `level` (above the ciphertext's).
  Ciphertext mod_switch_to(const Ciphertext& a, std::size_t level) const;
  /// CKKS plaintexts: drop primes down to `level`.
  /// @param p a CKKS plaintext of this context in NTT form (`plain`).
  /// @param level the target level, at most p's.
  /// @return p's limbs 0..level, scale unchanged.
  /// @throws InvalidArgument naming `plain` (not CKKS, empty, another context) or `level`
  ///         (above the plaintext's); TypeMismatch naming `plain` on another device.
  Plaintext mod_switch_to(const Plaintext& p, std::size_t level) const;
  /// CKKS: divides by the rescale block holding q_l (the last prime by default) and drops it
  /// (scale /= the block's product).
  /// @throws InvalidArgument naming `encrypted` (invalid, not CKKS, or at a level in q_0's
  ///         block).
  /// @param a a CKKS ciphertext of this context above q_0's block (`encrypted`).
  /// @return a one rescale block down (Context::rescale_target), scale divided by the block.
  Ciphertext rescale_to_next(const Ciphertext& a) const;
  /// a = rescale_to_next(a).
  /// @param a a CKKS ciphertext of this context above q_0's block (`encrypted`).
  /// @throws as rescale_to_next.
  void rescale_to_next_inplace(Ciphertext& a) const;
  /// CKKS: relinearize then rescale in one key switch (size 3 -> 2, one level block down; the
  /// ModDown by P fused with the rescale: key_switch_rescale). Equal to
  /// rescale_to_next(relinearize(a)) up to the rounding of one division instead of two.
  /// @throws InvalidArgument naming `encrypted` (not CKKS, size != 3, in q_0's block, scale out
  ///         of range) or `relin_keys` (empty, other context or key set).
  /// @param a a size-3 CKKS ciphertext (`encrypted`).
  /// @param rlk the context's relinearization keys (`relin_keys`).
  /// @return a size-2 ciphertext one rescale block down, scale divided by the block.
  Ciphertext relinearize_rescale(const Ciphertext& a, const RelinKeys& rlk) const;
  /// CKKS: multiply, relinearize and rescale (multiply, then relinearize_rescale).
  /// @param a the first size-2 CKKS operand (`encrypted1`).
  /// @param b the second size-2 CKKS operand (`encrypted2`), at a's level.
  /// @param rlk the context's relinearization keys (`relin_keys`).
  /// @return a size-2 ciphertext one rescale block down.
  /// @throws as multiply and relinearize_rescale.
  Ciphertext multiply_relinearize_rescale(const Ciphertext& a, const Ciphertext& b,
                                          const RelinKeys& rlk) const;
  /// CKKS: rotates the N/2 slots left by `steps` (negative: right; 0 returns a copy, no key;
  /// NAF composition without a direct key).
  /// @throws InvalidArgument naming `encrypted`, `steps` (|steps| >= N/2), `galois_keys` (no
  ///         key for the step or its non-adjacent form) or `rotate_vector` on a BFV/BGV context.
  /// @param a a size-2 CKKS ciphertext (`encrypted`).
  /// @param steps the rotation, |steps| < N/2.
  /// @param gk Galois keys (`galois_keys`).
  /// @return the rotated ciphertext.
  Ciphertext rotate_vector(const Ciphertext& a, int steps, const GaloisKeys& gk) const;
  /// CKKS: complex conjugation of every slot (Galois element 2N - 1).
  /// @param a a size-2 CKKS ciphertext (`encrypted`).
  /// @param gk Galois keys holding the key of 2N - 1 (`galois_keys`).
  /// @return the conjugated ciphertext.
  /// @throws as apply_galois, or naming `conjugate` on a BFV/BGV context.
  Ciphertext conjugate(const Ciphertext& a, const GaloisKeys& gk) const;

  /// Key switching from one secret to another (c0, c1) -> (c0, 0) + KeySwitch(c1): the result
  /// decrypts under the key's target secret (key_id) to what `a` decrypted to under its source,
  /// plus the key-switching noise. Used by sparse-secret encapsulation in CKKS bootstrapping.
  /// @throws InvalidArgument naming `encrypted` (size != 2, above the key's max_level) or
  ///         `switching_key` (empty, other context or device, or made for another source key).
  /// @param a a size-2 ciphertext under the key's source secret (`encrypted`).
  /// @param key a switching key from a's secret to the target secret (`switching_key`).
  /// @return a size-2 ciphertext under the target secret, at a's level, key set key.key_id().
  Ciphertext switch_key(const Ciphertext& a, const SwitchingKey& key) const;
  /// CKKS ModRaise (ckks::mod_raise; Cheon-Han-Kim-Kim-Song, Eurocrypt 2018, §3.1): from a
  /// level inside q_0's rescale block to the top level.
  /// @param a a size-2 CKKS ciphertext inside q_0's block (`encrypted`).
  /// @return a at the top level, scale kept; its phase gains a multiple of Q_level.
  /// @throws InvalidArgument naming `encrypted` (invalid, not CKKS, not size 2, above q_0's
  ///         block, or no level above that block).
  Ciphertext mod_raise(const Ciphertext& a) const;
  /// sum_i cts[i] * pts[i] in one pass, like OpenFHE's EvalLinearWSum with plaintext weights.
  /// CKKS: ckks::multiply_plain_sum. BFV/BGV: one accumulator in NTT form; BFV ciphertexts enter
  /// it one at a time and the sum leaves it once (2|Q_l| + 2|Q_l|/terms limb-NTTs per term
  /// against 5|Q_l| for multiply_plain and add), BGV's need none. Plaintexts may be in NTT form
  /// at the ciphertexts' level (transform_to_ntt), which saves their lift and transform.
  /// Equal word for word to the multiply_plain and add chain.
  /// @param cts one or more ciphertexts of this context at one level and of one key set (BGV:
  ///        one correction factor); sizes may differ (the sum has the largest).
  /// @param pts one plaintext per ciphertext.
  /// @return the sum of the products, of the largest size, at the ciphertexts' level.
  /// @throws InvalidArgument naming `encrypted` (none, null, other context, device, key set,
  ///         level or correction factor) or `plain` (count, null, other context, or NTT form at
  ///         another level); BFV/BGV on the CPU, naming multiply_plain_sum, for a transparent
  ///         result (every plaintext zero), as multiply_plain.
  Ciphertext multiply_plain_sum(const std::vector<const Ciphertext*>& cts,
                                const std::vector<const Plaintext*>& pts) const;
  /// BFV/BGV: `plain` in NTT form at `level`, for multiply_plain and multiply_plain_sum on
  /// ciphertexts at that level (SEAL's transform_to_ntt(plain, parms_id)): the lift to Q_level
  /// and the NTT are done once instead of in every product.
  /// @param plain a BFV/BGV plaintext of this context in coefficient form.
  /// @param level 0..max level.
  /// @return the plaintext lifted to Q_level in NTT form.
  /// @throws InvalidArgument naming `plain` (empty, CKKS, already in NTT form, other context)
  ///         or `level`.
  Plaintext transform_to_ntt(const Plaintext& plain, std::size_t level) const;
  /// BFV: the ciphertext's polynomials in NTT form over Q_level (SEAL's
  /// transform_to_ntt(encrypted)). add, sub, negate, multiply_plain (with a plaintext from
  /// transform_to_ntt or in coefficient form) and multiply_plain_sum take NTT-form ciphertexts,
  /// need no transform and return NTT-form results, so a chain of plaintext products and sums
  /// pays one forward and one inverse transform. Serialization keeps the form; every other
  /// operation (decryption included) refuses NTT form, naming transform_from_ntt. The words
  /// transform back exactly (transform_from_ntt).
  /// @param encrypted a BFV ciphertext of this context in coefficient form.
  /// @return the same ciphertext in NTT form.
  /// @throws InvalidArgument naming `encrypted`: another scheme (BGV and CKKS ciphertexts are
  ///         always in NTT form), already in NTT form, empty or of another context.
  Ciphertext transform_to_ntt(const Ciphertext& encrypted) const;
  /// encrypted = transform_to_ntt(encrypted).
  /// @param encrypted a BFV ciphertext of this context in coefficient form.
  /// @throws as transform_to_ntt.
  void transform_to_ntt_inplace(Ciphertext& encrypted) const;
  /// BFV: back to coefficient form (SEAL's transform_from_ntt).
  /// @param encrypted a BFV ciphertext of this context in NTT form.
  /// @return the same ciphertext in coefficient form.
  /// @throws InvalidArgument naming `encrypted`: another scheme, already in coefficient form,
  ///         empty or of another context.
  Ciphertext transform_from_ntt(const Ciphertext& encrypted) const;
  /// encrypted = transform_from_ntt(encrypted).
  /// @param encrypted a BFV ciphertext of this context in NTT form.
  /// @throws as transform_from_ntt.
  void transform_from_ntt_inplace(Ciphertext& encrypted) const;
  /// CKKS: plaintext-matrix products by baby-step giant-step with double hoisting (Bossuat et
  /// al., Eurocrypt 2021, §4, Alg. 6; ckks/bsgs.h): outputs[o] = rescale(sum_G rot_G(sum_t
  /// t.plain * rot_t.step(inputs[t.input]))). The baby rotations of an input share one ModUp and
  /// stay in Q_l ∪ P, the inner sums run there, each giant step takes only its sum's c1 down to
  /// Q_l and key-switches it back into Q_l ∪ P (its c0 stays there), and one ModDown per output,
  /// fused with the rescale, ends it. Equal to
  /// rotate_many + multiply_plain_sum + rotate_vector + add + rescale_to_next up to roundings
  /// (not word for word), with fewer ModDowns.
  /// @param inputs size-2 ciphertexts at one level l that can rescale (one key set).
  /// @param outputs per output, its giant steps; each term's plaintext over Q_l ∪ P at level l
  ///        (CKKSEncoder::encode_extended, or encode_extended_periodic with the term's
  ///        `shift`: stored as one period, read at j >> shift), all products at one scale.
  /// @param galois_keys a key for every nonzero baby and giant step (no NAF composition).
  /// @return one ciphertext per output, at Context::rescale_target(l), with the first term's
  ///         product scale divided by the rescale block's primes.
  /// @throws InvalidArgument naming `inputs`, `outputs`, `plain` (also a word count other
  ///         than its shift's, or a shift above log2(N) - 2), `galois_keys` (another context,
  ///         device or key set; a missing key), `steps` or `encrypted`
  ///         (ckks::multiply_diagonals_bsgs), `inputs` for an invalid or null ciphertext or
  ///         ones on different devices, or `encrypted` when the context is not CKKS.
  std::vector<Ciphertext> multiply_diagonals_bsgs(
      const std::vector<const Ciphertext*>& inputs,
      const std::vector<std::vector<ckks::BsgsGiant>>& outputs,
      const GaloisKeys& galois_keys) const;
  /// CKKS: constant + sum_i values[i] * cts[i] at `level` and `scale` in one pass
  /// (ckks::scalar_combination); the ciphertexts must share one key set.
  /// @param cts size-2 CKKS ciphertexts at `level` or above.
  /// @param values one real weight per ciphertext.
  /// @param constant the real constant term.
  /// @param scale the result's scale.
  /// @param level the result's level.
  /// @return the combination at `level` and `scale`.
  /// @throws InvalidArgument naming `encrypted` (invalid, null, another key set, not CKKS, or
  ///         as ckks::scalar_combination), `scale` or `values` (ckks::scalar_combination);
  ///         TypeMismatch naming `encrypted` for ciphertexts on different devices.
  Ciphertext scalar_combination(const std::vector<const Ciphertext*>& cts,
                                const std::vector<double>& values, double constant, double scale,
                                std::size_t level) const;
  /// CKKS: a * value, the real constant at `scale` (ckks::multiply_scalar_inplace): scale
  /// multiplied by `scale`, level unchanged; no plaintext is encoded.
  /// @param a a CKKS ciphertext (`encrypted`).
  /// @param value the real constant.
  /// @param scale the constant's scale (at least 1).
  /// @return a * value at scale a.scale() * scale.
  /// @throws InvalidArgument naming `encrypted` (invalid, not CKKS), `value` (not finite) or
  ///         `scale` (ckks::multiply_scalar_inplace).
  Ciphertext multiply_scalar(const Ciphertext& a, double value, double scale) const;
  /// CKKS: a + value at a's scale (ckks::add_scalar_inplace).
  /// @param a a CKKS ciphertext (`encrypted`).
  /// @param value the real constant.
  /// @return a + value, same level and scale.
  /// @throws InvalidArgument naming `encrypted` (invalid, not CKKS) or `value` (not finite or
  ///         beyond Q).
  Ciphertext add_scalar(const Ciphertext& a, double value) const;
  /// CKKS: a * X^k (ckks::multiply_monomial_inplace), exact: level and scale unchanged.
  /// @param a a CKKS ciphertext (`encrypted`).
  /// @param k the exponent, below 2N.
  /// @return a * X^k.
  /// @throws InvalidArgument naming `encrypted` (invalid, not CKKS) or `k` (>= 2N).
  Ciphertext multiply_monomial(const Ciphertext& a, std::size_t k) const;

  /// The context this evaluator was built for.
  /// @return the context.
  const ContextPtr& context() const { return ctx_; }

 private:
  void check(const Ciphertext& a, const char* what, bool bfv_ntt = false) const;
  /// Checks each operand (named `what`: not null, check_ciphertext, on the first one's device,
  /// one key set) and returns their common key set.
  u64 check_all(const std::vector<const Ciphertext*>& cts, bool bfv_ntt = false,
                const char* what = "encrypted") const;
  Ciphertext rotate_generic(const Ciphertext& a, int steps, const GaloisKeys& gk) const;
  // The automorphism `elt` of `a` from its shared decomposition; the result's key set is
  // `key_id` (the caller checked the keys: check_key).
  Ciphertext galois_with_digits(const Ciphertext& a, const KeySwitchDigits& digits, u32 elt,
                                const GaloisKeys& gk, u64 key_id) const;
  ContextPtr ctx_;
};

/// Signed-digit (non-adjacent form) decomposition of a step into powers of two (SEAL's
/// naf-based rotation when no key exists for the step).
/// @param step the rotation step (any sign).
/// @return signed powers of two (+-2^i, ascending i, no two adjacent) summing to step; empty
///         for 0.
std::vector<int> naf_decompose(int step);

}  // namespace veil
