// veil._core's serialization functions: a ciphertext's bytes with the pythonic layer's record
// (ciphertext_to_buffer, ciphertext_to_bytes, ciphertext_info) and SEAL 4.x's wire format
// (seal_*, io/seal.h). Each class's own to_bytes / from_bytes / save / load and pickling come from
// def_serialization in bind_io.h.
#include <nanobind/nanobind.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "bind.h"
#include "bind_common.h"
#include "bind_io.h"
#include "veil/core/error.h"
#include "veil/io/seal.h"
#include "veil/io/serialize.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace veil::bind {

void bind_ciphertext_io(nb::module_& m) {
  // The pythonic record and the saving, shared by ciphertext_to_bytes and _to_buffer.
  auto save_with_info = [](const Ciphertext& c, nb::handle length, bool complex_values,
                           const std::string& compression, std::optional<bool> seeded, int level) {
    const io::CiphertextInfo info{true, complex_values,
                                  static_cast<std::uint32_t>(size_arg(length, "length", UINT32_MAX))};
    const io::SaveOptions o = save_options(compression, seeded, level);
    nb::gil_scoped_release release;
    return io::save(c, o, info);
  };
  m.def(
      "ciphertext_to_buffer",
      [save_with_info](const Ciphertext& c, nb::handle length, bool complex_values) {
        return to_numpy(save_with_info(c, length, complex_values, "none", std::nullopt, 3));
      },
      "ct"_a, "length"_a, "complex_values"_a = false,
      "ciphertext_to_bytes(ct, length, complex_values, 'none') as a uint8 numpy "
      "array that owns the saved bytes (no copy into a bytes object): what pickling hands to "
      "protocol 5 as an out-of-band buffer (Ray's object store, multiprocessing).");
  m.def(
      "ciphertext_to_bytes",
      [save_with_info](const Ciphertext& c, nb::handle length, bool complex_values,
                       const std::string& compression, std::optional<bool> seeded, int level) {
        return to_py(save_with_info(c, length, complex_values, compression, seeded, level));
      },
      "ct"_a, "length"_a, "complex_values"_a = false, "compression"_a = "zstd",
      "seeded"_a.none() = nb::none(), "level"_a = 3,
      "ct.to_bytes(...) with the pythonic record in the descriptor (io::CiphertextInfo): the "
      "encrypted length (<= N/2 slots for CKKS, N for BFV/BGV) and whether the values are "
      "complex (CKKS only). ValueError naming `length` or `complex_values` otherwise.");
  m.def(
      "ciphertext_info",
      [](nb::handle data) -> nb::object {
        PyBytes bytes(data, "data");
        const io::CiphertextInfo info = io::read_ciphertext_info(bytes.view());
        if (!info.recorded) return nb::none();
        return nb::make_tuple(info.length, info.complex_values);
      },
      "data"_a,
      "(length, complex_values) recorded in Veil-format ciphertext bytes by ciphertext_to_bytes, "
      "or None for bytes without the record (written by RawCiphertext.to_bytes or before the "
      "record existed). Checks the header and descriptor only; ValueError naming the field.");
}

/// veil._core.seal_*: SEAL 4.x wire format (io/seal.h).
void bind_seal(nb::module_& m) {
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
