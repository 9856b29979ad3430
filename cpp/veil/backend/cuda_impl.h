// Internal: the CUDA runtime side of the backend. Implemented in cuda_runtime.cu when the CUDA
// backend is built, and by throwing stubs in cuda_stub.cpp otherwise.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "veil/backend/device.h"
#include "veil/backend/memory.h"

namespace veil::backend::cuda {

bool built();
int device_count();
CudaDeviceInfo device_info(int index);
void* allocate(int index, std::size_t bytes);
void deallocate(int index, void* ptr, std::size_t bytes) noexcept;
// A host-mapped flag set to 0 that a kernel may write (nullptr when all are in use).
std::uint32_t* flag_acquire(int index);
void flag_release(int index, std::uint32_t* flag) noexcept;
// kind: 0 host->device, 1 device->host, 2 device->device (dst_index may differ from src_index)
void copy(int dst_index, void* dst, int src_index, const void* src, std::size_t bytes, int kind);
void upload(int index, void* dst, const void* src, std::size_t bytes);
void upload_with(int index, void* dst, std::size_t bytes, const std::function<void(void*)>& fill);
void fill_zero(int index, void* ptr, std::size_t bytes);
void copy_rows(int index, void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
               std::size_t width, std::size_t rows);
void synchronize(int index);
/// Waits for all work on GPU `index`, on every stream (cudaDeviceSynchronize).
void synchronize_device(int index);
StreamHandle stream(int index);
void set_current(int index);
void set_pool_limit(int index, std::size_t bytes);
std::size_t pool_limit(int index);
std::size_t bytes_in_use(int index);
void check_last_launch(const char* what);
void* event_create(int index);
void event_destroy(void* ev) noexcept;
void event_record(int index, void* ev);
double event_elapsed_ms(void* start, void* stop);
// Graphs (backend/graph.h): capture of the device's stream, instantiation, replay.
void graph_begin(int index);
void* graph_end(int index);  // the instantiated graph (cudaGraphExec_t)
void graph_abort(int index) noexcept;
void graph_launch(int index, void* exec);
void graph_destroy(void* exec) noexcept;
// Concurrent branches while the device's stream is captured (backend/graph.h: run_branches).
void run_branches(int index, const std::vector<std::function<void()>>& branches);

}  // namespace veil::backend::cuda
