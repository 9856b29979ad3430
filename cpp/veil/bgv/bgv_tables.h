// BGV's own state: its definition for the context (SchemeDefinition: errors that are multiples
// of t, its parameter checks) and its per-level tables: the t-corrected modulus switch, the exact
// conversion Q_l -> {t} that decryption ends with, and the noise test. They are BGV's alone, so
// they live here rather than in rlwe/ (as Lattigo's schemes/bgv/params.go embeds the rlwe
// parameters); the context caches them per level (Context::scheme_tables).
#pragma once
#include <cstddef>

#include "veil/rlwe/context.h"
#include "veil/rlwe/encrypt.h"
#include "veil/rns/base_converter.h"
#include "veil/rns/mod_down_ntt.h"

namespace veil {

/// BGV constants at one level l (Q_l = q_0..q_l).
struct BgvTables : SchemeLevelTables {
  BaseConverter to_plain;  ///< Q_l -> {t}, exact centered (decryption: [phase]_Q mod t)
  /// Q_l -> Q_{l-1} with the t-correction (modulus switching; Gentry, Halevi, Smart, CRYPTO 2012,
  /// §3.1); empty at level 0.
  ModDownNtt mod_switch;
  /// The exhausted-noise test at decryption, the phase taken as it is (factor 1; NoiseTables).
  NoiseTables noise;
};

/// BGV's tables at `level` of `ctx`: to_plain converts [level+1][N] residues over Q_level to
/// [N] residues mod t, exactly (the centered representative of [x]_Q); mod_switch above level 0;
/// the noise test. Built on the first request for a level and cached in the context
/// (thread-safe).
/// @param ctx a BGV context.
/// @param level the level (at most ctx.max_level()).
/// @return the tables, alive as long as `ctx`.
/// @throws InvalidArgument naming `context` if ctx is not a BGV context, and naming `level` if
///         level > ctx.max_level().
const BgvTables& bgv_tables(const Context& ctx, std::size_t level);

/// BGV's definition for the context (Brakerski, Gentry, Vaikuntanathan, ITCS 2012): NTT-form
/// ciphertexts, a plain modulus, errors that are multiples of t (the key switch's ModDown keeps
/// them so); its checks: no rescale_groups, at most 31 special primes (the t-correction runs
/// inside the register-blocked conversion from P, rns/mod_down_ntt.h, whose tables exist for at
/// most 31 input primes).
/// @return the definition (a constant).
const SchemeDefinition& bgv_definition();

}  // namespace veil
