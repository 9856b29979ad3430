// Used when the CUDA backend is not built: CUDA NTT entry points report that clearly.
#include "veil/core/error.h"
#include "veil/ring/ntt.h"

namespace veil::detail {

void ntt_forward_cuda(const Device&, u64*, std::size_t, std::size_t, const u32*, const Modulus*,
                      const u64*, int) {
  throw RuntimeError("this build of Veil has no CUDA backend");
}
void ntt_inverse_cuda(const Device&, u64*, std::size_t, std::size_t, const u32*, const Modulus*,
                      const u64*, const u64*, int) {
  throw RuntimeError("this build of Veil has no CUDA backend");
}

}  // namespace veil::detail
