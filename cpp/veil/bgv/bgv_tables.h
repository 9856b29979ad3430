// BGV's per-level tables: the exact conversion Q_l -> {t} that decryption ends with. They are
// BGV's alone, so they live here rather than in rlwe/ (as Lattigo's schemes/bgv/params.go embeds
// the rlwe parameters); the context caches them per level (Context::scheme_tables). What BGV
// shares with BFV or CKKS stays in the context: the noise test (LevelTables::noise_factor) and
// the t-corrected modulus switching (LevelTables::drop_last, KeySwitchLevel::mod_down_ntt).
#pragma once
#include <cstddef>

#include "veil/rlwe/context.h"
#include "veil/rns/base_converter.h"

namespace veil {

/// BGV constants at one level l (Q_l = q_0..q_l).
struct BgvTables : SchemeLevelTables {
  BaseConverter to_plain;  // Q_l -> {t}, exact centered (decryption: [phase]_Q mod t)
};

/// BGV's tables at `level` of `ctx`: to_plain converts [level+1][N] residues over Q_level to
/// [N] residues mod t, exactly (the centered representative of [x]_Q). Built on the first
/// request for a level and cached in the context (thread-safe). Throws InvalidArgument naming
/// `context` if ctx is not a BGV context, and naming `level` if level > ctx.max_level().
const BgvTables& bgv_tables(const Context& ctx, std::size_t level);

}  // namespace veil
