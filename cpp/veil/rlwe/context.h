// Context: validated parameters and the precomputed tables every scheme shares (NTT, RNS bases,
// key switching), shared (immutable) by all objects. What one scheme alone uses lives with that
// scheme (bfv/bfv_tables.h, bgv/bgv_tables.h, ckks/ckks_tables.h): its parameter checks and
// context-wide tables through a SchemeDefinition (Context::scheme_context_tables), its per-level
// tables cached by Context::scheme_tables. rlwe/ itself names no scheme (as Lattigo's rlwe
// package; the schemes embed its parameters).
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
  std::size_t level = 0;  ///< the level l
  std::size_t dnum = 0;   ///< digits at this level: ceil((l+1) / alpha)
  RnsBase base_qp;        ///< Q_l ∪ P
  std::vector<std::size_t> digit_first;  ///< [dnum]: the index in Q_l of digit j's first prime
  std::vector<std::size_t> digit_size;   ///< [dnum]: digit j's number of primes
  /// The limbs ModUp computes: for each digit j, Q_l ∪ P without the digit's own primes. They are
  /// stored digit by digit ([dnum][l+1+k-alpha] limbs; the last digit may have fewer own primes,
  /// so more limbs); the own limbs are the input's, already known in NTT form (ModUp fused with
  /// the NTT, as Cheddar skips limbs already in NTT form; Kim et al., arXiv:2407.13055).
  /// modup_base lists them prime by prime (for each prime of Q_l ∪ P, the digits that do not own
  /// it) and modup_slots gives, for each, the stored limb that holds it: the forward NTT of ModUp
  /// walks them in this order (RnsPolyView::slots), so consecutive blocks share a prime's twiddle
  /// table in L2, while the storage stays digit by digit (the inner product reads a prime's
  /// digits faster from distant limbs than from adjacent ones; bench/NOTES.md).
  RnsBase modup_base;
  DeviceTable<u32> modup_slots;  ///< for each prime of modup_base, its stored limb
  // ModUp of every digit in one pass, written in Q_l ∪ P order (FastBaseConv from D_j):
  DeviceTable<u64> modup_scale;        ///< [dnum][alpha]: (D_j/q_i)^-1 mod q_i
  DeviceTable<u64> modup_scale_shoup;  ///< [dnum][alpha]: their Shoup quotients
  /// Row length of modup_mat: alpha padded to a multiple of four words, so the kernel reads four
  /// entries per (vector) load.
  std::size_t modup_stride = 0;
  /// [dnum][l+1+k][modup_stride]: (D_j/q_i) mod m (0 inside D_j and in the padding).
  DeviceTable<u64> modup_mat;
  DeviceTable<u32> modup_mat32;  ///< the same in 32-bit words (contexts with 32-bit words)
  /// modup_mat32 in Montgomery form (entry * 2^32 mod its row's prime) for the GPU's lazy rows
  /// (rns/conv_kernels.h: block_row_mont); empty unless mont32_lazy_fits holds for Q_l, Q_l ∪ P.
  DeviceTable<u32> modup_mont32;
  ModDown mod_down;  ///< Q_l ∪ P -> Q_l (divide by P, round), coefficient form
  /// The same on NTT-form data; with the plain-modulus correction when the scheme's errors are
  /// multiples of t (SchemeDefinition::errors_times_plain).
  ModDownNtt mod_down_ntt;
  /// [l+1]: P mod q_i: the lift of c to Q_l ∪ P (key_switch_lift) and the addend P (c0, c1) of
  /// key_switch_rescale (rlwe/keyswitch.h).
  DeviceTable<u64> p_mod_q;
  DeviceTable<u64> p_mod_q_shoup;  ///< [l+1]: the Shoup quotients of p_mod_q
};

/// Per-level tables every scheme shares (built on first use).
struct LevelTables {
  std::size_t level = 0;  ///< the level l (Q_l = q_0..q_l)
  int q_bit_count = 0;    ///< exact bit count of Q_l (Boost.Multiprecision)
};

class Context;

/// Base of the per-level tables that a scheme owns and keeps outside rlwe/ (Lattigo's layout:
/// schemes/bgv/params.go embeds the rlwe parameters; the scheme's own state lives with the
/// scheme). Context::scheme_tables caches one per level. Users: BFV (bfv/bfv_tables.h,
/// BfvTables: Delta, HPS and BEHZ tables, mod switch, noise test), BGV (bgv/bgv_tables.h,
/// BgvTables: mod switch, conversion to t, noise test) and CKKS (ckks/ckks_tables.h, CkksTables:
/// rescale, the rescale fused with ModDown, ModRaise).
struct SchemeLevelTables {
  virtual ~SchemeLevelTables() = default;
};

/// Builds a scheme's tables for `level` of `ctx` (called once per level by Context::scheme_tables;
/// may throw, and is then called again on the next request).
using SchemeTablesBuilder = std::unique_ptr<SchemeLevelTables> (*)(const Context& ctx,
                                                                   std::size_t level);

/// Base of the context-wide tables a scheme owns (BFV's auxiliary primes, CKKS's rescale
/// blocks), built once by SchemeDefinition::build_context while the context is created and kept
/// for its lifetime (Context::scheme_context_tables).
struct SchemeContextTables {
  virtual ~SchemeContextTables() = default;
  /// NTT primes beyond Q and P that the scheme transforms with (BFV's HPS or BEHZ primes).
  /// Context::create appends their NTT tables to Context::ntt() after Q and P, in this order:
  /// aux_ntt_primes[i] has index coeff_modulus.size() + i.
  std::vector<u64> aux_ntt_primes;
};

/// What a scheme tells rlwe's Context: its name, the form and error shape of its ciphertexts,
/// and the checks and context-wide tables of its own parameters. One constant per scheme, in the
/// scheme's folder (bfv/bfv_tables.h, bgv/bgv_tables.h, ckks/ckks_tables.h); the scheme registry
/// (api/schemes.h) selects it by EncryptionParameters::scheme. rlwe/ reads only these fields and
/// never names a scheme.
struct SchemeDefinition {
  /// The scheme's name in messages ("BFV").
  const char* name = "";
  /// Ciphertexts live in NTT form (the key switch and decryption take them so); false:
  /// coefficient form (FV-style schemes, which may move to NTT form for some operations).
  bool ntt_form = true;
  /// The scheme has a plain modulus t (EncryptionParameters::plain_modulus, checked by the
  /// context: 2 <= t < 2^60, co-prime to Q, below Q, fresh noise budget); false: it must be 0.
  bool has_plain_modulus = true;
  /// Fresh errors (encryption, key-switching keys) are multiples of t, and the key switch's
  /// ModDown keeps them so (least-significant-bit encoding: Brakerski, Gentry, Vaikuntanathan,
  /// ITCS 2012; the correction of Gentry, Halevi, Smart, CRYPTO 2012, §3.1).
  bool errors_times_plain = false;
  /// Why the scheme's own state cannot use 32-bit words (empty: nothing of its own objects), or
  /// null. The context adds the reasons of Q, P and t.
  std::string (*word32_obstacle)(const EncryptionParameters& params) = nullptr;
  /// Checks the scheme's own parameters and builds its context-wide tables, after the context
  /// has checked N, Q, P, alpha and t; `num_q` and `word_bits` are resolved. Throws
  /// InvalidArgument naming the offending parameter. Null: no checks and no tables.
  std::unique_ptr<SchemeContextTables> (*build_context)(const EncryptionParameters& params,
                                                        std::size_t num_q,
                                                        int word_bits) = nullptr;
  /// The scheme this definition is of (every definition sets it): Context::create refuses
  /// parameters of another.
  SchemeType scheme{};
};

/// The definition of `scheme` (its constant in the scheme's folder). Defined by the scheme
/// registry (api/schemes.cpp), the one place that lists the schemes: rlwe/ declares the seam and
/// the layer above fills it, so Context::create(params) works for every scheme without rlwe/
/// naming one.
/// @param scheme the scheme of EncryptionParameters.
/// @return a definition that lives for the whole program.
const SchemeDefinition& scheme_definition_of(SchemeType scheme);

/// Most key-switching digits a key may have (the key-switching kernels' limit).
inline constexpr std::size_t kMaxKeySwitchDigits = 60;

/// The validated parameters and the tables every scheme shares: the NTT tables of Q, P and the
/// scheme's auxiliary primes, the RNS bases Q_l of every level and P, the key-switching tables
/// (hybrid key switching: Han, Ki, CT-RSA 2020; Kim, Polyakov, Zucca, eprint 2021/204), batching's
/// slot map. Immutable and shared by every object made with it (ContextPtr); per-level tables are
/// built on first use, thread-safe. A scheme's own state is reached through
/// scheme_context_tables and scheme_tables (SchemeDefinition).
class Context {
 public:
  /// Validates `params` and builds every table. Throws InvalidArgument naming the offending
  /// parameter: N not a power of two in 2^10..2^17; primes not NTT-friendly, repeated, or above
  /// 60 bits; plain modulus < 2 or not co-prime to Q (schemes with a plain modulus), or not 0
  /// (the others); log2(QP) above the security bound (pass SecurityLevel::none explicitly to
  /// skip); the scheme's own checks (SchemeDefinition::build_context).
  /// @param params the parameters (N, Q and P primes, plain modulus, scheme options).
  /// @param security the HE Standard security level QP is checked against.
  /// @return the context, shared (immutable) by every object made with it.
  /// @throws InvalidArgument naming the offending parameter.
  static std::shared_ptr<const Context> create(const EncryptionParameters& params,
                                               SecurityLevel security = SecurityLevel::tc128) {
    return create(params, scheme_definition_of(params.scheme), security);
  }
  /// The same with the scheme's definition given (the scheme's constant; create(params) looks it
  /// up by params.scheme).
  /// @param params the parameters.
  /// @param scheme what the scheme adds: its name, forms, checks and context-wide tables.
  /// @param security the HE Standard security level QP is checked against.
  /// @return the context.
  /// @throws InvalidArgument naming `scheme` when it is another scheme's definition than
  ///         params.scheme, or naming the offending parameter (the context's checks, then the
  ///         scheme's SchemeDefinition::build_context).
  static std::shared_ptr<const Context> create(const EncryptionParameters& params,
                                               const SchemeDefinition& scheme,
                                               SecurityLevel security = SecurityLevel::tc128);

  /// @return the parameters the context was created from.
  const EncryptionParameters& params() const { return params_; }
  /// @return the scheme (EncryptionParameters::scheme).
  SchemeType scheme() const { return params_.scheme; }
  /// @return the scheme's definition (name, ciphertext form, error shape; SchemeDefinition).
  const SchemeDefinition& scheme_definition() const { return *scheme_def_; }
  /// @return the factor of fresh errors: t when the scheme's errors are multiples of t
  ///         (SchemeDefinition::errors_times_plain), else 1.
  u64 error_factor() const { return scheme_def_->errors_times_plain ? params_.plain_modulus : 1; }
  /// @return the ring degree N.
  std::size_t n() const { return params_.poly_modulus_degree; }
  /// @return log2(N).
  int log_n() const { return log_n_; }
  /// @return the security level the parameters were checked against.
  SecurityLevel security() const { return security_; }
  /// @return the plain modulus t (0 for a scheme without one).
  u64 plain_modulus() const { return params_.plain_modulus; }
  /// @return t with its Barrett constants (unset for a scheme without a plain modulus).
  const Modulus& plain_mod() const { return plain_; }
  /// @return the number of Q primes (L).
  std::size_t num_q() const { return num_q_; }
  /// @return the number of special primes (k; P is their product).
  std::size_t num_p() const { return num_p_; }
  /// @return the primes per key-switching digit (EncryptionParameters::alpha, resolved).
  std::size_t alpha() const { return alpha_; }
  /// @return the key-switching digits of a key (over all of Q): ceil(num_q / alpha).
  std::size_t dnum() const { return (num_q_ + alpha_ - 1) / alpha_; }
  /// @return the highest level index: a ciphertext at level l has l+1 limbs (q_0..q_l).
  std::size_t max_level() const { return num_q_ - 1; }
  /// @return the total bits of Q (all levels).
  int total_q_bits() const { return base_q_.back().total_bits(); }
  /// @return the total bits of Q*P.
  int total_qp_bits() const { return base_qp_full_.total_bits(); }
  /// @return an identifier of the parameters (FNV-1a over N, moduli, t, scheme); objects from
  ///         contexts with different hashes never mix.
  u64 parameter_hash() const { return hash_; }
  /// @return the word size of every residue in memory (32 or 64; EncryptionParameters::word_bits
  ///         resolved).
  int word_bits() const { return word_bits_; }

  /// @return the NTT tables of Q, P and the scheme's auxiliary primes, in that order.
  const NttTables& ntt() const { return ntt_; }
  /// @param level a level (at most max_level()).
  /// @return the RNS base Q_level = q_0..q_level.
  /// @throws std::out_of_range if level > max_level().
  const RnsBase& base_q(std::size_t level) const { return base_q_.at(level); }
  /// @return the RNS base of the special primes P.
  const RnsBase& base_p() const { return base_p_; }
  /// @return the RNS base Q ∪ P (all levels).
  const RnsBase& base_qp_full() const { return base_qp_full_; }
  /// @return P mod q_i for every Q prime ([num_q]; empty without special primes): the
  ///         digit-indicator factor of key-switching keys and the lift of c to Q ∪ P.
  const std::vector<u64>& special_product_mod_q() const { return p_mod_q_; }
  /// Key-switching tables at a level (built on first use, thread-safe).
  /// @param level the level (at most max_level()).
  /// @return the tables, alive as long as the context.
  /// @throws InvalidArgument naming `special_primes` (none) or `level` (above max_level()).
  const KeySwitchLevel& key_switch(std::size_t level) const;

  /// Tables every scheme shares at a level (built on first use, thread-safe).
  /// @param level the level (at most max_level()).
  /// @return the tables, alive as long as the context.
  /// @throws InvalidArgument naming `level` if level > max_level().
  const LevelTables& level_tables(std::size_t level) const;

  /// The scheme-owned tables at `level` (a SchemeLevelTables subclass: BFV's BfvTables, BGV's
  /// BgvTables, CKKS's CkksTables), built by `build(*this, level)` on the first request for that
  /// level and cached for the context's lifetime (thread-safe: std::call_once per level;
  /// concurrent first requests build once). One slot per level: a context has one scheme, so one
  /// builder; the scheme's accessor checks the scheme and casts the result.
  /// @param level the level (at most max_level()).
  /// @param build the scheme's builder.
  /// @return the tables, alive as long as the context.
  /// @throws InvalidArgument naming `level` if level > max_level(), or naming `build` if it is
  ///         null or differs from the builder that filled the slot; rethrows what `build` throws
  ///         (the slot stays empty).
  const SchemeLevelTables& scheme_tables(std::size_t level, SchemeTablesBuilder build) const;

  /// The scheme's context-wide tables (SchemeDefinition::build_context, built with the context).
  /// The scheme's accessor casts them to its own type (scheme_context_tables_of).
  /// @return the tables, or null when the scheme has none.
  const SchemeContextTables* scheme_context_tables() const { return scheme_ctx_.get(); }

  /// @return whether t is a prime = 1 mod 2N (slots: SEAL's BatchEncoder).
  bool batching_enabled() const { return batching_; }
  /// @return the NTT tables of t (batching).
  /// @throws InvalidArgument naming `plain_modulus` when batching is not enabled.
  const NttTables& plain_ntt() const;
  /// @return SEAL's slot -> bit-reversed NTT index map for batching ([N]).
  const DeviceTable<u32>& slot_index_map() const { return slot_map_; }

  /// Galois element for a row rotation by `step` (SEAL: 3^step mod 2N; negative steps rotate
  /// right).
  /// @param step the rotation, |step| < N/2.
  /// @return the Galois element.
  /// @throws InvalidArgument naming `steps` if |step| >= N/2.
  u32 galois_elt_from_step(int step) const;
  /// @return the column-swap / conjugation element 2N - 1.
  u32 galois_elt_column() const { return static_cast<u32>(2 * n() - 1); }

  Context(const Context&) = delete;
  Context& operator=(const Context&) = delete;

 private:
  Context() = default;
  void build(const EncryptionParameters& params, SecurityLevel security);
  void check_plain_modulus(const EncryptionParameters& params, const std::vector<u64>& q_primes);
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
  std::vector<u64> p_mod_q_;
  RnsBase base_p_, base_qp_full_;
  mutable std::vector<std::unique_ptr<KeySwitchLevel>> ks_;
  mutable std::vector<std::unique_ptr<std::once_flag>> ks_once_;
  mutable std::vector<std::unique_ptr<LevelTables>> lt_;
  mutable std::vector<std::unique_ptr<std::once_flag>> lt_once_;
  // scheme_tables: [num_q] slots, the builder that filled each, and their once flags.
  mutable std::vector<std::unique_ptr<SchemeLevelTables>> scheme_;
  mutable std::vector<SchemeTablesBuilder> scheme_builder_;
  mutable std::vector<std::unique_ptr<std::once_flag>> scheme_once_;
  const SchemeDefinition* scheme_def_ = nullptr;
  std::unique_ptr<const SchemeContextTables> scheme_ctx_;
  bool batching_ = false;
  std::unique_ptr<NttTables> plain_ntt_;
  DeviceTable<u32> slot_map_;
};

/// A shared, immutable context: what every object holds.
using ContextPtr = std::shared_ptr<const Context>;

/// Context::scheme_tables as the scheme's own type T (which `build` makes), after checking that
/// `ctx` is a context of `scheme`.
/// @param ctx the context.
/// @param scheme the scheme whose tables T are.
/// @param name the scheme's name for the message.
/// @param level the level.
/// @param build the scheme's builder (it makes a T).
/// @return the tables, alive as long as `ctx`.
/// @throws InvalidArgument naming `context` when it is another scheme's, or as
///         Context::scheme_tables.
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

/// Context::scheme_context_tables as the scheme's own type T (which its
/// SchemeDefinition::build_context made), after checking that `ctx` is a context of `scheme`.
/// @param ctx the context.
/// @param scheme the scheme whose tables T are.
/// @param name the scheme's name for the message.
/// @return the tables, alive as long as `ctx`.
/// @throws InvalidArgument naming `context` when it is another scheme's.
template <class T>
const T& scheme_context_tables_of(const Context& ctx, SchemeType scheme, const char* name) {
  if (ctx.scheme() != scheme || ctx.scheme_context_tables() == nullptr) {
    throw InvalidArgument(std::string("context: ") + name + " tables requested from a non-" +
                          name + " context");
  }
  return static_cast<const T&>(*ctx.scheme_context_tables());
}

}  // namespace veil
