// Veil's serialization format (io/serialize.h): round trips of every object type, compressed and
// not, seeded and not, on every device (saved on one, loaded on another), bit-identical; seeded
// sizes; loaded objects used in computation; and hostile bytes rejected with InvalidArgument
// naming the field. The oracle for "bit-identical" is the original object's words; for
// "works" it is decryption to the encoded message.
#include <gtest/gtest.h>

#include <cstring>
#include <random>

#include "rlwe_util.h"
#include "veil/bfv/batch_encoder.h"
#include "veil/ckks/encoder.h"
#include "veil/io/seal.h"
#include "veil/io/serialize.h"
#include "veil/io/validate.h"
#include "veil/rlwe/keyswitch.h"

namespace {

using namespace veil;
using namespace veil::test;
using io::Bytes;
using io::Compression;
using io::Seeding;

const SchemeType kSchemes[] = {SchemeType::bfv, SchemeType::bgv, SchemeType::ckks};

io::SaveOptions opts(Compression c, Seeding s) {
  io::SaveOptions o;
  o.compression = c;
  o.seeded = s;
  return o;
}

Plaintext encode_some(const ContextPtr& ctx, const Device& dev, std::uint64_t seed) {
  std::mt19937_64 rng(seed);
  if (ctx->scheme() == SchemeType::ckks) {
    CKKSEncoder enc(ctx);
    std::vector<double> v(enc.slot_count());
    for (auto& x : v) x = std::uniform_real_distribution<double>(-1, 1)(rng);
    return enc.encode(v, std::ldexp(1.0, 30), ctx->max_level(), dev);
  }
  BatchEncoder enc(ctx);
  std::vector<std::uint64_t> v(enc.slot_count());
  for (auto& x : v) x = rng() % ctx->plain_modulus();
  return enc.encode(v, dev);
}

struct Case {
  SchemeType scheme;
  Compression comp;
  Seeding seeded;
};

class RoundTrip : public ::testing::TestWithParam<Case> {};

TEST_P(RoundTrip, EveryObjectBitIdenticalAcrossDevices) {
  const Case c = GetParam();
  const ContextPtr ctx = small_context(c.scheme);
  const io::SaveOptions o = opts(c.comp, c.seeded);
  for (const Device& from : devices()) {
    KeySet keys(ctx, from, 11);
    const Plaintext pt = encode_some(ctx, from, 3);
    const Ciphertext sym = Encryptor(ctx, keys.sk, 5).encrypt(pt);
    const Ciphertext asym = Encryptor(ctx, keys.pk, 6).encrypt(pt);
    const Ciphertext prod = Evaluator(ctx).multiply(asym, sym);  // size 3, no seed
    for (const Device& to : devices()) {
      SCOPED_TRACE(from.str() + " -> " + to.str());
      EXPECT_EQ(words(io::load_plaintext(io::save(pt, o), ctx, to)), words(pt));
      for (const Ciphertext* ct : {&sym, &asym, &prod}) {
        const Ciphertext back = io::load_ciphertext(io::save(*ct, o), ctx, to);
        EXPECT_EQ(words(back), words(*ct));
        EXPECT_EQ(back.size(), ct->size());
        EXPECT_EQ(back.level(), ct->level());
        EXPECT_EQ(back.scale(), ct->scale());
        EXPECT_EQ(back.correction_factor(), ct->correction_factor());
        EXPECT_EQ(back.device(), to);
      }
      EXPECT_EQ(words(io::load_secret_key(io::save(keys.sk, o), ctx, to)), words(keys.sk));
      EXPECT_EQ(words(io::load_public_key(io::save(keys.pk, o), ctx, to)), words(keys.pk));
      EXPECT_EQ(words(io::load_relin_keys(io::save(keys.rk, o), ctx, to)), words(keys.rk));
      const GaloisKeys gk = io::load_galois_keys(io::save(keys.gk, o), ctx, to);
      ASSERT_EQ(gk.keys().size(), keys.gk.keys().size());
      for (const auto& [elt, k] : keys.gk.keys()) EXPECT_EQ(words(gk.key(elt)), words(k)) << elt;
    }
  }
}

std::vector<Case> all_cases() {
  std::vector<Case> v;
  for (SchemeType s : kSchemes)
    for (Compression c : {Compression::none, Compression::zstd})
      for (Seeding sd : {Seeding::automatic, Seeding::never}) v.push_back({s, c, sd});
  return v;
}

INSTANTIATE_TEST_SUITE_P(Serialize, RoundTrip, ::testing::ValuesIn(all_cases()),
                         [](const auto& info) {
                           return to_string(info.param.scheme) + "_" +
                                  io::to_string(info.param.comp) + "_" +
                                  (info.param.seeded == Seeding::never ? "full" : "seeded");
                         });

TEST(Serialize, ParametersRoundTripAndHash) {
  EncryptionParameters p = small_params(SchemeType::bfv, 8192, 65537, 2, 2);
  p.mul_method = MulMethod::behz;
  for (Compression c : {Compression::none, Compression::zstd}) {
    const EncryptionParameters q = io::load_parameters(io::save(p, opts(c, Seeding::never)));
    EXPECT_EQ(q.scheme, p.scheme);
    EXPECT_EQ(q.poly_modulus_degree, p.poly_modulus_degree);
    EXPECT_EQ(q.coeff_modulus, p.coeff_modulus);
    EXPECT_EQ(q.special_primes, p.special_primes);
    EXPECT_EQ(q.alpha, p.alpha);
    EXPECT_EQ(q.plain_modulus, p.plain_modulus);
    EXPECT_EQ(q.mul_method, p.mul_method);
    EXPECT_EQ(parameter_hash(q), Context::create(p, SecurityLevel::none)->parameter_hash());
  }
}

TEST(Serialize, SeededHalvesKeysAndSymmetricCiphertexts) {
  const ContextPtr ctx = small_context(SchemeType::bfv);
  KeySet keys(ctx, Device::cpu(), 1);
  const Ciphertext ct = Encryptor(ctx, keys.sk, 2).encrypt(encode_some(ctx, Device::cpu(), 1));
  auto ratio = [](const Bytes& a, const Bytes& b) { return double(a.size()) / double(b.size()); };
  const auto seeded = opts(Compression::none, Seeding::always);
  const auto full = opts(Compression::none, Seeding::never);
  EXPECT_NEAR(ratio(io::save(ct, seeded), io::save(ct, full)), 0.5, 0.01);
  EXPECT_NEAR(ratio(io::save(keys.pk, seeded), io::save(keys.pk, full)), 0.5, 0.01);
  EXPECT_NEAR(ratio(io::save(keys.rk, seeded), io::save(keys.rk, full)), 0.5, 0.01);
  EXPECT_NEAR(ratio(io::save(keys.gk, seeded), io::save(keys.gk, full)), 0.5, 0.01);
  // zstd shrinks 36/37-bit residues in 64-bit words (about 30 % saved).
  EXPECT_LT(io::save(ct, opts(Compression::zstd, Seeding::never)).size(),
            0.75 * io::save(ct, full).size());
}

TEST(Serialize, ModifiedSeededObjectIsSavedUnseededOrRejected) {
  const ContextPtr ctx = small_context(SchemeType::bgv);
  KeySet keys(ctx, Device::cpu(), 4);
  Ciphertext ct = Encryptor(ctx, keys.sk, 2).encrypt(encode_some(ctx, Device::cpu(), 1));
  Evaluator ev(ctx);
  ev.add_inplace(ct, ct);  // changes c1, keeps the stale seed
  EXPECT_EQ(io::read_header(io::save(ct)).seeded, false);
  expect_invalid([&] { io::save(ct, opts(Compression::zstd, Seeding::always)); }, "seeded");
  // Public-key ciphertexts have no seed at all.
  const Ciphertext pk_ct = Encryptor(ctx, keys.pk, 2).encrypt(encode_some(ctx, Device::cpu(), 1));
  expect_invalid([&] { io::save(pk_ct, opts(Compression::none, Seeding::always)); }, "no seed");
  const Ciphertext back = io::load_ciphertext(io::save(ct), ctx, Device::cpu());
  EXPECT_EQ(words(back), words(ct));
}

// A CKKS context with four 30-bit primes in `word_bits`-bit words: every residue fits 4 bytes.
ContextPtr thirty_bit_context(int word_bits) {
  EncryptionParameters p = small_params(SchemeType::ckks, 4096);
  p.coeff_modulus = CoeffModulus::create(4096, {30, 30, 30, 30});
  p.word_bits = word_bits;
  return Context::create(p, SecurityLevel::none);
}

TEST(Serialize, ModifiedSeededKeyIsSavedUnseededOrRejected) {
  // A key fresh from KeyGenerator (or loaded seeded) is known to match its seed, and saving
  // skips expanding the seed again; writing its words must forget that.
  for (int word_bits : {32, 64}) {
    SCOPED_TRACE(word_bits);
    const ContextPtr ctx = thirty_bit_context(word_bits);
    KeySet keys(ctx, Device::cpu(), 6);
    ASSERT_TRUE(keys.rk.key().seed_known_to_match());
    const RelinKeys loaded = io::load_relin_keys(io::save(keys.rk), ctx, Device::cpu());
    EXPECT_TRUE(loaded.key().seed_known_to_match());
    EXPECT_TRUE(io::read_header(io::save(loaded)).seeded);
    for (const bool via_buffer : {false, true}) {
      KSwitchKey k = keys.rk.key();
      EXPECT_TRUE(k.seed_known_to_match());  // copies keep it
      // a_0's first word changes (on the CPU; 0 <-> 1 stays below q_0)
      const std::size_t a0 = k.poly_words();
      auto flip = [&](auto* w) { w[a0] = w[a0] == 0 ? 1 : 0; };
      if (word_bits == 32) {
        flip(via_buffer ? k.buffer().data<std::uint32_t>() : k.data<std::uint32_t>());
      } else {
        flip(via_buffer ? k.buffer().data<u64>() : k.data<u64>());
      }
      EXPECT_FALSE(k.seed_known_to_match());
      const RelinKeys changed(std::move(k));
      const Bytes b = io::save(changed);  // automatic: the check runs and fails
      EXPECT_FALSE(io::read_header(b).seeded);
      EXPECT_EQ(words(io::load_relin_keys(b, ctx, Device::cpu())), words(changed));
      expect_invalid([&] { io::save(changed, opts(Compression::none, Seeding::always)); },
                     "seeded");
    }
  }
}

TEST(Serialize, LoadedKeysComputeLikeTheOriginals) {
  for (SchemeType s : kSchemes) {
    SCOPED_TRACE(to_string(s));
    const ContextPtr ctx = small_context(s);
    KeySet keys(ctx, Device::cpu(), 21);
    const Plaintext pt = encode_some(ctx, Device::cpu(), 8);
    const Ciphertext a = Encryptor(ctx, keys.pk, 1).encrypt(pt);
    const Evaluator ev(ctx);
    const RelinKeys rk = io::load_relin_keys(io::save(keys.rk), ctx, Device::cpu());
    const GaloisKeys gk = io::load_galois_keys(io::save(keys.gk), ctx, Device::cpu());
    const SecretKey sk = io::load_secret_key(io::save(keys.sk), ctx, Device::cpu());
    const Ciphertext sq = ev.relinearize(ev.multiply(a, a), rk);
    EXPECT_EQ(words(sq), words(ev.relinearize(ev.multiply(a, a), keys.rk)));
    const u32 elt = ctx->galois_elt_from_step(1);
    EXPECT_EQ(words(ev.apply_galois(a, elt, gk)), words(ev.apply_galois(a, elt, keys.gk)));
    EXPECT_EQ(words(Decryptor(ctx, sk).decrypt(a)), words(Decryptor(ctx, keys.sk).decrypt(a)));
  }
}

// Compact keys (KSwitchKey::compact) are saved as their b_j and seed (flag bit 3) and load
// compact, computing the originals' words; Seeding::never writes them expanded (an ordinary key
// whose a_j are the compact sampler's), twice the bytes. The flag without `seeded`, or on
// another object, is rejected naming `flags`.
TEST(Serialize, CompactKeysRoundTripCompact) {
  const Device cpu = Device::cpu();
  for (SchemeType s : kSchemes) {
    SCOPED_TRACE(to_string(s));
    const ContextPtr ctx = small_context(s);
    const KeyGenerator kg(ctx, cpu, 31);
    const RelinKeys rk = kg.create_relin_keys(true);
    const GaloisKeys gk = kg.create_galois_keys_from_elts(
        {ctx->galois_elt_from_step(1), ctx->galois_elt_column()}, true);
    const Ciphertext a = Encryptor(ctx, kg.secret_key(), 1).encrypt(encode_some(ctx, cpu, 8));
    const Evaluator ev(ctx);
    const u32 elt = ctx->galois_elt_from_step(1);
    const auto relin = [&](const RelinKeys& k) {
      return words(ev.relinearize(ev.multiply(a, a), k));
    };
    const auto rotate = [&](const GaloisKeys& k) { return words(ev.apply_galois(a, elt, k)); };
    for (Compression c : {Compression::none, Compression::zstd}) {
      const Bytes rb = io::save(rk, opts(c, Seeding::automatic));
      const Bytes gb = io::save(gk, opts(c, Seeding::always));
      EXPECT_TRUE(io::read_header(rb).compact && io::read_header(rb).seeded);
      EXPECT_TRUE(io::read_header(gb).compact && io::read_header(gb).seeded);
      const RelinKeys rk2 = io::load_relin_keys(rb, ctx, cpu);
      const GaloisKeys gk2 = io::load_galois_keys(gb, ctx, cpu);
      ASSERT_TRUE(rk2.key().compact());
      ASSERT_TRUE(gk2.key(elt).compact());
      EXPECT_EQ(rk2.key().buffer().to_host(), rk.key().buffer().to_host());
      EXPECT_EQ(gk2.key(elt).buffer().to_host(), gk.key(elt).buffer().to_host());
      EXPECT_EQ(rk2.key_id(), rk.key_id());
      EXPECT_EQ(relin(rk2), relin(rk));
      EXPECT_EQ(rotate(gk2), rotate(gk));
    }
    const Bytes rfull = io::save(rk, opts(Compression::none, Seeding::never));
    const Bytes gfull = io::save(gk, opts(Compression::none, Seeding::never));
    EXPECT_FALSE(io::read_header(rfull).seeded || io::read_header(rfull).compact);
    EXPECT_NEAR(double(io::save(rk, opts(Compression::none, Seeding::automatic)).size()) /
                    double(rfull.size()), 0.5, 0.01);
    const RelinKeys rk3 = io::load_relin_keys(rfull, ctx, cpu);
    const GaloisKeys gk3 = io::load_galois_keys(gfull, ctx, cpu);
    EXPECT_FALSE(rk3.key().compact());
    EXPECT_FALSE(gk3.key(elt).compact());
    EXPECT_EQ(rk3.key().buffer().to_host(), expand_compact_key(rk.key()).buffer().to_host());
    EXPECT_EQ(relin(rk3), relin(rk));
    EXPECT_EQ(rotate(gk3), rotate(gk));
  }
  const ContextPtr ctx = small_context(SchemeType::ckks);
  const KeyGenerator kg(ctx, cpu, 32);
  const Bytes full = io::save(kg.create_relin_keys(), opts(Compression::none, Seeding::never));
  Bytes b = full;
  b[9] = static_cast<std::uint8_t>(b[9] | 8);
  expect_invalid([&] { io::load_relin_keys(b, ctx, cpu); },
                 "flags: compact keys are always seeded");
  Bytes pk = io::save(kg.create_public_key(), opts(Compression::none, Seeding::always));
  pk[9] = static_cast<std::uint8_t>(pk[9] | 8);
  expect_invalid([&] { io::load_public_key(pk, ctx, cpu); },
                 "flags: only relinearization and Galois keys");
}

// ---- hostile input ------------------------------------------------------------------------------

// Rewrites the CRC of an uncompressed object so that a test reaches the checks behind it.
void fix_crc(Bytes& b) {
  const io::HeaderInfo h = io::read_header(b);
  const std::uint32_t crc =
      io::crc32(io::ByteView(b.data() + 48, b.size() - 48));  // descriptor and raw body
  std::memcpy(b.data() + 12, &crc, 4);
  (void)h;
}

// Keys of a level (KSwitchKey::level) and sets mixing compact and full keys: a descriptor per
// key (flag bit 4) carries each key's element, level and form; each loads with its level and
// form and its words, and rotates as before. Seeding::never writes every key expanded; a set of
// top-level keys of one form keeps the old layout. Hostile per-key fields are refused by name.
TEST(Serialize, KeysOfALevelAndMixedFormsRoundTrip) {
  const Device cpu = Device::cpu();
  EncryptionParameters p = small_params(SchemeType::ckks, 4096, std::nullopt, 2, 1);
  const ContextPtr ctx = Context::create(p, SecurityLevel::none);
  const std::size_t top = ctx->max_level();
  ASSERT_GE(top, 2u);
  const KeyGenerator kg(ctx, cpu, 41);
  const u32 e1 = ctx->galois_elt_from_step(1), e2 = ctx->galois_elt_from_step(2),
            e3 = ctx->galois_elt_column();
  GaloisKeys gk = kg.create_galois_keys_from_elts({e1}, false, {1});
  gk.insert(e2, kg.create_galois_keys_from_elts({e2}, true).key(e2));
  gk.insert(e3, kg.create_galois_keys_from_elts({e3}, true, {0}).key(e3));
  const Evaluator ev(ctx);
  const Ciphertext a = Encryptor(ctx, kg.secret_key(), 1).encrypt(encode_some(ctx, cpu, 8));
  const Ciphertext a1 = ev.mod_switch_to(a, 1);
  const Ciphertext a0 = ev.mod_switch_to(a, 0);
  const auto rotations = [&](const GaloisKeys& k) {
    std::vector<u64> w = words(ev.apply_galois(a1, e1, k));
    for (const auto& x : {words(ev.apply_galois(a, e2, k)), words(ev.apply_galois(a0, e3, k))})
      w.insert(w.end(), x.begin(), x.end());
    return w;
  };
  for (Compression c : {Compression::none, Compression::zstd}) {
    const Bytes b = io::save(gk, opts(c, Seeding::automatic));
    const io::HeaderInfo h = io::read_header(b);
    EXPECT_TRUE(h.per_key && !h.seeded && !h.compact);
    const GaloisKeys back = io::load_galois_keys(b, ctx, cpu);
    for (u32 e : {e1, e2, e3}) {
      EXPECT_EQ(back.key(e).level(), gk.key(e).level());
      EXPECT_EQ(back.key(e).compact(), gk.key(e).compact());
      EXPECT_EQ(back.key(e).buffer().to_host(), gk.key(e).buffer().to_host());
    }
    EXPECT_EQ(back.key_id(), gk.key_id());
    EXPECT_EQ(rotations(back), rotations(gk));
  }
  const Bytes expanded = io::save(gk, opts(Compression::none, Seeding::never));
  const GaloisKeys full = io::load_galois_keys(expanded, ctx, cpu);
  EXPECT_FALSE(full.key(e2).compact() || full.key(e3).compact());
  EXPECT_EQ(full.key(e3).level(), 0u);
  EXPECT_EQ(full.key(e3).buffer().to_host(), expand_compact_key(gk.key(e3)).buffer().to_host());
  EXPECT_EQ(rotations(full), rotations(gk));
  EXPECT_GT(expanded.size(), io::save(gk, opts(Compression::none, Seeding::always)).size());
  // A set of top-level keys of one form keeps the set-wide layout.
  EXPECT_FALSE(io::read_header(io::save(kg.create_galois_keys_from_elts({e1, e2}))).per_key);
  // Hostile per-key fields. The descriptor: N (8), key-set id (8), count, dnum, limbs (4 each),
  // then per key its element (4), level (4), form (1) and seed (32 when seeded).
  const Bytes good = io::save(gk, opts(Compression::none, Seeding::automatic));
  const std::size_t first_key = 48 + 8 + 8 + 12;
  auto with = [&](std::size_t at, std::uint8_t v) {
    Bytes b = good;
    b[at] = v;
    fix_crc(b);
    return b;
  };
  expect_invalid([&] { io::load_galois_keys(with(first_key + 4, std::uint8_t(top + 1)), ctx, cpu); },
                 "level");
  expect_invalid([&] { io::load_galois_keys(with(first_key + 8, 4), ctx, cpu); },
                 "form: unknown bits");
  // Key 2 (compact, seeded) without its seeded bit would also lose its seed: refused by name.
  const std::size_t second_key = first_key + 9;  // key 1 (full, level 1) is seeded: + 32
  expect_invalid([&] { io::load_galois_keys(with(second_key + 32 + 8, 2), ctx, cpu); },
                 "form: a compact key is always seeded");
  Bytes both = good;
  both[9] = static_cast<std::uint8_t>(both[9] | 1);
  expect_invalid([&] { io::load_galois_keys(both, ctx, cpu); }, "flags: with a descriptor per key");
  Bytes relin = io::save(kg.create_relin_keys(), opts(Compression::none, Seeding::never));
  relin[9] = static_cast<std::uint8_t>(relin[9] | 16);
  expect_invalid([&] { io::load_relin_keys(relin, ctx, cpu); }, "flags: only Galois keys");
  // SEAL's keys serve every level.
  EXPECT_THROW((void)io::seal::save(gk), InvalidArgument);
  // A switching key of a level is now seeded, and loads as a key of that level.
  const SwitchingKey sw = kg.create_switching_key(KeyGenerator(ctx, cpu, 3).secret_key(), 1);
  ASSERT_EQ(sw.key().level(), 1u);
  const Bytes sb = io::save(sw, opts(Compression::none, Seeding::always));
  EXPECT_TRUE(io::read_header(sb).seeded);
  const SwitchingKey sw2 = io::load_switching_key(sb, ctx, cpu);
  EXPECT_EQ(sw2.key().level(), 1u);
  EXPECT_EQ(sw2.max_level(), 1u);
  EXPECT_EQ(sw2.key().buffer().to_host(), sw.key().buffer().to_host());
  const Bytes unseeded = io::save(sw, opts(Compression::none, Seeding::never));
  EXPECT_EQ(io::load_switching_key(unseeded, ctx, cpu).key().buffer().to_host(),
            sw.key().buffer().to_host());
}


TEST(SerializeHostile, EveryTruncationIsRejected) {
  const ContextPtr ctx = small_context(SchemeType::ckks, 1024);
  KeySet keys(ctx, Device::cpu(), 2);
  for (Compression c : {Compression::none, Compression::zstd}) {
    const Bytes full = io::save(keys.pk, opts(c, Seeding::always));
    for (std::size_t len = 0; len < full.size(); len += (len < 200 ? 1 : 97)) {
      const Bytes cut(full.begin(), full.begin() + static_cast<std::ptrdiff_t>(len));
      EXPECT_THROW(io::load_public_key(cut, ctx, Device::cpu()), InvalidArgument) << len;
    }
    Bytes longer = full;
    longer.push_back(0);
    expect_invalid([&] { io::load_public_key(longer, ctx, Device::cpu()); }, "stored_size");
  }
}

// The hostile-byte tests below patch fixed offsets of the layout without a key-set id (header
// flag bit 1 clear): they save anonymous copies. KeySetIdIsFramed checks the keyed layout.
RelinKeys anonymous(const RelinKeys& rk) {
  KSwitchKey k = rk.key();
  k.set_key_id(0);
  return RelinKeys(std::move(k));
}
GaloisKeys anonymous(const GaloisKeys& gk) {
  GaloisKeys out(gk.context(), gk.device());
  for (const auto& [e, k] : gk.keys()) {
    KSwitchKey c = k;
    c.set_key_id(0);
    out.insert(e, std::move(c));
  }
  return out;
}
Ciphertext anonymous(Ciphertext ct) {
  ct.set_key_id(0);
  return ct;
}

TEST(SerializeHostile, KeySetIdIsFramed) {
  const ContextPtr ctx = small_context(SchemeType::bfv, 1024);
  KeySet keys(ctx, Device::cpu(), 2);
  const Bytes keyed = io::save(keys.rk, opts(Compression::none, Seeding::never));
  EXPECT_EQ(keyed[9] & 2, 2);  // flag bit 1
  u64 id = 0;
  std::memcpy(&id, keyed.data() + 48 + 8, 8);  // after N in the descriptor
  EXPECT_EQ(id, keys.sk.key_id());
  const Bytes anon = io::save(anonymous(keys.rk), opts(Compression::none, Seeding::never));
  EXPECT_EQ(anon[9] & 2, 0);
  EXPECT_EQ(anon.size() + 8, keyed.size());
  EXPECT_EQ(io::load_relin_keys(anon, ctx, Device::cpu()).key_id(), 0u);
}

TEST(Serialize, SmallPrimesStoreFourByteWords) {
  // Primes below 2^32 with either word size: 4-byte words. A 50-bit prime: 8-byte words.
  for (int word_bits : {32, 64, 0}) {
    EncryptionParameters p = small_params(SchemeType::ckks, 4096);
    if (word_bits) p.coeff_modulus = CoeffModulus::create(4096, {30, 30, 30, 30});
    p.word_bits = word_bits ? word_bits : 64;
    const bool narrow = word_bits != 0;
    const ContextPtr ctx = Context::create(p, SecurityLevel::none);
    KeySet keys(ctx, Device::cpu(), 3);
    const Ciphertext ct = Encryptor(ctx, keys.pk, 5).encrypt_zero();
    const std::vector<u64> words = ct.buffer().to_host();
    for (Compression c : {Compression::none, Compression::zstd}) {
      const Bytes b = io::save(ct, opts(c, Seeding::never));
      const io::HeaderInfo h = io::read_header(b);
      EXPECT_EQ(h.words32, narrow);
      EXPECT_EQ(h.body_size, words.size() * (narrow ? 4 : 8));
      const Ciphertext back = io::load_ciphertext(b, ctx, Device::cpu());
      EXPECT_EQ(back.buffer().to_host(), words);  // every word, widened back
      const Bytes k = io::save(keys.rk, opts(c, Seeding::never));
      EXPECT_EQ(io::read_header(k).words32, narrow);
      EXPECT_EQ(io::load_relin_keys(k, ctx, Device::cpu()).key().buffer().to_host(),
                keys.rk.key().buffer().to_host());
    }
  }
}

// The body of a saved key (compression none) against an oracle built from the key's words
// widened to u64 (WordBuffer::to_host, not the saving path): 4-byte little-endian words of
// every polynomial, or of the b_j polynomials only when seeded. Keys of 32-bit-word contexts
// are saved from their words as stored (no widening); the bytes must not depend on it.
// The same rule covers public keys (b, a) and symmetric ciphertexts (c0, c1): the odd
// polynomials are the seed's.
std::vector<std::uint8_t> body_oracle(const WordBuffer& buffer, std::size_t pw, bool seeded) {
  const std::vector<u64> all = buffer.to_host();
  std::vector<std::uint8_t> out;
  for (std::size_t p = 0; p < all.size() / pw; ++p) {
    if (seeded && p % 2 == 1) continue;  // a_j: regenerated from the seed
    for (std::size_t i = 0; i < pw; ++i) {
      const u64 v = all[p * pw + i];
      EXPECT_LT(v, u64(1) << 32);
      for (int b = 0; b < 4; ++b) out.push_back(static_cast<std::uint8_t>(v >> (8 * b)));
    }
  }
  return out;
}

void expect_body(const Bytes& b, const std::vector<std::uint8_t>& body) {
  const io::HeaderInfo h = io::read_header(b);
  EXPECT_TRUE(h.words32);
  ASSERT_EQ(h.body_size, body.size());
  ASSERT_GE(b.size(), body.size());
  EXPECT_TRUE(std::equal(body.begin(), body.end(), b.end() - static_cast<long>(body.size())));
}

TEST(Serialize, KeysAndCiphertextsOfEitherWordSizeSaveFourByteWords) {
  for (int word_bits : {32, 64}) {
    SCOPED_TRACE(word_bits);
    const ContextPtr ctx = thirty_bit_context(word_bits);
    KeySet keys(ctx, Device::cpu(), 4);
    const SwitchingKey swk = KeyGenerator(ctx, Device::cpu(), 8).create_switching_key(keys.sk);
    for (Seeding sd : {Seeding::automatic, Seeding::never}) {
      const bool seeded = sd == Seeding::automatic;
      const io::SaveOptions o = opts(Compression::none, sd);
      const Bytes rk = io::save(keys.rk, o);
      expect_body(rk, body_oracle(keys.rk.key().buffer(), keys.rk.key().poly_words(), seeded));
      EXPECT_EQ(words(io::load_relin_keys(rk, ctx, Device::cpu())), words(keys.rk));
      const Bytes sb = io::save(swk, o);
      expect_body(sb, body_oracle(swk.key().buffer(), swk.key().poly_words(), seeded));
      EXPECT_EQ(words(io::load_switching_key(sb, ctx, Device::cpu()).key()), words(swk.key()));
      std::vector<std::uint8_t> gk_body;
      for (const auto& [elt, k] : keys.gk.keys()) {
        const std::vector<std::uint8_t> part = body_oracle(k.buffer(), k.poly_words(), seeded);
        gk_body.insert(gk_body.end(), part.begin(), part.end());
      }
      const std::size_t qp_words = ctx->base_qp_full().size() * ctx->n();
      const Bytes pb = io::save(keys.pk, o);
      expect_body(pb, body_oracle(keys.pk.buffer(), qp_words, seeded));
      EXPECT_EQ(words(io::load_public_key(pb, ctx, Device::cpu())), words(keys.pk));
      const Ciphertext ct = Encryptor(ctx, keys.sk, 3).encrypt(encode_some(ctx, Device::cpu(), 2));
      const Bytes cb = io::save(ct, o);
      expect_body(cb, body_oracle(ct.buffer(), ct.poly_words(), seeded));
      EXPECT_EQ(words(io::load_ciphertext(cb, ctx, Device::cpu())), words(ct));
      const Bytes gb = io::save(keys.gk, o);
      expect_body(gb, gk_body);
      const GaloisKeys gk = io::load_galois_keys(gb, ctx, Device::cpu());
      ASSERT_EQ(gk.keys().size(), keys.gk.keys().size());
      for (const auto& [elt, k] : keys.gk.keys()) EXPECT_EQ(words(gk.key(elt)), words(k)) << elt;
    }
  }
}

TEST(SerializeHostile, HeaderFieldsAreChecked) {
  const ContextPtr ctx = small_context(SchemeType::bfv, 1024);
  KeySet keys(ctx, Device::cpu(), 2);
  const Bytes good = io::save(anonymous(keys.rk), opts(Compression::none, Seeding::never));
  auto with = [&](std::size_t off, std::uint8_t v) {
    Bytes b = good;
    b[off] = v;
    return b;
  };
  const Device cpu = Device::cpu();
  expect_invalid([&] { io::load_relin_keys(with(0, 'X'), ctx, cpu); }, "magic");
  expect_invalid([&] { io::load_relin_keys(with(4, 9), ctx, cpu); }, "format_version");
  expect_invalid([&] { io::load_relin_keys(with(6, 99), ctx, cpu); }, "object_type");
  expect_invalid([&] { io::load_public_key(good, ctx, cpu); }, "object_type: expected public key");
  expect_invalid([&] { io::load_relin_keys(with(7, 7), ctx, cpu); }, "scheme");
  expect_invalid([&] { io::load_relin_keys(with(8, 1), ctx, cpu); }, "compression");
  expect_invalid([&] { io::load_relin_keys(with(9, 32), ctx, cpu); }, "flags: unknown bits");
  expect_invalid([&] { io::load_relin_keys(with(9, 8), ctx, cpu); }, "flags: compact keys");
  // 8-byte words flagged as 4-byte ones: the body is twice the size the shape needs.
  expect_invalid([&] { io::load_relin_keys(with(9, good[9] | 4), ctx, cpu); },
                 "body_size: " + std::to_string(io::read_header(good).body_size) + " bytes");
  expect_invalid([&] { io::load_relin_keys(with(10, 1), ctx, cpu); }, "reserved");
  expect_invalid([&] { io::load_relin_keys(with(69, good[69] ^ 1), ctx, cpu); }, "crc32");
  // Same scheme, other parameters: the message names both hashes.
  const ContextPtr other = small_context(SchemeType::bfv, 2048);
  try {
    io::load_relin_keys(good, other, cpu);
    ADD_FAILURE() << "loaded under the wrong parameters";
  } catch (const InvalidArgument& e) {
    const std::string m = e.what();
    EXPECT_NE(m.find("parameter_hash"), std::string::npos) << m;
    EXPECT_NE(m.find(io::hex64(ctx->parameter_hash())), std::string::npos) << m;
    EXPECT_NE(m.find(io::hex64(other->parameter_hash())), std::string::npos) << m;
  }
  // A body larger than the caller's limit is refused before anything is allocated.
  io::LoadOptions small;
  small.max_bytes = 1000;
  expect_invalid([&] { io::load_relin_keys(good, ctx, cpu, small); }, "load limit");
}

TEST(SerializeHostile, CoefficientsAndShapesAreChecked) {
  const ContextPtr ctx = small_context(SchemeType::bgv, 1024);
  KeySet keys(ctx, Device::cpu(), 2);
  const Device cpu = Device::cpu();
  const Ciphertext ct = Encryptor(ctx, keys.pk, 1).encrypt(encode_some(ctx, cpu, 1));
  const Bytes good = io::save(anonymous(ct), opts(Compression::none, Seeding::never));
  const std::size_t desc = good[24] | (good[25] << 8);
  const std::size_t body = 48 + desc;
  {  // a coefficient equal to its modulus
    Bytes b = good;
    const u64 q0 = ctx->base_q(ct.level())[0].value;
    std::memcpy(b.data() + body + 8 * 5, &q0, 8);
    fix_crc(b);
    expect_invalid([&] { io::load_ciphertext(b, ctx, cpu); }, "coefficient 5 of limb 0");
  }
  {  // size 1 (descriptor offset 8), and a level above the chain (offset 12)
    Bytes b = good;
    b[48 + 8] = 1;
    fix_crc(b);
    expect_invalid([&] { io::load_ciphertext(b, ctx, cpu); }, "size");
    b = good;
    b[48 + 12] = 7;
    fix_crc(b);
    expect_invalid([&] { io::load_ciphertext(b, ctx, cpu); }, "level");
    b = good;
    b[48 + 16] = 0;  // BGV must be in NTT form
    fix_crc(b);
    expect_invalid([&] { io::load_ciphertext(b, ctx, cpu); }, "is_ntt_form");
    b = good;
    std::memset(b.data() + 48 + 32, 0, 8);  // correction factor 0
    fix_crc(b);
    expect_invalid([&] { io::load_ciphertext(b, ctx, cpu); }, "correction_factor");
  }
  {  // Galois elements: even, and out of order
    const Bytes g = io::save(anonymous(keys.gk), opts(Compression::none, Seeding::never));
    Bytes b = g;
    b[48 + 20] = 4;  // first element
    fix_crc(b);
    expect_invalid([&] { io::load_galois_keys(b, ctx, cpu); }, "galois_elt");
    b = g;
    std::memcpy(b.data() + 48 + 24, b.data() + 48 + 20, 4);  // second = first
    fix_crc(b);
    expect_invalid([&] { io::load_galois_keys(b, ctx, cpu); }, "distinct");
  }
  {  // corrupt zstd data
    Bytes z = io::save(ct, opts(Compression::zstd, Seeding::never));
    z[z.size() - 20] ^= 0x55;
    EXPECT_THROW(io::load_ciphertext(z, ctx, cpu), InvalidArgument);
  }
}

TEST(Serialize, CiphertextRecordRoundTripsAndIsChecked) {
  // The pythonic record (io::CiphertextInfo) in the descriptor after is_ntt_form: flags at
  // descriptor offset 17, reserved 18-19, length 20-23 (no key-set id). Oracle: the values
  // written, and zeros for bytes without the record (as every build before it wrote).
  const Device cpu = Device::cpu();
  for (SchemeType scheme : kSchemes) {
    SCOPED_TRACE(veil::to_string(scheme));
    const ContextPtr ctx = small_context(scheme, 1024);
    KeySet keys(ctx, cpu, 2);
    const Ciphertext ct = anonymous(Encryptor(ctx, keys.pk, 1).encrypt(encode_some(ctx, cpu, 1)));
    const bool ckks = scheme == SchemeType::ckks;
    const std::uint32_t slots = ckks ? 512 : 1024;
    const io::CiphertextInfo info{true, ckks, 16};
    const Bytes plain = io::save(ct, opts(Compression::none, Seeding::never));
    const Bytes rec = io::save(ct, opts(Compression::none, Seeding::never), info);
    EXPECT_EQ(rec.size(), plain.size());
    EXPECT_EQ(rec[48 + 17], ckks ? 3 : 1);
    EXPECT_EQ(plain[48 + 17], 0);
    const io::CiphertextInfo back = io::read_ciphertext_info(rec);
    EXPECT_TRUE(back.recorded);
    EXPECT_EQ(back.complex_values, ckks);
    EXPECT_EQ(back.length, 16u);
    EXPECT_FALSE(io::read_ciphertext_info(plain).recorded);
    EXPECT_EQ(words(io::load_ciphertext(rec, ctx, cpu)), words(ct));
    EXPECT_TRUE(io::read_ciphertext_info(io::save(ct, {}, {true, false, slots})).recorded);
    expect_invalid([&] { io::save(ct, {}, {true, false, slots + 1}); }, "length");
    if (!ckks) expect_invalid([&] { io::save(ct, {}, {true, true, 1}); }, "complex_values");
    auto patched = [&](std::size_t off, std::uint8_t v) {
      Bytes b = rec;
      b[48 + off] = v;
      fix_crc(b);
      return b;
    };
    const Bytes too_long = patched(21, static_cast<std::uint8_t>((slots >> 8) + 1));
    expect_invalid([&] { io::load_ciphertext(too_long, ctx, cpu); }, "length");
    expect_invalid([&] { io::read_ciphertext_info(too_long); }, "length");
    expect_invalid([&] { io::load_ciphertext(patched(17, 4), ctx, cpu); }, "value_flags");
    expect_invalid([&] { io::load_ciphertext(patched(17, 2), ctx, cpu); }, "value_flags");
    expect_invalid([&] { io::load_ciphertext(patched(18, 1), ctx, cpu); }, "reserved");
    if (!ckks) expect_invalid([&] { io::load_ciphertext(patched(17, 3), ctx, cpu); }, "value_flags");
    expect_invalid([&] { io::read_ciphertext_info(io::save(keys.pk, {})); }, "object_type");
  }
}

TEST(SerializeHostile, RandomBytesNeverCrash) {
  // Random mutations of valid objects of every type must throw InvalidArgument or load a valid
  // object; anything else (a crash, another exception type) fails the test. The libFuzzer
  // harness (tests/fuzz) runs millions of these under ASan/UBSan.
  const ContextPtr ctx = small_context(SchemeType::bfv, 1024);
  KeySet keys(ctx, Device::cpu(), 9);
  const Plaintext pt = encode_some(ctx, Device::cpu(), 1);
  std::vector<Bytes> seeds = {io::save(ctx->params()), io::save(pt),
                              io::save(Encryptor(ctx, keys.sk, 1).encrypt(pt)),
                              io::save(keys.sk), io::save(keys.pk), io::save(keys.rk),
                              io::save(keys.gk)};
  std::mt19937_64 rng(5);
  for (int iter = 0; iter < 1400; ++iter) {
    Bytes b = seeds[iter % seeds.size()];
    const int flips = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < flips; ++k) b[rng() % b.size()] ^= static_cast<std::uint8_t>(1 + rng() % 255);
    try {
      switch (iter % 7) {
        case 0: io::load_parameters(b); break;
        case 1: io::load_plaintext(b, ctx, Device::cpu()); break;
        case 2: io::load_ciphertext(b, ctx, Device::cpu()); break;
        case 3: io::load_secret_key(b, ctx, Device::cpu()); break;
        case 4: io::load_public_key(b, ctx, Device::cpu()); break;
        case 5: io::load_relin_keys(b, ctx, Device::cpu()); break;
        default: io::load_galois_keys(b, ctx, Device::cpu()); break;
      }
    } catch (const InvalidArgument&) {
    }
  }
}

TEST(Serialize, Files) {
  const ContextPtr ctx = small_context(SchemeType::ckks, 1024);
  KeySet keys(ctx, Device::cpu(), 2);
  const std::string path = ::testing::TempDir() + "veil_pk.bin";
  io::write_file(path, io::save(keys.pk));
  EXPECT_EQ(words(io::load_public_key(io::read_file(path), ctx, Device::cpu())), words(keys.pk));
  expect_invalid([&] { io::read_file(path, 10); }, "limit");
  EXPECT_THROW(io::read_file(path + ".missing"), RuntimeError);
}

}  // namespace
