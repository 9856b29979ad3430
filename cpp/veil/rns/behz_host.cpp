// Host-side precomputation for the BEHZ tools (exact big integers).
#include <string>

#include "veil/rns/behz.h"
#include "veil/rns/host_util.h"

namespace veil {

using rns_host::cpp_int;

namespace {
constexpr u64 kMTilde = u64(1) << 32;  // SEAL's m_tilde
}

BehzTools::BehzTools(const RnsBase& q, const RnsBase& bsk, u64 gamma, u64 t)
    : q_(q), bsk_(bsk), t_(t), gamma_(gamma) {
  const std::string what = "BehzTools";
  rns_host::check_bases(q, bsk, what, "q", "bsk");
  if (bsk.size() < 2)
    throw InvalidArgument("BehzTools: base 'bsk' needs at least 2 moduli (B then m_sk)");
  rns_host::check_coprime(bsk, what, "bsk");
  const Modulus t_mod(t), gamma_mod(gamma);  // throw InvalidArgument outside [2, 2^61)
  const cpp_int Q = rns_host::product(q);
  if (boost::multiprecision::gcd(Q, cpp_int(t)) != 1)
    throw InvalidArgument("BehzTools: plain modulus 't' must be co-prime to Q");
  if (boost::multiprecision::gcd(Q, cpp_int(gamma)) != 1)
    throw InvalidArgument("BehzTools: 'gamma' must be co-prime to Q (and not one of its primes)");
  if (std::gcd(gamma, t) != 1)
    throw InvalidArgument("BehzTools: 'gamma' must be co-prime to the plain modulus 't'");

  const std::size_t kq = q.size(), kbsk = bsk.size(), kb = kbsk - 1;
  b_ = bsk.slice(0, kb);
  const Modulus msk = bsk[kb];
  bsk_mtilde_ = bsk.concat(RnsBase(std::vector<Modulus>{Modulus(kMTilde)}));
  t_gamma_ = RnsBase(std::vector<Modulus>{t_mod, gamma_mod});
  msk_q_ = RnsBase(std::vector<Modulus>{msk}).concat(q);

  std::vector<u64> mt_mod_q(kq), tg_mod_q(kq);
  for (std::size_t i = 0; i < kq; ++i) {
    mt_mod_q[i] = reduce_word(kMTilde, q[i]);
    tg_mod_q[i] = mul_mod(reduce_word(t, q[i]), reduce_word(gamma, q[i]), q[i]);
  }
  q_to_bsk_mtilde_ = detail::FastConvTables(q, bsk_mtilde_, mt_mod_q, "BehzTools");
  q_to_bsk_ = detail::FastConvTables(q, bsk_, {}, "BehzTools");
  b_to_msk_q_ = detail::FastConvTables(b_, msk_q_, {}, "BehzTools");
  q_to_t_gamma_ = detail::FastConvTables(q, t_gamma_, tg_mod_q, "BehzTools");

  // -Q^-1 mod m_tilde (Q is odd).
  const cpp_int mt(kMTilde);
  const u64 q_mt = rns_host::mod_word(Q, kMTilde);
  const u64 q_inv_mt = static_cast<u64>(boost::multiprecision::powm(cpp_int(q_mt), mt / 2 - 1, mt));
  neg_inv_q_mod_mtilde_ = (kMTilde - q_inv_mt) % kMTilde;

  std::vector<u64> q_b(kbsk), q_b_sh(kbsk), mt_inv(kbsk), mt_inv_sh(kbsk), q_inv(kbsk),
      q_inv_sh(kbsk);
  for (std::size_t j = 0; j < kbsk; ++j) {
    const u64 bj = bsk[j].value;
    q_b[j] = rns_host::mod_word(Q, bj);
    q_b_sh[j] = shoup_quotient(q_b[j], bj);
    mt_inv[j] = inv_mod(kMTilde % bj, bj);
    mt_inv_sh[j] = shoup_quotient(mt_inv[j], bj);
    q_inv[j] = inv_mod(q_b[j], bj);
    q_inv_sh[j] = shoup_quotient(q_inv[j], bj);
  }
  q_mod_bsk_ = DeviceTable<u64>(std::move(q_b));
  q_mod_bsk_shoup_ = DeviceTable<u64>(std::move(q_b_sh));
  mtilde_inv_bsk_ = DeviceTable<u64>(std::move(mt_inv));
  mtilde_inv_bsk_shoup_ = DeviceTable<u64>(std::move(mt_inv_sh));
  q_inv_bsk_ = DeviceTable<u64>(std::move(q_inv));
  q_inv_bsk_shoup_ = DeviceTable<u64>(std::move(q_inv_sh));

  const cpp_int B = rns_host::product(b_);
  std::vector<u64> b_q(kq), b_q_sh(kq);
  for (std::size_t i = 0; i < kq; ++i) {
    b_q[i] = rns_host::mod_word(B, q[i].value);
    b_q_sh[i] = shoup_quotient(b_q[i], q[i].value);
  }
  b_mod_q_ = DeviceTable<u64>(std::move(b_q));
  b_mod_q_shoup_ = DeviceTable<u64>(std::move(b_q_sh));
  b_inv_msk_ = inv_mod(rns_host::mod_word(B, msk.value), msk.value);
  b_inv_msk_shoup_ = shoup_quotient(b_inv_msk_, msk.value);

  neg_inv_q_mod_t_ = neg_mod(inv_mod(rns_host::mod_word(Q, t), t), t);
  neg_inv_q_mod_gamma_ = neg_mod(inv_mod(rns_host::mod_word(Q, gamma), gamma), gamma);
  gamma_inv_mod_t_ = inv_mod(gamma % t, t);
}

}  // namespace veil
