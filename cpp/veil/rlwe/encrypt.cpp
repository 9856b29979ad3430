#include "veil/rlwe/encrypt.h"

#include <cmath>
#include <string>
#include <vector>

#include "veil/core/error.h"
#include "veil/core/modarith.h"
#include "veil/backend/launch.h"
#include "veil/ring/poly_ops.h"
#include "veil/rns/mod_down.h"
#include "veil/ring/sampler.h"

namespace veil {

Ciphertext encrypt_zero_asymmetric(const PublicKey& pk, std::size_t level, const Prng& prng,
                                   bool ntt_form, u64 error_factor) {
  const ContextPtr& ctx = pk.context();
  const Device& dev = pk.device();
  const std::size_t n = ctx->n();
  const std::size_t L = ctx->num_q(), k = ctx->num_p();
  const std::size_t limbs = level + 1;
  const std::size_t ext = limbs + k;
  // Work over Q_level ∪ P, then divide by P (SEAL's encrypt_zero_asymmetric): the noise
  // e*u + e0 + e1*s shrinks by P and only the rounding error remains.
  const RnsBase base = k ? ctx->base_q(level).concat(ctx->base_p()) : ctx->base_q(level);
  const int wb = ctx->word_bits();
  WordBuffer key(dev, 2 * ext * n, wb);
  const std::size_t pk_poly = (L + k) * n;
  for (std::size_t i = 0; i < 2; ++i) {
    copy_words(dev, key.data() + i * ext * n, dev, pk.data() + i * pk_poly, limbs * n);
    if (k) copy_words(dev, key.data() + i * ext * n + limbs * n, dev, pk.data() + i * pk_poly + L * n, k * n);
  }
  WordBuffer u(dev, ext * n, wb);
  u.set_secure();  // u and e would reveal m from the ciphertext
  sample_ternary(dev, u.data(), n, base, prng.next());
  ntt_forward(dev, u.data(), 1, base, ctx->ntt());
  WordBuffer c(dev, 2 * ext * n, wb);
  poly::multiply(dev, base, n, 1, key.data(), u.data(), c.data());
  poly::multiply(dev, base, n, 1, key.data() + ext * n, u.data(), c.data() + ext * n);
  WordBuffer e(dev, 2 * ext * n, wb);
  e.set_secure();
  sample_cbd(dev, e.data(), n, base, prng.next());
  sample_cbd(dev, e.data() + ext * n, n, base, prng.next());
  if (error_factor != 1) poly::multiply_word(dev, base, n, 2, e.data(), error_factor, e.data());
  Ciphertext ct(ctx, dev, 2, level, ntt_form);
  if (ntt_form) {
    ntt_forward(dev, e.data(), 2, base, ctx->ntt());
    poly::add(dev, base, n, 2, c.data(), e.data(), c.data());
    if (k) {
      ctx->key_switch(level).mod_down_ntt.apply(dev, ctx->ntt(), c.data(), ct.data(), n, 2);
    } else {
      copy_words(dev, ct.data(), dev, c.data(), 2 * limbs * n);
    }
  } else {
    ntt_inverse(dev, c.data(), 2, base, ctx->ntt());
    poly::add(dev, base, n, 2, c.data(), e.data(), c.data());
    if (k) {
      ctx->key_switch(level).mod_down.apply(dev, c.data(), ct.data(), n, 2);
    } else {
      copy_words(dev, ct.data(), dev, c.data(), 2 * limbs * n);
    }
  }
  ct.set_key_id(pk.key_id());
  return ct;
}

Ciphertext encrypt_zero_symmetric(const SecretKey& sk, std::size_t level, const Prng& prng,
                                  bool ntt_form, u64 error_factor) {
  const ContextPtr& ctx = sk.context();
  const Device& dev = sk.device();
  const std::size_t n = ctx->n();
  const RnsBase& q = ctx->base_q(level);
  const std::size_t limbs = q.size();
  Ciphertext ct(ctx, dev, 2, level, ntt_form);
  const UniformSeed seed = derive_uniform_seed(prng.next());
  sample_uniform(dev, ct.poly(1), n, q, uniform_stream(seed, 0));
  ct.set_uniform_seed(seed);
  WordBuffer e(dev, limbs * n, ctx->word_bits());
  e.set_secure();
  sample_cbd(dev, e.data(), n, q, prng.next());
  if (error_factor != 1) poly::multiply_word(dev, q, n, 1, e.data(), error_factor, e.data());
  ntt_forward(dev, e.data(), 1, q, ctx->ntt());
  poly::multiply(dev, q, n, 1, ct.poly(1), sk.data(), ct.poly(0));
  poly::sub(dev, q, n, 1, e.data(), ct.poly(0), ct.poly(0));
  if (!ntt_form) ntt_inverse(dev, ct.data(), 2, q, ctx->ntt());
  ct.set_key_id(sk.key_id());
  return ct;
}

WordBuffer decrypt_phase(const SecretKey& sk, const Ciphertext& ct) {
  const ContextPtr& ctx = ct.context();
  const Device& dev = ct.device();
  const std::size_t n = ctx->n();
  const RnsBase& q = ctx->base_q(ct.level());
  const std::size_t limbs = q.size();
  WordBuffer acc(dev, limbs * n, ctx->word_bits());
  acc.set_secure();  // the phase m + e is as secret as the message
  // Horner: ((c_{k} s + c_{k-1}) s + ...) s + c0, in NTT form, one pass.
  if (ct.is_ntt_form()) {
    poly::horner(dev, q, n, ct.size(), ct.data(), sk.data(), acc.data());
    return acc;
  }
  // Coefficient form: c0 + INTT(s * NTT-form Horner of c1..c_k). Only c1..c_k go through
  // the NTT; c0 is added in coefficient form (the transforms are linear).
  VEIL_REQUIRE(ct.size() >= 2, "decrypt_phase: ciphertexts have at least 2 polynomials");
  const std::size_t tail = ct.size() - 1, words = limbs * n;
  WordBuffer polys(dev, tail * words, ctx->word_bits());
  const ConstWordPtr c1 = ct.poly(1);
  backend::copy(dev, polys.data().get(), dev, c1.get(), c1.bytes(tail * words));
  ntt_forward(dev, polys.data(), tail, q, ctx->ntt());
  if (tail == 1) {
    poly::multiply(dev, q, n, 1, polys.data(), sk.data(), acc.data());
  } else {
    poly::horner(dev, q, n, tail, polys.data(), sk.data(), acc.data());
    poly::multiply(dev, q, n, 1, acc.data(), sk.data(), acc.data());
  }
  ntt_inverse(dev, acc.data(), 1, q, ctx->ntt());
  poly::add(dev, q, n, 1, acc.data(), ct.poly(0), acc.data());
  return acc;
}

NoiseTables make_noise_tables(const Context& ctx, std::size_t level, u64 f) {
  const RnsBase& q = ctx.base_q(level);
  std::vector<u64> factor(q.size());
  double log2_q = 0;
  for (std::size_t i = 0; i < q.size(); ++i) {
    u64 hat = 1;
    for (std::size_t j = 0; j < q.size(); ++j)
      if (j != i) hat = mul_mod(hat, reduce_word(q[j].value, q[i]), q[i]);
    u64 fi = inv_mod(hat, q[i].value);
    if (f != 1) fi = mul_mod(fi, reduce_word(f, q[i]), q[i]);
    factor[i] = fi;
    log2_q += std::log2(static_cast<double>(q[i].value));
  }
  NoiseTables t;
  t.factor = DeviceTable<u64>(std::move(factor));
  t.threshold = std::exp2(static_cast<double>(ctx.level_tables(level).q_bit_count - 2) - log2_q);
  return t;
}

NoiseTest noise_test(const Context& ctx, const Device& dev, std::size_t level,
                     const NoiseTables& tables) {
  const RnsBase& q = ctx.base_q(level);
  VEIL_REQUIRE(tables.factor.size() == q.size(),
               "noise_test: `tables` must be the noise tables of `level`");
  NoiseTest test;
  test.mods = q.moduli(dev);
  test.factor = tables.factor.data(dev);
  test.factor_host = tables.factor.host().data();
  test.limbs = q.size();
  test.threshold = tables.threshold;
  return test;
}

namespace {
template <class W>
PendingAny noise_exhausted_t(const Context& ctx, const Device& dev, const W* x, std::size_t level,
                             const NoiseTables& tables) {
  const NoiseTest test = noise_test(ctx, dev, level, tables);
  const std::size_t n = ctx.n();
  return any_of_async(dev, n, VEIL_LAMBDA(std::size_t j) { return test.exceeds(x, n, j); });
}
}  // namespace

PendingAny noise_exhausted_async(const Context& ctx, const Device& dev, ConstWordPtr x,
                                 std::size_t level, const NoiseTables& tables) {
  return VEIL_WITH_WORD(x.word_bits(),
                        return noise_exhausted_t<W>(ctx, dev, x.as<W>(), level, tables));
}

bool noise_exhausted(const Context& ctx, const Device& dev, ConstWordPtr x, std::size_t level,
                     const NoiseTables& tables) {
  return noise_exhausted_async(ctx, dev, x, level, tables).wait();
}

void throw_noise_exhausted() {
  throw InvalidArgument(
      "encrypted: its noise budget is exhausted (0 bits), so the decryption would be wrong; "
      "use fewer multiplications, larger parameters or modulus switching, or pass "
      "check_noise=False to decrypt anyway");
}

void check_noise_budget(const Context& ctx, const Device& dev, ConstWordPtr phase,
                        std::size_t level, const NoiseTables& tables) {
  if (noise_exhausted(ctx, dev, phase, level, tables)) throw_noise_exhausted();
}

int noise_budget_bits(const Context& ctx, const std::vector<u64>& host_x, std::size_t level) {
  const int noise_bits = max_centered_bit_count(host_x.data(), ctx.n(), ctx.base_q(level));
  const int budget = ctx.level_tables(level).q_bit_count - noise_bits - 1;
  return budget > 0 ? budget : 0;
}

}  // namespace veil
