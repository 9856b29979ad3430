// Scheme-independent RLWE encryption of zero and decryption phase (FV 2012 §3; SEAL's
// encrypt_zero_asymmetric / encrypt_zero_symmetric).
#pragma once
#include "veil/ring/prng.h"
#include "veil/rlwe/objects.h"

namespace veil {

/// (c0, c1) = (b u + f e0, a u + f e1) over Q_level with u ternary, e0, e1 centered binomial and
/// f = error_factor (t for BGV, 1 otherwise). NTT form iff `ntt_form`.
Ciphertext encrypt_zero_asymmetric(const PublicKey& pk, std::size_t level, const Prng& prng,
                                   bool ntt_form, u64 error_factor = 1);
/// (c0, c1) = (-a s + f e, a) with a uniform.
Ciphertext encrypt_zero_symmetric(const SecretKey& sk, std::size_t level, const Prng& prng,
                                  bool ntt_form, u64 error_factor = 1);
/// The phase c0 + c1 s + c2 s^2 + ... over Q_level, in the ciphertext's form ([level+1][N]).
Buffer<u64> decrypt_phase(const SecretKey& sk, const Ciphertext& ct);

/// Checks that an object shares `ctx`'s parameters and lives on `dev`; names `what` otherwise.
void check_compatible(const Context& ctx, const Device& dev, const ContextPtr& other_ctx,
                      const Device& other_dev, const char* what);

}  // namespace veil
