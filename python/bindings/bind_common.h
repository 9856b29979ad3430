// Helpers shared by the binding files of veil._core (bind_*.cpp): the conversion of Python
// arguments with the argument's name in every error, the numpy and DLPack array helpers, and the
// __repr__ helpers. Serialization helpers are in bind_io.h.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
// Every binding file sees the same type casters (a function whose argument or result lacks its
// caster compiles, then fails when called).
#include <nanobind/stl/array.h>
#include <nanobind/stl/complex.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <complex>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "veil/backend/array_view.h"
#include "veil/backend/device.h"
#include "veil/core/error.h"
#include "veil/core/modarith.h"
#include "veil/rlwe/context.h"

namespace veil::bind {

namespace nb = nanobind;

using Ctx = std::shared_ptr<Context>;  // nanobind holder; the context itself is immutable
using Release = nb::gil_scoped_release;

/// Device::parse: 'cpu', 'cuda' or 'cuda:k' (InvalidArgument otherwise).
Device dev_of(const std::string& s);

// ---- Python-facing argument checks --------------------------------------------------------
// Integers and reals are converted here, with the argument's name, instead of by nanobind's
// casters, whose failures read "incompatible function arguments" without naming the argument.
// Every bind_*.cpp uses these checks and no other. TypeMismatch (TypeError) for the wrong type
// ("name: expected an integer, got float"), InvalidArgument (ValueError) for a value out of range
// ("name: expected an integer in 0..4096, got 5000").
//
// Quoting: the refused value is quoted (", got 5000") for parameters (sizes, levels, steps,
// degrees, scales), never for a seed (it determines the encryption randomness: seed_arg) and
// never for a plaintext data value (constants, coefficients, points a plan is evaluated at): pass
// quote = false there. The type of a refused value is always named, the value itself only when
// quoted.

/// An exact integer (int, numpy integer: anything with __index__, but not bool or float) in lo..hi.
std::uint64_t u64_arg(nb::handle h, const char* name, std::uint64_t lo = 0,
                      std::uint64_t hi = UINT64_MAX, bool quote = true);
std::int64_t i64_arg(nb::handle h, const char* name, std::int64_t lo, std::int64_t hi,
                     bool quote = true);
std::size_t size_arg(nb::handle h, const char* name, std::size_t hi = SIZE_MAX, bool quote = true);
int int_arg(nb::handle h, const char* name, int lo = INT32_MIN, int hi = INT32_MAX,
            bool quote = true);
/// A real number (int, float or anything with __float__; bool and complex refused) that fits a
/// double.
double real_arg(nb::handle h, const char* name, bool quote = true);
/// None, or a seed in 0..2^64-1 (the refused value is never quoted).
std::optional<std::uint64_t> seed_arg(nb::handle h, const char* name = "seed");

/// The items of a sequence (not str or bytes), each converted by `convert`; `items` names what the
/// sequence holds in the message ("integers", "Ciphertext").
template <class F>
auto list_arg(nb::handle h, const char* name, const char* items, F convert) {
  using T = decltype(convert(h));
  if (PyUnicode_Check(h.ptr()) || PyBytes_Check(h.ptr()) || !PySequence_Check(h.ptr())) {
    throw TypeMismatch(std::string(name) + ": expected a sequence of " + items + ", got " +
                       Py_TYPE(h.ptr())->tp_name);
  }
  std::vector<T> out;
  for (nb::handle item : nb::borrow<nb::sequence>(h)) out.push_back(convert(item));
  return out;
}

/// A sequence of real numbers (numpy arrays included), each checked by real_arg.
std::vector<double> reals_arg(nb::handle h, const char* name, bool quote = true);

// ---- arrays -------------------------------------------------------------------------------
/// A 1-D numpy array that owns `v`'s words (no copy).
template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> to_numpy(std::vector<T> v) {
  auto* heap = new std::vector<T>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(heap->data(), {heap->size()}, owner);
}

template <class T, class A>
std::vector<T> from_numpy(const A& a) {
  return std::vector<T>(a.data(), a.data() + a.shape(0));
}

using I64Array = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using U64Array = nb::ndarray<const std::uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using F64Array = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using C128Array =
    nb::ndarray<const std::complex<double>, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

// Any 1-D C-contiguous array on any device (DLPack: CuPy, PyTorch, JAX; the buffer protocol:
// numpy). Its dtype and device are checked by array_view.
using AnyArray = nb::ndarray<nb::ndim<1>, nb::c_contig>;            // writable (decode_into)
using AnyRoArray = nb::ndarray<nb::ro, nb::ndim<1>, nb::c_contig>;  // read-only too (encode)

/// "int64", "float64", "complex128", ...
std::string dtype_name(const nb::dlpack::dtype& d);

/// The Device an array lives on: "cpu", or "cuda:k" for CUDA memory (also pinned/managed).
template <class A>
Device array_device(const A& a, const char* arg) {
  const int type = a.device_type();
  if (type == nb::device::cpu::value || type == nb::device::cuda_host::value) return Device::cpu();
  if (type == nb::device::cuda::value || type == nb::device::cuda_managed::value) {
    return Device(Device::Kind::cuda, a.device_id());
  }
  throw InvalidArgument(std::string(arg) + ": arrays on DLPack device type " +
                        std::to_string(type) + " are not supported (expected CPU or CUDA memory)");
}

/// A view of `a` as T (checked: dtype T, one dimension). `expect` lists the accepted dtypes.
template <class T, class A>
ArrayView<T> array_view(const A& a, const char* arg) {
  if (a.dtype() != nb::dtype<std::remove_const_t<T>>()) {
    throw nb::type_error((std::string(arg) + ": expected a " +
                          dtype_name(nb::dtype<std::remove_const_t<T>>()) + " array, got " +
                          dtype_name(a.dtype()))
                             .c_str());
  }
  return ArrayView<T>{static_cast<T*>(const_cast<void*>(a.data())), a.shape(0),
                      array_device(a, arg)};
}

// ---- __repr__ helpers: parameters and shapes only, never key material or seeds --------------
/// "[60, 40, 60]": the bit sizes of the primes in `q`.
std::string bits_list(const std::vector<u64>& q);
/// "2^40.00".
std::string scale_repr(double scale);
/// "veil.Context(scheme='ckks', poly_modulus_degree=..., ...)".
std::string context_repr(const Context& c);

/// "veil.<name>(<scheme>, N=.., device='..', <bytes> bytes)" for a key or an encoder-like object.
template <class T>
std::string key_repr(const char* name, const T& k, std::size_t bytes,
                     const std::string& extra = "") {
  if (!k.context()) return std::string("veil.") + name + "(empty)";
  return std::string("veil.") + name + "(scheme='" + to_string(k.context()->scheme()) +
         "', poly_modulus_degree=" + std::to_string(k.context()->n()) + extra + ", device='" +
         k.device().str() + "', nbytes=" + std::to_string(bytes) + ")";
}

}  // namespace veil::bind
