// veil._core: the nanobind extension exposing Veil's C++ API (SEAL-style lower level).
// The pythonic layer lives in python/veil/.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/map.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/shared_ptr.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>
#include <nanobind/stl/complex.h>
#include <nanobind/stl/array.h>
#include <nanobind/stl/pair.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "io_bind.h"
#include "veil/api/encryptor.h"
#include "veil/api/evaluator.h"
#include "veil/backend/timer.h"
#include "veil/bfv/batch_encoder.h"
#include "veil/ckks/encoder.h"
#include "veil/core/error.h"
#include "veil/rlwe/keygen.h"
#include "veil/rlwe/plaintext.h"

namespace nb = nanobind;
using namespace nb::literals;
using namespace veil;

namespace {

using Ctx = std::shared_ptr<Context>;  // nanobind holder; the context itself is immutable

Ctx hold(const ContextPtr& c) { return std::const_pointer_cast<Context>(c); }
Device dev_of(const std::string& s) { return Device::parse(s); }

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

template <class T>
nb::ndarray<nb::numpy, T, nb::ndim<1>> to_numpy(std::vector<T>&& v) {
  auto* heap = new std::vector<T>(std::move(v));
  nb::capsule owner(heap, [](void* p) noexcept { delete static_cast<std::vector<T>*>(p); });
  return nb::ndarray<nb::numpy, T, nb::ndim<1>>(heap->data(), {heap->size()}, owner);
}

using I64Array = nb::ndarray<const std::int64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
using U64Array = nb::ndarray<const std::uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <class T, class A>
std::vector<T> from_numpy(const A& a) {
  return std::vector<T>(a.data(), a.data() + a.shape(0));
}

}  // namespace

NB_MODULE(_core, m) {
  m.doc() = "Veil: homomorphic encryption on NVIDIA GPUs and CPUs (C++ core)";

  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const TypeMismatch& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const InvalidArgument& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const OutOfMemory& e) {
      PyErr_SetString(PyExc_MemoryError, e.what());
    } catch (const veil::RuntimeError& e) {
      PyErr_SetString(PyExc_RuntimeError, e.what());
    }
  });

  m.attr("__version__") = VEIL_VERSION;
  m.def("cuda_built", &cuda_built, "True when this build contains the CUDA backend.");
  m.def("cuda_device_count", &cuda_device_count, "Number of usable CUDA devices.");
  m.def(
      "cuda_device_info",
      [](int i) {
        CudaDeviceInfo d = cuda_device_info(i);
        nb::dict r;
        r["name"] = d.name;
        r["total_memory"] = d.total_memory;
        r["multiprocessors"] = d.multiprocessors;
        r["compute_capability"] = std::to_string(d.compute_major) + "." + std::to_string(d.compute_minor);
        r["runtime_version"] = d.runtime_version;
        r["driver_version"] = d.driver_version;
        return r;
      },
      "index"_a = 0, "Name, memory (bytes), SM count and versions of CUDA device `index`.");
  m.def("num_threads", &num_threads, "OpenMP threads used by the CPU backend.");
  m.def("set_num_threads", &set_num_threads, "n"_a, "Sets the CPU backend's threads (0: default).");
  m.def("synchronize", [](const std::string& d) { backend::synchronize(dev_of(d)); }, "device"_a);
  m.def("set_pool_limit", [](const std::string& d, std::size_t b) { backend::set_pool_limit(dev_of(d), b); },
        "device"_a, "bytes"_a, "Caps Veil's memory pool on a CUDA device (0: no cap).");
  m.def("bytes_in_use", [](const std::string& d) { return backend::bytes_in_use(dev_of(d)); }, "device"_a);
  m.def("parse_device", [](const std::string& d) { return dev_of(d).str(); }, "device"_a,
        "Validates a device string ('cpu', 'cuda', 'cuda:k') and returns its canonical form.");

  nb::class_<Timer>(m, "Timer", "CUDA-event (GPU) or steady-clock (CPU) timer, in milliseconds.")
      .def("__init__", [](Timer* t, const std::string& d) { new (t) Timer(dev_of(d)); }, "device"_a)
      .def("start", &Timer::start)
      .def("stop", &Timer::stop, "Milliseconds since start(); synchronizes.");

  // ---- parameters ------------------------------------------------------------------------
  nb::class_<EncryptionParameters>(m, "EncryptionParameters",
                                   "Scheme parameters (SEAL semantics): poly_modulus_degree N, "
                                   "coeff_modulus (Q primes then special primes), plain_modulus t.")
      .def("__init__", [](EncryptionParameters* p, const std::string& scheme) {
             new (p) EncryptionParameters(scheme_from_string(scheme));
           }, "scheme"_a = "bfv")
      .def_prop_ro("scheme", [](const EncryptionParameters& p) { return to_string(p.scheme); })
      .def_rw("poly_modulus_degree", &EncryptionParameters::poly_modulus_degree)
      .def_rw("coeff_modulus", &EncryptionParameters::coeff_modulus)
      .def_rw("special_primes", &EncryptionParameters::special_primes)
      .def_rw("alpha", &EncryptionParameters::alpha)
      .def_rw("plain_modulus", &EncryptionParameters::plain_modulus)
      .def_prop_rw("mul_method", [](const EncryptionParameters& p) { return to_string(p.mul_method); },
                   [](EncryptionParameters& p, const std::string& s) { p.mul_method = mul_method_from_string(s); })
      .def("to_bytes", [](const EncryptionParameters& p, const std::string& compression) {
             return bind::to_py(io::save(p, bind::save_options(compression, false, 3)));
           }, "compression"_a = "none", "Serializes to Veil's format (io/serialize.h).")
      .def_static("from_bytes", [](nb::handle data) {
             bind::PyBytes b(data, "data");
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
             return nb::make_tuple(restore, nb::make_tuple(bind::to_py(io::save(p, io::SaveOptions{io::Compression::none}))));
           });

  nb::class_<CoeffModulus>(m, "CoeffModulus")
      .def_static("bfv_default", [](std::size_t n, std::optional<int> sec) {
            return CoeffModulus::bfv_default(n, sec ? security_from(sec) : SecurityLevel::tc128);
          }, "poly_modulus_degree"_a, "security"_a = 128,
          "SEAL's BFVDefault primes for N = 2^12..2^15 (Veil's choice for 2^16, 2^17); the last "
          "prime is the special prime.")
      .def_static("create", &CoeffModulus::create, "poly_modulus_degree"_a, "bit_sizes"_a,
                  "Largest distinct NTT-friendly primes (q = 1 mod 2N) of the given bit sizes.")
      .def_static("max_bit_count", [](std::size_t n, int sec) {
            return max_coeff_modulus_bits(n, security_from(sec));
          }, "poly_modulus_degree"_a, "security"_a = 128,
          "HE Standard bound on log2(QP) for a ternary secret.");
  nb::class_<PlainModulus>(m, "PlainModulus")
      .def_static("batching", &PlainModulus::batching, "poly_modulus_degree"_a, "bit_size"_a,
                  "Largest prime t < 2^bit_size with t = 1 mod 2N.");

  nb::class_<Context>(m, "Context", "Validated parameters and precomputed tables (immutable).",
                     nb::is_weak_referenceable())
      .def(nb::new_([](const EncryptionParameters& p, std::optional<int> security) {
             return hold(Context::create(p, security_from(security)));
           }), "params"_a, "security"_a.none() = 128)
      .def_static("create", [](const EncryptionParameters& p, std::optional<int> security) {
             return hold(Context::create(p, security_from(security)));
           }, "params"_a, "security"_a.none() = 128)
      .def_prop_ro("scheme", [](const Context& c) { return to_string(c.scheme()); })
      .def_prop_ro("poly_modulus_degree", &Context::n)
      .def_prop_ro("plain_modulus", &Context::plain_modulus)
      .def_prop_ro("coeff_modulus", [](const Context& c) { return c.params().coeff_modulus; })
      .def_prop_ro("special_primes", &Context::num_p)
      .def_prop_ro("alpha", &Context::alpha)
      .def_prop_ro("mul_method", [](const Context& c) { return to_string(c.params().mul_method); })
      .def_prop_ro("max_level", &Context::max_level)
      .def_prop_ro("total_coeff_modulus_bits", &Context::total_qp_bits)
      .def_prop_ro("batching_enabled", &Context::batching_enabled)
      .def_prop_ro("security", [](const Context& c) -> std::optional<int> {
            if (c.security() == SecurityLevel::none) return std::nullopt;
            return static_cast<int>(c.security());
          })
      .def_prop_ro("parameter_hash", &Context::parameter_hash)
      .def("coeff_modulus_at", [](const Context& c, std::size_t level) {
            std::vector<u64> q;
            for (const Modulus& m : c.base_q(level).moduli()) q.push_back(m.value);
            return q;
          }, "level"_a, "The primes of Q at `level` (level + 1 primes).")
      .def_prop_ro("special_modulus", [](const Context& c) {
            std::vector<u64> p;
            for (const Modulus& m : c.base_p().moduli()) p.push_back(m.value);
            return p;
          })
      .def("galois_elt_from_step", &Context::galois_elt_from_step, "step"_a)
      .def_prop_ro("galois_elt_column", &Context::galois_elt_column)
      .def_prop_ro("params", [](const Context& c) { return c.params(); },
                   "A copy of the EncryptionParameters this context was built from.")
      .def("__reduce__", [](const Context& c) {
             nb::object restore = nb::module_::import_("veil._serialize").attr("_restore_context");
             return nb::make_tuple(restore, nb::make_tuple(
                 bind::to_py(io::save(c.params(), io::SaveOptions{io::Compression::none})),
                 bind::security_bits(c)));
           });

  // ---- data objects ----------------------------------------------------------------------
  auto pt_cls = nb::class_<Plaintext>(m, "Plaintext")
      .def_prop_ro("device", [](const Plaintext& p) { return p.device().str(); })
      .def_prop_rw("scale", &Plaintext::scale, &Plaintext::set_scale)
      .def_prop_ro("level", &Plaintext::level)
      .def_prop_ro("is_ntt_form", &Plaintext::is_ntt_form)
      .def("to", [](const Plaintext& p, const std::string& d) { return p.to(dev_of(d)); }, "device"_a)
      .def("data", [](const Plaintext& p) { return to_numpy(p.buffer().to_host()); },
           "Raw words (copy to the host).")
      .def_static("from_coefficients", [](const Ctx& c, const U64Array& v, const std::string& d) {
             return make_plaintext(c, from_numpy<std::uint64_t>(v), dev_of(d));
           }, "context"_a, "coefficients"_a, "device"_a = "cpu",
           "BFV/BGV plaintext without batching: the polynomial sum_i coefficients[i] x^i "
           "(at most N coefficients, each < t). ValueError naming `coefficients` otherwise.")
      .def("coefficients", [](const Plaintext& p) { return to_numpy(plaintext_coefficients(p)); },
           "The N coefficients mod t of a BFV/BGV coefficient-form plaintext (uint64).");
  bind::def_serialization<Plaintext>(pt_cls, "plaintext", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_plaintext(v, c, d, o);
  });
  auto ct_cls = nb::class_<Ciphertext>(m, "Ciphertext")
      .def("__copy__", [](const Ciphertext& c) { return Ciphertext(c); })
      .def_prop_ro("size", &Ciphertext::size)
      .def_prop_ro("level", &Ciphertext::level)
      .def_prop_ro("is_ntt_form", &Ciphertext::is_ntt_form)
      .def_prop_rw("scale", &Ciphertext::scale, [](Ciphertext& c, double s) {
            if (!(s > 0)) throw InvalidArgument("scale: expected a positive number");
            c.set_scale(s);
          }, "CKKS scale (set it to align nearly-equal scales explicitly).")
      .def_prop_ro("correction_factor", &Ciphertext::correction_factor)
      .def_prop_ro("device", [](const Ciphertext& c) { return c.device().str(); })
      .def_prop_ro("parameter_hash", [](const Ciphertext& c) { return c.context()->parameter_hash(); })
      .def("to", [](const Ciphertext& c, const std::string& d) { return c.to(dev_of(d)); }, "device"_a)
      .def("data", [](const Ciphertext& c) { return to_numpy(c.buffer().to_host()); },
           "Raw words [size][level+1][N] (copy to the host).");
  bind::def_serialization<Ciphertext>(ct_cls, "ciphertext", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_ciphertext(v, c, d, o);
  });
  auto sk_cls = nb::class_<SecretKey>(m, "SecretKey")
      .def_prop_ro("device", [](const SecretKey& k) { return k.device().str(); })
      .def("to", [](const SecretKey& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a)
      .def("data", [](const SecretKey& k) { return to_numpy(k.buffer().to_host()); });
  bind::def_serialization<SecretKey>(sk_cls, "secret_key", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_secret_key(v, c, d, o);
  }, /*picklable=*/false);
  auto pk_cls = nb::class_<PublicKey>(m, "PublicKey")
      .def_prop_ro("device", [](const PublicKey& k) { return k.device().str(); })
      .def("to", [](const PublicKey& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a)
      .def("data", [](const PublicKey& k) { return to_numpy(k.buffer().to_host()); });
  bind::def_serialization<PublicKey>(pk_cls, "public_key", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_public_key(v, c, d, o);
  });
  auto rk_cls = nb::class_<RelinKeys>(m, "RelinKeys")
      .def_prop_ro("device", [](const RelinKeys& k) { return k.device().str(); })
      .def("to", [](const RelinKeys& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a)
      .def("data", [](const RelinKeys& k) { return to_numpy(k.key().buffer().to_host()); });
  bind::def_serialization<RelinKeys>(rk_cls, "relin_keys", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_relin_keys(v, c, d, o);
  });
  auto gk_cls = nb::class_<GaloisKeys>(m, "GaloisKeys")
      .def_prop_ro("device", [](const GaloisKeys& k) { return k.device().str(); })
      .def("has_key", &GaloisKeys::has_key, "galois_elt"_a)
      .def_prop_ro("galois_elts", [](const GaloisKeys& k) {
            std::vector<u32> e;
            for (const auto& [g, _] : k.keys()) e.push_back(g);
            return e;
          })
      .def("to", [](const GaloisKeys& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a);
  bind::def_serialization<GaloisKeys>(gk_cls, "galois_keys", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_galois_keys(v, c, d, o);
  });

  // ---- key generation, encoding, encryption ---------------------------------------------
  nb::class_<KeyGenerator>(m, "KeyGenerator",
                           "Generates the secret key on `device`; seed=None draws from the OS.")
      .def("__init__", [](KeyGenerator* k, const Ctx& c, const std::string& d, std::optional<std::uint64_t> seed) {
             new (k) KeyGenerator(c, dev_of(d), seed);
           }, "context"_a, "device"_a = "cpu", "seed"_a.none() = nb::none())
      .def("__init__", [](KeyGenerator* k, const Ctx& c, const SecretKey& sk, std::optional<std::uint64_t> seed) {
             new (k) KeyGenerator(c, sk, seed);
           }, "context"_a, "secret_key"_a, "seed"_a.none() = nb::none())
      .def("secret_key", &KeyGenerator::secret_key)
      .def("create_public_key", &KeyGenerator::create_public_key)
      .def("create_relin_keys", &KeyGenerator::create_relin_keys)
      .def("create_galois_keys", [](const KeyGenerator& k, std::optional<std::vector<int>> steps, bool cols) {
             return steps ? k.create_galois_keys(*steps, cols) : k.create_galois_keys();
           }, "steps"_a.none() = nb::none(), "include_columns"_a = true,
           "Keys for the given rotation steps (default: every power of two, both directions) "
           "and the column swap.")
      .def("create_galois_keys_from_elts", &KeyGenerator::create_galois_keys_from_elts, "galois_elts"_a);

  nb::class_<BatchEncoder>(m, "BatchEncoder", "N integers mod t <-> one plaintext (2 x N/2 slots).")
      .def("__init__", [](BatchEncoder* e, const Ctx& c) { new (e) BatchEncoder(c); }, "context"_a)
      .def_prop_ro("slot_count", &BatchEncoder::slot_count)
      .def_prop_ro("row_size", &BatchEncoder::row_size)
      .def("encode_unsigned", [](const BatchEncoder& e, const U64Array& v, const std::string& d) {
             return e.encode(from_numpy<std::uint64_t>(v), dev_of(d));
           }, "values"_a, "device"_a = "cpu")
      .def("encode_signed", [](const BatchEncoder& e, const I64Array& v, const std::string& d) {
             return e.encode_signed(from_numpy<std::int64_t>(v), dev_of(d));
           }, "values"_a, "device"_a = "cpu")
      .def("decode_unsigned", [](const BatchEncoder& e, const Plaintext& p) { return to_numpy(e.decode(p)); }, "plain"_a)
      .def("decode_signed", [](const BatchEncoder& e, const Plaintext& p) { return to_numpy(e.decode_signed(p)); }, "plain"_a);

  using C128Array = nb::ndarray<const std::complex<double>, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  using F64Array = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  nb::class_<CKKSEncoder>(m, "CKKSEncoder",
                          "N/2 complex slots <-> one plaintext at a scale and level (CKKS §3.1).")
      .def("__init__", [](CKKSEncoder* e, const Ctx& c) { new (e) CKKSEncoder(c); }, "context"_a)
      .def_prop_ro("slot_count", &CKKSEncoder::slot_count)
      .def("encode_complex", [](const CKKSEncoder& e, const C128Array& v, double scale, std::size_t level,
                                const std::string& d) {
             return e.encode(std::vector<std::complex<double>>(v.data(), v.data() + v.shape(0)), scale, level, dev_of(d));
           }, "values"_a, "scale"_a, "level"_a, "device"_a = "cpu")
      .def("encode_real", [](const CKKSEncoder& e, const F64Array& v, double scale, std::size_t level,
                             const std::string& d) {
             return e.encode(std::vector<double>(v.data(), v.data() + v.shape(0)), scale, level, dev_of(d));
           }, "values"_a, "scale"_a, "level"_a, "device"_a = "cpu")
      .def("encode_scalar", [](const CKKSEncoder& e, std::complex<double> v, double scale, std::size_t level,
                               const std::string& d) { return e.encode(v, scale, level, dev_of(d)); },
           "value"_a, "scale"_a, "level"_a, "device"_a = "cpu")
      .def("decode", [](const CKKSEncoder& e, const Plaintext& p) { return to_numpy(e.decode(p)); }, "plain"_a);

  nb::class_<Encryptor>(m, "Encryptor")
      .def("__init__", [](Encryptor* e, const Ctx& c, const PublicKey& k, std::optional<std::uint64_t> seed) {
             new (e) Encryptor(c, k, seed);
           }, "context"_a, "public_key"_a, "seed"_a.none() = nb::none())
      .def("__init__", [](Encryptor* e, const Ctx& c, const SecretKey& k, std::optional<std::uint64_t> seed) {
             new (e) Encryptor(c, k, seed);
           }, "context"_a, "secret_key"_a, "seed"_a.none() = nb::none())
      .def("encrypt", &Encryptor::encrypt, "plain"_a)
      .def("encrypt_zero", &Encryptor::encrypt_zero);

  nb::class_<Decryptor>(m, "Decryptor")
      .def("__init__", [](Decryptor* d, const Ctx& c, const SecretKey& k) { new (d) Decryptor(c, k); },
           "context"_a, "secret_key"_a)
      .def("__init__", [](Decryptor*, const Ctx&, const PublicKey&) {
             throw TypeMismatch("secret_key: Decryptor needs a SecretKey, got a PublicKey");
           }, "context"_a, "secret_key"_a)
      .def("decrypt", &Decryptor::decrypt, "encrypted"_a)
      .def("invariant_noise_budget", &Decryptor::invariant_noise_budget, "encrypted"_a);

  bind::def_seal(m);

  // ---- evaluation --------------------------------------------------------------------------
  nb::class_<Evaluator>(m, "Evaluator")
      .def("__init__", [](Evaluator* e, const Ctx& c) { new (e) Evaluator(c); }, "context"_a)
      .def("add", &Evaluator::add, "encrypted1"_a, "encrypted2"_a)
      .def("add_inplace", &Evaluator::add_inplace, "encrypted1"_a, "encrypted2"_a)
      .def("sub", &Evaluator::sub, "encrypted1"_a, "encrypted2"_a)
      .def("sub_inplace", &Evaluator::sub_inplace, "encrypted1"_a, "encrypted2"_a)
      .def("negate", &Evaluator::negate, "encrypted"_a)
      .def("add_many", &Evaluator::add_many, "encrypteds"_a)
      .def("add_plain", &Evaluator::add_plain, "encrypted"_a, "plain"_a)
      .def("sub_plain", &Evaluator::sub_plain, "encrypted"_a, "plain"_a)
      .def("multiply_plain", &Evaluator::multiply_plain, "encrypted"_a, "plain"_a)
      .def("multiply_plain_inplace", &Evaluator::multiply_plain_inplace, "encrypted"_a, "plain"_a)
      .def("multiply", &Evaluator::multiply, "encrypted1"_a, "encrypted2"_a)
      .def("square", &Evaluator::square, "encrypted"_a)
      .def("relinearize", &Evaluator::relinearize, "encrypted"_a, "relin_keys"_a)
      .def("relinearize_inplace", &Evaluator::relinearize_inplace, "encrypted"_a, "relin_keys"_a)
      .def("multiply_many", &Evaluator::multiply_many, "encrypteds"_a, "relin_keys"_a)
      .def("exponentiate", &Evaluator::exponentiate, "encrypted"_a, "exponent"_a, "relin_keys"_a)
      .def("apply_galois", &Evaluator::apply_galois, "encrypted"_a, "galois_elt"_a, "galois_keys"_a)
      .def("rotate_rows", &Evaluator::rotate_rows, "encrypted"_a, "steps"_a, "galois_keys"_a)
      .def("rotate_columns", &Evaluator::rotate_columns, "encrypted"_a, "galois_keys"_a)
      .def("rotate_many", &Evaluator::rotate_many, "encrypted"_a, "steps"_a, "galois_keys"_a)
      .def("rotate_vector", &Evaluator::rotate_vector, "encrypted"_a, "steps"_a, "galois_keys"_a)
      .def("conjugate", &Evaluator::conjugate, "encrypted"_a, "galois_keys"_a)
      .def("mod_switch_to_next", &Evaluator::mod_switch_to_next, "encrypted"_a)
      .def("mod_switch_to", nb::overload_cast<const Ciphertext&, std::size_t>(&Evaluator::mod_switch_to, nb::const_),
           "encrypted"_a, "level"_a)
      .def("mod_switch_plain_to", nb::overload_cast<const Plaintext&, std::size_t>(&Evaluator::mod_switch_to, nb::const_),
           "plain"_a, "level"_a)
      .def("rescale_to_next", &Evaluator::rescale_to_next, "encrypted"_a);
}
