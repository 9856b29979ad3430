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

#include "veil/circuits/bootstrap_parameters.h"
#include "veil/rlwe/objects.h"

namespace veil::circuits {

struct BootstrapKeys {
  RelinKeys relin_keys;
  GaloisKeys galois_keys;
  SwitchingKey to_sparse;  // s -> s', levels <= q_0's top only
  SwitchingKey to_dense;   // s' -> s

  /// Generates the keys from the secret key, on its device. With a seed the keys are
  /// reproducible and equal those of python/veil/_bootstrap.py for the same seed: the sparse
  /// secret from KeyGenerator(seed + 11, hamming_weight), the dense generator seeded with
  /// seed + 12 making to_sparse's partner to_dense first and then the Galois keys in ascending
  /// element order; relin_keys, when not given, are made last by the dense generator.
  /// @param params the bootstrapping parameters (rotations, q_0's level, Hamming weight).
  /// @param secret_key the dense secret key of params' context.
  /// @param relin_keys the context's relinearization keys (copied), or none to make them.
  /// @param seed fixes the randomness (tests); default: the OS.
  /// @param compact Galois keys that store their b_j only (KSwitchKey::compact): about half the
  ///        bytes (at N = 2^16 with 32-bit words, full slots: bench/RESULTS.md); their a_j come
  ///        from another sampler, so the keys differ from the full keys of the same seed (the
  ///        Python bootstrapper with compact_keys=True draws them in the same order).
  /// @throws InvalidArgument/TypeMismatch naming `secret_key` (empty, another context).
  static BootstrapKeys generate(const BootstrapParameters& params, const SecretKey& secret_key,
                                const std::optional<RelinKeys>& relin_keys = std::nullopt,
                                std::optional<std::uint64_t> seed = std::nullopt,
                                bool compact = false);

  /// Checks that every key is present, of params' context, on one device and of one key set,
  /// and that the Galois keys hold every element params.galois_elements() lists.
  /// @throws InvalidArgument naming the missing or mismatched key (`relin_keys`,
  ///         `galois_keys`, `to_sparse`, `to_dense`).
  void check(const BootstrapParameters& params) const;

  /// Bytes of the keys on their device (Galois keys and the two switching keys, as the Python
  /// Bootstrapper.key_bytes; the relinearization key is the context's and not counted).
  std::size_t bytes() const;
  /// The device the keys live on.
  const Device& device() const { return galois_keys.device(); }
  /// The keys moved to `dev`.
  BootstrapKeys to(const Device& dev) const;
};

}  // namespace veil::circuits
