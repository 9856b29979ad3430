// BLAKE2b (RFC 7693) and the BLAKE2Xb extendable-output mode (Aumasson et al., "BLAKE2X", 2016),
// over libb2. SEAL names its parameter sets by a 256-bit BLAKE2b digest (parms_id) and expands
// the 512-bit seeds of its seeded objects with BLAKE2Xb; Veil needs both to speak SEAL's format.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "veil/io/bytes.h"

namespace veil::io {

/// Unkeyed BLAKE2b with a 32-byte digest (RFC 7693; libb2).
/// @param in the message.
/// @return the 32-byte digest.
/// @throws RuntimeError if libb2 fails.
std::array<std::uint8_t, 32> blake2b_256(ByteView in);

/// BLAKE2Xb output: `out_len` (1..2^32-2) bytes from message `in` keyed with `key` (<= 64 bytes).
/// (Aumasson et al., "BLAKE2X", 2016.)
/// @param out receives out_len bytes.
/// @param out_len the output length, 1..2^32 - 2.
/// @param in the message.
/// @param key the key, at most 64 bytes.
/// @throws InvalidArgument if out_len or the key's length is out of range; RuntimeError if libb2
///         fails.
void blake2xb(std::uint8_t* out, std::size_t out_len, ByteView in, ByteView key);

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
