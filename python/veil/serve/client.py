"""Client of ``veil serve`` (httpx), and ``veil demo --server URL``.

Example::

    from veil.serve.client import VeilClient
    from veil.serve import context_from_spec

    with VeilClient("http://127.0.0.1:8000") as server:
        spec = server.model("logreg")                  # parameters, keys, layout
        ctx = context_from_spec(spec)                  # keys made here; the secret stays here
        sid = server.open_session(ctx)                 # uploads ctx.to_bytes(): no secret key
        results = server.evaluate(sid, "logreg", [ctx.encrypt(v, symmetric=True) for v in slots])
        scores = [ctx.decrypt(r) for r in results]

The wire format (framing, endpoints, limits) is described in :mod:`veil.serve`.
"""

from __future__ import annotations

import math
import statistics
import time
from typing import TYPE_CHECKING, Any

import numpy as np

from .._base import _CIPHERTEXT_CLASSES, KeyedContext
from .models import context_from_spec, load_model
from .upload import pack_frame, unpack_frame

if TYPE_CHECKING:
    import httpx

#: Largest number of result ciphertexts the client accepts in one response.
MAX_RESULTS = 4096
#: A session's endpoint (``veil serve --ray``) must take the connection within this many
#: seconds; one that failed is not used again for ENDPOINT_COOLDOWN_S.
ENDPOINT_CONNECT_S = 5.0
ENDPOINT_COOLDOWN_S = 30.0


class ServerError(RuntimeError):
    """The server answered with an error status; ``status`` and ``detail`` (its message)."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(f"HTTP {status}: {detail}")
        self.status = status
        self.detail = detail


class VeilClient:
    """A connection to a ``veil serve`` server.

    Args:
        url: the server's base URL (``http://127.0.0.1:8000``); or
        http: an existing ``httpx.Client`` (e.g. FastAPI's TestClient) to send requests with.
        timeout: seconds per request (connect, read and write).

        direct: send a session's requests to the endpoint its server names for it
            (``veil serve --ray``: the worker replica that holds the session's keys), falling
            back to ``url`` when that endpoint fails or is busy (502/503/504, a transport error,
            or no connection within ENDPOINT_CONNECT_S); an answer through ``url`` may name the
            session's new endpoint (``X-Veil-Endpoint``), unless that one failed within
            ENDPOINT_COOLDOWN_S.

    Every method raises :class:`ServerError` for an error status and ``httpx.HTTPError`` for a
    transport failure.
    """

    def __init__(self, url: str | None = None, *, http: httpx.Client | None = None,
                 timeout: float = 300.0, direct: bool = True) -> None:
        import httpx

        if (url is None) == (http is None):
            raise ValueError("url: pass either url or http")
        self._own = http is None
        self.http = http if http is not None else httpx.Client(
            base_url=str(url).rstrip("/"), timeout=timeout)
        self.direct = direct
        self.timeout = timeout
        #: session id -> the endpoint its requests go to; endpoint -> its connection
        self.routes: dict[str, str] = {}
        self._endpoints: dict[str, httpx.Client] = {}
        self._failed: dict[str, float] = {}  # endpoint -> when it last failed
        #: requests that went to a session's endpoint, and those that fell back to ``url``
        self.sent_direct = 0
        self.fell_back = 0

    def close(self) -> None:
        for c in self._endpoints.values():
            c.close()
        self._endpoints.clear()
        if self._own:
            self.http.close()

    def __enter__(self) -> VeilClient:  # noqa: PYI034 - Self needs Python 3.11
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        """The server's URL, without any user name or password in it."""
        url = getattr(self.http, "base_url", None)
        if url is not None and hasattr(url, "copy_with"):
            url = url.copy_with(username=None, password=None)
        return f"veil.serve.client.VeilClient(url={str(url) if url is not None else None!r})"

    # -- plumbing --
    def _check(self, r):
        if r.status_code >= 400:
            try:
                detail = r.json().get("detail", r.text)
            except ValueError:
                detail = r.text
            raise ServerError(r.status_code, str(detail))
        return r

    # -- endpoints --
    def health(self) -> dict:
        """``GET /health``."""
        return self._check(self.http.get("/health")).json()

    def models(self) -> dict[str, dict]:
        """``GET /models``: each served model's spec by name."""
        return {m["name"]: m for m in self._check(self.http.get("/models")).json()["models"]}

    def model(self, name: str) -> dict:
        """One model's spec; ValueError naming the served ones when it is not served."""
        specs = self.models()
        if name not in specs:
            raise ValueError(f"model: {name!r} is not served here; served: {sorted(specs)}")
        return specs[name]

    def open_session_bytes(self, upload: bytes) -> dict:
        """``POST /sessions`` with a ready-made key upload; the server's answer (session_id, ...,
        and with ``veil serve --ray`` the session's ``endpoint``)."""
        info = self._check(self.http.post("/sessions", content=upload, headers={
            "content-type": "application/octet-stream"})).json()
        self._route(info.get("session_id"), info.get("endpoint"))
        return info

    def _route(self, sid, endpoint) -> None:
        import httpx

        if not (self.direct and isinstance(sid, str) and isinstance(endpoint, str) and endpoint):
            return
        endpoint = endpoint.rstrip("/")
        failed = self._failed.get(endpoint)
        if failed is not None and time.monotonic() - failed < ENDPOINT_COOLDOWN_S:
            return  # it failed lately: the session stays on the front end for now
        self.routes[sid] = endpoint
        if endpoint not in self._endpoints:  # made now: a client's setup costs ~0.1 s
            self._endpoints[endpoint] = httpx.Client(
                base_url=endpoint, timeout=httpx.Timeout(self.timeout, connect=ENDPOINT_CONNECT_S))

    def _post(self, sid: str, path: str, **kw):
        """POST to the session's endpoint if it has one, else (or when that fails) to ``url``."""
        import httpx

        endpoint = self.routes.get(sid)
        if endpoint is not None:
            c = self._endpoints[endpoint]
            try:
                r = c.post(path, **kw)
                if r.status_code not in (502, 503, 504):
                    self.sent_direct += 1
                    return r
            except httpx.TransportError:
                pass
            # The replica died, restarts or is full: the front ends route the request (an
            # evaluation is a pure function of the ciphertexts and keys: resending is safe).
            self.routes.pop(sid, None)
            self._failed[endpoint] = time.monotonic()
            self.fell_back += 1
        r = self.http.post(path, **kw)
        if r.status_code < 400:
            self._route(sid, r.headers.get("x-veil-endpoint"))
        return r

    def open_session(self, ctx: KeyedContext) -> str:
        """Uploads ``ctx``'s evaluation keys (``ctx.to_bytes()``: public, relinearization and
        Galois keys; never the secret key) and returns the session id."""
        return self.open_session_bytes(ctx.to_bytes())["session_id"]

    def evaluate_bytes(self, session_id: str, model: str, blobs: list[bytes],
                       compression: str = "zstd") -> tuple[list[bytes], dict[str, float]]:
        """Sends serialized ciphertexts; returns the serialized results and the server's
        timings in ms (queue, load, evaluate, save)."""
        r = self._check(self._post(
            session_id, f"/sessions/{session_id}/evaluate/{model}",
            params={"compression": compression}, content=pack_frame(blobs),
            headers={"content-type": "application/octet-stream"}))
        times = {k: float(r.headers[f"x-veil-{k}-ms"]) for k in ("queue", "load", "evaluate", "save")
                 if f"x-veil-{k}-ms" in r.headers}
        return [bytes(b) for b in unpack_frame(r.content, MAX_RESULTS)], times

    def evaluate(self, session_id: str, model: str, cts: list, compression: str = "zstd") -> list:
        """Sends ciphertexts of one context, returns the results as ciphertexts of that context."""
        if not cts:
            raise ValueError("cts: expected at least one ciphertext")
        ctx = cts[0].ctx
        out, _ = self.evaluate_bytes(session_id, model, [c.to_bytes() for c in cts], compression)
        return [type(cts[0]).from_bytes(b, ctx) for b in out]

    def close_session(self, session_id: str) -> None:
        """``DELETE /sessions/{id}``."""
        self.routes.pop(session_id, None)
        self._check(self.http.delete(f"/sessions/{session_id}"))


def _ms(seconds: float) -> float:
    return 1e3 * seconds


def run_demo(url: str | None = None, model: str = "logreg", device: str | None = "auto",
             seed: int | None = None, repeats: int = 10, compression: str = "zstd",
             verbose: bool = True, http=None) -> dict[str, Any]:
    """``veil demo --server URL``: the client side of encrypted inference against a server.

    Generates keys locally on ``device``, uploads the evaluation keys once, encrypts the
    model's test samples (143 for ``logreg``, 359 images for ``cnn``) with the secret key
    (seeded: half the bytes), sends them ``repeats`` times (1 + repeats requests; the first is
    reported apart as the cold one), decrypts every answer and compares it with the plaintext
    model computed here (its ``decode_check``).

    Returns:
        dict with ``exact`` (every decrypted output == the plaintext model's, in every
        request), ``passed`` (the model's ``decode_check`` held in every request: exactness
        for the BFV models; for a CKKS model such as ``cnn``, outputs within its tolerance and
        classes agreeing), ``max_error`` (largest |decrypted - plaintext| output, last
        request), ``agreement`` (decisions, 0..1), ``accuracy``, ``n_samples``,
        ``n_ciphertexts``, ``upload_bytes``, ``request_bytes``, ``response_bytes``,
        ``server`` (/health), and ``times_ms``: ``keygen``, ``upload`` (key upload round trip),
        ``encrypt`` (encrypt + serialize), ``round_trip_first``, ``round_trip_median``,
        ``round_trip_min``, ``round_trip_p90`` (HTTP request to response, the server's work
        included), ``server_*`` (medians of the server's queue/load/evaluate/save),
        ``decrypt`` (deserialize + decrypt + decode, median), ``end_to_end`` (encrypt +
        median round trip + decrypt).

    Raises:
        ValueError: the model is not served, or the local plaintext model differs from the
            server's (weights digest). ServerError / httpx.HTTPError: the server failed.
    """
    if not isinstance(repeats, int) or repeats < 1:
        raise ValueError(f"repeats: expected a positive integer, got {repeats!r}")
    client = VeilClient(url, http=http) if http is not None else VeilClient(url)
    with client:
        health = client.health()
        spec = client.model(model)
        local = load_model(model)
        if local.weights_digest() != spec["weights_digest"]:
            raise ValueError(
                f"weights_digest: the local plaintext model {model!r} differs from the server's "
                "(different data or library versions?); cannot check the results")
        x, y = local.samples()
        expected = local.reference(x)

        t0 = time.perf_counter()
        ctx = context_from_spec(spec, device=device, seed=seed)
        t_keygen = time.perf_counter() - t0
        upload = ctx.to_bytes()
        t0 = time.perf_counter()
        sid = client.open_session_bytes(upload)["session_id"]
        t_upload = time.perf_counter() - t0

        t0 = time.perf_counter()
        slot_vectors = local.encode(x, ctx.slot_count)
        blobs = [ctx.encrypt(v, symmetric=True).to_bytes() for v in slot_vectors]
        t_encrypt = time.perf_counter() - t0
        cls = _CIPHERTEXT_CLASSES[ctx.scheme]

        rtts, server_times, decrypts, exact, passed, outputs = [], [], [], True, True, None
        response_bytes = 0
        try:
            for _ in range(1 + repeats):
                t0 = time.perf_counter()
                out, st = client.evaluate_bytes(sid, model, blobs, compression)
                rtts.append(time.perf_counter() - t0)
                server_times.append(st)
                response_bytes = sum(len(b) for b in out) + 12 + 8 * len(out)
                t0 = time.perf_counter()
                outputs = local.decode([ctx.decrypt(cls.from_bytes(b, ctx)) for b in out], len(x))
                decrypts.append(time.perf_counter() - t0)
                exact = exact and bool(np.array_equal(outputs, expected))
                passed = passed and local.decode_check(outputs, expected)
        finally:
            client.close_session(sid)

    timed = rtts[1:]
    dec_pred = local.decisions(outputs)
    ref_pred = local.decisions(expected)
    r: dict[str, Any] = {
        "url": url,
        "model": model,
        "server": health,
        "client_device": ctx.device,
        "params": ctx.describe(),
        "n_samples": len(x),
        "n_ciphertexts": len(blobs),
        "requests": len(rtts),
        "exact": exact,
        "passed": passed,
        "approximate": local.scheme == "ckks",
        "max_error": float(np.abs(np.asarray(outputs, dtype=np.float64)
                                  - np.asarray(expected, dtype=np.float64)).max()),
        "mismatches": int(np.count_nonzero(outputs != expected)),
        "agreement": float(np.mean(dec_pred == ref_pred)),
        "accuracy": float(np.mean(dec_pred == y)),
        "upload_bytes": len(upload),
        "request_bytes": len(pack_frame(blobs)),
        "response_bytes": response_bytes,
        "times_ms": {
            "keygen": _ms(t_keygen),
            "upload": _ms(t_upload),
            "encrypt": _ms(t_encrypt),
            "round_trip_first": _ms(rtts[0]),
            "round_trip_median": _ms(statistics.median(timed)),
            "round_trip_min": _ms(min(timed)),
            "round_trip_p90": _ms(percentile(timed, 90)),
            "decrypt": _ms(statistics.median(decrypts)),
        },
    }
    for k in ("queue", "load", "evaluate", "save"):
        vals = [st[k] for st in server_times[1:] if k in st]
        if vals:
            r["times_ms"][f"server_{k}"] = statistics.median(vals)
    tm = r["times_ms"]
    tm["end_to_end"] = tm["encrypt"] + tm["round_trip_median"] + tm["decrypt"]
    if verbose:
        print_report(r)
    return r


def run_train_demo(url: str | None = None, device: str | None = "auto", seed: int | None = None,
                   verbose: bool = True, http=None, model: str = "logreg-train",
                   local: Any = None) -> dict[str, Any]:
    """``veil demo --server URL --scheme ckks --train``: encrypted training on a server that
    bootstraps (:class:`veil.serve.LogisticTrainingModel`).

    Makes a CKKS key set with bootstrapping keys on ``device`` (the secret key stays here),
    uploads the evaluation and bootstrapping keys (``ctx.to_bytes()``), sends the encrypted
    training set and initial weights, and decrypts the trained weights. ``local``: the
    plaintext model (default ``load_model(model)``; its weights digest must be the server's).

    Returns:
        dict with ``accuracy`` (the decrypted weights on the test set), ``reference_accuracy``
        (the same gradient descent in float64 with the same cubic), ``weights_error`` (max
        |decrypted - float64|), ``passed`` (same accuracy and error < 1e-2), ``upload_bytes``,
        ``key_bytes`` (decompressed, as the server counted them), and ``times_ms``: ``keygen``,
        ``upload``, ``encrypt``, ``train`` (the request round trip: the server's training with
        its bootstraps), ``server_evaluate``, ``decrypt``.

    Raises:
        ValueError: the model is not served or differs from ``local``. ServerError /
            httpx.HTTPError: the server failed.
    """
    client = VeilClient(url, http=http) if http is not None else VeilClient(url)
    with client:
        spec = client.model(model)
        local = local if local is not None else load_model(model)
        if local.weights_digest() != spec["weights_digest"]:
            raise ValueError(f"weights_digest: the local model {model!r} differs from the "
                             "server's; cannot check the result")
        z, _ = local.samples()
        t0 = time.perf_counter()
        ctx = context_from_spec(spec, device=device, seed=seed)
        t_keygen = time.perf_counter() - t0
        upload = ctx.to_bytes()
        t0 = time.perf_counter()
        opened = client.open_session_bytes(upload)
        t_upload = time.perf_counter() - t0
        del upload
        t0 = time.perf_counter()
        blobs = [ctx.encrypt(v, symmetric=True).to_bytes()
                 for v in local.encode(z, ctx.slot_count)]
        t_encrypt = time.perf_counter() - t0
        try:
            t0 = time.perf_counter()
            out, st = client.evaluate_bytes(opened["session_id"], model, blobs)
            t_train = time.perf_counter() - t0
        finally:
            client.close_session(opened["session_id"])
        t0 = time.perf_counter()
        cls = _CIPHERTEXT_CLASSES[ctx.scheme]
        w = local.decode([ctx.decrypt(cls.from_bytes(b, ctx)) for b in out], len(z))
        t_decrypt = time.perf_counter() - t0
    ref = local.reference(z)
    acc, ref_acc = local.accuracy(w), local.accuracy(ref)
    err = float(np.abs(w - ref).max())
    r = {"url": url, "model": model, "client_device": ctx.device, "params": ctx.describe(),
         "n_train": len(z), "iterations": local.iterations, "accuracy": acc,
         "reference_accuracy": ref_acc, "weights_error": err,
         "passed": acc == ref_acc and err < 1e-2, "upload_bytes": opened["upload_bytes"],
         "key_bytes": opened["key_bytes"],
         "times_ms": {"keygen": _ms(t_keygen), "upload": _ms(t_upload),
                      "encrypt": _ms(t_encrypt), "train": _ms(t_train),
                      "server_evaluate": st.get("evaluate", float("nan")),
                      "decrypt": _ms(t_decrypt)}}
    if verbose:
        tm = r["times_ms"]
        print(f"encrypted training on {url}: {r['n_train']} samples, {r['iterations']} "
              f"iterations with bootstrapping on the server")
        print(f"  keys: {tm['keygen']:.0f} ms here; upload {r['upload_bytes'] / 2**20:.1f} MiB "
              f"({r['key_bytes'] / 2**30:.2f} GiB of keys decompressed) in {tm['upload']:.0f} ms")
        print(f"  training round trip {tm['train']:.0f} ms (server {tm['server_evaluate']:.0f} "
              f"ms); encrypt {tm['encrypt']:.0f} ms, decrypt {tm['decrypt']:.0f} ms")
        print(f"  test accuracy {acc:.4f} (float64 with the same cubic: {ref_acc:.4f}); "
              f"weights within {err:.2e}: {'passed' if r['passed'] else 'FAILED'}")
    return r


def percentile(values, p: float) -> float:
    """Nearest-rank percentile (p in 0..100) of a non-empty sequence: the smallest value with at
    least p % of the values at or below it."""
    v = sorted(values)
    if not v:
        raise ValueError("values: expected at least one value")
    k = max(1, math.ceil(p / 100 * len(v)))
    return v[k - 1]


def print_report(r: dict[str, Any]) -> None:
    """Prints :func:`run_demo`'s results (rich tables)."""
    from rich.console import Console
    from rich.table import Table

    console = Console()
    p = r["params"]
    console.print(f"[bold]Veil demo over HTTP: {r['model']} on {r['url'] or 'in-process'}[/bold] "
                  f"(server device {r['server']['device']}, client device {r['client_device']})")
    plain = (f"scale 2^{p['scale_bits']:g}" if p.get("plain_modulus") is None
             and "scale_bits" in p else f"t = {p.get('plain_modulus')}")
    console.print(f"parameters: N = {p['poly_modulus_degree']}, log2 Q = {p['log2_qp']}, "
                  f"{plain}; {r['n_samples']} samples in "
                  f"{r['n_ciphertexts']} ciphertext(s); key upload {r['upload_bytes'] / 2**20:.2f} "
                  f"MiB, request {r['request_bytes'] / 2**10:.0f} KiB, response "
                  f"{r['response_bytes'] / 2**10:.0f} KiB")
    res = Table(title="Results", title_justify="left")
    res.add_column("metric")
    res.add_column("value", justify="right")
    if r.get("approximate"):  # CKKS: approximate outputs, checked by the model's tolerance
        res.add_row("agreement with the plaintext model", f"{100 * r['agreement']:.2f} %")
        res.add_row("max |decrypted - plaintext| output", f"{r['max_error']:.2e}")
        res.add_row("within the model's tolerance (every request)",
                    "[green]yes[/green]" if r["passed"] else "[red]NO[/red]")
    else:
        res.add_row("agreement with the plaintext quantized model",
                    f"{100 * r['agreement']:.2f} %")
        res.add_row("decrypted outputs == plaintext outputs (every request)",
                    "[green]yes (exact)[/green]" if r["exact"]
                    else f"[red]NO ({r['mismatches']} differ)[/red]")
    res.add_row("accuracy (labels)", f"{100 * r['accuracy']:.2f} %")
    console.print(res)
    tim = Table(title=f"Wall time ({r['requests']} requests; medians after the first)",
                title_justify="left")
    tim.add_column("step")
    tim.add_column("ms", justify="right")
    t = r["times_ms"]
    rows = [
        ("keygen (client)", "keygen"),
        ("key upload (once, round trip)", "upload"),
        ("encrypt + serialize (client)", "encrypt"),
        ("request round trip, first", "round_trip_first"),
        ("request round trip, median", "round_trip_median"),
        ("request round trip, min / p90", None),
        ("  server: queue", "server_queue"),
        ("  server: load ciphertexts", "server_load"),
        ("  server: evaluate", "server_evaluate"),
        ("  server: serialize results", "server_save"),
        ("decrypt + decode (client)", "decrypt"),
        ("end to end (encrypt + round trip + decrypt)", "end_to_end"),
    ]
    for label, key in rows:
        if key is None:
            tim.add_row(label, f"{t['round_trip_min']:.1f} / {t['round_trip_p90']:.1f}")
        elif key in t:
            tim.add_row(label, f"{t[key]:.1f}")
    console.print(tim)


__all__ = ["ServerError", "VeilClient", "percentile", "print_report", "run_demo"]
