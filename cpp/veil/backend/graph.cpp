#include "veil/backend/graph.h"

#include <atomic>
#include <utility>

#include "veil/backend/cuda_impl.h"
#include "veil/core/env.h"
#include "veil/core/error.h"

namespace veil::backend {

Graph::~Graph() {
  if (capturing_) abort_capture();
  if (exec_) cuda::graph_destroy(exec_);
}

Graph::Graph(Graph&& o) noexcept
    : dev_(o.dev_), exec_(std::exchange(o.exec_, nullptr)),
      capturing_(std::exchange(o.capturing_, false)) {}

Graph& Graph::operator=(Graph&& o) noexcept {
  if (this != &o) {
    if (exec_) cuda::graph_destroy(exec_);
    dev_ = o.dev_;
    exec_ = std::exchange(o.exec_, nullptr);
    capturing_ = std::exchange(o.capturing_, false);
  }
  return *this;
}

bool Graph::supported(const Device& dev) { return dev.is_cuda() && cuda::built(); }

void Graph::begin_capture(const Device& dev) {
  if (!supported(dev)) throw InvalidArgument("device: CUDA graphs need a CUDA device");
  if (capturing_) throw InvalidArgument("graph: a capture is already in progress");
  if (exec_) {
    cuda::graph_destroy(exec_);
    exec_ = nullptr;
  }
  dev_ = dev;
  cuda::graph_begin(dev.index);
  capturing_ = true;
}

void Graph::end_capture() {
  if (!capturing_) throw InvalidArgument("graph: no capture in progress");
  capturing_ = false;
  exec_ = cuda::graph_end(dev_.index);
}

void Graph::abort_capture() noexcept {
  if (!capturing_) return;
  capturing_ = false;
  cuda::graph_abort(dev_.index);
}

namespace {
std::atomic<bool>& branches_flag() {
  static std::atomic<bool> on{env_flag_on("VEIL_GRAPH_BRANCHES")};
  return on;
}
}  // namespace

bool graph_branches() { return branches_flag().load(); }
void set_graph_branches(bool on) { branches_flag().store(on); }

void run_branches(const Device& dev, const std::vector<std::function<void()>>& branches) {
  if (dev.is_cuda() && cuda::built() && graph_branches()) {
    cuda::run_branches(dev.index, branches);
    return;
  }
  for (const auto& f : branches) f();
}

void Graph::launch() const {
  if (!exec_) throw RuntimeError("graph: nothing captured");
  cuda::graph_launch(dev_.index, exec_);
}

}  // namespace veil::backend
