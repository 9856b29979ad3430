// Tests for the ChaCha20 block function (RFC 8439 test vectors), PrngStream and Prng.
#include <gtest/gtest.h>

#include <array>
#include <cctype>
#include <cstdint>
#include <cstring>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "veil/ring/chacha20.h"
#include "veil/ring/prng.h"

namespace {

using Bytes = std::vector<std::uint8_t>;

Bytes from_hex(const std::string& hex) {
  Bytes out;
  std::string digits;
  for (char c : hex) {
    if (std::isxdigit(static_cast<unsigned char>(c))) digits += c;
  }
  for (std::size_t i = 0; i + 1 < digits.size(); i += 2) {
    out.push_back(static_cast<std::uint8_t>(std::stoul(digits.substr(i, 2), nullptr, 16)));
  }
  return out;
}

std::uint32_t le32(const Bytes& b, std::size_t at) {
  return std::uint32_t(b[at]) | std::uint32_t(b[at + 1]) << 8 | std::uint32_t(b[at + 2]) << 16 |
         std::uint32_t(b[at + 3]) << 24;
}

veil::ChaChaKey key_from_bytes(const Bytes& k) {
  veil::ChaChaKey key;
  for (int i = 0; i < 8; ++i) key.words[i] = le32(k, 4 * i);
  return key;
}

// The RFC's serialized block: the 16 output words, each little-endian.
Bytes block_bytes(const Bytes& key, std::uint32_t counter, const Bytes& nonce) {
  std::uint32_t w[16];
  veil::chacha20_block(key_from_bytes(key), counter, le32(nonce, 0), le32(nonce, 4),
                       le32(nonce, 8), w);
  Bytes out;
  for (std::uint32_t x : w) {
    for (int k = 0; k < 4; ++k) out.push_back(static_cast<std::uint8_t>(x >> (8 * k)));
  }
  return out;
}

Bytes key_0_to_31() {
  Bytes k;
  for (int i = 0; i < 32; ++i) k.push_back(static_cast<std::uint8_t>(i));
  return k;
}

TEST(ChaChaTest, Rfc8439Section232BlockFunction) {
  const Bytes nonce = from_hex("00 00 00 09 00 00 00 4a 00 00 00 00");
  const Bytes want = from_hex(
      "10 f1 e7 e4 d1 3b 59 15 50 0f dd 1f a3 20 71 c4 c7 d1 f4 c7 33 c0 68 03 04 22 aa 9a c3 d4 "
      "6c 4e d2 82 64 46 07 9f aa 09 14 c2 d7 05 d9 8b 02 a2 b5 12 9c d1 de 16 4e b9 cb d0 83 e8 "
      "a2 50 3c 4e");
  ASSERT_EQ(want.size(), 64u);
  EXPECT_EQ(block_bytes(key_0_to_31(), 1, nonce), want);

  // The same block as the RFC's state words after the 20 rounds plus the input (§2.3.2).
  std::uint32_t w[16];
  veil::chacha20_block(key_from_bytes(key_0_to_31()), 1, 0x09000000u, 0x4a000000u, 0u, w);
  EXPECT_EQ(w[0], 0xe4e7f110u);
  EXPECT_EQ(w[1], 0x15593bd1u);
  EXPECT_EQ(w[15], 0x4e3c50a2u);
}

TEST(ChaChaTest, Rfc8439AppendixA1) {
  const Bytes zero_key(32, 0), zero_nonce(12, 0);
  Bytes key_one(32, 0);
  key_one[31] = 1;
  Bytes key_ff(32, 0);
  key_ff[1] = 0xff;
  const Bytes nonce_two = from_hex("00 00 00 00 00 00 00 00 00 00 00 02");
  // Test vector #1: zero key and nonce, counter 0.
  EXPECT_EQ(block_bytes(zero_key, 0, zero_nonce),
            from_hex("76 b8 e0 ad a0 f1 3d 90 40 5d 6a e5 53 86 bd 28"
                     "bd d2 19 b8 a0 8d ed 1a a8 36 ef cc 8b 77 0d c7"
                     "da 41 59 7c 51 57 48 8d 77 24 e0 3f b8 d8 4a 37"
                     "6a 43 b8 f4 15 18 a1 1c c3 87 b6 69 b2 ee 65 86"));
  // Test vector #2: zero key and nonce, counter 1.
  EXPECT_EQ(block_bytes(zero_key, 1, zero_nonce),
            from_hex("9f 07 e7 be 55 51 38 7a 98 ba 97 7c 73 2d 08 0d"
                     "cb 0f 29 a0 48 e3 65 69 12 c6 53 3e 32 ee 7a ed"
                     "29 b7 21 76 9c e6 4e 43 d5 71 33 b0 74 d8 39 d5"
                     "31 ed 1f 28 51 0a fb 45 ac e1 0a 1f 4b 79 4d 6f"));
  // Test vector #3: key ...01, counter 1.
  EXPECT_EQ(block_bytes(key_one, 1, zero_nonce),
            from_hex("3a eb 52 24 ec f8 49 92 9b 9d 82 8d b1 ce d4 dd"
                     "83 20 25 e8 01 8b 81 60 b8 22 84 f3 c9 49 aa 5a"
                     "8e ca 00 bb b4 a7 3b da d1 92 b5 c4 2f 73 f2 fd"
                     "4e 27 36 44 c8 b3 61 25 a6 4a dd eb 00 6c 13 a0"));
  // Test vector #4: key 00 ff 00..., counter 2.
  EXPECT_EQ(block_bytes(key_ff, 2, zero_nonce),
            from_hex("72 d5 4d fb f1 2e c4 4b 36 26 92 df 94 13 7f 32"
                     "8f ea 8d a7 39 90 26 5e c1 bb be a1 ae 9a f0 ca"
                     "13 b2 5a a2 6c b4 a6 48 cb 9b 9d 1b e6 5b 2c 09"
                     "24 a6 6c 54 d5 45 ec 1b 73 74 f4 87 2e 99 f0 96"));
  // Test vector #5: zero key, nonce ...02, counter 0.
  EXPECT_EQ(block_bytes(zero_key, 0, nonce_two),
            from_hex("c2 c6 4d 37 8c d5 36 37 4a e2 04 b9 ef 93 3f cd"
                     "1a 8b 22 88 b3 df a4 96 72 ab 76 5b 54 ee 27 c7"
                     "8a 97 0e 0e 95 5c 14 f3 a8 8e 74 1b 97 c2 86 f7"
                     "5f 8f c2 99 e8 14 83 62 fa 19 8a 39 53 1b ed 6d"));
}

TEST(ChaChaTest, Rfc8439Section242Encryption) {
  // Keystream blocks 1, 2 XOR the "sunscreen" plaintext give the published ciphertext.
  const std::string pt =
      "Ladies and Gentlemen of the class of '99: If I could offer you only one tip for the "
      "future, sunscreen would be it.";
  ASSERT_EQ(pt.size(), 114u);
  const Bytes want = from_hex(
      "6e 2e 35 9a 25 68 f9 80 41 ba 07 28 dd 0d 69 81 e9 7e 7a ec 1d 43 60 c2 0a 27 af cc fd 9f "
      "ae 0b f9 1b 65 c5 52 47 33 ab 8f 59 3d ab cd 62 b3 57 16 39 d6 24 e6 51 52 ab 8f 53 0c 35 "
      "9f 08 61 d8 07 ca 0d bf 50 0d 6a 61 56 a3 8e 08 8a 22 b6 5e 52 bc 51 4d 16 cc f8 06 81 8c "
      "e9 1a b7 79 37 36 5a f9 0b bf 74 a3 5b e6 b4 0b 8e ed f2 78 5e 42 87 4d");
  ASSERT_EQ(want.size(), 114u);
  const Bytes nonce = from_hex("00 00 00 00 00 00 00 4a 00 00 00 00");
  Bytes ks = block_bytes(key_0_to_31(), 1, nonce);
  const Bytes ks2 = block_bytes(key_0_to_31(), 2, nonce);
  ks.insert(ks.end(), ks2.begin(), ks2.end());
  Bytes ct(pt.size());
  for (std::size_t i = 0; i < pt.size(); ++i) ct[i] = static_cast<std::uint8_t>(pt[i]) ^ ks[i];
  EXPECT_EQ(ct, want);
}

TEST(ChaChaTest, PrngStreamBlock64Packing) {
  veil::PrngStream s;
  for (int i = 0; i < 8; ++i) s.key.words[i] = 0x01010101u * static_cast<std::uint32_t>(i + 1);
  s.domain = 0x0123456789abcdefull;
  for (std::uint32_t stream : {0u, 1u, 7u, 0xFFFFFFFFu}) {
    for (std::uint32_t block : {0u, 1u, 1000u, 0xFFFFFFFFu}) {
      std::uint64_t out[8];
      s.block64(stream, block, out);
      // Nonce = (domain low 32, domain high 32, stream); counter = block (chacha20.h).
      std::uint32_t w[16];
      veil::chacha20_block(s.key, block, 0x89abcdefu, 0x01234567u, stream, w);
      for (int i = 0; i < 8; ++i) {
        EXPECT_EQ(out[i], std::uint64_t(w[2 * i]) | std::uint64_t(w[2 * i + 1]) << 32)
            << "stream " << stream << " block " << block << " word " << i;
      }
    }
  }
  // The RFC block, addressed as a stream: domain = nonce words 0, 1 and stream = nonce word 2.
  veil::PrngStream rfc{key_from_bytes(key_0_to_31()), 0x4a00000009000000ull};
  std::uint64_t out[8];
  rfc.block64(0, 1, out);
  EXPECT_EQ(out[0], 0x15593bd1e4e7f110ull);
}

TEST(ChaChaTest, PrngStreamAddressesDiffer) {
  veil::PrngStream a{key_from_bytes(key_0_to_31()), 5};
  veil::PrngStream b = a;
  b.domain = 6;
  veil::PrngStream c = a;
  c.key.words[7] ^= 1;
  std::uint64_t x[8], y[8];
  a.block64(0, 0, x);
  b.block64(0, 0, y);
  EXPECT_NE(std::memcmp(x, y, sizeof x), 0) << "domain ignored";
  c.block64(0, 0, y);
  EXPECT_NE(std::memcmp(x, y, sizeof x), 0) << "key ignored";
  a.block64(1, 0, y);
  EXPECT_NE(std::memcmp(x, y, sizeof x), 0) << "stream ignored";
  a.block64(0, 1, y);
  EXPECT_NE(std::memcmp(x, y, sizeof x), 0) << "block ignored";
  a.block64(0, 0, y);
  EXPECT_EQ(std::memcmp(x, y, sizeof x), 0) << "not deterministic";
}

bool same_key(const veil::ChaChaKey& a, const veil::ChaChaKey& b) {
  return std::memcmp(a.words, b.words, sizeof a.words) == 0;
}

TEST(PrngTest, FromU64IsDeterministic) {
  veil::Prng p = veil::Prng::from_u64(42);
  const veil::PrngStream s0 = p.next(), s1 = p.next(), s2 = p.next();
  EXPECT_EQ(s0.domain, 0u);
  EXPECT_EQ(s1.domain, 1u);
  EXPECT_EQ(s2.domain, 2u);
  EXPECT_TRUE(same_key(s0.key, s1.key));
  EXPECT_TRUE(same_key(s0.key, s2.key));

  veil::Prng q = veil::Prng::from_u64(42);
  const veil::PrngStream t0 = q.next();
  EXPECT_EQ(t0.domain, 0u);
  EXPECT_TRUE(same_key(s0.key, t0.key));

  EXPECT_FALSE(same_key(s0.key, veil::Prng::from_u64(43).next().key));
  EXPECT_FALSE(same_key(s0.key, veil::Prng::from_u64(42ull << 32).next().key));
  // A zero seed must not give the all-zero ChaCha key.
  const veil::PrngStream z = veil::Prng::from_u64(0).next();
  const veil::ChaChaKey zero{};
  EXPECT_FALSE(same_key(z.key, zero));
}

TEST(PrngTest, ExplicitSeedIsTheKey) {
  std::array<std::uint32_t, 8> seed{};
  for (int i = 0; i < 8; ++i) seed[i] = 0x11111111u * static_cast<std::uint32_t>(i);
  veil::Prng p(seed);
  const veil::PrngStream s = p.next();
  EXPECT_EQ(s.domain, 0u);
  for (int i = 0; i < 8; ++i) EXPECT_EQ(s.key.words[i], seed[i]);
}

TEST(PrngTest, OsSeededGeneratorsDiffer) {
  veil::Prng a, b;
  const veil::PrngStream sa = a.next(), sb = b.next();
  EXPECT_EQ(sa.domain, 0u);
  EXPECT_EQ(sb.domain, 0u);
  EXPECT_FALSE(same_key(sa.key, sb.key));
  const veil::ChaChaKey zero{};
  EXPECT_FALSE(same_key(sa.key, zero));
}

TEST(PrngTest, CopiesDoNotReplayDomains) {
  // Reusing a (key, domain) pair would reuse randomness (e.g. the same encryption noise twice).
  veil::Prng a = veil::Prng::from_u64(7);
  veil::Prng b = a;
  std::set<std::uint64_t> domains;
  for (int i = 0; i < 10; ++i) {
    EXPECT_TRUE(domains.insert(a.next().domain).second);
    EXPECT_TRUE(domains.insert(b.next().domain).second);
  }
}

TEST(PrngTest, NextIsThreadSafe) {
  veil::Prng p = veil::Prng::from_u64(9);
  constexpr int kThreads = 4, kPer = 2000;
  std::vector<std::vector<std::uint64_t>> got(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPer; ++i) got[t].push_back(p.next().domain);
    });
  }
  for (auto& th : threads) th.join();
  std::set<std::uint64_t> all;
  for (auto& v : got) all.insert(v.begin(), v.end());
  EXPECT_EQ(all.size(), std::size_t(kThreads * kPer));
  EXPECT_EQ(*all.begin(), 0u);
  EXPECT_EQ(*all.rbegin(), std::uint64_t(kThreads * kPer - 1));
}

}  // namespace
