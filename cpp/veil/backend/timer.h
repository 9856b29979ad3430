// Timer for benchmarks: CUDA events on the device's stream for CUDA devices (the time the GPU
// spent between start and stop), a steady clock for the CPU.
#pragma once
#include <chrono>

#include "veil/backend/device.h"

namespace veil {

/// A stopwatch for benchmarks on one device: CUDA events on the device's stream for a CUDA device,
/// std::chrono::steady_clock for the CPU.
class Timer {
 public:
  /// A timer for `dev` (creates its two CUDA events on a CUDA device).
  /// @param dev the device whose work is timed.
  /// @throws veil::RuntimeError if the events cannot be created.
  explicit Timer(const Device& dev);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  /// Marks the start: records the start event on the device's stream, or reads the clock.
  /// @throws veil::RuntimeError on a CUDA error.
  void start();
  /// Milliseconds since start(); synchronizes with the device (waits for the stop event).
  /// @return the elapsed time in milliseconds (GPU time between the events on CUDA).
  /// @throws veil::RuntimeError on a CUDA error.
  double stop();

 private:
  Device dev_;
  void* start_event_ = nullptr;
  void* stop_event_ = nullptr;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace veil
