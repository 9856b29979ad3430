#include "veil/bgv/bgv_tables.h"

#include "veil/core/error.h"

namespace veil {

namespace {

std::unique_ptr<SchemeLevelTables> build_bgv_tables(const Context& ctx, std::size_t level) {
  auto t = std::make_unique<BgvTables>();
  t->to_plain = BaseConverter(ctx.base_q(level), RnsBase({ctx.plain_mod()}));
  return t;
}

}  // namespace

const BgvTables& bgv_tables(const Context& ctx, std::size_t level) {
  return scheme_tables_of<BgvTables>(ctx, SchemeType::bgv, "BGV", level, &build_bgv_tables);
}

}  // namespace veil
