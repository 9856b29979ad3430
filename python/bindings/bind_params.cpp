// veil._core's parameters: EncryptionParameters, CoeffModulus, PlainModulus and Context (the
// validated, immutable parameters with their tables).
#include <nanobind/nanobind.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "bind.h"
#include "bind_common.h"
#include "bind_io.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/core/error.h"
#include "veil/rlwe/context.h"
#include "veil/rlwe/params.h"

namespace nb = nanobind;
using namespace nb::literals;

namespace veil::bind {

namespace {

Ctx hold(const ContextPtr& c) { return std::const_pointer_cast<Context>(c); }

SecurityLevel security_from(std::optional<int> s) {
  if (!s) return SecurityLevel::none;
  switch (*s) {
    case 128: return SecurityLevel::tc128;
    case 192: return SecurityLevel::tc192;
    case 256: return SecurityLevel::tc256;
    default:
      throw InvalidArgument("security: expected 128, 192, 256 or None, got " + std::to_string(*s));
  }
}

}  // namespace

void bind_params(nb::module_& m) {
  nb::class_<EncryptionParameters>(m, "EncryptionParameters",
                                   "Scheme parameters (SEAL semantics): poly_modulus_degree N, "
                                   "coeff_modulus (Q primes then special primes), plain_modulus t.")
      .def("__init__", [](EncryptionParameters* p, const std::string& scheme) {
             new (p) EncryptionParameters(scheme_from_string(scheme));
           }, "scheme"_a = "bfv")
      .def_prop_ro("scheme", [](const EncryptionParameters& p) { return to_string(p.scheme); })
      .def("__repr__", [](const EncryptionParameters& p) {
             std::string s = "veil.EncryptionParameters(scheme='" + to_string(p.scheme) +
                             "', poly_modulus_degree=" + std::to_string(p.poly_modulus_degree) +
                             ", coeff_modulus_bits=" + bits_list(p.coeff_modulus) +
                             ", special_primes=" + std::to_string(p.special_primes);
             if (p.scheme != SchemeType::ckks) s += ", plain_modulus=" + std::to_string(p.plain_modulus);
             return s + ")";
           })
      .def_prop_rw("poly_modulus_degree", [](const EncryptionParameters& p) { return p.poly_modulus_degree; },
                   [](EncryptionParameters& p, nb::handle v) {
                     p.poly_modulus_degree = size_arg(v, "poly_modulus_degree", 131072);
                   })
      .def_prop_rw("coeff_modulus", [](const EncryptionParameters& p) { return p.coeff_modulus; },
                   [](EncryptionParameters& p, nb::handle v) {
                     p.coeff_modulus = list_arg(v, "coeff_modulus", "integers", [](nb::handle x) {
                       return u64_arg(x, "coeff_modulus", 2, (std::uint64_t(1) << 61) - 1);
                     });
                   })
      .def_prop_rw("special_primes", [](const EncryptionParameters& p) { return p.special_primes; },
                   [](EncryptionParameters& p, nb::handle v) { p.special_primes = size_arg(v, "special_primes", 1024); })
      .def_prop_rw("alpha", [](const EncryptionParameters& p) { return p.alpha; },
                   [](EncryptionParameters& p, nb::handle v) { p.alpha = size_arg(v, "alpha", 1024); })
      .def_prop_rw("plain_modulus", [](const EncryptionParameters& p) { return p.plain_modulus; },
                   [](EncryptionParameters& p, nb::handle v) {
                     p.plain_modulus = u64_arg(v, "plain_modulus", 0, (std::uint64_t(1) << 60) - 1);
                   })
      .def_prop_rw("mul_method", [](const EncryptionParameters& p) { return to_string(p.mul_method); },
                   [](EncryptionParameters& p, const std::string& s) { p.mul_method = mul_method_from_string(s); })
      .def_prop_rw("word_bits", [](const EncryptionParameters& p) { return p.word_bits; },
                   [](EncryptionParameters& p, nb::handle v) {
                     const int b = int_arg(v, "word_bits", 0, 64);
                     if (b != 0 && b != 32 && b != 64) {
                       throw InvalidArgument("word_bits: expected 0 (choose), 32 or 64, got " +
                                             std::to_string(b));
                     }
                     p.word_bits = b;
                   },
                   "Word size of residues in memory: 0 = choose (32-bit words when every prime "
                   "is below 2^31, and t for BFV/BGV; BFV with HPS), 32 or 64.")
      .def_prop_rw("rescale_groups",
                   [](const EncryptionParameters& p) { return p.rescale_groups; },
                   [](EncryptionParameters& p, nb::handle v) {
                     p.rescale_groups = list_arg(v, "rescale_groups", "integers", [](nb::handle x) {
                       return size_arg(x, "rescale_groups", 1024);
                     });
                   },
                   "CKKS: sizes of the blocks of Q primes (from q_0 up) that one rescale divides "
                   "by; [] = one prime each (SEAL).")
      .def("to_bytes", [](const EncryptionParameters& p, const std::string& compression) {
             return to_py(io::save(p, save_options(compression, false, 3)));
           }, "compression"_a = "none", "Serializes to Veil's format (io/serialize.h).")
      .def_static("from_bytes", [](nb::handle data) {
             PyBytes b(data, "data");
             return io::load_parameters(b.view());
           }, "data"_a, "Loads parameters saved by to_bytes (ValueError naming the field if bad).")
      .def("save", [](const EncryptionParameters& p, const std::string& path) {
             io::write_file(path, io::save(p, io::SaveOptions{io::Compression::none}));
           }, "path"_a)
      .def_static("load", [](const std::string& path) {
             return io::load_parameters(io::read_file(path, 1 << 20));
           }, "path"_a)
      .def_prop_ro("parameter_hash", [](const EncryptionParameters& p) { return parameter_hash(p); })
      .def("__reduce__", [](const EncryptionParameters& p) {
             nb::object restore = nb::module_::import_("veil._serialize").attr("_restore_parameters");
             return nb::make_tuple(restore, nb::make_tuple(to_py(io::save(p, io::SaveOptions{io::Compression::none}))));
           });

  nb::class_<CoeffModulus>(m, "CoeffModulus")
      .def("__repr__", [](const CoeffModulus&) { return std::string("veil.CoeffModulus()"); })
      .def_static("bfv_default", [](nb::handle n, std::optional<int> sec) {
            return CoeffModulus::bfv_default(size_arg(n, "poly_modulus_degree"),
                                             sec ? security_from(sec) : SecurityLevel::tc128);
          }, "poly_modulus_degree"_a, "security"_a = 128,
          "SEAL's BFVDefault primes for N = 2^12..2^15 (Veil's choice for 2^16, 2^17); the last "
          "prime is the special prime.")
      .def_static("create", [](nb::handle n, nb::handle bits) {
            const std::size_t deg = size_arg(n, "poly_modulus_degree");
            auto sizes = list_arg(bits, "bit_sizes", "integers", [](nb::handle x) { return int_arg(x, "bit_sizes", 2, 60); });
            Release r;
            return CoeffModulus::create(deg, sizes);
          }, "poly_modulus_degree"_a, "bit_sizes"_a,
                  "Largest distinct NTT-friendly primes (q = 1 mod 2N) of the given bit sizes.")
      .def_static("max_bit_count", [](nb::handle n, int sec) {
            return max_coeff_modulus_bits(size_arg(n, "poly_modulus_degree"), security_from(sec));
          }, "poly_modulus_degree"_a, "security"_a = 128,
          "HE Standard bound on log2(QP) for a ternary secret.");
  nb::class_<PlainModulus>(m, "PlainModulus")
      .def("__repr__", [](const PlainModulus&) { return std::string("veil.PlainModulus()"); })
      .def_static("batching", [](nb::handle n, nb::handle bits) {
            const std::size_t deg = size_arg(n, "poly_modulus_degree");
            const int b = int_arg(bits, "bit_size", 2, 60);
            Release r;
            return PlainModulus::batching(deg, b);
          }, "poly_modulus_degree"_a, "bit_size"_a,
                  "Largest prime t < 2^bit_size with t = 1 mod 2N.");

  nb::class_<Context>(m, "Context", "Validated parameters and precomputed tables (immutable).",
                     nb::is_weak_referenceable())
      .def(nb::new_([](const EncryptionParameters& p, std::optional<int> security) {
             const SecurityLevel level = security_from(security);
             Release r;
             return hold(Context::create(p, level));
           }), "params"_a, "security"_a.none() = 128)
      .def_static("create", [](const EncryptionParameters& p, std::optional<int> security) {
             const SecurityLevel level = security_from(security);
             Release r;
             return hold(Context::create(p, level));
           }, "params"_a, "security"_a.none() = 128)
      .def_prop_ro("scheme", [](const Context& c) { return to_string(c.scheme()); })
      .def("__repr__", &context_repr)
      .def_prop_ro("poly_modulus_degree", &Context::n)
      .def_prop_ro("plain_modulus", &Context::plain_modulus)
      .def_prop_ro("coeff_modulus", [](const Context& c) { return c.params().coeff_modulus; })
      .def_prop_ro("special_primes", &Context::num_p)
      .def_prop_ro("alpha", &Context::alpha)
      .def_prop_ro("mul_method", [](const Context& c) { return to_string(c.params().mul_method); })
      .def_prop_ro("word_bits", &Context::word_bits,
                   "Word size of every residue in memory (32 or 64).")
      .def_prop_ro("rescale_groups", [](const Context& c) { return ckks::rescale_groups(c); },
                   "CKKS rescale blocks, resolved (from q_0 up; all 1 by default).")
      .def("rescale_target", [](const Context& c, nb::handle lv) {
             return ckks::rescale_target(c, size_arg(lv, "level", c.max_level()));
           }, "level"_a, "The level a CKKS rescale from `level` goes to.")
      .def_prop_ro("max_level", &Context::max_level)
      .def_prop_ro("total_coeff_modulus_bits", &Context::total_qp_bits)
      .def_prop_ro("batching_enabled", &Context::batching_enabled)
      .def_prop_ro("security", [](const Context& c) -> std::optional<int> {
            if (c.security() == SecurityLevel::none) return std::nullopt;
            return static_cast<int>(c.security());
          })
      .def_prop_ro("parameter_hash", &Context::parameter_hash)
      .def("coeff_modulus_at", [](const Context& c, nb::handle lv) {
            const std::size_t level = size_arg(lv, "level", c.max_level());
            std::vector<u64> q;
            for (const Modulus& m : c.base_q(level).moduli()) q.push_back(m.value);
            return q;
          }, "level"_a, "The primes of Q at `level` (level + 1 primes).")
      .def_prop_ro("special_modulus", [](const Context& c) {
            std::vector<u64> p;
            for (const Modulus& m : c.base_p().moduli()) p.push_back(m.value);
            return p;
          })
      .def("galois_elt_from_step", [](const Context& c, nb::handle step) {
            return c.galois_elt_from_step(int_arg(step, "step"));
          }, "step"_a)
      .def_prop_ro("galois_elt_column", &Context::galois_elt_column)
      .def_prop_ro("params", [](const Context& c) { return c.params(); },
                   "A copy of the EncryptionParameters this context was built from.")
      .def("__reduce__", [](const Context& c) {
             nb::object restore = nb::module_::import_("veil._serialize").attr("_restore_context");
             return nb::make_tuple(restore, nb::make_tuple(
                 to_py(io::save(c.params(), io::SaveOptions{io::Compression::none})),
                 security_bits(c)));
           });
}

}  // namespace veil::bind
