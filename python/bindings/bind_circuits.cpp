// The C++ circuits layer (cpp/veil/circuits) in veil._core: CKKS polynomial evaluation, linear
// transforms, the special FFT's factors and bootstrapping (BootstrapConfig, BootstrapParameters,
// BootstrapKeys, Bootstrapper). They sit in _core itself rather than a submodule so that the one
// generated stub (_core.pyi) types them. The pythonic bootstrapper (python/veil/_bootstrap.py)
// stays the oracle; tests/python/test_circuits.py compares the two.

#include <nanobind/ndarray.h>
#include <nanobind/stl/complex.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/pair.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bind.h"
#include "bind_common.h"
#include "bind_io.h"
#include "veil/circuits/bootstrapper.h"
#include "veil/circuits/dft.h"
#include "veil/circuits/polynomial.h"
#include "veil/circuits/scale_ops.h"
#include "veil/core/error.h"
#include "veil/io/serialize_circuits.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace veil::bind {

namespace {

using namespace veil::circuits;
using cplx = std::complex<double>;

// Argument checks: the *_arg family of bind_common.h. Counts the C++ side validates itself
// (BootstrapConfig's fields, special primes) are bounded here only to stay far from overflow.
constexpr std::size_t kMaxCount = std::size_t{1} << 40;

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

SecurityLevel security_of(nb::handle h) {
  if (h.is_none()) return SecurityLevel::none;
  switch (i64_arg(h, "security", 0, 1024)) {
    case 128:
      return SecurityLevel::tc128;
    case 192:
      return SecurityLevel::tc192;
    case 256:
      return SecurityLevel::tc256;
    default:
      throw InvalidArgument("security: expected 128, 192, 256 or None");
  }
}

BootstrapConfig config_of(nb::handle h) {
  if (h.is_none()) return BootstrapConfig{};
  if (!nb::isinstance<BootstrapConfig>(h)) {
    throw TypeMismatch("config: expected a veil._core.BootstrapConfig");
  }
  return nb::cast<BootstrapConfig>(h);
}

std::string config_repr(const BootstrapConfig& c) {
  return "veil._core.BootstrapConfig(slots=" + std::to_string(c.slots) +
         ", cts_levels=" + std::to_string(c.cts_levels) +
         ", stc_levels=" + std::to_string(c.stc_levels) + ", k_range=" + std::to_string(c.k_range) +
         ", evalmod_degree=" + std::to_string(c.evalmod_degree) +
         ", double_angle=" + std::to_string(c.double_angle) +
         ", hamming_weight=" + std::to_string(c.hamming_weight) +
         (c.pack_sparse ? ", pack_sparse=True" : "") + ")";
}

void def_config(nb::module_& m) {
  nb::class_<BootstrapConfig>(m, "BootstrapConfig",
                              "Bootstrapping parameters (circuits/bootstrap_parameters.h); slots=0 "
                              "means N/2 (full slots). Immutable.")
      .def(
          "__init__",
          [](BootstrapConfig* c, nb::handle slots, nb::handle cts, nb::handle stc, nb::handle k,
             nb::handle deg, nb::handle r, nb::handle h, nb::handle pack) {
            BootstrapConfig v;
            v.slots = slots.is_none() ? 0 : size_arg(slots, "slots", kMaxCount);
            v.cts_levels = size_arg(cts, "cts_levels", kMaxCount);
            v.stc_levels = size_arg(stc, "stc_levels", kMaxCount);
            v.k_range = size_arg(k, "k_range", kMaxCount);
            v.evalmod_degree = size_arg(deg, "evalmod_degree", kMaxCount);
            v.double_angle = size_arg(r, "double_angle", kMaxCount);
            v.hamming_weight = size_arg(h, "hamming_weight", kMaxCount);
            if (!nb::isinstance<nb::bool_>(pack)) {
              throw TypeMismatch("pack_sparse: expected a bool");
            }
            v.pack_sparse = nb::cast<bool>(pack);
            v.validate();
            new (c) BootstrapConfig(v);
          },
          "slots"_a.none() = nb::none(), "cts_levels"_a = 3, "stc_levels"_a = 3, "k_range"_a = 12,
          "evalmod_degree"_a = 31, "double_angle"_a = 3, "hamming_weight"_a = 32,
          "pack_sparse"_a = false)
      .def_ro("slots", &BootstrapConfig::slots)
      .def_ro("cts_levels", &BootstrapConfig::cts_levels)
      .def_ro("stc_levels", &BootstrapConfig::stc_levels)
      .def_ro("k_range", &BootstrapConfig::k_range)
      .def_ro("evalmod_degree", &BootstrapConfig::evalmod_degree)
      .def_ro("double_angle", &BootstrapConfig::double_angle)
      .def_ro("hamming_weight", &BootstrapConfig::hamming_weight)
      .def_ro("pack_sparse", &BootstrapConfig::pack_sparse)
      .def_prop_ro("evalmod_depth", &BootstrapConfig::evalmod_depth)
      .def_prop_ro("depth", &BootstrapConfig::depth)
      .def("__repr__", &config_repr);

  nb::class_<BootstrapChain>(m, "BootstrapChain", "A modulus chain for bootstrapping.")
      .def_ro("coeff_modulus", &BootstrapChain::coeff_modulus_bits,
              "Bit sizes, special primes last.")
      .def_ro("rescale_groups", &BootstrapChain::rescale_groups)
      .def_ro("special_primes", &BootstrapChain::special_primes)
      .def_ro("alpha", &BootstrapChain::alpha)
      .def_ro("scale", &BootstrapChain::scale)
      .def_ro("user_levels", &BootstrapChain::user_levels)
      .def(
          "parameters",
          [](const BootstrapChain& c, nb::handle n, nb::handle wb) {
            return c.parameters(size_arg(n, "poly_modulus_degree", 131072),
                                int_arg(wb, "word_bits", 0, 64));
          },
          "poly_modulus_degree"_a, "word_bits"_a = 0,
          "CKKS EncryptionParameters of this chain (CoeffModulus.create's primes).");
  m.def(
      "bootstrap_chain",
      [](nb::handle log_n, nb::handle users, nb::handle cfg, nb::handle wb, nb::handle special,
         nb::handle alpha) {
        return bootstrap_chain(
            int_arg(log_n, "log_n", 0, 64), size_arg(users, "user_levels", 4096), config_of(cfg),
            int_arg(wb, "word_bits", 0, 64),
            special.is_none() ? std::nullopt
                              : std::optional(size_arg(special, "special", kMaxCount)),
            alpha.is_none() ? std::nullopt : std::optional(size_arg(alpha, "alpha", kMaxCount)));
      },
      "log_n"_a, "user_levels"_a, "config"_a.none() = nb::none(), "word_bits"_a = 64,
      "special"_a.none() = nb::none(), "alpha"_a.none() = nb::none(),
      "A bootstrapping chain at N = 2^log_n with user_levels levels left "
      "(veil.ckks.bootstrap_chain).");
  m.def(
      "preset_chain",
      [](nb::handle n, nb::handle sec, nb::handle cfg, nb::handle wb) {
        return preset_chain(size_arg(n, "poly_modulus_degree", 1u << 20), security_of(sec),
                            config_of(cfg), int_arg(wb, "word_bits", 0, 64));
      },
      "poly_modulus_degree"_a, "security"_a.none() = 128, "config"_a.none() = nb::none(),
      "word_bits"_a = 64, "bootstrap_chain with as many user levels as the security bound allows.");
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

void def_bootstrap(nb::module_& m) {
  nb::class_<BootstrapParameters>(m, "BootstrapParameters",
                                  "The level layout of bootstrapping on one context "
                                  "(circuits/bootstrap_parameters.h).")
      .def(
          "__init__",
          [](BootstrapParameters* p, const Ctx& c, nb::handle cfg, nb::handle scale) {
            const BootstrapConfig config = config_of(cfg);
            const double s = real_arg(scale, "scale");
            Release r;
            new (p) BootstrapParameters(c, config, s);
          },
          "context"_a, "config"_a.none() = nb::none(), "scale"_a = 1099511627776.0)
      .def_prop_ro("config", &BootstrapParameters::config)
      .def_prop_ro("poly_modulus_degree",
                   [](const BootstrapParameters& p) { return p.context()->n(); })
      .def_prop_ro("context", &BootstrapParameters::context)
      .def_prop_ro("scale", &BootstrapParameters::scale)
      .def_prop_ro("slots", &BootstrapParameters::slots)
      .def_prop_ro("input_level", &BootstrapParameters::input_level)
      .def_prop_ro("output_level", &BootstrapParameters::output_level)
      .def_prop_ro("levels_left", &BootstrapParameters::levels_left,
                   "Rescales from output_level down to input_level: the multiplications the user "
                   "has between bootstraps.")
      .def_prop_ro("low_output_level", &BootstrapParameters::low_output_level,
                   "Where an input below input_level comes back (original order: SlotToCoeff "
                   "last, stc_levels blocks below output_level).")
      .def_prop_ro("q0_level", &BootstrapParameters::q0_level)
      .def_prop_ro("q0", &BootstrapParameters::q0)
      .def_prop_ro("top_level", &BootstrapParameters::top_level)
      .def_prop_ro("evalmod_level", &BootstrapParameters::evalmod_level)
      .def_prop_ro("evalmod_output_level", &BootstrapParameters::evalmod_output_level,
                   "Where EvalMod ends: output_level, or the block above it with pack_sparse.")
      .def_prop_ro("evalmod_scale", &BootstrapParameters::evalmod_scale)
      .def_prop_ro("coeff_to_slot_constant", &BootstrapParameters::coeff_to_slot_constant)
      .def_prop_ro("gamma", &BootstrapParameters::gamma)
      .def_prop_ro("rotation_steps", &BootstrapParameters::rotation_steps)
      .def_prop_ro("galois_elements", &BootstrapParameters::galois_elements)
      .def_prop_ro("galois_key_levels", &BootstrapParameters::galois_key_levels,
                   "For each of galois_elements, the highest level bootstrapping uses its key at.")
      .def(
          "to_bytes",
          [](const BootstrapParameters& p, const std::string& compression) {
            return to_py(io::save(p, save_options(compression, std::nullopt, 3)));
          },
          "compression"_a = "zstd",
          "Veil's format (object type 9: the configuration and Delta, bound to the context by "
          "its parameter hash; io/serialize_circuits.h).")
      .def_static(
          "from_bytes",
          [](nb::handle data, const Ctx& ctx, std::optional<std::uint64_t> max_bytes) {
            if (!ctx) throw InvalidArgument("context: expected a Context, got None");
            PyBytes bytes(data, "data");
            const io::ByteView in = bytes.stable_view();
            Release r;
            return io::load_bootstrap_parameters(in, ctx, load_options(max_bytes));
          },
          "data"_a, "context"_a, "max_bytes"_a.none() = nb::none(),
          "Loads bytes written by to_bytes onto `context` (every field checked; ValueError "
          "naming it).");

  nb::class_<BootstrapKeys>(m, "BootstrapKeys",
                            "Relinearization, Galois and sparse-secret switching keys of "
                            "bootstrapping (circuits/bootstrap_keys.h).")
      .def(
          "__init__",
          [](BootstrapKeys* k, const RelinKeys& rk, const GaloisKeys& gk,
             const SwitchingKey& to_sparse, const SwitchingKey& to_dense) {
            new (k) BootstrapKeys{rk, gk, to_sparse, to_dense};
          },
          "relin_keys"_a, "galois_keys"_a, "to_sparse"_a, "to_dense"_a,
          "Keys made elsewhere (copied).")
      .def_static(
          "take",
          [](const RelinKeys& rk, GaloisKeys& gk, SwitchingKey& to_sparse, SwitchingKey& to_dense) {
            return BootstrapKeys{rk, std::move(gk), std::move(to_sparse), std::move(to_dense)};
          },
          "relin_keys"_a, "galois_keys"_a, "to_sparse"_a, "to_dense"_a,
          "Keys made elsewhere, without a copy: galois_keys, to_sparse and to_dense are moved "
          "in and left empty (relin_keys, one key, is copied). For large key sets.")
      .def_static(
          "generate",
          [](const BootstrapParameters& p, const SecretKey& sk, std::optional<RelinKeys> rk,
             nb::handle seed, bool compact, bool per_level, nb::handle max_bytes) {
            const auto s = seed_arg(seed);
            BootstrapKeyStorage storage;
            storage.compact = compact;
            storage.per_level = per_level;
            if (!max_bytes.is_none()) storage.max_bytes = u64_arg(max_bytes, "max_bytes");
            Release r;
            return BootstrapKeys::generate(p, sk, rk, s, storage);
          },
          "parameters"_a, "secret_key"_a, "relin_keys"_a.none() = nb::none(),
          "seed"_a.none() = nb::none(), "compact"_a = false, "per_level"_a = true,
          "max_bytes"_a.none() = nb::none(),
          "Generates the keys (seeded: equal to veil._bootstrap's for the same seed). compact: "
          "Galois keys that store their b_j only (about half the bytes; their a_j are "
          "regenerated inside the GPU's key-switching kernel). per_level: each key stores only "
          "the limbs and digits of the highest level it is used at (KSwitchKey::level). "
          "max_bytes: the keys whose a_j are cheapest to regenerate become compact until the "
          "keys fit (BootstrapKeyStorage).")
      .def_static(
          "compact_choice",
          [](const BootstrapParameters& p, bool per_level, std::size_t max_bytes) {
            BootstrapKeyStorage storage;
            storage.per_level = per_level;
            storage.max_bytes = max_bytes;
            std::size_t bytes = 0;
            const std::vector<bool> c = BootstrapKeys::compact_choice(p, storage, &bytes);
            return std::make_pair(std::vector<bool>(c.begin(), c.end()), bytes);
          },
          "parameters"_a, "per_level"_a = true, "max_bytes"_a = 0,
          "(which keys, in galois_elements order, generate(max_bytes=...) makes compact; the "
          "keys' bytes then). ValueError naming max_bytes when even compact keys exceed it.")
      .def_prop_ro(
          "relin_keys", [](const BootstrapKeys& k) -> const RelinKeys& { return k.relin_keys; },
          nb::rv_policy::reference_internal)
      .def_prop_ro(
          "galois_keys", [](const BootstrapKeys& k) -> const GaloisKeys& { return k.galois_keys; },
          nb::rv_policy::reference_internal)
      .def_prop_ro(
          "to_sparse", [](const BootstrapKeys& k) -> const SwitchingKey& { return k.to_sparse; },
          nb::rv_policy::reference_internal)
      .def_prop_ro(
          "to_dense", [](const BootstrapKeys& k) -> const SwitchingKey& { return k.to_dense; },
          nb::rv_policy::reference_internal)
      .def_prop_ro("nbytes", &BootstrapKeys::bytes)
      .def("check", &BootstrapKeys::check, "parameters"_a);

  nb::class_<Bootstrapper>(m, "Bootstrapper",
                           "CKKS bootstrapping in C++ (circuits/bootstrapper.h); the steps are "
                           "public: bootstrap = eval_mod . coeff_to_slot . mod_raise . "
                           "slot_to_coeff.")
      .def(
          "__init__",
          [](Bootstrapper* b, const BootstrapParameters& p, const BootstrapKeys& k) {
            Release r;
            new (b) Bootstrapper(p, k);
          },
          "parameters"_a, "keys"_a, "Encodes the transforms; the keys are copied (see take).")
      .def_static(
          "take",
          [](const BootstrapParameters& p, BootstrapKeys& k) {
            Release r;
            return Bootstrapper(p, std::move(k));
          },
          "parameters"_a, "keys"_a,
          "As the constructor, but the keys are moved in (left empty): no copy of the key set.")
      .def("bootstrap", &Bootstrapper::bootstrap, "ct"_a, nb::call_guard<Release>(),
           "Refreshes ct (size 2, level >= q0_level) to output_level (low_output_level for "
           "inputs below input_level), keeping its scale (a scale far from Delta is first "
           "brought to Delta, one level).")
      .def("prepare", &Bootstrapper::prepare, "ct"_a, nb::call_guard<Release>(),
           "bootstrap's checks; ct switched to where the pipeline starts (input_level, or "
           "q0_level below it) at scale Delta (one constant product first when its scale is "
           "not within 2^4 of Delta).")
      .def("output_scale", &Bootstrapper::output_scale, "input_scale"_a,
           "The scale bootstrap returns for an input at input_scale (itself within 2^4 of "
           "Delta, else Delta).")
      .def("slot_to_coeff", &Bootstrapper::slot_to_coeff, "ct"_a, nb::call_guard<Release>())
      .def("mod_raise", &Bootstrapper::mod_raise, "ct"_a, nb::call_guard<Release>())
      .def("coeff_to_slot", &Bootstrapper::coeff_to_slot, "ct"_a, nb::call_guard<Release>())
      .def("eval_mod", &Bootstrapper::eval_mod, "ct"_a, nb::call_guard<Release>())
      .def_prop_ro("parameters", &Bootstrapper::parameters, nb::rv_policy::reference_internal)
      .def_prop_ro("keys", &Bootstrapper::keys, nb::rv_policy::reference_internal)
      .def_prop_ro(
          "evalmod_coefficients", [](const Bootstrapper& b) { return b.evalmod().coefficients(); },
          "EvalMod's Chebyshev coefficients (list of floats).")
      .def_prop_ro("coeff_to_slot_transforms", &Bootstrapper::coeff_to_slot_transforms,
                   nb::rv_policy::reference_internal)
      .def_prop_ro("slot_to_coeff_transforms", &Bootstrapper::slot_to_coeff_transforms,
                   nb::rv_policy::reference_internal)
      .def_prop_ro("plaintext_bytes", &Bootstrapper::plaintext_bytes)
      .def_prop_ro("uses_graph", &Bootstrapper::uses_graph,
                   "True once bootstrap() replays a captured CUDA graph (GPU, after its first "
                   "call; VEIL_GRAPHS=0 turns graphs off).")
      .def_prop_ro("graph_failure", &Bootstrapper::graph_failure,
                   "Why the graph capture failed, or '' (bootstrap() then runs directly).")
      .def_prop_ro("device", [](const Bootstrapper& b) { return b.device().str(); })
      .def("__repr__", [](const Bootstrapper& b) {
        const auto& p = b.parameters();
        return "veil._core.Bootstrapper(N=" + std::to_string(p.context()->n()) +
               ", slots=" + std::to_string(p.slots()) +
               ", input_level=" + std::to_string(p.input_level()) +
               ", output_level=" + std::to_string(p.output_level()) +
               ", levels_left=" + std::to_string(p.levels_left()) + ", device='" +
               b.device().str() + "')";
      });
}

}  // namespace

void bind_circuits(nb::module_& m) {
  def_config(m);
  def_transforms(m);
  def_scale_ops(m);
  def_bootstrap(m);
}

}  // namespace veil::bind
