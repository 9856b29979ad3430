#include "veil/io/blake2.h"

#include <algorithm>
#include <cstring>

namespace veil::io {

void Blake2xbStream::refill() {
  std::uint8_t ctr[8];
  for (int i = 0; i < 8; ++i) ctr[i] = static_cast<std::uint8_t>(counter_ >> (8 * i));
  blake2xb(block_.data(), block_.size(), ByteView(ctr, 8), ByteView(seed_.data(), seed_.size()));
  ++counter_;
  pos_ = 0;
}

void Blake2xbStream::generate(std::uint8_t* out, std::size_t n) {
  while (n) {
    if (pos_ == block_.size()) refill();
    const std::size_t k = std::min(n, block_.size() - pos_);
    std::memcpy(out, block_.data() + pos_, k);
    pos_ += k;
    out += k;
    n -= k;
  }
}

std::uint64_t Blake2xbStream::next_u64() {
  std::uint8_t b[8];
  generate(b, 8);
  std::uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= std::uint64_t(b[i]) << (8 * i);
  return v;
}

}  // namespace veil::io
