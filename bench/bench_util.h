// Shared by the C++ stage profilers (profile_ops.cpp, profile_ckks.cpp): the median of timed
// runs with CUDA events on a GPU (veil::Timer), after warm-up.
#pragma once
#include <algorithm>
#include <functional>
#include <vector>

#include "veil/backend/timer.h"

namespace veil::bench {

/// Median of `runs` timed calls of f in µs, after 3 untimed ones (1 when runs is 1).
inline double median_us(const Device& dev, int runs, const std::function<void()>& f) {
  for (int i = 0; i < (runs > 1 ? 3 : 1); ++i) f();
  std::vector<double> t;
  Timer timer(dev);
  for (int i = 0; i < runs; ++i) {
    timer.start();
    f();
    t.push_back(timer.stop() * 1000.0);
  }
  std::sort(t.begin(), t.end());
  return t[t.size() / 2];
}

}  // namespace veil::bench
