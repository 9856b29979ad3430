// Encryption parameters (SEAL semantics) and helpers to choose them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "veil/core/modarith.h"

namespace veil {

enum class SchemeType { bfv, bgv, ckks };
/// BFV multiplication variant: HPS (Halevi-Polyakov-Shoup 2019) or BEHZ (Bajard et al. 2016).
/// BFV only (bfv/bfv_tables.h builds the chosen variant's tables); BGV and CKKS ignore it.
enum class MulMethod { hps, behz };
/// Classical security level of the HE Standard tables; `none` disables the check.
enum class SecurityLevel { none = 0, tc128 = 128, tc192 = 192, tc256 = 256 };

std::string to_string(SchemeType s);
SchemeType scheme_from_string(const std::string& s);
MulMethod mul_method_from_string(const std::string& s);
std::string to_string(MulMethod m);

/// Parameters of an RLWE scheme. `coeff_modulus` lists Q's primes first and the key-switching
/// special primes P last (`special_primes` of them; SEAL uses one). Key-switching digits hold
/// `alpha` primes each (0 = default: `special_primes`, so dnum = ceil(|Q| / alpha)).
struct EncryptionParameters {
  SchemeType scheme = SchemeType::bfv;
  std::size_t poly_modulus_degree = 0;
  std::vector<u64> coeff_modulus;
  std::size_t special_primes = 1;
  std::size_t alpha = 0;
  u64 plain_modulus = 0;
  /// BFV only: which multiplication (and decryption) variant the context builds tables for.
  /// Ignored by BGV and CKKS, but kept here for every scheme because it is part of
  /// parameter_hash and of the serialized parameters (io/serialize.h).
  MulMethod mul_method = MulMethod::hps;
  /// Word size of RNS residues in memory: 32 (every prime below 2^31; BFV/BGV also need t below
  /// 2^31, and BFV the HPS variant), 64, or 0 = choose (32 when allowed, else 64). The math, the
  /// results and every saved format are the same for both (DESIGN.md "Data conventions").
  int word_bits = 0;
  /// CKKS: sizes of the consecutive blocks of Q primes, from q_0 up, that one rescale divides by
  /// together (they must sum to |Q|); empty = one prime per block (SEAL). Blocks of two ~30-bit
  /// primes keep a 2^40-2^50 scale on 32-bit words: with blocks of 1 and 2 primes alternating,
  /// a product of two ciphertexts at scale S_l rescales to S_l^2 / D_l, which alternates between
  /// about 2^50 and 2^40 (multi-prime "composite" rescaling, Agrawal et al., WAHC 2023,
  /// eprint 2023/1462; the per-level scales S_{l-1} = S_l^2 / D_l of Kim-Papadimitriou-Polyakov,
  /// CT-RSA 2022).
  std::vector<std::size_t> rescale_groups;

  EncryptionParameters() = default;
  explicit EncryptionParameters(SchemeType s) : scheme(s) {}
};

/// Primes per key-switching digit once `alpha` = 0 (the default) is resolved: `special_primes`
/// (at least 1), capped at the number of Q primes.
std::size_t resolved_alpha(const EncryptionParameters& p);

/// An identifier of the parameters (FNV-1a over scheme, N, t, special primes, resolved alpha,
/// mul_method and every prime): objects whose contexts have different hashes never mix, and
/// serialized objects carry it (io/serialize.h). Not a cryptographic hash.
std::uint64_t parameter_hash(const EncryptionParameters& p);

/// Largest log2(Q*P) allowed for a ternary secret at the given level (0 when N is unsupported).
/// N <= 2^15: HomomorphicEncryption.org Security Standard v1.1 (Albrecht et al. 2018), Table 1,
/// the values SEAL enforces. N = 2^16, 2^17: 128-bit from the FHE Security Guidelines tables
/// (lattice-estimator, 2024: 1747 and 3523 bits); 192/256-bit extrapolated linearly in N from the
/// 2^15 row, which is how that table grows.
int max_coeff_modulus_bits(std::size_t n, SecurityLevel level);

struct CoeffModulus {
  /// SEAL's BFVDefault prime bit sizes (N = 2^12..2^15, the published SEAL lists; the primes are
  /// the largest NTT-friendly primes of each size, which reproduces SEAL's values) and Veil's own
  /// choice for 2^16 and 2^17 (within the 128-bit bound). The last prime is the special prime.
  static std::vector<u64> bfv_default(std::size_t n, SecurityLevel level = SecurityLevel::tc128);
  /// The largest distinct NTT-friendly primes (q = 1 mod 2N) of the given bit sizes, in order.
  static std::vector<u64> create(std::size_t n, const std::vector<int>& bit_sizes);
};

struct PlainModulus {
  /// The largest prime t < 2^bits with t = 1 mod 2N (enables batching).
  static u64 batching(std::size_t n, int bits);
};

}  // namespace veil
