#include "veil/backend/timer.h"

#include "veil/backend/cuda_impl.h"

namespace veil {

Timer::Timer(const Device& dev) : dev_(dev) {
  if (dev_.is_cuda()) {
    start_event_ = backend::cuda::event_create(dev_.index);
    stop_event_ = backend::cuda::event_create(dev_.index);
  }
}

Timer::~Timer() {
  backend::cuda::event_destroy(start_event_);
  backend::cuda::event_destroy(stop_event_);
}

void Timer::start() {
  if (dev_.is_cuda()) {
    backend::cuda::event_record(dev_.index, start_event_);
  } else {
    t0_ = std::chrono::steady_clock::now();
  }
}

double Timer::stop() {
  if (dev_.is_cuda()) {
    backend::cuda::event_record(dev_.index, stop_event_);
    return backend::cuda::event_elapsed_ms(start_event_, stop_event_);
  }
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0_).count();
}

}  // namespace veil
