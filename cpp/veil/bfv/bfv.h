// BFV (Fan-Vercauteren 2012) in full RNS: ciphertexts in coefficient form over Q. Multiplication by
// HPS (Halevi-Polyakov-Shoup 2019; Al Badawi et al. 2021 §IV) or BEHZ (Bajard et al. 2016; Özcan et
// al. 2023 §III, SEAL's pipeline), chosen by EncryptionParameters::mul_method.
//
// Operand checks: these functions run behind api/ (Evaluator, Encryptor, Decryptor), which checks
// every ciphertext and key once (rlwe/checks.h: check_ciphertext, check_ciphertext_pair,
// check_key). They check only what is the scheme's own (plaintexts, scales, levels left, noise)
// and do not check their ciphertext operands again: call them through api/.
#pragma once
#include "veil/ring/prng.h"
#include "veil/rlwe/objects.h"

namespace veil::bfv {

/// c0 += round(Q m / t) (or -= when `subtract`), m: [N] coefficients in [0, t).
/// Rounds half up, as SEAL's multiply_add_plain_with_scaling_variant.
/// @param ctx a BFV context.
/// @param dev the device of m and c0.
/// @param m the message, [N] coefficients in [0, t).
/// @param c0 the ciphertext's first polynomial, [level+1][N] in coefficient form, updated.
/// @param subtract true: subtract instead of adding.
/// @param level c0's level.
void add_scaled_plain(const Context& ctx, const Device& dev, const u64* m, WordPtr c0,
                      bool subtract, std::size_t level);

/// Public-key encryption (Fan-Vercauteren, eprint 2012/144, SHE.Encrypt): an encryption of zero
/// at the top level (rlwe/encrypt.h) plus round(Q m / t) in c0 (add_scaled_plain).
/// @param pk a public key of a BFV context.
/// @param pt the message, N coefficients mod t (coefficient form).
/// @param prng the randomness of u and the errors.
/// @return a size-2 coefficient-form ciphertext at the top level.
/// @throws InvalidArgument naming `plain` (empty, other parameters or word size, NTT form);
///         TypeMismatch naming `plain` on another device.
Ciphertext encrypt(const PublicKey& pk, const Plaintext& pt, const Prng& prng);
/// Secret-key encryption: (-a s + e + round(Q m / t), a) at the top level, a from a seed.
/// @param sk the secret key.
/// @param pt the message, N coefficients mod t (coefficient form).
/// @param prng the randomness of a and e.
/// @return a size-2 coefficient-form ciphertext at the top level.
/// @throws as encrypt.
Ciphertext encrypt_symmetric(const SecretKey& sk, const Plaintext& pt, const Prng& prng);
/// round(t/Q * [c0 + c1 s + ...]_Q) mod t (HPS or BEHZ per mul_method), at any level
/// (Fan-Vercauteren, eprint 2012/144, SHE.Decrypt; the RNS scaling of Halevi-Polyakov-Shoup,
/// CT-RSA 2019, or Bajard-Eynard-Hasan-Zucca, SAC 2016).
/// @param sk the secret key.
/// @param ct a BFV ciphertext in coefficient form (`encrypted`).
/// @param check_noise test the noise budget (false: decrypt anyway).
/// @return the message, N coefficients mod t.
/// @throws InvalidArgument naming `encrypted`, with `check_noise`, when the noise budget is 0.
Plaintext decrypt(const SecretKey& sk, const Ciphertext& ct, bool check_noise = true);
/// Modulus switching to the next level: c -> round(c / q_l) over Q_{l-1} (SEAL's BFV
/// mod_switch_to_next).
/// @param ct a BFV ciphertext in coefficient form (`encrypted`), switched in place.
/// @throws InvalidArgument naming `encrypted` (at level 0).
void mod_switch_to_next_inplace(Ciphertext& ct);
/// SEAL's invariant noise budget in bits: log2(Q) - log2(||t * phase||) - 1, floored at 0.
/// @param sk the secret key.
/// @param ct a BFV ciphertext in coefficient form (`encrypted`).
/// @return the budget in bits.
/// @throws nothing of its own (api/ checked the operands).
int invariant_noise_budget(const SecretKey& sk, const Ciphertext& ct);

/// Tensor product rescaled by t/Q: sizes s1, s2 -> s1 + s2 - 1 (Fan-Vercauteren, eprint
/// 2012/144, SHE.Mul; in RNS by HPS, CT-RSA 2019, or BEHZ, SAC 2016, per mul_method).
/// @param a the first BFV ciphertext in coefficient form (`encrypted1`).
/// @param b the second (`encrypted2`), at a's level.
/// @return the product, coefficient form, at a's level.
/// @throws nothing of its own (api/ checked the operands: check_ciphertext_pair).
Ciphertext multiply(const Ciphertext& a, const Ciphertext& b);
/// ct * m for a plaintext m (coefficients mod t, centered lift).
/// @param ct a BFV ciphertext, coefficient or NTT form (`encrypted`), multiplied in place.
/// @param pt the plaintext (`plain`): N coefficients mod t, or NTT form at ct's level
///        (Evaluator::transform_to_ntt).
/// @throws InvalidArgument naming `plain` (as
///         check_coeff_plain, or check_ntt_plain for an NTT-form plaintext); TypeMismatch
///         naming `plain` on another device.
void multiply_plain_inplace(Ciphertext& ct, const Plaintext& pt);
/// ct += round(Q m / t) in c0.
/// @param ct a BFV ciphertext in coefficient form (`encrypted`), updated in place.
/// @param pt the message, N coefficients mod t (`plain`).
/// @throws InvalidArgument naming `plain` (as
///         check_coeff_plain); TypeMismatch naming `plain` on another device.
void add_plain_inplace(Ciphertext& ct, const Plaintext& pt);
/// ct -= round(Q m / t) in c0.
/// @param ct a BFV ciphertext in coefficient form (`encrypted`), updated in place.
/// @param pt the message, N coefficients mod t (`plain`).
/// @throws as add_plain_inplace.
void sub_plain_inplace(Ciphertext& ct, const Plaintext& pt);

}  // namespace veil::bfv
