// Internal: the CUDA runtime side of the backend. Implemented in cuda_runtime.cu when the CUDA
// backend is built, and by throwing stubs in cuda_stub.cpp otherwise.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>
#include <vector>

#include "veil/backend/cluster.h"
#include "veil/backend/device.h"
#include "veil/backend/memory.h"

namespace veil::backend::cuda {

/// Whether this build contains the CUDA backend (cuda_runtime.cu) rather than the stubs.
/// @return true in a CUDA build, false with cuda_stub.cpp.
bool built();
/// The number of CUDA devices the runtime reports.
/// @return cudaGetDeviceCount's count, 0 on any error (no driver, no GPU) or without CUDA.
int device_count();
/// The properties of GPU `index` (cudaGetDeviceProperties, runtime and driver versions).
/// @param index the CUDA device index.
/// @return name, memory, multiprocessors, compute capability and versions.
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend.
CudaDeviceInfo device_info(int index);
/// Allocates `bytes` on GPU `index`: a cached block of exactly that size when one is free (blocks
/// up to 64 MiB, not while capturing a graph), else cudaMallocFromPoolAsync on the device's pool
/// and stream (the cache is flushed and the allocation retried once on failure).
/// @param index the CUDA device index.
/// @param bytes the size in bytes, > 0.
/// @return the device pointer.
/// @throws veil::OutOfMemory if the request exceeds the pool limit or the pool cannot satisfy it;
/// veil::InvalidArgument if index is out of range; veil::RuntimeError on another CUDA error or
/// without the CUDA backend.
void* allocate(int index, std::size_t bytes);
/// Returns a block from allocate: into the size cache when it fits (not a block allocated during a
/// graph capture), else cudaFreeAsync on the device's stream. Never throws.
/// @param index the CUDA device index it was allocated on.
/// @param ptr the device pointer.
/// @param bytes the size it was allocated with.
void deallocate(int index, void* ptr, std::size_t bytes) noexcept;

/// A host-mapped 32-bit flag, set to 0, that kernels on GPU `index` may write (any_of's tests).
/// @param index the CUDA device index.
/// @return the flag, or nullptr when all of the device's flags are in use.
/// @throws veil::RuntimeError on a CUDA error (allocating the mapped memory) or without the CUDA
/// backend.
std::uint32_t* flag_acquire(int index);
/// Gives a flag from flag_acquire back. Never throws.
/// @param index the CUDA device index.
/// @param flag the flag.
void flag_release(int index, std::uint32_t* flag) noexcept;

/// Copies bytes between host and device or between devices. Host to device waits for the copy
/// (during a graph capture it copies the source into pinned memory that the graph keeps, and
/// does not wait); device to host waits; device to device on one GPU is stream-ordered; across
/// GPUs it waits for the source device's work, then makes a peer copy and waits for it.
/// @param dst_index the destination GPU (-1 for the host).
/// @param dst the destination pointer.
/// @param src_index the source GPU (-1 for the host).
/// @param src the source pointer.
/// @param bytes the number of bytes.
/// @param kind 0 host to device, 1 device to host, 2 device to device (dst_index may differ from
/// src_index).
/// @throws veil::RuntimeError (veil::OutOfMemory for an allocation failure) on a CUDA error, or
/// without the CUDA backend.
void copy(int dst_index, void* dst, int src_index, const void* src, std::size_t bytes, int kind);
/// Copies public host data to GPU `index` without waiting (backend::upload: pinned staging slots
/// up to 1 MiB, else copy()).
/// @param index the CUDA device index.
/// @param dst the device destination.
/// @param src the host source (reusable on return).
/// @param bytes the number of bytes.
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend.
void upload(int index, void* dst, const void* src, std::size_t bytes);
/// upload() of bytes that `fill` writes into the host staging buffer it is given.
/// @param index the CUDA device index.
/// @param dst the device destination.
/// @param bytes the number of bytes `fill` writes.
/// @param fill writes the bytes into the host buffer it receives.
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend; whatever `fill` throws.
void upload_with(int index, void* dst, std::size_t bytes, const std::function<void(void*)>& fill);
/// Sets device memory to zero, stream-ordered (cudaMemsetAsync on the stream in use).
/// @param index the CUDA device index.
/// @param ptr the device pointer.
/// @param bytes the number of bytes.
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend.
void fill_zero(int index, void* ptr, std::size_t bytes);
/// Strided copy of `rows` rows of `width` bytes within GPU `index` (cudaMemcpy2DAsync,
/// stream-ordered).
/// @param index the CUDA device index.
/// @param dst the destination; row r starts at dst + r * dst_pitch.
/// @param dst_pitch the destination's row pitch in bytes.
/// @param src the source; row r starts at src + r * src_pitch.
/// @param src_pitch the source's row pitch in bytes.
/// @param width the bytes copied per row.
/// @param rows the number of rows.
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend.
void copy_rows(int index, void* dst, std::size_t dst_pitch, const void* src, std::size_t src_pitch,
               std::size_t width, std::size_t rows);
/// Waits for all work queued on the device's Veil stream (cudaStreamSynchronize).
/// @param index the CUDA device index.
/// @throws veil::RuntimeError on a CUDA error (including an earlier asynchronous kernel failure) or
/// without the CUDA backend.
void synchronize(int index);
/// Waits for all work on GPU `index`, on every stream (cudaDeviceSynchronize).
/// @param index the CUDA device index.
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend.
void synchronize_device(int index);
/// The stream Veil queues work on for GPU `index` (a branch's side stream inside run_branches).
/// @param index the CUDA device index.
/// @return the cudaStream_t.
/// @throws veil::RuntimeError on a CUDA error (creating the stream) or without the CUDA backend.
StreamHandle stream(int index);
/// Makes GPU `index` current for the calling thread (cudaSetDevice).
/// @param index the CUDA device index.
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend.
void set_current(int index);
/// Sets the byte limit of the device's pool and flushes the block cache.
/// @param index the CUDA device index.
/// @param bytes the limit (0: no limit beyond the device's memory).
/// @throws veil::RuntimeError without the CUDA backend.
void set_pool_limit(int index, std::size_t bytes);
/// The device's pool limit.
/// @param index the CUDA device index.
/// @return the limit in bytes (0: none; 0 without the CUDA backend).
std::size_t pool_limit(int index);
/// The bytes allocated through Veil on GPU `index` and not yet deallocated (cached blocks
/// excluded).
/// @param index the CUDA device index.
/// @return the byte count (0 without the CUDA backend).
std::size_t bytes_in_use(int index);
/// Checks the calling thread's last CUDA error (cudaGetLastError) after a kernel launch.
/// @param what the launch's name, for the message.
/// @throws veil::RuntimeError naming `what` if the last launch failed (no-op without CUDA).
void check_last_launch(const char* what);
/// Creates a timing event on GPU `index` (backend/timer.h).
/// @param index the CUDA device index.
/// @return the event (a cudaEvent_t).
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend.
void* event_create(int index);
/// Destroys an event from event_create. Never throws.
/// @param ev the event.
void event_destroy(void* ev) noexcept;
/// Records the event on the stream in use for GPU `index`.
/// @param index the CUDA device index.
/// @param ev the event.
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend.
void event_record(int index, void* ev);
/// Waits for `stop` and returns the time between two recorded events.
/// @param start the earlier event.
/// @param stop the later event.
/// @return the elapsed time in milliseconds (cudaEventElapsedTime).
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend.
double event_elapsed_ms(void* start, void* stop);

/// Begins capturing the device's stream into a CUDA graph (relaxed capture mode); allocations stop
/// using the block cache until the capture ends.
/// @param index the CUDA device index.
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend.
void graph_begin(int index);
/// Ends the capture and instantiates the graph (auto-free on launch); pinned staging memory the
/// capture used is kept until graph_destroy.
/// @param index the CUDA device index.
/// @return the instantiated graph (a cudaGraphExec_t).
/// @throws veil::RuntimeError if the capture failed or the graph cannot be instantiated, or without
/// the CUDA backend.
void* graph_end(int index);
/// Ends a capture after an error and discards it. Never throws.
/// @param index the CUDA device index.
void graph_abort(int index) noexcept;
/// Launches an instantiated graph on the device's stream.
/// @param index the CUDA device index.
/// @param exec the graph from graph_end.
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend.
void graph_launch(int index, void* exec);
/// Destroys an instantiated graph and frees its pinned staging memory. Never throws.
/// @param exec the graph from graph_end.
void graph_destroy(void* exec) noexcept;
/// Concurrent branches while the device's stream is captured (backend/graph.h: run_branches).
/// During a capture (outside any branch, with more than one branch) branch 0 runs on the device's
/// stream and branch k >= 1 on a side stream forked from and joined back to it by events, so the
/// graph holds them as concurrent branches; otherwise the branches run one after another.
/// @param index the CUDA device index.
/// @param branches the work of each branch (host functions that queue kernels).
/// @throws veil::RuntimeError on a CUDA error or without the CUDA backend; the first exception a
/// branch throws (rethrown after the branch is joined back).
void run_branches(int index, const std::vector<std::function<void()>>& branches);
/// Prepares a kernel for cluster launches and says whether they can run (backend/cluster.h:
/// prepare_cluster_kernel). Without the CUDA backend: false.
/// @param index the CUDA device index.
/// @param kernel the address of the __global__ function.
/// @param cfg the launch's shape (its `grid` is not used).
/// @return whether one cluster of `cfg.cluster` blocks fits on the device.
/// @throws veil::RuntimeError if the device cannot be made current.
bool prepare_cluster_kernel(int index, const void* kernel, const ClusterLaunch& cfg);
/// Queues a cluster launch (backend/cluster.h: launch_cluster_args).
/// @param index the CUDA device index.
/// @param kernel the address of the __global__ function.
/// @param cfg the launch's shape and stream.
/// @param args pointers to the kernel's arguments, in order.
/// @param what names the launch in the error message.
/// @throws veil::RuntimeError "<what>: <CUDA error>" if the runtime refuses the launch, or without
///         the CUDA backend.
void launch_cluster(int index, const void* kernel, const ClusterLaunch& cfg, void** args,
                    const char* what);

}  // namespace veil::backend::cuda
