// Scheme-independent RLWE encryption of zero and decryption phase (FV 2012 §3; SEAL's
// encrypt_zero_asymmetric / encrypt_zero_symmetric).
#pragma once
#include "veil/backend/launch.h"
#include "veil/ring/prng.h"
#include "veil/rns/noise_test.h"
#include "veil/rlwe/checks.h"
#include "veil/rlwe/objects.h"

namespace veil {

/// (c0, c1) = (b u + f e0, a u + f e1) over Q_level with u ternary, e0, e1 centered binomial and
/// f = error_factor (t for BGV, 1 otherwise). NTT form iff `ntt_form`.
Ciphertext encrypt_zero_asymmetric(const PublicKey& pk, std::size_t level, const Prng& prng,
                                   bool ntt_form, u64 error_factor = 1);
/// (c0, c1) = (-a s + f e, a) with a uniform.
Ciphertext encrypt_zero_symmetric(const SecretKey& sk, std::size_t level, const Prng& prng,
                                  bool ntt_form, u64 error_factor = 1);
/// The phase c0 + c1 s + c2 s^2 + ... over Q_level, in the ciphertext's form ([level+1][N]).
/// Throws InvalidArgument naming `secret_key` if the key belongs to another key set.
WordBuffer decrypt_phase(const SecretKey& sk, const Ciphertext& ct);

/// BFV/BGV: true when the noise budget of a phase (coefficient form, [level+1][N]) is 0, i.e.
/// |f * phase mod Q_l| >= 2^(bits(Q_l) - 2) for some coefficient (f = t for BFV, 1 for BGV;
/// SEAL's budget bits(Q) - bits(|x|) - 1 <= 0). One pass (LevelTables::noise_factor): the
/// centered x/Q_l is sum_i [x_i (Q/q_i)^-1]_{q_i} / q_i mod 1 in double precision.
bool noise_exhausted(const Context& ctx, const Device& dev, ConstWordPtr phase, std::size_t level);
/// The test noise_exhausted makes, per coefficient, for a fused pass (NoiseTest::exceeds): its
/// tables on `dev` for the phase at `level`.
NoiseTest noise_test(const Context& ctx, const Device& dev, std::size_t level);
/// Throws InvalidArgument naming `encrypted` if noise_exhausted (the decryption would be wrong).
void check_noise_budget(const Context& ctx, const Device& dev, ConstWordPtr phase,
                        std::size_t level);
/// The same test queued on the device (one synchronization when it is read): decryption queues
/// its last steps behind it and throws, through throw_noise_exhausted, only once they are queued.
PendingAny noise_exhausted_async(const Context& ctx, const Device& dev, ConstWordPtr phase,
                                 std::size_t level);
/// Throws InvalidArgument naming `encrypted`: its noise budget is exhausted.
[[noreturn]] void throw_noise_exhausted();

/// SEAL's invariant noise budget from the host words of x (coefficient form): bits(Q_l) -
/// bits(max |x mod Q_l|) - 1, floored at 0.
int noise_budget_bits(const Context& ctx, const std::vector<u64>& host_x, std::size_t level);


}  // namespace veil
