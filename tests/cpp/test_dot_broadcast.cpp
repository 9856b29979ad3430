// poly::dot_broadcast (the inner sums of CKKS's BSGS products, multiply_plain_sum) against a
// schoolbook oracle: out[p] = sum_i a_i[p] * b_i mod q, computed here word by word with 128-bit
// products. Covers 32- and 64-bit words, 1-3 polynomials per operand, term counts that make the
// wide accumulator carry (32-bit words: more than four 62-bit products) and plaintexts stored as
// one period (per-term shifts), on the CPU and on a GPU when one is visible.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "test_util.h"
#include "veil/backend/buffer.h"
#include "veil/backend/table.h"
#include "veil/ring/poly_ops.h"
#include "veil/rlwe/params.h"

namespace {

using veil::Device;
using veil::Modulus;
using veil::RnsBase;
using veil::u64;

/// shifted: b_i stored as one period with shift i % 6 (0..5: runs of 1 to 32 words, below and
/// above the kernel's 16-byte groups), or 8 (log2(n) - 2, the largest) for i = 7, limbs of
/// n >> shift words; the oracle reads word j of limb l at l * (n >> shift) + (j >> shift).
/// `unshifted` terms are read as full form (their shifts are 0).
template <class W>
void check(const Device& dev, int bits, std::size_t npolys, std::size_t count,
           bool shifted = false, std::size_t unshifted = 1) {
  const std::size_t n = 1024;
  const std::vector<u64> primes = veil::CoeffModulus::create(n, {bits, bits, bits});
  std::vector<Modulus> mods;
  for (u64 q : primes) mods.emplace_back(q);
  const RnsBase base(mods);
  const std::size_t limbs = base.size(), pw = limbs * n;
  std::mt19937_64 rng(bits * 100 + npolys * 10 + count);
  std::vector<veil::u32> shifts(count, 0);
  if (shifted) {
    for (std::size_t i = unshifted; i < count; ++i)
      shifts[i] = static_cast<veil::u32>(i == 7 ? 8 : i % 6);
  }
  std::vector<std::vector<W>> a(count, std::vector<W>(npolys * pw)), b(count);
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t bn = n >> shifts[i];
    b[i].resize(limbs * bn);
    for (std::size_t l = 0; l < limbs; ++l) {
      for (std::size_t j = 0; j < bn; ++j) b[i][l * bn + j] = static_cast<W>(rng() % primes[l]);
      for (std::size_t j = 0; j < n; ++j) {
        for (std::size_t p = 0; p < npolys; ++p) {
          a[i][p * pw + l * n + j] = static_cast<W>(i % 3 == 0 ? primes[l] - 1 : rng() % primes[l]);
        }
      }
    }
  }
  std::vector<veil::Buffer<W>> da, db;
  std::vector<u64> pa, pb;
  for (std::size_t i = 0; i < count; ++i) {
    da.push_back(veil::Buffer<W>::from_host(dev, a[i]));
    db.push_back(veil::Buffer<W>::from_host(dev, b[i]));
    pa.push_back(reinterpret_cast<u64>(da.back().data()));
    pb.push_back(reinterpret_cast<u64>(db.back().data()));
  }
  const veil::DeviceTable<u64> ta(pa), tb(pb);
  const veil::DeviceTable<u64> ts(std::vector<u64>(shifts.begin(), shifts.end()));
  veil::Buffer<W> out(dev, npolys * pw);
  // shifted: the first `unshifted` terms read as full form, the others at their shifts (a
  // term of shift 0 among them included: i = 6, or i = 0 with unshifted = 0)
  veil::poly::dot_broadcast<W>(dev, base, n, npolys, ta.data(dev), tb.data(dev), count,
                               out.data(), shifted ? ts.data(dev) : nullptr, unshifted);
  const std::vector<W> got = out.to_host();
  for (std::size_t p = 0; p < npolys; ++p) {
    for (std::size_t l = 0; l < limbs; ++l) {
      for (std::size_t j = 0; j < n; ++j) {
        unsigned __int128 acc = 0;
        for (std::size_t i = 0; i < count; ++i) {
          const std::size_t bn = n >> shifts[i];
          acc += static_cast<unsigned __int128>(a[i][p * pw + l * n + j]) *
                 b[i][l * bn + (j >> shifts[i])];
        }
        const u64 want = static_cast<u64>(acc % primes[l]);
        ASSERT_EQ(static_cast<u64>(got[p * pw + l * n + j]), want)
            << dev.str() << " bits " << bits << " polys " << npolys << " count " << count
            << " p " << p << " l " << l << " j " << j << " shifted " << shifted;
      }
    }
  }
}

TEST(DotBroadcast, EqualsTheSchoolbookSum) {
  for (const Device& dev : veil::test::devices()) {
    for (std::size_t npolys : {1, 2, 3}) {
      for (std::size_t count : {1, 4, 5, 9, 17}) {
        check<veil::u32>(dev, 30, npolys, count);
        check<veil::u64>(dev, 60, npolys, count);
      }
    }
  }
}

TEST(DotBroadcast, PlaintextsStoredAsOnePeriodEqualTheSchoolbookSum) {
  for (const Device& dev : veil::test::devices()) {
    for (std::size_t npolys : {1, 2, 3}) {
      for (std::size_t count : {1, 6, 9}) {
        for (std::size_t unshifted : {0, 1}) {
          check<veil::u32>(dev, 30, npolys, count, true, unshifted);
          check<veil::u64>(dev, 60, npolys, count, true, unshifted);
        }
      }
    }
  }
}

}  // namespace
