#include "veil/io/validate.h"

#include <cmath>
#include <cstdio>
#include <cstring>

#include "veil/core/error.h"

namespace veil::io {

namespace {

// Words of type W (u32 or u64) at `p`, little-endian, any alignment.
template <class W>
std::uint64_t word_at(const std::uint8_t* p, std::size_t i) {
  W v;
  std::memcpy(&v, p + i * sizeof(W), sizeof(W));
  return v;
}

template <class W>
void scan_below_moduli(const std::uint8_t* words, std::size_t polys, const RnsBase& base,
                       std::size_t n, const std::string& what) {
  const std::size_t limbs = base.size();
  for (std::size_t p = 0; p < polys; ++p) {
    for (std::size_t l = 0; l < limbs; ++l) {
      const std::uint64_t q = base[l].value;
      const std::uint8_t* w = words + (p * limbs + l) * n * sizeof(W);
      // Branch-free scan first (fast path), then locate the offender for the message.
      std::uint64_t bad = 0;
      for (std::size_t i = 0; i < n; ++i) bad |= static_cast<std::uint64_t>(word_at<W>(w, i) >= q);
      if (!bad) continue;
      std::size_t i = 0;
      while (word_at<W>(w, i) < q) ++i;
      throw InvalidArgument(what + ": coefficient " + std::to_string(i) + " of limb " +
                            std::to_string(l) + " of polynomial " + std::to_string(p) +
                            " is not below its modulus q_" + std::to_string(l) + " = " +
                            std::to_string(q));
    }
  }
}

}  // namespace

void check_below_moduli(const std::uint64_t* words, std::size_t polys, const RnsBase& base,
                        std::size_t n, const std::string& what) {
  scan_below_moduli<std::uint64_t>(reinterpret_cast<const std::uint8_t*>(words), polys, base, n,
                                   what);
}

void check_below_moduli(const std::uint8_t* words, std::size_t word_bytes, std::size_t polys,
                        const RnsBase& base, std::size_t n, const std::string& what) {
  if (word_bytes == 4) {
    scan_below_moduli<std::uint32_t>(words, polys, base, n, what);
  } else {
    scan_below_moduli<std::uint64_t>(words, polys, base, n, what);
  }
}

void check_below_modulus(const std::uint64_t* words, std::size_t count, std::uint64_t modulus,
                         const std::string& what) {
  for (std::size_t i = 0; i < count; ++i) {
    if (words[i] >= modulus) {
      throw InvalidArgument(what + ": coefficient " + std::to_string(i) +
                            " is not below the plain modulus " + std::to_string(modulus));
    }
  }
}

void check_scale(double scale, const std::string& what) {
  if (!(std::isfinite(scale) && scale > 0)) {
    throw InvalidArgument(what + ": expected a finite positive CKKS scale");
  }
}

std::string hex64(std::uint64_t v) {
  char buf[19];
  std::snprintf(buf, sizeof buf, "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace veil::io
