#include "veil/ring/poly_ops.h"

#include "veil/backend/launch.h"
#include "veil/core/primes.h"

namespace veil::poly {

void add(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys, const u64* a,
         const u64* b, u64* out) {
  const Modulus* m = base.moduli(dev);
  const std::size_t limbs = base.size();
  for_each_limb(dev, npolys, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) {
    out[i] = add_mod(a[i], b[i], m[l].value);
  });
}

void sub(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys, const u64* a,
         const u64* b, u64* out) {
  const Modulus* m = base.moduli(dev);
  const std::size_t limbs = base.size();
  for_each_limb(dev, npolys, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) {
    out[i] = sub_mod(a[i], b[i], m[l].value);
  });
}

void negate(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
            const u64* a, u64* out) {
  const Modulus* m = base.moduli(dev);
  const std::size_t limbs = base.size();
  for_each_limb(dev, npolys, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) {
    out[i] = neg_mod(a[i], m[l].value);
  });
}

void multiply(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
              const u64* a, const u64* b, u64* out) {
  const Modulus* m = base.moduli(dev);
  const std::size_t limbs = base.size();
  for_each_limb(dev, npolys, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) {
    out[i] = mul_mod(a[i], b[i], m[l]);
  });
}

void multiply_accumulate(const Device& dev, const RnsBase& base, std::size_t n,
                         std::size_t npolys, const u64* a, const u64* b, u64* out) {
  const Modulus* m = base.moduli(dev);
  const std::size_t limbs = base.size();
  for_each_limb(dev, npolys, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) {
    out[i] = mul_add_mod(a[i], b[i], out[i], m[l]);
  });
}

void multiply_broadcast(const Device& dev, const RnsBase& base, std::size_t n,
                        std::size_t npolys, const u64* a, const u64* b, u64* out) {
  const Modulus* m = base.moduli(dev);
  const std::size_t limbs = base.size();
  const std::size_t mask = n - 1;  // n is a power of two
  for_each_limb(dev, npolys, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) {
    out[i] = mul_mod(a[i], b[std::size_t(l) * n + (i & mask)], m[l]);
  });
}

void multiply_scalar(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                     const u64* a, const u64* scalars, u64* out) {
  const Modulus* m = base.moduli(dev);
  const std::size_t limbs = base.size();
  for_each_limb(dev, npolys, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) {
    out[i] = mul_mod(a[i], scalars[l], m[l]);
  });
}

void multiply_word(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                   const u64* a, u64 s, u64* out) {
  const Modulus* m = base.moduli(dev);
  const std::size_t limbs = base.size();
  for_each_limb(dev, npolys, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) {
    const Modulus mod = m[l];
    out[i] = mul_mod(a[i], reduce_word(s, mod), mod);
  });
}

void lift_small(const Device& dev, const RnsBase& base, std::size_t n, const u64* in, u64 t,
                bool centered, u64* out) {
  const Modulus* m = base.moduli(dev);
  const std::size_t limbs = base.size();
  const u64 half = t >> 1;
  const std::size_t mask = n - 1;  // n is a power of two
  for_each_limb(dev, 1, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) {
    const Modulus mod = m[l];
    const u64 v = in[i & mask];
    if (centered && v > half) {
      out[i] = neg_mod(reduce_word(t - v, mod), mod.value);
    } else {
      out[i] = reduce_word(v, mod);
    }
  });
}

void automorphism_coeff(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                        u32 galois_elt, const u64* in, u64* out) {
  const Modulus* m = base.moduli(dev);
  const std::size_t limbs = base.size();
  const u64 mask = 2 * n - 1;
  const u64 g = galois_elt;
  for_each_limb(dev, npolys, limbs, n, VEIL_LAMBDA(std::size_t i, u32 l) {
    const std::size_t j = i & (n - 1), row = i - j;
    const u64 idx = (u64(j) * g) & mask;
    const u64 q = m[l].value;
    if (idx < n) {
      out[row + idx] = in[i];
    } else {
      out[row + idx - n] = neg_mod(in[i], q);
    }
  });
}

namespace {
VEIL_HD u32 bitrev32(u32 x, int bits) {
#if VEIL_DEVICE_CODE
  return __brev(x) >> (32 - bits);
#else
  return reverse_bits(x, bits);
#endif
}
}  // namespace

void automorphism_ntt(const Device& dev, const RnsBase& base, std::size_t n, std::size_t npolys,
                      u32 galois_elt, const u64* in, u64* out) {
  const std::size_t limbs = base.size();
  const int log_n = log2_exact(n);
  const u64 mask = 2 * n - 1;
  const u64 g = galois_elt;
  // NTT slot i holds a(psi^(2 br(i) + 1)); sigma_g(a) there equals a(psi^((2 br(i) + 1) g)),
  // which sits at slot br(((2 br(i) + 1) g mod 2N - 1) / 2).
  for_each_limb(dev, npolys, limbs, n, VEIL_LAMBDA(std::size_t i, u32) {
    const std::size_t j = i & (n - 1), row = i - j;
    const u64 e = ((2 * u64(bitrev32(u32(j), log_n)) + 1) * g) & mask;
    out[i] = in[row + bitrev32(u32((e - 1) >> 1), log_n)];
  });
}

}  // namespace veil::poly
