// Little-endian byte writing and bounds-checked reading for the serialization formats.
// ByteReader treats its input as hostile: every read names the field it is reading, and running
// past the end throws InvalidArgument ("<field>: truncated ...") instead of reading out of bounds.
#pragma once
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "veil/core/error.h"

namespace veil::io {

static_assert(std::endian::native == std::endian::little,
              "the serialization formats copy 64-bit words as little-endian");

/// An owned byte string (a serialized object).
using Bytes = std::vector<std::uint8_t>;

/// A read-only view of bytes (pointer and size).
struct ByteView {
  /// The first byte.
  const std::uint8_t* data = nullptr;
  /// The number of bytes.
  std::size_t size = 0;
  ByteView() = default;
  /// A view of n bytes at d.
  /// @param d the first byte.
  /// @param n the number of bytes.
  ByteView(const std::uint8_t* d, std::size_t n) : data(d), size(n) {}
  /// A view of a byte vector (implicit on purpose); valid while the vector is unchanged.
  /// @param b the bytes.
  ByteView(const Bytes& b) : data(b.data()), size(b.size()) {}  // NOLINT: implicit on purpose
  /// The bytes [offset, offset + count) (unchecked: the caller checks the bounds).
  /// @param offset the first byte.
  /// @param count the number of bytes.
  /// @return the sub-view.
  ByteView sub(std::size_t offset, std::size_t count) const { return {data + offset, count}; }
};

/// Appends little-endian fields to a byte vector.
class ByteWriter {
 public:
  /// A writer appending to `out` (which must outlive it).
  /// @param out the destination.
  explicit ByteWriter(Bytes& out) : out_(out) {}
  /// Appends one byte.
  /// @param v the byte.
  void u8(std::uint8_t v) { out_.push_back(v); }
  /// Appends 2 bytes, little-endian.
  /// @param v the value.
  void u16(std::uint16_t v) { put(v, 2); }
  /// Appends 4 bytes, little-endian.
  /// @param v the value.
  void u32(std::uint32_t v) { put(v, 4); }
  /// Appends 8 bytes, little-endian.
  /// @param v the value.
  void u64(std::uint64_t v) { put(v, 8); }
  /// Appends an IEEE-754 double as its 8 bytes, little-endian.
  /// @param v the value.
  void f64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    u64(bits);
  }
  /// Appends n bytes as they are.
  /// @param p the bytes.
  /// @param n the number of bytes.
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  /// 64-bit words, little-endian (the host order on every platform Veil builds for).
  /// @param w the words.
  /// @param count the number of words.
  void words(const std::uint64_t* w, std::size_t count) { raw(w, count * 8); }
  /// The destination's size so far.
  /// @return the byte count.
  std::size_t size() const { return out_.size(); }

 private:
  void put(std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  Bytes& out_;
};

/// Reads little-endian fields from hostile bytes: every read is bounds-checked and names its field.
class ByteReader {
 public:
  /// A reader at the start of `in`.
  /// @param in the bytes (must outlive the reader).
  /// @param what the object being read, the first word of every error message.
  ByteReader(ByteView in, std::string what) : in_(in), what_(std::move(what)) {}
  /// Reads one byte.
  /// @param field the field's name for the error message.
  /// @return the byte.
  /// @throws InvalidArgument if no byte is left.
  std::uint8_t u8(const char* field) { return static_cast<std::uint8_t>(get(field, 1)); }
  /// Reads 2 bytes, little-endian.
  /// @param field the field's name.
  /// @return the value.
  /// @throws InvalidArgument if fewer than 2 bytes are left.
  std::uint16_t u16(const char* field) { return static_cast<std::uint16_t>(get(field, 2)); }
  /// Reads 4 bytes, little-endian.
  /// @param field the field's name.
  /// @return the value.
  /// @throws InvalidArgument if fewer than 4 bytes are left.
  std::uint32_t u32(const char* field) { return static_cast<std::uint32_t>(get(field, 4)); }
  /// Reads 8 bytes, little-endian.
  /// @param field the field's name.
  /// @return the value.
  /// @throws InvalidArgument if fewer than 8 bytes are left.
  std::uint64_t u64(const char* field) { return get(field, 8); }
  /// Reads an IEEE-754 double from 8 little-endian bytes (any bit pattern, NaN included).
  /// @param field the field's name.
  /// @return the value.
  /// @throws InvalidArgument if fewer than 8 bytes are left.
  double f64(const char* field) {
    const std::uint64_t bits = u64(field);
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  /// A view of the next `n` bytes (checked against what is left).
  /// @param field the field's name.
  /// @param n the number of bytes.
  /// @return a view into the input.
  /// @throws InvalidArgument if fewer than n bytes are left.
  ByteView take(const char* field, std::size_t n) {
    need(field, n);
    ByteView v = in_.sub(pos_, n);
    pos_ += n;
    return v;
  }
  /// Reads `count` little-endian 64-bit words (checked before any is copied).
  /// @param field the field's name.
  /// @param out receives the words.
  /// @param count the number of words.
  /// @throws InvalidArgument if fewer than 8 * count bytes are left.
  void words(const char* field, std::uint64_t* out, std::size_t count) {
    if (count > (in_.size - pos_) / 8) truncated(field, count * 8);
    std::memcpy(out, in_.data + pos_, count * 8);
    pos_ += count * 8;
  }
  /// The offset of the next byte.
  /// @return the bytes read so far.
  std::size_t position() const { return pos_; }
  /// The bytes not read yet.
  /// @return the count.
  std::size_t remaining() const { return in_.size - pos_; }
  /// Throws unless every byte was consumed (no trailing data).
  /// @throws InvalidArgument naming the trailing byte count otherwise.
  void expect_end() const {
    if (pos_ != in_.size) {
      throw InvalidArgument(what_ + ": " + std::to_string(in_.size - pos_) +
                            " unexpected trailing bytes");
    }
  }
  /// Reports a field with an invalid value: "<what>: <field>: <msg>".
  /// @param field the field's name.
  /// @param msg what is wrong with it.
  /// @throws InvalidArgument always.
  [[noreturn]] void fail(const std::string& field, const std::string& msg) const {
    throw InvalidArgument(what_ + ": " + field + ": " + msg);
  }

 private:
  void need(const char* field, std::size_t n) const {
    if (n > in_.size - pos_) truncated(field, n);
  }
  [[noreturn]] void truncated(const char* field, std::size_t n) const {
    throw InvalidArgument(what_ + ": " + field + ": truncated (needs " + std::to_string(n) +
                          " bytes at offset " + std::to_string(pos_) + ", " +
                          std::to_string(in_.size - pos_) + " left)");
  }
  std::uint64_t get(const char* field, int bytes) {
    need(field, static_cast<std::size_t>(bytes));
    std::uint64_t v = 0;
    for (int i = 0; i < bytes; ++i) v |= std::uint64_t(in_.data[pos_ + i]) << (8 * i);
    pos_ += static_cast<std::size_t>(bytes);
    return v;
  }
  ByteView in_;
  std::size_t pos_ = 0;
  std::string what_;
};

}  // namespace veil::io
