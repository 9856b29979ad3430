#include "veil/core/blake2.h"

#include <blake2.h>

#include <algorithm>
#include <cstring>
#include <string>

#include "veil/core/error.h"

namespace veil {

namespace {
void check(int rc, const char* what) {
  if (rc != 0) throw RuntimeError(std::string("blake2b: ") + what + " failed");
}
}  // namespace

std::array<std::uint8_t, 32> blake2b_256(const std::uint8_t* data, std::size_t size) {
  std::array<std::uint8_t, 32> out{};
  check(::blake2b(out.data(), data, nullptr, out.size(), size, 0), "hash");
  return out;
}

void blake2xb(std::uint8_t* out, std::size_t out_len, const std::uint8_t* in, std::size_t in_len,
              const std::uint8_t* key, std::size_t key_len) {
  if (out_len == 0 || out_len >= 0xFFFFFFFFull) throw InvalidArgument("blake2xb: output length");
  if (key_len > 64) throw InvalidArgument("blake2xb: key longer than 64 bytes");
  // Root hash H0: BLAKE2b-512 whose parameter block carries the XOF length in the upper half of
  // the node-offset field (BLAKE2X §2: node offset 32 bits, XOF length 32 bits).
  blake2b_param p{};
  p.digest_length = 64;
  p.key_length = static_cast<std::uint8_t>(key_len);
  p.fanout = 1;
  p.depth = 1;
  p.node_offset = static_cast<std::uint64_t>(out_len) << 32;
  blake2b_state s;
  check(blake2b_init_param(&s, &p), "init");
  if (key_len) {
    std::uint8_t block[128] = {};
    std::memcpy(block, key, key_len);
    check(blake2b_update(&s, block, sizeof block), "update");
  }
  check(blake2b_update(&s, in, in_len), "update");
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

}  // namespace veil
