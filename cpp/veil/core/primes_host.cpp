#include "veil/core/primes.h"

#include <algorithm>
#include <string>

#include "veil/core/error.h"

namespace veil {

namespace {
u64 mulmod_u128(u64 a, u64 b, u64 n) { return static_cast<u64>((u128(a) * b) % n); }
u64 powmod_u128(u64 b, u64 e, u64 n) {
  u64 r = 1 % n;
  b %= n;
  while (e) {
    if (e & 1) r = mulmod_u128(r, b, n);
    b = mulmod_u128(b, b, n);
    e >>= 1;
  }
  return r;
}
}  // namespace

bool is_prime(u64 n) {
  if (n < 2) return false;
  static const u64 small[] = {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37};
  for (u64 p : small) {
    if (n % p == 0) return n == p;
  }
  u64 d = n - 1;
  int s = 0;
  while ((d & 1) == 0) {
    d >>= 1;
    ++s;
  }
  for (u64 a : small) {
    u64 x = powmod_u128(a, d, n);
    if (x == 1 || x == n - 1) continue;
    bool composite = true;
    for (int r = 1; r < s; ++r) {
      x = mulmod_u128(x, x, n);
      if (x == n - 1) {
        composite = false;
        break;
      }
    }
    if (composite) return false;
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
