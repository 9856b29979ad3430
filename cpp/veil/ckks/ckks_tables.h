// CKKS's own state: its definition for the context (SchemeDefinition: no plain modulus, its
// rescale blocks), the rescale blocks themselves (context-wide, Context::scheme_context_tables)
// and its per-level tables (Context::scheme_tables): the rescale, the rescale fused with the key
// switch's ModDown, and ModRaise's conversion. They are CKKS's alone, so they live here rather
// than in rlwe/ (as Lattigo's schemes/ckks/params.go embeds the rlwe parameters); rlwe's key
// switch takes the fused target from here as an argument (rlwe/keyswitch.h: key_switch_rescale,
// key_switch_mod_down).
#pragma once
#include <cstddef>
#include <vector>

#include "veil/rlwe/context.h"
#include "veil/rns/base_converter.h"
#include "veil/rns/mod_down_ntt.h"

namespace veil {

/// CKKS's rescale blocks (EncryptionParameters::rescale_groups), resolved once with the context.
struct CkksContextTables : SchemeContextTables {
  /// The block sizes, one per block from q_0 up (all 1 by default: SEAL's one-prime rescale).
  std::vector<std::size_t> groups;
  /// [num_q]: the index of the first prime of the block that holds q_i.
  std::vector<std::size_t> group_start;
};

/// CKKS's context-wide tables of `ctx` (CkksContextTables).
/// @param ctx a CKKS context.
/// @return the tables, alive as long as `ctx`.
/// @throws InvalidArgument naming `context` if ctx is not a CKKS context.
const CkksContextTables& ckks_context_tables(const Context& ctx);

/// CKKS constants at one level l (Q_l = q_0..q_l). Levels above q_0's block have the rescale
/// tables, levels inside it (below the top) ModRaise's conversion.
struct CkksTables : SchemeLevelTables {
  /// Q_l -> Q_t, t = rescale_target(l): divides by the block of primes above t and rounds (the
  /// rescale; Cheon, Han, Kim, Kim, Song, SAC 2018, §3.3). Empty inside q_0's block.
  ModDownNtt rescale;
  /// Q_l ∪ P -> Q_t: the same division fused with the key switch's division by P (relinearize
  /// then rescale in one ModDown, as Cheddar; Kim et al., arXiv:2407.13055). Empty inside q_0's
  /// block or without special primes.
  ModDownNtt rescale_down;
  /// Q_l -> q_{l+1}..q_top, exact (ModRaise; Halevi, Polyakov, Shoup, CT-RSA 2019). Only inside
  /// q_0's block, below the top level.
  BaseConverter raise;
};

/// CKKS's tables at `level` of `ctx` (CkksTables), built on the first request for the level and
/// cached in the context (thread-safe).
/// @param ctx a CKKS context.
/// @param level the level (at most ctx.max_level()).
/// @return the tables, alive as long as `ctx`.
/// @throws InvalidArgument naming `context` if ctx is not a CKKS context, or `level`.
const CkksTables& ckks_tables(const Context& ctx, std::size_t level);

/// CKKS scales must stay in [1, 2^bits(Q_level)): below 1 no precision is left, at or above
/// Q_level the message no longer fits.
/// @param ctx the context.
/// @param scale the scale to check.
/// @param level the level the scale is used at.
/// @param what the argument's name in messages.
/// @throws InvalidArgument naming `what` (NaN, infinite, below 1, or not below Q_level).
void check_ckks_scale(const Context& ctx, double scale, std::size_t level, const char* what);

/// ModDown fused with the CKKS rescale: out = round(in / (B P)) at t = ckks::rescale_target(ctx,
/// level), B the rescale block above t (CkksTables::rescale_down, through rlwe's
/// key_switch_mod_down). in: [num_polys][l+1+k][N]; out: [num_polys][t+1][N] (not overlapping
/// in); NTT form.
/// @param ctx a CKKS context with special primes.
/// @param dev the device of in and out.
/// @param level the level l of the extended polynomials.
/// @param in [num_polys][l+1+k][N], NTT form.
/// @param out [num_polys][t+1][N].
/// @param num_polys the number of polynomials.
/// @throws InvalidArgument naming `encrypted` at a level in q_0's block, or naming the operation
///         for a context without the extended basis.
void key_switch_rescale_down(const Context& ctx, const Device& dev, std::size_t level,
                             ConstWordPtr in, WordPtr out, std::size_t num_polys);

/// CKKS's definition for the context (Cheon, Kim, Kim, Song, ASIACRYPT 2017; full RNS: Cheon,
/// Han, Kim, Kim, Song, SAC 2018): NTT-form ciphertexts, no plain modulus; its checks and tables:
/// the rescale blocks (sizes in 1..L summing to L).
/// @return the definition (a constant).
const SchemeDefinition& ckks_definition();

namespace ckks {

/// The level a rescale from `level` goes to: below the block of Q primes that holds q_level
/// (EncryptionParameters::rescale_groups; level - 1 with SEAL's one-prime blocks, and for the
/// schemes without blocks, which switch modulus one prime at a time).
/// @param ctx the context.
/// @param level the level to rescale from.
/// @return the target level.
/// @throws InvalidArgument naming `level` above ctx.max_level(), or `encrypted` when `level`
///         lies in the first block (q_0's), which cannot be divided further.
std::size_t rescale_target(const Context& ctx, std::size_t level);

/// The rescale block sizes of `ctx`, resolved (one per block, from q_0 up; all 1 by default and
/// for the schemes without blocks). A copy: CKKS code on a hot path reads
/// ckks_context_tables(ctx).groups.
/// @param ctx the context.
/// @return the block sizes.
std::vector<std::size_t> rescale_groups(const Context& ctx);

}  // namespace ckks

}  // namespace veil
