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

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <vector>

#include "circuits_bind.h"
#include "comparison_bind.h"
#include "io_bind.h"
#include "veil/api/encryptor.h"
#include "veil/api/evaluator.h"
#include "veil/backend/timer.h"
#include "veil/bfv/batch_encoder.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/ckks/encoder.h"
#include "veil/core/error.h"
#include "veil/rlwe/keygen.h"
#include "veil/rlwe/checks.h"
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

// ---- __repr__ helpers: parameters and shapes only, never key material or seeds -------------------
std::string bits_list(const std::vector<u64>& q) {
  std::string s = "[";
  for (std::size_t i = 0; i < q.size(); ++i) {
    if (i) s += ", ";
    s += std::to_string(64 - std::countl_zero(q[i]));
  }
  return s + "]";
}

std::string scale_repr(double scale) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "2^%.2f", std::log2(scale));
  return buf;
}

std::string context_repr(const Context& c) {
  std::string s = "veil.Context(scheme='" + to_string(c.scheme()) +
                  "', poly_modulus_degree=" + std::to_string(c.n()) +
                  ", coeff_modulus_bits=" + bits_list(c.params().coeff_modulus) +
                  ", special_primes=" + std::to_string(c.num_p()) +
                  ", max_level=" + std::to_string(c.max_level());
  if (c.scheme() != SchemeType::ckks) s += ", plain_modulus=" + std::to_string(c.plain_modulus());
  s += ", word_bits=" + std::to_string(c.word_bits()) + ", security=" +
       (c.security() == SecurityLevel::none ? std::string("None")
                                            : std::to_string(static_cast<int>(c.security())));
  return s + ")";
}

/// "veil.<name>(<scheme>, N=.., device='..', <bytes> bytes)" for a key or an encoder-like object.
template <class T>
std::string key_repr(const char* name, const T& k, std::size_t bytes, const std::string& extra = "") {
  if (!k.context()) return std::string("veil.") + name + "(empty)";
  return std::string("veil.") + name + "(scheme='" + to_string(k.context()->scheme()) +
         "', poly_modulus_degree=" + std::to_string(k.context()->n()) + extra + ", device='" +
         k.device().str() + "', nbytes=" + std::to_string(bytes) + ")";
}

std::size_t galois_bytes(const GaloisKeys& k) {
  std::size_t b = 0;
  for (const auto& [e, key] : k.keys()) b += key.buffer().bytes();
  return b;
}

// Any 1-D C-contiguous array on any device (DLPack: CuPy, PyTorch, JAX; the buffer protocol:
// numpy). Its dtype and device are checked by array_view.
using AnyArray = nb::ndarray<nb::ndim<1>, nb::c_contig>;          // writable (decode_into)
using AnyRoArray = nb::ndarray<nb::ro, nb::ndim<1>, nb::c_contig>;  // read-only too (encode)

std::string dtype_name(const nb::dlpack::dtype& d) {
  const char* kind = d.code == uint8_t(nb::dlpack::dtype_code::Int)      ? "int"
                     : d.code == uint8_t(nb::dlpack::dtype_code::UInt)   ? "uint"
                     : d.code == uint8_t(nb::dlpack::dtype_code::Float)  ? "float"
                     : d.code == uint8_t(nb::dlpack::dtype_code::Complex) ? "complex"
                                                                          : "other";
  return std::string(kind) + std::to_string(d.bits);
}

/// The Device an array lives on: "cpu", or "cuda:k" for CUDA memory (also pinned/managed).
template <class A>
Device array_device(const A& a, const char* arg) {
  const int type = a.device_type();
  if (type == nb::device::cpu::value || type == nb::device::cuda_host::value) return Device::cpu();
  if (type == nb::device::cuda::value || type == nb::device::cuda_managed::value) {
    return Device(Device::Kind::cuda, a.device_id());
  }
  throw InvalidArgument(std::string(arg) + ": arrays on DLPack device type " +
                        std::to_string(type) + " are not supported (expected CPU or CUDA memory)");
}

/// A view of `a` as T (checked: dtype T, one dimension). `expect` lists the accepted dtypes.
template <class T, class A>
ArrayView<T> array_view(const A& a, const char* arg) {
  if (a.dtype() != nb::dtype<std::remove_const_t<T>>()) {
    throw nb::type_error((std::string(arg) + ": expected a " +
                          dtype_name(nb::dtype<std::remove_const_t<T>>()) + " array, got " +
                          dtype_name(a.dtype()))
                             .c_str());
  }
  return ArrayView<T>{static_cast<T*>(const_cast<void*>(a.data())), a.shape(0),
                      array_device(a, arg)};
}
using U64Array = nb::ndarray<const std::uint64_t, nb::ndim<1>, nb::c_contig, nb::device::cpu>;

template <class T, class A>
std::vector<T> from_numpy(const A& a) {
  return std::vector<T>(a.data(), a.data() + a.shape(0));
}

// ---- Python-facing argument checks --------------------------------------------------------
// Integers and reals are converted here, with the argument's name, instead of by nanobind's
// casters, whose failures read "incompatible function arguments" without naming the argument.

std::string py_repr(nb::handle h) {
  PyObject* r = PyObject_Repr(h.ptr());
  if (!r) {
    PyErr_Clear();
    return "?";
  }
  nb::str s = nb::steal<nb::str>(r);
  std::string out = s.c_str();
  return out.size() > 40 ? out.substr(0, 37) + "..." : out;
}

// An exact Python integer (int, numpy integer: anything with __index__, but not bool or float).
nb::object as_index(nb::handle h, const char* name) {
  if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr())) {
    throw TypeMismatch(std::string(name) + ": expected an integer, got " + Py_TYPE(h.ptr())->tp_name);
  }
  PyObject* v = PyNumber_Index(h.ptr());
  if (!v) {
    PyErr_Clear();
    throw TypeMismatch(std::string(name) + ": expected an integer, got " + Py_TYPE(h.ptr())->tp_name);
  }
  return nb::steal(v);
}

std::uint64_t u64_arg(nb::handle h, const char* name, std::uint64_t lo = 0,
                      std::uint64_t hi = UINT64_MAX) {
  nb::object v = as_index(h, name);
  const std::string range = std::to_string(lo) + ".." + std::to_string(hi);
  const int negative = PyObject_RichCompareBool(v.ptr(), nb::int_(0).ptr(), Py_LT);
  unsigned long long x = 0;
  if (negative == 0) {
    x = PyLong_AsUnsignedLongLong(v.ptr());
    if (PyErr_Occurred()) PyErr_Clear(); else if (x >= lo && x <= hi) return x;
  } else {
    PyErr_Clear();
  }
  throw InvalidArgument(std::string(name) + ": expected an integer in " + range + ", got " +
                        py_repr(v));
}

std::int64_t i64_arg(nb::handle h, const char* name, std::int64_t lo, std::int64_t hi) {
  nb::object v = as_index(h, name);
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (PyErr_Occurred()) PyErr_Clear();
  if (!overflow && x >= lo && x <= hi) return x;
  throw InvalidArgument(std::string(name) + ": expected an integer in " + std::to_string(lo) +
                        ".." + std::to_string(hi) + ", got " + py_repr(v));
}

std::size_t size_arg(nb::handle h, const char* name, std::size_t hi = SIZE_MAX) {
  return static_cast<std::size_t>(u64_arg(h, name, 0, hi));
}

int int_arg(nb::handle h, const char* name, int lo = INT32_MIN, int hi = INT32_MAX) {
  return static_cast<int>(i64_arg(h, name, lo, hi));
}

template <class F>
auto list_arg(nb::handle h, const char* name, F convert) {
  using T = decltype(convert(h));
  if (PyUnicode_Check(h.ptr()) || PyBytes_Check(h.ptr()) || !PySequence_Check(h.ptr())) {
    throw TypeMismatch(std::string(name) + ": expected a sequence of integers, got " +
                       Py_TYPE(h.ptr())->tp_name);
  }
  std::vector<T> out;
  for (nb::handle item : nb::borrow<nb::sequence>(h)) out.push_back(convert(item));
  return out;
}

double real_arg(nb::handle h, const char* name) {
  if (PyBool_Check(h.ptr()) || !(PyFloat_Check(h.ptr()) || PyIndex_Check(h.ptr()) ||
                                 PyObject_HasAttrString(h.ptr(), "__float__"))) {
    throw TypeMismatch(std::string(name) + ": expected a real number, got " + Py_TYPE(h.ptr())->tp_name);
  }
  if (PyComplex_Check(h.ptr())) {
    throw TypeMismatch(std::string(name) + ": expected a real number, got complex");
  }
  const double v = PyFloat_AsDouble(h.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw InvalidArgument(std::string(name) + ": " + py_repr(h) + " does not fit a double");
  }
  return v;
}

std::optional<std::uint64_t> seed_arg(nb::handle h) {
  if (h.is_none()) return std::nullopt;
  return u64_arg(h, "seed");
}

using Release = nb::gil_scoped_release;

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
      [](nb::handle index) {
        CudaDeviceInfo d = cuda_device_info(int_arg(index, "index", 0, 1023));
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
  m.def("set_num_threads", [](nb::handle n) { set_num_threads(int_arg(n, "n")); }, "n"_a,
        "Sets the CPU backend's threads: 0 restores the default, else 1..max_num_threads(). "
        "ValueError naming `n` otherwise.");
  m.def("max_num_threads", &max_num_threads, "Largest accepted set_num_threads (4x the processors).");
  m.def("set_transparent_check", &set_transparent_check, "on"_a,
        "Turns SEAL's transparent-result check (on by default) on or off for this process.");
  m.def("transparent_check", &transparent_check);
  m.def("zeroized_bytes", [](const std::string& d) { return backend::zeroized_bytes(dev_of(d)); },
        "device"_a, "Bytes of secret memory zeroized on free so far (tests).");
  m.def("forked_child", &backend::forked_child,
        "True in a process forked after Veil was loaded (the CPU backend then runs serially).");
  // Without the GIL: a thread waiting for its device must not stop the process's other threads
  // (a Ray worker pickles one result while the next bootstrap runs).
  m.def("synchronize", [](const std::string& d) { backend::synchronize(dev_of(d)); }, "device"_a,
        nb::call_guard<Release>());
  m.def("set_pool_limit", [](const std::string& d, nb::handle b) { backend::set_pool_limit(dev_of(d), size_arg(b, "bytes")); },
        "device"_a, "bytes"_a, "Caps Veil's memory pool on a CUDA device (0: no cap).");
  m.def("bytes_in_use", [](const std::string& d) { return backend::bytes_in_use(dev_of(d)); }, "device"_a);
  m.def("parse_device", [](const std::string& d) { return dev_of(d).str(); }, "device"_a,
        "Validates a device string ('cpu', 'cuda', 'cuda:k') and returns its canonical form.");

  nb::class_<Timer>(m, "Timer", "CUDA-event (GPU) or steady-clock (CPU) timer, in milliseconds.")
      .def("__init__", [](Timer* t, const std::string& d) { new (t) Timer(dev_of(d)); }, "device"_a)
      .def("__repr__", [](const Timer&) { return std::string("veil.Timer()"); })
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
                     p.coeff_modulus = list_arg(v, "coeff_modulus", [](nb::handle x) {
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
                     p.rescale_groups = list_arg(v, "rescale_groups", [](nb::handle x) {
                       return size_arg(x, "rescale_groups", 1024);
                     });
                   },
                   "CKKS: sizes of the blocks of Q primes (from q_0 up) that one rescale divides "
                   "by; [] = one prime each (SEAL).")
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
      .def("__repr__", [](const CoeffModulus&) { return std::string("veil.CoeffModulus()"); })
      .def_static("bfv_default", [](nb::handle n, std::optional<int> sec) {
            return CoeffModulus::bfv_default(size_arg(n, "poly_modulus_degree"),
                                             sec ? security_from(sec) : SecurityLevel::tc128);
          }, "poly_modulus_degree"_a, "security"_a = 128,
          "SEAL's BFVDefault primes for N = 2^12..2^15 (Veil's choice for 2^16, 2^17); the last "
          "prime is the special prime.")
      .def_static("create", [](nb::handle n, nb::handle bits) {
            const std::size_t deg = size_arg(n, "poly_modulus_degree");
            auto sizes = list_arg(bits, "bit_sizes", [](nb::handle x) { return int_arg(x, "bit_sizes", 2, 60); });
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
                 bind::to_py(io::save(c.params(), io::SaveOptions{io::Compression::none})),
                 bind::security_bits(c)));
           });

  // ---- data objects ----------------------------------------------------------------------
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
  bind::def_serialization<Plaintext>(pt_cls, "plaintext", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
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
  bind::def_serialization<Ciphertext>(ct_cls, "ciphertext", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_ciphertext(v, c, d, o);
  });
  // The pythonic record and the saving, shared by ciphertext_to_bytes and _to_buffer.
  auto save_with_info = [](const Ciphertext& c, nb::handle length, bool complex_values,
                           const std::string& compression, std::optional<bool> seeded, int level) {
    const io::CiphertextInfo info{true, complex_values,
                                  static_cast<std::uint32_t>(size_arg(length, "length", UINT32_MAX))};
    const io::SaveOptions o = bind::save_options(compression, seeded, level);
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
        return bind::to_py(save_with_info(c, length, complex_values, compression, seeded, level));
      },
      "ct"_a, "length"_a, "complex_values"_a = false, "compression"_a = "zstd",
      "seeded"_a.none() = nb::none(), "level"_a = 3,
      "ct.to_bytes(...) with the pythonic record in the descriptor (io::CiphertextInfo): the "
      "encrypted length (<= N/2 slots for CKKS, N for BFV/BGV) and whether the values are "
      "complex (CKKS only). ValueError naming `length` or `complex_values` otherwise.");
  m.def(
      "ciphertext_info",
      [](nb::handle data) -> nb::object {
        bind::PyBytes bytes(data, "data");
        const io::CiphertextInfo info = io::read_ciphertext_info(bytes.view());
        if (!info.recorded) return nb::none();
        return nb::make_tuple(info.length, info.complex_values);
      },
      "data"_a,
      "(length, complex_values) recorded in Veil-format ciphertext bytes by ciphertext_to_bytes, "
      "or None for bytes without the record (written by RawCiphertext.to_bytes or before the "
      "record existed). Checks the header and descriptor only; ValueError naming the field.");
  auto sk_cls = nb::class_<SecretKey>(m, "SecretKey")
      .def_prop_ro("device", [](const SecretKey& k) { return k.device().str(); })
      .def_prop_ro("nbytes", [](const SecretKey& k) { return k.buffer().bytes(); })
      .def("__repr__", [](const SecretKey& k) { return key_repr("SecretKey", k, k.buffer().bytes()); })
      .def_prop_ro("key_set_id", &SecretKey::key_id)
      .def("to", [](const SecretKey& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a,
           nb::call_guard<Release>())
      .def("data", [](const SecretKey& k) { return to_numpy(k.buffer().to_host()); });
  bind::def_serialization<SecretKey>(sk_cls, "secret_key", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_secret_key(v, c, d, o);
  }, /*picklable=*/false);
  auto pk_cls = nb::class_<PublicKey>(m, "PublicKey")
      .def_prop_ro("device", [](const PublicKey& k) { return k.device().str(); })
      .def_prop_ro("nbytes", [](const PublicKey& k) { return k.buffer().bytes(); })
      .def("__repr__", [](const PublicKey& k) { return key_repr("PublicKey", k, k.buffer().bytes()); })
      .def_prop_ro("key_set_id", &PublicKey::key_id)
      .def("to", [](const PublicKey& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a,
           nb::call_guard<Release>())
      .def("data", [](const PublicKey& k) { return to_numpy(k.buffer().to_host()); });
  bind::def_serialization<PublicKey>(pk_cls, "public_key", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_public_key(v, c, d, o);
  });
  auto rk_cls = nb::class_<RelinKeys>(m, "RelinKeys")
      .def_prop_ro("device", [](const RelinKeys& k) { return k.device().str(); })
      .def_prop_ro("nbytes", [](const RelinKeys& k) { return k.key().buffer().bytes(); })
      .def("__repr__", [](const RelinKeys& k) { return key_repr("RelinKeys", k, k.key().buffer().bytes()); })
      .def_prop_ro("key_set_id", &RelinKeys::key_id)
      .def("to", [](const RelinKeys& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a,
           nb::call_guard<Release>())
      .def_prop_ro("compact", [](const RelinKeys& k) { return k.key().compact(); },
                   "Whether the key stores its b_j only (create_relin_keys(compact=True)).")
      .def("data", [](const RelinKeys& k) { return to_numpy(k.key().buffer().to_host()); },
           "The stored words: ``[dnum][2][L+k][N]`` (b_j, a_j), or ``[dnum][L+k][N]`` (the b_j) "
           "for a compact key.");
  bind::def_serialization<RelinKeys>(rk_cls, "relin_keys", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_relin_keys(v, c, d, o);
  });
  auto gk_cls = nb::class_<GaloisKeys>(m, "GaloisKeys")
      .def_prop_ro("device", [](const GaloisKeys& k) { return k.device().str(); })
      .def_prop_ro("nbytes", &galois_bytes, "Bytes of all keys on their device.")
      .def("__len__", [](const GaloisKeys& k) { return k.keys().size(); })
      .def("__repr__", [](const GaloisKeys& k) {
             return key_repr("GaloisKeys", k, galois_bytes(k), ", keys=" + std::to_string(k.keys().size()));
           })
      .def("update", [](GaloisKeys& k, const GaloisKeys& other) {
             if (!k.context() || !other.context() ||
                 k.context()->parameter_hash() != other.context()->parameter_hash()) {
               throw InvalidArgument("other: Galois keys of another context");
             }
             if (other.device() != k.device()) {
               throw InvalidArgument("other: Galois keys on " + other.device().str() + ", expected " + k.device().str());
             }
             for (const auto& [e, key] : other.keys()) {
               if (!k.has_key(e)) k.insert(e, key);
             }
           }, "other"_a,
           "Adds the keys of `other` (same context, device and key set) that this set lacks. "
           "ValueError naming `other` otherwise.")
      .def_prop_ro("key_set_id", &GaloisKeys::key_id)
      .def("has_key", [](const GaloisKeys& k, nb::handle e) {
            return k.has_key(static_cast<u32>(u64_arg(e, "galois_elt", 0, UINT32_MAX)));
          }, "galois_elt"_a)
      .def_prop_ro("galois_elts", [](const GaloisKeys& k) {
            std::vector<u32> e;
            for (const auto& [g, _] : k.keys()) e.push_back(g);
            return e;
          })
      .def_prop_ro("levels", [](const GaloisKeys& k) {
            std::map<u32, std::size_t> out;
            for (const auto& [g, key] : k.keys()) out[g] = key.level();
            return out;
          }, "Each key's level (element -> the highest level it serves; KSwitchKey::level).")
      .def_prop_ro("compact_elts", [](const GaloisKeys& k) {
            std::vector<u32> e;
            for (const auto& [g, key] : k.keys()) {
              if (key.compact()) e.push_back(g);
            }
            return e;
          }, "The elements whose keys are compact (KSwitchKey::compact).")
      .def("to", [](const GaloisKeys& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a,
           nb::call_guard<Release>());
  bind::def_serialization<GaloisKeys>(gk_cls, "galois_keys", [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
    return io::load_galois_keys(v, c, d, o);
  });

  auto swk_cls = nb::class_<SwitchingKey>(
      m, "SwitchingKey", "A key switching ciphertexts from one secret key to another.");
  bind::def_serialization<SwitchingKey>(
      swk_cls, "switching_key",
      [](io::ByteView v, const Ctx& c, const Device& d, const io::LoadOptions& o) {
        return io::load_switching_key(v, c, d, o);
      });
  swk_cls
      .def_prop_ro("device", [](const SwitchingKey& k) { return k.device().str(); })
      .def_prop_ro("key_set_id", &SwitchingKey::key_id)
      .def_prop_ro("from_key_set_id", &SwitchingKey::from_key_id)
      .def_prop_ro("max_level", &SwitchingKey::max_level)
      .def_prop_ro("nbytes", [](const SwitchingKey& k) { return k.key().buffer().bytes(); })
      .def("__repr__", [](const SwitchingKey& k) {
             return key_repr("SwitchingKey", k, k.key().buffer().bytes(), ", max_level=" + std::to_string(k.max_level()));
           })
      .def("to", [](const SwitchingKey& k, const std::string& d) { return k.to(dev_of(d)); }, "device"_a,
           nb::call_guard<Release>());

  // ---- key generation, encoding, encryption ---------------------------------------------
  nb::class_<KeyGenerator>(m, "KeyGenerator",
                           "Generates the secret key on `device`; seed=None draws from the OS.")
      .def("__repr__", [](const KeyGenerator& k) { return "veil.KeyGenerator(" + context_repr(*k.context()).substr(5) + ")"; })
      .def("__init__", [](KeyGenerator* k, const Ctx& c, const std::string& d, nb::handle seed,
                          nb::handle hw) {
             const auto s = seed_arg(seed);
             const Device dev = dev_of(d);
             const std::size_t h = size_arg(hw, "hamming_weight");
             Release r;
             new (k) KeyGenerator(c, dev, s, h);
           }, "context"_a, "device"_a = "cpu", "seed"_a.none() = nb::none(),
           "hamming_weight"_a = 0,
           "hamming_weight > 0 samples a sparse ternary secret with exactly that many nonzero "
           "coefficients (CKKS bootstrapping's encapsulated secret).")
      .def("__init__", [](KeyGenerator* k, const Ctx& c, const SecretKey& sk, nb::handle seed) {
             const auto s = seed_arg(seed);
             Release r;
             new (k) KeyGenerator(c, sk, s);
           }, "context"_a, "secret_key"_a, "seed"_a.none() = nb::none())
      .def("secret_key", &KeyGenerator::secret_key)
      .def("create_public_key", &KeyGenerator::create_public_key, nb::call_guard<Release>())
      .def("create_relin_keys", &KeyGenerator::create_relin_keys, "compact"_a = false,
           nb::call_guard<Release>(),
           "Switches s^2 to s. compact: the key stores its b_j only and regenerates its a_j "
           "where they are read (half the bytes; KSwitchKey::compact).")
      .def("create_galois_keys", [](const KeyGenerator& k, nb::handle steps_in, bool cols) {
             if (steps_in.is_none()) {
               Release r;
               return k.create_galois_keys();
             }
             auto steps = list_arg(steps_in, "steps", [](nb::handle x) { return int_arg(x, "steps"); });
             Release r;
             return k.create_galois_keys(steps, cols);
           }, "steps"_a.none() = nb::none(), "include_columns"_a = true,
           "Keys for the given rotation steps (default: every power of two, both directions) "
           "and the column swap.")
      .def("create_switching_key", [](const KeyGenerator& k, const SecretKey& from, nb::handle lv) {
             const std::size_t level = lv.is_none() ? static_cast<std::size_t>(-1)
                                                    : size_arg(lv, "max_level");
             Release r;
             return k.create_switching_key(from, level);
           }, "from_key"_a, "max_level"_a.none() = nb::none(),
           "A key switching ciphertexts under `from_key` to this generator's secret, for levels "
           "<= max_level (default: all; lower levels keep only Q_max_level and P limbs).")
      .def("create_galois_keys_from_elts", [](const KeyGenerator& k, nb::handle e, bool compact,
                                              nb::handle lv) {
             auto elts = list_arg(e, "galois_elts", [](nb::handle x) {
               return static_cast<std::uint32_t>(u64_arg(x, "galois_elts", 0, UINT32_MAX));
             });
             std::vector<std::size_t> levels;
             if (!lv.is_none()) {
               levels = list_arg(lv, "levels", [](nb::handle x) { return size_arg(x, "levels"); });
             }
             Release r;
             return k.create_galois_keys_from_elts(elts, compact, levels);
           }, "galois_elts"_a, "compact"_a = false, "levels"_a.none() = nb::none(),
           "Keys for explicit Galois elements; compact: each stores its b_j only (half the "
           "bytes; KSwitchKey::compact); levels: None, or one level per element (the key serves "
           "levels <= it and stores only their limbs and digits; KSwitchKey::level).");

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

  using C128Array = nb::ndarray<const std::complex<double>, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
  using F64Array = nb::ndarray<const double, nb::ndim<1>, nb::c_contig, nb::device::cpu>;
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

  nb::class_<Encryptor>(m, "Encryptor")
      .def("__repr__", [](const Encryptor& o) { return "veil.Encryptor(" + context_repr(*o.context()).substr(5) + ")"; })
      .def("__init__", [](Encryptor* e, const Ctx& c, const PublicKey& k, nb::handle seed) {
             new (e) Encryptor(c, k, seed_arg(seed));
           }, "context"_a, "public_key"_a, "seed"_a.none() = nb::none())
      .def("__init__", [](Encryptor* e, const Ctx& c, const SecretKey& k, nb::handle seed) {
             new (e) Encryptor(c, k, seed_arg(seed));
           }, "context"_a, "secret_key"_a, "seed"_a.none() = nb::none())
      .def("encrypt", &Encryptor::encrypt, "plain"_a, nb::call_guard<Release>())
      .def("encrypt_zero", &Encryptor::encrypt_zero, nb::call_guard<Release>());

  nb::class_<Decryptor>(m, "Decryptor")
      .def("__repr__", [](const Decryptor& o) { return "veil.Decryptor(" + context_repr(*o.context()).substr(5) + ")"; })
      .def("__init__", [](Decryptor* d, const Ctx& c, const SecretKey& k) { new (d) Decryptor(c, k); },
           "context"_a, "secret_key"_a)
      .def("__init__", [](Decryptor*, const Ctx&, const PublicKey&) {
             throw TypeMismatch("secret_key: Decryptor needs a SecretKey, got a PublicKey");
           }, "context"_a, "secret_key"_a)
      .def("decrypt", &Decryptor::decrypt, "encrypted"_a, "check_noise"_a = true,
           nb::call_guard<Release>(),
           "Decrypts. BFV/BGV: ValueError naming `encrypted` when its noise budget is 0 (the "
           "result would be wrong) unless check_noise=False; ValueError when the ciphertext "
           "belongs to another key set.")
      .def_prop_rw("noise_flooding", &Decryptor::noise_flooding, [](Decryptor& d, nb::handle b) {
             d.set_noise_flooding(int_arg(b, "bits"));
           }, "CKKS: bits of uniform flooding noise added at decryption (IND-CPA-D; 0 = off).")
      .def("invariant_noise_budget", &Decryptor::invariant_noise_budget, "encrypted"_a,
           nb::call_guard<Release>());

  bind::def_seal(m);

  // ---- evaluation --------------------------------------------------------------------------
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
             auto steps = list_arg(s, "steps", [](nb::handle x) { return int_arg(x, "steps"); });
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
             auto cs = list_arg(cts, "encrypted", [&](nb::handle x) {
               if (!nb::isinstance<Ciphertext>(x)) {
                 throw TypeMismatch("encrypted: expected a sequence of Ciphertext");
               }
               keep.push_back(nb::borrow(x));
               return &nb::cast<const Ciphertext&>(x);
             });
             auto ps = list_arg(pts, "plain", [&](nb::handle x) {
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
             auto cs = list_arg(cts, "encrypted", [&](nb::handle x) {
               if (!nb::isinstance<Ciphertext>(x)) {
                 throw TypeMismatch("encrypted: expected a sequence of Ciphertext");
               }
               keep.push_back(nb::borrow(x));
               return &nb::cast<const Ciphertext&>(x);
             });
             auto vs = list_arg(vals, "values", [](nb::handle x) { return real_arg(x, "values"); });
             const double constant = real_arg(c, "constant"), scale = real_arg(s, "scale");
             const std::size_t level = size_arg(lv, "level");
             Release r;
             return ev.scalar_combination(cs, vs, constant, scale, level);
           }, "encrypted"_a, "values"_a, "constant"_a, "scale"_a, "level"_a,
           "CKKS: constant + sum_i values[i] * encrypted[i] at `level` and `scale`, one pass.")
      .def("multiply_scalar", [](const Evaluator& ev, const Ciphertext& c, nb::handle v,
                                  nb::handle s) {
             const double value = real_arg(v, "value"), scale = real_arg(s, "scale");
             Release r;
             return ev.multiply_scalar(c, value, scale);
           }, "encrypted"_a, "value"_a, "scale"_a,
           "CKKS: encrypted * value (a real constant at `scale`; the scale multiplies).")
      .def("add_scalar", [](const Evaluator& ev, const Ciphertext& c, nb::handle v) {
             const double value = real_arg(v, "value");
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

  bind::def_circuits(m);  // the circuits layer (circuits_bind.cpp), after the classes it uses
  bind::def_comparison(m);  // sign, max, inverse, sqrt (comparison_bind.cpp)

  // Ctrl-C during long C++ loops (key generation, products of many ciphertexts): they call
  // check_interrupt() between steps, which raises KeyboardInterrupt from Python's signal state.
  set_interrupt_handler([] {
    if (!Py_IsInitialized()) return;
    nb::gil_scoped_acquire gil;
    if (PyErr_CheckSignals() != 0) throw nb::python_error();
  });
}
