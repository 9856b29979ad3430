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
/// @tparam V void (a mutable pointer) or const void (a read-only one).
template <class V>  // void or const void
class BasicWordPtr {
 public:
  BasicWordPtr() = default;
  /// Words of `word_bits` bits at `p`.
  /// @param p the first word.
  /// @param word_bits 32 or 64 (not checked here).
  BasicWordPtr(V* p, int word_bits) : p_(p), bytes_(static_cast<unsigned char>(word_bits / 8)) {}
  /// 64-bit words at `p`.
  /// @param p the first word.
  explicit BasicWordPtr(std::conditional_t<std::is_const_v<V>, const u64*, u64*> p)
      : p_(p), bytes_(8) {}
  /// 32-bit words at `p`.
  /// @param p the first word.
  explicit BasicWordPtr(std::conditional_t<std::is_const_v<V>, const u32*, u32*> p)
      : p_(p), bytes_(4) {}
  /// A mutable pointer converts to a const one.
  /// @param o the mutable pointer.
  template <class U, class = std::enable_if_t<std::is_const_v<V> && !std::is_const_v<U>>>
  BasicWordPtr(const BasicWordPtr<U>& o) : p_(o.get()), bytes_(o.word_bytes()) {}

  /// The word size in bits.
  /// @return 32 or 64.
  int word_bits() const { return 8 * bytes_; }
  /// The word size in bytes.
  /// @return 4 or 8.
  std::size_t word_bytes() const { return bytes_; }
  /// The untyped address of the first word.
  /// @return the pointer.
  V* get() const { return p_; }
  /// Whether the pointer is null.
  /// @return true for a null pointer.
  bool null() const { return p_ == nullptr; }
  /// The words as W; throws InvalidArgument if W is not their size.
  /// @tparam W u32 or u64.
  /// @return the typed pointer (const W* for a ConstWordPtr).
  /// @throws veil::InvalidArgument if sizeof(W) is not the word size.
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
  /// The pointer `words` words further (arithmetic in words, not bytes).
  /// @param words the offset in words.
  /// @return the advanced pointer, with the same word size.
  BasicWordPtr operator+(std::size_t words) const {
    using Byte = std::conditional_t<std::is_const_v<V>, const unsigned char, unsigned char>;
    return BasicWordPtr(static_cast<Byte*>(p_) + words * bytes_, 8 * bytes_);
  }
  /// Bytes of `words` words.
  /// @param words a word count.
  /// @return words * word_bytes().
  std::size_t bytes(std::size_t words) const { return words * bytes_; }

 private:
  V* p_ = nullptr;
  unsigned char bytes_ = 8;
};
/// A mutable pointer to run-time-sized words.
using WordPtr = BasicWordPtr<void>;
/// A read-only pointer to run-time-sized words.
using ConstWordPtr = BasicWordPtr<const void>;

/// The owning storage of an RNS object's words (u32 or u64, chosen per context at run time): a
/// Buffer of bytes with its word size. Move-only, like Buffer.
class WordBuffer {
 public:
  WordBuffer() = default;
  /// `count` words of `word_bits` (32 or 64) bits on `dev`.
  /// The words are uninitialized.
  /// @param dev the device.
  /// @param count the number of words.
  /// @param word_bits 32 or 64.
  /// @throws veil::InvalidArgument if word_bits is neither 32 nor 64; veil::OutOfMemory if the
  /// allocation fails.
  WordBuffer(const Device& dev, std::size_t count, int word_bits)
      : bytes_(dev, count * check_bits(word_bits) / 8), word_bytes_(word_bits / 8) {}
  /// Takes over a typed buffer (no copy).
  /// @tparam W u32 or u64 (checked at compile time).
  /// @param b the buffer; left empty.
  template <class W>
  explicit WordBuffer(Buffer<W>&& b)
      : bytes_(Buffer<unsigned char>::adopt(std::move(b))), word_bytes_(sizeof(W)) {
    static_assert(std::is_same_v<W, u32> || std::is_same_v<W, u64>, "words are u32 or u64");
  }

  /// The word size in bits.
  /// @return 32 or 64.
  int word_bits() const { return 8 * word_bytes_; }
  /// The number of words.
  /// @return the word count.
  std::size_t size() const { return bytes_.size() / word_bytes_; }
  /// The storage size in bytes.
  /// @return size() * word_bits() / 8.
  std::size_t bytes() const { return bytes_.size(); }
  /// Whether the buffer holds no words.
  /// @return true when empty.
  bool empty() const { return bytes_.empty(); }
  /// The device the words are on.
  /// @return the device.
  const Device& device() const { return bytes_.device(); }

  /// The words as W. Throws InvalidArgument if W is not this buffer's word size (a kernel
  /// instantiated for the wrong word would read garbage).
  /// @tparam W u32 or u64.
  /// @return the typed words.
  /// @throws veil::InvalidArgument if sizeof(W) is not the word size.
  template <class W>
  W* data() {
    check_word<W>();
    return reinterpret_cast<W*>(bytes_.data());
  }
  /// The words as const W (see the mutable overload).
  /// @tparam W u32 or u64.
  /// @return the typed words.
  /// @throws veil::InvalidArgument if sizeof(W) is not the word size.
  template <class W>
  const W* data() const {
    check_word<W>();
    return reinterpret_cast<const W*>(bytes_.data());
  }

  /// The words as a run-time-sized pointer (see WordPtr).
  /// @return a WordPtr to the first word.
  WordPtr data() { return WordPtr(bytes_.data(), word_bits()); }
  /// The words as a run-time-sized read-only pointer.
  /// @return a ConstWordPtr to the first word.
  ConstWordPtr data() const { return ConstWordPtr(bytes_.data(), word_bits()); }

  /// Deep copy on the same device (a secure buffer's copy is secure too).
  /// @return the copy.
  /// @throws veil::OutOfMemory or veil::RuntimeError if the allocation or copy fails.
  WordBuffer clone() const { return to(device()); }
  /// Deep copy onto `dev` (a secure buffer's copy is secure too).
  /// @param dev the destination device.
  /// @return the copy, with the same word size.
  /// @throws veil::OutOfMemory or veil::RuntimeError if the allocation or copy fails.
  WordBuffer to(const Device& dev) const {
    WordBuffer w;
    w.bytes_ = bytes_.to(dev);
    w.word_bytes_ = word_bytes_;
    return w;
  }
  /// Sets every word to zero.
  /// @throws veil::RuntimeError on a CUDA error.
  void zero() { bytes_.zero(); }
  /// Marks the words as secret: zeroized before the memory is freed (Buffer::set_secure).
  /// @param on true to mark, false to unmark.
  void set_secure(bool on = true) { bytes_.set_secure(on); }
  /// Whether the words are marked secret.
  /// @return true when set_secure(true) was called last.
  bool secure() const { return bytes_.secure(); }

  /// The words as stored, on the host, for word_bits() == 32 (no widening: serialization
  /// writes 4-byte words). Throws InvalidArgument for 64-bit words.
  /// @return the words, on the host.
  /// @throws veil::InvalidArgument for 64-bit words; veil::RuntimeError if the copy fails.
  std::vector<u32> to_host32() const {
    if (word_bytes_ != 4) throw InvalidArgument("to_host32: the buffer holds 64-bit words");
    std::vector<u32> h(size());
    if (!h.empty()) backend::copy(Device::cpu(), h.data(), device(), bytes_.data(), bytes());
    return h;
  }

  /// Every word widened to u64, on the host.
  /// @return size() words, each widened to 64 bits.
  /// @throws veil::RuntimeError if the copy fails.
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
/// @param dst_dev the destination's device.
/// @param dst the destination words.
/// @param src_dev the source's device.
/// @param src the source words (same word size as dst).
/// @param words the number of words.
/// @throws veil::InvalidArgument if the word sizes differ; veil::RuntimeError if the copy fails.
inline void copy_words(const Device& dst_dev, WordPtr dst, const Device& src_dev, ConstWordPtr src,
                       std::size_t words) {
  if (dst.word_bits() != src.word_bits()) {
    throw InvalidArgument("copy_words: " + std::to_string(src.word_bits()) + "-bit words into " +
                          std::to_string(dst.word_bits()) + "-bit words");
  }
  backend::copy(dst_dev, dst.get(), src_dev, src.get(), dst.bytes(words));
}
/// Copies `rows` rows of `width` words within one device (strides in words).
/// Row r goes from src + r * src_pitch to dst + r * dst_pitch (backend::copy_rows).
/// @param dev the device both are on.
/// @param dst the destination words.
/// @param dst_pitch the destination's row pitch in words.
/// @param src the source words (same word size as dst).
/// @param src_pitch the source's row pitch in words.
/// @param width the words copied per row.
/// @param rows the number of rows.
/// @throws veil::InvalidArgument if the word sizes differ; veil::RuntimeError if the copy fails.
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
/// @param dev the destination's device.
/// @param dst the destination words (32 or 64 bits).
/// @param src `words` host words.
/// @param words the number of words.
/// @throws veil::InvalidArgument if dst has 32-bit words and a source word is 2^32 or more;
/// veil::RuntimeError if the copy fails.
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

/// Sets `words` words at dst to zero (backend::fill_zero).
/// @param dev the device dst is on.
/// @param dst the words.
/// @param words the number of words.
/// @throws veil::RuntimeError on a CUDA error.
inline void fill_zero_words(const Device& dev, WordPtr dst, std::size_t words) {
  backend::fill_zero(dev, dst.get(), dst.bytes(words));
}

/// A type tag for the word of a dispatch (with_word).
/// @tparam W u32 or u64.
template <class W>
struct WordTag {
  /// The word type.
  using type = W;
};

/// Calls f(WordTag<u32>{}) or f(WordTag<u64>{}) for `word_bits` 32 or 64: the one place where a
/// run-time word size becomes a compile-time one.
/// @param word_bits 32 or 64 (any other value is taken as 64).
/// @param f a generic callable taking a WordTag.
/// @return what f returns.
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
