// Host-side precomputation for the HPS scale-and-round (exact big integers).
#include <string>

#include "veil/rns/hps.h"
#include "veil/rns/host_util.h"

namespace veil {

using rns_host::cpp_int;

HpsScaleAndRoundQR::HpsScaleAndRoundQR(const RnsBase& q, const RnsBase& r, u64 t) : q_(q), r_(r) {
  rns_host::check_bases(q, r, "HpsScaleAndRoundQR", "q", "r");
  rns_host::check_coprime(r, "HpsScaleAndRoundQR", "r");
  if (t < 2) throw InvalidArgument("HpsScaleAndRoundQR: plain modulus 't' must be >= 2");
  const std::size_t kq = q.size(), kr = r.size();
  const cpp_int Q = rns_host::product(q), R = rns_host::product(r), QR = Q * R;
  std::vector<u64> theta(2 * kq), omega(kr * kq), lambda(kr), lambda_sh(kr);
  for (std::size_t i = 0; i < kq; ++i) {
    const u64 qi = q[i].value;
    // t R [(QR/q_i)^-1]_{q_i} / q_i = omega_i + theta_i.
    const u64 inv = inv_mod(rns_host::mod_word(QR / qi, qi), qi);
    const cpp_int num = cpp_int(t) * R * inv;
    const cpp_int om = num / qi;
    rns_host::fixed_point_fraction(num % qi, cpp_int(qi), theta[2 * i], theta[2 * i + 1]);
    for (std::size_t j = 0; j < kr; ++j) omega[j * kq + i] = rns_host::mod_word(om, r[j].value);
  }
  for (std::size_t j = 0; j < kr; ++j) {
    const u64 rj = r[j].value;
    // lambda_j = t (R/r_j) [(QR/r_j)^-1]_{r_j} mod r_j.
    const u64 inv = inv_mod(rns_host::mod_word(QR / rj, rj), rj);
    const cpp_int lam = cpp_int(t) * (R / rj) * inv;
    lambda[j] = rns_host::mod_word(lam, rj);
    lambda_sh[j] = shoup_quotient(lambda[j], rj);
  }
  theta_ = DeviceTable<u64>(std::move(theta));
  omega_ = DeviceTable<u64>(std::move(omega));
  lambda_ = DeviceTable<u64>(std::move(lambda));
  lambda_shoup_ = DeviceTable<u64>(std::move(lambda_sh));
}

HpsScaleAndRoundQ::HpsScaleAndRoundQ(const RnsBase& q, u64 t) : q_(q) {
  if (q.size() == 0) throw InvalidArgument("HpsScaleAndRoundQ: base 'q' is empty");
  rns_host::check_coprime(q, "HpsScaleAndRoundQ", "q");
  if (t < 2 || t >= (u64(1) << 61))
    throw InvalidArgument("HpsScaleAndRoundQ: plain modulus 't' must be in [2, 2^61), got " +
                          std::to_string(t));
  const std::size_t kq = q.size();
  const cpp_int Q = rns_host::product(q);
  if (boost::multiprecision::gcd(Q, cpp_int(t)) != 1)
    throw InvalidArgument("HpsScaleAndRoundQ: plain modulus 't' must be co-prime to Q");
  std::vector<u64> theta(2 * kq), omega(kq);
  for (std::size_t i = 0; i < kq; ++i) {
    const u64 qi = q[i].value;
    // t [(Q/q_i)^-1]_{q_i} / q_i = omega_i + theta_i (omega_i < t).
    const u64 inv = inv_mod(rns_host::mod_word(Q / qi, qi), qi);
    const cpp_int num = cpp_int(t) * inv;
    omega[i] = rns_host::mod_word(num / qi, t);
    rns_host::fixed_point_fraction(num % qi, cpp_int(qi), theta[2 * i], theta[2 * i + 1]);
  }
  t_ = DeviceTable<Modulus>(std::vector<Modulus>{Modulus(t)});
  theta_ = DeviceTable<u64>(std::move(theta));
  omega_ = DeviceTable<u64>(std::move(omega));
}

}  // namespace veil
