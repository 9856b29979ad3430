"""Precision of full-slot bootstrapping on the CPU backend (bit-identical to the GPU's) with the
32-bit bootstrapping chain and with variants that free bits for user levels (bench/NOTES.md,
"Levels, measured small").

Usage: python bench/boot_levels.py LOG_N VARIANT [EVALMOD_PRIME_BITS] [USER_LEVELS] [TRIALS]
  VARIANT: preset (bootstrap_chain as is: SlotToCoeff levels on one ~30-bit prime each), em50
  (EvalMod blocks of two EVALMOD_PRIME_BITS-bit primes, default 25) or stc2 (SlotToCoeff levels
  on two ~30-bit primes each, the chain before commit 131baa4).
Security is off (security=None): the chain of USER_LEVELS (default 2) need not meet the bound."""
import sys
import time

import numpy as np
import veil
from veil import _core

LOG_N = int(sys.argv[1]) if len(sys.argv) > 1 else 14
N = 1 << LOG_N
variant = sys.argv[2] if len(sys.argv) > 2 else "preset"
em_bits = int(sys.argv[3]) if len(sys.argv) > 3 else 25
cfg = _core.BootstrapConfig()
USERS = int(sys.argv[4]) if len(sys.argv) > 4 else 2
ch = _core.bootstrap_chain(LOG_N, USERS, cfg, 32)
bits = list(ch.coeff_modulus)
groups = list(ch.rescale_groups)
k = ch.special_primes
q_bits = bits[:-k]
starts = [sum(groups[:i]) for i in range(len(groups))]  # each block's first prime, bottom up
if variant == "em50":  # EvalMod's blocks sit just below CoeffToSlot's at the top
    top = len(groups) - cfg.cts_levels
    for blk in range(top - cfg.evalmod_depth, top):
        for i in range(starts[blk], starts[blk] + groups[blk]):
            q_bits[i] = em_bits
elif variant == "stc2":  # the layout before 131baa4: two ~30-bit primes per SlotToCoeff level
    for lvl in reversed(range(1, 1 + cfg.stc_levels)):
        q_bits.insert(starts[lvl], 30)
        groups[lvl] = 2
elif variant != "preset":
    raise SystemExit(f"variant: expected preset, em50 or stc2, got {variant!r}")
bits = q_bits + bits[-k:]
print(variant, "bits", sum(bits), bits, groups)
t = time.time()
ctx = veil.ckks(poly_modulus_degree=N, coeff_modulus=bits, rescale_groups=groups, scale=ch.scale,
                special_primes=ch.special_primes, alpha=ch.alpha, word_bits=32, security=None,
                device="cpu", seed=3, bootstrapping=True, galois_steps=None)
print("keys", round(time.time() - t, 1), "s; levels", ctx.levels if hasattr(ctx, "levels") else "?")
rng = np.random.default_rng(0)
for trial in range(int(sys.argv[5]) if len(sys.argv) > 5 else 2):
    x = rng.uniform(-1, 1, N // 2)
    ct = ctx.encrypt(x, level=ctx.bootstrapper.input_level)
    t = time.time()
    out = ctx.bootstrap(ct)
    dt = time.time() - t
    err = np.abs(ctx.decrypt(out).real - x)
    print(f"bootstrap {dt:.1f} s: worst {-np.log2(err.max()):.2f} bits, mean {-np.log2(err.mean()):.2f}")
