"""``veil loadtest``: concurrent encrypted requests against ``veil serve``, every answer checked.

``clients`` threads (default 8), each a separate client with its own key set, session and HTTP
connection, send ``requests`` requests each (default 25) at once. Every request is a real
encrypted request: all of the model's test samples (143 for ``logreg``) in a fresh order per
request, encrypted with the client's secret key; every answer is decrypted and compared with the
plaintext model by the model's ``decode_check`` (exactly for the BFV models; within a tolerance
for a CKKS model such as ``cnn``).

Phases: (1) each client makes its keys, opens its session and encrypts its requests; (2) all
clients start together and send their requests back to back (timed: the load); (3) each client
decrypts and checks its answers. Encryption and decryption stay out of phase 2 so that the
numbers measure the server, not the load generator's CPU.

Reports: throughput (requests/s and samples/s over phase 2), latency of each request's HTTP
round trip (p50, p90, p99, max; nearest-rank), and the counts of failed requests (transport
error or error status) and wrong answers (decrypted != plaintext). It passes only when both are
0 and every request was answered (``veil loadtest`` exits with status 1 otherwise).

Without ``url`` a server is started in this process (uvicorn in a thread, on a free port of
127.0.0.1, on ``device``).
"""

from __future__ import annotations

import json
import threading
import time
from typing import Any

import numpy as np

from .._base import _CIPHERTEXT_CLASSES
from .client import ServerError, VeilClient, percentile
from .models import context_from_spec, load_model
from .upload import pack_frame


def run(url: str | None = None, clients: int = 8, requests: int = 25, model: str = "logreg",
        device: str | None = "auto", seed: int | None = None, compression: str = "zstd",
        json_path: str | None = None, verbose: bool = True) -> dict[str, Any]:
    """Runs the load test; returns its numbers.

    Args:
        url: the server (``http://127.0.0.1:8000``); None: start one in this process.
        clients, requests: concurrent clients and requests per client (each >= 1).
        model: the served model to call.
        device: the in-process server's device (only without ``url``).
        seed: fixes the clients' keys and the sample orders (None: OS entropy for the keys).
        compression: of the results (``zstd`` or ``none``).
        json_path: also write the result dict there as JSON.

    Returns:
        dict with ``passed``, ``clients``, ``requests_per_client``, ``total``, ``ok``,
        ``failed``, ``wrong``, ``errors`` (up to 10 messages), ``wall_s`` (phase 2),
        ``throughput_rps``, ``samples_per_s``, ``latency_ms`` (p50, p90, p99, max, mean),
        ``setup_s`` (phase 1), ``server`` (/health).
    """
    for name, v in (("clients", clients), ("requests", requests)):
        if not isinstance(v, int) or isinstance(v, bool) or v < 1:
            raise ValueError(f"{name}: expected a positive integer, got {v!r}")
    if url is None:
        from .app import BackgroundServer, create_app
        from .service import ServeConfig

        app = create_app(ServeConfig(device=device, max_sessions=max(32, clients),
                                     max_pending=max(64, 2 * clients)),
                         {model: load_model(model)})
        with BackgroundServer(app) as local_url:
            return run(local_url, clients, requests, model, device, seed, compression,
                       json_path, verbose)

    local = load_model(model)
    x, _ = local.samples()
    expected_all = local.reference(x)
    with VeilClient(url) as probe:
        health = probe.health()
        spec = probe.model(model)
    if local.weights_digest() != spec["weights_digest"]:
        raise ValueError(f"weights_digest: the local plaintext model {model!r} differs from the "
                         "server's; cannot check the answers")

    ready = threading.Barrier(clients + 1)
    results: list[dict] = [{} for _ in range(clients)]
    example: list[bytes] = []

    def client_main(c: int) -> None:
        out = results[c]
        out.update(latencies=[], failed=0, wrong=0, ok=0, errors=[], start=None, end=None,
                   direct=0, fell_back=0, endpoint=None, slow=[])
        http = None
        try:
            ctx = context_from_spec(spec, device="cpu",
                                    seed=None if seed is None else seed * 1000 + c)
            cls = _CIPHERTEXT_CLASSES[ctx.scheme]
            rng = np.random.default_rng(None if seed is None else [seed, c])
            http = VeilClient(url)
            sid = http.open_session(ctx)
            out["endpoint"] = http.routes.get(sid)
            payloads, orders = [], []
            for _ in range(requests):
                order = rng.permutation(len(x))
                slots = local.encode(x[order], ctx.slot_count)
                payloads.append([ctx.encrypt(v, symmetric=True).to_bytes() for v in slots])
                orders.append(order)
        except Exception as e:  # noqa: BLE001 - setup failed: all its requests count as failed
            out["failed"] = requests
            out["errors"].append(f"client {c} setup: {e}")
            ready.abort()
            if http is not None:
                http.close()
            return
        if c == 0:
            example.extend(payloads[0])
        answers: list = [None] * requests
        try:
            try:
                ready.wait()
            except threading.BrokenBarrierError:
                out["failed"] = requests
                out["errors"].append(f"client {c}: not started (another client's setup failed)")
                return
            out["start"] = time.perf_counter()
            for r in range(requests):
                t0 = time.perf_counter()
                try:
                    answers[r], server_ms = http.evaluate_bytes(sid, model, payloads[r],
                                                                compression)
                    out["latencies"].append(time.perf_counter() - t0)
                    out["slow"].append((out["latencies"][-1], c, r, server_ms))
                    out["slow"] = sorted(out["slow"], reverse=True)[:5]
                except Exception as e:  # noqa: BLE001 - every failure is counted
                    out["failed"] += 1
                    out["errors"].append(f"client {c} request {r}: {e}")
            out["end"] = time.perf_counter()
            for r, ans in enumerate(answers):
                if ans is None:
                    continue
                try:
                    got = local.decode([ctx.decrypt(cls.from_bytes(b, ctx)) for b in ans], len(x))
                    good = local.decode_check(got, expected_all[orders[r]])
                except ValueError as e:
                    good = False
                    out["errors"].append(f"client {c} request {r}: undecryptable answer: {e}")
                if good:
                    out["ok"] += 1
                else:
                    out["wrong"] += 1
            try:
                http.close_session(sid)
            except ServerError as e:
                out["errors"].append(f"client {c} close: {e}")
        finally:
            out["direct"], out["fell_back"] = http.sent_direct, http.fell_back
            http.close()

    t_setup = time.perf_counter()
    threads = [threading.Thread(target=client_main, args=(c,), name=f"veil-load-{c}")
               for c in range(clients)]
    for t in threads:
        t.start()
    try:
        ready.wait()
    except threading.BrokenBarrierError:
        pass
    t_setup = time.perf_counter() - t_setup
    for t in threads:
        t.join()

    lat = [v for r in results for v in r.get("latencies", [])]
    starts = [r["start"] for r in results if r.get("start") is not None]
    ends = [r["end"] for r in results if r.get("end") is not None]
    wall = (max(ends) - min(starts)) if starts and ends else 0.0
    total = clients * requests
    ok = sum(r.get("ok", 0) for r in results)
    failed = sum(r.get("failed", requests) for r in results)
    wrong = sum(r.get("wrong", 0) for r in results)
    errors = [e for r in results for e in r.get("errors", [])]
    out: dict[str, Any] = {
        "url": url,
        "model": model,
        "server": health,
        "clients": clients,
        "requests_per_client": requests,
        "samples_per_request": len(x),
        "total": total,
        "ok": ok,
        "failed": failed,
        "wrong": wrong,
        "errors": errors[:10],
        "passed": ok == total and failed == 0 and wrong == 0,
        "setup_s": t_setup,
        "wall_s": wall,
        "throughput_rps": len(lat) / wall if wall > 0 else 0.0,
        "samples_per_s": len(lat) * len(x) / wall if wall > 0 else 0.0,
        "request_bytes": len(pack_frame(example)) if example else 0,
        # veil serve --ray: requests sent straight to a replica's endpoint, those that fell
        # back to the front ends, and how many sessions each endpoint holds
        "direct_requests": sum(r.get("direct", 0) for r in results),
        "fell_back": sum(r.get("fell_back", 0) for r in results),
        "sessions_per_endpoint": _count(r.get("endpoint") for r in results),
        # the five slowest requests: latency, client, request index, the server's times (ms)
        "slowest": [{"ms": 1e3 * t, "client": c, "request": i, "server_ms": st}
                    for t, c, i, st in sorted((x for r in results for x in r.get("slow", [])),
                                              reverse=True, key=lambda x: x[0])[:5]],
        "latency_ms": {},
    }
    if lat:
        out["latency_ms"] = {
            "p50": 1e3 * percentile(lat, 50),
            "p90": 1e3 * percentile(lat, 90),
            "p99": 1e3 * percentile(lat, 99),
            "max": 1e3 * max(lat),
            "mean": 1e3 * float(np.mean(lat)),
        }
    if json_path:
        with open(json_path, "w") as f:
            json.dump(out, f, indent=2)
    if verbose:
        print_report(out)
    return out


def _count(endpoints) -> dict[str, int]:
    out: dict[str, int] = {}
    for e in endpoints:
        if e:
            out[e] = out.get(e, 0) + 1
    return out


def print_report(r: dict[str, Any]) -> None:
    """Prints :func:`run`'s results (rich table)."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    console.print(f"[bold]Veil load test: {r['clients']} clients x {r['requests_per_client']} "
                  f"requests ({r['model']}, {r['samples_per_request']} samples each) against "
                  f"{r['url']} (server device {r['server']['device']})[/bold]")
    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_column(style="cyan")
    t.add_column(justify="right")
    t.add_row("answered and correct", f"{r['ok']} / {r['total']}")
    t.add_row("failed requests", str(r["failed"]))
    t.add_row("wrong answers", str(r["wrong"]))
    t.add_row("setup (keys, sessions, encryption)", f"{r['setup_s']:.2f} s")
    t.add_row("load phase", f"{r['wall_s']:.2f} s")
    t.add_row("throughput", f"{r['throughput_rps']:.1f} requests/s "
              f"({r['samples_per_s']:.0f} samples/s)")
    lm = r["latency_ms"]
    if lm:
        t.add_row("latency p50 / p90 / p99 / max",
                  f"{lm['p50']:.1f} / {lm['p90']:.1f} / {lm['p99']:.1f} / {lm['max']:.1f} ms")
    console.print(t)
    for e in r["errors"]:
        console.print(f"[red]{e}[/red]")
    console.print("[green]passed[/green]" if r["passed"] else "[red]FAILED[/red]")


__all__ = ["print_report", "run"]
