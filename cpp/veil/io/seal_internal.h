// Building blocks of the SEAL 4.x format shared by io/seal.cpp and io/seal_keys.cpp (internal).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "veil/io/seal.h"

namespace veil::io::seal::detail {

constexpr std::uint16_t kMagic = 0xA15E;
constexpr std::size_t kHeaderSize = 16;
constexpr std::size_t kMaxCiphertextSize = 16;  // SEAL_CIPHERTEXT_SIZE_MAX

// ---- writing ----------------------------------------------------------------------------------

void write_header(ByteWriter& w, std::uint8_t minor, Compression c, std::uint64_t size);
void write_parms_id(ByteWriter& w, const ParmsId& id);
/// A nested DynArray<uint64_t>: header, count, words.
void write_dynarray(ByteWriter& w, std::uint8_t minor, const std::uint64_t* words,
                    std::size_t count);
/// Size of a Ciphertext object of `size` polynomials over K limbs of degree N (unseeded).
inline std::uint64_t ciphertext_object_size(std::size_t size, std::size_t n, std::size_t k) {
  return 113 + 8 * std::uint64_t(size) * n * k;
}
/// A whole Ciphertext object (header and members, uncompressed).
void write_ciphertext_object(ByteWriter& w, std::uint8_t minor, const ParmsId& id, bool ntt,
                             std::size_t size, std::size_t n, std::size_t k, double scale,
                             std::uint64_t correction, const std::uint64_t* words);
/// Frames members (everything after the outer header) with the outer header, compressing the
/// members as SEAL does (one zlib or zstd stream after an uncompressed header).
Bytes frame(const Bytes& members, const SaveOptions& o);

// ---- reading ----------------------------------------------------------------------------------

struct Header {
  std::uint8_t major = 0, minor = 0;
  Compression compression = Compression::none;
  std::uint64_t size = 0;
};
/// Reads and checks a 16-byte header (magic, header size, major version 4, compression mode).
Header read_header(ByteReader& r, const std::string& what);
/// The members of one top-level object: a view of `in` when uncompressed, else decompressed
/// (bounded by `max_bytes`) into `owned`. The object must fill `in` exactly.
struct Members {
  Bytes owned;
  ByteView view;
};
Members open_object(ByteView in, const std::string& what, std::uint64_t max_bytes);
/// A nested header; nested objects are never compressed (SEAL never writes them so).
Header read_nested_header(ByteReader& r, const std::string& what);
ParmsId read_parms_id(ByteReader& r);
/// A nested DynArray with exactly one of the allowed counts (checked before reading).
std::vector<std::uint64_t> read_dynarray(ByteReader& r, const std::string& what,
                                         const std::vector<std::size_t>& allowed_counts);

// ---- levels -----------------------------------------------------------------------------------

/// SEAL's parms_id of every data level of a context (index = Veil level) and of its key level.
struct Levels {
  std::vector<ParmsId> data;
  ParmsId key{};
  /// The data level of `id`, or nothing.
  std::optional<std::size_t> level_of(const ParmsId& id) const;
};
/// Throws InvalidArgument naming `what` unless the context maps onto SEAL parameters (one
/// special prime, or none and a single prime).
Levels levels(const Context& ctx, const char* what);
std::uint8_t seal_scheme(SchemeType s);

/// A SEAL ciphertext read into host words (unseeded, or with c1 expanded from its seed).
struct CiphertextData {
  ParmsId id{};
  bool ntt = false;
  std::size_t size = 0, n = 0, k = 0;
  double scale = 1;
  std::uint64_t correction = 1;
  bool seeded = false;
  std::vector<std::uint64_t> words;  // [size][k][n]
};
/// Reads Ciphertext members (after the header) whose level is one of `bases` by parms_id:
/// `bases[i]` are the primes of level `ids[i]`. Expands a BLAKE2Xb seed into c1 as SEAL does.
CiphertextData read_ciphertext_members(ByteReader& r, const Context& ctx,
                                       const std::vector<ParmsId>& ids,
                                       const std::vector<const RnsBase*>& bases,
                                       const std::string& what);
/// A nested PublicKey-shaped Ciphertext object at the key level (size 2, NTT form).
CiphertextData read_key_ciphertext_object(ByteReader& r, const Context& ctx, const Levels& lv,
                                          const std::string& what);
/// The same without its header (a top-level PublicKey's members).
CiphertextData read_key_ciphertext_members(ByteReader& r, const Context& ctx, const Levels& lv,
                                           const std::string& what);

}  // namespace veil::io::seal::detail
