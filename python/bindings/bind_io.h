// Serialization bindings shared by every object class of veil._core: to_bytes / from_bytes,
// save / load (files) and pickling (__reduce__ through veil._serialize), all over io/serialize.h.
// The module-level serialization functions (ciphertext_to_bytes, seal_*) are in bind_io.cpp.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "bind_common.h"
#include "veil/core/error.h"
#include "veil/io/serialize.h"

namespace veil::bind {

namespace nb = nanobind;

/// A read-only view of any C-contiguous bytes-like Python object (bytes, bytearray,
/// memoryview, numpy uint8). Throws TypeMismatch naming `what` otherwise.
class PyBytes {
 public:
  PyBytes(nb::handle h, const char* what) {
    if (PyObject_GetBuffer(h.ptr(), &view_, PyBUF_C_CONTIGUOUS | PyBUF_SIMPLE) != 0) {
      PyErr_Clear();
      throw TypeMismatch(std::string(what) + ": expected bytes or another bytes-like object, got " +
                         std::string(nb::type_name(h.type()).c_str()));
    }
  }
  ~PyBytes() { PyBuffer_Release(&view_); }
  PyBytes(const PyBytes&) = delete;
  PyBytes& operator=(const PyBytes&) = delete;
  io::ByteView view() const {
    return {static_cast<const std::uint8_t*>(view_.buf), static_cast<std::size_t>(view_.len)};
  }
  /// view(), or a private copy of the bytes when the buffer is writable: what a loader takes
  /// after releasing the GIL. It reads its input in place more than once (the CRC, the range
  /// check, the copy to the device), and another thread could change a writable buffer
  /// (bytearray, numpy array) between the reads. Read-only buffers (bytes, Ray's object store)
  /// are read in place.
  io::ByteView stable_view() {
    if (view_.readonly) return view();
    if (copy_.empty() && view_.len > 0) {
      const io::ByteView v = view();
      copy_.assign(v.data, v.data + v.size);
    }
    return {copy_.data(), copy_.size()};
  }

 private:
  Py_buffer view_{};
  std::vector<std::uint8_t> copy_;
};

inline nb::bytes to_py(const io::Bytes& b) {
  return nb::bytes(reinterpret_cast<const char*>(b.data()), b.size());
}

inline io::SaveOptions save_options(const std::string& compression, std::optional<bool> seeded,
                                    int level) {
  io::SaveOptions o;
  o.compression = io::compression_from_string(compression);
  o.seeded = !seeded ? io::Seeding::automatic : (*seeded ? io::Seeding::always : io::Seeding::never);
  o.level = level;
  return o;
}

inline io::LoadOptions load_options(std::optional<std::uint64_t> max_bytes) {
  io::LoadOptions o;
  if (max_bytes) o.max_bytes = *max_bytes;
  return o;
}

inline std::optional<int> security_bits(const Context& c) {
  if (c.security() == SecurityLevel::none) return std::nullopt;
  return static_cast<int>(c.security());
}

/// (veil._serialize._restore, (kind, parameter bytes, security, device, object bytes)).
inline nb::tuple reduce_tuple(const char* kind, const Context& ctx, const std::string& device,
                              const io::Bytes& data) {
  nb::object restore = nb::module_::import_("veil._serialize").attr("_restore");
  const io::Bytes params = io::save(ctx.params(), io::SaveOptions{io::Compression::none});
  return nb::make_tuple(restore, nb::make_tuple(kind, to_py(params), security_bits(ctx), device,
                                                to_py(data)));
}

constexpr const char* kToBytesDoc =
    "Serializes to Veil's format (io/serialize.h: versioned header, parameter hash, CRC-32).\n\n"
    "compression: 'zstd' (default) or 'none'. seeded: None writes the 32-byte seed of the\n"
    "uniform part when the object has one that still matches (symmetric-key ciphertexts, public,\n"
    "relinearization and Galois keys fresh from KeyGenerator), halving the size; True demands it\n"
    "(ValueError otherwise); False never seeds. level: zstd level 1..19.";
constexpr const char* kFromBytesDoc =
    "Loads an object saved by to_bytes onto `device`, checking it against `context` (scheme,\n"
    "parameter hash, shape, every coefficient below its modulus). max_bytes caps the body\n"
    "(default 16 GiB). Raises ValueError naming the field for any bad byte.";

/// to_bytes / save / from_bytes / load (and pickling unless `picklable` is false) for class T.
/// `load_fn(view, ctx, device, options)` builds a T.
template <class T, class Cls, class LoadFn>
void def_serialization(Cls& cls, const char* kind, LoadFn load_fn, bool picklable = true) {
  cls.def(
         "to_bytes",
         [](const T& obj, const std::string& compression, std::optional<bool> seeded, int level) {
           io::Bytes b;
           {
             nb::gil_scoped_release release;
             b = io::save(obj, save_options(compression, seeded, level));
           }
           return to_py(b);
         },
         nb::arg("compression") = "zstd", nb::arg("seeded").none() = nb::none(),
         nb::arg("level") = 3, kToBytesDoc)
      .def(
          "save",
          [](const T& obj, const std::string& path, const std::string& compression,
             std::optional<bool> seeded, int level) {
            nb::gil_scoped_release release;
            io::write_file(path, io::save(obj, save_options(compression, seeded, level)));
          },
          nb::arg("path"), nb::arg("compression") = "zstd", nb::arg("seeded").none() = nb::none(),
          nb::arg("level") = 3, "Writes to_bytes(...) to a file.")
      .def_static(
          "from_bytes",
          [load_fn](nb::handle data, const Ctx& ctx, const std::string& device,
                    std::optional<std::uint64_t> max_bytes) {
            if (!ctx) throw InvalidArgument("context: expected a Context, got None");
            PyBytes bytes(data, "data");
            const Device dev = Device::parse(device);
            const io::ByteView in = bytes.stable_view();
            nb::gil_scoped_release release;
            return load_fn(in, ctx, dev, load_options(max_bytes));
          },
          nb::arg("data"), nb::arg("context"), nb::arg("device") = "cpu",
          nb::arg("max_bytes").none() = nb::none(), kFromBytesDoc)
      .def_static(
          "load",
          [load_fn](const std::string& path, const Ctx& ctx, const std::string& device,
                    std::optional<std::uint64_t> max_bytes) {
            if (!ctx) throw InvalidArgument("context: expected a Context, got None");
            const Device dev = Device::parse(device);
            const io::LoadOptions o = load_options(max_bytes);
            nb::gil_scoped_release release;
            const io::Bytes data = io::read_file(path, o.max_bytes + (std::uint64_t(64) << 20));
            return load_fn(io::ByteView(data), ctx, dev, o);
          },
          nb::arg("path"), nb::arg("context"), nb::arg("device") = "cpu",
          nb::arg("max_bytes").none() = nb::none(), "Loads a file written by save().");
  if (picklable) {
    cls.def("__reduce__", [kind](const T& obj) {
      return reduce_tuple(kind, *obj.context(), obj.device().str(),
                          io::save(obj, io::SaveOptions{}));
    });
  } else {
    cls.def("__reduce__", [](const T&) -> nb::object {
      throw TypeMismatch(
          "secret_key: a SecretKey is never pickled (it would leave the process by accident); "
          "call secret_key.to_bytes() or save(path) explicitly");
    });
  }
}

}  // namespace veil::bind
