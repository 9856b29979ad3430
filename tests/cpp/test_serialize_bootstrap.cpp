// Keys that travel (issue 23, deliverable 4): Veil's format for SwitchingKey (object type 8,
// full keys seeded, trimmed keys of sparse-secret encapsulation stored as their nonzero limbs) and
// for the bootstrapping parameters (type 9), a bootstrapper rebuilt on the "server" from loaded
// bytes alone (no secret key) that bootstraps word for word as the client's, and hostile bytes:
// every truncation and the flipped fields raise InvalidArgument naming the field.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "ckks_util.h"
#include "veil/circuits/bootstrapper.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/io/serialize.h"
#include "veil/io/serialize_circuits.h"

namespace {

using namespace veil;
using namespace veil::circuits;
using namespace veil::test;

constexpr std::size_t kN = 2048;

ContextPtr boot_context(int word_bits) {
  const BootstrapChain chain = bootstrap_chain(11, 2, BootstrapConfig{}, word_bits);
  return Context::create(chain.parameters(kN, word_bits), SecurityLevel::none);
}

io::SaveOptions opts(io::Compression c, io::Seeding s) {
  io::SaveOptions o;
  o.compression = c;
  o.seeded = s;
  return o;
}

void expect_same_key(const SwitchingKey& a, const SwitchingKey& b) {
  EXPECT_EQ(veil::test::words(a.key()), veil::test::words(b.key()));
  EXPECT_EQ(a.key_id(), b.key_id());
  EXPECT_EQ(a.from_key_id(), b.from_key_id());
  EXPECT_EQ(a.max_level(), b.max_level());
}

// Overwrites `bytes` at `offset` with the little-endian value v (`size` bytes).
io::Bytes patched(io::Bytes bytes, std::size_t offset, std::uint64_t v, std::size_t size) {
  for (std::size_t i = 0; i < size; ++i) bytes[offset + i] = static_cast<std::uint8_t>(v >> (8 * i));
  return bytes;
}

TEST(SwitchingKeySerialization, FullKeysRoundTripSeededAndNot) {
  for (int word_bits : {64, 32}) {
    ContextPtr ctx = boot_context(word_bits);
    CkksKeys a(ctx, Device::cpu(), 1);
    KeyGenerator other(ctx, Device::cpu(), 9);
    const SwitchingKey swk = other.create_switching_key(a.sk);
    ASSERT_EQ(swk.max_level(), ctx->max_level());
    std::size_t sizes[2] = {0, 0};
    for (io::Seeding s : {io::Seeding::automatic, io::Seeding::never}) {
      for (io::Compression c : {io::Compression::none, io::Compression::zstd}) {
        const io::Bytes b = io::save(swk, opts(c, s));
        if (c == io::Compression::none) sizes[s == io::Seeding::never] = b.size();
        const SwitchingKey back = io::load_switching_key(b, ctx, Device::cpu());
        expect_same_key(swk, back);
        EXPECT_EQ(back.key().uniform_seed().has_value(), s == io::Seeding::automatic);
        // it switches a ciphertext as the original does
        const Ciphertext ct = a.encrypt(veil::test::random_values(8, 2), std::ldexp(1.0, 40), 3);
        EXPECT_EQ(veil::test::words(a.ev.switch_key(ct, back)),
                  veil::test::words(a.ev.switch_key(ct, swk)));
      }
    }
    // seeded: the a_j polynomials are replaced by one 32-byte seed, half the words
    std::printf("[ sizes ] %d-bit words: switching key %zu bytes unseeded, %zu seeded\n", word_bits,
                sizes[1], sizes[0]);
    EXPECT_LT(sizes[0], sizes[1] / 2 + 4096);
  }
}

// The dense -> sparse key is a key of q_0's level (KSwitchKey::level): one digit (alpha >= q_0's
// primes) over Q_{q0} ∪ P in memory and in the file, seeded (its b_j only) or not (b_j, a_j).
TEST(SwitchingKeySerialization, TrimmedKeysStoreOnlyTheirLimbs) {
  for (int word_bits : {64, 32}) {
    ContextPtr ctx = boot_context(word_bits);
    CkksKeys a(ctx, Device::cpu(), 1);
    KeyGenerator sparse(ctx, Device::cpu(), 12, 32);
    const std::size_t q0_top = ckks::rescale_groups(*ctx)[0] - 1;
    const SwitchingKey to_sparse = sparse.create_switching_key(a.sk, q0_top);
    const SwitchingKey full = sparse.create_switching_key(a.sk);
    const std::size_t limbs = q0_top + 1 + ctx->num_p();
    ASSERT_EQ(to_sparse.key().level(), q0_top);
    ASSERT_EQ(to_sparse.key().dnum(), 1u);
    EXPECT_EQ(to_sparse.key().word_count(), 2 * limbs * kN);
    for (io::Seeding s : {io::Seeding::never, io::Seeding::automatic}) {
      const io::Bytes b = io::save(to_sparse, opts(io::Compression::none, s));
      const std::size_t polys = s == io::Seeding::never ? 2 : 1;
      // 4-byte words where every residue fits (the 32-bit chain's ~30-bit primes)
      const std::size_t word_bytes = io::read_header(b).words32 ? 4 : 8;
      EXPECT_EQ(io::read_header(b).seeded, s != io::Seeding::never);
      EXPECT_GE(b.size(), polys * limbs * kN * word_bytes);
      EXPECT_LT(b.size(), polys * limbs * kN * word_bytes + 256);
      const io::Bytes bf = io::save(full, opts(io::Compression::none, s));
      std::printf("[ sizes ] %d-bit words, %s: dense -> sparse key %zu bytes at its level, %zu "
                  "full\n", word_bits, polys == 2 ? "unseeded" : "seeded", b.size(), bf.size());
      const SwitchingKey back = io::load_switching_key(b, ctx, Device::cpu());
      expect_same_key(to_sparse, back);
      EXPECT_EQ(back.key().level(), q0_top);
    }
    EXPECT_NO_THROW(io::save(to_sparse, opts(io::Compression::none, io::Seeding::always)));
  }
}

TEST(BootstrapSerialization, AServerBootstrapsFromLoadedBytesAlone) {
  ContextPtr ctx = boot_context(32);
  BootstrapConfig cfg;
  cfg.slots = 64;
  CkksKeys client(ctx, Device::cpu(), 4);
  const BootstrapParameters params(ctx, cfg, std::ldexp(1.0, 40));
  const BootstrapKeys keys = BootstrapKeys::generate(params, client.sk, client.rk, 4);
  const Bootstrapper local(params, keys);
  // what the client sends: parameters, relinearization, Galois and switching keys (no secret)
  const io::Bytes pb = io::save(params), rb = io::save(keys.relin_keys),
                  gb = io::save(keys.galois_keys), sb = io::save(keys.to_sparse),
                  db = io::save(keys.to_dense);
  std::printf("[ sizes ] N = 2^11, 32-bit words, 64 slots: parameters %zu, Galois keys %zu, "
              "to_sparse %zu, to_dense %zu bytes (seeded, zstd)\n",
              pb.size(), gb.size(), sb.size(), db.size());
  // the server: a context of its own from the parameters' bytes, then every object loaded
  ContextPtr server_ctx =
      Context::create(io::load_parameters(io::save(ctx->params())), SecurityLevel::none);
  const BootstrapParameters p2 = io::load_bootstrap_parameters(pb, server_ctx);
  EXPECT_EQ(p2.slots(), params.slots());
  EXPECT_EQ(p2.scale(), params.scale());
  EXPECT_EQ(p2.input_level(), params.input_level());
  EXPECT_EQ(p2.galois_elements(), params.galois_elements());
  EXPECT_EQ(p2.config().hamming_weight, cfg.hamming_weight);
  const Device cpu = Device::cpu();
  BootstrapKeys loaded{io::load_relin_keys(rb, server_ctx, cpu),
                       io::load_galois_keys(gb, server_ctx, cpu),
                       io::load_switching_key(sb, server_ctx, cpu),
                       io::load_switching_key(db, server_ctx, cpu)};
  const Bootstrapper server(p2, std::move(loaded));
  const CVec vals = veil::test::tile(veil::test::random_values(64, 5), kN / 2);
  const Ciphertext ct = client.encrypt(vals, params.scale(), params.input_level());
  const Ciphertext at_server = io::load_ciphertext(io::save(ct), server_ctx, cpu);
  const Ciphertext y = server.bootstrap(at_server);
  EXPECT_EQ(veil::test::words(y), veil::test::words(local.bootstrap(ct)));
  const auto pr = veil::test::precision(
      vals, client.decrypt(io::load_ciphertext(io::save(y), ctx, cpu)));
  veil::test::report("bootstrapped by the server from loaded keys", pr);
  EXPECT_GT(pr.mean_bits, 20);
}

TEST(BootstrapSerialization, PackSparseIsAnOptionalTrailingField) {
  ContextPtr ctx = boot_context(64);
  BootstrapConfig cfg;
  cfg.slots = 64;
  const BootstrapParameters plain(ctx, cfg, std::ldexp(1.0, 40));
  cfg.pack_sparse = true;
  const BootstrapParameters packed(ctx, cfg, std::ldexp(1.0, 40));
  const auto o = opts(io::Compression::none, io::Seeding::automatic);
  const io::Bytes a = io::save(plain, o), b = io::save(packed, o);
  ASSERT_EQ(b.size(), a.size() + 4);  // written only when set: older files are the plain ones
  EXPECT_FALSE(io::load_bootstrap_parameters(a, ctx).config().pack_sparse);
  const BootstrapParameters back = io::load_bootstrap_parameters(b, ctx);
  EXPECT_TRUE(back.config().pack_sparse);
  EXPECT_EQ(back.levels_left(), packed.levels_left());
  EXPECT_EQ(back.output_level(), packed.output_level());
  // the field at 92 (after the seven u32 fields from 64): only 1 is valid; every truncation
  // fails
  veil::test::expect_invalid([&] { io::load_bootstrap_parameters(patched(b, 92, 2, 4), ctx); },
                             "pack_sparse: expected 1");
  veil::test::expect_invalid([&] { io::load_bootstrap_parameters(patched(b, 92, 0, 4), ctx); },
                             "pack_sparse: expected 1");
  for (std::size_t len = 0; len < b.size(); ++len) {
    const io::Bytes cut(b.begin(), b.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_THROW(io::load_bootstrap_parameters(cut, ctx), InvalidArgument) << len;
  }
}

TEST(BootstrapSerialization, HostileBytesNameTheField) {
  ContextPtr ctx = boot_context(64);
  CkksKeys a(ctx, Device::cpu(), 1);
  const BootstrapParameters params(ctx, BootstrapConfig{}, std::ldexp(1.0, 40));
  const io::Bytes pb = io::save(params, opts(io::Compression::none, io::Seeding::automatic));
  // every truncation
  for (std::size_t len = 0; len < pb.size(); ++len) {
    const io::Bytes cut(pb.begin(), pb.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_THROW(io::load_bootstrap_parameters(cut, ctx), InvalidArgument) << len;
  }
  // the descriptor's fields: N at 48, scale at 56, then the seven u32 fields from 64
  auto params_fails = [&](const io::Bytes& b, const std::string& needle) {
    veil::test::expect_invalid([&] { io::load_bootstrap_parameters(b, ctx); }, needle);
  };
  params_fails(patched(pb, 48, 4096, 8), "poly_modulus_degree");
  params_fails(patched(pb, 56, 0x7FF8000000000000ull, 8), "scale");  // NaN
  params_fails(patched(pb, 64, 3, 4), "bootstrap parameters: slots: expected a power of two");
  params_fails(patched(pb, 68, 0, 4), "cts_levels");
  params_fails(patched(pb, 72, 17, 4), "stc_levels");
  params_fails(patched(pb, 80, 5000, 4), "evalmod_degree");
  params_fails(patched(pb, 88, 0, 4), "hamming_weight");
  params_fails(patched(pb, 68, 9, 4), "bootstrap parameters: coeff_modulus: bootstrapping needs");
  params_fails(patched(pb, 9, 1, 1), "flags");  // seeded
  params_fails(patched(pb, 6, 8, 1), "object_type: expected bootstrap parameters, got switching");
  ContextPtr other = boot_context(32);
  veil::test::expect_invalid([&] { io::load_bootstrap_parameters(pb, other); },
                             "parameter_hash");
  // a switching key of level 0, unseeded: N 48, key-set id 56, from id 64, max_level 72, dnum
  // 76, limbs 80, body 84
  KeyGenerator sparse(ctx, Device::cpu(), 12, 32);
  const io::Bytes sb = io::save(sparse.create_switching_key(a.sk, 0),
                                opts(io::Compression::none, io::Seeding::never));
  for (std::size_t len : {std::size_t{0}, std::size_t{47}, std::size_t{60}, std::size_t{83},
                          std::size_t{84}, sb.size() / 2, sb.size() - 1}) {
    const io::Bytes cut(sb.begin(), sb.begin() + static_cast<std::ptrdiff_t>(len));
    EXPECT_THROW(io::load_switching_key(cut, ctx, Device::cpu()), InvalidArgument) << len;
  }
  auto key_fails = [&](const io::Bytes& b, const std::string& needle) {
    veil::test::expect_invalid([&] { io::load_switching_key(b, ctx, Device::cpu()); }, needle);
  };
  key_fails(patched(sb, 72, 99, 4), "switching key: level: 99 exceeds");
  key_fails(patched(sb, 72, 1, 4), "switching key: limbs: ");  // a wider key, 7 limbs needed
  key_fails(patched(sb, 76, 2, 4), "switching key: dnum: 2 digits stored");
  key_fails(patched(sb, 80, 5, 4), "switching key: limbs: 5 RNS limbs stored");
  key_fails(patched(sb, 9, 2 | 16, 1), "flags: only Galois keys");  // per-key descriptors
  key_fails(patched(sb, 56, 0, 8), "key_set_id");
  key_fails(patched(sb, 48 + 36 + 8, 0xFFFFFFFFFFFFFFFFull, 8), "crc32");  // a body word
  EXPECT_THROW(io::load_relin_keys(sb, ctx, Device::cpu()), InvalidArgument);  // other type
}

}  // namespace
