// Tests for veil/rns: BaseConverter, HPS scale-and-round, BEHZ tools, ModDown, max_centered_log2.
// Oracle: exact big-integer arithmetic with Boost cpp_int (CRT composition of the inputs with
// Fermat inverses, exact quotients and rounding), independent of the fixed-point / Shoup /
// Barrett code under test. RnsCuda compares the GPU bit for bit with the CPU.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "rns_util.h"
#include "veil/backend/buffer.h"
#include "veil/backend/device.h"
#include "veil/core/error.h"
#include "veil/core/modarith.h"
#include "veil/core/primes.h"
#include "veil/ring/ntt.h"
#include "veil/ring/rns_base.h"
#include "veil/rns/base_converter.h"
#include "veil/rns/behz.h"
#include "veil/rns/conv_kernels.h"
#include "veil/rns/hps.h"
#include "veil/rns/mod_down.h"

namespace {

using namespace veil::test;
using veil::BaseConverter;
using veil::BehzTools;
using veil::Device;
using veil::HpsScaleAndRoundQ;
using veil::HpsScaleAndRoundQR;
using veil::Modulus;
using veil::RnsBase;
using veil::u32;
using veil::u64;

// ---- oracle helpers -------------------------------------------------------------------------

std::vector<u64> cat(std::vector<u64> a, const std::vector<u64>& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

RnsBase make_base(const std::vector<u64>& primes) {
  std::vector<Modulus> m;
  for (u64 p : primes) m.emplace_back(p);
  return RnsBase(std::move(m));
}

/// A base with NTT tables (ids index `tables`), as a Context builds them.
RnsBase make_ntt_base(const std::vector<u64>& primes, const veil::NttTables& tables) {
  std::vector<Modulus> m;
  std::vector<u32> ids;
  for (u64 p : primes) {
    m.emplace_back(p);
    ids.push_back(tables.index_of(p));
  }
  return RnsBase(std::move(m), std::move(ids));
}

std::vector<u64> primes(int bits, std::size_t n, std::size_t count,
                        const std::vector<u64>& exclude = {}) {
  return veil::generate_ntt_primes(bits, n, count, exclude);
}

const Device kCpu = Device::cpu();

// ---- BaseConverter --------------------------------------------------------------------------

struct ConvCase {
  int bits_from;
  std::size_t k_from;
  int bits_to;
  std::size_t k_to;
  std::size_t n;
  std::size_t num_polys;
};

const ConvCase kConvCases[] = {
    {61, 1, 61, 1, 16, 1},   {60, 2, 61, 3, 64, 2},    {61, 5, 60, 4, 256, 1},
    {30, 3, 40, 2, 128, 3},  {40, 8, 30, 9, 1024, 1},  {61, 20, 61, 21, 4096, 1},
    {35, 20, 60, 1, 512, 2}, {61, 40, 61, 3, 32, 2},   {30, 33, 31, 34, 16, 1},
    {60, 12, 36, 12, 2048, 1},
};

std::string describe(const ConvCase& c) {
  return "from " + std::to_string(c.k_from) + "x" + std::to_string(c.bits_from) + "b to " +
         std::to_string(c.k_to) + "x" + std::to_string(c.bits_to) + "b, n=" + std::to_string(c.n) +
         ", polys=" + std::to_string(c.num_polys);
}

TEST(BaseConv, FastConvertIsXPlusUQ) {
  std::mt19937_64 rng(1);
  for (const auto& cs : kConvCases) {
    SCOPED_TRACE(describe(cs));
    const auto qf = primes(cs.bits_from, cs.n, cs.k_from);
    const auto pt = primes(cs.bits_to, cs.n, cs.k_to, qf);
    const Crt crt(qf);
    BaseConverter conv(make_base(qf), make_base(pt));
    const auto in = random_residues(rng, qf, cs.n, cs.num_polys);
    std::vector<u64> out(cs.num_polys * pt.size() * cs.n), want(out.size());
    conv.fast_convert(kCpu, in.data(), out.data(), cs.n, cs.num_polys);
    for (std::size_t p = 0; p < cs.num_polys; ++p)
      for (std::size_t c = 0; c < cs.n; ++c) {
        const u64* col = in.data() + p * qf.size() * cs.n + c;
        const cpp_int x = crt.compose(col, cs.n);
        const cpp_int s = crt.fast_sum(col, cs.n);
        const cpp_int d = s - x;
        ASSERT_EQ(d % crt.Q, 0);
        ASSERT_GE(d / crt.Q, 0);
        ASSERT_LT(d / crt.Q, cs.k_from);
        put_residues(s, pt, want.data() + p * pt.size() * cs.n, cs.n, c);
      }
    EXPECT_TRUE(same_word_vectors(out, want));
  }
}

TEST(BaseConv, ExactConvertIsCenteredX) {
  std::mt19937_64 rng(2);
  for (const auto& cs : kConvCases) {
    SCOPED_TRACE(describe(cs));
    const auto qf = primes(cs.bits_from, cs.n, cs.k_from);
    const auto pt = primes(cs.bits_to, cs.n, cs.k_to, qf);
    const Crt crt(qf);
    BaseConverter conv(make_base(qf), make_base(pt));
    auto in = random_residues(rng, qf, cs.n, cs.num_polys);
    // Also the extremes: 0, 1, -1, the largest positive (Q-1)/2, and a negative value just past
    // the documented ambiguity band above Q/2 (width |from| * 2^-67 * Q).
    const cpp_int special[] = {0, 1, crt.Q - 1, (crt.Q - 1) / 2, (crt.Q + 1) / 2 + (crt.Q >> 60)};
    for (std::size_t s = 0; s < 5 && s < cs.n; ++s) put_residues(special[s], qf, in.data(), cs.n, s);
    std::vector<u64> out(cs.num_polys * pt.size() * cs.n), want(out.size());
    conv.exact_convert(kCpu, in.data(), out.data(), cs.n, cs.num_polys);
    for (std::size_t p = 0; p < cs.num_polys; ++p)
      for (std::size_t c = 0; c < cs.n; ++c) {
        cpp_int x = crt.compose(in.data() + p * qf.size() * cs.n + c, cs.n);
        if (x > crt.Q / 2) x -= crt.Q;  // centered into (-Q/2, Q/2]
        put_residues(x, pt, want.data() + p * pt.size() * cs.n, cs.n, c);
      }
    EXPECT_TRUE(same_word_vectors(out, want));
  }
}

// exact_convert_checked (BGV decryption's one pass) against the centered CRT value: 70 limbs of
// 61-bit primes into one ~40-bit prime, times a factor, on the CPU and (when present) the GPU,
// whose four lanes per coefficient fold their 128-bit dot products (more than 16 terms each
// after 64 limbs). The noise test (|x/Q| >= 1/4) is off, on for values below Q/8 (never fires),
// on for uniform values (fires), and on for values below Q/8 but one coefficient at +-0.26 Q
// (fires) or +-0.24 Q (does not). Each test runs with its factors' host words given (the GPU
// then takes the test's terms from the conversion's inputs, NoiseTest::factor_is) and without.
TEST(BaseConv, ExactConvertCheckedIsCenteredXTimesTheFactor) {
  constexpr std::size_t n = 64, k = 70;
  const auto qf = primes(61, n, k);
  const auto pt = primes(40, n, 1, qf);
  const Crt crt(qf);
  const u64 factor = 12345678901ULL % pt[0];
  std::mt19937_64 rng(9);
  const auto uniform = random_residues(rng, qf, n, 1);
  std::vector<u64> small(k * n);
  for (std::size_t c = 0; c < n; ++c) {
    cpp_int x = random_big(rng, 0, crt.Q / 8);
    if (c % 2) x = crt.Q - x;  // negative values too
    put_residues(x, qf, small.data(), n, c);
  }
  // one coefficient (27) moved to about +-0.26 Q or +-0.24 Q
  auto with_one = [&](double frac, bool negative) {
    std::vector<u64> v = small;
    cpp_int x = crt.Q * static_cast<unsigned>(frac * 1000) / 1000;
    if (negative) x = crt.Q - x;
    put_residues(x, qf, v.data(), n, 27);
    return v;
  };
  const std::vector<u64> over = with_one(0.26, false), over_neg = with_one(0.26, true);
  const std::vector<u64> under = with_one(0.24, false), under_neg = with_one(0.24, true);
  const std::vector<std::pair<const std::vector<u64>*, bool>> inputs{
      {&uniform, true}, {&small, false}, {&over, true}, {&over_neg, true},
      {&under, false}, {&under_neg, false}};
  std::vector<Device> devs{kCpu};
  if (veil::cuda_device_count() > 0) devs.emplace_back(Device::Kind::cuda, 0);
  for (const Device& dev : devs) for (bool host_words : {false, true}) {
    SCOPED_TRACE(dev.str() + (host_words ? ", the factors' host words given" : ""));
    const RnsBase from = make_base(qf);
    BaseConverter conv(from, make_base(pt));
    const veil::Buffer<u64> noise_factor = veil::Buffer<u64>::from_host(dev, crt.qhat_inv);
    veil::NoiseTest test;
    test.mods = from.moduli(dev);
    test.factor = noise_factor.data();
    test.factor_host = host_words ? crt.qhat_inv.data() : nullptr;
    test.limbs = k;
    test.threshold = 0.25;
    EXPECT_EQ(test.factor_is(conv.tables().scale.host()), host_words);
    for (std::size_t which = 0; which < inputs.size(); ++which) {
      const auto& [in, fires] = inputs[which];
      const veil::Buffer<u64> d_in = veil::Buffer<u64>::from_host(dev, *in);
      std::vector<u64> want(n);
      for (std::size_t c = 0; c < n; ++c) {
        cpp_int x = crt.compose(in->data() + c, n);
        if (x > crt.Q / 2) x -= crt.Q;
        want[c] = static_cast<u64>((cpp_int(mod_u(x, pt[0])) * factor) % pt[0]);
      }
      for (bool on : {false, true}) {
        veil::Buffer<u64> out(dev, n);
        const bool hit =
            conv.exact_convert_checked<u64>(dev, d_in.data(), out.data(), n, factor,
                                            on ? test : veil::NoiseTest())
                .wait();
        EXPECT_TRUE(same_word_vectors(out.to_host(), want)) << (on ? "test on" : "test off");
        EXPECT_EQ(hit, on && fires) << (on ? "test on" : "test off") << ", input " << which;
      }
    }
    // The last bit: coefficient 27 of `over` (every other below Q/8) has the centered fraction s,
    // summed on the host as NoiseTest::exceeds sums it. At threshold |s| the test must fire, at
    // the next double above it must not, on every device and path: the same doubles.
    veil::NoiseTest host_test = test;
    const RnsBase host_from = make_base(qf);
    host_test.mods = host_from.moduli(kCpu);
    host_test.factor = crt.qhat_inv.data();
    double edge = (host_test.partial(over.data(), n, 27, 0) + host_test.partial(over.data(), n, 27, 1)) +
                  (host_test.partial(over.data(), n, 27, 2) + host_test.partial(over.data(), n, 27, 3));
    edge = std::fabs(edge - std::floor(edge + 0.5));
    ASSERT_GT(edge, 0.25);
    const veil::Buffer<u64> d_over = veil::Buffer<u64>::from_host(dev, over);
    for (double threshold : {edge, std::nextafter(edge, 1.0)}) {
      veil::NoiseTest at = test;
      at.threshold = threshold;
      veil::Buffer<u64> out(dev, n);
      const bool hit = conv.exact_convert_checked<u64>(dev, d_over.data(), out.data(), n, factor, at)
                           .wait();
      EXPECT_EQ(hit, threshold == edge) << "threshold " << threshold << " (|s| = " << edge << ")";
    }
    veil::Buffer<u64> out(dev, n);
    EXPECT_THROW(conv.exact_convert_checked<u64>(dev, uniform.data(), out.data(), n, pt[0],
                                                 veil::NoiseTest()),
                 veil::InvalidArgument);  // the factor must be below the target prime
  }
}

// The lazy Montgomery rows of the 32-bit conversions (conv_kernels.h: block_row_mont), against
// __int128: the constants (Mont32), the fold and REDC at the ends of their ranges, and whole rows
// of 1..8 groups with every input and stored table word at its largest value (the sums' worst
// case) and at random, for 30-bit inputs into 31-bit outputs (ModUp at bootparam_40) and 31-bit
// inputs into 30-bit outputs (ModDown). mont32_lazy_fits accepts exactly the products below
// 2^61; the host builds the Montgomery tables for such bases and not for 31-bit into 31-bit.
TEST(BaseConv, MontgomeryRowsMatchInt128) {
  using veil::u128;
  std::mt19937_64 rng(26);
  const std::vector<u64> q30 = primes(30, 4096, 2), q31 = primes(31, 4096, 2);
  EXPECT_TRUE(veil::mont32_lazy_fits(q30[0], q31[0]));
  EXPECT_TRUE(veil::mont32_lazy_fits(q31[0], q30[0]));
  EXPECT_TRUE(veil::mont32_lazy_fits(u64(1) << 30, (u64(1) << 31) - 1));  // (2^30 - 1)(2^31 - 2)
  EXPECT_FALSE(veil::mont32_lazy_fits(q31[0], q31[1]));                    // about 2^62
  EXPECT_FALSE(veil::mont32_lazy_fits(2, u64(1) << 31));                   // not a 32-bit word
  {
    const auto from = primes(30, 4096, 12), to = primes(31, 4096, 46, from);
    const std::vector<u64> special(to.begin(), to.begin() + 12);  // ModDown's 31 -> 30 bits
    EXPECT_GT(BaseConverter(make_base(from), make_base(to)).tables().mat_mont32.size(), 0u);
    EXPECT_GT(BaseConverter(make_base(special), make_base(from)).tables().mat_mont32.size(), 0u);
    const auto wide = primes(31, 4096, 3, to);  // 31-bit into 31-bit: products up to 2^62
    EXPECT_EQ(BaseConverter(make_base(wide), make_base(to)).tables().mat_mont32.size(), 0u);
    EXPECT_GT(BaseConverter(make_base(wide), make_base(to)).tables().mat_padded32.size(), 0u);
  }
  for (u64 p : {u64(1038337), q30[0], q31[0], q31[1]}) {
    const veil::Modulus m(p);
    const veil::Mont32 c = veil::mont32_of(m);
    ASSERT_EQ(u64(c.p), p);
    ASSERT_EQ(u64(c.r32), (u64(1) << 32) % p);
    ASSERT_EQ(static_cast<u32>(c.pinv * static_cast<u32>(p)), 0xFFFFFFFFu) << "-p^-1 mod 2^32";
    const u64 inv32 = veil::inv_mod((u64(1) << 32) % p, p);  // 2^-32 mod p
    for (u64 s : {u64(0), u64(1), ~u64(0), (u64(1) << 63), rng(), rng()}) {
      const u64 f = veil::fold32(s, c.r32);
      ASSERT_LT(u128(f), u128(p) << 32) << p << " fold of " << s;
      ASSERT_EQ(f % p, s % p) << p << " fold of " << s;
      const u32 r = veil::redc32(f, c);
      ASSERT_EQ(u64(r), static_cast<u64>(u128(f % p) * inv32 % p)) << p << " REDC of " << f;
    }
    const u64 top = (p << 32) - 1;  // REDC's largest input
    ASSERT_EQ(u64(veil::redc32(top, c)), static_cast<u64>(u128(top % p) * inv32 % p));
  }
  auto check = [&]<u32 kMax, bool kFull>(const std::vector<u64>& in_primes, u64 p, u32 groups,
                                         bool extreme) {
    const veil::Modulus m(p);
    const veil::Mont32 c = veil::mont32_of(m);
    const u64 inv32 = veil::inv_mod((u64(1) << 32) % p, p);  // 2^-32 mod p
    constexpr u32 kC = 2;
    u32 y[kC][kMax] = {};
    std::vector<u32> row(kMax, 0);
    u128 want[kC] = {0, 0};
    for (u32 i = 0; i < 4 * groups; ++i) {
      const u64 q = in_primes[i % in_primes.size()];
      // the stored (Montgomery-form) word at its largest, p - 1, or at random; the entry it
      // stands for is word * 2^-32 mod p
      row[i] = static_cast<u32>(extreme ? p - 1 : rng() % p);
      const u64 t = static_cast<u64>(u128(row[i]) * inv32 % p);
      for (u32 k = 0; k < kC; ++k) {
        y[k][i] = static_cast<u32>(extreme ? q - 1 : rng() % q);
        want[k] += u128(y[k][i]) * t;
      }
    }
    u32 r[kC];
    veil::rns_detail::block_row_mont<kMax, kC, kFull>(y, row.data(), groups, c, r);
    for (u32 k = 0; k < kC; ++k) {
      ASSERT_EQ(u64(r[k]), static_cast<u64>(want[k] % p))
          << "kMax " << kMax << ", groups " << groups << ", p " << p << ", extreme " << extreme;
    }
  };
  for (bool extreme : {true, false}) {
    for (const auto& [in, out] : {std::pair(q30, q31[0]), std::pair(q31, q30[0])}) {
      check.template operator()<12, true>(in, out, 3, extreme);
      check.template operator()<16, true>(in, out, 4, extreme);
      for (u32 g = 1; g <= 4; ++g) check.template operator()<16, false>(in, out, g, extreme);
      for (u32 g = 5; g <= 7; ++g) check.template operator()<32, false>(in, out, g, extreme);
      check.template operator()<32, true>(in, out, 8, extreme);
    }
  }
}

// The GPU kernels' row code on the host: convert_block with the targets staged as Mont32 and the
// table in Montgomery form (convert_smem_kernel's and ModUp's lazy rows, through block_row's
// Mont32 overload) gives the Modulus path's words, for ModDown's shape (12 31-bit primes and v
// into 30-bit primes, exact) and ModUp's (12 30-bit primes into 31-bit ones, fast), branch-free
// rows and not.
TEST(BaseConv, MontgomeryConvertBlockMatchesTheBarrettRows) {
  std::mt19937_64 rng(27);
  const std::size_t n = 64;
  const auto q30 = primes(30, n, 24), q31 = primes(31, n, 12, q30);
  const std::vector<u64> q30_in(q30.begin(), q30.begin() + 12);
  const std::vector<u64> q30_out(q30.begin() + 12, q30.end());
  for (bool exact : {true, false}) {
    const std::vector<u64>& from = exact ? q31 : q30_in;
    const std::vector<u64> to = exact ? q30 : cat(q31, q30_out);
    const veil::RnsBase fb = make_base(from), tb = make_base(to);
    const BaseConverter conv(fb, tb);
    const auto& t = conv.tables();
    ASSERT_GT(t.mat_mont32.size(), 0u);
    ASSERT_EQ(t.stride, 16u);
    const auto in64 = random_residues(rng, from, n, 1);
    const std::vector<u32> in(in64.begin(), in64.end());
    const auto iv = veil::make_view<const u32>(kCpu, in.data(), 1, fb, n);
    const veil::rns_detail::ConvView cv =
        veil::rns_detail::make_view(kCpu, t, fb, tb, exact ? conv.fractions(kCpu) : nullptr);
    std::vector<veil::Mont32> mont(to.size());
    for (std::size_t j = 0; j < to.size(); ++j) mont[j] = veil::mont32_of(tb[j]);
    constexpr u32 kC = 2;
    const std::size_t part = n / kC;
    for (std::size_t c0 = 0; c0 < part; ++c0) {
      std::vector<u32> want(kC * to.size()), got(kC * to.size()), got_full(kC * to.size());
      auto into = [&](std::vector<u32>& o) {
        return [&o, &to](u32 k, std::size_t j, u32 r) { o[k * to.size() + j] = r; };
      };
      auto e0 = into(want), e1 = into(got), e2 = into(got_full);
      veil::rns_detail::convert_block<u32, 16, kC>(cv, t.mat_padded32.data(kCpu), t.stride, iv,
                                                    0, c0, part, 0, to.size(), e0, cv.to);
      veil::rns_detail::convert_block<u32, 16, kC, decltype(e1), false>(
          cv, t.mat_mont32.data(kCpu), t.stride, iv, 0, c0, part, 0, to.size(), e1,
          mont.data());
      veil::rns_detail::convert_block<u32, 16, kC, decltype(e2), true>(
          cv, t.mat_mont32.data(kCpu), t.stride, iv, 0, c0, part, 0, to.size(), e2,
          mont.data());
      ASSERT_EQ(got, want) << (exact ? "exact" : "fast") << ", coefficient " << c0;
      ASSERT_EQ(got_full, want) << (exact ? "exact" : "fast") << ", coefficient " << c0;
    }
  }
}

TEST(BaseConv, RejectsEmptyAndOverlappingBases) {
  const auto q = primes(50, 16, 3);
  EXPECT_THROW(BaseConverter(make_base(q), make_base({q[1]})), veil::InvalidArgument);
  EXPECT_THROW(BaseConverter(make_base({}), make_base(q)), veil::InvalidArgument);
  EXPECT_THROW(BaseConverter(make_base(q), make_base({})), veil::InvalidArgument);
  EXPECT_THROW(BaseConverter(make_base({q[0], q[0]}), make_base({q[2]})), veil::InvalidArgument);
  try {
    BaseConverter(make_base(q), make_base({q[2]}));
    FAIL() << "no exception";
  } catch (const veil::InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find("overlap"), std::string::npos) << e.what();
  }
  BaseConverter none;
  u64 dummy = 0;
  EXPECT_THROW(none.fast_convert(kCpu, &dummy, &dummy, 1), veil::InvalidArgument);
}

// ---- HPS ------------------------------------------------------------------------------------

struct HpsCase {
  int bits_q;
  std::size_t k_q;
  int bits_r;
  std::size_t k_r;
  u64 t;
  std::size_t n;
  std::size_t num_polys;
};

TEST(Hps, ScaleAndRoundQRMatchesRoundTXOverQ) {
  const HpsCase cases[] = {
      {60, 1, 60, 2, 65537, 16, 1},         {60, 2, 61, 3, 2, 64, 2},
      {61, 5, 61, 6, 1032193, 256, 1},      {30, 4, 40, 3, 786433, 128, 2},
      {40, 10, 30, 14, 3, 1024, 1},         {60, 20, 60, 21, (u64(1) << 40) + 15, 4096, 1},
      {61, 36, 61, 37, 65537, 16, 2},       {36, 12, 61, 7, (u64(1) << 59) - 55, 512, 1},
  };
  std::mt19937_64 rng(3);
  for (const auto& cs : cases) {
    SCOPED_TRACE("k_q=" + std::to_string(cs.k_q) + " k_r=" + std::to_string(cs.k_r) +
                 " t=" + std::to_string(cs.t) + " n=" + std::to_string(cs.n));
    const auto q = primes(cs.bits_q, cs.n, cs.k_q);
    const auto r = primes(cs.bits_r, cs.n, cs.k_r, q);
    const auto qr = cat(q, r);
    const Crt crt(qr);
    const cpp_int Q = prod(q);
    HpsScaleAndRoundQR hps(make_base(q), make_base(r), cs.t);
    const auto in = random_residues(rng, qr, cs.n, cs.num_polys);
    std::vector<u64> out(cs.num_polys * r.size() * cs.n), want(out.size());
    hps.apply(kCpu, in.data(), out.data(), cs.n, cs.num_polys);
    for (std::size_t p = 0; p < cs.num_polys; ++p)
      for (std::size_t c = 0; c < cs.n; ++c) {
        const cpp_int x = crt.compose(in.data() + p * qr.size() * cs.n + c, cs.n);
        put_residues(round_div(cpp_int(cs.t) * x, Q), r, want.data() + p * r.size() * cs.n,
                     cs.n, c);
      }
    EXPECT_TRUE(same_word_vectors(out, want));
  }
}

TEST(Hps, ScaleAndRoundQMatchesRoundTXOverQ) {
  const HpsCase cases[] = {
      {60, 1, 0, 0, 65537, 16, 1},   {61, 3, 0, 0, 2, 64, 1},
      {30, 6, 0, 0, 786433, 256, 1}, {40, 12, 0, 0, (u64(1) << 35) + 1, 1024, 1},
      {60, 20, 0, 0, 3, 4096, 1},    {61, 35, 0, 0, (u64(1) << 60) + 33, 32, 1},
  };
  std::mt19937_64 rng(4);
  for (const auto& cs : cases) {
    SCOPED_TRACE("k_q=" + std::to_string(cs.k_q) + " t=" + std::to_string(cs.t));
    const auto q = primes(cs.bits_q, cs.n, cs.k_q);
    const Crt crt(q);
    HpsScaleAndRoundQ hps(make_base(q), cs.t);
    const auto in = random_residues(rng, q, cs.n, 1);
    std::vector<u64> out(cs.n), want(cs.n);
    hps.apply(kCpu, in.data(), out.data(), cs.n);
    for (std::size_t c = 0; c < cs.n; ++c)
      want[c] = mod_u(round_div(cpp_int(cs.t) * crt.compose(in.data() + c, cs.n), crt.Q), cs.t);
    EXPECT_TRUE(same_word_vectors(out, want));
  }
}

// apply_checked (BFV decryption's one pass) gives apply's words on the CPU and (when present) the
// GPU, with the noise test off and on, over more limbs than the GPU's lanes fold at once (70);
// a threshold of 0 makes the test fire, one above 1/2 never does.
TEST(Hps, ApplyCheckedGivesRoundTXOverQOnEveryDevice) {
  constexpr std::size_t n = 64;
  std::mt19937_64 rng(5);
  std::vector<Device> devs{kCpu};
  if (veil::cuda_device_count() > 0) devs.emplace_back(Device::Kind::cuda, 0);
  for (const auto& [bits, k, t] : {std::tuple{61, std::size_t(70), (u64(1) << 60) + 33},
                                   std::tuple{30, std::size_t(37), u64(786433)}}) {
    SCOPED_TRACE("k_q=" + std::to_string(k));
    const auto q = primes(bits, n, k);
    const Crt crt(q);
    const RnsBase base = make_base(q);
    HpsScaleAndRoundQ hps(base, t);
    const auto in = random_residues(rng, q, n, 1);
    std::vector<u64> want(n), f(k);
    for (std::size_t c = 0; c < n; ++c)
      want[c] = mod_u(round_div(cpp_int(t) * crt.compose(in.data() + c, n), crt.Q), t);
    for (std::size_t i = 0; i < k; ++i)
      f[i] = static_cast<u64>((cpp_int(crt.qhat_inv[i]) * t) % q[i]);
    for (const Device& dev : devs) {
      SCOPED_TRACE(dev.str());
      const veil::Buffer<u64> d_in = veil::Buffer<u64>::from_host(dev, in);
      const veil::Buffer<u64> d_f = veil::Buffer<u64>::from_host(dev, f);
      for (double threshold : {-1.0, 0.0, 0.75}) {  // -1: the test off
        veil::NoiseTest test;
        if (threshold >= 0) {
          test.mods = base.moduli(dev);
          test.factor = d_f.data();
          test.limbs = k;
          test.threshold = threshold;
        }
        veil::Buffer<u64> out(dev, n);
        const bool hit = hps.apply_checked<u64>(dev, d_in.data(), out.data(), n, test).wait();
        EXPECT_TRUE(same_word_vectors(out.to_host(), want)) << "threshold " << threshold;
        EXPECT_EQ(hit, threshold == 0.0) << "threshold " << threshold;
      }
    }
  }
}

TEST(Hps, RejectsBadArguments) {
  const auto q = primes(50, 16, 3);
  EXPECT_THROW(HpsScaleAndRoundQR(make_base(q), make_base({q[0]}), 65537), veil::InvalidArgument);
  EXPECT_THROW(HpsScaleAndRoundQR(make_base(q), make_base({}), 65537), veil::InvalidArgument);
  EXPECT_THROW(HpsScaleAndRoundQ(make_base({}), 65537), veil::InvalidArgument);
  EXPECT_THROW(HpsScaleAndRoundQ(make_base(q), q[1]), veil::InvalidArgument);
}

// ---- BEHZ -----------------------------------------------------------------------------------

struct BehzSetup {
  std::vector<u64> q, b, bsk, tg;
  u64 msk, gamma, t;
  std::size_t n;
  veil::NttTables tables;
  BehzTools tools;
  BehzSetup(int bits_q, std::size_t k, int bits_b, u64 t_, std::size_t n_)
      : t(t_), n(n_) {
    q = primes(bits_q, n, k);
    bsk = primes(bits_b, n, k + 1, q);  // B then m_sk
    b.assign(bsk.begin(), bsk.end() - 1);
    msk = bsk.back();
    gamma = primes(61, n, 1, cat(q, bsk))[0];
    std::vector<Modulus> all;
    for (u64 p : cat(q, bsk)) all.emplace_back(p);
    tables = veil::NttTables(n, all);
    tools = BehzTools(make_ntt_base(q, tables), make_ntt_base(bsk, tables), gamma, t);
  }
  std::string name() const {
    return "k=" + std::to_string(q.size()) + " t=" + std::to_string(t) + " n=" + std::to_string(n);
  }
};

struct BehzCase {
  int bits_q;
  std::size_t k;
  int bits_b;
  u64 t;
  std::size_t n;
};

const BehzCase kBehzCases[] = {
    {60, 1, 61, 65537, 16},    {60, 2, 61, 2, 64},         {60, 4, 61, 1032193, 256},
    {30, 3, 40, 786433, 128},  {40, 10, 40, 65537, 1024},  {60, 20, 61, 65537, 4096},
    {36, 33, 36, 3, 16},       {50, 8, 61, (u64(1) << 30) + 3, 512},
};

constexpr u64 kMTilde = u64(1) << 32;

TEST(Behz, FastbconvMTildeIsFastConversionOfXTimesMTilde) {
  std::mt19937_64 rng(5);
  for (const auto& bc : kBehzCases) {
    BehzSetup s(bc.bits_q, bc.k, bc.bits_b, bc.t, bc.n);
    SCOPED_TRACE(s.name());
    const Crt crt(s.q);
    const auto out_base = cat(s.bsk, {kMTilde});
    const std::size_t np = 2;
    const auto in = random_residues(rng, s.q, s.n, np);
    std::vector<u64> out(np * out_base.size() * s.n), want(out.size());
    s.tools.fastbconv_m_tilde(kCpu, in.data(), out.data(), s.n, np);
    for (std::size_t p = 0; p < np; ++p)
      for (std::size_t c = 0; c < s.n; ++c) {
        const u64* col = in.data() + p * s.q.size() * s.n + c;
        const cpp_int x = crt.compose(col, s.n);
        const cpp_int v = crt.fast_sum(col, s.n, kMTilde);
        ASSERT_EQ(mod_pos(v - x * kMTilde, crt.Q), 0);  // v = [x m_tilde]_Q + u Q
        ASSERT_LT(v, crt.Q * s.q.size());
        put_residues(v, out_base, want.data() + p * out_base.size() * s.n, s.n, c);
      }
    EXPECT_TRUE(same_word_vectors(out, want));
  }
}

TEST(Behz, SmMrqIsSmallMontgomeryReduction) {
  std::mt19937_64 rng(6);
  for (const auto& bc : kBehzCases) {
    BehzSetup s(bc.bits_q, bc.k, bc.bits_b, bc.t, bc.n);
    SCOPED_TRACE(s.name());
    const Crt crt(s.q), crt_bsk(s.bsk);
    const auto in_base = cat(s.bsk, {kMTilde});
    const std::size_t np = 2;
    // Realistic input: the output of fastbconv_m_tilde for random x over Q.
    const auto xq = random_residues(rng, s.q, s.n, np);
    std::vector<u64> in(np * in_base.size() * s.n), out(np * s.bsk.size() * s.n),
        want(out.size());
    std::vector<cpp_int> xs(np * s.n);
    for (std::size_t p = 0; p < np; ++p)
      for (std::size_t c = 0; c < s.n; ++c) {
        const u64* col = xq.data() + p * s.q.size() * s.n + c;
        xs[p * s.n + c] = crt.compose(col, s.n);
        put_residues(crt.fast_sum(col, s.n, kMTilde), in_base,
                     in.data() + p * in_base.size() * s.n, s.n, c);
      }
    s.tools.sm_mrq(kCpu, in.data(), out.data(), s.n, np);
    const cpp_int q_inv_mt =
        boost::multiprecision::powm(mod_pos(crt.Q, kMTilde), cpp_int(kMTilde / 2 - 1),
                                    cpp_int(kMTilde));
    for (std::size_t p = 0; p < np; ++p)
      for (std::size_t c = 0; c < s.n; ++c) {
        const u64* col = in.data() + p * in_base.size() * s.n + c;
        // The integer c (exact: c < |Q| Q < Bsk) and r = [-c Q^-1]_{m_tilde}, centered.
        const cpp_int cval = crt_bsk.compose(col, s.n);
        ASSERT_EQ(mod_u(cval, kMTilde), col[s.bsk.size() * s.n]);
        cpp_int r = mod_pos(-cval * q_inv_mt, cpp_int(kMTilde));
        if (r >= kMTilde / 2) r -= kMTilde;
        const cpp_int num = cval + crt.Q * r;
        ASSERT_EQ(num % kMTilde, 0);
        const cpp_int y = num / kMTilde;
        // Semantics: y = x mod Q and |y| < Q (the m_tilde error is gone).
        ASSERT_EQ(mod_pos(y - xs[p * s.n + c], crt.Q), 0);
        ASSERT_LT(abs(y), crt.Q);
        put_residues(y, s.bsk, want.data() + p * s.bsk.size() * s.n, s.n, c);
      }
    EXPECT_TRUE(same_word_vectors(out, want));
  }
}

TEST(Behz, FastFloorIsFloorMinusU) {
  std::mt19937_64 rng(7);
  for (const auto& bc : kBehzCases) {
    BehzSetup s(bc.bits_q, bc.k, bc.bits_b, bc.t, bc.n);
    SCOPED_TRACE(s.name());
    const Crt crt(s.q);
    const auto in_base = cat(s.q, s.bsk);
    const cpp_int QB = crt.Q * prod(s.b);
    const std::size_t np = 2;
    std::vector<u64> in(np * in_base.size() * s.n), out(np * s.bsk.size() * s.n),
        want(out.size());
    std::vector<cpp_int> xs(np * s.n);
    for (std::size_t i = 0; i < xs.size(); ++i) {
      xs[i] = random_big(rng, -QB / 2, QB / 2);  // signed, as the tensor product is
      put_residues(xs[i], in_base, in.data() + (i / s.n) * in_base.size() * s.n, s.n, i % s.n);
    }
    s.tools.fast_floor(kCpu, in.data(), out.data(), s.n, np);
    for (std::size_t p = 0; p < np; ++p)
      for (std::size_t c = 0; c < s.n; ++c) {
        const cpp_int& x = xs[p * s.n + c];
        const cpp_int sum = crt.fast_sum(in.data() + p * in_base.size() * s.n + c, s.n);
        const cpp_int d = sum - mod_pos(x, crt.Q);
        ASSERT_EQ(d % crt.Q, 0);
        const cpp_int u = d / crt.Q;
        ASSERT_GE(u, 0);
        ASSERT_LT(u, s.q.size());
        put_residues(floor_div(x, crt.Q) - u, s.bsk, want.data() + p * s.bsk.size() * s.n, s.n,
                     c);
      }
    EXPECT_TRUE(same_word_vectors(out, want));
  }
}

TEST(Behz, FastbconvSkIsExact) {
  std::mt19937_64 rng(8);
  for (const auto& bc : kBehzCases) {
    BehzSetup s(bc.bits_q, bc.k, bc.bits_b, bc.t, bc.n);
    SCOPED_TRACE(s.name());
    const cpp_int B = prod(s.b);
    const std::size_t np = 3;
    std::vector<u64> in(np * s.bsk.size() * s.n), out(np * s.q.size() * s.n), want(out.size());
    for (std::size_t i = 0; i < np * s.n; ++i) {
      const cpp_int x = random_big(rng, -4 * B, 4 * B);
      put_residues(x, s.bsk, in.data() + (i / s.n) * s.bsk.size() * s.n, s.n, i % s.n);
      put_residues(x, s.q, want.data() + (i / s.n) * s.q.size() * s.n, s.n, i % s.n);
    }
    s.tools.fastbconv_sk(kCpu, in.data(), out.data(), s.n, np);
    EXPECT_TRUE(same_word_vectors(out, want));
  }
}

TEST(Behz, DecryptScaleAndRoundRecoversMessage) {
  std::mt19937_64 rng(9);
  for (const auto& bc : kBehzCases) {
    BehzSetup s(bc.bits_q, bc.k, bc.bits_b, bc.t, bc.n);
    SCOPED_TRACE(s.name());
    const cpp_int Q = prod(s.q);
    const cpp_int delta = Q / s.t;
    for (const cpp_int& e_max : std::vector<cpp_int>{cpp_int(1) << 10, cpp_int(delta / 4)}) {
      std::vector<u64> in(s.q.size() * s.n), out(s.n), want(s.n);
      for (std::size_t c = 0; c < s.n; ++c) {
        const u64 m = rng() % s.t;
        const cpp_int e = random_big(rng, -e_max, e_max + 1);
        const cpp_int x = mod_pos(delta * m + e, Q);
        want[c] = mod_u(round_div(cpp_int(s.t) * x, Q), s.t);
        ASSERT_EQ(want[c], m);
        put_residues(x, s.q, in.data(), s.n, c);
      }
      s.tools.decrypt_scale_and_round(kCpu, in.data(), out.data(), s.n);
      EXPECT_TRUE(same_word_vectors(out, want));
    }
  }
}

TEST(Behz, RejectsBadArguments) {
  const auto q = primes(50, 16, 3);
  const auto bsk = primes(51, 16, 4);
  const u64 gamma = primes(61, 16, 1)[0];
  EXPECT_THROW(BehzTools(make_base(q), make_base({bsk[0], q[0]}), gamma, 65537),
               veil::InvalidArgument);
  EXPECT_THROW(BehzTools(make_base({}), make_base(bsk), gamma, 65537), veil::InvalidArgument);
  EXPECT_THROW(BehzTools(make_base(q), make_base({bsk[0]}), gamma, 65537),
               veil::InvalidArgument);
  EXPECT_THROW(BehzTools(make_base(q), make_base(bsk), q[1], 65537), veil::InvalidArgument);
  EXPECT_THROW(BehzTools(make_base(q), make_base(bsk), gamma, q[2]), veil::InvalidArgument);
}

// ---- ModDown --------------------------------------------------------------------------------

struct ModDownCase {
  int bits_k;
  std::size_t k;
  int bits_d;
  std::size_t d;
  std::size_t n;
  std::size_t num_polys;
};

const ModDownCase kModDownCases[] = {
    {60, 1, 61, 1, 16, 1},   {60, 3, 61, 1, 64, 2},   {50, 10, 60, 1, 1024, 2},
    {60, 20, 61, 1, 4096, 1}, {30, 4, 40, 2, 128, 2},  {60, 8, 61, 3, 256, 3},
    {36, 12, 36, 4, 512, 1},  {61, 5, 61, 34, 16, 2},  {40, 20, 60, 20, 2048, 1},
};

/// Expected ModDown output for every coefficient of `in` ([polys][K+D][n]) into `want`
/// ([polys][K][n] with stride `out_stride` per polynomial).
void mod_down_oracle(const std::vector<u64>& kq, const std::vector<u64>& dq,
                     const std::vector<u64>& in, std::vector<u64>& want, std::size_t n,
                     std::size_t np, std::size_t out_stride) {
  const Crt all(cat(kq, dq)), crt_d(dq);
  const cpp_int D = crt_d.Q, h = D / 2;
  const std::size_t kk = kq.size(), kd = dq.size();
  for (std::size_t p = 0; p < np; ++p)
    for (std::size_t c = 0; c < n; ++c) {
      const u64* col = in.data() + p * (kk + kd) * n + c;
      const cpp_int x = all.compose(col, n);
      std::vector<u64> z(kd);  // [x + floor(D/2)]_{d_i}
      for (std::size_t i = 0; i < kd; ++i) z[i] = mod_u(x + h, dq[i]);
      const cpp_int sum = crt_d.fast_sum(z.data(), 1);
      const cpp_int diff = sum - mod_pos(x + h, D);
      ASSERT_EQ(diff % D, 0);
      const cpp_int u = diff / D;
      ASSERT_GE(u, 0);
      ASSERT_LT(u, kd);
      if (kd == 1) ASSERT_EQ(u, 0);  // one dropped prime: exactly round(x / D)
      put_residues(floor_div(x + h, D) - u, kq, want.data() + p * out_stride, n, c);
    }
}

TEST(ModDown, DivideAndRoundWithinD) {
  std::mt19937_64 rng(10);
  for (const auto& mc : kModDownCases) {
    SCOPED_TRACE("K=" + std::to_string(mc.k) + " D=" + std::to_string(mc.d) +
                 " n=" + std::to_string(mc.n));
    const auto kq = primes(mc.bits_k, mc.n, mc.k);
    const auto dq = primes(mc.bits_d, mc.n, mc.d, kq);
    veil::ModDown md(make_base(kq), make_base(dq));
    const auto in = random_residues(rng, cat(kq, dq), mc.n, mc.num_polys);
    std::vector<u64> out(mc.num_polys * kq.size() * mc.n), want(out.size());
    md.apply(kCpu, in.data(), out.data(), mc.n, mc.num_polys);
    mod_down_oracle(kq, dq, in, want, mc.n, mc.num_polys, kq.size() * mc.n);
    EXPECT_TRUE(same_word_vectors(out, want));
  }
}

TEST(ModDown, SinglePrimeIsExactRounding) {
  // |D| = 1: the result is round(x / D) exactly, for x anywhere in [0, KD) (incl. the ends).
  const std::size_t n = 64;
  const auto kq = primes(60, n, 3);
  const auto dq = primes(61, n, 1, kq);
  const Crt all(cat(kq, dq));
  const cpp_int D = dq[0];
  veil::ModDown md(make_base(kq), make_base(dq));
  std::mt19937_64 rng(11);
  std::vector<u64> in(all.q.size() * n), out(kq.size() * n), want(out.size());
  for (std::size_t c = 0; c < n; ++c) {
    cpp_int x = c < 4 ? cpp_int(c) : random_big(rng, 0, all.Q);
    if (c == 4) x = all.Q - 1;
    if (c == 5) x = D / 2;      // rounds down
    if (c == 6) x = D / 2 + 1;  // rounds up
    put_residues(x, all.q, in.data(), n, c);
    put_residues(round_div(x, D), kq, want.data(), n, c);
  }
  md.apply(kCpu, in.data(), out.data(), n);
  EXPECT_TRUE(same_word_vectors(out, want));
}

TEST(ModDown, InPlaceKeepsPolynomialStride) {
  std::mt19937_64 rng(12);
  for (const auto& mc : {kModDownCases[2], kModDownCases[5], kModDownCases[7]}) {
    SCOPED_TRACE("K=" + std::to_string(mc.k) + " D=" + std::to_string(mc.d));
    const auto kq = primes(mc.bits_k, mc.n, mc.k);
    const auto dq = primes(mc.bits_d, mc.n, mc.d, kq);
    veil::ModDown md(make_base(kq), make_base(dq));
    const std::size_t np = 3, stride = (kq.size() + dq.size()) * mc.n;
    const auto in = random_residues(rng, cat(kq, dq), mc.n, np);
    std::vector<u64> data = in, want = in;
    md.apply(kCpu, data.data(), data.data(), mc.n, np);
    mod_down_oracle(kq, dq, in, want, mc.n, np, stride);  // D limbs stay as they were
    EXPECT_TRUE(same_word_vectors(data, want));
  }
}

TEST(ModDown, RejectsBadArguments) {
  const auto q = primes(50, 16, 3);
  EXPECT_THROW(veil::ModDown(make_base(q), make_base({})), veil::InvalidArgument);
  EXPECT_THROW(veil::ModDown(make_base({}), make_base(q)), veil::InvalidArgument);
  EXPECT_THROW(veil::ModDown(make_base(q), make_base({q[0]})), veil::InvalidArgument);
}

// ---- max_centered_log2 ----------------------------------------------------------------------

TEST(RnsHost, MaxCenteredLog2) {
  const std::size_t n = 8;
  const auto q = primes(60, n, 3);
  const cpp_int Q = prod(q);
  const RnsBase base = make_base(q);
  std::vector<u64> poly(q.size() * n, 0);
  EXPECT_EQ(veil::max_centered_log2(poly.data(), n, base), 0.0);
  const double half_log = std::log2(static_cast<double>((Q - 1) / 2));
  const struct {
    cpp_int value;
    double max_log2;  // expected after this coefficient is set
  } steps[] = {
      {5, std::log2(5.0)},
      {-(cpp_int(3) << 80), 80 + std::log2(3.0)},
      {cpp_int(1) << 100, 100.0},
      {-7, 100.0},
      {(Q - 1) / 2, half_log},
      {(Q + 1) / 2, half_log},  // centers to -(Q-1)/2
  };
  std::size_t c = 0;
  for (const auto& st : steps) {
    put_residues(st.value, q, poly.data(), n, c++);
    EXPECT_NEAR(veil::max_centered_log2(poly.data(), n, base), st.max_log2, 1e-9) << c;
  }
  EXPECT_THROW(veil::max_centered_log2(poly.data(), n, make_base({})), veil::InvalidArgument);
}

// ---- CUDA parity ----------------------------------------------------------------------------

class RnsCuda : public ::testing::Test {
 protected:
  void SetUp() override {
    if (veil::cuda_device_count() == 0) GTEST_SKIP() << "no CUDA device";
    gpu_ = Device(Device::Kind::cuda, 0);
  }
  /// Runs f(dev, in_ptr, out_ptr) on the CPU and the GPU and compares the outputs bit for bit.
  template <class F>
  void compare(const std::vector<u64>& in, std::size_t out_size, F f) {
    std::vector<u64> cpu_out(out_size, 0);
    f(kCpu, in.data(), cpu_out.data());
    auto din = veil::Buffer<u64>::from_host(gpu_, in);
    veil::Buffer<u64> dout(gpu_, out_size);
    dout.zero();
    f(gpu_, din.data(), dout.data());
    EXPECT_TRUE(same_word_vectors(dout.to_host(), cpu_out));
  }
  Device gpu_;
};

// Restores set_conversion_kernel, set_conversion_full_rows and set_conversion_montgomery when a
// test leaves.
struct RestoreConversionKernel {
  int kernel = veil::conversion_kernel();
  bool full = veil::conversion_full_rows();
  bool mont = veil::conversion_montgomery();
  int tiles = veil::conversion_tc_tiles();
  ~RestoreConversionKernel() {
    veil::set_conversion_tc_tiles(tiles);
    veil::set_conversion_kernel(kernel);
    veil::set_conversion_full_rows(full);
    veil::set_conversion_montgomery(mont);
  }
};

// Runs body() under every conversion setting: kernels 0..3 (3: the tensor cores where they apply,
// 32-bit words with the Montgomery table and the lazy rows on, as BaseConverter32MatchesCpu's
// 12 -> 46 primes), branch-free rows on and off, lazy Montgomery rows on and off (the settings
// restored afterwards).
template <class Body>
void for_each_conversion_setting(Body body) {
  const RestoreConversionKernel restore;
  // settings 16 and 17: the tensor cores with blocks of 2 and 4 tiles (set_conversion_tc_tiles)
  for (int setting = 0; setting < 18; ++setting) {
    const int kernel = setting < 16 ? setting / 4 : 3;
    const bool full = setting % 2 == 1, mont = setting >= 16 || setting / 2 % 2 == 1;
    const int tiles = setting == 16 ? 2 : setting == 17 ? 4 : 1;
    veil::set_conversion_kernel(kernel);
    veil::set_conversion_full_rows(full);
    veil::set_conversion_montgomery(mont);
    veil::set_conversion_tc_tiles(tiles);
    SCOPED_TRACE("conversion kernel " + std::to_string(kernel) +
                 (full ? ", full rows" : ", no full rows") +
                 (mont ? ", Montgomery rows" : ", no Montgomery rows") + ", tiles " +
                 std::to_string(tiles));
    body();
  }
}

// Every case with each conversion kernel: tables read from global memory, staged in shared
// memory, and staged with half the coefficients per thread (set_conversion_kernel: the shared
// kernels take the cases whose N / coefficients per thread is a multiple of 256, N = 512..4096;
// the rest fall back).
TEST_F(RnsCuda, BaseConverterMatchesCpu) {
  std::mt19937_64 rng(20);
  for_each_conversion_setting([&] {
    for (const auto& cs : kConvCases) {
      SCOPED_TRACE(describe(cs));
      const auto qf = primes(cs.bits_from, cs.n, cs.k_from);
      const auto pt = primes(cs.bits_to, cs.n, cs.k_to, qf);
      BaseConverter conv(make_base(qf), make_base(pt));
      const auto in = random_residues(rng, qf, cs.n, cs.num_polys);
      const std::size_t out_size = cs.num_polys * pt.size() * cs.n;
      compare(in, out_size, [&](const Device& d, const u64* i, u64* o) {
        conv.fast_convert(d, i, o, cs.n, cs.num_polys);
      });
      compare(in, out_size, [&](const Device& d, const u64* i, u64* o) {
        conv.exact_convert(d, i, o, cs.n, cs.num_polys);
      });
    }
  });
}

// 32-bit words at ModDown's bootstrap shape (12 primes -> 46, 2 polynomials), and to 70 primes
// (the tensor-core kernel's rows in two chunks of 64), fast and exact, with each conversion kernel
// (set_conversion_kernel).
TEST_F(RnsCuda, BaseConverter32MatchesCpu) {
  std::mt19937_64 rng(22);
  for_each_conversion_setting([&] {
    for (std::size_t targets : {46, 70}) {
      const std::size_t n = 4096, polys = 2;
      const auto qf = primes(30, n, 12);
      const auto pt = primes(31, n, targets, qf);
      BaseConverter conv(make_base(qf), make_base(pt));
      // products of 30- and 31-bit residues, below 2^61: the lazy rows' table exists
      ASSERT_GT(conv.tables().mat_mont32.size(), 0u);
      const auto in64 = random_residues(rng, qf, n, polys);
      const std::vector<u32> in(in64.begin(), in64.end());
      for (bool exact : {false, true}) {
        std::vector<u32> want(polys * pt.size() * n);
        if (exact) {
          conv.exact_convert(kCpu, in.data(), want.data(), n, polys);
        } else {
          conv.fast_convert(kCpu, in.data(), want.data(), n, polys);
        }
        auto din = veil::Buffer<u32>::from_host(gpu_, in);
        veil::Buffer<u32> dout(gpu_, want.size());
        if (exact) {
          conv.exact_convert(gpu_, din.data(), dout.data(), n, polys);
        } else {
          conv.fast_convert(gpu_, din.data(), dout.data(), n, polys);
        }
        EXPECT_EQ(dout.to_host(), want)
            << "32-bit words, " << (exact ? "exact" : "fast") << ", " << targets << " targets";
      }
    }
  });
}

TEST_F(RnsCuda, HpsMatchesCpu) {
  std::mt19937_64 rng(21);
  for (std::size_t k : {1, 5, 20, 36}) {
    const std::size_t n = k > 20 ? 64 : 4096;
    const auto q = primes(60, n, k);
    const auto r = primes(61, n, k + 1, q);
    const u64 t = 65537;
    HpsScaleAndRoundQR qr(make_base(q), make_base(r), t);
    const auto in = random_residues(rng, cat(q, r), n, 2);
    compare(in, 2 * r.size() * n,
            [&](const Device& d, const u64* i, u64* o) { qr.apply(d, i, o, n, 2); });
    HpsScaleAndRoundQ qs(make_base(q), t);
    const auto in_q = random_residues(rng, q, n, 1);
    compare(in_q, n, [&](const Device& d, const u64* i, u64* o) { qs.apply(d, i, o, n); });
  }
}

TEST_F(RnsCuda, BehzMatchesCpu) {
  std::mt19937_64 rng(22);
  for (const auto& bc : kBehzCases) {
    BehzSetup s(bc.bits_q, bc.k, bc.bits_b, bc.t, bc.n);
    SCOPED_TRACE(s.name());
    const std::size_t np = 2, kq = s.q.size(), kb = s.bsk.size();
    const auto xq = random_residues(rng, s.q, s.n, np);
    compare(xq, np * (kb + 1) * s.n, [&](const Device& d, const u64* i, u64* o) {
      s.tools.fastbconv_m_tilde(d, i, o, s.n, np);
    });
    const auto xm = random_residues(rng, cat(s.bsk, {kMTilde}), s.n, np);
    compare(xm, np * kb * s.n,
            [&](const Device& d, const u64* i, u64* o) { s.tools.sm_mrq(d, i, o, s.n, np); });
    const auto xf = random_residues(rng, cat(s.q, s.bsk), s.n, np);
    compare(xf, np * kb * s.n,
            [&](const Device& d, const u64* i, u64* o) { s.tools.fast_floor(d, i, o, s.n, np); });
    const auto xs = random_residues(rng, s.bsk, s.n, np);
    compare(xs, np * kq * s.n, [&](const Device& d, const u64* i, u64* o) {
      s.tools.fastbconv_sk(d, i, o, s.n, np);
    });
    const auto xd = random_residues(rng, s.q, s.n, 1);
    compare(xd, s.n, [&](const Device& d, const u64* i, u64* o) {
      s.tools.decrypt_scale_and_round(d, i, o, s.n);
    });
  }
}

TEST_F(RnsCuda, ModDownMatchesCpu) {
  std::mt19937_64 rng(23);
  for (const auto& mc : kModDownCases) {
    const auto kq = primes(mc.bits_k, mc.n, mc.k);
    const auto dq = primes(mc.bits_d, mc.n, mc.d, kq);
    veil::ModDown md(make_base(kq), make_base(dq));
    const auto in = random_residues(rng, cat(kq, dq), mc.n, mc.num_polys);
    compare(in, mc.num_polys * kq.size() * mc.n, [&](const Device& d, const u64* i, u64* o) {
      md.apply(d, i, o, mc.n, mc.num_polys);
    });
    // In place (output keeps the input's stride).
    compare(in, in.size(), [&](const Device& d, const u64* i, u64* o) {
      veil::backend::copy(d, o, d, i, in.size() * sizeof(u64));
      md.apply(d, o, o, mc.n, mc.num_polys);
    });
  }
}

}  // namespace
