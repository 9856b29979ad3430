// Generates the SEAL-made test vectors in this folder with Microsoft SEAL 4.1 (C++), which
// Veil's tests then load: seeded objects (SEAL's default BLAKE2Xb PRNG), zlib and zstd
// compression, all three schemes. Not built by Veil; run once by hand:
//   g++ -std=c++17 -O1 make_vectors.cpp -I<seal>/native/src -I<seal-build>/native/src \
//       <seal-build>/lib/libseal-4.1.a -lzstd -lz -o make_vectors && ./make_vectors
// Messages (checked by tests/python/test_seal_interop.py): BFV/BGV slot i holds i % 97;
// CKKS slot i holds (i % 17) / 16.
#include <fstream>
#include <iostream>
#include <sstream>
#include <vector>

#include "seal/seal.h"

using namespace seal;

template <class T>
void save(const std::string& name, const T& obj, compr_mode_type mode) {
  std::stringstream ss;
  obj.save(ss, mode);
  const std::string s = ss.str();
  std::ofstream(name, std::ios::binary).write(s.data(), static_cast<std::streamsize>(s.size()));
  std::cout << name << " " << s.size() << " bytes\n";
}

void integer_scheme(scheme_type scheme, const std::string& tag, bool keys) {
  EncryptionParameters parms(scheme);
  const std::size_t n = 4096;
  parms.set_poly_modulus_degree(n);
  parms.set_coeff_modulus(CoeffModulus::BFVDefault(n));
  parms.set_plain_modulus(PlainModulus::Batching(n, 20));
  SEALContext ctx(parms);
  KeyGenerator kg(ctx);
  save(tag + "_parms.bin", parms, compr_mode_type::none);
  save(tag + "_sk.bin", kg.secret_key(), compr_mode_type::zstd);
  save(tag + "_rk_seeded_zlib.bin", kg.create_relin_keys(), compr_mode_type::zlib);
  if (keys) {
    save(tag + "_pk_seeded.bin", kg.create_public_key(), compr_mode_type::none);
    save(tag + "_gk_seeded_zstd.bin", kg.create_galois_keys(std::vector<int>{1}), compr_mode_type::zstd);
  }
  BatchEncoder be(ctx);
  std::vector<std::uint64_t> v(n);
  for (std::size_t i = 0; i < n; ++i) v[i] = i % 97;
  Plaintext pt;
  be.encode(v, pt);
  Encryptor enc(ctx, kg.secret_key());
  save(tag + "_ct_seeded_zstd.bin", enc.encrypt_symmetric(pt), compr_mode_type::zstd);
}

void ckks() {
  EncryptionParameters parms(scheme_type::ckks);
  const std::size_t n = 4096;
  parms.set_poly_modulus_degree(n);
  parms.set_coeff_modulus(CoeffModulus::Create(n, {36, 30, 36}));
  SEALContext ctx(parms);
  KeyGenerator kg(ctx);
  save("ckks_parms.bin", parms, compr_mode_type::none);
  save("ckks_sk.bin", kg.secret_key(), compr_mode_type::zstd);
  save("ckks_rk_seeded_zlib.bin", kg.create_relin_keys(), compr_mode_type::zlib);
  CKKSEncoder ce(ctx);
  std::vector<double> v(n / 2);
  for (std::size_t i = 0; i < n / 2; ++i) v[i] = static_cast<double>(i % 17) / 16.0;
  Plaintext pt;
  ce.encode(v, std::pow(2.0, 30), pt);
  Encryptor enc(ctx, kg.secret_key());
  save("ckks_ct_seeded_zstd.bin", enc.encrypt_symmetric(pt), compr_mode_type::zstd);
}

int main() {
  integer_scheme(scheme_type::bfv, "bfv", true);
  integer_scheme(scheme_type::bgv, "bgv", false);
  ckks();
}
