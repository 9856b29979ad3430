// Operand and argument validation in one place. Every public operation (api/, the schemes,
// serialization) checks its inputs through these helpers, in the spirit of Lattigo's
// InitOutputBinaryOp, instead of repeating the checks: same parameters, same device, same key
// set, matching levels and forms, no transparent results. Checks of one scheme's own state live
// with that scheme (ckks/ckks_tables.h: check_ckks_scale).
//
// Errors: InvalidArgument (Python ValueError) naming the argument, TypeMismatch (TypeError) for
// objects on another device. Messages never contain coefficient values or key material.
#pragma once
#include <cstdint>
#include <functional>
#include <string>

#include "veil/rlwe/objects.h"

namespace veil {

/// Checks that an object shares `ctx`'s parameters and word size and lives on `dev`. This is
/// the one "same context" check: the operations below, the key checks and the Python layer
/// (veil._core.check_same_context, which passes the user's argument name) all come here.
/// @param ctx the context of the operation.
/// @param dev the device the operation runs on.
/// @param other_ctx the object's context.
/// @param other_dev the object's device.
/// @param what the argument's name in messages.
/// @throws InvalidArgument naming `what` (empty; other parameters, giving both parameter sets
///         as scheme, poly_modulus_degree, primes and plain_modulus; other word size);
///         TypeMismatch naming `what` (another device).
void check_compatible(const Context& ctx, const Device& dev, const ContextPtr& other_ctx,
                      const Device& other_dev, const char* what);

/// The parameters of `ctx` in a message: "BFV, poly_modulus_degree 8192, 4 primes,
/// plain_modulus 65537" (public parameters only).
/// @param ctx the context.
/// @return the summary.
std::string parameter_summary(const Context& ctx);

/// What makes two contexts' parameters differ when their summaries (parameter_summary) read the
/// same: the primes' bit sizes or values, special_primes, alpha, mul_method or rescale_groups
/// (public parameters only).
/// @param a one context.
/// @param b the other.
/// @return the first difference found, e.g. "the primes' bit sizes (60,40,60 against 60,30,60)".
std::string parameter_difference(const Context& a, const Context& b);

/// A ciphertext operand: initialized, of `ctx`'s parameters, on its own device, size >= 2,
/// in the scheme's form (SchemeDefinition::ntt_form: NTT form, or coefficient form).
/// @param ctx the context of the operation.
/// @param ct the operand.
/// @param what the argument's name in messages.
/// @param coeff_ntt the operation also takes ciphertexts of a coefficient-form scheme moved to
///        NTT form (Evaluator::transform_to_ntt): add, sub, negate, multiply_plain,
///        multiply_plain_sum and transform_from_ntt; every other refuses them, naming
///        transform_from_ntt.
/// @throws InvalidArgument naming `what` (empty, other parameters, size < 2, wrong form);
///         TypeMismatch naming `what` (another device).
void check_ciphertext(const Context& ctx, const Ciphertext& ct, const char* what,
                      bool coeff_ntt = false);

/// Two ciphertext operands (each as check_ciphertext, then the same device, level, form and key
/// set).
/// @param ctx the context of the operation.
/// @param a the first operand.
/// @param b the second operand.
/// @param what_a the first argument's name in messages.
/// @param what_b the second argument's name in messages.
/// @param coeff_ntt as check_ciphertext.
/// @return the key set of the result (rlwe/objects.h DataObject::key_id).
/// @throws InvalidArgument or TypeMismatch naming the argument at fault.
u64 check_ciphertext_pair(const Context& ctx, const Ciphertext& a, const Ciphertext& b,
                          const char* what_a, const char* what_b, bool coeff_ntt = false);

/// Key-set identity of an object used with a ciphertext (a key, a second ciphertext).
/// @param ct_id the ciphertext's key set (0: unknown).
/// @param other_id the object's key set (0: unknown).
/// @param what the object's name in messages.
/// @return the joined identity (0 = unknown only when both are unknown).
/// @throws InvalidArgument naming `what` when both are known and differ.
u64 join_key_sets(u64 ct_id, u64 other_id, const char* what);

/// The gate for a key used on a ciphertext (relinearization and Galois keys):
/// not empty, of `ctx`'s parameters on the ciphertext's device (check_compatible), and of the
/// ciphertext's key set (join_key_sets).
/// @param ctx the context of the operation.
/// @param ct the ciphertext (already checked with check_ciphertext).
/// @param key the key: anything with context() (null when empty), device() and key_id().
/// @param what the key's argument name in messages.
/// @return the joined key-set identity (join_key_sets).
/// @throws InvalidArgument naming `what` (empty, other parameters, another key set);
///         TypeMismatch naming `what` (another device).
template <class Key>
u64 check_key(const Context& ctx, const Ciphertext& ct, const Key& key, const char* what) {
  check_compatible(ctx, ct.device(), key.context(), key.device(), what);
  return join_key_sets(ct.key_id(), key.key_id(), what);
}

/// The key-set identity of a secret key: the first 64 bits of BLAKE2b-256 over a domain tag, the
/// parameter hash and the key's words (one-way: publishing it, as every ciphertext and key does,
/// reveals nothing usable about the key).
/// @param sk the secret key.
/// @return its identity, never 0.
u64 key_set_id(const SecretKey& sk);

/// SEAL's check (SEAL_THROW_ON_TRANSPARENT_CIPHERTEXT, on by default there): a result whose
/// polynomials c1..c_{size-1} are all zero is "transparent", its c0 alone reveals the plaintext
/// (e.g. multiply_plain by zero, c - c). Throws InvalidArgument naming `op`.
/// Where: on the CPU at the operation (one pass over c1..). On a GPU the operation does not test
/// (the test would synchronize the stream: ~17 us per add at N = 2^13, bench/RESULTS.md); the
/// ciphertext is tested where it leaves the process instead, by every save (Veil's and SEAL's
/// formats, check_not_transparent_words on the host copy). set_transparent_check(false) turns
/// both off.
/// @param ct the result.
/// @param op the operation's name in messages.
/// @throws InvalidArgument naming `op` when ct is transparent.
void check_not_transparent(const Ciphertext& ct, const char* op);
/// The save-time test on a ciphertext's host words.
/// @param words `size` polynomials of `poly_words` words each (host memory).
/// @param size the number of polynomials.
/// @param poly_words the words of one polynomial.
/// @param what the argument's name in messages.
/// @throws InvalidArgument naming `what` when size >= 2 and c1.. are all zero.
void check_not_transparent_words(const u64* words, std::size_t size, std::size_t poly_words,
                                 const char* what);
/// The same over 4-byte words (a 32-bit-word ciphertext's host copy, not widened).
/// @param words `size` polynomials of `poly_words` words each (host memory).
/// @param size the number of polynomials.
/// @param poly_words the words of one polynomial.
/// @param what the argument's name in messages.
/// @throws InvalidArgument naming `what` when size >= 2 and c1.. are all zero.
void check_not_transparent_words(const u32* words, std::size_t size, std::size_t poly_words,
                                 const char* what);
/// Turns the transparent-result check (check_not_transparent and the save-time test) on or off
/// for the whole process.
/// @param on whether to check.
void set_transparent_check(bool on);
/// @return whether the transparent-result check is on (the default).
bool transparent_check();

/// Long loops (key generation, many-operand products, prime searches) call this between steps;
/// a front end installs a handler that throws when the user interrupted (Python: Ctrl-C ->
/// KeyboardInterrupt). The default handler does nothing.
/// @throws whatever the installed handler throws (Python: KeyboardInterrupt).
void check_interrupt();
/// Installs the handler check_interrupt calls (process-wide, thread-safe).
/// @param handler the handler; an empty function restores the default (nothing).
void set_interrupt_handler(std::function<void()> handler);

}  // namespace veil
