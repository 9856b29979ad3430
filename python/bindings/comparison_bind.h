// Bindings of the non-polynomial CKKS functions (cpp/veil/circuits/comparison.h, inverse.h) in
// veil._core, one binding file for that class family (comparison_bind.cpp).
#pragma once
#include <nanobind/nanobind.h>

namespace veil::bind {
/// Adds SignPlan, ComparisonEvaluator, InversePlan, InvSqrtPlan, InverseEvaluator and their
/// planning functions to `m` (the extension module veil._core).
void def_comparison(nanobind::module_& m);
} // namespace veil::bind
