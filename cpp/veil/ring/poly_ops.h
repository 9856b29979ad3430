// Element-wise operations on RNS polynomials ([npolys][base.size()][n] arrays on one device).
// All run through for_each_limb, so the CPU and CUDA backends share one implementation, and each
// is one template over the word W (u32 for moduli below 2^31, u64 otherwise). The WordPtr
// overloads are what scheme code calls: they dispatch once on the operands' word size.
#pragma once
#include <cstddef>

#include "veil/backend/device.h"
#include "veil/backend/word_buffer.h"
#include "veil/core/modarith.h"
#include "veil/ring/rns_base.h"

namespace veil::poly {

/// out = a + b (mod q per limb). out may alias a or b.
template <class W>
void add(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys, const W* a,
         const W* b, W* out);
/// out = a - b.
template <class W>
void sub(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys, const W* a,
         const W* b, W* out);
/// out = -a.
template <class W>
void negate(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            const W* a, W* out);
/// out = a * b coefficient-wise (NTT-form product).
template <class W>
void multiply(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
              const W* a, const W* b, W* out);
/// out = sum_{k < npolys} polys[k] * x^k coefficient-wise (NTT form), by Horner's rule in one
/// pass: polys is [npolys][base.size()][n], x and out [base.size()][n] (out may not alias polys).
/// Decryption's phase c_0 + c_1 s + c_2 s^2 + ... (Dong 2016 §2; Fan-Vercauteren 2012).
template <class W>
void horner(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            const W* polys, const W* x, W* out);
/// out = out + a * b coefficient-wise.
template <class W>
void multiply_accumulate(const Device& dev, const RnsBase& base, std::size_t n,
                         std::size_t npolys, const W* a, const W* b, W* out);
/// out[p] = a[p] * b for every polynomial p of a (b is a single polynomial).
template <class W>
void multiply_broadcast(const Device& dev, const RnsBase& base, std::size_t n,
                        std::size_t npolys, const W* a, const W* b, W* out);
/// out = a * s (one word scalar, any u64, reduced per limb).
template <class W>
void multiply_word(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   const W* a, u64 s, W* out);
/// out[p] = sum_i a_i[p] * b_i (slot-wise in NTT form): `count` operands a_i of npolys
/// polynomials each and single polynomials b_i, given as tables of device pointers ([count] on
/// `dev`); one pass reads each operand once (the plaintext-matrix products of CKKS linear
/// transforms, Halevi-Shoup BSGS). out must not alias any a_i or b_i.
/// b_shifts ([count] on `dev`, or null: every b_i in full form): terms i >= `unshifted` read
/// b_i stored as one period with shift b_shifts[i] (CKKSEncoder::encode_extended_periodic):
/// limbs of N >> s_i words, word j of the full limb read at j >> s_i; terms below `unshifted`
/// are read in full form (their shifts unread: put the full-form terms first, they keep the
/// vector loads). The sum is exact, so the terms' order does not change a word. Every shift is
/// at most log2(N) - 2 (so 2^s divides N; Evaluator::multiply_diagonals_bsgs checks it).
/// @throws InvalidArgument when unshifted > count (with b_shifts).
template <class W>
void dot_broadcast(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   const u64* a_ptrs, const u64* b_ptrs, std::size_t count, W* out,
                   const u64* b_shifts = nullptr, std::size_t unshifted = 0);
/// out[p] = sum_i a_i[p] * r_i + c (constant term only in polynomial 0, slot-wise in NTT form):
/// operand i is read at a_ptrs[i] with a_strides[i] words between its polynomials (so operands
/// of any level >= out's read only out's limbs), r_i's residues are residues[i * limbs + l],
/// c's constant[l] (null: none). One pass for the scalar linear combinations of polynomial
/// evaluation (CKKS bootstrapping's EvalMod), and for CKKS products with and sums of real
/// constants (one term). out may be an operand with the same stride (each word is read before
/// it is written).
template <class W>
void scalar_combination(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        const u64* a_ptrs, const u64* a_strides, const u64* residues,
                        std::size_t count, const u64* constant, W* out);
/// Lifts a polynomial with coefficients in [0, t) (t < every q; 64-bit words, as plaintexts
/// mod t are stored) into every limb of `base`, centering values above t/2 to negative ones when
/// `centered` (so -1 mod t stays -1).
template <class W>
void lift_small(const Device& dev, const RnsBase& base, std::size_t n, const u64* in, u64 t,
                bool centered, W* out);
/// Tensor product of NTT-form polynomial vectors: out[k] = sum_{i+j=k} a[i] * b[j] (sizes sa,
/// sb; out has sa + sb - 1 polynomials and must not alias a or b). 2 x 2 (the product of two
/// fresh ciphertexts) is one fused pass: d0 = a0 b0, d1 = a0 b1 + a1 b0, d2 = a1 b1.
template <class W>
void tensor(const Device& dev, const RnsBase& base, std::size_t n, const W* a, std::size_t sa,
            const W* b, std::size_t sb, W* out);
/// Galois automorphism X -> X^g (g odd, < 2N) in coefficient form.
template <class W>
void automorphism_coeff(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        u32 galois_elt, const W* in, W* out);
/// The same automorphism on NTT-form data in Veil's bit-reversed NTT order: a permutation.
template <class W>
void automorphism_ntt(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                      u32 galois_elt, const W* in, W* out);

// ---- run-time word size (the operands' WordPtr) ---------------------------------------------
void add(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
         ConstWordPtr a, ConstWordPtr b, WordPtr out);
void sub(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
         ConstWordPtr a, ConstWordPtr b, WordPtr out);
void negate(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            ConstWordPtr a, WordPtr out);
void multiply(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
              ConstWordPtr a, ConstWordPtr b, WordPtr out);
void multiply_accumulate(const Device& dev, const RnsBase& base, std::size_t n,
                         std::size_t npolys, ConstWordPtr a, ConstWordPtr b, WordPtr out);
void horner(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            ConstWordPtr polys, ConstWordPtr x, WordPtr out);
void multiply_broadcast(const Device& dev, const RnsBase& base, std::size_t n,
                        std::size_t npolys, ConstWordPtr a, ConstWordPtr b, WordPtr out);
void multiply_word(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   ConstWordPtr a, u64 s, WordPtr out);
void lift_small(const Device& dev, const RnsBase& base, std::size_t n, const u64* in, u64 t,
                bool centered, WordPtr out);
void dot_broadcast(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   const u64* a_ptrs, const u64* b_ptrs, std::size_t count, WordPtr out,
                   const u64* b_shifts = nullptr, std::size_t unshifted = 0);
void scalar_combination(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        const u64* a_ptrs, const u64* a_strides, const u64* residues,
                        std::size_t count, const u64* constant, WordPtr out);
void automorphism_coeff(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        u32 galois_elt, ConstWordPtr in, WordPtr out);
void tensor(const Device& dev, const RnsBase& base, std::size_t n, ConstWordPtr a, std::size_t sa,
            ConstWordPtr b, std::size_t sb, WordPtr out);
void automorphism_ntt(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                      u32 galois_elt, ConstWordPtr in, WordPtr out);

}  // namespace veil::poly
