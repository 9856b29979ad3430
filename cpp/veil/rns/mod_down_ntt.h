// Divide-and-round by trailing primes on NTT-form data (CKKS rescale, ModDown after key switching
// for NTT-form schemes; Phantom, Yang et al. 2024 §III-C "NTT + ModDown" fusion), with the BGV
// plaintext-modulus correction when t != 0 (Phantom, Yang et al. 2024 §II-C, eq. 3;
// Kim-Polyakov-Zucca 2021):
//
//   CKKS / plain:  out = (x - r) * D^-1,   r = [x]_D lifted to K, centered (exact conversion)
//   BGV (t != 0):  out = (x - delta) * D^-1, delta = r + D * [-r * D^-1]_t (centered), so that
//                  delta = x mod D and delta = 0 mod t: the plaintext becomes m * D^-1 mod t.
//
// Only the |D| dropped limbs go through an inverse NTT; the correction is converted to K in
// coefficient form and forward-transformed there, and the final subtraction and scaling happen
// in the NTT domain.
#pragma once
#include <cstddef>

#include "veil/backend/buffer.h"
#include "veil/backend/table.h"
#include "veil/core/modarith.h"
#include "veil/ring/ntt.h"
#include "veil/rns/base_converter.h"

namespace veil {

/// The most dropped primes for which ModDownNtt::apply computes its correction inside the forward
/// NTT's column pass (ring/ntt_fused.cuh) instead of a separate conversion and NTT. The fused
/// column pass keeps 4 coefficients x |D| inputs per thread in registers, one 512-thread block per
/// SM: with the 1-2 dropped primes of a rescale it is the faster one (bench/NOTES.md, "Fused NTT
/// passes"), with the 12-14 of a key switch's ModDown (P, or P and the rescale block) it is the
/// slower one (a full-slot bootstrap at N = 2^16: 24.71 against 25.23 ms on an H200).
/// kFusedModDownMaxDrop is the default; VEIL_FUSED_MODDOWN_MAX_DROP (an integer 0..15, read once;
/// anything else is ignored) or set_fused_mod_down_max_drop override it (A/B; the words are the
/// same either way).
inline constexpr std::size_t kFusedModDownMaxDrop = 4;
/// The most dropped primes for which the fused path runs now (kFusedModDownMaxDrop unless the
/// environment or set_fused_mod_down_max_drop says otherwise).
/// @return 0..15.
std::size_t fused_mod_down_max_drop();
/// @param drops 0 (never fused) to 15.
/// @throws InvalidArgument naming `drops` above 15.
void set_fused_mod_down_max_drop(std::size_t drops);

/// Whether the fused path takes its narrow producer where at most 3 primes are dropped (a
/// rescale drops 1-2; the conversion table's rows are then four words with v): each
/// coefficient's conversion inputs are computed once (the dropped words times (D/d_i)^-1 and v:
/// four words), then the r16 kernels' own column pass (16 words a thread, two radix-16 rounds)
/// reads them and finishes the conversion for its output limb as it loads (ntt_fused.cuh,
/// ntt_forward_first_pass_from_inputs). Otherwise the blocked pass keeps the inputs in registers
/// across up to 16 output limbs, at four words a thread and four radix-4 rounds, each ending at a
/// block barrier. Default on; VEIL_FUSED_MODDOWN_NARROW=0 (read once) or
/// set_fused_mod_down_narrow(false) turn it off (A/B; the words are the same either way).
/// @return true when the narrow producer is on.
bool fused_mod_down_narrow();
/// Turns the fused path's narrow producer on or off for the whole process.
/// @param on true: on.
void set_fused_mod_down_narrow(bool on);

/// Whether the CPU computes BGV's t-corrected correction from one dropped prime in its own pass
/// (ModDownNtt::correction: y and v once per coefficient, then limb by limb), rather than the
/// register-blocked conversion built for the GPU. Default on; set_t_corrected_one_prime_cpu(false)
/// turns it off (A/B and tests: the words are the same either way).
/// @return true when the CPU's one-prime pass is on.
bool t_corrected_one_prime_cpu_on();
/// Turns the CPU's one-prime t-corrected pass on or off for the whole process.
/// @param on true: on.
void set_t_corrected_one_prime_cpu(bool on);

/// Divide-and-round by the product D of trailing primes on NTT-form data (CKKS rescale, key
/// switching's ModDown; BGV with the t-correction), as described above: Phantom, Yang et al. 2024
/// Sec. III-C; Kim-Polyakov-Zucca, "Revisiting homomorphic encryption schemes for finite fields",
/// Asiacrypt 2021, for BGV's correction.
class ModDownNtt {
 public:
  ModDownNtt() = default;
  /// keep, drop: NTT-capable bases (drop's limbs follow keep's in the input). t: BGV plain
  /// modulus, or 0 for CKKS / plain rounding.
  /// @param keep the kept base K (NTT primes).
  /// @param drop the dropped base D (NTT primes, co-prime), whose limbs follow K's in the input.
  /// @param t BGV's plain modulus, or 0.
  /// @throws InvalidArgument if a base is empty, `drop` has moduli that are not co-prime, the bases
  ///         share a modulus, or t is 1 or not below 2^61.
  ModDownNtt(const RnsBase& keep, const RnsBase& drop, u64 t = 0);
  /// in: [num_polys][|K|+|D|][n] NTT form; out: [num_polys][|K|][n] NTT form (out may equal in,
  /// then each polynomial's K limbs are overwritten in place and the stride stays |K|+|D|).
  /// W = u32 or u64 (u32: every modulus, t included, below 2^31). On a CUDA device with 32-bit
  /// words, t = 0 (CKKS) and at most fused_mod_down_max_drop() dropped primes (a rescale), the
  /// correction's conversion runs inside its forward NTT's column pass and the last step inside
  /// its row pass (ring/ntt_fused.cuh): two kernels instead of a conversion, two NTT passes and
  /// the last step; the same words either way.
  /// @tparam W u32 or u64.
  /// @param dev the device of `in` and `out`.
  /// @param tables the NTT tables of degree n holding every prime of K and D.
  /// @param in [num_polys][|K|+|D|][n] NTT form.
  /// @param out [num_polys][|K|][n] NTT form, or `in` itself.
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @throws InvalidArgument if the object is default-constructed, or a view check fails (W = u32
  ///         with a modulus not below 2^31).
  template <class W>
  void apply(const Device& dev, const NttTables& tables, const W* in, W* out, std::size_t n,
             std::size_t num_polys = 1) const;
  /// apply() on words of a run-time size (in and out of the same size).
  /// @param dev the device of `in` and `out`.
  /// @param tables the NTT tables of degree n.
  /// @param in [num_polys][|K|+|D|][n] words, NTT form.
  /// @param out [num_polys][|K|][n] words, or `in` itself.
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @throws InvalidArgument as the typed apply, or if the word sizes differ.
  void apply(const Device& dev, const NttTables& tables, ConstWordPtr in, WordPtr out,
             std::size_t n, std::size_t num_polys = 1) const;
  /// The kept base K.
  /// @return the base.
  const RnsBase& keep() const { return keep_; }
  /// The dropped base D.
  /// @return the base.
  const RnsBase& drop() const { return drop_; }
  /// Limbs of the correction r per polynomial: |K|, or |K| + 1 with BGV's t limb.
  /// @return |K| (+ 1 with BGV's t).
  std::size_t target_size() const { return target_.size(); }

  /// The correction r of apply, for callers that fuse the last step, out = (x - r) * D^-1, into
  /// their own kernel (key switching fuses it with the inner product of the kept limbs, so those
  /// limbs are never written and read back). drop_ntt: the dropped limbs [num_polys][|D|][n] in
  /// NTT form, inverse-transformed in place. Returns r: [num_polys][target_size()][n], its first
  /// |K| limbs in NTT form; finish the kept limb l with `mod_down_finish(finish_view(dev), ...)`.
  /// @tparam W u32 or u64.
  /// @param dev the device of the data.
  /// @param tables the NTT tables of degree n.
  /// @param drop_ntt the dropped limbs [num_polys][|D|][n], NTT form; inverse-transformed in place.
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @return r, [num_polys][target_size()][n].
  /// @throws InvalidArgument if the object is default-constructed.
  template <class W>
  Buffer<W> correction(const Device& dev, const NttTables& tables, W* drop_ntt, std::size_t n,
                       std::size_t num_polys) const;
  /// The device constants of the last step: K's moduli and D^-1 mod k_l (with Shoup quotients).
  struct FinishView {
    /// K's moduli on the device.
    const Modulus* keep;
    /// D^-1 mod k_l, [|K|].
    const u64* d_inv;
    /// Their 64-bit Shoup quotients, [|K|].
    const u64* d_inv_shoup;
  };
  /// The last step's constants on `dev`.
  /// @param dev the device.
  /// @return K's moduli and D^-1 mod k_l with Shoup quotients, on `dev`.
  FinishView finish_view(const Device& dev) const {
    return {keep_.moduli(dev), d_inv_.data(dev), d_inv_shoup_.data(dev)};
  }


 private:
  /// Whether correction_first_pass serves this ModDown on `dev` at degree 2^log_n: a CUDA
  /// device, 32-bit words, no BGV t-correction, at most fused_mod_down_max_drop() dropped
  /// primes, a degree the fused
  /// NTT passes serve (ring/ntt_fused.cuh) and the fused passes enabled.
  template <class W>
  bool fused_applies(const Device& dev, int log_n) const;
  /// The correction r of `correction` with its forward NTT stopped after the column pass, and
  /// its conversion computed inside that pass (ring/ntt_fused.cuh): r[num_polys][|K|][n] in the
  /// column pass's output layout, for apply's row pass, which finishes both the NTT and the
  /// last step. drop_ntt as for correction (inverse-transformed in place).
  /// @throws InvalidArgument where fused_applies is false.
  template <class W>
  Buffer<W> correction_first_pass(const Device& dev, const NttTables& tables, W* drop_ntt,
                                  std::size_t n, std::size_t num_polys) const;
  RnsBase keep_, drop_, target_;  // target = keep (+ {t})
  u64 t_ = 0;
  BaseConverter conv_;            // drop -> target
  DeviceTable<u64> d_mod_k_;      // D mod k_i
  DeviceTable<u64> d_inv_;        // D^-1 mod k_i
  DeviceTable<u64> d_inv_shoup_;
  u64 d_inv_mod_t_ = 0;           // D^-1 mod t
};

/// The last step of ModDownNtt for kept limb l: (x - r) * D^-1 mod k_l (x, r in NTT form).
/// @tparam W u32 or u64.
/// @param v the constants (ModDownNtt::finish_view).
/// @param l the kept limb.
/// @param x the input word, NTT form, in [0, k_l).
/// @param r the correction's word, NTT form, in [0, k_l).
/// @return (x - r) * D^-1 mod k_l in [0, k_l).
template <class W>
VEIL_HD W mod_down_finish(const ModDownNtt::FinishView& v, std::size_t l, W x, W r) {
  const W q = static_cast<W>(v.keep[l].value);
  return mul_shoup(sub_mod(x, r, q), static_cast<W>(v.d_inv[l]), shoup_for<W>(v.d_inv_shoup[l]), q);
}

}  // namespace veil
