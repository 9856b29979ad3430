#include "veil/api/evaluator.h"
#include "veil/api/schemes.h"

#include <algorithm>
#include <cstdlib>
#include <optional>
#include <string>

#include "veil/bfv/bfv.h"
#include "veil/bgv/bgv.h"
#include "veil/ckks/ckks.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/core/error.h"
#include "veil/ring/poly_ops.h"
#include "veil/rlwe/encrypt.h"
#include "veil/rlwe/keyswitch.h"
#include "veil/rlwe/plaintext.h"

namespace veil {

Evaluator::Evaluator(ContextPtr ctx) : ctx_(std::move(ctx)) {
  if (!ctx_) throw InvalidArgument("context: is empty");
}

void Evaluator::check(const Ciphertext& a, const char* what, bool bfv_ntt) const {
  check_ciphertext(*ctx_, a, what, bfv_ntt);
}

namespace {
// The context's scheme operations (api/schemes.h): one table lookup per operation.
const SchemeOps& ops(const Context& ctx) { return scheme_ops(ctx.scheme()); }

// Checks the operands of add/sub (rlwe/checks.h) and returns b made compatible with a by the
// scheme (SchemeOps::prepare_binary; nullopt: use b as it is).
std::optional<Ciphertext> prepare_binary(const Context& ctx, const Ciphertext& a,
                                         const Ciphertext& b, u64& key_id) {
  key_id = check_ciphertext_pair(ctx, a, b, "encrypted1", "encrypted2", /*bfv_ntt=*/true);
  const SchemeOps& o = ops(ctx);
  return o.prepare_binary ? o.prepare_binary(a, b) : std::nullopt;
}

// The gate of the CKKS-only operations (the other schemes have no rescale, scale or slot-wise
// real constants): the scheme functions they call do not check their operands again.
// Called after the operands' check, so the ciphertext's scheme is the context's.
void require_ckks(const Context& ctx, const char* op) {
  if (!ops(ctx).rescales) {
    throw InvalidArgument(std::string("encrypted: is a ") + ctx.scheme_definition().name +
                          " ciphertext; " + op + " is a CKKS operation");
  }
}

// The result of an operation keeps its operands' key set.
Ciphertext with_key(Ciphertext c, u64 id) {
  c.set_key_id(id);
  return c;
}

// A ciphertext shaped like `a` (size, level, form, scale, correction factor) for an out-of-place
// result that a kernel writes in full: the words are not initialized (no copy of `a` first, which
// cost a third of an out-of-place add's memory traffic; bench/NOTES.md).
Ciphertext shaped_like(const ContextPtr& ctx, const Ciphertext& a) {
  Ciphertext r(ctx, a.device(), a.size(), a.level(), a.is_ntt_form());
  r.set_scale(a.scale());
  r.set_correction_factor(a.correction_factor());
  return r;
}
}  // namespace

void Evaluator::add_inplace(Ciphertext& a, const Ciphertext& b_in) const {
  u64 id = 0;
  const std::optional<Ciphertext> aligned = prepare_binary(*ctx_, a, b_in, id);
  const Ciphertext& b = aligned ? *aligned : b_in;
  const RnsBase& q = ctx_->base_q(a.level());
  const std::size_t common = std::min(a.size(), b.size());
  if (b.size() > a.size()) {
    Ciphertext grown(ctx_, a.device(), b.size(), a.level(), a.is_ntt_form());
    grown.buffer().zero();
    copy_words(a.device(), grown.data(), a.device(), a.data(), a.word_count());
    copy_words(a.device(), grown.poly(a.size()), a.device(), b.poly(a.size()),
               (b.size() - a.size()) * b.poly_words());
    grown.set_scale(a.scale());
    grown.set_correction_factor(a.correction_factor());
    a = std::move(grown);
  }
  poly::add(a.device(), q, ctx_->n(), common, a.data(), b.data(), a.data());
  a.set_key_id(id);
  check_not_transparent(a, "add");
}

namespace {
// r = a op b for operands of equal size, written in one pass (poly::add or poly::sub).
using PolyBinary = void (*)(const Device&, const RnsBase&, std::size_t, std::size_t,
                            ConstWordPtr, ConstWordPtr, WordPtr);
Ciphertext binary_out_of_place(const ContextPtr& ctx, const Ciphertext& a,
                               const Ciphertext& b_in, PolyBinary op, const char* name) {
  u64 id = 0;
  const std::optional<Ciphertext> aligned = prepare_binary(*ctx, a, b_in, id);
  const Ciphertext& b = aligned ? *aligned : b_in;
  Ciphertext r = shaped_like(ctx, a);
  op(a.device(), ctx->base_q(a.level()), ctx->n(), a.size(), a.data(), b.data(), r.data());
  r.set_key_id(id);
  check_not_transparent(r, name);
  return r;
}
}  // namespace

Ciphertext Evaluator::add(const Ciphertext& a, const Ciphertext& b) const {
  if (b.size() != a.size()) {  // sizes differ: grow and copy (add_inplace)
    Ciphertext r(a);
    add_inplace(r, b);
    return r;
  }
  return binary_out_of_place(ctx_, a, b, static_cast<PolyBinary>(&poly::add), "add");
}

void Evaluator::sub_inplace(Ciphertext& a, const Ciphertext& b_in) const {
  u64 id = 0;
  const std::optional<Ciphertext> aligned = prepare_binary(*ctx_, a, b_in, id);
  const Ciphertext& b = aligned ? *aligned : b_in;
  if (b.size() > a.size()) {
    Ciphertext nb = negate(b);
    add_inplace(a, nb);
    return;
  }
  const RnsBase& q = ctx_->base_q(a.level());
  poly::sub(a.device(), q, ctx_->n(), b.size(), a.data(), b.data(), a.data());
  a.set_key_id(id);
  check_not_transparent(a, "sub");
}

Ciphertext Evaluator::sub(const Ciphertext& a, const Ciphertext& b) const {
  if (b.size() != a.size()) {
    Ciphertext r(a);
    sub_inplace(r, b);
    return r;
  }
  return binary_out_of_place(ctx_, a, b, static_cast<PolyBinary>(&poly::sub), "sub");
}

void Evaluator::negate_inplace(Ciphertext& a) const {
  check(a, "encrypted", /*bfv_ntt=*/true);
  poly::negate(a.device(), ctx_->base_q(a.level()), ctx_->n(), a.size(), a.data(), a.data());
}

Ciphertext Evaluator::negate(const Ciphertext& a) const {
  check(a, "encrypted", /*bfv_ntt=*/true);
  Ciphertext r = shaped_like(ctx_, a);
  poly::negate(a.device(), ctx_->base_q(a.level()), ctx_->n(), a.size(), a.data(), r.data());
  r.set_key_id(a.key_id());
  return r;
}

Ciphertext Evaluator::add_many(const std::vector<Ciphertext>& cts) const {
  if (cts.empty()) throw InvalidArgument("encrypteds: expected at least one ciphertext");
  for (const Ciphertext& c : cts) check(c, "encrypteds", true);  // all, even a single one
  Ciphertext r(cts[0]);
  for (std::size_t i = 1; i < cts.size(); ++i) add_inplace(r, cts[i]);
  return r;
}

void Evaluator::add_plain_inplace(Ciphertext& a, const Plaintext& p) const {
  check(a, "encrypted");
  ops(*ctx_).add_plain(a, p, false);
}

void Evaluator::sub_plain_inplace(Ciphertext& a, const Plaintext& p) const {
  check(a, "encrypted");
  ops(*ctx_).add_plain(a, p, true);
}

void Evaluator::multiply_plain_inplace(Ciphertext& a, const Plaintext& p) const {
  check(a, "encrypted", /*bfv_ntt=*/true);
  const u64 id = a.key_id();
  ops(*ctx_).multiply_plain_inplace(a, p);
  a.set_key_id(id);
  check_not_transparent(a, "multiply_plain");
}

Ciphertext Evaluator::add_plain(const Ciphertext& a, const Plaintext& p) const {
  Ciphertext r(a);
  add_plain_inplace(r, p);
  return r;
}
Ciphertext Evaluator::sub_plain(const Ciphertext& a, const Plaintext& p) const {
  Ciphertext r(a);
  sub_plain_inplace(r, p);
  return r;
}
Ciphertext Evaluator::multiply_plain(const Ciphertext& a, const Plaintext& p) const {
  const SchemeOps& o = ops(*ctx_);
  if (!o.multiply_plain) {
    Ciphertext r(a);
    multiply_plain_inplace(r, p);
    return r;
  }
  check(a, "encrypted");
  Ciphertext r = shaped_like(ctx_, a);  // one slot-wise pass writes the whole result
  o.multiply_plain(a, p, r);
  r.set_key_id(a.key_id());
  check_not_transparent(r, "multiply_plain");
  return r;
}

Ciphertext Evaluator::multiply(const Ciphertext& a, const Ciphertext& b) const {
  const u64 id = check_ciphertext_pair(*ctx_, a, b, "encrypted1", "encrypted2");
  return with_key(ops(*ctx_).multiply(a, b), id);
}

Ciphertext Evaluator::square(const Ciphertext& a) const {
  check(a, "encrypted");
  return with_key(ops(*ctx_).multiply(a, a), a.key_id());
}

namespace {
// The operands of a relinearization (`op` names it): a size-3 ciphertext and keys of its context,
// device and key set. Returns the joined key-set id.
u64 check_relinearize(const Context& ctx, const Ciphertext& a, const RelinKeys& rlk,
                      const char* op) {
  const u64 id = check_key(ctx, a, rlk, "relin_keys");
  if (a.size() != 3) {
    throw InvalidArgument(std::string("encrypted: ") + op +
                          " expects a ciphertext of size 3, got size " + std::to_string(a.size()));
  }
  return id;
}
}  // namespace

void Evaluator::relinearize_inplace(Ciphertext& a, const RelinKeys& rlk) const {
  check(a, "encrypted");
  const u64 id = check_relinearize(*ctx_, a, rlk, "relinearize");
  Ciphertext out(ctx_, a.device(), 2, a.level(), a.is_ntt_form());
  copy_words(a.device(), out.data(), a.device(), a.data(), 2 * a.poly_words());
  out.set_scale(a.scale());
  out.set_correction_factor(a.correction_factor());
  key_switch_accumulate(*ctx_, a.device(), a.level(), a.poly(2), a.is_ntt_form(), rlk.key(),
                        out.poly(0), out.poly(1), a.is_ntt_form());
  out.set_key_id(id);
  a = std::move(out);
}

Ciphertext Evaluator::relinearize_rescale(const Ciphertext& a, const RelinKeys& rlk) const {
  check(a, "encrypted");
  require_ckks(*ctx_, "relinearize_rescale");
  const u64 id = check_relinearize(*ctx_, a, rlk, "relinearize_rescale");
  const std::size_t level = a.level();
  const ckks::RescaleStep step = ckks::rescale_step(a);
  const KeySwitchDigits digits = key_switch_mod_up(*ctx_, a.device(), level, a.poly(2), true);
  Ciphertext out(ctx_, a.device(), 2, step.target, true);
  key_switch_rescale(*ctx_, a.device(), level, digits, rlk.key(), a.poly(0), a.poly(1),
                     ckks_tables(*ctx_, level).rescale_down, out.data());
  out.set_scale(step.scale);
  out.set_key_id(id);
  return out;
}

Ciphertext Evaluator::multiply_relinearize_rescale(const Ciphertext& a, const Ciphertext& b,
                                                   const RelinKeys& rlk) const {
  check(a, "encrypted1");
  require_ckks(*ctx_, "multiply_relinearize_rescale");  // before the product is computed
  return relinearize_rescale(multiply(a, b), rlk);
}

Ciphertext Evaluator::relinearize(const Ciphertext& a, const RelinKeys& rlk) const {
  Ciphertext r(a);
  relinearize_inplace(r, rlk);
  return r;
}

Ciphertext Evaluator::multiply_many(const std::vector<Ciphertext>& cts, const RelinKeys& rlk) const {
  if (cts.empty()) throw InvalidArgument("encrypteds: expected at least one ciphertext");
  for (const Ciphertext& c : cts) check(c, "encrypteds");  // all of them, even a single one
  check_key(*ctx_, cts[0], rlk, "relin_keys");
  std::vector<Ciphertext> layer(cts);
  while (layer.size() > 1) {
    std::vector<Ciphertext> next;
    for (std::size_t i = 0; i + 1 < layer.size(); i += 2) {
      check_interrupt();
      next.push_back(relinearize(multiply(layer[i], layer[i + 1]), rlk));
    }
    if (layer.size() % 2) next.push_back(std::move(layer.back()));
    layer = std::move(next);
  }
  return layer[0];
}

Ciphertext Evaluator::exponentiate(const Ciphertext& a, std::uint64_t exponent,
                                   const RelinKeys& rlk) const {
  check(a, "encrypted");
  if (exponent == 0) throw InvalidArgument("exponent: expected >= 1, got 0");
  Ciphertext base(a);
  std::optional<Ciphertext> result;
  while (exponent) {
    check_interrupt();
    if (exponent & 1) result = result ? relinearize(multiply(*result, base), rlk) : base;
    exponent >>= 1;
    if (exponent) base = relinearize(square(base), rlk);
  }
  return *result;
}

Ciphertext Evaluator::galois_with_digits(const Ciphertext& a, const KeySwitchDigits& digits, u32 elt,
                                         const GaloisKeys& gk, u64 key_id) const {
  const KSwitchKey& key = gk.key(elt);
  const std::size_t n = ctx_->n();
  const RnsBase& q = ctx_->base_q(a.level());
  Ciphertext out(ctx_, a.device(), 2, a.level(), a.is_ntt_form());
  out.set_scale(a.scale());
  out.set_correction_factor(a.correction_factor());
  out.set_key_id(key_id);
  if (a.is_ntt_form()) {
    poly::automorphism_ntt(a.device(), q, n, 1, elt, a.poly(0), out.poly(0));
  } else {
    poly::automorphism_coeff(a.device(), q, n, 1, elt, a.poly(0), out.poly(0));
  }
  fill_zero_words(a.device(), out.poly(1), a.poly_words());
  key_switch_inner(*ctx_, a.device(), a.level(), digits, key, out.poly(0), out.poly(1),
                   a.is_ntt_form(), elt);
  return out;
}

Ciphertext Evaluator::apply_galois(const Ciphertext& a, u32 galois_elt, const GaloisKeys& gk) const {
  check(a, "encrypted");
  const u64 id = check_key(*ctx_, a, gk, "galois_keys");
  if (a.size() != 2) {
    throw InvalidArgument("encrypted: Galois automorphisms expect size 2 (relinearize first), got " +
                          std::to_string(a.size()));
  }
  if (galois_elt % 2 == 0 || galois_elt >= 2 * ctx_->n()) {
    throw InvalidArgument("galois_elt: expected an odd element below 2N, got " +
                          std::to_string(galois_elt));
  }
  gk.key(galois_elt);  // throws a clear error if missing
  const KeySwitchDigits digits = key_switch_mod_up(*ctx_, a.device(), a.level(), a.poly(1), a.is_ntt_form());
  return galois_with_digits(a, digits, galois_elt, gk, id);
}

Ciphertext Evaluator::switch_key(const Ciphertext& a, const SwitchingKey& key) const {
  check(a, "encrypted");
  if (key.empty()) throw InvalidArgument("switching_key: is empty");
  check_compatible(*ctx_, a.device(), key.context(), key.device(), "switching_key");
  if (a.size() != 2) {
    throw InvalidArgument("encrypted: key switching expects size 2 (relinearize first), got " +
                          std::to_string(a.size()));
  }
  if (a.level() > key.max_level()) {
    throw InvalidArgument("encrypted: is at level " + std::to_string(a.level()) +
                          " but the switching key serves levels <= " +
                          std::to_string(key.max_level()) + " (mod_switch_to it first)");
  }
  if (a.key_id() && key.from_key_id() && a.key_id() != key.from_key_id()) {
    throw InvalidArgument("switching_key: switches from another key set than the ciphertext's");
  }
  Ciphertext out = a;
  fill_zero_words(a.device(), out.poly(1), a.poly_words());
  key_switch_accumulate(*ctx_, a.device(), a.level(), a.poly(1), a.is_ntt_form(), key.key(),
                        out.poly(0), out.poly(1), a.is_ntt_form());
  out.set_key_id(key.key_id());
  return out;
}

Ciphertext Evaluator::mod_raise(const Ciphertext& a) const {
  check(a, "encrypted");
  require_ckks(*ctx_, "mod_raise");
  return ckks::mod_raise(a);
}

u64 Evaluator::check_all(const std::vector<const Ciphertext*>& cts, bool bfv_ntt,
                         const char* what) const {
  u64 id = 0;
  for (const Ciphertext* c : cts) {
    if (c == nullptr) throw InvalidArgument(std::string(what) + ": a ciphertext is null");
    check(*c, what, bfv_ntt);
    if (c->device() != cts[0]->device()) {
      throw TypeMismatch(std::string(what) + ": lives on " + c->device().str() +
                         " but the first ciphertext lives on " + cts[0]->device().str());
    }
    id = join_key_sets(id, c->key_id(), what);
  }
  return id;
}

Ciphertext Evaluator::multiply_plain_sum(const std::vector<const Ciphertext*>& cts,
                                         const std::vector<const Plaintext*>& pts) const {
  const u64 id = check_all(cts, /*bfv_ntt=*/true);
  for (const Plaintext* p : pts) {
    if (p == nullptr) throw InvalidArgument("plain: a plaintext is null");
  }
  const SchemeOps& o = ops(*ctx_);
  Ciphertext r = with_key(o.multiply_plain_sum(cts, pts), id);
  // as multiply_plain: no transparent result (CKKS's encodings are never transparent)
  if (!o.rescales) check_not_transparent(r, "multiply_plain_sum");
  return r;
}

namespace {
// BFV: every polynomial of `a` to (to_ntt) or from the NTT domain over Q_level, in place.
void transform_bfv(const Context& ctx, Ciphertext& a, bool to_ntt) {
  if (ctx.scheme_definition().ntt_form) {
    throw InvalidArgument(std::string("encrypted: ") + to_string(ctx.scheme()) +
                          " ciphertexts are always in NTT form (only BFV ciphertexts move)");
  }
  if (a.is_ntt_form() == to_ntt) {
    throw InvalidArgument(std::string("encrypted: is already in ") +
                          (to_ntt ? "NTT" : "coefficient") + " form");
  }
  const RnsBase& q = ctx.base_q(a.level());
  if (to_ntt) {
    ntt_forward(a.device(), a.data(), a.size(), q, ctx.ntt());
  } else {
    ntt_inverse(a.device(), a.data(), a.size(), q, ctx.ntt());
  }
  a.set_ntt_form(to_ntt);
  a.set_uniform_seed(std::nullopt);  // the seed expands the coefficient form only
}
}  // namespace

void Evaluator::transform_to_ntt_inplace(Ciphertext& a) const {
  check(a, "encrypted", /*bfv_ntt=*/true);
  transform_bfv(*ctx_, a, true);
}

Ciphertext Evaluator::transform_to_ntt(const Ciphertext& a) const {
  Ciphertext r(a);
  transform_to_ntt_inplace(r);
  return r;
}

void Evaluator::transform_from_ntt_inplace(Ciphertext& a) const {
  check(a, "encrypted", /*bfv_ntt=*/true);
  transform_bfv(*ctx_, a, false);
}

Ciphertext Evaluator::transform_from_ntt(const Ciphertext& a) const {
  Ciphertext r(a);
  transform_from_ntt_inplace(r);
  return r;
}

Plaintext Evaluator::transform_to_ntt(const Plaintext& plain, std::size_t level) const {
  if (!plain.empty()) {
    check_compatible(*ctx_, plain.device(), plain.context(), plain.device(), "plain");
  }
  return plain_to_ntt(plain, level);
}

std::vector<Ciphertext> Evaluator::multiply_diagonals_bsgs(
    const std::vector<const Ciphertext*>& inputs,
    const std::vector<std::vector<ckks::BsgsGiant>>& outputs, const GaloisKeys& gk) const {
  const u64 id = join_key_sets(check_all(inputs, false, "inputs"), gk.key_id(), "galois_keys");
  require_ckks(*ctx_, "multiply_diagonals_bsgs");
  std::vector<Ciphertext> out = ckks::multiply_diagonals_bsgs(inputs, outputs, gk);
  for (Ciphertext& c : out) c.set_key_id(id);
  return out;
}

Ciphertext Evaluator::scalar_combination(const std::vector<const Ciphertext*>& cts,
                                         const std::vector<double>& values, double constant,
                                         double scale, std::size_t level) const {
  const u64 id = check_all(cts);
  require_ckks(*ctx_, "scalar_combination");
  return with_key(ckks::scalar_combination(cts, values, constant, scale, level), id);
}

Ciphertext Evaluator::multiply_scalar(const Ciphertext& a, double value, double scale) const {
  check(a, "encrypted");
  require_ckks(*ctx_, "multiply_scalar");
  Ciphertext out = a;
  ckks::multiply_scalar_inplace(out, value, scale);
  return out;
}

Ciphertext Evaluator::add_scalar(const Ciphertext& a, double value) const {
  check(a, "encrypted");
  require_ckks(*ctx_, "add_scalar");
  Ciphertext out = a;
  ckks::add_scalar_inplace(out, value);
  return out;
}

Ciphertext Evaluator::multiply_monomial(const Ciphertext& a, std::size_t k) const {
  check(a, "encrypted");
  require_ckks(*ctx_, "multiply_monomial");
  Ciphertext out = a;
  ckks::multiply_monomial_inplace(out, k);
  return out;
}

std::vector<int> naf_decompose(int step) {
  std::vector<int> out;
  long long v = step;
  int power = 0;
  while (v != 0) {
    if (v & 1) {
      int digit = static_cast<int>(2 - (((v % 4) + 4) % 4));  // +1 or -1
      out.push_back(digit * (1 << power));
      v -= digit;
    }
    v /= 2;
    ++power;
  }
  return out;
}

Ciphertext Evaluator::rotate_rows(const Ciphertext& a, int steps, const GaloisKeys& gk) const {
  check(a, "encrypted");
  if (!ops(*ctx_).row_slots) {
    throw InvalidArgument("rotate_rows: not defined for CKKS (use rotate_vector)");
  }
  return rotate_generic(a, steps, gk);
}

Ciphertext Evaluator::rotate_vector(const Ciphertext& a, int steps, const GaloisKeys& gk) const {
  check(a, "encrypted");
  if (ops(*ctx_).row_slots) {
    throw InvalidArgument("rotate_vector: defined for CKKS only (use rotate_rows)");
  }
  return rotate_generic(a, steps, gk);
}

Ciphertext Evaluator::conjugate(const Ciphertext& a, const GaloisKeys& gk) const {
  if (ops(*ctx_).row_slots) {
    throw InvalidArgument("conjugate: defined for CKKS only (use rotate_columns)");
  }
  return apply_galois(a, ctx_->galois_elt_column(), gk);
}

Ciphertext Evaluator::rotate_generic(const Ciphertext& a, int steps, const GaloisKeys& gk) const {
  const int row = static_cast<int>(ctx_->n() / 2);
  ctx_->galois_elt_from_step(steps);  // |steps| < N/2 (SEAL rejects larger steps too)
  const int s = steps;
  if (s == 0) return a;
  const u32 elt = ctx_->galois_elt_from_step(s);
  if (gk.has_key(elt)) return apply_galois(a, elt, gk);
  Ciphertext r(a);
  for (int part : naf_decompose(s)) {
    if (part % row == 0) continue;  // a rotation by N/2 is the identity on rows of N/2 slots
    const u32 e = ctx_->galois_elt_from_step(part % row);
    if (!gk.has_key(e)) {
      throw InvalidArgument("galois_keys: no key for step " + std::to_string(steps) +
                            " nor for the power-of-two step " + std::to_string(part) +
                            " needed to compose it");
    }
    r = apply_galois(r, e, gk);
  }
  return r;
}

Ciphertext Evaluator::rotate_columns(const Ciphertext& a, const GaloisKeys& gk) const {
  if (!ops(*ctx_).row_slots) {
    throw InvalidArgument("rotate_columns: not defined for CKKS (use conjugate)");
  }
  return apply_galois(a, ctx_->galois_elt_column(), gk);
}

std::vector<Ciphertext> Evaluator::rotate_many(const Ciphertext& a, const std::vector<int>& steps,
                                               const GaloisKeys& gk) const {
  check(a, "encrypted");
  const u64 id = check_key(*ctx_, a, gk, "galois_keys");
  if (a.size() != 2) throw InvalidArgument("encrypted: expected size 2 (relinearize first)");
  std::vector<u32> elts;
  for (int s : steps) elts.push_back(ctx_->galois_elt_from_step(s));
  std::optional<KeySwitchDigits> digits;  // the shared decomposition, computed once if needed
  std::vector<Ciphertext> out;
  for (std::size_t i = 0; i < steps.size(); ++i) {
    const u32 e = elts[i];
    if (e == 1) {
      out.push_back(a);
    } else if (gk.has_key(e)) {
      if (!digits) {
        digits = key_switch_mod_up(*ctx_, a.device(), a.level(), a.poly(1), a.is_ntt_form());
      }
      out.push_back(galois_with_digits(a, *digits, e, gk, id));
    } else {
      out.push_back(rotate_generic(a, steps[i], gk));  // NAF composition, as rotate_rows
    }
  }
  return out;
}

}  // namespace veil

namespace veil {

void Evaluator::mod_switch_to_next_inplace(Ciphertext& a) const {
  check(a, "encrypted");
  const u64 id = a.key_id();
  ops(*ctx_).mod_switch_to_next(a);
  a.set_key_id(id);
}

Ciphertext Evaluator::mod_switch_to_next(const Ciphertext& a) const {
  Ciphertext r(a);
  mod_switch_to_next_inplace(r);
  return r;
}

Ciphertext Evaluator::mod_switch_to(const Ciphertext& a, std::size_t level) const {
  check(a, "encrypted");
  if (level > a.level()) {
    throw InvalidArgument("level: " + std::to_string(level) + " is above the ciphertext's level " +
                          std::to_string(a.level()) + " (switching only goes down)");
  }
  Ciphertext r(a);
  while (r.level() > level) mod_switch_to_next_inplace(r);
  return r;
}

Plaintext Evaluator::mod_switch_to(const Plaintext& p, std::size_t level) const {
  if (!ops(*ctx_).rescales) {
    throw InvalidArgument("plain: only CKKS plaintexts carry a level");
  }
  check_compatible(*ctx_, p.device(), p.context(), p.device(), "plain");
  if (level > p.level()) {
    throw InvalidArgument("level: " + std::to_string(level) + " is above the plaintext's level " +
                          std::to_string(p.level()));
  }
  Plaintext r(p);
  while (r.level() > level) ckks::mod_switch_to_next_inplace(r);
  return r;
}

void Evaluator::rescale_to_next_inplace(Ciphertext& a) const {
  check(a, "encrypted");
  if (!ops(*ctx_).rescales) {
    throw InvalidArgument("encrypted: rescaling is a CKKS operation (use mod_switch_to_next)");
  }
  const u64 id = a.key_id();
  ckks::rescale_to_next_inplace(a);
  a.set_key_id(id);
}

Ciphertext Evaluator::rescale_to_next(const Ciphertext& a) const {
  Ciphertext r(a);
  rescale_to_next_inplace(r);
  return r;
}

}  // namespace veil
