#include "veil/ring/sampler.h"

#include "veil/backend/launch.h"

namespace veil {

void sample_uniform(const Device& dev, u64* out, std::size_t n, const RnsBase& base,
                    const PrngStream& stream) {
  // One ChaCha block (8 words) gives 4 coefficients of 128 bits each.
  const std::size_t blocks_per_limb = (n + 3) / 4;
  const Modulus* mods = base.moduli(dev);
  const PrngStream s = stream;
  for_each(dev, base.size() * blocks_per_limb, VEIL_LAMBDA(std::size_t g) {
    const std::size_t limb = g / blocks_per_limb, b = g % blocks_per_limb;
    const Modulus m = mods[limb];
    u64 w[8];
    s.block64(static_cast<u32>(limb), static_cast<u32>(b), w);
    for (int k = 0; k < 4; ++k) {
      const std::size_t j = 4 * b + k;
      if (j < n) out[limb * n + j] = reduce_wide(reduce_word(w[2 * k + 1], m), w[2 * k], m);
    }
  });
}

namespace {
template <bool kTernary>
void sample_small(const Device& dev, u64* out, std::size_t n, const RnsBase& base,
                  const PrngStream& stream) {
  // One block gives 8 coefficients of 64 bits; stream 0xFFFFFFFF keeps it apart from uniform.
  const std::size_t blocks = (n + 7) / 8;
  const std::size_t limbs = base.size();
  const Modulus* mods = base.moduli(dev);
  const PrngStream s = stream;
  for_each(dev, blocks, VEIL_LAMBDA(std::size_t b) {
    u64 w[8];
    s.block64(0xFFFFFFFFu, static_cast<u32>(b), w);
    for (int k = 0; k < 8; ++k) {
      const std::size_t j = 8 * b + k;
      if (j >= n) break;
      const i64 v = kTernary ? ternary_value(w[k]) : cbd_value(w[k]);
      for (std::size_t l = 0; l < limbs; ++l) {
        const u64 q = mods[l].value;
        out[l * n + j] = v >= 0 ? static_cast<u64>(v) : q - static_cast<u64>(-v);
      }
    }
  });
}
}  // namespace

void sample_ternary(const Device& dev, u64* out, std::size_t n, const RnsBase& base,
                    const PrngStream& stream) {
  sample_small<true>(dev, out, n, base, stream);
}

void sample_cbd(const Device& dev, u64* out, std::size_t n, const RnsBase& base,
                const PrngStream& stream) {
  sample_small<false>(dev, out, n, base, stream);
}

void sample_flooding(const Device& dev, u64* out, std::size_t n, const RnsBase& base,
                     const PrngStream& stream, int bits) {
  const std::size_t blocks = (n + 7) / 8;
  const std::size_t limbs = base.size();
  const Modulus* mods = base.moduli(dev);
  const PrngStream s = stream;
  const u64 mask = (u64(2) << bits) - 1;  // bits + 1 low bits
  const u64 offset = u64(1) << bits;
  for_each(dev, blocks, VEIL_LAMBDA(std::size_t b) {
    u64 w[8];
    s.block64(0xFFFFFFFDu, static_cast<u32>(b), w);
    for (int k = 0; k < 8; ++k) {
      const std::size_t j = 8 * b + k;
      if (j >= n) break;
      const u64 x = w[k] & mask;  // v = x - 2^bits in [-2^bits, 2^bits)
      for (std::size_t l = 0; l < limbs; ++l) {
        const Modulus m = mods[l];
        if (x >= offset) {
          out[l * n + j] = reduce_word(x - offset, m);
        } else {
          const u64 r = reduce_word(offset - x, m);
          out[l * n + j] = r ? m.value - r : 0;
        }
      }
    }
  });
}

}  // namespace veil
