// Operations shared by the NTT-form schemes (BGV, CKKS).
#pragma once
#include "veil/rlwe/objects.h"

namespace veil {

/// Tensor product of two NTT-form ciphertexts at the same level: sizes s1, s2 -> s1 + s2 - 1
/// (scale and correction factor are left for the scheme to set).
Ciphertext tensor_ntt(const Ciphertext& a, const Ciphertext& b);

/// Divides every polynomial by the last prime q_l and drops it (ModDownNtt by {q_l}): CKKS
/// rescale, or BGV modulus switching when the context carries the t-correction. The result keeps
/// the input's scale and correction factor; the caller adjusts them. Throws at level 0 naming
/// `what`.
Ciphertext divide_by_last_prime(const Ciphertext& ct, const char* what);

}  // namespace veil
