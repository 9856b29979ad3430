#include "veil/io/blake2.h"

#include <blake2.h>

#include <algorithm>
#include <cstring>

#include "veil/core/error.h"

namespace veil::io {

namespace {
void check(int rc, const char* what) {
  if (rc != 0) throw RuntimeError(std::string("blake2b: ") + what + " failed");
}
}  // namespace

std::array<std::uint8_t, 32> blake2b_256(ByteView in) {
  std::array<std::uint8_t, 32> out{};
  check(::blake2b(out.data(), in.data, nullptr, out.size(), in.size, 0), "hash");
  return out;
}

void blake2xb(std::uint8_t* out, std::size_t out_len, ByteView in, ByteView key) {
  if (out_len == 0 || out_len >= 0xFFFFFFFFull) throw InvalidArgument("blake2xb: output length");
  if (key.size > 64) throw InvalidArgument("blake2xb: key longer than 64 bytes");
  // Root hash H0: BLAKE2b-512 whose parameter block carries the XOF length in the upper half of
  // the node-offset field (BLAKE2X §2: node offset 32 bits, XOF length 32 bits).
  blake2b_param p{};
  p.digest_length = 64;
  p.key_length = static_cast<std::uint8_t>(key.size);
  p.fanout = 1;
  p.depth = 1;
  p.node_offset = static_cast<std::uint64_t>(out_len) << 32;
  blake2b_state s;
  check(blake2b_init_param(&s, &p), "init");
  if (key.size) {
    std::uint8_t block[128] = {};
    std::memcpy(block, key.data, key.size);
    check(blake2b_update(&s, block, sizeof block), "update");
  }
  check(blake2b_update(&s, in.data, in.size), "update");
  std::uint8_t h0[64];
  check(blake2b_final(&s, h0, 64), "final");
  // Output block i: BLAKE2b of H0 with fanout 0, depth 0, leaf length 64, inner length 64,
  // node offset i and digest length min(64, remaining).
  for (std::size_t i = 0, done = 0; done < out_len; ++i) {
    const std::size_t len = std::min<std::size_t>(64, out_len - done);
    blake2b_param q{};
    q.digest_length = static_cast<std::uint8_t>(len);
    q.leaf_length = 64;
    q.node_offset = static_cast<std::uint64_t>(i) | (static_cast<std::uint64_t>(out_len) << 32);
    q.inner_length = 64;
    blake2b_state t;
    check(blake2b_init_param(&t, &q), "init");
    check(blake2b_update(&t, h0, 64), "update");
    check(blake2b_final(&t, out + done, len), "final");
    done += len;
  }
}

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
