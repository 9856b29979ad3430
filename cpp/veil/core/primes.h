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
/// @param n any 64-bit word.
/// @return true exactly when n is prime (false for 0 and 1).
bool is_prime(u64 n);

/// The `count` largest primes q with 2^(bit_size-1) < q < 2^bit_size and q = 1 mod 2N
/// (NTT-friendly for the negacyclic NTT of size N), in descending order, skipping any listed in
/// `exclude`. Candidates are walked down from the largest 1 mod 2N below 2^bit_size; each is
/// tested with is_prime. Defined in primes_host.cpp (host only).
/// @param bit_size the primes' bit length, 2..61.
/// @param n the ring degree N, a power of two below 2^58.
/// @param count how many primes to return.
/// @param exclude primes to skip (e.g. those already in the chain).
/// @return the primes, largest first.
/// @throws veil::InvalidArgument if bit_size is outside [2, 61], n is not a power of two below
/// 2^58, 2N >= 2^bit_size, or fewer than `count` such primes exist in the bit range.
std::vector<u64> generate_ntt_primes(int bit_size, u64 n, std::size_t count,
                                     const std::vector<u64>& exclude = {});

/// The minimal primitive 2N-th root of unity mod q (SEAL's choice, so NTT-form data is
/// exchangeable with SEAL): a root g = x^((q-1)/2N) with g^N = -1 from the first working x >= 2,
/// then the smallest of its odd powers g^k, k < 2N. Defined in primes_host.cpp (host only).
/// @param two_n 2N, a power of two dividing q - 1.
/// @param q the prime modulus.
/// @return the least primitive 2N-th root of unity in [0, q).
/// @throws veil::InvalidArgument if q != 1 mod 2N, or no primitive 2N-th root is found (q not
/// prime).
u64 minimal_primitive_root(u64 two_n, const Modulus& q);

/// Reverses the lowest `bits` bits of x (host; a loop over the bits).
/// @param x the index, below 2^bits.
/// @param bits the number of bits, 0..32.
/// @return x with its lowest `bits` bits in reverse order (higher bits are dropped).
inline u32 reverse_bits(u32 x, int bits) {
  u32 r = 0;
  for (int i = 0; i < bits; ++i) {
    r = (r << 1) | (x & 1);
    x >>= 1;
  }
  return r;
}

/// reverse_bits for host and device code (__brev on the GPU).
/// @param x the index, below 2^bits.
/// @param bits the number of bits, 1..32 on the GPU (a shift by 32 - bits).
/// @return x with its lowest `bits` bits in reverse order.
VEIL_HD u32 bit_reverse(u32 x, int bits) {
#if VEIL_DEVICE_CODE
  return __brev(x) >> (32 - bits);
#else
  return reverse_bits(x, bits);
#endif
}

/// The least l with 2^l >= n, i.e. log2(n) for a power of two (0 for n = 0 and n = 1).
/// @param n any 64-bit word.
/// @return ceil(log2(n)), 0 for n <= 1.
inline int log2_exact(u64 n) { return n == 0 ? 0 : static_cast<int>(std::bit_width(n - 1)); }

/// Whether n is a power of two (std::has_single_bit).
/// @param n any 64-bit word.
/// @return true when n = 2^k for some k >= 0 (false for 0).
inline bool is_power_of_two(u64 n) { return std::has_single_bit(n); }

}  // namespace veil
