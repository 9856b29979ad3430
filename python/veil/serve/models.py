"""Served models: what ``veil serve`` evaluates, and the public spec each one states.

A :class:`ServedModel` states the encryption parameters, scheme options and keys a client must
use (``GET /models``), owns the server's :class:`veil.Context` for those parameters, and
evaluates requests with a session's public evaluation keys. Material it caches between requests
(encoded plaintexts, evaluation plans) is derived only from the server's own context and options
and keyed by all of them (:meth:`ServedModel.material`), so no client can change what another
client's request computes.
"""

from __future__ import annotations

import abc
import dataclasses
import hashlib
import importlib
import json
import logging
import threading
import weakref
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from .. import _core
from .._base import KeyedContext, build_params, switching_key_words

log = logging.getLogger("veil.serve")

def _config_spec(config) -> dict:
    """A BootstrapConfig as the spec's dict; pack_sparse only when set (clients that predate it
    build their config from every key)."""
    d = dataclasses.asdict(config)
    if not d.get("pack_sparse"):
        d.pop("pack_sparse", None)
    return d


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
    #: Keys evaluation needs: relinearization keys, Galois keys for these rotation steps and
    #: (``columns``) the column rotation; a model with rotation steps gets the column rotation
    #: key too, as :func:`context_from_spec` makes it.
    relin_keys: bool = True
    galois_steps: Sequence[int] = ()
    columns: bool = False
    #: CKKS: the bootstrapping configuration (a veil.BootstrapConfig) when the model refreshes
    #: ciphertexts on the server, which then needs the client's bootstrapping keys.
    bootstrapping: Any = None
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

    def decode_check(self, got: np.ndarray, want: np.ndarray) -> bool:
        """Whether decoded outputs match the plaintext model (default: exactly)."""
        return bool(np.array_equal(got, want))

    def self_test_inputs(self) -> np.ndarray:
        """The inputs of the server's startup self-test (default: 8 demo samples)."""
        return self.samples()[0][:8]

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

    def options(self) -> dict:
        """The scheme options a client's bundle must carry, exactly (its ``options`` field).
        The server evaluates with these, never with the client's."""
        return {"encoding": "batch"}

    def encryption_parameters(self) -> _core.EncryptionParameters:
        """:meth:`parameters` as ``EncryptionParameters`` (checked by :func:`build_params`)."""
        p = self.parameters()
        return build_params(p["scheme"], p["poly_modulus_degree"], p["coeff_modulus"],
                            p.get("plain_modulus"), p["special_primes"], p.get("alpha"),
                            p["mul_method"] if p["scheme"] == "bfv" else None, p["security"],
                            rescale_groups=p.get("rescale_groups"))

    def upload_entries(self) -> tuple[str, ...]:
        """The bundle entries an upload for this model may hold: the parameters and evaluation
        keys, and a bootstrapping model's bootstrapping keys and configuration."""
        from .._bootstrap import BUNDLE_BLOBS

        base = ("parameters", "public_key", "relin_keys", "galois_keys")
        return base + tuple(BUNDLE_BLOBS) if self.bootstrapping is not None else base

    def bootstrap_parameters(self) -> _core.BootstrapParameters:
        """The server's own bootstrapping parameters (level layout, Galois elements) for this
        model's context and :attr:`bootstrapping` config, built once. Raises ValueError if the
        model does not bootstrap."""
        if self.bootstrapping is None:
            raise ValueError(f"bootstrapping: model {self.name!r} does not bootstrap")
        params = self.__dict__.get("_bootstrap_parameters")
        if params is None:
            params = self.__dict__["_bootstrap_parameters"] = _core.BootstrapParameters(
                self.context(), self.bootstrapping.to_core(), float(self.options()["scale"]))
        return params

    def input_level(self) -> int:
        """The level of the fresh ciphertexts a request carries: the top of the chain, or on a
        bootstrapping model the top of the levels the user owns (the bootstrapper's output
        level)."""
        if self.bootstrapping is not None:
            return int(self.bootstrap_parameters().output_level)
        return int(self.context().max_level)

    def parameter_hash(self) -> int:
        """The 64-bit parameter hash an uploaded key set must have."""
        h = getattr(self, "_parameter_hash", None)
        if h is None:
            h = self._parameter_hash = int(self.encryption_parameters().parameter_hash)
        return h

    def context(self) -> _core.Context:
        """The server's own Context for this model's parameters and security level, built once.
        Sessions load their keys against it: nothing of the client's upload beyond the keys
        themselves (checked by the loaders) reaches the evaluation."""
        lock = self.__dict__.setdefault("_context_lock", threading.Lock())
        with lock:
            ctx = self.__dict__.get("_context")
            if ctx is None:
                ctx = self.__dict__["_context"] = _core.Context(self.encryption_parameters(),
                                                                self.security)
            return ctx

    def galois_elts(self) -> set[int]:
        """The Galois elements evaluation uses: those of :attr:`galois_steps` and the column
        rotation (the set :func:`context_from_spec` creates)."""
        c = self.context()
        elts = {int(c.galois_elt_from_step(s)) for s in self.galois_steps if s}
        if self.galois_steps or self.columns:
            elts.add(int(c.galois_elt_column))
        return elts

    def describe_elts(self, elts) -> str:
        """Galois elements in the user's words: rotation steps and the column rotation."""
        c = self.context()
        steps = [int(s) for s in self.galois_steps if s and c.galois_elt_from_step(s) in elts]
        parts = [f"rotation steps {steps}"] if steps else []
        if c.galois_elt_column in elts:
            parts.append("the column rotation")
        rest = sorted(set(elts) - {c.galois_elt_from_step(s) for s in steps}
                      - {c.galois_elt_column})
        if rest:
            parts.append(f"Galois elements {rest}")
        return " and ".join(parts)

    def key_bytes(self) -> int:
        """Bytes of the key set this model needs, as :class:`veil.serve.upload.KeyBlob` counts
        them (64-bit words, uniform halves included): public key 2 x (L+1+K) x N words, and
        per key-switching key dnum x 2 x (L+1+K) x N (dnum = ceil((L+1)/alpha), Han-Ki 2020)."""
        c = self.context()
        limbs = c.max_level + 1 + c.special_primes
        keys = len(self.galois_elts()) + (1 if self.relin_keys else 0)
        if self.bootstrapping is not None:  # its Galois keys and two switching keys (bound)
            keys += len(self.bootstrap_parameters().galois_elements) + 2
        return 8 * (2 * limbs * c.poly_modulus_degree + keys * switching_key_words(c))

    def material(self, ctx: KeyedContext, what: str, build: Callable[[], Any]) -> Any:
        """``build()``'s result, cached per (what, context, device, scheme options).

        ``ctx`` is a session context the service assembled on :meth:`context` with
        :meth:`options`; the key still names everything the material depends on, and a weak
        reference guards against a reused ``id``.
        """
        key = (what, id(ctx.context), ctx.device, json.dumps(ctx._options(), sort_keys=True))
        lock = self.__dict__.setdefault("_material_lock", threading.Lock())
        with lock:
            cache = self.__dict__.setdefault("_material", {})
            hit = cache.get(key)
            if hit is not None and hit[0]() is ctx.context:
                return hit[1]
        value = build()
        with lock:
            live = {k: v for k, v in cache.items() if v[0]() is not None}
            live[key] = (weakref.ref(ctx.context), value)
            self.__dict__["_material"] = live
        return value

    def __getstate__(self) -> dict:
        """Pickled without the cached material and its lock (rebuilt where it is unpickled:
        a Ray worker, say)."""
        return {k: v for k, v in self.__dict__.items()
                if k not in ("_material", "_material_lock")}

    def spec(self) -> dict:
        """The public description ``GET /models`` serves."""
        return {
            "name": self.name,
            "description": self.description,
            "parameters": self.parameters(),
            "parameter_hash": f"{self.parameter_hash():016x}",
            "options": self.options(),
            "keys": {"relin_keys": bool(self.relin_keys),
                     "galois_steps": [int(s) for s in self.galois_steps],
                     "columns": bool(self.galois_steps or self.columns),
                     "key_bytes": self.key_bytes()},
            "bootstrapping": (None if self.bootstrapping is None
                              else _config_spec(self.bootstrapping)),
            "input_level": self.input_level(),
            "max_ciphertexts": int(self.max_ciphertexts),
            "layout": self.layout(),
            "weights_digest": self.weights_digest(),
        }

    def check_keys(self, ctx: KeyedContext) -> None:
        """Raises ValueError naming what the session lacks for this model."""
        from .upload import missing_keys

        if ctx.context.parameter_hash != self.parameter_hash():
            raise ValueError(
                f"parameters: the session's keys have parameter hash "
                f"{ctx.context.parameter_hash:016x}, model {self.name!r} needs "
                f"{self.parameter_hash():016x} (GET /models lists its parameters)")
        present = [n for n in ("public_key", "relin_keys", "galois_keys")
                   if getattr(ctx, n) is not None]
        if getattr(ctx, "bootstrapper", None) is not None:
            from .._bootstrap import BUNDLE_BLOBS

            present += list(BUNDLE_BLOBS)
        have = set(ctx.galois_keys.galois_elts) if ctx.galois_keys is not None else set()
        missing = missing_keys(present, have, self)
        if missing:
            raise ValueError(missing)

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
    from .._bootstrap import BootstrapConfig
    from .._ckks import ckks
    from .._integer import bfv, bgv

    try:
        p = spec["parameters"]
        keys = spec["keys"]
        common = {"poly_modulus_degree": p["poly_modulus_degree"],
                  "coeff_modulus": p["coeff_modulus"], "special_primes": p["special_primes"],
                  "security": p["security"], "device": device, "seed": seed,
                  "relin_keys": bool(keys["relin_keys"]),
                  "galois_steps": list(keys["galois_steps"]) or None}
        if p["scheme"] == "ckks":
            boot = spec.get("bootstrapping")
            opts = spec["options"]
            ctx = ckks(**common, alpha=p.get("alpha"), rescale_groups=p.get("rescale_groups"),
                       scale=opts["scale"], auto_rescale=opts["auto_rescale"],
                       bootstrapping=BootstrapConfig(**boot) if boot else False)
        else:
            make = {"bfv": bfv, "bgv": bgv}[p["scheme"]]
            kwargs = {"mul_method": p["mul_method"]} if p["scheme"] == "bfv" else {}
            ctx = make(**common, plain_modulus=p["plain_modulus"], **kwargs)
        if keys.get("columns") and not keys["galois_steps"]:
            ctx.create_galois_keys([], columns=True)
        want = int(spec["parameter_hash"], 16)
    except (KeyError, TypeError) as e:
        raise ValueError(f"spec: malformed model description ({e!r})") from None
    if ctx.context.parameter_hash != want:
        raise ValueError(f"parameter_hash: built {ctx.context.parameter_hash:016x}, the server "
                         f"expects {want:016x}")
    return ctx


class LogisticRegressionModel(ServedModel):
    """The logistic regression of :mod:`veil.apps.demo` (Breast Cancer Wisconsin, x and x^2, BFV),
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
        from ..apps import demo

        self._demo = demo
        self.data = data if data is not None else demo.load_data()
        self.float_model = demo.train_model(self.data.x_train, self.data.y_train)
        self.qmodel = demo.quantize_model(self.float_model)
        self.poly_modulus_degree = demo.POLY_MODULUS_DEGREE
        self.plain_modulus = demo.choose_plain_modulus(self.qmodel.score_bound(),
                                                       self.poly_modulus_degree)
        self.galois_steps = demo.block_sum_steps()

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
        """W, V and the bias, encoded once per server context and reused by every request."""
        d = self._demo

        def build():
            slots = ctx.slot_count
            return (ctx.encode(d.tile_vector(self.qmodel.w, slots)),
                    ctx.encode(d.tile_vector(self.qmodel.v, slots)),
                    ctx.encode(d.bias_vector(self.qmodel.b, slots)))

        return self.material(ctx, "weights", build)

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
    """The gradient-boosted trees of :mod:`veil.apps.demo_xgboost` (32 trees of depth 3, BFV),
    trained, quantized, compiled and evaluated by that module's functions (``prepare``,
    ``encode_inputs``, ``encode_plan``, ``evaluate`` on :class:`~veil.apps.demo_xgboost.VeilOps`,
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
        from ..apps import demo, demo_xgboost

        self._dx = demo_xgboost
        self.prep = demo_xgboost.prepare(reference=False)
        data = demo.load_data()
        self._samples = (data.x_test, data.y_test)
        lay = self.prep.layout
        self.poly_modulus_degree = lay.poly_modulus_degree
        self.plain_modulus = int(self.prep.plain_modulus)
        self.galois_steps = list(self.prep.plan.galois_steps)
        self.max_ciphertexts = self.max_batches * lay.n_inputs
        self.columns = True  # the trees' sums swap the two rows

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
                     "in slot i of each block (veil.apps.demo_xgboost.encode_inputs)",
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

    def _ops(self, ctx: KeyedContext):
        """VeilOps on the session's context and the plan's plaintexts, encoded once per server
        context."""
        ops = self._dx.VeilOps(ctx, "veil serve")
        return ops, self.material(ctx, "plan", lambda: self._dx.encode_plan(self.prep.plan, ops))

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
    "logreg": "veil.serve.models:LogisticRegressionModel",
    "xgboost": "veil.serve.models:XGBoostModel",
    "logreg-train": "veil.serve.train_model:LogisticTrainingModel",
    "cnn": "veil.serve.cnn_model:CNNModel",
}
#: The models ``veil serve`` builds when none are named (``--models`` adds the others: the
#: training model needs 12 GiB of the client's bootstrapping keys per session at N = 2^16; the
#: CNN's training and startup self-test would add seconds to every start for a demo model).
DEFAULT_MODELS: tuple[str, ...] = ("logreg", "xgboost")


_BUILT_IN = frozenset(MODEL_FACTORIES)


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
    """Builds the models named (default: :data:`DEFAULT_MODELS` that can be built, and models
    registered at run time; a named one that cannot raises). Unavailable defaults are logged at
    WARNING and skipped."""
    out: dict[str, ServedModel] = {}
    defaults = [n for n in MODEL_FACTORIES if n in DEFAULT_MODELS or n not in _BUILT_IN]
    for name in (names if names is not None else defaults):
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


