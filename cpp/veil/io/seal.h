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
ParmsId parms_id(SchemeType scheme, std::size_t n, const std::vector<std::uint64_t>& primes,
                 std::uint64_t plain_modulus);

struct SaveOptions {
  Compression compression = Compression::none;
  /// Version written in every header. SEAL 4.0-4.3 read only their own minor version; 4.4
  /// reads 4.0-4.4. The default, 4.1, is read by SEAL 4.1 and 4.4.
  std::uint8_t version_minor = 1;
  int level = -1;  ///< compression level (-1: zlib's default; zstd uses 3)
};

Bytes save(const EncryptionParameters& p, const SaveOptions& o = {});
Bytes save(const Plaintext& pt, const SaveOptions& o = {});
Bytes save(const Ciphertext& ct, const SaveOptions& o = {});
Bytes save(const SecretKey& sk, const SaveOptions& o = {});
Bytes save(const PublicKey& pk, const SaveOptions& o = {});
Bytes save(const RelinKeys& rk, const SaveOptions& o = {});
Bytes save(const GaloisKeys& gk, const SaveOptions& o = {});

/// SEAL parameters as Veil's: special_primes = 1 when there are several primes (else 0).
EncryptionParameters load_parameters(ByteView in, const LoadOptions& o = {});
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

/// Offsets and sizes of the SEAL objects concatenated in `in` (a SEAL stream holding several
/// objects). Throws InvalidArgument if a header is bad or a size runs past the end.
std::vector<std::pair<std::size_t, std::size_t>> split(ByteView in);

}  // namespace veil::io::seal
