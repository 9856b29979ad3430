#include "veil/ring/poly_ops.h"

#include <cstdint>
#include <type_traits>

#include "veil/backend/launch.h"
#include "veil/backend/memory.h"
#include "veil/core/primes.h"
#include "veil/ring/eltwise_simd.h"
#include "veil/ring/ntt_simd.h"
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

// f(p, l, j0, j1) over every limb l of every polynomial p of `shape`, covering j in [0, width) of
// each (width a power of two: the limb's words, or its groups of words). The kernels below ask
// their views for the limb's pointers once, then loop over [j0, j1). CUDA: one thread per j
// (j1 = j0 + 1), one launch row per (p, l) (for_each_limb). CPU: OpenMP over (row, chunk of up to
// 4096) pairs, so the pointer arithmetic is per chunk, not per word (per word it made add 2-3x
// slower on the CPU; bench/NOTES.md).
template <class V, class F>
void for_each_word(const Device& dev, const V& shape, std::size_t width, F f) {
  const std::size_t rows = std::size_t(shape.num_polys) * shape.num_limbs;
  if (dev.is_cuda() || rows == 0) {
    const std::size_t mask = width - 1;
    for_each_limb(dev, shape.num_polys, shape.num_limbs, width,
                  VEIL_LAMBDA(std::size_t i, u32 l, u32 p) { f(p, l, i & mask, (i & mask) + 1); });
    return;
  }
  const std::size_t chunk = width < 4096 ? width : 4096, chunks = width / chunk;
  const u32 limbs = shape.num_limbs;
  const std::int64_t count = static_cast<std::int64_t>(rows * chunks);
  const bool parallel = !backend::forked_child() && rows * width >= 8192;
#pragma omp parallel for schedule(static) if (parallel)
  for (std::int64_t rc = 0; rc < count; ++rc) {
    const std::size_t r = static_cast<std::size_t>(rc) / chunks;
    const std::size_t j0 = (static_cast<std::size_t>(rc) % chunks) * chunk;
    f(static_cast<u32>(r / limbs), static_cast<u32>(r % limbs), j0, j0 + chunk);
  }
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

// The products of binary_op on the CPU: the IFMA kernel where the limb's prime allows
// (eltwise_simd.h; 32-bit words widened to it per block), the scalar loop elsewhere.
template <class W>
void mul_limbs_cpu(const RnsPolyView<const W>& a, const RnsPolyView<const W>& b,
                   const RnsPolyView<W>& out) {
  const u32 limbs = out.num_limbs;
  cpu_row_chunks(std::size_t(out.num_polys) * limbs, out.n(),
                 [&](std::size_t r, std::size_t j0, std::size_t j1) {
    const u32 p = static_cast<u32>(r / limbs), l = static_cast<u32>(r % limbs);
    const W* x = a.limb(p, l) + j0;
    const W* y = b.limb(b.num_polys == 1 ? 0 : p, l) + j0;
    W* o = out.limb(p, l) + j0;
    const Modulus mod = out.modulus(l);
    if (detail::mul_mod_simd(o, x, y, j1 - j0, mod)) return;
    for (std::size_t j = 0; j < j1 - j0; ++j) o[j] = mul_mod(x[j], y[j], mod);
  });
}

// out = op(a, b, q_l) word by word; a view b of one polynomial is shared by every polynomial of
// a (broadcast). Groups of 16 bytes per thread when n is a multiple of the group and every
// pointer is 16-byte aligned (always, for whole polynomials of a pool allocation), else one word
// per thread. out may alias a (each thread reads its words before writing them) or b when not
// broadcast.
template <class W, class Op>
void binary_op(const Device& dev, const RnsPolyView<const W>& a, const RnsPolyView<const W>& b,
               const RnsPolyView<W>& out, Op op) {
  if constexpr (std::is_same_v<Op, MulOp>) {
    if (dev.is_cpu()) {
      mul_limbs_cpu(a, b, out);
      return;
    }
  }
  const std::size_t n = out.n();
  constexpr u32 kV = kGroup<W>;
  const bool grouped =
      n % kV == 0 && aligned16(a.data) && aligned16(b.data) && aligned16(out.data);
  if (grouped && b.num_polys == 1 && out.num_polys > 1) {
    // Broadcast (a ciphertext times a plaintext): one thread per limb group for every
    // polynomial, so each word of b is read once instead of once per polynomial (5 of 6
    // polynomial passes for a ciphertext of two; bench/NOTES.md).
    RnsPolyView<W> rows = out;
    rows.num_polys = 1;
    const u32 polys = out.num_polys;
    for_each_word(dev, rows, n / kV, VEIL_LAMBDA(u32, u32 l, std::size_t g0, std::size_t g1) {
      const W* y = b.limb(0, l);
      const Modulus mod = out.modulus(l);
      for (std::size_t j = g0 * kV; j < g1 * kV; j += kV) {
        const Group<W> yg = load_group(y + j);
        for (u32 p = 0; p < polys; ++p) {
          const Group<W> xg = load_group(a.limb(p, l) + j);
          Group<W> r;
#pragma unroll
          for (u32 k = 0; k < kV; ++k) r.w[k] = op(xg.w[k], yg.w[k], mod);
          store_group(out.limb(p, l) + j, r);
        }
      }
    });
    return;
  }
  if (grouped) {
    for_each_word(dev, out, n / kV, VEIL_LAMBDA(u32 p, u32 l, std::size_t g0, std::size_t g1) {
      const W* x = a.limb(p, l);
      const W* y = b.limb(b.num_polys == 1 ? 0 : p, l);
      W* o = out.limb(p, l);
      const Modulus mod = out.modulus(l);
      for (std::size_t j = g0 * kV; j < g1 * kV; j += kV) {
        const Group<W> xg = load_group(x + j), yg = load_group(y + j);
        Group<W> r;
#pragma unroll
        for (u32 k = 0; k < kV; ++k) r.w[k] = op(xg.w[k], yg.w[k], mod);
        store_group(o + j, r);
      }
    });
    return;
  }
  for_each_word(dev, out, n, VEIL_LAMBDA(u32 p, u32 l, std::size_t j0, std::size_t j1) {
    const W* x = a.limb(p, l);
    const W* y = b.limb(b.num_polys == 1 ? 0 : p, l);
    W* o = out.limb(p, l);
    const Modulus mod = out.modulus(l);
    for (std::size_t j = j0; j < j1; ++j) o[j] = op(x[j], y[j], mod);
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
  // limb by limb: acc = acc x + c_k with the IFMA kernel where it applies (32-bit words widened
  // to it; out must not be x: each pass rewrites out before the next reads x)
  if (dev.is_cpu() && out != x) {
    cpu_row_chunks(o.num_limbs, n, [&](std::size_t r, std::size_t j0, std::size_t j1) {
      const u32 l = static_cast<u32>(r);
      const W* xl = xv.limb(0, l) + j0;
      W* ol = o.limb(0, l) + j0;
      const Modulus mod = o.modulus(l);
      const std::size_t len = j1 - j0;
      bool vec = true;
      for (u32 k = last; k-- > 0 && vec;) {
        const W* acc = k + 1 == last ? c.limb(last, l) + j0 : ol;
        vec = detail::mul_add_mod_simd(ol, acc, xl, c.limb(k, l) + j0, len, mod);
      }
      if (vec && last > 0) return;
      for (std::size_t j = 0; j < len; ++j) {
        W acc = c.limb(last, l)[j0 + j];
        for (u32 k = last; k-- > 0;) acc = mul_add_mod(acc, xl[j], c.limb(k, l)[j0 + j], mod);
        ol[j] = acc;
      }
    });
    return;
  }
  constexpr u32 kV = kGroup<W>;
  if (dev.is_cuda() && n % kV == 0 && aligned16(polys) && aligned16(x) && aligned16(out)) {
    // 16 bytes per thread and operand (decryption's phase: c0 + c1 s is one read of c0, c1 and
    // s and one write, byte-bound; one word per thread left it at about half the bandwidth)
    for_each_word(dev, o, n / kV, VEIL_LAMBDA(u32, u32 l, std::size_t g0, std::size_t g1) {
      const W* xl = xv.limb(0, l);
      W* ol = o.limb(0, l);
      const Modulus mod = o.modulus(l);
      for (std::size_t j = g0 * kV; j < g1 * kV; j += kV) {
        const Group<W> xg = load_group(xl + j);
        Group<W> acc = load_group(c.limb(last, l) + j);
        for (u32 k = last; k-- > 0;) {
          const Group<W> ck = load_group(c.limb(k, l) + j);
#pragma unroll
          for (u32 v = 0; v < kV; ++v) acc.w[v] = mul_add_mod(acc.w[v], xg.w[v], ck.w[v], mod);
        }
        store_group(ol + j, acc);
      }
    });
    return;
  }
  for_each_word(dev, o, n, VEIL_LAMBDA(u32, u32 l, std::size_t j0, std::size_t j1) {
    const W* xl = xv.limb(0, l);
    W* ol = o.limb(0, l);
    const Modulus mod = o.modulus(l);
    for (std::size_t j = j0; j < j1; ++j) {
      W acc = c.limb(last, l)[j];
      for (u32 k = last; k-- > 0;) acc = mul_add_mod(acc, xl[j], c.limb(k, l)[j], mod);
      ol[j] = acc;
    }
  });
}

template <class W>
void multiply_accumulate(const Device& dev, const RnsBase& base, std::size_t n,
                         std::size_t npolys, const W* a, const W* b, W* out) {
  const RnsPolyView<const W> av = view(dev, a, npolys, base, n), bv = view(dev, b, npolys, base, n);
  const RnsPolyView<W> o = view(dev, out, npolys, base, n);
  if (dev.is_cpu()) {  // the IFMA kernel where the prime allows it (32-bit words widened)
    const u32 limbs = o.num_limbs;
    cpu_row_chunks(std::size_t(o.num_polys) * limbs, n,
                   [&](std::size_t r, std::size_t j0, std::size_t j1) {
      const u32 p = static_cast<u32>(r / limbs), l = static_cast<u32>(r % limbs);
      const W *x = av.limb(p, l) + j0, *y = bv.limb(p, l) + j0;
      W* ol = o.limb(p, l) + j0;
      const Modulus mod = o.modulus(l);
      if (detail::mul_add_mod_simd(ol, x, y, ol, j1 - j0, mod)) return;
      for (std::size_t j = 0; j < j1 - j0; ++j) ol[j] = mul_add_mod(x[j], y[j], ol[j], mod);
    });
    return;
  }
  for_each_word(dev, o, n, VEIL_LAMBDA(u32 p, u32 l, std::size_t j0, std::size_t j1) {
    const W* x = av.limb(p, l);
    const W* y = bv.limb(p, l);
    W* ol = o.limb(p, l);
    const Modulus mod = o.modulus(l);
    for (std::size_t j = j0; j < j1; ++j) ol[j] = mul_add_mod(x[j], y[j], ol[j], mod);
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
  for_each_word(dev, o, n, VEIL_LAMBDA(u32 p, u32 l, std::size_t j0, std::size_t j1) {
    const W* x = av.limb(p, l);
    W* ol = o.limb(p, l);
    const Modulus mod = o.modulus(l);
    const W sm = reduce_to<W>(s, mod);
    for (std::size_t j = j0; j < j1; ++j) ol[j] = mul_mod(x[j], sm, mod);
  });
}

// sum_i a_i * b_i for P polynomials of every a_i against one b_i per term, V words per thread
// (V = kGroup<W>: 16-byte vector loads). Each b_i word is read once for all P polynomials, and
// the products are summed in a wide accumulator (WideAcc: one IMAD.WIDE per 32-bit product) and
// reduced once per output word instead of once per term. Terms from `unshifted` on (Shifted)
// read a b_i stored as one period (shift s: word j of the full polynomial at (l N + j) >> s),
// once per run of 2^s words when the run covers a thread's V words; the full-form terms come
// first in a loop of their own, without the shift's branch (the shift is the same for every
// thread: no divergence either way).
template <class W, u32 P, u32 V, bool Shifted>
struct DotBroadcast {
  RnsPolyView<W> o;
  const u64* a_ptrs;
  const u64* b_ptrs;
  const u64* b_shifts;
  std::size_t count, unshifted, pw, n;
  VEIL_HD static void accumulate(WideAcc<W> (&acc)[P][V], const W* a, std::size_t pw,
                                 const W (&bw)[V]) {
    for (u32 p = 0; p < P; ++p) {
      if constexpr (V == kGroup<W>) {
        const Group<W> ag = load_group(a + p * pw);
        for (u32 k = 0; k < V; ++k) acc[p][k].add(ag.w[k], bw[k]);
      } else {
        for (u32 k = 0; k < V; ++k) acc[p][k].add(a[p * pw + k], bw[k]);
      }
    }
  }
  VEIL_HD void operator()(u32, u32 l, std::size_t g0, std::size_t g1) const {
    const Modulus mod = o.modulus(l);
    W* ol = o.limb(0, l);
    const std::size_t off = l * n;
    const std::size_t full = Shifted ? unshifted : count;
    for (std::size_t g = g0; g < g1; ++g) {
      const std::size_t j = g * V;
      WideAcc<W> acc[P][V];
      for (std::size_t i = 0; i < full; ++i) {
        const W* b = reinterpret_cast<const W*>(b_ptrs[i]) + off + j;
        W bw[V];
        if constexpr (V == kGroup<W>) {
          const Group<W> bg = load_group(b);
          for (u32 k = 0; k < V; ++k) bw[k] = bg.w[k];
        } else {
          for (u32 k = 0; k < V; ++k) bw[k] = b[k];
        }
        accumulate(acc, reinterpret_cast<const W*>(a_ptrs[i]) + off + j, pw, bw);
      }
      if constexpr (Shifted) {
        for (std::size_t i = full; i < count; ++i) {
          const W* b0 = reinterpret_cast<const W*>(b_ptrs[i]);
          const u32 s = static_cast<u32>(b_shifts[i]);
          W bw[V];
          if ((std::size_t(1) << s) >= V) {  // one word covers the thread's V words
            const W w = b0[(off + j) >> s];
            for (u32 k = 0; k < V; ++k) bw[k] = w;
          } else {
            for (u32 k = 0; k < V; ++k) bw[k] = b0[(off + j + k) >> s];
          }
          accumulate(acc, reinterpret_cast<const W*>(a_ptrs[i]) + off + j, pw, bw);
        }
      }
      for (u32 p = 0; p < P; ++p) {
        if constexpr (V == kGroup<W>) {
          Group<W> og;
          for (u32 k = 0; k < V; ++k) og.w[k] = static_cast<W>(acc[p][k].reduce(mod));
          store_group(ol + p * pw + j, og);
        } else {
          for (u32 k = 0; k < V; ++k) ol[p * pw + j + k] = static_cast<W>(acc[p][k].reduce(mod));
        }
      }
    }
  }
};

template <class W, u32 P, bool Shifted>
void dot_broadcast_s(const Device& dev, const RnsPolyView<W>& o, std::size_t n, std::size_t pw,
                     const u64* a_ptrs, const u64* b_ptrs, const u64* b_shifts,
                     std::size_t count, std::size_t unshifted, bool vector) {
  if (vector && n % kGroup<W> == 0) {
    for_each_word(dev, o, n / kGroup<W>,
                  DotBroadcast<W, P, kGroup<W>, Shifted>{o, a_ptrs, b_ptrs, b_shifts, count,
                                                         unshifted, pw, n});
  } else {
    for_each_word(dev, o, n,
                  DotBroadcast<W, P, 1, Shifted>{o, a_ptrs, b_ptrs, b_shifts, count, unshifted,
                                                 pw, n});
  }
}

// Without shifted terms the kernel is the plain inner sums' (no second loop).
template <class W, u32 P>
void dot_broadcast_p(const Device& dev, const RnsPolyView<W>& o, std::size_t n, std::size_t pw,
                     const u64* a_ptrs, const u64* b_ptrs, const u64* b_shifts,
                     std::size_t count, std::size_t unshifted, bool vector) {
  if (b_shifts != nullptr && unshifted < count) {
    dot_broadcast_s<W, P, true>(dev, o, n, pw, a_ptrs, b_ptrs, b_shifts, count, unshifted,
                                vector);
  } else {
    dot_broadcast_s<W, P, false>(dev, o, n, pw, a_ptrs, b_ptrs, b_shifts, count, count, vector);
  }
}

template <class W>
void dot_broadcast(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   const u64* a_ptrs, const u64* b_ptrs, std::size_t count, W* out,
                   const u64* b_shifts, std::size_t unshifted) {
  VEIL_REQUIRE(b_shifts == nullptr || unshifted <= count,
               "dot_broadcast: unshifted must not exceed count");
  VEIL_REQUIRE(npolys >= 1 && npolys <= 3, "dot_broadcast: 1 to 3 polynomials per operand");
  // Iterate over the limbs of one polynomial; the kernel covers the others at the same words.
  const RnsPolyView<W> o = view(dev, out, 1, base, n);
  const std::size_t pw = base.size() * n;  // words per polynomial of every operand
  // Operands come from the pool (256-byte aligned) and limbs are N words: 16-byte vector loads
  // are safe; the CPU reads word by word either way.
  const bool vector = aligned16(out);
  const std::size_t u = b_shifts != nullptr ? unshifted : count;
  switch (npolys) {
    case 1: dot_broadcast_p<W, 1>(dev, o, n, pw, a_ptrs, b_ptrs, b_shifts, count, u, vector);
      break;
    case 2: dot_broadcast_p<W, 2>(dev, o, n, pw, a_ptrs, b_ptrs, b_shifts, count, u, vector);
      break;
    default: dot_broadcast_p<W, 3>(dev, o, n, pw, a_ptrs, b_ptrs, b_shifts, count, u, vector);
  }
}

template <class W>
void scalar_combination(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        const u64* a_ptrs, const u64* a_strides, const u64* residues,
                        std::size_t count, const u64* constant, W* out) {
  const RnsPolyView<W> o = view(dev, out, npolys, base, n);
  const std::size_t limbs = base.size();
  constexpr u32 kV = kGroup<W>;
  if (dev.is_cuda() && n % kV == 0 && aligned16(out)) {
    // One 16-byte group per thread: each operand's pointer, stride and residue are read once
    // per kV words (the binary operations' groups). An operand not 16-byte aligned (a pointer
    // the pool did not hand out) is read word by word; the branch is the same for every thread.
    for_each_word(dev, o, n / kV, VEIL_LAMBDA(u32 p, u32 l, std::size_t g0, std::size_t g1) {
      W* ol = o.limb(p, l);
      const Modulus mod = o.modulus(l);
      const W q = static_cast<W>(mod.value);
      const W c = (constant != nullptr && p == 0) ? static_cast<W>(constant[l]) : W(0);
      for (std::size_t j = g0 * kV; j < g1 * kV; j += kV) {
        Group<W> acc;
#pragma unroll
        for (u32 k = 0; k < kV; ++k) acc.w[k] = c;
        for (std::size_t i = 0; i < count; ++i) {
          const W* a = reinterpret_cast<const W*>(a_ptrs[i]) + p * a_strides[i] + l * n + j;
          const W r = static_cast<W>(residues[i * limbs + l]);
          Group<W> x;
          if ((reinterpret_cast<std::uintptr_t>(a) & 15) == 0) {
            x = load_group(a);
          } else {
#pragma unroll
            for (u32 k = 0; k < kV; ++k) x.w[k] = a[k];
          }
#pragma unroll
          for (u32 k = 0; k < kV; ++k) acc.w[k] = add_mod(acc.w[k], mul_mod(x.w[k], r, mod), q);
        }
        store_group(ol + j, acc);
      }
    });
    return;
  }
  for_each_word(dev, o, n, VEIL_LAMBDA(u32 p, u32 l, std::size_t j0, std::size_t j1) {
    W* ol = o.limb(p, l);
    const Modulus mod = o.modulus(l);
    const W q = static_cast<W>(mod.value);
    const W c = (constant != nullptr && p == 0) ? static_cast<W>(constant[l]) : W(0);
    for (std::size_t j = j0; j < j1; ++j) {
      W acc = c;
      for (std::size_t i = 0; i < count; ++i) {
        const W* a = reinterpret_cast<const W*>(a_ptrs[i]) + p * a_strides[i] + l * n;
        acc = add_mod(acc, mul_mod(a[j], static_cast<W>(residues[i * limbs + l]), mod), q);
      }
      ol[j] = acc;
    }
  });
}

template <class W>
void lift_small(const Device& dev, const RnsBase& base, std::size_t n, const u64* in, u64 t,
                bool centered, W* out) {
  const RnsPolyView<W> o = view(dev, out, 1, base, n);
  const u64 half = t >> 1;
  for_each_word(dev, o, n, VEIL_LAMBDA(u32, u32 l, std::size_t j0, std::size_t j1) {
    W* ol = o.limb(0, l);
    const Modulus mod = o.modulus(l);
    for (std::size_t j = j0; j < j1; ++j) {
      const u64 v = in[j];  // one polynomial of small integers, shared by every limb
      ol[j] = centered && v > half ? W(neg_mod(reduce_word(t - v, mod), mod.value))
                                   : reduce_to<W>(v, mod);
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
  for_each_word(dev, o, n, VEIL_LAMBDA(u32 p, u32 l, std::size_t j0, std::size_t j1) {
    const W* x = iv.limb(p, l);
    W* ol = o.limb(p, l);
    const W q = W(o.modulus(l).value);
    for (std::size_t j = j0; j < j1; ++j) {
      const u64 idx = (u64(j) * g) & mask;  // X^j -> X^(j g) = -X^(j g - n) past n
      if (idx < n) {
        ol[idx] = x[j];
      } else {
        ol[idx - n] = neg_mod(x[j], q);
      }
    }
  });
}

namespace {
// The middle term a0 b1 + a1 b0 mod q of one word. 32-bit words: two 32-bit Barrett reductions
// (the second product's reduction is the first's addend), cheaper on a GPU than WideAcc's 64-bit
// one; the residue is the same.
template <class W>
VEIL_HD W tensor_mid(W a0, W a1, W b0, W b1, const Modulus& mod) {
  if constexpr (sizeof(W) == 4) {
    return mul_add_mod(a0, b1, mul_mod(a1, b0, mod), mod);
  } else {
    WideAcc<W> mid;
    mid.add(a0, b1);
    mid.add(a1, b0);
    return mid.reduce(mod);
  }
}

// Word j of the tensor product of (a0, a1) and (b0, b1): a0 b0, a0 b1 + a1 b0, a1 b1.
template <class W>
VEIL_HD void tensor_word(const W* a0, const W* a1, const W* b0, const W* b1, W* o0, W* o1, W* o2,
                         std::size_t j, const Modulus& mod) {
  o0[j] = mul_mod(a0[j], b0[j], mod);
  o1[j] = tensor_mid(a0[j], a1[j], b0[j], b1[j], mod);
  o2[j] = mul_mod(a1[j], b1[j], mod);
}
}  // namespace

template <class W>
void tensor(const Device& dev, const RnsBase& base, std::size_t n, const W* a, std::size_t sa,
            const W* b, std::size_t sb, W* out) {
  const std::size_t pw = base.size() * n;
  if (sa == 2 && sb == 2) {
    const RnsPolyView<const W> av = view(dev, a, 2, base, n), bv = view(dev, b, 2, base, n);
    const RnsPolyView<W> o = view(dev, out, 3, base, n);
    if (dev.is_cpu()) {  // the IFMA kernel where the prime allows it (32-bit words widened)
      cpu_row_chunks(o.num_limbs, n, [&](std::size_t r, std::size_t j0, std::size_t j1) {
        const u32 l = static_cast<u32>(r);
        const W *a0 = av.limb(0, l) + j0, *a1 = av.limb(1, l) + j0;
        const W *b0 = bv.limb(0, l) + j0, *b1 = bv.limb(1, l) + j0;
        W *o0 = o.limb(0, l) + j0, *o1 = o.limb(1, l) + j0, *o2 = o.limb(2, l) + j0;
        const Modulus mod = o.modulus(l);
        if (detail::tensor_simd(o0, o1, o2, a0, a1, b0, b1, j1 - j0, mod)) return;
        for (std::size_t j = 0; j < j1 - j0; ++j) tensor_word(a0, a1, b0, b1, o0, o1, o2, j, mod);
      });
      return;
    }
    constexpr u32 kV = kGroup<W>;
    if (n % kV == 0 && aligned16(a) && aligned16(b) && aligned16(out)) {
      // One 16-byte group of each of the seven rows per thread (the binary operations' groups):
      // the rows' pointers are looked up once per kV words, and every load is issued before
      // the first product.
      for_each_word(dev, view(dev, out, 1, base, n), n / kV,
                    VEIL_LAMBDA(u32, u32 l, std::size_t g0, std::size_t g1) {
        const Modulus mod = o.modulus(l);
        for (std::size_t j = g0 * kV; j < g1 * kV; j += kV) {
          const Group<W> x0 = load_group(av.limb(0, l) + j), x1 = load_group(av.limb(1, l) + j);
          const Group<W> y0 = load_group(bv.limb(0, l) + j), y1 = load_group(bv.limb(1, l) + j);
          Group<W> r0, r1, r2;
#pragma unroll
          for (u32 k = 0; k < kV; ++k) {
            r0.w[k] = mul_mod(x0.w[k], y0.w[k], mod);
            r1.w[k] = tensor_mid(x0.w[k], x1.w[k], y0.w[k], y1.w[k], mod);
            r2.w[k] = mul_mod(x1.w[k], y1.w[k], mod);
          }
          store_group(o.limb(0, l) + j, r0);
          store_group(o.limb(1, l) + j, r1);
          store_group(o.limb(2, l) + j, r2);
        }
      });
      return;
    }
    for_each_word(dev, view(dev, out, 1, base, n), n,
                  VEIL_LAMBDA(u32, u32 l, std::size_t j0, std::size_t j1) {
      const W *a0 = av.limb(0, l), *a1 = av.limb(1, l), *b0 = bv.limb(0, l), *b1 = bv.limb(1, l);
      W *o0 = o.limb(0, l), *o1 = o.limb(1, l), *o2 = o.limb(2, l);
      const Modulus mod = o.modulus(l);
      for (std::size_t j = j0; j < j1; ++j) tensor_word(a0, a1, b0, b1, o0, o1, o2, j, mod);
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
  for_each_word(dev, o, n, VEIL_LAMBDA(u32 p, u32 l, std::size_t j0, std::size_t j1) {
    const W* x = iv.limb(p, l);
    W* ol = o.limb(p, l);
    for (std::size_t j = j0; j < j1; ++j) {
      const u64 e = ((2 * u64(bit_reverse(u32(j), log_n)) + 1) * g) & mask;
      ol[j] = x[bit_reverse(u32((e - 1) >> 1), log_n)];
    }
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
  template void scalar_combination<W>(const Device&, const RnsBase&, std::size_t, std::size_t,  \
                                      const u64*, const u64*, const u64*, std::size_t,          \
                                      const u64*, W*);                                          \
  template void dot_broadcast<W>(const Device&, const RnsBase&, std::size_t, std::size_t,       \
                                 const u64*, const u64*, std::size_t, W*, const u64*,           \
                                 std::size_t);                                                  \
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
void scalar_combination(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        const u64* a_ptrs, const u64* a_strides, const u64* residues,
                        std::size_t count, const u64* constant, WordPtr out) {
  VEIL_DISPATCH(out, scalar_combination<W>(dev, base, n, npolys, a_ptrs, a_strides, residues,
                                           count, constant, out.as<W>()));
}
void dot_broadcast(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   const u64* a_ptrs, const u64* b_ptrs, std::size_t count, WordPtr out,
                   const u64* b_shifts, std::size_t unshifted) {
  VEIL_DISPATCH(out, dot_broadcast<W>(dev, base, n, npolys, a_ptrs, b_ptrs, count, out.as<W>(),
                                      b_shifts, unshifted));
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
