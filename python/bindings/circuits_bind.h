// Bindings of the C++ circuits layer (cpp/veil/circuits) in veil._core, one binding file for
// that class family (circuits_bind.cpp).
#pragma once
#include <nanobind/nanobind.h>

namespace veil::bind {
/// Adds the circuits classes and functions to `m` (the extension module veil._core).
void def_circuits(nanobind::module_& m);
}  // namespace veil::bind
