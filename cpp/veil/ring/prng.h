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

class Prng {
 public:
  /// Seeded from the OS (getrandom). Throws RuntimeError if the OS refuses.
  Prng();
  /// Deterministic: for tests and reproducible runs only.
  explicit Prng(const std::array<std::uint32_t, 8>& seed);
  /// Convenience: a 64-bit seed expanded into the key (tests).
  static Prng from_u64(std::uint64_t seed);

  /// The next keystream domain.
  PrngStream next() const { return PrngStream{key_, next_domain_->fetch_add(1)}; }

 private:
  ChaChaKey key_{};
  std::shared_ptr<std::atomic<std::uint64_t>> next_domain_ =
      std::make_shared<std::atomic<std::uint64_t>>(0);
};

}  // namespace veil
