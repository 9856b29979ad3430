// Hybrid key switching (Han-Ki, "Better Bootstrapping for Approximate Homomorphic Encryption",
// CT-RSA 2020, §3; Kim-Polyakov-Zucca, "Revisiting Homomorphic Encryption Schemes for Finite
// Fields", Asiacrypt 2021; Phantom, Yang et al. 2024 §III-C).
//
// For a polynomial c over Q_l encrypted "under" s' (i.e. a phase term c * s'), returns (d0, d1)
// over Q_l with d0 + d1 s ~= c s'. Steps: decompose c into dnum digits of alpha primes
// (the digit itself is c's residues: keys carry the CRT indicator, "HPS-style" keys, so no scalar
// multiply is needed), ModUp each digit to Q_l ∪ P by fast base conversion (the digit's own limbs
// are copied, not converted), NTT, inner product with the key, INTT, ModDown by P.
// alpha = 1 with one special prime is SEAL's method.
#pragma once
#include <cstddef>

#include "veil/rlwe/objects.h"

namespace veil {

/// Whether the inner products with a key issue every digit's loads before the first product
/// (dnum <= 8; the words are the same either way). On by default; VEIL_KS_BATCHED_LOADS=0 (read
/// once) or set_key_switch_batched_loads(false) gives the loop that loads one digit at a time
/// (A/B in bench/boot_bench.cpp).
/// @return the current setting (process-wide).
bool key_switch_batched_loads();
/// Sets key_switch_batched_loads() for the whole process (the words computed do not change).
/// @param on true: batched loads (the default); false: one digit's loads at a time.
void set_key_switch_batched_loads(bool on);
/// ModUp's conversion kernel on the GPU (the words are the same for each): 0 the generic one
/// (tables read from global memory), 1 digit j's table rows and the moduli in shared memory, 2
/// the same with half the coefficients per thread where the generic kernel blocks
/// two or more (twice the threads, about half the registers; with one, as 64-bit words with
/// digits of more than 16 primes, 2 is 1). Measured with 32-bit words and digits of 12 primes
/// only (a full-slot bootstrap at N = 2^16 on an H200: 19.86 / 19.38 / 19.33 ms with 0 / 1 / 2;
/// bench/NOTES.md); 64-bit words take 2 unmeasured. Kernel 2 also splits each digit's output
/// rows into groups until about 2^conversion_log_threads() threads run (rns/base_converter.h;
/// at N = 2^16 with 2 or more digits there is no split at the default 16). 3 (the default): the
/// tensor cores (u8 matrix products, TensorFHE, arXiv 2212.14191; rns/conv_tc.h) where they apply
/// (32-bit words with the Montgomery table, digits of at most 16 primes, at most 64 output rows a
/// digit), else 2: 56.5 -> 44.6 us for ModUp at bootparam_40's top level (H200, ncu).
/// VEIL_MODUP_KERNEL (0..3, read once) or set_mod_up_kernel choose it (A/B in
/// bench/boot_bench.cpp). An unparsable or out-of-range VEIL_MODUP_KERNEL is ignored (3).
/// Kernel 3 needs compute capability 8.0 or later; older GPUs run kernel 2.
/// @return the current kernel, 0..3 (process-wide).
int mod_up_kernel();
/// Chooses mod_up_kernel() for the whole process (the words computed do not change).
/// @param kernel 0, 1, 2 or 3 (see mod_up_kernel).
/// @throws InvalidArgument naming `kernel` outside 0..3.
void set_mod_up_kernel(int kernel);
/// Whether set_mod_up_kernel(3)'s tensor-core conversion applies to ModUp at `level` of `ctx`
/// (32-bit words with the Montgomery table, digits of at most 16 primes, at most 64 output rows a
/// digit, N a multiple of 128); where it does not, kernel 3 runs kernel 2.
/// @param ctx a context; @param level a level of it (its key-switching tables are built).
/// @return true where the tensor-core kernel runs (with set_conversion_montgomery on).
/// @throws InvalidArgument naming `special_primes` (none) or `level` (above the top level).
bool mod_up_tensor_cores_apply(const Context& ctx, std::size_t level);

/// A compact key's full form (KSwitchKey::compact): its b_j beside the a_j its seed regenerates
/// ([dnum][2][L+k][N]), on the key's device, with no seed (the 128-bit sampler's seeded
/// serialization must not take it). A key that is not compact comes back as it is (a copy).
/// The paths that cannot regenerate the a_j in their kernel (the CPU, digits above 8) call it
/// for each key switch.
/// @param key a key-switching key (compact or not).
/// @return the key with its a_j stored ([dnum][2][level+1+k][N]), the same key set.
/// @throws InvalidArgument naming `key` when a compact key has lost its seed.
KSwitchKey expand_compact_key(const KSwitchKey& key);

/// Copies the limbs of a polynomial over Q_l ∪ P ([src_q + k][N], src_q = l + 1) that a key of
/// level level (<= l) stores, q_0..q_level then P, into dst ([level + 1 + k][N]). No checks.
/// @param ctx the context (N and k).
/// @param dev the device of src and dst.
/// @param src the polynomial over Q_l ∪ P ([src_q + k][N], either form).
/// @param src_q its number of Q limbs, l + 1.
/// @param dst the output ([level + 1 + k][N]), not overlapping src.
/// @param level the key's level (<= l).
void copy_key_limbs(const Context& ctx, const Device& dev, ConstWordPtr src, std::size_t src_q,
                    WordPtr dst, std::size_t level);

/// The key of a lower level (KSwitchKey::level) that `key` projects to: its first
/// ceil((level + 1) / alpha) digits over Q_level ∪ P, in the same form (compact or not), with
/// the same seed (the samplers address limbs by their index in Q ∪ P, so the seed still
/// regenerates the a_j). Returns `key` itself at its own level.
/// @param key a key-switching key (not empty).
/// @param level the highest level the result serves (<= key.level()).
/// @return the projected key (a copy; the same key set), on key's device.
/// @throws InvalidArgument naming `key` (empty) or `level` (above key.level()).
KSwitchKey lower_key_level(const KSwitchKey& key, std::size_t level);

/// One hybrid key switch (file comment; Han-Ki, CT-RSA 2020, §3): key_switch_mod_up of `c`,
/// then key_switch_inner with `key`, adding the result (d0, d1), d0 + d1 s ~= c s', into the
/// accumulators: acc0 += d0, acc1 += d1 over Q_level.
/// @param ctx the context (it needs special primes).
/// @param dev the device of c, the key and the accumulators.
/// @param level the level of c and of the accumulators.
/// @param c the polynomial to switch, [level+1][N], NTT form iff c_ntt.
/// @param c_ntt whether c is in NTT form.
/// @param key a key-switching key from s' to s serving `level` (KSwitchKey::level >= level).
/// @param acc0 the first accumulator, [level+1][N], NTT form iff acc_ntt; it must not overlap
///        c (with NTT-form accumulators one kernel reads c's limbs, the digits' own limbs,
///        while it writes the accumulators).
/// @param acc1 the second accumulator, as acc0.
/// @param acc_ntt whether the accumulators are in NTT form.
/// @throws InvalidArgument naming `special_primes` (none), `level` (above the top), `key`
///         (another context, a level below `level`, too few digits; TypeMismatch on another
///         device) or `acc0`/`acc1` (overlapping c when c is in NTT form).
void key_switch_accumulate(const Context& ctx, const Device& dev, std::size_t level,
                           ConstWordPtr c, bool c_ntt, const KSwitchKey& key, WordPtr acc0,
                           WordPtr acc1, bool acc_ntt);

/// The hoisted part of key switching for one input c over Q_l: every digit ModUp'ed to Q_l ∪ P
/// in NTT form. Only the limbs outside each digit are computed (`complement`, stored digit by
/// digit; KeySwitchLevel::modup_base); a digit's own limbs are c's own residues, which `own`
/// holds in NTT form: c itself when it is in NTT form (then valid only while c is), else an
/// NTT-form copy in `own_copy`. Reusable across keys (hoisting).
struct KeySwitchDigits {
  /// The level l of the decomposed polynomial.
  std::size_t level = 0;
  /// [sum_j (l+1+k - |D_j|)][N], NTT form: each digit's limbs outside the digit.
  WordBuffer complement;
  /// [l+1][N] NTT form of c (when c is in coefficient form; else empty).
  WordBuffer own_copy;
  /// c in NTT form: own_copy's words or c's.
  ConstWordPtr own;
};
/// The ModUp of hybrid key switching (Han-Ki, CT-RSA 2020, §3), the part shared by every key
/// (hoisting: Halevi-Shoup, "Faster Homomorphic Linear Transformations in HElib", CRYPTO
/// 2018): c decomposed into dnum digits of alpha primes, each digit converted to the other limbs
/// of Q_l ∪ P by fast base conversion (mod_up_kernel() chooses the GPU kernel) and put in NTT
/// form.
/// @param ctx the context (it needs special primes).
/// @param dev the device of c.
/// @param level l, the level of c.
/// @param c the polynomial, [l+1][N], NTT form iff c_ntt.
/// @param c_ntt whether c is in NTT form (then the result's `own` points into c).
/// @return the digits, for key_switch_inner, key_switch_rescale or key_switch_inner_ext.
/// @throws InvalidArgument naming `special_primes` (none) or `level` (above the top level).
KeySwitchDigits key_switch_mod_up(const Context& ctx, const Device& dev, std::size_t level,
                                  ConstWordPtr c, bool c_ntt);
/// The per-key part: inner product with `key`, then ModDown by P (NTT form: only P's limbs leave
/// the NTT domain and the result is added into acc0/acc1 in the same pass; coefficient form:
/// INTT, then ModDown fused with the accumulation). If galois_elt != 0, the digits are read
/// through the NTT-form automorphism's permutation (hoisted rotations: sigma commutes with the
/// decomposition), with no permuted copy. acc0/acc1 must not overlap the words `digits` was
/// decomposed from (`digits.own` is read, through the permutation, while they are written).
/// Hoisted rotations: Halevi-Shoup, CRYPTO 2018; the NTT-form ModDown of P's limbs only:
/// Phantom (Yang et al. 2024, §III-C).
/// @param ctx the context (it needs special primes).
/// @param dev the device of every operand.
/// @param level l, the level of the digits and of the accumulators.
/// @param digits key_switch_mod_up's result at `level`.
/// @param key a key-switching key serving `level` (for galois_elt != 0: that element's key).
/// @param acc0 the first accumulator, [level+1][N], NTT form iff acc_ntt.
/// @param acc1 the second accumulator, as acc0.
/// @param acc_ntt whether the accumulators are in NTT form.
/// @param galois_elt 0, or the odd Galois element of a hoisted rotation (< 2N).
/// @throws InvalidArgument naming `key` (another context, a level below `level`, too few
///         digits; TypeMismatch on another device), `digits` (another level), `acc0`/`acc1`
///         (overlapping digits.own), or `key` for a compact key without its seed.
void key_switch_inner(const Context& ctx, const Device& dev, std::size_t level,
                      const KeySwitchDigits& digits, const KSwitchKey& key, WordPtr acc0,
                      WordPtr acc1, bool acc_ntt, u32 galois_elt = 0);
/// A key switch fused with a division by more primes than P (a rescale fused with ModDown):
/// out = round(((c0, c1) + keyswitch(digits)) / B), B the primes of Q_l above `down`'s target t,
/// written at t ([2][t+1][N], NTT form). The inner product adds P (c0, c1) on the Q limbs and
/// one ModDown (`down`, the caller's table from Q_l ∪ P to Q_t) divides by B P at once: one
/// inverse NTT of |B| + k limbs and one forward NTT of the result instead of two of each, as
/// Cheddar fuses ModDown with rescale (Kim et al., arXiv:2407.13055). The result equals
/// switch-then-divide up to the rounding of one division instead of two. The scheme supplies
/// `down` (ckks/ckks_tables.h: CkksTables::rescale_down), so rlwe/ knows no rescale rule.
/// @param ctx the context.
/// @param dev the device of every operand.
/// @param level the level l of c0, c1 and the digits.
/// @param digits key_switch_mod_up of the polynomial to switch, at `level`.
/// @param key the switching key (a relinearization key for c2).
/// @param c0 the first polynomial added (times P), [l+1][N] NTT form.
/// @param c1 the second, likewise.
/// @param down ModDownNtt from Q_l ∪ P to a prefix Q_t of Q_l (it divides by B and P).
/// @param out [2][t+1][N], not overlapping the inputs.
/// @throws InvalidArgument naming `key_switch_rescale` for a scheme without the extended basis
///         (coefficient-form ciphertexts or errors that are multiples of t), `down` if it is not
///         a ModDown from Q_l ∪ P to a prefix of Q_l, or as key_switch_inner.
void key_switch_rescale(const Context& ctx, const Device& dev, std::size_t level,
                        const KeySwitchDigits& digits, const KSwitchKey& key, ConstWordPtr c0,
                        ConstWordPtr c1, const ModDownNtt& down, WordPtr out);

// ---- The extended basis Q_l ∪ P: double hoisting ------------------------------------------
// Bossuat, Mouchet, Troncoso, Hubaux, "Efficient Bootstrapping for Approximate Homomorphic
// Encryption with Non-Sparse Keys", Eurocrypt 2021, §4 and Alg. 6 (Lattigo v6:
// rlwe.Evaluator.AutomorphismHoistedLazy, GadgetProductLazy, ModDownQPtoQNTT;
// circuits/common/lintrans MultiplyByDiagMatrixBSGS). A key switch whose result stays over
// Q_l ∪ P, scaled by P, is linear: such results can be multiplied by plaintexts encoded over
// Q_l ∪ P and summed before one ModDown divides the sum by P. Layout of an extended pair:
// [2][l+1+k][N] in NTT form, the Q_l limbs first (KeySwitchLevel::base_qp). Only for schemes
// whose ciphertexts are in NTT form and whose errors are not multiples of t
// (SchemeDefinition); each function throws InvalidArgument naming its operation otherwise.

/// What key_switch_inner_ext adds to the first polynomial of its result, read through the same
/// automorphism as the digits.
enum class ExtAddend {
  none,      ///< nothing
  lift,      ///< P * sigma(add0), add0 over Q_l ([l+1][N]): P's limbs of P * x are 0
  extended,  ///< sigma(add0), add0 over Q_l ∪ P ([l+1+k][N])
};

/// The key switch of `digits` (key_switch_mod_up of c1 at `level`) by `key`, left in Q_l ∪ P:
/// out = (IP0 + A, IP1) with IP_b = sum_j sigma(d_j) * key_j,b over Q_l ∪ P and A the addend
/// (`mode`). With the lift of c0, (P c0 + IP0, IP1) decrypts to P * (c0 + c1 s') + e over QP,
/// and its key_switch_mod_down equals the ordinary key switch word for word. If galois_elt != 0
/// the digits and the addend are read through the NTT-form automorphism sigma (a hoisted
/// rotation: key must be that element's Galois key). out: [2][l+1+k][N], stored, or added to
/// when `accumulate`; it must not overlap the digits' own limbs nor add0.
/// @param ctx the context.
/// @param dev the device of every operand.
/// @param level l, the level the digits were decomposed at.
/// @param digits key_switch_mod_up's result at `level`.
/// @param key a key serving `level` (for galois_elt != 0: that element's Galois key).
/// @param add0 the addend (see ExtAddend), or null with ExtAddend::none.
/// @param mode what is added to the first polynomial.
/// @param out the result, [2][l+1+k][N], NTT form.
/// @param accumulate add into out (mod each prime) instead of storing.
/// @param galois_elt 0, or the odd Galois element of a hoisted rotation (< 2N).
/// @throws InvalidArgument naming `key` (other context, too few digits), `digits` (another
///         level), `add0` (null with an addend), `out` (overlap), or the operation (a scheme
///         without the extended basis).
void key_switch_inner_ext(const Context& ctx, const Device& dev, std::size_t level,
                          const KeySwitchDigits& digits, const KSwitchKey& key, ConstWordPtr add0,
                          ExtAddend mode, WordPtr out, bool accumulate, u32 galois_elt = 0);
/// The lift of Q_l polynomials to Q_l ∪ P: out = P * in on the Q limbs, 0 on P's (exact).
/// in: [num_polys][l+1][N], out: [num_polys][l+1+k][N] (not overlapping in), NTT form or not.
/// @param ctx a CKKS context; @param dev the device of in and out.
/// @param level l; @param num_polys the number of polynomials.
/// @param in the polynomials over Q_l, as above.
/// @param out the lifted polynomials over Q_l ∪ P, as above.
/// @throws InvalidArgument naming `out` (overlapping in), `special_primes` (none), `level`
///         (above the top) or `key_switch_lift` (not CKKS).
void key_switch_lift(const Context& ctx, const Device& dev, std::size_t level, ConstWordPtr in,
                     WordPtr out, std::size_t num_polys);
/// ModDown of extended polynomials: out = round(in / P) over Q_l (KeySwitchLevel::mod_down_ntt;
/// NTT form, exact rounding), or, with `down`, round(in / (B P)) over the prefix Q_t that `down`
/// keeps (B: the primes of Q_l above t; a scheme's rescale fused with ModDown, e.g.
/// ckks/ckks_tables.h: key_switch_rescale_down).
/// @param ctx the context.
/// @param dev the device of in and out.
/// @param level the level l of the extended polynomials.
/// @param in [num_polys][l+1+k][N], NTT form.
/// @param out [num_polys][l+1][N] (or [num_polys][t+1][N] with `down`, not overlapping in), or,
///        without `down`, in itself (each polynomial's Q_l limbs are then overwritten in place,
///        the stride stays l+1+k).
/// @param num_polys the number of polynomials.
/// @param down null (divide by P), or a ModDownNtt from Q_l ∪ P to a prefix of Q_l.
/// @throws InvalidArgument naming the operation (a scheme without the extended basis) or
///         `down` (not a ModDown from Q_l ∪ P to a prefix of Q_l).
void key_switch_mod_down(const Context& ctx, const Device& dev, std::size_t level,
                         ConstWordPtr in, WordPtr out, std::size_t num_polys,
                         const ModDownNtt* down = nullptr);

}  // namespace veil
