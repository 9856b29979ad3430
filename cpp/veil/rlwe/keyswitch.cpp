#include "veil/rlwe/keyswitch.h"

#include <string>

#include "veil/backend/launch.h"
#include "veil/core/error.h"
#include "veil/ring/poly_ops.h"

namespace veil {

namespace {

template <class W>
WordBuffer mod_up_t(const Context& ctx, const Device& dev, std::size_t level, const W* c,
                    bool c_ntt) {
  const KeySwitchLevel& ks = ctx.key_switch(level);
  const std::size_t n = ctx.n();
  const std::size_t limbs = level + 1;
  const std::size_t ext = limbs + ctx.num_p();
  const std::size_t alpha = ctx.alpha();
  const std::size_t dnum = ks.dnum;
  Buffer<W> coeff;
  const W* src = c;
  if (c_ntt) {
    coeff = Buffer<W>(dev, limbs * n);
    backend::copy(dev, coeff.data(), dev, c, limbs * n * sizeof(W));
    ntt_inverse(dev, coeff.data(), 1, ctx.base_q(level), ctx.ntt());
    src = coeff.data();
  }
  // Every digit's ModUp in one pass: digit j keeps its own residues and fast-converts them to
  // every other prime of Q_l ∪ P; the result is in Q_l ∪ P order for all digits, so one
  // batched NTT transforms them all.
  Buffer<W> digits(dev, dnum * ext * n);
  W* out = digits.data();
  const Modulus* mods = ks.base_qp.moduli(dev);
  const u64* sc = ks.modup_scale.data(dev);
  const u64* scs = ks.modup_scale_shoup.data(dev);
  const u64* mat = ks.modup_mat.data(dev);
  for_each(dev, dnum * n, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t j = idx / n, cc = idx % n;
    const std::size_t first = j * alpha;
    const std::size_t size = (limbs - first) < alpha ? (limbs - first) : alpha;
    W y[32];
    for (std::size_t i = 0; i < size; ++i) {
      const std::size_t l = first + i;
      y[i] = mul_shoup(src[l * n + cc], static_cast<W>(sc[j * alpha + i]),
                       shoup_for<W>(scs[j * alpha + i]), static_cast<W>(mods[l].value));
    }
    W* o = out + j * ext * n + cc;
    for (std::size_t l = 0; l < ext; ++l) {
      if (l >= first && l < first + size) {
        o[l * n] = src[l * n + cc];
        continue;
      }
      const u64* row = mat + (j * ext + l) * alpha;
      WideAcc<W> dot;
      for (std::size_t i = 0; i < size; ++i) dot.add(y[i], static_cast<W>(row[i]));
      o[l * n] = dot.reduce(mods[l]);
    }
  });
  ntt_forward(dev, out, dnum, ks.base_qp, ctx.ntt());
  return WordBuffer(std::move(digits));
}

template <class W>
void inner_t(const Context& ctx, const Device& dev, std::size_t level, const WordBuffer& digits,
             const KSwitchKey& key, W* acc0, W* acc1, bool acc_ntt, u32 galois_elt) {
  const KeySwitchLevel& ks = ctx.key_switch(level);
  if (key.context()->parameter_hash() != ctx.parameter_hash()) {
    throw InvalidArgument("key: belongs to a different context");
  }
  if (key.device() != dev) {
    throw TypeMismatch("key: lives on " + key.device().str() + ", operand on " + dev.str());
  }
  if (key.dnum() < ks.dnum) throw InvalidArgument("key: has too few digits for this level");
  const std::size_t n = ctx.n();
  const std::size_t limbs = level + 1;
  const std::size_t k = ctx.num_p();
  const std::size_t ext_limbs = limbs + k;
  const std::size_t num_q = ctx.num_q();
  const std::size_t dnum = ks.dnum;
  if (dnum > kMaxKeySwitchDigits) throw InvalidArgument("key switching: more than 60 digits is not supported");
  const RnsBase& qp = ks.base_qp;
  const Modulus* mods = qp.moduli(dev);
  const std::size_t key_poly = key.poly_words();
  const W* kd = key.data<W>();
  const W* dg = digits.data<W>();

  Buffer<W> perm;
  if (galois_elt != 0) {
    // Hoisting: sigma commutes with the decomposition, so permute the NTT-form digits.
    perm = Buffer<W>(dev, digits.size());
    poly::automorphism_ntt(dev, qp, n, dnum, galois_elt, dg, perm.data());
    dg = perm.data();
  }

  // Inner product over Q_l ∪ P (NTT form), both outputs in one pass over the digits.
  Buffer<W> out(dev, 2 * ext_limbs * n);
  W* o = out.data();
  for_each_limb(dev, 1, ext_limbs, n, VEIL_LAMBDA(std::size_t i, u32 lp32) {
    const std::size_t lp = lp32, coeff = i & (n - 1);
    const std::size_t key_limb = lp <= level ? lp : num_q + (lp - limbs);
    WideAcc<W> d0, d1;
    for (std::size_t j = 0; j < dnum; ++j) {
      const W d = dg[(j * ext_limbs + lp) * n + coeff];
      d0.add(d, kd[(2 * j) * key_poly + key_limb * n + coeff]);
      d1.add(d, kd[(2 * j + 1) * key_poly + key_limb * n + coeff]);
    }
    const Modulus m = mods[lp];
    o[i] = d0.reduce(m);
    o[ext_limbs * n + i] = d1.reduce(m);
  });

  if (acc_ntt) {
    // NTT-form schemes: only P's limbs leave the NTT domain (seed 001 "NTT + ModDown").
    Buffer<W> down(dev, 2 * limbs * n);
    ks.mod_down_ntt.apply(dev, ctx.ntt(), o, down.data(), n, 2);
    const RnsBase& q = ctx.base_q(level);
    poly::add(dev, q, n, 1, acc0, down.data(), acc0);
    poly::add(dev, q, n, 1, acc1, down.data() + limbs * n, acc1);
  } else {
    // Coefficient form (BFV): INTT, then ModDown fused with the accumulation.
    ntt_inverse(dev, o, 2, qp, ctx.ntt());
    ks.mod_down.apply_accumulate(dev, o, acc0, acc1, n, 2);
  }
}

}  // namespace

WordBuffer key_switch_mod_up(const Context& ctx, const Device& dev, std::size_t level,
                             ConstWordPtr c, bool c_ntt) {
  return VEIL_WITH_WORD(c.word_bits(), return mod_up_t<W>(ctx, dev, level, c.as<W>(), c_ntt));
}

void key_switch_inner(const Context& ctx, const Device& dev, std::size_t level,
                      const WordBuffer& digits, const KSwitchKey& key, WordPtr acc0, WordPtr acc1,
                      bool acc_ntt, u32 galois_elt) {
  VEIL_WITH_WORD(acc0.word_bits(), inner_t<W>(ctx, dev, level, digits, key, acc0.as<W>(),
                                              acc1.as<W>(), acc_ntt, galois_elt));
}

void key_switch_accumulate(const Context& ctx, const Device& dev, std::size_t level,
                           ConstWordPtr c, bool c_ntt, const KSwitchKey& key, WordPtr acc0,
                           WordPtr acc1, bool acc_ntt) {
  WordBuffer digits = key_switch_mod_up(ctx, dev, level, c, c_ntt);
  key_switch_inner(ctx, dev, level, digits, key, acc0, acc1, acc_ntt);
}

}  // namespace veil
