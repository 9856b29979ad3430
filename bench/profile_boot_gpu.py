"""Where one CKKS bootstrap's time goes on the GPU (issue 23, "profile first").

Three views of the same bootstrap (N = 2^16 by default, 32-bit words, full or sparse slots):
  1. the asynchronous run as users get it: median of ``--runs`` CUDA-event timings after a
     warm-up (``wall``);
  2. the phases (SlotToCoeff, ModRaise, CoeffToSlot, EvalMod, ...), each synchronized;
  3. with ``--trace``: one asynchronous bootstrap between cudaProfilerStart/Stop, for Nsight
     Compute's per-kernel durations; the sum of kernel time against ``wall`` is the time the GPU
     sits idle (launch gaps and host time):

    python3 bench/profile_boot_gpu.py --word-bits 32 --runs 10
    ncu --profile-from-start off --print-summary per-kernel --metrics gpu__time_duration.sum \\
        python3 bench/profile_boot_gpu.py --word-bits 32 --trace > ncu_boot.txt
    python3 bench/ncu_summary.py ncu_boot.txt --total

``--impl cpp`` times the C++ bootstrapper (veil._core.circuits) instead of the Python one, when
it is built.
"""
from __future__ import annotations

import argparse
import ctypes
import json
import statistics
import time

import numpy as np
import veil
from veil import _core


def cudart():
    for name in ("libcudart.so", "libcudart.so.13", "libcudart.so.12"):
        try:
            return ctypes.CDLL(name)
        except OSError:
            continue
    return None


class CppBootstrapper:
    """The C++ bootstrapper with the Python one's interface for this script (phases timed by
    running its public steps one after the other, synchronized)."""

    def __init__(self, cpp, py, device):
        self.cpp, self.py, self.device = cpp, py, device
        self.input_level, self.levels_left = py.input_level, py.levels_left

    def bootstrap(self, ct, timings=None):
        if timings is None:
            return self.cpp.bootstrap(ct)
        out = ct
        for name in ("slot_to_coeff", "mod_raise", "coeff_to_slot", "eval_mod"):
            _core.synchronize(self.device)
            t = time.perf_counter()
            out = getattr(self.cpp, name)(out)
            _core.synchronize(self.device)
            timings[name] = time.perf_counter() - t
        return out

    def key_bytes(self):
        return self.cpp.keys.nbytes

    def plaintext_bytes(self):
        return self.cpp.plaintext_bytes


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--word-bits", type=int, default=32, choices=[32, 64])
    p.add_argument("--slots", type=int, default=None)
    p.add_argument("--log-n", type=int, default=16)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--trace", action="store_true", help="one run between cudaProfilerStart/Stop")
    p.add_argument("--json", default=None, help="write the numbers here")
    p.add_argument("--impl", choices=["py", "cpp"], default="py",
                   help="the Python bootstrapper (veil._bootstrap) or the C++ one (circuits)")
    a = p.parse_args()
    t0 = time.perf_counter()
    ctx = veil.ckks(poly_modulus_degree=2 ** a.log_n, device=a.device, seed=1,
                    word_bits=32 if a.word_bits == 32 else None,
                    bootstrapping=veil.BootstrapConfig(slots=a.slots),
                    security=128 if a.log_n == 16 else None)
    setup_s = time.perf_counter() - t0
    bt = ctx.bootstrapper
    if a.impl == "cpp":
        params = _core.BootstrapParameters(ctx.context, _core.BootstrapConfig(slots=a.slots),
                                           ctx.scale)
        keys = _core.BootstrapKeys.generate(params, ctx.secret_key, ctx._rlk(), 1)
        bt = CppBootstrapper(_core.Bootstrapper(params, keys), bt, a.device)
    n = a.slots or ctx.slot_count
    x = np.random.default_rng(0).uniform(-1, 1, n)
    xc = ctx.encrypt(np.tile(x, ctx.slot_count // n), level=bt.input_level)
    ct = xc.raw
    out = bt.bootstrap(ct)  # warm-up (plans, pools)
    _core.synchronize(a.device)
    if a.trace:
        rt = cudart()
        rt.cudaProfilerStart()
        bt.bootstrap(ct)
        _core.synchronize(a.device)
        rt.cudaProfilerStop()
        return
    timer = _core.Timer(a.device)
    wall = []
    for _ in range(a.runs):
        timer.start()
        out = bt.bootstrap(ct)
        wall.append(timer.stop())
    phases: dict = {}
    bt.bootstrap(ct, timings=phases)
    y = ctx.decrypt(type(xc)._make(ctx, bt.bootstrap(ct)))[:n]
    prec = veil.ckks.precision(x, np.real(y))
    rec = {"device": a.device, "log_n": a.log_n, "word_bits": a.word_bits, "slots": n,
           "setup_s": round(setup_s, 1), "wall_ms_median": round(statistics.median(wall), 3),
           "wall_ms_min": round(min(wall), 3), "runs": a.runs,
           "phases_ms": {k: round(v * 1e3, 3) for k, v in phases.items()},
           "precision_bits": {k: round(float(v), 2) for k, v in prec.items()
                              if isinstance(v, (int, float))},
           "impl": a.impl, "graph": bool(getattr(getattr(bt, "cpp", None), "uses_graph", False)),
           "graph_failure": getattr(getattr(bt, "cpp", None), "graph_failure", ""),
           "levels_left": bt.levels_left, "key_bytes": int(bt.key_bytes()),
           "plaintext_bytes": int(bt.plaintext_bytes())}
    print(json.dumps(rec, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rec, f, indent=1)


if __name__ == "__main__":
    main()
