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
  if (p.alpha) return p.alpha;  // explicit: Context::create rejects alpha > L
  std::size_t alpha = std::max<std::size_t>(1, k);
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
  // Rescale blocks change what rescaling does; the default (none) leaves earlier hashes as they
  // were.
  if (!p.rescale_groups.empty()) {
    h = fnv1a(h, 0x7265736361ull);  // "resca"
    for (std::size_t g : p.rescale_groups) h = fnv1a(h, g);
  }
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
void check_degree(std::size_t n);
std::vector<u64> create_ordered(std::size_t n, const std::vector<int>& bit_sizes, bool descending) {
  check_degree(n);
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
  // SEAL 4.x's BFVDefault tables (util/globals.cpp), value for value, N = 2^10..2^15.
  static const std::map<std::size_t, std::vector<u64>> t128 = {
      {1024, {132120577ull}},
      {2048, {18014398492704769ull}},
      {4096, {68719403009ull, 68719230977ull, 137438822401ull}},
      {8192, {8796092858369ull, 8796092792833ull, 17592186028033ull, 17592185438209ull,
           17592184717313ull}},
      {16384, {281474976546817ull, 281474976317441ull, 281474975662081ull, 562949952798721ull,
           562949952700417ull, 562949952274433ull, 562949951979521ull, 562949951881217ull,
           562949951619073ull}},
      {32768, {36028797017456641ull, 36028797014704129ull, 36028797014573057ull,
           36028797014376449ull, 36028797013327873ull, 36028797013000193ull,
           36028797012606977ull, 36028797010444289ull, 36028797009985537ull,
           36028797005856769ull, 36028797005529089ull, 36028797005135873ull,
           36028797003694081ull, 36028797003563009ull, 36028797001138177ull,
           72057594037338113ull}},
  };
  static const std::map<std::size_t, std::vector<u64>> t192 = {
      {1024, {520193ull}},
      {2048, {137438691329ull}},
      {4096, {33538049ull, 33349633ull, 33292289ull}},
      {8192, {274877562881ull, 274877202433ull, 274877153281ull, 274877022209ull}},
      {16384, {1125899904679937ull, 1125899903991809ull, 1125899903827969ull,
           1125899903795201ull, 1125899903500289ull, 1125899903107073ull}},
      {32768, {18014398506729473ull, 18014398505943041ull, 18014398499848193ull,
           18014398498799617ull, 18014398498275329ull, 36028797017456641ull,
           36028797014704129ull, 36028797014573057ull, 36028797014376449ull,
           36028797013327873ull, 36028797013000193ull}},
  };
  static const std::map<std::size_t, std::vector<u64>> t256 = {
      {1024, {12289ull}},
      {2048, {536608769ull}},
      {4096, {288230376135196673ull}},
      {8192, {549755731969ull, 549755486209ull, 1099511480321ull}},
      {16384, {140737488125953ull, 140737487306753ull, 140737486716929ull, 281474976546817ull,
           281474976317441ull}},
      {32768, {4503599626321921ull, 9007199252840449ull, 9007199252119553ull,
           9007199251660801ull, 9007199250874369ull, 9007199250481153ull,
           9007199250087937ull, 9007199249891329ull, 9007199248777217ull}},
  };
  const std::map<std::size_t, std::vector<u64>>* table = nullptr;
  switch (level) {
    case SecurityLevel::none:
    case SecurityLevel::tc128: table = &t128; break;
    case SecurityLevel::tc192: table = &t192; break;
    case SecurityLevel::tc256: table = &t256; break;
  }
  if (auto it = table->find(n); it != table->end()) return it->second;
  if (n == 65536 || n == 131072) {
    if (level == SecurityLevel::tc128 || level == SecurityLevel::none) {
      // Veil's choice within the 128-bit bound (SEAL has no table beyond 2^15).
      std::vector<int> b(n == 65536 ? 31 : 59, n == 65536 ? 54 : 58);
      b.push_back(n == 65536 ? 56 : 60);
      return create_ordered(n, b, true);
    }
    // Equal-size primes under the stricter bound.
    const int budget = max_coeff_modulus_bits(n, level);
    const int primes = std::max(2, (budget + 59) / 60);
    return create_ordered(n, std::vector<int>(primes, std::min(60, budget / primes)), true);
  }
  throw InvalidArgument("poly_modulus_degree: expected a power of two in 1024..131072, got " +
                        std::to_string(n));
}

namespace {
// SEAL's range of poly_modulus_degree (2..2^17); also keeps 2N from overflowing the prime search.
void check_degree(std::size_t n) {
  if (!is_power_of_two(n) || n < 2 || n > 131072) {
    throw InvalidArgument("poly_modulus_degree: expected a power of two in 2..131072, got " +
                          std::to_string(n));
  }
}
}  // namespace

u64 PlainModulus::batching(std::size_t n, int bits) {
  check_degree(n);
  if (bits < 2 || bits > 60) {
    throw InvalidArgument("bits: expected 2..60 for a batching plain modulus, got " +
                          std::to_string(bits));
  }
  return generate_ntt_primes(bits, n, 1).front();
}

}  // namespace veil
