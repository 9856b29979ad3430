// Typed exceptions. Python maps InvalidArgument -> ValueError, TypeMismatch -> TypeError,
// OutOfMemory -> MemoryError, everything else -> RuntimeError.
#pragma once
#include <stdexcept>
#include <string>

namespace veil {

/// A public entry received an argument outside its domain. The message names the argument.
struct InvalidArgument : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// An argument has the wrong kind (e.g. a public key where a secret key is expected,
/// or objects living on different devices or built from different contexts).
struct TypeMismatch : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// A device (or host) allocation could not be satisfied. The message names the request size.
struct OutOfMemory : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// A runtime failure (CUDA error, backend not built, ...).
struct RuntimeError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// Throws veil::InvalidArgument(msg) unless `cond` holds: the argument check of public entries.
#define VEIL_REQUIRE(cond, msg)                                                                    \
  do {                                                                                             \
    if (!(cond)) throw ::veil::InvalidArgument(msg);                                               \
  } while (0)

/// Throws veil::TypeMismatch(msg) unless `cond` holds: the kind, device and context checks.
#define VEIL_REQUIRE_TYPE(cond, msg)                                                               \
  do {                                                                                             \
    if (!(cond)) throw ::veil::TypeMismatch(msg);                                                  \
  } while (0)

}  // namespace veil
