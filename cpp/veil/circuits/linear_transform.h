// Linear transforms of CKKS slots by the diagonal method (Halevi-Shoup, "Algorithms in HElib",
// CRYPTO 2014, §4.3) with the baby-step giant-step split of Halevi-Shoup, "Faster Homomorphic
// Linear Transformations in HElib" (CRYPTO 2018, §4). Two evaluations (Hoisting):
// - double (the default): Bossuat-Mouchet-Troncoso-Hubaux, Eurocrypt 2021, §4, Alg. 6
//   (Evaluator::multiply_diagonals_bsgs): the baby steps share one ModUp and stay in Q_l ∪ P,
//   the inner sums run there with diagonals encoded over Q_l ∪ P, the giant steps accumulate
//   there, and one ModDown per output is fused with its rescale.
// - single: the baby-step rotations of an input share one decomposition (hoisting,
//   Evaluator::rotate_many) but each pays its ModDown, each giant step's inner sum is one pass
//   (Evaluator::multiply_plain_sum) followed by a full rotation, and each output is rescaled
//   once. Word for word the Python implementation's (veil._bootstrap), kept for A/B
//   measurement: VEIL_DOUBLE_HOIST=0 makes it the default.
//
// A map y = M x on n slot values is held by its diagonals: y[j] = sum_k d_k[j] x[(j + k) mod n],
// d_k[j] = M[j, (j + k) mod n]; rotating a ciphertext left by k puts x[(j + k) mod n] in slot j.
// With n < N/2 the N/2 slots hold N/(2n) copies of the n values (the diagonals are tiled).
// Python: veil._bootstrap._LinearLevel, _bsgs_split, _compose.
#pragma once
#include <complex>
#include <cstddef>
#include <map>
#include <utility>
#include <vector>

#include "veil/api/evaluator.h"
#include "veil/ckks/encoder.h"

namespace veil::circuits {

/// The nonzero diagonals of an n x n complex matrix, keyed by k in [0, n), in the order they
/// were first added (the order fixes the rounding of sums that build them).
class Diagonals {
 public:
  /// One diagonal, or a vector of n slot values.
  using Vector = std::vector<std::complex<double>>;
  /// An empty map of size 0 (assign before use).
  Diagonals() = default;
  /// The zero n x n map (no diagonal).
  /// @param n the size, at least 1.
  /// @throws InvalidArgument naming `n` unless it is at least 1.
  explicit Diagonals(std::size_t n);

  /// @return n, the length of every diagonal.
  std::size_t n() const { return n_; }
  /// @return the number of diagonals held.
  std::size_t size() const { return keys_.size(); }
  /// Whether diagonal k is held.
  /// @param k a key in [0, n).
  /// @return true when it is.
  bool contains(std::size_t k) const { return index_.count(k) != 0; }
  /// Diagonal k.
  /// @param k a key in [0, n).
  /// @return its n values.
  /// @throws InvalidArgument naming `k` when it is absent.
  const Vector& at(std::size_t k) const;
  /// @return the keys in insertion order.
  const std::vector<std::size_t>& keys() const { return keys_; }
  /// d_k += v (a new key starts from v).
  /// @param k the diagonal, taken mod n (negative allowed).
  /// @param v n values.
  /// @throws InvalidArgument naming `diagonal` when v's length is not n.
  void add(long long k, const Vector& v);
  /// Every diagonal multiplied by the real constant c.
  /// @param c the constant.
  /// @return c M (the same keys, in the same order).
  Diagonals scaled(double c) const;
  /// @return the entries' largest magnitude (0 with no diagonal).
  double max_abs() const;
  /// y = M x (the oracle in double: sum_k d_k * rot(x, k)).
  /// @param x n slot values.
  /// @return y, n values.
  /// @throws InvalidArgument naming `x` for a length other than n.
  Vector apply(const Vector& x) const;

 private:
  std::size_t n_ = 0;
  std::vector<std::size_t> keys_;
  std::vector<Vector> values_;
  std::map<std::size_t, std::size_t> index_;
};

/// The diagonals of a dense n x n matrix (row-major, m[j][c]); zero diagonals are left out.
/// @param matrix the rows, n of n entries each.
/// @return its diagonals, keys ascending.
/// @throws InvalidArgument naming `matrix` when it is empty or not square.
Diagonals diagonals_of(const std::vector<std::vector<std::complex<double>>>& matrix);
/// A∘B (B applied first): (AB)_{a+b} = A_a * rot_a(B_b); all-zero diagonals are dropped.
/// @param a the map applied second.
/// @param b the map applied first (of a's size).
/// @return the product AB.
/// @throws InvalidArgument naming `b` when the sizes differ.
Diagonals compose(const Diagonals& a, const Diagonals& b);
/// diag(rows) ∘ A: entry j of every diagonal is scaled by rows[j].
/// @param a the map.
/// @param rows n real factors.
/// @return the scaled map.
/// @throws InvalidArgument naming `rows` for a length other than n.
Diagonals row_scale(const Diagonals& a, const std::vector<double>& rows);
/// A ∘ diag(cols): entry j of diagonal k is scaled by cols[(j + k) mod n].
/// @param a the map.
/// @param cols n real factors.
/// @return the scaled map.
/// @throws InvalidArgument naming `cols` for a length other than n.
Diagonals col_scale(const Diagonals& a, const std::vector<double>& cols);

/// A hoisted baby-step rotation's cost relative to a giant step's. Double-hoisted (the default),
/// a baby step is one inner product with its key while a giant step pays a ModDown, a ModUp and
/// an inner product: 0.3 chose n1 = 16 instead of 8 for CoeffToSlot's and SlotToCoeff's 14-step
/// levels at N = 2^16 and took the full-slot bootstrap from 38.7 to 34.6 ms on an H100, for 12
/// more rotation keys (bench/NOTES.md; 0.2-0.4 give the same splits). 0.55 was measured single
/// hoisted (175 against 315 us).
inline constexpr double kBabyCost = 0.3;
/// The cost bsgs_split uses: kBabyCost, or VEIL_BSGS_BABY_COST when set (read once per process;
/// for A/B measurements: the rotation keys follow the split, so set it before any key is made).
/// @return the relative cost of a baby step.
/// @throws InvalidArgument naming VEIL_BSGS_BABY_COST when it is not a number in (0, 64].
double baby_cost();

/// The baby-step giant-step split of a set of diagonals: the baby-step size n1 (a power of two)
/// minimizing baby_cost() * inputs * (baby steps) + outputs * (giant steps), and the diagonals
/// grouped by giant step: giants[i] = (G, [(b, k)]) with k = G + b, both signed (|k| <= n/2).
struct BsgsSplit {
  /// The baby-step size (a power of two).
  std::size_t n1 = 1;
  /// Per giant step G (a multiple of n1, in first-seen order): the (baby step b, key k) pairs.
  std::vector<std::pair<long long, std::vector<std::pair<long long, std::size_t>>>> giants;
};
/// The baby-step giant-step split of diagonal keys (Halevi-Shoup, CRYPTO 2018): every power of
/// two n1 <= n is tried, the cheapest kept (the first on a tie).
/// @param keys the diagonals' keys in [0, n), ascending.
/// @param n the slots, a power of two.
/// @param inputs the transform's inputs (each pays its baby steps).
/// @param outputs the transform's outputs (each pays its giant steps).
/// @return the split.
/// @throws InvalidArgument naming `n` (not a power of two) or `keys` (empty or out of range),
///         or VEIL_BSGS_BABY_COST when it is set and not a number in (0, 64] (baby_cost()).
BsgsSplit bsgs_split(const std::vector<std::size_t>& keys, std::size_t n, std::size_t inputs = 1,
                     std::size_t outputs = 1);

/// How LinearTransform::apply evaluates (file comment).
enum class Hoisting {
  single,  ///< hoisted baby steps each with its ModDown; giant steps by full rotations
  double_hoisted,  ///< Bossuat et al. 2021: baby and giant steps in Q_l ∪ P, one ModDown
};

/// One level of plaintext-matrix products: outputs[o] = sum_i M[o][i] inputs[i] for n-slot
/// vectors, with the diagonals encoded once (at `level`, tiled to N/2 slots) and applied by
/// baby-step giant-step rotations, hoisted baby steps per input and one rescale per output.
class LinearTransform {
 public:
  /// The evaluation a transform gets when none is named: Hoisting::double_hoisted unless the
  /// environment variable VEIL_DOUBLE_HOIST is "0" (read at each call, so at each
  /// construction: the A/B switch of the bootstrapper, whose transforms take the default).
  /// @return the default evaluation.
  static Hoisting default_hoisting();

  /// Encodes the matrices. The plaintext scale is scale_out * D / scale_in (D: the product of
  /// the rescale block above `level`), so an input at scale_in comes out at scale_out after the
  /// rescale (up to the double rounding of scales).
  /// @param encoder a CKKS encoder of the context.
  /// @param matrices [outputs][inputs] diagonals, all of size `slots`.
  /// @param slots n, a power of two in 1..N/2.
  /// @param level the inputs' level (a level that can rescale).
  /// @param scale_in the inputs' scale (finite, > 0).
  /// @param scale_out the outputs' scale (finite, > 0).
  /// @param dev where the plaintexts live.
  /// @param hoisting the evaluation. double_hoisted encodes the diagonals over Q_l ∪ P
  ///        (CKKSEncoder::encode_extended: (l+1+k)/(l+1) times the memory of single's), each
  ///        that repeats with a period p < N/2 (CKKSEncoder::periodic_shift) stored as one
  ///        period: 2p/N of the memory, and of the bytes the inner sums read (Cerium, SOSP 2026;
  ///        the DFT factors' diagonals repeat with their block size).
  /// @throws InvalidArgument naming `matrices` (empty, ragged, wrong size, or an output with no
  ///         diagonal), `slots`, `level` or `scale_in`/`scale_out`; `hoisting` for
  ///         double_hoisted without special primes; VEIL_BSGS_BABY_COST (baby_cost()).
  LinearTransform(const CKKSEncoder& encoder, const std::vector<std::vector<Diagonals>>& matrices,
                  std::size_t slots, std::size_t level, double scale_in, double scale_out,
                  const Device& dev = Device::cpu(), Hoisting hoisting = default_hoisting());

  /// outputs[o] = rescale(sum_i M[o][i] inputs[i]). Every input: size 2, at level(), on the
  /// plaintexts' device, of the keys' key set. With Hoisting::double_hoisted the result is
  /// Evaluator::multiply_diagonals_bsgs's, when galois_keys hold a key for every step; else (and
  /// with Hoisting::single) the single-hoisted evaluation's (the extended diagonals' first l+1
  /// limbs are the ordinary ones).
  /// @param ev a CKKS evaluator of the encoder's context.
  /// @param inputs inputs() ciphertexts (pointers, not null), size 2, at level().
  /// @param galois_keys keys of rotation_steps() (steps without a key are composed from
  ///        power-of-two keys as Evaluator::rotate_vector does, single-hoisted).
  /// @return outputs() ciphertexts, one rescale block below level(), at scale_out.
  /// @throws InvalidArgument naming `inputs` (count, level) or the evaluator's errors.
  std::vector<Ciphertext> apply(const Evaluator& ev, const std::vector<const Ciphertext*>& inputs,
                                const GaloisKeys& galois_keys) const;

  /// @return the signed rotation steps (of the N/2 slots) apply() uses, ascending, without 0.
  std::vector<int> rotation_steps() const;
  /// The rotation steps of a transform with these diagonal keys (the same as rotation_steps()
  /// of the transform they would build), without encoding anything.
  /// @param matrices [outputs][inputs] diagonals, all of size `slots`.
  /// @param slots n, a power of two.
  /// @return the steps, ascending, without 0.
  /// @throws InvalidArgument naming `matrices` (empty, ragged, wrong size) or `n`.
  static std::vector<int> rotation_steps_of(const std::vector<std::vector<Diagonals>>& matrices,
                                            std::size_t slots);
  /// The same steps, each with the key switches apply() makes with its key: a baby step once
  /// per input, a giant step once per output (double hoisting).
  /// @param matrices [outputs][inputs] diagonals, all of size `slots`.
  /// @param slots n, a power of two.
  /// @return step -> number of key switches with its key.
  /// @throws InvalidArgument as rotation_steps_of.
  static std::map<int, std::size_t> rotation_uses_of(
      const std::vector<std::vector<Diagonals>>& matrices, std::size_t slots);

  /// @return the inputs' level (the outputs are one rescale block lower).
  std::size_t level() const { return level_; }
  /// @return n, the slots of the vectors.
  std::size_t slots() const { return slots_; }
  /// @return the number of inputs.
  std::size_t inputs() const { return babies_.size(); }
  /// @return the number of outputs.
  std::size_t outputs() const { return plan_.size(); }
  /// @return n1, the baby-step size bsgs_split chose.
  std::size_t baby_step() const { return n1_; }
  /// @return the scale of the encoded diagonals: scale_out * D / scale_in.
  double plaintext_scale() const { return pt_scale_; }
  /// @return the evaluation chosen at construction.
  Hoisting hoisting() const { return hoisting_; }
  /// @return bytes of the encoded diagonals on their device.
  std::size_t plaintext_bytes() const;
  /// Copies of the encoded diagonals in their full form ([limbs][N] words: new buffers on the
  /// plaintexts' device, the full form's memory; for tests and inspection), in the order
  /// apply() uses them: by output, giant step, then term. double_hoisted: over Q_l ∪ P, each
  /// diagonal stored as one period where it repeats (plaintext_shifts(); expanded here by
  /// CKKSEncoder::expand_periodic). Its first l+1 limbs are single's words for a diagonal that
  /// does not repeat; one that does has the coefficients off the multiples of 2^shift set to
  /// 0 (single keeps the FFT's rounding noise there).
  /// @return the copies.
  std::vector<Plaintext> plaintexts() const;
  /// Per diagonal, in plaintexts()' order, the shift it is stored with
  /// (CKKSEncoder::encode_extended_periodic; 0: the full form; single: always 0).
  /// @return one shift per diagonal.
  std::vector<unsigned> plaintext_shifts() const;
  /// Whether double-hoisted transforms store repeating diagonals as one period: yes unless the
  /// environment variable VEIL_PERIODIC_DIAGONALS is "0" (read at each construction; the A/B
  /// switch).
  /// @return whether repeating diagonals are stored as one period.
  static bool periodic_diagonals();
  /// A step of the n-slot vector as a signed step of the N/2 slots (k mod n, in (-n/2, n/2]).
  /// @param k a step (any sign).
  /// @param slots n (>= 1).
  /// @return the signed step.
  static int signed_step(long long k, std::size_t slots);

 private:
  struct Term {
    std::size_t input;
    long long baby;
    Plaintext plain;
    unsigned shift = 0;  // plain is stored as one period (CKKSEncoder::encode_extended_periodic)
  };
  std::vector<Ciphertext> apply_single(const Evaluator& ev,
                                       const std::vector<const Ciphertext*>& inputs,
                                       const GaloisKeys& galois_keys) const;
  std::size_t slots_ = 0, level_ = 0, n1_ = 1;
  double pt_scale_ = 1.0;
  Hoisting hoisting_ = Hoisting::double_hoisted;
  std::vector<std::vector<long long>> babies_;  // per input: baby steps used, ascending
  // per output: (giant step, terms) in giant order
  std::vector<std::vector<std::pair<long long, std::vector<Term>>>> plan_;
};

}  // namespace veil::circuits
