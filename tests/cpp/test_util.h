// Shared test helpers (one place, as Lattigo's per-package test utilities): small contexts for
// each scheme, a key set built from an explicit seed, the devices to run on, and word access.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "veil/api/encryptor.h"
#include "veil/api/evaluator.h"
#include "veil/backend/device.h"
#include "veil/rlwe/context.h"
#include "veil/rlwe/keygen.h"
#include "veil/rlwe/params.h"

namespace veil::test {

inline bool have_gpu() { return cuda_device_count() > 0; }
inline Device gpu() { return Device(Device::Kind::cuda, 0); }
/// The CPU, and cuda:0 when a GPU is visible.
inline std::vector<Device> devices() {
  std::vector<Device> d{Device::cpu()};
  if (have_gpu()) d.push_back(gpu());
  return d;
}

/// Small parameters for each scheme (security checks off: these test mechanics, not security).
/// BFV/BGV: N = 4096, Q = 2 x 36-bit primes + one 37-bit special prime, t = 20-bit batching
/// prime (or `plain` when given). CKKS: N = 4096, 50 + 40 + 40 bits + one 50-bit special prime.
inline EncryptionParameters small_params(SchemeType s, std::size_t n = 4096,
                                         std::optional<std::uint64_t> plain = std::nullopt,
                                         std::size_t special_primes = 1, std::size_t alpha = 0) {
  EncryptionParameters p(s);
  p.poly_modulus_degree = n;
  if (s == SchemeType::ckks) {
    p.coeff_modulus = CoeffModulus::create(n, {50, 40, 40, 50});
  } else {
    p.coeff_modulus = CoeffModulus::create(n, {36, 36, 37});
    p.plain_modulus = plain ? *plain : PlainModulus::batching(n, 20);
  }
  if (special_primes != 1) {
    // k special primes of 50 bits after the Q primes (alpha primes per digit).
    std::vector<int> bits(p.coeff_modulus.size() - 1, s == SchemeType::ckks ? 40 : 36);
    for (std::size_t i = 0; i < special_primes; ++i) bits.push_back(50);
    p.coeff_modulus = CoeffModulus::create(n, bits);
  }
  p.special_primes = special_primes;
  p.alpha = alpha;
  return p;
}

inline ContextPtr small_context(SchemeType s, std::size_t n = 4096,
                                std::optional<std::uint64_t> plain = std::nullopt) {
  return Context::create(small_params(s, n, plain), SecurityLevel::none);
}

/// Keys from an explicit seed on `dev`: secret, public, relinearization and Galois keys for
/// rotation steps +-1 and the column swap.
struct KeySet {
  ContextPtr ctx;
  Device dev;
  SecretKey sk;
  PublicKey pk;
  RelinKeys rk;
  GaloisKeys gk;
  KeySet(ContextPtr c, const Device& d, std::uint64_t seed) : ctx(std::move(c)), dev(d) {
    KeyGenerator kg(ctx, dev, seed);
    sk = kg.secret_key();
    pk = kg.create_public_key();
    rk = kg.create_relin_keys();
    gk = kg.create_galois_keys({1, -1}, true);
  }
};

/// All words of an object, on the host.
template <class T>
std::vector<std::uint64_t> words(const T& obj) {
  return obj.buffer().to_host();
}
inline std::vector<std::uint64_t> words(const RelinKeys& k) { return words(k.key()); }

/// Expects that `f` throws InvalidArgument whose message contains `needle`.
template <class F>
void expect_invalid(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected InvalidArgument mentioning '" << needle << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message '" << e.what() << "' does not mention '" << needle << "'";
  }
}

}  // namespace veil::test
