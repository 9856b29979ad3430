// Encryption parameters (SEAL semantics) and helpers to choose them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "veil/core/modarith.h"

namespace veil {

/// The homomorphic encryption scheme: BFV (Brakerski, Crypto 2012; Fan-Vercauteren, eprint
/// 2012/144), BGV (Brakerski-Gentry-Vaikuntanathan, ITCS 2012) or CKKS (Cheon-Kim-Kim-Song,
/// Asiacrypt 2017), each with SEAL's semantics.
enum class SchemeType { bfv, bgv, ckks };
/// BFV multiplication variant: HPS (Halevi-Polyakov-Shoup, "An Improved RNS Variant of the BFV
/// Homomorphic Encryption Scheme", CT-RSA 2019) or BEHZ (Bajard-Eynard-Hasan-Zucca, "A Full RNS
/// Variant of FV like Somewhat Homomorphic Encryption Schemes", SAC 2016; SEAL's method).
/// BFV only (bfv/bfv_tables.h builds the chosen variant's tables); BGV and CKKS ignore it.
enum class MulMethod { hps, behz };
/// Classical security level of the HE Standard tables; `none` disables the check.
enum class SecurityLevel { none = 0, tc128 = 128, tc192 = 192, tc256 = 256 };

/// The scheme's name.
/// @param s a scheme.
/// @return "bfv", "bgv" or "ckks".
std::string to_string(SchemeType s);
/// The scheme of a name (inverse of to_string).
/// @param s "bfv", "bgv" or "ckks" (lower case).
/// @return the scheme.
/// @throws InvalidArgument naming `scheme` for any other string.
SchemeType scheme_from_string(const std::string& s);
/// The BFV multiplication variant of a name (inverse of to_string(MulMethod)).
/// @param s "hps" or "behz".
/// @return the variant.
/// @throws InvalidArgument naming `mul_method` for any other string.
MulMethod mul_method_from_string(const std::string& s);
/// The variant's name.
/// @param m a BFV multiplication variant.
/// @return "hps" or "behz".
std::string to_string(MulMethod m);

/// Parameters of an RLWE scheme. `coeff_modulus` lists Q's primes first and the key-switching
/// special primes P last (`special_primes` of them; SEAL uses one). Key-switching digits hold
/// `alpha` primes each (0 = default: `special_primes`, so dnum = ceil(|Q| / alpha)).
/// Plain data: Context::create validates it.
struct EncryptionParameters {
  /// The scheme.
  SchemeType scheme = SchemeType::bfv;
  /// N, the ring degree (x^N + 1): a power of two.
  std::size_t poly_modulus_degree = 0;
  /// The primes of Q, then the special primes of P (each q = 1 mod 2N).
  std::vector<u64> coeff_modulus;
  /// k, how many of coeff_modulus's last primes form P (0: no key switching).
  std::size_t special_primes = 1;
  /// Primes per key-switching digit; 0 = resolved_alpha's default.
  std::size_t alpha = 0;
  /// t, the plaintext modulus (BFV and BGV; 0 for CKKS).
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

  /// BFV with no modulus chosen yet.
  EncryptionParameters() = default;
  /// Parameters of scheme `s` with no modulus chosen yet.
  /// @param s the scheme.
  explicit EncryptionParameters(SchemeType s) : scheme(s) {}
};

/// Primes per key-switching digit once `alpha` = 0 (the default) is resolved: `special_primes`
/// (at least 1), capped at the number of Q primes. An explicit alpha is returned as it is
/// (Context::create rejects one above |Q|).
/// @param p the parameters.
/// @return alpha, the primes per digit.
std::size_t resolved_alpha(const EncryptionParameters& p);

/// An identifier of the parameters (64-bit FNV-1a over scheme, N, t, special primes, resolved
/// alpha, mul_method, every prime and, when not empty, the rescale groups; word_bits is not
/// included, the data being the same): objects whose contexts have different hashes never mix,
/// and serialized objects carry it (io/serialize.h). Not a cryptographic hash.
/// @param p the parameters (not validated).
/// @return the hash.
std::uint64_t parameter_hash(const EncryptionParameters& p);

/// Largest log2(Q*P) allowed for a ternary secret at the given level (0 when N is unsupported).
/// N <= 2^15: HomomorphicEncryption.org Security Standard v1.1 (Albrecht et al. 2018), Table 1,
/// the values SEAL enforces. N = 2^16, 2^17: 128-bit from the FHE Security Guidelines tables
/// (lattice-estimator, 2024: 1747 and 3523 bits); 192/256-bit extrapolated linearly in N from the
/// 2^15 row, which is how that table grows.
/// @param n N, the ring degree.
/// @param level the security level; SecurityLevel::none returns 2^30 (no bound).
/// @return the bound in bits, or 0 when N is not a power of two in 2^10..2^17.
int max_coeff_modulus_bits(std::size_t n, SecurityLevel level);

/// Choices of the coefficient modulus (SEAL's CoeffModulus).
struct CoeffModulus {
  /// SEAL's BFVDefault primes (SEAL 4.x's tables, value for value, N = 2^10..2^15; they are the
  /// largest NTT-friendly primes of each size) and Veil's own choice for 2^16 and 2^17 (within
  /// the security bound: 128-bit, or equal-size primes under the 192/256-bit bound). The last
  /// prime is the special prime.
  /// @param n N, a power of two in 2^10..2^17.
  /// @param level the security level (SecurityLevel::none: the 128-bit table).
  /// @return the primes, Q's first and the special prime last.
  /// @throws InvalidArgument naming `poly_modulus_degree` for another N.
  static std::vector<u64> bfv_default(std::size_t n, SecurityLevel level = SecurityLevel::tc128);
  /// The largest distinct NTT-friendly primes (q = 1 mod 2N) of the given bit sizes, in order
  /// (SEAL's CoeffModulus::Create: primes of one size handed out in ascending order).
  /// @param n N, a power of two in 2..2^17.
  /// @param bit_sizes one size per prime, each 2..60 bits.
  /// @return the primes, one per size, in the order of bit_sizes.
  /// @throws InvalidArgument naming `poly_modulus_degree` (N), `bit_sizes` (empty or a size
  ///         outside 2..60), or when not enough primes of a size exist.
  static std::vector<u64> create(std::size_t n, const std::vector<int>& bit_sizes);
};

/// Choices of the plaintext modulus (SEAL's PlainModulus).
struct PlainModulus {
  /// The largest prime t < 2^bits with t = 1 mod 2N (enables batching).
  /// @param n N, a power of two in 2..2^17.
  /// @param bits the bit size of t, 2..60.
  /// @return t.
  /// @throws InvalidArgument naming `poly_modulus_degree` (N) or `bits`, or when no such prime
  ///         exists.
  static u64 batching(std::size_t n, int bits);
};

}  // namespace veil
