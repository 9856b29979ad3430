// Test fixture of the ring layer: the schoolbook negacyclic product, the oracle for the NTT and for
// every plaintext product mod t (DESIGN.md "Tests"). Computed here in 128-bit integers, independent
// of the NTT and of the Barrett/Shoup arithmetic under test.
#pragma once
#include <cstddef>
#include <vector>

#include "test_util.h"

namespace veil::test {

/// c = a * b in Z_q[X]/(X^N + 1), schoolbook. Products (< 2^122) are summed 32 at a time in 128
/// bits before reducing, so no sum can overflow; zero coefficients of a are skipped.
inline Vec negacyclic_schoolbook(const u64* a, const u64* b, std::size_t n, u64 q) {
  Vec c(n);
  for (std::size_t k = 0; k < n; ++k) {
    u128 pos = 0, neg = 0;
    int pos_terms = 0, neg_terms = 0;
    for (std::size_t i = 0; i < n; ++i) {
      if (a[i] == 0)
        continue;
      if (i <= k) { // X^i * X^(k-i) = X^k
        pos += static_cast<u128>(a[i]) * b[k - i];
        if (++pos_terms == 32)
          pos %= q, pos_terms = 0;
      } else { // X^i * X^(n+k-i) = X^(n+k) = -X^k
        neg += static_cast<u128>(a[i]) * b[n + k - i];
        if (++neg_terms == 32)
          neg %= q, neg_terms = 0;
      }
    }
    c[k] = subm(static_cast<u64>(pos % q), static_cast<u64>(neg % q), q);
  }
  return c;
}
inline Vec negacyclic_schoolbook(const Vec& a, const Vec& b, u64 q) {
  return negacyclic_schoolbook(a.data(), b.data(), a.size(), q);
}

/// a + b coefficient-wise mod q.
inline Vec add_poly(const Vec& a, const Vec& b, u64 q) {
  Vec r(a.size());
  for (std::size_t i = 0; i < a.size(); ++i)
    r[i] = addm(a[i], b[i], q);
  return r;
}

} // namespace veil::test
