// Compression and checksums for serialization: zstd (Veil's default; SEAL's compr_mode zstd),
// zlib (SEAL's compr_mode zlib) and CRC-32, all through the system libraries (libzstd, zlib).
// Decompression is bounded: output never grows past the size the caller allows, so a small
// hostile input cannot make Veil allocate without limit.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "veil/io/bytes.h"

namespace veil::io {

/// Compression of a serialized body. The values are SEAL's compr_mode_type values.
enum class Compression : std::uint8_t { none = 0, zlib = 1, zstd = 2 };

/// The compression's name.
/// @param c the compression.
/// @return "none", "zlib", "zstd" (or "unknown" for a value outside the enum).
std::string to_string(Compression c);
/// "none", "zlib" or "zstd"; throws InvalidArgument naming `compression` otherwise.
/// @param s the name.
/// @return the compression.
/// @throws InvalidArgument naming `compression` for any other name.
Compression compression_from_string(const std::string& s);

/// One zstd frame (content size recorded in the frame header) at `level` (1..19).
/// @param in the bytes.
/// @param level the zstd level, 1..19.
/// @return the frame.
/// @throws InvalidArgument for a level outside 1..ZSTD_maxCLevel(); OutOfMemory if no context can
///         be allocated; RuntimeError if zstd fails.
Bytes zstd_compress(ByteView in, int level);
/// Decompresses exactly one zstd frame of exactly `expected` bytes into `out`. Throws
/// InvalidArgument naming `what` for a corrupt frame, trailing bytes or any other size.
/// @param in the frame.
/// @param out receives `expected` bytes.
/// @param expected the exact decompressed size.
/// @param what the object, for the message.
/// @throws InvalidArgument as above; OutOfMemory if no context can be allocated.
void zstd_decompress_exact(ByteView in, std::uint8_t* out, std::size_t expected,
                           const std::string& what);
/// Streaming decompression of one zstd frame whose size is not known in advance; throws
/// InvalidArgument as soon as the output would pass `max_out` bytes.
/// @param in the frame.
/// @param max_out the largest output accepted.
/// @param what the object, for the message.
/// @return the decompressed bytes.
/// @throws InvalidArgument for a corrupt frame or output past max_out; OutOfMemory if no stream
///         can be allocated.
Bytes zstd_decompress_bounded(ByteView in, std::size_t max_out, const std::string& what);

/// A zlib stream (RFC 1950: deflate with the zlib header and Adler-32) at `level` (0..9).
/// @param in the bytes.
/// @param level the zlib level, 0..9.
/// @return the stream.
/// @throws InvalidArgument for a level outside 0..9 or an input too large for zlib; RuntimeError
///         if zlib fails.
Bytes zlib_compress(ByteView in, int level);
/// Streaming inflation of one zlib stream, bounded by `max_out` bytes; throws InvalidArgument
/// naming `what` for corrupt data, trailing bytes or output past the bound.
/// @param in the stream.
/// @param max_out the largest output accepted.
/// @param what the object, for the message.
/// @return the inflated bytes.
/// @throws InvalidArgument as above; OutOfMemory if no inflate stream can be allocated.
Bytes zlib_decompress_bounded(ByteView in, std::size_t max_out, const std::string& what);

/// CRC-32 (ISO-HDLC, zlib's crc32) of the bytes, continuing from `crc` (0 to start).
/// @param in the bytes.
/// @param crc the CRC so far (0 to start).
/// @return the updated CRC-32.
std::uint32_t crc32(ByteView in, std::uint32_t crc = 0);

}  // namespace veil::io
