"""``veil serve``: encrypted inference over HTTP (FastAPI on uvicorn).

The server holds trained models in plaintext and, per client session, only that client's
*evaluation* keys (public, relinearization and Galois keys). A client generates its keys
locally, uploads the evaluation keys once, then sends encrypted feature vectors and receives
encrypted results that only it can decrypt. The server never sees a secret key, a feature or a
result in the clear.

Design
------
**Models** (:class:`ServedModel`): each served model states, in a public JSON *spec*
(``GET /models``), the encryption parameters the client must use (scheme, N, t, the primes of
the coefficient modulus, multiplication method, security level) and their parameter hash, the
keys it needs (relinearization keys, Galois keys for the rotation steps listed), how inputs are
packed into slots and how outputs are read back. ``evaluate(server_ctx, ciphertexts)`` computes
with the session's public evaluation keys only. Client-side helpers (``encode``, ``decode``,
``reference`` = the plaintext model, the oracle) live on the same object. Models are looked up in
:data:`MODEL_FACTORIES` (name -> ``"module:callable"``, imported lazily), so a new model is one
entry; :func:`register_model` adds one at run time. Built in: ``logreg`` (the logistic
regression of :mod:`veil.apps.demo`, reusing its training, quantization, packing and
``server_evaluate``) and ``xgboost`` (the trees of :mod:`veil.apps.demo_xgboost`, through its
``prepare``, ``encode_inputs``, ``encode_plan``, ``evaluate`` and ``decode_scores``; skipped with
a warning when xgboost is not installed). Served when named (``--models``): ``logreg-train``
(encrypted training with bootstrapping, :mod:`veil.serve.train_model`) and ``cnn`` (the CKKS
convolutional network of :mod:`veil.apps.demo_cnn` on 8x8 digits, :mod:`veil.serve.cnn_model`).

**Endpoints** (JSON unless stated; errors are ``{"detail": "message"}``):

=========================================  ====================================================
``GET /health``                            status, version, device, models, live sessions,
                                           queued requests, disconnects, timeouts, key bytes
                                           held and budgets
``GET /models``                            ``{"models": [spec, ...]}``
``POST /sessions``                         body: a context bundle, ``ctx.to_bytes()`` (public,
                                           relinearization and Galois keys, zstd, seeded) ->
                                           201 ``{"session_id", "models", "ttl_s", ...}``
``POST /sessions/{id}/evaluate/{model}``   body: framed ciphertexts -> framed result
                                           ciphertexts (``application/octet-stream``);
                                           ``?compression=zstd|none`` for the results
``DELETE /sessions/{id}``                  204
=========================================  ====================================================

**Framing** of ciphertexts (request and response bodies, all integers little-endian)::

    b"VEILCTS\\x01" | count: u32 | count x ( length: u64 | one ciphertext in Veil's format )

Results come back in request order. Response headers ``X-Veil-Queue-Ms``, ``X-Veil-Load-Ms``,
``X-Veil-Evaluate-Ms`` and ``X-Veil-Save-Ms`` time the server's side (queue wait,
deserialization, evaluation, serialization).

**Sessions are isolated.** An upload's description (``format``, ``scheme``, ``security``,
``options``, ``key_set_id``) must equal what a served model states, field by field, or it is
refused with 400 before a session exists; the server then loads the keys against its *own*
Context for the model's parameters, with the model's own scheme options, so nothing one client
sends can change what another client's request computes. Material cached between requests
(encoded weights, plans) is derived from that server-side state only.

**Limits and errors.** Request and key-upload bodies are bounded (``max_request_bytes``,
``max_upload_bytes``, by default the larger of 256 MiB and the largest served key set; 413 as
soon as ``Content-Length`` or the bytes streamed so far exceed
them, before the rest is read). Keys are counted *decompressed*, from their headers, before
anything is allocated: a session may hold ``max_session_key_bytes`` (default: the key set of the
served model that needs most, ``keys.key_bytes`` in ``GET /models``; 413 beyond) and all
sessions together ``max_key_bytes`` (by default the larger of 4 GiB and two of the largest key
sets; 503 beyond), and an upload may hold only the Galois keys a
model it fits uses (400 otherwise). A key upload holding a secret key (a ``secret_key`` entry,
or any blob whose Veil header says "secret key") is refused with 400 before anything is loaded;
so are parameters that match no served model and key sets that lack what every such model needs.
Sessions expire ``session_ttl_s`` after their last use (410 while the id is remembered, 404
after); at most ``max_sessions`` live at once (503 beyond); deleting or expiring a session
returns its key memory. A client must send its request line and headers within
``header_timeout_s`` (408, connection closed) and its body without pausing longer than
``body_timeout_s`` between chunks (408). Requests carry fresh ciphertexts (size 2, top level) of
the session's key set. Every 4xx answer names the field at fault in the server's words, never
key material; unknown models or sessions answer 404; the server keeps running. A client that
disconnects mid-request is counted (``/health``: ``disconnects``, ``timeouts``) and logged at
INFO without a traceback. Unexpected failures answer 500 "internal error" and are logged with
their traceback.

**One device, one queue.** All device work (key loading, ciphertext loading, evaluation,
serialization) runs on a single worker thread, so concurrent requests queue in arrival order on
the one GPU (or the CPU backend, whose OpenMP threads already use every core) while the event
loop keeps accepting connections and streaming bodies; Veil releases the GIL during its long
calls. At most ``max_pending`` requests wait (503 beyond). ``device="auto"``: the GPU when
there is one, else the CPU.

**Trust.** The server learns nothing from the ciphertexts, but the service itself has no TLS
and no authentication: a session id (24 random bytes) is a bearer token for that session's
keys. Keep the default bind address 127.0.0.1, or put a TLS proxy in front.

Run it with ``veil serve`` (see ``veil serve --help``) and try it with
``veil demo --server http://127.0.0.1:8000``; ``veil loadtest`` puts it under load.

**Many GPUs and hosts.** ``veil serve --ray`` (:mod:`veil.serve.cluster`, needs Ray) serves the
same API from HTTP front ends on Ray in front of one worker replica per GPU, with each session's
keys uploaded once; :mod:`veil.distributed` runs batch jobs over the same machines.
"""


from .app import BackgroundServer, create_app, http_protocol, main, uvicorn_config
from .cnn_model import CNNModel
from .models import (
    DEFAULT_MODELS,
    MODEL_FACTORIES,
    LogisticRegressionModel,
    ServedModel,
    XGBoostModel,
    context_from_spec,
    load_model,
    load_models,
    register_model,
)
from .service import HTTPError, ServeConfig, Service, Session
from .train_model import LogisticTrainingModel
from .upload import (
    FRAME_MAGIC,
    KeyBlob,
    UploadPlan,
    check_meta,
    check_upload,
    pack_frame,
    plan_upload,
    read_key_blob,
    unpack_frame,
)

__all__ = [
    "DEFAULT_MODELS",
    "FRAME_MAGIC",
    "MODEL_FACTORIES",
    "BackgroundServer",
    "CNNModel",
    "HTTPError",
    "KeyBlob",
    "LogisticRegressionModel",
    "LogisticTrainingModel",
    "ServeConfig",
    "ServedModel",
    "Service",
    "Session",
    "UploadPlan",
    "XGBoostModel",
    "check_meta",
    "check_upload",
    "context_from_spec",
    "create_app",
    "http_protocol",
    "load_model",
    "load_models",
    "main",
    "pack_frame",
    "plan_upload",
    "read_key_blob",
    "register_model",
    "unpack_frame",
    "uvicorn_config",
]
