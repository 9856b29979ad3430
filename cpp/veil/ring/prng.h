// Prng: a seeded source of keystream domains. Each sampling call takes the next domain, so a
// fixed seed reproduces the same keys and ciphertexts on every backend. Seeds come from the
// operating system (getrandom) unless a test sets one explicitly.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>

#include "veil/ring/chacha20.h"

namespace veil {

/// A 256-bit seed from which a uniform polynomial is regenerated bit for bit on any backend
/// (seeded serialization: the seed is written instead of the polynomial, as SEAL does).
using UniformSeed = std::array<std::uint32_t, 8>;

/// A fresh seed derived one-way from a keystream address: the first 256 bits of the ChaCha20
/// block (counter 0) of sub-stream 0xFFFFFFFE, a sub-stream no sampler uses. Seeds are written
/// into serialized objects, so they must not reveal the generator's key, which also draws
/// secrets and errors; ChaCha20 output does not (RFC 8439 §2.3 is a PRF of the key).
/// @param s the keystream address (key and domain) the seed is derived from.
/// @return the 256-bit seed.
UniformSeed derive_uniform_seed(const PrngStream& s);

/// The keystream that samples polynomial `index` (a key-switching digit, say) of a seeded object.
/// @param seed the object's seed (the ChaCha key).
/// @param index the polynomial's index (the domain).
/// @return the keystream {seed, index}.
inline PrngStream uniform_stream(const UniformSeed& seed, std::uint64_t index) {
  PrngStream s{};
  for (int i = 0; i < 8; ++i) s.key.words[i] = seed[i];
  s.domain = index;
  return s;
}

/// A seeded source of keystream domains: a ChaCha20 key and a shared atomic domain counter. Copies
/// share the counter, so no two calls of any copy get the same domain.
class Prng {
 public:
  /// Seeded from the OS (getrandom). Throws RuntimeError if the OS refuses.
  /// @throws RuntimeError if getrandom fails (other than by EINTR, which is retried).
  Prng();
  /// Deterministic: for tests and reproducible runs only.
  /// @param seed the 256-bit ChaCha20 key.
  explicit Prng(const std::array<std::uint32_t, 8>& seed);
  /// Convenience: a 64-bit seed expanded into the key (tests).
  /// Key words 0 and 1 are the seed, word 2 is the constant "veil", the rest zero.
  /// @param seed the 64-bit seed.
  /// @return the generator.
  static Prng from_u64(std::uint64_t seed);

  /// The next keystream domain.
  /// Thread-safe (an atomic increment); domains start at 0.
  /// @return {key, domain} for the next sampling call.
  PrngStream next() const { return PrngStream{key_, next_domain_->fetch_add(1)}; }

 private:
  ChaChaKey key_{};
  std::shared_ptr<std::atomic<std::uint64_t>> next_domain_ =
      std::make_shared<std::atomic<std::uint64_t>>(0);
};

}  // namespace veil
