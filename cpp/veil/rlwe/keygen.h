// Key generation (SEAL semantics): ternary secret, RLWE public key, relinearization and Galois
// key-switching keys for hybrid key switching.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "veil/ring/prng.h"
#include "veil/rlwe/objects.h"

namespace veil {

class KeyGenerator {
 public:
  /// Samples a fresh secret key on `dev`. `seed` fixes the randomness (tests and reproducible
  /// runs); without it the generator is seeded from the OS.
  KeyGenerator(ContextPtr ctx, const Device& dev = Device::cpu(),
               std::optional<std::uint64_t> seed = std::nullopt);
  /// Uses an existing secret key.
  KeyGenerator(ContextPtr ctx, const SecretKey& sk,
               std::optional<std::uint64_t> seed = std::nullopt);

  const SecretKey& secret_key() const { return sk_; }
  /// (b, a) = (-a s + e, a) over Q ∪ P, NTT form ([2][L+k][N]).
  PublicKey create_public_key() const;
  /// Switches s^2 to s. Throws InvalidArgument if the context has no special prime.
  RelinKeys create_relin_keys() const;
  /// Keys for the given row-rotation steps (each |step| < N/2) and, when `include_columns`, the
  /// column swap (2N-1). With no steps: SEAL's default, every power of two in both directions.
  GaloisKeys create_galois_keys(const std::vector<int>& steps, bool include_columns = true) const;
  GaloisKeys create_galois_keys() const;
  /// Keys for explicit Galois elements (odd, < 2N).
  GaloisKeys create_galois_keys_from_elts(const std::vector<std::uint32_t>& elts) const;
  /// A key-switching key from `target` (NTT form over Q ∪ P) to this secret key.
  KSwitchKey create_kswitch_key(ConstWordPtr target_ntt) const;

 private:
  ContextPtr ctx_;
  Device dev_;
  Prng prng_;
  SecretKey sk_;
};

}  // namespace veil
