#include "veil/bfv/bfv.h"

#include <cmath>
#include <string>

#include "veil/backend/launch.h"
#include "veil/bfv/bfv_tables.h"
#include "veil/core/error.h"
#include "veil/ring/poly_ops.h"
#include "veil/rlwe/encrypt.h"
#include "veil/rlwe/plaintext.h"
#include "veil/rns/mod_down.h"

namespace veil::bfv {

namespace {
template <class W>
void add_scaled_plain_t(const Context& ctx, const Device& dev, const u64* m, W* c0, bool subtract,
                        std::size_t level) {
  const std::size_t n = ctx.n();
  const RnsBase& q = ctx.base_q(level);
  const std::size_t limbs = q.size();
  const Modulus* mods = q.moduli(dev);
  const BfvTables& tables = bfv_tables(ctx, level);
  const u64* delta = tables.delta.data(dev);
  const u64 q_mod_t = tables.q_mod_t;
  const u64 t = ctx.plain_modulus();
  const u64 half_up = (t + 1) >> 1;
  for_each_limb(dev, 1, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) {
    const std::size_t j = i & (n - 1);
    const u64 v = m[j];
    // floor((q_mod_t * v + floor((t+1)/2)) / t): the rounding part of round(Q v / t).
    u128 num = static_cast<u128>(q_mod_t) * v + half_up;
    const u64 fix = static_cast<u64>(num / t);
    const Modulus mod = mods[l];
    const W add = static_cast<W>(
        mul_add_mod(delta[l], reduce_word(v, mod), reduce_word(fix, mod), mod));
    const W q = static_cast<W>(mod.value);
    c0[i] = subtract ? sub_mod(c0[i], add, q) : add_mod(c0[i], add, q);
  });
}
}  // namespace

void add_scaled_plain(const Context& ctx, const Device& dev, const u64* m, WordPtr c0,
                      bool subtract, std::size_t level) {
  VEIL_WITH_WORD(c0.word_bits(), add_scaled_plain_t<W>(ctx, dev, m, c0.as<W>(), subtract, level));
}

Ciphertext encrypt(const PublicKey& pk, const Plaintext& pt, const Prng& prng) {
  const Context& ctx = *pk.context();
  check_coeff_plain(ctx, pk.device(), pt, "plain");
  Ciphertext ct = encrypt_zero_asymmetric(pk, ctx.max_level(), prng, false);
  add_scaled_plain(ctx, pk.device(), pt.data<u64>(), ct.poly(0), false, ct.level());
  return ct;
}

Ciphertext encrypt_symmetric(const SecretKey& sk, const Plaintext& pt, const Prng& prng) {
  const Context& ctx = *sk.context();
  check_coeff_plain(ctx, sk.device(), pt, "plain");
  Ciphertext ct = encrypt_zero_symmetric(sk, ctx.max_level(), prng, false);
  add_scaled_plain(ctx, sk.device(), pt.data<u64>(), ct.poly(0), false, ct.level());
  return ct;
}

Plaintext decrypt(const SecretKey& sk, const Ciphertext& ct, bool check_noise) {
  const ContextPtr& ctx = ct.context();
  const Device& dev = ct.device();
  const std::size_t n = ctx->n();
  WordBuffer phase = decrypt_phase(sk, ct);
  Plaintext pt(ctx, dev, n, ctx->max_level(), false);
  const BfvTables& tables = bfv_tables(*ctx, ct.level());
  if (ctx->params().mul_method == MulMethod::behz) {  // BEHZ: 64-bit words only
    // The noise test is read after the scaling is queued: one synchronization, at the end.
    PendingAny exhausted =
        check_noise ? noise_exhausted_async(*ctx, dev, phase.data(), ct.level(), tables.noise)
                    : PendingAny();
    tables.behz->decrypt_scale_and_round(dev, phase.data<u64>(), pt.data<u64>(), n);
    if (exhausted.wait()) throw_noise_exhausted();
    return pt;
  }
  // HPS: the scaling and the noise test in one pass over the phase, read once at the end.
  const NoiseTest test =
      check_noise ? noise_test(*ctx, dev, ct.level(), tables.noise) : NoiseTest();
  const bool exhausted = VEIL_WITH_WORD(
      phase.word_bits(),
      return tables.scale_q.apply_checked<W>(dev, phase.data<W>(), pt.data<u64>(), n, test).wait());
  if (exhausted) throw_noise_exhausted();
  return pt;
}

void mod_switch_to_next_inplace(Ciphertext& ct) {
  const ContextPtr& ctx = ct.context();
  const std::size_t level = ct.level();
  if (level == 0) throw InvalidArgument("encrypted: is at level 0; no next level");
  // c -> round(c / q_l) mod Q_{l-1}: Delta_l m + e becomes Delta_{l-1} m + e / q_l + rounding
  // (SEAL's BFV mod_switch_scale_to_next; Brakerski-Gentry-Vaikuntanathan 2012 §4 for BFV).
  Ciphertext out(ctx, ct.device(), ct.size(), level - 1, false);
  bfv_tables(*ctx, level).mod_switch.apply(ct.device(), ct.data(), out.data(), ctx->n(),
                                           ct.size());
  ct = std::move(out);
}

int invariant_noise_budget(const SecretKey& sk, const Ciphertext& ct) {
  const ContextPtr& ctx = ct.context();
  WordBuffer phase = decrypt_phase(sk, ct);
  const RnsBase& q = ctx->base_q(ct.level());
  poly::multiply_word(ct.device(), q, ctx->n(), 1, phase.data(), ctx->plain_modulus(), phase.data());
  // SEAL: bit_count(Q) - bit_count(||t * phase||) - 1.
  return noise_budget_bits(*ctx, phase.to_host(), ct.level());
}

namespace {

template <class W>
Ciphertext multiply_hps(const Ciphertext& a, const Ciphertext& b) {
  const ContextPtr& ctx = a.context();
  const Device& dev = a.device();
  const BfvTables& t = bfv_tables(*ctx, a.level());
  const std::size_t n = ctx->n();
  const std::size_t lq = a.level() + 1, lr = t.base_r.size(), lqr = lq + lr;
  const std::size_t sa = a.size(), sb = b.size(), sc = sa + sb - 1;
  Buffer<W> ea(dev, sa * lqr * n), eb(dev, sb * lqr * n);
  auto extend = [&](const Ciphertext& src, Buffer<W>& dst, std::size_t s) {
    // Q limbs copied, R limbs by exact centered extension Q -> R (HPS: the tensor then
    // represents the true integer product), every polynomial in one call each.
    backend::copy_rows(dev, dst.data(), lqr * n * sizeof(W), src.data<W>(), lq * n * sizeof(W),
                       lq * n * sizeof(W), s);
    t.q_to_r.exact_convert<W>(dev, src.data<W>(), dst.data() + lq * n, n, s, lq * n, lqr * n);
    ntt_forward(dev, dst.data(), s, t.base_qr, ctx->ntt());
  };
  extend(a, ea, sa);
  if (&a == &b) {
    eb = ea.clone();
  } else {
    extend(b, eb, sb);
  }
  Buffer<W> prod(dev, sc * lqr * n);
  poly::tensor<W>(dev, t.base_qr, n, ea.data(), sa, eb.data(), sb, prod.data());
  ntt_inverse(dev, prod.data(), sc, t.base_qr, ctx->ntt());
  Buffer<W> in_r(dev, sc * lr * n);
  t.scale_qr.apply<W>(dev, prod.data(), in_r.data(), n, sc);
  Ciphertext out(ctx, dev, sc, a.level(), false);
  t.r_to_q.exact_convert<W>(dev, in_r.data(), out.data<W>(), n, sc);
  return out;
}

Ciphertext multiply_behz(const Ciphertext& a, const Ciphertext& b) {
  const ContextPtr& ctx = a.context();
  const Device& dev = a.device();
  const BfvTables& t = bfv_tables(*ctx, a.level());
  const BehzTools& behz = *t.behz;
  const std::size_t n = ctx->n();
  const std::size_t lq = a.level() + 1, lb = behz.base_bsk().size(), lqb = lq + lb;
  const std::size_t sa = a.size(), sb = b.size(), sc = sa + sb - 1;
  Buffer<u64> tmp(dev, (lb + 1) * n * std::max(sa, sb));
  Buffer<u64> ea(dev, sa * lqb * n), eb(dev, sb * lqb * n);
  auto extend = [&](const Ciphertext& src, Buffer<u64>& dst, std::size_t s) {
    // BEHZ steps 1-2: [x m~]_Q -> Bsk ∪ {m~}, then small Montgomery reduction to Bsk.
    behz.fastbconv_m_tilde(dev, src.data<u64>(), tmp.data(), n, s);
    for (std::size_t i = 0; i < s; ++i) {
      u64* d = dst.data() + i * lqb * n;
      backend::copy(dev, d, dev, src.poly<u64>(i), lq * n * sizeof(u64));
      behz.sm_mrq(dev, tmp.data() + i * (lb + 1) * n, d + lq * n, n, 1);
    }
    ntt_forward(dev, dst.data(), s, t.base_q_bsk, ctx->ntt());
  };
  extend(a, ea, sa);
  if (&a == &b) {
    eb = ea.clone();
  } else {
    extend(b, eb, sb);
  }
  Buffer<u64> prod(dev, sc * lqb * n);
  poly::tensor<u64>(dev, t.base_q_bsk, n, ea.data(), sa, eb.data(), sb, prod.data());
  ntt_inverse(dev, prod.data(), sc, t.base_q_bsk, ctx->ntt());
  // Steps 4-5: multiply by t, fast floor by Q into Bsk, Shenoy-Kumaresan back to Q.
  poly::multiply_word(dev, t.base_q_bsk, n, sc, prod.data(), ctx->plain_modulus(), prod.data());
  Buffer<u64> in_bsk(dev, sc * lb * n);
  behz.fast_floor(dev, prod.data(), in_bsk.data(), n, sc);
  Ciphertext out(ctx, dev, sc, a.level(), false);
  behz.fastbconv_sk(dev, in_bsk.data(), out.data<u64>(), n, sc);
  return out;
}

}  // namespace

Ciphertext multiply(const Ciphertext& a, const Ciphertext& b) {
  if (a.context()->params().mul_method == MulMethod::behz) return multiply_behz(a, b);
  return VEIL_WITH_WORD(a.word_bits(), return multiply_hps<W>(a, b));
}

void multiply_plain_inplace(Ciphertext& ct, const Plaintext& pt) {
  // Coefficient form, or NTT form from Evaluator::transform_to_ntt (no transforms here then).
  const Context& ctx = *ct.context();
  const Device& dev = ct.device();
  const std::size_t n = ctx.n();
  const RnsBase& q = ctx.base_q(ct.level());
  WordBuffer lifted;
  ConstWordPtr m;
  if (pt.is_ntt_form()) {  // prepared by Evaluator::transform_to_ntt: no lift, no NTT
    check_ntt_plain(ctx, dev, pt, ct.level(), "plain");
    m = pt.data();
  } else {
    check_coeff_plain(ctx, dev, pt, "plain");
    lifted = lift_plain_ntt(ctx, dev, pt, ct.level());  // the centered lift, in NTT form
    m = lifted.data();
  }
  const bool coefficients = !ct.is_ntt_form();
  if (coefficients) ntt_forward(dev, ct.data(), ct.size(), q, ctx.ntt());
  poly::multiply_broadcast(dev, q, n, ct.size(), ct.data(), m, ct.data());
  if (coefficients) ntt_inverse(dev, ct.data(), ct.size(), q, ctx.ntt());
}

void add_plain_inplace(Ciphertext& ct, const Plaintext& pt) {
  check_coeff_plain(*ct.context(), ct.device(), pt, "plain");
  add_scaled_plain(*ct.context(), ct.device(), pt.data<u64>(), ct.poly(0), false, ct.level());
}

void sub_plain_inplace(Ciphertext& ct, const Plaintext& pt) {
  check_coeff_plain(*ct.context(), ct.device(), pt, "plain");
  add_scaled_plain(*ct.context(), ct.device(), pt.data<u64>(), ct.poly(0), true, ct.level());
}

}  // namespace veil::bfv
