// key_set_id (rlwe/checks.h): host-only because it hashes with libb2 (core/blake2.h).
#include <cstring>
#include <vector>

#include "veil/core/blake2.h"
#include "veil/rlwe/checks.h"

namespace veil {

u64 key_set_id(const SecretKey& sk) {
  static const char kTag[] = "veil key-set id v1";
  std::vector<u64> words = sk.buffer().to_host();
  std::vector<std::uint8_t> msg(sizeof(kTag) + 8 + words.size() * 8);
  std::memcpy(msg.data(), kTag, sizeof(kTag));
  const u64 h = sk.context()->parameter_hash();
  std::memcpy(msg.data() + sizeof(kTag), &h, 8);
  std::memcpy(msg.data() + sizeof(kTag) + 8, words.data(), words.size() * 8);
  const auto digest = blake2b_256(msg.data(), msg.size());
  explicit_bzero(msg.data(), msg.size());
  explicit_bzero(words.data(), words.size() * 8);
  u64 id = 0;
  std::memcpy(&id, digest.data(), 8);
  return id ? id : 1;
}

}  // namespace veil
