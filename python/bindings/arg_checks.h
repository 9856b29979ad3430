// Argument checks shared by the binding files: a Python integer or real number converted with
// the argument's name in every error (TypeMismatch for the wrong type, InvalidArgument for a
// value out of range), as module.cpp's own checks.
#pragma once
#include <nanobind/nanobind.h>

#include <cstdint>
#include <string>

#include "veil/core/error.h"

namespace veil::bind {

/// An integer in lo..hi named `name` (bool refused).
inline std::int64_t int_of(nanobind::handle h, const char* name, std::int64_t lo,
                           std::int64_t hi) {
  if (PyBool_Check(h.ptr()) || !PyIndex_Check(h.ptr())) {
    throw TypeMismatch(std::string(name) + ": expected an integer, got " +
                       Py_TYPE(h.ptr())->tp_name);
  }
  nanobind::object v = nanobind::steal(PyNumber_Index(h.ptr()));
  int overflow = 0;
  const long long x = v.is_valid() ? PyLong_AsLongLongAndOverflow(v.ptr(), &overflow) : 0;
  if (PyErr_Occurred()) PyErr_Clear();
  if (!v.is_valid() || overflow || x < lo || x > hi) {
    throw InvalidArgument(std::string(name) + ": expected an integer in " + std::to_string(lo) +
                          ".." + std::to_string(hi));
  }
  return x;
}

/// A real number named `name` (int, float or anything with __float__; bool and complex refused).
inline double real_of(nanobind::handle h, const char* name) {
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

}  // namespace veil::bind
