// Where memory lives and where work runs: the host CPU or one CUDA device.
#pragma once
#include <cstddef>
#include <string>

namespace veil {

/// A device: "cpu" or "cuda:k". Parsed from strings like "cpu", "cuda", "cuda:1".
struct Device {
  enum class Kind { cpu, cuda };
  Kind kind = Kind::cpu;
  int index = 0;

  Device() = default;
  Device(Kind k, int i) : kind(k), index(i) {}
  /// Parses "cpu", "cuda" or "cuda:k". Throws InvalidArgument naming `device` otherwise,
  /// RuntimeError if CUDA is requested but not built or no such GPU exists.
  static Device parse(const std::string& text);
  static Device cpu() { return {}; }

  bool is_cuda() const { return kind == Kind::cuda; }
  bool is_cpu() const { return kind == Kind::cpu; }
  std::string str() const;
  bool operator==(const Device& o) const { return kind == o.kind && (is_cpu() || index == o.index); }
  bool operator!=(const Device& o) const { return !(*this == o); }
};

/// True when this build contains the CUDA backend.
bool cuda_built();
/// Number of usable CUDA devices (0 when not built or no driver/GPU).
int cuda_device_count();

/// Properties of a CUDA device for `veil info`. Throws RuntimeError without CUDA.
struct CudaDeviceInfo {
  std::string name;
  std::size_t total_memory = 0;
  int multiprocessors = 0;
  int compute_major = 0, compute_minor = 0;
  int runtime_version = 0, driver_version = 0;
};
CudaDeviceInfo cuda_device_info(int index);

/// Number of OpenMP threads used by the CPU backend (set_num_threads(0) restores the default).
/// In a process forked after Veil was loaded it is 1: the OpenMP runtime's thread pool does not
/// survive fork(), so the CPU backend runs serially there instead of blocking.
int num_threads();
/// Sets the CPU backend's threads: 0 restores the default, 1..max_num_threads() sets them.
/// Throws InvalidArgument naming `n` otherwise (thousands of threads abort the OpenMP runtime).
void set_num_threads(int n);
/// Largest accepted set_num_threads(): 4x the processors OpenMP sees, at most 1024.
int max_num_threads();

namespace backend {
/// True in a child process forked after this library was loaded (pthread_atfork).
bool forked_child();
/// Called when a CUDA device is first initialized in this process.
void note_cuda_initialized();
/// Throws RuntimeError when this is a forked child whose parent had initialized CUDA (CUDA
/// contexts do not survive fork(); the child must use 'spawn' or 'forkserver').
void check_cuda_usable_after_fork();
}  // namespace backend

}  // namespace veil
