// WordBuffer: the storage of an RNS object whose word size is chosen at run time (DESIGN.md: u32
// words for primes below 2^31, u64 otherwise, per context). It owns a Buffer of bytes and knows
// its word size; kernels reach the words through data<W>(), which checks that W is that size.
// Host copies (Python, tests) are word-independent: to_host() widens to u64 and
// copy_words_from_host() narrows. Serialization writes 4-byte words whenever every word fits,
// whatever the buffer's size (to_host32 copies a 32-bit buffer without widening).
#pragma once
#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "veil/backend/buffer.h"
#include "veil/core/error.h"
#include "veil/core/modarith.h"

namespace veil {

/// A pointer to words whose size (32 or 64 bits) is known at run time: what scheme code passes
/// to the kernels, which dispatch once on the size (with_word) and then run on typed views.
/// Arithmetic is in words. A raw u32* / u64* converts explicitly only.
template <class V>  // void or const void
class BasicWordPtr {
 public:
  BasicWordPtr() = default;
  BasicWordPtr(V* p, int word_bits) : p_(p), bytes_(static_cast<unsigned char>(word_bits / 8)) {}
  explicit BasicWordPtr(std::conditional_t<std::is_const_v<V>, const u64*, u64*> p)
      : p_(p), bytes_(8) {}
  explicit BasicWordPtr(std::conditional_t<std::is_const_v<V>, const u32*, u32*> p)
      : p_(p), bytes_(4) {}
  /// A mutable pointer converts to a const one.
  template <class U, class = std::enable_if_t<std::is_const_v<V> && !std::is_const_v<U>>>
  BasicWordPtr(const BasicWordPtr<U>& o) : p_(o.get()), bytes_(o.word_bytes()) {}

  int word_bits() const { return 8 * bytes_; }
  std::size_t word_bytes() const { return bytes_; }
  V* get() const { return p_; }
  bool null() const { return p_ == nullptr; }
  /// The words as W; throws InvalidArgument if W is not their size.
  template <class W>
  auto as() const {
    static_assert(std::is_same_v<W, u32> || std::is_same_v<W, u64>, "words are u32 or u64");
    if (sizeof(W) != bytes_) {
      throw InvalidArgument("words: " + std::to_string(8 * bytes_) + "-bit words read as " +
                            std::to_string(8 * sizeof(W)) + "-bit");
    }
    if constexpr (std::is_const_v<V>) {
      return static_cast<const W*>(p_);
    } else {
      return static_cast<W*>(p_);
    }
  }
  BasicWordPtr operator+(std::size_t words) const {
    using Byte = std::conditional_t<std::is_const_v<V>, const unsigned char, unsigned char>;
    return BasicWordPtr(static_cast<Byte*>(p_) + words * bytes_, 8 * bytes_);
  }
  /// Bytes of `words` words.
  std::size_t bytes(std::size_t words) const { return words * bytes_; }

 private:
  V* p_ = nullptr;
  unsigned char bytes_ = 8;
};
using WordPtr = BasicWordPtr<void>;
using ConstWordPtr = BasicWordPtr<const void>;

class WordBuffer {
 public:
  WordBuffer() = default;
  /// `count` words of `word_bits` (32 or 64) bits on `dev`.
  WordBuffer(const Device& dev, std::size_t count, int word_bits)
      : bytes_(dev, count * check_bits(word_bits) / 8), word_bytes_(word_bits / 8) {}
  /// Takes over a typed buffer (no copy).
  template <class W>
  explicit WordBuffer(Buffer<W>&& b)
      : bytes_(Buffer<unsigned char>::adopt(std::move(b))), word_bytes_(sizeof(W)) {
    static_assert(std::is_same_v<W, u32> || std::is_same_v<W, u64>, "words are u32 or u64");
  }

  int word_bits() const { return 8 * word_bytes_; }
  std::size_t size() const { return bytes_.size() / word_bytes_; }
  std::size_t bytes() const { return bytes_.size(); }
  bool empty() const { return bytes_.empty(); }
  const Device& device() const { return bytes_.device(); }

  /// The words as W. Throws InvalidArgument if W is not this buffer's word size (a kernel
  /// instantiated for the wrong word would read garbage).
  template <class W>
  W* data() {
    check_word<W>();
    return reinterpret_cast<W*>(bytes_.data());
  }
  template <class W>
  const W* data() const {
    check_word<W>();
    return reinterpret_cast<const W*>(bytes_.data());
  }

  /// The words as a run-time-sized pointer (see WordPtr).
  WordPtr data() { return WordPtr(bytes_.data(), word_bits()); }
  ConstWordPtr data() const { return ConstWordPtr(bytes_.data(), word_bits()); }

  WordBuffer clone() const { return to(device()); }
  WordBuffer to(const Device& dev) const {
    WordBuffer w;
    w.bytes_ = bytes_.to(dev);
    w.word_bytes_ = word_bytes_;
    return w;
  }
  void zero() { bytes_.zero(); }
  void set_secure(bool on = true) { bytes_.set_secure(on); }
  bool secure() const { return bytes_.secure(); }

  /// The words as stored, on the host, for word_bits() == 32 (no widening: serialization
  /// writes 4-byte words). Throws InvalidArgument for 64-bit words.
  std::vector<u32> to_host32() const {
    if (word_bytes_ != 4) throw InvalidArgument("to_host32: the buffer holds 64-bit words");
    std::vector<u32> h(size());
    if (!h.empty()) backend::copy(Device::cpu(), h.data(), device(), bytes_.data(), bytes());
    return h;
  }

  /// Every word widened to u64, on the host.
  std::vector<u64> to_host() const {
    if (word_bytes_ == 8) {
      std::vector<u64> v(size());
      if (!v.empty()) backend::copy(Device::cpu(), v.data(), device(), bytes_.data(), bytes());
      return v;
    }
    std::vector<u32> h(size());
    if (!h.empty()) backend::copy(Device::cpu(), h.data(), device(), bytes_.data(), bytes());
    return std::vector<u64>(h.begin(), h.end());
  }

 private:
  static std::size_t check_bits(int bits) {
    if (bits != 32 && bits != 64) {
      throw InvalidArgument("word_bits: expected 32 or 64, got " + std::to_string(bits));
    }
    return static_cast<std::size_t>(bits);
  }
  template <class W>
  void check_word() const {
    static_assert(std::is_same_v<W, u32> || std::is_same_v<W, u64>, "words are u32 or u64");
    if (sizeof(W) != word_bytes_) {
      throw InvalidArgument("words: stored as " + std::to_string(8 * word_bytes_) +
                            "-bit words, read as " + std::to_string(8 * sizeof(W)) + "-bit");
    }
  }
  Buffer<unsigned char> bytes_;
  std::size_t word_bytes_ = 8;
};

/// Copies `words` words (of dst's size; src must have the same) between devices.
inline void copy_words(const Device& dst_dev, WordPtr dst, const Device& src_dev, ConstWordPtr src,
                       std::size_t words) {
  if (dst.word_bits() != src.word_bits()) {
    throw InvalidArgument("copy_words: " + std::to_string(src.word_bits()) + "-bit words into " +
                          std::to_string(dst.word_bits()) + "-bit words");
  }
  backend::copy(dst_dev, dst.get(), src_dev, src.get(), dst.bytes(words));
}
/// Copies `rows` rows of `width` words within one device (strides in words).
inline void copy_word_rows(const Device& dev, WordPtr dst, std::size_t dst_pitch, ConstWordPtr src,
                           std::size_t src_pitch, std::size_t width, std::size_t rows) {
  if (dst.word_bits() != src.word_bits()) {
    throw InvalidArgument("copy_word_rows: mismatched word sizes");
  }
  backend::copy_rows(dev, dst.get(), dst.bytes(dst_pitch), src.get(), src.bytes(src_pitch),
                     dst.bytes(width), rows);
}
/// Copies `words` host words (64-bit, as every saved format holds them) into `dst` on `dev`,
/// narrowed to dst's word size. Throws InvalidArgument if a word does not fit (loaders check
/// residues against their moduli first, so this only fires on a logic error).
inline void copy_words_from_host(const Device& dev, WordPtr dst, const u64* src,
                                 std::size_t words) {
  if (words == 0) return;
  if (dst.word_bits() == 64) {
    backend::copy(dev, dst.get(), Device::cpu(), src, words * 8);
    return;
  }
  std::vector<u32> narrow(words);
  for (std::size_t i = 0; i < words; ++i) {
    if (src[i] >> 32) {
      throw InvalidArgument("words: word " + std::to_string(i) + " does not fit 32 bits");
    }
    narrow[i] = static_cast<u32>(src[i]);
  }
  backend::copy(dev, dst.get(), Device::cpu(), narrow.data(), words * 4);
}

inline void fill_zero_words(const Device& dev, WordPtr dst, std::size_t words) {
  backend::fill_zero(dev, dst.get(), dst.bytes(words));
}

/// A type tag for the word of a dispatch (with_word).
template <class W>
struct WordTag {
  using type = W;
};

/// Calls f(WordTag<u32>{}) or f(WordTag<u64>{}) for `word_bits` 32 or 64: the one place where a
/// run-time word size becomes a compile-time one.
template <class F>
decltype(auto) with_word(int word_bits, F&& f) {
  if (word_bits == 32) return f(WordTag<u32>{});
  return f(WordTag<u64>{});
}

}  // namespace veil

/// Runs the statements `...` with `W` bound to u32 or u64 for `bits` = 32 or 64 (with_word);
/// `return VEIL_WITH_WORD(bits, return f<W>(x));` returns what f returns.
#define VEIL_WITH_WORD(bits, ...)                                    \
  ::veil::with_word((bits), [&](auto veil_word_tag_) {               \
    using W = typename decltype(veil_word_tag_)::type;               \
    __VA_ARGS__;                                                     \
  })
