// Timer for benchmarks: CUDA events on the device's stream for CUDA devices (the time the GPU
// spent between start and stop), a steady clock for the CPU.
#pragma once
#include <chrono>

#include "veil/backend/device.h"

namespace veil {

class Timer {
 public:
  explicit Timer(const Device& dev);
  ~Timer();
  Timer(const Timer&) = delete;
  Timer& operator=(const Timer&) = delete;
  void start();
  /// Milliseconds since start(); synchronizes with the device.
  double stop();

 private:
  Device dev_;
  void* start_event_ = nullptr;
  void* stop_event_ = nullptr;
  std::chrono::steady_clock::time_point t0_;
};

}  // namespace veil
