// Helpers shared by the binding files of veil._core (bind_common.h).
#include "bind_common.h"

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <string>
#include <vector>

namespace veil::bind {

namespace {

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

// ", got <repr>" for a refused value that may be quoted, "" for one that may not (bind_common.h).
std::string got(nb::handle h, bool quote) { return quote ? ", got " + py_repr(h) : std::string(); }

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

}  // namespace

Device dev_of(const std::string& s) { return Device::parse(s); }

std::uint64_t u64_arg(nb::handle h, const char* name, std::uint64_t lo, std::uint64_t hi,
                      bool quote) {
  nb::object v = as_index(h, name);
  const int negative = PyObject_RichCompareBool(v.ptr(), nb::int_(0).ptr(), Py_LT);
  if (negative == 0) {
    const unsigned long long x = PyLong_AsUnsignedLongLong(v.ptr());
    if (PyErr_Occurred()) PyErr_Clear(); else if (x >= lo && x <= hi) return x;
  } else {
    PyErr_Clear();
  }
  throw InvalidArgument(std::string(name) + ": expected an integer in " + std::to_string(lo) +
                        ".." + std::to_string(hi) + got(v, quote));
}

std::int64_t i64_arg(nb::handle h, const char* name, std::int64_t lo, std::int64_t hi,
                     bool quote) {
  nb::object v = as_index(h, name);
  int overflow = 0;
  const long long x = PyLong_AsLongLongAndOverflow(v.ptr(), &overflow);
  if (PyErr_Occurred()) PyErr_Clear();
  if (!overflow && x >= lo && x <= hi) return x;
  throw InvalidArgument(std::string(name) + ": expected an integer in " + std::to_string(lo) +
                        ".." + std::to_string(hi) + got(v, quote));
}

std::size_t size_arg(nb::handle h, const char* name, std::size_t hi, bool quote) {
  return static_cast<std::size_t>(u64_arg(h, name, 0, hi, quote));
}

int int_arg(nb::handle h, const char* name, int lo, int hi, bool quote) {
  return static_cast<int>(i64_arg(h, name, lo, hi, quote));
}

double real_arg(nb::handle h, const char* name, bool quote) {
  if (PyComplex_Check(h.ptr())) {
    throw TypeMismatch(std::string(name) + ": expected a real number, got complex");
  }
  if (PyBool_Check(h.ptr()) || !(PyFloat_Check(h.ptr()) || PyIndex_Check(h.ptr()) ||
                                 PyObject_HasAttrString(h.ptr(), "__float__"))) {
    throw TypeMismatch(std::string(name) + ": expected a real number, got " +
                       Py_TYPE(h.ptr())->tp_name);
  }
  const double v = PyFloat_AsDouble(h.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw InvalidArgument(std::string(name) + ": expected a real number within the range of a "
                          "double" + got(h, quote));
  }
  return v;
}

std::optional<std::uint64_t> seed_arg(nb::handle h, const char* name) {
  if (h.is_none()) return std::nullopt;
  return u64_arg(h, name, 0, UINT64_MAX, /*quote=*/false);
}

std::vector<double> reals_arg(nb::handle h, const char* name, bool quote) {
  return list_arg(h, name, "real numbers",
                  [&](nb::handle x) { return real_arg(x, name, quote); });
}

std::string dtype_name(const nb::dlpack::dtype& d) {
  const char* kind = d.code == uint8_t(nb::dlpack::dtype_code::Int)      ? "int"
                     : d.code == uint8_t(nb::dlpack::dtype_code::UInt)   ? "uint"
                     : d.code == uint8_t(nb::dlpack::dtype_code::Float)  ? "float"
                     : d.code == uint8_t(nb::dlpack::dtype_code::Complex) ? "complex"
                                                                          : "other";
  return std::string(kind) + std::to_string(d.bits);
}

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

}  // namespace veil::bind
