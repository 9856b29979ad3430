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
  /// runs); without it the generator is seeded from the OS. `hamming_weight` = 0: uniform ternary
  /// (SEAL's distribution); h > 0: exactly h nonzero coefficients (sample_sparse_ternary), as
  /// for the sparse secret inside CKKS bootstrapping. A sparse secret alone is not 128-bit
  /// secure at the full modulus; use it only with sparse-secret encapsulation
  /// (create_switching_key with max_level). Throws InvalidArgument naming `hamming_weight` if
  /// h > N.
  KeyGenerator(ContextPtr ctx, const Device& dev = Device::cpu(),
               std::optional<std::uint64_t> seed = std::nullopt, std::size_t hamming_weight = 0);
  /// Uses an existing secret key.
  KeyGenerator(ContextPtr ctx, const SecretKey& sk,
               std::optional<std::uint64_t> seed = std::nullopt);

  const SecretKey& secret_key() const { return sk_; }
  /// (b, a) = (-a s + e, a) over Q ∪ P, NTT form ([2][L+k][N]).
  PublicKey create_public_key() const;
  /// Switches s^2 to s; compact: the key's b_j only (KSwitchKey::compact).
  /// @throws InvalidArgument naming `special_primes` if the context has none.
  RelinKeys create_relin_keys(bool compact = false) const;
  /// Keys for the given row-rotation steps (each |step| < N/2) and, when `include_columns`, the
  /// column swap (2N-1). With no steps: SEAL's default, every power of two in both directions.
  GaloisKeys create_galois_keys(const std::vector<int>& steps, bool include_columns = true) const;
  GaloisKeys create_galois_keys() const;
  /// Keys for explicit Galois elements (odd, < 2N).
  /// @param elts the Galois elements (1 is skipped: the identity needs no key).
  /// @param compact store each key's b_j only; its a_j are regenerated where they are read
  ///        (KSwitchKey::compact: half the memory; the GPU's inner product regenerates them in
  ///        its kernel, other paths expand them first). N must be a multiple of 16.
  /// @param levels empty (every key serves every level), or one level per element: the key of
  ///        elts[i] serves the ciphertexts at levels <= levels[i] and stores only their limbs
  ///        and digits (KSwitchKey::level; smaller at low levels). It equals the projection of
  ///        the top-level key the same generator makes.
  /// @throws InvalidArgument naming `galois_elts` (even or >= 2N), `levels` (not one per
  ///         element, or above the top level) or `special_primes` (none).
  GaloisKeys create_galois_keys_from_elts(const std::vector<std::uint32_t>& elts,
                                          bool compact = false,
                                          const std::vector<std::size_t>& levels = {}) const;
  /// A key-switching key from `target` (NTT form over Q ∪ P) to this secret key (hybrid key
  /// switching: Han-Ki, CT-RSA 2020, §3).
  /// @param target_ntt s' over Q ∪ P in NTT form ([L+k][N]).
  /// @param compact its a_j from the compact sampler and not stored (KSwitchKey::compact).
  /// @param level the highest level the key serves (default: the top): it stores the digits
  ///        that meet Q_level over Q_level ∪ P only (KSwitchKey::level), and equals the
  ///        projection of the top-level key; the generator advances as for a top-level key.
  /// @throws InvalidArgument naming `special_primes` (none) or `level` (above the top).
  KSwitchKey create_kswitch_key(ConstWordPtr target_ntt, bool compact = false,
                                std::optional<std::size_t> level = std::nullopt) const;
  /// A key switching ciphertexts under `from` to this secret key, usable at levels <= max_level
  /// (default: every level). With max_level < L it is a key of that level (KSwitchKey::level:
  /// only the digits that meet Q_max_level, over Q_max_level ∪ P), so the key is an RLWE sample
  /// modulo Q_max_level * P only: sparse-secret encapsulation (Bossuat-Troncoso-Hubaux, eprint
  /// 2022/024, §5) switches the dense secret to a sparse one at level 0 with such a key, whose
  /// small modulus keeps the sparse secret secure. Throws InvalidArgument naming `from` (other
  /// context or device) or `max_level` (above the top level).
  SwitchingKey create_switching_key(const SecretKey& from,
                                    std::size_t max_level = static_cast<std::size_t>(-1)) const;

  /// The context this generator was built for.
  const ContextPtr& context() const { return ctx_; }

 private:
  ContextPtr ctx_;
  Device dev_;
  Prng prng_;
  SecretKey sk_;
};

}  // namespace veil
