// Context: validated parameters and the precomputed tables every scheme shares (NTT, RNS bases,
// key switching, modulus switching), shared (immutable) by all objects. Tables that one scheme
// alone uses live with that scheme (bfv/bfv_tables.h, bgv/bgv_tables.h), cached per level by
// Context::scheme_tables.
#pragma once
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "veil/backend/device.h"
#include "veil/backend/table.h"
#include "veil/core/error.h"
#include "veil/ring/ntt.h"
#include "veil/ring/rns_base.h"
#include "veil/rlwe/params.h"
#include "veil/rns/mod_down.h"
#include "veil/rns/mod_down_ntt.h"

namespace veil {

/// Key-switching tables for one level l (ciphertext base Q_l = q_0..q_l). Digit j covers primes
/// [j*alpha, min((j+1)*alpha, l+1)) of Q_l (Phantom, Yang et al. 2024 §III-C; Han-Ki 2020).
struct KeySwitchLevel {
  std::size_t level = 0;
  std::size_t dnum = 0;
  RnsBase base_qp;                    // Q_l ∪ P
  std::vector<std::size_t> digit_first, digit_size;
  // The limbs ModUp computes: for each digit j, Q_l ∪ P without the digit's own primes. They are
  // stored digit by digit ([dnum][l+1+k-alpha] limbs; the last digit may have fewer own primes,
  // so more limbs); the own limbs are the input's, already known in NTT form (ModUp fused with
  // the NTT, as Cheddar skips limbs already in NTT form; Kim et al., arXiv:2407.13055).
  // modup_base lists them prime by prime (for each prime of Q_l ∪ P, the digits that do not own
  // it) and modup_slots gives, for each, the stored limb that holds it: the forward NTT of ModUp
  // walks them in this order (RnsPolyView::slots), so consecutive blocks share a prime's twiddle
  // table in L2, while the storage stays digit by digit (the inner product reads a prime's
  // digits faster from distant limbs than from adjacent ones; bench/NOTES.md).
  RnsBase modup_base;
  DeviceTable<u32> modup_slots;
  // ModUp of every digit in one pass, written in Q_l ∪ P order (FastBaseConv from D_j):
  DeviceTable<u64> modup_scale;        // [dnum][alpha]: (D_j/q_i)^-1 mod q_i
  DeviceTable<u64> modup_scale_shoup;  // [dnum][alpha]
  // [dnum][l+1+k][modup_stride]: (D_j/q_i) mod m (0 inside D_j and in the padding); rows are
  // padded to a multiple of four words so the kernel reads four entries per (vector) load.
  std::size_t modup_stride = 0;
  DeviceTable<u64> modup_mat;
  DeviceTable<u32> modup_mat32;        // the same in 32-bit words (contexts with 32-bit words)
  // modup_mat32 in Montgomery form (entry * 2^32 mod its row's prime) for the GPU's lazy rows
  // (rns/conv_kernels.h: block_row_mont); empty unless mont32_lazy_fits holds for Q_l, Q_l ∪ P.
  DeviceTable<u32> modup_mont32;
  ModDown mod_down;                   // Q_l ∪ P -> Q_l (divide by P, round), coefficient form
  ModDownNtt mod_down_ntt;            // the same on NTT-form data (BGV: with the t-correction)
  // CKKS, levels that can rescale: Q_l ∪ P -> Q_t (t = rescale_target(l)), dividing by the
  // rescale block B = {q_t+1..q_l} and P at once (relinearization's ModDown fused with rescale).
  ModDownNtt rescale_down;
  // [l+1]: P mod q_i (CKKS, every level: the lift of c to Q_l ∪ P; rlwe/keyswitch.h)
  DeviceTable<u64> p_mod_q, p_mod_q_shoup;
};

/// Per-level tables (built on first use).
struct LevelTables {
  std::size_t level = 0;
  // Q_l -> Q_{l-1}, BGV mod switch (t-correction); CKKS: Q_l -> Q_{rescale_target(l)}, the rescale
  // by the block of primes above the target (t = 0).
  ModDownNtt drop_last;
  ModDown drop_last_coeff;  // BFV: Q_l -> Q_{l-1}, c -> round(c / q_l) (SEAL's BFV mod switch)
  int q_bit_count = 0;     // exact bit count of Q_l (Boost.Multiprecision)
  // Exhausted-noise test at decryption (BFV, BGV): with x = f * phase (f = t for BFV, 1 for BGV),
  // x/Q mod 1 = sum_i [x_i * (Q/q_i)^-1]_{q_i} / q_i mod 1, so noise_factor[i] =
  // f * (Q/q_i)^-1 mod q_i and |x| >= 2^(bits(Q) - 2) (budget 0) iff |x/Q| >= noise_threshold.
  DeviceTable<u64> noise_factor;
  double noise_threshold = 0;
};

class Context;

/// Base of the per-level tables that a scheme owns and keeps outside rlwe/ (Lattigo's layout:
/// schemes/bgv/params.go embeds the rlwe parameters; the scheme's own state lives with the
/// scheme). Context::scheme_tables caches one per level. Users: BFV (bfv/bfv_tables.h,
/// BfvTables: Delta, HPS and BEHZ tables) and BGV (bgv/bgv_tables.h, BgvTables: the conversion
/// to t for decryption). CKKS owns none.
struct SchemeLevelTables {
  virtual ~SchemeLevelTables() = default;
};

/// Builds a scheme's tables for `level` of `ctx` (called once per level by Context::scheme_tables;
/// may throw, and is then called again on the next request).
using SchemeTablesBuilder = std::unique_ptr<SchemeLevelTables> (*)(const Context& ctx,
                                                                   std::size_t level);

/// BFV's auxiliary NTT primes, chosen with the context's primes (see Context::bfv_aux_primes).
/// Their NTT tables follow coeff_modulus in Context::ntt(): the HPS primes from index
/// `hps_first_id`, then the BEHZ primes from `bsk_first_id` (gamma has none: it is never
/// transformed).
struct BfvAuxPrimes {
  std::vector<u64> hps;          // HPS's base R (mul_method hps; empty with behz)
  std::vector<u64> bsk;          // BEHZ's Bsk: |Q| + 1 primes of 61 bits (behz; empty with hps)
  u64 gamma = 0;                 // BEHZ's gamma for decryption (61-bit prime; 0 with hps)
  std::size_t hps_first_id = 0;  // ntt() index of hps[0]
  std::size_t bsk_first_id = 0;  // ntt() index of bsk[0]
};

/// Most key-switching digits a key may have (the key-switching kernels' limit).
inline constexpr std::size_t kMaxKeySwitchDigits = 60;

class Context {
 public:
  /// Validates `params` and builds every table. Throws InvalidArgument naming the offending
  /// parameter: N not a power of two in 2^10..2^17; primes not NTT-friendly, repeated, or above
  /// 60 bits; plain modulus < 2 or not co-prime to Q (BFV/BGV); log2(QP) above the security
  /// bound (pass SecurityLevel::none explicitly to skip).
  static std::shared_ptr<const Context> create(const EncryptionParameters& params,
                                               SecurityLevel security = SecurityLevel::tc128);

  const EncryptionParameters& params() const { return params_; }
  SchemeType scheme() const { return params_.scheme; }
  std::size_t n() const { return params_.poly_modulus_degree; }
  int log_n() const { return log_n_; }
  SecurityLevel security() const { return security_; }
  u64 plain_modulus() const { return params_.plain_modulus; }
  const Modulus& plain_mod() const { return plain_; }
  /// Number of Q primes (L) and special primes (k).
  std::size_t num_q() const { return num_q_; }
  std::size_t num_p() const { return num_p_; }
  std::size_t alpha() const { return alpha_; }
  /// Key-switching digits of a key (over all of Q): ceil(num_q / alpha).
  std::size_t dnum() const { return (num_q_ + alpha_ - 1) / alpha_; }
  /// Highest level index: a ciphertext at level l has l+1 limbs (q_0..q_l).
  std::size_t max_level() const { return num_q_ - 1; }
  /// Total bits of Q (all levels) and of Q*P.
  int total_q_bits() const { return base_q_.back().total_bits(); }
  int total_qp_bits() const { return base_qp_full_.total_bits(); }
  /// An identifier of the parameters (FNV-1a over N, moduli, t, scheme); objects from contexts
  /// with different hashes never mix.
  u64 parameter_hash() const { return hash_; }
  /// Word size of every residue in memory (32 or 64; EncryptionParameters::word_bits resolved).
  int word_bits() const { return word_bits_; }

  const NttTables& ntt() const { return ntt_; }
  const RnsBase& base_q(std::size_t level) const { return base_q_.at(level); }
  const RnsBase& base_p() const { return base_p_; }
  const RnsBase& base_qp_full() const { return base_qp_full_; }
  /// P mod q_i for every Q prime ([num_q]; P = product of the special primes; empty without
  /// special primes): the digit-indicator factor of key-switching keys and the lift of c to Q ∪ P.
  const std::vector<u64>& special_product_mod_q() const { return p_mod_q_; }
  /// Key-switching tables at a level (built on first use, thread-safe).
  const KeySwitchLevel& key_switch(std::size_t level) const;

  /// Rescale / mod-switch / decryption tables at a level (built on first use, thread-safe).
  const LevelTables& level_tables(std::size_t level) const;

  /// The scheme-owned tables at `level` (a SchemeLevelTables subclass: BFV's BfvTables, BGV's
  /// BgvTables), built by `build(*this, level)` on the first request for that level and cached
  /// for the context's lifetime (thread-safe: std::call_once per level; concurrent first
  /// requests build once). One slot per level: a context has one scheme, so one builder; the
  /// scheme's accessor (bfv_tables, bgv_tables) checks the scheme and casts the result. Throws
  /// InvalidArgument naming `level` if level > max_level(), or naming `build` if it is null or
  /// differs from the builder that filled the slot; rethrows what `build` throws (the slot stays
  /// empty).
  const SchemeLevelTables& scheme_tables(std::size_t level, SchemeTablesBuilder build) const;

  /// BFV's auxiliary primes (empty for BGV and CKKS). They stay chosen here, in build(), and not
  /// in bfv/, because their NTT tables are part of ntt(), the context's one table set, which is
  /// complete once the context exists; bfv/bfv_tables.cpp builds the per-level bases from them.
  const BfvAuxPrimes& bfv_aux_primes() const { return bfv_aux_; }
  bool batching_enabled() const { return batching_; }
  const NttTables& plain_ntt() const;
  /// SEAL's slot -> bit-reversed NTT index map for batching ([N]).
  const DeviceTable<u32>& slot_index_map() const { return slot_map_; }

  /// CKKS: the level a rescale from `level` goes to: below the block of Q primes that holds
  /// q_level (EncryptionParameters::rescale_groups; level - 1 with SEAL's one-prime blocks).
  /// Throws InvalidArgument naming `encrypted` when `level` lies in the first block (q_0's), which
  /// cannot be divided further.
  std::size_t rescale_target(std::size_t level) const;
  /// The block sizes, resolved (one per block, from q_0 up; all 1 by default).
  const std::vector<std::size_t>& rescale_groups() const { return groups_; }

  /// Galois element for a row rotation by `step` (SEAL: 3^step mod 2N; negative steps rotate
  /// right). Throws InvalidArgument if |step| >= N/2.
  u32 galois_elt_from_step(int step) const;
  /// The column-swap / conjugation element 2N - 1.
  u32 galois_elt_column() const { return static_cast<u32>(2 * n() - 1); }

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

 private:
  Context() = default;
  void build(const EncryptionParameters& params, SecurityLevel security);
  void resolve_rescale_groups(const EncryptionParameters& params);
  std::unique_ptr<KeySwitchLevel> build_key_switch(std::size_t level) const;

  EncryptionParameters params_;
  SecurityLevel security_ = SecurityLevel::tc128;
  int log_n_ = 0;
  int word_bits_ = 64;
  std::size_t num_q_ = 0, num_p_ = 0, alpha_ = 1;
  Modulus plain_;
  u64 hash_ = 0;
  NttTables ntt_;
  std::vector<RnsBase> base_q_;
  std::vector<std::size_t> groups_;      // resolved rescale blocks
  std::vector<u64> p_mod_q_;
  std::vector<std::size_t> group_start_;  // [num_q]: first prime index of the block holding q_i
  RnsBase base_p_, base_qp_full_;
  mutable std::vector<std::unique_ptr<KeySwitchLevel>> ks_;
  mutable std::vector<std::unique_ptr<std::once_flag>> ks_once_;
  mutable std::vector<std::unique_ptr<LevelTables>> lt_;
  mutable std::vector<std::unique_ptr<std::once_flag>> lt_once_;
  // scheme_tables: [num_q] slots, the builder that filled each, and their once flags.
  mutable std::vector<std::unique_ptr<SchemeLevelTables>> scheme_;
  mutable std::vector<SchemeTablesBuilder> scheme_builder_;
  mutable std::vector<std::unique_ptr<std::once_flag>> scheme_once_;
  BfvAuxPrimes bfv_aux_;  // BFV auxiliary NTT primes (HPS R, BEHZ Bsk and gamma)
  bool batching_ = false;
  std::unique_ptr<NttTables> plain_ntt_;
  DeviceTable<u32> slot_map_;
};

using ContextPtr = std::shared_ptr<const Context>;

/// Context::scheme_tables as the scheme's own type T (which `build` makes), after checking that
/// `ctx` is a context of `scheme`.
/// @throws InvalidArgument naming `context` when it is another scheme's (`name`: the scheme's
///         name for the message), or as Context::scheme_tables.
template <class T>
const T& scheme_tables_of(const Context& ctx, SchemeType scheme, const char* name,
                          std::size_t level, SchemeTablesBuilder build) {
  if (ctx.scheme() != scheme) {
    throw InvalidArgument(std::string("context: ") + name + " tables requested from a non-" +
                          name + " context");
  }
  // The cache hands back what `build` made for this context (it checks the builder).
  return static_cast<const T&>(ctx.scheme_tables(level, build));
}

}  // namespace veil
