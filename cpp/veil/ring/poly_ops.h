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
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words, residues in [0, q).
/// @param b the same shape as a.
/// @param out the same shape; receives a + b.
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
template <class W>
void add(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys, const W* a,
         const W* b, W* out);
/// out = a - b.
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words, residues in [0, q).
/// @param b the same shape as a.
/// @param out the same shape; receives a - b (may alias a or b).
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
template <class W>
void sub(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys, const W* a,
         const W* b, W* out);
/// out = -a.
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words, residues in [0, q).
/// @param out the same shape; receives -a (may alias a).
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
template <class W>
void negate(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            const W* a, W* out);
/// out = a * b coefficient-wise (NTT-form product).
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words in NTT form.
/// @param b the same shape as a, NTT form.
/// @param out the same shape; receives the products (may alias a or b).
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
template <class W>
void multiply(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
              const W* a, const W* b, W* out);
/// out = sum_{k < npolys} polys[k] * x^k coefficient-wise (NTT form), by Horner's rule in one
/// pass: polys is [npolys][base.size()][n], x and out [base.size()][n] (out may not alias polys).
/// Decryption's phase c_0 + c_1 s + c_2 s^2 + ... (Dong 2016 §2; Fan-Vercauteren 2012).
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of `polys` (the degree in x plus one), >= 1.
/// @param polys [npolys][base.size()][n] words in NTT form (c_0, c_1, ...).
/// @param x [base.size()][n] words in NTT form (the secret key s for decryption).
/// @param out [base.size()][n]; receives the sum (must not alias polys).
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
template <class W>
void horner(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            const W* polys, const W* x, W* out);
/// out = out + a * b coefficient-wise.
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words in NTT form.
/// @param b the same shape as a, NTT form.
/// @param out the same shape; accumulates a * b.
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
template <class W>
void multiply_accumulate(const Device& dev, const RnsBase& base, std::size_t n,
                         std::size_t npolys, const W* a, const W* b, W* out);
/// out[p] = a[p] * b for every polynomial p of a (b is a single polynomial).
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words in NTT form.
/// @param b one polynomial [base.size()][n] in NTT form.
/// @param out [npolys][base.size()][n]; receives the products.
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
template <class W>
void multiply_broadcast(const Device& dev, const RnsBase& base, std::size_t n,
                        std::size_t npolys, const W* a, const W* b, W* out);
/// out = a * s (one word scalar, any u64, reduced per limb).
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words (either form).
/// @param s the scalar, any 64-bit word (reduced mod each q).
/// @param out the same shape; receives a * s (may alias a).
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
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
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys polynomials per operand a_i and of out: 1, 2 or 3.
/// @param a_ptrs [count] device addresses (as u64) of the operands a_i, each
/// [npolys][base.size()][n], on `dev`.
/// @param b_ptrs [count] device addresses of the single polynomials b_i, on `dev`.
/// @param count the number of terms.
/// @param out [npolys][base.size()][n]; receives the sum.
/// @param b_shifts [count] shifts on `dev`, or nullptr (every b_i in full form).
/// @param unshifted the number of leading terms read in full form (with b_shifts).
/// @throws InvalidArgument if npolys is not 1..3, n is not a power of two >= 2, or W = u32 and a
/// modulus of `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
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
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of out (and read of each operand).
/// @param a_ptrs [count] device addresses (as u64) of the operands' words, on `dev`.
/// @param a_strides [count] words between consecutive polynomials of each operand, on `dev`.
/// @param residues [count][base.size()] residues r_i mod each q_l, on `dev`.
/// @param count the number of terms (0: out = c).
/// @param constant [base.size()] residues of c on `dev`, or nullptr for none.
/// @param out [npolys][base.size()][n]; receives the combination.
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
template <class W>
void scalar_combination(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        const u64* a_ptrs, const u64* a_strides, const u64* residues,
                        std::size_t count, const u64* constant, W* out);
/// Lifts a polynomial with coefficients in [0, t) (t < every q; 64-bit words, as plaintexts
/// mod t are stored) into every limb of `base`, centering values above t/2 to negative ones when
/// `centered` (so -1 mod t stays -1).
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param in n 64-bit words in [0, t), on `dev` (one polynomial, shared by every limb).
/// @param t the small modulus.
/// @param centered whether values above t/2 are lifted as v - t.
/// @param out [base.size()][n] words; receives the lifted polynomial.
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
template <class W>
void lift_small(const Device& dev, const RnsBase& base, std::size_t n, const u64* in, u64 t,
                bool centered, W* out);
/// Tensor product of NTT-form polynomial vectors: out[k] = sum_{i+j=k} a[i] * b[j] (sizes sa,
/// sb; out has sa + sb - 1 polynomials and must not alias a or b). 2 x 2 (the product of two
/// fresh ciphertexts) is one fused pass: d0 = a0 b0, d1 = a0 b1 + a1 b0, d2 = a1 b1.
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param a [sa][base.size()][n] words in NTT form.
/// @param sa the number of polynomials of a, >= 1.
/// @param b [sb][base.size()][n] words in NTT form.
/// @param sb the number of polynomials of b, >= 1.
/// @param out [sa + sb - 1][base.size()][n]; receives the product.
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
template <class W>
void tensor(const Device& dev, const RnsBase& base, std::size_t n, const W* a, std::size_t sa,
            const W* b, std::size_t sb, W* out);
/// Galois automorphism X -> X^g (g odd, < 2N) in coefficient form.
/// Coefficient j goes to j g mod 2N, negated past N (X^N = -1).
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param galois_elt the Galois element g, odd and below 2N.
/// @param in [npolys][base.size()][n] words in coefficient form.
/// @param out the same shape; receives sigma_g(in) (must not alias in).
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
template <class W>
void automorphism_coeff(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        u32 galois_elt, const W* in, W* out);
/// The same automorphism on NTT-form data in Veil's bit-reversed NTT order: a permutation.
/// Slot j reads slot br(((2 br(j) + 1) g mod 2N - 1) / 2) (br: bit reversal over log2 N bits).
/// @tparam W u32 or u64.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param galois_elt the Galois element g, odd and below 2N.
/// @param in [npolys][base.size()][n] words in NTT form.
/// @param out the same shape; receives sigma_g(in) (must not alias in).
/// @throws InvalidArgument if n is not a power of two >= 2, or W = u32 and a modulus of
/// `base` is not below 2^31 (make_view); RuntimeError if a CUDA launch fails.
template <class W>
void automorphism_ntt(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                      u32 galois_elt, const W* in, W* out);

// ---- run-time word size (the operands' WordPtr) ---------------------------------------------
// Each dispatches on out's word size and reads every operand with that size.
/// out = a + b (mod q per limb) on words of the operands' run-time size. out may alias a or b.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words, residues in [0, q).
/// @param b the same shape as a.
/// @param out the same shape; receives a + b.
/// @throws InvalidArgument if the operands' word sizes differ from out's, n is not a power of
/// two >= 2, or the words are 32-bit and a modulus is not below 2^31; RuntimeError if a CUDA
/// launch fails.
void add(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
         ConstWordPtr a, ConstWordPtr b, WordPtr out);
/// out = a - b on words of the operands' run-time size. out may alias a or b.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words, residues in [0, q).
/// @param b the same shape as a.
/// @param out the same shape; receives a - b (may alias a or b).
/// @throws InvalidArgument if the operands' word sizes differ from out's, n is not a power of
/// two >= 2, or the words are 32-bit and a modulus is not below 2^31; RuntimeError if a CUDA
/// launch fails.
void sub(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
         ConstWordPtr a, ConstWordPtr b, WordPtr out);
/// out = -a on words of the operand's run-time size. out may alias a.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words, residues in [0, q).
/// @param out the same shape; receives -a (may alias a).
/// @throws InvalidArgument if the operands' word sizes differ from out's, n is not a power of
/// two >= 2, or the words are 32-bit and a modulus is not below 2^31; RuntimeError if a CUDA
/// launch fails.
void negate(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            ConstWordPtr a, WordPtr out);
/// out = a * b coefficient-wise, on words of the operands' run-time size.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words in NTT form.
/// @param b the same shape as a, NTT form.
/// @param out the same shape; receives the products (may alias a or b).
/// @throws InvalidArgument if the operands' word sizes differ from out's, n is not a power of
/// two >= 2, or the words are 32-bit and a modulus is not below 2^31; RuntimeError if a CUDA
/// launch fails.
void multiply(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
              ConstWordPtr a, ConstWordPtr b, WordPtr out);
/// out = out + a * b coefficient-wise, on words of the operands' run-time size.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words in NTT form.
/// @param b the same shape as a, NTT form.
/// @param out the same shape; accumulates a * b.
/// @throws InvalidArgument if the operands' word sizes differ from out's, n is not a power of
/// two >= 2, or the words are 32-bit and a modulus is not below 2^31; RuntimeError if a CUDA
/// launch fails.
void multiply_accumulate(const Device& dev, const RnsBase& base, std::size_t n,
                         std::size_t npolys, ConstWordPtr a, ConstWordPtr b, WordPtr out);
/// Horner evaluation sum_k polys[k] * x^k (NTT form) on words of the operands' run-time size.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of `polys` (the degree in x plus one), >= 1.
/// @param polys [npolys][base.size()][n] words in NTT form (c_0, c_1, ...).
/// @param x [base.size()][n] words in NTT form (the secret key s for decryption).
/// @param out [base.size()][n]; receives the sum (must not alias polys).
/// @throws InvalidArgument if the operands' word sizes differ from out's, n is not a power of
/// two >= 2, or the words are 32-bit and a modulus is not below 2^31; RuntimeError if a CUDA
/// launch fails.
void horner(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            ConstWordPtr polys, ConstWordPtr x, WordPtr out);
/// out[p] = a[p] * b for every polynomial p of a, on words of the operands' run-time size.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words in NTT form.
/// @param b one polynomial [base.size()][n] in NTT form.
/// @param out [npolys][base.size()][n]; receives the products.
/// @throws InvalidArgument if the operands' word sizes differ from out's, n is not a power of
/// two >= 2, or the words are 32-bit and a modulus is not below 2^31; RuntimeError if a CUDA
/// launch fails.
void multiply_broadcast(const Device& dev, const RnsBase& base, std::size_t n,
                        std::size_t npolys, ConstWordPtr a, ConstWordPtr b, WordPtr out);
/// out = a * s (a word scalar reduced per limb), on words of the operands' run-time size.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param a [npolys][base.size()][n] words (either form).
/// @param s the scalar, any 64-bit word (reduced mod each q).
/// @param out the same shape; receives a * s (may alias a).
/// @throws InvalidArgument if the operands' word sizes differ from out's, n is not a power of
/// two >= 2, or the words are 32-bit and a modulus is not below 2^31; RuntimeError if a CUDA
/// launch fails.
void multiply_word(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   ConstWordPtr a, u64 s, WordPtr out);
/// lift_small on words of out's run-time size.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param in n 64-bit words in [0, t), on `dev`.
/// @param t the small modulus.
/// @param centered whether values above t/2 are lifted as v - t.
/// @param out [base.size()][n] words; receives the lifted polynomial.
/// @throws InvalidArgument if n is not a power of two >= 2, or the words are 32-bit and a
/// modulus is not below 2^31; RuntimeError if a CUDA launch fails.
void lift_small(const Device& dev, const RnsBase& base, std::size_t n, const u64* in, u64 t,
                bool centered, WordPtr out);
/// dot_broadcast on words of out's run-time size (every operand has out's words).
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys polynomials per operand a_i and of out: 1, 2 or 3.
/// @param a_ptrs [count] device addresses of the operands a_i, on `dev`.
/// @param b_ptrs [count] device addresses of the polynomials b_i, on `dev`.
/// @param count the number of terms.
/// @param out [npolys][base.size()][n]; receives the sum.
/// @param b_shifts [count] shifts on `dev`, or nullptr.
/// @param unshifted the number of leading terms read in full form (with b_shifts).
/// @throws InvalidArgument if unshifted > count (with b_shifts), npolys is not 1..3, n is not a
/// power of two >= 2, or the words are 32-bit and a modulus is not below 2^31; RuntimeError if
/// a CUDA launch fails.
void dot_broadcast(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   const u64* a_ptrs, const u64* b_ptrs, std::size_t count, WordPtr out,
                   const u64* b_shifts = nullptr, std::size_t unshifted = 0);
/// scalar_combination on words of out's run-time size (every operand has out's words).
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of out.
/// @param a_ptrs [count] device addresses of the operands' words, on `dev`.
/// @param a_strides [count] words between polynomials of each operand, on `dev`.
/// @param residues [count][base.size()] residues r_i, on `dev`.
/// @param count the number of terms.
/// @param constant [base.size()] residues of c on `dev`, or nullptr.
/// @param out [npolys][base.size()][n]; receives the combination.
/// @throws InvalidArgument if n is not a power of two >= 2, or the words are 32-bit and a
/// modulus is not below 2^31; RuntimeError if a CUDA launch fails.
void scalar_combination(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        const u64* a_ptrs, const u64* a_strides, const u64* residues,
                        std::size_t count, const u64* constant, WordPtr out);
/// automorphism_coeff on words of the operands' run-time size.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param galois_elt the Galois element g, odd and below 2N.
/// @param in [npolys][base.size()][n] words in coefficient form.
/// @param out the same shape; receives sigma_g(in) (must not alias in).
/// @throws InvalidArgument if the operands' word sizes differ from out's, n is not a power of
/// two >= 2, or the words are 32-bit and a modulus is not below 2^31; RuntimeError if a CUDA
/// launch fails.
void automorphism_coeff(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        u32 galois_elt, ConstWordPtr in, WordPtr out);
/// tensor on words of the operands' run-time size.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param a [sa][base.size()][n] words in NTT form.
/// @param sa the number of polynomials of a.
/// @param b [sb][base.size()][n] words in NTT form.
/// @param sb the number of polynomials of b.
/// @param out [sa + sb - 1][base.size()][n]; receives the product.
/// @throws InvalidArgument if the operands' word sizes differ from out's, n is not a power of
/// two >= 2, or the words are 32-bit and a modulus is not below 2^31; RuntimeError if a CUDA
/// launch fails.
void tensor(const Device& dev, const RnsBase& base, std::size_t n, ConstWordPtr a, std::size_t sa,
            ConstWordPtr b, std::size_t sb, WordPtr out);
/// automorphism_ntt on words of the operands' run-time size.
/// @param dev the device every operand is on.
/// @param base the RNS base of every limb (its moduli are read on `dev`).
/// @param n the ring degree N, a power of two.
/// @param npolys the number of polynomials of each operand.
/// @param galois_elt the Galois element g, odd and below 2N.
/// @param in [npolys][base.size()][n] words in NTT form.
/// @param out the same shape; receives sigma_g(in) (must not alias in).
/// @throws InvalidArgument if the operands' word sizes differ from out's, n is not a power of
/// two >= 2, or the words are 32-bit and a modulus is not below 2^31; RuntimeError if a CUDA
/// launch fails.
void automorphism_ntt(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                      u32 galois_elt, ConstWordPtr in, WordPtr out);

}  // namespace veil::poly
