// The one launch helper for element-wise work: for_each(dev, n, f) calls f(i) for i in [0, n).
// CPU: an OpenMP parallel loop. CUDA: a grid-stride kernel on the device's stream.
// `f` must be a VEIL_HD functor (or an nvcc extended __host__ __device__ lambda) capturing only
// device-accessible pointers and plain values.
#pragma once
#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "veil/backend/device.h"
#include "veil/backend/memory.h"
#include "veil/core/error.h"
#include "veil/core/hd.h"

namespace veil {

#if defined(__CUDACC__)
/// for_each's kernel: f(i) for i in [0, n), each thread striding by the grid's size.
/// @tparam F the functor type.
/// @param n the number of indices.
/// @param f the body.
template <class F>
__global__ void veil_grid_stride_kernel(std::size_t n, F f) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x) {
    f(i);
  }
}
#endif

/// Reports a CUDA launch requested from a translation unit compiled without nvcc (the launch
/// templates' host-compiler branch). Defined in memory.cpp.
/// @param file the unit's __FILE__, named in the message.
/// @throws veil::RuntimeError always.
[[noreturn]] void throw_cuda_not_in_this_unit(const char* file);

/// The one launch helper for element-wise work: calls f(i) for every i in [0, n). CPU: an OpenMP
/// parallel for (static schedule; serial below 8192 elements or in a forked child). CUDA: a
/// grid-stride kernel of 256-thread blocks (at most 262140 blocks) on the device's stream,
/// asynchronous.
/// @tparam F a VEIL_HD functor (or nvcc extended lambda) taking std::size_t.
/// @param dev the device the data lives on.
/// @param n the number of indices (0: nothing).
/// @param f the body, copied to the device; it may capture device pointers and plain values only.
/// @throws veil::RuntimeError if the kernel launch fails, or for a CUDA device from a unit
/// compiled without nvcc.
template <class F>
void for_each(const Device& dev, std::size_t n, F f) {
  if (n == 0) return;
  if (dev.is_cuda()) {
#if defined(__CUDACC__)
    backend::set_current(dev);
    constexpr unsigned threads = 256;
    std::size_t blocks = (n + threads - 1) / threads;
    if (blocks > 65535u * 4u) blocks = 65535u * 4u;
    veil_grid_stride_kernel<<<unsigned(blocks), threads, 0, backend::stream(dev)>>>(n, f);
    backend::check_last_launch("for_each");
#else
    throw_cuda_not_in_this_unit(__FILE__);
#endif
  } else {
    const std::int64_t count = static_cast<std::int64_t>(n);
    if (backend::forked_child()) {  // no OpenMP after fork(): its thread pool is gone
      for (std::int64_t i = 0; i < count; ++i) f(static_cast<std::size_t>(i));
      return;
    }
#pragma omp parallel for schedule(static) if (count >= 8192)
    for (std::int64_t i = 0; i < count; ++i) f(static_cast<std::size_t>(i));
  }
}

namespace launch_detail {
// Calls f(i, l) or, when f takes three arguments, f(i, l, p) with p the polynomial of row r.
template <class F>
VEIL_HD void call_limb(F& f, std::size_t i, std::uint32_t l, std::uint32_t p) {
  if constexpr (std::is_invocable_v<F&, std::size_t, std::uint32_t, std::uint32_t>) {
    f(i, l, p);
  } else {
    f(i, l);
  }
}
}  // namespace launch_detail

#if defined(__CUDACC__)
/// for_each_limb's kernel: grid row blockIdx.y strides over the `rows` (polynomial, limb) rows,
/// threads stride over the row's n words; l and p come from the row, not from a division per
/// word.
/// @tparam F the functor type.
/// @param rows polynomials times limbs.
/// @param limbs the limbs per polynomial.
/// @param n the words per row.
/// @param f the body, called as f(i, l) or f(i, l, p).
template <class F>
__global__ void veil_limb_kernel(std::size_t rows, std::uint32_t limbs, std::size_t n, F f) {
  for (std::size_t r = blockIdx.y; r < rows; r += gridDim.y) {
    const std::uint32_t p = static_cast<std::uint32_t>(r / limbs);
    const std::uint32_t l = static_cast<std::uint32_t>(r - std::size_t(p) * limbs);
    const std::size_t row = r * n;
    for (std::size_t j = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; j < n;
         j += std::size_t(blockDim.x) * gridDim.x) {
      launch_detail::call_limb(f, row + j, l, p);
    }
  }
}
#endif

/// Element-wise work over `npolys` polynomials of `limbs` limbs of `n` words (the RNS layout):
/// calls f(i, l) - or f(i, l, p) when f takes three arguments, p = i / (limbs * n) the
/// polynomial - for every flat index i in [0, npolys * limbs * n), l = (i / n) % limbs being
/// the limb of word i, without a division per word (a 64-bit division is ~70 instructions on a
/// GPU and made the element-wise kernels instruction-bound; bench/NOTES.md). CUDA: one grid row
/// (blockIdx.y) per (polynomial, limb). CPU: an OpenMP loop over (row, word), collapsed.
/// @tparam F a VEIL_HD functor taking (std::size_t i, std::uint32_t l) or (i, l, p).
/// @param dev the device the data lives on.
/// @param npolys the number of polynomials.
/// @param limbs the limbs per polynomial.
/// @param n the words per limb (the ring degree N).
/// @param f the body.
/// @throws veil::RuntimeError if the kernel launch fails, or for a CUDA device from a unit
/// compiled without nvcc.
template <class F>
void for_each_limb(const Device& dev, std::size_t npolys, std::size_t limbs, std::size_t n, F f) {
  const std::size_t rows = npolys * limbs;
  if (rows == 0 || n == 0) return;
  if (dev.is_cuda()) {
#if defined(__CUDACC__)
    backend::set_current(dev);
    constexpr unsigned threads = 256;
    const std::size_t bx = (n + threads - 1) / threads;
    const dim3 grid(unsigned(bx > 1024 ? 1024 : bx), unsigned(rows > 65535 ? 65535 : rows), 1);
    veil_limb_kernel<<<grid, threads, 0, backend::stream(dev)>>>(
        rows, static_cast<std::uint32_t>(limbs), n, f);
    backend::check_last_launch("for_each_limb");
#else
    throw_cuda_not_in_this_unit(__FILE__);
#endif
    return;
  }
  const std::int64_t count = static_cast<std::int64_t>(rows);
  const std::int64_t width = static_cast<std::int64_t>(n);
  const bool parallel = !backend::forked_child() && rows * n >= 8192;
  // collapse(2): all threads share the words even when there are fewer rows than threads.
#pragma omp parallel for collapse(2) schedule(static) if (parallel)
  for (std::int64_t r = 0; r < count; ++r) {
    for (std::int64_t j = 0; j < width; ++j) {
      launch_detail::call_limb(f, static_cast<std::size_t>(r * width + j),
                               static_cast<std::uint32_t>(static_cast<std::size_t>(r) % limbs),
                               static_cast<std::uint32_t>(static_cast<std::size_t>(r) / limbs));
    }
  }
}

#if defined(__CUDACC__)
/// any_of's kernel: sets flag[0] = 1 wherever pred(i) holds (grid-stride over [0, n)).
/// @tparam P the predicate type.
/// @param n the number of indices.
/// @param pred the predicate.
/// @param flag the flag, set to 0 before the launch.
template <class P>
__global__ void veil_any_of_kernel(std::size_t n, P pred, std::uint32_t* flag) {
  for (std::size_t i = std::size_t(blockIdx.x) * blockDim.x + threadIdx.x; i < n;
       i += std::size_t(blockDim.x) * gridDim.x) {
    if (pred(i)) flag[0] = 1;  // every writer stores the same value
  }
}
#endif

/// any_of's test, queued now and read later by wait(): work queued in between runs right behind
/// the test's kernel, so a check costs one synchronization at the end instead of a stop in the
/// middle. CPU (or when no mapped flag is free): evaluated at once. Not copyable; the destructor
/// waits for a kernel still queued (it writes the flag).
class PendingAny {
 public:
  PendingAny() = default;
  /// An answer known already (the CPU, or a device flag read back at once).
  /// @param value the answer wait() returns.
  explicit PendingAny(bool value) : value_(value) {}
  /// A test queued on `dev` that writes the host-mapped `flag` (from backend::flag_acquire, which
  /// this object releases).
  /// @param dev the CUDA device the test's kernel runs on.
  /// @param flag the flag, 0 before the kernel runs.
  PendingAny(const Device& dev, std::uint32_t* flag) : dev_(dev), flag_(flag) {}
  PendingAny(const PendingAny&) = delete;
  PendingAny& operator=(const PendingAny&) = delete;
  /// Takes over `o`'s pending test; `o` no longer waits.
  /// @param o the pending test to move from.
  PendingAny(PendingAny&& o) noexcept : dev_(o.dev_), flag_(o.flag_), value_(o.value_) {
    o.flag_ = nullptr;
  }
  ~PendingAny() {
    if (!flag_) return;
    try {
      backend::synchronize(dev_);
    } catch (...) {  // the stream failed: no kernel of it runs any more
    }
    backend::flag_release(dev_, flag_);
  }
  /// Waits for the test (CUDA: a stream synchronization) and returns whether pred held anywhere.
  /// A second call returns the same answer without waiting.
  /// @return whether pred(i) held for some i.
  /// @throws veil::RuntimeError if the stream failed (the flag is released first).
  bool wait() {
    if (!flag_) return value_;
    std::uint32_t* flag = flag_;
    flag_ = nullptr;
    try {
      backend::synchronize(dev_);
    } catch (...) {
      backend::flag_release(dev_, flag);
      throw;
    }
    value_ = *static_cast<volatile std::uint32_t*>(flag) != 0;
    backend::flag_release(dev_, flag);
    return value_;
  }

 private:
  Device dev_ = Device::cpu();
  std::uint32_t* flag_ = nullptr;
  bool value_ = false;
};

#if defined(__CUDACC__)
/// The any_of kernel's launch: 256-thread blocks (at most 262140) over [0, n) on the device's
/// stream, writing 1 to `flag` where pred holds.
/// @tparam P a VEIL_HD predicate taking std::size_t.
/// @param dev the CUDA device.
/// @param n the number of indices.
/// @param pred the predicate.
/// @param flag a device-writable 32-bit flag set to 0.
/// @throws veil::RuntimeError if the launch fails.
template <class P>
void launch_any_of_kernel(const Device& dev, std::size_t n, P pred, std::uint32_t* flag) {
  constexpr unsigned threads = 256;
  std::size_t blocks = (n + threads - 1) / threads;
  if (blocks > 65535u * 4u) blocks = 65535u * 4u;
  veil_any_of_kernel<<<unsigned(blocks), threads, 0, backend::stream(dev)>>>(n, pred, flag);
  backend::check_last_launch("any_of");
}

/// pred(i) for every i in [0, n) in one kernel that sets a flag: a host-mapped flag, read later
/// through the PendingAny (no allocation or copy), or, with every mapped flag in use, a device
/// flag read back at once (an allocation and a 4-byte copy).
/// @tparam P a VEIL_HD predicate taking std::size_t.
/// @param dev the CUDA device.
/// @param n the number of indices.
/// @param pred the predicate.
/// @return the pending answer.
/// @throws veil::RuntimeError if the launch or the copy fails; veil::OutOfMemory if the device
/// flag cannot be allocated.
template <class P>
PendingAny launch_any(const Device& dev, std::size_t n, P pred) {
  backend::set_current(dev);
  if (std::uint32_t* mapped = backend::flag_acquire(dev)) {
    try {
      launch_any_of_kernel(dev, n, pred, mapped);
    } catch (...) {
      backend::flag_release(dev, mapped);
      throw;
    }
    return PendingAny(dev, mapped);
  }
  auto* flag = static_cast<std::uint32_t*>(backend::allocate(dev, sizeof(std::uint32_t)));
  std::uint32_t host = 0;
  try {
    backend::fill_zero(dev, flag, sizeof(std::uint32_t));
    launch_any_of_kernel(dev, n, pred, flag);
    backend::copy(Device::cpu(), &host, dev, flag, sizeof(host));
  } catch (...) {
    backend::deallocate(dev, flag, sizeof(std::uint32_t));
    throw;
  }
  backend::deallocate(dev, flag, sizeof(std::uint32_t));
  return PendingAny(host != 0);
}
#endif

/// True when pred(i) holds for some i in [0, n). CPU: a serial loop that stops at the first hit.
/// CUDA: one kernel setting a host-mapped flag, then a synchronization (launch_any).
/// @tparam P a VEIL_HD predicate taking std::size_t.
/// @param dev the device the data lives on.
/// @param n the number of indices (0: false).
/// @param pred the predicate.
/// @return whether pred(i) holds for some i < n.
/// @throws veil::RuntimeError if the kernel or synchronization fails, or for a CUDA device from a
/// unit compiled without nvcc.
template <class P>
bool any_of(const Device& dev, std::size_t n, P pred) {
  if (n == 0) return false;
  if (dev.is_cpu()) {
    for (std::size_t i = 0; i < n; ++i)
      if (pred(i)) return true;
    return false;
  }
#if defined(__CUDACC__)
  return launch_any(dev, n, pred).wait();
#else
  throw_cuda_not_in_this_unit(__FILE__);
#endif
}

/// The same test, queued: wait() on the result gives pred's answer (see PendingAny).
/// @tparam P a VEIL_HD predicate taking std::size_t.
/// @param dev the device the data lives on.
/// @param n the number of indices (0: false at once).
/// @param pred the predicate.
/// @return the pending answer; wait() gives it.
/// @throws veil::RuntimeError if the launch fails, or for a CUDA device from a unit compiled
/// without nvcc.
template <class P>
PendingAny any_of_async(const Device& dev, std::size_t n, P pred) {
  if (n == 0) return PendingAny(false);
  if (dev.is_cpu()) return PendingAny(any_of(dev, n, pred));
#if defined(__CUDACC__)
  return launch_any(dev, n, pred);
#else
  throw_cuda_not_in_this_unit(__FILE__);
#endif
}

/// f(i) for every i in [0, n) - every one, with its side effects - and, queued like
/// any_of_async, whether f returned true for some i: one pass that writes its outputs and checks
/// them (decryption's scaling and its noise test). CPU: a parallel loop, its answer ready at once.
/// CUDA: launch_any (the kernel evaluates every i; it never stops at a hit).
/// @tparam F a VEIL_HD functor taking std::size_t and returning bool.
/// @param dev the device the data lives on.
/// @param n the number of indices (0: false at once).
/// @param f the body; every i is evaluated.
/// @return the pending answer: whether f returned true for some i.
/// @throws veil::RuntimeError if the launch fails, or for a CUDA device from a unit compiled
/// without nvcc.
template <class F>
PendingAny for_each_any(const Device& dev, std::size_t n, F f) {
  if (n == 0) return PendingAny(false);
  if (dev.is_cpu()) {
    const std::int64_t count = static_cast<std::int64_t>(n);
    int hit = 0;
    const bool parallel = !backend::forked_child() && count >= 8192;
#pragma omp parallel for schedule(static) reduction(| : hit) if (parallel)
    for (std::int64_t i = 0; i < count; ++i) hit |= f(static_cast<std::size_t>(i)) ? 1 : 0;
    return PendingAny(hit != 0);
  }
#if defined(__CUDACC__)
  return launch_any(dev, n, f);
#else
  throw_cuda_not_in_this_unit(__FILE__);
#endif
}

/// The CPU's vector paths (host code only): f(r, j0, j1) for every row r < rows and chunk
/// [j0, j1) of min(n, 4096) words, in parallel over (row, chunk) pairs as for_each_word
/// (poly_ops.cpp) does, so that a few long rows still spread over the threads. f may call
/// host-only functions (a plain lambda, unlike for_each's). The chunks tile [0, n) exactly
/// when n <= 4096 or n is a multiple of 4096 (ring degrees are powers of two); otherwise the
/// words after the last whole chunk are not visited.
/// @tparam F a callable taking (std::size_t r, std::size_t j0, std::size_t j1).
/// @param rows the number of rows.
/// @param n the words per row.
/// @param f the body for one chunk of one row.
template <class F>
void cpu_row_chunks(std::size_t rows, std::size_t n, F f) {
  const std::size_t chunk = n < 4096 ? n : 4096, chunks = chunk ? n / chunk : 0;
  const std::int64_t count = static_cast<std::int64_t>(rows * chunks);
#pragma omp parallel for schedule(static) if (!backend::forked_child() && count > 1)
  for (std::int64_t rc = 0; rc < count; ++rc) {
    const std::size_t r = static_cast<std::size_t>(rc) / chunks;
    const std::size_t j0 = (static_cast<std::size_t>(rc) % chunks) * chunk;
    f(r, j0, j0 + chunk);
  }
}

}  // namespace veil
