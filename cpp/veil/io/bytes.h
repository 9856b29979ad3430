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

using Bytes = std::vector<std::uint8_t>;

/// A read-only view of bytes (pointer and size).
struct ByteView {
  const std::uint8_t* data = nullptr;
  std::size_t size = 0;
  ByteView() = default;
  ByteView(const std::uint8_t* d, std::size_t n) : data(d), size(n) {}
  ByteView(const Bytes& b) : data(b.data()), size(b.size()) {}  // NOLINT: implicit on purpose
  ByteView sub(std::size_t offset, std::size_t count) const { return {data + offset, count}; }
};

class ByteWriter {
 public:
  explicit ByteWriter(Bytes& out) : out_(out) {}
  void u8(std::uint8_t v) { out_.push_back(v); }
  void u16(std::uint16_t v) { put(v, 2); }
  void u32(std::uint32_t v) { put(v, 4); }
  void u64(std::uint64_t v) { put(v, 8); }
  void f64(double v) {
    std::uint64_t bits;
    std::memcpy(&bits, &v, 8);
    u64(bits);
  }
  void raw(const void* p, std::size_t n) {
    const auto* b = static_cast<const std::uint8_t*>(p);
    out_.insert(out_.end(), b, b + n);
  }
  /// 64-bit words, little-endian (the host order on every platform Veil builds for).
  void words(const std::uint64_t* w, std::size_t count) { raw(w, count * 8); }
  std::size_t size() const { return out_.size(); }

 private:
  void put(std::uint64_t v, int bytes) {
    for (int i = 0; i < bytes; ++i) out_.push_back(static_cast<std::uint8_t>(v >> (8 * i)));
  }
  Bytes& out_;
};

class ByteReader {
 public:
  ByteReader(ByteView in, std::string what) : in_(in), what_(std::move(what)) {}
  std::uint8_t u8(const char* field) { return static_cast<std::uint8_t>(get(field, 1)); }
  std::uint16_t u16(const char* field) { return static_cast<std::uint16_t>(get(field, 2)); }
  std::uint32_t u32(const char* field) { return static_cast<std::uint32_t>(get(field, 4)); }
  std::uint64_t u64(const char* field) { return get(field, 8); }
  double f64(const char* field) {
    const std::uint64_t bits = u64(field);
    double v;
    std::memcpy(&v, &bits, 8);
    return v;
  }
  /// A view of the next `n` bytes (checked against what is left).
  ByteView take(const char* field, std::size_t n) {
    need(field, n);
    ByteView v = in_.sub(pos_, n);
    pos_ += n;
    return v;
  }
  void words(const char* field, std::uint64_t* out, std::size_t count) {
    if (count > (in_.size - pos_) / 8) truncated(field, count * 8);
    std::memcpy(out, in_.data + pos_, count * 8);
    pos_ += count * 8;
  }
  std::size_t position() const { return pos_; }
  std::size_t remaining() const { return in_.size - pos_; }
  /// Throws unless every byte was consumed (no trailing data).
  void expect_end() const {
    if (pos_ != in_.size) {
      throw InvalidArgument(what_ + ": " + std::to_string(in_.size - pos_) +
                            " unexpected trailing bytes");
    }
  }
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
