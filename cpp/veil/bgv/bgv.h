// BGV (Brakerski-Gentry-Vaikuntanathan 2012) in full RNS with SEAL's conventions: ciphertexts in
// NTT form, phase = correction_factor * m + t * e, modulus switching with the plaintext-modulus
// correction (Kim-Polyakov-Zucca 2021 §3; Phantom, Yang et al. 2024 §II-C eq. 3), keys with errors
// t * e.
#pragma once
#include "veil/ring/prng.h"
#include "veil/rlwe/objects.h"

namespace veil::bgv {

/// m (N coefficients mod t) lifted centered into Q_level and NTT-transformed: [level+1][N].
WordBuffer lift_plain(const Context& ctx, const Device& dev, const Plaintext& pt, std::size_t level);

Ciphertext encrypt(const PublicKey& pk, const Plaintext& pt, const Prng& prng);
Ciphertext encrypt_symmetric(const SecretKey& sk, const Plaintext& pt, const Prng& prng);
/// [phase]_Q mod t, times correction_factor^-1. With `check_noise`, throws InvalidArgument
/// naming `encrypted` when the noise budget is 0.
Plaintext decrypt(const SecretKey& sk, const Ciphertext& ct, bool check_noise = true);
/// SEAL's budget: bits(Q_level) - bits(||phase||) - 1 (decryption is correct while the phase
/// stays below Q_level / 2), floored at 0.
int invariant_noise_budget(const SecretKey& sk, const Ciphertext& ct);

/// Tensor product in the NTT domain; correction factors multiply.
Ciphertext multiply(const Ciphertext& a, const Ciphertext& b);
void multiply_plain_inplace(Ciphertext& ct, const Plaintext& pt);
void add_plain_inplace(Ciphertext& ct, const Plaintext& pt, bool subtract);
/// Multiplies every polynomial by a scalar mod t (used to align correction factors).
void multiply_scalar_inplace(Ciphertext& ct, u64 scalar);
/// Brings b's correction factor to a's (b *= f_a / f_b mod t). No-op when equal.
Ciphertext align_correction(const Ciphertext& b, u64 target_factor);
/// Drops the last prime: ct' = (ct - delta) / q_l with delta = ct mod q_l, delta = 0 mod t.
void mod_switch_to_next_inplace(Ciphertext& ct);

}  // namespace veil::bgv
