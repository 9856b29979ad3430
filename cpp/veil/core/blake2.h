// BLAKE2b (RFC 7693) and the BLAKE2Xb extendable-output mode (Aumasson et al., "BLAKE2X", 2016),
// over libb2; host only (blake2_host.cpp). Users: rlwe/'s key-set id (a digest of the secret key,
// rlwe/checks.h) and SEAL's formats in io/ (SEAL names its parameter sets by a 256-bit BLAKE2b
// digest, parms_id, and expands the 512-bit seeds of its seeded objects with BLAKE2Xb:
// io/blake2.h's Blake2xbStream).
#pragma once
#include <array>
#include <cstddef>
#include <cstdint>

namespace veil {

/// Unkeyed BLAKE2b with a 32-byte digest of the `size` bytes at `data`.
/// @param data the message.
/// @param size the message's length in bytes.
/// @return the 32-byte digest.
/// @throws RuntimeError if libb2 fails.
std::array<std::uint8_t, 32> blake2b_256(const std::uint8_t* data, std::size_t size);

/// BLAKE2Xb output: `out_len` (1..2^32-2) bytes from the `in_len` bytes at `in`, keyed with the
/// `key_len` (<= 64) bytes at `key`.
/// @param out receives out_len bytes.
/// @param out_len the output length, 1..2^32 - 2.
/// @param in the message.
/// @param in_len the message's length in bytes.
/// @param key the key.
/// @param key_len the key's length in bytes, at most 64.
/// @throws InvalidArgument if out_len or key_len is out of range; RuntimeError if libb2 fails.
void blake2xb(std::uint8_t* out, std::size_t out_len, const std::uint8_t* in, std::size_t in_len,
              const std::uint8_t* key, std::size_t key_len);

}  // namespace veil
