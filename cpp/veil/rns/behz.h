// BEHZ tools (Bajard-Eynard-Hasan-Zucca 2016; SEAL's RNSTool; Özcan et al. 2023 §III: fastbconv,
// sm_mrq, fast_floor, fastbconv_sk; Al Badawi et al. 2021 §III).
//
// Bases: Q (ciphertext primes), B (|Q| auxiliary NTT primes), m_sk (one more NTT prime),
// Bsk = B ∪ {m_sk} (stored as [B..., m_sk]), m_tilde = 2^32, gamma (an NTT prime for decryption).
#pragma once
#include <cstddef>

#include "veil/backend/table.h"
#include "veil/rns/base_converter.h"

namespace veil {

/// The RNS tools of BEHZ's BFV multiplication and decryption (Bajard-Eynard-Hasan-Zucca, "A full
/// RNS variant of FV like somewhat homomorphic encryption schemes", SAC 2016), with SEAL's
/// RNSTool conventions: fast conversion to Bsk ∪ {m_tilde}, small Montgomery reduction, fast
/// floor, Shenoy-Kumaresan conversion back to Q, and the gamma-corrected decryption. All on 64-bit
/// words.
class BehzTools {
 public:
  BehzTools() = default;
  /// q: ciphertext base; bsk: |Q|+1 NTT primes (B then m_sk), disjoint from q; gamma: a prime
  /// not in q (decryption); t: plain modulus. Throws InvalidArgument if a base is empty, bsk has
  /// fewer than 2 moduli, the bases overlap, gamma is in q, or t is not co-prime to Q and gamma.
  /// Not checked: the BEHZ bounds need B at least about as large as Q (SEAL: |B| = |Q| primes of
  /// the same size), and decryption needs gamma > t (SEAL: a 61-bit prime).
  /// @param q the ciphertext base Q.
  /// @param bsk the base B ∪ {m_sk} (B first, m_sk last).
  /// @param gamma the decryption's correction prime.
  /// @param t the plain modulus.
  /// @throws InvalidArgument if a check above fails, or t or gamma is outside [2, 2^61).
  BehzTools(const RnsBase& q, const RnsBase& bsk, u64 gamma, u64 t);

  /// The base Bsk = B ∪ {m_sk}, [B..., m_sk].
  /// @return the base.
  const RnsBase& base_bsk() const { return bsk_; }

  /// Multiplication step 1 (SEAL fastbconv_m_tilde): in [num_polys][Q][n] ->
  /// out [num_polys][Bsk ∪ {m_tilde}][n] = FastBaseConv([x * m_tilde]_Q) (m_tilde limb last).
  /// @param dev the device of `in` and `out`.
  /// @param in [num_polys][Q][n] residues.
  /// @param out [num_polys][Bsk ∪ {m_tilde}][n].
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @throws InvalidArgument if the object is default-constructed.
  void fastbconv_m_tilde(const Device& dev, const u64* in, u64* out, std::size_t n,
                         std::size_t num_polys) const;
  /// Step 2, small Montgomery reduction (BEHZ Alg. 2): in [Bsk ∪ {m_tilde}] -> out [Bsk]:
  /// r = [-x_mtilde * Q^-1]_{m_tilde} taken centered in [-m_tilde/2, m_tilde/2) (as SEAL);
  /// y = (x + Q r) * m_tilde^-1 mod Bsk.
  /// @param dev the device of `in` and `out`.
  /// @param in [num_polys][Bsk ∪ {m_tilde}][n] (fastbconv_m_tilde's output).
  /// @param out [num_polys][Bsk][n].
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @throws InvalidArgument if the object is default-constructed.
  void sm_mrq(const Device& dev, const u64* in, u64* out, std::size_t n,
              std::size_t num_polys) const;
  /// Step 4, fast floor: in [num_polys][Q ∪ Bsk][n] (Q limbs first) -> out [num_polys][Bsk][n]
  /// = (x_Bsk - FastBaseConv_{Q->Bsk}(x_Q)) * Q^-1 mod Bsk  (floor(x/Q) up to |Q|).
  /// @param dev the device of `in` and `out`.
  /// @param in [num_polys][Q ∪ Bsk][n].
  /// @param out [num_polys][Bsk][n].
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @throws InvalidArgument if the object is default-constructed.
  void fast_floor(const Device& dev, const u64* in, u64* out, std::size_t n,
                  std::size_t num_polys) const;
  /// Step 5, Shenoy-Kumaresan: in [num_polys][Bsk][n] -> out [num_polys][Q][n], exact
  /// conversion from B to Q using the redundant m_sk.
  /// @param dev the device of `in` and `out`.
  /// @param in [num_polys][Bsk][n].
  /// @param out [num_polys][Q][n].
  /// @param n the ring degree N.
  /// @param num_polys the number of polynomials.
  /// @throws InvalidArgument if the object is default-constructed.
  void fastbconv_sk(const Device& dev, const u64* in, u64* out, std::size_t n,
                    std::size_t num_polys) const;
  /// Decryption (BEHZ §2.3 with gamma correction, as SEAL decrypt_scale_and_round):
  /// in [Q][n] (x = c0 + c1 s) -> out [n] values round(t x / Q) mod t in [0, t).
  /// @param dev the device of `in` and `out`.
  /// @param in [Q][n] residues of the phase c0 + c1 s (coefficient form).
  /// @param out [n] words; receives the plaintext coefficients in [0, t).
  /// @param n the ring degree N.
  /// @throws InvalidArgument if the object is default-constructed.
  void decrypt_scale_and_round(const Device& dev, const u64* in, u64* out, std::size_t n) const;

 private:
  RnsBase q_, b_, bsk_, bsk_mtilde_, t_gamma_, msk_q_;  // msk_q_ = {m_sk} then Q
  u64 t_ = 0, gamma_ = 0;
  detail::FastConvTables q_to_bsk_mtilde_;  // Q -> Bsk ∪ {m_tilde}, inputs scaled by m_tilde
  detail::FastConvTables q_to_bsk_;         // Q -> Bsk
  detail::FastConvTables b_to_msk_q_;       // B -> {m_sk} ∪ Q
  detail::FastConvTables q_to_t_gamma_;     // Q -> {t, gamma}, inputs scaled by t * gamma
  u64 neg_inv_q_mod_mtilde_ = 0;            // -Q^-1 mod m_tilde
  DeviceTable<u64> q_mod_bsk_, q_mod_bsk_shoup_;            // [Bsk]: Q mod b_j
  DeviceTable<u64> mtilde_inv_bsk_, mtilde_inv_bsk_shoup_;  // [Bsk]: m_tilde^-1 mod b_j
  DeviceTable<u64> q_inv_bsk_, q_inv_bsk_shoup_;            // [Bsk]: Q^-1 mod b_j
  DeviceTable<u64> b_mod_q_, b_mod_q_shoup_;                // [Q]: B mod q_i
  u64 b_inv_msk_ = 0, b_inv_msk_shoup_ = 0;                 // B^-1 mod m_sk
  u64 neg_inv_q_mod_t_ = 0, neg_inv_q_mod_gamma_ = 0, gamma_inv_mod_t_ = 0;
};

}  // namespace veil
