// The building blocks of Veil's format (serialize.h) shared by the files that save and load
// objects: framing a descriptor and body under the 48-byte header, opening and checking a frame,
// seeded key-switching keys. Internal to io/ (namespace detail); serialize.cpp defines them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "veil/io/bytes.h"
#include "veil/io/serialize.h"
#include "veil/rlwe/objects.h"

namespace veil::io::detail {

inline constexpr std::uint8_t kMagic[4] = {'V', 'E', 'I', 'L'};
inline constexpr std::uint16_t kVersion = 1;
inline constexpr std::size_t kHeaderSize = 48;
inline constexpr std::size_t kMaxDescriptor = std::size_t(64) << 20;
inline constexpr std::size_t kMaxCiphertextSize = 16;  // as SEAL's SEAL_CIPHERTEXT_SIZE_MAX
inline constexpr std::size_t kMaxPrimes = 1024;
inline constexpr std::uint8_t kFlagSeeded = 1;
inline constexpr std::uint8_t kFlagKeySet = 2;  // the descriptor carries the key-set id after N
// The body's words are stored in 4 bytes each (little-endian), not 8: written whenever every body
// word is below 2^32 (residues of primes below 2^32, any word size), halving the bytes.
inline constexpr std::uint8_t kFlagWords32 = 4;

// ---- writing

/// An object ready to be framed: its descriptor and body words (host).
struct Encoded {
  ObjectType type;
  SchemeType scheme;
  std::uint64_t hash;
  bool seeded = false;
  Bytes descriptor;
  std::vector<u64> body;
  bool key_set = false;
};

/// Header, descriptor and (compressed) body.
Bytes frame(const Encoded& e, const SaveOptions& o);
void write_seed(ByteWriter& w, const UniformSeed& s);
UniformSeed read_seed(ByteReader& r);
/// Samples uniform polynomial `index` of a seeded object over `base` into `out`.
void expand_uniform(const Context& ctx, const Device& dev, const UniformSeed& seed,
                    std::uint64_t index, const RnsBase& base, bool coefficient_form, WordPtr out);
/// Decides whether to write seeded; throws when Seeding::always cannot be honoured.
bool decide_seeded(const SaveOptions& o, const std::optional<UniformSeed>& seed, bool shape_ok,
                   const std::function<bool()>& matches, const char* what);
/// A key-switching key's host words `all` ([dnum][2][limbs][N]) without the a_j polynomials.
std::vector<u64> kswitch_body_seeded(const KSwitchKey& k, const std::vector<u64>& all);
/// Whether to save the key seeded (its seed still regenerates every a_j).
bool kswitch_seeded(const KSwitchKey& k, const SaveOptions& o, const std::vector<u64>& host,
                    const char* what);
/// Checks that the object is initialized and starts its encoding; every object's descriptor
/// begins with N (then the key-set id when key_id is not 0).
Encoded start(ObjectType t, const ContextPtr& ctx, const char* what, u64 key_id = 0);

// ---- reading

/// A checked header plus views of the descriptor and stored body.
struct Framed {
  HeaderInfo h;
  ByteView descriptor, stored;
};

/// Reads the header and checks the object type, and the scheme and parameter hash against
/// `ctx` when given.
Framed open(ByteView in, ObjectType want, const Context* ctx);
/// Reads the body after checking its size against the shape (`words`) and the limit.
std::vector<u64> read_body(const Framed& f, std::size_t words, const LoadOptions& o);
/// The key-set id after N when the header's flag says so (0: none).
u64 read_key_id(ByteReader& r, const HeaderInfo& h);
std::uint64_t check_n(ByteReader& r, const Context& ctx);
std::size_t check_level(ByteReader& r, const Context& ctx);
void check_limbs(ByteReader& r, std::uint32_t got, std::size_t want);
void copy_in(const Device& dev, WordPtr dst, const u64* src, std::size_t words);
/// A key-switching key on `dev` from body words (b_j, or (b_j, a_j) when not seeded).
KSwitchKey build_kswitch(const ContextPtr& ctx, const Device& dev, std::size_t dnum,
                         const u64* body, const std::optional<UniformSeed>& seed);
/// The context's digit count; throws without special primes.
std::size_t expected_dnum(const Context& ctx);
void check_dnum(ByteReader& r, std::uint32_t got, std::size_t want);

}  // namespace veil::io::detail
