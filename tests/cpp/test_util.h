// Test fixture of the core and backend layers, the base of the per-layer fixtures (as Lattigo's
// per-package test utilities, e.g. schemes/ckks/test_utils.go's NewTestContext):
//   test_util.h   core/backend: word arithmetic oracles (128-bit integers, no Barrett/Shoup),
//                 primality, seeded PRNGs, devices, word access and comparison, error checks;
//   ring_util.h   ring/: the schoolbook negacyclic product, random polynomials;
//   rns_util.h    rns/: big-integer CRT (Boost cpp_int);
//   rlwe_util.h   rlwe/: parameter builders, small contexts, key sets, ciphertext/key comparison;
//   batch_util.h  bfv/, bgv/: plaintext arithmetic mod t on SEAL's 2 x N/2 slot matrix;
//   ckks_util.h   ckks/, circuits/: float64 oracles, precision in bits, a CKKS key set.
// Oracles never call the code under test (DESIGN.md "Tests").
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "veil/backend/device.h"
#include "veil/core/error.h"
#include "veil/core/modarith.h"

namespace veil::test {

using Vec = std::vector<u64>;
using SVec = std::vector<std::int64_t>;

// ---- word arithmetic oracles (plain 128-bit integers) ----------------------------------------

inline u64 mulm(u64 a, u64 b, u64 m) { return static_cast<u64>(static_cast<u128>(a) * b % m); }
inline u64 addm(u64 a, u64 b, u64 m) { return static_cast<u64>((static_cast<u128>(a) + b) % m); }
/// a - b mod m for a, b < m.
inline u64 subm(u64 a, u64 b, u64 m) { return a >= b ? a - b : a + (m - b); }
inline u64 powm(u64 b, u64 e, u64 m) {
  u64 r = 1 % m;
  for (b %= m; e; e >>= 1, b = mulm(b, b, m))
    if (e & 1)
      r = mulm(r, b, m);
  return r;
}

/// Deterministic Miller-Rabin below 2^64 (the first 12 primes are a witness set).
inline bool is_prime(u64 n) {
  if (n < 2)
    return false;
  for (u64 p : {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}) {
    if (n % p == 0)
      return n == p;
  }
  u64 d = n - 1;
  int s = 0;
  while (!(d & 1))
    d >>= 1, ++s;
  for (u64 a : {2, 3, 5, 7, 11, 13, 17, 19, 23, 29, 31, 37}) {
    u64 x = powm(a, d, n);
    if (x == 1 || x == n - 1)
      continue;
    bool witness = true;
    for (int i = 1; i < s && witness; ++i) {
      x = mulm(x, x, n);
      if (x == n - 1)
        witness = false;
    }
    if (witness)
      return false;
  }
  return true;
}

// ---- seeded randomness -----------------------------------------------------------------------

/// A seed derived from the running test's name (and `salt`, e.g. a parameter case's name): each
/// test draws its own reproducible values, whatever the order tests run in.
inline std::uint64_t test_seed(const std::string& salt = "") {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  return std::hash<std::string>{}(std::string(info ? info->name() : "") + salt);
}

/// n words uniform in [0, bound).
inline Vec random_words(std::mt19937_64& rng, std::size_t n, u64 bound) {
  std::uniform_int_distribution<u64> d(0, bound - 1);
  Vec v(n);
  for (auto& x : v)
    x = d(rng);
  return v;
}

/// A test fixture sharing one expensive environment (contexts, keys) across a suite's tests; each
/// test gets `e` and a PRNG seeded from its own name.
template <class Env> class SharedEnvTest : public ::testing::Test {
protected:
  static std::unique_ptr<Env>& env() {
    static std::unique_ptr<Env> e;
    return e;
  }
  static void SetUpTestSuite() {
    if (!env())
      env() = std::make_unique<Env>();
  }
  static void TearDownTestSuite() { env().reset(); }
  void SetUp() override {
    e = env().get();
    rng.seed(test_seed());
  }

  Env* e = nullptr;
  std::mt19937_64 rng;
};

// ---- devices ---------------------------------------------------------------------------------

inline bool have_gpu() { return cuda_device_count() > 0; }
inline Device gpu() { return Device(Device::Kind::cuda, 0); }
/// The CPU, and cuda:0 when a GPU is visible.
inline std::vector<Device> devices() {
  std::vector<Device> d{Device::cpu()};
  if (have_gpu())
    d.push_back(gpu());
  return d;
}

/// The other side of a parity test: cuda:0, or the CPU itself when built with
/// -DVEIL_PARITY_SELF_CHECK (which checks the test's own logic, not the backends).
inline bool have_second_device() {
#ifdef VEIL_PARITY_SELF_CHECK
  return true;
#else
  return have_gpu();
#endif
}
inline Device second_device() {
#ifdef VEIL_PARITY_SELF_CHECK
  return Device::cpu();
#else
  return gpu();
#endif
}

// ---- words -----------------------------------------------------------------------------------

/// All words of an object, on the host.
template <class T> std::vector<std::uint64_t> words(const T& obj) { return obj.buffer().to_host(); }

/// Compares two vectors element by element, reporting the count and the first difference (keys
/// can be gigabytes: no dump); `what` names the elements in the message.
template <class T>
::testing::AssertionResult same_values(const std::vector<T>& got, const std::vector<T>& want,
                                       const char* what = "words") {
  if (got.size() != want.size()) {
    return ::testing::AssertionFailure() << "sizes " << got.size() << " != " << want.size();
  }
  std::size_t bad = 0, first = 0;
  for (std::size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i] && bad++ == 0)
      first = i;
  }
  if (bad == 0)
    return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure()
         << bad << " of " << got.size() << " " << what << " differ; first at " << first << ": "
         << got[first] << " vs " << want[first];
}
inline ::testing::AssertionResult same_word_vectors(const Vec& got, const Vec& want) {
  return same_values(got, want);
}

/// Compares two objects' words (through buffer().to_host()).
template <class A, class B>::testing::AssertionResult same_words(const A& x, const B& y) {
  return same_word_vectors(x.buffer().to_host(), y.buffer().to_host());
}

// ---- errors ----------------------------------------------------------------------------------

/// Expects that `f` throws InvalidArgument whose message contains `needle`.
template <class F> void expect_invalid(F&& f, const std::string& needle) {
  try {
    f();
    ADD_FAILURE() << "expected InvalidArgument mentioning '" << needle << "'";
  } catch (const InvalidArgument& e) {
    EXPECT_NE(std::string(e.what()).find(needle), std::string::npos)
        << "message '" << e.what() << "' does not mention '" << needle << "'";
  }
}

} // namespace veil::test

/// Runs `stmt`, requires an exception of exactly the family `Type` (not merely a std::exception)
/// and a message containing `word`.
#define EXPECT_THROW_NAMING(stmt, Type, word)                                                      \
  do {                                                                                             \
    bool caught_ = false;                                                                          \
    std::string msg_;                                                                              \
    try {                                                                                          \
      stmt;                                                                                        \
    } catch (const Type& ex_) {                                                                    \
      caught_ = true;                                                                              \
      msg_ = ex_.what();                                                                           \
    } catch (const std::exception& ex_) {                                                          \
      ADD_FAILURE() << #stmt " threw the wrong type (want " #Type "): " << ex_.what();             \
    }                                                                                              \
    EXPECT_TRUE(caught_) << #stmt " did not throw " #Type;                                         \
    if (caught_) {                                                                                 \
      EXPECT_NE(msg_.find(word), std::string::npos)                                                \
          << #stmt ": message \"" << msg_ << "\" does not name " << word;                          \
    }                                                                                              \
  } while (0)
