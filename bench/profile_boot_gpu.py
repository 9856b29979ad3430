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

``--impl cpp`` (the default) times the C++ bootstrapper, as ``ctx.bootstrapper`` runs it (phases
by its public steps); ``--impl py`` the Python oracle it was ported from (tests/python/oracles,
for A/B comparisons).
"""
from __future__ import annotations

import argparse
import json
import pathlib
import statistics
import sys
import time

import numpy as np
import veil
from trace_ops import cudart  # bench/ is the script's folder
from veil import _core


def oracle_bootstrapper(ctx, slots):
    """The Python bootstrapper the C++ layer was ported from (tests/python/oracles), on ``ctx``
    (a context with the bootstrapping chain but no C++ bootstrapper)."""
    sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "python"))
    from oracles import bootstrap as oracle

    return oracle.Bootstrapper(ctx, oracle.BootstrapConfig(slots=slots), seed=1)


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--device", default="cuda")
    p.add_argument("--word-bits", type=int, default=32, choices=[32, 64])
    p.add_argument("--slots", type=int, default=None)
    p.add_argument("--pack-sparse-slots", type=int, default=None, metavar="N",
                   help="N sparse slots with BootstrapConfig.pack_sparse (one EvalMod for both "
                        "halves; one user level less)")
    p.add_argument("--log-n", type=int, default=16)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--trace", action="store_true", help="one run between cudaProfilerStart/Stop")
    p.add_argument("--json", default=None, help="write the numbers here")
    p.add_argument("--impl", choices=["py", "cpp"], default="cpp",
                   help="the C++ bootstrapper (circuits, as veil's ctx.bootstrapper) or the "
                        "Python oracle it was ported from (tests/python/oracles)")
    a = p.parse_args()
    t0 = time.perf_counter()
    if a.pack_sparse_slots:
        a.slots = a.pack_sparse_slots
    config = veil.BootstrapConfig(slots=a.slots, pack_sparse=bool(a.pack_sparse_slots))
    security = 128 if a.log_n == 16 else None
    if a.impl == "cpp":
        ctx = veil.ckks(poly_modulus_degree=2 ** a.log_n, device=a.device, seed=1,
                        word_bits=32 if a.word_bits == 32 else None, bootstrapping=config,
                        security=security)
        bt = ctx.bootstrapper
    else:
        chain = veil._bootstrap.preset_chain(2 ** a.log_n, security, config, a.word_bits)
        ctx = veil.ckks(poly_modulus_degree=2 ** a.log_n, device=a.device, seed=1,
                        security=security, galois_steps=None, **chain.context_args())
        bt = oracle_bootstrapper(ctx, a.slots)
    setup_s = time.perf_counter() - t0
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
    impl = bt._bootstrapper() if a.impl == "cpp" else None  # the C++ object (graph state)
    rec = {"device": a.device, "log_n": a.log_n, "word_bits": a.word_bits, "slots": n,
           "setup_s": round(setup_s, 1), "wall_ms_median": round(statistics.median(wall), 3),
           "wall_ms_min": round(min(wall), 3), "runs": a.runs,
           "phases_ms": {k: round(v * 1e3, 3) for k, v in phases.items()},
           "precision_bits": {k: round(float(v), 2) for k, v in prec.items()
                              if isinstance(v, (int, float))},
           "pack_sparse": bool(a.pack_sparse_slots), "impl": a.impl, "graph": bool(getattr(impl, "uses_graph", False)),
           "graph_failure": getattr(impl, "graph_failure", ""),
           "levels_left": bt.levels_left, "key_bytes": int(bt.key_bytes()),
           "plaintext_bytes": int(bt.plaintext_bytes())}
    print(json.dumps(rec, indent=1))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(rec, f, indent=1)


if __name__ == "__main__":
    main()
