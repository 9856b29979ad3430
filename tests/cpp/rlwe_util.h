// Test fixture of the rlwe layer: parameter builders, small contexts for each scheme, key sets
// from explicit seeds, and comparison of ciphertexts and keys word for word (parity tests).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <vector>

#include "test_util.h"
#include "veil/api/encryptor.h"
#include "veil/api/evaluator.h"
#include "veil/rlwe/context.h"
#include "veil/rlwe/keygen.h"
#include "veil/rlwe/params.h"

namespace veil::test {

/// Parameters of `s` at degree n: primes of `bits` (the last `special_primes` of them special),
/// `alpha` primes per key-switching digit (0: the default), and plain modulus `plain` (0: unset,
/// as CKKS wants).
inline EncryptionParameters make_params(SchemeType s, std::size_t n, const std::vector<int>& bits,
                                        std::size_t special_primes = 1, std::size_t alpha = 0,
                                        u64 plain = 0) {
  EncryptionParameters p(s);
  p.poly_modulus_degree = n;
  p.coeff_modulus = CoeffModulus::create(n, bits);
  p.special_primes = special_primes;
  p.alpha = alpha;
  if (plain)
    p.plain_modulus = plain;
  return p;
}

/// Small parameters for each scheme (security checks off: these test mechanics, not security).
/// BFV/BGV: N = 4096, Q = 2 x 36-bit primes + one 37-bit special prime, t = 20-bit batching
/// prime (or `plain` when given). CKKS: N = 4096, 50 + 40 + 40 bits + one 50-bit special prime.
inline EncryptionParameters small_params(SchemeType s, std::size_t n = 4096,
                                         std::optional<std::uint64_t> plain = std::nullopt,
                                         std::size_t special_primes = 1, std::size_t alpha = 0) {
  EncryptionParameters p(s);
  p.poly_modulus_degree = n;
  if (s == SchemeType::ckks) {
    p.coeff_modulus = CoeffModulus::create(n, {50, 40, 40, 50});
  } else {
    p.coeff_modulus = CoeffModulus::create(n, {36, 36, 37});
    p.plain_modulus = plain ? *plain : PlainModulus::batching(n, 20);
  }
  if (special_primes != 1) {
    // k special primes of 50 bits after the Q primes (alpha primes per digit).
    std::vector<int> bits(p.coeff_modulus.size() - 1, s == SchemeType::ckks ? 40 : 36);
    for (std::size_t i = 0; i < special_primes; ++i)
      bits.push_back(50);
    p.coeff_modulus = CoeffModulus::create(n, bits);
  }
  p.special_primes = special_primes;
  p.alpha = alpha;
  return p;
}

inline ContextPtr small_context(SchemeType s, std::size_t n = 4096,
                                std::optional<std::uint64_t> plain = std::nullopt) {
  return Context::create(small_params(s, n, plain), SecurityLevel::none);
}

/// Keys from an explicit seed on `dev`: secret, public, relinearization and Galois keys for
/// rotation steps +-1 and the column swap.
struct KeySet {
  ContextPtr ctx;
  Device dev;
  SecretKey sk;
  PublicKey pk;
  RelinKeys rk;
  GaloisKeys gk;
  KeySet(ContextPtr c, const Device& d, std::uint64_t seed) : ctx(std::move(c)), dev(d) {
    KeyGenerator kg(ctx, dev, seed);
    sk = kg.secret_key();
    pk = kg.create_public_key();
    rk = kg.create_relin_keys();
    gk = kg.create_galois_keys({1, -1}, true);
  }
};

inline std::vector<std::uint64_t> words(const RelinKeys& k) { return words(k.key()); }

/// Ciphertexts: shape, metadata (level, NTT form, scale, correction factor) and words.
inline ::testing::AssertionResult same_ct(const Ciphertext& x, const Ciphertext& y) {
  if (x.size() != y.size() || x.level() != y.level() || x.is_ntt_form() != y.is_ntt_form()) {
    return ::testing::AssertionFailure() << "shape differs: size " << x.size() << "/" << y.size()
                                         << ", level " << x.level() << "/" << y.level();
  }
  if (x.scale() != y.scale() || x.correction_factor() != y.correction_factor()) {
    return ::testing::AssertionFailure()
           << "scale " << x.scale() << "/" << y.scale() << ", correction factor "
           << x.correction_factor() << "/" << y.correction_factor();
  }
  return same_words(x, y);
}

/// Galois key sets: the same elements, each key word for word.
inline ::testing::AssertionResult same_galois(const GaloisKeys& x, const GaloisKeys& y) {
  if (x.keys().size() != y.keys().size()) {
    return ::testing::AssertionFailure()
           << x.keys().size() << " keys vs " << y.keys().size() << " keys";
  }
  for (const auto& [elt, k] : x.keys()) {
    if (!y.has_key(elt))
      return ::testing::AssertionFailure() << "no key for element " << elt;
    auto r = same_words(k, y.key(elt));
    if (!r)
      return r << " (element " << elt << ")";
  }
  return ::testing::AssertionSuccess();
}

} // namespace veil::test
