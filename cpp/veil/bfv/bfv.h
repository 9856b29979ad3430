// BFV (Fan-Vercauteren 2012) in full RNS: ciphertexts in coefficient form over Q. Multiplication by
// HPS (Halevi-Polyakov-Shoup 2019; Al Badawi et al. 2021 §IV) or BEHZ (Bajard et al. 2016; Özcan et
// al. 2023 §III, SEAL's pipeline), chosen by EncryptionParameters::mul_method.
#pragma once
#include "veil/ring/prng.h"
#include "veil/rlwe/objects.h"

namespace veil::bfv {

/// c0 += round(Q m / t) (or -= when `subtract`), m: [N] coefficients in [0, t).
/// Rounds half up, as SEAL's multiply_add_plain_with_scaling_variant.
void add_scaled_plain(const Context& ctx, const Device& dev, const u64* m, WordPtr c0,
                      bool subtract, std::size_t level);

Ciphertext encrypt(const PublicKey& pk, const Plaintext& pt, const Prng& prng);
Ciphertext encrypt_symmetric(const SecretKey& sk, const Plaintext& pt, const Prng& prng);
/// round(t/Q * [c0 + c1 s + ...]_Q) mod t (HPS or BEHZ per mul_method), at any level. With
/// `check_noise`, throws InvalidArgument naming `encrypted` when the noise budget is 0.
Plaintext decrypt(const SecretKey& sk, const Ciphertext& ct, bool check_noise = true);
/// Modulus switching to the next level: c -> round(c / q_l) over Q_{l-1} (SEAL's BFV
/// mod_switch_to_next). Throws at level 0.
void mod_switch_to_next_inplace(Ciphertext& ct);
/// SEAL's invariant noise budget in bits: log2(Q) - log2(||t * phase||) - 1, floored at 0.
int invariant_noise_budget(const SecretKey& sk, const Ciphertext& ct);

/// Tensor product rescaled by t/Q: sizes s1, s2 -> s1 + s2 - 1.
Ciphertext multiply(const Ciphertext& a, const Ciphertext& b);
/// ct * m for a plaintext m (coefficients mod t, centered lift).
void multiply_plain_inplace(Ciphertext& ct, const Plaintext& pt);
void add_plain_inplace(Ciphertext& ct, const Plaintext& pt);
void sub_plain_inplace(Ciphertext& ct, const Plaintext& pt);

}  // namespace veil::bfv
