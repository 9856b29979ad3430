// The evaluation keys of CKKS bootstrapping (Lattigo: circuits/ckks/bootstrapping/keys.go):
// the relinearization key, the Galois keys of every rotation the transforms and SubSum use and
// of the conjugation, and the two switching keys of sparse-secret encapsulation
// (Bossuat-Troncoso-Hubaux, eprint 2022/024, §5): dense -> sparse, which exists only modulo
// q_0 * P so the sparse secret never meets a large modulus, and sparse -> dense.
// Python: veil._bootstrap.Bootstrapper._build_keys and the Galois keys of _build_transforms.
#pragma once
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "veil/circuits/bootstrap_parameters.h"
#include "veil/rlwe/objects.h"

namespace veil::circuits {

/// How BootstrapKeys::generate stores the Galois keys (the relinearization key is the
/// context's, and the switching keys are always of their own level).
struct BootstrapKeyStorage {
  /// Each key stores only what the highest level it is used at reads
  /// (BootstrapParameters::galois_key_levels; KSwitchKey::level): the digits that meet Q_l over
  /// Q_l ∪ P. Costs no time (the same words are read); saves the SlotToCoeff-only keys' upper
  /// limbs and digits. Lattigo generates its evaluation keys at a level alike; Cerium (SOSP
  /// 2026) stores each level's keys with the fewest digits.
  bool per_level = true;
  /// Every key compact (KSwitchKey::compact): b_j only, about half the bytes, the a_j
  /// regenerated in the GPU's inner product (bench/RESULTS.md: compact keys).
  bool compact = false;
  /// When > 0 and `compact` is false: at most this many bytes of keys (BootstrapKeys::bytes).
  /// The keys whose a_j cost the least to regenerate per byte saved
  /// (BootstrapParameters::galois_key_reads over the key's bytes) become compact, one at a
  /// time, until the keys fit; the others stay full.
  std::size_t max_bytes = 0;
};

/// The evaluation keys of one bootstrapper (file comment), all of one dense key set and on one
/// device.
struct BootstrapKeys {
  /// The dense secret's relinearization keys (those of the context's other operations).
  RelinKeys relin_keys;
  /// The Galois keys of BootstrapParameters::galois_elements(), each at its level.
  GaloisKeys galois_keys;
  /// s -> s' (dense to sparse), serving levels <= q_0's top only.
  SwitchingKey to_sparse;
  /// s' -> s (sparse to dense), serving every level.
  SwitchingKey to_dense;

  /// Generates the keys from the secret key, on its device. With a seed the keys are
  /// reproducible and equal those of python/veil/_bootstrap.py for the same seed: the sparse
  /// secret from KeyGenerator(seed + 11, hamming_weight), the dense generator seeded with
  /// seed + 12 making to_sparse's partner to_dense first and then the Galois keys in ascending
  /// element order; relin_keys, when not given, are made last by the dense generator.
  /// @param params the bootstrapping parameters (rotations, q_0's level, Hamming weight).
  /// @param secret_key the dense secret key of params' context.
  /// @param relin_keys the context's relinearization keys (copied), or none to make them.
  /// @param seed fixes the randomness (tests); default: the OS.
  /// @param storage per-level keys (default) and which keys are compact
  ///        (BootstrapKeyStorage). A compact key's a_j come from another sampler, so it differs
  ///        from the full key of the same seed (the Python bootstrapper draws them in the same
  ///        order); a per-level key is the projection of the top-level key of the same seed.
  /// @return the keys, on secret_key's device.
  /// @throws InvalidArgument naming `secret_key` (empty, another context), `relin_keys` (given
  ///         but empty), `storage.max_bytes` when even compact keys take more, or
  ///         `special_primes` when the context has none.
  static BootstrapKeys generate(const BootstrapParameters& params, const SecretKey& secret_key,
                                const std::optional<RelinKeys>& relin_keys = std::nullopt,
                                std::optional<std::uint64_t> seed = std::nullopt,
                                const BootstrapKeyStorage& storage = {});
  /// Which Galois keys (in params.galois_elements() order) BootstrapKeys::generate makes
  /// compact under `storage`, and the bytes the keys then take on the device (Galois keys and
  /// the two switching keys). With storage.max_bytes the full keys whose a_j are regenerated
  /// least per byte saved become compact first (stable order on ties).
  /// @param params the bootstrapping parameters.
  /// @param storage the storage choices.
  /// @param bytes if not null, receives the bytes the keys take.
  /// @return one flag per Galois element: whether its key is compact.
  /// @throws InvalidArgument naming `storage.max_bytes` when even compact keys take more.
  static std::vector<bool> compact_choice(const BootstrapParameters& params,
                                          const BootstrapKeyStorage& storage,
                                          std::size_t* bytes = nullptr);

  /// Checks that every key is present, of params' context, on one device and of one key set,
  /// and that the Galois keys hold every element params.galois_elements() lists, each serving
  /// its params.galois_key_levels() level; the switching keys serve q_0's top (to_sparse) and
  /// the top level (to_dense), and to_dense switches from to_sparse's sparse secret.
  /// @param params the bootstrapping parameters the keys are for.
  /// @throws InvalidArgument naming the missing or mismatched key (`relin_keys`,
  ///         `galois_keys`, `to_sparse`, `to_dense`).
  void check(const BootstrapParameters& params) const;

  /// Bytes of the keys on their device (Galois keys and the two switching keys, as the Python
  /// Bootstrapper.key_bytes; the relinearization key is the context's and not counted).
  /// @return the bytes.
  std::size_t bytes() const;
  /// @return the device the keys live on (the Galois keys').
  const Device& device() const { return galois_keys.device(); }
  /// The keys copied to `dev`.
  /// @param dev the target device.
  /// @return the copies.
  BootstrapKeys to(const Device& dev) const;
};

}  // namespace veil::circuits
