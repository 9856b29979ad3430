"""One small operation's kernels, for Nsight Compute: sets up a Phantom row on the GPU, then runs
the operation `--calls` times after a marker call of ``_core.synchronize`` (run it under
``ncu --csv --metrics gpu__time_duration.sum`` and read the last kernels)."""
from __future__ import annotations

import argparse

from veil import _core
from veil._bench_ops import VeilLib, _values
from veil._bench_rows import phantom_rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("scheme", choices=("bfv", "bgv", "ckks"))
    ap.add_argument("op", choices=("encode", "decrypt", "multiply_plain_inplace", "add_inplace"))
    ap.add_argument("--n", type=int, default=65536)
    ap.add_argument("--row", type=int, default=0, help="index among the rows of this N")
    ap.add_argument("--calls", type=int, default=3)
    ap.add_argument("--device", default="cuda")
    a = ap.parse_args()
    row = [r for r in phantom_rows(a.scheme) if r.n == a.n][a.row]
    lib = VeilLib(row, a.device)
    lib.setup([])
    x = _values(row, 1)
    px = lib.encode(x)
    cx, acc = lib.encrypt(px), lib.encrypt(px)
    ops = {
        "encode": lambda: lib.encode(x),
        "decrypt": lambda: lib.decryptor.decrypt(cx),
        "multiply_plain_inplace": lambda: lib.ev.multiply_plain_inplace(acc, px),
        "add_inplace": lambda: lib.ev.add_inplace(acc, cx),
    }
    fn = ops[a.op]
    fn()
    _core.synchronize(a.device)
    print(f"row {row.name}: {a.op} x {a.calls}", flush=True)
    for _ in range(a.calls):
        fn()
    _core.synchronize(a.device)


if __name__ == "__main__":
    main()
