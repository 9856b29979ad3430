"""The FastAPI application of ``veil serve``, the uvicorn protocol that times out slow request
headers, and the ways to run it (a background thread for tests, ``main`` for the CLI)."""

from __future__ import annotations

import asyncio
import json
import logging
import mmap
import tempfile
import threading
import time
import traceback
from typing import Any

from .. import _core
from .models import ServedModel, load_models
from .service import HTTPError, MiB, ServeConfig, Service, _short

try:  # the endpoints' annotations name it (resolved from this module's globals)
    from fastapi import Request
except ImportError:  # pragma: no cover - create_app raises a clear ImportError then
    Request = Any

log = logging.getLogger("veil.serve")


def create_app(config: ServeConfig | None = None,
               models: dict[str, ServedModel] | None = None, service=None):
    """The FastAPI application (run it with uvicorn, or test it with FastAPI's TestClient).

    Args:
        config: limits, timeouts, TTL and device (default :class:`ServeConfig`).
        models: the served models by name (default: :func:`load_models`, which trains them).
        service: what the endpoints call (default: a :class:`Service` of ``config`` and
            ``models`` on this process's device; ``veil serve --ray`` passes a
            :class:`veil.serve.cluster.ClusterService`, whose config and models are used).

    Raises:
        ImportError: fastapi is not installed (``pip install 'veil[serve]'``).
        ValueError: no model can be served, or a bad setting.
        RuntimeError: the device is not available (e.g. ``cuda`` without a GPU).
    """
    from contextlib import asynccontextmanager

    from fastapi import FastAPI
    from fastapi.responses import JSONResponse, Response
    from starlette.requests import ClientDisconnect

    if service is None:
        config = config or ServeConfig()
        models = load_models() if models is None else dict(models)
        if not models:
            raise ValueError("models: no model could be loaded (see the warnings above)")
        service = Service(config, models)
        if config.warmup:
            service.executor.submit(service.self_test).result()
    config = service.config

    @asynccontextmanager
    async def lifespan(app):
        yield
        service.close()

    app = FastAPI(title="Veil encrypted inference", version=_core.__version__, lifespan=lifespan)
    app.state.service = service
    # A response to a request whose body was not read whole closes the connection.
    closing = {"connection": "close"}

    @app.exception_handler(HTTPError)
    async def _http_error(request: Request, exc: HTTPError):
        headers = closing if exc.status in (408, 413) else None
        return JSONResponse({"detail": exc.detail}, status_code=exc.status, headers=headers)

    @app.exception_handler(ClientDisconnect)
    async def _gone(request: Request, exc: ClientDisconnect):
        # Not a server error: counted, logged at INFO without a traceback; nobody reads this.
        service.disconnects += 1
        log.info("client disconnected during %s /%s", request.method,
                 request.url.path.split("/")[1])
        return Response(status_code=400, headers=closing)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception):
        log.error("internal error on %s %s:\n%s", request.method, request.url.path.split("/")[1],
                  "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        return JSONResponse({"detail": "internal error (see the server log)"}, status_code=500)

    async def stream_body(request: Request, limit: int, what: str, option: str, sink) -> int:
        """Streams the body into ``sink(chunk)``: 413 as soon as it is known to exceed
        ``limit``; 408 when the client pauses longer than ``body_timeout_s`` between two
        chunks. Returns the number of bytes."""
        too_big = f"{what}: larger than the limit of {limit} bytes ({option})"
        cl = request.headers.get("content-length")
        if cl is not None:
            if not cl.isdigit():
                raise HTTPError(400, "content-length: expected a decimal integer")
            if int(cl) > limit:
                raise HTTPError(413, too_big)
        size = 0
        chunks = request.stream().__aiter__()
        while True:
            try:
                chunk = await asyncio.wait_for(chunks.__anext__(), config.body_timeout_s)
            except StopAsyncIteration:
                break
            except asyncio.TimeoutError:
                service.timeouts += 1
                log.info("%s: no body bytes for %g s after %d bytes; answered 408", what,
                         config.body_timeout_s, size)
                raise HTTPError(408, f"{what}: no bytes of the body arrived for "
                                f"{config.body_timeout_s:g} s (body_timeout_s); send the whole "
                                "body without pausing") from None
            size += len(chunk)
            if size > limit:
                raise HTTPError(413, too_big)
            sink(chunk)
        return size

    async def read_body(request: Request, limit: int, what: str, option: str) -> bytes:
        """The whole body in memory (evaluation requests: bounded by max_request_bytes)."""
        buf = bytearray()
        await stream_body(request, limit, what, option, buf.extend)
        return bytes(buf)

    @app.get("/health")
    async def health():
        return await service.health_info()

    @app.get("/models")
    async def list_models():
        return {"models": [m.spec() for m in service.models.values()]}

    @app.post("/sessions", status_code=201)
    async def open_session(request: Request):
        # The upload goes to a temporary file as it arrives (in memory up to spool_bytes) and
        # is read through a memory map: gigabytes of bootstrapping keys never sit whole in
        # Python's memory.
        with SpooledUpload(config.spool_bytes, config.upload_dir) as upload:
            size = await stream_body(request, service.upload_limit, "key upload",
                                     "max_upload_bytes", upload.write)
            info = await service.open_session(upload.view(), size)
        log.info("session %s opened: %d bytes uploaded (%s), %d bytes of keys decompressed, "
                 "models %s", _short(info["session_id"]), size, upload.where,
                 info["key_bytes"], info["models"])
        return info

    @app.post("/sessions/{sid}/evaluate/{name}")
    async def evaluate(sid: str, name: str, request: Request, compression: str = "zstd"):
        service.model(name)
        found = await service.check_session(sid, name)
        if compression not in ("zstd", "none"):
            raise HTTPError(400, f"compression: expected 'zstd' or 'none', got {compression!r}")
        body = await read_body(request, config.max_request_bytes, "request", "max_request_bytes")
        payload, times, extra = await service.evaluate_request(sid, name, body, compression,
                                                               found)
        headers = {f"X-Veil-{k.capitalize()}-Ms": f"{1e3 * v:.3f}" for k, v in times.items()}
        headers.update(extra)
        return Response(payload, media_type="application/octet-stream", headers=headers)

    @app.delete("/sessions/{sid}", status_code=204)
    async def close_session(sid: str):
        await service.close_session(sid)
        log.info("session %s closed", _short(sid))
        return Response(status_code=204)

    return app


class SpooledUpload:
    """A request body kept in memory up to ``spool_bytes``, then written to an anonymous
    temporary file in ``directory`` (None: the system's), and read back as one memoryview (of a
    read-only memory map once on disk). Use as a context manager; the file is gone when it
    closes."""

    def __init__(self, spool_bytes: int, directory: str | None = None) -> None:
        self.spool_bytes, self.directory = spool_bytes, directory
        self.buf = bytearray()
        self.file: Any = None
        self.map: mmap.mmap | None = None
        self.size = 0

    @property
    def where(self) -> str:
        return "in memory" if self.file is None else "spooled to a temporary file"

    def write(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.file is None and self.size > self.spool_bytes:
            self.file = tempfile.TemporaryFile(dir=self.directory)  # noqa: SIM115 (closed in __exit__)
            self.file.write(self.buf)
            self.buf = bytearray()
        if self.file is None:
            self.buf += chunk
        else:
            self.file.write(chunk)

    def view(self) -> memoryview:
        if self.file is None:
            return memoryview(self.buf)
        self.file.flush()
        self.map = mmap.mmap(self.file.fileno(), self.size, access=mmap.ACCESS_READ)
        return memoryview(self.map)

    def __enter__(self) -> SpooledUpload:
        return self

    def __exit__(self, *exc) -> None:
        if self.map is not None:
            try:
                self.map.close()
            except BufferError:  # a view is still referenced (a traceback's frame): GC closes it
                pass
        if self.file is not None:
            self.file.close()


# ---- running it ----------------------------------------------------------------------------
def http_protocol(app) -> type:
    """uvicorn's h11 protocol with a header timeout: a connection that has not sent a whole
    request line and headers ``header_timeout_s`` after it opened (or after its previous
    response) is answered 408 and closed, and counted in ``/health`` (nginx's
    client_header_timeout; uvicorn itself only times out idle keep-alive connections)."""
    import h11
    from uvicorn.protocols.http.h11_impl import H11Protocol

    service: Service = app.state.service
    timeout = service.config.header_timeout_s
    body = json.dumps({"detail": f"headers: the request line and headers did not arrive within "
                                 f"{timeout:g} s (header_timeout_s)"}).encode()
    answer = (b"HTTP/1.1 408 Request Timeout\r\ncontent-type: application/json\r\n"
              b"connection: close\r\ncontent-length: " + str(len(body)).encode() + b"\r\n\r\n"
              + body)

    class HeaderTimeoutProtocol(H11Protocol):
        _veil_timer: asyncio.TimerHandle | None = None

        def connection_made(self, transport) -> None:  # type: ignore[override]
            super().connection_made(transport)
            self._veil_arm()

        def data_received(self, data: bytes) -> None:
            super().data_received(data)
            if self.conn.their_state is not h11.IDLE:  # the headers are in
                self._veil_cancel()

        def on_response_complete(self) -> None:
            super().on_response_complete()
            if not self.transport.is_closing():
                self._veil_arm()  # the next request's headers get the same time

        def connection_lost(self, exc) -> None:
            self._veil_cancel()
            super().connection_lost(exc)

        def _veil_arm(self) -> None:
            self._veil_cancel()
            self._veil_timer = self.loop.call_later(timeout, self._veil_expire)

        def _veil_cancel(self) -> None:
            if self._veil_timer is not None:
                self._veil_timer.cancel()
                self._veil_timer = None

        def _veil_expire(self) -> None:
            self._veil_timer = None
            if self.transport.is_closing() or self.conn.their_state is not h11.IDLE:
                return
            service.timeouts += 1
            log.info("connection from %s: no complete request headers within %g s; answered "
                     "408 and closed", self.client[0] if self.client else "?", timeout)
            self.transport.write(answer)
            self.transport.close()

    return HeaderTimeoutProtocol


def uvicorn_config(app, host: str = "127.0.0.1", port: int = 0, log_level: str = "warning"):
    """uvicorn's settings for ``app``: h11 with the header timeout (:func:`http_protocol`) when
    ``app`` is :func:`create_app`'s (plain h11 for another ASGI app), no access log."""
    import uvicorn

    veil_app = hasattr(getattr(app, "state", None), "service")
    return uvicorn.Config(app, host=host, port=port, log_level=log_level, access_log=False,
                          lifespan="on", http=http_protocol(app) if veil_app else "h11")


class BackgroundServer:
    """uvicorn serving ``app`` from a daemon thread (tests, ``veil loadtest`` without
    ``--server``). ``port=0`` picks a free port; :attr:`url` is known after :meth:`start`.

    Use as a context manager: ``with BackgroundServer(app) as url: ...``.
    """

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0,
                 log_level: str = "warning") -> None:
        import uvicorn

        self.config = uvicorn_config(app, host, port, log_level)
        self.server = uvicorn.Server(self.config)
        self.thread = threading.Thread(target=self.server.run, name="veil-serve", daemon=True)
        self.url = ""

    def start(self, timeout: float = 60.0) -> str:
        self.thread.start()
        deadline = time.monotonic() + timeout
        while not self.server.started:
            if not self.thread.is_alive() or time.monotonic() > deadline:
                raise RuntimeError("server: uvicorn did not start")
            time.sleep(0.01)
        sock = self.server.servers[0].sockets[0]
        host, port = sock.getsockname()[:2]
        self.url = f"http://{host}:{port}"
        return self.url

    def stop(self) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)

    def __enter__(self) -> str:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def __repr__(self) -> str:
        state = "running" if self.thread.is_alive() else "stopped"
        return f"veil.serve.BackgroundServer(url={self.url or None!r}, {state})"


def main(host: str = "127.0.0.1", port: int = 8000, config: ServeConfig | None = None,
         models: dict[str, ServedModel] | None = None, log_level: str = "info") -> int:
    """``veil serve``: checks the models (default: :func:`load_models`) once on the device, then
    serves until Ctrl-C or SIGTERM."""
    import uvicorn

    logging.basicConfig(level=getattr(logging, log_level.upper(), logging.INFO),
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    config = config or ServeConfig(warmup=True)
    t0 = time.perf_counter()
    app = create_app(config, load_models() if models is None else models)
    service: Service = app.state.service
    log.info("veil serve: %s on %s, models %s ready in %.1f s (limits: request %d MiB, key "
             "upload %d MiB, keys %d MiB per session and %d MiB in all, %d sessions, TTL %g s, "
             "header and body timeouts %g / %g s)", _core.__version__, service.device,
             sorted(service.models), time.perf_counter() - t0, config.max_request_bytes // MiB,
             service.upload_limit // MiB, service.session_key_budget // MiB,
             service.key_budget // MiB, config.max_sessions, config.session_ttl_s,
             config.header_timeout_s, config.body_timeout_s)
    uvicorn.Server(uvicorn_config(app, host, port, log_level)).run()
    return 0
