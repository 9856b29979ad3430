"""Scale-out on Ray, on the CPU backend: two simulated nodes (``ray.cluster_utils.Cluster``),
``veil.distributed`` batch jobs and ``veil serve --ray``, with workers killed mid-load.

The oracles are numpy (plaintext arithmetic mod t), the plaintext model (``reference``) and the
in-process evaluation on the same keys; never the code under test.
"""

from __future__ import annotations

import concurrent.futures as cf
import os
import socket
import sys
import time

import numpy as np
import pytest

ray = pytest.importorskip("ray")
pytest.importorskip("ray.serve")
httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")

import veil
from veil import distributed, serve
from veil.serve import client

T = 65537

# The workers cannot import this test module: its functions travel by value.
ray.cloudpickle.register_pickle_by_value(sys.modules[__name__])


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def cluster():
    """Two Ray nodes in this machine, each with one ``veil_slot`` (one worker per node)."""
    from ray.cluster_utils import Cluster

    if ray.is_initialized():
        ray.shutdown()
    c = Cluster(initialize_head=True, head_node_args={"num_cpus": 2,
                                                       "resources": {"veil_slot": 1}})
    c.add_node(num_cpus=2, resources={"veil_slot": 1})
    ray.init(address=c.address, namespace="veil", log_to_driver=False)
    yield c
    try:
        from ray import serve as rserve

        rserve.shutdown()
    finally:
        ray.shutdown()
        c.shutdown()


@pytest.fixture(scope="module")
def bfv():
    return veil.bfv(poly_modulus_degree=4096, plain_modulus=T, device="cpu", seed=7)


def square_plus(ctx, ct):
    return ct * ct + 3


# ---- veil.distributed -----------------------------------------------------------------------
def test_pool_spreads_over_nodes_in_input_order(cluster, bfv) -> None:
    xs = [np.arange(16) * (i + 1) for i in range(9)]
    cts = [bfv.encrypt(x) for x in xs]
    with distributed.WorkerPool(bfv, 2, device="cpu", resources={"veil_slot": 1}) as pool:
        where = pool.workers()
        assert len({w["node_id"] for w in where}) == 2  # one actor per simulated node
        # where the start went: the driver's save and put, each worker's fetch and load
        assert set(pool.setup_stats) == {"save", "put", "workers"}
        assert all(v >= 0 for v in pool.setup_stats.values())
        assert pool.setup_stats["workers"] >= max(w["setup"]["load"] for w in where)
        out = pool.map(square_plus, cts)
    assert len(out) == len(xs)
    for x, ct in zip(xs, out):
        np.testing.assert_array_equal(np.mod(bfv.decrypt(ct)[:16], T), (x * x + 3) % T)


class DieOnce:
    """Kills its worker process the first time it sees item ``victim`` (a marker file makes the
    retry, on the restarted actor, succeed)."""

    def __init__(self, marker: str, victim: int) -> None:
        self.marker, self.victim = marker, victim

    def __call__(self, ctx, item):
        i, ct = item
        if i == self.victim and not os.path.exists(self.marker):
            open(self.marker, "w").close()
            os._exit(1)
        return i, ct * ct + 3


def test_pool_worker_death_is_retried_without_loss_or_duplicates(cluster, bfv, tmp_path) -> None:
    xs = [np.arange(16) + 100 * i for i in range(8)]
    items = [(i, bfv.encrypt(x)) for i, x in enumerate(xs)]
    marker = str(tmp_path / "died")
    with distributed.WorkerPool(bfv, 2, device="cpu", resources={"veil_slot": 1}) as pool:
        out = pool.map(DieOnce(marker, victim=3), items)
    assert os.path.exists(marker)  # a worker did die mid-batch
    assert [i for i, _ in out] == list(range(8))  # every item once, in order
    for x, (_, ct) in zip(xs, out):
        np.testing.assert_array_equal(np.mod(bfv.decrypt(ct)[:16], T), (x * x + 3) % T)


def test_pool_item_moves_to_a_live_actor_when_one_is_gone_for_good(cluster, bfv,
                                                                   tmp_path) -> None:
    xs = [np.arange(16) + i for i in range(6)]
    items = [(i, bfv.encrypt(x)) for i, x in enumerate(xs)]
    with distributed.WorkerPool(bfv, 2, device="cpu", resources={"veil_slot": 1},
                                max_restarts=0, max_task_retries=0) as pool:
        out = pool.map(DieOnce(str(tmp_path / "died"), victim=2), items)
        assert pool.retried >= 1
    assert [i for i, _ in out] == list(range(6))
    for x, (_, ct) in zip(xs, out):
        np.testing.assert_array_equal(np.mod(bfv.decrypt(ct)[:16], T), (x * x + 3) % T)


class FailOn:
    """Raises on item ``victim`` (an error of fn, not of the worker)."""

    def __init__(self, victim: int) -> None:
        self.victim = victim

    def __call__(self, ctx, item):
        i, ct = item
        if i == self.victim:
            raise ArithmeticError(f"item {i} refused")
        return ct + 1


def test_pool_one_fetch_thread_keeps_input_order_and_raises_fn_errors(cluster, bfv) -> None:
    xs = [np.arange(16) * 3 + i for i in range(7)]
    cts = [bfv.encrypt(x) for x in xs]
    with distributed.WorkerPool(bfv, 2, device="cpu", resources={"veil_slot": 1},
                                fetch_threads=1, max_in_flight=3) as pool:
        out = pool.map(square_plus, cts)
        for x, ct in zip(xs, out):
            np.testing.assert_array_equal(np.mod(bfv.decrypt(ct)[:16], T), (x * x + 3) % T)
        with pytest.raises(ArithmeticError, match="item 4 refused"):
            pool.map(FailOn(4), list(enumerate(cts)))


class Opaque:
    """A result type the pool does not know: pickled under the worker's device lock."""

    def __init__(self, ct) -> None:
        self.ct = ct


def timed_square(ctx, item):
    """(pid, start, end, {"sq": ct * ct, "meta": ...}, Opaque(ct + 1)): fn's interval on its
    worker, and results of several shapes."""
    i, ct = item
    t0 = time.time()
    out = ct * ct
    time.sleep(0.05)
    return os.getpid(), t0, time.time(), {"sq": out, "meta": (i, np.arange(3) + i)}, Opaque(ct + 1)


def test_pool_runs_one_call_at_a_time_on_the_device_and_returns_any_shape(cluster, bfv) -> None:
    """With calls running concurrently in an actor (concurrency 3), fn still runs one at a
    time per worker (its device lock), and results of any shape (dicts, tuples, numpy arrays,
    unknown objects holding ciphertexts) come back in input order with the right values."""
    xs = [np.arange(16) * 5 + i for i in range(9)]
    cts = [bfv.encrypt(x) for x in xs]
    with distributed.WorkerPool(bfv, 2, device="cpu", resources={"veil_slot": 1},
                                concurrency=3, max_in_flight=3) as pool:
        out = pool.map(timed_square, list(enumerate(cts)))
        stats = pool.last_stats
    assert len(out) == len(xs)
    for i, (x, (_, _, _, d, opaque)) in enumerate(zip(xs, out)):
        assert d["meta"][0] == i
        np.testing.assert_array_equal(d["meta"][1], np.arange(3) + i)
        np.testing.assert_array_equal(np.mod(bfv.decrypt(d["sq"])[:16], T), (x * x) % T)
        np.testing.assert_array_equal(np.mod(bfv.decrypt(opaque.ct)[:16], T), (x + 1) % T)
    by_worker: dict[int, list] = {}
    for pid, t0, t1, _, _ in out:
        by_worker.setdefault(pid, []).append((t0, t1))
    for spans in by_worker.values():
        spans.sort()
        for (_, end), (start, _) in zip(spans, spans[1:]):
            assert start >= end, f"two calls of one worker used the device at once: {spans}"
    assert stats["items"] == len(xs) and stats["worker_device"] >= 0.05 * len(xs)


def test_to_host_copies_ciphertexts_and_flags_unknown_objects(bfv) -> None:
    import collections

    ct = bfv.encrypt([1, 2, 3])
    copy, complete = distributed._to_host({"a": [ct, (1, 2.5, "s", b"b", None)],
                                          "n": np.arange(2), "again": ct})
    assert complete and copy["a"][0].device == "cpu"
    assert copy["again"] is copy["a"][0]  # one object, one copy (as pickle's memo)
    assert copy["a"][1] == (1, 2.5, "s", b"b", None)
    np.testing.assert_array_equal(bfv.decrypt(copy["a"][0])[:3], [1, 2, 3])
    # Anything but exact lists, tuples and dicts is left as it is, and pickled under the lock.
    point = collections.namedtuple("point", "x y")(ct, 1)
    loop: list = [ct]
    loop.append(loop)
    for unknown in ([ct, Opaque(ct)], point, collections.OrderedDict(a=ct), loop,
                    np.array([ct, None], dtype=object)):
        copy, complete = distributed._to_host(unknown)
        assert complete is False
        assert type(copy) is type(unknown)
    assert distributed._to_host(point)[0] is point


class FakeDeviceCiphertext(veil.Ciphertext):
    """A ciphertext that says it lives on a GPU: _to_host must ask it for a host copy."""

    @property
    def device(self) -> str:
        return "cuda:0"

    def to(self, device):
        self.asked = device
        return "host copy"


def test_to_host_asks_device_ciphertexts_for_a_host_copy() -> None:
    fake = object.__new__(FakeDeviceCiphertext)
    copy, complete = distributed._to_host((fake, [fake]))
    assert complete and copy == ("host copy", ["host copy"]) and fake.asked == "cpu"


def test_pool_errors(cluster, bfv) -> None:
    with pytest.raises(ValueError, match="workers: expected a positive integer"):
        distributed.WorkerPool(bfv, 0, device="cpu")
    with pytest.raises(ValueError, match="fetch_threads: expected a positive integer"):
        distributed.WorkerPool(bfv, 1, device="cpu", fetch_threads=0)
    for bad in (0, True, 1.5):
        with pytest.raises(ValueError, match="concurrency: expected a positive integer"):
            distributed.WorkerPool(bfv, 1, device="cpu", concurrency=bad)
    with pytest.raises(ValueError, match="device"):
        distributed.WorkerPool(bfv, 1, device="tpu")
    with pytest.raises(ValueError, match="ctx: expected a veil context"):
        distributed.WorkerPool("keys", 1, device="cpu")
    with pytest.raises(ValueError, match="ctx: no bootstrapping keys"), \
            distributed.WorkerPool(bfv, 1, device="cpu", resources={"veil_slot": 1}) as pool:
        pool.bootstrap([])


def test_bootstrap_many_equals_in_process_bootstrap(cluster) -> None:
    from veil import _bootstrap as B

    config = B.BootstrapConfig()
    chain = B.bootstrap_chain(11, 2, config, 64)
    ctx = veil.ckks(poly_modulus_degree=2 ** 11, security=None, device="cpu", seed=5,
                    galois_steps=None, **chain.context_args())
    ctx.enable_bootstrapping(config, seed=5)
    rng = np.random.default_rng(1)
    xs = [rng.uniform(-1, 1, ctx.slot_count) for _ in range(3)]
    cts = [ctx.encrypt(x) for x in xs]
    out = distributed.bootstrap_many(ctx, cts, 2, device="cpu", resources={"veil_slot": 1})
    for x, ct, got in zip(xs, cts, out):
        here = ctx.bootstrap(ct)
        # the same public keys and the same deterministic circuit: bit-identical
        assert got.raw.to_bytes("none") == here.raw.to_bytes("none")
        np.testing.assert_allclose(ctx.decrypt(got).real[:len(x)], x, atol=1e-3)


# ---- veil serve --ray -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def logreg():
    return serve.load_models(["logreg"])["logreg"]


@pytest.fixture(scope="module")
def served(cluster, logreg):
    from veil.serve import cluster as sc

    url = sc.start(serve.ServeConfig(device="cpu"), {"logreg": logreg}, port=free_port(),
                   replicas=2, worker_options={"num_cpus": 1, "resources": {"veil_slot": 1}})
    yield url
    sc.stop()


def encrypted_request(model, ctx, n=20, seed=0):
    x = model.samples()[0][seed:seed + n]
    blobs = [ctx.encrypt(v).to_bytes() for v in model.encode(x, ctx.slot_count)]
    return x, serve.pack_frame(blobs)


def decode(model, ctx, payload, n):
    blobs = serve.unpack_frame(payload, 64)
    return model.decode([ctx.decrypt(veil.Ciphertext.from_bytes(b, ctx)) for b in blobs], n)


def test_ray_demo_round_trip_is_exact(served) -> None:
    r = client.run_demo(served, model="logreg", device="cpu")
    assert r["exact"] and r["mismatches"] == 0


def test_one_upload_reaches_every_replica(served, logreg) -> None:
    ctx = logreg.client_context(device="cpu", seed=11)
    with httpx.Client(base_url=served, timeout=120) as http:
        before = http.get("/health").json()
        sid = http.post("/sessions", content=ctx.to_bytes()).json()["session_id"]
        replicas = set()
        for i in range(16):
            x, body = encrypted_request(logreg, ctx, seed=i)
            r = http.post(f"/sessions/{sid}/evaluate/logreg", content=body)
            assert r.status_code == 200, r.text
            replicas.add(r.headers["x-veil-replica"])
            np.testing.assert_array_equal(decode(logreg, ctx, r.content, len(x)),
                                          logreg.reference(x))
        after = http.get("/health").json()
        assert after["uploads"] - before["uploads"] == 1
        assert len(replicas) == 2  # both replicas served the session
        assert len({r.split(":")[2] for r in replicas}) == 2  # on both nodes
        assert http.delete(f"/sessions/{sid}").status_code == 204
        r = http.post(f"/sessions/{sid}/evaluate/logreg", content=body)
        assert r.status_code == 404 and r.json()["detail"].startswith("session:")


def _replica_infos(handle, replicas: int = 2, tries: int = 64) -> list[dict]:
    """info() of every replica: calls until each of the `replicas` has answered (the router picks
    the replica, so a fixed number of calls may miss one)."""
    seen: dict = {}
    for _ in range(tries):
        i = handle.info.remote().result()
        seen[i["replica"]] = i
        if len(seen) == replicas:
            return list(seen.values())
    raise AssertionError(f"{len(seen)} of {replicas} replicas answered in {tries} calls")


def test_workers_drop_deleted_sessions(served, logreg) -> None:
    """DELETE gives the workers' cached device copies back too: prune() (which each worker also
    runs within PRUNE_S of a request) drops them from every replica."""
    from ray import serve as rserve

    from veil.serve import cluster as sc

    ctx = logreg.client_context(device="cpu", seed=16)
    handle = rserve.get_deployment_handle("VeilWorker", app_name=sc.APP_NAME)
    with httpx.Client(base_url=served, timeout=120) as http:
        sid = http.post("/sessions", content=ctx.to_bytes()).json()["session_id"]
        x, body = encrypted_request(logreg, ctx)
        for _ in range(6):  # cached on both replicas
            assert http.post(f"/sessions/{sid}/evaluate/logreg", content=body).status_code == 200
        assert any(sid in i["cached"] for i in _replica_infos(handle))
        assert http.delete(f"/sessions/{sid}").status_code == 204
    # Each prune() reaches one replica, the router's choice; a worker's own prune may come first.
    deadline = time.monotonic() + 60
    while any(sid in i["cached"] for i in _replica_infos(handle)):
        assert time.monotonic() < deadline, "a replica still caches the deleted session after 60 s"
        handle.prune.remote().result()


def test_ray_errors_match_the_single_server(served, logreg) -> None:
    ctx = logreg.client_context(device="cpu", seed=12)
    with httpx.Client(base_url=served, timeout=60) as http:
        r = http.post("/sessions", content=b"not a bundle")
        assert r.status_code == 400
        r = http.post("/sessions", content=ctx.to_bytes(include_secret_key=True))
        assert r.status_code == 400 and "secret" in r.json()["detail"]
        r = http.post("/sessions/nope/evaluate/logreg", content=b"")
        assert r.status_code == 404 and r.json()["detail"] == "session: unknown session id"
        r = http.post("/sessions/nope/evaluate/nomodel", content=b"")
        assert r.status_code == 404 and r.json()["detail"].startswith("model:")
        sid = http.post("/sessions", content=ctx.to_bytes()).json()["session_id"]
        r = http.post(f"/sessions/{sid}/evaluate/logreg", content=b"garbage")
        assert r.status_code == 400
        r = http.post(f"/sessions/{sid}/evaluate/logreg?compression=lz4", content=b"")
        assert r.status_code == 400 and r.json()["detail"].startswith("compression:")
        assert http.delete(f"/sessions/{sid}").status_code == 204
        assert http.delete(f"/sessions/{sid}").status_code == 404


def worker_actors():
    from ray.util import list_named_actors

    return [a for a in list_named_actors(all_namespaces=True)
            if "VeilWorker" in a["name"] and a["namespace"] == "serve"]


def serve_status():
    from ray import serve as rserve

    return rserve.status().applications["veil"].deployments["VeilWorker"]


def wait_for_workers(n: int, gone: str = "", timeout: float = 90) -> bool:
    """Waits until ``n`` worker replicas run (``gone`` no longer among them)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        d = serve_status()
        names = {a["name"] for a in worker_actors()}
        if (d.status == "HEALTHY" and d.replica_states.get("RUNNING", 0) == n
                and gone not in names):
            return True
        time.sleep(0.5)
    return False


def test_replica_killed_under_load(served, logreg) -> None:
    """A worker replica dies mid-load: no wrong answer, in-flight requests retried (or 503 with
    a message), the session's keys survive (no re-upload), both replicas serve again."""
    ctx = logreg.client_context(device="cpu", seed=13)
    with httpx.Client(base_url=served, timeout=120) as http:
        sid = http.post("/sessions", content=ctx.to_bytes()).json()["session_id"]
        uploads = http.get("/health").json()["uploads"]
    reqs = [encrypted_request(logreg, ctx, seed=i) for i in range(6)]

    def one(i):
        x, body = reqs[i % len(reqs)]
        with httpx.Client(base_url=served, timeout=120) as h:
            r = h.post(f"/sessions/{sid}/evaluate/logreg", content=body)
        if r.status_code != 200:
            return r.status_code, r.json()["detail"]
        ok = np.array_equal(decode(logreg, ctx, r.content, len(x)), logreg.reference(x))
        return 200, ok

    victim = worker_actors()[0]
    with cf.ThreadPoolExecutor(4) as pool:
        futs = [pool.submit(one, i) for i in range(24)]
        time.sleep(1.0)
        ray.kill(ray.get_actor(victim["name"], namespace="serve"), no_restart=True)
        results = [f.result() for f in futs]
    wrong = [r for r in results if r[0] == 200 and r[1] is not True]
    failed = [r for r in results if r[0] != 200]
    assert not wrong
    assert all(code == 503 and "retry" in detail for code, detail in failed), failed
    # the controller replaces the replica; the session works everywhere without a re-upload
    assert wait_for_workers(2, victim["name"]), serve_status()
    replicas: set[str] = set()
    deadline = time.monotonic() + 60  # the routers learn of the new replica by long poll
    with httpx.Client(base_url=served, timeout=120) as http:
        i = 0
        while len(replicas) < 2 and time.monotonic() < deadline:
            x, body = reqs[i % len(reqs)]
            r = http.post(f"/sessions/{sid}/evaluate/logreg", content=body)
            assert r.status_code == 200, r.text
            replicas.add(r.headers["x-veil-replica"])
            np.testing.assert_array_equal(decode(logreg, ctx, r.content, len(x)),
                                          logreg.reference(x))
            i += 1
        assert http.get("/health").json()["uploads"] == uploads
    assert len(replicas) == 2, (replicas, [a["name"] for a in worker_actors()])


def home_of(sid: str) -> str:
    from veil.serve import cluster as sc

    reg = ray.get_actor(sc.REGISTRY, namespace=sc.NAMESPACE)
    return ray.get(reg.session_stats.remote(sid))["home"]


def test_sessions_go_to_their_replica_endpoint(served, logreg) -> None:
    """Each new session is homed on the replica with the fewest sessions; the client sends its
    requests to that replica's own endpoint (no front end, no Ray call per request); answers
    are exact; one upload per session."""
    from veil.serve import cluster as sc

    ctxs = [logreg.client_context(device="cpu", seed=20 + i) for i in range(4)]
    with client.VeilClient(served) as c:
        deadline = time.monotonic() + 3 * sc.ENDPOINT_TTL_S  # a replica killed just before
        while len(c.health()["endpoints"]) != 2 and time.monotonic() < deadline:
            time.sleep(0.5)  # ... stops counting ENDPOINT_TTL_S after its last heartbeat
        uploads, loads = c.health()["uploads"], c.health()["key_loads"]
        sids = [c.open_session(ctx) for ctx in ctxs]
        routes = [c.routes[sid] for sid in sids]
        health = c.health()
        homed = health["endpoints"]  # live endpoint -> its sessions (earlier tests' too)
        assert len(homed) == 2 and set(routes) == set(homed), (routes, homed)
        assert max(homed.values()) - min(homed.values()) <= 1, homed  # the fewest get the next
        assert health["uploads"] - uploads == 4 and health["key_loads"] - loads == 4
        for sid in sids:  # opened on its home replica: loaded there only
            reg = ray.get_actor(sc.REGISTRY, namespace=sc.NAMESPACE)
            stats = ray.get(reg.session_stats.remote(sid))
            assert stats["replicas"] == [stats["home"]], stats
        for i, (sid, ctx) in enumerate(zip(sids, ctxs)):
            x = logreg.samples()[0][i:i + 20]
            cts = [ctx.encrypt(v) for v in logreg.encode(x, ctx.slot_count)]
            out = c.evaluate(sid, "logreg", cts)
            got = logreg.decode([ctx.decrypt(ct) for ct in out], len(x))
            np.testing.assert_array_equal(got, logreg.reference(x))
        assert (c.sent_direct, c.fell_back) == (4, 0)
        assert c.health()["uploads"] - uploads == 4
        # the replica's endpoint answers the same errors as the front end
        with httpx.Client(base_url=routes[0], timeout=60) as direct:
            r = direct.post("/sessions/nope/evaluate/logreg", content=b"")
            assert r.status_code == 404 and r.json()["detail"] == "session: unknown session id"
            r = direct.post(f"/sessions/{sids[0]}/evaluate/logreg?compression=lz4", content=b"")
            assert r.status_code == 400 and r.json()["detail"].startswith("compression:")
            for sid in sids:
                c.close_session(sid)
            time.sleep(1.2)  # the endpoint's cached registry answer (lookup_ttl_s) runs out
            r = direct.post(f"/sessions/{sids[0]}/evaluate/logreg", content=b"")
            assert r.status_code == 404 and r.json()["detail"].startswith("session:")


def test_direct_endpoint_falls_back_when_its_replica_dies(served, logreg) -> None:
    """The replica a session's client talks to dies: the next request goes through the front
    ends (exact answer, no re-upload) and the session moves to the replica that answered."""
    import signal

    ctx = logreg.client_context(device="cpu", seed=30)
    x = logreg.samples()[0][:20]
    with client.VeilClient(served) as c:
        sid = c.open_session(ctx)
        uploads = c.health()["uploads"]
        before = c.routes[sid]
        os.kill(int(home_of(sid).split(":")[1]), signal.SIGKILL)
        cts = [ctx.encrypt(v) for v in logreg.encode(x, ctx.slot_count)]
        out = c.evaluate(sid, "logreg", cts)
        np.testing.assert_array_equal(logreg.decode([ctx.decrypt(ct) for ct in out], len(x)),
                                      logreg.reference(x))
        assert c.fell_back == 1
        assert c.routes[sid] != before  # the replica that answered holds the keys now
        out = c.evaluate(sid, "logreg", cts)
        np.testing.assert_array_equal(logreg.decode([ctx.decrypt(ct) for ct in out], len(x)),
                                      logreg.reference(x))
        assert (c.sent_direct, c.fell_back) == (1, 1)
        assert c.health()["uploads"] == uploads
        c.close_session(sid)
    assert wait_for_workers(2), serve_status()


def test_registry_restart_loses_sessions_and_recovers(served, logreg) -> None:
    """Documented: the registry (or head node) dying loses the sessions; old ids answer 404,
    new uploads work at once."""
    from veil.serve import cluster as sc

    ctx = logreg.client_context(device="cpu", seed=14)
    with httpx.Client(base_url=served, timeout=120) as http:
        sid = http.post("/sessions", content=ctx.to_bytes()).json()["session_id"]
        ray.kill(ray.get_actor(sc.REGISTRY, namespace=sc.NAMESPACE), no_restart=False)
        x, body = encrypted_request(logreg, ctx)
        deadline = time.monotonic() + 60
        while True:
            r = http.post(f"/sessions/{sid}/evaluate/logreg", content=body)
            if r.status_code == 404 or time.monotonic() > deadline:
                break
            time.sleep(0.2)
        assert r.status_code == 404
        sid = http.post("/sessions", content=ctx.to_bytes()).json()["session_id"]
        r = http.post(f"/sessions/{sid}/evaluate/logreg", content=body)
        assert r.status_code == 200
        np.testing.assert_array_equal(decode(logreg, ctx, r.content, len(x)),
                                      logreg.reference(x))


def test_session_registry_budgets_and_ttl(cluster) -> None:
    from veil.serve.cluster import SessionRegistry

    reg = SessionRegistry(ttl_s=0.2, max_sessions=2, key_budget=100)
    assert reg.reserve("a", 60) is None
    status, detail = reg.reserve("x", 60)
    assert status == 503 and "max_key_bytes" in detail
    assert reg.reserve("b", 40) is None
    status, detail = reg.reserve("y", 1)
    assert status == 503 and "max_sessions" in detail
    assert reg.open("a", ["logreg"], 4, "r1") == ["gone"]  # not staged: nothing opens
    assert reg.health()["key_bytes"]["in_use"] == 40 and reg.health()["opening"] == 1
    assert reg.reserve("a", 60) is None
    assert len(reg.stage("a", np.zeros(4, np.uint8))) == 1
    assert reg.open("a", ["logreg"], 4, "r1") == ["ok", None]  # no endpoint known
    reg.unreserve("b")
    reg.unreserve("b")  # twice, or for a sid this registry never saw: nothing happens
    reg.unreserve("zz")
    assert reg.health()["key_bytes"]["in_use"] == 60 and reg.health()["opening"] == 0
    assert reg.lookup("a")[0] == "live" and reg.lookup("zz") == ["unknown"]
    time.sleep(0.3)
    assert reg.lookup("a") == ["expired"]
    assert reg.close("a") == "expired"
    assert reg.health()["key_bytes"]["in_use"] == 0


def test_session_registry_homes_sessions_and_expires_dead_openers(cluster, monkeypatch) -> None:
    """Opens go to the live endpoint with the fewest sessions (picks in flight count); an
    opener that dies gives its reservation and its pick back after OPEN_TTL_S; after a restart
    (an empty registry) an open of an old reservation answers "gone" and counts nothing."""
    from veil.serve import cluster as sc

    reg = sc.SessionRegistry(ttl_s=60, max_sessions=8, key_budget=1000)
    assert reg.pick() is None  # no endpoint yet
    reg.heartbeat("r1", "http://h:1")
    reg.heartbeat("r2", "http://h:2")
    reg.heartbeat("r3", None)  # a replica without an endpoint gets no sessions
    first, second = reg.pick(), reg.pick()
    assert {first[0], second[0]} == {"r1", "r2"}  # the first pick counts for the second
    reg.unpick(first[0])
    reg.unpick(second[0])
    for i, r in enumerate(["r1", "r1", "r2"]):
        assert reg.reserve(f"s{i}", 10) is None
        reg.stage(f"s{i}", np.zeros(2, np.uint8))
        assert reg.open(f"s{i}", ["m"], 2, r, stay=True) == ["ok", f"http://h:{r[1]}"]
    assert reg.pick() == ["r2", "http://h:2"]  # 2 sessions on r1, 1 on r2
    assert reg.health()["endpoints"] == {"http://h:1": 2, "http://h:2": 1}
    # a dead opener: its reservation and pick expire
    monkeypatch.setattr(sc, "OPEN_TTL_S", 0.1)
    assert reg.reserve("dead", 500) is None
    time.sleep(0.2)
    assert reg.health()["opening"] == 0 and reg.health()["key_bytes"]["in_use"] == 30
    assert reg.pick()[0] == "r2"  # the pick above no longer counts: r2 still has the fewest
    assert reg.live(["s0", "dead", "zz"]) == ["s0"]
    # an endpoint not heard from for ENDPOINT_TTL_S gets no more sessions
    monkeypatch.setattr(sc, "ENDPOINT_TTL_S", 0.1)
    time.sleep(0.2)
    reg.heartbeat("r1", "http://h:1")
    assert reg.pick() == ["r1", "http://h:1"] and list(reg.health()["endpoints"]) == ["http://h:1"]


def test_burst_beyond_the_queue_and_slow_body(cluster, logreg, served) -> None:
    """A deployment with a tiny queue: a burst gets 503 'busy' for what does not fit, then the
    service answers again; a body or headers that pause get 408; sessions expire (410)."""
    from veil.serve import cluster as sc

    sc.stop()
    port = int(served.rsplit(":", 1)[1])  # Serve's proxy keeps its port: redeploy behind it
    url = sc.start(serve.ServeConfig(device="cpu", max_pending=1, body_timeout_s=1.0,
                                     header_timeout_s=1.0, session_ttl_s=3.0),
                   {"logreg": logreg}, port=port, replicas=1, max_ongoing=1,
                   worker_options={"num_cpus": 1, "resources": {"veil_slot": 1}})
    try:
        ctx = logreg.client_context(device="cpu", seed=15)
        with httpx.Client(base_url=url, timeout=120) as http:
            sid = http.post("/sessions", content=ctx.to_bytes()).json()["session_id"]
        x, body = encrypted_request(logreg, ctx)

        def one(_):
            with httpx.Client(base_url=url, timeout=120) as h:
                return h.post(f"/sessions/{sid}/evaluate/logreg", content=body)

        with cf.ThreadPoolExecutor(12) as pool:
            answers = list(pool.map(one, range(12)))
        codes = [r.status_code for r in answers]
        assert set(codes) <= {200, 503} and 503 in codes and 200 in codes, codes
        for r in answers:
            if r.status_code == 503:
                assert r.json()["detail"].startswith("busy:")
            else:
                np.testing.assert_array_equal(decode(logreg, ctx, r.content, len(x)),
                                              logreg.reference(x))
        assert one(0).status_code == 200  # recovered
        # a body that stops arriving
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(b"POST /sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
                      + b"\0" * 1000)
            s.settimeout(30)
            answer = s.recv(65536)
        assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
        # and headers that stop arriving
        with socket.create_connection(("127.0.0.1", port), timeout=30) as s:
            s.sendall(b"POST /sessions HTTP/1.1\r\nHost: x\r\n")
            s.settimeout(30)
            answer = s.recv(65536)
        assert answer.startswith(b"HTTP/1.1 408") and b"header_timeout_s" in answer, answer[:200]
        time.sleep(3.5)
        r = one(0)
        assert r.status_code == 410 and r.json()["detail"].startswith("session: expired")
    finally:
        sc.stop()
