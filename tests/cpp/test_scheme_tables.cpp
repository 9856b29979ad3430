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
  const auto& aux = ctx->bfv_aux_primes();
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
  const auto& aux = ctx->bfv_aux_primes();
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
  EXPECT_TRUE(ctx->bfv_aux_primes().hps.empty());
  EXPECT_TRUE(ctx->bfv_aux_primes().bsk.empty());
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
  // A CKKS context has no scheme tables of its own; the cache serves any one builder.
  const ContextPtr ckks = veil::test::small_context(SchemeType::ckks);
  const SchemeLevelTables& t = ckks->scheme_tables(1, &other_builder);
  EXPECT_EQ(&t, &ckks->scheme_tables(1, &other_builder));
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
