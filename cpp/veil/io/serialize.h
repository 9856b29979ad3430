// Veil's own serialization format (format version 1) for every object: EncryptionParameters,
// Plaintext, Ciphertext, SecretKey, PublicKey, RelinKeys, GaloisKeys and SwitchingKey (and, in
// serialize_circuits.h, the bootstrapping parameters).
//
// Layout (all integers little-endian):
//
//   offset size  field
//   0      4     magic "VEIL"
//   4      2     format version (1)
//   6      1     object type (ObjectType)
//   7      1     scheme (0 bfv, 1 bgv, 2 ckks)
//   8      1     compression of the body (0 none, 2 zstd; SEAL's compr_mode values)
//   9      1     flags (bit 0: seeded; bit 1: the descriptor holds a key-set id after N; bit 2:
//                4-byte body words; bit 3: compact key-switching keys, with bit 0 only; bit 4:
//                Galois keys with a level and form per key, without bits 0 and 3)
//   10     2     reserved, 0
//   12     4     CRC-32 of the descriptor and the uncompressed body
//   16     8     parameter hash of the context (rlwe/params.h parameter_hash)
//   24     4     descriptor size d (bytes)
//   28     4     reserved, 0
//   32     8     body size b (uncompressed bytes)
//   40     8     stored body size s (bytes after the descriptor)
//   48     d     descriptor: the object's shape (levels, counts, scale, Galois elements, seeds)
//   48+d   s     body: the coefficient words, [poly][limb][N] as in memory, zstd-compressed or not
//
// The descriptor is never compressed, so the body size follows from it and from the context
// before anything is allocated: a loader checks b against the shape it implies, against
// `LoadOptions::max_bytes` and (uncompressed) against the bytes present, then reads.
//
// Seeded objects (SEAL's "seeded" serialization): a symmetric-key ciphertext, a public key and
// each key-switching key carry the 256-bit seed their uniform polynomial was sampled from
// (ring/prng.h); saved seeded, that polynomial is replaced by the seed in the descriptor, which
// halves the size, and loading regenerates it bit for bit on the target device. Saving seeded
// first regenerates the polynomial and checks it against the object (a modified object is
// saved unseeded, or rejected if seeding was demanded).
//
// Compact keys (KSwitchKey::compact: relinearization and Galois keys that store their b_j only)
// are saved seeded with flag bit 3: the body is the same b_j, and the seed regenerates the a_j
// with the compact sampler (ring/compact_uniform.h). Loading keeps them compact (nothing is
// expanded). Seeding::never writes their a_j expanded, as an ordinary key.
//
// Keys below the top level (KSwitchKey::level: the digits that meet Q_l over Q_l ∪ P only) and
// Galois key sets that mix forms are written with flag bit 4: after the set's count, dnum and
// limbs, each key has its Galois element (u32), its level (u32) and a form byte (bit 0 seeded,
// bit 1 compact, which needs bit 0), then its seed when seeded; the body holds each key's
// ceil((l + 1) / alpha) digits of (b_j) or (b_j, a_j) over its l + 1 + k limbs. A set of
// top-level keys of one form is written without it, as before.
//
// Loading treats the bytes as hostile: every field is checked (sizes, N and the primes through
// the parameter hash and the CRC, every coefficient below its modulus, levels, ciphertext size,
// key counts, Galois elements odd, below 2N, distinct and sorted) and any failure throws
// InvalidArgument naming the field; no object is returned half built.
#pragma once
#include <cstdint>
#include <string>

#include "veil/io/bytes.h"
#include "veil/io/codec.h"
#include "veil/rlwe/objects.h"

namespace veil::io {

/// The object type byte of the header (offset 6).
enum class ObjectType : std::uint8_t {
  parameters = 1,
  plaintext = 2,
  ciphertext = 3,
  secret_key = 4,
  public_key = 5,
  relin_keys = 6,
  galois_keys = 7,
  switching_key = 8,
  bootstrap_parameters = 9,  ///< circuits::BootstrapParameters (serialize_circuits.h)
};
/// The largest object type this build reads.
inline constexpr std::uint8_t kLastObjectType = 9;
/// The object type's name, as error messages write it.
/// @param t the type.
/// @return its name ("ciphertext", "Galois keys", ...; "unknown object" outside the enum).
std::string to_string(ObjectType t);

/// Seeded serialization: `automatic` writes the seed whenever the object has one that still
/// matches it; `always` throws InvalidArgument if it cannot; `never` writes every polynomial.
enum class Seeding : std::uint8_t { automatic, always, never };

/// How an object is written: body compression and seeding.
struct SaveOptions {
  Compression compression = Compression::zstd;  ///< none or zstd (zlib is SEAL-only)
  int level = 3;                                ///< zstd level 1..19
  /// Whether seeded objects are written with their seed (see Seeding).
  Seeding seeded = Seeding::automatic;
};

/// Default cap on the uncompressed body a loader accepts (16 GiB); raise it for large key sets.
inline constexpr std::uint64_t kDefaultMaxLoadBytes = std::uint64_t(1) << 34;

/// What a loader accepts.
struct LoadOptions {
  std::uint64_t max_bytes = kDefaultMaxLoadBytes;  ///< largest body accepted
};

/// What the fixed header says (checked for magic, version, reserved bytes and known values).
struct HeaderInfo {
  /// The object type (offset 6).
  ObjectType type = ObjectType::parameters;
  /// The scheme (offset 7).
  SchemeType scheme = SchemeType::bfv;
  /// The body's compression (offset 8).
  Compression compression = Compression::none;
  /// Flag bit 0: uniform polynomials are stored as seeds.
  bool seeded = false;
  bool key_set = false;  ///< the descriptor carries the key-set id (rlwe/checks.h) after N
  bool words32 = false;  ///< the body's words are stored in 4 bytes each (else 8)
  bool compact = false;  ///< compact key-switching keys (with `seeded`; KSwitchKey::compact)
  bool per_key = false;  ///< Galois keys with a level and form per key (flag bit 4)
  /// The context's parameter hash (offset 16).
  std::uint64_t parameter_hash = 0;
  /// The uncompressed body size in bytes (offset 32).
  std::uint64_t body_size = 0;
  std::uint32_t crc32 = 0;           ///< of the descriptor and the uncompressed body
  /// The descriptor size in bytes (offset 24).
  std::uint32_t descriptor_size = 0;
  std::size_t total_size = 0;  ///< header + descriptor + stored body
};
/// Reads and checks the 48-byte header. Throws InvalidArgument naming the field.
/// @param in the serialized bytes (at least the 48-byte header).
/// @return the header's fields.
/// @throws InvalidArgument naming the field (magic, version, reserved bytes, object type, scheme,
///         compression, flags, sizes).
HeaderInfo read_header(ByteView in);

/// Writes encryption parameters (object type 1): the scheme, the BFV multiplication method, N,
/// the special primes, alpha, the plain modulus, the primes and CKKS's rescale groups.
/// @param p the parameters.
/// @param o the compression (none or zstd) and level.
/// @return the bytes.
/// @throws InvalidArgument if there are too many primes or rescale groups, or o asks for zlib or
///         an invalid zstd level; RuntimeError if zstd fails.
Bytes save(const EncryptionParameters& p, const SaveOptions& o = {});
/// Writes a plaintext (object type 2): its level, form, scale and words.
/// @param pt the plaintext.
/// @param o the compression and level.
/// @return the bytes.
/// @throws InvalidArgument if the plaintext is empty, or o asks for zlib or an invalid level;
///         RuntimeError if zstd fails.
Bytes save(const Plaintext& pt, const SaveOptions& o = {});
/// Writes a ciphertext (object type 3) without a values record; seeded (a symmetric-key
/// ciphertext's c_1 as its seed) as o.seeded allows.
/// @param ct the ciphertext.
/// @param o the compression, level and seeding.
/// @return the bytes.
/// @throws InvalidArgument if the ciphertext is empty or transparent (c_1.. all zero;
///         rlwe/checks.h), o.seeded is always and it cannot be written seeded, or o asks for zlib
///         or an invalid level; RuntimeError if zstd fails.
Bytes save(const Ciphertext& ct, const SaveOptions& o = {});
/// What the pythonic layer remembers about a ciphertext's values, written in the ciphertext
/// descriptor's 7 bytes after is_ntt_form (zero before; builds that predate them ignore them):
/// u8 flags (bit 0: recorded, bit 1: complex values, CKKS only), u16 reserved 0, u32 length
/// (the slots holding the encrypted vector, <= N/2 for CKKS and N for BFV/BGV). Bytes without
/// the record (flags 0) mean "every slot, complex" to the pythonic layer.
struct CiphertextInfo {
  /// Whether the record is present (flag bit 0).
  bool recorded = false;
  /// Whether the values are complex (flag bit 1, CKKS only).
  bool complex_values = false;
  /// The number of slots holding the encrypted vector.
  std::uint32_t length = 0;
};
/// A ciphertext with the pythonic layer's record of its values (see CiphertextInfo).
/// @param ct the ciphertext.
/// @param o the compression, level and seeding.
/// @param info the record (written when info.recorded).
/// @return the bytes.
/// @throws InvalidArgument as save(ct, o), or if info.length exceeds the slots or complex_values is
///         set outside CKKS.
Bytes save(const Ciphertext& ct, const SaveOptions& o, const CiphertextInfo& info);
/// The record of serialized ciphertext bytes (the header and descriptor are checked, the body
/// is not read: load_ciphertext checks the rest). Throws InvalidArgument naming the field.
/// @param in serialized ciphertext bytes.
/// @return the record (recorded = false when absent).
/// @throws InvalidArgument naming the field of a bad header or descriptor.
CiphertextInfo read_ciphertext_info(ByteView in);
/// Writes a secret key (object type 4; never seeded), with its key-set id.
/// @param sk the key.
/// @param o the compression and level.
/// @return the bytes.
/// @throws InvalidArgument if the key is empty, or o asks for zlib or an invalid level;
///         RuntimeError if zstd fails.
Bytes save(const SecretKey& sk, const SaveOptions& o = {});
/// Writes a public key (object type 5); seeded (its uniform half as the seed) as o.seeded allows.
/// @param pk the key.
/// @param o the compression, level and seeding.
/// @return the bytes.
/// @throws InvalidArgument if the key is empty, o.seeded is always and it cannot be written
///         seeded, or o asks for zlib or an invalid level; RuntimeError if zstd fails.
Bytes save(const PublicKey& pk, const SaveOptions& o = {});
/// Writes relinearization keys (object type 6); seeded (and compact keys as their b_j only) as
/// o.seeded allows.
/// @param rk the keys.
/// @param o the compression, level and seeding.
/// @return the bytes.
/// @throws InvalidArgument if the keys are empty or stop below the top level, o.seeded is always
///         and they cannot be written seeded, or o asks for zlib or an invalid level; RuntimeError
///         if zstd fails.
Bytes save(const RelinKeys& rk, const SaveOptions& o = {});
/// Writes a Galois key set (object type 7): its elements (and, with flag bit 4, each key's level
/// and form), seeded as o.seeded allows.
/// @param gk the keys.
/// @param o the compression, level and seeding.
/// @return the bytes.
/// @throws InvalidArgument if the set is empty (no context), o.seeded is always and a key cannot
///         be written seeded, or o asks for zlib or an invalid level; RuntimeError if zstd fails.
Bytes save(const GaloisKeys& gk, const SaveOptions& o = {});
/// A key switching from one secret to another (KeyGenerator::create_switching_key). A key that
/// serves only the levels <= max_level (sparse-secret encapsulation) is written trimmed: the
/// digits that meet Q_max_level and, in each, the limbs of Q_max_level ∪ P (the rest is zero),
/// and never seeded; a full key is written as a relinearization key is (seeded by default).
/// @param k the key (object type 8).
/// @param o the compression, level and seeding.
/// @return the bytes.
/// @throws InvalidArgument if the key is empty or its stored key stops below its max_level,
///         o.seeded is always and it cannot be written seeded, or o asks for zlib or an invalid
///         level; RuntimeError if zstd fails.
Bytes save(const SwitchingKey& k, const SaveOptions& o = {});

/// Loads parameters (structure checked; Context::create validates them fully).
/// @param in the bytes (exactly one object).
/// @param o the size cap.
/// @return the parameters.
/// @throws InvalidArgument naming the field on any malformed or inconsistent field (including a
///         parameter hash that does not match the parameters read).
EncryptionParameters load_parameters(ByteView in, const LoadOptions& o = {});
/// Each loader checks the object against `ctx` (scheme, parameter hash, shape, coefficients)
/// and builds it on `dev`. Throws InvalidArgument naming the field on any mismatch.
/// @param in the bytes (exactly one object).
/// @param ctx the context it must belong to.
/// @param dev the device to build it on.
/// @param o the size cap.
/// @return the plaintext.
/// @throws InvalidArgument naming the field on any mismatch.
Plaintext load_plaintext(ByteView in, const ContextPtr& ctx, const Device& dev,
                         const LoadOptions& o = {});
/// Loads a ciphertext (regenerating a seeded c_1), checked as load_plaintext says.
/// @param in the bytes (exactly one object).
/// @param ctx the context it must belong to.
/// @param dev the device to build it on.
/// @param o the size cap.
/// @return the ciphertext.
/// @throws InvalidArgument naming the field on any mismatch.
Ciphertext load_ciphertext(ByteView in, const ContextPtr& ctx, const Device& dev,
                           const LoadOptions& o = {});
/// Loads a secret key (its key-set id checked against its words).
/// @param in the bytes (exactly one object).
/// @param ctx the context it must belong to.
/// @param dev the device to build it on.
/// @param o the size cap.
/// @return the key.
/// @throws InvalidArgument naming the field on any mismatch (a seeded secret key included).
SecretKey load_secret_key(ByteView in, const ContextPtr& ctx, const Device& dev,
                          const LoadOptions& o = {});
/// Loads a public key (regenerating a seeded uniform half).
/// @param in the bytes (exactly one object).
/// @param ctx the context it must belong to.
/// @param dev the device to build it on.
/// @param o the size cap.
/// @return the key.
/// @throws InvalidArgument naming the field on any mismatch.
PublicKey load_public_key(ByteView in, const ContextPtr& ctx, const Device& dev,
                          const LoadOptions& o = {});
/// Loads relinearization keys (compact ones stay compact).
/// @param in the bytes (exactly one object).
/// @param ctx the context it must belong to (with a special prime).
/// @param dev the device to build them on.
/// @param o the size cap.
/// @return the keys.
/// @throws InvalidArgument naming the field on any mismatch, or if the context has no special
///         prime.
RelinKeys load_relin_keys(ByteView in, const ContextPtr& ctx, const Device& dev,
                          const LoadOptions& o = {});
/// Loads a Galois key set (elements odd, below 2N, distinct and sorted).
/// @param in the bytes (exactly one object).
/// @param ctx the context it must belong to (with a special prime).
/// @param dev the device to build them on.
/// @param o the size cap.
/// @return the keys.
/// @throws InvalidArgument naming the field on any mismatch, or if the context has no special
///         prime.
GaloisKeys load_galois_keys(ByteView in, const ContextPtr& ctx, const Device& dev,
                            const LoadOptions& o = {});
/// The zero limbs of a trimmed key are rebuilt in place (its memory is a full key's).
/// @param in the bytes (exactly one object).
/// @param ctx the context it must belong to (with a special prime).
/// @param dev the device to build it on.
/// @param o the size cap.
/// @return the key.
/// @throws InvalidArgument naming the field on any mismatch.
SwitchingKey load_switching_key(ByteView in, const ContextPtr& ctx, const Device& dev,
                                const LoadOptions& o = {});

/// Writes bytes to a file (replacing it). Throws RuntimeError naming the path on failure.
/// @param path the file.
/// @param data the bytes.
/// @throws RuntimeError naming the path when it cannot be opened or written.
void write_file(const std::string& path, ByteView data);
/// Reads a whole file after checking its size against `max_bytes`. Throws InvalidArgument for
/// a file that is too large and RuntimeError naming the path when it cannot be read.
/// @param path the file.
/// @param max_bytes the largest file accepted.
/// @return the file's bytes.
/// @throws InvalidArgument if the file is larger than max_bytes; RuntimeError naming the path
///         when it cannot be opened, sized or read.
Bytes read_file(const std::string& path, std::uint64_t max_bytes = kDefaultMaxLoadBytes + 4096);

}  // namespace veil::io
