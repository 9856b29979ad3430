// Kernel launches in thread-block clusters (compute capability 9.0 and later): the blocks of one
// cluster run at the same time on one GPU processing cluster and may read each other's shared
// memory (distributed shared memory). A cluster launch is the CUDA runtime's extensible launch
// (cudaLaunchKernelExC with a cluster-dimension attribute), and a kernel may need attributes set
// first: more than the default 48 KiB of dynamic shared memory, or clusters of more than the
// portable 8 blocks; and a device may not fit even one cluster of it. These helpers are how the
// layers above reach that part of the runtime (DESIGN.md: only backend/ calls it). User:
// ring/ntt_cuda.cu's one-kernel NTT.
#pragma once
#include <cstddef>
#include <utility>

#include "veil/backend/device.h"
#include "veil/backend/memory.h"

namespace veil::backend {

/// The shape of a cluster launch: `grid` blocks of `block` threads (along x), in clusters of
/// `cluster` consecutive blocks, each block with `smem` bytes of dynamic shared memory, queued on
/// `stream` (backend::stream(dev) or a branch's stream).
struct ClusterLaunch {
  unsigned grid = 1;              ///< blocks in the grid (a multiple of `cluster`)
  unsigned block = 1;             ///< threads per block
  unsigned cluster = 1;           ///< blocks per cluster (at most 8 portably, 16 on Hopper)
  std::size_t smem = 0;           ///< dynamic shared memory per block, in bytes
  StreamHandle stream = nullptr;  ///< the stream the launch is queued on
};

/// Prepares `kernel` (the address of a __global__ function) for launches shaped as `cfg` on
/// `dev` and says whether they can run: makes `dev` current, allows `cfg.smem` bytes of dynamic
/// shared memory, allows non-portable cluster sizes when `cfg.cluster` > 8, then asks the
/// occupancy calculator for the clusters of `cfg.cluster` blocks (a grid of one cluster; `cfg.grid`
/// is not used) that fit on the device at once. False when a step is refused or no cluster fits;
/// the refusal is cleared, so the caller may fall back to other kernels. False on the CPU and in a
/// build without the CUDA backend. Call once per (device, kernel) and keep the answer.
/// @param dev the device.
/// @param kernel the address of the __global__ function.
/// @param cfg the launch's shape (its `grid` is not used).
/// @return whether launches shaped as `cfg` can run on `dev`.
/// @throws RuntimeError if `dev` cannot be made current.
bool prepare_cluster_kernel(const Device& dev, const void* kernel, const ClusterLaunch& cfg);

/// prepare_cluster_kernel for a kernel given as a function.
/// @param dev the device.
/// @param kernel the __global__ function.
/// @param cfg the launch's shape (its `grid` is not used).
/// @return whether launches shaped as `cfg` can run on `dev`.
/// @throws RuntimeError if `dev` cannot be made current.
template <class... Params>
bool prepare_cluster_kernel(const Device& dev, void (*kernel)(Params...),
                            const ClusterLaunch& cfg) {
  return prepare_cluster_kernel(dev, reinterpret_cast<const void*>(kernel), cfg);
}

/// Queues `kernel` (the address of a __global__ function, prepared with prepare_cluster_kernel)
/// as `cfg`; `args[i]` points at the value of its i-th parameter (the values are copied before the
/// call returns). Throws RuntimeError "<what>: <CUDA error>" when the runtime refuses the launch,
/// RuntimeError on the CPU or in a build without the CUDA backend.
/// @param dev the CUDA device.
/// @param kernel the address of the __global__ function.
/// @param cfg the launch's shape and stream.
/// @param args pointers to the kernel's arguments, in order.
/// @param what names the launch in the error message.
/// @throws RuntimeError "<what>: <CUDA error>" if the runtime refuses the launch; RuntimeError on
///         the CPU or without the CUDA backend.
void launch_cluster_args(const Device& dev, const void* kernel, const ClusterLaunch& cfg,
                         void** args, const char* what);

/// launch_cluster_args with the kernel's arguments given as values, each converted to its
/// parameter's type (as `kernel<<<...>>>(args...)` converts them).
/// @param dev the CUDA device.
/// @param kernel the __global__ function.
/// @param cfg the launch's shape and stream.
/// @param what names the launch in the error message.
/// @param args the kernel's arguments, one per parameter.
/// @throws RuntimeError as launch_cluster_args.
template <class... Params, class... Args>
void launch_cluster(const Device& dev, void (*kernel)(Params...), const ClusterLaunch& cfg,
                    const char* what, Args&&... args) {
  static_assert(sizeof...(Params) == sizeof...(Args), "launch_cluster: one argument per parameter");
  [&](Params... values) {
    void* pointers[] = {static_cast<void*>(&values)..., nullptr};
    launch_cluster_args(dev, reinterpret_cast<const void*>(kernel), cfg, pointers, what);
  }(std::forward<Args>(args)...);
}

}  // namespace veil::backend
