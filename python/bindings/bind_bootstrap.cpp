// Bootstrapping in veil._core (cpp/veil/circuits): BootstrapConfig and the bootstrapping
// modulus chains, then BootstrapParameters, BootstrapKeys and Bootstrapper. They sit in _core
// itself rather than a submodule so that the one generated stub (_core.pyi) types them. The
// pythonic bootstrapper (python/veil/_bootstrap.py) stays the oracle; tests/python/test_circuits.py
// compares the two.

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
#include "veil/core/error.h"
#include "veil/io/serialize_circuits.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace veil::bind {

namespace {

using namespace veil::circuits;

// Argument checks: the *_arg family of bind_common.h. Counts the C++ side validates itself
// (BootstrapConfig's fields, special primes) are bounded here only to stay far from overflow.
constexpr std::size_t kMaxCount = std::size_t{1} << 40;

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

}  // namespace

void bind_bootstrap_config(nb::module_& m) {
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

void bind_bootstrap(nb::module_& m) {
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

}  // namespace veil::bind
