#include "veil/rlwe/keyswitch.h"

#include <string>

#include "veil/backend/launch.h"
#include "veil/core/error.h"
#include "veil/ring/poly_ops.h"

namespace veil {

Buffer<u64> key_switch_mod_up(const Context& ctx, const Device& dev, std::size_t level,
                              const u64* c, bool c_ntt) {
  const KeySwitchLevel& ks = ctx.key_switch(level);
  const std::size_t n = ctx.n();
  const std::size_t limbs = level + 1;
  const std::size_t ext = limbs + ctx.num_p();
  const std::size_t alpha = ctx.alpha();
  const std::size_t dnum = ks.dnum;
  Buffer<u64> coeff;
  const u64* src = c;
  if (c_ntt) {
    coeff = Buffer<u64>(dev, limbs * n);
    backend::copy(dev, coeff.data(), dev, c, limbs * n * sizeof(u64));
    ntt_inverse(dev, coeff.data(), 1, ctx.base_q(level), ctx.ntt());
    src = coeff.data();
  }
  // Every digit's ModUp in one pass: digit j keeps its own residues and fast-converts them to
  // every other prime of Q_l ∪ P; the result is in Q_l ∪ P order for all digits, so one
  // batched NTT transforms them all.
  Buffer<u64> digits(dev, dnum * ext * n);
  u64* out = digits.data();
  const Modulus* mods = ks.base_qp.moduli(dev);
  const u64* sc = ks.modup_scale.data(dev);
  const u64* scs = ks.modup_scale_shoup.data(dev);
  const u64* mat = ks.modup_mat.data(dev);
  for_each(dev, dnum * n, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t j = idx / n, cc = idx % n;
    const std::size_t first = j * alpha;
    const std::size_t size = (limbs - first) < alpha ? (limbs - first) : alpha;
    u64 y[32];
    for (std::size_t i = 0; i < size; ++i) {
      const std::size_t l = first + i;
      y[i] = mul_shoup(src[l * n + cc], sc[j * alpha + i], scs[j * alpha + i], mods[l].value);
    }
    u64* o = out + j * ext * n + cc;
    for (std::size_t l = 0; l < ext; ++l) {
      if (l >= first && l < first + size) {
        o[l * n] = src[l * n + cc];
        continue;
      }
      const u64* row = mat + (j * ext + l) * alpha;
      u64 hi = 0, lo = 0;
      for (std::size_t i = 0; i < size; ++i) {
        u64 ph, pl;
        mul_wide(y[i], row[i], ph, pl);
        add_wide(hi, lo, ph, pl);
      }
      const Modulus m = mods[l];
      o[l * n] = reduce_wide(reduce_word(hi, m), lo, m);
    }
  });
  ntt_forward(dev, out, dnum, ks.base_qp, ctx.ntt());
  return digits;
}

void key_switch_inner(const Context& ctx, const Device& dev, std::size_t level,
                      const Buffer<u64>& digits, const KSwitchKey& key, u64* acc0, u64* acc1,
                      bool acc_ntt, u32 galois_elt) {
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
  const u64* kd = key.data();
  const u64* dg = digits.data();

  Buffer<u64> perm;
  if (galois_elt != 0) {
    // Hoisting: sigma commutes with the decomposition, so permute the NTT-form digits.
    perm = Buffer<u64>(dev, digits.size());
    poly::automorphism_ntt(dev, qp, n, dnum, galois_elt, dg, perm.data());
    dg = perm.data();
  }

  // Inner product over Q_l ∪ P (NTT form), both outputs in one pass over the digits.
  Buffer<u64> out(dev, 2 * ext_limbs * n);
  u64* o = out.data();
  for_each_limb(dev, 1, ext_limbs, n, VEIL_LAMBDA(std::size_t i, u32 lp32) {
    const std::size_t lp = lp32, coeff = i & (n - 1);
    const std::size_t key_limb = lp <= level ? lp : num_q + (lp - limbs);
    u64 h0 = 0, l0 = 0, h1 = 0, l1 = 0;
    for (std::size_t j = 0; j < dnum; ++j) {
      const u64 d = dg[(j * ext_limbs + lp) * n + coeff];
      const u64 b = kd[(2 * j) * key_poly + key_limb * n + coeff];
      const u64 a = kd[(2 * j + 1) * key_poly + key_limb * n + coeff];
      u64 ph, pl;
      mul_wide(d, b, ph, pl);
      add_wide(h0, l0, ph, pl);
      mul_wide(d, a, ph, pl);
      add_wide(h1, l1, ph, pl);
    }
    const Modulus m = mods[lp];
    o[i] = reduce_wide(reduce_word(h0, m), l0, m);
    o[ext_limbs * n + i] = reduce_wide(reduce_word(h1, m), l1, m);
  });

  if (acc_ntt) {
    // NTT-form schemes: only P's limbs leave the NTT domain (seed 001 "NTT + ModDown").
    Buffer<u64> down(dev, 2 * limbs * n);
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

void key_switch_accumulate(const Context& ctx, const Device& dev, std::size_t level,
                           const u64* c, bool c_ntt, const KSwitchKey& key, u64* acc0, u64* acc1,
                           bool acc_ntt) {
  Buffer<u64> digits = key_switch_mod_up(ctx, dev, level, c, c_ntt);
  key_switch_inner(ctx, dev, level, digits, key, acc0, acc1, acc_ntt);
}

}  // namespace veil
