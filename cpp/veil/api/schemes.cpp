#include "veil/api/schemes.h"

#include <algorithm>
#include <optional>
#include <string>

#include "veil/bfv/bfv.h"
#include "veil/bfv/bfv_tables.h"
#include "veil/bgv/bgv.h"
#include "veil/bgv/bgv_tables.h"
#include "veil/ckks/ckks.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/core/error.h"
#include "veil/ring/poly_ops.h"
#include "veil/rlwe/checks.h"
#include "veil/rlwe/plaintext.h"

namespace veil {

namespace {

// BFV/BGV: sum_i cts[i] * pts[i] with one accumulator in NTT form. Ciphertexts of a
// coefficient-form scheme (BFV) are brought into NTT form one at a time and the sum leaves it
// once (2 |Q_l| limb-NTTs per term and one inverse of 2 |Q_l| at the end, against 5 |Q_l| per
// multiply_plain); NTT-form ones (BGV) are used as they are. Plaintexts in NTT form
// (plain_to_ntt) are used as they are, the others lifted.
Ciphertext integer_plain_sum(const std::vector<const Ciphertext*>& cts,
                             const std::vector<const Plaintext*>& pts) {
  if (cts.empty()) throw InvalidArgument("encrypted: expected at least one ciphertext");
  if (pts.size() != cts.size()) {
    throw InvalidArgument("plain: expected " + std::to_string(cts.size()) +
                          " plaintexts (one per ciphertext), got " + std::to_string(pts.size()));
  }
  const Ciphertext& first = *cts[0];
  const ContextPtr& ctx = first.context();
  const Device& dev = first.device();
  const std::size_t level = first.level(), n = ctx->n();
  const bool coeff_scheme = !ctx->scheme_definition().ntt_form;
  // Coefficient-form ciphertexts enter the NTT-form accumulator one at a time and the sum
  // leaves it; those in NTT form (transform_to_ntt) enter as they are and the sum stays there.
  const bool to_ntt = coeff_scheme && !first.is_ntt_form();
  std::size_t size = 0;
  for (const Ciphertext* c : cts) {
    if (c->is_ntt_form() != first.is_ntt_form()) {
      throw InvalidArgument("encrypted: BFV ciphertexts in NTT and in coefficient form "
                            "(transform_to_ntt or transform_from_ntt some of them)");
    }
    if (c->level() != level) {
      throw InvalidArgument("encrypted: expected one level, got " + std::to_string(level) +
                            " and " + std::to_string(c->level()));
    }
    if (!coeff_scheme && c->correction_factor() != first.correction_factor()) {
      throw InvalidArgument("encrypted: BGV ciphertexts with different correction factors "
                            "(mod_switch one of them, or multiply them one by one)");
    }
    size = std::max(size, c->size());
  }
  const RnsBase& q = ctx->base_q(level);
  Ciphertext acc(ctx, dev, size, level, true);
  acc.set_correction_factor(first.correction_factor());
  backend::fill_zero(dev, acc.data().get(), acc.data().bytes(acc.word_count()));
  WordBuffer form(dev, to_ntt ? size * q.size() * n : 0, ctx->word_bits());
  for (std::size_t i = 0; i < cts.size(); ++i) {
    const Ciphertext& c = *cts[i];
    const Plaintext* pt = pts[i];
    if (pt == nullptr) throw InvalidArgument("plain: a plaintext is null");
    WordBuffer lifted;
    ConstWordPtr m;
    if (pt->is_ntt_form()) {
      check_ntt_plain(*ctx, dev, *pt, level, "plain");
      m = pt->data();
    } else {
      check_coeff_plain(*ctx, dev, *pt, "plain");
      lifted = lift_plain_ntt(*ctx, dev, *pt, level);
      m = lifted.data();
    }
    ConstWordPtr x = c.data();
    if (to_ntt) {
      copy_words(dev, form.data(), dev, c.data(), c.word_count());
      ntt_forward(dev, form.data(), c.size(), q, ctx->ntt());
      x = form.data();
    }
    const std::size_t pw = q.size() * n;
    for (std::size_t p = 0; p < c.size(); ++p) {
      poly::multiply_accumulate(dev, q, n, 1, x + p * pw, m, acc.data() + p * pw);
    }
  }
  if (to_ntt) {
    ntt_inverse(dev, acc.data(), acc.size(), q, ctx->ntt());
    acc.set_ntt_form(false);
  }
  return acc;
}

std::optional<Ciphertext> bgv_prepare_binary(const Ciphertext& a, const Ciphertext& b) {
  if (a.correction_factor() != b.correction_factor()) {
    return bgv::align_correction(b, a.correction_factor());
  }
  return std::nullopt;
}

std::optional<Ciphertext> ckks_prepare_binary(const Ciphertext& a, const Ciphertext& b) {
  ckks::check_scales(a.scale(), b.scale(), "encrypted2");
  return std::nullopt;
}

// Function-local: safe to use from any static initializer.
const SchemeOps& bfv_ops() {
  static const SchemeOps ops{
    &bfv_definition(),
    &bfv::encrypt,
    &bfv::encrypt_symmetric,
    [](const SecretKey& sk, const Ciphertext& ct, bool check_noise, int, const Prng*) {
      return bfv::decrypt(sk, ct, check_noise);
    },
    &bfv::invariant_noise_budget,
    [](Ciphertext& ct, const Plaintext& pt, bool subtract) {
      subtract ? bfv::sub_plain_inplace(ct, pt) : bfv::add_plain_inplace(ct, pt);
    },
    &bfv::multiply_plain_inplace,
    nullptr,
    &integer_plain_sum,
    &bfv::multiply,
    &bfv::mod_switch_to_next_inplace,
    nullptr,
    /*row_slots=*/true,
    /*rescales=*/false};
  return ops;
}

// Function-local: safe to use from any static initializer.
const SchemeOps& bgv_ops() {
  static const SchemeOps ops{
    &bgv_definition(),
    &bgv::encrypt,
    &bgv::encrypt_symmetric,
    [](const SecretKey& sk, const Ciphertext& ct, bool check_noise, int, const Prng*) {
      return bgv::decrypt(sk, ct, check_noise);
    },
    &bgv::invariant_noise_budget,
    &bgv::add_plain_inplace,
    &bgv::multiply_plain_inplace,
    nullptr,
    &integer_plain_sum,
    &bgv::multiply,
    &bgv::mod_switch_to_next_inplace,
    &bgv_prepare_binary,
    /*row_slots=*/true,
    /*rescales=*/false};
  return ops;
}

// Function-local: safe to use from any static initializer.
const SchemeOps& ckks_ops() {
  static const SchemeOps ops{
    &ckks_definition(),
    &ckks::encrypt,
    &ckks::encrypt_symmetric,
    [](const SecretKey& sk, const Ciphertext& ct, bool, int flooding_bits, const Prng* prng) {
      return ckks::decrypt(sk, ct, flooding_bits, prng);
    },
    nullptr,
    &ckks::add_plain_inplace,
    &ckks::multiply_plain_inplace,
    &ckks::multiply_plain,
    &ckks::multiply_plain_sum,
    &ckks::multiply,
    static_cast<void (*)(Ciphertext&)>(&ckks::mod_switch_to_next_inplace),
    &ckks_prepare_binary,
    /*row_slots=*/false,
    /*rescales=*/true};
  return ops;
}

}  // namespace

const SchemeOps& scheme_ops(SchemeType scheme) {
  switch (scheme) {
    case SchemeType::bfv: return bfv_ops();
    case SchemeType::bgv: return bgv_ops();
    case SchemeType::ckks: return ckks_ops();
  }
  throw InvalidArgument("scheme: unknown scheme");
}

const SchemeDefinition& scheme_definition_of(SchemeType scheme) {
  return *scheme_ops(scheme).definition;
}

}  // namespace veil
