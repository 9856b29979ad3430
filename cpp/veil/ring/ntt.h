// Negacyclic NTT over Z_q[X]/(X^N + 1) for every limb of every polynomial of an operand.
//
// Convention (DESIGN.md, identical to SEAL's ntt_negacyclic_harvey): psi is the minimal
// primitive 2N-th root of unity mod q; the forward transform is Cooley-Tukey with the powers
// psi^bitrev(i) and leaves its output in bit-reversed order; the inverse is Gentleman-Sande and
// returns natural-order coefficients, scaled by N^-1. Butterflies are Harvey's lazy ones
// (Harvey 2014, Alg. 4): intermediate values stay in [0, 4q) and the output is fully reduced.
//
// Data layout: `data` holds `num_polys` polynomials, each [base.size()][N] contiguous words, all
// residues in [0, q). CPU: one OpenMP task per (poly, limb). CUDA: all limbs of all polynomials
// in one batched launch sequence (ntt_cuda.cu).
//
// Word size: 64-bit words for any prime below 2^61; 32-bit words (u32) for primes below 2^31, with
// the 32-bit Shoup arithmetic of core/modarith.h. Both produce the same residues for the same
// prime (the transform is defined by the prime, not by the word).
#pragma once
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "veil/backend/table.h"
#include "veil/backend/word_buffer.h"
#include "veil/core/modarith.h"
#include "veil/ring/rns_base.h"
#include "veil/ring/rns_poly_view.h"

namespace veil {

/// Twiddle tables for a list of NTT-friendly primes at one degree N.
/// Layout of `twiddles`: [prime][4][N] = psi powers (bit-reversed), their Shoup quotients,
/// inverse powers (same indexing, psi^-bitrev(i)), their Shoup quotients.
/// `inv_n`: [prime][2] = N^-1 mod q and its Shoup quotient.
class NttTables {
 public:
  NttTables() = default;
  /// Builds the tables of every prime at degree n: psi = minimal_primitive_root(2n, q), the powers
  /// psi^i and psi^-i stored at bitrev(i) with their 64-bit Shoup quotients, and N^-1 mod q. The
  /// 32-bit tables are derived later, on first use.
  /// @param n the ring degree N, a power of two >= 2.
  /// @param primes the NTT-friendly primes (q = 1 mod 2N), in table order.
  /// @throws InvalidArgument if n is not a power of two >= 2 or a prime is not 1 mod 2N.
  NttTables(std::size_t n, const std::vector<Modulus>& primes);

  /// The ring degree N.
  /// @return N.
  std::size_t n() const { return n_; }
  /// log2(N).
  /// @return log2 of the ring degree.
  int log_n() const { return log_n_; }
  /// The number of primes with tables.
  /// @return the prime count.
  std::size_t num_primes() const { return primes_.size(); }
  /// Prime i of the tables (unchecked).
  /// @param i the table index, below num_primes().
  /// @return the prime with its Barrett constants.
  const Modulus& prime(std::size_t i) const { return primes_[i]; }
  /// All primes, in table order.
  /// @return the primes (host).
  const std::vector<Modulus>& primes() const { return primes_.host(); }
  /// Index of prime q in this table; throws InvalidArgument if absent.
  /// @param q the prime.
  /// @return its table index.
  /// @throws InvalidArgument if q has no table here.
  u32 index_of(u64 q) const;

  /// The 64-bit twiddle tables on `dev`, [prime][4][N] as described above (uploaded on first use).
  /// @param dev the device.
  /// @return the tables on `dev`.
  const u64* twiddles(const Device& dev) const { return twiddles_.data(dev); }
  /// The 64-bit N^-1 tables on `dev`, [prime][2] = N^-1 mod q and its Shoup quotient.
  /// @param dev the device.
  /// @return the tables on `dev`.
  const u64* inv_n(const Device& dev) const { return inv_n_.data(dev); }
  /// 32-bit tables, same layout as twiddles() with floor(w 2^32 / q) quotients; rows of primes
  /// >= 2^31 are zero. Built from the 64-bit tables on first use (once, thread-safe), so
  /// contexts that only use 64-bit words never pay for them.
  /// @param dev the device.
  /// @return the 32-bit tables on `dev`.
  const u32* twiddles32(const Device& dev) const { return tables32().twiddles.data(dev); }
  /// [prime][4] = N^-1, its 32-bit quotient, psi^-bitrev(1) N^-1 (the inverse transform's last
  /// stage merged with the scaling), its quotient.
  /// @param dev the device.
  /// @return the tables on `dev`.
  const u32* inv_n32(const Device& dev) const { return tables32().inv_n.data(dev); }
  /// The twiddle table for words W on dev (twiddles32 or twiddles).
  /// @tparam W u32 or u64.
  /// @param dev the device.
  /// @return the tables on `dev`.
  template <class W>
  const W* twiddles_for(const Device& dev) const {
    if constexpr (sizeof(W) == 4) {
      return twiddles32(dev);
    } else {
      return twiddles(dev);
    }
  }
  /// The N^-1 table for words W on dev (inv_n32, [prime][4], or inv_n, [prime][2]).
  /// @tparam W u32 or u64.
  /// @param dev the device.
  /// @return the tables on `dev`.
  template <class W>
  const W* inv_n_for(const Device& dev) const {
    if constexpr (sizeof(W) == 4) {
      return inv_n32(dev);
    } else {
      return inv_n(dev);
    }
  }
  /// The primes on `dev`, in table order.
  /// @param dev the device.
  /// @return num_primes() moduli on `dev`.
  const Modulus* moduli(const Device& dev) const { return primes_.data(dev); }
  /// psi (the minimal primitive 2N-th root) for prime i.
  /// @param i the table index.
  /// @return psi mod prime i.
  u64 psi(std::size_t i) const { return psi_[i]; }

 private:
  std::size_t n_ = 0;
  int log_n_ = 0;
  DeviceTable<Modulus> primes_;
  DeviceTable<u64> twiddles_;
  DeviceTable<u64> inv_n_;
  struct Tables32 {
    std::once_flag once;
    DeviceTable<u32> twiddles, inv_n;
  };
  // Shared by copies of these tables (the content depends only on the primes and N).
  std::shared_ptr<Tables32> tables32_ = std::make_shared<Tables32>();
  const Tables32& tables32() const;
  std::vector<u64> psi_;
};

/// In-place forward negacyclic NTT of every limb of every polynomial of `poly` (coefficients ->
/// NTT form, bit-reversed order), on `dev` (where `poly`'s words and tables live): Cooley-Tukey
/// with Harvey's lazy butterflies (Harvey, "Faster arithmetic for number-theoretic transforms",
/// J. Symb. Comp. 2014, Alg. 4), SEAL's ntt_negacyclic_harvey convention. CPU: an OpenMP loop
/// over the (polynomial, limb) pairs (AVX-512 kernels where available); CUDA: batched kernels
/// (ntt_cuda.cu), asynchronous.
/// @tparam W u32 or u64.
/// @param dev the device.
/// @param poly the operand, residues in [0, q); overwritten with residues in [0, q).
/// @param tables the tables at the operand's degree; poly.ntt_ids index them.
/// @throws InvalidArgument if the view has no NTT-table ids or its degree differs from the tables'.
template <class W>
void ntt_forward(const Device& dev, const RnsPolyView<W>& poly, const NttTables& tables);
/// In-place inverse NTT (NTT form -> coefficients in natural order, scaled by N^-1):
/// Gentleman-Sande with Harvey's lazy butterflies; as ntt_forward.
/// @tparam W u32 or u64.
/// @param dev the device.
/// @param poly the operand in NTT form; overwritten with its coefficients in [0, q).
/// @param tables the tables at the operand's degree; poly.ntt_ids index them.
/// @throws InvalidArgument if the view has no NTT-table ids or its degree differs from the tables'.
template <class W>
void ntt_inverse(const Device& dev, const RnsPolyView<W>& poly, const NttTables& tables);

/// In-place forward NTT of `num_polys` polynomials over `base` (coefficients -> NTT form).
/// The operand is `num_polys` contiguous polynomials of [base.size()][N] 64-bit words.
/// @param dev the device `data` is on.
/// @param data the words, overwritten.
/// @param num_polys the number of polynomials.
/// @param base their RNS base (with NTT-table ids).
/// @param tables the tables at degree N = tables.n().
/// @throws InvalidArgument if `base` has no NTT tables.
void ntt_forward(const Device& dev, u64* data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables);
/// In-place inverse NTT (NTT form -> coefficients).
/// @param dev the device `data` is on.
/// @param data the words, overwritten.
/// @param num_polys the number of polynomials.
/// @param base their RNS base (with NTT-table ids).
/// @param tables the tables at degree N = tables.n().
/// @throws InvalidArgument if `base` has no NTT tables.
void ntt_inverse(const Device& dev, u64* data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables);
/// The same on words of the pointer's run-time size.
/// @param dev the device `data` is on.
/// @param data the words (32 or 64 bits), overwritten.
/// @param num_polys the number of polynomials.
/// @param base their RNS base (with NTT-table ids).
/// @param tables the tables at degree N = tables.n().
/// @throws InvalidArgument if `base` has no NTT tables, or the words are 32-bit and a prime of
/// `base` is not below 2^31.
void ntt_forward(const Device& dev, WordPtr data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables);
/// Inverse NTT on words of the pointer's run-time size.
/// @param dev the device `data` is on.
/// @param data the words (32 or 64 bits), overwritten.
/// @param num_polys the number of polynomials.
/// @param base their RNS base (with NTT-table ids).
/// @param tables the tables at degree N = tables.n().
/// @throws InvalidArgument if `base` has no NTT tables, or the words are 32-bit and a prime of
/// `base` is not below 2^31.
void ntt_inverse(const Device& dev, WordPtr data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables);
/// The same on 32-bit words; every prime of `base` must be below 2^31.
/// @param dev the device `data` is on.
/// @param data the words, overwritten.
/// @param num_polys the number of polynomials.
/// @param base their RNS base (with NTT-table ids).
/// @param tables the tables at degree N = tables.n().
/// @throws InvalidArgument if `base` has no NTT tables or a prime is not below 2^31.
void ntt_forward(const Device& dev, u32* data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables);
/// Inverse NTT on 32-bit words; every prime of `base` must be below 2^31.
/// @param dev the device `data` is on.
/// @param data the words, overwritten.
/// @param num_polys the number of polynomials.
/// @param base their RNS base (with NTT-table ids).
/// @param tables the tables at degree N = tables.n().
/// @throws InvalidArgument if `base` has no NTT tables or a prime is not below 2^31.
void ntt_inverse(const Device& dev, u32* data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables);

namespace detail {
// CPU kernels for one limb (reference implementation; also used by tests). W = u32 (q < 2^31)
// or u64 (q < 2^61); tw/tw_shoup as in NttTables for that word.
template <class W>
void ntt_forward_limb(W* a, const W* tw, const W* tw_shoup, std::size_t n, W q);
template <class W>
void ntt_inverse_limb(W* a, const W* itw, const W* itw_shoup, std::size_t n, W q, W inv_n,
                      W inv_n_shoup);
// CUDA batched kernels (ntt_cuda.cu): every limb of every polynomial of `poly` (whose ntt_ids
// index the tables). twiddles/inv_n: NttTables::twiddles_for<W>/inv_n_for<W> on the device.
template <class W>
void ntt_forward_cuda(const Device& dev, const RnsPolyView<W>& poly, const W* twiddles);
template <class W>
void ntt_inverse_cuda(const Device& dev, const RnsPolyView<W>& poly, const W* twiddles,
                      const W* inv_n);
// Kernel variant of the CUDA NTT (ntt_cuda.cu; CUDA builds only): 0..ntt_variant_count()-1, all
// bit-identical to the CPU. The default comes from VEIL_NTT_VARIANT (read once) or the built-in
// choice; set_ntt_variant(v) overrides it for this process (-1 restores it; for benchmarks).
void set_ntt_variant(int variant);
int ntt_variant();
int ntt_variant_count();
const char* ntt_variant_name(int variant);
// Whether the forward NTTs fused with their producer and consumer (ntt_fused.cuh) may run: CUDA
// builds, unless VEIL_FUSED_NTT=0 is set in the environment (read once; for A/B measurements);
// set_fused_ntt(0/1) overrides it for this process (-1 restores it; for benchmarks and tests).
bool fused_ntt_enabled();
void set_fused_ntt(int enabled);
/// Whether the fused passes serve degree 2^log_n with words W (on a CUDA device) and are enabled.
/// 32-bit words only: a producer's inputs for four coefficients per thread fit the registers of
/// a 512-thread block only with 32-bit words.
template <class W>
bool fused_ntt_applies(int log_n) {
  return sizeof(W) == 4 && log_n >= 12 && log_n <= 17 && fused_ntt_enabled();
}
}  // namespace detail

}  // namespace veil
