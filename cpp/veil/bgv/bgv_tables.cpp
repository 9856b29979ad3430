#include "veil/bgv/bgv_tables.h"

#include <string>

#include "veil/core/error.h"

namespace veil {

namespace {

std::unique_ptr<SchemeLevelTables> build_bgv_tables(const Context& ctx, std::size_t level) {
  auto t = std::make_unique<BgvTables>();
  const RnsBase& q = ctx.base_q(level);
  t->to_plain = BaseConverter(q, RnsBase({ctx.plain_mod()}));
  if (level > 0) {
    t->mod_switch = ModDownNtt(ctx.base_q(level - 1), q.slice(level, 1), ctx.plain_modulus());
  }
  t->noise = make_noise_tables(ctx, level, 1);
  return t;
}

std::unique_ptr<SchemeContextTables> build_bgv_context(const EncryptionParameters& p,
                                                       std::size_t /*num_q*/, int /*word_bits*/) {
  if (p.special_primes > 31) {
    throw InvalidArgument("special_primes: BGV supports at most 31 special primes, got " +
                          std::to_string(p.special_primes));
  }
  if (!p.rescale_groups.empty()) {
    throw InvalidArgument("rescale_groups: rescaling by blocks of primes is a CKKS option (BFV "
                          "and BGV switch modulus one prime at a time)");
  }
  return nullptr;
}

}  // namespace

const BgvTables& bgv_tables(const Context& ctx, std::size_t level) {
  return scheme_tables_of<BgvTables>(ctx, SchemeType::bgv, "BGV", level, &build_bgv_tables);
}

const SchemeDefinition& bgv_definition() {
  static const SchemeDefinition def{"BGV", /*ntt_form=*/true, /*has_plain_modulus=*/true,
                                    /*errors_times_plain=*/true, nullptr, &build_bgv_context,
                                    SchemeType::bgv};
  return def;
}

}  // namespace veil
