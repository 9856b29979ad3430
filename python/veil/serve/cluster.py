"""``veil serve --ray``: the same HTTP service over many GPUs and hosts, on Ray.

Needs Ray (``pip install 'veil[ray]'``). Three parts, all on Ray's machinery (Veil adds no
scheduler, queue or RPC of its own):

* **HttpFrontEnd** (Ray actors, ``ingress_replicas`` of them, spread over the nodes): the
  FastAPI app of :func:`create_app` on uvicorn, with the same endpoints, limits, timeouts and
  error codes as ``veil serve``; front ends on one node share the port (``SO_REUSEPORT``). They
  check uploads (:func:`plan_upload`) and stream bodies. A new session's upload goes on to the
  endpoint of the replica with the fewest sessions (below), which opens it there. Requests
  that reach a front end go to the workers through a Ray Serve handle (its routing, queue
  bound and back-pressure), retrying a call whose replica died (an evaluation is a pure
  function of the ciphertexts and the keys, so a retry cannot change an answer).
* **VeilWorker** (a Ray Serve deployment, ``num_gpus=1`` per replica, or CPU cores on machines
  without GPUs; a fixed count or autoscaling): a :class:`Service` on its device, and the same
  HTTP API on a port of its own (its *endpoint*), served on the replica's event loop. A
  session's answer names the endpoint of the replica it opened on, and
  :class:`~veil.serve.client.VeilClient` sends the session's requests there: no Ray call per
  request. It loads a session's keys from Ray's object store on the first request that
  reaches it and caches them (least recently used sessions are evicted past ``max_key_bytes``
  or ``max_sessions`` per replica; they reload on demand; sessions deleted or expired in the
  registry are dropped within ``HEARTBEAT_S``).
* **SessionRegistry** (a named, restartable Ray actor): the live sessions, their TTLs, the
  cluster-wide session and key budgets, the replicas' endpoints and each session's home
  replica, and each session's upload, which lives in Ray's object store *owned by the
  registry* (the registry puts it there itself). A session's keys are
  uploaded once, by its client, and reach every replica that serves it; they survive the death
  of any worker or front end.

Ray Serve's own HTTP proxy is not used (``proxy_location="Disabled"``): see
:class:`HttpFrontEnd` for the measurement. When the registry's process or the head node dies,
the sessions are lost: the registry restarts empty and clients get 404 for old session ids and
upload their keys again (``veil demo --server`` and ``veil loadtest`` open a new session per
run).
"""

from __future__ import annotations

import asyncio
import dataclasses
import logging
import os
import signal
import socket
import time
from collections import OrderedDict

import numpy as np

try:
    import ray
    from ray import serve
    from ray.exceptions import ActorUnavailableError, RayActorError
    from ray.serve.exceptions import BackPressureError, DeploymentUnavailableError
except ImportError as e:  # pragma: no cover - the message is the point
    raise ImportError("veil serve --ray needs Ray: pip install 'veil[ray]'") from e

from .. import _core
from .models import ServedModel, load_models
from .service import (
    HTTPError,
    ServeConfig,
    Service,
    check_session_keys,
    key_budgets,
    new_session_id,
    no_session,
)
from .upload import plan_upload

log = logging.getLogger("veil.serve")

#: Ray namespace of the registry actor, its name, and the Serve application's name.
NAMESPACE = "veil"
REGISTRY = "veil-session-registry"
APP_NAME = "veil"
#: A worker asks the registry which of its cached sessions still live at most this often (s).
PRUNE_S = 5.0
#: Workers tell the registry they live this often (s); an endpoint not heard from for
#: ``ENDPOINT_TTL_S`` gets no new sessions.
HEARTBEAT_S = 2.0
ENDPOINT_TTL_S = 4 * HEARTBEAT_S
#: An upload being opened holds its reservation (and a front end's pick of an endpoint counts)
#: at most this long (s): longer than any key upload loads, so only a dead opener's expires.
OPEN_TTL_S = 900.0
#: Worker exceptions after which a front end retries a call on another replica.
_RETRYABLE = (RayActorError, ActorUnavailableError, DeploymentUnavailableError)


class SessionRegistry:
    """The cluster's sessions (a Ray actor; one per Serve application): ids, TTLs, budgets and
    the object references of the uploads, which the registry owns. Methods answer plain lists
    (Ray-serializable); ``reserve`` returns None or ``[status, detail]``."""

    def __init__(self, ttl_s: float, max_sessions: int, key_budget: int) -> None:
        self.ttl_s, self.max_sessions, self.key_budget = ttl_s, max_sessions, key_budget
        self.sessions: dict[str, dict] = {}
        self.expired: OrderedDict = OrderedDict()
        #: sessions being opened: sid -> {"key_bytes", "since", "refs" (once staged)}; one
        #: that neither opens nor is given back within OPEN_TTL_S (its opener died) is dropped
        self.opening: dict[str, dict] = {}
        self.key_bytes = 0
        self.uploads = 0
        self.loads = 0
        #: replica -> [its direct endpoint (or None), when it last said it lives]; replica ->
        #: when each open a front end sent to its endpoint (not yet answered) was picked
        self.replicas: dict[str, list] = {}
        self.picked: dict[str, list[float]] = {}

    def _sweep(self) -> None:
        now = time.monotonic()
        for sid, e in list(self.sessions.items()):
            if now - e["last_used"] > self.ttl_s:
                self._drop(sid)
                self.expired[sid] = now
                while len(self.expired) > 4096:
                    self.expired.popitem(last=False)
        for sid, o in list(self.opening.items()):
            if now - o["since"] > OPEN_TTL_S:
                self.unreserve(sid)

    def _drop(self, sid: str) -> None:
        e = self.sessions.pop(sid)
        self.key_bytes -= e["key_bytes"]  # the upload's object goes with its last reference

    def reserve(self, sid: str, key_bytes: int):
        """Reserves ``key_bytes`` and a session slot for the upload ``sid`` being opened:
        None, or ``[status, detail]`` when the cluster is full."""
        self._sweep()
        if len(self.sessions) + len(self.opening) >= self.max_sessions:
            return [503, f"sessions: {len(self.sessions)} live sessions and {len(self.opening)} "
                    "being opened (max_sessions); delete one or retry after one expires"]
        if self.key_bytes + key_bytes > self.key_budget:
            return [503, f"keys: the cluster holds {self.key_bytes} of its {self.key_budget} "
                    "bytes of keys (max_key_bytes); retry after a session is deleted or expires"]
        self.key_bytes += key_bytes
        self.opening[sid] = {"key_bytes": key_bytes, "since": time.monotonic()}
        return None

    def unreserve(self, sid: str) -> None:
        """Gives back what :meth:`reserve` took for ``sid`` (nothing if it holds nothing: it
        opened, expired, or this registry restarted since)."""
        o = self.opening.pop(sid, None)
        if o is not None:
            self.key_bytes -= o["key_bytes"]

    def stage(self, sid: str, data) -> list:
        """Stores the upload ``sid`` being opened in the object store, owned by the registry
        (so that it outlives the replica that received it); returns ``[ref]``, or ``[]`` when
        ``sid`` holds no reservation here (this registry restarted since)."""
        o = self.opening.get(sid)
        if o is None:
            return []
        o["refs"] = [ray.put(data)]
        return o["refs"]

    def open(self, sid: str, models: list, upload_bytes: int, replica: str,
             stay: bool = False) -> list:
        """The staged upload ``sid`` loaded on worker ``replica``: it becomes a live session.
        Returns ``["ok", endpoint]``, the direct endpoint its client should send requests to
        (None: the front ends): ``replica``'s own when ``stay`` (it was opened there) or when
        it has no more sessions than the fewest, else that of the replica with the fewest
        sessions; ``["gone"]`` when ``sid`` holds no reservation here (it expired, or this
        registry restarted since)."""
        o = self.opening.pop(sid, None)
        if o is None or "refs" not in o:
            if o is not None:
                self.key_bytes -= o["key_bytes"]
            return ["gone"]
        now = time.monotonic()
        home = self._home(replica, now, stay)
        self.sessions[sid] = {"refs": o["refs"], "models": models, "key_bytes": o["key_bytes"],
                              "upload_bytes": upload_bytes, "created": now, "last_used": now,
                              "replicas": {replica}, "home": home}
        self.uploads += 1
        self.loads += 1
        return ["ok", None if home is None else self.replicas[home][0]]

    def _load(self, now: float) -> dict[str, int]:
        """Live endpoints' replicas -> sessions homed there plus opens sent there (an open not
        answered within OPEN_TTL_S no longer counts)."""
        for r in [r for r, (_, seen) in self.replicas.items() if now - seen > ENDPOINT_TTL_S]:
            del self.replicas[r]
        for r in list(self.picked):
            self.picked[r] = [t for t in self.picked[r] if now - t <= OPEN_TTL_S]
            if r not in self.replicas or not self.picked[r]:
                del self.picked[r]
        count = {r: len(self.picked.get(r, ())) for r, (endpoint, _) in self.replicas.items()
                 if endpoint}
        for e in self.sessions.values():
            if e["home"] in count:
                count[e["home"]] += 1
        return count

    def _home(self, opener: str, now: float, stay: bool) -> str | None:
        count = self._load(now)
        if not count:
            return None
        if opener in count and (stay or count[opener] <= min(count.values())):
            return opener
        return min(count, key=lambda r: (count[r], r))

    def pick(self):
        """``[replica, endpoint]`` of the live endpoint with the fewest sessions (opens sent
        there count until :meth:`unpick`), for a front end to open a session at; None when no
        replica has an endpoint."""
        count = self._load(time.monotonic())
        if not count:
            return None
        r = min(count, key=lambda r: (count[r], r))
        self.picked.setdefault(r, []).append(time.monotonic())
        return [r, self.replicas[r][0]]

    def unpick(self, replica: str) -> None:
        """An open sent to ``replica``'s endpoint was answered (or failed)."""
        times = self.picked.get(replica)
        if times:
            times.pop(0)

    def heartbeat(self, replica: str, endpoint: str | None) -> None:
        """Worker ``replica`` lives, answering directly at ``endpoint`` (None: only through
        the front ends)."""
        self.replicas[replica] = [endpoint, time.monotonic()]

    def lookup(self, sid: str) -> list:
        """``["live", refs, models]``, ``["expired"]`` or ``["unknown"]``; a live session's
        last use becomes now."""
        self._sweep()
        e = self.sessions.get(sid)
        if e is None:
            return ["expired" if sid in self.expired else "unknown"]
        e["last_used"] = time.monotonic()
        return ["live", e["refs"], e["models"]]

    def loaded(self, sid: str, replica: str) -> None:
        """A worker replica loaded the session's keys from the object store."""
        e = self.sessions.get(sid)
        if e is not None:
            e["replicas"].add(replica)
        self.loads += 1

    def live(self, sids: list) -> list:
        """The ids among ``sids`` that are live sessions or being opened (workers drop the
        others' keys; an open expires after OPEN_TTL_S)."""
        self._sweep()
        return [sid for sid in sids if sid in self.sessions or sid in self.opening]

    def close(self, sid: str) -> str:
        self._sweep()
        if sid in self.sessions:
            self._drop(sid)
            return "closed"
        return "expired" if sid in self.expired else "unknown"

    def session_stats(self, sid: str):
        """Uploads and the replicas that loaded one session (tests, operators)."""
        e = self.sessions.get(sid)
        return None if e is None else {"replicas": sorted(e["replicas"]),
                                       "upload_bytes": e["upload_bytes"], "home": e["home"]}

    def health(self) -> dict:
        self._sweep()
        now = time.monotonic()
        homes = {r: e for r, (e, seen) in self.replicas.items()
                 if e and now - seen <= ENDPOINT_TTL_S}
        endpoints = dict.fromkeys(homes.values(), 0)  # live endpoint -> sessions homed there
        for e in self.sessions.values():
            if e["home"] in homes:
                endpoints[homes[e["home"]]] += 1
        return {"sessions": len(self.sessions), "opening": len(self.opening),
                "uploads": self.uploads, "key_loads": self.loads, "endpoints": endpoints,
                "key_bytes": {"in_use": self.key_bytes, "budget": self.key_budget}}


def registry_actor(config: ServeConfig, key_budget: int):
    """The application's registry actor (created by :func:`start`, found by the front ends;
    restarted empty by Ray if its process dies)."""
    cls = ray.remote(num_cpus=0, max_restarts=-1, max_task_retries=-1)(SessionRegistry)
    return cls.options(name=REGISTRY, namespace=NAMESPACE, get_if_exists=True,
                       lifetime="detached").remote(config.session_ttl_s, config.max_sessions,
                                                   key_budget)


def _load_checked(names: list[str], digests: dict[str, str]) -> dict[str, ServedModel]:
    """The served models, built here, with the weights every other replica holds."""
    models = load_models(names)
    for name, digest in digests.items():
        if models[name].weights_digest() != digest:
            raise RuntimeError(f"model {name!r}: this replica trained different weights than the "
                               "driver (nondeterministic training?)")
    return models


class VeilWorker:
    """A Ray Serve replica on one GPU (or CPU group): a :class:`Service` whose sessions are a
    cache of the registry's, loaded from the object store on first use."""

    async def __init__(self, config: ServeConfig, names: list[str], digests: dict[str, str],
                       direct: tuple[str, int] | None = None) -> None:
        # async: Ray Serve runs it on the replica's user-code event loop, where the direct HTTP
        # server below then runs too (every method of this class runs on that one loop).
        self.service = Service(config, _load_checked(names, digests))
        if config.warmup:
            self.service.executor.submit(self.service.self_test).result()
        ctx = ray.get_runtime_context()
        self.replica = (f"{socket.gethostname()}:{os.getpid()}:"
                        f"{ctx.get_node_id()[:8]}:{self.service.device}")
        self.registry = ray.get_actor(REGISTRY, namespace=NAMESPACE)
        self.loading: dict[str, asyncio.Future] = {}
        self.pruned_at = time.monotonic()
        self.endpoint: str | None = None
        self.http = None
        if direct is not None:
            await self._serve_direct(config, names, digests, *direct)
        self._beat = asyncio.get_running_loop().create_task(self._heartbeat())
        log.info("veil worker %s ready (direct endpoint %s)", self.replica, self.endpoint)

    async def _serve_direct(self, config: ServeConfig, names: list[str], digests: dict[str, str],
                            host: str, port: int) -> None:
        """This replica's own HTTP endpoint: the same API as the front ends, answered here
        with no Ray call per request (the session's keys come from the registry's object store
        on first use, its liveness from the registry, cached ``lookup_ttl_s``)."""
        import uvicorn

        from .app import create_app, uvicorn_config

        service = ClusterService(config, self.service.models, _LocalWorker(self))
        app = create_app(service=service)
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind((host, port))
        self.http = uvicorn.Server(uvicorn_config(app, host, port, "warning"))
        self._http_task = asyncio.get_running_loop().create_task(
            self.http.serve(sockets=[sock]))
        deadline = time.monotonic() + 60
        while not self.http.started:
            if self._http_task.done() or time.monotonic() > deadline:
                raise RuntimeError(f"http: the replica's endpoint did not start on {host}:{port}")
            await asyncio.sleep(0.01)
        bound = sock.getsockname()[1]
        if host in ("", "0.0.0.0", "::"):
            host = ray.util.get_node_ip_address()
        elif _loopback(host) and _other_hosts():
            # Front ends and clients on other hosts would reach their own loopback instead.
            log.warning("veil worker %s: no direct endpoint: %s is a loopback address and the "
                        "cluster spans several hosts (serve with --host 0.0.0.0)",
                        self.replica, host)
            self.http.should_exit = True
            return
        self.endpoint = f"http://[{host}]:{bound}" if ":" in host else f"http://{host}:{bound}"
        log.info("veil worker %s: direct endpoint %s", self.replica, self.endpoint)

    async def _heartbeat(self) -> None:
        """Tells the registry every ``HEARTBEAT_S`` that this replica (and its endpoint) lives,
        and drops the cached sessions the registry no longer holds."""
        while True:
            try:
                serving = self.http is not None and not self._http_task.done()
                await self.registry.heartbeat.remote(self.replica,
                                                     self.endpoint if serving else None)
                await self.prune()
            except Exception as e:  # noqa: BLE001 - the registry restarting: try again later
                log.info("heartbeat: %s", type(e).__name__)
            await asyncio.sleep(HEARTBEAT_S)

    async def _ensure(self, sid: str, refs: list, opening: bool = False):
        """The cached session ``sid``, loading its upload (``refs[0]``) first if needed; the
        least recently used idle sessions make room."""
        s = self.service.sessions.get(sid)
        if s is not None:
            return s
        pending = self.loading.get(sid)
        if pending is not None:  # another request is loading it: wait for that one
            return await asyncio.shield(pending)
        fut = asyncio.get_running_loop().create_future()
        self.loading[sid] = fut
        try:
            data = await refs[0]
            while True:
                try:
                    s = await self.service.load_upload(memoryview(data), len(data), sid)
                    break
                except HTTPError as e:  # out of key memory or sessions (not "busy"): evict
                    if e.status != 503 or e.detail.startswith("busy:") or not self._evict():
                        raise
            if not opening:
                self.registry.loaded.remote(sid, self.replica)
            fut.set_result(s)
            return s
        except BaseException as e:
            fut.set_exception(e)
            fut.exception()  # retrieved: no "never retrieved" warning when nobody waits
            raise
        finally:
            del self.loading[sid]

    def _evict(self) -> bool:
        idle = [s for s in self.service.sessions.values() if s.busy == 0]
        if not idle:
            return False
        victim = min(idle, key=lambda s: s.last_used)
        self.service._drop(victim.id)
        return True

    async def open(self, sid: str, refs: list) -> list:
        """Loads (and so checks) a new upload: ``["ok", info]`` or ``["error", status, detail]``."""
        try:
            s = await self._ensure(sid, refs, opening=True)
        except HTTPError as e:
            return ["error", e.status, e.detail]
        return ["ok", {**self.service.session_info(s), "endpoint": self.endpoint}, self.replica]

    async def prune(self) -> int:
        """Drops the cached sessions the registry no longer holds (deleted or expired): their
        device memory comes back within ``PRUNE_S`` of a request. Returns how many went."""
        self.pruned_at = time.monotonic()
        cached = [sid for sid, s in self.service.sessions.items() if s.busy == 0]
        if not cached:
            return 0
        live = set(await self.registry.live.remote(cached))
        gone = [sid for sid in cached if sid not in live]
        for sid in gone:
            s = self.service.sessions.get(sid)
            if s is not None and s.busy == 0:
                self.service._drop(sid)
        return len(gone)

    async def evaluate(self, sid: str, refs: list, name: str, body: bytes,
                       compression: str) -> list:
        """One request: ``["ok", payload, times, replica]`` or ``["error", status, detail]``."""
        if time.monotonic() - self.pruned_at > PRUNE_S:
            await self.prune()
        try:
            s = await self._ensure(sid, refs)
            payload, times, _ = await self.service.evaluate_in(s, self.service.model(name), body,
                                                               compression)
        except HTTPError as e:
            return ["error", e.status, e.detail]
        return ["ok", payload, times, self.replica, self.endpoint]

    def __del__(self) -> None:
        """Ray Serve's shutdown of this replica: its endpoint stops and leaves the registry."""
        try:
            if self.http is not None:
                self.http.should_exit = True
            self.registry.heartbeat.remote(self.replica, None)
        except Exception:  # noqa: BLE001, S110 - best effort while the process ends
            pass

    def info(self) -> dict:
        """This replica, its direct endpoint, the sessions it caches and its service's
        health."""
        return {"replica": self.replica, "endpoint": self.endpoint,
                "cached": sorted(self.service.sessions), **self.service.health()}


def _loopback(host: str) -> bool:
    import ipaddress

    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return host == "localhost"


def _other_hosts() -> bool:
    """Whether a live node of the Ray cluster has another address than this one."""
    here = ray.util.get_node_ip_address()
    return any(n.get("Alive") and n.get("NodeManagerAddress") != here for n in ray.nodes())


class _LocalWorker:
    """What a replica's own endpoint calls instead of a Ray Serve handle: the same methods,
    run in this process (``ClusterService._call`` awaits ``worker.<method>.remote(...)``)."""

    def __init__(self, worker: VeilWorker) -> None:
        self.worker = worker

    def __getattr__(self, method: str):
        return _Local(getattr(self.worker, method))


class _Local:
    def __init__(self, fn) -> None:
        self.fn = fn

    def remote(self, *args):
        return self.fn(*args)


_REGISTRY_RESTARTED = ("sessions: the session registry restarted while this session was "
                       "being opened; upload the keys again")


class _Unreachable(Exception):
    """A replica's endpoint took no connection or was busy: nothing was opened there."""


class ClusterService:
    """What ``veil serve --ray``'s endpoints call (the same methods as :class:`Service`): checks
    in the front end, sessions in the registry, device work on the worker replicas."""

    def __init__(self, config: ServeConfig, models: dict[str, ServedModel], worker,
                 retries: int = 4) -> None:
        self.config, self.models, self.worker, self.retries = config, models, worker, retries
        self.device = "ray"
        self.session_key_budget, self.upload_limit, self.key_budget = key_budgets(config, models)
        self.registry = registry_actor(config, self.key_budget)
        self.disconnects = self.timeouts = self.retried = 0
        #: Registry answers reused for this long (s): one lookup per session and second.
        self.lookup_ttl_s = min(1.0, config.session_ttl_s / 4)
        self._found: dict[str, tuple[float, list]] = {}
        #: A replica's own endpoint (its worker is local): its sessions open here. A front end
        #: sends each upload to the endpoint with the fewest sessions (its HTTP client).
        self.local = isinstance(worker, _LocalWorker)
        self._http = None

    model = Service.model

    async def _call(self, method: str, *args) -> list:
        """A worker call, retried on another replica when the one it reached dies."""
        for attempt in range(self.retries + 1):
            try:
                res = await getattr(self.worker, method).remote(*args)
            except BackPressureError:
                raise HTTPError(503, "busy: every worker's queue is full (max_pending); retry "
                                "shortly") from None
            except _RETRYABLE as e:
                if attempt == self.retries:
                    raise HTTPError(503, f"worker: {attempt + 1} replicas failed this request "
                                    f"({type(e).__name__}); the service is restarting them, "
                                    "retry shortly") from None
                self.retried += 1
                log.info("worker call %s failed (%s); retrying", method, type(e).__name__)
                await asyncio.sleep(min(2.0, 0.1 * 2 ** attempt))
                continue
            if res[0] == "error":
                raise HTTPError(res[1], res[2])
            return res
        raise AssertionError("unreachable")  # pragma: no cover

    async def health_info(self) -> dict:
        reg = await self.registry.health.remote()
        return {"status": "ok", "version": _core.__version__, "device": self.device,
                "models": sorted(self.models), "disconnects": self.disconnects,
                "timeouts": self.timeouts, "retried": self.retried, **reg,
                "key_bytes": {**reg["key_bytes"], "per_session": self.session_key_budget}}

    async def open_session(self, view, size: int) -> dict:
        try:
            plan = plan_upload(view, self.models)
        except (ValueError, TypeError) as e:
            raise HTTPError(400, str(e)) from None
        plan.blobs.clear()  # the worker plans again from the stored bytes
        need = plan.key_bytes
        check_session_keys(need, self.session_key_budget)
        if not self.local:
            picked = await self.registry.pick.remote()
            if picked is not None:
                try:
                    return await self._open_at(picked[1], view, size)
                except _Unreachable as e:  # nothing was opened there: open through Ray
                    log.info("opening a session at %s failed (%s); opening through a worker "
                             "call", picked[1], e)
                finally:
                    self.registry.unpick.remote(picked[0])
        sid = new_session_id()
        refused = await self.registry.reserve.remote(sid, need)
        if refused is not None:
            raise HTTPError(*refused)
        try:
            refs = await self.registry.stage.remote(sid, np.frombuffer(view, dtype=np.uint8))
            if not refs:
                raise HTTPError(503, _REGISTRY_RESTARTED)
            _, info, replica = await self._call("open", sid, refs)
            opened = await self.registry.open.remote(sid, info["models"], size, replica,
                                                     self.local)
            if opened[0] != "ok":
                raise HTTPError(503, _REGISTRY_RESTARTED)
        except BaseException:
            await self.registry.unreserve.remote(sid)
            raise
        return {**info, "device": replica, "endpoint": opened[1]}

    async def _open_at(self, endpoint: str, view, size: int) -> dict:
        """Sends the upload on to a replica's endpoint (``POST /sessions`` there: the session
        opens on that replica, whose answer is returned; its error statuses pass through).

        Raises:
            _Unreachable: the endpoint took no connection, or answered 503 "busy" (nothing was
                opened: the caller may open elsewhere).
            HTTPError: the replica's error answer, or 502 when it failed after the upload was
                sent (it may have opened the session: not retried elsewhere).
        """
        import httpx

        if self._http is None:
            self._http = httpx.AsyncClient(timeout=httpx.Timeout(900.0, connect=5.0))

        async def chunks():
            for i in range(0, size, 1 << 20):
                yield bytes(view[i:i + (1 << 20)])

        try:
            r = await self._http.post(endpoint + "/sessions", content=chunks(), headers={
                "content-type": "application/octet-stream", "content-length": str(size)})
        except (httpx.ConnectError, httpx.ConnectTimeout) as e:
            raise _Unreachable(type(e).__name__) from None
        except httpx.HTTPError as e:
            raise HTTPError(502, f"worker: the replica failed while opening the session "
                            f"({type(e).__name__}); retry") from None
        if r.status_code >= 400:
            try:
                detail = str(r.json()["detail"])
            except (ValueError, KeyError, TypeError):
                detail = r.text
            if r.status_code == 503 and detail.startswith("busy:"):
                raise _Unreachable("busy")
            raise HTTPError(r.status_code, detail)
        return r.json()

    async def check_session(self, sid: str, name: str) -> list:
        """The registry's answer for a live session (cached ``lookup_ttl_s``: a session deleted
        through another front end, or expired, is seen here within that time); 404/410
        otherwise."""
        now = time.monotonic()
        hit = self._found.get(sid)
        if hit is not None and now - hit[0] < self.lookup_ttl_s:
            return [*hit[1], 0.0]
        t0 = time.perf_counter()
        found = await self.registry.lookup.remote(sid)  # also the session's last use
        elapsed = time.perf_counter() - t0
        if found[0] != "live":
            self._found.pop(sid, None)
            raise no_session(found[0] == "expired")
        self._found[sid] = (now, found)
        while len(self._found) > 4096:
            self._found.pop(next(iter(self._found)))
        return [*found, elapsed]

    async def evaluate_request(self, sid: str, name: str, body: bytes, compression: str,
                               found: list | None = None) -> tuple[bytes, dict, dict]:
        found = found or await self.check_session(sid, name)
        if name not in found[2]:
            raise HTTPError(400, f"model: this session's keys do not fit model {name!r} "
                            f"(they fit {found[2]})")
        t0 = time.perf_counter()
        _, payload, times, replica, endpoint = await self._call("evaluate", sid, found[1], name,
                                                                body, compression)
        # The front end's own share: the registry lookup and the hop to the worker and back.
        times = {**times, "registry": found[3],
                 "forward": time.perf_counter() - t0 - sum(times.values())}
        headers = {"X-Veil-Replica": replica}
        if endpoint:  # the replica that holds the session's keys now answers directly
            headers["X-Veil-Endpoint"] = endpoint
        return payload, times, headers

    async def close_session(self, sid: str) -> None:
        self._found.pop(sid, None)
        state = await self.registry.close.remote(sid)
        if state != "closed":
            raise no_session(state == "expired")

    def close(self) -> None:
        """Closes the connection pool of the forwarded opens (at the app's shutdown)."""
        http, self._http = self._http, None
        if http is not None:
            try:
                asyncio.get_running_loop().create_task(http.aclose())
            except RuntimeError:  # no running loop: the process is going away
                pass


class HttpFrontEnd:
    """A Ray actor serving the HTTP API (Veil's FastAPI app on uvicorn, with the header timeout)
    from this node: ``ingress_replicas`` of them share one port (``SO_REUSEPORT``, so the kernel
    spreads connections over them) and call the workers through a Ray Serve handle.

    Why not Ray Serve's HTTP proxy: measured on 2 H200s (bench/RESULTS.md), the proxy and an
    ingress deployment in front of the workers served 163 requests/s on one GPU and 227 on two,
    against 331 and 796 for independent servers; each ~0.4 MB request and answer crossed two Ray
    hops as 64 KiB ASGI messages, all through one proxy process per node.
    """

    def __init__(self, config: ServeConfig, names: list[str], digests: dict[str, str],
                 host: str, port: int) -> None:
        import threading

        import uvicorn

        from .app import create_app, uvicorn_config

        worker = serve.get_deployment_handle("VeilWorker", app_name=APP_NAME)
        self.service = ClusterService(config, _load_checked(names, digests), worker)
        app = create_app(service=self.service)
        sock = socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        sock.bind((host, port))
        self.server = uvicorn.Server(uvicorn_config(app, host, port, "warning"))
        self.thread = threading.Thread(target=self.server.run, kwargs={"sockets": [sock]},
                                       name="veil-http", daemon=True)
        self.thread.start()
        deadline = time.monotonic() + 60
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError(f"http: uvicorn did not start on {host}:{port}")
            time.sleep(0.01)

    def where(self) -> dict:
        return {"node_id": ray.get_runtime_context().get_node_id(), "pid": os.getpid(),
                "retried": self.service.retried}

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


def build_app(config: ServeConfig, models: dict[str, ServedModel], replicas: int | None = None,
              autoscale: tuple[int, int] | None = None, worker_options: dict | None = None,
              max_ongoing: int = 4, direct: tuple[str, int] | None = None):
    """The Serve application of the workers (the HTTP front ends are :class:`HttpFrontEnd`).

    Args:
        config: as for ``veil serve`` (``device`` picks GPU or CPU replicas).
        models: the served models, built in the driver (each replica builds its own and checks
            that its weights are the same).
        replicas: worker replicas (default: one per GPU of the cluster, else 1).
        autoscale: (min, max) worker replicas instead of a fixed number (Ray Serve autoscaling,
            2 requests in flight per replica as the target).
        worker_options: Ray actor options of each worker replica, over the defaults
            (``{"num_gpus": 1}`` on a GPU cluster, ``{"num_cpus": 1}`` otherwise).
        max_ongoing: requests one worker replica holds at once (the rest wait in the front
            ends' handle queues, at most ``config.max_pending``; 503 beyond).
        direct: ``(host, port)`` on which each worker replica also answers the HTTP API itself
            (port 0: a free port per replica; a host of ``0.0.0.0`` is advertised as the
            node's address). A new session's answer names the endpoint of its replica
            (``"endpoint"``), and :class:`~veil.serve.client.VeilClient` sends the session's
            requests there, with no Ray call per request. None: front ends only. Off with
            ``autoscale``: Serve scales on the requests its handles carry, and a replica's own
            endpoint carries them past Serve.

    Raises:
        ValueError: ``device="cuda"`` on a cluster without GPUs, or bad counts.
    """
    gpus = int(ray.cluster_resources().get("GPU", 0))
    if config.device == "cuda" and not gpus:
        raise ValueError("device: 'cuda' asked for, but the Ray cluster has no GPU")
    use_gpu = bool(gpus) and config.device in ("auto", "cuda")
    opts = {"num_gpus": 1, "num_cpus": 1} if use_gpu else {"num_cpus": 1}
    opts.update(worker_options or {})
    worker_config = dataclasses.replace(config, device="cuda" if use_gpu else "cpu")
    scale: dict = {}
    if autoscale is not None and direct is not None:
        log.warning("veil serve --ray: --autoscale turns the replicas' own endpoints off (Ray "
                    "Serve would not see the requests they take); every request goes through "
                    "the front ends")
        direct = None
    if autoscale is not None:
        lo, hi = autoscale
        if not 0 <= lo <= hi or hi < 1:
            raise ValueError(f"autoscale: expected 0 <= min <= max, max >= 1, got {autoscale}")
        scale["autoscaling_config"] = {"min_replicas": lo, "max_replicas": hi,
                                       "target_ongoing_requests": 2}
    else:
        n = replicas or (gpus if use_gpu else 1)
        if n < 1:
            raise ValueError(f"replicas: expected a positive count, got {n}")
        scale["num_replicas"] = n
    digests = {n: m.weights_digest() for n, m in models.items()}
    return serve.deployment(VeilWorker, name="VeilWorker", ray_actor_options=opts,
                            max_ongoing_requests=max_ongoing,
                            max_queued_requests=config.max_pending,
                            **scale).bind(worker_config, list(models), digests, direct)


#: The front ends of the running application (this driver's), stopped by :func:`stop`.
_FRONT_ENDS: list = []


def start(config: ServeConfig, models: dict[str, ServedModel], host: str = "127.0.0.1",
          port: int = 8000, address: str | None = None, ingress_replicas: int = 1,
          direct: bool = True, **app_args) -> str:
    """Starts (or joins, with ``address``) a Ray cluster, runs the workers' Serve application
    and ``ingress_replicas`` HTTP front ends on ``host:port`` (spread over the nodes); returns
    the URL. :func:`stop` removes them. ``direct``: each worker replica also answers on its own
    port of ``host`` (:func:`build_app`'s ``direct``), and sessions go to the replicas with
    the fewest. ``app_args`` go to :func:`build_app`."""
    if ingress_replicas < 1:
        raise ValueError(f"ingress_replicas: expected a positive count, got {ingress_replicas}")
    if not ray.is_initialized():
        ray.init(address=address, namespace=NAMESPACE, log_to_driver=False)
    if port == 0:
        with socket.socket() as s:
            s.bind((host, 0))
            port = s.getsockname()[1]
    registry_actor(config, key_budgets(config, models)[2])  # the workers look it up
    serve.start(proxy_location="Disabled")
    serve.run(build_app(config, models, direct=(host, 0) if direct else None, **app_args),
              name=APP_NAME, route_prefix=None)
    digests = {n: m.weights_digest() for n, m in models.items()}
    cls = ray.remote(num_cpus=0, max_restarts=-1, scheduling_strategy="SPREAD")(HttpFrontEnd)
    _FRONT_ENDS[:] = [cls.remote(config, list(models), digests, host, port)
                      for _ in range(ingress_replicas)]
    ray.get([f.where.remote() for f in _FRONT_ENDS])  # each is listening
    return f"http://{host}:{port}"


def stop() -> None:
    """Stops the front ends, deletes the workers' application and the session registry (the
    cluster keeps running)."""
    for f in _FRONT_ENDS:
        try:
            ray.get(f.stop.remote(), timeout=30)
        except Exception:  # noqa: BLE001 - a dead front end has nothing to stop
            pass
        ray.kill(f)
    _FRONT_ENDS.clear()
    serve.delete(APP_NAME)
    try:
        ray.kill(ray.get_actor(REGISTRY, namespace=NAMESPACE))
    except ValueError:
        pass


def main(host: str, port: int, config: ServeConfig, models: dict[str, ServedModel],
         address: str | None = None, log_level: str = "info", **app_args) -> int:
    """``veil serve --ray``: serves until Ctrl-C or SIGTERM, then removes the application."""
    logging.basicConfig(level=getattr(logging, log_level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    t0 = time.perf_counter()
    if not ray.is_initialized():
        ray.init(address=address, namespace=NAMESPACE, log_to_driver=False)
    # The handler goes in after ray.init (which installs Ray's own SIGTERM handler in the driver:
    # it logs and exits with 15) and before the front ends listen: a SIGTERM that comes as soon
    # as /health answers, while start() is still returning, then stops cleanly too (it did not:
    # test_cli_serve_ray_and_demo saw exit code 15 once).
    stopping = []
    signal.signal(signal.SIGTERM, lambda *_: stopping.append(1))
    url = start(dataclasses.replace(config, warmup=True), models, host, port, address,
                **app_args)
    log.info("veil serve --ray: %s, models %s, on %s (Ray %s) ready in %.1f s", url,
             sorted(models), address or "a local Ray cluster", ray.__version__,
             time.perf_counter() - t0)
    try:
        while not stopping:
            time.sleep(0.5)
    except KeyboardInterrupt:
        pass
    stop()
    return 0


__all__ = ["APP_NAME", "ClusterService", "HttpFrontEnd", "SessionRegistry", "VeilWorker",
           "build_app", "main", "start", "stop"]
