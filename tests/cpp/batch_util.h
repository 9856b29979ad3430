// Test fixture of the BFV and BGV layers: plaintext arithmetic mod t on SEAL's 2 x N/2 slot matrix,
// computed here in 128-bit integers independently of the library (DESIGN.md "Tests"), and
// parameters for both schemes. Slot (r, c) is index r * N/2 + c; rotate_rows(k) maps slot
// (r, c) <- (r, (c + k) mod N/2), rotate_columns swaps the two rows, and a Galois element
// g = +-3^k mod 2N acts as rotation by k (with a row swap for the minus sign).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "rlwe_util.h"
#include "test_util.h"
#include "veil/bfv/batch_encoder.h"

namespace veil::test {

// ---- slot-wise arithmetic mod t ----------------------------------------------------------------

template <class F> Vec zip(const Vec& a, const Vec& b, F f) {
  Vec r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    r[i] = f(a[i], b[i]);
  return r;
}
inline Vec vadd(const Vec& a, const Vec& b, u64 t) {
  return zip(a, b, [t](u64 x, u64 y) { return addm(x, y, t); });
}
inline Vec vsub(const Vec& a, const Vec& b, u64 t) {
  return zip(a, b, [t](u64 x, u64 y) { return subm(x, y, t); });
}
inline Vec vmul(const Vec& a, const Vec& b, u64 t) {
  return zip(a, b, [t](u64 x, u64 y) { return mulm(x, y, t); });
}
inline Vec vneg(const Vec& a, u64 t) {
  Vec r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    r[i] = subm(0, a[i], t);
  return r;
}
inline Vec vpow(const Vec& a, u64 e, u64 t) {
  Vec r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    r[i] = powm(a[i], e, t);
  return r;
}

// ---- slot permutations -------------------------------------------------------------------------

inline Vec rot_rows(const Vec& v, long long k) {
  const long long row = static_cast<long long>(v.size() / 2);
  Vec r(v.size());
  for (long long i = 0; i < 2; ++i)
    for (long long c = 0; c < row; ++c)
      r[i * row + c] = v[i * row + (((c + k) % row) + row) % row];
  return r;
}
inline Vec swap_rows(const Vec& v) {
  const std::size_t row = v.size() / 2;
  Vec r(v.size());
  for (std::size_t i = 0; i < 2; ++i)
    for (std::size_t c = 0; c < row; ++c)
      r[i * row + c] = v[(1 - i) * row + c];
  return r;
}
/// X -> X^g: g = 3^k mod 2N rotates the rows by k; g = -3^k also swaps them.
inline Vec galois_slots(const Vec& v, u64 g) {
  const u64 n = v.size(), m = 2 * n, row = n / 2;
  u64 p = 1;
  for (u64 k = 0; k < row; ++k) {
    if (p == g)
      return rot_rows(v, static_cast<long long>(k));
    if (p == m - g)
      return swap_rows(rot_rows(v, static_cast<long long>(k)));
    p = p * 3 % m;
  }
  ADD_FAILURE() << "galois element " << g << " is not +-3^k mod " << m;
  return {};
}

/// Slots as centered representatives in (-t/2, t/2].
inline SVec centered(const Vec& v, u64 t) {
  SVec r(v.size());
  for (std::size_t i = 0; i < v.size(); ++i)
    r[i] = v[i] > t / 2 ? -static_cast<std::int64_t>(t - v[i]) : static_cast<std::int64_t>(v[i]);
  return r;
}

/// Compares decrypted slots with the oracle's, reporting the count and the first difference.
template <class T>
::testing::AssertionResult same_slots(const std::vector<T>& got, const std::vector<T>& want) {
  return same_values(got, want, "slots");
}

// ---- parameters --------------------------------------------------------------------------------

/// BFV at degree n with primes of `bits` (empty: SEAL's default chain for n), the last
/// `special_primes` special, `alpha` primes per digit (0: the default), t the largest `t_bits`-bit
/// batching prime (0: t = 65537), and multiplication `method`.
inline EncryptionParameters bfv_params(std::size_t n, const std::vector<int>& bits,
                                       std::size_t special_primes = 1, std::size_t alpha = 0,
                                       int t_bits = 0, MulMethod method = MulMethod::hps) {
  EncryptionParameters p(SchemeType::bfv);
  p.poly_modulus_degree = n;
  p.coeff_modulus = bits.empty() ? CoeffModulus::bfv_default(n) : CoeffModulus::create(n, bits);
  p.special_primes = special_primes;
  p.alpha = alpha;
  p.plain_modulus = t_bits ? PlainModulus::batching(n, t_bits) : 65537;
  p.mul_method = method;
  return p;
}

/// BGV at degree n with primes of `bits` (the last `special_primes` special) and t the largest
/// `t_bits`-bit batching prime.
inline EncryptionParameters bgv_params(std::size_t n, const std::vector<int>& bits,
                                       std::size_t special_primes = 1, int t_bits = 20) {
  return make_params(SchemeType::bgv, n, bits, special_primes, 0,
                     PlainModulus::batching(n, t_bits));
}

} // namespace veil::test
