#include "veil/ring/poly_ops.h"

#include <cstdint>

#include "veil/backend/launch.h"
#include "veil/core/primes.h"

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

// out = op(a, b, q_l) word by word over [npolys][limbs][n]; with b_broadcast, b is one
// polynomial [limbs][n] shared by every polynomial of a. Groups of 16 bytes per thread when n is
// a multiple of the group and every pointer is 16-byte aligned (always, for whole polynomials of
// a pool allocation), else one word per thread. out may alias a (each thread reads its words
// before writing them) or b when not broadcast.
template <class W, class Op>
void binary_op(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
               const W* a, const W* b, bool b_broadcast, W* out, Op op) {
  const Modulus* m = base.moduli(dev);
  const std::size_t limbs = base.size(), mask = n - 1;  // n is a power of two
  constexpr u32 kV = kGroup<W>;
  if (n % kV == 0 && aligned16(a) && aligned16(b) && aligned16(out)) {
    for_each_limb(dev, npolys, limbs, n / kV, VEIL_LAMBDA(std::size_t g, u32 l) {
      const std::size_t i = g * kV;
      const std::size_t j = b_broadcast ? std::size_t(l) * n + (i & mask) : i;
      const Modulus mod = m[l];
      const Group<W> x = load_group(a + i), y = load_group(b + j);
      Group<W> r;
#pragma unroll
      for (u32 k = 0; k < kV; ++k) r.w[k] = op(x.w[k], y.w[k], mod);
      store_group(out + i, r);
    });
    return;
  }
  for_each_limb(dev, npolys, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) {
    const std::size_t j = b_broadcast ? std::size_t(l) * n + (i & mask) : i;
    out[i] = op(a[i], b[j], m[l]);
  });
}

}  // namespace

template <class W>
void add(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys, const W* a,
         const W* b, W* out) {
  binary_op(dev, base, n, npolys, a, b, false, out, AddOp{});
}

template <class W>
void sub(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys, const W* a,
         const W* b, W* out) {
  binary_op(dev, base, n, npolys, a, b, false, out, SubOp{});
}

template <class W>
void negate(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            const W* a, W* out) {
  binary_op(dev, base, n, npolys, a, a, false, out, NegOp{});
}

template <class W>
void multiply(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
              const W* a, const W* b, W* out) {
  binary_op(dev, base, n, npolys, a, b, false, out, MulOp{});
}

template <class W>
void horner(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            const W* polys, const W* x, W* out) {
  const Modulus* m = base.moduli(dev);
  const std::size_t stride = base.size() * n;
  for_each_limb(dev, 1, base.size(), n, VEIL_LAMBDA(std::size_t i, u32 l) {
    W acc = polys[(npolys - 1) * stride + i];
    for (std::size_t k = npolys - 1; k-- > 0;) {
      acc = mul_add_mod(acc, x[i], polys[k * stride + i], m[l]);
    }
    out[i] = acc;
  });
}

template <class W>
void multiply_accumulate(const Device& dev, const RnsBase& base, std::size_t n,
                         std::size_t npolys, const W* a, const W* b, W* out) {
  const Modulus* m = base.moduli(dev);
  for_each_limb(dev, npolys, base.size(), n, VEIL_LAMBDA(std::size_t i, u32 l) {
    out[i] = mul_add_mod(a[i], b[i], out[i], m[l]);
  });
}

template <class W>
void multiply_broadcast(const Device& dev, const RnsBase& base, std::size_t n,
                        std::size_t npolys, const W* a, const W* b, W* out) {
  binary_op(dev, base, n, npolys, a, b, true, out, MulOp{});
}

template <class W>
void multiply_word(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   const W* a, u64 s, W* out) {
  const Modulus* m = base.moduli(dev);
  for_each_limb(dev, npolys, base.size(), n, VEIL_LAMBDA(std::size_t i, u32 l) {
    const Modulus mod = m[l];
    out[i] = mul_mod(a[i], reduce_to<W>(s, mod), mod);
  });
}

template <class W>
void lift_small(const Device& dev, const RnsBase& base, std::size_t n, const u64* in, u64 t,
                bool centered, W* out) {
  const Modulus* m = base.moduli(dev);
  const u64 half = t >> 1;
  const std::size_t mask = n - 1;  // n is a power of two
  for_each_limb(dev, 1, base.size(), n, VEIL_LAMBDA(std::size_t i, u32 l) {
    const Modulus mod = m[l];
    const u64 v = in[i & mask];
    if (centered && v > half) {
      out[i] = W(neg_mod(reduce_word(t - v, mod), mod.value));
    } else {
      out[i] = reduce_to<W>(v, mod);
    }
  });
}

template <class W>
void automorphism_coeff(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        u32 galois_elt, const W* in, W* out) {
  const Modulus* m = base.moduli(dev);
  const u64 mask = 2 * n - 1;
  const u64 g = galois_elt;
  for_each_limb(dev, npolys, base.size(), n, VEIL_LAMBDA(std::size_t i, u32 l) {
    const std::size_t j = i & (n - 1), row = i - j;
    const u64 idx = (u64(j) * g) & mask;
    if (idx < n) {
      out[row + idx] = in[i];
    } else {
      out[row + idx - n] = neg_mod(in[i], W(m[l].value));
    }
  });
}

template <class W>
void tensor(const Device& dev, const RnsBase& base, std::size_t n, const W* a, std::size_t sa,
            const W* b, std::size_t sb, W* out) {
  const std::size_t pw = base.size() * n;
  if (sa == 2 && sb == 2) {
    const Modulus* m = base.moduli(dev);
    for_each_limb(dev, 1, base.size(), n, VEIL_LAMBDA(std::size_t i, u32 limb) {
      const Modulus mod = m[limb];
      const W a0 = a[i], a1 = a[pw + i], b0 = b[i], b1 = b[pw + i];
      out[i] = mul_mod(a0, b0, mod);
      WideAcc<W> mid;
      mid.add(a0, b1);
      mid.add(a1, b0);
      out[pw + i] = mid.reduce(mod);
      out[2 * pw + i] = mul_mod(a1, b1, mod);
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
  const int log_n = log2_exact(n);
  const u64 mask = 2 * n - 1;
  const u64 g = galois_elt;
  // NTT slot i holds a(psi^(2 br(i) + 1)); sigma_g(a) there equals a(psi^((2 br(i) + 1) g)),
  // which sits at slot br(((2 br(i) + 1) g mod 2N - 1) / 2).
  for_each_limb(dev, npolys, base.size(), n, VEIL_LAMBDA(std::size_t i, u32) {
    const std::size_t j = i & (n - 1), row = i - j;
    const u64 e = ((2 * u64(bit_reverse(u32(j), log_n)) + 1) * g) & mask;
    out[i] = in[row + bit_reverse(u32((e - 1) >> 1), log_n)];
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
