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
std::string to_string(ObjectType t);

/// Seeded serialization: `automatic` writes the seed whenever the object has one that still
/// matches it; `always` throws InvalidArgument if it cannot; `never` writes every polynomial.
enum class Seeding : std::uint8_t { automatic, always, never };

struct SaveOptions {
  Compression compression = Compression::zstd;  ///< none or zstd (zlib is SEAL-only)
  int level = 3;                                ///< zstd level 1..19
  Seeding seeded = Seeding::automatic;
};

/// Default cap on the uncompressed body a loader accepts (16 GiB); raise it for large key sets.
inline constexpr std::uint64_t kDefaultMaxLoadBytes = std::uint64_t(1) << 34;

struct LoadOptions {
  std::uint64_t max_bytes = kDefaultMaxLoadBytes;  ///< largest body accepted
};

/// What the fixed header says (checked for magic, version, reserved bytes and known values).
struct HeaderInfo {
  ObjectType type = ObjectType::parameters;
  SchemeType scheme = SchemeType::bfv;
  Compression compression = Compression::none;
  bool seeded = false;
  bool key_set = false;  ///< the descriptor carries the key-set id (rlwe/checks.h) after N
  bool words32 = false;  ///< the body's words are stored in 4 bytes each (else 8)
  bool compact = false;  ///< compact key-switching keys (with `seeded`; KSwitchKey::compact)
  bool per_key = false;  ///< Galois keys with a level and form per key (flag bit 4)
  std::uint64_t parameter_hash = 0;
  std::uint64_t body_size = 0;
  std::uint32_t crc32 = 0;           ///< of the descriptor and the uncompressed body
  std::uint32_t descriptor_size = 0;
  std::size_t total_size = 0;  ///< header + descriptor + stored body
};
/// Reads and checks the 48-byte header. Throws InvalidArgument naming the field.
HeaderInfo read_header(ByteView in);

Bytes save(const EncryptionParameters& p, const SaveOptions& o = {});
Bytes save(const Plaintext& pt, const SaveOptions& o = {});
Bytes save(const Ciphertext& ct, const SaveOptions& o = {});
/// What the pythonic layer remembers about a ciphertext's values, written in the ciphertext
/// descriptor's 7 bytes after is_ntt_form (zero before; builds that predate them ignore them):
/// u8 flags (bit 0: recorded, bit 1: complex values, CKKS only), u16 reserved 0, u32 length
/// (the slots holding the encrypted vector, <= N/2 for CKKS and N for BFV/BGV). Bytes without
/// the record (flags 0) mean "every slot, complex" to the pythonic layer.
struct CiphertextInfo {
  bool recorded = false;
  bool complex_values = false;
  std::uint32_t length = 0;
};
Bytes save(const Ciphertext& ct, const SaveOptions& o, const CiphertextInfo& info);
/// The record of serialized ciphertext bytes (the header and descriptor are checked, the body
/// is not read: load_ciphertext checks the rest). Throws InvalidArgument naming the field.
CiphertextInfo read_ciphertext_info(ByteView in);
Bytes save(const SecretKey& sk, const SaveOptions& o = {});
Bytes save(const PublicKey& pk, const SaveOptions& o = {});
Bytes save(const RelinKeys& rk, const SaveOptions& o = {});
Bytes save(const GaloisKeys& gk, const SaveOptions& o = {});
/// A key switching from one secret to another (KeyGenerator::create_switching_key). A key that
/// serves only the levels <= max_level (sparse-secret encapsulation) is written trimmed: the
/// digits that meet Q_max_level and, in each, the limbs of Q_max_level ∪ P (the rest is zero),
/// and never seeded; a full key is written as a relinearization key is (seeded by default).
Bytes save(const SwitchingKey& k, const SaveOptions& o = {});

/// Loads parameters (structure checked; Context::create validates them fully).
EncryptionParameters load_parameters(ByteView in, const LoadOptions& o = {});
/// Each loader checks the object against `ctx` (scheme, parameter hash, shape, coefficients)
/// and builds it on `dev`. Throws InvalidArgument naming the field on any mismatch.
Plaintext load_plaintext(ByteView in, const ContextPtr& ctx, const Device& dev,
                         const LoadOptions& o = {});
Ciphertext load_ciphertext(ByteView in, const ContextPtr& ctx, const Device& dev,
                           const LoadOptions& o = {});
SecretKey load_secret_key(ByteView in, const ContextPtr& ctx, const Device& dev,
                          const LoadOptions& o = {});
PublicKey load_public_key(ByteView in, const ContextPtr& ctx, const Device& dev,
                          const LoadOptions& o = {});
RelinKeys load_relin_keys(ByteView in, const ContextPtr& ctx, const Device& dev,
                          const LoadOptions& o = {});
GaloisKeys load_galois_keys(ByteView in, const ContextPtr& ctx, const Device& dev,
                            const LoadOptions& o = {});
/// The zero limbs of a trimmed key are rebuilt in place (its memory is a full key's).
SwitchingKey load_switching_key(ByteView in, const ContextPtr& ctx, const Device& dev,
                                const LoadOptions& o = {});

/// Writes bytes to a file (replacing it). Throws RuntimeError naming the path on failure.
void write_file(const std::string& path, ByteView data);
/// Reads a whole file after checking its size against `max_bytes`. Throws InvalidArgument for
/// a file that is too large and RuntimeError naming the path when it cannot be read.
Bytes read_file(const std::string& path, std::uint64_t max_bytes = kDefaultMaxLoadBytes + 4096);

}  // namespace veil::io
