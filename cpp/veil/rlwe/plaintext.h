// BFV/BGV plaintexts without batching (SEAL's Plaintext semantics): a polynomial of degree < N
// whose coefficients are integers mod t, for any plain modulus t >= 2. Encryption scales it by
// Delta = floor(Q/t) (BFV) or adds it to t-multiples of the error (BGV); multiply_plain is the
// negacyclic product mod x^N + 1 and mod t.
#pragma once
#include <cstdint>
#include <vector>

#include "veil/backend/word_buffer.h"
#include "veil/rlwe/objects.h"

namespace veil {

/// The plaintext sum_i coefficients[i] x^i on `dev` (at most N coefficients, missing ones 0),
/// in coefficient form at the top level (SEAL's Plaintext from coefficients).
/// @param ctx a BFV or BGV context.
/// @param coefficients m_0, m_1, ..., each in [0, t), at most N of them.
/// @param dev the device the plaintext lives on.
/// @return the plaintext: N 64-bit words mod t ([N]), coefficient form.
/// @throws InvalidArgument naming `coefficients` (too many, or one >= t) or `context` (empty,
///         or CKKS).
Plaintext make_plaintext(const ContextPtr& ctx, const std::vector<std::uint64_t>& coefficients,
                         const Device& dev = Device::cpu());

/// The N coefficients (mod t) of a BFV/BGV plaintext in coefficient form, copied to the host.
/// @param plain a BFV/BGV plaintext in coefficient form (make_plaintext, encode).
/// @return its N coefficients, each in [0, t).
/// @throws InvalidArgument naming `plain` if it is empty, in NTT form or a CKKS plaintext.
std::vector<std::uint64_t> plaintext_coefficients(const Plaintext& plain);

/// BFV/BGV: the coefficients of `plain` (coefficient form, mod t) lifted to Q_level centered
/// (|m_i| <= t/2) and put in NTT form, [level+1][N] words: the factor multiply_plain applies.
/// No checks (the callers have checked `plain`).
/// @param ctx a BFV or BGV context.
/// @param dev the device of `plain` and of the result.
/// @param plain a coefficient-form plaintext ([N] 64-bit words mod t).
/// @param level the level to lift to.
/// @return [level+1][N] words in the context's word size, NTT form.
WordBuffer lift_plain_ntt(const Context& ctx, const Device& dev, const Plaintext& plain,
                          std::size_t level);

/// BFV/BGV: `plain` in NTT form at `level` (lift_plain_ntt), to be reused by many
/// multiply_plain / multiply_plain_sum calls at that level without lifting and transforming it
/// each time (SEAL's Evaluator::transform_to_ntt(plain, parms_id), OpenFHE's and Lattigo's
/// pre-encoded plaintext operands).
/// @param plain a BFV/BGV plaintext in coefficient form (from encode).
/// @param level the level of the ciphertexts it will multiply (0..max level).
/// @return the NTT-form plaintext at `level` ([level+1][N] words), on plain's device.
/// @throws InvalidArgument naming `plain` (empty, CKKS, already in NTT form) or `level` (above
///         the top level).
Plaintext plain_to_ntt(const Plaintext& plain, std::size_t level);

/// Checks that `plain` is an NTT-form BFV/BGV plaintext (plain_to_ntt) of `ctx` on `dev` at
/// `level`.
/// @param ctx the operation's context; @param dev the operation's device.
/// @param plain the plaintext operand.
/// @param level the ciphertext's level, which the plaintext's must equal.
/// @param what the argument's name in the messages.
/// @throws InvalidArgument naming `what` if it is empty, of other parameters or word size, not
///         in NTT form, or at another level; TypeMismatch naming `what` on another device.
void check_ntt_plain(const Context& ctx, const Device& dev, const Plaintext& plain,
                     std::size_t level, const char* what);
/// Checks that `plain` is a BFV/BGV plaintext of N coefficients mod t (encode) of `ctx` on
/// `dev`.
/// @param ctx the operation's context; @param dev the operation's device.
/// @param plain the plaintext operand.
/// @param what the argument's name in the messages.
/// @throws InvalidArgument naming `what` if it is empty, of other parameters or word size, or
///         in NTT form; TypeMismatch naming `what` on another device.
void check_coeff_plain(const Context& ctx, const Device& dev, const Plaintext& plain,
                       const char* what);

}  // namespace veil
