// libFuzzer harness for every loader of hostile bytes: Veil's format and SEAL's, all seven
// object types each (io/serialize.h, io/seal.h). The first input byte picks the loader; the
// rest is the object. A loader may only return an object or throw InvalidArgument: any other
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
#include "veil/io/serialize.h"
#include "veil/rlwe/keygen.h"

using namespace veil;

namespace {

ContextPtr g_ctx;

ContextPtr make_context() {
  EncryptionParameters p(SchemeType::bfv);
  p.poly_modulus_degree = 1024;
  p.coeff_modulus = CoeffModulus::create(1024, {36, 37});
  p.plain_modulus = PlainModulus::batching(1024, 16);
  return Context::create(p, SecurityLevel::none);
}

void write_seed(const std::string& dir, int index, std::uint8_t selector, const io::Bytes& obj) {
  std::ofstream f(dir + "/seed_" + std::to_string(index), std::ios::binary);
  f.put(static_cast<char>(selector));
  f.write(reinterpret_cast<const char*>(obj.data()), static_cast<std::streamsize>(obj.size()));
}

void make_corpus(const std::string& dir) {
  KeyGenerator kg(g_ctx, Device::cpu(), 1);
  const SecretKey sk = kg.secret_key();
  const PublicKey pk = kg.create_public_key();
  const RelinKeys rk = kg.create_relin_keys();
  const GaloisKeys gk = kg.create_galois_keys({1}, false);
  BatchEncoder enc(g_ctx);
  const Plaintext pt = enc.encode(std::vector<std::uint64_t>{1, 2, 3});
  const Ciphertext ct = Encryptor(g_ctx, sk, 2).encrypt(pt);
  int i = 0;
  for (io::Compression c : {io::Compression::none, io::Compression::zstd}) {
    for (io::Seeding s : {io::Seeding::automatic, io::Seeding::never}) {
      io::SaveOptions o;
      o.compression = c;
      o.seeded = s;
      write_seed(dir, i++, 0, io::save(g_ctx->params(), o));
      write_seed(dir, i++, 1, io::save(pt, o));
      write_seed(dir, i++, 2, io::save(ct, o));
      write_seed(dir, i++, 3, io::save(sk, o));
      write_seed(dir, i++, 4, io::save(pk, o));
      write_seed(dir, i++, 5, io::save(rk, o));
      write_seed(dir, i++, 6, io::save(gk, o));
    }
  }
  for (io::Compression c : {io::Compression::none, io::Compression::zlib, io::Compression::zstd}) {
    io::seal::SaveOptions o;
    o.compression = c;
    write_seed(dir, i++, 7, io::seal::save(g_ctx->params(), o));
    write_seed(dir, i++, 8, io::seal::save(pt, o));
    write_seed(dir, i++, 9, io::seal::save(ct, o));
    write_seed(dir, i++, 10, io::seal::save(sk, o));
    write_seed(dir, i++, 11, io::seal::save(pk, o));
    write_seed(dir, i++, 12, io::seal::save(rk, o));
    write_seed(dir, i++, 13, io::seal::save(gk, o));
  }
  std::fprintf(stderr, "wrote %d seed inputs to %s\n", i, dir.c_str());
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_ctx = make_context();
  if (const char* dir = std::getenv("VEIL_FUZZ_CORPUS")) make_corpus(dir);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size < 1) return 0;
  const io::ByteView in(data + 1, size - 1);
  io::LoadOptions o;
  o.max_bytes = std::size_t(4) << 20;  // keeps every allocation small
  const Device cpu = Device::cpu();
  try {
    switch (data[0] % 14) {
      case 0: io::load_parameters(in, o); break;
      case 1: io::load_plaintext(in, g_ctx, cpu, o); break;
      case 2: io::load_ciphertext(in, g_ctx, cpu, o); break;
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
      default: io::seal::load_galois_keys(in, g_ctx, cpu, o); break;
    }
  } catch (const InvalidArgument&) {
    // the one acceptable answer to bad bytes
  }
  return 0;
}
