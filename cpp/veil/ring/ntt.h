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
#pragma once
#include <cstddef>
#include <vector>

#include "veil/backend/table.h"
#include "veil/core/modarith.h"
#include "veil/ring/rns_base.h"

namespace veil {

/// Twiddle tables for a list of NTT-friendly primes at one degree N.
/// Layout of `twiddles`: [prime][4][N] = psi powers (bit-reversed), their Shoup quotients,
/// inverse powers (same indexing, psi^-bitrev(i)), their Shoup quotients.
/// `inv_n`: [prime][2] = N^-1 mod q and its Shoup quotient.
class NttTables {
 public:
  NttTables() = default;
  /// Throws InvalidArgument if a prime is not 1 mod 2N.
  NttTables(std::size_t n, const std::vector<Modulus>& primes);

  std::size_t n() const { return n_; }
  int log_n() const { return log_n_; }
  std::size_t num_primes() const { return primes_.size(); }
  const Modulus& prime(std::size_t i) const { return primes_[i]; }
  const std::vector<Modulus>& primes() const { return primes_.host(); }
  /// Index of prime q in this table; throws InvalidArgument if absent.
  u32 index_of(u64 q) const;

  const u64* twiddles(const Device& dev) const { return twiddles_.data(dev); }
  const u64* inv_n(const Device& dev) const { return inv_n_.data(dev); }
  const Modulus* moduli(const Device& dev) const { return primes_.data(dev); }
  /// psi (the minimal primitive 2N-th root) for prime i.
  u64 psi(std::size_t i) const { return psi_[i]; }

 private:
  std::size_t n_ = 0;
  int log_n_ = 0;
  DeviceTable<Modulus> primes_;
  DeviceTable<u64> twiddles_;
  DeviceTable<u64> inv_n_;
  std::vector<u64> psi_;
};

/// In-place forward NTT of `num_polys` polynomials over `base` (coefficients -> NTT form).
void ntt_forward(const Device& dev, u64* data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables);
/// In-place inverse NTT (NTT form -> coefficients).
void ntt_inverse(const Device& dev, u64* data, std::size_t num_polys, const RnsBase& base,
                 const NttTables& tables);

namespace detail {
// CPU kernels for one limb (reference implementation; also used by tests).
void ntt_forward_limb(u64* a, const u64* tw, const u64* tw_shoup, std::size_t n, u64 q);
void ntt_inverse_limb(u64* a, const u64* itw, const u64* itw_shoup, std::size_t n, u64 q,
                      u64 inv_n, u64 inv_n_shoup);
// CUDA batched kernels (ntt_cuda.cu). `ids[l]` is the NttTables index of limb l.
void ntt_forward_cuda(const Device& dev, u64* data, std::size_t num_polys, std::size_t num_limbs,
                      const u32* ids, const Modulus* moduli, const u64* twiddles, int log_n);
void ntt_inverse_cuda(const Device& dev, u64* data, std::size_t num_polys, std::size_t num_limbs,
                      const u32* ids, const Modulus* moduli, const u64* twiddles,
                      const u64* inv_n, int log_n);
// Kernel variant of the CUDA NTT (ntt_cuda.cu; CUDA builds only): 0..ntt_variant_count()-1, all
// bit-identical to the CPU. The default comes from VEIL_NTT_VARIANT (read once) or the built-in
// choice; set_ntt_variant(v) overrides it for this process (-1 restores it; for benchmarks).
void set_ntt_variant(int variant);
int ntt_variant();
int ntt_variant_count();
const char* ntt_variant_name(int variant);
}  // namespace detail

}  // namespace veil
