// Sizes of SEAL 4.x's serialized objects (the real SEAL, C++), for the size table in
// docs/serialization.md beside Veil's (bench/serialization_sizes.py). BFV, N = 2^14 with
// BFVDefault and N = 2^16 with 31 x 54 + 56 bits (Veil's default chain); t = 20-bit batching
// prime. Not built by Veil; with a SEAL 4.x build (zlib and zstd enabled):
//   g++ -std=c++17 -O2 seal_sizes.cpp -I<seal>/native/src -I<seal-build>/native/src \
//       <seal-build>/lib/libseal-4.1.a -lzstd -lz -o seal_sizes && ./seal_sizes
#include <iostream>
#include <sstream>
#include <vector>

#include "seal/seal.h"

using namespace seal;

template <class T>
std::size_t bytes(const T& obj, compr_mode_type mode) {
  std::stringstream ss;
  obj.save(ss, mode);
  return ss.str().size();
}

template <class T>
void row(std::size_t n, const std::string& what, const T& obj) {
  std::cout << n << "," << what << "," << bytes(obj, compr_mode_type::none) << ","
            << bytes(obj, compr_mode_type::zstd) << "," << bytes(obj, compr_mode_type::zlib) << "\n";
}

int main() {
  std::cout << "N,object,none,zstd,zlib\n";
  for (std::size_t n : {16384u, 65536u}) {
    EncryptionParameters parms(scheme_type::bfv);
    parms.set_poly_modulus_degree(n);
    if (n == 16384) {
      parms.set_coeff_modulus(CoeffModulus::BFVDefault(n));
    } else {
      std::vector<int> bits(31, 54);
      bits.push_back(56);
      parms.set_coeff_modulus(CoeffModulus::Create(n, bits));
    }
    parms.set_plain_modulus(PlainModulus::Batching(n, 20));
    SEALContext ctx(parms, true, sec_level_type::none);
    KeyGenerator kg(ctx);
    row(n, "secret_key", kg.secret_key());
    PublicKey pk;
    kg.create_public_key(pk);
    row(n, "public_key", pk);
    row(n, "public_key_seeded", kg.create_public_key());
    RelinKeys rk;
    kg.create_relin_keys(rk);
    row(n, "relin_keys", rk);
    row(n, "relin_keys_seeded", kg.create_relin_keys());
    GaloisKeys gk;
    kg.create_galois_keys(std::vector<int>{1}, gk);
    row(n, "galois_key_one_step", gk);
    row(n, "galois_key_one_step_seeded", kg.create_galois_keys(std::vector<int>{1}));
    BatchEncoder be(ctx);
    std::vector<std::uint64_t> v(n);
    for (std::size_t i = 0; i < n; ++i) v[i] = i % 1000;
    Plaintext pt;
    be.encode(v, pt);
    row(n, "plaintext", pt);
    Encryptor enc(ctx, pk, kg.secret_key());
    Ciphertext ct;
    enc.encrypt(pt, ct);
    row(n, "ciphertext", ct);
    row(n, "ciphertext_symmetric_seeded", enc.encrypt_symmetric(pt));
  }
}
