// Encryptor and Decryptor (SEAL's classes), dispatching to the scheme.
#pragma once
#include <cstdint>
#include <optional>

#include "veil/ring/prng.h"
#include "veil/rlwe/objects.h"

namespace veil {

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
  /// @param sk a secret key of ctx (`secret_key`).
  /// @param seed fixes the randomness (tests only); default: OS entropy.
  /// @throws InvalidArgument naming `secret_key` (empty or of another context).
  Encryptor(ContextPtr ctx, const SecretKey& sk, std::optional<std::uint64_t> seed = std::nullopt);
  /// Encrypts on the key's device.
  /// @param plain a plaintext of this context (`plain`): BFV/BGV in coefficient form mod t,
  ///        CKKS in NTT form at its level and scale.
  /// @throws InvalidArgument naming `plain` (empty, another context, the wrong form);
  ///         TypeMismatch naming `plain` on another device.
  Ciphertext encrypt(const Plaintext& plain) const;
  /// An encryption of zero at the top level (NTT form for BGV and CKKS).
  Ciphertext encrypt_zero() const;
  /// The device of the key (where ciphertexts are made).
  const Device& device() const;

  /// The context this object was built for.
  const ContextPtr& context() const { return ctx_; }

 private:
  ContextPtr ctx_;
  std::optional<PublicKey> pk_;
  std::optional<SecretKey> sk_;
  Prng prng_;
};

class Decryptor {
 public:
  /// @throws InvalidArgument / TypeMismatch if `sk` is empty or of another context.
  Decryptor(ContextPtr ctx, const SecretKey& sk);
  /// Decrypts on the key's device.
  /// @param check_noise BFV/BGV: throw when the noise budget is 0 (the result would be wrong);
  ///        false decrypts anyway (experiments measuring failure).
  /// @throws InvalidArgument naming `encrypted` (other context, other key set, exhausted noise)
  ///         or `noise_flooding_bits` (CKKS flooding that does not fit).
  Plaintext decrypt(const Ciphertext& encrypted, bool check_noise = true) const;
  /// CKKS: noise flooding at decryption (IND-CPA-D), `bits` of uniform noise (0: off, the
  /// default); see ckks::decrypt. Throws InvalidArgument naming `bits` outside 0..62.
  void set_noise_flooding(int bits);
  int noise_flooding() const { return flooding_bits_; }
  /// BFV/BGV: remaining noise budget in bits (0 means decryption may fail), as SEAL's
  /// invariant_noise_budget (equal bit for bit on the same ciphertext; README).
  /// @throws InvalidArgument naming `encrypted` (invalid, another context or key set) or
  ///         `invariant_noise_budget` on a CKKS context; TypeMismatch naming `encrypted` on
  ///         another device.
  int invariant_noise_budget(const Ciphertext& encrypted) const;
  const Device& device() const { return sk_.device(); }

  /// The context this object was built for.
  const ContextPtr& context() const { return ctx_; }

 private:
  ContextPtr ctx_;
  SecretKey sk_;
  int flooding_bits_ = 0;
  Prng flooding_prng_;
};

}  // namespace veil
