// Scheme-owned per-level tables (Context::scheme_tables): BFV's (bfv/bfv_tables.h) and BGV's
// (bgv/bgv_tables.h) tables are built once per level, on first use, cached in the context, and
// refused for contexts of another scheme or levels above the top, with messages that name the
// argument (DESIGN.md "Errors").
#include <gtest/gtest.h>

#include <cstddef>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "rlwe_util.h"
#include "veil/bfv/bfv_tables.h"
#include "veil/bgv/bgv_tables.h"
#include "veil/ckks/ckks_tables.h"
#include "veil/core/error.h"
#include "veil/rlwe/context.h"

namespace {

using veil::BfvTables;
using veil::BgvTables;
using veil::Context;
using veil::ContextPtr;
using veil::InvalidArgument;
using veil::MulMethod;
using veil::SchemeLevelTables;
using veil::SchemeType;
using veil::SecurityLevel;

// Runs `stmt`, requires veil::InvalidArgument with a message containing `word`.
#define EXPECT_INVALID_NAMING(stmt, word)                                                          \
  do {                                                                                             \
    try {                                                                                          \
      stmt;                                                                                        \
      ADD_FAILURE() << "no exception from " #stmt;                                                 \
    } catch (const InvalidArgument& e_) {                                                          \
      EXPECT_NE(std::string(e_.what()).find(word), std::string::npos)                              \
          << "message does not name '" << (word) << "': " << e_.what();                            \
    }                                                                                              \
  } while (0)

ContextPtr bfv_context(MulMethod method) {
  auto p = veil::test::small_params(SchemeType::bfv);
  p.mul_method = method;
  return Context::create(p, SecurityLevel::none);
}

std::unique_ptr<SchemeLevelTables> other_builder(const Context&, std::size_t) {
  return std::make_unique<SchemeLevelTables>();
}

TEST(SchemeTables, BfvHpsTablesPerLevel) {
  const ContextPtr ctx = bfv_context(MulMethod::hps);
  const auto& aux = veil::bfv_aux_primes(*ctx);
  ASSERT_FALSE(aux.hps.empty());
  EXPECT_TRUE(aux.bsk.empty());
  EXPECT_EQ(aux.gamma, 0u);
  EXPECT_EQ(aux.hps_first_id, ctx->params().coeff_modulus.size());
  for (std::size_t level = 0; level <= ctx->max_level(); ++level) {
    const BfvTables& t = veil::bfv_tables(*ctx, level);
    EXPECT_EQ(&t, &veil::bfv_tables(*ctx, level)) << "built twice at level " << level;
    EXPECT_EQ(t.delta.size(), level + 1);
    EXPECT_EQ(t.base_r.size(), aux.hps.size());
    EXPECT_EQ(t.base_qr.size(), level + 1 + aux.hps.size());
    EXPECT_EQ(t.base_r.ntt_ids()[0], aux.hps_first_id);
    EXPECT_EQ(t.base_r[0].value, aux.hps[0]);
    EXPECT_EQ(t.behz, nullptr);
  }
  EXPECT_EQ(&veil::bfv_tables(*ctx), &veil::bfv_tables(*ctx, ctx->max_level()));
}

TEST(SchemeTables, BfvBehzTablesPerLevel) {
  const ContextPtr ctx = bfv_context(MulMethod::behz);
  const auto& aux = veil::bfv_aux_primes(*ctx);
  EXPECT_TRUE(aux.hps.empty());
  ASSERT_EQ(aux.bsk.size(), ctx->num_q() + 1);
  EXPECT_NE(aux.gamma, 0u);
  EXPECT_EQ(aux.bsk_first_id, ctx->params().coeff_modulus.size());
  for (std::size_t level = 0; level <= ctx->max_level(); ++level) {
    const BfvTables& t = veil::bfv_tables(*ctx, level);
    ASSERT_NE(t.behz, nullptr);
    EXPECT_EQ(t.behz->base_bsk().size(), level + 2);
    EXPECT_EQ(t.base_q_bsk.size(), 2 * level + 3);
    EXPECT_EQ(t.base_r.size(), 0u);
  }
}

TEST(SchemeTables, BgvTablesPerLevel) {
  const ContextPtr ctx = veil::test::small_context(SchemeType::bgv);
  // BGV has no context-wide tables (no auxiliary primes) and refuses BFV's.
  EXPECT_EQ(ctx->scheme_context_tables(), nullptr);
  veil::test::expect_invalid([&] { veil::bfv_aux_primes(*ctx); }, "context");
  EXPECT_EQ(ctx->ntt().num_primes(), ctx->params().coeff_modulus.size());
  for (std::size_t level = 0; level <= ctx->max_level(); ++level) {
    const BgvTables& t = veil::bgv_tables(*ctx, level);
    EXPECT_EQ(&t, &veil::bgv_tables(*ctx, level));
  }
}

TEST(SchemeTables, WrongSchemeNamesContext) {
  const ContextPtr bgv = veil::test::small_context(SchemeType::bgv);
  const ContextPtr ckks = veil::test::small_context(SchemeType::ckks);
  const ContextPtr bfv = bfv_context(MulMethod::hps);
  EXPECT_INVALID_NAMING(veil::bfv_tables(*bgv, 0), "context");
  EXPECT_INVALID_NAMING(veil::bfv_tables(*ckks), "context");
  EXPECT_INVALID_NAMING(veil::bgv_tables(*bfv, 0), "context");
  EXPECT_INVALID_NAMING(veil::bgv_tables(*ckks, 0), "context");
}

TEST(SchemeTables, LevelAboveTopNamesLevel) {
  const ContextPtr bfv = bfv_context(MulMethod::hps);
  const ContextPtr bgv = veil::test::small_context(SchemeType::bgv);
  EXPECT_INVALID_NAMING(veil::bfv_tables(*bfv, bfv->max_level() + 1), "level");
  EXPECT_INVALID_NAMING(veil::bgv_tables(*bgv, bgv->max_level() + 1), "level");
  EXPECT_INVALID_NAMING(bfv->scheme_tables(bfv->num_q(), &other_builder), "level");
}

TEST(SchemeTables, OneBuilderPerSlot) {
  const ContextPtr ctx = bfv_context(MulMethod::hps);
  veil::bfv_tables(*ctx, 0);
  EXPECT_INVALID_NAMING(ctx->scheme_tables(0, &other_builder), "build");
  EXPECT_INVALID_NAMING(ctx->scheme_tables(0, nullptr), "build");
  // The cache serves any one builder per slot (here before CKKS's own asks for it).
  const ContextPtr ckks = veil::test::small_context(SchemeType::ckks);
  const SchemeLevelTables& t = ckks->scheme_tables(1, &other_builder);
  EXPECT_EQ(&t, &ckks->scheme_tables(1, &other_builder));
}

TEST(SchemeTables, CkksTablesPerLevel) {
  veil::EncryptionParameters p(SchemeType::ckks);
  p.poly_modulus_degree = 4096;
  p.coeff_modulus = veil::CoeffModulus::create(4096, {30, 30, 30, 30, 30, 30});
  p.special_primes = 1;
  p.rescale_groups = {2, 1, 2};
  const ContextPtr ctx = Context::create(p, SecurityLevel::none);
  const veil::CkksContextTables& ct = veil::ckks_context_tables(*ctx);
  EXPECT_EQ(ct.groups, (std::vector<std::size_t>{2, 1, 2}));
  EXPECT_EQ(ct.group_start, (std::vector<std::size_t>{0, 0, 2, 3, 3}));
  EXPECT_EQ(veil::ckks::rescale_groups(*ctx), ct.groups);
  for (std::size_t level = 0; level <= ctx->max_level(); ++level) {
    const veil::CkksTables& t = veil::ckks_tables(*ctx, level);
    EXPECT_EQ(&t, &veil::ckks_tables(*ctx, level));
    if (level < 2) {  // q_0's block: ModRaise only
      EXPECT_EQ(t.rescale.keep().size(), 0u);
      EXPECT_EQ(t.raise.to().size(), ctx->max_level() - level);
      continue;
    }
    const std::size_t target = veil::ckks::rescale_target(*ctx, level);
    EXPECT_EQ(t.rescale.keep().size(), target + 1);
    EXPECT_EQ(t.rescale.drop().size(), level - target);
    EXPECT_EQ(t.rescale_down.keep().size(), target + 1);
    EXPECT_EQ(t.rescale_down.drop().size(), level - target + ctx->num_p());
  }
  // BFV and BGV own their modulus switch and noise test; CKKS refuses their tables.
  const ContextPtr bfv = bfv_context(MulMethod::hps);
  EXPECT_EQ(veil::bfv_tables(*bfv, 1).mod_switch.keep().size(), 1u);
  EXPECT_EQ(veil::bfv_tables(*bfv, 1).noise.factor.size(), 2u);
  const ContextPtr bgv = veil::test::small_context(SchemeType::bgv);
  EXPECT_EQ(veil::bgv_tables(*bgv, 1).mod_switch.keep().size(), 1u);
  EXPECT_EQ(veil::bgv_tables(*bgv, 1).noise.factor.size(), 2u);
  EXPECT_INVALID_NAMING(veil::ckks_tables(*bfv, 0), "context");
  EXPECT_INVALID_NAMING(veil::ckks_context_tables(*bgv), "context");
  EXPECT_INVALID_NAMING(veil::bfv_aux_primes(*ctx), "context");
}

TEST(SchemeTables, ConcurrentFirstRequestsBuildOnce) {
  const ContextPtr ctx = bfv_context(MulMethod::hps);
  const std::size_t level = 0;
  std::vector<const BfvTables*> seen(8, nullptr);
  std::vector<std::thread> threads;
  for (std::size_t i = 0; i < seen.size(); ++i) {
    threads.emplace_back([&, i] { seen[i] = &veil::bfv_tables(*ctx, level); });
  }
  for (auto& th : threads) th.join();
  for (const BfvTables* p : seen) EXPECT_EQ(p, seen[0]);
}

}  // namespace
