// Big-integer precomputation for the context (Boost.Multiprecision; host only).
#include <boost/multiprecision/cpp_int.hpp>
#include <vector>

#include "veil/core/modarith.h"

namespace veil {

using boost::multiprecision::cpp_int;

/// Exact bit count of the product of `q` (SEAL's total_coeff_modulus_bit_count).
int product_bit_count(const std::vector<u64>& q) {
  cpp_int big = 1;
  for (u64 v : q) big *= v;
  return big == 0 ? 0 : static_cast<int>(boost::multiprecision::msb(big)) + 1;
}

/// True when the product of `q` exceeds `t`.
bool product_exceeds(const std::vector<u64>& q, u64 t) {
  cpp_int big = 1;
  for (u64 v : q) big *= v;
  return big > t;
}

}  // namespace veil
