// ChaCha20 block function (RFC 8439, section 2.3), host and device.
//
// Veil addresses its keystream by (seed, domain, stream, block): the 256-bit seed is the key,
// the 96-bit nonce is (domain low 32, domain high 32, stream), and `block` is the 32-bit block
// counter. Every GPU thread can thus compute exactly the blocks it needs, and the CPU computes
// the same ones, which is what makes keys and ciphertexts bit-identical across backends.
#pragma once
#include <cstdint>

#include "veil/core/hd.h"

namespace veil {

/// A 256-bit ChaCha key as eight 32-bit words (RFC 8439 §2.3's key words 0..7).
struct ChaChaKey {
  /// The key words, in state order.
  std::uint32_t words[8];
};

/// 32-bit left rotation (one funnel shift on the GPU).
/// @param x the word.
/// @param n the rotation, 1..31.
/// @return x rotated left by n bits.
VEIL_HD std::uint32_t chacha_rotl(std::uint32_t x, int n) {
#if VEIL_DEVICE_CODE
  return __funnelshift_l(x, x, n);  // one SHF
#else
  return (x << n) | (x >> (32 - n));
#endif
}

#define VEIL_CHACHA_QR(a, b, c, d)                                                                 \
  a += b;                                                                                          \
  d ^= a;                                                                                          \
  d = chacha_rotl(d, 16);                                                                          \
  c += d;                                                                                          \
  b ^= c;                                                                                          \
  b = chacha_rotl(b, 12);                                                                          \
  a += b;                                                                                          \
  d ^= a;                                                                                          \
  d = chacha_rotl(d, 8);                                                                           \
  c += d;                                                                                          \
  b ^= c;                                                                                          \
  b = chacha_rotl(b, 7);

/// Computes one 64-byte block as 16 little-endian words with R rounds (R even; RFC 8439 §2.3
/// is R = 20, the ChaCha20 of every sampler but the compact keys' (ring/compact_uniform.h)).
/// @tparam R the number of rounds, even and positive.
/// @param key the 256-bit key.
/// @param counter the 32-bit block counter (state word 12).
/// @param nonce0 state word 13 (Veil: the domain's low 32 bits).
/// @param nonce1 state word 14 (the domain's high 32 bits).
/// @param nonce2 state word 15 (the sub-stream).
/// @param out receives the 16 output words (state plus input, RFC 8439 §2.3).
template <int R>
VEIL_HD void chacha_block(const ChaChaKey& key, std::uint32_t counter, std::uint32_t nonce0,
                          std::uint32_t nonce1, std::uint32_t nonce2, std::uint32_t out[16]) {
  static_assert(R > 0 && R % 2 == 0, "ChaCha: an even number of rounds");
  std::uint32_t s[16] = {0x61707865u,  0x3320646eu,  0x79622d32u,  0x6b206574u,
                         key.words[0], key.words[1], key.words[2], key.words[3],
                         key.words[4], key.words[5], key.words[6], key.words[7],
                         counter,      nonce0,       nonce1,       nonce2};
  std::uint32_t x[16];
#pragma unroll
  for (int i = 0; i < 16; ++i) x[i] = s[i];
#pragma unroll 1
  for (int r = 0; r < R / 2; ++r) {
    VEIL_CHACHA_QR(x[0], x[4], x[8], x[12])
    VEIL_CHACHA_QR(x[1], x[5], x[9], x[13])
    VEIL_CHACHA_QR(x[2], x[6], x[10], x[14])
    VEIL_CHACHA_QR(x[3], x[7], x[11], x[15])
    VEIL_CHACHA_QR(x[0], x[5], x[10], x[15])
    VEIL_CHACHA_QR(x[1], x[6], x[11], x[12])
    VEIL_CHACHA_QR(x[2], x[7], x[8], x[13])
    VEIL_CHACHA_QR(x[3], x[4], x[9], x[14])
  }
#pragma unroll
  for (int i = 0; i < 16; ++i) out[i] = x[i] + s[i];
}

/// ChaCha20 (RFC 8439 §2.3).
/// @param key the 256-bit key.
/// @param counter the block counter.
/// @param nonce0 the nonce's first word.
/// @param nonce1 the nonce's second word.
/// @param nonce2 the nonce's third word.
/// @param out receives the 16 output words.
VEIL_HD void chacha20_block(const ChaChaKey& key, std::uint32_t counter, std::uint32_t nonce0,
                            std::uint32_t nonce1, std::uint32_t nonce2, std::uint32_t out[16]) {
  chacha_block<20>(key, counter, nonce0, nonce1, nonce2, out);
}

/// The quarter round (RFC 8439 §2.1) on four separate words, as the compact keys' GPU code
/// computes one column of a block per lane (compact_uniform.h).
/// @param a state word a, updated.
/// @param b state word b, updated.
/// @param c state word c, updated.
/// @param d state word d, updated.
VEIL_HD void chacha_qr(std::uint32_t& a, std::uint32_t& b, std::uint32_t& c, std::uint32_t& d) {
  VEIL_CHACHA_QR(a, b, c, d)
}

#undef VEIL_CHACHA_QR

/// A keystream address: seed plus a 64-bit domain (one per sampling call).
struct PrngStream {
  /// The seed (ChaCha20 key).
  ChaChaKey key;
  /// The domain: the first two nonce words (one per sampling call).
  std::uint64_t domain;

  /// Block `block` of sub-stream `stream`, as 8 64-bit words (little-endian word pairs).
  /// @param stream the sub-stream (third nonce word).
  /// @param block the block counter.
  /// @param out receives the 8 words, out[i] = w[2i] | w[2i + 1] << 32.
  VEIL_HD void block64(std::uint32_t stream, std::uint32_t block, std::uint64_t out[8]) const {
    std::uint32_t w[16];
    chacha20_block(key, block, static_cast<std::uint32_t>(domain),
                   static_cast<std::uint32_t>(domain >> 32), stream, w);
#pragma unroll
    for (int i = 0; i < 8; ++i) out[i] = std::uint64_t(w[2 * i]) | (std::uint64_t(w[2 * i + 1]) << 32);
  }
};

}  // namespace veil
