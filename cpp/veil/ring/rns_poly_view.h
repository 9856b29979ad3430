// RnsPolyView<W>: what a kernel needs to know about an operand, in one small value — the words,
// how many polynomials, the RNS base (moduli and NTT-table ids, on the operand's device) and the
// degree. Kernels take a view and ask it for limb pointers instead of computing offsets by hand
// (the device views of Cheddar, Kim et al., arXiv:2407.13055, and SEAL's util/iterator.h serve
// the same purpose).
//
// Layout (DESIGN.md): `num_polys` polynomials, each [num_limbs][N] contiguous words W (u64 for
// moduli < 2^61, u32 for moduli < 2^31), limb l reduced modulo moduli[l]; polynomials are
// `poly_limbs` limbs apart (default num_limbs: contiguous), so a view can also be a run of limbs
// inside a wider layout (the R limbs of BFV's [poly][Q ∪ R][N]). W may be const-qualified (an
// operand the kernel only reads).
#pragma once
#include <bit>
#include <cstddef>
#include <string>
#include <type_traits>

#include "veil/backend/device.h"
#include "veil/core/error.h"
#include "veil/core/hd.h"
#include "veil/core/modarith.h"
#include "veil/ring/rns_base.h"

namespace veil {

/// A non-owning view of an RNS operand for kernels: words, polynomial count, base (moduli and
/// NTT-table ids on the operand's device) and degree, with limb addressing (layout above).
/// @tparam W u32 or u64, possibly const.
template <class W>
struct RnsPolyView {
  static_assert(std::is_same_v<std::remove_const_t<W>, u64> ||
                    std::is_same_v<std::remove_const_t<W>, u32>,
                "RNS words are u32 or u64");
  /// The word type (possibly const).
  using Word = W;

  /// The first word of polynomial 0.
  W* data = nullptr;
  /// [num_limbs] moduli, on the operand's device.
  const Modulus* moduli = nullptr;
  /// [num_limbs] NttTables indices, on the operand's device, or nullptr without NTT tables.
  const u32* ntt_ids = nullptr;
  /// The number of polynomials.
  u32 num_polys = 0;
  /// The limbs of each polynomial (the base's size).
  u32 num_limbs = 0;
  /// log2 of the ring degree N.
  int log_n = 0;
  /// [num_limbs] on the operand's device, or nullptr: where limb l is stored (limb l of
  /// polynomial p is stored limb slots[l] of p), so a kernel can walk limbs in another order
  /// than the storage's (the ModUp NTT walks them prime by prime; KeySwitchLevel::modup_slots).
  const u32* slots = nullptr;
  /// Limbs from one polynomial to the next; 0 means num_limbs (contiguous polynomials).
  u32 poly_limbs = 0;

  /// The ring degree N.
  /// @return 2^log_n.
  VEIL_HD std::size_t n() const { return std::size_t(1) << log_n; }
  /// Limbs from one polynomial to the next.
  /// @return poly_limbs, or num_limbs when it is 0.
  VEIL_HD u32 poly_stride() const { return poly_limbs ? poly_limbs : num_limbs; }
  /// Words in the operand: num_polys x num_limbs x N.
  /// @return num_polys * num_limbs * N.
  VEIL_HD std::size_t words() const { return (std::size_t(num_polys) * num_limbs) << log_n; }
  /// First word of limb `l` of polynomial `poly`.
  /// @param poly the polynomial, below num_polys.
  /// @param l the limb, below num_limbs (mapped through slots when set).
  /// @return a pointer to its N words.
  VEIL_HD W* limb(u32 poly, u32 l) const {
    return data + ((std::size_t(poly) * poly_stride() + (slots ? slots[l] : l)) << log_n);
  }
  /// Limb `pl` of the flattened (polynomial, limb) sequence, pl = poly * num_limbs + l.
  /// @param pl the flattened index, below num_polys * num_limbs.
  /// @return a pointer to its N words.
  VEIL_HD W* limb(u32 pl) const {
    if (slots || poly_limbs) {
      const u32 poly = pl / num_limbs;
      return limb(poly, pl - poly * num_limbs);
    }
    return data + (std::size_t(pl) << log_n);
  }
  /// Word `j` of limb `l` of polynomial `poly`.
  /// @param poly the polynomial.
  /// @param l the limb.
  /// @param j the word, below N.
  /// @return a reference to the word.
  VEIL_HD W& at(u32 poly, u32 l, std::size_t j) const { return limb(poly, l)[j]; }
  /// The modulus of limb l.
  /// @param l the limb, below num_limbs.
  /// @return moduli[l] (device memory on a CUDA view).
  VEIL_HD const Modulus& modulus(u32 l) const { return moduli[l]; }
};

/// A view of `num_polys` polynomials of degree n over `base` at `data` on `dev`, `poly_limbs`
/// limbs apart (0: base.size(), contiguous).
/// @throws InvalidArgument if n is not a power of two, poly_limbs is below base.size() (and not
///         0), or W is u32 and a modulus of `base` is not below 2^31 (its residues would not fit
///         a 32-bit word).
/// @tparam W u32 or u64, possibly const.
/// @param dev the device of `data` (the base's tables are taken there).
/// @param data the first word.
/// @param num_polys the number of polynomials.
/// @param base the RNS base of every polynomial.
/// @param n the ring degree N.
/// @param poly_limbs the limbs between polynomials (0: base.size()).
/// @return the view (slots unset).
template <class W>
RnsPolyView<W> make_view(const Device& dev, W* data, std::size_t num_polys, const RnsBase& base,
                         std::size_t n, std::size_t poly_limbs = 0) {
  if (n < 2 || !std::has_single_bit(n)) {
    throw InvalidArgument("make_view: n must be a power of two >= 2, got " + std::to_string(n));
  }
  if (poly_limbs != 0 && poly_limbs < base.size()) {
    throw InvalidArgument("make_view: poly_limbs: expected 0 or at least " +
                          std::to_string(base.size()) + " (the base's limbs), got " +
                          std::to_string(poly_limbs));
  }
  if constexpr (std::is_same_v<std::remove_const_t<W>, u32>) {
    for (std::size_t l = 0; l < base.size(); ++l) {
      if (!fits_word32(base[l].value)) {
        throw InvalidArgument("make_view: base: modulus " + std::to_string(base[l].value) +
                              " at limb " + std::to_string(l) +
                              " does not fit a 32-bit word (expected < 2^31)");
      }
    }
  }
  RnsPolyView<W> v;
  v.data = data;
  v.moduli = base.moduli(dev);
  v.ntt_ids = base.has_ntt() ? base.ntt_ids(dev) : nullptr;
  v.num_polys = static_cast<u32>(num_polys);
  v.num_limbs = static_cast<u32>(base.size());
  v.log_n = std::countr_zero(n);  // n is a power of two (checked above)
  v.poly_limbs = static_cast<u32>(poly_limbs);
  return v;
}

}  // namespace veil
