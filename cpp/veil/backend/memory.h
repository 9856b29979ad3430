// Raw allocation, copy and synchronization on a Device. The CUDA side uses one stream-ordered
// memory pool per device (cudaMallocAsync on a cudaMemPool_t) with a configurable size limit,
// in front of it a bounded cache of freed blocks by exact size (up to 256 MiB per device, blocks
// up to 64 MiB; not counted in bytes_in_use; bypassed during graph capture), pinned staging
// slots for upload(), and host-mapped flags for any_of; all are released at exit. The host keeps
// a bounded cache of freed blocks by size.
// No layer above this one calls the CUDA runtime directly.
#pragma once
#include <cstddef>
#include <cstdint>
#include <functional>

#include "veil/backend/device.h"

struct CUstream_st;

namespace veil::backend {

/// A CUDA stream as an opaque pointer (cudaStream_t), so that this header needs no CUDA header.
using StreamHandle = CUstream_st*;

/// Allocates `bytes` on `dev`. Host: 64-byte aligned, rounded up to a multiple of 64, from the
/// host cache when a block of that size is free; CUDA: cuda::allocate (pool, block cache, limit).
/// @param dev the device.
/// @param bytes the size in bytes (0 returns nullptr).
/// @return the memory, uninitialized.
/// @throws veil::OutOfMemory naming the request when it cannot be satisfied (or exceeds a CUDA
/// pool limit); veil::RuntimeError on another CUDA error.
void* allocate(const Device& dev, std::size_t bytes);
/// Returns memory to `dev`'s pool (stream-ordered on CUDA).
/// Host blocks of 64 KiB and more go to the host cache while it has room. Never throws.
/// @param dev the device it was allocated on.
/// @param ptr the memory from allocate (nullptr is ignored).
/// @param bytes the size it was allocated with.
void deallocate(const Device& dev, void* ptr, std::size_t bytes) noexcept;
/// Copies bytes between any two devices (host <-> device, device <-> device). Blocks until the
/// copy is complete when the destination is the host.
/// @param dst_dev the destination's device.
/// @param dst the destination.
/// @param src_dev the source's device.
/// @param src the source.
/// @param bytes the number of bytes (0: nothing).
/// @throws veil::RuntimeError on a CUDA error (veil::OutOfMemory for a failed staging
/// allocation).
void copy(const Device& dst_dev, void* dst, const Device& src_dev, const void* src,
          std::size_t bytes);
/// Copies `bytes` of public host data (tables, encoder inputs; never secret-key material) onto
/// `dev` without waiting: the source may be reused or freed on return. CUDA: up to 1 MiB goes
/// through a ring of 16 pinned staging slots, each reused only after the copy that read it has
/// completed (an event), so a small upload costs a host memcpy and a stream-ordered DMA instead
/// of a stream synchronization; larger copies, and copies while the stream is captured into a
/// graph, take copy()'s path. The staged bytes stay in pinned host memory until a later upload
/// overwrites them, which is why secret material must use copy().
/// @param dev the destination's device (the CPU: a memcpy).
/// @param dst the destination on `dev`.
/// @param src the host source.
/// @param bytes the number of bytes.
/// @throws veil::RuntimeError on a CUDA error.
void upload(const Device& dev, void* dst, const void* src, std::size_t bytes);
/// upload() of bytes that `fill` writes into the host buffer it is given (the staging slot
/// itself when one is used, `dst` on the CPU), so that producing the data - converting or
/// checking it - and staging it are one pass over host memory. Public data only, as upload().
/// @param dev the destination's device.
/// @param dst the destination on `dev`.
/// @param bytes the number of bytes `fill` writes.
/// @param fill writes the bytes into the host buffer it receives.
/// @throws veil::RuntimeError on a CUDA error; whatever `fill` throws.
void upload_with(const Device& dev, void* dst, std::size_t bytes,
                 const std::function<void(void*)>& fill);
/// Sets `bytes` bytes at `ptr` to zero (memset on the host; stream-ordered on a device).
/// @param dev the device.
/// @param ptr the memory.
/// @param bytes the number of bytes.
/// @throws veil::RuntimeError on a CUDA error.
void fill_zero(const Device& dev, void* ptr, std::size_t bytes);
/// Overwrites secret memory with zeros before it is freed (never optimized away on the host;
/// stream-ordered on a device, so the pool hands the block out again only after it). noexcept:
/// a failure is counted, not thrown, since it runs in destructors.
/// @param dev the device.
/// @param ptr the memory (nullptr is ignored).
/// @param bytes the number of bytes.
void zeroize(const Device& dev, void* ptr, std::size_t bytes) noexcept;
/// Bytes zeroized so far on `dev`'s kind (host or all devices): for tests.
/// @param dev any device of the kind to ask about.
/// @return the bytes zeroize() has overwritten on the host, or on all CUDA devices.
std::size_t zeroized_bytes(const Device& dev);
/// Copies `rows` rows of `width` bytes within one device: row r goes from src + r * src_pitch to
/// dst + r * dst_pitch (a strided gather/scatter of polynomials in one call).
/// @param dev the device both buffers are on.
/// @param dst the destination.
/// @param dst_pitch the destination's row pitch in bytes.
/// @param src the source.
/// @param src_pitch the source's row pitch in bytes.
/// @param width the bytes copied per row.
/// @param rows the number of rows.
/// @throws veil::RuntimeError on a CUDA error.
void copy_rows(const Device& dev, void* dst, std::size_t dst_pitch, const void* src,
               std::size_t src_pitch, std::size_t width, std::size_t rows);
/// A 32-bit flag in host-mapped memory, set to 0, that kernels on CUDA device `dev` may write
/// (any_of's tests): nullptr when all of the device's flags are in use. Give it back with
/// flag_release once no queued kernel can write it any more.
/// @param dev the device (the CPU always gets nullptr).
/// @return the flag, or nullptr.
/// @throws veil::RuntimeError on a CUDA error.
std::uint32_t* flag_acquire(const Device& dev);
/// Gives back a flag from flag_acquire (nullptr and the CPU are ignored). Never throws.
/// @param dev the device it was acquired on.
/// @param flag the flag.
void flag_release(const Device& dev, std::uint32_t* flag) noexcept;
/// Waits for all work queued on dev's stream.
/// No-op on the CPU.
/// @param dev the device.
/// @throws veil::RuntimeError on a CUDA error, including an earlier kernel's asynchronous failure.
void synchronize(const Device& dev);
/// Waits for all work on `dev` on every stream, also other libraries' (before reading memory
/// that another framework wrote, e.g. a CuPy or torch array reached through DLPack).
/// @param dev the device (no-op for the CPU).
/// @throws veil::RuntimeError on a CUDA error.
void synchronize_device(const Device& dev);
/// The stream Veil queues work on for a CUDA device (nullptr for the CPU): the device's one
/// stream, except for the calling thread inside a branch of run_branches during a graph capture
/// (backend/graph.h), where it is that branch's side stream.
/// @param dev the device.
/// @return the stream, or nullptr for the CPU.
/// @throws veil::RuntimeError on a CUDA error.
StreamHandle stream(const Device& dev);
/// Makes `dev` current for the calling thread (no-op for CPU).
/// @param dev the device.
/// @throws veil::RuntimeError on a CUDA error.
void set_current(const Device& dev);
/// Pool limit in bytes for a CUDA device (0 = no limit beyond the device's memory).
/// Setting it also frees the device's cached blocks.
/// @param dev a CUDA device.
/// @param bytes the limit in bytes (0: none).
/// @throws veil::InvalidArgument if `dev` is the CPU.
void set_pool_limit(const Device& dev, std::size_t bytes);
/// The pool limit of a CUDA device.
/// @param dev the device.
/// @return the limit in bytes (0: no limit, and always 0 for the CPU).
std::size_t pool_limit(const Device& dev);
/// The host's cache of freed blocks (64 KiB and more, reused by exact size): at most `bytes`
/// kept (default 256 MiB, or VEIL_HOST_CACHE_BYTES in the environment; 0 turns it off, and
/// lowering the limit frees what is above it).
/// @param bytes the new limit in bytes.
void set_host_cache_limit(std::size_t bytes);
/// The host cache's limit (set_host_cache_limit).
/// @return the limit in bytes.
std::size_t host_cache_limit();
/// Bytes the host cache holds now (not counted in bytes_in_use).
/// @return the bytes held.
std::size_t host_cache_bytes();
/// Bytes currently allocated through Veil on `dev`.
/// @param dev the device (the CPU counts every host allocation of this backend).
/// @return the byte count of live allocations (caches excluded).
std::size_t bytes_in_use(const Device& dev);
/// Throws RuntimeError if the last kernel launch on `dev` failed (CUDA only).
/// @param what the launch's name, for the message.
/// @throws veil::RuntimeError naming `what` if the last launch failed.
void check_last_launch(const char* what);

}  // namespace veil::backend
