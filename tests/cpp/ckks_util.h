// Test fixture of the CKKS and circuits layers: float64 oracles on complex slot vectors computed
// here with std::complex<double> (DESIGN.md "Tests": numpy-style float64 oracles for CKKS,
// precision reported in bits), seeded random messages, CKKS parameters, and a CKKS key set on a
// device with encryption/decryption of slot vectors. Slot j of a plaintext is the value at
// zeta^(3^j); rotation by k maps slot j <- slot j + k (mod N/2).
#pragma once
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <vector>

#include "rlwe_util.h"
#include "test_util.h"
#include "veil/api/encryptor.h"
#include "veil/api/evaluator.h"
#include "veil/ckks/encoder.h"
#include "veil/rlwe/keygen.h"

namespace veil::test {

using cd = std::complex<double>;
using CVec = std::vector<cd>;

// ---- slot-wise float64 oracles -----------------------------------------------------------------

template <class F> CVec zip(const CVec& a, const CVec& b, F f) {
  CVec r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    r[i] = f(a[i], b[i]);
  return r;
}
inline CVec vadd(const CVec& a, const CVec& b) {
  return zip(a, b, [](cd x, cd y) { return x + y; });
}
inline CVec vsub(const CVec& a, const CVec& b) {
  return zip(a, b, [](cd x, cd y) { return x - y; });
}
inline CVec vmul(const CVec& a, const CVec& b) {
  return zip(a, b, [](cd x, cd y) { return x * y; });
}
inline CVec vscale(const CVec& a, cd c) {
  CVec r(a);
  for (auto& x : r)
    x *= c;
  return r;
}
inline CVec vconj(const CVec& a) {
  CVec r(a);
  for (auto& x : r)
    x = std::conj(x);
  return r;
}
/// Slot j <- slot j + k (mod the slot count).
inline CVec rot(const CVec& v, long long k) {
  const long long n = static_cast<long long>(v.size());
  CVec r(v.size());
  for (long long j = 0; j < n; ++j)
    r[j] = v[(((j + k) % n) + n) % n];
  return r;
}
/// max_i |a_i - b_i|.
inline double max_err(const CVec& a, const CVec& b) {
  double e = 0;
  for (std::size_t i = 0; i < a.size(); ++i)
    e = std::max(e, std::abs(a[i] - b[i]));
  return e;
}

/// Worst and mean error as bits (-log2), like veil.ckks.precision.
struct Precision {
  double min_bits = 0, mean_bits = 0, max_error = 0, mean_error = 0;
};

inline Precision precision(const CVec& expected, const CVec& got) {
  EXPECT_EQ(expected.size(), got.size());
  Precision p;
  double sum = 0;
  const std::size_t n = std::min(expected.size(), got.size());
  for (std::size_t i = 0; i < n; ++i) {
    const double e = std::abs(expected[i] - got[i]);
    p.max_error = std::max(p.max_error, e);
    sum += e;
  }
  p.mean_error = n ? sum / static_cast<double>(n) : 0.0;
  p.min_bits = p.max_error == 0 ? 99 : -std::log2(p.max_error);
  p.mean_bits = p.mean_error == 0 ? 99 : -std::log2(p.mean_error);
  return p;
}

inline void report(const char* what, const Precision& p) {
  std::printf("[ precision ] %s: min %.2f bits, mean %.2f bits\n", what, p.min_bits, p.mean_bits);
}

/// n values, real and imaginary parts uniform in [-bound, bound] (imaginary 0 when !complex).
inline CVec random_values(std::size_t n, std::uint64_t seed, double bound = 1.0,
                          bool complex = true) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> u(-bound, bound);
  CVec v(n);
  for (auto& x : v) {
    const double re = u(rng);
    x = cd(re, complex ? u(rng) : 0.0);
  }
  return v;
}

/// `period` values repeated to fill `slots` slots.
inline CVec tile(const CVec& v, std::size_t slots) {
  CVec out(slots);
  for (std::size_t i = 0; i < slots; ++i)
    out[i] = v[i % v.size()];
  return out;
}

/// A CKKS context at degree n with primes of `bits`, the last `special_primes` special (security
/// checks off: these test mechanics, not security).
inline ContextPtr ckks_context(std::size_t n, const std::vector<int>& bits,
                               std::size_t special_primes = 1, std::size_t alpha = 0) {
  return Context::create(make_params(SchemeType::ckks, n, bits, special_primes, alpha),
                         SecurityLevel::none);
}

/// A CKKS key set on a device, with its encoder, encryptor, decryptor and evaluator.
struct CkksKeys {
  ContextPtr ctx;
  Device dev;
  KeyGenerator kg;
  SecretKey sk;
  RelinKeys rk;
  CKKSEncoder encoder;
  Encryptor encryptor;
  Decryptor decryptor;
  Evaluator ev;
  CkksKeys(ContextPtr c, const Device& d, std::uint64_t seed)
      : ctx(c), dev(d), kg(c, d, seed), sk(kg.secret_key()), rk(kg.create_relin_keys()), encoder(c),
        encryptor(c, sk, seed + 1), decryptor(c, sk), ev(c) {}

  Ciphertext encrypt(const CVec& v, double scale, std::size_t level) const {
    return encryptor.encrypt(encoder.encode(v, scale, level, dev));
  }
  CVec decrypt(const Ciphertext& ct) const { return encoder.decode(decryptor.decrypt(ct)); }
  GaloisKeys galois(const std::vector<int>& steps) const {
    return kg.create_galois_keys(steps, true);
  }
};

} // namespace veil::test
