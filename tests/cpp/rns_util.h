// Test fixture of the rns layer: exact big-integer arithmetic with Boost cpp_int (CRT composition
// with Fermat inverses, exact quotients and rounding), the oracle for base conversion, scaling and
// ModDown (DESIGN.md "Tests"), independent of the fixed-point / Shoup / Barrett code under test.
#pragma once
#include <boost/multiprecision/cpp_int.hpp>
#include <cstddef>
#include <random>
#include <vector>

#include "test_util.h"

namespace veil::test {

using boost::multiprecision::cpp_int;

inline cpp_int prod(const std::vector<u64>& q) {
  cpp_int p = 1;
  for (u64 v : q)
    p *= v;
  return p;
}

/// x mod p in [0, p) for any signed big integer.
inline u64 mod_u(const cpp_int& x, u64 p) {
  cpp_int r = x % p;
  if (r < 0)
    r += p;
  return static_cast<u64>(r);
}

inline cpp_int mod_pos(const cpp_int& x, const cpp_int& m) {
  cpp_int r = x % m;
  if (r < 0)
    r += m;
  return r;
}

/// floor(a / b) for b > 0 (cpp_int division truncates toward zero).
inline cpp_int floor_div(const cpp_int& a, const cpp_int& b) { return (a - mod_pos(a, b)) / b; }

/// round(a / b) for b > 0 odd (no ties), a >= 0 or negative.
inline cpp_int round_div(const cpp_int& a, const cpp_int& b) { return floor_div(2 * a + b, 2 * b); }

/// CRT data for a base of primes: q-hat_i = Q/q_i and [q-hat_i^-1]_{q_i} by Fermat.
struct Crt {
  std::vector<u64> q;
  cpp_int Q;
  std::vector<cpp_int> qhat;
  std::vector<u64> qhat_inv;
  explicit Crt(const std::vector<u64>& primes) : q(primes), Q(prod(primes)) {
    for (u64 qi : q) {
      qhat.push_back(Q / qi);
      qhat_inv.push_back(static_cast<u64>(
          boost::multiprecision::powm(cpp_int(qhat.back() % qi), cpp_int(qi - 2), cpp_int(qi))));
    }
  }
  /// x in [0, Q) from residues col[i * stride].
  cpp_int compose(const u64* col, std::size_t stride) const {
    cpp_int x = 0;
    for (std::size_t i = 0; i < q.size(); ++i)
      x += cpp_int(col[i * stride]) * qhat[i] * qhat_inv[i];
    return x % Q;
  }
  /// The same as the centered integer in (-Q/2, Q/2].
  cpp_int centered(const u64* col, std::size_t stride) const {
    cpp_int x = compose(col, stride);
    if (2 * x > Q)
      x -= Q;
    return x;
  }
  /// sum_i [x_i * c * qhat_inv_i]_{q_i} * qhat_i (the fast conversion's integer).
  cpp_int fast_sum(const u64* col, std::size_t stride, const cpp_int& c = 1) const {
    cpp_int s = 0;
    for (std::size_t i = 0; i < q.size(); ++i)
      s += ((cpp_int(col[i * stride]) * c * qhat_inv[i]) % q[i]) * qhat[i];
    return s;
  }
};

/// num_polys polynomials [poly][limb][n] of residues uniform over `base` (rng() % q).
inline std::vector<u64> random_residues(std::mt19937_64& rng, const std::vector<u64>& base,
                                        std::size_t n, std::size_t num_polys) {
  std::vector<u64> v(num_polys * base.size() * n);
  for (std::size_t p = 0; p < num_polys; ++p)
    for (std::size_t l = 0; l < base.size(); ++l)
      for (std::size_t c = 0; c < n; ++c)
        v[(p * base.size() + l) * n + c] = rng() % base[l];
  return v;
}

/// Uniform-ish big integer in [lo, hi).
inline cpp_int random_big(std::mt19937_64& rng, const cpp_int& lo, const cpp_int& hi) {
  const cpp_int range = hi - lo;
  const std::size_t words = boost::multiprecision::msb(range) / 64 + 3;
  cpp_int r = 0;
  for (std::size_t w = 0; w < words; ++w)
    r = (r << 64) | cpp_int(rng());
  return lo + r % range;
}

/// Writes the residues of x over `base` into column c of polynomial storage [limb][n].
inline void put_residues(const cpp_int& x, const std::vector<u64>& base, u64* poly, std::size_t n,
                         std::size_t c) {
  for (std::size_t l = 0; l < base.size(); ++l)
    poly[l * n + c] = mod_u(x, base[l]);
}

} // namespace veil::test
