// Operations shared by the NTT-form schemes (BGV, CKKS).
#pragma once
#include "veil/rlwe/objects.h"

namespace veil {

/// Tensor product of two NTT-form ciphertexts at the same level: sizes s1, s2 -> s1 + s2 - 1
/// (scale and correction factor are left for the scheme to set): out_k = sum_{i+j=k} a_i b_j,
/// slot-wise in NTT form (the BGV/CKKS multiplication of Brakerski-Gentry-Vaikuntanathan, ITCS
/// 2012, and Cheon-Kim-Kim-Song, Asiacrypt 2017, before relinearization). No checks: the
/// scheme's evaluator checks the operands.
/// @param a an NTT-form ciphertext (size s1).
/// @param b an NTT-form ciphertext (size s2) of a's context and device, at a's level.
/// @return a ciphertext of size s1 + s2 - 1 at that level, NTT form, scale 1.
Ciphertext tensor_ntt(const Ciphertext& a, const Ciphertext& b);

/// Divides every polynomial by the primes above `target` and drops them (ModDownNtt,
/// LevelTables::drop_last): BGV modulus switching by q_l (target = l - 1, with the t-correction)
/// or a CKKS rescale by the block of primes holding q_l (target = Context::rescale_target(l)).
/// The result keeps the input's scale and correction factor; the caller adjusts them.
/// @param ct an NTT-form ciphertext at level l >= 1.
/// @param target the result's level, below l (the primes q_{target+1}..q_l are divided out).
/// @param what the argument's name in the messages.
/// @return the ciphertext at `target`, NTT form, same size.
/// @throws InvalidArgument naming `what` at level 0, or when target >= l.
Ciphertext divide_by_top_primes(const Ciphertext& ct, std::size_t target, const char* what);

}  // namespace veil
