// Checks shared by Veil's and SEAL's loaders: coefficient ranges and scalar fields of hostile
// bytes. Messages name the object and the position, never a coefficient's value (a secret key's
// coefficients must not reach logs).
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "veil/ring/rns_base.h"

namespace veil::io {

/// Every word of `polys` polynomials [poly][limb][n] over `base` is below its limb's modulus.
/// Throws InvalidArgument naming `what`, the polynomial, limb and coefficient index otherwise.
/// @param words polys * base.size() * n host words, [poly][limb][n].
/// @param polys the number of polynomials.
/// @param base the limbs' moduli.
/// @param n the ring degree N.
/// @param what the object, for the message.
/// @throws InvalidArgument naming the first word that is not below its modulus (not its value).
void check_below_moduli(const std::uint64_t* words, std::size_t polys, const RnsBase& base,
                        std::size_t n, const std::string& what);
/// The same over words stored as `word_bytes` (4 or 8) little-endian bytes each, at any
/// alignment (a serialized body read in place).
/// @param words the bytes, polys * base.size() * n words of word_bytes each.
/// @param word_bytes 4 or 8 (any other value is read as 8).
/// @param polys the number of polynomials.
/// @param base the limbs' moduli.
/// @param n the ring degree N.
/// @param what the object, for the message.
/// @throws InvalidArgument naming the first word that is not below its modulus.
void check_below_moduli(const std::uint8_t* words, std::size_t word_bytes, std::size_t polys,
                        const RnsBase& base, std::size_t n, const std::string& what);
/// Every one of `count` words is below `modulus`.
/// @param words the words.
/// @param count the number of words.
/// @param modulus the bound (a plain modulus).
/// @param what the object, for the message.
/// @throws InvalidArgument naming the first word that is not below `modulus`.
void check_below_modulus(const std::uint64_t* words, std::size_t count, std::uint64_t modulus,
                         const std::string& what);
/// A CKKS scale: finite and positive.
/// @param scale the scale read.
/// @param what the object, for the message.
/// @throws InvalidArgument for NaN, an infinity, zero or a negative scale.
void check_scale(double scale, const std::string& what);
/// "0x" followed by 16 hex digits.
/// @param v the value.
/// @return its 18-character lower-case hex form.
std::string hex64(std::uint64_t v);

}  // namespace veil::io
