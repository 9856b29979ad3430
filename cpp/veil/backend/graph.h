// Capture and replay of a device's queued work as one CUDA graph: a fixed sequence of kernels
// (a bootstrap) launched once per replay instead of once per kernel, with no host work between
// them. Everything queued on the device's stream between begin_capture() and end_capture() is
// recorded, stream-ordered allocations included (they become the graph's own memory nodes).
// The CPU has no graphs: supported() is false there and the caller runs its work directly.
#pragma once
#include <functional>
#include <vector>

#include "veil/backend/device.h"

namespace veil::backend {

/// One captured CUDA graph of a device's queued work (move-only; destroying it frees the
/// instantiated graph, or aborts a capture in progress).
class Graph {
 public:
  Graph() = default;
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;
  /// Takes over another graph (and its capture in progress); `o` is left empty.
  /// @param o the graph to move from.
  Graph(Graph&& o) noexcept;
  /// Destroys this graph's instantiation and takes over `o`'s; `o` is left empty.
  /// @param o the graph to move from.
  /// @return *this.
  Graph& operator=(Graph&& o) noexcept;

  /// True where graphs exist (a CUDA device of a build with the CUDA backend).
  /// @param dev the device.
  /// @return true for a CUDA device when the CUDA backend is built.
  static bool supported(const Device& dev);
  /// Starts recording `dev`'s stream (relaxed capture mode: the calls made meanwhile must only
  /// queue work; a synchronizing call makes end_capture() throw). A graph captured before is
  /// destroyed first.
  /// @param dev a CUDA device.
  /// @throws InvalidArgument for the CPU (or a build without CUDA), or when a capture is already in
  ///         progress; RuntimeError if the capture cannot start.
  void begin_capture(const Device& dev);
  /// Stops recording and instantiates the graph (its memory is freed at each relaunch).
  /// @throws RuntimeError if the captured work was invalidated (a synchronizing or unsupported
  ///         call during the capture); the graph is then empty. InvalidArgument if no capture
  ///         is in progress.
  void end_capture();
  /// Stops a capture that failed (an exception was thrown during it) and discards it.
  void abort_capture() noexcept;
  /// Queues one replay on the device's stream (asynchronous).
  /// @throws RuntimeError if the graph is empty or the launch fails.
  void launch() const;
  /// Whether a graph has been captured and instantiated.
  /// @return true when launch() has a graph to replay.
  bool ready() const { return exec_ != nullptr; }
  /// Whether a capture is in progress (between begin_capture and end_capture or abort_capture).
  /// @return true while capturing.
  bool capturing() const { return capturing_; }

 private:
  Device dev_ = Device::cpu();
  void* exec_ = nullptr;
  bool capturing_ = false;
};

/// Runs each of `branches` once, in order. While `dev`'s stream is being captured into a graph
/// (Graph::begin_capture) and graph branches are on (graph_branches()), branch 0 is recorded on
/// the device's stream and every other one on a side stream forked from it here and joined back
/// after it, so that the graph's replays run the branches concurrently: independent operations
/// side by side fill the gaps between a branch's dependent kernels (Cerium, SOSP 2026, schedules
/// its bootstrap graph's independent operations so). Side streams are reused round robin (8 per
/// device): branch k and k + 8 share one and run one after the other. Otherwise (no capture, the
/// CPU, a call made from inside any branch, or branches off) they run one after another on the
/// stream in use. The words computed are the same either way.
/// The caller guarantees independence: no branch may write what another reads or writes, nor
/// free what another still uses (objects shared by branches must outlive the call). Data that a
/// branch makes lazily (tables built on first use) must already exist: captures follow a
/// warm-up run (circuits::GraphReplay).
/// @param dev the device the branches queue work on.
/// @param branches the work; an exception leaves after its branch is joined back (the capture
///        can then be discarded), and no later branch runs.
/// @throws whatever a branch throws (the first one; the fork and join calls' own failures after
///         it are dropped); RuntimeError when a fork or join call fails otherwise.
void run_branches(const Device& dev, const std::vector<std::function<void()>>& branches);
/// Whether run_branches forks inside captures: yes unless the environment variable
/// VEIL_GRAPH_BRANCHES is "0" when first asked (the A/B switch), or as set_graph_branches set it.
/// @return true when forking is on.
bool graph_branches();
/// Turns run_branches' forking on or off for the whole process (tests compare both).
/// @param on true: fork inside captures; false: always one branch after another.
void set_graph_branches(bool on);

}  // namespace veil::backend
