// Plaintexts, ciphertexts and keys. Each lives on one device, keeps a shared reference to its
// Context (so destruction order never matters) and moves with .to(device).
#pragma once
#include <algorithm>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>

#include "veil/backend/buffer.h"
#include "veil/backend/word_buffer.h"
#include "veil/ring/prng.h"
#include "veil/ring/sampler.h"
#include "veil/rlwe/context.h"

namespace veil {

/// Data shared by every object: context, device and a word buffer in the context's word size
/// (Context::word_bits: u32 or u64 words).
class DataObject {
 public:
  DataObject() = default;
  DataObject(ContextPtr ctx, const Device& dev, std::size_t words)
      : ctx_(std::move(ctx)), data_(dev, words, ctx_->word_bits()) {}
  /// With an explicit word size (BFV/BGV coefficient plaintexts mod t keep 64-bit words).
  DataObject(ContextPtr ctx, const Device& dev, std::size_t words, int word_bits)
      : ctx_(std::move(ctx)), data_(dev, words, word_bits) {}
  DataObject(const DataObject& o)
      : ctx_(o.ctx_),
        data_(o.data_.clone()),
        seed_(o.seed_),
        seed_matches_(o.seed_matches_),
        key_id_(o.key_id_) {}
  DataObject& operator=(const DataObject& o) {
    if (this != &o) {
      ctx_ = o.ctx_;
      data_ = o.data_.clone();
      seed_ = o.seed_;
      seed_matches_ = o.seed_matches_;
      key_id_ = o.key_id_;
    }
    return *this;
  }
  DataObject(DataObject&&) noexcept = default;
  DataObject& operator=(DataObject&&) noexcept = default;

  const ContextPtr& context() const { return ctx_; }
  const Device& device() const { return data_.device(); }
  /// The words as W (u32 or u64); throws InvalidArgument if W is not the stored word size.
  // Every non-const access to the words forgets that they matched the seed (below).
  template <class W>
  W* data() {
    seed_matches_ = false;
    return data_.data<W>();
  }
  template <class W>
  const W* data() const {
    return data_.data<W>();
  }
  /// The words as a run-time-sized pointer (kernels dispatch on its size).
  WordPtr data() {
    seed_matches_ = false;
    return data_.data();
  }
  ConstWordPtr data() const { return data_.data(); }
  int word_bits() const { return data_.word_bits(); }
  std::size_t word_count() const { return data_.size(); }
  WordBuffer& buffer() {
    seed_matches_ = false;
    return data_;
  }
  const WordBuffer& buffer() const { return data_; }
  bool empty() const { return !ctx_; }

  /// The seed its uniform part was sampled from (symmetric-key ciphertexts, public keys and
  /// key-switching keys fresh from their generator), or nothing. Seeded serialization writes it
  /// instead of that part and checks first that the part still matches (io/serialize.h).
  const std::optional<UniformSeed>& uniform_seed() const { return seed_; }
  void set_uniform_seed(const std::optional<UniformSeed>& s) {
    seed_ = s;
    seed_matches_ = false;
  }
  /// True when the uniform part is known to be the seed's expansion: its sampler (KeyGenerator)
  /// or loader wrote it from the seed and said so (note_seed_matches), and the words have not
  /// been reachable for writing since (non-const data()/buffer() and set_uniform_seed forget
  /// it). Seeded serialization then skips regenerating the part to compare it.
  bool seed_known_to_match() const { return seed_.has_value() && seed_matches_; }
  /// Records that the uniform part was just written from uniform_seed() (call after the
  /// writes).
  void note_seed_matches() { seed_matches_ = seed_.has_value(); }

  /// Key-set identity: which secret key this object belongs to (rlwe/checks.h key_set_id; a
  /// one-way digest of the secret key). 0 = unknown (plaintexts, objects read from SEAL's
  /// format), which every key set accepts. Operations check that their operands agree.
  u64 key_id() const { return key_id_; }
  void set_key_id(u64 id) { key_id_ = id; }

 protected:
  void move_data_to(const Device& dev) { data_ = data_.to(dev); }
  ContextPtr ctx_;
  WordBuffer data_;
  std::optional<UniformSeed> seed_;
  bool seed_matches_ = false;
  u64 key_id_ = 0;
};

/// A plaintext. BFV/BGV: N coefficients mod t ([N], coefficient form) unless is_ntt_form, in
/// which case [level+1][N] residues in NTT form (prepared for multiply_plain). CKKS: [level+1][N]
/// in NTT form with a scale.
class Plaintext : public DataObject {
 public:
  Plaintext() = default;
  /// NTT-form plaintexts hold residues in the context's words; coefficient-form ones (mod t)
  /// hold 64-bit words whatever the context's word size (t may exceed 2^31).
  Plaintext(ContextPtr ctx, const Device& dev, std::size_t words, std::size_t level, bool ntt)
      : DataObject(ctx, dev, words, ntt ? ctx->word_bits() : 64),
        level_(level),
        is_ntt_form_(ntt) {}
  std::size_t level() const { return level_; }
  bool is_ntt_form() const { return is_ntt_form_; }
  double scale() const { return scale_; }
  void set_scale(double s) { scale_ = s; }
  Plaintext to(const Device& dev) const {
    Plaintext p(*this);
    p.move_data_to(dev);
    return p;
  }

 private:
  std::size_t level_ = 0;
  bool is_ntt_form_ = false;
  double scale_ = 1.0;
};

/// A ciphertext: `size` polynomials ([size][level+1][N]) over Q_level.
class Ciphertext : public DataObject {
 public:
  Ciphertext() = default;
  Ciphertext(ContextPtr ctx, const Device& dev, std::size_t size, std::size_t level, bool ntt)
      : DataObject(ctx, dev, size * (level + 1) * ctx->n()),
        size_(size),
        level_(level),
        is_ntt_form_(ntt) {}

  std::size_t size() const { return size_; }
  std::size_t level() const { return level_; }
  std::size_t limbs() const { return level_ + 1; }
  bool is_ntt_form() const { return is_ntt_form_; }
  /// Marks the words as being in NTT form or not; for the code that transforms them.
  void set_ntt_form(bool ntt) { is_ntt_form_ = ntt; }
  double scale() const { return scale_; }
  void set_scale(double s) { scale_ = s; }
  u64 correction_factor() const { return correction_factor_; }
  void set_correction_factor(u64 f) { correction_factor_ = f; }
  std::size_t poly_words() const { return limbs() * ctx_->n(); }
  /// Polynomial i ([level+1][N] words).
  WordPtr poly(std::size_t i) { return data() + i * poly_words(); }
  ConstWordPtr poly(std::size_t i) const { return data() + i * poly_words(); }
  template <class W>
  W* poly(std::size_t i) {
    return data<W>() + i * poly_words();
  }
  template <class W>
  const W* poly(std::size_t i) const {
    return data<W>() + i * poly_words();
  }

  Ciphertext to(const Device& dev) const {
    Ciphertext c(*this);
    c.move_data_to(dev);
    return c;
  }

 private:
  std::size_t size_ = 0;
  std::size_t level_ = 0;
  bool is_ntt_form_ = false;
  double scale_ = 1.0;
  u64 correction_factor_ = 1;
};

/// Secret key s: ternary, stored in NTT form over Q ∪ P ([L+k][N]). Its memory is zeroized
/// when freed, on every device (Buffer::set_secure).
class SecretKey : public DataObject {
 public:
  SecretKey() = default;
  SecretKey(ContextPtr ctx, const Device& dev, std::size_t words)
      : DataObject(std::move(ctx), dev, words) {
    data_.set_secure();
  }
  SecretKey to(const Device& dev) const {
    SecretKey s(*this);
    s.move_data_to(dev);
    return s;
  }
};

/// Public key (b, a) = (-a s + e, a) over Q ∪ P, NTT form ([2][L+k][N]).
class PublicKey : public DataObject {
 public:
  using DataObject::DataObject;
  PublicKey to(const Device& dev) const {
    PublicKey p(*this);
    p.move_data_to(dev);
    return p;
  }
};

/// A key-switching key from s' to s: for each digit j, (b_j, a_j) over Q ∪ P in NTT form with
/// b_j = -a_j s + e_j + P * [D_j-indicator] * s' ([dnum][2][L+k][N]).
///
/// A key of level l < L - 1 (Lattigo's keys at a level; Cerium's per-level keys) serves the
/// ciphertexts at levels <= l only, and stores only what they read: the digits that meet Q_l
/// (ceil((l + 1) / alpha)) over the limbs q_0..q_l and P ([dnum_l][2][l+1+k][N]). It equals
/// the projection of the key of the same seed at the top level (the samplers address each limb
/// by its index in Q ∪ P: limb_addresses()), so a key can be lowered after it is made
/// (rlwe/keyswitch.h: lower_key_level) and its seed still regenerates its a_j.
///
/// A compact key stores the b_j only ([dnum][l+1+k][N], half the words) and its uniform_seed():
/// its a_j are regenerated wherever they are read, by the compact sampler
/// (ring/compact_uniform.h: polynomial j of the seed). The GPU's inner-product kernel
/// regenerates them inside the kernel; every other reader expands them first
/// (rlwe/keyswitch.h: expand_compact_key).
class KSwitchKey : public DataObject {
 public:
  KSwitchKey() = default;
  /// @param level the highest ciphertext level served (default: the top, ctx->max_level()).
  KSwitchKey(ContextPtr ctx, const Device& dev, std::size_t dnum, bool compact = false,
             std::size_t level = static_cast<std::size_t>(-1))
      : DataObject(ctx, dev,
                   dnum * (compact ? 1 : 2) * (std::min(level, ctx->num_q() - 1) + 1 + ctx->num_p()) *
                       ctx->n()),
        dnum_(dnum),
        q_limbs_(std::min(level, ctx->num_q() - 1) + 1),
        compact_(compact) {
    VEIL_REQUIRE(level == static_cast<std::size_t>(-1) || level < ctx->num_q(),
                 "KSwitchKey: a level above the top");
    VEIL_REQUIRE(dnum == (q_limbs_ + ctx->alpha() - 1) / ctx->alpha(),
                 "KSwitchKey: the digits of a key must be those its level meets");
  }
  std::size_t dnum() const { return dnum_; }
  /// The highest ciphertext level the key serves.
  std::size_t level() const { return q_limbs_ - 1; }
  /// Limbs per stored polynomial: level() + 1 of Q, then P.
  std::size_t limbs() const { return q_limbs_ + ctx_->num_p(); }
  /// The samplers' address of each stored limb: its index in Q ∪ P.
  LimbAddress limb_addresses() const { return {q_limbs_, ctx_->num_q() - q_limbs_}; }
  /// Whether the a_j are regenerated from uniform_seed() instead of stored.
  bool compact() const { return compact_; }
  std::size_t poly_words() const { return limbs() * ctx_->n(); }
  ConstWordPtr b(std::size_t j) const { return data() + b_offset(j); }
  /// Throws InvalidArgument on a compact key (its a_j are not stored).
  ConstWordPtr a(std::size_t j) const { return data() + a_offset(j); }
  template <class W>
  const W* b(std::size_t j) const {
    return data<W>() + b_offset(j);
  }
  template <class W>
  const W* a(std::size_t j) const {
    return data<W>() + a_offset(j);
  }
  KSwitchKey to(const Device& dev) const {
    KSwitchKey k(*this);
    k.move_data_to(dev);
    return k;
  }

 private:
  std::size_t b_offset(std::size_t j) const { return (compact_ ? j : 2 * j) * poly_words(); }
  std::size_t a_offset(std::size_t j) const {
    VEIL_REQUIRE(!compact_,
                 "KSwitchKey::a: a compact key does not store its a_j (expand_compact_key)");
    return (2 * j + 1) * poly_words();
  }
  std::size_t dnum_ = 0;
  std::size_t q_limbs_ = 0;
  bool compact_ = false;
};

/// Relinearization key: switches s^2 to s.
class RelinKeys {
 public:
  RelinKeys() = default;
  explicit RelinKeys(KSwitchKey k) : key_(std::move(k)) {}
  const KSwitchKey& key() const { return key_; }
  u64 key_id() const { return key_.key_id(); }
  const ContextPtr& context() const { return key_.context(); }
  const Device& device() const { return key_.device(); }
  bool empty() const { return key_.empty(); }
  RelinKeys to(const Device& dev) const { return RelinKeys(key_.to(dev)); }

 private:
  KSwitchKey key_;
};

/// A key switching ciphertexts from one secret key to another (KeyGenerator::create_switching_key):
/// `from_key_id` names the source key set, key().key_id() the target's; the key serves levels
/// <= max_level only (its other limbs are zero: sparse-secret encapsulation).
class SwitchingKey {
 public:
  SwitchingKey() = default;
  SwitchingKey(KSwitchKey k, u64 from_key_id, std::size_t max_level)
      : key_(std::move(k)), from_(from_key_id), max_level_(max_level) {}
  const KSwitchKey& key() const { return key_; }
  u64 from_key_id() const { return from_; }
  u64 key_id() const { return key_.key_id(); }
  std::size_t max_level() const { return max_level_; }
  const ContextPtr& context() const { return key_.context(); }
  const Device& device() const { return key_.device(); }
  bool empty() const { return key_.empty(); }
  SwitchingKey to(const Device& dev) const { return SwitchingKey(key_.to(dev), from_, max_level_); }

 private:
  KSwitchKey key_;
  u64 from_ = 0;
  std::size_t max_level_ = 0;
};

/// Galois keys: one key-switching key per Galois element g (switching sigma_g(s) to s).
class GaloisKeys {
 public:
  GaloisKeys() = default;
  GaloisKeys(ContextPtr ctx, const Device& dev) : ctx_(std::move(ctx)), dev_(dev) {}
  bool has_key(u32 galois_elt) const { return keys_.count(galois_elt) != 0; }
  const KSwitchKey& key(u32 galois_elt) const;
  /// Adds a key. Throws InvalidArgument if it belongs to another key set than those present.
  void insert(u32 galois_elt, KSwitchKey k);
  /// The key set of the keys (0 when empty or unknown).
  u64 key_id() const { return key_id_; }
  const std::map<u32, KSwitchKey>& keys() const { return keys_; }
  const ContextPtr& context() const { return ctx_; }
  const Device& device() const { return dev_; }
  GaloisKeys to(const Device& dev) const {
    GaloisKeys g(ctx_, dev);
    for (const auto& [e, k] : keys_) g.insert(e, k.to(dev));
    return g;
  }

 private:
  ContextPtr ctx_;
  Device dev_;
  std::map<u32, KSwitchKey> keys_;
  u64 key_id_ = 0;
};

}  // namespace veil
