#include "veil/ckks/ckks_tables.h"

#include <cmath>
#include <string>

#include "veil/core/error.h"
#include "veil/rlwe/keyswitch.h"

namespace veil {

namespace {

std::unique_ptr<SchemeLevelTables> build_ckks_tables(const Context& ctx, std::size_t level) {
  auto t = std::make_unique<CkksTables>();
  const std::size_t start = ckks_context_tables(ctx).group_start[level];
  const RnsBase& q = ctx.base_q(level);
  if (start > 0) {
    const std::size_t target = start - 1;
    const RnsBase block = q.slice(target + 1, level - target);
    t->rescale = ModDownNtt(ctx.base_q(target), block, 0);
    if (ctx.num_p() > 0) {
      t->rescale_down = ModDownNtt(ctx.base_q(target), block.concat(ctx.base_p()), 0);
    }
  } else if (level < ctx.max_level()) {
    const RnsBase& top = ctx.base_q(ctx.max_level());
    t->raise = BaseConverter(q, top.slice(level + 1, ctx.max_level() - level));
  }
  return t;
}

std::unique_ptr<SchemeContextTables> build_ckks_context(const EncryptionParameters& p,
                                                        std::size_t num_q, int /*word_bits*/) {
  auto t = std::make_unique<CkksContextTables>();
  t->groups = p.rescale_groups;
  if (!t->groups.empty()) {
    std::size_t sum = 0;
    for (std::size_t g : t->groups) {
      if (g == 0 || g > num_q) {
        throw InvalidArgument("rescale_groups: expected block sizes in 1.." +
                              std::to_string(num_q) + ", got " + std::to_string(g));
      }
      sum += g;
    }
    if (sum != num_q) {
      throw InvalidArgument("rescale_groups: the block sizes sum to " + std::to_string(sum) +
                            " but Q has " + std::to_string(num_q) + " primes");
    }
  } else {
    t->groups.assign(num_q, 1);
  }
  std::size_t first = 0;
  for (std::size_t g : t->groups) {
    for (std::size_t i = 0; i < g; ++i) t->group_start.push_back(first);
    first += g;
  }
  return t;
}

}  // namespace

const CkksContextTables& ckks_context_tables(const Context& ctx) {
  return scheme_context_tables_of<CkksContextTables>(ctx, SchemeType::ckks, "CKKS");
}

const CkksTables& ckks_tables(const Context& ctx, std::size_t level) {
  return scheme_tables_of<CkksTables>(ctx, SchemeType::ckks, "CKKS", level, &build_ckks_tables);
}

void check_ckks_scale(const Context& ctx, double scale, std::size_t level, const char* what) {
  if (!std::isfinite(scale)) {
    throw InvalidArgument(std::string(what) + ": expected a finite scale, got " +
                          std::to_string(scale));
  }
  if (!(scale >= 1.0)) {
    throw InvalidArgument(std::string(what) + ": scale 2^" + std::to_string(std::log2(scale)) +
                          " is below 1 (no precision left; rescale less often or encode at a "
                          "larger scale)");
  }
  double bits = 0;
  for (const Modulus& m : ctx.base_q(level).moduli()) {
    bits += std::log2(static_cast<double>(m.value));
  }
  if (std::log2(scale) >= bits) {
    throw InvalidArgument(std::string(what) + ": scale 2^" + std::to_string(std::log2(scale)) +
                          " is not below Q at level " + std::to_string(level) + " (2^" +
                          std::to_string(bits) + ")");
  }
}

void key_switch_rescale_down(const Context& ctx, const Device& dev, std::size_t level,
                             ConstWordPtr in, WordPtr out, std::size_t num_polys) {
  if (ctx.scheme() != SchemeType::ckks) {
    throw InvalidArgument(std::string("key_switch_rescale_down: the extended basis Q_l ∪ P is "
                                      "not available to ") +
                          ctx.scheme_definition().name);
  }
  ckks::rescale_target(ctx, level);  // throws naming `encrypted` in q_0's block
  key_switch_mod_down(ctx, dev, level, in, out, num_polys, &ckks_tables(ctx, level).rescale_down);
}

const SchemeDefinition& ckks_definition() {
  static const SchemeDefinition def{"CKKS", /*ntt_form=*/true, /*has_plain_modulus=*/false,
                                    /*errors_times_plain=*/false, nullptr, &build_ckks_context,
                                    SchemeType::ckks};
  return def;
}

namespace ckks {

std::size_t rescale_target(const Context& ctx, std::size_t level) {
  if (level > ctx.max_level()) {
    throw InvalidArgument("level: " + std::to_string(level) + " exceeds the maximum level " +
                          std::to_string(ctx.max_level()));
  }
  const std::size_t start =
      ctx.scheme() == SchemeType::ckks ? ckks_context_tables(ctx).group_start[level] : level;
  if (start == 0) {
    throw InvalidArgument("encrypted: is at level " + std::to_string(level) +
                          ", in the last block of primes (q_0's); it cannot be rescaled further");
  }
  return start - 1;
}

std::vector<std::size_t> rescale_groups(const Context& ctx) {
  if (ctx.scheme() == SchemeType::ckks) return ckks_context_tables(ctx).groups;
  return std::vector<std::size_t>(ctx.num_q(), 1);
}

}  // namespace ckks

}  // namespace veil
