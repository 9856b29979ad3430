// Host-side precomputation for BaseConverter and the shared fast-conversion tables.
// (Plain C++: *_host.cpp files never go through nvcc.)
#include <algorithm>
#include <string>

#include "veil/core/error.h"
#include "veil/rns/base_converter.h"
#include "veil/rns/host_util.h"

namespace veil {
namespace detail {


FastConvTables::FastConvTables(const RnsBase& from, const RnsBase& to,
                               const std::vector<u64>& c_mod_q, const char* what) {
  rns_host::check_bases(from, to, what);
  if (!c_mod_q.empty() && c_mod_q.size() != from.size())
    throw InvalidArgument(std::string(what) + ": scalar list does not match the source base");
  k_from = from.size();
  k_to = to.size();
  std::vector<u64> sc(k_from), sc_sh(k_from), qhat(k_to * k_from), qmod(k_to);
  for (std::size_t i = 0; i < k_from; ++i) {
    const Modulus& qi = from[i];
    u64 prod = 1 % qi.value;  // (Q/q_i) mod q_i
    for (std::size_t l = 0; l < k_from; ++l)
      if (l != i) prod = mul_mod(prod, reduce_word(from[l].value, qi), qi);
    u64 s = inv_mod(prod, qi.value);
    if (!c_mod_q.empty()) s = mul_mod(s, reduce_word(c_mod_q[i], qi), qi);
    sc[i] = s;
    sc_sh[i] = shoup_quotient(s, qi.value);
  }
  for (std::size_t j = 0; j < k_to; ++j) {
    const Modulus& pj = to[j];
    u64 all = 1 % pj.value;
    for (std::size_t i = 0; i < k_from; ++i) all = mul_mod(all, reduce_word(from[i].value, pj), pj);
    qmod[j] = all;
    for (std::size_t i = 0; i < k_from; ++i) {
      u64 prod = 1 % pj.value;
      for (std::size_t l = 0; l < k_from; ++l)
        if (l != i) prod = mul_mod(prod, reduce_word(from[l].value, pj), pj);
      qhat[j * k_from + i] = prod;
    }
  }
  if (k_from < 32) {
    stride = (k_from + 4) / 4 * 4;
    std::vector<u64> pad(k_to * stride, 0);
    for (std::size_t j = 0; j < k_to; ++j) {
      for (std::size_t i = 0; i < k_from; ++i) pad[j * stride + i] = qhat[j * k_from + i];
      pad[j * stride + k_from] = qmod[j] == 0 ? 0 : to[j].value - qmod[j];
    }
    bool small = true;
    for (std::size_t i = 0; i < k_from; ++i) small = small && fits_word32(from[i].value);
    for (std::size_t j = 0; j < k_to; ++j) small = small && fits_word32(to[j].value);
    if (small) mat_padded32 = DeviceTable<u32>(std::vector<u32>(pad.begin(), pad.end()));
    // The Montgomery copy for the lazy rows: inputs y_i < q_i and v <= k_from.
    u64 in_bound = k_from + 1;
    for (std::size_t i = 0; i < k_from; ++i) in_bound = std::max(in_bound, from[i].value);
    if (small) {
      std::vector<u32> mont = montgomery32_table(pad, stride, to, in_bound);
      if (!mont.empty()) mat_mont32 = DeviceTable<u32>(std::move(mont));
    }
    mat_padded = DeviceTable<u64>(std::move(pad));
  }
  scale = DeviceTable<u64>(std::move(sc));
  scale_shoup = DeviceTable<u64>(std::move(sc_sh));
  qhat_mod_p = DeviceTable<u64>(std::move(qhat));
  q_mod_p = DeviceTable<u64>(std::move(qmod));
}

std::vector<u32> montgomery32_table(const std::vector<u64>& mat, std::size_t stride,
                                    const RnsBase& row_moduli, u64 in_bound) {
  u64 out_bound = 0;
  for (std::size_t j = 0; j < row_moduli.size(); ++j) {
    if ((row_moduli[j].value & 1) == 0) return {};
    out_bound = std::max(out_bound, row_moduli[j].value);
  }
  if (row_moduli.size() == 0 || !mont32_lazy_fits(in_bound, out_bound)) return {};
  std::vector<u32> mont(mat.size());
  for (std::size_t r = 0; r * stride < mat.size(); ++r) {
    const Modulus& m = row_moduli[r % row_moduli.size()];
    const u64 two32 = (u64(1) << 32) % m.value;
    for (std::size_t i = 0; i < stride; ++i) {
      mont[r * stride + i] = static_cast<u32>(mul_mod(mat[r * stride + i], two32, m));
    }
  }
  return mont;
}

}  // namespace detail

BaseConverter::BaseConverter(const RnsBase& from, const RnsBase& to)
    : from_(from), to_(to), conv_(from, to, {}, "BaseConverter") {
  // 1/q_i in 0.128 fixed point is exactly the Barrett ratio floor(2^128 / q_i).
  std::vector<u64> frac(2 * from.size());
  for (std::size_t i = 0; i < from.size(); ++i) {
    frac[2 * i] = from[i].ratio_hi;
    frac[2 * i + 1] = from[i].ratio_lo;
  }
  frac_ = DeviceTable<u64>(std::move(frac));
}


}  // namespace veil
