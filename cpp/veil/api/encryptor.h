// Encryptor and Decryptor (SEAL's classes), dispatching to the scheme.
#pragma once
#include <cstdint>
#include <optional>

#include "veil/ring/prng.h"
#include "veil/rlwe/objects.h"

namespace veil {

/// Encryption under a public or a secret key (SEAL's Encryptor), dispatching to the context's
/// scheme (BFV: Fan-Vercauteren, eprint 2012/144; BGV: Brakerski-Gentry-Vaikuntanathan, ITCS
/// 2012; CKKS: Cheon-Kim-Kim-Song, Asiacrypt 2017). The RLWE encryptions of zero are
/// rlwe/encrypt.h's.
class Encryptor {
 public:
  /// Public-key encryption (SEAL's Encryptor with a public key): an encryption of zero, (b u +
  /// f e0, a u + f e1) with u ternary (rlwe/encrypt.h; f = t for BGV, else 1), plus the scheme's
  /// encoding of the message.
  /// @param ctx the context of the keys and plaintexts.
  /// @param pk a public key of ctx (`public_key`).
  /// @param seed fixes the randomness (tests only); default: OS entropy.
  /// @throws InvalidArgument naming `public_key` (empty or of another context).
  Encryptor(ContextPtr ctx, const PublicKey& pk, std::optional<std::uint64_t> seed = std::nullopt);
  /// Symmetric (secret-key) encryption: (-a s + f e, a) plus the encoded message, with a
  /// uniform from a seed, so that the ciphertext saves seeded at half the bytes
  /// (io/serialize.h).
  /// @param ctx the context of the key and plaintexts.
  /// @param sk a secret key of ctx (`secret_key`).
  /// @param seed fixes the randomness (tests only); default: OS entropy.
  /// @throws InvalidArgument naming `secret_key` (empty or of another context).
  Encryptor(ContextPtr ctx, const SecretKey& sk, std::optional<std::uint64_t> seed = std::nullopt);
  /// Encrypts on the key's device.
  /// @param plain a plaintext of this context (`plain`): BFV/BGV in coefficient form mod t,
  ///        CKKS in NTT form at its level and scale.
  /// @throws InvalidArgument naming `plain` (empty, another context, the wrong form);
  ///         TypeMismatch naming `plain` on another device.
  /// @return a size-2 ciphertext of the message, in the scheme's form.
  Ciphertext encrypt(const Plaintext& plain) const;
  /// An encryption of zero at the top level (NTT form for BGV and CKKS).
  /// @return a size-2 ciphertext of zero at the top level, error scaled by the context's
  ///         error factor (t for BGV, else 1).
  Ciphertext encrypt_zero() const;
  /// The device of the key (where ciphertexts are made).
  /// @return the key's device.
  const Device& device() const;

  /// The context this object was built for.
  /// @return the context.
  const ContextPtr& context() const { return ctx_; }

 private:
  ContextPtr ctx_;
  std::optional<PublicKey> pk_;
  std::optional<SecretKey> sk_;
  Prng prng_;
};

/// Decryption with the secret key (SEAL's Decryptor), dispatching to the context's scheme, and
/// BFV/BGV's invariant noise budget.
class Decryptor {
 public:
  /// Binds the secret key to the context.
  /// @param ctx the context of the key and ciphertexts.
  /// @param sk a secret key of ctx (`secret_key`).
  /// @throws InvalidArgument naming `context` (empty) or `secret_key` (empty, other parameters
  ///         or word size); TypeMismatch naming `secret_key` (another device).
  Decryptor(ContextPtr ctx, const SecretKey& sk);
  /// Decrypts on the key's device.
  /// @param encrypted a ciphertext of this context and key set (`encrypted`).
  /// @param check_noise BFV/BGV: throw when the noise budget is 0 (the result would be wrong);
  ///        false decrypts anyway (experiments measuring failure).
  /// @throws InvalidArgument naming `encrypted` (other context, other key set, exhausted noise)
  ///         or `noise_flooding_bits` (CKKS flooding that does not fit); TypeMismatch naming
  ///         `encrypted` on another device.
  /// @return the plaintext: BFV/BGV in coefficient form mod t, CKKS in NTT form at the
  ///         ciphertext's level and scale.
  Plaintext decrypt(const Ciphertext& encrypted, bool check_noise = true) const;
  /// CKKS: noise flooding at decryption (IND-CPA-D), `bits` of uniform noise (0: off, the
  /// default); see ckks::decrypt.
  /// @param bits 0 (off) .. 62.
  /// @throws InvalidArgument naming `bits` outside 0..62, or nonzero on a BFV/BGV context
  ///         (their decryption is exact).
  void set_noise_flooding(int bits);
  /// The noise-flooding width set by set_noise_flooding.
  /// @return the bits of flooding noise (0: off).
  int noise_flooding() const { return flooding_bits_; }
  /// BFV/BGV: remaining noise budget in bits (0 means decryption may fail), as SEAL's
  /// invariant_noise_budget (equal bit for bit on the same ciphertext; README).
  /// @param encrypted a BFV/BGV ciphertext of this context and key set (`encrypted`).
  /// @return the budget in bits, at least 0.
  /// @throws InvalidArgument naming `encrypted` (invalid, another context or key set) or
  ///         `invariant_noise_budget` on a CKKS context; TypeMismatch naming `encrypted` on
  ///         another device.
  int invariant_noise_budget(const Ciphertext& encrypted) const;
  /// The device of the secret key (where decryption runs).
  /// @return the key's device.
  const Device& device() const { return sk_.device(); }

  /// The context this object was built for.
  /// @return the context.
  const ContextPtr& context() const { return ctx_; }

 private:
  ContextPtr ctx_;
  SecretKey sk_;
  int flooding_bits_ = 0;
  Prng flooding_prng_;
};

}  // namespace veil
