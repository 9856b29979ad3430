#include "veil/backend/memory.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>
#include <string>

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

int num_threads() {
#if defined(_OPENMP)
  return omp_get_max_threads();
#else
  return 1;
#endif
}

void set_num_threads(int n) {
#if defined(_OPENMP)
  static const int default_threads = omp_get_max_threads();
  omp_set_num_threads(n > 0 ? n : default_threads);
#else
  (void)n;
#endif
}

namespace backend {

namespace {
std::atomic<std::size_t> host_bytes{0};
constexpr std::size_t kHostAlign = 64;
}  // namespace

void* allocate(const Device& dev, std::size_t bytes) {
  if (bytes == 0) return nullptr;
  if (dev.is_cuda()) return cuda::allocate(dev.index, bytes);
  std::size_t rounded = (bytes + kHostAlign - 1) / kHostAlign * kHostAlign;
  void* p = std::aligned_alloc(kHostAlign, rounded);
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
    std::free(ptr);
    host_bytes -= bytes;
  }
}

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

void fill_zero(const Device& dev, void* ptr, std::size_t bytes) {
  if (bytes == 0) return;
  if (dev.is_cuda()) {
    cuda::fill_zero(dev.index, ptr, bytes);
  } else {
    std::memset(ptr, 0, bytes);
  }
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
