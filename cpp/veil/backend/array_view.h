// ArrayView<T>: a 1-D array of T that Veil does not own, on one Device — how memory of another
// framework (a CuPy, PyTorch or JAX array reached through DLPack, or a host vector) reaches the
// encoders without a copy through the host.
#pragma once
#include <cstddef>
#include <string>

#include "veil/backend/device.h"
#include "veil/core/error.h"

namespace veil {

/// `count` elements of T at `data` on `device`; T const for a read-only view. The memory must
/// stay valid for the duration of the call that takes the view; Veil synchronizes the device
/// before reading it (backend::synchronize_device) and after writing it.
template <class T>
struct ArrayView {
  T* data = nullptr;
  std::size_t count = 0;
  Device device;

  /// Throws InvalidArgument naming `arg` unless the view lives on `dev` and holds `expected`
  /// elements (or, with `at_most`, at most that many).
  void check(const Device& dev, std::size_t expected, bool at_most, const char* arg) const {
    if (device != dev) {
      throw InvalidArgument(std::string(arg) + ": the array is on " + device.str() +
                            " but the context works on " + dev.str());
    }
    if (at_most ? count > expected : count != expected) {
      throw InvalidArgument(std::string(arg) + ": expected " + (at_most ? "at most " : "") +
                            std::to_string(expected) + " elements, got " + std::to_string(count));
    }
    if (count && data == nullptr) throw InvalidArgument(std::string(arg) + ": null data pointer");
  }
};

}  // namespace veil
