"""Where a Ray batch item's time goes outside the GPU work (issue 28): the (de)serialization of
one refreshed N = 2^16 ciphertext, step by step, median of 7 after a warm-up.

Usage: python bench/pickle_cost.py [cuda|cpu] [--retain]"""
from __future__ import annotations

import pickle
import statistics
import sys
import time
import zlib

import numpy as np
import veil
from veil import _core


def med(fn, n=7):
    fn()
    ts = []
    for _ in range(n):
        t = time.perf_counter()
        fn()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts) * 1e3


def main() -> None:
    device = sys.argv[1] if len(sys.argv) > 1 else "cuda"
    if "--retain" in sys.argv:  # glibc keeps freed blocks: no page faults on each new buffer
        from veil.distributed import retain_freed_memory
        print("retain_freed_memory:", retain_freed_memory())
    ctx = veil.ckks(poly_modulus_degree=1 << 16, coeff_modulus=[30] * 24, scale=2.0**30,
                    security=None, word_bits=32, galois_steps=None, device=device)
    ct = ctx.encrypt(np.random.rand(8))
    raw = ct.raw
    buf = _core.ciphertext_to_buffer(raw, len(ct), False)
    data = buf.tobytes()
    rows = {
        "raw.to('cpu') (D2H)": lambda: raw.to("cpu"),
        "ciphertext_to_buffer (D2H + save)": lambda: _core.ciphertext_to_buffer(raw, len(ct), False),
        "zlib.crc32 of the bytes": lambda: zlib.crc32(data),
        "bytes copy": lambda: bytes(bytearray(data)),
        "from_bytes (load + H2D)": lambda: _core.Ciphertext.from_bytes(data, ctx.context, ctx.device),
        "from_bytes to cpu": lambda: _core.Ciphertext.from_bytes(data, ctx.context, "cpu"),
    }
    bufs: list = []
    stream = pickle.dumps(ct, protocol=5, buffer_callback=bufs.append)
    rows["pickle.dumps out of band"] = lambda: pickle.dumps(ct, protocol=5, buffer_callback=[].append)
    rows["pickle.loads out of band"] = lambda: pickle.loads(stream, buffers=[b.raw() for b in bufs])
    try:
        import ray
        ray.init(log_to_driver=False, include_dashboard=False)
        rows["ray.put"] = lambda: ray.put(ct)
        ref = ray.put(ct)
        rows["ray.get (same process)"] = lambda: ray.get(ref)

        @ray.remote(num_cpus=0)
        def echo(x):
            return x
        rows["task round trip of the bytes (numpy)"] = lambda: ray.get(echo.remote(buf))
    except ImportError:
        pass
    print(f"{len(data) / 1e6:.1f} MB, device {device}")
    for k, f in rows.items():
        print(f"| {k} | {med(f):.2f} ms |", flush=True)


if __name__ == "__main__":
    main()
