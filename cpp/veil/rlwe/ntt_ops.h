// Operations shared by the schemes whose ciphertexts live in NTT form.
#pragma once
#include "veil/rlwe/objects.h"
#include "veil/rns/mod_down_ntt.h"

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

/// Divides every polynomial by the primes above `target` and drops them (rounding, NTT form):
/// `down` is the scheme's table from Q_l to Q_target (a modulus switch by q_l with the
/// plain-modulus correction, or a rescale by the block of primes holding q_l; Cheon, Han, Kim,
/// Kim, Song, SAC 2018, §3.3). The result keeps the input's scale and correction factor; the
/// caller adjusts them.
/// @param ct the ciphertext at level l > 0, in NTT form.
/// @param target the level of the result (below l; the level `down` keeps).
/// @param down the ModDownNtt from Q_l to Q_target.
/// @param what the argument's name in messages.
/// @return the ciphertext at `target`.
/// @throws InvalidArgument naming `what` at level 0; InvalidArgument when target >= l or `down`
///         does not divide Q_l by the primes above `target`.
Ciphertext divide_by_top_primes(const Ciphertext& ct, std::size_t target, const ModDownNtt& down,
                                const char* what);

}  // namespace veil
