// Prime generation and number-theoretic helpers (host only).
#pragma once
#include <bit>
#include <cstdint>
#include <vector>

#include "veil/core/hd.h"
#include "veil/core/modarith.h"

namespace veil {

/// Whether n is prime; exact and deterministic for every 64-bit n. Boost.Multiprecision's
/// miller_rabin_test (trial division up to 227 and a Fermat test, no random rounds) filters, then
/// strong probable-prime tests to bases 2, 3, 5, ..., 37 decide: a proven witness set below 2^64
/// (Sorenson & Webster, Math. Comp. 86 (2017)). Defined in primes_host.cpp (host only).
bool is_prime(u64 n);

/// The `count` largest primes q < 2^bit_size with q = 1 mod 2N (NTT-friendly for the negacyclic
/// NTT of size N), in descending order, skipping any listed in `exclude`. Throws InvalidArgument
/// if bit_size is outside [2, 61] or not enough primes exist.
std::vector<u64> generate_ntt_primes(int bit_size, u64 n, std::size_t count,
                                     const std::vector<u64>& exclude = {});

/// The minimal primitive 2N-th root of unity mod q (SEAL's choice, so NTT-form data is
/// exchangeable with SEAL). Throws InvalidArgument if q != 1 mod 2N.
u64 minimal_primitive_root(u64 two_n, const Modulus& q);

/// Reverses the lowest `bits` bits of x.
inline u32 reverse_bits(u32 x, int bits) {
  u32 r = 0;
  for (int i = 0; i < bits; ++i) {
    r = (r << 1) | (x & 1);
    x >>= 1;
  }
  return r;
}

/// reverse_bits for host and device code (__brev on the GPU).
VEIL_HD u32 bit_reverse(u32 x, int bits) {
#if VEIL_DEVICE_CODE
  return __brev(x) >> (32 - bits);
#else
  return reverse_bits(x, bits);
#endif
}

/// The least l with 2^l >= n, i.e. log2(n) for a power of two (0 for n = 0 and n = 1).
inline int log2_exact(u64 n) { return n == 0 ? 0 : static_cast<int>(std::bit_width(n - 1)); }

inline bool is_power_of_two(u64 n) { return std::has_single_bit(n); }

}  // namespace veil
