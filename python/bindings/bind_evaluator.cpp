// veil._core's Evaluator: the homomorphic operations of BFV, BGV and CKKS (api/evaluator.h).
#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>
#include <vector>

#include "bind.h"
#include "bind_common.h"
#include "veil/api/evaluator.h"
#include "veil/core/error.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace veil::bind {

void bind_evaluator(nb::module_& m) {
  nb::class_<Evaluator>(m, "Evaluator")
      .def("__repr__", [](const Evaluator& o) { return "veil.Evaluator(" + context_repr(*o.context()).substr(5) + ")"; })
      .def("__init__", [](Evaluator* e, const Ctx& c) { new (e) Evaluator(c); }, "context"_a)
      .def("add", &Evaluator::add, "encrypted1"_a, "encrypted2"_a, nb::call_guard<Release>())
      .def("add_inplace", &Evaluator::add_inplace, "encrypted1"_a, "encrypted2"_a, nb::call_guard<Release>())
      .def("sub", &Evaluator::sub, "encrypted1"_a, "encrypted2"_a, nb::call_guard<Release>())
      .def("sub_inplace", &Evaluator::sub_inplace, "encrypted1"_a, "encrypted2"_a, nb::call_guard<Release>())
      .def("negate", &Evaluator::negate, "encrypted"_a, nb::call_guard<Release>())
      .def("add_many", &Evaluator::add_many, "encrypteds"_a, nb::call_guard<Release>())
      .def("add_plain", &Evaluator::add_plain, "encrypted"_a, "plain"_a, nb::call_guard<Release>())
      .def("sub_plain", &Evaluator::sub_plain, "encrypted"_a, "plain"_a, nb::call_guard<Release>())
      .def("multiply_plain", &Evaluator::multiply_plain, "encrypted"_a, "plain"_a, nb::call_guard<Release>())
      .def("multiply_plain_inplace", &Evaluator::multiply_plain_inplace, "encrypted"_a, "plain"_a,
           nb::call_guard<Release>())
      .def("multiply", &Evaluator::multiply, "encrypted1"_a, "encrypted2"_a, nb::call_guard<Release>())
      .def("square", &Evaluator::square, "encrypted"_a, nb::call_guard<Release>())
      .def("relinearize", &Evaluator::relinearize, "encrypted"_a, "relin_keys"_a, nb::call_guard<Release>())
      .def("relinearize_inplace", &Evaluator::relinearize_inplace, "encrypted"_a, "relin_keys"_a,
           nb::call_guard<Release>())
      .def("multiply_many", &Evaluator::multiply_many, "encrypteds"_a, "relin_keys"_a, nb::call_guard<Release>())
      .def("exponentiate", [](const Evaluator& ev, const Ciphertext& c, nb::handle e, const RelinKeys& rk) {
             const std::uint64_t exponent = u64_arg(e, "exponent", 1);
             Release r;
             return ev.exponentiate(c, exponent, rk);
           }, "encrypted"_a, "exponent"_a, "relin_keys"_a)
      .def("apply_galois", [](const Evaluator& ev, const Ciphertext& c, nb::handle e, const GaloisKeys& gk) {
             const u32 elt = static_cast<u32>(u64_arg(e, "galois_elt", 0, UINT32_MAX));
             Release r;
             return ev.apply_galois(c, elt, gk);
           }, "encrypted"_a, "galois_elt"_a, "galois_keys"_a)
      .def("rotate_rows", [](const Evaluator& ev, const Ciphertext& c, nb::handle s, const GaloisKeys& gk) {
             const int steps = int_arg(s, "steps");
             Release r;
             return ev.rotate_rows(c, steps, gk);
           }, "encrypted"_a, "steps"_a, "galois_keys"_a)
      .def("rotate_columns", &Evaluator::rotate_columns, "encrypted"_a, "galois_keys"_a, nb::call_guard<Release>())
      .def("rotate_many", [](const Evaluator& ev, const Ciphertext& c, nb::handle s, const GaloisKeys& gk) {
             auto steps = list_arg(s, "steps", "integers", [](nb::handle x) { return int_arg(x, "steps"); });
             Release r;
             return ev.rotate_many(c, steps, gk);
           }, "encrypted"_a, "steps"_a, "galois_keys"_a)
      .def("rotate_vector", [](const Evaluator& ev, const Ciphertext& c, nb::handle s, const GaloisKeys& gk) {
             const int steps = int_arg(s, "steps");
             Release r;
             return ev.rotate_vector(c, steps, gk);
           }, "encrypted"_a, "steps"_a, "galois_keys"_a)
      .def("conjugate", &Evaluator::conjugate, "encrypted"_a, "galois_keys"_a, nb::call_guard<Release>())
      .def("mod_switch_to_next", &Evaluator::mod_switch_to_next, "encrypted"_a, nb::call_guard<Release>())
      .def("mod_switch_to", [](const Evaluator& ev, const Ciphertext& c, nb::handle lv) {
             const std::size_t level = size_arg(lv, "level");
             Release r;
             return ev.mod_switch_to(c, level);
           }, "encrypted"_a, "level"_a)
      .def("mod_switch_plain_to", [](const Evaluator& ev, const Plaintext& p, nb::handle lv) {
             const std::size_t level = size_arg(lv, "level");
             Release r;
             return ev.mod_switch_to(p, level);
           }, "plain"_a, "level"_a)
      .def("rescale_to_next", &Evaluator::rescale_to_next, "encrypted"_a, nb::call_guard<Release>())
      .def("switch_key", &Evaluator::switch_key, "encrypted"_a, "switching_key"_a,
           nb::call_guard<Release>(), "Key switching to the switching key's target secret.")
      .def("mod_raise", &Evaluator::mod_raise, "encrypted"_a, nb::call_guard<Release>(),
           "CKKS ModRaise: from a level in q_0's rescale block to the top level (CHKKS 2018).")
      .def("multiply_plain_sum", [](const Evaluator& ev, nb::handle cts, nb::handle pts) {
             // The references keep the operands alive while the GIL is released; they are
             // declared before `r`, so they are dropped after the GIL is taken back.
             std::vector<nb::object> keep;
             auto cs = list_arg(cts, "encrypted", "Ciphertext", [&](nb::handle x) {
               if (!nb::isinstance<Ciphertext>(x)) {
                 throw TypeMismatch("encrypted: expected a sequence of Ciphertext");
               }
               keep.push_back(nb::borrow(x));
               return &nb::cast<const Ciphertext&>(x);
             });
             auto ps = list_arg(pts, "plain", "Plaintext", [&](nb::handle x) {
               if (!nb::isinstance<Plaintext>(x)) {
                 throw TypeMismatch("plain: expected a sequence of Plaintext");
               }
               keep.push_back(nb::borrow(x));
               return &nb::cast<const Plaintext&>(x);
             });
             Release r;
             return ev.multiply_plain_sum(cs, ps);
           }, "encrypted"_a, "plain"_a,
           "sum_i encrypted[i] * plain[i] in one pass (CKKS: linear transforms' inner sums; "
           "BFV/BGV: one NTT-form accumulator, plaintexts optionally from transform_to_ntt).")
      .def("transform_to_ntt",
           nb::overload_cast<const Plaintext&, std::size_t>(&Evaluator::transform_to_ntt,
                                                            nb::const_),
           "plain"_a, "level"_a, nb::call_guard<Release>(),
           "BFV/BGV: the plaintext lifted to Q_level and in NTT form, for multiply_plain and "
           "multiply_plain_sum at that level without per-call transforms (SEAL's "
           "transform_to_ntt(plain, parms_id)).")
      .def("transform_to_ntt",
           nb::overload_cast<const Ciphertext&>(&Evaluator::transform_to_ntt, nb::const_),
           "encrypted"_a, nb::call_guard<Release>(),
           "BFV: the ciphertext in NTT form (SEAL's transform_to_ntt(encrypted)); add, sub, "
           "negate, multiply_plain and multiply_plain_sum keep it there, every other operation "
           "asks for transform_from_ntt first.")
      .def("transform_to_ntt_inplace", &Evaluator::transform_to_ntt_inplace, "encrypted"_a,
           nb::call_guard<Release>())
      .def("transform_from_ntt", &Evaluator::transform_from_ntt, "encrypted"_a,
           nb::call_guard<Release>(), "BFV: the ciphertext back in coefficient form.")
      .def("transform_from_ntt_inplace", &Evaluator::transform_from_ntt_inplace, "encrypted"_a,
           nb::call_guard<Release>())
      .def("scalar_combination", [](const Evaluator& ev, nb::handle cts, nb::handle vals,
                                     nb::handle c, nb::handle s, nb::handle lv) {
             std::vector<nb::object> keep;  // alive while the GIL is released (see above)
             auto cs = list_arg(cts, "encrypted", "Ciphertext", [&](nb::handle x) {
               if (!nb::isinstance<Ciphertext>(x)) {
                 throw TypeMismatch("encrypted: expected a sequence of Ciphertext");
               }
               keep.push_back(nb::borrow(x));
               return &nb::cast<const Ciphertext&>(x);
             });
             auto vs = reals_arg(vals, "values", /*quote=*/false);
             const double constant = real_arg(c, "constant", /*quote=*/false);
             const double scale = real_arg(s, "scale");
             const std::size_t level = size_arg(lv, "level");
             Release r;
             return ev.scalar_combination(cs, vs, constant, scale, level);
           }, "encrypted"_a, "values"_a, "constant"_a, "scale"_a, "level"_a,
           "CKKS: constant + sum_i values[i] * encrypted[i] at `level` and `scale`, one pass.")
      .def("multiply_scalar", [](const Evaluator& ev, const Ciphertext& c, nb::handle v,
                                  nb::handle s) {
             const double value = real_arg(v, "value", /*quote=*/false);
             const double scale = real_arg(s, "scale");
             Release r;
             return ev.multiply_scalar(c, value, scale);
           }, "encrypted"_a, "value"_a, "scale"_a,
           "CKKS: encrypted * value (a real constant at `scale`; the scale multiplies).")
      .def("add_scalar", [](const Evaluator& ev, const Ciphertext& c, nb::handle v) {
             const double value = real_arg(v, "value", /*quote=*/false);
             Release r;
             return ev.add_scalar(c, value);
           }, "encrypted"_a, "value"_a, "CKKS: encrypted + value (a real constant).")
      .def("multiply_monomial", [](const Evaluator& ev, const Ciphertext& c, nb::handle k) {
             const std::size_t e = size_arg(k, "k");
             Release r;
             return ev.multiply_monomial(c, e);
           }, "encrypted"_a, "k"_a, "CKKS: encrypted * X^k, exact (k < 2N).")
      .def("relinearize_rescale", &Evaluator::relinearize_rescale, "encrypted"_a, "relin_keys"_a,
           nb::call_guard<Release>(),
           "CKKS: relinearize and rescale in one key switch (ModDown by P fused with the rescale).")
      .def("multiply_relinearize_rescale", &Evaluator::multiply_relinearize_rescale,
           "encrypted1"_a, "encrypted2"_a, "relin_keys"_a, nb::call_guard<Release>(),
           "CKKS: multiply, then relinearize_rescale.");
}

}  // namespace veil::bind
