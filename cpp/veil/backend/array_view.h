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
  /// The first element (nullptr only when count is 0).
  T* data = nullptr;
  /// The number of elements.
  std::size_t count = 0;
  /// The device the memory is on.
  Device device;

  /// Checks the view against what a call expects: Throws InvalidArgument naming `arg` unless the
  /// view lives on `dev` and holds `expected` elements (or, with `at_most`, at most that many),
  /// with
  /// non-null data when it has any.
  /// @param dev the device the context works on.
  /// @param expected the element count required (or the most allowed).
  /// @param at_most whether fewer elements are allowed.
  /// @param arg the argument's name for the message.
  /// @throws veil::InvalidArgument on a device mismatch, a wrong count or a null pointer.
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
