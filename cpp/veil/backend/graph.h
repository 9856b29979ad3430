// Capture and replay of a device's queued work as one CUDA graph: a fixed sequence of kernels
// (a bootstrap) launched once per replay instead of once per kernel, with no host work between
// them. Everything queued on the device's stream between begin_capture() and end_capture() is
// recorded, stream-ordered allocations included (they become the graph's own memory nodes).
// The CPU has no graphs: supported() is false there and the caller runs its work directly.
#pragma once
#include "veil/backend/device.h"

namespace veil::backend {

class Graph {
 public:
  Graph() = default;
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  Graph(Graph&& o) noexcept;
  Graph& operator=(Graph&& o) noexcept;

  /// True where graphs exist (a CUDA device of a build with the CUDA backend).
  static bool supported(const Device& dev);
  /// Starts recording `dev`'s stream (relaxed capture mode: the calls made meanwhile must only
  /// queue work; a synchronizing call makes end_capture() throw).
  /// @throws InvalidArgument for the CPU; RuntimeError if the capture cannot start.
  void begin_capture(const Device& dev);
  /// Stops recording and instantiates the graph (its memory is freed at each relaunch).
  /// @throws RuntimeError if the captured work was invalidated (a synchronizing or unsupported
  ///         call during the capture); the graph is then empty.
  void end_capture();
  /// Stops a capture that failed (an exception was thrown during it) and discards it.
  void abort_capture() noexcept;
  /// Queues one replay on the device's stream (asynchronous).
  /// @throws RuntimeError if the graph is empty or the launch fails.
  void launch() const;
  bool ready() const { return exec_ != nullptr; }
  bool capturing() const { return capturing_; }

 private:
  Device dev_ = Device::cpu();
  void* exec_ = nullptr;
  bool capturing_ = false;
};

}  // namespace veil::backend
