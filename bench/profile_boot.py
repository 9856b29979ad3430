"""Per-operation time profile of one CKKS bootstrap (development tool; synchronizes after every
Evaluator call, so the total exceeds the asynchronous run's).

    python bench/profile_boot.py --device cuda --word-bits 32 [--slots 4096]
"""

import argparse
import time
from collections import defaultdict

import numpy as np
import veil
from veil import _core


class TimedEvaluator:
    """Wraps an Evaluator: every call is synchronized and its time added to its method's row."""

    def __init__(self, ev, device):
        self._ev, self._dev = ev, device
        self.rows = defaultdict(lambda: [0, 0.0])

    def __getattr__(self, name):
        fn = getattr(self._ev, name)

        def call(*a, **k):
            _core.synchronize(self._dev)
            t = time.perf_counter()
            r = fn(*a, **k)
            _core.synchronize(self._dev)
            row = self.rows[name]
            row[0] += 1
            row[1] += time.perf_counter() - t
            return r
        return call


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--device", default="cuda")
    p.add_argument("--word-bits", type=int, default=32)
    p.add_argument("--slots", type=int, default=None)
    p.add_argument("--log-n", type=int, default=16)
    a = p.parse_args()
    ctx = veil.ckks(poly_modulus_degree=2 ** a.log_n, device=a.device, seed=1,
                    word_bits=32 if a.word_bits == 32 else None,
                    bootstrapping=veil.BootstrapConfig(slots=a.slots),
                    security=128 if a.log_n == 16 else None)
    bt = ctx.bootstrapper
    x = np.random.default_rng(0).uniform(-1, 1, ctx.slot_count)
    ct = ctx.encrypt(x, level=bt.input_level).raw
    bt.bootstrap(ct)  # warm-up
    timed = TimedEvaluator(bt.ev, a.device)
    bt.ev = timed
    phases = {}
    bt.bootstrap(ct, timings=phases)
    total = sum(r[1] for r in timed.rows.values())
    print(f"synchronized total {total * 1e3:.1f} ms; phases (ms):",
          {k: round(v * 1e3, 1) for k, v in phases.items()})
    for name, (count, secs) in sorted(timed.rows.items(), key=lambda kv: -kv[1][1]):
        print(f"{name:24s} {count:5d} calls {secs * 1e3:8.2f} ms  {secs / count * 1e6:8.1f} us/call")


if __name__ == "__main__":
    main()
