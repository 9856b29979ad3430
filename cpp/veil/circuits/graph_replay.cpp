#include "veil/circuits/graph_replay.h"

#include <exception>

#include "veil/backend/memory.h"
#include "veil/core/env.h"
#include "veil/core/error.h"

namespace veil::circuits {

namespace {

/// dst's words = src's words (same shape; stream-ordered on a GPU).
void copy_words(Ciphertext& dst, const Ciphertext& src) {
  backend::copy(dst.device(), dst.data().get(), src.device(), src.data().get(),
                src.buffer().bytes());
  dst.set_scale(src.scale());
  dst.set_key_id(src.key_id());
}

bool same_shape(const Ciphertext& a, const Ciphertext& b) {
  return a.size() == b.size() && a.level() == b.level() && a.device() == b.device() &&
         a.word_bits() == b.word_bits() && a.is_ntt_form() == b.is_ntt_form();
}

}  // namespace

bool GraphReplay::enabled() {
  static const bool on = [] {
    return env_flag_on("VEIL_GRAPHS");
  }();
  return on;
}

std::string GraphReplay::failure() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return failure_;
}

bool GraphReplay::active() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return graph_.ready();
}

Ciphertext GraphReplay::run(const Ciphertext& x, const Computation& fn) {
  if (!backend::Graph::supported(x.device()) || !enabled()) return fn(x);
  std::lock_guard<std::mutex> lock(mutex_);
  if (failed_) return fn(x);
  if (graph_.ready()) {
    if (!same_shape(x, in_)) {
      throw InvalidArgument("ct: the captured computation takes a ciphertext of size " +
                            std::to_string(in_.size()) + " at level " +
                            std::to_string(in_.level()) + ", got size " +
                            std::to_string(x.size()) + " at level " + std::to_string(x.level()));
    }
    copy_words(in_, x);
    graph_.launch();
    Ciphertext out(out_);  // a copy queued after the replay
    out.set_key_id(x.key_id() ? x.key_id() : out_.key_id());
    return out;
  }
  Ciphertext first = fn(x);  // warm-up: lazily built tables, pools; and this call's answer
  in_ = x;
  out_ = first;
  try {
    graph_.begin_capture(x.device());
    {
      const Ciphertext y = fn(in_);
      if (!same_shape(y, out_)) throw RuntimeError("graph: the computation's output changed shape");
      copy_words(out_, y);
    }  // y's memory is freed inside the graph
    graph_.end_capture();
  } catch (const std::exception& e) {
    graph_.abort_capture();
    failed_ = true;  // run directly from now on
    failure_ = e.what();
    try {
      backend::synchronize(x.device());
    } catch (const std::exception&) {  // a capture error is not sticky; nothing else to undo
    }
  }
  return first;
}

}  // namespace veil::circuits
