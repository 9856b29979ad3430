#include "veil/rlwe/keygen.h"

#include <algorithm>
#include <set>
#include <string>

#include "veil/backend/launch.h"
#include "veil/core/error.h"
#include "veil/ring/poly_ops.h"
#include "veil/ring/sampler.h"
#include "veil/rlwe/checks.h"
#include "veil/rlwe/keyswitch.h"

namespace veil {

namespace {
Prng make_prng(std::optional<std::uint64_t> seed) {
  return seed ? Prng::from_u64(*seed) : Prng();
}

// b += P * s' on limbs [first, last) of b (the CRT indicator of digit D_j is 1 there, 0
// elsewhere): b[i] = target[i] * (P mod q_limb) + b[i].
template <class W>
void add_digit_indicator(const Device& dev, W* b, const W* target, const u64* p_mod_q,
                         const Modulus* mods, std::size_t first, std::size_t last, std::size_t n) {
  for_each(dev, (last - first) * n, VEIL_LAMBDA(std::size_t i) {
    const std::size_t limb = first + i / n;
    const std::size_t idx = limb * n + i % n;
    b[idx] = mul_add_mod(target[idx], static_cast<W>(p_mod_q[limb]), b[idx], mods[limb]);
  });
}
}  // namespace

KeyGenerator::KeyGenerator(ContextPtr ctx, const Device& dev, std::optional<std::uint64_t> seed,
                           std::size_t hamming_weight)
    : ctx_(std::move(ctx)), dev_(dev), prng_(make_prng(seed)) {
  const RnsBase& qp = ctx_->base_qp_full();
  sk_ = SecretKey(ctx_, dev_, qp.size() * ctx_->n());
  if (hamming_weight == 0) {
    sample_ternary(dev_, sk_.data(), ctx_->n(), qp, prng_.next());
  } else {
    sample_sparse_ternary(dev_, sk_.data(), ctx_->n(), qp, prng_.next(), hamming_weight);
  }
  ntt_forward(dev_, sk_.data(), 1, qp, ctx_->ntt());
  sk_.set_key_id(key_set_id(sk_));
}

KeyGenerator::KeyGenerator(ContextPtr ctx, const SecretKey& sk, std::optional<std::uint64_t> seed)
    : ctx_(std::move(ctx)), dev_(sk.device()), prng_(make_prng(seed)), sk_(sk) {
  check_compatible(*ctx_, sk.device(), sk.context(), sk.device(), "secret_key");
  if (sk_.key_id() == 0) sk_.set_key_id(key_set_id(sk_));
}

PublicKey KeyGenerator::create_public_key() const {
  const std::size_t n = ctx_->n();
  // Over Q ∪ P, like SEAL: encryption then divides by P, which removes most of the e*u noise.
  const RnsBase& q = ctx_->base_qp_full();
  const std::size_t limbs = q.size();
  PublicKey pk(ctx_, dev_, 2 * limbs * n);
  WordPtr b = pk.data();
  WordPtr a = b + limbs * n;
  const UniformSeed seed = derive_uniform_seed(prng_.next());
  sample_uniform(dev_, a, n, q, uniform_stream(seed, 0));
  pk.set_uniform_seed(seed);
  WordBuffer e(dev_, limbs * n, ctx_->word_bits());
  e.set_secure();
  sample_cbd(dev_, e.data(), n, q, prng_.next());
  if (ctx_->error_factor() != 1) {  // errors that are multiples of t: t*e
    poly::multiply_word(dev_, q, n, 1, e.data(), ctx_->error_factor(), e.data());
  }
  ntt_forward(dev_, e.data(), 1, q, ctx_->ntt());
  // b = e - a s (the secret key's Q limbs are its first limbs).
  poly::multiply(dev_, q, n, 1, a, sk_.data(), b);
  poly::sub(dev_, q, n, 1, e.data(), b, b);
  pk.set_key_id(sk_.key_id());
  return pk;
}

namespace {
// The limbs of a polynomial over Q ∪ P ([L+k][N]) that a key of `level` stores (q_0..q_level,
// then P), gathered into `out`; `full` itself at the top level.
ConstWordPtr key_limbs_of(const Context& ctx, const Device& dev, std::size_t level,
                          ConstWordPtr full, WordBuffer& out) {
  if (level == ctx.max_level()) return full;
  out = WordBuffer(dev, (level + 1 + ctx.num_p()) * ctx.n(), ctx.word_bits());
  out.set_secure();
  copy_key_limbs(ctx, dev, full, ctx.num_q(), out.data(), level);
  return out.data();
}
}  // namespace

KSwitchKey KeyGenerator::create_kswitch_key(ConstWordPtr target, bool compact,
                                            std::optional<std::size_t> level) const {
  const std::size_t n = ctx_->n();
  if (ctx_->num_p() == 0) {
    throw InvalidArgument("special_primes: key switching needs a special prime");
  }
  const std::size_t top = ctx_->max_level();
  const std::size_t lv = level.value_or(top);
  if (lv > top) {
    throw InvalidArgument("level: expected at most the top level " + std::to_string(top) +
                          ", got " + std::to_string(lv));
  }
  const KeySwitchLevel& ks = ctx_->key_switch(lv);
  const RnsBase& qp = ks.base_qp;  // Q_level ∪ P
  const std::size_t alpha = ctx_->alpha();
  const std::size_t dnum = ks.dnum;
  KSwitchKey key(ctx_, dev_, dnum, compact, lv);
  const LimbAddress addr = key.limb_addresses();
  const std::size_t pw = key.poly_words();
  DeviceTable<u64> pq(ctx_->special_product_mod_q());  // the digit indicator terms' factor
  const u64* pq_d = pq.data(dev_);
  const Modulus* mods = qp.moduli(dev_);
  WordBuffer sk_part, target_part;  // the key's limbs of s and s' below the top level
  const ConstWordPtr s = key_limbs_of(*ctx_, dev_, lv, sk_.data(), sk_part);
  const ConstWordPtr t = key_limbs_of(*ctx_, dev_, lv, target, target_part);
  WordBuffer e(dev_, pw, ctx_->word_bits());
  e.set_secure();
  // A compact key's a_j live here only while b_j is computed.
  WordBuffer a_compact(dev_, compact ? pw : 0, ctx_->word_bits());
  // One seed for the whole key; digit j's a_j is its sub-stream j (seeded serialization; the
  // compact sampler for a compact key), each limb at its address in Q ∪ P.
  const UniformSeed seed = derive_uniform_seed(prng_.next());
  key.set_uniform_seed(seed);
  for (std::size_t j = 0; j < dnum; ++j) {
    WordPtr b = key.data() + (compact ? j : 2 * j) * pw;
    WordPtr a = compact ? a_compact.data() : b + pw;
    if (compact) {
      sample_uniform_compact(dev_, a, n, qp, uniform_stream(seed, j), addr);
    } else {
      sample_uniform(dev_, a, n, qp, uniform_stream(seed, j), addr);
    }
    sample_cbd(dev_, e.data(), n, qp, prng_.next());
    if (ctx_->error_factor() != 1) {
      poly::multiply_word(dev_, qp, n, 1, e.data(), ctx_->error_factor(), e.data());
    }
    ntt_forward(dev_, e.data(), 1, qp, ctx_->ntt());
    poly::multiply(dev_, qp, n, 1, a, s, b);
    poly::sub(dev_, qp, n, 1, e.data(), b, b);
    const std::size_t first = j * alpha, last = std::min(lv + 1, first + alpha);
    VEIL_WITH_WORD(b.word_bits(), add_digit_indicator<W>(dev_, b.as<W>(), t.as<W>(), pq_d,
                                                          mods, first, last, n));
  }
  // The digits a key of this level leaves out still draw their errors, so that the generator's
  // later keys are those it makes at the top level (a key's level changes nothing else).
  for (std::size_t j = dnum; j < ctx_->dnum(); ++j) (void)prng_.next();
  key.note_seed_matches();  // every a_j was sampled from `seed` above and not written since
  key.set_key_id(sk_.key_id());
  return key;
}

SwitchingKey KeyGenerator::create_switching_key(const SecretKey& from,
                                               std::size_t max_level) const {
  check_compatible(*ctx_, dev_, from.context(), from.device(), "from");
  const std::size_t top = ctx_->max_level();
  if (max_level == static_cast<std::size_t>(-1)) max_level = top;
  if (max_level > top) {
    throw InvalidArgument("max_level: expected at most the top level " + std::to_string(top) +
                          ", got " + std::to_string(max_level));
  }
  // A key of level max_level: only Q_max_level ∪ P and the digits that meet Q_max_level exist.
  KSwitchKey key = create_kswitch_key(from.data(), false, max_level);
  u64 from_id = from.key_id() ? from.key_id() : key_set_id(from);
  return SwitchingKey(std::move(key), from_id, max_level);
}

RelinKeys KeyGenerator::create_relin_keys(bool compact) const {
  const RnsBase& qp = ctx_->base_qp_full();
  WordBuffer s2(dev_, qp.size() * ctx_->n(), ctx_->word_bits());
  s2.set_secure();
  poly::multiply(dev_, qp, ctx_->n(), 1, sk_.data(), sk_.data(), s2.data());
  return RelinKeys(create_kswitch_key(s2.data(), compact));
}

GaloisKeys KeyGenerator::create_galois_keys_from_elts(const std::vector<std::uint32_t>& elts,
                                                      bool compact,
                                                      const std::vector<std::size_t>& levels) const {
  const RnsBase& qp = ctx_->base_qp_full();
  const std::size_t n = ctx_->n();
  GaloisKeys gk(ctx_, dev_);
  if (ctx_->num_p() == 0) throw InvalidArgument("special_primes: Galois keys need a special prime");
  for (std::uint32_t g : elts) {  // all checked before the first (slow) key is generated
    if (g % 2 == 0 || g >= 2 * n) {
      throw InvalidArgument("galois_elts: expected odd elements below 2N, got " + std::to_string(g));
    }
  }
  if (!levels.empty() && levels.size() != elts.size()) {
    throw InvalidArgument("levels: expected one level per Galois element (" +
                          std::to_string(elts.size()) + "), got " + std::to_string(levels.size()));
  }
  for (std::size_t lv : levels) {
    if (lv > ctx_->max_level()) {
      throw InvalidArgument("levels: expected at most the top level " +
                            std::to_string(ctx_->max_level()) + ", got " + std::to_string(lv));
    }
  }
  WordBuffer rotated(dev_, qp.size() * n, ctx_->word_bits());
  rotated.set_secure();
  for (std::size_t i = 0; i < elts.size(); ++i) {
    const std::uint32_t g = elts[i];
    if (gk.has_key(g) || g == 1) continue;
    check_interrupt();
    poly::automorphism_ntt(dev_, qp, n, 1, g, sk_.data(), rotated.data());
    gk.insert(g, create_kswitch_key(rotated.data(), compact,
                                    levels.empty() ? std::nullopt
                                                   : std::optional<std::size_t>(levels[i])));
  }
  return gk;
}

GaloisKeys KeyGenerator::create_galois_keys(const std::vector<int>& steps,
                                            bool include_columns) const {
  std::vector<std::uint32_t> elts;
  for (int s : steps) elts.push_back(ctx_->galois_elt_from_step(s));
  if (include_columns) elts.push_back(ctx_->galois_elt_column());
  return create_galois_keys_from_elts(elts);
}

GaloisKeys KeyGenerator::create_galois_keys() const {
  std::vector<int> steps;
  for (std::size_t s = 1; s < ctx_->n() / 2; s <<= 1) {
    steps.push_back(static_cast<int>(s));
    steps.push_back(-static_cast<int>(s));
  }
  return create_galois_keys(steps, true);
}

void GaloisKeys::insert(u32 galois_elt, KSwitchKey k) {
  if (keys_.empty()) {
    key_id_ = k.key_id();
  } else if (k.key_id() != key_id_) {
    // Mixed sets (or known with unknown) would make the set's identity meaningless.
    throw InvalidArgument("galois_keys: the key for element " + std::to_string(galois_elt) +
                          " belongs to another key set than the keys already present");
  }
  keys_[galois_elt] = std::move(k);
}

const KSwitchKey& GaloisKeys::key(u32 galois_elt) const {
  auto it = keys_.find(galois_elt);
  if (it == keys_.end()) {
    throw InvalidArgument("galois_keys: no key for Galois element " + std::to_string(galois_elt) +
                          " (create it with KeyGenerator.create_galois_keys)");
  }
  return it->second;
}

}  // namespace veil
