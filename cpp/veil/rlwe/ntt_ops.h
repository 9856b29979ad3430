// Operations shared by the NTT-form schemes (BGV, CKKS).
#pragma once
#include "veil/rlwe/objects.h"

namespace veil {

/// Tensor product of two NTT-form ciphertexts at the same level: sizes s1, s2 -> s1 + s2 - 1
/// (scale and correction factor are left for the scheme to set).
Ciphertext tensor_ntt(const Ciphertext& a, const Ciphertext& b);

/// Divides every polynomial by the primes above `target` and drops them (ModDownNtt,
/// LevelTables::drop_last): BGV modulus switching by q_l (target = l - 1, with the t-correction)
/// or a CKKS rescale by the block of primes holding q_l (target = Context::rescale_target(l)).
/// The result keeps the input's scale and correction factor; the caller adjusts them. Throws at
/// level 0 naming `what`.
Ciphertext divide_by_top_primes(const Ciphertext& ct, std::size_t target, const char* what);

}  // namespace veil
