#include "veil/backend/memory.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <vector>
#include <strings.h>
#include <pthread.h>

#include "veil/backend/cuda_impl.h"
#include "veil/core/error.h"

#if defined(_OPENMP)
#include <omp.h>
#endif

namespace veil {

Device Device::parse(const std::string& text) {
  if (text == "cpu") return Device::cpu();
  if (text.rfind("cuda", 0) == 0) {
    int index = 0;
    if (text.size() > 4) {
      if (text[4] != ':' || text.size() == 5) {
        throw InvalidArgument("device: expected 'cpu', 'cuda' or 'cuda:k', got '" + text + "'");
      }
      try {
        std::size_t pos = 0;
        index = std::stoi(text.substr(5), &pos);
        if (pos != text.size() - 5 || index < 0) throw std::exception();
      } catch (...) {
        throw InvalidArgument("device: expected 'cuda:k' with k a GPU index, got '" + text + "'");
      }
    }
    if (!cuda_built()) {
      throw RuntimeError("device '" + text +
                         "': this build of Veil has no CUDA backend (nvcc was not found when it "
                         "was built)");
    }
    int count = cuda_device_count();
    if (index >= count) {
      throw RuntimeError("device '" + text + "': " + std::to_string(count) +
                         " CUDA device(s) available");
    }
    return Device(Kind::cuda, index);
  }
  throw InvalidArgument("device: expected 'cpu', 'cuda' or 'cuda:k', got '" + text + "'");
}

std::string Device::str() const { return is_cpu() ? "cpu" : "cuda:" + std::to_string(index); }

bool cuda_built() { return backend::cuda::built(); }
int cuda_device_count() { return backend::cuda::device_count(); }
CudaDeviceInfo cuda_device_info(int index) { return backend::cuda::device_info(index); }

namespace {
std::atomic<bool> g_forked{false};
std::atomic<bool> g_cuda_initialized{false};
std::atomic<bool> g_cuda_lost{false};
void on_fork_child() {
  g_forked = true;
  g_cuda_lost = g_cuda_initialized.load();
}
// Registered once when the library is loaded.
const int g_atfork = pthread_atfork(nullptr, nullptr, on_fork_child);

#if defined(_OPENMP)
int default_threads() {
  static const int d = omp_get_max_threads();
  return d;
}
const int g_default_threads_init = default_threads();  // before any set_num_threads
#endif
}  // namespace

namespace backend {
bool forked_child() { return g_forked.load(std::memory_order_relaxed); }
void note_cuda_initialized() { g_cuda_initialized = true; }
void check_cuda_usable_after_fork() {
  if (g_cuda_lost.load()) {
    throw RuntimeError(
        "device: CUDA cannot be used in a process forked after its parent used CUDA (CUDA "
        "contexts do not survive fork()); start worker processes with multiprocessing's "
        "'spawn' or 'forkserver' method, or use device='cpu' in the child");
  }
}
}  // namespace backend

int max_num_threads() {
#if defined(_OPENMP)
  const int procs = omp_get_num_procs() > 0 ? omp_get_num_procs() : 1;
  return procs * 4 < 1024 ? procs * 4 : 1024;
#else
  return 1;
#endif
}

int num_threads() {
#if defined(_OPENMP)
  if (backend::forked_child()) return 1;
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_num_threads(int n) {
  const int hi = max_num_threads();
  if (n < 0 || n > hi) {
    throw InvalidArgument("n: expected 0 (the default) or 1.." + std::to_string(hi) +
                          " CPU threads (4x the " + std::to_string(hi / 4 > 0 ? hi / 4 : 1) +
                          " processors), got " + std::to_string(n));
  }
#if defined(_OPENMP)
  if (backend::forked_child()) return;  // serial in a forked child (see num_threads)
  omp_set_num_threads(n > 0 ? n : default_threads());
#endif
}

namespace backend {

namespace {
std::atomic<std::size_t> host_bytes{0};
constexpr std::size_t kHostAlign = 64;

// Freed host blocks of 64 KiB and more, kept by exact (rounded) size for the next allocation of
// that size, up to a byte limit: an HE operation allocates the same few sizes on every call
// (limbs x n words), and without reuse each multi-megabyte block is mapped and page-faulted in
// again (glibc returns blocks above its mmap threshold to the system). SEAL keeps a memory pool
// for the same reason. Blocks are handed out as they were freed (secret ones were zeroized).
class HostCache {
 public:
  static constexpr std::size_t kMinBytes = std::size_t(64) << 10;

  // Not in a forked child: another thread of the parent may have held the lock at fork().
  void* take(std::size_t rounded) {
    if (rounded < kMinBytes || forked_child()) return nullptr;
    std::lock_guard<std::mutex> lock(mu_);
    auto it = free_.find(rounded);
    if (it == free_.end() || it->second.empty()) return nullptr;
    void* p = it->second.back();
    it->second.pop_back();
    cached_ -= rounded;
    return p;
  }
  bool keep(void* p, std::size_t rounded) {
    if (rounded < kMinBytes || forked_child()) return false;
    std::lock_guard<std::mutex> lock(mu_);
    if (cached_ + rounded > limit_) return false;
    free_[rounded].push_back(p);
    cached_ += rounded;
    return true;
  }
  void set_limit(std::size_t bytes) {
    if (forked_child()) return;
    std::lock_guard<std::mutex> lock(mu_);
    limit_ = bytes;
    trim(limit_);
  }
  /// Frees every cached block (before a failed allocation is retried).
  void flush() {
    if (forked_child()) return;
    std::lock_guard<std::mutex> lock(mu_);
    trim(0);
  }
  std::size_t limit() {
    std::lock_guard<std::mutex> lock(mu_);
    return limit_;
  }
  std::size_t cached() {
    std::lock_guard<std::mutex> lock(mu_);
    return cached_;
  }

 private:
  void trim(std::size_t keep_bytes) {  // mu_ held
    for (auto& [size, blocks] : free_) {
      while (cached_ > keep_bytes && !blocks.empty()) {
        std::free(blocks.back());
        blocks.pop_back();
        cached_ -= size;
      }
    }
  }
  static std::size_t initial_limit() {
    const char* env = std::getenv("VEIL_HOST_CACHE_BYTES");
    if (env == nullptr || *env == '\0') return std::size_t(256) << 20;
    char* end = nullptr;
    const unsigned long long v = std::strtoull(env, &end, 10);
    return (end != nullptr && *end == '\0') ? static_cast<std::size_t>(v) : std::size_t(256) << 20;
  }
  std::mutex mu_;
  std::unordered_map<std::size_t, std::vector<void*>> free_;
  std::size_t cached_ = 0, limit_ = initial_limit();
};

HostCache& host_cache() {
  static HostCache* cache = new HostCache();  // never destroyed: blocks may be freed at exit
  return *cache;
}
}  // namespace

void* allocate(const Device& dev, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  if (dev.is_cuda()) return cuda::allocate(dev.index, bytes);
  std::size_t rounded = (bytes + kHostAlign - 1) / kHostAlign * kHostAlign;
  void* p = host_cache().take(rounded);
  if (p == nullptr) p = std::aligned_alloc(kHostAlign, rounded);
  if (!p) {  // the cache's blocks of other sizes go back to the system first
    host_cache().flush();
    p = std::aligned_alloc(kHostAlign, rounded);
  }
  if (!p) {
    throw OutOfMemory("host allocation of " + std::to_string(bytes) + " bytes failed");
  }
  host_bytes += bytes;
  return p;
}

void deallocate(const Device& dev, void* ptr, std::size_t bytes) noexcept {
  if (!ptr) return;
  if (dev.is_cuda()) {
    cuda::deallocate(dev.index, ptr, bytes);
  } else {
    const std::size_t rounded = (bytes + kHostAlign - 1) / kHostAlign * kHostAlign;
    bool kept = false;
    try {
      kept = host_cache().keep(ptr, rounded);
    } catch (...) {  // no memory for the cache's bookkeeping: free the block instead
    }
    if (!kept) std::free(ptr);
    host_bytes -= bytes;
  }
}

void set_host_cache_limit(std::size_t bytes) { host_cache().set_limit(bytes); }
std::size_t host_cache_limit() { return host_cache().limit(); }
std::size_t host_cache_bytes() { return host_cache().cached(); }

void copy(const Device& dst_dev, void* dst, const Device& src_dev, const void* src,
          std::size_t bytes) {
  if (bytes == 0) return;
  if (dst_dev.is_cpu() && src_dev.is_cpu()) {
    std::memcpy(dst, src, bytes);
  } else if (dst_dev.is_cuda() && src_dev.is_cpu()) {
    cuda::copy(dst_dev.index, dst, -1, src, bytes, 0);
  } else if (dst_dev.is_cpu() && src_dev.is_cuda()) {
    cuda::copy(-1, dst, src_dev.index, src, bytes, 1);
  } else {
    cuda::copy(dst_dev.index, dst, src_dev.index, src, bytes, 2);
  }
}

std::uint32_t* flag_acquire(const Device& dev) {
  return dev.is_cuda() ? cuda::flag_acquire(dev.index) : nullptr;
}

void flag_release(const Device& dev, std::uint32_t* flag) noexcept {
  if (dev.is_cuda() && flag) cuda::flag_release(dev.index, flag);
}

void upload(const Device& dev, void* dst, const void* src, std::size_t bytes) {
  if (bytes == 0) return;
  if (dev.is_cuda()) {
    cuda::upload(dev.index, dst, src, bytes);
  } else {
    std::memcpy(dst, src, bytes);
  }
}

void upload_with(const Device& dev, void* dst, std::size_t bytes,
                 const std::function<void(void*)>& fill) {
  if (bytes == 0) return;
  if (dev.is_cuda()) {
    cuda::upload_with(dev.index, dst, bytes, fill);
  } else {
    fill(dst);
  }
}

void fill_zero(const Device& dev, void* ptr, std::size_t bytes) {
  if (bytes == 0) return;
  if (dev.is_cuda()) {
    cuda::fill_zero(dev.index, ptr, bytes);
  } else {
    std::memset(ptr, 0, bytes);
  }
}

namespace {
std::atomic<std::size_t> zeroized_host{0}, zeroized_cuda{0};
}  // namespace

void zeroize(const Device& dev, void* ptr, std::size_t bytes) noexcept {
  if (!ptr || bytes == 0) return;
  if (dev.is_cuda()) {
    try {
      cuda::fill_zero(dev.index, ptr, bytes);
      zeroized_cuda += bytes;
    } catch (...) {
      // The device is failing; its memory is unreachable from the host anyway.
    }
    return;
  }
  explicit_bzero(ptr, bytes);  // glibc: never removed as a dead store before free()
  zeroized_host += bytes;
}

std::size_t zeroized_bytes(const Device& dev) {
  return dev.is_cuda() ? zeroized_cuda.load() : zeroized_host.load();
}

void copy_rows(const Device& dev, void* dst, std::size_t dst_pitch, const void* src,
               std::size_t src_pitch, std::size_t width, std::size_t rows) {
  if (width == 0 || rows == 0) return;
  if (dev.is_cuda()) {
    cuda::copy_rows(dev.index, dst, dst_pitch, src, src_pitch, width, rows);
    return;
  }
  for (std::size_t r = 0; r < rows; ++r) {
    std::memcpy(static_cast<char*>(dst) + r * dst_pitch,
                static_cast<const char*>(src) + r * src_pitch, width);
  }
}

void synchronize(const Device& dev) {
  if (dev.is_cuda()) cuda::synchronize(dev.index);
}

void synchronize_device(const Device& dev) {
  if (dev.is_cuda()) cuda::synchronize_device(dev.index);
}

StreamHandle stream(const Device& dev) { return dev.is_cuda() ? cuda::stream(dev.index) : nullptr; }

void set_current(const Device& dev) {
  if (dev.is_cuda()) cuda::set_current(dev.index);
}

void set_pool_limit(const Device& dev, std::size_t bytes) {
  if (!dev.is_cuda()) throw InvalidArgument("device: pool limits apply to CUDA devices only");
  cuda::set_pool_limit(dev.index, bytes);
}

std::size_t pool_limit(const Device& dev) { return dev.is_cuda() ? cuda::pool_limit(dev.index) : 0; }

std::size_t bytes_in_use(const Device& dev) {
  if (dev.is_cpu()) return host_bytes.load();
  return cuda::bytes_in_use(dev.index);
}

void check_last_launch(const char* what) { cuda::check_last_launch(what); }

}  // namespace backend

[[noreturn]] void throw_cuda_not_in_this_unit(const char* file) {
  throw RuntimeError(std::string("CUDA launch requested from a unit compiled without CUDA: ") +
                     file);
}

}  // namespace veil
