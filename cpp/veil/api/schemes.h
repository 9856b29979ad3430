// The scheme registry: one table of each scheme's operations (SchemeOps), as the api/ classes
// (Encryptor, Decryptor, Evaluator) call them. The classes look the table up by the context's
// scheme (one array index per operation) and call through it, so no operation switches on the
// scheme; this file and api/schemes.cpp are the one place that lists the schemes (it also
// defines rlwe's scheme_definition_of).
#pragma once
#include <optional>
#include <vector>

#include "veil/ring/prng.h"
#include "veil/rlwe/context.h"
#include "veil/rlwe/objects.h"

namespace veil {

/// One scheme's entry points for the api/ classes. Operands are checked by the caller
/// (rlwe/checks.h) before the call. A null entry is an operation the scheme does not define;
/// the caller throws InvalidArgument naming the operation.
struct SchemeOps {
  /// The scheme's definition (name, ciphertext form; rlwe/context.h).
  const SchemeDefinition* definition;
  /// Public-key encryption of `pt` at the top level (FV: Fan-Vercauteren, eprint 2012/144 §3;
  /// BGV: Brakerski-Gentry-Vaikuntanathan, ITCS 2012; CKKS: Cheon-Kim-Kim-Song, ASIACRYPT 2017).
  Ciphertext (*encrypt)(const PublicKey& pk, const Plaintext& pt, const Prng& prng);
  /// Secret-key encryption of `pt`.
  Ciphertext (*encrypt_symmetric)(const SecretKey& sk, const Plaintext& pt, const Prng& prng);
  /// Decryption: `check_noise` for schemes with a noise budget, `flooding_bits` and
  /// `flooding_prng` for CKKS's noise flooding (Li-Micciancio, EUROCRYPT 2021).
  Plaintext (*decrypt)(const SecretKey& sk, const Ciphertext& ct, bool check_noise,
                       int flooding_bits, const Prng* flooding_prng);
  /// SEAL's invariant noise budget in bits (null: no noise budget).
  int (*invariant_noise_budget)(const SecretKey& sk, const Ciphertext& ct);
  /// ct += pt, or ct -= pt with `subtract`.
  void (*add_plain)(Ciphertext& ct, const Plaintext& pt, bool subtract);
  /// ct *= pt.
  void (*multiply_plain_inplace)(Ciphertext& ct, const Plaintext& pt);
  /// out = ct * pt written into `out`, shaped like ct (null: copy, then multiply_plain_inplace).
  void (*multiply_plain)(const Ciphertext& ct, const Plaintext& pt, Ciphertext& out);
  /// sum_i cts[i] * pts[i] in one pass.
  Ciphertext (*multiply_plain_sum)(const std::vector<const Ciphertext*>& cts,
                                   const std::vector<const Plaintext*>& pts);
  /// The tensor product (before relinearization).
  Ciphertext (*multiply)(const Ciphertext& a, const Ciphertext& b);
  /// Modulus switching to the next level (dropping the last prime).
  void (*mod_switch_to_next)(Ciphertext& ct);
  /// The second operand of add/sub made compatible with the first (BGV: the correction factor;
  /// CKKS: checks the scales), or nullopt to use it as it is. Null: nothing to do.
  std::optional<Ciphertext> (*prepare_binary)(const Ciphertext& a, const Ciphertext& b);
  /// Slots in two rows of N/2 (rotate_rows, rotate_columns) rather than a complex vector
  /// (rotate_vector, conjugate).
  bool row_slots;
  /// Approximate arithmetic with scales: rescaling, levelled plaintexts, scalar operations.
  bool rescales;
};

/// The operations of `scheme`.
/// @param scheme the context's scheme.
/// @return the scheme's table (a constant).
/// @throws InvalidArgument naming `scheme` for an unknown value.
const SchemeOps& scheme_ops(SchemeType scheme);

}  // namespace veil
