#include "veil/bfv/bfv_tables.h"

#include <vector>

#include "veil/core/error.h"
#include "veil/core/primes.h"

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
  const BfvAuxPrimes& aux = bfv_aux_primes(ctx);
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
  if (level > 0) t->mod_switch = ModDown(ctx.base_q(level - 1), q.slice(level, 1));
  t->noise = make_noise_tables(ctx, level, params.plain_modulus);
  return t;
}

// BFV's BEHZ tools work on 61-bit primes and m~ = 2^32, so 32-bit words need HPS.
std::string bfv_word32_obstacle(const EncryptionParameters& p) {
  if (p.mul_method == MulMethod::behz) {
    return "BFV's BEHZ variant needs 64-bit words (use mul_method hps)";
  }
  return "";
}

std::unique_ptr<SchemeContextTables> build_bfv_context(const EncryptionParameters& p,
                                                       std::size_t num_q, int word_bits) {
  if (!p.rescale_groups.empty()) {
    throw InvalidArgument("rescale_groups: rescaling by blocks of primes is a CKKS option (BFV "
                          "and BGV switch modulus one prime at a time)");
  }
  auto aux = std::make_unique<BfvAuxPrimes>();
  const std::size_t n = p.poly_modulus_degree;
  std::vector<u64> exclude = p.coeff_modulus;
  exclude.push_back(p.plain_modulus);
  if (p.mul_method == MulMethod::hps) {
    // R must hold round(t * (ct1 x ct2) / Q) exactly: log2 R >= log2 Q + log2 N + log2 t + 3.
    int q_bits = 0;
    for (std::size_t i = 0; i < num_q; ++i) q_bits += Modulus(p.coeff_modulus[i]).bit_count;
    // 60-bit primes, or 30-bit ones with 32-bit words.
    const int aux_bits = word_bits == 32 ? 30 : 60;
    const int need = q_bits + log2_exact(n) + Modulus(p.plain_modulus).bit_count + 3;
    const std::size_t count = static_cast<std::size_t>((need + aux_bits - 1) / aux_bits);
    aux->hps = generate_ntt_primes(aux_bits, n, count, exclude);
  } else {
    // Bsk: |Q| + 1 primes of 61 bits, plus gamma (SEAL's choice of sizes).
    auto primes = generate_ntt_primes(61, n, num_q + 2, exclude);
    aux->gamma = primes.back();
    primes.pop_back();
    aux->bsk = primes;
  }
  aux->hps_first_id = p.coeff_modulus.size();
  aux->bsk_first_id = p.coeff_modulus.size() + aux->hps.size();
  aux->aux_ntt_primes = aux->hps;
  aux->aux_ntt_primes.insert(aux->aux_ntt_primes.end(), aux->bsk.begin(), aux->bsk.end());
  return aux;
}

}  // namespace

const BfvAuxPrimes& bfv_aux_primes(const Context& ctx) {
  return scheme_context_tables_of<BfvAuxPrimes>(ctx, SchemeType::bfv, "BFV");
}

const BfvTables& bfv_tables(const Context& ctx, std::size_t level) {
  return scheme_tables_of<BfvTables>(ctx, SchemeType::bfv, "BFV", level, &build_bfv_tables);
}

const SchemeDefinition& bfv_definition() {
  static const SchemeDefinition def{"BFV", /*ntt_form=*/false, /*has_plain_modulus=*/true,
                                    /*errors_times_plain=*/false, &bfv_word32_obstacle,
                                    &build_bfv_context, SchemeType::bfv};
  return def;
}

}  // namespace veil
