"""``veil bench --scheme ckks --bootstrap``: times CKKS bootstrapping (full and sparse slots).

Method: one context per slot count from :func:`veil._bootstrap.preset_chain` (N = 2^16 at
128-bit security unless ``log_n`` says otherwise), a fresh ciphertext of uniform random complex
values of modulus <= 1 at the bootstrapper's input level; ``runs`` timed bootstraps after one warm-up, each timed by
:class:`veil.Timer` (CUDA events on a GPU) around the whole call; the median is reported with
the output level, the precision of the last result against the input (bits, min and mean, as
:func:`veil.ckks.precision`) and the key and plaintext memory. ``energy`` adds joules per
bootstrap through NVML (:mod:`veil._energy`).
"""

from __future__ import annotations

import json
import statistics
import time
from typing import Any

import numpy as np

from . import _core, _energy
from ._bench_rows import load_peers
from ._bootstrap import BootstrapConfig
from ._ckks import CKKSContext, precision

#: Published or measured peers (label, ms), full slots at N = 2^16 (package data peers.json,
#: "bootstrapping"; each entry there names its GPU and whether it was measured or published).
PEERS = [(p["label"], float(p["ms"])) for p in load_peers()["bootstrapping"]["peers"]]


def run(device: str = "cuda", log_n: int = 16, slots=(None, 4096), runs: int = 20,
        word_bits=(64, 32), energy: bool = False, json_path: str | None = None,
        markdown_path: str | None = None, verbose: bool = True,
        security: int | None = 128, commit: str | None = None,
        pack_sparse: bool = True) -> dict[str, Any]:
    """Times bootstrapping for each word size and slot count; returns the records.

    Args:
        device: where Veil runs. log_n: log2 N. slots: slot counts (None: N/2). runs: timed
        runs. word_bits: chains to time (64: :func:`preset_chain` with 64-bit words, 32: with
        ~30-bit primes). energy: NVML joules. security: the chain's bound (None: as 128 bits,
        for small test N). commit: the commit measured (default as ``veil bench``:
        VEIL_GIT_COMMIT or the checkout's HEAD, see :func:`veil.bench.git_commit`).
        pack_sparse: also time each sparse slot count with ``BootstrapConfig.pack_sparse`` (one
        EvalMod for both halves, one user level less).
    """
    from .bench import cpu_model, git_commit

    commit = git_commit(commit)
    results = []
    meter = None
    if energy and device != "cpu":
        try:
            meter = _energy.open_meter(device)
        except _energy.EnergyUnavailable as e:
            if verbose:
                print(f"energy: {e}")
    variants = [(sl, False) for sl in slots]
    if pack_sparse:
        variants += [(sl, True) for sl in slots if sl is not None and sl <= 2 ** log_n // 4]
    for wb in word_bits:
        for sl, pack in variants:
            cfg = BootstrapConfig(slots=sl, pack_sparse=pack)
            t0 = time.perf_counter()
            ctx = CKKSContext(poly_modulus_degree=2 ** log_n, device=device, seed=7,
                              bootstrapping=cfg, word_bits=wb if wb == 32 else None,
                              security=security)
            setup_s = time.perf_counter() - t0
            bt = ctx.bootstrapper
            n = bt.slots
            rng = np.random.default_rng(1)
            x = rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)
            vals = np.tile(x, ctx.slot_count // n)
            ct = ctx.encrypt(vals, level=bt.input_level).raw
            timer = _core.Timer(device)
            out = bt.bootstrap(ct)  # warm-up
            times = []
            for _ in range(runs):
                timer.start()
                out = bt.bootstrap(ct)
                times.append(timer.stop())
            med_us = statistics.median(times) * 1000  # Timer.stop() gives milliseconds
            phases: dict = {}
            for _ in range(3):
                bt.bootstrap(ct, timings=phases)
            phases = {k: round(v / 3 * 1000, 2) for k, v in phases.items()}  # ms, synchronized
            assert ctx.decryptor is not None  # the context made its own secret key
            dec = ctx.encoder.decode(ctx.decryptor.decrypt(out))
            prec = precision(vals, dec)
            rec = {
                "word_bits": ctx.word_bits, "log_n": log_n, "slots": n, "pack_sparse": pack,
                "median_ms": med_us / 1000, "min_ms": min(times), "runs": runs,
                "output_level": out.level, "levels_left": bt.levels_left,
                "min_bits": prec["min_bits"], "mean_bits": prec["mean_bits"],
                "key_mb": bt.key_bytes() / 2 ** 20, "plaintext_mb": bt.plaintext_bytes() / 2 ** 20,
                "rotation_keys": len(bt.rotation_steps), "setup_s": setup_s,
                "depth": cfg.depth, "phases_ms": phases,
            }
            if meter is not None:
                rec["energy"] = meter.measure(lambda: bt.bootstrap(ct), med_us,
                                              idle_w=meter.idle_w())
            results.append(rec)
            if verbose:
                print(json.dumps(rec))
            del ctx, bt, out
    record = {"device": device, "git_commit": commit, "cpu_model": cpu_model(),
              "results": results, "peers": PEERS}
    if json_path:
        with open(json_path, "w") as f:
            json.dump(record, f, indent=1)
    if markdown_path:
        with open(markdown_path, "w") as f:
            f.write(markdown(record))
    return record


def markdown(record: dict) -> str:
    """The results as markdown tables beside the peers (rendered by rich, as ``veil bench``)."""
    from ._bench_report import ReportTable, markdown_table

    runs = ReportTable("", ["words", "slots", "median ms", "levels left",
                            "precision min / mean bits", "keys MiB", "plaintexts MiB",
                            "J per bootstrap (above idle)"])
    for r in record["results"]:
        e = r.get("energy")
        joules = "-" if not e else (f"{e['energy_uj'] / 1e6:.2f}" + (
            f" ({e['energy_above_idle_uj'] / 1e6:.2f})" if e.get("energy_above_idle_uj") else ""))
        slots = f"{r['slots']} packed" if r.get("pack_sparse") else str(r["slots"])
        runs.rows.append([str(r["word_bits"]), slots, f"{r['median_ms']:.1f}",
                          str(r["levels_left"]), f"{r['min_bits']:.1f} / {r['mean_bits']:.1f}",
                          f"{r['key_mb']:.0f}", f"{r['plaintext_mb']:.0f}", joules])
    peers = ReportTable("", ["peer (full slots, N = 2^16)", "ms"],
                        [[name, f"{ms:g}"] for name, ms in record["peers"]])
    head = f"commit {record.get('git_commit') or 'unknown'}, CPU {record.get('cpu_model', '?')}, " \
        f"device {record.get('device', '?')}\n\n"
    return head + markdown_table(runs) + "\n" + markdown_table(peers)
