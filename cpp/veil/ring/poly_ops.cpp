#include "veil/ring/poly_ops.h"

#include <cstdint>

#include "veil/backend/launch.h"
#include "veil/core/primes.h"
#include "veil/ring/rns_poly_view.h"

namespace veil::poly {

namespace {

// Element-wise kernels move 16 bytes per operand and thread (one vector load or store on the
// GPU; bench/NOTES.md, "Element-wise operations"): a group of kGroup words, all in one limb.
template <class W>
inline constexpr u32 kGroup = 16 / sizeof(W);
template <class W>
struct alignas(16) Group {
  W w[kGroup<W>];
};
template <class W>
VEIL_HD Group<W> load_group(const W* p) {
#if VEIL_DEVICE_CODE
  return *reinterpret_cast<const Group<W>*>(p);
#else
  Group<W> g;
  for (u32 k = 0; k < kGroup<W>; ++k) g.w[k] = p[k];
  return g;
#endif
}
template <class W>
VEIL_HD void store_group(W* p, const Group<W>& g) {
#if VEIL_DEVICE_CODE
  *reinterpret_cast<Group<W>*>(p) = g;
#else
  for (u32 k = 0; k < kGroup<W>; ++k) p[k] = g.w[k];
#endif
}
bool aligned16(const void* p) { return reinterpret_cast<std::uintptr_t>(p) % 16 == 0; }

struct AddOp {
  template <class W>
  VEIL_HD W operator()(W x, W y, const Modulus& m) const { return add_mod(x, y, W(m.value)); }
};
struct SubOp {
  template <class W>
  VEIL_HD W operator()(W x, W y, const Modulus& m) const { return sub_mod(x, y, W(m.value)); }
};
struct NegOp {
  template <class W>
  VEIL_HD W operator()(W x, W, const Modulus& m) const { return neg_mod(x, W(m.value)); }
};
struct MulOp {
  template <class W>
  VEIL_HD W operator()(W x, W y, const Modulus& m) const { return mul_mod(x, y, m); }
};

// f(p, l, j) for every j < width of limb l of polynomial p of `shape` (width a power of two:
// the limb's words, or its groups of words), one launch row per (p, l). The kernels below address
// their operands through views (RnsPolyView::limb / at), not by flat indices.
template <class V, class F>
void for_each_word(const Device& dev, const V& shape, std::size_t width, F f) {
  const std::size_t mask = width - 1;
  for_each_limb(dev, shape.num_polys, shape.num_limbs, width,
                VEIL_LAMBDA(std::size_t i, u32 l, u32 p) { f(p, l, i & mask); });
}

template <class W>
RnsPolyView<const W> view(const Device& dev, const W* data, std::size_t npolys,
                          const RnsBase& base, std::size_t n) {
  return make_view<const W>(dev, data, npolys, base, n);
}
template <class W>
RnsPolyView<W> view(const Device& dev, W* data, std::size_t npolys, const RnsBase& base,
                    std::size_t n) {
  return make_view<W>(dev, data, npolys, base, n);
}

// out = op(a, b, q_l) word by word; a view b of one polynomial is shared by every polynomial of
// a (broadcast). Groups of 16 bytes per thread when n is a multiple of the group and every
// pointer is 16-byte aligned (always, for whole polynomials of a pool allocation), else one word
// per thread. out may alias a (each thread reads its words before writing them) or b when not
// broadcast.
template <class W, class Op>
void binary_op(const Device& dev, const RnsPolyView<const W>& a, const RnsPolyView<const W>& b,
               const RnsPolyView<W>& out, Op op) {
  const std::size_t n = out.n();
  constexpr u32 kV = kGroup<W>;
  if (n % kV == 0 && aligned16(a.data) && aligned16(b.data) && aligned16(out.data)) {
    for_each_word(dev, out, n / kV, VEIL_LAMBDA(u32 p, u32 l, std::size_t g) {
      const std::size_t j = g * kV;
      const Modulus mod = out.modulus(l);
      const Group<W> x = load_group(a.limb(p, l) + j);
      const Group<W> y = load_group(b.limb(b.num_polys == 1 ? 0 : p, l) + j);
      Group<W> r;
#pragma unroll
      for (u32 k = 0; k < kV; ++k) r.w[k] = op(x.w[k], y.w[k], mod);
      store_group(out.limb(p, l) + j, r);
    });
    return;
  }
  for_each_word(dev, out, n, VEIL_LAMBDA(u32 p, u32 l, std::size_t j) {
    out.at(p, l, j) = op(a.at(p, l, j), b.at(b.num_polys == 1 ? 0 : p, l, j), out.modulus(l));
  });
}

}  // namespace

template <class W>
void add(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys, const W* a,
         const W* b, W* out) {
  binary_op(dev, view(dev, a, npolys, base, n), view(dev, b, npolys, base, n),
            view(dev, out, npolys, base, n), AddOp{});
}

template <class W>
void sub(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys, const W* a,
         const W* b, W* out) {
  binary_op(dev, view(dev, a, npolys, base, n), view(dev, b, npolys, base, n),
            view(dev, out, npolys, base, n), SubOp{});
}

template <class W>
void negate(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            const W* a, W* out) {
  const RnsPolyView<const W> av = view(dev, a, npolys, base, n);
  binary_op(dev, av, av, view(dev, out, npolys, base, n), NegOp{});
}

template <class W>
void multiply(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
              const W* a, const W* b, W* out) {
  binary_op(dev, view(dev, a, npolys, base, n), view(dev, b, npolys, base, n),
            view(dev, out, npolys, base, n), MulOp{});
}

template <class W>
void horner(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            const W* polys, const W* x, W* out) {
  const RnsPolyView<const W> c = view(dev, polys, npolys, base, n), xv = view(dev, x, 1, base, n);
  const RnsPolyView<W> o = view(dev, out, 1, base, n);
  const u32 last = static_cast<u32>(npolys - 1);
  for_each_word(dev, o, n, VEIL_LAMBDA(u32, u32 l, std::size_t j) {
    W acc = c.at(last, l, j);
    for (u32 k = last; k-- > 0;) acc = mul_add_mod(acc, xv.at(0, l, j), c.at(k, l, j), o.modulus(l));
    o.at(0, l, j) = acc;
  });
}

template <class W>
void multiply_accumulate(const Device& dev, const RnsBase& base, std::size_t n,
                         std::size_t npolys, const W* a, const W* b, W* out) {
  const RnsPolyView<const W> av = view(dev, a, npolys, base, n), bv = view(dev, b, npolys, base, n);
  const RnsPolyView<W> o = view(dev, out, npolys, base, n);
  for_each_word(dev, o, n, VEIL_LAMBDA(u32 p, u32 l, std::size_t j) {
    W& y = o.at(p, l, j);
    y = mul_add_mod(av.at(p, l, j), bv.at(p, l, j), y, o.modulus(l));
  });
}

template <class W>
void multiply_broadcast(const Device& dev, const RnsBase& base, std::size_t n,
                        std::size_t npolys, const W* a, const W* b, W* out) {
  binary_op(dev, view(dev, a, npolys, base, n), view(dev, b, 1, base, n),
            view(dev, out, npolys, base, n), MulOp{});
}

template <class W>
void multiply_word(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   const W* a, u64 s, W* out) {
  const RnsPolyView<const W> av = view(dev, a, npolys, base, n);
  const RnsPolyView<W> o = view(dev, out, npolys, base, n);
  for_each_word(dev, o, n, VEIL_LAMBDA(u32 p, u32 l, std::size_t j) {
    const Modulus mod = o.modulus(l);
    o.at(p, l, j) = mul_mod(av.at(p, l, j), reduce_to<W>(s, mod), mod);
  });
}

template <class W>
void lift_small(const Device& dev, const RnsBase& base, std::size_t n, const u64* in, u64 t,
                bool centered, W* out) {
  const RnsPolyView<W> o = view(dev, out, 1, base, n);
  const u64 half = t >> 1;
  for_each_word(dev, o, n, VEIL_LAMBDA(u32, u32 l, std::size_t j) {
    const Modulus mod = o.modulus(l);
    const u64 v = in[j];  // one polynomial of small integers, shared by every limb
    if (centered && v > half) {
      o.at(0, l, j) = W(neg_mod(reduce_word(t - v, mod), mod.value));
    } else {
      o.at(0, l, j) = reduce_to<W>(v, mod);
    }
  });
}

template <class W>
void automorphism_coeff(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        u32 galois_elt, const W* in, W* out) {
  const RnsPolyView<const W> iv = view(dev, in, npolys, base, n);
  const RnsPolyView<W> o = view(dev, out, npolys, base, n);
  const u64 mask = 2 * n - 1;
  const u64 g = galois_elt;
  for_each_word(dev, o, n, VEIL_LAMBDA(u32 p, u32 l, std::size_t j) {
    const u64 idx = (u64(j) * g) & mask;  // X^j -> X^(j g) = -X^(j g - n) past n
    if (idx < n) {
      o.at(p, l, idx) = iv.at(p, l, j);
    } else {
      o.at(p, l, idx - n) = neg_mod(iv.at(p, l, j), W(o.modulus(l).value));
    }
  });
}

template <class W>
void tensor(const Device& dev, const RnsBase& base, std::size_t n, const W* a, std::size_t sa,
            const W* b, std::size_t sb, W* out) {
  const std::size_t pw = base.size() * n;
  if (sa == 2 && sb == 2) {
    const RnsPolyView<const W> av = view(dev, a, 2, base, n), bv = view(dev, b, 2, base, n);
    const RnsPolyView<W> o = view(dev, out, 3, base, n);
    for_each_word(dev, view(dev, out, 1, base, n), n, VEIL_LAMBDA(u32, u32 l, std::size_t j) {
      const Modulus mod = o.modulus(l);
      const W a0 = av.at(0, l, j), a1 = av.at(1, l, j), b0 = bv.at(0, l, j), b1 = bv.at(1, l, j);
      o.at(0, l, j) = mul_mod(a0, b0, mod);
      WideAcc<W> mid;
      mid.add(a0, b1);
      mid.add(a1, b0);
      o.at(1, l, j) = mid.reduce(mod);
      o.at(2, l, j) = mul_mod(a1, b1, mod);
    });
    return;
  }
  backend::fill_zero(dev, out, (sa + sb - 1) * pw * sizeof(W));
  for (std::size_t i = 0; i < sa; ++i)
    for (std::size_t j = 0; j < sb; ++j)
      multiply_accumulate(dev, base, n, 1, a + i * pw, b + j * pw, out + (i + j) * pw);
}

template <class W>
void automorphism_ntt(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                      u32 galois_elt, const W* in, W* out) {
  const RnsPolyView<const W> iv = view(dev, in, npolys, base, n);
  const RnsPolyView<W> o = view(dev, out, npolys, base, n);
  const int log_n = log2_exact(n);
  const u64 mask = 2 * n - 1;
  const u64 g = galois_elt;
  // NTT slot i holds a(psi^(2 br(i) + 1)); sigma_g(a) there equals a(psi^((2 br(i) + 1) g)),
  // which sits at slot br(((2 br(i) + 1) g mod 2N - 1) / 2).
  for_each_word(dev, o, n, VEIL_LAMBDA(u32 p, u32 l, std::size_t j) {
    const u64 e = ((2 * u64(bit_reverse(u32(j), log_n)) + 1) * g) & mask;
    o.at(p, l, j) = iv.at(p, l, bit_reverse(u32((e - 1) >> 1), log_n));
  });
}

#define VEIL_POLY_INSTANTIATE(W)                                                                \
  template void add<W>(const Device&, const RnsBase&, std::size_t, std::size_t, const W*,       \
                       const W*, W*);                                                           \
  template void sub<W>(const Device&, const RnsBase&, std::size_t, std::size_t, const W*,       \
                       const W*, W*);                                                           \
  template void negate<W>(const Device&, const RnsBase&, std::size_t, std::size_t, const W*,    \
                          W*);                                                                  \
  template void multiply<W>(const Device&, const RnsBase&, std::size_t, std::size_t, const W*,  \
                            const W*, W*);                                                      \
  template void horner<W>(const Device&, const RnsBase&, std::size_t, std::size_t, const W*,    \
                          const W*, W*);                                                        \
  template void multiply_accumulate<W>(const Device&, const RnsBase&, std::size_t, std::size_t, \
                                       const W*, const W*, W*);                                 \
  template void multiply_broadcast<W>(const Device&, const RnsBase&, std::size_t, std::size_t,  \
                                      const W*, const W*, W*);                                  \
  template void multiply_word<W>(const Device&, const RnsBase&, std::size_t, std::size_t,       \
                                 const W*, u64, W*);                                            \
  template void lift_small<W>(const Device&, const RnsBase&, std::size_t, const u64*, u64, bool, \
                              W*);                                                              \
  template void automorphism_coeff<W>(const Device&, const RnsBase&, std::size_t, std::size_t,  \
                                      u32, const W*, W*);                                       \
  template void automorphism_ntt<W>(const Device&, const RnsBase&, std::size_t, std::size_t,    \
                                    u32, const W*, W*);                                         \
  template void tensor<W>(const Device&, const RnsBase&, std::size_t, const W*, std::size_t,    \
                          const W*, std::size_t, W*);
VEIL_POLY_INSTANTIATE(u32)
VEIL_POLY_INSTANTIATE(u64)
#undef VEIL_POLY_INSTANTIATE

// ---- WordPtr dispatch -------------------------------------------------------------------------
#define VEIL_DISPATCH(ptr, call) VEIL_WITH_WORD((ptr).word_bits(), call)

void add(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
         ConstWordPtr a, ConstWordPtr b, WordPtr out) {
  VEIL_DISPATCH(out, add<W>(dev, base, n, npolys, a.as<W>(), b.as<W>(), out.as<W>()));
}
void sub(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
         ConstWordPtr a, ConstWordPtr b, WordPtr out) {
  VEIL_DISPATCH(out, sub<W>(dev, base, n, npolys, a.as<W>(), b.as<W>(), out.as<W>()));
}
void negate(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            ConstWordPtr a, WordPtr out) {
  VEIL_DISPATCH(out, negate<W>(dev, base, n, npolys, a.as<W>(), out.as<W>()));
}
void multiply(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
              ConstWordPtr a, ConstWordPtr b, WordPtr out) {
  VEIL_DISPATCH(out, multiply<W>(dev, base, n, npolys, a.as<W>(), b.as<W>(), out.as<W>()));
}
void horner(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            ConstWordPtr polys, ConstWordPtr x, WordPtr out) {
  VEIL_DISPATCH(out, horner<W>(dev, base, n, npolys, polys.as<W>(), x.as<W>(), out.as<W>()));
}
void multiply_accumulate(const Device& dev, const RnsBase& base, std::size_t n,
                         std::size_t npolys, ConstWordPtr a, ConstWordPtr b, WordPtr out) {
  VEIL_DISPATCH(out, multiply_accumulate<W>(dev, base, n, npolys, a.as<W>(), b.as<W>(),
                                            out.as<W>()));
}
void multiply_broadcast(const Device& dev, const RnsBase& base, std::size_t n,
                        std::size_t npolys, ConstWordPtr a, ConstWordPtr b, WordPtr out) {
  VEIL_DISPATCH(out, multiply_broadcast<W>(dev, base, n, npolys, a.as<W>(), b.as<W>(),
                                           out.as<W>()));
}
void multiply_word(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   ConstWordPtr a, u64 s, WordPtr out) {
  VEIL_DISPATCH(out, multiply_word<W>(dev, base, n, npolys, a.as<W>(), s, out.as<W>()));
}
void lift_small(const Device& dev, const RnsBase& base, std::size_t n, const u64* in, u64 t,
                bool centered, WordPtr out) {
  VEIL_DISPATCH(out, lift_small<W>(dev, base, n, in, t, centered, out.as<W>()));
}
void automorphism_coeff(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        u32 galois_elt, ConstWordPtr in, WordPtr out) {
  VEIL_DISPATCH(out, automorphism_coeff<W>(dev, base, n, npolys, galois_elt, in.as<W>(),
                                           out.as<W>()));
}
void automorphism_ntt(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                      u32 galois_elt, ConstWordPtr in, WordPtr out) {
  VEIL_DISPATCH(out, automorphism_ntt<W>(dev, base, n, npolys, galois_elt, in.as<W>(),
                                         out.as<W>()));
}
void tensor(const Device& dev, const RnsBase& base, std::size_t n, ConstWordPtr a, std::size_t sa,
            ConstWordPtr b, std::size_t sb, WordPtr out) {
  VEIL_DISPATCH(out, tensor<W>(dev, base, n, a.as<W>(), sa, b.as<W>(), sb, out.as<W>()));
}
#undef VEIL_DISPATCH

}  // namespace veil::poly
