// Serialization bindings shared by every object class of veil._core: to_bytes / from_bytes,
// save / load (files) and pickling (__reduce__ through veil._serialize), all over io/serialize.h.
#pragma once
#include <nanobind/nanobind.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>

#include "veil/core/error.h"
#include "veil/io/serialize.h"

namespace veil::bind {

namespace nb = nanobind;

using Ctx = std::shared_ptr<Context>;

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

#include "veil/io/seal.h"

namespace veil::bind {

/// veil._core.seal_*: SEAL 4.x wire format (io/seal.h).
inline void def_seal(nb::module_& m) {
  auto opts = [](const std::string& compression, int minor, int level) {
    io::seal::SaveOptions o;
    o.compression = io::compression_from_string(compression);
    if (minor < 0 || minor > 255) throw InvalidArgument("version_minor: expected 0..255");
    o.version_minor = static_cast<std::uint8_t>(minor);
    o.level = level;
    return o;
  };
  constexpr const char* kSaveDoc =
      "Serializes in SEAL 4.x's format (unseeded). compression: 'none' (default, read by every "
      "SEAL build), 'zlib' or 'zstd'. version_minor: the 4.x minor version written in the "
      "headers (SEAL 4.0-4.3 read only their own; 4.4 reads 4.0-4.4).";
  auto def_save = [&](auto tag) {
    using T = typename decltype(tag)::type;
    m.def("seal_save", [opts](const T& obj, const std::string& compression, int minor, int level) {
      io::Bytes b;
      {
        nb::gil_scoped_release release;
        b = io::seal::save(obj, opts(compression, minor, level));
      }
      return to_py(b);
    }, nb::arg("obj"), nb::arg("compression") = "none", nb::arg("version_minor") = 1,
       nb::arg("level") = -1, kSaveDoc);
  };
  struct P { using type = EncryptionParameters; };
  struct Pt { using type = Plaintext; };
  struct Ct { using type = Ciphertext; };
  struct Sk { using type = SecretKey; };
  struct Pk { using type = PublicKey; };
  struct Rk { using type = RelinKeys; };
  struct Gk { using type = GaloisKeys; };
  def_save(P{});
  def_save(Pt{});
  def_save(Ct{});
  def_save(Sk{});
  def_save(Pk{});
  def_save(Rk{});
  def_save(Gk{});

  m.def("seal_load_parameters", [](nb::handle data) {
    PyBytes b(data, "data");
    return io::seal::load_parameters(b.view());
  }, nb::arg("data"), "EncryptionParameters from SEAL bytes (special_primes = 1 when K > 1).");
  auto def_load = [&](const char* name, auto fn) {
    m.def(name, [fn](nb::handle data, const Ctx& ctx, const std::string& device,
                     std::optional<std::uint64_t> max_bytes) {
      if (!ctx) throw InvalidArgument("context: expected a Context, got None");
      PyBytes b(data, "data");
      const Device dev = Device::parse(device);
      const io::ByteView in = b.stable_view();
      nb::gil_scoped_release release;
      return fn(in, ctx, dev, load_options(max_bytes));
    }, nb::arg("data"), nb::arg("context"), nb::arg("device") = "cpu",
       nb::arg("max_bytes").none() = nb::none(),
       "Loads a SEAL 4.x object into `context` on `device`; ValueError naming the field for bad "
       "bytes or parameters that differ.");
  };
  def_load("seal_load_plaintext", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::seal::load_plaintext(v, c, d, o);
  });
  def_load("seal_load_ciphertext", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::seal::load_ciphertext(v, c, d, o);
  });
  def_load("seal_load_secret_key", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::seal::load_secret_key(v, c, d, o);
  });
  def_load("seal_load_public_key", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::seal::load_public_key(v, c, d, o);
  });
  def_load("seal_load_relin_keys", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::seal::load_relin_keys(v, c, d, o);
  });
  def_load("seal_load_galois_keys", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::seal::load_galois_keys(v, c, d, o);
  });
  m.def("seal_split", [](nb::handle data) {
    PyBytes b(data, "data");
    return io::seal::split(b.view());
  }, nb::arg("data"), "(offset, size) of each SEAL object concatenated in `data`.");
  m.def("seal_parms_id", [](const Ctx& ctx, std::optional<std::size_t> level) {
    if (!ctx) throw InvalidArgument("context: expected a Context, got None");
    const auto& all = ctx->params().coeff_modulus;
    std::size_t count = all.size();
    if (level) {
      if (*level > ctx->max_level()) throw InvalidArgument("level: above the context's maximum level");
      count = *level + 1;
    }
    return io::seal::parms_id(ctx->scheme(), ctx->n(),
                              std::vector<std::uint64_t>(all.begin(), all.begin() + count),
                              ctx->plain_modulus());
  }, nb::arg("context"), nb::arg("level").none() = nb::none(),
     "SEAL's parms_id (4 words) of a data level, or of the key level when level is None.");
}

}  // namespace veil::bind
