// Used when the CUDA backend is not built: CUDA NTT entry points report that clearly.
#include "veil/core/error.h"
#include "veil/ring/ntt.h"

namespace veil::detail {

template <class W>
void ntt_forward_cuda(const Device&, const RnsPolyView<W>&, const W*) {
  throw RuntimeError("this build of Veil has no CUDA backend");
}
template <class W>
void ntt_inverse_cuda(const Device&, const RnsPolyView<W>&, const W*, const W*) {
  throw RuntimeError("this build of Veil has no CUDA backend");
}

bool fused_ntt_enabled() { return false; }
void set_fused_ntt(int) {}

template void ntt_forward_cuda<u64>(const Device&, const RnsPolyView<u64>&, const u64*);
template void ntt_forward_cuda<u32>(const Device&, const RnsPolyView<u32>&, const u32*);
template void ntt_inverse_cuda<u64>(const Device&, const RnsPolyView<u64>&, const u64*, const u64*);
template void ntt_inverse_cuda<u32>(const Device&, const RnsPolyView<u32>&, const u32*, const u32*);

}  // namespace veil::detail
