// Element-wise operations on RNS polynomials ([npolys][base.size()][n] arrays on one device).
// All run through for_each, so the CPU and CUDA backends share one implementation.
#pragma once
#include <cstddef>

#include "veil/backend/device.h"
#include "veil/core/modarith.h"
#include "veil/ring/rns_base.h"

namespace veil::poly {

/// out = a + b (mod q per limb). out may alias a or b.
void add(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys, const u64* a,
         const u64* b, u64* out);
/// out = a - b.
void sub(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys, const u64* a,
         const u64* b, u64* out);
/// out = -a.
void negate(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            const u64* a, u64* out);
/// out = a * b coefficient-wise (NTT-form product).
void multiply(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
              const u64* a, const u64* b, u64* out);
/// out = out + a * b coefficient-wise.
void multiply_accumulate(const Device& dev, const RnsBase& base, std::size_t n,
                         std::size_t npolys, const u64* a, const u64* b, u64* out);
/// out[p] = a[p] * b for every polynomial p of a (b is a single polynomial).
void multiply_broadcast(const Device& dev, const RnsBase& base, std::size_t n,
                        std::size_t npolys, const u64* a, const u64* b, u64* out);
/// out = a * scalar[limb] (scalars: device array of base.size() residues).
void multiply_scalar(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                     const u64* a, const u64* scalars, u64* out);
/// out = a * s (one word scalar, reduced per limb).
void multiply_word(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   const u64* a, u64 s, u64* out);
/// Lifts a polynomial with coefficients in [0, t) (t < every q) into every limb of `base`,
/// centering values above t/2 to negative ones when `centered` (so -1 mod t stays -1).
void lift_small(const Device& dev, const RnsBase& base, std::size_t n, const u64* in, u64 t,
                bool centered, u64* out);

/// Galois automorphism X -> X^g (g odd, < 2N) in coefficient form.
void automorphism_coeff(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        u32 galois_elt, const u64* in, u64* out);
/// The same automorphism on NTT-form data in Veil's bit-reversed NTT order: a permutation.
void automorphism_ntt(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                      u32 galois_elt, const u64* in, u64* out);

}  // namespace veil::poly
