#include "veil/core/modarith.h"

#include <bit>
#include <string>

#include "veil/core/error.h"

namespace veil {

Modulus::Modulus(u64 q) : value(q) {
  if (q < 2 || q >= (u64(1) << 61)) {
    throw InvalidArgument("modulus: expected 2 <= q < 2^61, got " + std::to_string(q));
  }
  // floor(2^128 / q) = floor((2^128 - 1) / q) because q is not a power of two... unless it is;
  // handle exactly via long division on two words.
  u128 high = (u128(1) << 64) / q;           // floor(2^64 / q)
  u128 rem = (u128(1) << 64) - high * q;     // 2^64 mod q
  u128 low = (rem << 64) / q;                // next word of the quotient
  ratio_hi = static_cast<u64>(high);
  ratio_lo = static_cast<u64>(low);
  bit_count = static_cast<int>(std::bit_width(q));
  // floor(2^(2b) / q) = floor(2^64 / q) >> (64 - 2b) (nested floors): at most 2^(b+1), which
  // fits 32 bits for every q that fits_word32 admits.
  if (fits_word32(q)) barrett32 = static_cast<u32>(ratio_hi >> (64 - 2 * bit_count));
}

u64 pow_mod(u64 base, u64 exp, const Modulus& m) {
  u64 result = 1 % m.value;
  base = reduce_word(base, m);
  while (exp) {
    if (exp & 1) result = mul_mod(result, base, m);
    base = mul_mod(base, base, m);
    exp >>= 1;
  }
  return result;
}

u64 inv_mod(u64 a, u64 q) {
  // Extended Euclid on signed 128-bit values.
  __int128 t = 0, new_t = 1, r = q, new_r = a % q;
  while (new_r != 0) {
    __int128 quo = r / new_r;
    __int128 tmp = t - quo * new_t;
    t = new_t;
    new_t = tmp;
    tmp = r - quo * new_r;
    r = new_r;
    new_r = tmp;
  }
  if (r != 1) {
    throw InvalidArgument("inv_mod: " + std::to_string(a) + " has no inverse modulo " +
                          std::to_string(q));
  }
  if (t < 0) t += q;
  return static_cast<u64>(t);
}

}  // namespace veil
