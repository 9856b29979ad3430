// Tests for the negacyclic NTT (veil/ring/ntt.h).
//
// Oracles independent of the code under test (DESIGN.md, "Tests"):
//  - the schoolbook negacyclic convolution mod q, in 128-bit integer arithmetic, against
//    forward -> pointwise product -> inverse;
//  - the definition of SEAL's bit-reversed negacyclic NTT: output i is a(psi^(2 bitrev(i) + 1)),
//    evaluated directly (Horner), with psi the minimal primitive 2N-th root found by brute force;
//  - round trips for N up to 2^17;
//  - NttCuda: the CUDA transform against the CPU reference, bit for bit (skipped without a GPU).
// 32-bit words (primes < 2^31) face the same oracles (Ntt32Cpu, NttCuda32).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "ring_util.h"
#include "veil/backend/buffer.h"
#include "veil/backend/device.h"
#include "veil/backend/memory.h"
#include "veil/core/error.h"
#include "veil/core/modarith.h"
#include "veil/core/primes.h"
#include "veil/ring/ntt.h"
#include "veil/ring/ntt_simd.h"
#include "veil/ring/rns_base.h"

namespace {

using veil::Buffer;
using veil::Device;
using veil::Modulus;
using veil::NttTables;
using veil::RnsBase;
using veil::u32;
using veil::u64;
using namespace veil::test;

// ---- independent arithmetic (plain 128-bit integers, no Barrett/Shoup) ----------------------

u32 bitrev(u32 x, int bits) {
  u32 r = 0;
  for (int i = 0; i < bits; ++i) r |= ((x >> i) & 1u) << (bits - 1 - i);
  return r;
}

// The minimal primitive 2N-th root of unity mod q, by brute force over the odd powers of any one
// primitive root (all of them are the odd powers).
u64 minimal_psi(u64 q, std::size_t n) {
  // r = g^((q-1)/2N) has order dividing 2N; it is primitive exactly when r^N = -1.
  for (u64 g = 2;; ++g) {
    const u64 r = powm(g, (q - 1) / (2 * n), q);
    if (powm(r, n, q) != q - 1)
      continue; // order must be 2N (N is a power of two)
    u64 best = r;
    const u64 r2 = mulm(r, r, q);
    u64 cur = r;
    for (std::size_t k = 1; k < n; ++k) {
      cur = mulm(cur, r2, q); // r^(2k+1)
      best = std::min(best, cur);
    }
    return best;
  }
}

// ---- fixtures ------------------------------------------------------------------------------

// A base over `bits.size()` primes, with tables whose prime order differs from the base's (an
// extra prime first, the base's primes reversed) so that limb -> table ids are not the identity.
struct NttSetup {
  std::size_t n;
  std::vector<Modulus> moduli;
  NttTables tables;
  RnsBase base;
};

NttSetup make_setup(std::size_t n, const std::vector<int>& bits) {
  std::vector<u64> primes;
  for (int b : bits) primes.push_back(veil::generate_ntt_primes(b, n, 1, primes)[0]);
  std::vector<Modulus> moduli;
  for (u64 q : primes) moduli.emplace_back(q);
  std::vector<Modulus> tab(moduli.rbegin(), moduli.rend());
  tab.insert(tab.begin(), Modulus(veil::generate_ntt_primes(40, n, 1, primes)[0]));
  NttTables tables(n, tab);
  std::vector<u32> ids;
  for (const Modulus& m : moduli) ids.push_back(tables.index_of(m.value));
  RnsBase base(moduli, ids);
  return NttSetup{n, moduli, std::move(tables), std::move(base)};
}

std::vector<u64> random_polys(const NttSetup& s, std::size_t polys, std::mt19937_64& rng) {
  const std::size_t limbs = s.moduli.size();
  std::vector<u64> v(polys * limbs * s.n);
  for (std::size_t p = 0; p < polys; ++p)
    for (std::size_t l = 0; l < limbs; ++l)
      for (std::size_t i = 0; i < s.n; ++i)
        v[(p * limbs + l) * s.n + i] = rng() % s.moduli[l].value;
  return v;
}

bool all_reduced(const std::vector<u64>& v, const NttSetup& s) {
  const std::size_t limbs = s.moduli.size();
  for (std::size_t k = 0; k < v.size(); ++k) {
    if (v[k] >= s.moduli[(k / s.n) % limbs].value) return false;
  }
  return true;
}

const std::vector<int> kBitSizes = {30, 61, 45, 36, 59, 50, 60, 40};

std::vector<int> bits_for(std::size_t limbs, std::size_t salt) {
  std::vector<int> b;
  for (std::size_t i = 0; i < limbs; ++i) b.push_back(kBitSizes[(i + salt) % kBitSizes.size()]);
  return b;
}

const Device kCpu = Device::cpu();

// ---- (a) NTT multiplication equals the schoolbook negacyclic product ------------------------

// Forward both factors, multiply slot-wise, inverse: the schoolbook product, for N = 2^4..2^12,
// on words W (u64, or u32 with primes below 2^31) and primes bits(limbs, salt).
template <class W>
void expect_products_match_schoolbook(std::uint64_t seed,
                                      std::vector<int> (*bits)(std::size_t, std::size_t)) {
  std::mt19937_64 rng(seed);
  for (int log_n = 4; log_n <= 12; ++log_n) {
    const std::size_t n = std::size_t(1) << log_n;
    const std::size_t limbs = log_n <= 10 ? 4 : 2, polys = 2;
    const NttSetup s = make_setup(n, bits(limbs, log_n));
    const std::vector<u64> a = random_polys(s, polys, rng), b = random_polys(s, polys, rng);
    std::vector<W> fa(a.begin(), a.end()), fb(b.begin(), b.end());
    veil::ntt_forward(kCpu, fa.data(), polys, s.base, s.tables);
    veil::ntt_forward(kCpu, fb.data(), polys, s.base, s.tables);
    ASSERT_TRUE(all_reduced(std::vector<u64>(fa.begin(), fa.end()), s)) << "log_n=" << log_n;
    std::vector<W> c(fa.size());
    for (std::size_t k = 0; k < c.size(); ++k) {
      c[k] = W(mulm(fa[k], fb[k], s.moduli[(k / n) % limbs].value));
    }
    veil::ntt_inverse(kCpu, c.data(), polys, s.base, s.tables);
    for (std::size_t p = 0; p < polys; ++p) {
      for (std::size_t l = 0; l < limbs; ++l) {
        const std::size_t off = (p * limbs + l) * n;
        const std::vector<u64> want =
            negacyclic_schoolbook(a.data() + off, b.data() + off, n, s.moduli[l].value);
        ASSERT_TRUE(std::equal(want.begin(), want.end(), c.begin() + off))
            << "log_n=" << log_n << " poly=" << p << " limb=" << l << " q=" << s.moduli[l].value;
      }
    }
  }
}

TEST(NttCpu, MultiplicationMatchesSchoolbook) {
  expect_products_match_schoolbook<u64>(1, bits_for);
}

// The vector kernels (ntt_simd.h) at every level this processor offers, each against the
// schoolbook product on words W (64-bit: primes of 30..61 bits, IFMA below 2^50, AVX512F/DQ
// above; 32-bit: widened to the 64-bit kernels).
template <class W>
void expect_every_level_matches_schoolbook(std::uint64_t seed,
                                           std::vector<int> (*bits)(std::size_t, std::size_t)) {
  using veil::detail::CpuSimd;
  const int top = static_cast<int>(veil::detail::cpu_simd_detected());
  for (int level = 0; level <= top; ++level) {
    SCOPED_TRACE(veil::detail::cpu_simd_name(static_cast<CpuSimd>(level)));
    veil::detail::set_cpu_simd(level);
    expect_products_match_schoolbook<W>(seed + level, bits);
  }
  veil::detail::set_cpu_simd(-1);
  if (top == 0) GTEST_SKIP() << "no AVX2 or AVX-512 on this processor: the scalar kernels only";
}

TEST(NttCpu, EveryVectorLevelMatchesSchoolbook) {
  expect_every_level_matches_schoolbook<u64>(11, bits_for);
}

// At the sizes the schemes use, every level gives the same words, for random residues and for
// q - 1 everywhere (the lazy bounds' worst case), forward and back; the IFMA cut is at 2^50.
TEST(NttCpu, VectorLevelsAgreeAtLargeN) {
  const int top = static_cast<int>(veil::detail::cpu_simd_detected());
  std::mt19937_64 rng(5);
  for (int log_n : {13, 15}) {
    const std::size_t n = std::size_t(1) << log_n;
    const NttSetup s = make_setup(n, {61, 50, 49, 30, 60, 40});
    const std::size_t limbs = s.moduli.size();
    std::vector<u64> rnd = random_polys(s, 1, rng), top_words(limbs * n);
    for (std::size_t k = 0; k < top_words.size(); ++k) top_words[k] = s.moduli[k / n].value - 1;
    for (const std::vector<u64>& in : {rnd, top_words}) {
      std::vector<u64> want;
      for (int level = 0; level <= top; ++level) {
        veil::detail::set_cpu_simd(level);
        std::vector<u64> v = in;
        veil::ntt_forward(kCpu, v.data(), 1, s.base, s.tables);
        if (level == 0) want = v;
        EXPECT_EQ(v, want) << "level " << level << " log_n=" << log_n;
        veil::ntt_inverse(kCpu, v.data(), 1, s.base, s.tables);
        EXPECT_EQ(v, in) << "level " << level << " log_n=" << log_n;
      }
    }
  }
  veil::detail::set_cpu_simd(-1);
}

// X * X^(N-1) = X^N = -1: a sign check the random test could in principle miss.
TEST(NttCpu, MonomialWrapsNegatively) {
  const std::size_t n = 64;
  const NttSetup s = make_setup(n, {61});
  const u64 q = s.moduli[0].value;
  std::vector<u64> a(n, 0), b(n, 0);
  a[1] = 1;
  b[n - 1] = 1;
  veil::ntt_forward(kCpu, a.data(), 1, s.base, s.tables);
  veil::ntt_forward(kCpu, b.data(), 1, s.base, s.tables);
  for (std::size_t i = 0; i < n; ++i)
    a[i] = mulm(a[i], b[i], q);
  veil::ntt_inverse(kCpu, a.data(), 1, s.base, s.tables);
  EXPECT_EQ(a[0], q - 1);
  for (std::size_t i = 1; i < n; ++i) EXPECT_EQ(a[i], 0u) << i;
}

// ---- (b) the forward transform is SEAL's bit-reversed evaluation at odd powers of psi ---------

TEST(NttCpu, PsiIsTheMinimalPrimitiveRoot) {
  for (int log_n = 1; log_n <= 12; ++log_n) {
    const std::size_t n = std::size_t(1) << log_n;
    const NttSetup s = make_setup(n, bits_for(3, log_n));
    for (std::size_t l = 0; l < s.moduli.size(); ++l) {
      const u64 q = s.moduli[l].value;
      const u32 id = s.base.ntt_ids()[l];
      EXPECT_EQ(s.tables.psi(id), minimal_psi(q, n)) << "log_n=" << log_n << " q=" << q;
    }
  }
}

TEST(NttCpu, ForwardIsBitReversedEvaluation) {
  std::mt19937_64 rng(2);
  for (int log_n = 1; log_n <= 10; ++log_n) {
    const std::size_t n = std::size_t(1) << log_n;
    const std::size_t limbs = 3, polys = 2;
    const NttSetup s = make_setup(n, bits_for(limbs, 2 * log_n));
    const std::vector<u64> a = random_polys(s, polys, rng);
    std::vector<u64> fa = a;
    veil::ntt_forward(kCpu, fa.data(), polys, s.base, s.tables);
    for (std::size_t p = 0; p < polys; ++p) {
      for (std::size_t l = 0; l < limbs; ++l) {
        const u64 q = s.moduli[l].value;
        const u64 psi = minimal_psi(q, n);
        const u64* coeffs = a.data() + (p * limbs + l) * n;
        const u64* got = fa.data() + (p * limbs + l) * n;
        for (std::size_t i = 0; i < n; ++i) {
          const u64 z = powm(psi, 2 * u64(bitrev(u32(i), log_n)) + 1, q);
          u64 acc = 0;  // Horner: a(z)
          for (std::size_t k = n; k-- > 0;)
            acc = (mulm(acc, z, q) + coeffs[k]) % q;
          ASSERT_EQ(got[i], acc) << "log_n=" << log_n << " poly=" << p << " limb=" << l
                                 << " i=" << i;
        }
      }
    }
  }
}

// ---- (c) round trips ------------------------------------------------------------------------

TEST(NttCpu, InverseUndoesForward) {
  std::mt19937_64 rng(3);
  for (int log_n = 1; log_n <= 17; ++log_n) {
    const std::size_t n = std::size_t(1) << log_n;
    const std::size_t limbs = log_n <= 14 ? 4 : 2, polys = log_n <= 14 ? 3 : 2;
    const NttSetup s = make_setup(n, bits_for(limbs, log_n));
    const std::vector<u64> a = random_polys(s, polys, rng);
    std::vector<u64> v = a;
    veil::ntt_forward(kCpu, v.data(), polys, s.base, s.tables);
    ASSERT_TRUE(all_reduced(v, s)) << "log_n=" << log_n;
    veil::ntt_inverse(kCpu, v.data(), polys, s.base, s.tables);
    ASSERT_EQ(v, a) << "log_n=" << log_n;
    // and the other way round, from random NTT-form data
    veil::ntt_inverse(kCpu, v.data(), polys, s.base, s.tables);
    ASSERT_TRUE(all_reduced(v, s)) << "log_n=" << log_n;
    veil::ntt_forward(kCpu, v.data(), polys, s.base, s.tables);
    ASSERT_EQ(v, a) << "log_n=" << log_n;
  }
}

// Largest residues everywhere: the lazy [0, 4q) bounds are tightest here.
TEST(NttCpu, ExtremeInputsRoundTrip) {
  for (int log_n : {4, 10, 13, 16}) {
    const std::size_t n = std::size_t(1) << log_n;
    const NttSetup s = make_setup(n, {61, 60, 30});
    std::vector<u64> a(3 * n);
    for (std::size_t k = 0; k < a.size(); ++k) a[k] = s.moduli[k / n].value - 1;
    std::vector<u64> v = a;
    veil::ntt_forward(kCpu, v.data(), 1, s.base, s.tables);
    ASSERT_TRUE(all_reduced(v, s));
    veil::ntt_inverse(kCpu, v.data(), 1, s.base, s.tables);
    ASSERT_EQ(v, a) << "log_n=" << log_n;
  }
}

TEST(NttCpu, RejectsBaseWithoutTables) {
  const std::size_t n = 16;
  const NttSetup s = make_setup(n, {40});
  const RnsBase plain(s.moduli);
  std::vector<u64> v(n, 1);
  EXPECT_ANY_THROW(veil::ntt_forward(kCpu, v.data(), 1, plain, s.tables));
  EXPECT_ANY_THROW(veil::ntt_inverse(kCpu, v.data(), 1, plain, s.tables));
}

// ---- (d) CUDA against the CPU reference, bit for bit ----------------------------------------

// The CPU's and `gpu`'s transforms (forward or inverse) of `input`, on the host: {cpu, gpu}.
template <class W>
std::pair<std::vector<W>, std::vector<W>> cpu_and_gpu(const Device& gpu, const NttSetup& s,
                                                      std::vector<W> input, std::size_t polys,
                                                      bool forward) {
  Buffer<W> dev = Buffer<W>::from_host(gpu, input);
  if (forward) {
    veil::ntt_forward(kCpu, input.data(), polys, s.base, s.tables);
    veil::ntt_forward(gpu, dev.data(), polys, s.base, s.tables);
  } else {
    veil::ntt_inverse(kCpu, input.data(), polys, s.base, s.tables);
    veil::ntt_inverse(gpu, dev.data(), polys, s.base, s.tables);
  }
  veil::backend::synchronize(gpu);
  return {std::move(input), dev.to_host()};
}

class NttCuda : public testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (veil::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    gpu_ = Device(Device::Kind::cuda, 0);
  }
  // CPU and CUDA transforms of the same random input must agree word for word.
  void compare(int log_n, std::size_t limbs, std::size_t polys, bool forward,
               std::mt19937_64& rng) {
    const std::size_t n = std::size_t(1) << log_n;
    const NttSetup s = make_setup(n, bits_for(limbs, limbs + log_n));
    const auto [want, got] = cpu_and_gpu(gpu_, s, random_polys(s, polys, rng), polys, forward);
    ASSERT_EQ(got.size(), want.size());
    std::size_t bad = 0, first = got.size();
    for (std::size_t k = 0; k < got.size(); ++k) {
      if (got[k] != want[k]) {
        if (bad++ == 0) first = k;
      }
    }
    ASSERT_EQ(bad, 0u) << (forward ? "forward" : "inverse") << " log_n=" << log_n
                       << " limbs=" << limbs << " polys=" << polys << ": " << bad
                       << " mismatches, first at poly " << first / (limbs * n) << " limb "
                       << (first / n) % limbs << " index " << first % n;
  }
  Device gpu_;
};

// (limbs, polys) shapes: one limb, a few, and a full ciphertext-sized batch.
const std::vector<std::pair<std::size_t, std::size_t>> kShapes = {
    {1, 1}, {3, 2}, {7, 3}, {40, 1}, {40, 3}};

TEST_P(NttCuda, ForwardMatchesCpu) {
  std::mt19937_64 rng(100 + GetParam());
  for (const auto& [limbs, polys] : kShapes) compare(GetParam(), limbs, polys, true, rng);
}

TEST_P(NttCuda, InverseMatchesCpu) {
  std::mt19937_64 rng(200 + GetParam());
  for (const auto& [limbs, polys] : kShapes) compare(GetParam(), limbs, polys, false, rng);
}

TEST_P(NttCuda, RoundTripOnDevice) {
  const int log_n = GetParam();
  const std::size_t n = std::size_t(1) << log_n;
  std::mt19937_64 rng(300 + log_n);
  const NttSetup s = make_setup(n, bits_for(5, log_n));
  const std::vector<u64> input = random_polys(s, 2, rng);
  Buffer<u64> dev = Buffer<u64>::from_host(gpu_, input);
  veil::ntt_forward(gpu_, dev.data(), 2, s.base, s.tables);
  veil::ntt_inverse(gpu_, dev.data(), 2, s.base, s.tables);
  veil::backend::synchronize(gpu_);
  EXPECT_EQ(dev.to_host(), input) << "log_n=" << log_n;
}

// Limbs 1..3 of a 5-limb polynomial, through a sliced base: the data pointer is offset by one limb
// and limb -> table ids start mid-table; words outside the slice must stay untouched.
TEST_P(NttCuda, SlicedBaseAtOffset) {
  const int log_n = GetParam();
  const std::size_t n = std::size_t(1) << log_n;
  std::mt19937_64 rng(400 + log_n);
  const NttSetup s = make_setup(n, bits_for(5, 3 * log_n));
  const RnsBase mid = s.base.slice(1, 3);
  const std::vector<u64> input = random_polys(s, 1, rng);
  for (const bool forward : {true, false}) {
    std::vector<u64> want = input;
    Buffer<u64> dev = Buffer<u64>::from_host(gpu_, input);
    if (forward) {
      veil::ntt_forward(kCpu, want.data() + n, 1, mid, s.tables);
      veil::ntt_forward(gpu_, dev.data() + n, 1, mid, s.tables);
    } else {
      veil::ntt_inverse(kCpu, want.data() + n, 1, mid, s.tables);
      veil::ntt_inverse(gpu_, dev.data() + n, 1, mid, s.tables);
    }
    veil::backend::synchronize(gpu_);
    EXPECT_EQ(dev.to_host(), want) << (forward ? "forward" : "inverse") << " log_n=" << log_n;
  }
}

// 2^10..2^17 are the library's degrees; 2^4..2^9 exercise the small one-block path and 2^18 the
// per-stage fallback kernels.
INSTANTIATE_TEST_SUITE_P(Degrees, NttCuda, testing::Range(4, 19),
                         [](const testing::TestParamInfo<int>& i) {
                           return "N2e" + std::to_string(i.param);
                         });

// ---- (e) 32-bit words: primes < 2^31 --------------------------------------------------------

// 31-bit primes are the tightest case for 32-bit words (2q is just below 2^32).
const std::vector<int> kBitSizes32 = {31, 30, 29, 31, 28, 30, 31, 29};

std::vector<int> bits32_for(std::size_t limbs, std::size_t salt) {
  std::vector<int> b;
  for (std::size_t i = 0; i < limbs; ++i) b.push_back(kBitSizes32[(i + salt) % kBitSizes32.size()]);
  return b;
}

std::vector<u32> narrow(const std::vector<u64>& v) { return {v.begin(), v.end()}; }
std::vector<u64> widen(const std::vector<u32>& v) { return {v.begin(), v.end()}; }

TEST(Ntt32Cpu, MultiplicationMatchesSchoolbook) {
  expect_products_match_schoolbook<u32>(11, bits32_for);
}

TEST(Ntt32Cpu, EveryVectorLevelMatchesSchoolbook) {
  expect_every_level_matches_schoolbook<u32>(21, bits32_for);
}

TEST(Ntt32Cpu, ForwardIsBitReversedEvaluation) {
  std::mt19937_64 rng(12);
  for (int log_n = 1; log_n <= 9; ++log_n) {
    const std::size_t n = std::size_t(1) << log_n;
    const std::size_t limbs = 3;
    const NttSetup s = make_setup(n, bits32_for(limbs, 2 * log_n));
    const std::vector<u64> a = random_polys(s, 1, rng);
    std::vector<u32> fa = narrow(a);
    veil::ntt_forward(kCpu, fa.data(), 1, s.base, s.tables);
    for (std::size_t l = 0; l < limbs; ++l) {
      const u64 q = s.moduli[l].value;
      const u64 psi = minimal_psi(q, n);
      for (std::size_t i = 0; i < n; ++i) {
        const u64 z = powm(psi, 2 * u64(bitrev(u32(i), log_n)) + 1, q);
        u64 acc = 0;
        for (std::size_t k = n; k-- > 0;)
          acc = (mulm(acc, z, q) + a[l * n + k]) % q;
        ASSERT_EQ(fa[l * n + i], acc) << "log_n=" << log_n << " limb=" << l << " i=" << i;
      }
    }
  }
}

// Round trips both ways up to 2^17, from random data and from q - 1 everywhere (the largest sums).
TEST(Ntt32Cpu, RoundTripsAndExtremeInputs) {
  std::mt19937_64 rng(13);
  for (int log_n = 1; log_n <= 17; ++log_n) {
    const std::size_t n = std::size_t(1) << log_n;
    const std::size_t limbs = log_n <= 14 ? 4 : 2;
    const NttSetup s = make_setup(n, bits32_for(limbs, log_n));
    std::vector<u64> a = random_polys(s, 2, rng);
    for (std::size_t k = 0; k < limbs * n; ++k) a[k] = s.moduli[k / n].value - 1;  // poly 0
    std::vector<u32> v = narrow(a);
    veil::ntt_forward(kCpu, v.data(), 2, s.base, s.tables);
    ASSERT_TRUE(all_reduced(widen(v), s)) << "log_n=" << log_n;
    veil::ntt_inverse(kCpu, v.data(), 2, s.base, s.tables);
    ASSERT_EQ(widen(v), a) << "log_n=" << log_n;
    veil::ntt_inverse(kCpu, v.data(), 2, s.base, s.tables);
    ASSERT_TRUE(all_reduced(widen(v), s)) << "log_n=" << log_n;
    veil::ntt_forward(kCpu, v.data(), 2, s.base, s.tables);
    ASSERT_EQ(widen(v), a) << "log_n=" << log_n;
  }
}

// The transform belongs to the prime, not the word: 32- and 64-bit words give the same residues.
TEST(Ntt32Cpu, SameResiduesAs64BitWords) {
  std::mt19937_64 rng(14);
  const std::size_t n = 1024;
  const NttSetup s = make_setup(n, bits32_for(6, 0));
  const std::vector<u64> a = random_polys(s, 2, rng);
  std::vector<u64> w64 = a;
  std::vector<u32> w32 = narrow(a);
  veil::ntt_forward(kCpu, w64.data(), 2, s.base, s.tables);
  veil::ntt_forward(kCpu, w32.data(), 2, s.base, s.tables);
  EXPECT_EQ(widen(w32), w64);
  veil::ntt_inverse(kCpu, w64.data(), 2, s.base, s.tables);
  veil::ntt_inverse(kCpu, w32.data(), 2, s.base, s.tables);
  EXPECT_EQ(widen(w32), w64);
}

// The view API: the same transform, and the argument checks.
TEST(Ntt32Cpu, ViewApiAndRejections) {
  std::mt19937_64 rng(15);
  const std::size_t n = 256;
  const NttSetup s = make_setup(n, bits32_for(3, 1));
  const std::vector<u64> a = random_polys(s, 2, rng);
  std::vector<u32> by_ptr = narrow(a), by_view = narrow(a);
  veil::ntt_forward(kCpu, by_ptr.data(), 2, s.base, s.tables);
  const auto view = veil::make_view<u32>(kCpu, by_view.data(), 2, s.base, n);
  EXPECT_EQ(view.num_limbs, 3u);
  EXPECT_EQ(view.limb(1, 2), by_view.data() + 5 * n);
  veil::ntt_forward(kCpu, view, s.tables);
  EXPECT_EQ(by_view, by_ptr);
  veil::ntt_inverse(kCpu, view, s.tables);
  EXPECT_EQ(widen(by_view), a);
  // A 40-bit prime does not fit a 32-bit word.
  const NttSetup wide = make_setup(n, {31, 40});
  std::vector<u32> w(2 * n, 1);
  try {
    veil::ntt_forward(kCpu, w.data(), 1, wide.base, wide.tables);
    FAIL() << "expected InvalidArgument";
  } catch (const veil::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("32-bit"), std::string::npos) << e.what();
  }
  // Tables of another degree.
  const NttSetup other = make_setup(2 * n, bits32_for(3, 1));
  EXPECT_THROW(veil::ntt_forward(kCpu, view, other.tables), veil::InvalidArgument);
  const RnsBase plain(s.moduli);
  EXPECT_THROW(veil::ntt_forward(kCpu, by_view.data(), 1, plain, s.tables), veil::InvalidArgument);
}

// make_view's degree: log_n for every power of two 2..2^20 (oracle: the shift that reproduces n),
// and a clear rejection of everything else.
TEST(Ntt32Cpu, ViewDegreeLogAndRejections) {
  const NttSetup s = make_setup(256, bits32_for(1, 1));
  u32 dummy = 0;
  for (int k = 1; k <= 20; ++k) {
    const std::size_t n = std::size_t(1) << k;
    EXPECT_EQ(veil::make_view<u32>(kCpu, &dummy, 1, s.base, n).log_n, k) << n;
  }
  for (std::size_t n : {std::size_t(0), std::size_t(1), std::size_t(3), std::size_t(6),
                        std::size_t(12), std::size_t(1000), (std::size_t(1) << 17) + 1,
                        ~std::size_t(0)}) {
    try {
      veil::make_view<u32>(kCpu, &dummy, 1, s.base, n);
      ADD_FAILURE() << "expected InvalidArgument for n = " << n;
    } catch (const veil::InvalidArgument& e) {
      EXPECT_NE(std::string(e.what()).find("power of two"), std::string::npos) << e.what();
    }
  }
}

// A view with `slots` walks limb l at storage limb slots[l] (the ModUp NTT's prime-by-prime
// order): the result equals the unpermuted transform of the same residues, moved to their slots.
// Returns {input in storage order, expected output in storage order}.
std::pair<std::vector<u32>, std::vector<u32>> permuted_case(const NttSetup& s, std::size_t n,
                                                            const std::vector<u32>& slots,
                                                            std::mt19937_64& rng) {
  const std::vector<u32> in = narrow(random_polys(s, 1, rng));  // limb l: prime l
  std::vector<u32> out = in;
  veil::ntt_forward(kCpu, out.data(), 1, s.base, s.tables);
  std::vector<u32> in_s(in.size()), out_s(in.size());
  for (std::size_t l = 0; l < slots.size(); ++l) {
    std::copy_n(in.begin() + l * n, n, in_s.begin() + slots[l] * n);
    std::copy_n(out.begin() + l * n, n, out_s.begin() + slots[l] * n);
  }
  return {in_s, out_s};
}

TEST(Ntt32Cpu, ViewSlotsPermuteTheLimbWalk) {
  std::mt19937_64 rng(16);
  const std::size_t n = 512;
  const NttSetup s = make_setup(n, bits32_for(4, 2));
  const std::vector<u32> slots = {2, 0, 3, 1};
  auto [data, want] = permuted_case(s, n, slots, rng);
  auto view = veil::make_view<u32>(kCpu, data.data(), 1, s.base, n);
  view.slots = slots.data();
  EXPECT_EQ(view.limb(0, 1), data.data());  // limb 1 is stored first
  EXPECT_EQ(view.limb(3), data.data() + n);
  veil::ntt_forward(kCpu, view, s.tables);
  EXPECT_EQ(data, want);
}

class NttCuda32 : public testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    if (veil::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    gpu_ = Device(Device::Kind::cuda, 0);
  }
  Device gpu_;
};

// CPU and CUDA transforms of the same input agree word for word; round trips on the device; a
// sliced base at an offset leaves the words outside it alone.
TEST_P(NttCuda32, ViewSlotsMatchCpu) {
  const int log_n = GetParam();
  const std::size_t n = std::size_t(1) << log_n;
  std::mt19937_64 rng(600 + log_n);
  const NttSetup s = make_setup(n, bits32_for(6, log_n));
  const std::vector<u32> slots = {4, 0, 5, 2, 1, 3};
  auto [data, want] = permuted_case(s, n, slots, rng);
  Buffer<u32> dev = Buffer<u32>::from_host(gpu_, data);
  Buffer<u32> dslots = Buffer<u32>::from_host(gpu_, slots);
  auto view = veil::make_view<u32>(gpu_, dev.data(), 1, s.base, n);
  view.slots = dslots.data();
  veil::ntt_forward(gpu_, view, s.tables);
  veil::backend::synchronize(gpu_);
  EXPECT_EQ(dev.to_host(), want) << "log_n=" << log_n;
}

TEST_P(NttCuda32, MatchesCpuBitForBit) {
  const int log_n = GetParam();
  const std::size_t n = std::size_t(1) << log_n;
  std::mt19937_64 rng(500 + log_n);
  for (const auto& [limbs, polys] : kShapes) {
    const NttSetup s = make_setup(n, bits32_for(limbs, limbs + log_n));
    const std::vector<u32> input = narrow(random_polys(s, polys, rng));
    for (const bool forward : {true, false}) {
      const auto [want, got] = cpu_and_gpu(gpu_, s, input, polys, forward);
      ASSERT_EQ(got, want) << (forward ? "forward" : "inverse") << " log_n=" << log_n
                           << " limbs=" << limbs << " polys=" << polys;
    }
    Buffer<u32> dev = Buffer<u32>::from_host(gpu_, input);
    veil::ntt_forward(gpu_, dev.data(), polys, s.base, s.tables);
    veil::ntt_inverse(gpu_, dev.data(), polys, s.base, s.tables);
    veil::backend::synchronize(gpu_);
    ASSERT_EQ(dev.to_host(), input) << "round trip log_n=" << log_n << " limbs=" << limbs;
  }
  const NttSetup s = make_setup(n, bits32_for(5, 3 * log_n));
  const RnsBase mid = s.base.slice(1, 3);
  const std::vector<u32> input = narrow(random_polys(s, 1, rng));
  std::vector<u32> want = input;
  Buffer<u32> dev = Buffer<u32>::from_host(gpu_, input);
  veil::ntt_forward(kCpu, want.data() + n, 1, mid, s.tables);
  veil::ntt_forward(gpu_, dev.data() + n, 1, mid, s.tables);
  veil::backend::synchronize(gpu_);
  EXPECT_EQ(dev.to_host(), want) << "sliced log_n=" << log_n;
}

INSTANTIATE_TEST_SUITE_P(Degrees, NttCuda32, testing::Range(4, 19),
                         [](const testing::TestParamInfo<int>& i) {
                           return "N2e" + std::to_string(i.param);
                         });

}  // namespace
