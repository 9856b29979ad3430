// SEAL's BLAKE2 uses (Veil needs both to speak SEAL's format): parms_id, a 256-bit BLAKE2b
// digest naming a parameter set, and the seeded-object PRNG, BLAKE2Xb (Aumasson et al.,
// "BLAKE2X", 2016) expanding a 512-bit seed. The hash functions themselves are core/blake2.h's
// (rlwe/ hashes the key-set id with them too); here they take io's ByteView.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "veil/core/blake2.h"
#include "veil/io/bytes.h"

namespace veil::io {

/// Unkeyed BLAKE2b with a 32-byte digest (RFC 7693; core/blake2.h over libb2).
/// @param in the message.
/// @return the 32-byte digest.
/// @throws RuntimeError if libb2 fails.
inline std::array<std::uint8_t, 32> blake2b_256(ByteView in) {
  return veil::blake2b_256(in.data, in.size);
}

/// BLAKE2Xb output: `out_len` (1..2^32-2) bytes from message `in` keyed with `key` (<= 64 bytes).
/// (Aumasson et al., "BLAKE2X", 2016; core/blake2.h over libb2.)
/// @param out receives out_len bytes.
/// @param out_len the output length, 1..2^32 - 2.
/// @param in the message.
/// @param key the key, at most 64 bytes.
/// @throws InvalidArgument if out_len or the key's length is out of range; RuntimeError if libb2
///         fails.
inline void blake2xb(std::uint8_t* out, std::size_t out_len, ByteView in, ByteView key) {
  veil::blake2xb(out, out_len, in.data, in.size, key.data, key.size);
}

/// SEAL's seeded-object PRNG (prng_type blake2xb): a stream of 4096-byte blocks, block c being
/// BLAKE2Xb(message = c as 8 little-endian bytes, key = the 64-byte seed), c = 0, 1, 2, ...
class Blake2xbStream {
 public:
  /// A stream at block 0 of `seed`.
  /// @param seed the 64-byte seed (the BLAKE2Xb key).
  explicit Blake2xbStream(const std::array<std::uint8_t, 64>& seed) : seed_(seed) {}
  /// The next n bytes of the stream (refilling 4096-byte blocks as needed).
  /// @param out receives n bytes.
  /// @param n the number of bytes.
  /// @throws RuntimeError if libb2 fails.
  void generate(std::uint8_t* out, std::size_t n);
  /// The next 8 bytes of the stream as a little-endian word.
  /// @return the word.
  /// @throws RuntimeError if libb2 fails.
  std::uint64_t next_u64();

 private:
  void refill();
  std::array<std::uint8_t, 64> seed_;
  std::array<std::uint8_t, 4096> block_{};
  std::size_t pos_ = 4096;
  std::uint64_t counter_ = 0;
};

}  // namespace veil::io
