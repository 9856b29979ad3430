// libFuzzer harness for every loader of hostile bytes: Veil's format and SEAL's, all seven
// object types each (io/serialize.h, io/seal.h; the ciphertext record's reader too), and Veil's
// switching keys (full and of a level), Galois key sets with a level and form per key (flag bit
// 4) and bootstrapping parameters (io/serialize_circuits.h). The
// first input byte picks the loader; the rest is the object. A loader may only return an object or throw InvalidArgument: any other
// exception, crash, hang, leak or sanitizer report (ASan, UBSan) is a finding.
//
// Built by scripts/fuzz.sh with clang (-fsanitize=fuzzer,address,undefined) against a CPU-only
// Veil compiled with FUZZING_BUILD_MODE_UNSAFE_FOR_PRODUCTION, which skips only the CRC check so
// that mutations reach the field checks behind it. Setting VEIL_FUZZ_CORPUS=<dir> writes a seed
// corpus of valid objects of every type (both formats, compressed and not, seeded and not).
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "veil/api/encryptor.h"
#include "veil/bfv/batch_encoder.h"
#include "veil/core/error.h"
#include "veil/io/seal.h"
#include "veil/circuits/bootstrap_parameters.h"
#include "veil/io/serialize.h"
#include "veil/io/serialize_circuits.h"
#include "veil/rlwe/keygen.h"

using namespace veil;

namespace {

ContextPtr g_ctx;    // 64-bit words (36- and 37-bit primes)
ContextPtr g_ctx32;  // 32-bit words (30- and 31-bit primes): the loaders narrow the saved words
ContextPtr g_boot;   // CKKS, N = 2^11, a bootstrapping chain (the parameters' loader needs one)
ContextPtr g_swk;    // two Q primes and P: switching keys trimmed to level 0 differ from full ones

ContextPtr make_switching_context() {
  EncryptionParameters p(SchemeType::bfv);
  p.poly_modulus_degree = 1024;
  p.coeff_modulus = CoeffModulus::create(1024, {30, 30, 31});
  p.plain_modulus = PlainModulus::batching(1024, 16);
  return Context::create(p, SecurityLevel::none);
}

ContextPtr make_boot_context() {
  const circuits::BootstrapChain chain = circuits::bootstrap_chain(11, 2, {}, 64);
  return Context::create(chain.parameters(2048, 64), SecurityLevel::none);
}

ContextPtr make_context(int b0, int b1) {
  EncryptionParameters p(SchemeType::bfv);
  p.poly_modulus_degree = 1024;
  p.coeff_modulus = CoeffModulus::create(1024, {b0, b1});
  p.plain_modulus = PlainModulus::batching(1024, 16);
  return Context::create(p, SecurityLevel::none);
}

void write_seed(const std::string& dir, int index, std::uint8_t selector, const io::Bytes& obj) {
  std::ofstream f(dir + "/seed_" + std::to_string(index), std::ios::binary);
  f.put(static_cast<char>(selector));
  f.write(reinterpret_cast<const char*>(obj.data()), static_cast<std::streamsize>(obj.size()));
}

// Seeds for `ctx`; the selector byte's bit 7 marks the 32-bit context's.
void make_corpus(const std::string& dir, const ContextPtr& g_ctx, std::uint8_t flag, int& i) {
  KeyGenerator kg(g_ctx, Device::cpu(), 1);
  const SecretKey sk = kg.secret_key();
  const PublicKey pk = kg.create_public_key();
  const RelinKeys rk = kg.create_relin_keys();
  const GaloisKeys gk = kg.create_galois_keys({1}, false);
  BatchEncoder enc(g_ctx);
  const Plaintext pt = enc.encode(std::vector<std::uint64_t>{1, 2, 3});
  const Ciphertext ct = Encryptor(g_ctx, sk, 2).encrypt(pt);
  for (io::Compression c : {io::Compression::none, io::Compression::zstd}) {
    for (io::Seeding s : {io::Seeding::automatic, io::Seeding::never}) {
      io::SaveOptions o;
      o.compression = c;
      o.seeded = s;
      write_seed(dir, i++, 0 | flag, io::save(g_ctx->params(), o));
      write_seed(dir, i++, 1 | flag, io::save(pt, o));
      write_seed(dir, i++, 2 | flag, io::save(ct, o));
      write_seed(dir, i++, 3 | flag, io::save(sk, o));
      write_seed(dir, i++, 4 | flag, io::save(pk, o));
      write_seed(dir, i++, 5 | flag, io::save(rk, o));
      write_seed(dir, i++, 6 | flag, io::save(gk, o));
    }
  }
  for (io::Compression c : {io::Compression::none, io::Compression::zlib, io::Compression::zstd}) {
    io::seal::SaveOptions o;
    o.compression = c;
    write_seed(dir, i++, 7 | flag, io::seal::save(g_ctx->params(), o));
    write_seed(dir, i++, 8 | flag, io::seal::save(pt, o));
    write_seed(dir, i++, 9 | flag, io::seal::save(ct, o));
    write_seed(dir, i++, 10 | flag, io::seal::save(sk, o));
    write_seed(dir, i++, 11 | flag, io::seal::save(pk, o));
    write_seed(dir, i++, 12 | flag, io::seal::save(rk, o));
    write_seed(dir, i++, 13 | flag, io::seal::save(gk, o));
  }
}

void make_boot_corpus(const std::string& dir, int& i) {
  KeyGenerator kg(g_swk, Device::cpu(), 1);
  KeyGenerator other(g_swk, Device::cpu(), 3);
  const SwitchingKey full = other.create_switching_key(kg.secret_key());
  const SwitchingKey trimmed = other.create_switching_key(kg.secret_key(), 0);
  for (io::Compression c : {io::Compression::none, io::Compression::zstd}) {
    for (io::Seeding s : {io::Seeding::automatic, io::Seeding::never}) {
      io::SaveOptions o;
      o.compression = c;
      o.seeded = s;
      write_seed(dir, i++, 14, io::save(full, o));
      write_seed(dir, i++, 14, io::save(trimmed, o));
    }
  }
  // A Galois key set with a descriptor per key: a key of level 0, a top-level compact key.
  GaloisKeys mixed = kg.create_galois_keys_from_elts({g_swk->galois_elt_from_step(1)}, false, {0});
  const std::uint32_t col = g_swk->galois_elt_column();
  mixed.insert(col, kg.create_galois_keys_from_elts({col}, true).key(col));
  for (io::Seeding s : {io::Seeding::automatic, io::Seeding::never}) {
    io::SaveOptions o;
    o.compression = io::Compression::none;
    o.seeded = s;
    write_seed(dir, i++, 16, io::save(mixed, o));
  }
  circuits::BootstrapConfig sparse;
  sparse.slots = 32;
  for (const circuits::BootstrapConfig& cfg : {circuits::BootstrapConfig{}, sparse}) {
    const circuits::BootstrapParameters p(g_boot, cfg, 1099511627776.0);
    for (io::Compression c : {io::Compression::none, io::Compression::zstd}) {
      io::SaveOptions o;
      o.compression = c;
      write_seed(dir, i++, 15, io::save(p, o));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_ctx = make_context(36, 37);
  g_ctx32 = make_context(30, 31);
  g_boot = make_boot_context();
  g_swk = make_switching_context();
  if (g_ctx->word_bits() != 64 || g_ctx32->word_bits() != 32) std::abort();
  if (const char* dir = std::getenv("VEIL_FUZZ_CORPUS")) {
    int i = 0;
    make_corpus(dir, g_ctx, 0, i);
    make_corpus(dir, g_ctx32, 0x80, i);
    make_boot_corpus(dir, i);
    std::fprintf(stderr, "wrote %d seed inputs to %s\n", i, dir);
  }
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const io::ByteView in(data + 1, size - 1);
  io::LoadOptions o;
  o.max_bytes = std::size_t(4) << 20;  // keeps every allocation small
  const Device cpu = Device::cpu();
  const ContextPtr& g_ctx = (data[0] & 0x80) ? g_ctx32 : ::g_ctx;
  try {
    switch ((data[0] & 0x7F) % 17) {
      case 0: io::load_parameters(in, o); break;
      case 1: io::load_plaintext(in, g_ctx, cpu, o); break;
      case 2:  // the record reader (veil.load's first look), then the loader
        try {
          io::read_ciphertext_info(in);
        } catch (const InvalidArgument&) {
        }
        io::load_ciphertext(in, g_ctx, cpu, o);
        break;
      case 3: io::load_secret_key(in, g_ctx, cpu, o); break;
      case 4: io::load_public_key(in, g_ctx, cpu, o); break;
      case 5: io::load_relin_keys(in, g_ctx, cpu, o); break;
      case 6: io::load_galois_keys(in, g_ctx, cpu, o); break;
      case 7: io::seal::load_parameters(in, o); break;
      case 8: io::seal::load_plaintext(in, g_ctx, cpu, o); break;
      case 9: io::seal::load_ciphertext(in, g_ctx, cpu, o); break;
      case 10: io::seal::load_secret_key(in, g_ctx, cpu, o); break;
      case 11: io::seal::load_public_key(in, g_ctx, cpu, o); break;
      case 12: io::seal::load_relin_keys(in, g_ctx, cpu, o); break;
      case 13: io::seal::load_galois_keys(in, g_ctx, cpu, o); break;
      case 14: io::load_switching_key(in, g_swk, cpu, o); break;
      case 15: io::load_bootstrap_parameters(in, g_boot, o); break;
      default: io::load_galois_keys(in, g_swk, cpu, o); break;  // keys of a level, mixed forms
    }
  } catch (const InvalidArgument&) {
    // the one acceptable answer to bad bytes
  }
  return 0;
}
