// The fused forward-NTT passes (veil/ring/ntt_fused.cuh), replayed on the host: each block body
// runs over every thread of a block in lock step (a step for all threads, then the barrier),
// which is what the CUDA kernels run, one thread each. The oracle is the CPU reference transform
// (ntt.cpp's Harvey butterflies, itself tested against the NTT's definition in test_ntt.cpp):
//   - a producer that serves known coefficients, through the column pass and the plain row pass,
//     gives the reference transform of every limb, word for word;
//   - the same column pass followed by the row pass with a consumer hands the consumer each word
//     of the reference transform exactly once, at its offset and polynomial.
// Degrees 2^12 (64-point columns), 2^13 and 2^15 (odd splits) and 2^16 (the bootstrappable
// sets'). The kernels themselves run in the GPU parity tests (test_parity*.cpp, "_w32" cases).
#include <gtest/gtest.h>

#if defined(VEIL_HAVE_CUDA)
#include <memory>
#include <random>
#include <vector>

#include "veil/core/primes.h"
#include "veil/ring/ntt.h"
#include "veil/ring/ntt_fused.cuh"

namespace {

using veil::Device;
using veil::Modulus;
using veil::NttTables;
using veil::u32;
using veil::u64;

// Lock-step execution of one block on the host.
template <class P_>
struct BlockEx {
  using P = P_;
  std::vector<P>* threads;
  u32* sm;
  template <class F>
  void each(F&& f) {
    for (P& p : *threads) f(p, sm);
  }
  void sync() {}
};

// ntt_pass_kernel's body, replayed for every block of a pass of P over num_pl (polynomial, limb)
// pairs of a.v (block = (limb, tile, polynomial)).
template <class P>
void replay_pass(const veil::detail::NttArgs<u32>& a, u32 num_pl) {
  std::vector<u32> sm(P::kSmemWords);
  const u32 blocks = num_pl * u32(P::kN >> P::kLog) / u32(P::kSeqsPerBlock);
  for (u32 b = 0; b < blocks; ++b) {
    std::vector<P> threads(P::kThreads);
    for (u32 t = 0; t < threads.size(); ++t) threads[t].init(a, b, t);
    BlockEx<P> ex{&threads, sm.data()};
    veil::detail::pass_load(ex);
    veil::detail::pass_rounds(ex);
    veil::detail::pass_store(ex);
  }
}

// A producer serving stored coefficients: group g's output limb r is x[(g * rows + r) * n + ...].
struct StoredSource {
  static constexpr u32 kCoeffs = 4, kTableWords = 4;
  static constexpr int kMinBlocks = 1;
  struct State {
    std::size_t c0;
  };
  const u32* x;
  u32* out;
  const NttTables* tables;
  u32 rows;
  std::size_t n;
  void load(u32, std::size_t c0, State& st) const { st.c0 = c0; }
  veil::detail::PassTarget<u32> target(u32 g, u32 r) const {
    const u32 id = (g + r) % u32(tables->num_primes());  // groups use the primes in turn
    return {id, tables->prime(id), out + (std::size_t(g) * rows + r) * n};
  }
  // Table row (g, r): one word, g + r + 1, which produce checks arrives through shared memory.
  const u32* table(u32 g, u32 r) const { return &row_words[g * rows + r]; }
  u32 table_words() const { return 1; }
  std::vector<u32> row_words;
  void produce(const State& st, u32 g, u32 r, const u32* row, const Modulus& m,
               u32 (&v)[kCoeffs]) const {
    EXPECT_EQ(row[0], g + r + 1);
    EXPECT_EQ(m.value, tables->prime((g + r) % u32(tables->num_primes())).value);
    for (u32 t = 0; t < kCoeffs; ++t) v[t] = x[(std::size_t(g) * rows + r) * n + st.c0 + t * (n / 4)];
  }
};

struct Fixture {
  std::size_t n;
  NttTables tables;
  std::vector<u32> x;  // [groups][rows][n]
  u32 groups = 2, rows = 3;
  std::vector<std::vector<u32>> want;  // reference transform of each (group, row)
  u32 prime_of(u32 g, u32 r) const { return (g + r) % u32(tables.num_primes()); }

  explicit Fixture(int log_n) : n(std::size_t(1) << log_n) {
    std::vector<Modulus> primes;
    for (u64 q : veil::generate_ntt_primes(30, n, 3)) primes.emplace_back(q);
    tables = NttTables(n, primes);
    std::mt19937_64 rng(log_n);
    x.resize(std::size_t(groups) * rows * n);
    want.clear();
    for (u32 g = 0; g < groups; ++g)
      for (u32 r = 0; r < rows; ++r) {
        const u32 id = prime_of(g, r);
        const u32 q = u32(tables.prime(id).value);
        std::vector<u32> limb(n);
        for (auto& w : limb) w = u32(rng() % q);
        std::copy(limb.begin(), limb.end(), x.begin() + (std::size_t(g) * rows + r) * n);
        const u32* tw = tables.twiddles32(Device::cpu()) + std::size_t(id) * 4 * n;
        veil::detail::ntt_forward_limb<u32>(limb.data(), tw, tw + n, n, q);
        want.push_back(limb);
      }
  }

  // The column pass of every block (first_pass_from_block), split as the launcher splits.
  template <int kLogN>
  std::vector<u32> column_pass(u32 splits) const {
    using Cols = veil::detail::FusedCols<kLogN, u32>;
    using P = veil::detail::WithState<Cols, StoredSource::State>;
    std::vector<u32> out(x.size(), 0xFFFFFFFFu);
    StoredSource s{x.data(), out.data(), &tables, rows, n, {}};
    for (u32 g = 0; g < groups; ++g)
      for (u32 r = 0; r < rows; ++r) s.row_words.push_back(g + r + 1);
    using Sh = veil::detail::FirstPassShared<P, StoredSource>;
    auto sh = std::make_unique<Sh>();
    const u32 tiles = u32(n / (Cols::kSeqsPerBlock * Cols::kL));
    const u32* tw = tables.twiddles32(Device::cpu());
    std::vector<u32> sm(Cols::kSmemWords);
    for (u32 g = 0; g < groups; ++g)
      for (u32 split = 0; split < splits; ++split)
        for (u32 tile = 0; tile < tiles; ++tile) {
          const u32 per = (rows + splits - 1) / splits, r0 = split * per;
          const u32 r1 = std::min(rows, r0 + per);
          if (r0 >= r1) continue;
          std::vector<P> threads(Cols::kThreads);
          for (u32 t = 0; t < threads.size(); ++t) threads[t].set_thread(tile, t);
          BlockEx<P> ex{&threads, sm.data()};
          veil::detail::first_pass_from_block(ex, tw, s, *sh, g, r0, r1);
        }
    return out;
  }

  // A view of the column pass's output: every (group, row) a polynomial of one limb whose prime
  // is the one its producer used (ntt_ids per limb need one base, so one view per (g, r)).
  veil::RnsPolyView<u32> view_of(u32* data, u32 g, u32 r, std::vector<Modulus>& mods,
                                 std::vector<u32>& ids) const {
    mods = {tables.prime(prime_of(g, r))};
    ids = {prime_of(g, r)};
    veil::RnsPolyView<u32> v;
    v.data = data + (std::size_t(g) * rows + r) * n;
    v.moduli = mods.data();
    v.ntt_ids = ids.data();
    v.num_polys = 1;
    v.num_limbs = 1;
    int log_n = 0;
    while ((std::size_t(1) << log_n) < n) ++log_n;
    v.log_n = log_n;
    return v;
  }
};

template <int kLogN>
void plain_row_pass_matches_reference() {
  Fixture f(kLogN);
  for (u32 splits : {1u, 2u, 4u}) {
    std::vector<u32> data = f.template column_pass<kLogN>(splits);
    using Rows = veil::detail::FusedRows<kLogN, u32>;
    const u32* tw = f.tables.twiddles32(Device::cpu());
    for (u32 g = 0; g < f.groups; ++g)
      for (u32 r = 0; r < f.rows; ++r) {
        std::vector<Modulus> mods;
        std::vector<u32> ids;
        const veil::detail::NttArgs<u32> a{.v = f.view_of(data.data(), g, r, mods, ids),
                                           .twiddles = tw,
                                           .inv_n = nullptr};
        replay_pass<Rows>(a, 1);
        const std::vector<u32> got(data.begin() + (std::size_t(g) * f.rows + r) * f.n,
                                   data.begin() + (std::size_t(g) * f.rows + r + 1) * f.n);
        ASSERT_EQ(got, f.want[g * f.rows + r])
            << "2^" << kLogN << ", " << splits << " splits, group " << g << ", limb " << r;
      }
  }
}

template <int kLogN>
void consumer_sees_reference_once() {
  Fixture f(kLogN);
  std::vector<u32> data = f.template column_pass<kLogN>(2);
  using Rows = veil::detail::FusedRows<kLogN, u32>;
  const u32* tw = f.tables.twiddles32(Device::cpu());
  // Row r twice, as one view of two polynomials over one prime (group 0's prime; group 1's limb
  // r may use another): the consumer must be told which polynomial each word belongs to.
  for (u32 r = 0; r < f.rows; ++r) {
    std::vector<u32> pair(2 * f.n);
    std::copy_n(data.begin() + std::size_t(r) * f.n, f.n, pair.begin());
    std::copy_n(data.begin() + std::size_t(r) * f.n, f.n, pair.begin() + f.n);
    // Make polynomial 1 differ: its reference is the transform of 2x (linearity), so double the
    // column-pass output mod q (also linear).
    const u32 q = u32(f.tables.prime(f.prime_of(0, r)).value);
    for (std::size_t i = 0; i < f.n; ++i) pair[f.n + i] = u32((2 * u64(pair[f.n + i])) % q);
    std::vector<Modulus> mods;
    std::vector<u32> ids;
    veil::RnsPolyView<u32> v = f.view_of(pair.data(), 0, r, mods, ids);
    v.data = pair.data();
    v.num_polys = 2;
    const veil::detail::NttArgs<u32> a{.v = v, .twiddles = tw, .inv_n = nullptr};
    // The consumer's load returns a word of its own per (polynomial, offset); finish must get it
    // back with the transform's word there.
    struct Consumer {
      std::vector<int>* seen;
      std::vector<u32>* got;
      std::size_t n;
      u32 load(u32 poly, u32 limb, u32 off) const { return 7 * (poly * u32(n) + off) + limb; }
      void finish(u32 poly, u32 limb, u32 off, u32 x, u32 w) const {
        EXPECT_EQ(limb, 0u);
        ASSERT_LT(poly, 2u);
        ASSERT_LT(off, n);
        EXPECT_EQ(x, 7 * (poly * u32(n) + off) + limb);
        ++(*seen)[poly * n + off];
        (*got)[poly * n + off] = w;
      }
    };
    std::vector<int> seen(2 * f.n, 0);
    std::vector<u32> got(2 * f.n);
    const Consumer cons{&seen, &got, f.n};
    constexpr u32 nseg = (Rows::kN >> Rows::kLog) / u32(Rows::kSeqsPerBlock);
    std::vector<u32> sm(Rows::kSmemWords);
    for (u32 poly = 0; poly < 2; ++poly)
      for (u32 seg = 0; seg < nseg; ++seg) {  // ntt_last_pass_into_kernel's blocks
        std::vector<Rows> threads(Rows::kThreads);
        for (u32 t = 0; t < threads.size(); ++t) threads[t].set_thread(seg, t);
        BlockEx<Rows> ex{&threads, sm.data()};
        veil::detail::last_pass_into_block(ex, a, cons, poly, 0);
      }
    const std::vector<u32>& want = f.want[r];
    for (std::size_t i = 0; i < f.n; ++i) {
      ASSERT_EQ(seen[i], 1) << "offset " << i;
      ASSERT_EQ(seen[f.n + i], 1) << "offset " << i;
      ASSERT_EQ(got[i], want[i]) << "2^" << kLogN << ", limb " << r << ", offset " << i;
      ASSERT_EQ(got[f.n + i], u32((2 * u64(want[i])) % q)) << "offset " << i;
    }
  }
}

// The narrow producer (load_from_inputs in the r16 column pass, then the plain row pass): every
// limb of two polynomials over three primes equals the reference transform of the 4-term sums
// computed with 128-bit integers, whatever the words below 2^31 (inputs, v and table rows), over
// two primes of 30 bits and one of 31.
template <int kLogN>
void narrow_column_pass_matches_reference() {
  using Cols = veil::detail::NarrowCols<kLogN, u32>;
  using Rows = veil::detail::FusedRows<kLogN, u32>;
  const std::size_t n = std::size_t(1) << kLogN;
  constexpr u32 polys = 2, limbs = 3;
  std::vector<Modulus> mods;
  for (u64 q : veil::generate_ntt_primes(30, n, limbs - 1)) mods.emplace_back(q);
  mods.emplace_back(veil::generate_ntt_primes(31, n, 1)[0]);
  ASSERT_LT(mods[0].value, u64(1) << 30);
  ASSERT_GT(mods[2].value, u64(1) << 30);
  const NttTables tables(n, mods);
  std::vector<u32> ids{0, 1, 2};
  std::mt19937_64 rng(100 + kLogN);
  std::vector<u32> in4(std::size_t(polys) * n * 4), mat(4 * limbs);
  for (auto& w : in4) w = u32(rng() >> 33);  // below 2^31
  for (auto& w : mat) w = u32(rng() >> 33);
  in4[0] = in4[1] = in4[2] = in4[3] = 0x7FFFFFFFu;  // the largest sum
  mat[0] = mat[1] = mat[2] = mat[3] = 0x7FFFFFFFu;
  std::vector<u32> want(std::size_t(polys) * limbs * n);
  for (u32 p = 0; p < polys; ++p)
    for (u32 l = 0; l < limbs; ++l) {
      u32* limb = want.data() + (std::size_t(p) * limbs + l) * n;
      for (std::size_t c = 0; c < n; ++c) {
        unsigned __int128 sum = 0;
        for (int i = 0; i < 4; ++i) sum += u64(in4[(p * n + c) * 4 + i]) * mat[4 * l + i];
        limb[c] = u32(sum % mods[l].value);
      }
      const u32* tw = tables.twiddles32(Device::cpu()) + std::size_t(l) * 4 * n;
      veil::detail::ntt_forward_limb<u32>(limb, tw, tw + n, n, u32(mods[l].value));
    }
  std::vector<u32> data(want.size(), 0xFFFFFFFFu);
  veil::RnsPolyView<u32> v;
  v.data = data.data();
  v.moduli = mods.data();
  v.ntt_ids = ids.data();
  v.num_polys = polys;
  v.num_limbs = limbs;
  v.log_n = kLogN;
  const veil::detail::NttArgs<u32> a{
      .v = v, .twiddles = tables.twiddles32(Device::cpu()), .inv_n = nullptr};
  std::vector<u32> sm(Cols::kSmemWords);
  constexpr u32 nseg = (Cols::kN >> Cols::kLog) / u32(Cols::kSeqsPerBlock);
  for (u32 b = 0; b < polys * limbs * nseg; ++b) {  // ntt_cols_from_inputs_kernel's body
    const u32 poly = b % polys, rest = b / polys, limb = rest / nseg;
    const u32 row[4] = {mat[4 * limb], mat[4 * limb + 1], mat[4 * limb + 2], mat[4 * limb + 3]};
    std::vector<Cols> threads(Cols::kThreads);
    for (u32 t = 0; t < threads.size(); ++t) {
      threads[t].init_at(a, poly, limb, rest % nseg, t);
      veil::detail::load_from_inputs(threads[t], in4.data() + std::size_t(poly) * 4 * n, row,
                                     mods[limb]);
    }
    BlockEx<Cols> ex{&threads, sm.data()};
    veil::detail::pass_rounds(ex);
    veil::detail::pass_store(ex);
  }
  replay_pass<Rows>(a, polys * limbs);
  for (std::size_t i = 0; i < want.size(); ++i) {
    ASSERT_EQ(data[i], want[i]) << "2^" << kLogN << ", polynomial " << i / (limbs * n)
                                << ", limb " << (i / n) % limbs << ", offset " << i % n;
  }
}

// The r16 two-pass transforms (ntt_pass_kernel's body: the passes of ntt_cuda.cu's variant 0
// with 32-bit words), forward then inverse, replayed on the host: each limb equals the CPU
// reference transform, and the inverse returns the input, for primes of 25, 30 and 31 bits.
template <bool kFwd, int kLogN>
void run_two_pass(std::vector<u32>& data, const std::vector<Modulus>& mods,
                  std::vector<u32>& ids, const NttTables& tables) {
  constexpr int l1 = kLogN / 2, l2 = kLogN - l1;
  using Cols = veil::detail::Pass<kFwd, true, kLogN, l1, (4096 >> l1), !kFwd, 4, false, u32>;
  using Rows = veil::detail::Pass<kFwd, false, kLogN, l2, (4096 >> l2), kFwd, 4, false, u32>;
  veil::RnsPolyView<u32> v;
  v.data = data.data();
  v.moduli = mods.data();
  v.ntt_ids = ids.data();
  v.num_polys = 1;
  v.num_limbs = u32(mods.size());
  v.log_n = kLogN;
  const veil::detail::NttArgs<u32> a{.v = v,
                                     .twiddles = tables.twiddles32(Device::cpu()),
                                     .inv_n = tables.inv_n32(Device::cpu())};
  if constexpr (kFwd) {
    replay_pass<Cols>(a, v.num_limbs);
    replay_pass<Rows>(a, v.num_limbs);
  } else {
    replay_pass<Rows>(a, v.num_limbs);
    replay_pass<Cols>(a, v.num_limbs);
  }
}

template <int kLogN>
void two_pass_matches_reference() {
  const std::size_t n = std::size_t(1) << kLogN;
  std::vector<Modulus> mods;
  for (int bits : {25, 30, 31}) mods.emplace_back(veil::generate_ntt_primes(bits, n, 1)[0]);
  const NttTables tables(n, mods);
  std::vector<u32> ids{0, 1, 2};
  std::mt19937_64 rng(200 + kLogN);
  std::vector<u32> x(mods.size() * n);
  for (std::size_t l = 0; l < mods.size(); ++l)
    for (std::size_t i = 0; i < n; ++i) x[l * n + i] = u32(rng() % mods[l].value);
  for (std::size_t i = 0; i < n; ++i) x[i] = u32(mods[0].value - 1);  // the largest residue
  std::vector<u32> want = x;
  for (std::size_t l = 0; l < mods.size(); ++l) {
    const u32* tw = tables.twiddles32(Device::cpu()) + l * 4 * n;
    veil::detail::ntt_forward_limb<u32>(want.data() + l * n, tw, tw + n, n, u32(mods[l].value));
  }
  std::vector<u32> data = x;
  run_two_pass<true, kLogN>(data, mods, ids, tables);
  for (std::size_t i = 0; i < data.size(); ++i)
    ASSERT_EQ(data[i], want[i]) << "forward, 2^" << kLogN << ", limb " << i / n << ", " << i % n;
  run_two_pass<false, kLogN>(data, mods, ids, tables);
  for (std::size_t i = 0; i < data.size(); ++i)
    ASSERT_EQ(data[i], x[i]) << "inverse, 2^" << kLogN << ", limb " << i / n << ", " << i % n;
}

TEST(NttFusedHost, TwoPassTransformsMatchTheReferenceOnEveryPrimeSize) {
  two_pass_matches_reference<13>();
  two_pass_matches_reference<16>();
}

TEST(NttFusedHost, NarrowColumnPassFromInputsThenRowPass) {
  narrow_column_pass_matches_reference<12>();
  narrow_column_pass_matches_reference<13>();
  narrow_column_pass_matches_reference<16>();
  narrow_column_pass_matches_reference<17>();
}

TEST(NttFusedHost, ColumnPassFromProducerThenRowPass) {
  plain_row_pass_matches_reference<12>();
  plain_row_pass_matches_reference<13>();
  plain_row_pass_matches_reference<15>();
  plain_row_pass_matches_reference<16>();
}

TEST(NttFusedHost, RowPassHandsEachWordToTheConsumer) {
  consumer_sees_reference_once<12>();
  consumer_sees_reference_once<15>();
  consumer_sees_reference_once<16>();
}

TEST(NttFusedHost, AppliesOnlyToThirtyTwoBitWordsAndServedDegrees) {
  veil::detail::set_fused_ntt(1);
  EXPECT_TRUE(veil::detail::fused_ntt_applies<u32>(16));
  EXPECT_FALSE(veil::detail::fused_ntt_applies<u64>(16));
  EXPECT_FALSE(veil::detail::fused_ntt_applies<u32>(11));
  EXPECT_FALSE(veil::detail::fused_ntt_applies<u32>(18));
  veil::detail::set_fused_ntt(0);
  EXPECT_FALSE(veil::detail::fused_ntt_applies<u32>(16));
  veil::detail::set_fused_ntt(-1);
}

}  // namespace
#else
TEST(NttFusedHost, NeedsTheCudaBackend) { GTEST_SKIP() << "built without the CUDA backend"; }
#endif
