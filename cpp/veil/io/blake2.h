// BLAKE2b (RFC 7693) and the BLAKE2Xb extendable-output mode (Aumasson et al., "BLAKE2X", 2016),
// over libb2. SEAL names its parameter sets by a 256-bit BLAKE2b digest (parms_id) and expands
// the 512-bit seeds of its seeded objects with BLAKE2Xb; Veil needs both to speak SEAL's format.
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

#include "veil/io/bytes.h"

namespace veil::io {

/// Unkeyed BLAKE2b with a 32-byte digest.
std::array<std::uint8_t, 32> blake2b_256(ByteView in);

/// BLAKE2Xb output: `out_len` (1..2^32-2) bytes from message `in` keyed with `key` (<= 64 bytes).
void blake2xb(std::uint8_t* out, std::size_t out_len, ByteView in, ByteView key);

/// SEAL's seeded-object PRNG (prng_type blake2xb): a stream of 4096-byte blocks, block c being
/// BLAKE2Xb(message = c as 8 little-endian bytes, key = the 64-byte seed), c = 0, 1, 2, ...
class Blake2xbStream {
 public:
  explicit Blake2xbStream(const std::array<std::uint8_t, 64>& seed) : seed_(seed) {}
  void generate(std::uint8_t* out, std::size_t n);
  std::uint64_t next_u64();

 private:
  void refill();
  std::array<std::uint8_t, 64> seed_;
  std::array<std::uint8_t, 4096> block_{};
  std::size_t pos_ = 4096;
  std::uint64_t counter_ = 0;
};

}  // namespace veil::io
