#include "veil/ring/rns_base.h"

#include "veil/core/error.h"

namespace veil {

RnsBase::RnsBase(std::vector<Modulus> moduli, std::vector<u32> ntt_ids)
    : moduli_(std::move(moduli)), ids_(std::move(ntt_ids)), has_ntt_(true) {
  if (moduli_.size() != ids_.size()) throw InvalidArgument("RnsBase: moduli and ids differ in size");
}

RnsBase::RnsBase(std::vector<Modulus> moduli) : moduli_(std::move(moduli)), has_ntt_(false) {}

RnsBase RnsBase::slice(std::size_t first, std::size_t count) const {
  if (first + count > size()) throw InvalidArgument("RnsBase::slice: range out of bounds");
  std::vector<Modulus> m(moduli().begin() + first, moduli().begin() + first + count);
  if (!has_ntt_) return RnsBase(std::move(m));
  std::vector<u32> ids(ntt_ids().begin() + first, ntt_ids().begin() + first + count);
  return RnsBase(std::move(m), std::move(ids));
}

RnsBase RnsBase::concat(const RnsBase& other) const {
  std::vector<Modulus> m = moduli();
  m.insert(m.end(), other.moduli().begin(), other.moduli().end());
  if (!(has_ntt_ && other.has_ntt_)) return RnsBase(std::move(m));
  std::vector<u32> ids = ntt_ids();
  ids.insert(ids.end(), other.ntt_ids().begin(), other.ntt_ids().end());
  return RnsBase(std::move(m), std::move(ids));
}

int RnsBase::total_bits() const {
  int b = 0;
  for (const auto& m : moduli()) b += m.bit_count;
  return b;
}

}  // namespace veil
