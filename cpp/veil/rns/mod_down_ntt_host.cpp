// Precomputation for ModDownNtt (Boost.Multiprecision).
#include "veil/rns/host_util.h"
#include "veil/rns/mod_down_ntt.h"

namespace veil {

namespace {
std::vector<u64> residues(const rns_host::cpp_int& x, const RnsBase& base) {
  std::vector<u64> r;
  for (const auto& m : base.moduli()) r.push_back(rns_host::mod_word(x, m.value));
  return r;
}
}  // namespace

ModDownNtt::ModDownNtt(const RnsBase& keep, const RnsBase& drop, u64 t)
    : keep_(keep), drop_(drop), t_(t) {
  rns_host::check_bases(drop, keep, "ModDownNtt", "drop", "keep");
  target_ = t ? keep.concat(RnsBase({Modulus(t)})) : keep;
  conv_ = BaseConverter(drop, target_);
  const rns_host::cpp_int d = rns_host::product(drop);
  d_mod_k_ = DeviceTable<u64>(residues(d, keep));
  std::vector<u64> inv, inv_sh;
  for (const auto& m : keep.moduli()) {
    u64 di = inv_mod(rns_host::mod_word(d, m.value), m.value);
    inv.push_back(di);
    inv_sh.push_back(shoup_quotient(di, m.value));
  }
  d_inv_ = DeviceTable<u64>(std::move(inv));
  d_inv_shoup_ = DeviceTable<u64>(std::move(inv_sh));
  if (t) d_inv_mod_t_ = inv_mod(rns_host::mod_word(d, t), t);
}

}  // namespace veil
