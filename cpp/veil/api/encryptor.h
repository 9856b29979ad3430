// Encryptor and Decryptor (SEAL's classes), dispatching to the scheme.
#pragma once
#include <cstdint>
#include <optional>

#include "veil/ring/prng.h"
#include "veil/rlwe/objects.h"

namespace veil {

class Encryptor {
 public:
  /// Public-key encryption. `seed` fixes the randomness (tests only); default: OS entropy.
  Encryptor(ContextPtr ctx, const PublicKey& pk, std::optional<std::uint64_t> seed = std::nullopt);
  /// Symmetric (secret-key) encryption.
  Encryptor(ContextPtr ctx, const SecretKey& sk, std::optional<std::uint64_t> seed = std::nullopt);
  /// Encrypts on the key's device. Throws InvalidArgument if `plain` is from another context
  /// or TypeMismatch if it lives on another device.
  Ciphertext encrypt(const Plaintext& plain) const;
  /// An encryption of zero at the top level.
  Ciphertext encrypt_zero() const;
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
  /// BFV/BGV: remaining noise budget in bits (0 means decryption may fail).
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
