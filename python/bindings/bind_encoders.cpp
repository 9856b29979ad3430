// veil._core's encoders: BatchEncoder (BFV/BGV slots) and CKKSEncoder, from numpy arrays or from
// any 1-D array on any device through DLPack (the array helpers of bind_common.h).
#include <nanobind/nanobind.h>

#include <complex>
#include <cstdint>
#include <string>
#include <vector>

#include "bind.h"
#include "bind_common.h"
#include "veil/bfv/batch_encoder.h"
#include "veil/ckks/encoder.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace veil::bind {

void bind_encoders(nb::module_& m) {
  nb::class_<BatchEncoder>(m, "BatchEncoder", "N integers mod t <-> one plaintext (2 x N/2 slots).")
      .def("__init__", [](BatchEncoder* e, const Ctx& c) { new (e) BatchEncoder(c); }, "context"_a)
      .def_prop_ro("slot_count", &BatchEncoder::slot_count)
      .def("__repr__", [](const BatchEncoder& e) {
             return "veil.BatchEncoder(slot_count=" + std::to_string(e.slot_count()) + ")";
           })
      .def_prop_ro("row_size", &BatchEncoder::row_size)
      .def("encode_unsigned", [](const BatchEncoder& e, const U64Array& v, const std::string& d) {
             return e.encode(v.data(), v.shape(0), dev_of(d));
           }, "values"_a, "device"_a = "cpu")
      .def("encode_signed", [](const BatchEncoder& e, const I64Array& v, const std::string& d) {
             return e.encode_signed(from_numpy<std::int64_t>(v), dev_of(d));
           }, "values"_a, "device"_a = "cpu")
      .def("decode_unsigned", [](const BatchEncoder& e, const Plaintext& p) { return to_numpy(e.decode(p)); }, "plain"_a)
      .def("decode_signed", [](const BatchEncoder& e, const Plaintext& p) { return to_numpy(e.decode_signed(p)); }, "plain"_a)
      .def("encode_array", [](const BatchEncoder& e, const AnyRoArray& v) {
             if (v.dtype() == nb::dtype<std::int64_t>()) return e.encode_signed_view(array_view<const std::int64_t>(v, "values"));
             if (v.dtype() == nb::dtype<std::uint64_t>()) return e.encode_view(array_view<const std::uint64_t>(v, "values"));
             throw nb::type_error(("values: expected an int64 or uint64 array, got " + dtype_name(v.dtype())).c_str());
           }, "values"_a.noconvert(),
           "Encodes a 1-D int64 (signed) or uint64 array of at most N values on any device (a CUDA "
           "array through DLPack stays on its GPU: no host copy); the plaintext lives there.")
      .def("decode_into", [](const BatchEncoder& e, const Plaintext& p, const AnyArray& out) {
             if (out.dtype() == nb::dtype<std::int64_t>()) return e.decode_signed_view(p, array_view<std::int64_t>(out, "out"));
             if (out.dtype() == nb::dtype<std::uint64_t>()) return e.decode_view(p, array_view<std::uint64_t>(out, "out"));
             throw nb::type_error(("out: expected an int64 or uint64 array, got " + dtype_name(out.dtype())).c_str());
           }, "plain"_a, "out"_a.noconvert(),
           "Decodes into `out`: N int64 (centered) or uint64 values on the plaintext's device.");

  nb::class_<CKKSEncoder>(m, "CKKSEncoder",
                          "N/2 complex slots <-> one plaintext at a scale and level (CKKS §3.1).")
      .def("__init__", [](CKKSEncoder* e, const Ctx& c) { new (e) CKKSEncoder(c); }, "context"_a)
      .def_prop_ro("slot_count", &CKKSEncoder::slot_count)
      .def("__repr__", [](const CKKSEncoder& e) {
             return "veil.CKKSEncoder(slot_count=" + std::to_string(e.slot_count()) + ")";
           })
      .def("encode_complex", [](const CKKSEncoder& e, const C128Array& v, nb::handle scale, nb::handle level,
                                const std::string& d) {
             return e.encode(std::vector<std::complex<double>>(v.data(), v.data() + v.shape(0)),
                             real_arg(scale, "scale"), size_arg(level, "level"), dev_of(d));
           }, "values"_a, "scale"_a, "level"_a, "device"_a = "cpu")
      .def("encode_real", [](const CKKSEncoder& e, const F64Array& v, nb::handle scale, nb::handle level,
                             const std::string& d) {
             return e.encode(v.data(), v.shape(0), real_arg(scale, "scale"),
                             size_arg(level, "level"), dev_of(d));
           }, "values"_a, "scale"_a, "level"_a, "device"_a = "cpu")
      .def("encode_scalar", [](const CKKSEncoder& e, std::complex<double> v, nb::handle scale, nb::handle level,
                               const std::string& d) {
             return e.encode(v, real_arg(scale, "scale"), size_arg(level, "level"), dev_of(d));
           }, "value"_a, "scale"_a, "level"_a, "device"_a = "cpu")
      .def("decode", [](const CKKSEncoder& e, const Plaintext& p) { return to_numpy(e.decode(p)); }, "plain"_a)
      .def("encode_array", [](const CKKSEncoder& e, const AnyRoArray& v, nb::handle scale, nb::handle level) {
             const double s = real_arg(scale, "scale");
             const std::size_t l = size_arg(level, "level");
             if (v.dtype() == nb::dtype<double>()) return e.encode_view(array_view<const double>(v, "values"), s, l);
             if (v.dtype() == nb::dtype<std::complex<double>>())
               return e.encode_view(array_view<const std::complex<double>>(v, "values"), s, l);
             throw nb::type_error(("values: expected a float64 or complex128 array, got " + dtype_name(v.dtype())).c_str());
           }, "values"_a.noconvert(), "scale"_a, "level"_a,
           "Encodes a 1-D float64 or complex128 array of at most N/2 slots on any device (a CUDA "
           "array through DLPack stays on its GPU: no host copy); the plaintext lives there.")
      .def("decode_into", [](const CKKSEncoder& e, const Plaintext& p, const AnyArray& out) {
             if (out.dtype() == nb::dtype<double>()) return e.decode_view(p, array_view<double>(out, "out"));
             if (out.dtype() == nb::dtype<std::complex<double>>())
               return e.decode_view(p, array_view<std::complex<double>>(out, "out"));
             throw nb::type_error(("out: expected a float64 or complex128 array, got " + dtype_name(out.dtype())).c_str());
           }, "plain"_a, "out"_a.noconvert(),
           "Decodes into `out`: N/2 complex128 slots (or float64 real parts) on the plaintext's device.");
}

}  // namespace veil::bind
