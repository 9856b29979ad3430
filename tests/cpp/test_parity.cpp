// CPU/GPU and 64-/32-bit word parity for BFV (DESIGN.md "Backends and determinism"): with the
// same explicit seeds, keys, encodings, ciphertexts, every evaluator result and every decryption
// are bit-identical on two sides:
// - device cases: the same context on Device::cpu() and cuda:0 (skipped without a CUDA device);
// - word cases ("_w32"): the same primes (all below 2^31) in a context with 64-bit words on the
//   CPU and one with 32-bit words on cuda:0, or on the CPU without a GPU (so CI runs them).
// Words are compared widened to 64 bits (buffer().to_host()).
//
// Building with -DVEIL_PARITY_SELF_CHECK compares the CPU with itself instead (no GPU needed):
// that checks the test's own logic, not the backends.
#include <gtest/gtest.h>

#include <cstdint>
#include <ostream>
#include <random>
#include <string>
#include <vector>

#include "batch_util.h"

namespace {

using namespace veil;
using namespace veil::test;

struct ParityCase {
  std::string name;
  std::size_t n;
  std::vector<int> bits; // empty: CoeffModulus::bfv_default(n)
  std::size_t special_primes;
  std::size_t alpha;
  int t_bits; // 0: t = 65537
  MulMethod method;
  bool words = false; // side A: 64-bit words on the CPU; side B: 32-bit words
};

void PrintTo(const ParityCase &c, std::ostream *os) { *os << c.name; }

const MulMethod HPS = MulMethod::hps;
const MulMethod BEHZ = MulMethod::behz;

class BfvParity : public ::testing::TestWithParam<ParityCase> {
protected:
  void SetUp() override {
    const ParityCase &c = GetParam();
    if (!c.words && !have_second_device())
      GTEST_SKIP() << "no CUDA device";
    EncryptionParameters p = bfv_params(c.n, c.bits, c.special_primes, c.alpha, c.t_bits, c.method);
    if (c.words) {
      p.word_bits = 64;
      ctx_a = veil::Context::create(p, veil::SecurityLevel::none);
      p.word_bits = 32;
      ctx_b = veil::Context::create(p, veil::SecurityLevel::none);
      ASSERT_EQ(ctx_a->word_bits(), 64);
      ASSERT_EQ(ctx_b->word_bits(), 32);
      gpu = have_second_device() ? second_device() : Device::cpu();
    } else {
      ctx_a = ctx_b = veil::Context::create(p);
    }
    ctx = ctx_a;
    t = ctx->plain_modulus();
  }
  // Large N: Galois keys for step 1 and the column swap only (each key is up to ~1 GB).
  bool large() const { return GetParam().n >= 32768; }

  ContextPtr ctx, ctx_a, ctx_b; // ctx = ctx_a: side A (cpu), side B (gpu)
  u64 t = 0;
  const Device cpu = Device::cpu();
  Device gpu = second_device();
};

TEST_P(BfvParity, KeysCiphertextsAndEvaluation) {
  const std::size_t n = ctx->n();
  const std::uint64_t seed = 0xC0FFEE + n;
  // ---- keys (created in the same order on both devices: the PRNG domains follow the calls)
  KeyGenerator kc(ctx_a, cpu, seed), kg(ctx_b, gpu, seed);
  EXPECT_EQ(kg.secret_key().device(), gpu);
  EXPECT_TRUE(same_words(kc.secret_key(), kg.secret_key())) << "secret key";
  const PublicKey pkc = kc.create_public_key(), pkg = kg.create_public_key();
  EXPECT_TRUE(same_words(pkc, pkg)) << "public key";
  const RelinKeys rlkc = kc.create_relin_keys(), rlkg = kg.create_relin_keys();
  EXPECT_EQ(rlkg.device(), gpu);
  EXPECT_TRUE(same_words(rlkc.key(), rlkg.key())) << "relin keys";
  const std::vector<int> key_steps = large() ? std::vector<int>{1} : std::vector<int>{1, -1, 2, 4};
  const GaloisKeys gkc = kc.create_galois_keys(key_steps, true);
  const GaloisKeys gkg = kg.create_galois_keys(key_steps, true);
  EXPECT_EQ(gkc.keys().size(), key_steps.size() + 1);
  EXPECT_TRUE(same_galois(gkc, gkg)) << "galois keys";

  // ---- encode and encrypt
  std::mt19937_64 rng(seed);
  const Vec a = random_words(rng, n, t), b = random_words(rng, n, t);
  BatchEncoder enc(ctx_a), encb(ctx_b);
  const Plaintext pac = enc.encode(a, cpu), pag = encb.encode(a, gpu);
  const Plaintext pbc = enc.encode(b, cpu), pbg = encb.encode(b, gpu);
  EXPECT_EQ(pag.device(), gpu);
  EXPECT_TRUE(same_words(pac, pag)) << "encode";
  EXPECT_TRUE(same_words(pbc, pbg)) << "encode";
  {  // fewer values than slots: the GPU zero-fills the rest on the device, the CPU on the host
    const Vec part(a.begin(), a.begin() + n / 3);
    EXPECT_TRUE(same_words(enc.encode(part, cpu), encb.encode(part, gpu))) << "short encode";
  }
  Encryptor ec(ctx_a, pkc, 7), eg(ctx_b, pkg, 7);
  const Ciphertext cac = ec.encrypt(pac), cag = eg.encrypt(pag);
  const Ciphertext cbc = ec.encrypt(pbc), cbg = eg.encrypt(pbg);
  EXPECT_EQ(cag.device(), gpu);
  EXPECT_TRUE(same_ct(cac, cag)) << "encrypt (public key)";
  EXPECT_TRUE(same_ct(cbc, cbg)) << "encrypt (public key), second call";
  Encryptor sc(ctx_a, kc.secret_key(), 9), sg(ctx_b, kg.secret_key(), 9);
  const Ciphertext csc = sc.encrypt(pbc), csg = sg.encrypt(pbg);
  EXPECT_TRUE(same_ct(csc, csg)) << "encrypt (secret key)";
  EXPECT_TRUE(same_ct(ec.encrypt_zero(), eg.encrypt_zero())) << "encrypt_zero";

  // ---- evaluation: one Evaluator per side
  Evaluator ev(ctx_a), evb(ctx_b);
  EXPECT_TRUE(same_ct(ev.add(cac, cbc), evb.add(cag, cbg))) << "add";
  EXPECT_TRUE(same_ct(ev.sub(cac, csc), evb.sub(cag, csg))) << "sub";
  EXPECT_TRUE(same_ct(ev.negate(cac), evb.negate(cag))) << "negate";
  EXPECT_TRUE(same_ct(ev.add_plain(cac, pbc), evb.add_plain(cag, pbg))) << "add_plain";
  EXPECT_TRUE(same_ct(ev.sub_plain(cac, pbc), evb.sub_plain(cag, pbg))) << "sub_plain";
  EXPECT_TRUE(same_ct(ev.multiply_plain(cac, pbc), evb.multiply_plain(cag, pbg)))
      << "multiply_plain";
  const Ciphertext mc = ev.multiply(cac, cbc), mg = evb.multiply(cag, cbg);
  EXPECT_EQ(mg.device(), gpu);
  EXPECT_TRUE(same_ct(mc, mg)) << "multiply (" << veil::to_string(GetParam().method) << ")";
  EXPECT_TRUE(same_ct(ev.square(cac), evb.square(cag))) << "square";
  EXPECT_TRUE(same_ct(ev.add(mc, csc), evb.add(mg, csg))) << "add (sizes 3 and 2)";
  const Ciphertext rc = ev.relinearize(mc, rlkc), rg = evb.relinearize(mg, rlkg);
  EXPECT_TRUE(same_ct(rc, rg)) << "relinearize";
  const std::vector<int> steps = large() ? std::vector<int>{1, -(static_cast<int>(n / 2) - 1)}
                                         : std::vector<int>{1, -1, 2, 4, 3, 5};
  for (int s : steps) {
    EXPECT_TRUE(same_ct(ev.rotate_rows(cac, s, gkc), evb.rotate_rows(cag, s, gkg)))
        << "rotate_rows " << s;
  }
  EXPECT_TRUE(same_ct(ev.rotate_columns(rc, gkc), evb.rotate_columns(rg, gkg))) << "rotate_columns";
  const std::vector<Ciphertext> manyc = ev.rotate_many(cac, key_steps, gkc);
  const std::vector<Ciphertext> manyg = evb.rotate_many(cag, key_steps, gkg);
  ASSERT_EQ(manyc.size(), key_steps.size());
  ASSERT_EQ(manyg.size(), key_steps.size());
  for (std::size_t i = 0; i < key_steps.size(); ++i) {
    EXPECT_TRUE(same_ct(manyc[i], manyg[i])) << "rotate_many step " << key_steps[i];
    EXPECT_TRUE(same_ct(manyg[i], evb.rotate_rows(cag, key_steps[i], gkg)))
        << "rotate_many vs rotate_rows on the GPU, step " << key_steps[i];
  }

  // ---- decryption: identical plaintexts and budgets, and the right values
  Decryptor dc(ctx_a, kc.secret_key()), dg(ctx_b, kg.secret_key());
  const Plaintext outc = dc.decrypt(rc), outg = dg.decrypt(rg);
  EXPECT_EQ(outg.device(), gpu);
  EXPECT_TRUE(same_words(outc, outg)) << "decrypt";
  EXPECT_TRUE(same_words(dc.decrypt(cac), dg.decrypt(cag))) << "decrypt fresh";
  EXPECT_TRUE(same_words(dc.decrypt(mc), dg.decrypt(mg))) << "decrypt size 3";
  // The noise test runs in the scaling's pass: without it the words are the same.
  EXPECT_TRUE(same_words(dg.decrypt(mg, false), dc.decrypt(mc))) << "decrypt size 3, unchecked";
  EXPECT_TRUE(same_words(dg.decrypt(rg, false), outc)) << "decrypt, unchecked";
  EXPECT_EQ(dc.invariant_noise_budget(rc), dg.invariant_noise_budget(rg));
  Vec ab(n);
  for (std::size_t i = 0; i < n; ++i)
    ab[i] = static_cast<u64>((unsigned __int128)a[i] * b[i] % t);
  EXPECT_EQ(encb.decode(outg), ab);
  EXPECT_EQ(enc.decode(outc), ab);
  EXPECT_EQ(encb.decode(dg.decrypt(mg)), ab) << "size 3 (c0 + c1 s + c2 s^2)";
  EXPECT_EQ(encb.decode(dg.decrypt(evb.rotate_rows(cag, 1, gkg))), rot_rows(a, 1));
}

TEST_P(BfvParity, MovesPreserveData) {
  if (GetParam().words)
    GTEST_SKIP() << "device moves: device cases only";
  if (!have_second_device())
    GTEST_SKIP() << "no CUDA device";
  const std::size_t n = ctx->n();
  const std::uint64_t seed = 0xBEEF + n;
  KeyGenerator kc(ctx_a, cpu, seed), kg(ctx_b, gpu, seed);
  const PublicKey pkc = kc.create_public_key();
  const RelinKeys rlkc = kc.create_relin_keys();
  const GaloisKeys gkc = kc.create_galois_keys({1}, true);
  // Keys made on the CPU and moved equal keys made on the GPU (same seed, same call order).
  EXPECT_TRUE(same_words(kc.secret_key().to(gpu), kg.secret_key()));
  EXPECT_EQ(kc.secret_key().to(gpu).device(), gpu);
  EXPECT_TRUE(same_words(pkc.to(gpu), kg.create_public_key()));
  const RelinKeys rlkg = kg.create_relin_keys();
  EXPECT_TRUE(same_words(rlkc.to(gpu).key(), rlkg.key()));
  const GaloisKeys gkg = kg.create_galois_keys({1}, true);
  EXPECT_TRUE(same_galois(gkc.to(gpu), gkg));
  EXPECT_EQ(gkc.to(gpu).device(), gpu);
  // Round trips cpu -> gpu -> cpu and gpu -> cpu -> gpu.
  EXPECT_TRUE(same_words(kc.secret_key().to(gpu).to(cpu), kc.secret_key()));
  EXPECT_TRUE(same_words(pkc.to(gpu).to(cpu), pkc));
  EXPECT_TRUE(same_galois(gkg.to(cpu).to(gpu), gkg));
  EXPECT_TRUE(same_galois(gkg.to(cpu), gkc));
  BatchEncoder enc(ctx);
  std::mt19937_64 rng(seed);
  const Vec a = random_words(rng, n, t);
  const Plaintext pc = enc.encode(a, cpu);
  EXPECT_TRUE(same_words(pc.to(gpu).to(cpu), pc));
  EXPECT_EQ(enc.decode(pc.to(gpu)), a);
  Encryptor ec(ctx, pkc, 3);
  const Ciphertext cc = ec.encrypt(pc);
  const Ciphertext moved = cc.to(gpu);
  EXPECT_EQ(moved.device(), gpu);
  EXPECT_EQ(moved.size(), cc.size());
  EXPECT_EQ(moved.level(), cc.level());
  EXPECT_TRUE(same_ct(moved.to(cpu), cc));
  // Work on moved objects matches work where they were made: GPU relinearize with moved CPU keys.
  Evaluator ev(ctx);
  const Ciphertext mc = ev.relinearize(ev.square(cc), rlkc);
  const Ciphertext mg = ev.relinearize(ev.square(moved), rlkc.to(gpu));
  EXPECT_TRUE(same_ct(mg.to(cpu), mc));
  EXPECT_TRUE(same_ct(ev.rotate_rows(moved, 1, gkc.to(gpu)).to(cpu), ev.rotate_rows(cc, 1, gkc)));
  Decryptor dg(ctx, kc.secret_key().to(gpu));
  Vec sq(n);
  for (std::size_t i = 0; i < n; ++i)
    sq[i] = static_cast<u64>((unsigned __int128)a[i] * a[i] % t);
  EXPECT_EQ(enc.decode(dg.decrypt(mg)), sq);
}

INSTANTIATE_TEST_SUITE_P(Bfv, BfvParity,
                         ::testing::Values(ParityCase{"n4096_hps", 4096, {}, 1, 0, 0, HPS},
                                           ParityCase{"n4096_behz", 4096, {}, 1, 0, 0, BEHZ},
                                           ParityCase{"n8192_hps", 8192, {}, 1, 0, 20, HPS},
                                           ParityCase{"n8192_behz", 8192, {}, 1, 0, 0, BEHZ},
                                           ParityCase{"n8192_36x6_sp2_a2_behz", 8192,
                                                      std::vector<int>(6, 36), 2, 2, 0, BEHZ},
                                           ParityCase{"n16384_hps", 16384, {}, 1, 0, 0, HPS},
                                           ParityCase{"n16384_behz", 16384, {}, 1, 0, 30, BEHZ},
                                           ParityCase{"n32768_hps", 32768, {}, 1, 0, 0, HPS},
                                           ParityCase{"n32768_behz", 32768, {}, 1, 0, 25, BEHZ},
                                           ParityCase{"n65536_hps", 65536, {}, 1, 0, 20, HPS},
                                           ParityCase{"n65536_behz", 65536, {}, 1, 0, 20, BEHZ},
                                           ParityCase{"n4096_30x3_w32", 4096, {30, 30, 31}, 1, 0, 20, HPS, true},
                                           ParityCase{"n8192_30x5_p31x2_a2_w32", 8192,
                                                      {30, 30, 30, 30, 31, 31}, 2, 2, 20, HPS, true}),
                         [](const ::testing::TestParamInfo<ParityCase> &i) {
                           return i.param.name;
                         });

} // namespace
