"""The encrypted comparisons at N = 2^16 with bootstrapping (issue 27, item 3): the time of
``sign``, ``relu`` and ``maximum`` over every slot, the bootstraps each takes (the composite
polynomial in parts, veil._functions), and the precision against numpy.

Prints one JSON object; median of ``--runs`` after one warm-up, the device synchronized.

Usage: python bench/sign_bench.py [--device cuda] [--runs 3] [--log-n 16] [--levels L]
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--log-n", type=int, default=16)
    ap.add_argument("--levels", type=int, default=None)
    args = ap.parse_args()

    import veil
    from veil import _core

    def sync() -> float:
        if args.device.startswith("cuda"):
            _core.synchronize(args.device)
        return time.perf_counter()

    t0 = time.perf_counter()
    if args.levels is None:  # the preset bootstrapping chain (128-bit security)
        ctx = veil.ckks(poly_modulus_degree=1 << args.log_n, bootstrapping=True,
                        device=args.device, seed=1, galois_steps=None)
    else:  # a chain with `--levels` between bootstraps (security off: small test sizes)
        from veil import _bootstrap

        config = _bootstrap.BootstrapConfig()
        chain = _bootstrap.bootstrap_chain(args.log_n, args.levels, config, 64)
        ctx = veil.ckks(poly_modulus_degree=1 << args.log_n, security=None, device=args.device,
                        seed=1, galois_steps=None, **chain.context_args())
        ctx.enable_bootstrapping(config, seed=1)
    setup = time.perf_counter() - t0
    rng = np.random.default_rng(2)
    n = ctx.slot_count
    x, y = rng.uniform(-1, 1, n), rng.uniform(-0.5, 0.5, n)
    cx, cy = ctx.encrypt(x), ctx.encrypt(y)
    count = []
    real = ctx.bootstrap
    ctx.bootstrap = lambda ct: count.append(1) or real(ct)  # type: ignore[method-assign]
    cases = {
        "sign": (lambda: cx.sign(), np.sign(x), np.abs(x) >= 2.0**-8),
        "relu": (lambda: cx.relu(), np.maximum(x, 0), np.ones(n, bool)),
        "maximum": (lambda: (cx * 0.5).maximum(cy), np.maximum(x * 0.5, y), np.ones(n, bool)),
    }
    out = {"device": args.device, "N": 1 << args.log_n, "slots": n, "levels": ctx.levels,
           "setup_s": setup, "bootstrap_ms": None}
    times = []
    for _ in range(args.runs + 1):
        t = sync()
        ctx.bootstrap(cx)
        times.append(sync() - t)
    out["bootstrap_ms"] = 1e3 * statistics.median(times[1:])
    for name, (fn, want, keep) in cases.items():
        times, got = [], None
        for i in range(args.runs + 1):
            count.clear()
            t = sync()
            r = fn()
            dt = sync() - t
            if i:
                times.append(dt)
            got = ctx.decrypt(r)
        out[name] = {"ms": 1e3 * statistics.median(times), "bootstraps": len(count),
                     "bits": veil.ckks.precision(want[keep], got[keep])["min_bits"]}
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
