// Settings read from the environment (A/B switches of benchmarks: VEIL_GRAPHS, VEIL_DOUBLE_HOIST,
// VEIL_BSGS_BRANCHES, VEIL_FUSED_MODDOWN_MAX_DROP, ...).
#pragma once
#include <cstdlib>
#include <cstring>

namespace veil {

/// An on/off switch that is on by default: false only when the environment variable `name` is
/// exactly "0".
/// @param name the variable's name (e.g. "VEIL_GRAPHS").
/// @return false when the variable is set to "0", true otherwise (unset included).
inline bool env_flag_on(const char* name) {
  const char* v = std::getenv(name);
  return !(v != nullptr && std::strcmp(v, "0") == 0);
}

/// The environment variable `name` as an integer in [lo, hi], or `fallback` when it is unset, not
/// a whole decimal integer, or out of range (a malformed setting is ignored, never read as 0).
/// @param name the variable's name.
/// @param lo the smallest accepted value.
/// @param hi the largest accepted value.
/// @param fallback the value when the variable is unset or malformed.
/// @return the parsed value in [lo, hi], or fallback.
inline long long env_integer(const char* name, long long lo, long long hi, long long fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr) return fallback;
  char* end = nullptr;
  const long long x = std::strtoll(v, &end, 10);
  return end != v && *end == '\0' && x >= lo && x <= hi ? x : fallback;
}

}  // namespace veil
