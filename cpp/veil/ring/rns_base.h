// RnsBase: an ordered list of word moduli (an RNS base), with each modulus's index in the
// context's NTT tables when it has one. Polynomials over a base are stored limb-major:
// [limb][N], limb i reduced modulo base[i].
#pragma once
#include <cstdint>
#include <vector>

#include "veil/backend/table.h"
#include "veil/core/modarith.h"

namespace veil {

class RnsBase {
 public:
  RnsBase() = default;
  /// A base of NTT-friendly primes: `ntt_ids[i]` indexes the context's NttTables.
  RnsBase(std::vector<Modulus> moduli, std::vector<u32> ntt_ids);
  /// A base of moduli with no NTT tables (e.g. {t, gamma} or {m_tilde}).
  explicit RnsBase(std::vector<Modulus> moduli);

  std::size_t size() const { return moduli_.size(); }
  const Modulus& operator[](std::size_t i) const { return moduli_[i]; }
  const std::vector<Modulus>& moduli() const { return moduli_.host(); }
  const std::vector<u32>& ntt_ids() const { return ids_.host(); }
  bool has_ntt() const { return has_ntt_; }

  const Modulus* moduli(const Device& dev) const { return moduli_.data(dev); }
  const u32* ntt_ids(const Device& dev) const { return ids_.data(dev); }

  /// Limbs [first, first + count).
  RnsBase slice(std::size_t first, std::size_t count) const;
  /// This base followed by `other`.
  RnsBase concat(const RnsBase& other) const;
  /// Product of all moduli's bit counts (an upper bound on log2 of the product).
  int total_bits() const;

 private:
  DeviceTable<Modulus> moduli_;
  DeviceTable<u32> ids_;
  bool has_ntt_ = false;
};

}  // namespace veil
