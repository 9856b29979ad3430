// Word size as a context property (32-bit words for primes below 2^31, DESIGN.md "Data
// conventions") and CKKS rescaling by blocks of primes (a 2^40 scale on ~30-bit primes).
//
// Oracles: the same parameters with 64-bit words (whose kernels the rest of the suite tests
// against schoolbook products, big-integer CRT and plaintext arithmetic) for bit identity; a
// float64 product computed here for CKKS values; exact big-integer scales for the rescale
// blocks. The cross-word and cross-device parity of every operation is in test_parity*.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <complex>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "rlwe_util.h"
#include "veil/bfv/batch_encoder.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/ckks/encoder.h"
#include "veil/core/primes.h"
#include "veil/io/seal.h"
#include "veil/io/serialize.h"
#include "veil/ring/poly_ops.h"

namespace veil::test {
namespace {

using cd = std::complex<double>;

EncryptionParameters params_with(SchemeType s, std::size_t n, const std::vector<int>& bits,
                                 std::size_t special = 1, int word_bits = 0) {
  EncryptionParameters p(s);
  p.poly_modulus_degree = n;
  p.coeff_modulus = CoeffModulus::create(n, bits);
  p.special_primes = special;
  if (s != SchemeType::ckks) p.plain_modulus = PlainModulus::batching(n, 20);
  p.word_bits = word_bits;
  return p;
}

// ---- poly::horner (decryption's one-pass phase) against __int128 evaluation ----------------------

// Every device: the GPU's grouped kernel (aligned rows, n a multiple of the 16-byte group) and its
// word-by-word one (the polynomials one word off 16-byte alignment), and the CPU's IFMA / scalar
// paths; residues q - 1 in the first coefficients.
template <class W>
void check_horner(int bits, bool misaligned) {
  const std::size_t n = 64, limbs = 3;
  std::vector<Modulus> mods;
  for (u64 q : generate_ntt_primes(bits, n, limbs)) mods.emplace_back(q);
  const RnsBase base(mods);
  std::mt19937_64 rng(7);
  for (std::size_t npolys = 1; npolys <= 4; ++npolys) {
    std::vector<W> polys(npolys * limbs * n), x(limbs * n);
    for (std::size_t l = 0; l < limbs; ++l) {
      for (std::size_t c = 0; c < n; ++c) {
        const u64 q = mods[l].value;
        x[l * n + c] = static_cast<W>(c == 0 ? q - 1 : rng() % q);
        for (std::size_t k = 0; k < npolys; ++k)
          polys[(k * limbs + l) * n + c] = static_cast<W>(c == 1 ? q - 1 : rng() % q);
      }
    }
    for (const Device& dev : devices()) {
      SCOPED_TRACE(dev.str() + ", " + std::to_string(bits) + "-bit primes, " +
                   std::to_string(npolys) + " polys" + (misaligned ? ", misaligned" : ""));
      std::vector<W> off(misaligned ? 1 : 0, W(0));
      off.insert(off.end(), polys.begin(), polys.end());
      auto dp = Buffer<W>::from_host(dev, off), dx = Buffer<W>::from_host(dev, x);
      Buffer<W> dout(dev, limbs * n);
      poly::horner(dev, base, n, npolys, dp.data() + (misaligned ? 1 : 0), dx.data(), dout.data());
      const std::vector<W> out = dout.to_host();
      for (std::size_t l = 0; l < limbs; ++l) {
        const unsigned __int128 q = mods[l].value;
        for (std::size_t c = 0; c < n; ++c) {
          unsigned __int128 want = 0, power = 1;  // sum_k p_k x^k, powers taken directly
          for (std::size_t k = 0; k < npolys; ++k) {
            want = (want + polys[(k * limbs + l) * n + c] % q * power) % q;
            power = power * x[l * n + c] % q;
          }
          ASSERT_EQ(static_cast<u64>(out[l * n + c]), static_cast<u64>(want))
              << "limb " << l << ", coeff " << c;
        }
      }
    }
  }
}

TEST(PolyHorner, MatchesDirectEvaluationForBothWordSizes) {
  for (bool misaligned : {false, true}) {
    check_horner<u32>(30, misaligned);
    check_horner<u32>(31, misaligned);
    check_horner<u64>(60, misaligned);
  }
}

// ---- poly::tensor (the ciphertext product) against __int128 products ----------------------------

// Every device: the grouped GPU kernel (n a multiple of the group, aligned rows) and the word-by-word
// one (the first operand one word off 16-byte alignment, or n = 2 with 32-bit words: below a
// group), residues up to q - 1 on primes just under 2^31 (the 32-bit Barrett reduction's largest
// inputs) and of 30 and 60 bits.
template <class W>
void check_tensor(int bits, std::size_t n, bool misaligned) {
  const std::size_t limbs = 3;
  std::vector<Modulus> mods;
  for (u64 q : generate_ntt_primes(bits, n < 64 ? 64 : n, limbs)) mods.emplace_back(q);
  const RnsBase base(mods);
  std::mt19937_64 rng(11 + bits + n);
  const std::size_t pw = limbs * n;
  std::vector<W> a(2 * pw), b(2 * pw);
  for (std::size_t k = 0; k < 2; ++k) {
    for (std::size_t l = 0; l < limbs; ++l) {
      const u64 q = mods[l].value;
      for (std::size_t c = 0; c < n; ++c) {
        a[k * pw + l * n + c] = static_cast<W>(c % 3 == 0 ? q - 1 : rng() % q);
        b[k * pw + l * n + c] = static_cast<W>(c % 5 == 0 ? q - 1 : rng() % q);
      }
    }
  }
  for (const Device& dev : devices()) {
    SCOPED_TRACE(dev.str() + ", " + std::to_string(bits) + "-bit primes, n = " + std::to_string(n) +
                 (misaligned ? ", misaligned" : ""));
    std::vector<W> a_off(misaligned ? 1 : 0, W(0));  // a one word into its buffer when misaligned
    a_off.insert(a_off.end(), a.begin(), a.end());
    auto da = Buffer<W>::from_host(dev, a_off), db = Buffer<W>::from_host(dev, b);
    Buffer<W> dout(dev, 3 * pw);
    poly::tensor(dev, base, n, da.data() + (misaligned ? 1 : 0), 2, db.data(), 2, dout.data());
    const std::vector<W> out = dout.to_host();
    for (std::size_t l = 0; l < limbs; ++l) {
      const unsigned __int128 q = mods[l].value;
      for (std::size_t c = 0; c < n; ++c) {
        const std::size_t i = l * n + c;
        const unsigned __int128 a0 = a[i], a1 = a[pw + i], b0 = b[i], b1 = b[pw + i];
        ASSERT_EQ(static_cast<u64>(out[i]), static_cast<u64>(a0 * b0 % q)) << "limb " << l << ", coeff " << c;
        ASSERT_EQ(static_cast<u64>(out[pw + i]), static_cast<u64>((a0 * b1 + a1 * b0) % q))
            << "limb " << l << ", coeff " << c;
        ASSERT_EQ(static_cast<u64>(out[2 * pw + i]), static_cast<u64>(a1 * b1 % q))
            << "limb " << l << ", coeff " << c;
      }
    }
  }
}

TEST(PolyTensor, MatchesInt128ProductsOnEveryDevice) {
  for (std::size_t n : {std::size_t(2), std::size_t(1024)}) {
    for (bool misaligned : {false, true}) {
      check_tensor<u32>(31, n, misaligned);
      check_tensor<u32>(30, n, misaligned);
      check_tensor<u64>(60, n, misaligned);
    }
  }
}

// ---- poly::scalar_combination (EvalMod's linear combinations) against __int128 --------------------

// out = constant + sum_i a_i * r_i over two polynomials, three operands with their own strides, on
// every device and both word sizes: 16-byte aligned operands (the GPU's grouped kernel), an
// operand one word off alignment (its word-by-word branch), and the output written in place over
// an operand.
template <class W>
void check_scalar_combination(int bits) {
  const std::size_t n = 256, limbs = 3, npolys = 2, count = 3;
  std::vector<Modulus> mods;
  for (u64 q : generate_ntt_primes(bits, n, limbs)) mods.emplace_back(q);
  const RnsBase base(mods);
  const std::size_t pw = limbs * n;
  std::mt19937_64 rng(31 + bits);
  for (bool misaligned : {false, true}) {
    for (bool in_place : {false, true}) {
      // operand i lives at offset off[i] of one buffer, polynomials stride[i] words apart
      const std::vector<std::size_t> stride{pw, pw + 64, 2 * pw};
      const std::vector<std::size_t> off{0, 2 * pw + (misaligned ? 1 : 0), 4 * pw + 256};
      const std::size_t words = off[2] + stride[2] + pw;
      std::vector<W> buf(words);
      std::vector<u64> residues(count * limbs), constant(limbs);
      for (std::size_t i = 0; i < count; ++i) {
        for (std::size_t p = 0; p < npolys; ++p) {
          for (std::size_t l = 0; l < limbs; ++l) {
            const u64 q = mods[l].value;
            for (std::size_t c = 0; c < n; ++c) {
              buf[off[i] + p * stride[i] + l * n + c] = static_cast<W>(c % 7 == 0 ? q - 1 : rng() % q);
            }
          }
        }
        for (std::size_t l = 0; l < limbs; ++l) residues[i * limbs + l] = i == 0 ? mods[l].value - 1 : rng() % mods[l].value;
      }
      for (std::size_t l = 0; l < limbs; ++l) constant[l] = rng() % mods[l].value;
      // the oracle, from the inputs before any in-place write
      std::vector<u64> want(npolys * pw);
      for (std::size_t p = 0; p < npolys; ++p) {
        for (std::size_t l = 0; l < limbs; ++l) {
          const unsigned __int128 q = mods[l].value;
          for (std::size_t c = 0; c < n; ++c) {
            unsigned __int128 v = p == 0 ? constant[l] : 0;
            for (std::size_t i = 0; i < count; ++i) {
              v += static_cast<unsigned __int128>(buf[off[i] + p * stride[i] + l * n + c]) * residues[i * limbs + l];
            }
            want[p * pw + l * n + c] = static_cast<u64>(v % q);
          }
        }
      }
      for (const Device& dev : devices()) {
        SCOPED_TRACE(dev.str() + ", " + std::to_string(bits) + "-bit primes" +
                     (misaligned ? ", misaligned operand" : "") + (in_place ? ", in place" : ""));
        auto dbuf = Buffer<W>::from_host(dev, buf);
        Buffer<W> dout(dev, npolys * pw);
        W* out = in_place ? dbuf.data() + off[0] : dout.data();  // operand 0: stride pw, aligned
        std::vector<u64> ptrs, strides(stride.begin(), stride.end());
        for (std::size_t i = 0; i < count; ++i) ptrs.push_back(reinterpret_cast<u64>(dbuf.data() + off[i]));
        auto dp = Buffer<u64>::from_host(dev, ptrs), ds = Buffer<u64>::from_host(dev, strides);
        auto dr = Buffer<u64>::from_host(dev, residues), dc = Buffer<u64>::from_host(dev, constant);
        poly::scalar_combination(dev, base, n, npolys, dp.data(), ds.data(), dr.data(), count,
                                 dc.data(), out);
        const std::vector<W> got = in_place ? dbuf.to_host() : dout.to_host();
        const std::size_t at = in_place ? off[0] : 0;
        for (std::size_t w = 0; w < npolys * pw; ++w) {
          ASSERT_EQ(static_cast<u64>(got[at + w]), want[w]) << "word " << w;
        }
      }
    }
  }
}

TEST(PolyScalarCombination, MatchesInt128SumsOnEveryDevice) {
  check_scalar_combination<u32>(31);
  check_scalar_combination<u64>(60);
}

// ---- choice and validation of the word size ----------------------------------------------------

TEST(WordSize, ChosenFromThePrimes) {
  // Every residue below 2^31: 32-bit words; any larger prime (or t, or BEHZ): 64-bit words.
  EXPECT_EQ(Context::create(params_with(SchemeType::ckks, 4096, {30, 30, 31}), SecurityLevel::none)
                ->word_bits(),
            32);
  EXPECT_EQ(Context::create(params_with(SchemeType::ckks, 4096, {30, 40, 41}), SecurityLevel::none)
                ->word_bits(),
            64);
  EXPECT_EQ(Context::create(params_with(SchemeType::bgv, 4096, {30, 30, 31}), SecurityLevel::none)
                ->word_bits(),
            32);
  EncryptionParameters big_t = params_with(SchemeType::bgv, 4096, {30, 30, 31});
  big_t.plain_modulus = PlainModulus::batching(4096, 33);
  EXPECT_EQ(Context::create(big_t, SecurityLevel::none)->word_bits(), 64);
  EncryptionParameters behz = params_with(SchemeType::bfv, 4096, {30, 30, 31});
  behz.mul_method = MulMethod::behz;
  EXPECT_EQ(Context::create(behz, SecurityLevel::none)->word_bits(), 64);
  behz.mul_method = MulMethod::hps;
  EXPECT_EQ(Context::create(behz, SecurityLevel::none)->word_bits(), 32);
  // Explicit 64 always works; SEAL's BFVDefault primes are 64-bit.
  EXPECT_EQ(Context::create(params_with(SchemeType::ckks, 4096, {30, 30, 31}, 1, 64),
                            SecurityLevel::none)
                ->word_bits(),
            64);
}

TEST(WordSize, ExplicitThirtyTwoNeedsSmallResidues) {
  expect_invalid([] { Context::create(params_with(SchemeType::ckks, 4096, {30, 40, 41}, 1, 32),
                                      SecurityLevel::none); },
                 "word_bits");
  EncryptionParameters behz = params_with(SchemeType::bfv, 4096, {30, 30, 31}, 1, 32);
  behz.mul_method = MulMethod::behz;
  expect_invalid([&] { Context::create(behz, SecurityLevel::none); }, "BEHZ");
  EncryptionParameters bad = params_with(SchemeType::ckks, 4096, {30, 30, 31}, 1, 48);
  expect_invalid([&] { Context::create(bad, SecurityLevel::none); }, "word_bits");
}

TEST(WordSize, ObjectsOfTheOtherWordSizeAreRejectedByName) {
  const ContextPtr c64 = Context::create(params_with(SchemeType::ckks, 4096, {30, 30, 31}, 1, 64),
                                         SecurityLevel::none);
  const ContextPtr c32 = Context::create(params_with(SchemeType::ckks, 4096, {30, 30, 31}, 1, 32),
                                         SecurityLevel::none);
  ASSERT_EQ(c64->parameter_hash(), c32->parameter_hash());  // same parameters, other words
  KeyGenerator k64(c64, Device::cpu(), 1), k32(c32, Device::cpu(), 1);
  const CKKSEncoder e64(c64);
  const Ciphertext ct = Encryptor(c64, k64.create_public_key(), 2)
                            .encrypt(e64.encode(std::vector<double>{1.0}, 1 << 20, 1));
  expect_invalid([&] { Evaluator(c32).add(ct, ct); }, "64-bit words");
  expect_invalid([&] { Decryptor(c32, k32.secret_key()).decrypt(ct); }, "encrypted");
}

// Saved objects are word-independent: bytes from a 64-bit context load into a 32-bit one (and
// back) with the same residues, in Veil's format and in SEAL's.
TEST(WordSize, SavedBytesAreTheSameForBothWordSizes) {
  for (SchemeType s : {SchemeType::bfv, SchemeType::bgv, SchemeType::ckks}) {
    const std::vector<int> bits = {30, 30, 30, 31};
    const ContextPtr c64 = Context::create(params_with(s, 4096, bits, 1, 64), SecurityLevel::none);
    const ContextPtr c32 = Context::create(params_with(s, 4096, bits, 1, 32), SecurityLevel::none);
    KeyGenerator k64(c64, Device::cpu(), 5), k32(c32, Device::cpu(), 5);
    const PublicKey p64 = k64.create_public_key(), p32 = k32.create_public_key();
    const RelinKeys r64 = k64.create_relin_keys(), r32 = k32.create_relin_keys();
    EXPECT_EQ(words(p64), words(p32)) << to_string(s);
    EXPECT_EQ(io::save(p64), io::save(p32)) << to_string(s);
    EXPECT_EQ(io::save(r64), io::save(r32)) << to_string(s);
    EXPECT_EQ(io::seal::save(r64), io::seal::save(r32)) << to_string(s);
    const Ciphertext ct = Encryptor(c64, p64, 3).encrypt_zero();
    const Ciphertext back = io::load_ciphertext(io::save(ct), c32, Device::cpu());
    EXPECT_EQ(back.word_bits(), 32);
    EXPECT_EQ(words(back), words(ct)) << to_string(s);
    const Ciphertext from_seal = io::seal::load_ciphertext(io::seal::save(ct), c32, Device::cpu());
    EXPECT_EQ(words(from_seal), words(ct)) << to_string(s);
    const RelinKeys rk = io::load_relin_keys(io::save(r32), c64, Device::cpu());
    EXPECT_EQ(words(rk), words(r64)) << to_string(s);
  }
}

// ---- CKKS rescaling by blocks of primes --------------------------------------------------------

// A chain of 31-bit q_0's block, then blocks of 1 and 2 ~30-bit primes from the top down, and two
// 31-bit special primes: 2^40 scale on 32-bit words.
EncryptionParameters blocked_params(int word_bits) {
  EncryptionParameters p(SchemeType::ckks);
  p.poly_modulus_degree = 8192;
  // q_0's block (2 primes, ~60 bits), then blocks 2, 1, 2, 1 (top: 1 prime).
  p.coeff_modulus = CoeffModulus::create(8192, {31, 31, 30, 30, 30, 30, 30, 30, 31, 31});
  p.special_primes = 2;
  p.rescale_groups = {2, 2, 1, 2, 1};
  p.word_bits = word_bits;
  return p;
}

TEST(RescaleGroups, TargetsAndValidation) {
  const ContextPtr ctx = Context::create(blocked_params(0), SecurityLevel::none);
  EXPECT_EQ(ctx->word_bits(), 32);
  ASSERT_EQ(ctx->max_level(), 7u);
  EXPECT_EQ(ckks::rescale_target(*ctx, 7), 6u);  // top block: q_7
  EXPECT_EQ(ckks::rescale_target(*ctx, 6), 4u);  // block {q_5, q_6}
  EXPECT_EQ(ckks::rescale_target(*ctx, 5), 4u);  // inside that block (after a mod switch)
  EXPECT_EQ(ckks::rescale_target(*ctx, 4), 3u);
  EXPECT_EQ(ckks::rescale_target(*ctx, 3), 1u);
  expect_invalid([&] { ckks::rescale_target(*ctx, 1); }, "encrypted");
  expect_invalid([&] { ckks::rescale_target(*ctx, 0); }, "encrypted");
  // SEAL's default: one prime per block.
  const ContextPtr plain = Context::create(params_with(SchemeType::ckks, 4096, {30, 30, 31}),
                                           SecurityLevel::none);
  EXPECT_EQ(ckks::rescale_target(*plain, 1), 0u);
  EXPECT_EQ(ckks::rescale_groups(*plain), (std::vector<std::size_t>{1, 1}));

  EncryptionParameters bad = blocked_params(0);
  bad.rescale_groups = {2, 2, 2};
  expect_invalid([&] { Context::create(bad, SecurityLevel::none); }, "rescale_groups");
  bad.rescale_groups = {0, 8};
  expect_invalid([&] { Context::create(bad, SecurityLevel::none); }, "rescale_groups");
  EncryptionParameters bgv = params_with(SchemeType::bgv, 4096, {30, 30, 31});
  bgv.rescale_groups = {1, 1};
  expect_invalid([&] { Context::create(bgv, SecurityLevel::none); }, "rescale_groups");
  // The blocks are part of the parameters: hashed and saved.
  EXPECT_NE(parameter_hash(blocked_params(0)), [] {
    EncryptionParameters p = blocked_params(0);
    p.rescale_groups.clear();
    return parameter_hash(p);
  }());
  const EncryptionParameters loaded = io::load_parameters(io::save(blocked_params(0)));
  EXPECT_EQ(loaded.rescale_groups, blocked_params(0).rescale_groups);
  EXPECT_EQ(parameter_hash(loaded), parameter_hash(blocked_params(0)));
}

// Squaring down the chain at per-level scales S_{l'} = S_l^2 / D_l (D_l the product of the
// dropped block, computed here from the primes): every rescale lands exactly on the next
// level's scale, the scale stays between 2^39 and 2^51, and the values stay right (float64
// oracle) to >= 20 bits after 4 squarings; 32- and 64-bit words give the same words.
TEST(RescaleGroups, ScaleTracksTheBlocksOnThirtyBitPrimes) {
  std::vector<Ciphertext> results;
  for (int word_bits : {32, 64}) {
    const ContextPtr ctx = Context::create(blocked_params(word_bits), SecurityLevel::none);
    ASSERT_EQ(ctx->word_bits(), word_bits);
    KeyGenerator kg(ctx, Device::cpu(), 11);
    const RelinKeys rk = kg.create_relin_keys();
    const CKKSEncoder enc(ctx);
    Encryptor e(ctx, kg.create_public_key(), 12);
    const Decryptor d(ctx, kg.secret_key());
    const Evaluator ev(ctx);
    std::mt19937_64 rng(13);
    std::uniform_real_distribution<double> u(0.5, 1.0);
    std::vector<double> x(enc.slot_count());
    for (double& v : x) v = u(rng);
    // Per-level scales from the top: S_top = 2^40.
    std::vector<double> scale(ctx->max_level() + 1, 0.0);
    std::size_t level = ctx->max_level();
    scale[level] = std::ldexp(1.0, 40);
    while (level > 1) {
      const std::size_t next = ckks::rescale_target(*ctx, level);
      double s = scale[level] * scale[level];
      for (std::size_t i = next + 1; i <= level; ++i)
        s /= static_cast<double>(ctx->base_q(level)[i].value);
      scale[next] = s;
      level = next;
    }
    Ciphertext c = e.encrypt(enc.encode(x, scale[ctx->max_level()], ctx->max_level()));
    std::vector<double> want = x;
    int squarings = 0;
    while (c.level() > 1) {
      const std::size_t next = ckks::rescale_target(*ctx, c.level());
      c = ev.rescale_to_next(ev.relinearize(ev.square(c), rk));
      for (double& v : want) v *= v;
      ++squarings;
      ASSERT_EQ(c.level(), next);
      EXPECT_NEAR(std::log2(c.scale()), std::log2(scale[next]), 1e-9);
      EXPECT_GT(std::log2(c.scale()), 39.0);
      EXPECT_LT(std::log2(c.scale()), 51.0);
      const std::vector<cd> got = enc.decode(d.decrypt(c));
      double err = 0;
      for (std::size_t i = 0; i < want.size(); ++i) err = std::max(err, std::abs(got[i] - want[i]));
      std::printf("[ RescaleGroups ] %d-bit words, level %zu, scale 2^%.2f: max error 2^%.1f\n",
                  word_bits, c.level(), std::log2(c.scale()), std::log2(err));
      EXPECT_LT(err, std::ldexp(1.0, -20)) << "after " << squarings << " squarings, " << word_bits
                                           << "-bit words, level " << c.level();
    }
    EXPECT_EQ(squarings, 4);
    results.push_back(c);
  }
  EXPECT_EQ(words(results[0]), words(results[1]));
}

// relinearize_rescale (ModDown by P fused with the rescale) against relinearize then rescale:
// the same level and scale, values within the rescale's rounding (float64 oracle), for SEAL's
// one-prime blocks on 64-bit words and for two-prime blocks on 32-bit words; errors name their
// argument.
TEST(RescaleGroups, FusedRelinearizeRescaleMatchesTheTwoSteps) {
  EncryptionParameters seal_like = params_with(SchemeType::ckks, 8192, {60, 40, 40, 60});
  for (const EncryptionParameters& p : {seal_like, blocked_params(0)}) {
    const ContextPtr ctx = Context::create(p, SecurityLevel::none);
    KeyGenerator kg(ctx, Device::cpu(), 21);
    const RelinKeys rk = kg.create_relin_keys();
    const CKKSEncoder enc(ctx);
    Encryptor e(ctx, kg.create_public_key(), 22);
    const Decryptor d(ctx, kg.secret_key());
    const Evaluator ev(ctx);
    std::mt19937_64 rng(23);
    std::uniform_real_distribution<double> u(-1.0, 1.0);
    std::vector<double> x(enc.slot_count()), y(enc.slot_count());
    for (double& v : x) v = u(rng);
    for (double& v : y) v = u(rng);
    const double scale = std::ldexp(1.0, 40);
    const std::size_t top = ctx->max_level();
    const Ciphertext cx = e.encrypt(enc.encode(x, scale, top));
    const Ciphertext cy = e.encrypt(enc.encode(y, scale, top));
    const Ciphertext two = ev.rescale_to_next(ev.relinearize(ev.multiply(cx, cy), rk));
    const Ciphertext one = ev.multiply_relinearize_rescale(cx, cy, rk);
    ASSERT_EQ(one.level(), two.level());
    ASSERT_EQ(one.size(), 2u);
    EXPECT_EQ(one.scale(), two.scale());
    const std::vector<cd> a = enc.decode(d.decrypt(one)), b = enc.decode(d.decrypt(two));
    double err_one = 0, err_two = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      err_one = std::max(err_one, std::abs(a[i] - x[i] * y[i]));
      err_two = std::max(err_two, std::abs(b[i] - x[i] * y[i]));
    }
    std::printf("[ RescaleGroups ] %d-bit words: fused max error 2^%.1f, two steps 2^%.1f\n",
                ctx->word_bits(), std::log2(err_one), std::log2(err_two));
    EXPECT_LT(err_one, std::ldexp(1.0, -20));
    EXPECT_LT(err_one, 2 * err_two + std::ldexp(1.0, -30));
    expect_invalid([&] { ev.relinearize_rescale(cx, rk); }, "size 3");
    expect_invalid([&] { ev.relinearize_rescale(ev.multiply(cx, cy), RelinKeys()); }, "relin_keys");
  }
  const ContextPtr bgv = Context::create(params_with(SchemeType::bgv, 4096, {30, 30, 31}),
                                         SecurityLevel::none);
  KeyGenerator kg(bgv, Device::cpu(), 1);
  const Ciphertext c = Encryptor(bgv, kg.create_public_key(), 2).encrypt_zero();
  expect_invalid([&] { Evaluator(bgv).relinearize_rescale(c, kg.create_relin_keys()); },
                 "CKKS");
}

}  // namespace
}  // namespace veil::test


namespace veil::test {
namespace {
// BatchEncoder stages the slots as 32-bit words when t < 2^32 and as 64-bit words otherwise:
// both round trip (values above 2^32 included), short vectors are zero-filled on the device, the
// GPU's plaintext words equal the CPU's, and an out-of-range slot is named.
TEST(WordSize, BatchEncoderStagesSlotsInTheWordsTFits) {
  for (int t_bits : {20, 40}) {
    SCOPED_TRACE("t of " + std::to_string(t_bits) + " bits");
    EncryptionParameters p = params_with(SchemeType::bfv, 4096, {50, 50, 51});
    p.plain_modulus = PlainModulus::batching(4096, t_bits);
    const ContextPtr ctx = Context::create(p, SecurityLevel::none);
    const u64 t = ctx->plain_modulus();
    BatchEncoder enc(ctx);
    std::mt19937_64 rng(t_bits);
    std::vector<u64> v(ctx->n());
    for (u64& x : v) x = rng() % t;
    v[5] = t - 1;
    const std::vector<u64> part(v.begin(), v.begin() + 1000);
    std::vector<u64> padded = part;
    padded.resize(ctx->n(), 0);
    std::vector<Plaintext> full, shortv;
    for (const Device& dev : veil::test::devices()) {
      SCOPED_TRACE(dev.str());
      full.push_back(enc.encode(v, dev));
      shortv.push_back(enc.encode(part, dev));
      EXPECT_EQ(enc.decode(full.back()), v);
      EXPECT_EQ(enc.decode(shortv.back()), padded);
      std::vector<u64> bad = v;
      bad[77] = t;
      expect_invalid([&] { enc.encode(bad, dev); }, "slot 77");
    }
    if (full.size() == 2) {
      EXPECT_EQ(full[0].buffer().to_host(), full[1].buffer().to_host());
      EXPECT_EQ(shortv[0].buffer().to_host(), shortv[1].buffer().to_host());
    }
  }
}

}  // namespace
}  // namespace veil::test
