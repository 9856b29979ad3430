// veil._core's data objects: Plaintext and Ciphertext (the pythonic layer's RawCiphertext), with
// their serialization (bind_io.h).
#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>

#include "bind.h"
#include "bind_common.h"
#include "bind_io.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/core/error.h"
#include "veil/rlwe/checks.h"
#include "veil/rlwe/plaintext.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace veil::bind {

void bind_data(nb::module_& m) {
  auto pt_cls = nb::class_<Plaintext>(m, "Plaintext")
      .def_prop_ro("device", [](const Plaintext& p) { return p.device().str(); })
      .def_prop_ro("nbytes", [](const Plaintext& p) { return p.buffer().bytes(); },
                   "Bytes of memory the plaintext's words take on its device.")
      .def("__repr__", [](const Plaintext& p) {
             if (p.empty()) return std::string("veil.Plaintext(empty)");
             std::string extra = ", level=" + std::to_string(p.level()) +
                                 ", ntt_form=" + (p.is_ntt_form() ? "True" : "False");
             if (p.context()->scheme() == SchemeType::ckks) extra += ", scale=" + scale_repr(p.scale());
             return key_repr("Plaintext", p, p.buffer().bytes(), extra);
           })
      .def_prop_rw("scale", &Plaintext::scale, [](Plaintext& p, nb::handle v) {
            const double s = real_arg(v, "scale");
            if (p.empty()) throw InvalidArgument("plain: is empty");
            check_ckks_scale(*p.context(), s, p.level(), "scale");
            p.set_scale(s);
          })
      .def_prop_ro("level", &Plaintext::level)
      .def_prop_ro("is_ntt_form", &Plaintext::is_ntt_form)
      .def("to", [](const Plaintext& p, const std::string& d) { return p.to(dev_of(d)); },
           "device"_a, nb::call_guard<Release>())
      .def("data", [](const Plaintext& p) { return to_numpy(p.buffer().to_host()); },
           "Raw words (copy to the host).")
      .def_static("from_coefficients", [](const Ctx& c, const U64Array& v, const std::string& d) {
             return make_plaintext(c, from_numpy<std::uint64_t>(v), dev_of(d));
           }, "context"_a, "coefficients"_a, "device"_a = "cpu",
           "BFV/BGV plaintext without batching: the polynomial sum_i coefficients[i] x^i "
           "(at most N coefficients, each < t). ValueError naming `coefficients` otherwise.")
      .def("coefficients", [](const Plaintext& p) { return to_numpy(plaintext_coefficients(p)); },
           "The N coefficients mod t of a BFV/BGV coefficient-form plaintext (uint64).");
  def_serialization<Plaintext>(pt_cls, "plaintext", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_plaintext(v, c, d, o);
  });
  auto ct_cls = nb::class_<Ciphertext>(m, "Ciphertext")
      .def("__copy__", [](const Ciphertext& c) { return Ciphertext(c); })
      .def_prop_ro("nbytes", [](const Ciphertext& c) { return c.buffer().bytes(); },
                   "Bytes of memory the ciphertext's words take on its device.")
      .def("__repr__", [](const Ciphertext& c) {
             if (c.empty()) return std::string("veil.RawCiphertext(empty)");
             std::string extra = ", size=" + std::to_string(c.size()) + ", level=" + std::to_string(c.level());
             if (c.context()->scheme() == SchemeType::ckks) extra += ", scale=" + scale_repr(c.scale());
             return key_repr("RawCiphertext", c, c.buffer().bytes(), extra);
           })
      .def_prop_ro("size", &Ciphertext::size)
      .def_prop_ro("level", &Ciphertext::level)
      .def_prop_ro("is_ntt_form", &Ciphertext::is_ntt_form)
      .def_prop_rw("scale", &Ciphertext::scale, [](Ciphertext& c, nb::handle v) {
            const double s = real_arg(v, "scale");
            if (c.empty()) throw InvalidArgument("encrypted: is empty");
            if (c.context()->scheme() != SchemeType::ckks) {
              throw InvalidArgument("scale: only CKKS ciphertexts carry a scale");
            }
            check_ckks_scale(*c.context(), s, c.level(), "scale");
            c.set_scale(s);
          }, "CKKS scale in [1, Q_level) (set it to align nearly-equal scales explicitly). "
             "ValueError naming `scale` otherwise.")
      .def_prop_ro("key_set_id", &Ciphertext::key_id,
                   "The key set (secret key) this ciphertext belongs to (0: unknown).")
      .def_prop_ro("correction_factor", &Ciphertext::correction_factor)
      .def_prop_ro("device", [](const Ciphertext& c) { return c.device().str(); })
      .def_prop_ro("parameter_hash", [](const Ciphertext& c) { return c.context()->parameter_hash(); })
      .def("to", [](const Ciphertext& c, const std::string& d) { return c.to(dev_of(d)); },
           "device"_a, nb::call_guard<Release>())
      .def("data", [](const Ciphertext& c) { return to_numpy(c.buffer().to_host()); },
           "Raw words [size][level+1][N] (copy to the host).");
  def_serialization<Ciphertext>(ct_cls, "ciphertext", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_ciphertext(v, c, d, o);
  });
  // The pythonic layer's "same context" check is this one (rlwe/checks.h check_compatible), with
  // the user's argument name: Python forwards, the core checks.
  m.def("check_same_context", [](const Ctx& c, const Ciphertext& ct, const std::string& what) {
        if (!c) throw InvalidArgument("context: is empty");
        check_compatible(*c, ct.device(), ct.context(), ct.device(), what.c_str());
      }, "context"_a, "ciphertext"_a, "what"_a,
      "Checks that `ciphertext` belongs to `context`'s parameters and word size (the core's one "
      "check, rlwe/checks.h check_compatible). ValueError naming `what` otherwise: empty, or "
      "another context (the message gives both parameter sets: scheme, poly_modulus_degree, "
      "primes, plain_modulus), or another word size.");
}

}  // namespace veil::bind
