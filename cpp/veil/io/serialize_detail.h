// The building blocks of Veil's format (serialize.h) shared by the files that save and load
// objects: framing a descriptor and body under the 48-byte header, opening and checking a frame,
// seeded key-switching keys. Internal to io/ (namespace detail); serialize.cpp defines them.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <type_traits>
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
// Compact key-switching keys (with kFlagSeeded): the seed regenerates the a_j with the compact
// sampler (ring/compact_uniform.h), and the loaded keys stay compact.
inline constexpr std::uint8_t kFlagCompact = 8;
// Galois keys with a descriptor per key (its level and form: KSwitchKey::level, seeded,
// compact) instead of one for the set; bits 0 and 3 are then 0 (the forms are per key).
inline constexpr std::uint8_t kFlagPerKey = 16;
// A per-key descriptor's form byte.
inline constexpr std::uint8_t kKeySeeded = 1;
inline constexpr std::uint8_t kKeyCompact = 2;

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
  /// 4-byte words, used instead of `body` when not empty: an object of a 32-bit-word context,
  /// copied from its buffer without widening (frame() writes 4-byte words either way).
  std::vector<std::uint32_t> body32;
  bool compact = false;  ///< with `seeded`: compact keys (kFlagCompact)
  bool per_key = false;  ///< Galois keys with a descriptor per key (kFlagPerKey)
};

/// Header, descriptor and (compressed) body.
Bytes frame(const Encoded& e, const SaveOptions& o);
void write_seed(ByteWriter& w, const UniformSeed& s);
UniformSeed read_seed(ByteReader& r);
/// Samples uniform polynomial `index` of a seeded object over `base` into `out`.
void expand_uniform(const Context& ctx, const Device& dev, const UniformSeed& seed,
                    std::uint64_t index, const RnsBase& base, bool coefficient_form, WordPtr out,
                    LimbAddress addr = {});
/// Decides whether to write seeded; throws when Seeding::always cannot be honoured.
bool decide_seeded(const SaveOptions& o, const std::optional<UniformSeed>& seed, bool shape_ok,
                   const std::function<bool()>& matches, const char* what);
/// A buffer's words on the host as stored: W = std::uint32_t for a 32-bit-word buffer (no
/// widening), u64 for either word size (widened).
template <class W>
std::vector<W> host_words(const WordBuffer& b) {
  if constexpr (std::is_same_v<W, std::uint32_t>) {
    return b.to_host32();
  } else {
    static_assert(std::is_same_v<W, u64>, "host_words: 4- or 8-byte words");
    return b.to_host();
  }
}
/// host_words into `out`, reusing its allocation when it has the room.
template <class W>
void host_words_into(const WordBuffer& b, std::vector<W>& out) {
  if (b.word_bits() != 8 * static_cast<int>(sizeof(W))) {
    out = host_words<W>(b);  // widened (or the word-size error of to_host32)
    return;
  }
  out.resize(b.size());
  if (!out.empty()) {
    backend::copy(Device::cpu(), out.data(), b.device(), b.template data<W>(), b.bytes());
  }
}
/// Calls f(W{}) with W the buffer's stored word type (std::uint32_t or u64).
template <class F>
void with_word_type(const WordBuffer& b, F&& f) {
  if (b.word_bits() == 32) {
    f(std::uint32_t{});
  } else {
    f(u64{});
  }
}
/// Moves `words` into the encoding's body (`body32` for 4-byte words, `body` for 8-byte ones).
void set_body(Encoded& e, std::vector<u64>&& words);
void set_body(Encoded& e, std::vector<std::uint32_t>&& words);
/// Appends a key-switching key's host words `all` ([dnum][2][limbs][N], word type W) to `out`
/// without the a_j polynomials.
template <class W>
void append_kswitch_seeded(const KSwitchKey& k, const std::vector<W>& all, std::vector<W>& out);
/// Appends a key-switching key's b_j polynomials to `out`, copied from its buffer (on any
/// device) with no host copy of the whole key; W is its stored word type.
template <class W>
void append_kswitch_b(const KSwitchKey& k, std::vector<W>& out);
/// Whether to save the key seeded (its seed still regenerates every a_j; `host`: its words as
/// host_words<W> gives them).
template <class W>
bool kswitch_seeded(const KSwitchKey& k, const SaveOptions& o, const std::vector<W>& host,
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

/// A body's words as stored, its size and CRC checked (read_body_words): a view of the input
/// when it is uncompressed (no copy), else the decompressed bytes; word_bytes() (4 or 8)
/// little-endian bytes per word, at any alignment. Views `f.stored`: the input must outlive it.
class BodyWords {
 public:
  BodyWords() = default;
  BodyWords(BodyWords&&) = default;
  BodyWords& operator=(BodyWords&&) = default;
  BodyWords(const BodyWords&) = delete;
  BodyWords& operator=(const BodyWords&) = delete;

  std::size_t size() const { return words_; }
  std::size_t word_bytes() const { return word_bytes_; }
  /// The stored bytes from word `first` on.
  const std::uint8_t* bytes(std::size_t first = 0) const { return data_ + first * word_bytes_; }

 private:
  friend BodyWords read_body_words(const Framed& f, std::size_t words, const LoadOptions& o);
  const std::uint8_t* data_ = nullptr;
  std::size_t words_ = 0, word_bytes_ = 8;
  std::vector<std::uint8_t> owned_;  // the decompressed body (zstd)
};

/// read_body without widening or copying: what loaders of large objects use.
BodyWords read_body_words(const Framed& f, std::size_t words, const LoadOptions& o);
/// Every word of `polys` polynomials from word `first` is below its limb's modulus.
void check_below_moduli(const BodyWords& b, std::size_t first, std::size_t polys,
                        const RnsBase& base, std::size_t n, const std::string& what);
/// The key-set id after N when the header's flag says so (0: none).
u64 read_key_id(ByteReader& r, const HeaderInfo& h);
std::uint64_t check_n(ByteReader& r, const Context& ctx);
std::size_t check_level(ByteReader& r, const Context& ctx);
void check_limbs(ByteReader& r, std::uint32_t got, std::size_t want);
void copy_in(const Device& dev, WordPtr dst, const u64* src, std::size_t words);
/// Copies `count` stored words from word `first` of `b` into `dst` (a direct copy when the
/// word sizes agree; else widened, or narrowed with a check that every word fits 32 bits).
void copy_in(const Device& dev, WordPtr dst, const BodyWords& b, std::size_t first,
             std::size_t count);
/// A key-switching key on `dev` from the body's words from word `first` on (b_j, or (b_j, a_j)
/// when not seeded); compact (with a seed): a compact key of the b_j (KSwitchKey::compact);
/// level: the key's level (KSwitchKey::level; default the top), whose dnum digits over
/// Q_level ∪ P the body holds.
KSwitchKey build_kswitch(const ContextPtr& ctx, const Device& dev, std::size_t dnum,
                         const BodyWords& body, std::size_t first,
                         const std::optional<UniformSeed>& seed, bool compact = false,
                         std::size_t level = static_cast<std::size_t>(-1));
/// The context's digit count; throws without special primes.
std::size_t expected_dnum(const Context& ctx);
void check_dnum(ByteReader& r, std::uint32_t got, std::size_t want);

}  // namespace veil::io::detail
