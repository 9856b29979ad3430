// Key generation (SEAL semantics): ternary secret, RLWE public key, relinearization and Galois
// key-switching keys for hybrid key switching.
#pragma once
#include <cstdint>
#include <optional>
#include <vector>

#include "veil/ring/prng.h"
#include "veil/rlwe/objects.h"

namespace veil {

/// Generates a secret key and the keys derived from it (SEAL's KeyGenerator): the public key,
/// relinearization keys, Galois keys and key-switching keys, all for hybrid key switching
/// (Han-Ki, "Better Bootstrapping for Approximate Homomorphic Encryption", CT-RSA 2020, §3;
/// Kim-Polyakov-Zucca, "Revisiting Homomorphic Encryption Schemes for Finite Fields",
/// Asiacrypt 2021; `alpha` = 1 with one special prime is SEAL's key). Every key lives on the
/// generator's device, is in NTT form over Q ∪ P (or Q_level ∪ P for a key of a level) and
/// carries the secret key's key set (DataObject::key_id). Errors are centered binomial; for BGV
/// they are multiplied by t.
class KeyGenerator {
 public:
  /// Samples a fresh secret key over Q ∪ P on `dev` and stores it in NTT form.
  /// @param ctx the context (any scheme).
  /// @param dev the device the secret key and every generated key live on.
  /// @param seed fixes the randomness (tests and reproducible runs); without it the generator
  ///        is seeded from the OS.
  /// @param hamming_weight 0: uniform ternary (SEAL's distribution); h > 0: exactly h nonzero
  ///        coefficients (sample_sparse_ternary), as for the sparse secret inside CKKS
  ///        bootstrapping. A sparse secret alone is not 128-bit secure at the full modulus; use
  ///        it only with sparse-secret encapsulation (create_switching_key with max_level).
  /// @throws InvalidArgument naming `hamming_weight` if h > N; RuntimeError if no seed is given
  ///         and the OS refuses randomness.
  KeyGenerator(ContextPtr ctx, const Device& dev = Device::cpu(),
               std::optional<std::uint64_t> seed = std::nullopt, std::size_t hamming_weight = 0);
  /// Uses an existing secret key (on its device); gives it its key-set identity (key_set_id)
  /// when it has none.
  /// @param ctx the context the key belongs to.
  /// @param sk the secret key (copied).
  /// @param seed fixes the randomness of the keys generated from now on; default: the OS.
  /// @throws InvalidArgument naming `secret_key` if it is empty or of other parameters or word
  ///         size.
  KeyGenerator(ContextPtr ctx, const SecretKey& sk,
               std::optional<std::uint64_t> seed = std::nullopt);

  /// @return the secret key s ([L+k][N], NTT form over Q ∪ P).
  const SecretKey& secret_key() const { return sk_; }
  /// A public key (b, a) = (-a s + e, a) over Q ∪ P in NTT form ([2][L+k][N]), a uniform from a
  /// recorded seed (seeded serialization), e centered binomial (t e for BGV). Kept over Q ∪ P as
  /// SEAL does: encryption divides by P, which removes most of the e u noise.
  /// @return the public key, on the generator's device.
  PublicKey create_public_key() const;
  /// A relinearization key: the key-switching key from s^2 to s (create_kswitch_key of s^2).
  /// @param compact store the key's b_j only (KSwitchKey::compact).
  /// @return the key, serving every level.
  /// @throws InvalidArgument naming `special_primes` if the context has none.
  RelinKeys create_relin_keys(bool compact = false) const;
  /// Galois keys for row rotations (SEAL's Galois elements 3^step mod 2N) and the column swap.
  /// @param steps the rotation steps, each |step| < N/2 (0 needs no key and is skipped).
  /// @param include_columns also the column swap / CKKS conjugation (element 2N - 1).
  /// @return one full-level, non-compact key per distinct element.
  /// @throws InvalidArgument naming `steps` (|step| >= N/2) or `special_primes` (none).
  GaloisKeys create_galois_keys(const std::vector<int>& steps, bool include_columns = true) const;
  /// SEAL's default Galois keys: every power-of-two step below N/2 in both directions and the
  /// column swap: 2 log2(N/2) + 1 elements (create_galois_keys(steps, true)).
  /// @return one full-level, non-compact key per element.
  /// @throws InvalidArgument naming `special_primes` if the context has none.
  GaloisKeys create_galois_keys() const;
  /// Keys for explicit Galois elements (odd, < 2N), generated in the order given; every element
  /// is checked before the first key is made. Checks for interruption between keys
  /// (check_interrupt).
  /// @param elts the Galois elements (1 and repeated elements are skipped: the identity needs no
  ///        key).
  /// @param compact store each key's b_j only; its a_j are regenerated where they are read
  ///        (KSwitchKey::compact: half the memory; the GPU's inner product regenerates them in
  ///        its kernel, other paths expand them first). N must be a multiple of 16.
  /// @param levels empty (every key serves every level), or one level per element: the key of
  ///        elts[i] serves the ciphertexts at levels <= levels[i] and stores only their limbs
  ///        and digits (KSwitchKey::level; smaller at low levels). It equals the projection of
  ///        the top-level key the same generator makes.
  /// @return the keys, keyed by element.
  /// @throws InvalidArgument naming `galois_elts` (even or >= 2N), `levels` (not one per
  ///         element, or above the top level) or `special_primes` (none).
  GaloisKeys create_galois_keys_from_elts(const std::vector<std::uint32_t>& elts,
                                          bool compact = false,
                                          const std::vector<std::size_t>& levels = {}) const;
  /// A key-switching key from `target` to this secret key (hybrid key switching: Han-Ki,
  /// CT-RSA 2020, §3): for each digit D_j of alpha primes, (b_j, a_j) with b_j = -a_j s + e_j +
  /// P [D_j-indicator] s' over Q_level ∪ P in NTT form ("HPS-style": the CRT indicator of the
  /// digit is 1 on its limbs, 0 elsewhere). One seed for the whole key, digit j's a_j being its
  /// sub-stream j.
  /// @param target_ntt s' over Q ∪ P in NTT form ([L+k][N]).
  /// @param compact its a_j from the compact sampler and not stored (KSwitchKey::compact).
  /// @param level the highest level the key serves (default: the top): it stores the digits
  ///        that meet Q_level over Q_level ∪ P only (KSwitchKey::level), and equals the
  ///        projection of the top-level key; the generator advances as for a top-level key.
  /// @return the key ([dnum][2][level+1+k][N], or [dnum][level+1+k][N] compact).
  /// @throws InvalidArgument naming `special_primes` (none) or `level` (above the top).
  KSwitchKey create_kswitch_key(ConstWordPtr target_ntt, bool compact = false,
                                std::optional<std::size_t> level = std::nullopt) const;
  /// A key switching ciphertexts under `from` to this secret key, usable at levels <= max_level
  /// (default: every level). With max_level < L it is a key of that level (KSwitchKey::level:
  /// only the digits that meet Q_max_level, over Q_max_level ∪ P), so the key is an RLWE sample
  /// modulo Q_max_level * P only: sparse-secret encapsulation (Bossuat-Troncoso-Hubaux, eprint
  /// 2022/024, §5) switches the dense secret to a sparse one at level 0 with such a key, whose
  /// small modulus keeps the sparse secret secure.
  /// @param from the source secret key (same context and device).
  /// @param max_level the highest level served; size_t(-1) (the default) means the top level.
  /// @return the key, naming `from`'s key set (SwitchingKey::from_key_id) and this one's.
  /// @throws InvalidArgument naming `from` (empty or other parameters), `max_level` (above the
  ///         top level) or `special_primes` (none); TypeMismatch naming `from` on another device.
  SwitchingKey create_switching_key(const SecretKey& from,
                                    std::size_t max_level = static_cast<std::size_t>(-1)) const;

  /// @return the context this generator was built for.
  const ContextPtr& context() const { return ctx_; }

 private:
  ContextPtr ctx_;
  Device dev_;
  Prng prng_;
  SecretKey sk_;
};

}  // namespace veil
