"""Where a small GPU operation's time goes (issue 25, item 3): host work, launches, kernels.

For Phantom's parameter rows (``veil bench --rows phantom``), each small operation (encode,
decrypt, add, multiply_plain, and their in-place / unchecked forms) is timed three ways:

- ``event``: the median of CUDA events around one call, as ``veil bench`` times it (host work
  between the events counts when the GPU waits for it; the result is released inside the events,
  so a decrypted plaintext's zeroization counts);
- ``peer``: Phantom's own loop (``CUDATimer`` in its ``*_bench.cu``), the like-for-like measure
  beside it: an in-place operation runs on a fresh copy of its operand made just before the start
  event (Phantom's ``PhantomCiphertext tmp_ct(encrypted1)``: the copy is queued on the stream, so
  the call's host work overlaps it), and a result is released after the stop event and the
  stream drained before the next start (Phantom writes into one reused output);
- ``host``: the host's time per call in a loop of back-to-back calls (the call's CPU cost);
- ``stream``: the GPU span of the same loop divided by the calls (the larger of the two costs);
- ``kernels``: the summed kernel time per call from PyTorch's profiler (CUPTI), when PyTorch
  imports (the GPU machine has it); otherwise absent.

Usage: python bench/small_ops.py [--scheme bfv|bgv|ckks ...] [--max-n N] [--json PATH]
"""

from __future__ import annotations

import argparse
import copy
import json
import statistics
import time
from typing import Any

from veil import _core
from veil._bench_ops import VeilLib, _values
from veil._bench_rows import phantom_rows

LOOP = 200


def event_us(timer: Any, fn: Any, runs: int = 100, warmup: int = 10) -> float:
    for _ in range(warmup):
        fn()
    samples = []
    for _ in range(runs):
        timer.start()
        fn()
        samples.append(timer.stop())
    return 1000.0 * statistics.median(samples)


def peer_us(timer: Any, fn: Any, setup: Any = None, runs: int = 100, warmup: int = 10) -> float:
    """Median µs of CUDA events around fn(setup()) (or fn()) as Phantom's benchmark loop times
    its operations: setup() (a fresh copy of an in-place operand) is queued before the start
    event, and the result is released after the stop event, the stream drained before the next
    trial."""
    samples = []
    for i in range(warmup + runs):
        arg = setup() if setup is not None else None
        timer.start()
        out = fn(arg) if setup is not None else fn()
        t = timer.stop()
        del out, arg
        _core.synchronize("cuda")
        if i >= warmup:
            samples.append(t)
    return 1000.0 * statistics.median(samples)


def loop_us(timer: Any, fn: Any) -> tuple[float, float]:
    """(host µs per call, GPU-span µs per call) over LOOP back-to-back calls."""
    fn()
    _core.synchronize("cuda")
    timer.start()
    t0 = time.perf_counter()
    for _ in range(LOOP):
        fn()
    host = (time.perf_counter() - t0) / LOOP * 1e6
    span = timer.stop() * 1000.0 / LOOP
    return host, span


CALLS = 20  # calls per profiled op


def profiled_events(fn: Any, cpu: bool) -> list[Any] | None:
    """PyTorch's profiler events (CUPTI) of CALLS calls of ``fn``; None without PyTorch."""
    try:
        from torch.profiler import ProfilerActivity, profile
    except Exception:
        return None
    fn()
    _core.synchronize("cuda")
    acts = [ProfilerActivity.CPU, ProfilerActivity.CUDA] if cpu else [ProfilerActivity.CUDA]
    with profile(activities=acts) as prof:
        for _ in range(CALLS):
            fn()
        _core.synchronize("cuda")
    return list(prof.events())


def on_gpu(e: Any) -> bool:
    return "CUDA" in str(getattr(e, "device_type", ""))


def kernel_us(fn: Any) -> tuple[float, int] | None:
    """Summed CUDA kernel time per call (µs) and kernels per call."""
    events = profiled_events(fn, cpu=False)
    if events is None:
        return None
    kernels = [e for e in events if on_gpu(e)]
    total = sum(e.device_time_total if hasattr(e, "device_time_total") else e.cuda_time_total
                for e in kernels)
    return total / CALLS, len(kernels) // CALLS


def api_calls(fn: Any) -> dict[str, tuple[float, float]] | None:
    """Host-side calls per op call (CUDA runtime API, as CUPTI sees them): {name: (count, µs)}."""
    events = profiled_events(fn, cpu=True)
    if events is None:
        return None
    agg: dict[str, list[float]] = {}
    for e in events:
        if on_gpu(e):
            continue
        a = agg.setdefault(e.name, [0.0, 0.0])
        a[0] += 1
        a[1] += e.cpu_time_total
    return {k: (round(v[0] / CALLS, 2), round(v[1] / CALLS, 2)) for k, v in agg.items()}


def probe(scheme: str, max_n: int, api: bool = False,
          kernels: bool = True) -> list[dict[str, Any]]:
    out = []
    timer = _core.Timer("cuda")
    for row in phantom_rows(scheme):
        if row.n > max_n:
            continue
        lib = VeilLib(row, "cuda")
        lib.setup([])
        x = _values(row, 1)
        px = lib.encode(x)
        cx, cy = lib.encrypt(px), lib.encrypt(px)
        acc = lib.encrypt(px)
        # In place and repeated, a CKKS product's scale would grow each time: a plaintext at
        # scale 1 keeps it (the cost does not depend on the scale).
        unit = (lib.encoder.encode_real(x, 1.0, lib.level, "cuda") if scheme == "ckks" else px)
        ops = {
            "encode": lambda: lib.encode(x),
            "decrypt": lambda: lib.decryptor.decrypt(cx),
            "add": lambda: lib.ev.add(cx, cy),
            "add_inplace": lambda: lib.ev.add_inplace(acc, cy),
            "multiply_plain": lambda: lib.ev.multiply_plain(cx, px),
            # Phantom times its in-place forms (add_inplace, multiply_plain_inplace): these are
            # the like-for-like rows. Repeated in place on one ciphertext, the product's words
            # change but not its cost.
            "multiply_plain_inplace": lambda: lib.ev.multiply_plain_inplace(acc, unit),
        }
        if scheme != "ckks":
            ops["decrypt_unchecked"] = lambda: lib.decryptor.decrypt(cx, False)
        # Phantom's loop: in-place operations on a fresh copy of cx made before the start event.
        fresh = (lambda: copy.copy(cx))
        peer = {
            "add_inplace": (lambda c: lib.ev.add_inplace(c, cy), fresh),
            "multiply_plain_inplace": (lambda c: lib.ev.multiply_plain_inplace(c, px), fresh),
        }
        for name, fn in ops.items():
            rec: dict[str, Any] = {"scheme": scheme, "row": row.name, "op": name,
                                   "event_us": round(event_us(timer, fn), 2)}
            pfn, setup = peer.get(name, (fn, None))
            rec["peer_us"] = round(peer_us(timer, pfn, setup), 2)
            host, span = loop_us(timer, fn)
            rec["host_us"], rec["stream_us"] = round(host, 2), round(span, 2)
            k = kernel_us(fn) if kernels else None
            if k is not None:
                rec["kernel_us"], rec["kernels"] = round(k[0], 2), k[1]
            if api and row.n == max_n:
                rec["api"] = api_calls(fn)
            out.append(rec)
            print(json.dumps(rec), flush=True)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--scheme", action="append", choices=("bfv", "bgv", "ckks"))
    ap.add_argument("--max-n", type=int, default=65536)
    ap.add_argument("--json")
    ap.add_argument("--api", action="store_true",
                    help="also the CUDA runtime calls per op call at the largest N")
    ap.add_argument("--no-kernels", action="store_true",
                    help="skip the kernels' own time (CUPTI through PyTorch, whose import can "
                         "fail on a machine where PyTorch and this build disagree)")
    a = ap.parse_args()
    res = []
    for s in a.scheme or ["bfv", "bgv", "ckks"]:
        res += probe(s, a.max_n, a.api, not a.no_kernels)
    if a.json:
        with open(a.json, "w") as f:
            json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
