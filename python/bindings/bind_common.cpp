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

std::uint64_t u64_arg(nb::handle h, const char* name, std::uint64_t lo, std::uint64_t hi) {
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

std::size_t size_arg(nb::handle h, const char* name, std::size_t hi) {
  return static_cast<std::size_t>(u64_arg(h, name, 0, hi));
}

int int_arg(nb::handle h, const char* name, int lo, int hi) {
  return static_cast<int>(i64_arg(h, name, lo, hi));
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

std::int64_t int_of(nb::handle h, const char* name, std::int64_t lo, std::int64_t hi) {
  if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr())) {
    throw TypeMismatch(std::string(name) + ": expected an integer, got " +
                       Py_TYPE(h.ptr())->tp_name);
  }
  nb::object v = nb::steal(PyNumber_Index(h.ptr()));
  int overflow = 0;
  const long long x = v.is_valid() ? PyLong_AsLongLongAndOverflow(v.ptr(), &overflow) : 0;
  if (PyErr_Occurred()) PyErr_Clear();
  if (!v.is_valid() || overflow || x < lo || x > hi) {
    throw InvalidArgument(std::string(name) + ": expected an integer in " + std::to_string(lo) +
                          ".." + std::to_string(hi));
  }
  return x;
}

double real_of(nb::handle h, const char* name) {
  if (PyBool_Check(h.ptr()) || PyComplex_Check(h.ptr()) ||
      !(PyFloat_Check(h.ptr()) || PyIndex_Check(h.ptr()) ||
        PyObject_HasAttrString(h.ptr(), "__float__"))) {
    throw TypeMismatch(std::string(name) + ": expected a real number, got " +
                       Py_TYPE(h.ptr())->tp_name);
  }
  const double v = PyFloat_AsDouble(h.ptr());
  if (PyErr_Occurred()) {
    PyErr_Clear();
    throw InvalidArgument(std::string(name) + ": does not fit a double");
  }
  return v;
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
