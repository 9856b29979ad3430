#include "veil/ring/prng.h"

#include <sys/random.h>

#include <cerrno>

#include "veil/core/error.h"

namespace veil {

UniformSeed derive_uniform_seed(const PrngStream& s) {
  std::uint32_t block[16];
  chacha20_block(s.key, 0, static_cast<std::uint32_t>(s.domain),
                 static_cast<std::uint32_t>(s.domain >> 32), 0xFFFFFFFEu, block);
  UniformSeed seed{};
  for (int i = 0; i < 8; ++i) seed[i] = block[i];
  return seed;
}

Prng::Prng() {
  unsigned char* p = reinterpret_cast<unsigned char*>(key_.words);
  std::size_t got = 0;
  while (got < sizeof(key_.words)) {
    ssize_t r = getrandom(p + got, sizeof(key_.words) - got, 0);
    if (r < 0) {
      if (errno == EINTR) continue;
      throw RuntimeError("getrandom failed: cannot seed the random generator");
    }
    got += static_cast<std::size_t>(r);
  }
}

Prng::Prng(const std::array<std::uint32_t, 8>& seed) {
  for (int i = 0; i < 8; ++i) key_.words[i] = seed[i];
}

Prng Prng::from_u64(std::uint64_t seed) {
  std::array<std::uint32_t, 8> k{};
  k[0] = static_cast<std::uint32_t>(seed);
  k[1] = static_cast<std::uint32_t>(seed >> 32);
  k[2] = 0x7665696cu;  // "veil": keeps tiny seeds away from the all-zero key
  return Prng(k);
}

}  // namespace veil
