// A fixed ciphertext-to-ciphertext computation replayed as one CUDA graph (Cerium, SOSP 2026,
// replays its whole bootstrap as one graph). The first call runs the computation directly (it
// warms up lazily built tables and memory pools) and then captures it once on copies of its
// input and output, which stay allocated; each later call copies the input in, launches the
// graph and copies the output out: one launch instead of thousands, and no host work between
// the kernels. On the CPU, or where the capture fails (a synchronizing call inside the
// computation), or with VEIL_GRAPHS=0 in the environment, the computation simply runs.
#pragma once
#include <functional>
#include <mutex>
#include <string>

#include "veil/backend/graph.h"
#include "veil/rlwe/objects.h"

namespace veil::circuits {

/// One captured computation (file comment). Thread-safe: calls are serialized by a mutex.
class GraphReplay {
 public:
  /// The computation replayed: a ciphertext in, a ciphertext out.
  using Computation = std::function<Ciphertext(const Ciphertext&)>;

  /// Runs `fn(x)`, through the captured graph once one exists. `fn` must depend on nothing but
  /// its argument's words and shape, and must be the same function on every call (the graph
  /// replays what the first capture recorded). Calls are serialized (one input buffer).
  /// @param x the input: every call must pass the same size, level and device.
  /// @param fn the computation.
  /// @return fn(x); bit for bit the same words whether replayed or run directly.
  /// @throws InvalidArgument naming `ct` if x's shape (size, level, device, word size, form)
  ///         differs from the captured one; fn's errors. A failed capture throws nothing:
  ///         it is recorded (failure()) and the computation runs directly from then on.
  Ciphertext run(const Ciphertext& x, const Computation& fn);
  /// @return true once a graph has been captured and is replayed.
  bool active() const;
  /// @return whether graphs are enabled: not VEIL_GRAPHS=0 (read once per process).
  static bool enabled();
  /// @return why the capture failed ("" if it did not, or has not been tried).
  std::string failure() const;

 private:
  mutable std::mutex mutex_;
  backend::Graph graph_;
  Ciphertext in_, out_;
  bool failed_ = false;
  std::string failure_;
};

}  // namespace veil::circuits
