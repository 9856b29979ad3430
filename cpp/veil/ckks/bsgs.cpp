#include "veil/ckks/bsgs.h"

#include <algorithm>
#include <atomic>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

#include "veil/backend/graph.h"
#include "veil/backend/table.h"
#include "veil/ckks/ckks.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/core/env.h"
#include "veil/core/error.h"
#include "veil/ring/poly_ops.h"
#include "veil/rlwe/checks.h"
#include "veil/rlwe/keyswitch.h"

namespace veil::ckks {

namespace {

// The checked shape of one call: the inputs' level and device, the outputs' level and scale,
// and the Galois element of every step (Context::galois_elt_from_step walks the powers of 3).
struct Shape {
  std::size_t level = 0, target = 0;
  Device dev;
  double scale = 0;  // the first term's product scale / the rescale block (as rescale_to_next)
  std::map<int, u32> elts;
};

Shape check_operands(const std::vector<const Ciphertext*>& inputs,
                     const std::vector<std::vector<BsgsGiant>>& outputs, const GaloisKeys& gk) {
  if (inputs.empty()) throw InvalidArgument("inputs: expected at least one ciphertext");
  for (const Ciphertext* c : inputs) {
    if (c == nullptr || c->empty()) throw InvalidArgument("inputs: a ciphertext is empty");
  }
  const Ciphertext& first = *inputs[0];
  const ContextPtr& cp = first.context();
  const Context& ctx = *cp;
  if (ctx.scheme() != SchemeType::ckks) throw InvalidArgument("inputs: not CKKS ciphertexts");
  Shape s;
  s.level = first.level();
  s.dev = first.device();
  for (const Ciphertext* c : inputs) {
    check_compatible(ctx, s.dev, c->context(), c->device(), "inputs");
    if (c->size() != 2 || !c->is_ntt_form() || c->level() != s.level) {
      throw InvalidArgument("inputs: expected size-2 NTT-form ciphertexts at level " +
                            std::to_string(s.level) + ", got size " + std::to_string(c->size()) +
                            " at level " + std::to_string(c->level()));
    }
  }
  s.target = ckks::rescale_target(ctx, s.level);  // throws naming `encrypted` in q_0's block
  check_compatible(ctx, s.dev, gk.context(), gk.device(), "galois_keys");
  if (outputs.empty()) throw InvalidArgument("outputs: expected at least one output");
  const std::size_t ext_words = (s.level + 1 + ctx.num_p()) * ctx.n();
  bool have_scale = false;
  auto need_key = [&](int step) {
    if (s.elts.count(step)) return;
    const u32 e = ctx.galois_elt_from_step(step);  // throws naming `steps`
    s.elts.emplace(step, e);
    if (e != 1 && !gk.has_key(e)) {
      throw InvalidArgument("galois_keys: no key for step " + std::to_string(step) +
                            " (double hoisting needs a key for every baby and giant step)");
    }
  };
  for (const auto& out : outputs) {
    if (out.empty()) throw InvalidArgument("outputs: an output has no giant step");
    for (const BsgsGiant& g : out) {
      if (g.terms.empty()) throw InvalidArgument("outputs: a giant step has no term");
      need_key(g.step);
      for (const BsgsTerm& t : g.terms) {
        if (t.input >= inputs.size()) {
          throw InvalidArgument("outputs: a term reads input " + std::to_string(t.input) + " of " +
                                std::to_string(inputs.size()));
        }
        need_key(t.step);
        if (t.plain == nullptr || t.plain->empty()) throw InvalidArgument("plain: is empty");
        const Plaintext& p = *t.plain;
        check_compatible(ctx, s.dev, p.context(), p.device(), "plain");
        if (t.shift > static_cast<unsigned>(std::countr_zero(ctx.n())) - 2) {
          throw InvalidArgument("plain: a term's shift must be at most log2(N) - 2, got " +
                                std::to_string(t.shift));
        }
        if (!p.is_ntt_form() || p.level() != s.level || p.word_count() != ext_words >> t.shift) {
          throw InvalidArgument(
              "plain: expected a plaintext over Q_l ∪ P at level " + std::to_string(s.level) +
              " with " + std::to_string(ext_words >> t.shift) + " words (shift " +
              std::to_string(t.shift) + ", CKKSEncoder::encode_extended[_periodic]), got level " +
              std::to_string(p.level()) + " with " + std::to_string(p.word_count()) + " words");
        }
        const double prod = inputs[t.input]->scale() * p.scale();
        if (!have_scale) {
          s.scale = prod;
          have_scale = true;
        }
        check_scales(s.scale, prod, "plain");
      }
    }
  }
  double bits = 0;
  for (const Modulus& m : ctx.base_q(s.level).moduli()) bits += std::log2(double(m.value));
  if (std::log2(s.scale) >= bits - 1) {
    throw InvalidArgument(
        "plain: the product's scale would exceed Q at this level (rescale first)");
  }
  for (std::size_t i = s.target + 1; i <= s.level; ++i) {
    s.scale /= double(ctx.base_q(s.level)[i].value);
  }
  check_ckks_scale(ctx, s.scale, s.target, "encrypted");  // before any work
  return s;
}

std::atomic<std::size_t>& branches_setting() {
  static std::atomic<std::size_t> ways{static_cast<std::size_t>(
      env_integer("VEIL_BSGS_BRANCHES", 1, static_cast<long long>(kMaxBsgsBranches),
                  static_cast<long long>(kDefaultBsgsBranches)))};
  return ways;
}

}  // namespace

std::size_t bsgs_branches() { return branches_setting().load(); }

void set_bsgs_branches(std::size_t n) {
  if (n < 1 || n > kMaxBsgsBranches) {
    throw InvalidArgument("n: expected 1.." + std::to_string(kMaxBsgsBranches) + ", got " +
                          std::to_string(n));
  }
  branches_setting().store(n);
}

std::vector<Ciphertext> multiply_diagonals_bsgs(const std::vector<const Ciphertext*>& inputs,
                                                const std::vector<std::vector<BsgsGiant>>& outputs,
                                                const GaloisKeys& gk) {
  const Shape s = check_operands(inputs, outputs, gk);
  const ContextPtr& cp = inputs[0]->context();
  const Context& ctx = *cp;
  const Device& dev = s.dev;
  const std::size_t l = s.level, n = ctx.n();
  const KeySwitchLevel& ks = ctx.key_switch(l);
  const RnsBase& qp = ks.base_qp;
  const std::size_t ext = qp.size(), ext_words = 2 * ext * n;
  const int bits = ctx.word_bits();
  const std::size_t ways = bsgs_branches();

  // 1. The baby steps each input needs; one ModUp per input that rotates, shared by its babies
  //    (one branch per input).
  std::vector<std::map<int, WordBuffer>> babies(inputs.size());
  for (const auto& out : outputs) {
    for (const BsgsGiant& g : out) {
      for (const BsgsTerm& t : g.terms) babies[t.input].try_emplace(t.step);
    }
  }
  std::vector<std::optional<KeySwitchDigits>> digits(inputs.size());
  std::vector<std::function<void()>> work;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    bool rotates = false;
    for (const auto& [step, buf] : babies[i]) rotates = rotates || s.elts.at(step) != 1;
    if (!rotates) continue;
    work.emplace_back(
        [&, i] { digits[i] = key_switch_mod_up(ctx, dev, l, inputs[i]->poly(1), true); });
  }
  backend::run_branches(dev, work);

  // 2. Each baby rotation in Q_l ∪ P, the babies dealt round robin to `ways` branches.
  struct Baby {
    std::size_t input;
    int step;
    WordBuffer* buf;
  };
  std::vector<Baby> list;
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    for (auto& [step, buf] : babies[i]) {
      buf = WordBuffer(dev, ext_words, bits);
      list.push_back({i, step, &buf});
    }
  }
  work.clear();
  for (std::size_t w = 0; w < std::min(ways, list.size()); ++w) {
    work.emplace_back([&, w] {
      for (std::size_t j = w; j < list.size(); j += ways) {
        const Baby& b = list[j];
        const Ciphertext& c = *inputs[b.input];
        const u32 e = s.elts.at(b.step);
        if (e == 1) {
          key_switch_lift(ctx, dev, l, c.data(), b.buf->data(), 2);
        } else {
          key_switch_inner_ext(ctx, dev, l, *digits[b.input], gk.key(e), c.poly(0),
                               ExtAddend::lift, b.buf->data(), false, e);
        }
      }
    });
  }
  backend::run_branches(dev, work);

  // 3-4. Each output's giant steps, dealt in contiguous groups to up to `ways` branches (over
  //      all outputs), each summing its group into its own accumulator over Q_l ∪ P. The sums
  //      are exact (mod each prime), so the grouping changes no word of the result.
  struct Group {
    std::size_t output, begin, end;
    WordBuffer acc;
  };
  std::vector<Group> groups;
  const std::size_t per_output = std::max<std::size_t>(1, ways / outputs.size());
  for (std::size_t o = 0; o < outputs.size(); ++o) {
    const std::size_t count = outputs[o].size(), parts = std::min(per_output, count);
    for (std::size_t k = 0; k < parts; ++k) {
      groups.push_back({o, k * count / parts, (k + 1) * count / parts,
                        WordBuffer(dev, ext_words, bits)});
    }
  }
  work.clear();
  for (Group& grp : groups) {
    work.emplace_back([&] {
      WordBuffer& acc = grp.acc;
      WordBuffer u(dev, ext_words, bits);
      for (std::size_t gi = grp.begin; gi < grp.end; ++gi) {
        const BsgsGiant& g = outputs[grp.output][gi];
        const bool first = gi == grp.begin;
        // 3. The inner sum over Q_l ∪ P in one pass; straight into the accumulator when it is
        //    the group's first giant step and needs no rotation. Full-form diagonals first, then
        //    those stored as one period; b's table holds the plaintext pointers, then the shifts
        //    (one upload).
        std::vector<u64> a, b, shifts;
        std::size_t unshifted = 0;
        for (int pass = 0; pass < 2; ++pass) {
          for (const BsgsTerm& t : g.terms) {
            if ((t.shift != 0) != (pass == 1)) continue;
            a.push_back(reinterpret_cast<u64>(babies[t.input].at(t.step).data().get()));
            b.push_back(reinterpret_cast<u64>(t.plain->data().get()));
            shifts.push_back(t.shift);
          }
          if (pass == 0) unshifted = a.size();
        }
        const std::size_t count = a.size();
        b.insert(b.end(), shifts.begin(), shifts.end());
        const DeviceTable<u64> at(std::move(a)), bt(std::move(b));
        const u32 e = s.elts.at(g.step);
        WordBuffer& sum = (e == 1 && first) ? acc : u;
        const u64* bp = bt.data(dev);
        poly::dot_broadcast(dev, qp, n, 2, at.data(dev), bp, count, sum.data(), bp + count,
                            unshifted);
        if (e == 1) {
          if (!first) poly::add(dev, qp, n, 2, acc.data(), u.data(), acc.data());
        } else {
          // 4. u1 down to Q_l in place (its first l+1 limbs), its ModUp, and the key switch by
          //    sigma_G into the accumulator with sigma_G(u0) added over Q_l ∪ P.
          const WordPtr u1 = u.data() + ext * n;
          key_switch_mod_down(ctx, dev, l, u1, u1, 1);
          const KeySwitchDigits dg = key_switch_mod_up(ctx, dev, l, u1, true);
          key_switch_inner_ext(ctx, dev, l, dg, gk.key(e), u.data(), ExtAddend::extended,
                               acc.data(), !first, e);
        }
      }
    });
  }
  backend::run_branches(dev, work);

  // 5. Per output, its groups' sums added, and one ModDown fused with the rescale.
  std::vector<Ciphertext> results;
  for (std::size_t o = 0, gi = 0; o < outputs.size(); ++o) {
    WordBuffer& acc = groups[gi++].acc;
    for (; gi < groups.size() && groups[gi].output == o; ++gi) {
      poly::add(dev, qp, n, 2, acc.data(), groups[gi].acc.data(), acc.data());
    }
    Ciphertext r(cp, dev, 2, s.target, true);
    key_switch_rescale_down(ctx, dev, l, acc.data(), r.data(), 2);
    r.set_scale(s.scale);
    results.push_back(std::move(r));
  }
  return results;
}

}  // namespace veil::ckks
