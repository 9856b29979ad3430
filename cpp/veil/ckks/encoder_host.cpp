// Host-side precomputation of CKKSEncoder's tables: the half-size special-FFT roots, SEAL's slot
// index map, and the primes and converters used to decode exactly.
#include <cmath>

#include "veil/ckks/encoder.h"
#include "veil/core/error.h"
#include "veil/core/primes.h"

namespace veil::detail {

namespace {

/// zeta^k for zeta = exp(2*pi*i / m), m a multiple of 8, computed in long double on the first
/// octant and mapped by the symmetries of the circle, so that conjugate and quarter-turn roots
/// are exact conjugates / rotations of each other and 1, i, -1, -i are exact (as SEAL's
/// util::ComplexRoots).
Complex64 root_of_unity(u64 k, u64 m) {
  k %= m;
  if (k > m / 2) {  // e^{-i t} = conj(e^{i t})
    Complex64 r = root_of_unity(m - k, m);
    return {r.re, -r.im};
  }
  if (k > m / 4) {  // e^{i(pi - t)} = -conj(e^{i t})
    Complex64 r = root_of_unity(m / 2 - k, m);
    return {-r.re, r.im};
  }
  if (k > m / 8) {  // e^{i(pi/2 - t)} = i * conj(e^{i t})
    Complex64 r = root_of_unity(m / 4 - k, m);
    return {r.im, r.re};
  }
  constexpr long double two_pi = 6.283185307179586476925286766559005768L;
  const long double t = two_pi * static_cast<long double>(k) / static_cast<long double>(m);
  return {static_cast<double>(std::cos(t)), static_cast<double>(std::sin(t))};
}

}  // namespace

CkksEncoderTables build_ckks_encoder_tables(const Context& ctx) {
  CkksEncoderTables t;
  const std::size_t n = ctx.n();
  const int log_n = ctx.log_n();
  const std::size_t half = n / 2;
  const u64 two_n = 2 * static_cast<u64>(n);
  t.n = n;
  t.log_n = log_n;

  // Half-size transform: stage with m blocks uses zeta^bitrev(2m + i, logN) in block i; these are
  // the roots of stages 2..logN of SEAL's size-N transform (root_powers[2m + i]) on its first half.
  std::vector<Complex64> roots(half);
  for (std::size_t m = 1; m < half; m <<= 1) {
    for (std::size_t i = 0; i < m; ++i) {
      roots[m + i] = root_of_unity(reverse_bits(static_cast<u32>(2 * m + i), log_n), two_n);
    }
  }
  t.roots = DeviceTable<Complex64>(std::move(roots));

  // SEAL's matrix_reps_index_map, and for each slot its position among the points = 1 mod 4.
  t.index_map.assign(n, 0);
  std::vector<u32> slot_pos(half);
  u64 pos = 1;
  for (std::size_t i = 0; i < half; ++i) {
    const u64 idx1 = (pos - 1) >> 1;
    const u64 idx2 = (two_n - pos - 1) >> 1;
    t.index_map[i] = reverse_bits(static_cast<u32>(idx1), log_n);
    t.index_map[half + i] = reverse_bits(static_cast<u32>(idx2), log_n);
    if (t.index_map[i] < half) {
      slot_pos[i] = t.index_map[i];
    } else {
      slot_pos[i] = t.index_map[half + i] | (u32(1) << 31);
    }
    pos = (pos * 3) & (two_n - 1);
  }
  t.slot_pos = DeviceTable<u32>(std::move(slot_pos));

  // Three 61-bit primes outside the context for exact decoding (no NTT is done over them; being
  // 1 mod 2N is merely how generate_ntt_primes picks them).
  const std::vector<u64>& ctx_primes = ctx.params().coeff_modulus;
  const std::vector<u64> p = generate_ntt_primes(61, n, 3, ctx_primes);
  t.decode_base = RnsBase(std::vector<Modulus>{Modulus(p[0]), Modulus(p[1]), Modulus(p[2])});
  t.inv_p1_mod_p2 = inv_mod(p[0] % p[1], p[1]);
  t.inv_p1_mod_p3 = inv_mod(p[0] % p[2], p[2]);
  t.inv_p2_mod_p3 = inv_mod(p[1] % p[2], p[2]);

  const std::size_t levels = ctx.max_level() + 1;
  t.to_decode.reserve(levels);
  t.log2_q.reserve(levels);
  double bits = 0.0;
  for (std::size_t l = 0; l < levels; ++l) {
    const RnsBase& base = ctx.base_q(l);
    t.to_decode.emplace_back(base, t.decode_base);
    bits += std::log2(static_cast<double>(base[l].value));
    t.log2_q.push_back(bits);
  }
  return t;
}

}  // namespace veil::detail
