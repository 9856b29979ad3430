// Internal to rns/: host-only helpers for the *_host.cpp precomputation files (argument checks
// and exact big-integer arithmetic with Boost.Multiprecision). Never include from code that
// nvcc compiles.
#pragma once
#include <boost/multiprecision/cpp_int.hpp>
#include <numeric>
#include <string>
#include <vector>

#include "veil/core/error.h"
#include "veil/core/modarith.h"
#include "veil/ring/rns_base.h"

namespace veil::rns_host {

using boost::multiprecision::cpp_int;

/// Throws InvalidArgument (naming `what` and the argument) if a base is empty, the source base
/// has two moduli that are not co-prime, or the two bases share a modulus.
/// @param from the source base.
/// @param to the target base.
/// @param what the caller, for the message.
/// @param from_name the source's argument name.
/// @param to_name the target's argument name.
/// @throws InvalidArgument on an empty base, non-co-prime source moduli or a shared modulus.
inline void check_bases(const RnsBase& from, const RnsBase& to, const std::string& what,
                        const char* from_name = "from", const char* to_name = "to") {
  const std::string f = std::string("'") + from_name + "'", t = std::string("'") + to_name + "'";
  if (from.size() == 0) throw InvalidArgument(what + ": base " + f + " is empty");
  if (to.size() == 0) throw InvalidArgument(what + ": base " + t + " is empty");
  for (std::size_t i = 0; i < from.size(); ++i) {
    for (std::size_t l = i + 1; l < from.size(); ++l) {
      if (std::gcd(from[i].value, from[l].value) != 1)
        throw InvalidArgument(what + ": base " + f + " has moduli that are not co-prime (" +
                              std::to_string(from[i].value) + ", " +
                              std::to_string(from[l].value) + ")");
    }
    for (std::size_t j = 0; j < to.size(); ++j) {
      if (from[i].value == to[j].value)
        throw InvalidArgument(what + ": bases " + f + " and " + t + " overlap (modulus " +
                              std::to_string(from[i].value) + " is in both)");
    }
  }
}

/// Throws InvalidArgument if two moduli of `base` are not co-prime.
/// @param base the base.
/// @param what the caller, for the message.
/// @param name the base's argument name.
/// @throws InvalidArgument if two moduli share a factor.
inline void check_coprime(const RnsBase& base, const std::string& what, const char* name) {
  for (std::size_t i = 0; i < base.size(); ++i)
    for (std::size_t l = i + 1; l < base.size(); ++l)
      if (std::gcd(base[i].value, base[l].value) != 1)
        throw InvalidArgument(what + ": base '" + name + "' has moduli that are not co-prime");
}

/// The exact product of a base's moduli.
/// @param base the base.
/// @return prod_i q_i as a big integer (1 for an empty base).
inline cpp_int product(const RnsBase& base) {
  cpp_int p = 1;
  for (const auto& m : base.moduli()) p *= m.value;
  return p;
}

/// a mod m for a non-negative big integer, as a word.
/// @param a a non-negative big integer.
/// @param m the modulus, > 0.
/// @return a mod m.
inline u64 mod_word(const cpp_int& a, u64 m) { return static_cast<u64>(a % m); }

/// Splits floor(num * 2^128 / den) (num < den) into (hi, lo): a fraction in 0.128 fixed point.
/// @param num the numerator, below den.
/// @param den the denominator, > 0.
/// @param hi receives the fraction's high 64 bits.
/// @param lo receives its low 64 bits.
inline void fixed_point_fraction(const cpp_int& num, const cpp_int& den, u64& hi, u64& lo) {
  const cpp_int f = (num << 128) / den;
  hi = static_cast<u64>(f >> 64);
  lo = static_cast<u64>(f & cpp_int(~u64(0)));
}

}  // namespace veil::rns_host
