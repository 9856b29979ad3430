// Big-integer precomputation for BFV's tables (Boost.Multiprecision; host only).
#include <boost/multiprecision/cpp_int.hpp>
#include <vector>

#include "veil/core/modarith.h"

namespace veil {

using boost::multiprecision::cpp_int;

/// delta_mod_q[i] = floor(Q / t) mod q_i and q_mod_t = Q mod t (BFV's Delta; FV 2012 §3).
void compute_bfv_scaling(const std::vector<u64>& q, u64 t, std::vector<u64>& delta_mod_q,
                         u64& q_mod_t) {
  cpp_int big_q = 1;
  for (u64 v : q) big_q *= v;
  cpp_int delta = big_q / t;
  q_mod_t = static_cast<u64>(big_q % t);
  delta_mod_q.clear();
  for (u64 v : q) delta_mod_q.push_back(static_cast<u64>(delta % v));
}

}  // namespace veil
