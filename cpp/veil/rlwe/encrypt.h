// Scheme-independent RLWE encryption of zero and decryption phase (FV 2012 §3; SEAL's
// encrypt_zero_asymmetric / encrypt_zero_symmetric).
#pragma once
#include "veil/backend/launch.h"
#include "veil/backend/table.h"
#include "veil/ring/prng.h"
#include "veil/rns/noise_test.h"
#include "veil/rlwe/checks.h"
#include "veil/rlwe/objects.h"

namespace veil {

/// Public-key encryption of zero (Fan-Vercauteren, eprint 2012/144, §3 Encrypt; SEAL's
/// encrypt_zero_asymmetric): (c0, c1) = (b u + f e0, a u + f e1) with u ternary and e0, e1
/// centered binomial. With special primes the products are formed over Q_level ∪ P and divided
/// by P (ModDown), as SEAL does, so that the term e u + e1 s shrinks by P. Sampling and
/// arithmetic run on the key's device; the result carries the key's key set.
/// @param pk a public key ([2][L+k][N], NTT form) of the context to encrypt under.
/// @param level the ciphertext's level (0..max level; not checked, the callers check it).
/// @param prng the randomness: three streams are drawn from it (u, e0, e1).
/// @param ntt_form the result's form: NTT form (BGV, CKKS) or coefficient form (BFV).
/// @param error_factor f (Context::error_factor: t when the scheme's errors are multiples of t,
///        1 otherwise), multiplied into e0 and e1.
/// @return a size-2 ciphertext at `level` ([2][level+1][N]) in the requested form, scale 1.
Ciphertext encrypt_zero_asymmetric(const PublicKey& pk, std::size_t level, const Prng& prng,
                                   bool ntt_form, u64 error_factor = 1);
/// Secret-key encryption of zero (SEAL's encrypt_zero_symmetric): (c0, c1) = (-a s + f e, a)
/// over Q_level with a uniform and e centered binomial. The seed of a is recorded
/// (DataObject::uniform_seed) so that seeded serialization can write it instead of c1.
/// @param sk the secret key ([L+k][N], NTT form).
/// @param level the ciphertext's level (0..max level; not checked, the callers check it).
/// @param prng the randomness: two streams are drawn from it (the seed of a, then e).
/// @param ntt_form the result's form: NTT form (BGV, CKKS) or coefficient form (BFV).
/// @param error_factor f (t for BGV, 1 otherwise), multiplied into e.
/// @return a size-2 ciphertext at `level` ([2][level+1][N]) in the requested form, scale 1,
///         carrying the key's key set and the seed of a.
Ciphertext encrypt_zero_symmetric(const SecretKey& sk, std::size_t level, const Prng& prng,
                                  bool ntt_form, u64 error_factor = 1);
/// The decryption phase c0 + c1 s + c2 s^2 + ... over Q_level, evaluated by Horner's rule in
/// NTT form (for a coefficient-form ciphertext only c1.. go through the NTT; c0 is added after
/// the inverse transform). The returned words are zeroized when freed (Buffer::set_secure).
/// @param sk the secret key of the ciphertext's key set ([L+k][N], NTT form).
/// @param ct a non-empty ciphertext (not checked) of size >= 2 ([size][level+1][N]), NTT or
///        coefficient form.
/// @return the phase, [level+1][N] words in the ciphertext's form, on its device.
/// @throws InvalidArgument if a coefficient-form ct has size < 2. The key and the ciphertext
///         are not checked here: the Decryptor checked both (check_ciphertext, and the key's
///         device and key set).
WordBuffer decrypt_phase(const SecretKey& sk, const Ciphertext& ct);

/// The tables of the exhausted-noise test at one level, for a scheme with a plain modulus t: with
/// x = f * phase (f = t when the message is scaled by Q/t, 1 when it lies in the low bits; the
/// scheme chooses), x/Q mod 1 = sum_i [x_i * (Q/q_i)^-1]_{q_i} / q_i mod 1, so factor[i] =
/// f * (Q/q_i)^-1 mod q_i and |x| >= 2^(bits(Q) - 2) (budget 0) iff |x/Q| >= threshold. Each
/// scheme keeps its own in its per-level tables (bfv/bfv_tables.h, bgv/bgv_tables.h).
struct NoiseTables {
  DeviceTable<u64> factor;  ///< [level+1]: f * (Q_l/q_i)^-1 mod q_i
  double threshold = 0;     ///< 2^(bits(Q_l) - 2) / Q_l
};

/// Builds the noise test's tables at `level` with the factor `f` (NoiseTables).
/// @param ctx the context.
/// @param level the level l (Q_l = q_0..q_l).
/// @param f the factor the phase is multiplied by before the test (reduced mod each q_i).
/// @return the tables.
NoiseTables make_noise_tables(const Context& ctx, std::size_t level, u64 f);

/// True when the noise budget of a phase (coefficient form, [level+1][N]) is 0, i.e.
/// |f * phase mod Q_l| >= 2^(bits(Q_l) - 2) for some coefficient (SEAL's budget
/// bits(Q) - bits(|x|) - 1 <= 0). One pass: the centered x/Q_l is
/// sum_i [x_i (Q/q_i)^-1]_{q_i} / q_i mod 1 in double precision.
/// @param ctx the context.
/// @param dev the device of `phase`.
/// @param phase the phase, [level+1][N] in coefficient form.
/// @param level its level.
/// @param tables the scheme's noise tables at `level` (make_noise_tables).
/// @return whether the budget is exhausted.
bool noise_exhausted(const Context& ctx, const Device& dev, ConstWordPtr phase, std::size_t level,
                     const NoiseTables& tables);
/// The test noise_exhausted makes, per coefficient, for a fused pass (NoiseTest::exceeds).
/// @param ctx the context.
/// @param dev the device the test runs on.
/// @param level the phase's level.
/// @param tables the scheme's noise tables at `level`.
/// @return the test's views on `dev` (valid while ctx and tables live).
/// @throws InvalidArgument when `tables` are not of `level` (their factor count).
NoiseTest noise_test(const Context& ctx, const Device& dev, std::size_t level,
                     const NoiseTables& tables);
/// Throws if noise_exhausted (the decryption would be wrong).
/// @param ctx the context.
/// @param dev the device of `phase`.
/// @param phase the phase, [level+1][N] in coefficient form.
/// @param level its level.
/// @param tables the scheme's noise tables at `level`.
/// @throws InvalidArgument naming `encrypted` if the budget is exhausted.
void check_noise_budget(const Context& ctx, const Device& dev, ConstWordPtr phase,
                        std::size_t level, const NoiseTables& tables);
/// The same test queued on the device (one synchronization when it is read): decryption queues
/// its last steps behind it and reports the failure, through throw_noise_exhausted, only once
/// they are queued. This function raises nothing itself: the caller reads the answer.
/// @param ctx the context.
/// @param dev the device of `phase`.
/// @param phase the phase, [level+1][N] in coefficient form.
/// @param level its level.
/// @param tables the scheme's noise tables at `level`.
/// @return the pending answer (true: exhausted).
PendingAny noise_exhausted_async(const Context& ctx, const Device& dev, ConstWordPtr phase,
                                 std::size_t level, const NoiseTables& tables);
/// Reports an exhausted noise budget (the error of check_noise_budget).
/// @throws InvalidArgument naming `encrypted`: its noise budget is exhausted (always).
[[noreturn]] void throw_noise_exhausted();

/// SEAL's invariant noise budget (Decryptor::invariant_noise_budget) from the host words of x:
/// bits(Q_l) - bits(max |x mod Q_l|) - 1, floored at 0, with x centered mod Q_l.
/// @param ctx the context.
/// @param host_x x in coefficient form, [level+1][N] 64-bit words on the host (for BFV the
///        scaled phase t * phase, as SEAL measures it).
/// @param level x's level.
/// @return the budget in bits (>= 0).
/// @throws std::out_of_range for a level above the context's top level (Context::base_q).
int noise_budget_bits(const Context& ctx, const std::vector<u64>& host_x, std::size_t level);


}  // namespace veil
