#include "veil/rlwe/keyswitch.h"

#include <string>

#include "veil/backend/launch.h"
#include "veil/core/error.h"
#include "veil/core/primes.h"
#include "veil/ring/poly_ops.h"
#include "veil/rns/conv_kernels.h"

namespace veil {

namespace {


// The conversion of ModUp: for each digit j, the complement limbs of Q_l ∪ P from the digit's
// limbs of `src` (coefficient form), FastBaseConv (Bajard et al., SAC 2016) with the tables of
// KeySwitchLevel. One thread per (digit, kC coefficients n/kC apart, so a warp's accesses stay
// consecutive): the inputs y are scaled once into registers, and each table row (kMax >= the
// row stride, four words per load) serves kC coefficients (register blocking; bench/NOTES.md).
template <class W, u32 kMax, u32 kC = rns_detail::kBlockCoeffs<W, kMax>>
void mod_up_convert(const Context& ctx, const Device& dev, std::size_t level, const W* src,
                    W* o) {
  const KeySwitchLevel& ks = ctx.key_switch(level);
  const std::size_t n = ctx.n(), limbs = level + 1, ext = limbs + ctx.num_p();
  const std::size_t alpha = ctx.alpha(), stride = ks.modup_stride;
  const Modulus* mods = ks.base_qp.moduli(dev);
  const u64* sc = ks.modup_scale.data(dev);
  const u64* scs = ks.modup_scale_shoup.data(dev);
  const W* mat;
  if constexpr (sizeof(W) == 4) {
    mat = ks.modup_mat32.data(dev);
  } else {
    mat = ks.modup_mat.data(dev);
  }
  const std::size_t part = n / kC;  // coefficient t of a thread is c + t * part
  const int log_part = log2_exact(part);
  for_each(dev, ks.dnum * part, VEIL_LAMBDA(std::size_t idx) {
    const std::size_t c = idx & (part - 1), j = idx >> log_part;
    const std::size_t first = j * alpha;
    const std::size_t size = (limbs - first) < alpha ? (limbs - first) : alpha;
    const u32 groups = static_cast<u32>((size + 3) / 4);
    W y[kC][kMax];
#pragma unroll
    for (u32 i = 0; i < kMax; ++i) {  // unrolled: y stays in registers
      if (i >= 4 * groups) break;
      if (i < size) {
        const std::size_t l = first + i;
        const W q = static_cast<W>(mods[l].value), s = static_cast<W>(sc[j * alpha + i]);
        const W s_shoup = shoup_for<W>(scs[j * alpha + i]);
#pragma unroll
        for (u32 t = 0; t < kC; ++t) y[t][i] = mul_shoup(src[l * n + c + t * part], s, s_shoup, q);
      } else {
#pragma unroll
        for (u32 t = 0; t < kC; ++t) y[t][i] = 0;  // the table's padding is zero too
      }
    }
    W* dj = o + j * (ext - alpha) * n + c;
    for (std::size_t out_l = 0; out_l < ext - size; ++out_l) {
      const std::size_t l = out_l < first ? out_l : out_l + size;
      WideAcc<W> dot[kC];
      rns_detail::dot_rows4(dot, y, mat + (j * ext + l) * stride, groups);
      const Modulus m = mods[l];
#pragma unroll
      for (u32 t = 0; t < kC; ++t) dj[out_l * n + t * part] = dot[t].reduce(m);
    }
  });
}

// ModUp of every digit in one pass (Han-Ki 2020; seed 001 §III-C): digit j = c's residues on its
// own primes D_j, fast-converted to every other prime of Q_l ∪ P. Only those other limbs are
// written ([j][complement of D_j], KeySwitchLevel::modup_base order) and transformed; the own
// limbs are c's, whose NTT form is known (the input itself for NTT-form schemes).
template <class W>
KeySwitchDigits mod_up_t(const Context& ctx, const Device& dev, std::size_t level, const W* c,
                         bool c_ntt) {
  const KeySwitchLevel& ks = ctx.key_switch(level);
  const std::size_t n = ctx.n();
  const std::size_t limbs = level + 1;
  const RnsBase& q = ctx.base_q(level);
  KeySwitchDigits out;
  out.level = level;
  Buffer<W> coeff;  // c in coefficient form (the conversion's input)
  const W* src = c;
  if (c_ntt) {
    coeff = Buffer<W>(dev, limbs * n);
    backend::copy(dev, coeff.data(), dev, c, limbs * n * sizeof(W));
    ntt_inverse(dev, coeff.data(), 1, q, ctx.ntt());
    src = coeff.data();
    out.own = ConstWordPtr(c);
  } else {
    Buffer<W> own(dev, limbs * n);
    backend::copy(dev, own.data(), dev, c, limbs * n * sizeof(W));
    ntt_forward(dev, own.data(), 1, q, ctx.ntt());
    out.own_copy = WordBuffer(std::move(own));
    out.own = out.own_copy.data();
  }
  Buffer<W> digits(dev, ks.modup_base.size() * n);
  W* o = digits.data();
  if (ks.modup_stride <= 8) {
    mod_up_convert<W, 8>(ctx, dev, level, src, o);
  } else if (ks.modup_stride <= 16) {
    mod_up_convert<W, 16>(ctx, dev, level, src, o);
  } else {
    mod_up_convert<W, 32>(ctx, dev, level, src, o);
  }
  ntt_forward(dev, o, 1, ks.modup_base, ctx.ntt());
  out.complement = WordBuffer(std::move(digits));
  return out;
}

// The inner product of the digits with `key` over Q_l ∪ P (NTT form), both outputs in one pass:
// [2][l+1+k][N]. With a Galois element, coefficient i reads the digits at sigma_g's source slot
// (the NTT-form automorphism is a permutation: poly::automorphism_ntt), so no permuted copy is
// made. With `lift0/lift1` (CKKS relinearize + rescale), P * lift_p is added on the Q limbs:
// the result is then the key-switched ciphertext plus P * (lift0, lift1), over Q_l ∪ P.
template <class W>
Buffer<W> inner_product(const Context& ctx, const Device& dev, std::size_t level,
                        const KeySwitchDigits& digits, const KSwitchKey& key, u32 galois_elt,
                        const W* lift0 = nullptr, const W* lift1 = nullptr) {
  const KeySwitchLevel& ks = ctx.key_switch(level);
  if (key.context()->parameter_hash() != ctx.parameter_hash()) {
    throw InvalidArgument("key: belongs to a different context");
  }
  if (key.device() != dev) {
    throw TypeMismatch("key: lives on " + key.device().str() + ", operand on " + dev.str());
  }
  if (key.dnum() < ks.dnum) throw InvalidArgument("key: has too few digits for this level");
  if (digits.level != level || digits.complement.empty()) {
    throw InvalidArgument("digits: were decomposed at level " + std::to_string(digits.level) +
                          ", not " + std::to_string(level));
  }
  const std::size_t n = ctx.n();
  const int log_n = ctx.log_n();
  const std::size_t limbs = level + 1;
  const std::size_t k = ctx.num_p();
  const std::size_t ext_limbs = limbs + k;
  const std::size_t num_q = ctx.num_q();
  const std::size_t alpha = ctx.alpha();
  const std::size_t dnum = ks.dnum;
  if (dnum > kMaxKeySwitchDigits) throw InvalidArgument("key switching: more than 60 digits is not supported");
  const Modulus* mods = ks.base_qp.moduli(dev);
  const std::size_t key_poly = key.poly_words();
  const W* kd = key.data<W>();
  const W* dg = digits.complement.data<W>();
  const W* own = digits.own.as<W>();
  const u64 g = galois_elt, mask = 2 * n - 1;
  const u64* pq = lift0 ? ks.p_mod_q.data(dev) : nullptr;
  const u64* pqs = lift0 ? ks.p_mod_q_shoup.data(dev) : nullptr;
  Buffer<W> out(dev, 2 * ext_limbs * n);
  W* o = out.data();
  for_each_limb(dev, 1, ext_limbs, n, VEIL_LAMBDA(std::size_t i, u32 lp32) {
    const std::size_t lp = lp32, coeff = i & (n - 1);
    std::size_t from = coeff;
    if (g != 0) {
      const u64 e = ((2 * u64(bit_reverse(u32(coeff), log_n)) + 1) * g) & mask;
      from = bit_reverse(u32((e - 1) >> 1), log_n);
    }
    const std::size_t key_limb = lp <= level ? lp : num_q + (lp - limbs);
    WideAcc<W> d0, d1;
    for (std::size_t j = 0; j < dnum; ++j) {
      const std::size_t first = j * alpha;
      const std::size_t size = (limbs - first) < alpha ? (limbs - first) : alpha;
      W d;
      if (lp >= first && lp < first + size) {
        d = own[lp * n + from];
      } else {
        const std::size_t idx = lp < first ? lp : lp - size;
        d = dg[(j * (ext_limbs - alpha) + idx) * n + from];
      }
      d0.add(d, kd[(2 * j) * key_poly + key_limb * n + coeff]);
      d1.add(d, kd[(2 * j + 1) * key_poly + key_limb * n + coeff]);
    }
    const Modulus m = mods[lp];
    W r0 = d0.reduce(m), r1 = d1.reduce(m);
    if (pq != nullptr && lp < limbs) {
      const W qv = static_cast<W>(m.value), w = static_cast<W>(pq[lp]);
      const W wq = shoup_for<W>(pqs[lp]);
      r0 = add_mod(r0, mul_shoup(lift0[lp * n + coeff], w, wq, qv), qv);
      r1 = add_mod(r1, mul_shoup(lift1[lp * n + coeff], w, wq, qv), qv);
    }
    o[i] = r0;
    o[ext_limbs * n + i] = r1;
  });
  return out;
}

template <class W>
void inner_t(const Context& ctx, const Device& dev, std::size_t level,
             const KeySwitchDigits& digits, const KSwitchKey& key, W* acc0, W* acc1, bool acc_ntt,
             u32 galois_elt) {
  const KeySwitchLevel& ks = ctx.key_switch(level);
  Buffer<W> out = inner_product<W>(ctx, dev, level, digits, key, galois_elt);
  W* o = out.data();
  if (acc_ntt) {
    // NTT-form schemes: only P's limbs leave the NTT domain (seed 001 "NTT + ModDown"), and the
    // result is added into the accumulators in the same pass.
    ks.mod_down_ntt.apply_accumulate(dev, ctx.ntt(), o, acc0, acc1, ctx.n());
  } else {
    // Coefficient form (BFV): INTT, then ModDown fused with the accumulation.
    ntt_inverse(dev, o, 2, ks.base_qp, ctx.ntt());
    ks.mod_down.apply_accumulate(dev, o, acc0, acc1, ctx.n(), 2);
  }
}

template <class W>
void rescale_t(const Context& ctx, const Device& dev, std::size_t level,
               const KeySwitchDigits& digits, const KSwitchKey& key, const W* c0, const W* c1,
               W* out) {
  const KeySwitchLevel& ks = ctx.key_switch(level);
  VEIL_REQUIRE(ctx.scheme() == SchemeType::ckks, "key_switch_rescale: CKKS only");
  ctx.rescale_target(level);  // throws naming `encrypted` in q_0's block
  Buffer<W> y = inner_product<W>(ctx, dev, level, digits, key, 0, c0, c1);
  // (c + P c') / (P * B) = round(relinearized / B) up to the rounding of one division.
  ks.rescale_down.apply(dev, ctx.ntt(), y.data(), out, ctx.n(), 2);
}

}  // namespace

KeySwitchDigits key_switch_mod_up(const Context& ctx, const Device& dev, std::size_t level,
                                  ConstWordPtr c, bool c_ntt) {
  return VEIL_WITH_WORD(c.word_bits(), return mod_up_t<W>(ctx, dev, level, c.as<W>(), c_ntt));
}

void key_switch_inner(const Context& ctx, const Device& dev, std::size_t level,
                      const KeySwitchDigits& digits, const KSwitchKey& key, WordPtr acc0,
                      WordPtr acc1, bool acc_ntt, u32 galois_elt) {
  VEIL_WITH_WORD(acc0.word_bits(), inner_t<W>(ctx, dev, level, digits, key, acc0.as<W>(),
                                              acc1.as<W>(), acc_ntt, galois_elt));
}

void key_switch_rescale(const Context& ctx, const Device& dev, std::size_t level,
                        const KeySwitchDigits& digits, const KSwitchKey& key, ConstWordPtr c0,
                        ConstWordPtr c1, WordPtr out) {
  VEIL_WITH_WORD(out.word_bits(), rescale_t<W>(ctx, dev, level, digits, key, c0.as<W>(),
                                               c1.as<W>(), out.as<W>()));
}

void key_switch_accumulate(const Context& ctx, const Device& dev, std::size_t level,
                           ConstWordPtr c, bool c_ntt, const KSwitchKey& key, WordPtr acc0,
                           WordPtr acc1, bool acc_ntt) {
  const KeySwitchDigits digits = key_switch_mod_up(ctx, dev, level, c, c_ntt);
  key_switch_inner(ctx, dev, level, digits, key, acc0, acc1, acc_ntt);
}

}  // namespace veil
