// BFV's per-level tables: Delta = floor(Q/t) for encoding, and the HPS or BEHZ tables for
// multiplication and decryption (whichever EncryptionParameters::mul_method selects). They are
// BFV's alone, so they live here rather than in rlwe/ (as Lattigo's schemes/bgv/params.go embeds
// the rlwe parameters); the context caches them per level (Context::scheme_tables). The auxiliary
// NTT primes they use (HPS's R, BEHZ's Bsk and gamma) stay chosen by the context, whose ntt()
// holds their NTT tables (Context::bfv_aux_primes).
#pragma once
#include <cstddef>
#include <memory>

#include "veil/backend/table.h"
#include "veil/ring/rns_base.h"
#include "veil/rlwe/context.h"
#include "veil/rns/base_converter.h"
#include "veil/rns/behz.h"
#include "veil/rns/hps.h"

namespace veil {

/// BFV constants at one level l (Q_l = q_0..q_l).
struct BfvTables : SchemeLevelTables {
  DeviceTable<u64> delta;  // floor(Q/t) mod q_i
  u64 q_mod_t = 0;         // Q mod t (for rounding Q*m/t in encoding)
  // HPS
  RnsBase base_r, base_qr;
  BaseConverter q_to_r, r_to_q;
  HpsScaleAndRoundQR scale_qr;
  HpsScaleAndRoundQ scale_q;
  // BEHZ
  RnsBase base_q_bsk;
  std::unique_ptr<BehzTools> behz;
};

/// BFV's tables at `level` of `ctx` (Q_level = q_0..q_level): delta [level+1] and q_mod_t always;
/// scale_q (HPS decryption, Q_level -> {t}) always; with mul_method hps, base_r = R (the context's
/// HPS primes, sized for the top level, so large enough at every level), base_qr = Q_level ∪ R,
/// q_to_r, r_to_q and scale_qr (Halevi-Polyakov-Shoup 2019; Al Badawi et al. 2021 §IV); with behz,
/// base_q_bsk = Q_level ∪ Bsk (|Q_level| + 1 primes of Bsk) and behz (Bajard et al. 2016; Özcan et
/// al. 2023 §III, SEAL's sizes). Built on the first request for a level and cached in the context
/// (thread-safe). Throws InvalidArgument naming `context` if ctx is not a BFV context, and naming
/// `level` if level > ctx.max_level().
const BfvTables& bfv_tables(const Context& ctx, std::size_t level);
/// The top level's tables (level ctx.max_level()), those of every fresh ciphertext.
inline const BfvTables& bfv_tables(const Context& ctx) { return bfv_tables(ctx, ctx.max_level()); }

}  // namespace veil
