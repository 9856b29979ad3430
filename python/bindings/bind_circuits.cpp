// The C++ circuits layer (cpp/veil/circuits) in veil._core, bootstrapping aside
// (bind_bootstrap.cpp): linear transforms, the special FFT's factors and CoeffToSlot /
// SlotToCoeff levels, CKKS polynomial evaluation and exact-scale arithmetic (ScaleOps). They sit
// in _core itself rather than a submodule so that the one generated stub (_core.pyi) types them.
// tests/python/test_circuits.py compares them with the pythonic oracle (python/veil/_bootstrap.py).

#include <nanobind/ndarray.h>
#include <nanobind/stl/complex.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bind.h"
#include "bind_common.h"
#include "veil/circuits/dft.h"
#include "veil/circuits/linear_transform.h"
#include "veil/circuits/polynomial.h"
#include "veil/circuits/scale_ops.h"
#include "veil/core/error.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace veil::bind {

namespace {

using namespace veil::circuits;
using cplx = std::complex<double>;

// Argument checks: the *_arg family of bind_common.h.

/// {k: complex128 array of n entries} -> Diagonals (the dict's order is kept).
Diagonals diagonals_of_dict(nb::handle h, std::size_t n, const char* name) {
  if (!PyDict_Check(h.ptr())) {
    throw TypeMismatch(std::string(name) + ": expected dicts {k: complex128 array}");
  }
  Diagonals d(n);
  for (auto [k, v] : nb::borrow<nb::dict>(h)) {
    const std::int64_t key =
        i64_arg(k, name, -static_cast<std::int64_t>(n), static_cast<std::int64_t>(n) - 1);
    C128Array a;
    if (!nb::try_cast(v, a)) {
      throw TypeMismatch(std::string(name) + ": expected 1-D complex128 arrays as diagonals");
    }
    if (a.shape(0) != n) {
      throw InvalidArgument(std::string(name) + ": expected diagonals of " + std::to_string(n) +
                            " entries, got " + std::to_string(a.shape(0)));
    }
    d.add(key, std::vector<cplx>(a.data(), a.data() + n));
  }
  return d;
}

nb::dict dict_of_diagonals(const Diagonals& d) {
  nb::dict out;
  for (std::size_t k : d.keys()) out[nb::int_(k)] = to_numpy(d.at(k));
  return out;
}

nb::list stages_list(const std::vector<Diagonals>& stages) {
  nb::list out;
  for (const Diagonals& d : stages) out.append(dict_of_diagonals(d));
  return out;
}

/// [[{k: array}]] (outputs x inputs) -> matrices of Diagonals.
std::vector<std::vector<Diagonals>> matrices_of(nb::handle h, std::size_t n) {
  if (!PySequence_Check(h.ptr())) throw TypeMismatch("matrices: expected a list of lists of dicts");
  std::vector<std::vector<Diagonals>> out;
  for (nb::handle row : nb::borrow<nb::sequence>(h)) {
    if (!PySequence_Check(row.ptr()) || PyDict_Check(row.ptr())) {
      throw TypeMismatch("matrices: expected a list of lists of dicts");
    }
    std::vector<Diagonals> r;
    for (nb::handle m : nb::borrow<nb::sequence>(row))
      r.push_back(diagonals_of_dict(m, n, "matrices"));
    out.push_back(std::move(r));
  }
  return out;
}

nb::list levels_list(const std::vector<DftLevel>& levels) {
  nb::list out;
  for (const DftLevel& lv : levels) {
    nb::list rows;
    for (const auto& row : lv.matrices) {
      nb::list r;
      for (const Diagonals& d : row) r.append(dict_of_diagonals(d));
      rows.append(r);
    }
    out.append(nb::make_tuple(rows, lv.level));
  }
  return out;
}

void def_transforms(nb::module_& m) {
  m.def(
      "special_fft_stages",
      [](nb::handle n) { return stages_list(special_fft_stages(size_arg(n, "n", 1u << 20))); },
      "n"_a, "The radix-2 stages of the special FFT as [{k: complex128 diagonal}].");
  m.def(
      "special_ifft_stages",
      [](nb::handle n) { return stages_list(special_ifft_stages(size_arg(n, "n", 1u << 20))); },
      "n"_a, "The inverse stages, in the same order.");

  nb::class_<LinearTransform>(m, "LinearTransform",
                              "Plaintext-matrix products by diagonal BSGS with hoisted baby steps "
                              "(circuits/linear_transform.h).")
      .def(
          "__init__",
          [](LinearTransform* t, const CKKSEncoder& enc, nb::handle mats, nb::handle slots,
             nb::handle level, nb::handle s_in, nb::handle s_out, const std::string& dev) {
            const std::size_t n = size_arg(slots, "slots", 1u << 20);
            auto m = matrices_of(mats, n);
            const std::size_t lv = size_arg(level, "level", 4096);
            const double a = real_arg(s_in, "scale_in"), b = real_arg(s_out, "scale_out");
            const Device d = Device::parse(dev);
            Release r;
            new (t) LinearTransform(enc, m, n, lv, a, b, d);
          },
          "encoder"_a, "matrices"_a, "slots"_a, "level"_a, "scale_in"_a, "scale_out"_a,
          "device"_a = "cpu",
          "matrices: [outputs][inputs] dicts {k: complex128 diagonal of `slots` entries}.")
      .def(
          "apply",
          [](const LinearTransform& t, const Evaluator& ev, nb::handle inputs,
             const GaloisKeys& gk) {
            std::vector<nb::object> keep;
            std::vector<const Ciphertext*> cts;
            if (!PySequence_Check(inputs.ptr()))
              throw TypeMismatch("inputs: expected a list of Ciphertext");
            for (nb::handle x : nb::borrow<nb::sequence>(inputs)) {
              if (!nb::isinstance<Ciphertext>(x))
                throw TypeMismatch("inputs: expected a list of Ciphertext");
              keep.push_back(nb::borrow(x));
              cts.push_back(&nb::cast<const Ciphertext&>(x));
            }
            Release r;
            return t.apply(ev, cts, gk);
          },
          "evaluator"_a, "inputs"_a, "galois_keys"_a)
      .def_prop_ro("rotation_steps", &LinearTransform::rotation_steps)
      .def_prop_ro("level", &LinearTransform::level)
      .def_prop_ro("slots", &LinearTransform::slots)
      .def_prop_ro("inputs", &LinearTransform::inputs)
      .def_prop_ro("outputs", &LinearTransform::outputs)
      .def_prop_ro("baby_step", &LinearTransform::baby_step)
      .def_prop_ro("plaintext_scale", &LinearTransform::plaintext_scale)
      .def_prop_ro("plaintext_bytes", &LinearTransform::plaintext_bytes)
      .def("plaintexts", &LinearTransform::plaintexts,
           "Copies of the encoded diagonals in their full form, in the order apply() uses them.")
      .def_prop_ro("plaintext_shifts", &LinearTransform::plaintext_shifts,
                   "Per diagonal, the shift it is stored with as one period (0: full form).");

  m.def(
      "coeff_to_slot_levels",
      [](nb::handle n, nb::handle levels, nb::handle top, nb::handle c, const Ctx& ctx) {
        return levels_list(
            coeff_to_slot_levels(size_arg(n, "n", 1u << 20), size_arg(levels, "levels", 64),
                                 size_arg(top, "top_level", 4096), real_arg(c, "c"), *ctx));
      },
      "n"_a, "levels"_a, "top_level"_a, "c"_a, "context"_a,
      "CoeffToSlot's levels: [(matrices, level)] with matrices [[{k: diagonal}]].");
  m.def(
      "slot_to_coeff_levels",
      [](nb::handle n, nb::handle levels, nb::handle input, const Ctx& ctx) {
        return levels_list(slot_to_coeff_levels(size_arg(n, "n", 1u << 20),
                                                size_arg(levels, "levels", 64),
                                                size_arg(input, "input_level", 4096), *ctx));
      },
      "n"_a, "levels"_a, "input_level"_a, "context"_a, "SlotToCoeff's levels.");

  nb::class_<PolynomialEvaluator>(m, "PolynomialEvaluator",
                                  "Chebyshev-basis polynomials on CKKS ciphertexts by baby-step "
                                  "giant-step with exact scales (circuits/polynomial.h).")
      .def(
          "__init__", [](PolynomialEvaluator* p, const Ctx& c) { new (p) PolynomialEvaluator(c); },
          "context"_a)
      .def(
          "evaluate_chebyshev",
          [](const PolynomialEvaluator& p, const Ciphertext& ct, nb::handle coeffs,
             const RelinKeys& rk, nb::handle domain) {
            const auto c = reals_arg(coeffs, "coeffs", /*quote=*/false);
            double a = -1.0, b = 1.0;
            if (!domain.is_none()) {
              const auto ab = reals_arg(domain, "domain");
              if (ab.size() != 2) throw InvalidArgument("domain: expected (a, b)");
              a = ab[0];
              b = ab[1];
            }
            Release r;
            return p.evaluate_chebyshev(ct, c, rk, a, b);
          },
          "encrypted"_a, "coeffs"_a, "relin_keys"_a, "domain"_a.none() = nb::none())
      .def(
          "evaluate_power",
          [](const PolynomialEvaluator& p, const Ciphertext& ct, nb::handle coeffs,
             const RelinKeys& rk) {
            const auto c = reals_arg(coeffs, "coeffs", /*quote=*/false);
            Release r;
            return p.evaluate_power(ct, c, rk);
          },
          "encrypted"_a, "coeffs"_a, "relin_keys"_a)
      .def(
          "plan_level",
          [](const PolynomialEvaluator& p, nb::handle level, nb::handle scale, nb::handle coeffs) {
            return p.plan_level(size_arg(level, "level", 4096), real_arg(scale, "scale"),
                                reals_arg(coeffs, "coeffs", /*quote=*/false));
          },
          "level"_a, "scale"_a, "coeffs"_a);
  m.def(
      "power_to_chebyshev",
      [](nb::handle c) { return power_to_chebyshev(reals_arg(c, "coeffs", /*quote=*/false)); },
      "coeffs"_a, "numpy.polynomial.chebyshev.poly2cheb.");
}

/// ScaleOps with the chain and evaluator it refers to (the relinearization keys are kept alive
/// by the Python object: keep_alive).
struct PyScaleOps {
  RescaleChain chain;
  Evaluator ev;
  RelinKeys none;  // without relinearization keys: products raise (the evaluator names them)
  ScaleOps ops;
  PyScaleOps(const Ctx& c, const RelinKeys* rk)
      : chain(c), ev(c), ops(chain, ev, rk ? *rk : none) {}
  PyScaleOps(const PyScaleOps&) = delete;
  PyScaleOps& operator=(const PyScaleOps&) = delete;
};

OperandPtr operand_of(nb::handle h, const char* name) {
  if (!nb::isinstance<Operand>(h)) {
    throw TypeMismatch(std::string(name) + ": expected a veil._core.Operand, got " +
                       Py_TYPE(h.ptr())->tp_name);
  }
  return nb::cast<OperandPtr>(h);
}

std::vector<std::pair<OperandPtr, double>> terms_of(nb::handle h) {
  if (PyUnicode_Check(h.ptr()) || !PySequence_Check(h.ptr())) {
    throw TypeMismatch("terms: expected a sequence of (Operand, coefficient) pairs");
  }
  std::vector<std::pair<OperandPtr, double>> out;
  for (nb::handle t : nb::borrow<nb::sequence>(h)) {
    if (!PySequence_Check(t.ptr()) || PySequence_Size(t.ptr()) != 2) {
      throw TypeMismatch("terms: expected a sequence of (Operand, coefficient) pairs");
    }
    nb::sequence pair = nb::borrow<nb::sequence>(t);
    out.emplace_back(operand_of(pair[0], "terms"), real_arg(pair[1], "terms", /*quote=*/false));
  }
  return out;
}

void def_scale_ops(nb::module_& m) {
  nb::class_<RescaleChain>(m, "RescaleChain",
                           "The rescaling structure of a CKKS chain (circuits/rescale_chain.h): "
                           "block tops, block products, moves between tops.")
      .def(nb::init<ContextPtr>(), "context"_a)
      .def_prop_ro("tops", &RescaleChain::tops,
                   "Levels where a rescale block ends, from q_0's block up.")
      .def(
          "block_product",
          [](const RescaleChain& c, nb::handle level) {
            return c.block_product(size_arg(level, "level", 4096));
          },
          "level"_a, "The product of the primes a rescale from `level` divides by (a double).")
      .def(
          "below", [](const RescaleChain& c, nb::handle l) { return c.below(size_arg(l, "level", 4096)); },
          "level"_a, "The level a rescale from `level` lands on.")
      .def(
          "above", [](const RescaleChain& c, nb::handle l) { return c.above(size_arg(l, "level", 4096)); },
          "level"_a, "The block top whose rescale lands on `level`.")
      .def(
          "top_at_or_below",
          [](const RescaleChain& c, nb::handle l) { return c.top_at_or_below(size_arg(l, "level", 4096)); },
          "level"_a, "The highest block top at or below `level`.");

  nb::class_<Operand>(m, "Operand",
                      "A value of an exact-scale evaluation: level, scale and ciphertext "
                      "(circuits/scale_ops.h).")
      .def_ro("level", &Operand::level)
      .def_ro("scale", &Operand::scale)
      .def_prop_ro(
          "ct", [](const Operand& o) { return o.ct; },
          "The ciphertext (shared: do not modify it in place).");

  nb::class_<PyScaleOps>(m, "ScaleOps",
                         "Exact-scale CKKS arithmetic on Operands (circuits/scale_ops.h): every "
                         "addition meets equal levels and scales; constants and linear "
                         "combinations land on a requested (level, scale) by one scalar "
                         "combination and one rescale (Kim-Papadimitriou-Polyakov, CT-RSA 2022).")
      .def(
          "__init__",
          [](PyScaleOps* p, const Ctx& c, const RelinKeys* rk) {
            if (!c) throw InvalidArgument("context: expected a Context, got None");
            new (p) PyScaleOps(c, rk);
          },
          "context"_a, "relin_keys"_a.none(), nb::keep_alive<1, 3>(),
          "relin_keys: for products (None: only additions, constants and level moves).")
      .def_prop_ro(
          "chain", [](const PyScaleOps& p) -> const RescaleChain& { return p.chain; },
          nb::rv_policy::reference_internal)
      .def(
          "wrap", [](const PyScaleOps& p, const Ciphertext& ct) { return p.ops.wrap(ct); }, "ct"_a,
          "An operand holding a copy of ct (size 2), at its level and scale.")
      .def(
          "below", [](const PyScaleOps& p, nb::handle l) { return p.ops.below(size_arg(l, "level", 4096)); },
          "level"_a)
      .def(
          "above", [](const PyScaleOps& p, nb::handle l) { return p.ops.above(size_arg(l, "level", 4096)); },
          "level"_a)
      .def(
          "mul",
          [](const PyScaleOps& p, nb::handle a, nb::handle b) {
            auto x = operand_of(a, "a"), y = operand_of(b, "b");
            Release r;
            return p.ops.mul(x, y);
          },
          "a"_a, "b"_a, "a * b at the lower level, relinearized and rescaled once.")
      .def(
          "square",
          [](const PyScaleOps& p, nb::handle a) {
            auto x = operand_of(a, "a");
            Release r;
            return p.ops.square(x);
          },
          "a"_a)
      .def(
          "add",
          [](const PyScaleOps& p, nb::handle a, nb::handle b) {
            return p.ops.add(operand_of(a, "a"), operand_of(b, "b"));
          },
          "a"_a, "b"_a, "a + b (one level, equal scales; ValueError for misaligned operands).")
      .def(
          "sub",
          [](const PyScaleOps& p, nb::handle a, nb::handle b) {
            return p.ops.sub(operand_of(a, "a"), operand_of(b, "b"));
          },
          "a"_a, "b"_a)
      .def(
          "add_const",
          [](const PyScaleOps& p, nb::handle a, nb::handle c) {
            return p.ops.add_const(operand_of(a, "a"), real_arg(c, "value", /*quote=*/false));
          },
          "a"_a, "value"_a)
      .def(
          "linear_to",
          [](const PyScaleOps& p, nb::handle terms, nb::handle c0, nb::handle level,
             nb::handle scale) {
            auto t = terms_of(terms);
            const double c = real_arg(c0, "c0", /*quote=*/false), s = real_arg(scale, "scale");
            const std::size_t l = size_arg(level, "level", 4096);
            Release r;
            return p.ops.linear_to(t, c, l, s);
          },
          "terms"_a, "c0"_a, "level"_a, "scale"_a,
          "c0 + sum c_i a_i landing exactly on (level, scale): one scalar combination at the "
          "block top above `level`, one rescale.")
      .def(
          "const_to",
          [](const PyScaleOps& p, nb::handle a, nb::handle c, nb::handle level, nb::handle scale) {
            auto x = operand_of(a, "a");
            const double v = real_arg(c, "value", /*quote=*/false), s = real_arg(scale, "scale");
            const std::size_t l = size_arg(level, "level", 4096);
            Release r;
            return p.ops.const_to(x, v, l, s);
          },
          "a"_a, "value"_a, "level"_a, "scale"_a, "value * a landing on (level, scale).")
      .def(
          "to_level",
          [](const PyScaleOps& p, nb::handle a, nb::handle level) {
            auto x = operand_of(a, "a");
            const std::size_t l = size_arg(level, "level", 4096);
            Release r;
            return p.ops.to_level(x, l);
          },
          "a"_a, "level"_a, "a dropped to `level` (primes dropped, scale unchanged).");
}

}  // namespace

void bind_circuits(nb::module_& m) {
  def_transforms(m);
  def_scale_ops(m);
}

}  // namespace veil::bind
