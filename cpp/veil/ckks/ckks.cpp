#include "veil/ckks/ckks.h"

#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "veil/backend/table.h"
#include "veil/core/error.h"
#include "veil/ring/ntt.h"
#include "veil/ring/poly_ops.h"
#include "veil/ring/sampler.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/rlwe/checks.h"
#include "veil/rlwe/encrypt.h"
#include "veil/rlwe/ntt_ops.h"
#include "veil/rns/base_converter.h"

namespace veil::ckks {

namespace {

/// Throws naming `what` unless pt holds every word of its level's Q limbs ([level+1][N] or more:
/// an extended plaintext's first limbs are the ordinary ones). A plaintext stored as one period
/// (CKKSEncoder::encode_extended_periodic) has fewer and is refused.
void check_plain_words(const Context& ctx, const Plaintext& pt, const char* what) {
  const std::size_t need = (pt.level() + 1) * ctx.n();
  if (pt.word_count() < need) {
    throw InvalidArgument(std::string(what) + ": expected at least (level + 1) * N = " +
                          std::to_string(need) + " words, got " +
                          std::to_string(pt.word_count()) +
                          " (a plaintext stored as one period: CKKSEncoder::expand_periodic)");
  }
}

void check_plain(const Context& ctx, const Ciphertext& ct, const Plaintext& pt, const char* what) {
  check_compatible(ctx, ct.device(), pt.context(), pt.device(), what);
  if (!pt.is_ntt_form()) throw InvalidArgument(std::string(what) + ": expected a CKKS plaintext (NTT form)");
  check_plain_words(ctx, pt, what);
  if (pt.level() != ct.level()) {
    throw InvalidArgument(std::string(what) + ": is at level " + std::to_string(pt.level()) +
                          " but the ciphertext is at level " + std::to_string(ct.level()) +
                          " (encode at the ciphertext's level or mod_switch_to)");
  }
}

double log2_q(const Context& ctx, std::size_t level) {
  double b = 0;
  for (const Modulus& m : ctx.base_q(level).moduli()) b += std::log2(static_cast<double>(m.value));
  return b;
}

Ciphertext finish_encrypt(Ciphertext ct, const Plaintext& pt) {
  const Context& ctx = *ct.context();
  poly::add(ct.device(), ctx.base_q(ct.level()), ctx.n(), 1, ct.poly(0), pt.data(), ct.poly(0));
  ct.set_scale(pt.scale());
  return ct;
}

void check_encryptable(const Context& ctx, const Device& dev, const Plaintext& pt) {
  check_compatible(ctx, dev, pt.context(), pt.device(), "plain");
  if (!pt.is_ntt_form()) throw InvalidArgument("plain: expected a CKKS plaintext (NTT form)");
  check_plain_words(ctx, pt, "plain");
}

}  // namespace

void check_scales(double a, double b, const char* what) {
  if (std::fabs(a - b) > kScaleTolerance * std::max(std::fabs(a), std::fabs(b))) {
    throw InvalidArgument(std::string(what) + ": scale 2^" + std::to_string(std::log2(b)) +
                          " does not match 2^" + std::to_string(std::log2(a)) +
                          " (rescale or set_scale to align them)");
  }
}

Ciphertext encrypt(const PublicKey& pk, const Plaintext& pt, const Prng& prng) {
  check_encryptable(*pk.context(), pk.device(), pt);
  return finish_encrypt(encrypt_zero_asymmetric(pk, pt.level(), prng, true), pt);
}

Ciphertext encrypt_symmetric(const SecretKey& sk, const Plaintext& pt, const Prng& prng) {
  check_encryptable(*sk.context(), sk.device(), pt);
  return finish_encrypt(encrypt_zero_symmetric(sk, pt.level(), prng, true), pt);
}

Plaintext decrypt(const SecretKey& sk, const Ciphertext& ct, int flooding_bits,
                  const Prng* prng) {
  WordBuffer phase = decrypt_phase(sk, ct);
  if (flooding_bits > 0) {
    // Noise flooding (Li-Micciancio 2021, IND-CPA-D; OpenFHE's NOISE_FLOODING_DECRYPT): add a
    // fresh error uniform in [-2^b, 2^b) so the decryption no longer reveals the key's error.
    const Context& ctx = *ct.context();
    const RnsBase& q = ctx.base_q(ct.level());
    const int q_bits = ctx.level_tables(ct.level()).q_bit_count;
    if (flooding_bits > 62 || std::log2(ct.scale()) + flooding_bits + 2 >= q_bits) {
      throw InvalidArgument("noise_flooding_bits: " + std::to_string(flooding_bits) +
                            " bits of flooding noise and the scale 2^" +
                            std::to_string(std::log2(ct.scale())) + " do not fit in Q at level " +
                            std::to_string(ct.level()) + " (" + std::to_string(q_bits) + " bits)");
    }
    Prng fresh;
    const Prng& p = prng ? *prng : fresh;
    WordBuffer e(ct.device(), q.size() * ctx.n(), ctx.word_bits());
    e.set_secure();
    sample_flooding(ct.device(), e.data(), ctx.n(), q, p.next(), flooding_bits);
    ntt_forward(ct.device(), e.data(), 1, q, ctx.ntt());
    poly::add(ct.device(), q, ctx.n(), 1, phase.data(), e.data(), phase.data());
  }
  Plaintext pt(ct.context(), ct.device(), 0, ct.level(), true);
  pt.buffer() = std::move(phase);
  pt.set_scale(ct.scale());
  return pt;
}

Ciphertext multiply(const Ciphertext& a, const Ciphertext& b) {
  const ContextPtr& ctx = a.context();
  const double scale = a.scale() * b.scale();
  if (std::log2(scale) >= log2_q(*ctx, a.level()) - 1) {
    throw InvalidArgument("encrypted2: the product's scale 2^" + std::to_string(std::log2(scale)) +
                          " would exceed Q at level " + std::to_string(a.level()) +
                          " (rescale first)");
  }
  Ciphertext out = tensor_ntt(a, b);
  out.set_scale(scale);
  return out;
}

void multiply_plain(const Ciphertext& ct, const Plaintext& pt, Ciphertext& out) {
  const Context& ctx = *ct.context();
  check_plain(ctx, ct, pt, "plain");
  const double scale = ct.scale() * pt.scale();
  if (std::log2(scale) >= log2_q(ctx, ct.level()) - 1) {
    throw InvalidArgument("plain: the product's scale would exceed Q at this level (rescale first)");
  }
  poly::multiply_broadcast(ct.device(), ctx.base_q(ct.level()), ctx.n(), ct.size(), ct.data(),
                           pt.data(), out.data());
  out.set_scale(scale);
}

void multiply_plain_inplace(Ciphertext& ct, const Plaintext& pt) { multiply_plain(ct, pt, ct); }

Ciphertext multiply_plain_sum(const std::vector<const Ciphertext*>& cts,
                              const std::vector<const Plaintext*>& pts) {
  if (cts.empty() || cts.size() != pts.size()) {
    throw InvalidArgument("plain: expected as many plaintexts as ciphertexts (at least one), got " +
                          std::to_string(pts.size()) + " and " + std::to_string(cts.size()));
  }
  const Ciphertext& first = *cts[0];
  const Context& ctx = *first.context();
  const double scale = first.scale() * pts[0]->scale();
  std::vector<u64> a(cts.size()), b(cts.size());
  for (std::size_t i = 0; i < cts.size(); ++i) {
    const Ciphertext& c = *cts[i];
    if (c.size() != first.size() || c.level() != first.level()) {
      throw InvalidArgument("encrypted: every ciphertext needs the first one's size and level");
    }
    check_plain(ctx, c, *pts[i], "plain");
    check_scales(scale, c.scale() * pts[i]->scale(), "plain");
    a[i] = reinterpret_cast<u64>(c.data().get());
    b[i] = reinterpret_cast<u64>(pts[i]->data().get());
  }
  if (std::log2(scale) >= log2_q(ctx, first.level()) - 1) {
    throw InvalidArgument("plain: the product's scale would exceed Q at this level (rescale first)");
  }
  const Device& dev = first.device();
  const DeviceTable<u64> at(std::move(a)), bt(std::move(b));
  Ciphertext out(first.context(), dev, first.size(), first.level(), true);
  poly::dot_broadcast(dev, ctx.base_q(first.level()), ctx.n(), first.size(), at.data(dev),
                      bt.data(dev), cts.size(), out.data());
  out.set_scale(scale);
  out.set_key_id(first.key_id());
  return out;
}

void add_plain_inplace(Ciphertext& ct, const Plaintext& pt, bool subtract) {
  const Context& ctx = *ct.context();
  check_plain(ctx, ct, pt, "plain");
  check_scales(ct.scale(), pt.scale(), "plain");
  const RnsBase& q = ctx.base_q(ct.level());
  if (subtract) {
    poly::sub(ct.device(), q, ctx.n(), 1, ct.poly(0), pt.data(), ct.poly(0));
  } else {
    poly::add(ct.device(), q, ctx.n(), 1, ct.poly(0), pt.data(), ct.poly(0));
  }
}

RescaleStep rescale_step(const Ciphertext& ct) {
  const Context& ctx = *ct.context();
  const std::size_t level = ct.level();
  if (level == 0) {
    throw InvalidArgument("encrypted: is at the last level (0); it cannot be rescaled further");
  }
  const std::size_t target = rescale_target(ctx, level);
  double scale = ct.scale();
  for (std::size_t i = target + 1; i <= level; ++i) {
    scale /= static_cast<double>(ctx.base_q(level)[i].value);
  }
  check_ckks_scale(ctx, scale, target, "encrypted");  // before any work
  return {target, scale};
}

void rescale_to_next_inplace(Ciphertext& ct) {
  const RescaleStep step = rescale_step(ct);
  const Context& ctx = *ct.context();
  Ciphertext out =
      divide_by_top_primes(ct, step.target, ckks_tables(ctx, ct.level()).rescale, "encrypted");
  out.set_scale(step.scale);
  ct = std::move(out);
}

namespace {
template <class Obj>
WordBuffer drop_last_limb(const Obj& o, std::size_t polys, std::size_t level) {
  const std::size_t n = o.context()->n();
  WordBuffer out(o.device(), polys * level * n, o.word_bits());
  copy_word_rows(o.device(), out.data(), level * n, o.data(), (level + 1) * n, level * n, polys);
  return out;
}
}  // namespace

Ciphertext mod_raise(const Ciphertext& ct) {
  const ContextPtr& cp = ct.context();
  const Context& ctx = *cp;
  const std::size_t l = ct.level(), top = ctx.max_level(), n = ctx.n();
  if (ct.size() != 2) {
    throw InvalidArgument("encrypted: ModRaise expects size 2 (relinearize first), got size " +
                          std::to_string(ct.size()));
  }
  const std::size_t first_block = ckks_context_tables(ctx).groups[0];
  if (l >= first_block) {
    throw InvalidArgument("encrypted: ModRaise expects a level inside q_0's rescale block (< " +
                          std::to_string(first_block) + "), got level " +
                          std::to_string(l) + " (mod_switch_to a lower level first)");
  }
  if (top == l) {
    throw InvalidArgument("encrypted: the context has no level above q_0's block to raise to");
  }
  const CkksTables& tabs = ckks_tables(ctx, l);
  const Device& dev = ct.device();
  const std::size_t in_limbs = l + 1, out_limbs = top + 1;
  WordBuffer coeff(dev, 2 * in_limbs * n, ct.word_bits());
  copy_words(dev, coeff.data(), dev, ct.data(), 2 * in_limbs * n);
  if (ct.is_ntt_form()) ntt_inverse(dev, coeff.data(), 2, ctx.base_q(l), ctx.ntt());
  Ciphertext out(cp, dev, 2, top, true);
  copy_word_rows(dev, out.data(), out_limbs * n, coeff.data(), in_limbs * n, in_limbs * n, 2);
  tabs.raise.exact_convert(dev, coeff.data(), out.data() + in_limbs * n, n, 2, in_limbs * n,
                           out_limbs * n);
  ntt_forward(dev, out.data(), 2, ctx.base_q(top), ctx.ntt());
  out.set_scale(ct.scale());
  out.set_key_id(ct.key_id());
  return out;
}

void multiply_monomial_inplace(Ciphertext& ct, std::size_t k) {
  const Context& ctx = *ct.context();
  const std::size_t n = ctx.n();
  if (k >= 2 * n) {
    throw InvalidArgument("k: expected an exponent below 2N = " + std::to_string(2 * n) +
                          ", got " + std::to_string(k));
  }
  const RnsBase& q = ctx.base_q(ct.level());
  if (!ct.is_ntt_form()) throw InvalidArgument("encrypted: expected NTT form");
  // X^k (X^k = -X^(k-N) for k >= N) as one small polynomial (coefficients mod 3, centered: 2 is
  // -1) lifted into every limb on the device, then its NTT form, then a slot-wise product.
  std::vector<u64> mono(n, 0);
  mono[k % n] = k < n ? 1 : 2;
  const DeviceTable<u64> small(std::move(mono));
  WordBuffer m(ct.device(), q.size() * n, ct.word_bits());
  poly::lift_small(ct.device(), q, n, small.data(ct.device()), 3, true, m.data());
  ntt_forward(ct.device(), m.data(), 1, q, ctx.ntt());
  poly::multiply_broadcast(ct.device(), q, n, ct.size(), ct.data(), m.data(), ct.data());
}

namespace {
// round(x) mod q_l for every limb of `base`, for a finite double x of any magnitude: |x| =
// m * 2^e with m < 2^53 an integer (e > 0 once |x| >= 2^53), so x mod q = m * 2^e mod q exactly.
std::vector<u64> rounded_residues(double x, const RnsBase& base) {
  const bool neg = x < 0;
  const double a = std::fabs(std::nearbyint(x));
  u64 m = 0;
  int e = 0;
  if (a < 9007199254740992.0) {  // 2^53: an exact integer
    m = static_cast<u64>(a);
  } else {
    int exp = 0;
    const double frac = std::frexp(a, &exp);  // a = frac * 2^exp, frac in [0.5, 1)
    m = static_cast<u64>(std::ldexp(frac, 53));
    e = exp - 53;
  }
  std::vector<u64> out(base.size());
  for (std::size_t l = 0; l < base.size(); ++l) {
    const Modulus& q = base[l];
    u64 r = reduce_word(m, q);
    for (int i = 0; i < e; ++i) r = add_mod(r, r, q.value);  // * 2^e (e < 1024)
    out[l] = (neg && r != 0) ? q.value - r : r;
  }
  return out;
}

// out (npolys polynomials over q) = constant + sum_i operand_i * r_i through one
// poly::scalar_combination pass: operands as (pointer, words between polynomials), residues
// [count][limbs], constant [limbs] or empty. out may be an operand of the same stride.
void combine(const Device& dev, const RnsBase& q, std::size_t n, std::size_t npolys,
             const std::vector<std::pair<ConstWordPtr, std::size_t>>& operands,
             std::vector<u64> residues, std::vector<u64> constant, WordPtr out) {
  std::vector<u64> ptrs, strides;
  for (const auto& [ptr, stride] : operands) {
    ptrs.push_back(reinterpret_cast<u64>(ptr.get()));
    strides.push_back(stride);
  }
  const bool has_constant = !constant.empty();
  const DeviceTable<u64> pt(std::move(ptrs)), st(std::move(strides)), rt(std::move(residues)),
      ct(std::move(constant));
  poly::scalar_combination(dev, q, n, npolys, pt.data(dev), st.data(dev), rt.data(dev),
                           operands.size(), has_constant ? ct.data(dev) : nullptr, out);
}
}  // namespace

void multiply_scalar_inplace(Ciphertext& ct, double value, double scale) {
  if (!std::isfinite(value)) throw InvalidArgument("value: expected a finite number");
  if (!std::isfinite(scale) || scale < 1.0) {
    throw InvalidArgument("scale: expected a finite scale >= 1, got " + std::to_string(scale));
  }
  const Context& ctx = *ct.context();
  const double product = ct.scale() * scale;
  if (std::log2(product) >= log2_q(ctx, ct.level()) - 1) {
    throw InvalidArgument("scale: the product's scale would exceed Q at this level (rescale first)");
  }
  const RnsBase& q = ctx.base_q(ct.level());
  combine(ct.device(), q, ctx.n(), ct.size(), {{ct.data(), ct.poly_words()}},
          rounded_residues(value * scale, q), {}, ct.data());
  ct.set_scale(product);
}

Ciphertext scalar_combination(const std::vector<const Ciphertext*>& cts,
                              const std::vector<double>& values, double constant, double scale,
                              std::size_t level) {
  if (cts.empty()) throw InvalidArgument("encrypted: expected at least one ciphertext");
  if (values.size() != cts.size()) {
    throw InvalidArgument("values: expected " + std::to_string(cts.size()) + " values, got " +
                          std::to_string(values.size()));
  }
  const Ciphertext& first = *cts[0];
  const Context& ctx = *first.context();
  if (!std::isfinite(scale) || std::log2(scale) >= log2_q(ctx, level) - 1) {
    throw InvalidArgument("scale: 2^" + std::to_string(std::log2(scale)) +
                          " is not finite or does not fit Q at level " + std::to_string(level));
  }
  if (!std::isfinite(constant)) throw InvalidArgument("values: expected finite numbers");
  const RnsBase& q = ctx.base_q(level);
  std::vector<std::pair<ConstWordPtr, std::size_t>> operands;
  std::vector<u64> residues;
  residues.reserve(cts.size() * q.size());
  for (std::size_t i = 0; i < cts.size(); ++i) {
    const Ciphertext& c = *cts[i];
    if (c.size() != 2 || c.level() < level || !c.is_ntt_form()) {
      throw InvalidArgument("encrypted: expected NTT-form ciphertexts of size 2 at level >= " +
                            std::to_string(level));
    }
    const double mult = scale / c.scale();
    if (!std::isfinite(values[i])) throw InvalidArgument("values: expected finite numbers");
    if (mult < 1.0) {
      throw InvalidArgument("encrypted: term " + std::to_string(i) + "'s scale exceeds `scale`");
    }
    const std::vector<u64> r = rounded_residues(values[i] * mult, q);
    residues.insert(residues.end(), r.begin(), r.end());
    operands.emplace_back(c.data(), c.poly_words());
  }
  Ciphertext out(first.context(), first.device(), 2, level, true);
  combine(first.device(), q, ctx.n(), 2, operands, std::move(residues),
          constant != 0 ? rounded_residues(constant * scale, q) : std::vector<u64>{}, out.data());
  out.set_scale(scale);
  out.set_key_id(first.key_id());
  return out;
}

void add_scalar_inplace(Ciphertext& ct, double value) {
  if (!std::isfinite(value)) throw InvalidArgument("value: expected a finite number");
  const Context& ctx = *ct.context();
  const double v = value * ct.scale();
  if (std::log2(std::fabs(v) + 1) >= log2_q(ctx, ct.level()) - 2) {
    // The value is plaintext data (e.g. a served model's weight): not quoted.
    throw InvalidArgument("value: times the scale 2^" + std::to_string(std::log2(ct.scale())) +
                          " does not fit Q at level " + std::to_string(ct.level()));
  }
  if (!ct.is_ntt_form()) throw InvalidArgument("encrypted: expected NTT form");
  // A constant polynomial is the same constant at every NTT point: c0 = 1 * c0 + constant.
  const RnsBase& q = ctx.base_q(ct.level());
  combine(ct.device(), q, ctx.n(), 1, {{ct.poly(0), ct.poly_words()}},
          std::vector<u64>(q.size(), 1), rounded_residues(v, q), ct.poly(0));
}

void mod_switch_to_next_inplace(Ciphertext& ct) {
  if (ct.level() == 0) throw InvalidArgument("encrypted: is at level 0; no next level");
  Ciphertext out(ct.context(), ct.device(), ct.size(), ct.level() - 1, true);
  out.buffer() = drop_last_limb(ct, ct.size(), ct.level());
  out.set_scale(ct.scale());
  ct = std::move(out);
}

void mod_switch_to_next_inplace(Plaintext& pt) {
  if (!pt.is_ntt_form()) throw InvalidArgument("plain: expected a CKKS plaintext (NTT form)");
  if (pt.level() == 0) throw InvalidArgument("plain: is at level 0; no next level");
  Plaintext out(pt.context(), pt.device(), 0, pt.level() - 1, true);
  out.buffer() = drop_last_limb(pt, 1, pt.level());
  out.set_scale(pt.scale());
  pt = std::move(out);
}

}  // namespace veil::ckks
