// Where memory lives and where work runs: the host CPU or one CUDA device.
#pragma once
#include <cstddef>
#include <string>

namespace veil {

/// A device: "cpu" or "cuda:k". Parsed from strings like "cpu", "cuda", "cuda:1".
struct Device {
  /// Where memory lives and work runs: the host CPU or a CUDA GPU.
  enum class Kind { cpu, cuda };
  /// The device's kind.
  Kind kind = Kind::cpu;
  /// The CUDA device index (0 and ignored for the CPU).
  int index = 0;

  Device() = default;
  /// A device of kind `k` and index `i` (not checked; see parse).
  /// @param k the kind.
  /// @param i the CUDA index.
  Device(Kind k, int i) : kind(k), index(i) {}
  /// Parses "cpu", "cuda" or "cuda:k". Throws InvalidArgument naming `device` otherwise,
  /// RuntimeError if CUDA is requested but not built or no such GPU exists.
  /// @param text the device's name: "cpu", "cuda" (index 0) or "cuda:k".
  /// @return the device.
  /// @throws veil::InvalidArgument for any other text; veil::RuntimeError if CUDA is not built or
  /// fewer than k + 1 GPUs exist.
  static Device parse(const std::string& text);
  /// The host CPU.
  /// @return Device{Kind::cpu, 0}.
  static Device cpu() { return {}; }

  /// Whether this is a CUDA device.
  /// @return kind == Kind::cuda.
  bool is_cuda() const { return kind == Kind::cuda; }
  /// Whether this is the CPU.
  /// @return kind == Kind::cpu.
  bool is_cpu() const { return kind == Kind::cpu; }
  /// The device's name, as parse() reads it.
  /// @return "cpu" or "cuda:k".
  std::string str() const;
  /// Same device: same kind and, for CUDA, the same index.
  /// @param o the other device.
  /// @return true for the same device.
  bool operator==(const Device& o) const { return kind == o.kind && (is_cpu() || index == o.index); }
  /// Different devices.
  /// @param o the other device.
  /// @return !(*this == o).
  bool operator!=(const Device& o) const { return !(*this == o); }
};

/// True when this build contains the CUDA backend.
/// @return true in a CUDA build.
bool cuda_built();
/// Number of usable CUDA devices (0 when not built or no driver/GPU).
/// @return the count.
int cuda_device_count();

/// Properties of a CUDA device for `veil info` (cuda_device_info).
struct CudaDeviceInfo {
  /// The GPU's name (e.g. "NVIDIA H200").
  std::string name;
  /// Global memory in bytes.
  std::size_t total_memory = 0;
  /// Number of streaming multiprocessors.
  int multiprocessors = 0;
  /// Compute capability major.minor.
  int compute_major = 0, compute_minor = 0;
  /// CUDA runtime and driver versions (1000 * major + 10 * minor).
  int runtime_version = 0, driver_version = 0;
};
/// The properties of GPU `index`.
/// @param index the CUDA device index.
/// @return its CudaDeviceInfo.
/// @throws veil::RuntimeError without CUDA or on a CUDA error.
CudaDeviceInfo cuda_device_info(int index);

/// Number of OpenMP threads used by the CPU backend (set_num_threads(0) restores the default).
/// In a process forked after Veil was loaded it is 1: the OpenMP runtime's thread pool does not
/// survive fork(), so the CPU backend runs serially there instead of blocking.
/// @return the OpenMP thread count (1 without OpenMP or in a forked child).
int num_threads();
/// Sets the CPU backend's threads: 0 restores the default, 1..max_num_threads() sets them.
/// Throws InvalidArgument naming `n` otherwise (thousands of threads abort the OpenMP runtime).
/// Ignored in a forked child (the CPU backend is serial there).
/// @param n 0 (the default) or 1..max_num_threads().
/// @throws veil::InvalidArgument if n is outside that range.
void set_num_threads(int n);
/// Largest accepted set_num_threads(): 4x the processors OpenMP sees, at most 1024.
/// @return the limit (1 without OpenMP).
int max_num_threads();

namespace backend {
/// True in a child process forked after this library was loaded (pthread_atfork).
/// @return true after fork() in the child.
bool forked_child();
/// Called when a CUDA device is first initialized in this process.
/// A child forked afterwards then refuses CUDA (check_cuda_usable_after_fork).
void note_cuda_initialized();
/// Throws RuntimeError when this is a forked child whose parent had initialized CUDA (CUDA
/// contexts do not survive fork(); the child must use 'spawn' or 'forkserver').
/// @throws veil::RuntimeError in such a child.
void check_cuda_usable_after_fork();
}  // namespace backend

}  // namespace veil
