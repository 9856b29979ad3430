#include "veil/bfv/bfv_tables.h"

#include <vector>

#include "veil/core/error.h"

namespace veil {

// Defined in bfv_tables_host.cpp (Boost.Multiprecision).
void compute_bfv_scaling(const std::vector<u64>& q, u64 t, std::vector<u64>& delta_mod_q,
                         u64& q_mod_t);

namespace {

// An RNS base over the context's auxiliary primes `primes`, whose NTT tables start at index
// `first_id` of ctx.ntt().
RnsBase aux_base(const std::vector<u64>& primes, std::size_t first_id) {
  std::vector<Modulus> m;
  std::vector<u32> ids;
  for (std::size_t i = 0; i < primes.size(); ++i) {
    m.emplace_back(primes[i]);
    ids.push_back(static_cast<u32>(first_id + i));
  }
  return RnsBase(std::move(m), std::move(ids));
}

std::unique_ptr<SchemeLevelTables> build_bfv_tables(const Context& ctx, std::size_t level) {
  auto t = std::make_unique<BfvTables>();
  const EncryptionParameters& params = ctx.params();
  const std::vector<u64>& cm = params.coeff_modulus;
  std::vector<u64> qv(cm.begin(), cm.begin() + level + 1);
  std::vector<u64> delta;
  compute_bfv_scaling(qv, params.plain_modulus, delta, t->q_mod_t);
  t->delta = DeviceTable<u64>(std::move(delta));
  const RnsBase& q = ctx.base_q(level);
  const BfvAuxPrimes& aux = ctx.bfv_aux_primes();
  if (!aux.hps.empty()) {
    // R sized for the top level is large enough at every level below it.
    t->base_r = aux_base(aux.hps, aux.hps_first_id);
    t->base_qr = q.concat(t->base_r);
    t->q_to_r = BaseConverter(q, t->base_r);
    t->r_to_q = BaseConverter(t->base_r, q);
    t->scale_qr = HpsScaleAndRoundQR(q, t->base_r, params.plain_modulus);
  }
  if (!aux.bsk.empty()) {
    // Bsk = |Q_l| + 1 primes, as at the top level (SEAL's sizes).
    const std::size_t count = level + 2;
    std::vector<u64> bsk_primes(aux.bsk.begin(), aux.bsk.begin() + count);
    RnsBase bsk = aux_base(bsk_primes, aux.bsk_first_id);
    t->base_q_bsk = q.concat(bsk);
    t->behz = std::make_unique<BehzTools>(q, bsk, aux.gamma, params.plain_modulus);
  }
  t->scale_q = HpsScaleAndRoundQ(q, params.plain_modulus);
  return t;
}

}  // namespace

const BfvTables& bfv_tables(const Context& ctx, std::size_t level) {
  return scheme_tables_of<BfvTables>(ctx, SchemeType::bfv, "BFV", level, &build_bfv_tables);
}

}  // namespace veil
