// Microsoft SEAL 4.x wire format: reading and writing SEAL's serialization of
// EncryptionParameters, Plaintext, Ciphertext, SecretKey, PublicKey, RelinKeys and GaloisKeys,
// with SEAL's compression modes (none, zlib, zstd). Facts from SEAL 4.1/4.4's serialization
// (checked against real bytes; see docs/seal_format.md):
//
//  - Every object, and every sub-object SEAL saves through its own save() (each Modulus of the
//    parameters, the coefficient array of a plaintext or ciphertext, each key of a key-switching
//    key set, the PRNG record of a seeded ciphertext), starts with a 16-byte header: magic 0xA15E,
//    header size 16, version major and minor, compression mode, 2 reserved bytes, and the u64
//    size of the object as stored, header included. Only the outer body is ever compressed.
//  - Objects name their level by parms_id: the 32-byte BLAKE2b digest of the u64 words
//    [scheme, N, q_0..q_{K-1}, t] over that level's primes (keys: all primes; data: without the
//    special prime, then one prime fewer per level; BFV/BGV coefficient plaintexts: all zero).
//  - SEAL's schemes are numbered 1 BFV, 2 CKKS, 3 BGV.
//
// How Veil maps onto SEAL: SEAL has one special prime (the last of coeff_modulus when there are
// several) and decomposes key switching per prime (alpha = 1). A Veil context corresponds to
// SEAL parameters when it has one special prime (or none and a single prime). Loading SEAL keys
// into a Veil context with alpha > 1 sums SEAL's per-prime keys over each digit (they share the
// special prime, so the sum is the digit's key); saving Veil keys for SEAL needs alpha = 1.
// Writing is always unseeded (Veil's seeds are ChaCha20, SEAL's BLAKE2Xb); reading accepts
// SEAL's seeded objects whose PRNG is BLAKE2Xb (SEAL's default) and regenerates the uniform
// part exactly as SEAL does. Reading is strict: the bytes must hold exactly one object (use
// `split` for a stream of several), and every field is checked as in io/serialize.h.
#pragma once
#include <array>
#include <cstdint>
#include <vector>

#include "veil/io/serialize.h"

namespace veil::io::seal {

/// SEAL's parms_id of the parameters restricted to their first `primes` primes.
using ParmsId = std::array<std::uint64_t, 4>;
/// SEAL's parms_id: the BLAKE2b-256 digest of the words [SEAL's scheme number, N, the primes, t].
/// @param scheme the scheme (numbered 1 BFV, 2 CKKS, 3 BGV in the digest).
/// @param n the ring degree N.
/// @param primes the level's primes.
/// @param plain_modulus t (0 for CKKS).
/// @return the digest as four little-endian words.
/// @throws RuntimeError if libb2 fails.
ParmsId parms_id(SchemeType scheme, std::size_t n, const std::vector<std::uint64_t>& primes,
                 std::uint64_t plain_modulus);

/// How a SEAL object is written: SEAL's compression modes and header version.
struct SaveOptions {
  /// none, zlib or zstd (SEAL's compr_mode).
  Compression compression = Compression::none;
  /// Version written in every header. SEAL 4.0-4.3 read only their own minor version; 4.4
  /// reads 4.0-4.4. The default, 4.1, is read by SEAL 4.1 and 4.4.
  std::uint8_t version_minor = 1;
  int level = -1;  ///< compression level (-1: zlib's default; zstd uses 3)
};

/// Writes parameters as SEAL's EncryptionParameters (special prime last).
/// @param p the parameters (one special prime, or none and a single prime; alpha = 1).
/// @param o compression and version.
/// @return SEAL's bytes.
/// @throws InvalidArgument if the parameters are not SEAL's layout (special_primes, alpha), or the
///         compression level is invalid; RuntimeError if the compressor fails.
Bytes save(const EncryptionParameters& p, const SaveOptions& o = {});
/// Writes a plaintext as SEAL's Plaintext (with its parms_id).
/// @param pt the plaintext.
/// @param o compression and version.
/// @return SEAL's bytes.
/// @throws InvalidArgument if the plaintext is empty or its context is not SEAL's layout;
///         RuntimeError if the compressor fails.
Bytes save(const Plaintext& pt, const SaveOptions& o = {});
/// Writes a ciphertext as SEAL's Ciphertext (unseeded).
/// @param ct the ciphertext (at most 16 polynomials).
/// @param o compression and version.
/// @return SEAL's bytes.
/// @throws InvalidArgument if the ciphertext is empty, has more than 16 polynomials, is
///         transparent (rlwe/checks.h: check_not_transparent_words) or its context is not SEAL's
///         layout; RuntimeError if the compressor fails.
Bytes save(const Ciphertext& ct, const SaveOptions& o = {});
/// Writes a secret key as SEAL's SecretKey (NTT form over all primes).
/// @param sk the key.
/// @param o compression and version.
/// @return SEAL's bytes.
/// @throws InvalidArgument if the key is empty or its context is not SEAL's layout; RuntimeError
///         if the compressor fails.
Bytes save(const SecretKey& sk, const SaveOptions& o = {});
/// Writes a public key as SEAL's PublicKey (unseeded).
/// @param pk the key.
/// @param o compression and version.
/// @return SEAL's bytes.
/// @throws InvalidArgument if the key is empty or its context is not SEAL's layout; RuntimeError
///         if the compressor fails.
Bytes save(const PublicKey& pk, const SaveOptions& o = {});
/// Writes relinearization keys as SEAL's RelinKeys (one key per prime, unseeded).
/// @param rk the keys (alpha = 1, serving every level).
/// @param o compression and version.
/// @return SEAL's bytes.
/// @throws InvalidArgument if the keys are empty, alpha > 1 or they stop below the top level;
///         RuntimeError if the compressor fails.
Bytes save(const RelinKeys& rk, const SaveOptions& o = {});
/// Writes Galois keys as SEAL's GaloisKeys (unseeded).
/// @param gk the keys (alpha = 1, serving every level).
/// @param o compression and version.
/// @return SEAL's bytes.
/// @throws InvalidArgument if the set is empty, alpha > 1 or a key stops below the top level;
///         RuntimeError if the compressor fails.
Bytes save(const GaloisKeys& gk, const SaveOptions& o = {});

/// SEAL parameters as Veil's: special_primes = 1 when there are several primes (else 0).
/// @param in SEAL's bytes (exactly one object).
/// @param o the size cap.
/// @return the parameters.
/// @throws InvalidArgument naming the field on any malformed field (scheme, N, primes, plain
///         modulus, header, compression, size).
EncryptionParameters load_parameters(ByteView in, const LoadOptions& o = {});
/// Loads SEAL's Plaintext into `ctx` (coefficient form for BFV/BGV, NTT form for CKKS).
/// @param in SEAL's bytes (exactly one object).
/// @param ctx the context it must belong to (by parms_id).
/// @param dev the device to build it on.
/// @param o the size cap.
/// @return the plaintext.
/// @throws InvalidArgument naming the field on any mismatch.
Plaintext load_plaintext(ByteView in, const ContextPtr& ctx, const Device& dev,
                         const LoadOptions& o = {});
/// Loads SEAL's Ciphertext (a BLAKE2Xb-seeded one regenerated as SEAL does).
/// @param in SEAL's bytes (exactly one object).
/// @param ctx the context it must belong to (by parms_id).
/// @param dev the device to build it on.
/// @param o the size cap.
/// @return the ciphertext.
/// @throws InvalidArgument naming the field on any mismatch (a SHAKE256 seed included).
Ciphertext load_ciphertext(ByteView in, const ContextPtr& ctx, const Device& dev,
                           const LoadOptions& o = {});
/// Loads SEAL's SecretKey.
/// @param in SEAL's bytes (exactly one object).
/// @param ctx the context it must belong to (key level parms_id).
/// @param dev the device to build it on.
/// @param o the size cap.
/// @return the key.
/// @throws InvalidArgument naming the field on any mismatch.
SecretKey load_secret_key(ByteView in, const ContextPtr& ctx, const Device& dev,
                          const LoadOptions& o = {});
/// Loads SEAL's PublicKey (seeded or not).
/// @param in SEAL's bytes (exactly one object).
/// @param ctx the context it must belong to.
/// @param dev the device to build it on.
/// @param o the size cap.
/// @return the key.
/// @throws InvalidArgument naming the field on any mismatch.
PublicKey load_public_key(ByteView in, const ContextPtr& ctx, const Device& dev,
                          const LoadOptions& o = {});
/// Loads SEAL's RelinKeys (the key for s^2), summing per-prime keys over each digit when the
/// context's alpha > 1.
/// @param in SEAL's bytes (exactly one object).
/// @param ctx the context (with a special prime).
/// @param dev the device to build them on.
/// @param o the size cap.
/// @return the keys.
/// @throws InvalidArgument naming the field on any mismatch, or if there is no key for s^2 or the
///         context has no special prime.
RelinKeys load_relin_keys(ByteView in, const ContextPtr& ctx, const Device& dev,
                          const LoadOptions& o = {});
/// Loads SEAL's GaloisKeys (per-prime keys summed per digit when alpha > 1).
/// @param in SEAL's bytes (exactly one object).
/// @param ctx the context (with a special prime).
/// @param dev the device to build them on.
/// @param o the size cap.
/// @return the keys.
/// @throws InvalidArgument naming the field on any mismatch, or if the context has no special
///         prime.
GaloisKeys load_galois_keys(ByteView in, const ContextPtr& ctx, const Device& dev,
                            const LoadOptions& o = {});

/// Offsets and sizes of the SEAL objects concatenated in `in` (a SEAL stream holding several
/// objects). Throws InvalidArgument if a header is bad or a size runs past the end.
/// @param in the stream.
/// @return (offset, size) of each object, in order.
/// @throws InvalidArgument for a bad header or an object running past the end.
std::vector<std::pair<std::size_t, std::size_t>> split(ByteView in);

}  // namespace veil::io::seal
