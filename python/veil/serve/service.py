"""The state behind ``veil serve``'s endpoints, independent of the web framework: settings,
sessions, the key-memory budget and the one device worker."""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from .. import _core
from .. import _serialize as _ser
from .._base import _CIPHERTEXT_CLASSES, KeyedContext, assemble
from .._device import resolve_device
from .models import ServedModel
from .upload import UploadPlan, pack_frame, plan_upload, unpack_frame

log = logging.getLogger("veil.serve")

MiB = 1 << 20
GiB = 1 << 30


@dataclass
class ServeConfig:
    """Settings of :func:`veil.serve.create_app` (``veil serve``'s options).

    Sizes are in bytes, times in seconds. The limits that are None follow the served models:
    ``max_session_key_bytes`` is the key set of the model that needs most (``GET /models``:
    ``keys.key_bytes``), ``max_upload_bytes`` the larger of 256 MiB and that key set (an upload
    is smaller than its keys decompressed), ``max_key_bytes`` the larger of 4 GiB and two such
    key sets.
    """

    device: str | None = "auto"
    #: Largest evaluation request body and key upload body (as sent, compressed).
    max_request_bytes: int = 64 * MiB
    max_upload_bytes: int | None = None
    #: Decompressed key bytes one session may hold, and all sessions together (checked from
    #: the keys' headers before anything is allocated: 413 and 503 beyond them).
    max_session_key_bytes: int | None = None
    max_key_bytes: int | None = None
    #: A session expires this many seconds after its last use.
    session_ttl_s: float = 900.0
    #: Most live sessions; most requests waiting for the device.
    max_sessions: int = 32
    max_pending: int = 64
    #: A client must send the request line and headers within ``header_timeout_s`` of
    #: connecting (or of its previous response), and the body with no pause longer than
    #: ``body_timeout_s`` (nginx's client_header_timeout and client_body_timeout).
    header_timeout_s: float = 30.0
    body_timeout_s: float = 30.0
    #: Key uploads larger than this are spooled to a temporary file in ``upload_dir`` (None:
    #: the system's temporary directory) and read through a memory map.
    spool_bytes: int = 16 * MiB
    upload_dir: str | None = None
    #: Run one self-checked encrypted evaluation per model at startup (warms the device up).
    warmup: bool = False

    def __post_init__(self) -> None:
        for name in ("max_request_bytes", "max_upload_bytes", "max_key_bytes", "max_sessions",
                     "max_pending", "max_session_key_bytes", "spool_bytes"):
            v = getattr(self, name)
            if v is None and name in ("max_session_key_bytes", "max_upload_bytes",
                                      "max_key_bytes"):
                continue
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name}: expected a positive integer, got {v!r}")
        for name in ("session_ttl_s", "header_timeout_s", "body_timeout_s"):
            v = getattr(self, name)
            if isinstance(v, bool) or not isinstance(v, (int, float)) or not v > 0:
                raise ValueError(f"{name}: expected a positive number of seconds, got {v!r}")


class HTTPError(Exception):
    """An error answered with an HTTP status and a message."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


@dataclass
class Session:
    id: str
    ctx: KeyedContext
    key_set_id: int
    models: list[str]
    upload_bytes: int
    key_bytes: int
    created: float
    last_used: float
    busy: int = 0


@dataclass
class Service:
    """Sessions, models, the key budget and the device worker behind the HTTP endpoints."""

    config: ServeConfig
    models: dict[str, ServedModel]
    device: str = ""
    sessions: dict[str, Session] = field(default_factory=dict)
    expired: OrderedDict = field(default_factory=OrderedDict)
    pending: int = 0
    #: Decompressed key bytes held by live sessions and by uploads being loaded, and the number
    #: of those uploads (they count against max_sessions too).
    key_bytes: int = 0
    loading: int = 0
    #: Clients that went away mid-request, and requests cut by a timeout (``/health``).
    disconnects: int = 0
    timeouts: int = 0
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.device = resolve_device(self.config.device)
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="veil-device")
        self.session_key_budget, self.upload_limit, self.key_budget = key_budgets(self.config,
                                                                                  self.models)

    # -- the device worker --
    async def on_device(self, fn: Callable, *args):
        """Runs ``fn(*args)`` on the single device thread (in arrival order); 503 when
        ``max_pending`` calls already wait."""
        if self.pending >= self.config.max_pending:
            raise HTTPError(503, f"busy: {self.pending} requests are queued (max_pending)")
        self.pending += 1
        try:
            return await asyncio.get_running_loop().run_in_executor(self.executor, fn, *args)
        finally:
            self.pending -= 1

    def close(self) -> None:
        for sid in list(self.sessions):
            self._drop(sid)
        self.executor.shutdown(wait=True)

    def health(self) -> dict:
        self.sweep()
        return {"status": "ok", "version": _core.__version__, "device": self.device,
                "models": sorted(self.models), "sessions": len(self.sessions),
                "pending": self.pending, "opening": self.loading,
                "disconnects": self.disconnects,
                "timeouts": self.timeouts,
                "key_bytes": {"in_use": self.key_bytes, "budget": self.key_budget,
                              "per_session": self.session_key_budget}}

    # -- sessions --
    def sweep(self) -> None:
        """Drops sessions idle longer than the TTL (remembering their ids for 410 answers)."""
        now = self.clock()
        for sid, s in list(self.sessions.items()):
            if s.busy == 0 and now - s.last_used > self.config.session_ttl_s:
                self._drop(sid)
                self.expired[sid] = now
                while len(self.expired) > 4096:
                    self.expired.popitem(last=False)
                log.info("session %s expired", _short(sid))

    def _drop(self, sid: str) -> None:
        s = self.sessions.pop(sid, None)
        if s is None:
            return
        self.key_bytes -= s.key_bytes
        ksid = s.ctx.key_set_id
        # Release the keys on the device thread (device memory is freed where it is used).
        holder = [s]
        s = None
        self.executor.submit(_release, holder, ksid)

    def session(self, sid: str) -> Session:
        self.sweep()
        s = self.sessions.get(sid)
        if s is None:
            raise no_session(sid in self.expired)
        return s

    def model(self, name: str) -> ServedModel:
        m = self.models.get(name)
        if m is None:
            raise HTTPError(404, f"model: unknown model {name!r}; served: {sorted(self.models)}")
        return m

    def plan_upload(self, body) -> UploadPlan:
        """Checks a key upload against the served models (:func:`plan_upload`), then reserves
        its decompressed key bytes: 400 when it is refused, 413 above the per-session budget,
        503 when the server-wide budget or the session cap is reached. Nothing is allocated
        for the keys before this returns; :meth:`unreserve` gives the bytes back."""
        try:
            plan = plan_upload(body, self.models)
        except (ValueError, TypeError) as e:
            raise HTTPError(400, str(e)) from None
        self.sweep()
        if len(self.sessions) + self.loading >= self.config.max_sessions:
            raise HTTPError(503, f"sessions: {len(self.sessions)} live sessions and "
                            f"{self.loading} being opened (max_sessions); delete one or retry "
                            "after one expires")
        need = plan.key_bytes
        check_session_keys(need, self.session_key_budget)
        if self.key_bytes + need > self.key_budget:
            raise HTTPError(503, f"keys: the server holds {self.key_bytes} of its "
                            f"{self.key_budget} bytes of keys (max_key_bytes); "
                            "retry after a session is deleted or expires")
        self.key_bytes += need
        self.loading += 1
        return plan

    def unreserve(self, plan: UploadPlan) -> None:
        """Gives back what :meth:`plan_upload` reserved for an upload that did not load."""
        self.key_bytes -= plan.key_bytes
        self.loading -= 1

    def load_session(self, plan: UploadPlan) -> KeyedContext:
        """Device thread: loads the uploaded keys onto the server's device, against the first
        fitting model's own Context and with that model's scheme options (never the client's
        context or options). A bootstrapping model's bootstrapper is built from the model's own
        bootstrapping parameters and the client's bootstrapping keys; the client's
        ``bootstrap_config`` must describe the same parameters."""
        model = self.models[plan.models[0]]
        context = model.context()

        def load(name, cls):
            if name not in plan.blobs:
                return None
            try:
                return cls.from_bytes(plan.blobs[name], context, self.device,
                                      plan.keys[name].body_bytes)
            except (ValueError, TypeError) as e:  # the loader names the field in the object
                raise ValueError(f"{name}: {e}") from None

        ctx = assemble(context, self.device, model.options(), None,
                       load("public_key", _core.PublicKey), load("relin_keys", _core.RelinKeys),
                       load("galois_keys", _core.GaloisKeys))
        ids = {k.key_set_id for k in (ctx.public_key, ctx.relin_keys, ctx.galois_keys)
               if k is not None}
        if len(ids) > 1:
            raise ValueError("upload: the keys belong to different key sets")
        if ctx.galois_keys is not None and set(ctx.galois_keys.galois_elts) != plan.galois_elts:
            raise ValueError("galois_keys: the keys loaded differ from the elements listed")
        if model.bootstrapping is not None:
            ctx.bootstrapper = self._bootstrapper(model, plan, ctx, load)
        return ctx

    def _bootstrapper(self, model: ServedModel, plan: UploadPlan, ctx: KeyedContext, load):
        """The session's bootstrapper: the model's parameters, the client's keys (checked)."""
        from .._bootstrap import Bootstrapper

        params = model.bootstrap_parameters()
        try:
            theirs = _core.BootstrapParameters.from_bytes(
                plan.blobs["bootstrap_config"], model.context(),
                plan.keys["bootstrap_config"].body_bytes)
        except (ValueError, TypeError) as e:
            raise ValueError(f"bootstrap_config: {e}") from None
        if theirs.to_bytes("none") != params.to_bytes("none"):
            raise ValueError(f"bootstrap_config: differs from model {model.name!r}'s "
                             "bootstrapping parameters (GET /models: bootstrapping)")
        keys = _core.BootstrapKeys.take(ctx.relin_keys, load("bootstrap_galois_keys",
                                                             _core.GaloisKeys),
                                        load("bootstrap_to_sparse", _core.SwitchingKey),
                                        load("bootstrap_to_dense", _core.SwitchingKey))
        try:
            return Bootstrapper.from_keys(params, keys, model.bootstrapping)
        except ValueError as e:
            raise ValueError(f"bootstrap keys: {e}") from None

    def add_session(self, ctx: KeyedContext, plan: UploadPlan, nbytes: int,
                    sid: str | None = None) -> Session:
        """The loaded upload becomes a session (its reservation now belongs to the session);
        ``sid`` None draws a new id (24 random bytes)."""
        self.loading -= 1
        key_ids = [k.key_set_id for k in (ctx.relin_keys, ctx.galois_keys, ctx.public_key)
                   if k is not None]
        now = self.clock()
        sid = sid or new_session_id()
        s = Session(sid, ctx, key_ids[0] if key_ids else 0, list(plan.models), nbytes,
                    plan.key_bytes, now, now)
        self.sessions[sid] = s
        return s

    # -- what the endpoints call (veil.serve.cluster.ClusterService has the same) --
    async def health_info(self) -> dict:
        return self.health()

    async def load_upload(self, view, size: int, sid: str | None = None) -> Session:
        """Checks, reserves and loads one key upload (``view``: its bytes, ``size`` as sent)
        onto the device; it becomes a session. 400/413/503 as :meth:`plan_upload` says."""
        plan = self.plan_upload(view)  # checked; its key bytes reserved
        try:
            ctx = await self.on_device(self.load_session, plan)
        except (ValueError, TypeError) as e:  # the loaders name the object and field
            self.unreserve(plan)
            raise HTTPError(400, str(e)) from None
        except BaseException:
            self.unreserve(plan)
            raise
        finally:
            plan.blobs.clear()  # release the views of the upload before its buffer closes
        return self.add_session(ctx, plan, size, sid)

    async def open_session(self, view, size: int) -> dict:
        """``POST /sessions``: the new session's description (the response body)."""
        s = await self.load_upload(view, size)
        return self.session_info(s)

    def session_info(self, s: Session) -> dict:
        return {"session_id": s.id, "models": s.models, "ttl_s": self.config.session_ttl_s,
                "device": self.device, "upload_bytes": s.upload_bytes,
                "key_bytes": s.key_bytes}

    async def check_session(self, sid: str, name: str):
        """Before a request's body is read: 404/410 for a session that is not live. Returns
        what :meth:`evaluate_request` takes as ``found`` (nothing here)."""
        self.session(sid)

    async def evaluate_request(self, sid: str, name: str, body: bytes, compression: str,
                               found=None) -> tuple[bytes, dict, dict]:
        """``POST /sessions/{sid}/evaluate/{name}``: the framed results, the server-side times
        (seconds) and extra response headers. The session is looked up again (it may have been
        deleted while the body arrived)."""
        return await self.evaluate_in(self.session(sid), self.model(name), body, compression)

    async def evaluate_in(self, s: Session, model: ServedModel, body: bytes,
                          compression: str) -> tuple[bytes, dict, dict]:
        """One evaluation request in session ``s`` (frames, key checks, the device queue)."""
        if model.name not in s.models:
            raise HTTPError(400, f"model: this session's keys do not fit model {model.name!r} "
                            f"(they fit {s.models})")
        try:
            blobs = unpack_frame(body, model.max_ciphertexts)
            model.check_keys(s.ctx)
        except ValueError as e:
            raise HTTPError(400, str(e)) from None
        s.busy += 1
        try:
            out, times = await self.on_device(self.evaluate_sync, s, model, blobs, compression,
                                              time.perf_counter())
        finally:
            s.busy -= 1
            s.last_used = self.clock()
        payload = pack_frame(out)
        log.info("evaluate %s session %s: %d -> %d ciphertexts, %d -> %d bytes, queue %.1f ms, "
                 "load %.1f ms, evaluate %.1f ms, save %.1f ms", model.name, _short(s.id),
                 len(blobs), len(out), len(body), len(payload),
                 *(1e3 * times[k] for k in ("queue", "load", "evaluate", "save")))
        return payload, times, {}

    async def close_session(self, sid: str) -> None:
        """``DELETE /sessions/{sid}``: 404/410 as :meth:`session`."""
        self.session(sid)
        self._drop(sid)

    # -- evaluation (device thread) --
    def evaluate_sync(self, session: Session, model: ServedModel, blobs: list[memoryview],
                      compression: str, queued_at: float) -> tuple[list[bytes], dict]:
        t0 = time.perf_counter()
        ctx = session.ctx
        cls = _CIPHERTEXT_CLASSES[ctx.scheme]
        limit = 4 * self.config.max_request_bytes
        top = model.input_level()
        cts = []
        for i, blob in enumerate(blobs):
            try:
                ct = cls.from_bytes(blob, ctx, limit)
            except (ValueError, TypeError) as e:
                raise HTTPError(400, f"ciphertext {i}: {e}") from None
            kid = ct.raw.key_set_id
            if kid != 0 and session.key_set_id != 0 and kid != session.key_set_id:
                raise HTTPError(400, f"ciphertext {i}: encrypted under a different key set than "
                                "the session's keys (open a session with this client's keys)")
            if ct.size != 2 or ct.level != top:
                raise HTTPError(400, f"ciphertext {i}: expected a fresh ciphertext (size 2, level "
                                f"{top}), got size {ct.size}, level {ct.level}")
            cts.append(ct)
        t1 = time.perf_counter()
        try:
            results = model.evaluate(ctx, cts)
        except ValueError as e:
            raise HTTPError(400, f"evaluate: {e}") from None
        _core.synchronize(ctx.device)
        t2 = time.perf_counter()
        out = [r.to_bytes(compression) for r in results]
        t3 = time.perf_counter()
        return out, {"queue": t0 - queued_at, "load": t1 - t0, "evaluate": t2 - t1,
                     "save": t3 - t2}

    def self_test(self) -> None:
        """Device thread: one encrypted evaluation per model with a throwaway key set made here,
        loaded the way a client's upload is, decrypted and compared with the plaintext model
        (warms the device up; raises on a mismatch)."""
        for name, m in self.models.items():
            client = m.client_context(device=self.device)
            plan = plan_upload(client.to_bytes(), {name: m})
            x = m.self_test_inputs()
            cts = [client.encrypt(v) for v in m.encode(x, client.slot_count)]
            server = self.load_session(plan)
            cts = [type(c).from_bytes(c.to_bytes(), server) for c in cts]
            out = [type(r).from_bytes(r.to_bytes(), client) for r in m.evaluate(server, cts)]
            got = m.decode([client.decrypt(r) for r in out], len(x))
            if not m.decode_check(got, m.reference(x)):
                raise RuntimeError(f"self-test of model {name!r} on {self.device}: the encrypted "
                                   "result differs from the plaintext model")


def _release(holder: list, key_set_id: str) -> None:
    holder.clear()
    _ser.prune_key_set(key_set_id)


def key_budgets(config: ServeConfig, models: dict[str, ServedModel]) -> tuple[int, int, int]:
    """(bytes one session may hold, largest key upload, bytes all sessions may hold): the
    config's limits, or those :class:`ServeConfig` describes from the largest served key set."""
    need = max(m.key_bytes() for m in models.values())
    return (config.max_session_key_bytes or need, config.max_upload_bytes or max(256 * MiB, need),
            config.max_key_bytes or max(4 * GiB, 2 * need))


def check_session_keys(need: int, budget: int) -> None:
    """413 when an upload's keys take more than a session may hold (decompressed bytes)."""
    if need > budget:
        raise HTTPError(413, f"keys: the upload's keys take {need} bytes decompressed, above "
                        f"the {budget} bytes a session may hold (max_session_key_bytes); upload "
                        "only the keys GET /models lists")


def no_session(expired: bool) -> HTTPError:
    """The answer for a session id that is not live: 410 while it is remembered as expired,
    else 404."""
    if expired:
        return HTTPError(410, "session: expired; open a new one (POST /sessions)")
    return HTTPError(404, "session: unknown session id")


def new_session_id() -> str:
    """A session id: 24 random bytes, URL-safe (a bearer token for the session's keys)."""
    return secrets.token_urlsafe(24)


def _short(sid: str) -> str:
    """A session id shortened for logs."""
    return sid[:6] + "..."
