// Non-polynomial functions on CKKS ciphertexts in veil._core: the
// composite-polynomial sign and what is built on it (compare, maximum, minimum,
// relu; Cheon et al., Asiacrypt 2020) and the inverse and square roots
// (Goldschmidt; Newton) of cpp/veil/circuits/comparison.h and inverse.h. They
// sit in _core itself so that the one generated stub (_core.pyi) types them.
// The pythonic methods (ct.sign, ct.relu, ...) are in
// python/veil/_functions.py.
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <string>

#include "bind.h"
#include "bind_common.h"
#include "veil/circuits/comparison.h"
#include "veil/circuits/inverse.h"
#include "veil/core/error.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace veil::bind {

namespace {

using namespace veil::circuits;

// Argument checks: the *_arg family of bind_common.h. The points a plan's scalar map is evaluated
// at are data values: never quoted in a message.

void def_sign(nb::module_& m) {
  nb::class_<SignPlan>(m, "SignPlan",
                       "The composite sign approximation f_n^(d_f) o g_n^(d_g) of Cheon et al. "
                       "(Asiacrypt 2020) for |x| in [epsilon, 1] (circuits/comparison.h).")
      .def_ro("n", &SignPlan::n, "f_n and g_n have degree 2n + 1.")
      .def_ro("g_stages", &SignPlan::g_stages, "d_g: stages of g_n, applied first.")
      .def_ro("f_stages", &SignPlan::f_stages, "d_f: stages of f_n, applied after.")
      .def_ro("epsilon", &SignPlan::epsilon)
      .def_ro("bits", &SignPlan::bits)
      .def_ro("scalar_bits", &SignPlan::scalar_bits,
              "-log2 max |1 - F(x)| over [epsilon, 1] of the scalar map F.")
      .def_prop_ro("depth", &SignPlan::depth, "Rescale levels sign takes.")
      .def(
          "part",
          [](const SignPlan& p, nb::handle g, nb::handle f) {
            SignPlan q = p;
            q.g_stages = size_arg(g, "g_stages", 64);
            q.f_stages = size_arg(f, "f_stages", 64);
            if (q.g_stages + q.f_stages == 0)
              throw InvalidArgument("g_stages, f_stages: expected at least one stage");
            return q;
          },
          "g_stages"_a, "f_stages"_a,
          "The same plan restricted to g_stages stages of g_n then f_stages of f_n: the "
          "composite split at a bootstrap (veil._functions).")
      .def(
          "scalar",
          [](const SignPlan& p, nb::handle x) {
            return p.scalar(real_arg(x, "x", /*quote=*/false));
          },
          "x"_a, "F(x) in double precision.");
  m.def(
      "plan_sign",
      [](nb::handle epsilon, nb::handle bits, nb::handle n) {
        return plan_sign(real_arg(epsilon, "epsilon"), int_arg(bits, "bits", 0, 64),
                         size_arg(n, "n", 64));
      },
      "epsilon"_a, "bits"_a, "n"_a = 3,
      "The smallest composite (d_g, d_f) within 2^-(bits + 1) of sign(x) for "
      "|x| in "
      "[epsilon, 1].");
  m.def(
      "sign_f_coefficients",
      [](nb::handle n) { return sign_f_coefficients(size_arg(n, "n", 64)); }, "n"_a,
      "Power-basis coefficients of f_n (lowest degree first).");
  m.def(
      "sign_g_coefficients",
      [](nb::handle n) { return sign_g_coefficients(size_arg(n, "n", 64)); }, "n"_a,
      "Power-basis coefficients of the paper's g_n (lowest degree first).");

  nb::class_<ComparisonEvaluator>(m, "ComparisonEvaluator",
                                  "sign, compare, maximum, minimum and relu on CKKS ciphertexts "
                                  "(circuits/comparison.h).")
      .def(
          "__init__", [](ComparisonEvaluator* p, const Ctx& c) { new (p) ComparisonEvaluator(c); },
          "context"_a)
      .def("sign", &ComparisonEvaluator::sign, "encrypted"_a, "relin_keys"_a, "plan"_a,
           nb::call_guard<Release>(), "sign(x) slot-wise.")
      .def("compare", &ComparisonEvaluator::compare, "a"_a, "b"_a, "relin_keys"_a, "plan"_a,
           nb::call_guard<Release>(), "(sign(a - b) + 1) / 2 slot-wise.")
      .def("maximum", &ComparisonEvaluator::maximum, "a"_a, "b"_a, "relin_keys"_a, "plan"_a,
           nb::call_guard<Release>(), "max(a, b) slot-wise.")
      .def("minimum", &ComparisonEvaluator::minimum, "a"_a, "b"_a, "relin_keys"_a, "plan"_a,
           nb::call_guard<Release>(), "min(a, b) slot-wise.")
      .def("relu", &ComparisonEvaluator::relu, "encrypted"_a, "relin_keys"_a, "plan"_a,
           nb::call_guard<Release>(), "max(x, 0) slot-wise.");
}

void def_inverse(nb::module_& m) {
  nb::class_<InversePlan>(m, "InversePlan",
                          "Goldschmidt's inverse on [a, b] (Cheon et al., Asiacrypt 2019; "
                          "circuits/inverse.h).")
      .def_ro("a", &InversePlan::a)
      .def_ro("b", &InversePlan::b)
      .def_ro("bits", &InversePlan::bits)
      .def_ro("iterations", &InversePlan::iterations)
      .def_ro("scalar_bits", &InversePlan::scalar_bits)
      .def_prop_ro("depth", &InversePlan::depth, "Rescale levels inverse takes.")
      .def(
          "scalar",
          [](const InversePlan& p, nb::handle x) {
            return p.scalar(real_arg(x, "x", /*quote=*/false));
          },
          "x"_a, "The iteration in double precision.");
  m.def(
      "plan_inverse",
      [](nb::handle a, nb::handle b, nb::handle bits) {
        return plan_inverse(real_arg(a, "interval"), real_arg(b, "interval"),
                            int_arg(bits, "bits", 0, 64));
      },
      "a"_a, "b"_a, "bits"_a, "The fewest Goldschmidt iterations for 2^-(bits + 1) on [a, b].");
  nb::class_<InvSqrtPlan>(m, "InvSqrtPlan",
                          "Newton's inverse square root on [a, b] from a Chebyshev initial "
                          "approximation (circuits/inverse.h).")
      .def_ro("a", &InvSqrtPlan::a)
      .def_ro("b", &InvSqrtPlan::b)
      .def_ro("bits", &InvSqrtPlan::bits)
      .def_ro("sqrt", &InvSqrtPlan::sqrt)
      .def_ro("initial_degree", &InvSqrtPlan::initial_degree)
      .def_ro("newton_steps", &InvSqrtPlan::newton_steps)
      .def_ro("scalar_bits", &InvSqrtPlan::scalar_bits)
      .def_prop_ro("depth", &InvSqrtPlan::depth, "Rescale levels the evaluation takes.")
      .def(
          "scalar",
          [](const InvSqrtPlan& p, nb::handle x) {
            return p.scalar(real_arg(x, "x", /*quote=*/false));
          },
          "x"_a, "The scalar map in double precision.");
  m.def(
      "plan_inv_sqrt",
      [](nb::handle a, nb::handle b, nb::handle bits, bool sqrt) {
        return plan_inv_sqrt(real_arg(a, "interval"), real_arg(b, "interval"),
                             int_arg(bits, "bits", 0, 64), sqrt);
      },
      "a"_a, "b"_a, "bits"_a, "sqrt"_a = false,
      "The initial degree and Newton steps of least depth for 2^-(bits + 1) on "
      "[a, b].");

  nb::class_<InverseEvaluator>(m, "InverseEvaluator",
                               "inverse, inv_sqrt and sqrt on CKKS ciphertexts "
                               "(circuits/inverse.h).")
      .def(
          "__init__", [](InverseEvaluator* p, const Ctx& c) { new (p) InverseEvaluator(c); },
          "context"_a)
      .def("inverse", &InverseEvaluator::inverse, "encrypted"_a, "relin_keys"_a, "plan"_a,
           nb::call_guard<Release>(), "1/x slot-wise.")
      .def("inv_sqrt", &InverseEvaluator::inv_sqrt, "encrypted"_a, "relin_keys"_a, "plan"_a,
           nb::call_guard<Release>(), "1/sqrt(x) slot-wise.")
      .def("sqrt", &InverseEvaluator::sqrt, "encrypted"_a, "relin_keys"_a, "plan"_a,
           nb::call_guard<Release>(), "sqrt(x) slot-wise.");
}

} // namespace

void bind_comparison(nb::module_& m) {
  def_sign(m);
  def_inverse(m);
}

} // namespace veil::bind
