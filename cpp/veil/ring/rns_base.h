// RnsBase: an ordered list of word moduli (an RNS base), with each modulus's index in the
// context's NTT tables when it has one. Polynomials over a base are stored limb-major:
// [limb][N], limb i reduced modulo base[i].
#pragma once
#include <cstdint>
#include <vector>

#include "veil/backend/table.h"
#include "veil/core/modarith.h"

namespace veil {

/// An ordered list of word moduli (an RNS base), kept on the host and uploaded to each device on
/// first use, with each modulus's index in the context's NttTables when the base has NTT tables.
class RnsBase {
 public:
  RnsBase() = default;
  /// A base of NTT-friendly primes: `ntt_ids[i]` indexes the context's NttTables.
  /// @param moduli the moduli, in limb order.
  /// @param ntt_ids the NttTables index of each modulus.
  /// @throws InvalidArgument if the two lists differ in size.
  RnsBase(std::vector<Modulus> moduli, std::vector<u32> ntt_ids);
  /// A base of moduli with no NTT tables (e.g. {t, gamma} or {m_tilde}).
  /// @param moduli the moduli, in limb order.
  explicit RnsBase(std::vector<Modulus> moduli);

  /// The number of moduli (limbs).
  /// @return the limb count.
  std::size_t size() const { return moduli_.size(); }
  /// Modulus i (host, unchecked).
  /// @param i the limb index, below size().
  /// @return the modulus.
  const Modulus& operator[](std::size_t i) const { return moduli_[i]; }
  /// All moduli, in limb order (host).
  /// @return the moduli.
  const std::vector<Modulus>& moduli() const { return moduli_.host(); }
  /// The NttTables index of each modulus (host; empty without NTT tables).
  /// @return the ids.
  const std::vector<u32>& ntt_ids() const { return ids_.host(); }
  /// Whether the base has NTT tables (was built with ntt_ids).
  /// @return true for a base of NTT-friendly primes.
  bool has_ntt() const { return has_ntt_; }

  /// The moduli on `dev` (uploaded on first use).
  /// @param dev the device.
  /// @return size() moduli on `dev`.
  const Modulus* moduli(const Device& dev) const { return moduli_.data(dev); }
  /// The NTT-table ids on `dev` (uploaded on first use).
  /// @param dev the device.
  /// @return size() ids on `dev`.
  const u32* ntt_ids(const Device& dev) const { return ids_.data(dev); }

  /// Limbs [first, first + count).
  /// @param first the first limb.
  /// @param count the number of limbs.
  /// @return the sub-base, with NTT ids when this base has them.
  /// @throws InvalidArgument if first + count > size().
  RnsBase slice(std::size_t first, std::size_t count) const;
  /// This base followed by `other`.
  /// @param other the base appended.
  /// @return the joined base, with NTT ids when both have them.
  RnsBase concat(const RnsBase& other) const;
  /// The sum of the moduli's bit counts (an upper bound on log2 of their product).
  /// @return the sum of bit_count over the moduli.
  int total_bits() const;

 private:
  DeviceTable<Modulus> moduli_;
  DeviceTable<u32> ids_;
  bool has_ntt_ = false;
};

}  // namespace veil
