#include "veil/ring/sampler.h"

#include <numeric>
#include <string>
#include <vector>

#include "veil/backend/launch.h"
#include "veil/backend/table.h"
#include "veil/core/error.h"
#include "veil/ring/compact_uniform.h"

namespace veil {

template <class W>
void sample_uniform(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                    const PrngStream& stream, LimbAddress addr) {
  // One ChaCha block (8 words) gives 4 coefficients of 128 bits each.
  const std::size_t blocks_per_limb = (n + 3) / 4;
  const Modulus* mods = base.moduli(dev);
  const PrngStream s = stream;
  for_each(dev, base.size() * blocks_per_limb, VEIL_LAMBDA(std::size_t g) {
    const std::size_t limb = g / blocks_per_limb, b = g % blocks_per_limb;
    const Modulus m = mods[limb];
    u64 w[8];
    s.block64(static_cast<u32>(addr(limb)), static_cast<u32>(b), w);
    for (int k = 0; k < 4; ++k) {
      const std::size_t j = 4 * b + k;
      if (j < n) out[limb * n + j] = W(reduce_wide(reduce_word(w[2 * k + 1], m), w[2 * k], m));
    }
  });
}

#if defined(__CUDACC__)
// The GPU's compact sampler runs the key-switching kernel's own device code
// (compact_uniform_columns: four lanes a block), so that the sampler's tests cover it. Lane t of
// limb blockIdx.y writes the column t & 3 of block t / 4; columns_per_limb is a multiple of 4, so
// the lanes past it come in whole groups: they compute and write nothing.
template <class W>
__global__ void compact_sampler_kernel(ChaChaKey key, u64 index, const Modulus* mods, W* out,
                                       u32 n, u32 columns_per_limb, LimbAddress addr) {
  constexpr int C = kCompactPerColumn<W>;
  const u32 limb = blockIdx.y;
  const u32 lane = blockIdx.x * blockDim.x + threadIdx.x;
  const Modulus m = mods[limb];
  W v[1][C];
  compact_uniform_columns<W, 1>(key, index, static_cast<u32>(addr(limb)), lane >> 2, m,
                                compact_bound<W>(m.value), v);
  if (lane < columns_per_limb) {
#pragma unroll
    for (int p = 0; p < C; ++p) out[std::size_t(limb) * n + std::size_t(lane) * C + p] = v[0][p];
  }
}
#endif

template <class W>
void sample_uniform_compact(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                            const PrngStream& stream, LimbAddress addr) {
  constexpr std::size_t kBlock = kCompactPerBlock<W>;
  if (n % kBlock != 0) {
    throw InvalidArgument("n: the compact sampler needs a multiple of " + std::to_string(kBlock) +
                          " coefficients, got " + std::to_string(n));
  }
  const std::size_t blocks_per_limb = n / kBlock;
  const Modulus* mods = base.moduli(dev);
  if (dev.is_cuda()) {
#if defined(__CUDACC__)
    const u32 columns = static_cast<u32>(4 * blocks_per_limb);
    constexpr u32 kThreads = 256;
    backend::set_current(dev);
    const dim3 grid((columns + kThreads - 1) / kThreads, static_cast<unsigned>(base.size()), 1);
    compact_sampler_kernel<W><<<grid, kThreads, 0, backend::stream(dev)>>>(
        stream.key, stream.domain, mods, out, static_cast<u32>(n), columns, addr);
    backend::check_last_launch("compact uniform sampler");
    return;
#else
    throw_cuda_not_in_this_unit(__FILE__);
#endif
  }
  const PrngStream s = stream;
  for_each(dev, base.size() * blocks_per_limb, VEIL_LAMBDA(std::size_t g) {
    const std::size_t limb = g / blocks_per_limb, b = g % blocks_per_limb;
    compact_uniform_block<W>(s.key, s.domain, static_cast<u32>(addr(limb)), static_cast<u32>(b),
                             mods[limb], out + limb * n + b * kBlock);
  });
}

namespace {
// Signed small/flooding samplers: one block gives 8 coefficients of 64 keystream bits each;
// value(w) maps them to a signed integer written into every limb. `sub_stream` keeps each
// distribution's keystream apart from the others (uniform uses the limb index).
template <class W, class V>
void sample_signed(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                   const PrngStream& stream, u32 sub_stream, V value) {
  const std::size_t blocks = (n + 7) / 8;
  const std::size_t limbs = base.size();
  const Modulus* mods = base.moduli(dev);
  const PrngStream s = stream;
  for_each(dev, blocks, VEIL_LAMBDA(std::size_t b) {
    u64 w[8];
    s.block64(sub_stream, static_cast<u32>(b), w);
    for (int k = 0; k < 8; ++k) {
      const std::size_t j = 8 * b + k;
      if (j >= n) break;
      const i64 v = value(w[k]);
      const u64 mag = v >= 0 ? static_cast<u64>(v) : static_cast<u64>(-(v + 1)) + 1;
      for (std::size_t l = 0; l < limbs; ++l) {
        const Modulus m = mods[l];
        const u64 r = mag < m.value ? mag : reduce_word(mag, m);
        out[l * n + j] = W((v >= 0 || r == 0) ? r : m.value - r);
      }
    }
  });
}

struct TernaryValue {
  VEIL_HD i64 operator()(u64 x) const { return ternary_value(x); }
};
struct CbdValue {
  VEIL_HD i64 operator()(u64 x) const { return cbd_value(x); }
};
struct FloodingValue {  // uniform in [-2^bits, 2^bits)
  u64 mask, offset;
  VEIL_HD i64 operator()(u64 x) const { return static_cast<i64>(x & mask) - static_cast<i64>(offset); }
};
}  // namespace

template <class W>
void sample_ternary(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                    const PrngStream& stream) {
  sample_signed(dev, out, n, base, stream, 0xFFFFFFFFu, TernaryValue{});
}

template <class W>
void sample_cbd(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                const PrngStream& stream) {
  sample_signed(dev, out, n, base, stream, 0xFFFFFFFFu, CbdValue{});
}

template <class W>
void sample_flooding(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                     const PrngStream& stream, int bits) {
  const u64 offset = u64(1) << bits;
  sample_signed(dev, out, n, base, stream, 0xFFFFFFFDu, FloodingValue{(offset << 1) - 1, offset});
}

#define VEIL_SAMPLER_INSTANTIATE(W)                                                              \
  template void sample_uniform<W>(const Device&, W*, std::size_t, const RnsBase&,               \
                                  const PrngStream&, LimbAddress);                              \
  template void sample_uniform_compact<W>(const Device&, W*, std::size_t, const RnsBase&,       \
                                          const PrngStream&, LimbAddress);                      \
  template void sample_ternary<W>(const Device&, W*, std::size_t, const RnsBase&,               \
                                  const PrngStream&);                                           \
  template void sample_cbd<W>(const Device&, W*, std::size_t, const RnsBase&, const PrngStream&); \
  template void sample_flooding<W>(const Device&, W*, std::size_t, const RnsBase&,              \
                                   const PrngStream&, int);
VEIL_SAMPLER_INSTANTIATE(u32)
VEIL_SAMPLER_INSTANTIATE(u64)
#undef VEIL_SAMPLER_INSTANTIATE

namespace {
// out[l][j] = c[j] mod q_l for c[j] in {0, 1, 2^64 - 1 (= -1)}.
template <class W>
void write_signed_table(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                        const u64* c) {
  const Modulus* mods = base.moduli(dev);
  const std::size_t limbs = base.size();
  for_each(dev, n, VEIL_LAMBDA(std::size_t j) {
    const u64 v = c[j];
    for (std::size_t l = 0; l < limbs; ++l) {
      out[l * n + j] = W(v == 0 ? 0 : (v == 1 ? 1 : mods[l].value - 1));
    }
  });
}
}  // namespace

void sample_sparse_ternary(const Device& dev, WordPtr out, std::size_t n, const RnsBase& base,
                           const PrngStream& stream, std::size_t hamming_weight) {
  if (hamming_weight < 1 || hamming_weight > n) {
    throw InvalidArgument("hamming_weight: expected 1.." + std::to_string(n) + ", got " +
                          std::to_string(hamming_weight));
  }
  // Partial Fisher-Yates: position i (i < h) swaps with a uniform j in [i, n); the first h
  // entries are then a uniform h-subset. Each step draws one 64-bit word; the sign takes its
  // top bit (independent of the low bits used for j when n <= 2^62).
  std::vector<u32> pos(n);
  std::iota(pos.begin(), pos.end(), 0u);
  std::vector<u64> coeff(n, 0);  // 0, 1 or 2^64 - 1 (-1)
  u64 w[8];
  for (std::size_t i = 0; i < hamming_weight; ++i) {
    if (i % 8 == 0) stream.block64(0xFFFFFFFCu, static_cast<u32>(i / 8), w);
    const u64 x = w[i % 8];
    const std::size_t j = i + static_cast<std::size_t>((x & ((u64(1) << 62) - 1)) % (n - i));
    std::swap(pos[i], pos[j]);
    coeff[pos[i]] = (x >> 63) ? ~u64(0) : u64(1);
  }
  const DeviceTable<u64> table(std::move(coeff));
  VEIL_WITH_WORD(out.word_bits(), write_signed_table<W>(dev, out.as<W>(), n, base, table.data(dev)));
}

void sample_uniform(const Device& dev, WordPtr out, std::size_t n, const RnsBase& base,
                    const PrngStream& stream, LimbAddress addr) {
  VEIL_WITH_WORD(out.word_bits(), sample_uniform<W>(dev, out.as<W>(), n, base, stream, addr));
}
void sample_uniform_compact(const Device& dev, WordPtr out, std::size_t n, const RnsBase& base,
                            const PrngStream& stream, LimbAddress addr) {
  VEIL_WITH_WORD(out.word_bits(),
                 sample_uniform_compact<W>(dev, out.as<W>(), n, base, stream, addr));
}
void sample_ternary(const Device& dev, WordPtr out, std::size_t n, const RnsBase& base,
                    const PrngStream& stream) {
  VEIL_WITH_WORD(out.word_bits(), sample_ternary<W>(dev, out.as<W>(), n, base, stream));
}
void sample_cbd(const Device& dev, WordPtr out, std::size_t n, const RnsBase& base,
                const PrngStream& stream) {
  VEIL_WITH_WORD(out.word_bits(), sample_cbd<W>(dev, out.as<W>(), n, base, stream));
}
void sample_flooding(const Device& dev, WordPtr out, std::size_t n, const RnsBase& base,
                     const PrngStream& stream, int bits) {
  VEIL_WITH_WORD(out.word_bits(), sample_flooding<W>(dev, out.as<W>(), n, base, stream, bits));
}

}  // namespace veil
