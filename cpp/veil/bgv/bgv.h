// BGV (Brakerski-Gentry-Vaikuntanathan 2012) in full RNS with SEAL's conventions: ciphertexts in
// NTT form, phase = correction_factor * m + t * e, modulus switching with the plaintext-modulus
// correction (Kim-Polyakov-Zucca 2021 §3; Phantom, Yang et al. 2024 §II-C eq. 3), keys with errors
// t * e.
//
// Operand checks: these functions run behind api/ (Evaluator, Encryptor, Decryptor), which checks
// every ciphertext and key once (rlwe/checks.h: check_ciphertext, check_ciphertext_pair,
// check_key). They check only what is the scheme's own (plaintexts, scales, levels left, noise)
// and do not check their ciphertext operands again: call them through api/.
#pragma once
#include "veil/ring/prng.h"
#include "veil/rlwe/objects.h"

namespace veil::bgv {

/// m (N coefficients mod t) lifted centered into Q_level and NTT-transformed: [level+1][N].
/// @param ctx a BGV context.
/// @param dev the device of the result.
/// @param pt the message, N coefficients mod t (coefficient form; not checked here).
/// @param level the level to lift to.
/// @return the lifted message, [level+1][N] in NTT form.
WordBuffer lift_plain(const Context& ctx, const Device& dev, const Plaintext& pt, std::size_t level);

/// Public-key encryption (Brakerski-Gentry-Vaikuntanathan, ITCS 2012, in the full-RNS form
/// of Kim-Polyakov-Zucca, Asiacrypt 2021): an encryption of zero with errors t * e at the top
/// level (rlwe/encrypt.h, NTT form) plus the lifted message (lift_plain) in c0; correction
/// factor 1.
/// @param pk a public key of a BGV context.
/// @param pt the message, N coefficients mod t (coefficient form).
/// @param prng the randomness of u and the errors.
/// @return a size-2 NTT-form ciphertext at the top level.
/// @throws InvalidArgument naming `plain` (empty, other parameters or word size, NTT form);
///         TypeMismatch naming `plain` on another device.
Ciphertext encrypt(const PublicKey& pk, const Plaintext& pt, const Prng& prng);
/// Secret-key encryption: (-a s + t e + m, a) at the top level, a from a seed.
/// @param sk the secret key.
/// @param pt the message, N coefficients mod t (coefficient form).
/// @param prng the randomness of a and e.
/// @return a size-2 NTT-form ciphertext at the top level, correction factor 1.
/// @throws as encrypt.
Ciphertext encrypt_symmetric(const SecretKey& sk, const Plaintext& pt, const Prng& prng);
/// [phase]_Q mod t, times correction_factor^-1.
/// @param sk the secret key.
/// @param ct a BGV ciphertext (`encrypted`).
/// @param check_noise test the noise budget (false: decrypt anyway).
/// @return the message, N coefficients mod t.
/// @throws InvalidArgument naming `encrypted`, with `check_noise`, when the noise budget is 0.
Plaintext decrypt(const SecretKey& sk, const Ciphertext& ct, bool check_noise = true);
/// SEAL's budget: bits(Q_level) - bits(||phase||) - 1 (decryption is correct while the phase
/// stays below Q_level / 2), floored at 0.
/// @param sk the secret key.
/// @param ct a BGV ciphertext (`encrypted`).
/// @return the budget in bits.
/// @throws nothing of its own (api/ checked the operands).
int invariant_noise_budget(const SecretKey& sk, const Ciphertext& ct);

/// Tensor product in the NTT domain; correction factors multiply.
/// @param a the first BGV ciphertext (`encrypted1`).
/// @param b the second (`encrypted2`), at a's level (the Evaluator checks the pair).
/// @return the product, size a.size() + b.size() - 1, NTT form.
/// @throws nothing of its own (api/ checked the operands: check_ciphertext_pair).
Ciphertext multiply(const Ciphertext& a, const Ciphertext& b);
/// ct * m: the plaintext lifted centered into Q_level (or already in NTT form at ct's level,
/// from Evaluator::transform_to_ntt), multiplied into every polynomial.
/// @param ct a BGV ciphertext (`encrypted`), multiplied in place.
/// @param pt the plaintext (`plain`): N coefficients mod t, or NTT form at ct's level.
/// @throws InvalidArgument naming `plain` (as
///         check_coeff_plain, or check_ntt_plain for an NTT-form plaintext); TypeMismatch
///         naming `plain` on another device.
void multiply_plain_inplace(Ciphertext& ct, const Plaintext& pt);
/// ct += m (or -= with `subtract`) in c0, m lifted to Q_level and multiplied by ct's
/// correction factor.
/// @param ct a BGV ciphertext (`encrypted`), updated in place.
/// @param pt the message, N coefficients mod t (`plain`).
/// @param subtract true: subtract instead of adding.
/// @throws InvalidArgument naming `plain` (as
///         check_coeff_plain); TypeMismatch naming `plain` on another device.
void add_plain_inplace(Ciphertext& ct, const Plaintext& pt, bool subtract);
/// Multiplies every polynomial by a scalar mod t (used to align correction factors).
/// The correction factor is left as it is (align_correction sets it).
/// @param ct a BGV ciphertext, multiplied in place (not checked).
/// @param scalar the multiplier (a residue mod t).
void multiply_scalar_inplace(Ciphertext& ct, u64 scalar);
/// Brings b's correction factor to a's (b *= f_a / f_b mod t). No-op when equal.
/// @param b a BGV ciphertext (not checked).
/// @param target_factor the correction factor wanted (a's).
/// @return a copy of b with correction factor target_factor mod t.
Ciphertext align_correction(const Ciphertext& b, u64 target_factor);
/// Drops the last prime: ct' = (ct - delta) / q_l with delta = ct mod q_l, delta = 0 mod t
/// (Kim-Polyakov-Zucca, Asiacrypt 2021; SEAL's BGV mod_switch_to_next); the correction factor
/// is multiplied by q_l^-1 mod t.
/// @param ct a BGV ciphertext above level 0 (`encrypted`), switched in place.
/// @throws InvalidArgument naming `encrypted` (at level 0).
void mod_switch_to_next_inplace(Ciphertext& ct);

}  // namespace veil::bgv
