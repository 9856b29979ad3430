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
  /// An empty object (empty() is true): no context, no words.
  DataObject() = default;
  /// `words` words of the context's word size on `dev` (contents unspecified).
  /// @param ctx the context (not null).
  /// @param dev the device the words live on.
  /// @param words the number of words.
  /// @throws OutOfMemory when the allocation fails.
  DataObject(ContextPtr ctx, const Device& dev, std::size_t words)
      : ctx_(std::move(ctx)), data_(dev, words, ctx_->word_bits()) {}
  /// With an explicit word size (BFV/BGV coefficient plaintexts mod t keep 64-bit words).
  /// @param ctx the context (not null).
  /// @param dev the device the words live on.
  /// @param words the number of words.
  /// @param word_bits 32 or 64.
  /// @throws OutOfMemory when the allocation fails.
  DataObject(ContextPtr ctx, const Device& dev, std::size_t words, int word_bits)
      : ctx_(std::move(ctx)), data_(dev, words, word_bits) {}
  /// A deep copy: the words are copied on the same device; the seed, its match and the key set
  /// are kept.
  /// @param o the object copied.
  /// @throws OutOfMemory when the allocation fails.
  DataObject(const DataObject& o)
      : ctx_(o.ctx_),
        data_(o.data_.clone()),
        seed_(o.seed_),
        seed_matches_(o.seed_matches_),
        key_id_(o.key_id_) {}
  /// Deep-copy assignment (as the copy constructor).
  /// @param o the object copied.
  /// @return *this.
  /// @throws OutOfMemory when the allocation fails.
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
  /// Moves the words (no copy); the source is left empty.
  DataObject(DataObject&&) noexcept = default;
  /// Move assignment (no copy).
  DataObject& operator=(DataObject&&) noexcept = default;

  /// @return the context (null when empty()).
  const ContextPtr& context() const { return ctx_; }
  /// @return the device the words live on.
  const Device& device() const { return data_.device(); }
  /// The words as W (u32 or u64), writable. Every non-const access to the words forgets that
  /// they matched the seed (seed_known_to_match).
  /// @return a pointer to the first word.
  /// @throws InvalidArgument if W is not the stored word size.
  template <class W>
  W* data() {
    seed_matches_ = false;
    return data_.data<W>();
  }
  /// The words as const W (u32 or u64).
  /// @return a pointer to the first word.
  /// @throws InvalidArgument if W is not the stored word size.
  template <class W>
  const W* data() const {
    return data_.data<W>();
  }
  /// @return the words as a run-time-sized pointer (kernels dispatch on its size).
  WordPtr data() {
    seed_matches_ = false;
    return data_.data();
  }
  /// @return the words as a run-time-sized const pointer.
  ConstWordPtr data() const { return data_.data(); }
  /// @return the stored word size: 32 or 64.
  int word_bits() const { return data_.word_bits(); }
  /// @return the number of stored words.
  std::size_t word_count() const { return data_.size(); }
  /// @return the word buffer, writable (forgets that the words matched the seed).
  WordBuffer& buffer() {
    seed_matches_ = false;
    return data_;
  }
  /// @return the word buffer.
  const WordBuffer& buffer() const { return data_; }
  /// @return whether the object is uninitialized (no context).
  bool empty() const { return !ctx_; }

  /// The seed its uniform part was sampled from (symmetric-key ciphertexts, public keys and
  /// key-switching keys fresh from their generator), or nothing. Seeded serialization writes it
  /// instead of that part and checks first that the part still matches (io/serialize.h).
  /// @return the seed, or nothing.
  const std::optional<UniformSeed>& uniform_seed() const { return seed_; }
  /// Sets (or clears) the seed of the uniform part; forgets that the words matched it.
  /// @param s the seed, or nothing.
  void set_uniform_seed(const std::optional<UniformSeed>& s) {
    seed_ = s;
    seed_matches_ = false;
  }
  /// True when the uniform part is known to be the seed's expansion: its sampler (KeyGenerator)
  /// or loader wrote it from the seed and said so (note_seed_matches), and the words have not
  /// been reachable for writing since (non-const data()/buffer() and set_uniform_seed forget
  /// it). Seeded serialization then skips regenerating the part to compare it.
  /// @return whether the uniform part is known to match uniform_seed().
  bool seed_known_to_match() const { return seed_.has_value() && seed_matches_; }
  /// Records that the uniform part was just written from uniform_seed() (call after the
  /// writes).
  void note_seed_matches() { seed_matches_ = seed_.has_value(); }

  /// Key-set identity: which secret key this object belongs to (rlwe/checks.h key_set_id; a
  /// one-way digest of the secret key). 0 = unknown (plaintexts, objects read from SEAL's
  /// format), which every key set accepts. Operations check that their operands agree.
  /// @return the identity, or 0.
  u64 key_id() const { return key_id_; }
  /// Sets the key-set identity (key generation, encryption, loading).
  /// @param id the identity (key_set_id), or 0 for unknown.
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
  /// An empty plaintext.
  Plaintext() = default;
  /// NTT-form plaintexts hold residues in the context's words; coefficient-form ones (mod t)
  /// hold 64-bit words whatever the context's word size (t may exceed 2^31).
  /// @param ctx the context (not null); @param dev the device.
  /// @param words N for a coefficient plaintext, (level + 1) N in NTT form.
  /// @param level the level (NTT form; the top level for coefficient plaintexts).
  /// @param ntt whether the words are NTT-form residues.
  /// @throws OutOfMemory when the allocation fails.
  Plaintext(ContextPtr ctx, const Device& dev, std::size_t words, std::size_t level, bool ntt)
      : DataObject(ctx, dev, words, ntt ? ctx->word_bits() : 64),
        level_(level),
        is_ntt_form_(ntt) {}
  /// @return the level the plaintext is prepared for.
  std::size_t level() const { return level_; }
  /// @return whether the words are NTT-form residues over Q_level.
  bool is_ntt_form() const { return is_ntt_form_; }
  /// @return CKKS: the scale Delta the values were encoded at (1 for BFV/BGV).
  double scale() const { return scale_; }
  /// Sets the CKKS scale. @param s the scale.
  void set_scale(double s) { scale_ = s; }
  /// A copy on `dev`. @param dev the target device. @return the copy.
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
  /// An empty ciphertext.
  Ciphertext() = default;
  /// `size` polynomials over Q_level on `dev` (contents unspecified), scale 1, correction 1.
  /// @param ctx the context (not null); @param dev the device.
  /// @param size the number of polynomials (2 fresh, 3 after a product).
  /// @param level the level (0..max level; not checked).
  /// @param ntt whether the words are in NTT form.
  /// @throws OutOfMemory when the allocation fails.
  Ciphertext(ContextPtr ctx, const Device& dev, std::size_t size, std::size_t level, bool ntt)
      : DataObject(ctx, dev, size * (level + 1) * ctx->n()),
        size_(size),
        level_(level),
        is_ntt_form_(ntt) {}

  /// @return the number of polynomials.
  std::size_t size() const { return size_; }
  /// @return the level l (the modulus is Q_l = q_0 ... q_l).
  std::size_t level() const { return level_; }
  /// @return limbs per polynomial: level() + 1.
  std::size_t limbs() const { return level_ + 1; }
  /// @return whether the words are in NTT form.
  bool is_ntt_form() const { return is_ntt_form_; }
  /// Marks the words as being in NTT form or not; for the code that transforms them.
  /// @param ntt whether the words are now in NTT form.
  void set_ntt_form(bool ntt) { is_ntt_form_ = ntt; }
  /// @return CKKS: the scale Delta of the encrypted values (1 for BFV/BGV).
  double scale() const { return scale_; }
  /// Sets the CKKS scale. @param s the scale.
  void set_scale(double s) { scale_ = s; }
  /// BGV: the factor f with which the phase decrypts to f m mod t (SEAL's correction factor,
  /// changed by modulus switching; 1 for BFV/CKKS).
  /// @return the factor.
  u64 correction_factor() const { return correction_factor_; }
  /// Sets the BGV correction factor. @param f the factor, in [1, t).
  void set_correction_factor(u64 f) { correction_factor_ = f; }
  /// @return words per polynomial: (level + 1) N.
  std::size_t poly_words() const { return limbs() * ctx_->n(); }
  /// Polynomial i. @param i 0..size()-1 (not checked).
  /// @return a pointer to its [level+1][N] words.
  WordPtr poly(std::size_t i) { return data() + i * poly_words(); }
  /// Polynomial i, read only. @param i 0..size()-1 (not checked).
  /// @return a pointer to its [level+1][N] words.
  ConstWordPtr poly(std::size_t i) const { return data() + i * poly_words(); }
  /// Polynomial i as W words. @param i 0..size()-1 (not checked).
  /// @return a pointer to its [level+1][N] words.
  /// @throws InvalidArgument if W is not the stored word size.
  template <class W>
  W* poly(std::size_t i) {
    return data<W>() + i * poly_words();
  }
  /// Polynomial i as const W words. @param i 0..size()-1 (not checked).
  /// @return a pointer to its [level+1][N] words.
  /// @throws InvalidArgument if W is not the stored word size.
  template <class W>
  const W* poly(std::size_t i) const {
    return data<W>() + i * poly_words();
  }

  /// A copy on `dev`. @param dev the target device. @return the copy.
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
  /// An empty key.
  SecretKey() = default;
  /// Zeroized-on-free storage for a key (KeyGenerator fills it).
  /// @param ctx the context (not null); @param dev the device.
  /// @param words (L + k) N.
  /// @throws OutOfMemory when the allocation fails.
  SecretKey(ContextPtr ctx, const Device& dev, std::size_t words)
      : DataObject(std::move(ctx), dev, words) {
    data_.set_secure();
  }
  /// A copy on `dev` (also zeroized when freed). @param dev the target device.
  /// @return the copy.
  SecretKey to(const Device& dev) const {
    SecretKey s(*this);
    s.move_data_to(dev);
    return s;
  }
};

/// Public key (b, a) = (-a s + e, a) over Q ∪ P, NTT form ([2][L+k][N]).
class PublicKey : public DataObject {
 public:
  /// DataObject's constructors (KeyGenerator::create_public_key fills the words).
  using DataObject::DataObject;
  /// A copy on `dev`. @param dev the target device. @return the copy.
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
  /// An empty key.
  KSwitchKey() = default;
  /// Storage for a key (KeyGenerator::create_kswitch_key fills it): dnum x (2 or 1) polynomials
  /// of level + 1 + k limbs.
  /// @param ctx the context (not null); @param dev the device.
  /// @param dnum the digits: exactly ceil((level + 1) / alpha).
  /// @param compact store the b_j only (the a_j come from uniform_seed()).
  /// @param level the highest ciphertext level served (default: the top, ctx->max_level()).
  /// @throws InvalidArgument if `level` is above the top level or `dnum` is not the number of
  ///         digits that meet Q_level; OutOfMemory when the allocation fails.
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
  /// @return the number of digits stored.
  std::size_t dnum() const { return dnum_; }
  /// @return the highest ciphertext level the key serves.
  std::size_t level() const { return q_limbs_ - 1; }
  /// @return limbs per stored polynomial: level() + 1 of Q, then P.
  std::size_t limbs() const { return q_limbs_ + ctx_->num_p(); }
  /// @return the samplers' address of each stored limb: its index in Q ∪ P.
  LimbAddress limb_addresses() const { return {q_limbs_, ctx_->num_q() - q_limbs_}; }
  /// @return whether the a_j are regenerated from uniform_seed() instead of stored.
  bool compact() const { return compact_; }
  /// @return words per stored polynomial: limbs() N.
  std::size_t poly_words() const { return limbs() * ctx_->n(); }
  /// Digit j's b_j. @param j 0..dnum()-1 (not checked).
  /// @return a pointer to its [limbs()][N] words, NTT form.
  ConstWordPtr b(std::size_t j) const { return data() + b_offset(j); }
  /// Digit j's a_j. @param j 0..dnum()-1 (not checked).
  /// @return a pointer to its [limbs()][N] words, NTT form.
  /// @throws InvalidArgument on a compact key (its a_j are not stored: expand_compact_key).
  ConstWordPtr a(std::size_t j) const { return data() + a_offset(j); }
  /// Digit j's b_j as W words. @param j 0..dnum()-1 (not checked).
  /// @return a pointer to its [limbs()][N] words, NTT form.
  /// @throws InvalidArgument if W is not the stored word size.
  template <class W>
  const W* b(std::size_t j) const {
    return data<W>() + b_offset(j);
  }
  /// Digit j's a_j as W words. @param j 0..dnum()-1 (not checked).
  /// @return a pointer to its [limbs()][N] words, NTT form.
  /// @throws InvalidArgument on a compact key, or if W is not the stored word size.
  template <class W>
  const W* a(std::size_t j) const {
    return data<W>() + a_offset(j);
  }
  /// A copy on `dev` (same seed and key set). @param dev the target device. @return the copy.
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
  /// Empty keys.
  RelinKeys() = default;
  /// Wraps a key-switching key from s^2 to s. @param k the key (moved in).
  explicit RelinKeys(KSwitchKey k) : key_(std::move(k)) {}
  /// @return the key-switching key.
  const KSwitchKey& key() const { return key_; }
  /// @return the key set (DataObject::key_id; 0 when unknown).
  u64 key_id() const { return key_.key_id(); }
  /// @return the context (null when empty).
  const ContextPtr& context() const { return key_.context(); }
  /// @return the device the key lives on.
  const Device& device() const { return key_.device(); }
  /// @return whether no key is held.
  bool empty() const { return key_.empty(); }
  /// A copy on `dev`. @param dev the target device. @return the copy.
  RelinKeys to(const Device& dev) const { return RelinKeys(key_.to(dev)); }

 private:
  KSwitchKey key_;
};

/// A key switching ciphertexts from one secret key to another (KeyGenerator::create_switching_key):
/// `from_key_id` names the source key set, key().key_id() the target's; the key serves levels
/// <= max_level only (its other limbs are zero: sparse-secret encapsulation).
class SwitchingKey {
 public:
  /// An empty key.
  SwitchingKey() = default;
  /// @param k the key-switching key (moved in), of level max_level.
  /// @param from_key_id the source secret key's key set.
  /// @param max_level the highest level served.
  SwitchingKey(KSwitchKey k, u64 from_key_id, std::size_t max_level)
      : key_(std::move(k)), from_(from_key_id), max_level_(max_level) {}
  /// @return the key-switching key.
  const KSwitchKey& key() const { return key_; }
  /// @return the source key set (ciphertexts switched must belong to it).
  u64 from_key_id() const { return from_; }
  /// @return the target key set (the switched ciphertexts belong to it).
  u64 key_id() const { return key_.key_id(); }
  /// @return the highest level served.
  std::size_t max_level() const { return max_level_; }
  /// @return the context (null when empty).
  const ContextPtr& context() const { return key_.context(); }
  /// @return the device the key lives on.
  const Device& device() const { return key_.device(); }
  /// @return whether no key is held.
  bool empty() const { return key_.empty(); }
  /// A copy on `dev`. @param dev the target device. @return the copy.
  SwitchingKey to(const Device& dev) const { return SwitchingKey(key_.to(dev), from_, max_level_); }

 private:
  KSwitchKey key_;
  u64 from_ = 0;
  std::size_t max_level_ = 0;
};

/// Galois keys: one key-switching key per Galois element g (switching sigma_g(s) to s).
class GaloisKeys {
 public:
  /// An empty set with no context.
  GaloisKeys() = default;
  /// An empty set of `ctx` on `dev`. @param ctx the context; @param dev the device.
  GaloisKeys(ContextPtr ctx, const Device& dev) : ctx_(std::move(ctx)), dev_(dev) {}
  /// Whether the set holds a key for `galois_elt`. @param galois_elt an odd element < 2N.
  /// @return true when it does.
  bool has_key(u32 galois_elt) const { return keys_.count(galois_elt) != 0; }
  /// The key of `galois_elt`. @param galois_elt an odd element < 2N.
  /// @return the key.
  /// @throws InvalidArgument naming `galois_keys` when the set has no key for it.
  const KSwitchKey& key(u32 galois_elt) const;
  /// Adds a key (replacing one of the same element). No check of its context or device.
  /// @param galois_elt its Galois element; @param k the key (moved in).
  /// @throws InvalidArgument naming `galois_keys` if it belongs to another key set than those
  ///         present.
  void insert(u32 galois_elt, KSwitchKey k);
  /// @return the key set of the keys (0 when empty or unknown).
  u64 key_id() const { return key_id_; }
  /// @return the keys by Galois element, ascending.
  const std::map<u32, KSwitchKey>& keys() const { return keys_; }
  /// @return the context (null for a default-constructed set).
  const ContextPtr& context() const { return ctx_; }
  /// @return the device the keys live on.
  const Device& device() const { return dev_; }
  /// A copy on `dev`. @param dev the target device. @return the copy.
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
