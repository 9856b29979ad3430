"""Precision of full-slot bootstrapping on the CPU backend (bit-identical to the GPU's) with the
32-bit bootstrapping chain and with variants that free bits for user levels (bench/NOTES.md,
"Levels, measured small").

Usage: python bench/boot_levels.py LOG_N VARIANT [EVALMOD_PRIME_BITS] [USER_LEVELS] [TRIALS]
  VARIANT: preset (bootstrap_chain as is), em50 (EvalMod blocks of two EVALMOD_PRIME_BITS-bit
  primes, default 25) or stc1 (SlotToCoeff levels on one ~30-bit prime each).
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
if variant == "em50":
    # the EvalMod blocks sit below the CoeffToSlot blocks at the top: replace their primes
    em = cfg.evalmod_depth
    k = ch.special_primes
    q_bits = bits[:-k]
    # primes of each block, bottom up
    idx = []
    pos = 0
    for g in groups:
        idx.append(list(range(pos, pos + g)))
        pos += g
    top = len(groups)
    em_blocks = idx[top - cfg.cts_levels - em: top - cfg.cts_levels]
    for blk in em_blocks:
        for i in blk:
            q_bits[i] = em_bits
    bits = q_bits + bits[-k:]
if variant == "stc1":
    # SlotToCoeff's blocks (just above q_0's) on one ~30-bit prime each instead of two
    k = ch.special_primes
    q_bits = bits[:-k]
    start = groups[0]
    for lvl in range(cfg.stc_levels):
        del q_bits[start + lvl]  # drop one prime of this block (all 30 bits)
        groups[1 + lvl] = 1
    bits = q_bits + bits[-k:]
print(variant, "bits", sum(bits), bits, groups)
t = time.time()
ctx = veil.ckks(poly_modulus_degree=N, coeff_modulus=bits, rescale_groups=groups, scale=ch.scale,
                special_primes=ch.special_primes, alpha=ch.alpha, word_bits=32, security=None,
                device="cpu", seed=3, bootstrapping=True, galois_steps=None)
print("keys", round(time.time() - t, 1), "s; levels", ctx.levels if hasattr(ctx, "levels") else "?")
rng = np.random.default_rng(0)
worst = []
for trial in range(int(sys.argv[5]) if len(sys.argv) > 5 else 2):
    x = rng.uniform(-1, 1, N // 2)
    ct = ctx.encrypt(x, level=ctx.bootstrapper.input_level)
    t = time.time()
    out = ctx.bootstrap(ct)
    dt = time.time() - t
    err = np.abs(ctx.decrypt(out).real - x)
    worst.append(-np.log2(err.max()))
    print(f"bootstrap {dt:.1f} s: worst {-np.log2(err.max()):.2f} bits, mean {-np.log2(err.mean()):.2f}")
