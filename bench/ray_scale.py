"""Scale-out on Ray, measured (issue 28): online serving and batch bootstrapping over 1..G GPUs.

Modes (each writes ``<mode>.json`` and prints a markdown table; run from a scratch directory):

* ``online --gpus 1,2``: for each GPU count n, (a) n independent ``veil serve`` processes, one
  per GPU (``CUDA_VISIBLE_DEVICES``), each loaded by its own ``veil loadtest`` (``--clients``
  x ``--requests``), all at once; (b) one ``veil serve --ray --replicas n --ingress-replicas
  n`` loaded by n such ``veil loadtest`` processes at once, for each of ``--variants``
  (``direct``: clients send a session's requests to its replica's own endpoint; ``front``:
  ``--no-direct``, every request through a front end and a Ray call). Throughput is the sum over the
  load generators, latency their worst p50/p99; every answer is checked by ``veil loadtest``.
* ``kill --gpus 2``: ``veil serve --ray`` in this process, ``--clients`` client threads
  sending requests back to back for ``--seconds``; one worker replica is killed a third of
  the way in. Reports wrong and failed answers, requests per second in 1-s windows, and the
  time from the kill until a window reaches 90 % of the rate before it.
* ``batch --gpus 1,2``: ``veil.distributed.WorkerPool`` bootstrapping ``--count`` ciphertexts
  (N = 2^16, full slots, 32-bit words) on n GPUs; reports bootstraps/s, the speed-up over one
  GPU and the worst precision, with the in-process loop on one GPU beside it (and that loop
  waiting for each bootstrap and copying it to the host, as a worker does). Each pool maps the
  whole batch ``--repeat`` times after a warm-up; the median run is reported.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import threading
import time
from collections import Counter

import numpy as np


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def wait_health(url: str, proc: subprocess.Popen, timeout: float = 400) -> None:
    import httpx

    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"server exited with {proc.returncode}")
        try:
            if httpx.get(url + "/health", timeout=5).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(1)
    raise RuntimeError("server did not start")


def start_server(args: list[str], log: str, env: dict | None = None) -> subprocess.Popen:
    return subprocess.Popen([sys.executable, "-m", "veil", "serve", *args],
                            stdout=open(log, "w"), stderr=subprocess.STDOUT,
                            env={**os.environ, **(env or {})})


def stop_server(proc: subprocess.Popen) -> None:
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(90)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def cpu_ticks() -> dict:
    """CPU time (clock ticks, user + system) of every thread of every process on this host:
    {(pid, tid): (ticks, process name, thread name)} from /proc (Linux)."""
    seen = {}
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read().replace(b"\0", b" ").decode()[:90]
            for tid in os.listdir(f"/proc/{pid}/task"):
                st = open(f"/proc/{pid}/task/{tid}/stat").read()
                name = st[st.index("(") + 1:st.rindex(")")]
                f = st[st.rindex(")") + 2:].split()
                seen[(int(pid), int(tid))] = (int(f[11]) + int(f[12]), cmd, name)
        except (OSError, ValueError, IndexError):
            continue
    return seen


def cpu_report(before: dict, after: dict, seconds: float, top: int = 12) -> dict:
    """Cores used over ``seconds`` per process (the busiest ``top``) and, for the busiest
    processes, per thread name; with the host's total."""
    hz = os.sysconf("SC_CLK_TCK")
    per_proc: Counter = Counter()
    per_thread: dict[int, Counter] = {}
    names = {}
    for key, (t, cmd, name) in after.items():
        d = (t - before.get(key, (0,))[0]) / hz / seconds
        if d <= 0:
            continue
        per_proc[key[0]] += d
        names[key[0]] = cmd
        per_thread.setdefault(key[0], Counter())[name] += d
    busiest = per_proc.most_common(top)
    return {"host_cores": round(sum(per_proc.values()), 2),
            "processes": [{"pid": pid, "cores": round(c, 2), "cmd": names[pid],
                           "threads": {n: round(v, 2) for n, v in
                                       per_thread[pid].most_common(6)}}
                          for pid, c in busiest]}


def loadtests(urls: list[str], clients: int, requests: int, out: str, tag: str) -> dict:
    procs, paths = [], []
    for i, url in enumerate(urls):
        path = os.path.join(out, f"load_{tag}_{i}.json")
        paths.append(path)
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "veil", "loadtest", "--server", url, "--clients",
             str(clients), "--requests", str(requests), "--json", path],
            stdout=open(path + ".log", "w"), stderr=subprocess.STDOUT))
    # Host CPU while the generators run (their setup included: the report is for comparing
    # the server processes of two runs, not for absolute numbers).
    t0, ticks0 = time.perf_counter(), cpu_ticks()
    codes = [p.wait() for p in procs]
    cpu = cpu_report(ticks0, cpu_ticks(), time.perf_counter() - t0)
    with open(os.path.join(out, f"cpu_{tag}.json"), "w") as f:
        json.dump(cpu, f, indent=1)
    print(f"{tag}: host {cpu['host_cores']} cores; busiest:",
          [(p["cores"], p["cmd"][:40], p["threads"]) for p in cpu["processes"][:8]], flush=True)
    rs = [json.load(open(p)) for p in paths]
    return {"rps": sum(r["throughput_rps"] for r in rs),
            "p50_ms": max(r["latency_ms"]["p50"] for r in rs),
            "p99_ms": max(r["latency_ms"]["p99"] for r in rs),
            "ok": sum(r["ok"] for r in rs), "failed": sum(r["failed"] for r in rs),
            "wrong": sum(r["wrong"] for r in rs), "passed": all(c == 0 for c in codes),
            "generators": len(rs),
            "direct": sum(r.get("direct_requests", 0) for r in rs),
            "fell_back": sum(r.get("fell_back", 0) for r in rs),
            "sessions_per_endpoint": sorted(sum(
                (Counter(r.get("sessions_per_endpoint", {})) for r in rs), Counter()).values())}


def online(a) -> list[dict]:
    rows = []
    for n in a.gpus:
        procs, urls = [], []
        for g in range(n):
            port = free_port()
            procs.append(start_server(["--device", "cuda", "--port", str(port), "--models",
                                       "logreg"], os.path.join(a.out, f"serve_{n}_{g}.log"),
                                      {"CUDA_VISIBLE_DEVICES": str(g)}))
            urls.append(f"http://127.0.0.1:{port}")
        try:
            for p, u in zip(procs, urls):
                wait_health(u, p)
            ind = loadtests(urls, a.clients, a.requests, a.out, f"ind{n}")
        finally:
            for p in procs:
                stop_server(p)
        for variant in a.variants:
            row = ray_online(a, n, variant, ind)
            rows.append(row)
            print(json.dumps(row), flush=True)
    print(f"\nRay Serve started by: {sorted({r['how'] for r in rows})}")
    print("\n| GPUs | independent req/s | p50 / p99 ms | veil serve --ray | req/s | p50 / p99 ms "
          "| Ray / independent | p99 ratio | wrong / failed | uploads / key loads | direct / "
          "fell back | sessions per endpoint |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        i, y = r["independent"], r["ray"]
        print(f"| {r['gpus']} | {i['rps']:.0f} | {i['p50_ms']:.1f} / {i['p99_ms']:.1f} | "
              f"{r['variant']} | {y['rps']:.0f} | {y['p50_ms']:.1f} / {y['p99_ms']:.1f} | "
              f"{r['ray_vs_independent']:.2f} | {r['p99_ratio']:.2f} | "
              f"{i['wrong'] + y['wrong']} / {i['failed'] + y['failed']} | "
              f"{r['uploads']} / {r['key_loads']} | {y['direct']} / {y['fell_back']} | "
              f"{y['sessions_per_endpoint']} |")
    return rows


def ray_online(a, n: int, variant: str, ind: dict) -> dict:
    """One ``veil serve --ray`` run over n GPUs: ``direct`` (clients send a session's requests
    to its replica's own endpoint) or ``front`` (``--no-direct``: every request through the
    front ends and a Ray call)."""
    import httpx

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    t0 = time.monotonic()
    extra = ["--no-direct"] if variant == "front" else []
    proc = start_server(["--ray", "--device", "cuda", "--port", str(port), "--models",
                         "logreg", "--replicas", str(n), "--ingress-replicas", str(n), *extra],
                        os.path.join(a.out, f"serve_ray_{n}_{variant}.log"))
    how = "veil serve --ray"
    try:
        try:
            wait_health(url, proc)
        except RuntimeError:  # the CLI's ray.init crashed on this machine: same app, Ray first
            how = "cluster.start (ray imported first)"
            proc = subprocess.Popen(
                [sys.executable, __file__, "serve-ray", "--gpus", str(n), "--port", str(port),
                 *(["--variants", "front"] if variant == "front" else [])],
                stdout=open(os.path.join(a.out, f"serve_ray_{n}_{variant}_b.log"), "w"),
                stderr=subprocess.STDOUT)
            wait_health(url, proc)
        start_s = time.monotonic() - t0
        rr = loadtests([url] * n, a.clients, a.requests, a.out, f"ray{n}{variant}")
        health = httpx.get(url + "/health", timeout=30).json()
    finally:
        stop_server(proc)
    return {"gpus": n, "variant": variant, "independent": ind, "ray": rr, "ray_start_s": start_s,
            "how": how, "uploads": health.get("uploads"), "key_loads": health.get("key_loads"),
            "ray_vs_independent": rr["rps"] / ind["rps"], "p99_ratio": rr["p99_ms"] / ind["p99_ms"]}


def serve_ray(a) -> None:
    """The Ray Serve application in this process, Ray imported and started first (until
    SIGTERM)."""
    import ray

    ray.init(address="local", namespace="veil", log_to_driver=False)
    from veil import serve
    from veil.serve import cluster

    n = a.gpus[-1]
    cluster.start(serve.ServeConfig(device="cuda", warmup=True), serve.load_models(["logreg"]),
                  port=a.port, replicas=n, ingress_replicas=n, direct="front" not in a.variants)
    stop = []
    signal.signal(signal.SIGTERM, lambda *_: stop.append(1))
    while not stop:
        time.sleep(0.5)
    cluster.stop()


def kill(a) -> dict:
    import ray
    import veil
    from veil import serve
    from veil.serve import cluster
    from veil.serve.client import VeilClient

    n = a.gpus[-1]
    ray.init(address="local", namespace=cluster.NAMESPACE, log_to_driver=False)
    model = serve.load_models(["logreg"])["logreg"]
    port = free_port()
    url = cluster.start(serve.ServeConfig(device=a.device), {"logreg": model}, port=port,
                        replicas=n, ingress_replicas=n)
    stop_at = time.monotonic() + 3600
    events: list[tuple[float, str]] = []
    fell_back: list[int] = []
    lock = threading.Lock()

    def client(c: int) -> None:
        ctx = model.client_context(device="cpu", seed=100 + c)
        with VeilClient(url, timeout=120) as vc:
            sid = vc.open_session(ctx)
            x = model.samples()[0]
            bodies = [[ctx.encrypt(v).to_bytes() for v in model.encode(x[k::3], ctx.slot_count)]
                      for k in range(3)]
            first: dict[int, bytes] = {}
            i = 0
            while time.monotonic() < stop_at:
                k = i % 3
                i += 1
                try:
                    out, _ = vc.evaluate_bytes(sid, "logreg", bodies[k])
                    blob = b"".join(out)
                    if k not in first:  # decrypt once; later answers must be the same bytes
                        cts = [veil.Ciphertext.from_bytes(b, ctx) for b in out]
                        got = model.decode([ctx.decrypt(ct) for ct in cts], len(x[k::3]))
                        ok = np.array_equal(got, model.reference(x[k::3]))
                        first[k] = blob if ok else b""
                    status = "ok" if blob == first[k] else "wrong"
                except Exception as e:  # noqa: BLE001 - counted
                    status = f"failed:{type(e).__name__}:{str(e)[:80]}"
                with lock:
                    events.append((time.monotonic(), status))
            fell_back.append(vc.fell_back)  # requests sent to the front end after the kill

    threads = [threading.Thread(target=client, args=(c,)) for c in range(a.clients)]
    for t in threads:
        t.start()
    time.sleep(15)  # sessions open, warm
    t_start = time.monotonic()
    stop_at = t_start + a.seconds
    time.sleep(a.seconds / 3)
    from ray.util import list_named_actors

    victim = [x for x in list_named_actors(all_namespaces=True)
              if "VeilWorker" in x["name"] and x["namespace"] == "serve"][0]
    t_kill = time.monotonic()
    ray.kill(ray.get_actor(victim["name"], namespace="serve"), no_restart=True)
    for t in threads:
        t.join()
    cluster.stop()
    ev = [(t - t_start, s) for t, s in events if t >= t_start]
    windows = np.zeros(int(a.seconds) + 1)
    for t, s in ev:
        if s == "ok" and t < a.seconds:
            windows[int(t)] += 1
    k = int(t_kill - t_start)
    before = float(np.mean(windows[1:k])) if k > 1 else float(windows[0])
    recovery = None
    for w in range(k + 1, int(a.seconds)):
        if windows[w] >= 0.9 * before:
            recovery = w + 1 - (t_kill - t_start)
            break
    failed = [s for _, s in ev if s.startswith("failed")]
    res = {"gpus": n, "clients": a.clients, "seconds": a.seconds,
           "ok": sum(1 for _, s in ev if s == "ok"),
           "wrong": sum(1 for _, s in ev if s == "wrong"), "failed": len(failed),
           "fell_back": sum(fell_back),
           "failures": sorted(set(failed))[:5], "rps_before": before,
           "rps_windows": windows.tolist(), "kill_at_s": t_kill - t_start,
           "recovered_after_s": recovery}
    print(json.dumps(res), flush=True)
    return res


def batch(a) -> list[dict]:
    import veil
    from veil import distributed

    ctx = veil.ckks(poly_modulus_degree=1 << 16, device="cuda", seed=7, word_bits=32,
                    bootstrapping=veil.BootstrapConfig())
    bt = ctx.bootstrapper
    rng = np.random.default_rng(1)
    xs = [rng.uniform(-1, 1, ctx.slot_count) for _ in range(a.count)]
    cts = [ctx.encrypt(x, level=bt.input_level) for x in xs]

    def worst_bits(outs) -> float:
        err = max(float(np.max(np.abs(ctx.decrypt(o).real - x))) for o, x in zip(outs, xs))
        return -float(np.log2(err))

    ctx.bootstrap(cts[0])
    t0 = time.perf_counter()
    local = [ctx.bootstrap(c) for c in cts]
    veil._core.synchronize(ctx.device)
    base = time.perf_counter() - t0
    rows = [{"gpus": "1 (in-process loop)", "s": base, "per_s": a.count / base,
             "bits": worst_bits(local)}]
    del local
    # What a worker does under its device lock, without Ray: each bootstrap waited for and
    # its result copied to the host before the next one starts.
    t0 = time.perf_counter()
    for c in cts:
        out = ctx.bootstrap(c)
        veil._core.synchronize(ctx.device)
        out.to("cpu")
    base = time.perf_counter() - t0
    rows.append({"gpus": "1 (in-process, each synchronized and copied to the host)", "s": base,
                 "per_s": a.count / base, "bits": float("nan")})
    for conc, n in [(c, n) for c in a.concurrency for n in a.gpus]:
        t0 = time.perf_counter()
        with distributed.WorkerPool(ctx, n, device="cuda", concurrency=conc) as pool:
            started = [w["setup"] for w in pool.workers()]
            t_ready = time.perf_counter() - t0
            pool.bootstrap(cts[:2 * n])  # keys loaded, warm
            setup = time.perf_counter() - t0
            print(f"{n} GPUs: pool start {t_ready:.1f} s:",
                  {k: round(v, 2) for k, v in pool.setup_stats.items()}, "workers (fetch, load):",
                  [(round(w["get"], 2), round(w["load"], 2)) for w in started],
                  f"first map (warm-up) {setup - t_ready:.1f} s", flush=True)
            runs = []  # (wall, stats, results) of --repeat maps of the whole batch
            for _ in range(a.repeat):
                t1 = time.perf_counter()
                outs = pool.bootstrap(cts)
                runs.append((time.perf_counter() - t1, pool.last_stats, outs))
                print(f"{n} GPUs, concurrency {conc}: {a.count / runs[-1][0]:.1f} bootstraps/s; "
                      "where the time went (s):",
                      {k: round(v, 3) for k, v in pool.last_stats.items()}, flush=True)
                del outs
            walls = sorted(r[0] for r in runs)
            wall, stats, outs = sorted(runs, key=lambda r: r[0])[len(runs) // 2]  # the median
            del runs
            # the same pool again with other driver thread counts and per-actor queue depths
            variants = [("fetch_threads", v) for v in a.fetch_threads] + \
                [("max_in_flight", v) for v in a.in_flight]
            defaults = {"fetch_threads": pool.fetch_threads, "max_in_flight": pool.max_in_flight}
            for attr, value in variants:
                setattr(pool, attr, value)
                t2 = time.perf_counter()
                pool.bootstrap(cts)
                print(f"{n} GPUs, {attr}={value}: "
                      f"{a.count / (time.perf_counter() - t2):.1f} bootstraps/s",
                      {k: round(v, 3) for k, v in pool.last_stats.items()}, flush=True)
                setattr(pool, attr, defaults[attr])
        rows.append({"gpus": n, "concurrency": conc, "s": wall, "per_s": a.count / wall,
                     "per_s_runs": [a.count / w for w in walls],
                     "setup_s": setup, "bits": worst_bits(outs), "stats": stats})
        print(json.dumps(rows[-1]), flush=True)
    print(f"\nPools: the median of {a.repeat} runs of the whole batch (every run's rate in the "
          "last column).")
    print("\n| GPUs | concurrency | bootstraps | wall s | bootstraps/s | speed-up | worst bits "
          "| pool setup s | runs, bootstraps/s |")
    print("|---|---|---|---|---|---|---|---|---|")
    for r in rows:
        one = next((o["per_s"] for o in rows if o.get("concurrency") == r.get("concurrency")
                    and o["gpus"] == min(a.gpus)), None)
        sp = f"{r['per_s'] / one:.2f}" if isinstance(r["gpus"], int) and one else "-"
        print(f"| {r['gpus']} | {r.get('concurrency', '-')} | {a.count} | {r['s']:.2f} | "
              f"{r['per_s']:.1f} | {sp} | {r['bits']:.1f} | {r.get('setup_s', 0):.1f} | "
              f"{' / '.join(f'{v:.1f}' for v in r.get('per_s_runs', []))} |")
    return rows


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("mode", choices=["online", "kill", "batch", "serve-ray"])
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--gpus", default="1,2", type=lambda v: [int(x) for x in v.split(",")])
    p.add_argument("--clients", type=int, default=8)
    p.add_argument("--requests", type=int, default=50)
    p.add_argument("--seconds", type=float, default=30)
    p.add_argument("--count", type=int, default=64)
    p.add_argument("--repeat", type=int, default=3,
                   help="batch: maps of the whole batch per pool (the median is reported)")
    p.add_argument("--fetch-threads", default=[], dest="fetch_threads",
                   type=lambda v: [int(x) for x in v.split(",")],
                   help="batch: also run each pool with these driver thread counts")
    p.add_argument("--concurrency", default=[2], type=lambda v: [int(x) for x in v.split(",")],
                   help="batch: the pools' actor concurrency values (each with every --gpus)")
    p.add_argument("--in-flight", default=[], dest="in_flight",
                   type=lambda v: [int(x) for x in v.split(",")],
                   help="batch: also time the same pool with these max_in_flight values")
    p.add_argument("--variants", default=["direct"], type=lambda v: v.split(","),
                   help="online: veil serve --ray variants, 'direct' and/or 'front' (--no-direct)")
    p.add_argument("--out", default=".")
    p.add_argument("--device", default="cuda", help="kill: the workers' device (cpu: a dry run)")
    a = p.parse_args()
    os.makedirs(a.out, exist_ok=True)
    if a.mode == "serve-ray":
        serve_ray(a)
        return
    res = {"online": online, "kill": kill, "batch": batch}[a.mode](a)
    with open(os.path.join(a.out, f"{a.mode}.json"), "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
