// BFV's own state: its definition for the context (SchemeDefinition: parameter checks, the
// auxiliary NTT primes), and its per-level tables: Delta = floor(Q/t) for encoding, the HPS or
// BEHZ tables for multiplication and decryption (whichever EncryptionParameters::mul_method
// selects), the modulus switch and the noise test. They are BFV's alone, so they live here rather
// than in rlwe/ (as Lattigo's schemes/bgv/params.go embeds the rlwe parameters); the context
// keeps the auxiliary primes (Context::scheme_context_tables) and caches the per-level tables
// (Context::scheme_tables).
#pragma once
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "veil/backend/table.h"
#include "veil/ring/rns_base.h"
#include "veil/rlwe/context.h"
#include "veil/rlwe/encrypt.h"
#include "veil/rns/base_converter.h"
#include "veil/rns/behz.h"
#include "veil/rns/hps.h"
#include "veil/rns/mod_down.h"

namespace veil {

/// BFV's auxiliary NTT primes, chosen once with the context (bfv_definition's build_context,
/// which excludes Q, P and t). Their NTT tables follow coeff_modulus in Context::ntt(): the HPS
/// primes from index `hps_first_id`, then the BEHZ primes from `bsk_first_id` (gamma has none:
/// it is never transformed).
struct BfvAuxPrimes : SchemeContextTables {
  std::vector<u64> hps;          ///< HPS's base R (mul_method hps; empty with behz)
  std::vector<u64> bsk;          ///< BEHZ's Bsk: |Q| + 1 primes of 61 bits (behz; empty with hps)
  u64 gamma = 0;                 ///< BEHZ's gamma for decryption (61-bit prime; 0 with hps)
  std::size_t hps_first_id = 0;  ///< ntt() index of hps[0]
  std::size_t bsk_first_id = 0;  ///< ntt() index of bsk[0]
};

/// BFV's auxiliary primes of `ctx` (BfvAuxPrimes).
/// @param ctx a BFV context.
/// @return the primes, alive as long as `ctx`.
/// @throws InvalidArgument naming `context` if ctx is not a BFV context.
const BfvAuxPrimes& bfv_aux_primes(const Context& ctx);

/// BFV constants at one level l (Q_l = q_0..q_l).
struct BfvTables : SchemeLevelTables {
  DeviceTable<u64> delta;  ///< floor(Q/t) mod q_i
  u64 q_mod_t = 0;         ///< Q mod t (for rounding Q*m/t in encoding)
  // HPS
  RnsBase base_r;                 ///< R (HPS)
  RnsBase base_qr;                ///< Q_l ∪ R (HPS)
  BaseConverter q_to_r;           ///< Q_l -> R (HPS)
  BaseConverter r_to_q;           ///< R -> Q_l (HPS)
  HpsScaleAndRoundQR scale_qr;    ///< round(t/Q * x) from Q_l ∪ R to R (HPS)
  HpsScaleAndRoundQ scale_q;      ///< round(t/Q * x) from Q_l to {t} (HPS decryption)
  // BEHZ
  RnsBase base_q_bsk;             ///< Q_l ∪ Bsk (BEHZ)
  std::unique_ptr<BehzTools> behz;  ///< BEHZ's tools (null with HPS)
  /// Q_l -> Q_{l-1}, c -> round(c / q_l) (SEAL's BFV mod switch; empty at level 0).
  ModDown mod_switch;
  /// The exhausted-noise test at decryption, with the phase multiplied by t (NoiseTables).
  NoiseTables noise;
};

/// BFV's tables at `level` of `ctx` (Q_level = q_0..q_level): delta [level+1] and q_mod_t always;
/// scale_q (HPS decryption, Q_level -> {t}) always; with mul_method hps, base_r = R (the context's
/// HPS primes, sized for the top level, so large enough at every level), base_qr = Q_level ∪ R,
/// q_to_r, r_to_q and scale_qr (Halevi-Polyakov-Shoup 2019; Al Badawi et al. 2021 §IV); with behz,
/// base_q_bsk = Q_level ∪ Bsk (|Q_level| + 1 primes of Bsk) and behz (Bajard et al. 2016; Özcan et
/// al. 2023 §III, SEAL's sizes); mod_switch above level 0 and the noise test (factor t). Built on
/// the first request for a level and cached in the context (thread-safe).
/// @param ctx a BFV context.
/// @param level the level (at most ctx.max_level()).
/// @return the tables, alive as long as `ctx`.
/// @throws InvalidArgument naming `context` if ctx is not a BFV context, and naming `level` if
///         level > ctx.max_level().
const BfvTables& bfv_tables(const Context& ctx, std::size_t level);
/// The top level's tables (level ctx.max_level()), those of every fresh ciphertext.
/// @param ctx a BFV context.
/// @return bfv_tables(ctx, ctx.max_level()).
/// @throws InvalidArgument naming `context` if ctx is not a BFV context.
inline const BfvTables& bfv_tables(const Context& ctx) { return bfv_tables(ctx, ctx.max_level()); }

/// BFV's definition for the context (Fan, Vercauteren, eprint 2012/144): coefficient-form
/// ciphertexts, a plain modulus, errors not multiplied by t; its checks (no rescale_groups; BEHZ
/// needs 64-bit words) and its auxiliary NTT primes (HPS: R with log2 R >= log2 Q + log2 N +
/// log2 t + 3; BEHZ: Bsk of |Q| + 1 61-bit primes and gamma, SEAL's sizes).
/// @return the definition (a constant).
const SchemeDefinition& bfv_definition();

}  // namespace veil
