#include "veil/bgv/bgv.h"

#include <cmath>
#include <string>

#include "veil/backend/launch.h"
#include "veil/bgv/bgv_tables.h"
#include "veil/core/error.h"
#include "veil/ring/poly_ops.h"
#include "veil/rlwe/encrypt.h"
#include "veil/rlwe/ntt_ops.h"
#include "veil/rlwe/plaintext.h"
#include "veil/rns/mod_down.h"

namespace veil::bgv {

WordBuffer lift_plain(const Context& ctx, const Device& dev, const Plaintext& pt,
                      std::size_t level) {
  return lift_plain_ntt(ctx, dev, pt, level);
}

namespace {
Ciphertext finish_encrypt(Ciphertext ct, const Plaintext& pt) {
  const Context& ctx = *ct.context();
  WordBuffer m = lift_plain(ctx, ct.device(), pt, ct.level());
  poly::add(ct.device(), ctx.base_q(ct.level()), ctx.n(), 1, ct.poly(0), m.data(), ct.poly(0));
  ct.set_correction_factor(1);
  return ct;
}
}  // namespace

Ciphertext encrypt(const PublicKey& pk, const Plaintext& pt, const Prng& prng) {
  const Context& ctx = *pk.context();
  check_coeff_plain(ctx, pk.device(), pt, "plain");
  return finish_encrypt(
      encrypt_zero_asymmetric(pk, ctx.max_level(), prng, true, ctx.plain_modulus()), pt);
}

Ciphertext encrypt_symmetric(const SecretKey& sk, const Plaintext& pt, const Prng& prng) {
  const Context& ctx = *sk.context();
  check_coeff_plain(ctx, sk.device(), pt, "plain");
  return finish_encrypt(
      encrypt_zero_symmetric(sk, ctx.max_level(), prng, true, ctx.plain_modulus()), pt);
}

Plaintext decrypt(const SecretKey& sk, const Ciphertext& ct, bool check_noise) {
  const ContextPtr& ctx = ct.context();
  const Device& dev = ct.device();
  const std::size_t n = ctx->n();
  WordBuffer phase = decrypt_phase(sk, ct);
  ntt_inverse(dev, phase.data(), 1, ctx->base_q(ct.level()), ctx->ntt());
  Plaintext pt(ctx, dev, n, ct.level(), false);
  // The exact centered conversion Q_l -> {t} gives [phase]_Q mod t (into 64-bit plaintext
  // words), times the inverse of the correction factor, with the noise test (one pass on a GPU).
  const BgvTables& tables = bgv_tables(*ctx, ct.level());
  const BaseConverter& to_plain = tables.to_plain;
  const u64 t = ctx->plain_modulus();
  const u64 f = ct.correction_factor() % t;
  const u64 finv = f == 1 ? 1 : inv_mod(f, t);
  const NoiseTest test =
      check_noise ? noise_test(*ctx, dev, ct.level(), tables.noise) : NoiseTest();
  const bool exhausted = VEIL_WITH_WORD(
      phase.word_bits(),
      return to_plain.exact_convert_checked<W>(dev, phase.data<W>(), pt.data<u64>(), n, finv, test)
          .wait());
  if (exhausted) throw_noise_exhausted();
  return pt;
}

int invariant_noise_budget(const SecretKey& sk, const Ciphertext& ct) {
  const ContextPtr& ctx = ct.context();
  WordBuffer phase = decrypt_phase(sk, ct);
  const RnsBase& q = ctx->base_q(ct.level());
  ntt_inverse(ct.device(), phase.data(), 1, q, ctx->ntt());
  // SEAL: bit_count(Q) - bit_count(||phase||) - 1 (BGV's phase is not multiplied by t).
  return noise_budget_bits(*ctx, phase.to_host(), ct.level());
}

Ciphertext multiply(const Ciphertext& a, const Ciphertext& b) {
  const ContextPtr& ctx = a.context();
  Ciphertext out = tensor_ntt(a, b);
  const Modulus& t = ctx->plain_mod();
  out.set_correction_factor(mul_mod(a.correction_factor() % t.value, b.correction_factor() % t.value, t));
  return out;
}

void multiply_plain_inplace(Ciphertext& ct, const Plaintext& pt) {
  const Context& ctx = *ct.context();
  WordBuffer lifted;
  ConstWordPtr m;
  if (pt.is_ntt_form()) {  // prepared by plain_to_ntt: no lift, no NTT
    check_ntt_plain(ctx, ct.device(), pt, ct.level(), "plain");
    m = pt.data();
  } else {
    check_coeff_plain(ctx, ct.device(), pt, "plain");
    lifted = lift_plain(ctx, ct.device(), pt, ct.level());
    m = lifted.data();
  }
  poly::multiply_broadcast(ct.device(), ctx.base_q(ct.level()), ctx.n(), ct.size(), ct.data(), m,
                           ct.data());
}

void add_plain_inplace(Ciphertext& ct, const Plaintext& pt, bool subtract) {
  const Context& ctx = *ct.context();
  check_coeff_plain(ctx, ct.device(), pt, "plain");
  WordBuffer m = lift_plain(ctx, ct.device(), pt, ct.level());
  const RnsBase& q = ctx.base_q(ct.level());
  const u64 f = ct.correction_factor() % ctx.plain_modulus();
  if (f != 1) poly::multiply_word(ct.device(), q, ctx.n(), 1, m.data(), f, m.data());
  if (subtract) {
    poly::sub(ct.device(), q, ctx.n(), 1, ct.poly(0), m.data(), ct.poly(0));
  } else {
    poly::add(ct.device(), q, ctx.n(), 1, ct.poly(0), m.data(), ct.poly(0));
  }
}

void multiply_scalar_inplace(Ciphertext& ct, u64 scalar) {
  const Context& ctx = *ct.context();
  poly::multiply_word(ct.device(), ctx.base_q(ct.level()), ctx.n(), ct.size(), ct.data(), scalar,
                      ct.data());
}

Ciphertext align_correction(const Ciphertext& b, u64 target_factor) {
  const Context& ctx = *b.context();
  const u64 t = ctx.plain_modulus();
  const u64 fb = b.correction_factor() % t, fa = target_factor % t;
  Ciphertext r(b);
  if (fa == fb) return r;
  const u64 ratio = mul_mod(fa, inv_mod(fb, t), ctx.plain_mod());
  multiply_scalar_inplace(r, ratio);
  r.set_correction_factor(fa);
  return r;
}

void mod_switch_to_next_inplace(Ciphertext& ct) {
  const ContextPtr& ctx = ct.context();
  const std::size_t level = ct.level();
  if (level == 0) throw InvalidArgument("encrypted: is at level 0; no next level");
  Ciphertext out =
      divide_by_top_primes(ct, level - 1, bgv_tables(*ctx, level).mod_switch, "encrypted");
  const Modulus& t = ctx->plain_mod();
  const u64 ql = ctx->base_q(level)[level].value;
  const u64 qinv = inv_mod(ql % t.value, t.value);
  out.set_correction_factor(mul_mod(ct.correction_factor() % t.value, qinv, t));
  ct = std::move(out);
}

}  // namespace veil::bgv
