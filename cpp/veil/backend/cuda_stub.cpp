// Stubs used when Veil is built without the CUDA backend: every entry reports that clearly.
#include "veil/backend/cuda_impl.h"
#include "veil/core/error.h"

namespace veil::backend::cuda {

namespace {
[[noreturn]] void no_cuda() {
  throw RuntimeError("this build of Veil has no CUDA backend (nvcc was not found at build time)");
}
}  // namespace

bool built() { return false; }
int device_count() { return 0; }
CudaDeviceInfo device_info(int) { no_cuda(); }
void* allocate(int, std::size_t) { no_cuda(); }
void deallocate(int, void*, std::size_t) noexcept {}
void copy(int, void*, int, const void*, std::size_t, int) { no_cuda(); }
void upload(int, void*, const void*, std::size_t) { no_cuda(); }
void upload_with(int, void*, std::size_t, const std::function<void(void*)>&) { no_cuda(); }
std::uint32_t* flag_acquire(int) { no_cuda(); }
void flag_release(int, std::uint32_t*) noexcept {}
void fill_zero(int, void*, std::size_t) { no_cuda(); }
void copy_rows(int, void*, std::size_t, const void*, std::size_t, std::size_t, std::size_t) {
  no_cuda();
}
void synchronize(int) { no_cuda(); }
void synchronize_device(int) { no_cuda(); }
StreamHandle stream(int) { no_cuda(); }
void set_current(int) { no_cuda(); }
void set_pool_limit(int, std::size_t) { no_cuda(); }
std::size_t pool_limit(int) { return 0; }
std::size_t bytes_in_use(int) { return 0; }
void check_last_launch(const char*) {}
void* event_create(int) { no_cuda(); }
void event_destroy(void*) noexcept {}
void event_record(int, void*) { no_cuda(); }
double event_elapsed_ms(void*, void*) { no_cuda(); }
void graph_begin(int) { no_cuda(); }
void* graph_end(int) { no_cuda(); }
void graph_abort(int) noexcept {}
void graph_launch(int, void*) { no_cuda(); }
void graph_destroy(void*) noexcept {}
void run_branches(int, const std::vector<std::function<void()>>&) { no_cuda(); }
bool prepare_cluster_kernel(int, const void*, const ClusterLaunch&) { return false; }
void launch_cluster(int, const void*, const ClusterLaunch&, void**, const char*) { no_cuda(); }

}  // namespace veil::backend::cuda
