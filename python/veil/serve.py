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
regression of :mod:`veil.demo`, reusing its training, quantization, packing and
``server_evaluate``) and ``xgboost`` (the trees of :mod:`veil.demo_xgboost`, through its
``prepare``, ``encode_inputs``, ``encode_plan``, ``evaluate`` and ``decode_scores``; skipped with
a warning when xgboost is not installed).

**Endpoints** (JSON unless stated; errors are ``{"detail": "message"}``):

=========================================  ====================================================
``GET /health``                            status, version, device, models, live sessions,
                                           queued requests
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

**Limits and errors.** Request and key-upload bodies are bounded (``max_request_bytes``,
``max_upload_bytes``; 413 as soon as ``Content-Length`` or the bytes streamed so far exceed
them, before the rest is read); the loaders get ``max_bytes`` = 4x the limit (the bound on
each object's decompressed body, checked before allocation). A key upload holding a secret key (a ``secret_key`` entry, or any
blob whose Veil header says "secret key") is refused with 400 before anything is loaded; so
are parameters that match no served model. Sessions expire ``session_ttl_s`` after their last
use (410 while the id is remembered, 404 after); at most ``max_sessions`` live at once (503
beyond). Requests carry fresh ciphertexts (size 2, top level) of the session's key set. Bad
bytes, parameters, key sets or shapes answer 400 with the loader's message (field
names and positions, never key material); unknown models or sessions 404; the server keeps
running. Unexpected failures answer 500 "internal error" and are logged with their traceback.

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
"""

from __future__ import annotations

import abc
import asyncio
import hashlib
import importlib
import logging
import secrets
import struct
import threading
import time
import traceback
import weakref
from collections import OrderedDict
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from . import _core
from . import _serialize as _ser
from ._base import _CIPHERTEXT_CLASSES, KeyedContext, build_params
from ._device import resolve_device

try:  # the endpoints' annotations name it (resolved from this module's globals)
    from fastapi import Request
except ImportError:  # pragma: no cover - create_app raises a clear ImportError then
    Request = Any

log = logging.getLogger("veil.serve")

MiB = 1 << 20

# ---- framing of ciphertexts -----------------------------------------------------------------
#: Magic of a frame of ciphertexts (request and response bodies).
FRAME_MAGIC = b"VEILCTS\x01"
#: Veil-format object type of a secret key (docs/serialization.md: byte 6 of the header).
_VEIL_MAGIC = b"VEIL"
_TYPE_SECRET_KEY = 4
#: The only entries a key upload may hold.
_UPLOAD_BLOBS = ("parameters", "public_key", "relin_keys", "galois_keys")


def pack_frame(blobs: Iterable[bytes]) -> bytes:
    """``FRAME_MAGIC | u32 count | count x (u64 length | bytes)``: a request or response body."""
    blobs = [bytes(b) for b in blobs]
    parts = [FRAME_MAGIC, struct.pack("<I", len(blobs))]
    for b in blobs:
        parts.append(struct.pack("<Q", len(b)))
        parts.append(b)
    return b"".join(parts)


def unpack_frame(data, max_count: int) -> list[memoryview]:
    """Inverse of :func:`pack_frame`: the blobs (views into ``data``), 1..max_count of them.

    Raises:
        ValueError: wrong magic, a count of 0 or above ``max_count``, a length running past the
            end, or trailing bytes (the message names the field).
    """
    view = memoryview(data).cast("B")
    if len(view) < 12 or bytes(view[:8]) != FRAME_MAGIC:
        raise ValueError("frame: expected ciphertexts framed as b'VEILCTS\\x01' | u32 count | "
                         "count x (u64 length | bytes)")
    (count,) = struct.unpack_from("<I", view, 8)
    if not 1 <= count <= max_count:
        raise ValueError(f"count: expected 1..{max_count} ciphertexts, got {count}")
    pos, out = 12, []
    for i in range(count):
        item, pos = _ser.read_length_prefixed(view, pos, f"ciphertext {i}")
        out.append(item)
    if pos != len(view):
        raise ValueError(f"frame: {len(view) - pos} unexpected trailing bytes")
    return out


def check_upload(data) -> tuple[dict, dict[str, memoryview], Any]:
    """Checks a key upload (a context bundle) *before* any key is loaded.

    Returns (meta, blobs, parameters). Raises ValueError naming what is wrong: not a bundle, a
    secret key inside (by name or by a Veil header of type "secret key" in any entry), an entry
    other than parameters/public_key/relin_keys/galois_keys, or unreadable parameters.
    """
    meta, blobs = _ser.unpack_bundle(data)
    if "secret_key" in blobs or any(
            len(b) >= 7 and bytes(b[:4]) == _VEIL_MAGIC and b[6] == _TYPE_SECRET_KEY
            for b in blobs.values()):
        raise ValueError("upload: contains a secret key; the server accepts evaluation keys only "
                         "(send ctx.to_bytes(), which leaves the secret key out)")
    extra = sorted(set(blobs) - set(_UPLOAD_BLOBS))
    if extra:
        raise ValueError(f"upload: unexpected entries {extra}; expected {list(_UPLOAD_BLOBS)}")
    if "parameters" not in blobs:
        raise ValueError("parameters: missing from the upload")
    params = _core.EncryptionParameters.from_bytes(bytes(blobs["parameters"]))
    return meta, blobs, params


# ---- models -----------------------------------------------------------------------------------
class ServedModel(abc.ABC):
    """What every served model provides. Subclasses set the class attributes and implement the
    abstract methods; everything else (spec, key checks, client contexts) is shared.

    Server side: :meth:`spec` (public), :meth:`evaluate` (public evaluation keys only).
    Client side: :meth:`encode`, :meth:`decode`, :meth:`reference` (the plaintext model: the
    oracle the encrypted results must equal) and :meth:`samples` (demo data).
    """

    #: Registry name (URL path segment) and a one-line description.
    name: str = ""
    description: str = ""
    #: Encryption parameters the client must use.
    scheme: str = "bfv"
    poly_modulus_degree: int = 8192
    plain_modulus: int = 0
    coeff_modulus: Sequence[int] | None = None  # None: SEAL's BFVDefault(N) chain
    mul_method: str = "hps"
    security: int = 128
    #: Keys evaluation needs: relinearization keys and Galois keys for these rotation steps.
    relin_keys: bool = True
    galois_steps: Sequence[int] = ()
    #: Most ciphertexts one request may carry.
    max_ciphertexts: int = 16

    # -- to implement --
    @abc.abstractmethod
    def evaluate(self, ctx: KeyedContext, cts: list) -> list:
        """Evaluates the model on the ciphertexts of one request with the session's context
        ``ctx`` (no secret key). Returns the result ciphertexts (their layout: ``spec()``)."""

    @abc.abstractmethod
    def layout(self) -> dict:
        """JSON-able description of the input packing and the output (the client's contract)."""

    @abc.abstractmethod
    def weights_digest(self) -> str:
        """A hash of the plaintext model (lets a client check that its reference is the same)."""

    @abc.abstractmethod
    def encode(self, features: np.ndarray, slot_count: int) -> list[np.ndarray]:
        """Client side: features of n samples -> slot vectors, one per ciphertext to send."""

    @abc.abstractmethod
    def decode(self, slot_vectors: list[np.ndarray], n_samples: int) -> np.ndarray:
        """Client side: decrypted result slot vectors -> the n outputs (int64)."""

    @abc.abstractmethod
    def reference(self, features: np.ndarray) -> np.ndarray:
        """The plaintext model's exact outputs (int64, shape (n,)): the encrypted results'
        oracle."""

    @abc.abstractmethod
    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        """Demo data: (features, labels) of the test samples."""

    def decisions(self, outputs: np.ndarray) -> np.ndarray:
        """Class decisions from outputs (default: output > 0)."""
        return (np.asarray(outputs) > 0).astype(np.int64)

    def __repr__(self) -> str:
        return (f"veil.serve.{type(self).__name__}(name={self.name!r}, scheme={self.scheme!r}, "
                f"N={self.poly_modulus_degree}, plain_modulus={self.plain_modulus})")

    # -- shared --
    def parameters(self) -> dict:
        """The encryption parameters as JSON-able values (the primes spelled out)."""
        primes = (list(self.coeff_modulus) if self.coeff_modulus is not None
                  else list(_core.CoeffModulus.bfv_default(self.poly_modulus_degree,
                                                            self.security)))
        return {
            "scheme": self.scheme,
            "poly_modulus_degree": int(self.poly_modulus_degree),
            "plain_modulus": int(self.plain_modulus),
            "coeff_modulus": [int(q) for q in primes],
            "special_primes": 1,
            "mul_method": self.mul_method,
            "security": self.security,
        }

    def parameter_hash(self) -> int:
        """The 64-bit parameter hash an uploaded key set must have."""
        h = getattr(self, "_parameter_hash", None)
        if h is None:
            p = self.parameters()
            params = build_params(p["scheme"], p["poly_modulus_degree"], p["coeff_modulus"],
                                  p["plain_modulus"], p["special_primes"], None,
                                  p["mul_method"] if p["scheme"] == "bfv" else None,
                                  p["security"])
            h = self._parameter_hash = int(params.parameter_hash)
        return h

    def spec(self) -> dict:
        """The public description ``GET /models`` serves."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters(),
            "parameter_hash": f"{self.parameter_hash():016x}",
            "keys": {"relin_keys": bool(self.relin_keys),
                     "galois_steps": [int(s) for s in self.galois_steps]},
            "max_ciphertexts": int(self.max_ciphertexts),
            "layout": self.layout(),
            "weights_digest": self.weights_digest(),
        }

    def check_keys(self, ctx: KeyedContext) -> None:
        """Raises ValueError naming what the session lacks for this model."""
        if ctx.context.parameter_hash != self.parameter_hash():
            raise ValueError(
                f"parameters: the session's keys have parameter hash "
                f"{ctx.context.parameter_hash:016x}, model {self.name!r} needs "
                f"{self.parameter_hash():016x} (GET /models lists its parameters)")
        if self.relin_keys and ctx.relin_keys is None:
            raise ValueError(f"relin_keys: model {self.name!r} needs relinearization keys")
        if self.galois_steps:
            have = set(ctx.galois_keys.galois_elts) if ctx.galois_keys is not None else set()
            missing = [s for s in self.galois_steps
                       if ctx.context.galois_elt_from_step(s) not in have]
            if missing:
                raise ValueError(f"galois_keys: model {self.name!r} needs Galois keys for "
                                 f"rotation steps {missing}")

    def client_context(self, device: str | None = "cpu", seed: int | None = None):
        """A client context (with a secret key) matching this model: :func:`context_from_spec`."""
        return context_from_spec(self.spec(), device=device, seed=seed)


def context_from_spec(spec: dict, device: str | None = "cpu", seed: int | None = None):
    """Generates a client key set for a model's public spec (``GET /models``): the parameters
    it lists, relinearization keys and Galois keys for its rotation steps.

    Raises:
        ValueError: the spec is malformed, or the parameters built here do not have the
            spec's parameter hash (client and server disagree on the parameters).
    """
    from ._integer import bfv, bgv

    try:
        p = spec["parameters"]
        keys = spec["keys"]
        make = {"bfv": bfv, "bgv": bgv}[p["scheme"]]
        kwargs = {"mul_method": p["mul_method"]} if p["scheme"] == "bfv" else {}
        ctx = make(poly_modulus_degree=p["poly_modulus_degree"], plain_modulus=p["plain_modulus"],
                   coeff_modulus=p["coeff_modulus"], special_primes=p["special_primes"],
                   security=p["security"], device=device, seed=seed,
                   relin_keys=bool(keys["relin_keys"]),
                   galois_steps=list(keys["galois_steps"]) or None, **kwargs)
        want = int(spec["parameter_hash"], 16)
    except (KeyError, TypeError) as e:
        raise ValueError(f"spec: malformed model description ({e!r})") from None
    if ctx.context.parameter_hash != want:
        raise ValueError(f"parameter_hash: built {ctx.context.parameter_hash:016x}, the server "
                         f"expects {want:016x}")
    return ctx


class LogisticRegressionModel(ServedModel):
    """The logistic regression of :mod:`veil.demo` (Breast Cancer Wisconsin, x and x^2, BFV),
    trained, quantized and evaluated by that module's functions.

    Input: standardized features (n, 30) float64; the client quantizes them (``x_q = round(x
    2^s_x)``, clipped) and packs 256 samples per ciphertext, 32 slots each. Output: slot 32 k
    of result c holds the exact integer score of sample 256 c + k (scale 2^(2 s_x + s_w));
    malignant when positive.
    """

    name = "logreg"
    description = ("tumour classification (Breast Cancer Wisconsin): logistic regression on "
                   "the 30 features and their squares, BFV, exact integer scores")

    def __init__(self, data=None) -> None:
        from . import demo

        self._demo = demo
        self.data = data if data is not None else demo.load_data()
        self.float_model = demo.train_model(self.data.x_train, self.data.y_train)
        self.qmodel = demo.quantize_model(self.float_model)
        self.poly_modulus_degree = demo.POLY_MODULUS_DEGREE
        self.plain_modulus = demo.choose_plain_modulus(self.qmodel.score_bound(),
                                                       self.poly_modulus_degree)
        self.galois_steps = demo.block_sum_steps()
        self._plain_lock = threading.Lock()
        self._plain: dict = {}

    def layout(self) -> dict:
        d = self._demo
        return {
            "kind": "veil.logreg/1",
            "features": d.N_FEATURES,
            "block": d.BLOCK,
            "samples_per_ciphertext": self.poly_modulus_degree // d.BLOCK,
            "feature_bits": self.qmodel.s_x,
            "clip": d.CLIP,
            "input": "sample k of a ciphertext in slots [32 k, 32 k + 30): round(clip(x) 2^s_x)",
            "output": "slot 32 k of result c: the integer score of sample 256 c + k, scale "
                      f"2^{2 * self.qmodel.s_x + self.qmodel.s_w}; malignant when > 0",
        }

    def weights_digest(self) -> str:
        q = self.qmodel
        h = hashlib.sha256()
        for part in (q.w, q.v, np.array([q.b, q.s_x, q.s_w, q.x_max], dtype=np.int64)):
            h.update(np.ascontiguousarray(part, dtype=np.int64).tobytes())
        return h.hexdigest()

    def _plaintexts(self, ctx: KeyedContext):
        """W, V and the bias encoded once per (context, device) and reused by every request."""
        key = (ctx.context.parameter_hash, ctx.device, id(ctx.context))
        with self._plain_lock:
            hit = self._plain.get(key)
            if hit is not None and hit[0]() is ctx.context:
                return hit[1]
            d, slots = self._demo, ctx.slot_count
            plains = (ctx.encode(d.tile_vector(self.qmodel.w, slots)),
                      ctx.encode(d.tile_vector(self.qmodel.v, slots)),
                      ctx.encode(d.bias_vector(self.qmodel.b, slots)))
            # Forget entries of contexts that are gone (a weak reference guards id reuse).
            self._plain = {k: v for k, v in self._plain.items() if v[0]() is not None}
            self._plain[key] = (weakref.ref(ctx.context), plains)
            return plains

    def evaluate(self, ctx: KeyedContext, cts: list) -> list:
        w, v, b = self._plaintexts(ctx)
        return self._demo.server_evaluate(ctx, cts, w, v, b)

    def encode(self, features: np.ndarray, slot_count: int) -> list[np.ndarray]:
        x = np.asarray(features, dtype=np.float64)
        if x.ndim != 2 or x.shape[1] != self._demo.N_FEATURES:
            raise ValueError(f"features: expected shape (n, {self._demo.N_FEATURES}), "
                             f"got {x.shape}")
        xq = self._demo.quantize_features(x, self.qmodel.s_x)
        return self._demo.pack_features(xq, slot_count)

    def decode(self, slot_vectors: list[np.ndarray], n_samples: int) -> np.ndarray:
        return self._demo.unpack_scores(slot_vectors, n_samples)

    def reference(self, features: np.ndarray) -> np.ndarray:
        return self.qmodel.scores(self._demo.quantize_features(features, self.qmodel.s_x))

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        return self.data.x_test, self.data.y_test


class XGBoostModel(ServedModel):
    """The gradient-boosted trees of :mod:`veil.demo_xgboost` (32 trees of depth 3, BFV),
    trained, quantized, compiled and evaluated by that module's functions (``prepare``,
    ``encode_inputs``, ``encode_plan``, ``evaluate`` on :class:`~veil.demo_xgboost.VeilOps`,
    ``decode_scores``).

    Input: standardized features (n, 30) float64; the client quantizes them on the public grid
    and sends each batch of 256 samples as 30 ciphertexts of unary levels. Output: one ciphertext
    per batch, whose first 256 slots hold the batch's exact integer scores (scale 2^leaf_bits);
    malignant when positive.
    """

    name = "xgboost"
    description = ("tumour classification (Breast Cancer Wisconsin): XGBoost trees on "
                   "unary-encoded features, BFV, exact integer scores")
    #: Batches of 256 samples one request may carry.
    max_batches = 4

    def __init__(self) -> None:
        from . import demo, demo_xgboost

        self._dx = demo_xgboost
        self.prep = demo_xgboost.prepare(reference=False)
        data = demo.load_data()
        self._samples = (data.x_test, data.y_test)
        lay = self.prep.layout
        self.poly_modulus_degree = lay.poly_modulus_degree
        self.plain_modulus = int(self.prep.plain_modulus)
        self.galois_steps = list(self.prep.plan.galois_steps)
        self.max_ciphertexts = self.max_batches * lay.n_inputs
        self._plain_lock = threading.Lock()
        self._plain: dict = {}

    def layout(self) -> dict:
        lay, g = self.prep.layout, self.prep.grid
        return {
            "kind": "veil.xgboost/1",
            "features": lay.n_features,
            "grid": {"lo": g.lo, "step": g.step, "levels": g.levels},
            "block": lay.block,
            "levels_per_ciphertext": lay.levels_per_ciphertext,
            "ciphertexts_per_batch": lay.n_inputs,
            "samples_per_batch": lay.block,
            "input": "per batch of 256 samples: ciphertext f * parts + q holds feature f's unary "
                     "levels [x_q >= q R + (c mod R)] in block column c of both rows, sample i "
                     "in slot i of each block (veil.demo_xgboost.encode_inputs)",
            "output": "one ciphertext per batch: slot i (< 256) holds sample i's integer score, "
                      f"scale 2^{self.prep.model.leaf_bits}; malignant when > 0",
        }

    def weights_digest(self) -> str:
        m, g = self.prep.model, self.prep.grid
        h = hashlib.sha256()
        for part in (m.feature, m.level, m.leaf,
                     np.array([m.bias, m.depth, m.levels, m.leaf_bits], dtype=np.int64),
                     np.array([g.lo, g.step], dtype=np.float64)):
            h.update(np.ascontiguousarray(part).tobytes())
        return h.hexdigest()

    def check_keys(self, ctx: KeyedContext) -> None:
        super().check_keys(ctx)
        have = set(ctx.galois_keys.galois_elts) if ctx.galois_keys is not None else set()
        if ctx.context.galois_elt_column not in have:
            raise ValueError(f"galois_keys: model {self.name!r} needs the column rotation key")

    def _ops(self, ctx: KeyedContext):
        """VeilOps on the session's context and the plan's plaintexts, encoded once per
        (context, device)."""
        ops = self._dx.VeilOps(ctx, "veil serve")
        key = (ctx.context.parameter_hash, ctx.device, id(ctx.context))
        with self._plain_lock:
            hit = self._plain.get(key)
            if hit is None or hit[0]() is not ctx.context:
                plains = self._dx.encode_plan(self.prep.plan, ops)
                self._plain = {k: v for k, v in self._plain.items() if v[0]() is not None}
                hit = self._plain[key] = (weakref.ref(ctx.context), plains)
        return ops, hit[1]

    def evaluate(self, ctx: KeyedContext, cts: list) -> list:
        per = self.prep.layout.n_inputs
        if len(cts) % per:
            raise ValueError(f"ciphertexts: expected a multiple of {per} (one batch of "
                             f"{self.prep.layout.block} samples is {per} ciphertexts), got "
                             f"{len(cts)}")
        ops, plains = self._ops(ctx)
        return [self._dx.evaluate(ops, self.prep.plan, plains, cts[i:i + per])
                for i in range(0, len(cts), per)]

    def encode(self, features: np.ndarray, slot_count: int) -> list[np.ndarray]:
        if slot_count != self.poly_modulus_degree:
            raise ValueError(f"slot_count: expected {self.poly_modulus_degree}, got {slot_count}")
        xq = self.prep.grid.quantize(features)
        return [v for batch in self._dx.encode_inputs(xq, self.prep.layout) for v in batch]

    def decode(self, slot_vectors: list[np.ndarray], n_samples: int) -> np.ndarray:
        return self._dx.decode_scores(slot_vectors, n_samples, self.prep.layout)

    def reference(self, features: np.ndarray) -> np.ndarray:
        return self.prep.model.scores(self.prep.grid.quantize(features))

    def samples(self) -> tuple[np.ndarray, np.ndarray]:
        return self._samples


#: Served models: name -> "module:callable" returning a :class:`ServedModel` (imported and
#: built when the server starts; by default a model that cannot be built is logged and skipped).
MODEL_FACTORIES: dict[str, str] = {
    "logreg": "veil.serve:LogisticRegressionModel",
    "xgboost": "veil.serve:XGBoostModel",
}


def register_model(name: str, factory: str | Callable[[], ServedModel]) -> None:
    """Adds (or replaces) a served model: ``factory`` is a callable or ``"module:callable"``."""
    if not name or "/" in name:
        raise ValueError(f"name: expected a non-empty name without '/', got {name!r}")
    MODEL_FACTORIES[name] = factory  # type: ignore[assignment]


def load_model(name: str) -> ServedModel:
    """Builds one registered model (trains it). Raises KeyError (unknown name), ImportError or
    AttributeError (its module or callable is missing)."""
    factory = MODEL_FACTORIES[name]
    if isinstance(factory, str):
        module, _, attr = factory.partition(":")
        factory = getattr(importlib.import_module(module), attr)
    model = factory()
    if not isinstance(model, ServedModel):
        raise TypeError(f"{name}: factory returned {type(model).__name__}, not a ServedModel")
    model.name = name
    return model


def load_models(names: Sequence[str] | None = None) -> dict[str, ServedModel]:
    """Builds the models named (default: every registered one that can be built; a named one
    that cannot raises). Unavailable defaults are logged at WARNING and skipped."""
    out: dict[str, ServedModel] = {}
    for name in (names if names is not None else list(MODEL_FACTORIES)):
        if names is None:
            try:
                out[name] = load_model(name)
            except Exception as e:  # noqa: BLE001 - an optional model must not stop the server
                log.warning("model %s unavailable: %s: %s", name, type(e).__name__, e)
        else:
            if name not in MODEL_FACTORIES:
                raise ValueError(f"models: unknown model {name!r}; registered: "
                                 f"{sorted(MODEL_FACTORIES)}")
            try:
                out[name] = load_model(name)
            except (ImportError, AttributeError) as e:
                raise ImportError(f"models: {name!r} is unavailable ({e})") from e
    return out


# ---- the service (framework-independent state) ------------------------------------------------
@dataclass
class ServeConfig:
    """Settings of :func:`create_app` (``veil serve``'s options)."""

    device: str | None = "auto"
    #: Largest evaluation request body (bytes) and key upload body (bytes).
    max_request_bytes: int = 64 * MiB
    max_upload_bytes: int = 256 * MiB
    #: A session expires this many seconds after its last use.
    session_ttl_s: float = 900.0
    #: Most live sessions; most requests waiting for the device.
    max_sessions: int = 32
    max_pending: int = 64
    #: Run one self-checked encrypted evaluation per model at startup (warms the device up).
    warmup: bool = False

    def __post_init__(self) -> None:
        for name in ("max_request_bytes", "max_upload_bytes", "max_sessions", "max_pending"):
            v = getattr(self, name)
            if not isinstance(v, int) or isinstance(v, bool) or v < 1:
                raise ValueError(f"{name}: expected a positive integer, got {v!r}")
        if not isinstance(self.session_ttl_s, (int, float)) or not self.session_ttl_s > 0:
            raise ValueError(f"session_ttl_s: expected a positive number, got "
                             f"{self.session_ttl_s!r}")


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
    created: float
    last_used: float
    busy: int = 0


@dataclass
class Service:
    """Sessions, models and the device worker behind the HTTP endpoints."""

    config: ServeConfig
    models: dict[str, ServedModel]
    device: str = ""
    sessions: dict[str, Session] = field(default_factory=dict)
    expired: OrderedDict = field(default_factory=OrderedDict)
    pending: int = 0
    clock: Callable[[], float] = time.monotonic

    def __post_init__(self) -> None:
        self.device = resolve_device(self.config.device)
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="veil-device")

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
        ksid = s.ctx.key_set_id
        # Release the keys on the device thread (device memory is freed where it is used).
        holder = [s]
        s = None
        self.executor.submit(_release, holder, ksid)

    def session(self, sid: str) -> Session:
        self.sweep()
        s = self.sessions.get(sid)
        if s is None:
            if sid in self.expired:
                raise HTTPError(410, "session: expired; open a new one (POST /sessions)")
            raise HTTPError(404, "session: unknown session id")
        return s

    def model(self, name: str) -> ServedModel:
        m = self.models.get(name)
        if m is None:
            raise HTTPError(404, f"model: unknown model {name!r}; served: {sorted(self.models)}")
        return m

    def check_upload(self, body: bytes) -> list[str]:
        """The models whose parameters the upload's match (checked by :func:`check_upload`
        before any key is loaded); 400 when it is refused or fits no model."""
        try:
            _meta, _blobs, params = check_upload(body)
        except (ValueError, TypeError) as e:
            raise HTTPError(400, str(e)) from None
        h = int(params.parameter_hash)
        fits = [n for n, m in self.models.items() if m.parameter_hash() == h]
        if not fits:
            raise HTTPError(400, f"parameters: hash {h:016x} matches no served model; "
                            "GET /models lists the parameters of each")
        return fits

    def load_session(self, body: bytes) -> KeyedContext:
        """Device thread: loads the uploaded keys (checked) onto the server's device."""
        ctx = KeyedContext.from_bytes(body, self.device, 4 * self.config.max_upload_bytes)
        if ctx.has_secret_key:  # check_upload refused it already; never keep one
            raise ValueError("upload: contains a secret key")
        ids = {k.key_set_id for k in (ctx.public_key, ctx.relin_keys, ctx.galois_keys)
               if k is not None}
        if len(ids) > 1:
            raise ValueError("upload: the keys belong to different key sets")
        return ctx

    def add_session(self, ctx: KeyedContext, fits: list[str], nbytes: int) -> Session:
        self.sweep()
        if len(self.sessions) >= self.config.max_sessions:
            raise HTTPError(503, f"sessions: {len(self.sessions)} live sessions (max_sessions); "
                            "delete one or retry after one expires")
        key_ids = [k.key_set_id for k in (ctx.relin_keys, ctx.galois_keys, ctx.public_key)
                   if k is not None]
        now = self.clock()
        sid = secrets.token_urlsafe(24)
        s = Session(sid, ctx, key_ids[0] if key_ids else 0, fits, nbytes, now, now)
        self.sessions[sid] = s
        return s

    # -- evaluation (device thread) --
    def evaluate_sync(self, session: Session, model: ServedModel, blobs: list[memoryview],
                      compression: str, queued_at: float) -> tuple[list[bytes], dict]:
        t0 = time.perf_counter()
        ctx = session.ctx
        cls = _CIPHERTEXT_CLASSES[ctx.scheme]
        limit = 4 * self.config.max_request_bytes
        top = ctx.max_level
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
        decrypted and compared with the plaintext model (warms the device up; raises on a
        mismatch)."""
        for name, m in self.models.items():
            ctx = m.client_context(device=self.device)
            x, _ = m.samples()
            x = x[:8]
            cts = [ctx.encrypt(v) for v in m.encode(x, ctx.slot_count)]
            out = m.evaluate(ctx.public(), cts)
            got = m.decode([ctx.decrypt(r) for r in out], len(x))
            if not np.array_equal(got, m.reference(x)):
                raise RuntimeError(f"self-test of model {name!r} on {self.device}: the encrypted "
                                   "result differs from the plaintext model")


def _release(holder: list, key_set_id: str) -> None:
    holder.clear()
    _ser.prune_key_set(key_set_id)


def _short(sid: str) -> str:
    """A session id shortened for logs."""
    return sid[:6] + "..."


# ---- the FastAPI application ----------------------------------------------------------------
def create_app(config: ServeConfig | None = None,
               models: dict[str, ServedModel] | None = None):
    """The FastAPI application (run it with uvicorn, or test it with FastAPI's TestClient).

    Args:
        config: limits, TTL and device (default :class:`ServeConfig`).
        models: the served models by name (default: :func:`load_models`, which trains them).

    Raises:
        ImportError: fastapi is not installed (``pip install 'veil[serve]'``).
        ValueError: no model can be served, or a bad setting.
        RuntimeError: the device is not available (e.g. ``cuda`` without a GPU).
    """
    from contextlib import asynccontextmanager

    from fastapi import FastAPI
    from fastapi.responses import JSONResponse, Response

    config = config or ServeConfig()
    models = load_models() if models is None else dict(models)
    if not models:
        raise ValueError("models: no model could be loaded (see the warnings above)")
    service = Service(config, models)
    if config.warmup:
        service.executor.submit(service.self_test).result()

    @asynccontextmanager
    async def lifespan(app):
        yield
        service.close()

    app = FastAPI(title="Veil encrypted inference", version=_core.__version__, lifespan=lifespan)
    app.state.service = service

    @app.exception_handler(HTTPError)
    async def _http_error(request: Request, exc: HTTPError):
        return JSONResponse({"detail": exc.detail}, status_code=exc.status)

    @app.exception_handler(Exception)
    async def _internal(request: Request, exc: Exception):
        log.error("internal error on %s %s:\n%s", request.method, request.url.path.split("/")[1],
                  "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        return JSONResponse({"detail": "internal error (see the server log)"}, status_code=500)

    async def read_body(request: Request, limit: int, what: str, option: str) -> bytes:
        """The body, refused with 413 as soon as it is known to exceed ``limit``."""
        too_big = f"{what}: larger than the limit of {limit} bytes ({option})"
        cl = request.headers.get("content-length")
        if cl is not None:
            if not cl.isdigit():
                raise HTTPError(400, "content-length: expected a decimal integer")
            if int(cl) > limit:
                raise HTTPError(413, too_big)
        buf = bytearray()
        async for chunk in request.stream():
            buf += chunk
            if len(buf) > limit:
                raise HTTPError(413, too_big)
        return bytes(buf)

    @app.get("/health")
    async def health():
        service.sweep()
        return {"status": "ok", "version": _core.__version__, "device": service.device,
                "models": sorted(service.models), "sessions": len(service.sessions),
                "pending": service.pending}

    @app.get("/models")
    async def list_models():
        return {"models": [m.spec() for m in service.models.values()]}

    @app.post("/sessions", status_code=201)
    async def open_session(request: Request):
        body = await read_body(request, config.max_upload_bytes, "key upload", "max_upload_bytes")
        fits = service.check_upload(body)
        service.sweep()
        if len(service.sessions) >= config.max_sessions:
            raise HTTPError(503, f"sessions: {len(service.sessions)} live sessions "
                            "(max_sessions); delete one or retry after one expires")
        try:
            ctx = await service.on_device(service.load_session, body)
        except (ValueError, TypeError) as e:  # the loaders name the object and field
            raise HTTPError(400, str(e)) from None
        s = service.add_session(ctx, fits, len(body))
        log.info("session %s opened: %d bytes of keys, models %s", _short(s.id), len(body), fits)
        return {"session_id": s.id, "models": fits, "ttl_s": config.session_ttl_s,
                "device": service.device, "upload_bytes": len(body)}

    @app.post("/sessions/{sid}/evaluate/{name}")
    async def evaluate(sid: str, name: str, request: Request, compression: str = "zstd"):
        model = service.model(name)
        service.session(sid)
        if compression not in ("zstd", "none"):
            raise HTTPError(400, f"compression: expected 'zstd' or 'none', got {compression!r}")
        body = await read_body(request, config.max_request_bytes, "request", "max_request_bytes")
        s = service.session(sid)
        if name not in s.models:
            raise HTTPError(400, f"parameters: this session's keys do not fit model {name!r} "
                            f"(they fit {s.models})")
        try:
            blobs = unpack_frame(body, model.max_ciphertexts)
            model.check_keys(s.ctx)
        except ValueError as e:
            raise HTTPError(400, str(e)) from None
        s.busy += 1
        try:
            out, times = await service.on_device(service.evaluate_sync, s, model, blobs,
                                                 compression, time.perf_counter())
        finally:
            s.busy -= 1
            s.last_used = service.clock()
        payload = pack_frame(out)
        log.info("evaluate %s session %s: %d -> %d ciphertexts, %d -> %d bytes, queue %.1f ms, "
                 "load %.1f ms, evaluate %.1f ms, save %.1f ms", name, _short(sid), len(blobs),
                 len(out), len(body), len(payload), *(1e3 * times[k] for k in
                                                      ("queue", "load", "evaluate", "save")))
        headers = {f"X-Veil-{k.capitalize()}-Ms": f"{1e3 * v:.3f}" for k, v in times.items()}
        return Response(payload, media_type="application/octet-stream", headers=headers)

    @app.delete("/sessions/{sid}", status_code=204)
    async def close_session(sid: str):
        service.session(sid)
        service._drop(sid)
        log.info("session %s closed", _short(sid))
        return Response(status_code=204)

    return app


# ---- running it ----------------------------------------------------------------------------
class BackgroundServer:
    """uvicorn serving ``app`` from a daemon thread (tests, ``veil loadtest`` without
    ``--server``). ``port=0`` picks a free port; :attr:`url` is known after :meth:`start`.

    Use as a context manager: ``with BackgroundServer(app) as url: ...``.
    """

    def __init__(self, app, host: str = "127.0.0.1", port: int = 0,
                 log_level: str = "warning") -> None:
        import uvicorn

        self.config = uvicorn.Config(app, host=host, port=port, log_level=log_level,
                                     access_log=False, lifespan="on")
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
             "upload %d MiB, %d sessions, TTL %g s)", _core.__version__, service.device,
             sorted(service.models), time.perf_counter() - t0, config.max_request_bytes // MiB,
             config.max_upload_bytes // MiB, config.max_sessions, config.session_ttl_s)
    uvicorn.run(app, host=host, port=port, log_level=log_level, access_log=False)
    return 0


__all__ = [
    "FRAME_MAGIC",
    "MODEL_FACTORIES",
    "BackgroundServer",
    "HTTPError",
    "LogisticRegressionModel",
    "ServeConfig",
    "ServedModel",
    "Service",
    "XGBoostModel",
    "check_upload",
    "context_from_spec",
    "create_app",
    "load_model",
    "load_models",
    "main",
    "pack_frame",
    "register_model",
    "unpack_frame",
]
