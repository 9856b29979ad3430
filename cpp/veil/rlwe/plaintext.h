// BFV/BGV plaintexts without batching (SEAL's Plaintext semantics): a polynomial of degree < N
// whose coefficients are integers mod t, for any plain modulus t >= 2. Encryption scales it by
// Delta = floor(Q/t) (BFV) or adds it to t-multiples of the error (BGV); multiply_plain is the
// negacyclic product mod x^N + 1 and mod t.
#pragma once
#include <cstdint>
#include <vector>

#include "veil/rlwe/objects.h"

namespace veil {

/// The plaintext sum_i coefficients[i] x^i on `dev` (at most N coefficients, missing ones 0),
/// in coefficient form at the top level. Throws InvalidArgument naming `coefficients` (too
/// many, or one >= t) or `context` (not BFV/BGV).
Plaintext make_plaintext(const ContextPtr& ctx, const std::vector<std::uint64_t>& coefficients,
                         const Device& dev = Device::cpu());

/// The N coefficients (mod t) of a BFV/BGV plaintext in coefficient form. Throws
/// InvalidArgument naming `plain` for NTT-form or CKKS plaintexts.
std::vector<std::uint64_t> plaintext_coefficients(const Plaintext& plain);

}  // namespace veil
