#include "veil/rlwe/params.h"

#include <algorithm>
#include <map>

#include "veil/core/error.h"
#include "veil/core/primes.h"

namespace veil {

std::string to_string(SchemeType s) {
  switch (s) {
    case SchemeType::bfv: return "bfv";
    case SchemeType::bgv: return "bgv";
    case SchemeType::ckks: return "ckks";
  }
  return "?";
}

SchemeType scheme_from_string(const std::string& s) {
  if (s == "bfv") return SchemeType::bfv;
  if (s == "bgv") return SchemeType::bgv;
  if (s == "ckks") return SchemeType::ckks;
  throw InvalidArgument("scheme: expected 'bfv', 'bgv' or 'ckks', got '" + s + "'");
}

MulMethod mul_method_from_string(const std::string& s) {
  if (s == "hps") return MulMethod::hps;
  if (s == "behz") return MulMethod::behz;
  throw InvalidArgument("mul_method: expected 'hps' or 'behz', got '" + s + "'");
}

std::string to_string(MulMethod m) { return m == MulMethod::hps ? "hps" : "behz"; }

std::size_t resolved_alpha(const EncryptionParameters& p) {
  const std::size_t k = p.special_primes;
  const std::size_t L = p.coeff_modulus.size() > k ? p.coeff_modulus.size() - k : 0;
  std::size_t alpha = p.alpha ? p.alpha : std::max<std::size_t>(1, k);
  if (k > 0 && alpha > L) alpha = L;
  return alpha;
}

namespace {
std::uint64_t fnv1a(std::uint64_t h, std::uint64_t v) {
  for (int i = 0; i < 8; ++i) {
    h ^= (v >> (8 * i)) & 0xff;
    h *= 0x100000001b3ull;
  }
  return h;
}
}  // namespace

std::uint64_t parameter_hash(const EncryptionParameters& p) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  h = fnv1a(h, static_cast<std::uint64_t>(p.scheme));
  h = fnv1a(h, p.poly_modulus_degree);
  h = fnv1a(h, p.plain_modulus);
  h = fnv1a(h, p.special_primes);
  h = fnv1a(h, resolved_alpha(p));
  h = fnv1a(h, static_cast<std::uint64_t>(p.mul_method));
  for (u64 q : p.coeff_modulus) h = fnv1a(h, q);
  return h;
}

int max_coeff_modulus_bits(std::size_t n, SecurityLevel level) {
  static const std::map<std::size_t, int> t128 = {{1024, 27},   {2048, 54},    {4096, 109},
                                                  {8192, 218},  {16384, 438},  {32768, 881},
                                                  {65536, 1747}, {131072, 3523}};
  static const std::map<std::size_t, int> t192 = {{1024, 19},   {2048, 37},    {4096, 75},
                                                  {8192, 152},  {16384, 305},  {32768, 611},
                                                  {65536, 1222}, {131072, 2444}};
  static const std::map<std::size_t, int> t256 = {{1024, 14},   {2048, 29},    {4096, 58},
                                                  {8192, 118},  {16384, 237},  {32768, 476},
                                                  {65536, 952}, {131072, 1904}};
  const std::map<std::size_t, int>* t = nullptr;
  switch (level) {
    case SecurityLevel::tc128: t = &t128; break;
    case SecurityLevel::tc192: t = &t192; break;
    case SecurityLevel::tc256: t = &t256; break;
    case SecurityLevel::none: return 1 << 30;
  }
  auto it = t->find(n);
  return it == t->end() ? 0 : it->second;
}

namespace {
// For each bit size b, the count(b) largest NTT-friendly primes below 2^b, handed out in
// ascending order (SEAL's CoeffModulus::Create) or descending order (SEAL's BFVDefault tables).
std::vector<u64> create_ordered(std::size_t n, const std::vector<int>& bit_sizes, bool descending);
}  // namespace

std::vector<u64> CoeffModulus::create(std::size_t n, const std::vector<int>& bit_sizes) {
  return create_ordered(n, bit_sizes, false);
}

namespace {
std::vector<u64> create_ordered(std::size_t n, const std::vector<int>& bit_sizes, bool descending) {
  if (!is_power_of_two(n)) {
    throw InvalidArgument("poly_modulus_degree: expected a power of two, got " + std::to_string(n));
  }
  if (bit_sizes.empty()) throw InvalidArgument("bit_sizes: expected at least one prime size");
  std::map<int, std::size_t> count;
  for (int b : bit_sizes) {
    if (b < 2 || b > 60) {
      throw InvalidArgument("bit_sizes: each prime must have 2..60 bits, got " + std::to_string(b));
    }
    ++count[b];
  }
  std::map<int, std::vector<u64>> pool;
  for (auto& [b, c] : count) pool[b] = generate_ntt_primes(b, n, c);
  std::map<int, std::size_t> used;
  std::vector<u64> out;
  for (int b : bit_sizes) {
    const std::size_t k = used[b]++;
    out.push_back(descending ? pool[b][k] : pool[b][count[b] - 1 - k]);
  }
  return out;
}
}  // namespace

std::vector<u64> CoeffModulus::bfv_default(std::size_t n, SecurityLevel level) {
  if (level != SecurityLevel::tc128 && level != SecurityLevel::none) {
    // Fit the default chain into the stricter bound: equal-size primes under the limit.
    int budget = max_coeff_modulus_bits(n, level);
    if (budget == 0) throw InvalidArgument("poly_modulus_degree: unsupported " + std::to_string(n));
    int primes = std::max(2, (budget + 59) / 60);
    int bits = std::min(60, budget / primes);
    return create_ordered(n, std::vector<int>(primes, bits), true);
  }
  switch (n) {
    case 1024: return create_ordered(n, {27}, true);
    case 2048: return create_ordered(n, {54}, true);
    case 4096: return create_ordered(n, {36, 36, 37}, true);
    case 8192: return create_ordered(n, {43, 43, 44, 44, 44}, true);
    case 16384: return create_ordered(n, {48, 48, 48, 49, 49, 49, 49, 49, 49}, true);
    case 32768: {
      std::vector<int> b(15, 55);
      b.push_back(56);
      return create_ordered(n, b, true);
    }
    case 65536: {
      std::vector<int> b(31, 54);
      b.push_back(56);
      return create_ordered(n, b, true);
    }
    case 131072: {
      std::vector<int> b(59, 58);
      b.push_back(60);
      return create_ordered(n, b, true);
    }
    default:
      throw InvalidArgument("poly_modulus_degree: expected a power of two in 1024..131072, got " +
                            std::to_string(n));
  }
}

u64 PlainModulus::batching(std::size_t n, int bits) {
  if (bits < 2 || bits > 60) {
    throw InvalidArgument("bits: expected 2..60 for a batching plain modulus, got " +
                          std::to_string(bits));
  }
  return generate_ntt_primes(bits, n, 1).front();
}

}  // namespace veil
