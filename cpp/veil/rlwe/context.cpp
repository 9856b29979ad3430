#include "veil/rlwe/context.h"

#include <algorithm>
#include <cmath>
#include <set>
#include <string>

#include "veil/core/error.h"
#include "veil/core/primes.h"

namespace veil {

// Defined in context_host.cpp (Boost.Multiprecision).
int product_bit_count(const std::vector<u64>& q);
bool product_exceeds(const std::vector<u64>& q, u64 t);

namespace {

std::vector<Modulus> to_moduli(const std::vector<u64>& v) {
  std::vector<Modulus> m;
  m.reserve(v.size());
  for (u64 q : v) m.emplace_back(q);
  return m;
}

std::vector<u32> iota_ids(std::size_t first, std::size_t count) {
  std::vector<u32> ids(count);
  for (std::size_t i = 0; i < count; ++i) ids[i] = static_cast<u32>(first + i);
  return ids;
}

// Rejects parameters with a plain modulus whose fresh ciphertexts would have no noise budget
// (they could not decrypt). The budget is bits(Q) - bits(t * (|e| + 1)) - 1 (SEAL's definition,
// with a message scaled by Q/t or one below t), for a high-probability bound on the fresh
// error e of public-key encryption (the larger of the two encryptions):
// - with special primes the noise u e + e0 + e1 s is divided by P and rounding leaves
//   |r0 + r1 s| with variance N/18 (r uniform in [-1/2, 1/2], s ternary): 6 sigma = 6 sqrt(N/18);
// - without, |u e + e0 + e1 s| has variance sigma^2 (4N/3 + 1) with sigma = 3.2: 6 sigma.
// Six standard deviations: a coefficient exceeds it with probability ~2^-28 per ciphertext.
void check_fresh_noise(const std::vector<u64>& q, u64 t, std::size_t n, std::size_t special) {
  const double nd = static_cast<double>(n);
  const double e = special ? 6.0 * std::sqrt(nd / 18.0) + 1.0 : 6.0 * 3.2 * std::sqrt(4.0 * nd / 3.0 + 1.0);
  const double noise_bits = std::floor(std::log2(static_cast<double>(t) * (e + 1.0))) + 1.0;
  const int q_bits = product_bit_count(q);
  const int budget = q_bits - static_cast<int>(noise_bits) - 1;
  if (budget < 1) {
    throw InvalidArgument(
        "plain_modulus: fresh ciphertexts would have no noise budget (Q has " +
        std::to_string(q_bits) + " bits; t = " + std::to_string(t) + " and the fresh error (~2^" +
        std::to_string(static_cast<int>(std::ceil(std::log2(e)))) + " at N = " +
        std::to_string(n) + ") need " + std::to_string(static_cast<int>(noise_bits) + 1) +
        "): use a smaller plain_modulus or a larger coeff_modulus");
  }
}

// 32-bit words are possible when every residue Veil stores or converts to fits one: every prime
// of Q and P below 2^31, the plain modulus too (conversions to t), and whatever the scheme adds
// (SchemeDefinition::word32_obstacle). Returns the reason 32-bit words are impossible, or nothing.
std::string word32_obstacle(const EncryptionParameters& p, const SchemeDefinition& def) {
  for (u64 q : p.coeff_modulus) {
    if (!fits_word32(q)) return "prime " + std::to_string(q) + " is not below 2^31";
  }
  if (def.has_plain_modulus && !fits_word32(p.plain_modulus)) {
    return "plain_modulus " + std::to_string(p.plain_modulus) + " is not below 2^31";
  }
  return def.word32_obstacle ? def.word32_obstacle(p) : "";
}

int resolve_word_bits(const EncryptionParameters& p, const SchemeDefinition& def) {
  if (p.word_bits != 0 && p.word_bits != 32 && p.word_bits != 64) {
    throw InvalidArgument("word_bits: expected 0 (choose), 32 or 64, got " +
                          std::to_string(p.word_bits));
  }
  const std::string obstacle = word32_obstacle(p, def);
  if (p.word_bits == 32 && !obstacle.empty()) {
    throw InvalidArgument("word_bits: 32-bit words need every residue below 2^31, but " + obstacle);
  }
  if (p.word_bits != 0) return p.word_bits;
  return obstacle.empty() ? 32 : 64;
}


// Every prime of Q and P: at most 60 bits, prime, NTT-friendly for N, not repeated.
void check_primes(const std::vector<u64>& primes, std::size_t n) {
  std::set<u64> seen;
  for (u64 q : primes) {
    if (q >> 60) {
      throw InvalidArgument("coeff_modulus: prime " + std::to_string(q) +
                            " has more than 60 bits");
    }
    if (!is_prime(q)) {
      throw InvalidArgument("coeff_modulus: " + std::to_string(q) + " is not prime");
    }
    if ((q - 1) % (2 * n) != 0) {
      throw InvalidArgument("coeff_modulus: prime " + std::to_string(q) +
                            " is not NTT-friendly (q != 1 mod 2N with N = " + std::to_string(n) +
                            ")");
    }
    if (!seen.insert(q).second) {
      throw InvalidArgument("coeff_modulus: prime " + std::to_string(q) + " is repeated");
    }
  }
}

// Security: log2(QP) against the HE Standard bound, with the product's exact bit count as SEAL
// counts it.
void check_security(const std::vector<u64>& primes, std::size_t n, SecurityLevel security) {
  if (security == SecurityLevel::none) return;
  const int qp_bits = product_bit_count(primes);
  const int bound = max_coeff_modulus_bits(n, security);
  if (qp_bits > bound) {
    throw InvalidArgument("coeff_modulus: log2(QP) = " + std::to_string(qp_bits) +
                          " bits exceeds the " + std::to_string(int(security)) +
                          "-bit security bound of " + std::to_string(bound) +
                          " bits for poly_modulus_degree " + std::to_string(n) +
                          " (pass security=None explicitly to allow it)");
  }
}

// P large enough for the digit size: P must dominate every digit D_j, or ModDown no longer
// removes the key-switching error (Han-Ki 2020 §3; Phantom, Yang et al. 2024 §III-C).
void check_digits_below_p(const std::vector<u64>& primes, std::size_t num_q, std::size_t alpha) {
  int p_bits = 0;
  for (std::size_t i = num_q; i < primes.size(); ++i) p_bits += Modulus(primes[i]).bit_count;
  for (std::size_t first = 0; first < num_q; first += alpha) {
    int d_bits = 0;
    for (std::size_t i = first; i < std::min(num_q, first + alpha); ++i)
      d_bits += Modulus(primes[i]).bit_count;
    if (d_bits > p_bits) {
      throw InvalidArgument("special_primes: P has " + std::to_string(p_bits) +
                            " bits but a key-switching digit of alpha = " +
                            std::to_string(alpha) + " primes has " + std::to_string(d_bits) +
                            " bits; use more or larger special primes or a smaller alpha");
    }
  }
}

// SEAL's matrix representation of the slots: row i holds the slots of 3^i, row 2 those of -3^i
// (bit-reversed NTT indices, [N]).
std::vector<u32> slot_map(std::size_t n, int log_n) {
  const std::size_t row = n / 2;
  const u64 m = 2 * n;
  std::vector<u32> map(n);
  u64 pos = 1;
  for (std::size_t i = 0; i < row; ++i) {
    u64 idx1 = (pos - 1) >> 1, idx2 = (m - pos - 1) >> 1;
    map[i] = reverse_bits(static_cast<u32>(idx1), log_n);
    map[row + i] = reverse_bits(static_cast<u32>(idx2), log_n);
    pos = (pos * 3) & (m - 1);
  }
  return map;
}

}  // namespace

std::shared_ptr<const Context> Context::create(const EncryptionParameters& params,
                                               const SchemeDefinition& scheme,
                                               SecurityLevel security) {
  if (scheme.scheme != params.scheme) {
    throw InvalidArgument("scheme: expected the definition of " + to_string(params.scheme) +
                          " (the parameters' scheme), got " + scheme.name + "'s");
  }
  std::shared_ptr<Context> ctx(new Context());
  ctx->scheme_def_ = &scheme;
  ctx->build(params, security);
  return ctx;
}

void Context::build(const EncryptionParameters& p, SecurityLevel security) {
  params_ = p;
  security_ = security;
  const std::size_t n = p.poly_modulus_degree;
  if (!is_power_of_two(n) || n < 1024 || n > 131072) {
    throw InvalidArgument("poly_modulus_degree: expected a power of two in 1024..131072, got " +
                          std::to_string(n));
  }
  log_n_ = log2_exact(n);
  if (p.coeff_modulus.empty()) throw InvalidArgument("coeff_modulus: expected at least one prime");
  if (p.special_primes >= p.coeff_modulus.size()) {
    throw InvalidArgument("special_primes: " + std::to_string(p.special_primes) +
                          " special primes leave no ciphertext prime in coeff_modulus of size " +
                          std::to_string(p.coeff_modulus.size()));
  }
  check_primes(p.coeff_modulus, n);
  num_p_ = p.special_primes;
  num_q_ = p.coeff_modulus.size() - num_p_;
  if (p.alpha > num_q_) {
    throw InvalidArgument("alpha: expected at most the number of Q primes (" +
                          std::to_string(num_q_) + ") per key-switching digit, got " +
                          std::to_string(p.alpha));
  }
  alpha_ = resolved_alpha(p);
  if (alpha_ > 32) {
    throw InvalidArgument("alpha: at most 32 primes per key-switching digit, got " +
                          std::to_string(alpha_));
  }
  const std::vector<u64> q_primes(p.coeff_modulus.begin(), p.coeff_modulus.begin() + num_q_);
  if (num_p_ > 0 && dnum() > kMaxKeySwitchDigits) {
    // Found here, not at the first multiplication after every key was generated.
    throw InvalidArgument("alpha: " + std::to_string(num_q_) + " Q primes in digits of alpha = " +
                          std::to_string(alpha_) + " give " + std::to_string(dnum()) +
                          " key-switching digits, more than the " +
                          std::to_string(kMaxKeySwitchDigits) +
                          " supported; use more special primes or a larger alpha");
  }

  check_plain_modulus(p, q_primes);

  check_security(p.coeff_modulus, n, security);

  if (num_p_ > 0) check_digits_below_p(p.coeff_modulus, num_q_, alpha_);

  word_bits_ = resolve_word_bits(p, *scheme_def_);
  if (scheme_def_->build_context) scheme_ctx_ = scheme_def_->build_context(p, num_q_, word_bits_);

  // NTT primes: Q, P, then the scheme's auxiliary primes.
  const std::vector<u64>& all = p.coeff_modulus;
  static const std::vector<u64> kNone;
  const std::vector<u64>& aux = scheme_ctx_ ? scheme_ctx_->aux_ntt_primes : kNone;
  std::vector<u64> ntt_primes = all;
  ntt_primes.insert(ntt_primes.end(), aux.begin(), aux.end());
  ntt_ = NttTables(n, to_moduli(ntt_primes));

  std::vector<Modulus> qm = to_moduli(p.coeff_modulus);
  for (std::size_t l = 0; l < num_q_; ++l) {
    base_q_.emplace_back(std::vector<Modulus>(qm.begin(), qm.begin() + l + 1), iota_ids(0, l + 1));
  }
  base_p_ = RnsBase(std::vector<Modulus>(qm.begin() + num_q_, qm.end()), iota_ids(num_q_, num_p_));
  p_mod_q_.assign(num_p_ > 0 ? num_q_ : 0, 1);
  for (std::size_t i = 0; i < p_mod_q_.size(); ++i) {
    for (std::size_t j = 0; j < num_p_; ++j) {
      p_mod_q_[i] = mul_mod(p_mod_q_[i], reduce_word(base_p_[j].value, qm[i]), qm[i]);
    }
  }
  base_qp_full_ = base_q_.back().concat(base_p_);
  ks_.resize(num_q_);
  for (std::size_t l = 0; l < num_q_; ++l) ks_once_.push_back(std::make_unique<std::once_flag>());
  lt_.resize(num_q_);
  for (std::size_t l = 0; l < num_q_; ++l) lt_once_.push_back(std::make_unique<std::once_flag>());
  scheme_.resize(num_q_);
  scheme_builder_.assign(num_q_, nullptr);
  for (std::size_t l = 0; l < num_q_; ++l) scheme_once_.push_back(std::make_unique<std::once_flag>());

  hash_ = veil::parameter_hash(p);

  if (batching_) {
    plain_ntt_ = std::make_unique<NttTables>(n, std::vector<Modulus>{plain_});
    slot_map_ = DeviceTable<u32>(slot_map(n, log_n_));
  }
}

void Context::check_plain_modulus(const EncryptionParameters& p, const std::vector<u64>& q_primes) {
  const std::size_t n = p.poly_modulus_degree;
  if (!scheme_def_->has_plain_modulus) {
    if (p.plain_modulus != 0) {
      throw InvalidArgument(std::string("plain_modulus: ") + scheme_def_->name +
                            " has no plain modulus (expected 0, got " +
                            std::to_string(p.plain_modulus) + ")");
    }
    return;
  }
  const u64 t = p.plain_modulus;
  if (t < 2 || (t >> 60)) {
    throw InvalidArgument("plain_modulus: expected 2 <= t < 2^60, got " + std::to_string(t));
  }
  for (u64 q : p.coeff_modulus) {
    if (q % t == 0 || t % q == 0) {
      throw InvalidArgument("plain_modulus: " + std::to_string(t) +
                            " is not co-prime to coeff_modulus prime " + std::to_string(q));
    }
  }
  if (!product_exceeds(q_primes, t)) {
    throw InvalidArgument("plain_modulus: t = " + std::to_string(t) +
                          " is not below the ciphertext modulus Q (the product of the " +
                          std::to_string(num_q_) + " non-special primes)");
  }
  plain_ = Modulus(t);
  batching_ = is_prime(t) && (t - 1) % (2 * n) == 0;
  check_fresh_noise(q_primes, t, n, num_p_);
}

const SchemeLevelTables& Context::scheme_tables(std::size_t level,
                                                SchemeTablesBuilder build) const {
  if (build == nullptr) throw InvalidArgument("build: no scheme-table builder given");
  if (level >= num_q_) {
    throw InvalidArgument("level: " + std::to_string(level) + " exceeds the maximum level " +
                          std::to_string(num_q_ - 1));
  }
  std::call_once(*scheme_once_[level], [&] {
    scheme_[level] = build(*this, level);
    scheme_builder_[level] = build;
  });
  if (scheme_builder_[level] != build) {
    throw InvalidArgument("build: the scheme tables at level " + std::to_string(level) +
                          " were built by another builder (one scheme per context)");
  }
  return *scheme_[level];
}

const NttTables& Context::plain_ntt() const {
  if (!plain_ntt_) {
    throw InvalidArgument("plain_modulus: " + std::to_string(params_.plain_modulus) +
                          " does not enable batching (it must be a prime = 1 mod 2N, e.g. "
                          "PlainModulus.batching(N, bits))");
  }
  return *plain_ntt_;
}

u32 Context::galois_elt_from_step(int step) const {
  const std::size_t row = n() / 2;
  if (step == 0) return 1;
  const long long s = step;
  if (s >= static_cast<long long>(row) || -s >= static_cast<long long>(row)) {
    throw InvalidArgument("steps: |step| must be < N/2 = " + std::to_string(row) + ", got " +
                          std::to_string(step));
  }
  const u64 pos = s > 0 ? static_cast<u64>(s) : static_cast<u64>(row + s);
  const u64 m = 2 * n();
  u64 g = 1, base = 3;  // 3^pos mod 2N by squaring (called per step by hoisted rotations)
  for (u64 e = pos; e != 0; e >>= 1) {
    if (e & 1) g = (g * base) & (m - 1);
    base = (base * base) & (m - 1);
  }
  return static_cast<u32>(g);
}

const KeySwitchLevel& Context::key_switch(std::size_t level) const {
  if (num_p_ == 0) {
    throw InvalidArgument("special_primes: key switching needs at least one special prime");
  }
  if (level >= num_q_) {
    throw InvalidArgument("level: " + std::to_string(level) + " exceeds the maximum level " +
                          std::to_string(num_q_ - 1));
  }
  std::call_once(*ks_once_[level], [&] { ks_[level] = build_key_switch(level); });
  return *ks_[level];
}

std::unique_ptr<KeySwitchLevel> Context::build_key_switch(std::size_t level) const {
  auto ks = std::make_unique<KeySwitchLevel>();
  ks->level = level;
  const RnsBase& q = base_q_[level];
  ks->base_qp = q.concat(base_p_);
  const RnsBase& qp = ks->base_qp;
  const std::size_t limbs = level + 1, ext = qp.size();
  ks->dnum = (limbs + alpha_ - 1) / alpha_;
  std::vector<u64> scale(ks->dnum * alpha_, 0), scale_shoup(ks->dnum * alpha_, 0);
  const std::size_t stride = (alpha_ + 3) / 4 * 4;
  ks->modup_stride = stride;
  std::vector<u64> mat(ks->dnum * ext * stride, 0);
  for (std::size_t j = 0; j < ks->dnum; ++j) {
    const std::size_t first = j * alpha_;
    const std::size_t size = std::min(alpha_, limbs - first);
    ks->digit_first.push_back(first);
    ks->digit_size.push_back(size);
    for (std::size_t i = 0; i < size; ++i) {
      // D_j / q_i = product of the digit's other primes, reduced modulo each target.
      const Modulus& qi = q[first + i];
      u64 hat_mod_qi = 1;
      for (std::size_t i2 = 0; i2 < size; ++i2)
        if (i2 != i) hat_mod_qi = mul_mod(hat_mod_qi, reduce_word(q[first + i2].value, qi), qi);
      const u64 inv = inv_mod(hat_mod_qi, qi.value);
      scale[j * alpha_ + i] = inv;
      scale_shoup[j * alpha_ + i] = shoup_quotient(inv, qi.value);
      for (std::size_t l = 0; l < ext; ++l) {
        if (l >= first && l < first + size) continue;
        u64 h = 1;
        for (std::size_t i2 = 0; i2 < size; ++i2)
          if (i2 != i) h = mul_mod(h, reduce_word(q[first + i2].value, qp[l]), qp[l]);
        mat[(j * ext + l) * stride + i] = h;
      }
    }
  }
  {
    std::vector<Modulus> m;
    std::vector<u32> ids, slots;
    for (std::size_t l = 0; l < ext; ++l)
      for (std::size_t j = 0; j < ks->dnum; ++j) {
        const std::size_t first = ks->digit_first[j], size = ks->digit_size[j];
        if (l >= first && l < first + size) continue;
        m.push_back(qp[l]);
        ids.push_back(qp.ntt_ids()[l]);
        // Every digit before j owns alpha primes, so digit j's limbs start at j (ext - alpha).
        slots.push_back(static_cast<u32>(j * (ext - alpha_) + (l < first ? l : l - size)));
      }
    ks->modup_base = RnsBase(std::move(m), std::move(ids));
    ks->modup_slots = DeviceTable<u32>(std::move(slots));
  }
  ks->modup_scale = DeviceTable<u64>(std::move(scale));
  ks->modup_scale_shoup = DeviceTable<u64>(std::move(scale_shoup));
  if (word_bits_ == 32) {
    ks->modup_mat32 = DeviceTable<u32>(std::vector<u32>(mat.begin(), mat.end()));
    // The Montgomery copy for the lazy rows: inputs below the largest prime of Q_l; row
    // (digit, prime l) is reduced mod Q_l ∪ P's prime l.
    u64 in_bound = 0;
    for (std::size_t l = 0; l < limbs; ++l) in_bound = std::max(in_bound, qp[l].value);
    std::vector<u32> mont = detail::montgomery32_table(mat, stride, qp, in_bound);
    if (!mont.empty()) ks->modup_mont32 = DeviceTable<u32>(std::move(mont));
  }
  ks->modup_mat = DeviceTable<u64>(std::move(mat));
  ks->mod_down = ModDown(q, base_p_);
  // The t-correction keeps the errors multiples of t (SchemeDefinition::errors_times_plain).
  ks->mod_down_ntt = ModDownNtt(q, base_p_, scheme_def_->errors_times_plain ? plain_modulus() : 0);
  std::vector<u64> pq(limbs), pqs(limbs);  // the lift of c to Q_l ∪ P
  for (std::size_t i = 0; i < limbs; ++i) {
    pq[i] = p_mod_q_[i];
    pqs[i] = shoup_quotient(pq[i], q[i].value);
  }
  ks->p_mod_q = DeviceTable<u64>(std::move(pq));
  ks->p_mod_q_shoup = DeviceTable<u64>(std::move(pqs));
  return ks;
}

const LevelTables& Context::level_tables(std::size_t level) const {
  if (level >= num_q_) {
    throw InvalidArgument("level: " + std::to_string(level) + " exceeds the maximum level " +
                          std::to_string(num_q_ - 1));
  }
  std::call_once(*lt_once_[level], [&] {
    auto lt = std::make_unique<LevelTables>();
    lt->level = level;
    std::vector<u64> qv;
    for (const Modulus& m : base_q_[level].moduli()) qv.push_back(m.value);
    lt->q_bit_count = product_bit_count(qv);
    lt_[level] = std::move(lt);
  });
  return *lt_[level];
}

}  // namespace veil
