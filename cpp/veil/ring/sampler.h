// Samplers for RLWE: uniform residues, ternary secrets, centered-binomial errors.
// All are functions of a PrngStream only, so the CPU and CUDA backends produce identical output.
//
// - Uniform mod q: each coefficient takes 128 keystream bits x and returns x mod q. The
//   statistical distance from uniform is at most q / 2^128 < 2^-67 per coefficient.
// - Ternary: each coefficient takes 64 bits x and returns floor(3x / 2^64) - 1 in {-1, 0, 1}
//   (distance from uniform < 2^-62), written into every limb (SEAL's secret distribution).
// - Centered binomial: popcount of 21 bits minus popcount of 21 bits, variance 42/4 = 10.5,
//   sigma ~ 3.24 (SEAL's default sigma = 3.2 with the same support bound of 21).
#pragma once
#include <bit>
#include <cstddef>

#include "veil/backend/device.h"
#include "veil/backend/word_buffer.h"
#include "veil/core/modarith.h"
#include "veil/ring/chacha20.h"
#include "veil/ring/rns_base.h"

namespace veil {

/// The keystream address of a uniform sampler's limb l: l itself, or l + skip from `split` on.
/// A key-switching key below the top level stores q_0..q_level and then P
/// (rlwe/objects.h KSwitchKey): its P limbs keep the addresses they have in Q ∪ P
/// (split = level + 1, skip = L - 1 - level), so that such a key is the projection of the
/// full key of the same seed.
struct LimbAddress {
  /// The first limb whose address is shifted (default: none).
  std::size_t split = static_cast<std::size_t>(-1);
  /// The shift of the limbs from `split` on.
  std::size_t skip = 0;
  /// The keystream address of limb l.
  /// @param l the limb index in the sampled base.
  /// @return l below split, l + skip from split on.
  VEIL_HD std::size_t operator()(std::size_t l) const { return l < split ? l : l + skip; }
};

/// out: [base.size()][n], uniform in [0, q_l) per limb l (keystream address addr(l)). W = u32
/// or u64 (the same residues).
/// Coefficient j of limb l is the 128-bit value of 64-bit words 2k + 1 (high) and 2k (low),
/// k = j % 4, of block j / 4 of sub-stream addr(l), reduced mod q_l: statistical distance from
/// uniform below 2^-67 per coefficient.
/// @tparam W u32 or u64.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words; overwritten.
/// @param n the ring degree N.
/// @param base the limbs' moduli.
/// @param stream the keystream (seed and domain).
/// @param addr the limbs' keystream addresses.
/// @throws RuntimeError if a CUDA launch fails.
template <class W>
void sample_uniform(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                    const PrngStream& stream, LimbAddress addr);
/// sample_uniform with every limb at its own index as its address.
/// @tparam W u32 or u64.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words; overwritten.
/// @param n the ring degree N.
/// @param base the limbs' moduli.
/// @param stream the keystream.
/// @throws RuntimeError if a CUDA launch fails.
template <class W>
void sample_uniform(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                    const PrngStream& stream) {
  sample_uniform<W>(dev, out, n, base, stream, LimbAddress{});
}
/// out: [base.size()][n], uniform in [0, q_l) per limb l by the compact keys' sampler
/// (compact_uniform.h: ChaCha12, one candidate of W's width per coefficient, exact rejection),
/// polynomial index stream.domain of seed stream.key, limb address addr(l). n a multiple of
/// kCompactPerBlock<W>.
/// @tparam W u32 or u64.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words; overwritten.
/// @param n the ring degree N, a multiple of kCompactPerBlock<W>.
/// @param base the limbs' moduli (odd).
/// @param stream the seed (key) and the polynomial index (domain).
/// @param addr the limbs' keystream addresses (each below 2^15).
/// @throws InvalidArgument if n is not a multiple of kCompactPerBlock<W>; RuntimeError if a CUDA
/// launch fails.
template <class W>
void sample_uniform_compact(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                            const PrngStream& stream, LimbAddress addr);
/// sample_uniform_compact with every limb at its own index as its address.
/// @tparam W u32 or u64.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words; overwritten.
/// @param n the ring degree N, a multiple of kCompactPerBlock<W>.
/// @param base the limbs' moduli (odd).
/// @param stream the seed (key) and the polynomial index (domain).
/// @throws InvalidArgument if n is not a multiple of kCompactPerBlock<W>; RuntimeError if a CUDA
/// launch fails.
template <class W>
void sample_uniform_compact(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                            const PrngStream& stream) {
  sample_uniform_compact<W>(dev, out, n, base, stream, LimbAddress{});
}
/// out: [base.size()][n], one ternary polynomial reduced into every limb.
/// Coefficient j is ternary_value of 64-bit word j % 8 of block j / 8 of sub-stream 0xFFFFFFFF
/// (uniform on {-1, 0, 1} up to 2^-62; SEAL's secret distribution).
/// @tparam W u32 or u64.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words; overwritten.
/// @param n the ring degree N.
/// @param base the limbs' moduli.
/// @param stream the keystream.
/// @throws RuntimeError if a CUDA launch fails.
template <class W>
void sample_ternary(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                    const PrngStream& stream);
/// out: [base.size()][n], one centered-binomial polynomial reduced into every limb.
/// Coefficient j is cbd_value of 64 keystream bits: centered binomial with 21 + 21 bits, variance
/// 10.5 (sigma about 3.24; SEAL's error bound 21).
/// @tparam W u32 or u64.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words; overwritten.
/// @param n the ring degree N.
/// @param base the limbs' moduli.
/// @param stream the keystream.
/// @throws RuntimeError if a CUDA launch fails.
template <class W>
void sample_cbd(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                const PrngStream& stream);
/// out: [base.size()][n], one polynomial with coefficients uniform in [-2^bits, 2^bits) reduced
/// into every limb (noise flooding at CKKS decryption; bits in 1..62). Sub-stream 0xFFFFFFFD.
/// @tparam W u32 or u64.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words; overwritten.
/// @param n the ring degree N.
/// @param base the limbs' moduli.
/// @param stream the keystream.
/// @param bits the flooding bound's exponent, 1..62.
/// @throws RuntimeError if a CUDA launch fails.
template <class W>
void sample_flooding(const Device& dev, W* out, std::size_t n, const RnsBase& base,
                     const PrngStream& stream, int bits);

/// out: [base.size()][n], a ternary polynomial with exactly `hamming_weight` nonzero
/// coefficients (each +-1 with probability 1/2) at uniformly random positions, reduced into every
/// limb: the sparse secrets of CKKS bootstrapping (Cheon-Han-Kim-Kim-Song, Eurocrypt 2018, §4;
/// sparse-secret encapsulation, Bossuat-Troncoso-Hubaux, eprint 2022/024). Positions come from a
/// partial Fisher-Yates shuffle on the host, drawing 64 keystream bits per step from sub-stream
/// 0xFFFFFFFC (rejection-free: the modulo bias is below N / 2^64). Throws InvalidArgument naming
/// `hamming_weight` unless 1 <= hamming_weight <= n.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words (32 or 64 bits); overwritten.
/// @param n the ring degree N.
/// @param base the limbs' moduli.
/// @param stream the keystream.
/// @param hamming_weight the number of nonzero coefficients, 1..n.
/// @throws InvalidArgument naming `hamming_weight` when it is out of range; RuntimeError if the
/// copy to the device fails.
void sample_sparse_ternary(const Device& dev, WordPtr out, std::size_t n, const RnsBase& base,
                           const PrngStream& stream, std::size_t hamming_weight);
// Run-time word size.
/// Run-time word size: sample_uniform on out's words.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words; overwritten.
/// @param n the ring degree N.
/// @param base the limbs' moduli.
/// @param stream the keystream.
/// @param addr the limbs' keystream addresses.
/// @throws RuntimeError if a CUDA launch fails.
void sample_uniform(const Device& dev, WordPtr out, std::size_t n, const RnsBase& base,
                    const PrngStream& stream, LimbAddress addr = {});
/// Run-time word size: sample_uniform_compact on out's words.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words; overwritten.
/// @param n the ring degree N, a multiple of kCompactPerBlock of the word.
/// @param base the limbs' moduli (odd).
/// @param stream the seed and the polynomial index.
/// @param addr the limbs' keystream addresses.
/// @throws InvalidArgument if n is not a multiple of kCompactPerBlock; RuntimeError if a CUDA
/// launch fails.
void sample_uniform_compact(const Device& dev, WordPtr out, std::size_t n, const RnsBase& base,
                            const PrngStream& stream, LimbAddress addr = {});
/// Run-time word size: sample_ternary on out's words.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words; overwritten.
/// @param n the ring degree N.
/// @param base the limbs' moduli.
/// @param stream the keystream.
/// @throws RuntimeError if a CUDA launch fails.
void sample_ternary(const Device& dev, WordPtr out, std::size_t n, const RnsBase& base,
                    const PrngStream& stream);
/// Run-time word size: sample_cbd on out's words.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words; overwritten.
/// @param n the ring degree N.
/// @param base the limbs' moduli.
/// @param stream the keystream.
/// @throws RuntimeError if a CUDA launch fails.
void sample_cbd(const Device& dev, WordPtr out, std::size_t n, const RnsBase& base,
                const PrngStream& stream);
/// Run-time word size: sample_flooding on out's words.
/// @param dev the device `out` is on.
/// @param out [base.size()][n] words; overwritten.
/// @param n the ring degree N.
/// @param base the limbs' moduli.
/// @param stream the keystream.
/// @param bits the flooding bound's exponent, 1..62.
/// @throws RuntimeError if a CUDA launch fails.
void sample_flooding(const Device& dev, WordPtr out, std::size_t n, const RnsBase& base,
                     const PrngStream& stream, int bits);

// The raw signed values the ternary / CBD samplers produce from a coefficient's keystream bits.
/// The ternary sampler's value of 64 keystream bits: floor(3x / 2^64) - 1.
/// @param x 64 keystream bits.
/// @return -1, 0 or 1.
VEIL_HD i64 ternary_value(u64 x) { return static_cast<i64>(mul_hi(x, 3)) - 1; }
/// The centered-binomial sampler's value of 64 keystream bits: popcount(x mod 2^21) -
/// popcount(floor(x / 2^21) mod 2^21).
/// @param x 64 keystream bits (bits 42..63 unused).
/// @return a value in [-21, 21].
VEIL_HD i64 cbd_value(u64 x) {
#if VEIL_DEVICE_CODE
  // The CUDA intrinsic: std::popcount is not usable in device code (see core/hd.h).
  return static_cast<i64>(__popcll(x & 0x1FFFFFull)) - static_cast<i64>(__popcll((x >> 21) & 0x1FFFFFull));
#else
  return static_cast<i64>(std::popcount(x & 0x1FFFFFull)) -
         static_cast<i64>(std::popcount((x >> 21) & 0x1FFFFFull));
#endif
}

}  // namespace veil
