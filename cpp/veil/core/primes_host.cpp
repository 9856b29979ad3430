#include "veil/core/primes.h"

#include <algorithm>
#include <bit>
#include <random>
#include <string>

#include <boost/multiprecision/miller_rabin.hpp>

#include "veil/core/error.h"

namespace veil {

namespace {
// Strong probable-prime test of odd n > 2 to base a (1 < a < n), with n - 1 = d * 2^s, d odd.
// Boost's powm works on u64 through a 128-bit intermediate product, so it is exact for any n.
bool strong_probable_prime(u64 n, u64 a, u64 d, int s) {
  u64 x = boost::multiprecision::powm(a, d, n);
  if (x == 1 || x == n - 1) return true;
  for (int r = 1; r < s; ++r) {
    x = boost::multiprecision::powm(x, 2u, n);
    if (x == n - 1) return true;
  }
  return false;
}
}  // namespace

// Two stages, each of which never rejects a prime:
// 1. Boost.Multiprecision's miller_rabin_test: exact for n <= 227; above that, trial division by
//    the primes up to 227, then a Fermat test to base 228, then `trials` Miller-Rabin rounds with
//    random bases. With trials = 0 no random base is drawn (the engine is never called), so the
//    answer is a function of n alone; this stage is a cheap filter that rejects almost every
//    composite (a Fermat pseudoprime to base 228 with no factor up to 227 passes it).
// 2. A strong probable-prime test to each of the first twelve prime bases 2..37, which no
//    composite below 2^64 passes (Sorenson & Webster, "Strong pseudoprimes to twelve prime bases",
//    Math. Comp. 86 (2017): the least such composite is 318665857834031151167461 > 2^64).
// So the result is exact for every u64. Random Boost rounds would add nothing after stage 2.
bool is_prime(u64 n) {
  if (n < 2) return false;
  constexpr unsigned kBoostTrials = 0;
  std::minstd_rand unused_engine(1);  // miller_rabin_test's signature needs one; not drawn from
  if (!boost::multiprecision::miller_rabin_test(n, kBoostTrials, unused_engine)) return false;
  if (n <= 227) return true;  // Boost's answer is exact there (a table of small primes)
  // n > 227 has no prime factor up to 227, so it is odd and every base below is < n.
  const int s = std::countr_zero(n - 1);
  const u64 d = (n - 1) >> s;
  for (u64 a : {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}) {
    if (!strong_probable_prime(n, a, d, s)) return false;
  }
  return true;
}

std::vector<u64> generate_ntt_primes(int bit_size, u64 n, std::size_t count,
                                     const std::vector<u64>& exclude) {
  if (bit_size < 2 || bit_size > 61) {
    throw InvalidArgument("bit_size: expected 2..61, got " + std::to_string(bit_size));
  }
  if (!is_power_of_two(n) || n > (u64(1) << 58)) {
    throw InvalidArgument("poly_modulus_degree: expected a power of two below 2^58, got " +
                          std::to_string(n));
  }
  const u64 step = 2 * n;
  const u64 upper = u64(1) << bit_size;
  const u64 lower = u64(1) << (bit_size - 1);
  std::vector<u64> out;
  if (upper <= step) {
    throw InvalidArgument("bit_size " + std::to_string(bit_size) +
                          " is too small for NTT-friendly primes of degree " + std::to_string(n));
  }
  // Largest candidate below 2^bit_size that is 1 mod 2N.
  u64 cand = upper - step + 1;
  while (out.size() < count && cand > lower) {
    if (is_prime(cand) && std::find(exclude.begin(), exclude.end(), cand) == exclude.end()) {
      out.push_back(cand);
    }
    if (cand < step) break;
    cand -= step;
  }
  if (out.size() < count) {
    throw InvalidArgument("not enough " + std::to_string(bit_size) +
                          "-bit NTT-friendly primes for poly_modulus_degree " + std::to_string(n));
  }
  return out;
}

u64 minimal_primitive_root(u64 two_n, const Modulus& q) {
  if ((q.value - 1) % two_n != 0) {
    throw InvalidArgument("coeff_modulus: prime " + std::to_string(q.value) +
                          " is not 1 mod 2N (2N = " + std::to_string(two_n) + ")");
  }
  // Find a generator of the 2N-th roots: g = x^((q-1)/2N) with g^N = -1.
  u64 exp = (q.value - 1) / two_n;
  u64 root = 0;
  for (u64 x = 2; x < q.value; ++x) {
    u64 g = pow_mod(x, exp, q);
    if (pow_mod(g, two_n / 2, q) == q.value - 1) {
      root = g;
      break;
    }
  }
  if (root == 0) throw InvalidArgument("coeff_modulus: no primitive 2N-th root found");
  // Minimal among all primitive 2N-th roots: root^k for odd k.
  u64 g2 = mul_mod(root, root, q);
  u64 cur = root, best = root;
  for (u64 k = 1; k < two_n; k += 2) {
    if (cur < best) best = cur;
    cur = mul_mod(cur, g2, q);
  }
  return best;
}

}  // namespace veil
