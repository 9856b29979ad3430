"""Batches of encrypted work spread over many GPUs and hosts, on Ray (``pip install 'veil[ray]'``).

A :class:`WorkerPool` starts one Ray actor per GPU (``num_gpus=1``), or per group of CPU cores
on machines without one. Each actor loads the client's *public* evaluation material once
(``ctx.public().to_bytes()``: public, relinearization, Galois and bootstrapping keys, never the
secret key), from Ray's object store, and then evaluates items sent to it. The driver hands items
out dynamically (at most ``max_in_flight`` per actor, so a fast GPU takes more), and the results
come back in input order.

Faults: the actors are restartable (``max_restarts``) and their calls retried
(``max_task_retries``), so an item whose worker process dies is run again on the restarted actor,
which Ray may place on another node; an item whose actor is gone for good is handed to a live
one. Every item's result is taken once, from the one call that finished, so nothing is lost or
duplicated (the work is a pure function of the item and the keys).

Example::

    ctx = veil.ckks(poly_modulus_degree=1 << 16, bootstrapping=True)
    cts = [ctx.encrypt(x) for x in batches]
    with veil.distributed.WorkerPool(ctx) as pool:     # one actor per GPU of the Ray cluster
        fresh = pool.bootstrap(cts)                     # in input order
        scores = pool.map(lambda c, ct: (ct * ct).sum(), fresh)

``ray.init()`` is called (a local cluster, or ``address``) when Ray is not initialised yet. No
scheduler, queue or RPC of Veil's own: placement, transport, retries and restarts are Ray's.
"""

from __future__ import annotations

import os
import pickle
import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

import numpy as np

from ._base import CiphertextBase as _CiphertextBase
from ._base import KeyedContext

if TYPE_CHECKING:
    from ._ckks import CKKSContext


def _ray():
    try:
        import ray
    except ImportError as e:  # pragma: no cover - the message is the point
        raise ImportError("veil.distributed needs Ray: pip install 'veil[ray]'") from e
    return ray


def _bootstrap(ctx: KeyedContext, ct):
    ckks: CKKSContext = ctx  # type: ignore[assignment]  # WorkerPool.bootstrap checked it
    return ckks.bootstrap(ct)


def retain_freed_memory() -> bool:
    """Makes glibc keep freed blocks of up to 32 MiB in the process for reuse (mallopt:
    M_MMAP_THRESHOLD 32 MiB, M_TRIM_THRESHOLD 4 GiB) instead of unmapping them, so the
    megabyte buffers of every (de)serialized ciphertext are not page-faulted in again each time.
    Measured on the 4x H200 host (bench/pickle_cost.py, 24 MB ciphertext): saving 43 -> 16 ms,
    a 24 MB copy 29 -> 5 ms, ray.put 49 -> 25 ms. Process-wide and permanent; a no-op (False)
    where the C library has no mallopt."""
    try:
        import ctypes

        libc = ctypes.CDLL(None)
        m_trim_threshold, m_mmap_threshold = -1, -3
        return bool(libc.mallopt(m_mmap_threshold, 32 << 20)) and \
            bool(libc.mallopt(m_trim_threshold, 4 << 30))
    except (OSError, AttributeError):
        return False


def _pack(obj) -> tuple[bytes, list]:
    """``obj`` pickled with protocol 5 into a small stream and its out-of-band buffers (numpy
    views of a ciphertext's saved bytes): what a worker returns. Ray deserializes every object
    of a process under one lock (``function_actor_manager.lock``), so a result that unpickles
    into a context inside ``ray.get`` (milliseconds per megabyte) made the driver's fetch threads
    take turns; a packed result leaves ``ray.get`` as views into the object store, and
    :func:`_unpack` then loads it on the fetch thread, outside that lock (the loader releases
    the GIL)."""
    from ray import cloudpickle  # what Ray pickles results with: functions and local classes too

    buffers: list = []
    stream = cloudpickle.dumps(obj, protocol=5, buffer_callback=buffers.append)
    return stream, [np.frombuffer(b.raw(), dtype=np.uint8) for b in buffers]


def _unpack(packed: tuple[bytes, list]):
    stream, buffers = packed
    return pickle.loads(stream, buffers=buffers)


def _to_host(obj, memo: dict | None = None) -> tuple[Any, bool]:
    """``(copy, complete)``: ``obj`` with each ciphertext in it (also inside lists, tuples and
    dicts, exactly those types) copied to the host (``ct.to("cpu")``), and whether nothing else
    in it can hold device memory (numbers, strings, bytes, numeric numpy arrays, None). Pickling
    the copy then reads no device memory, so a worker can pickle it while another call of the
    same actor uses the device. An object met twice is copied once (``memo``, as pickle's).
    Anything else (subclasses, namedtuples, other objects) is left as it is and makes the
    result incomplete: the worker pickles that under its device lock. (Unpickled on the driver,
    a ciphertext goes to the driver's context's device.)"""
    memo = {} if memo is None else memo
    if id(obj) in memo:
        return memo[id(obj)]
    if isinstance(obj, _CiphertextBase):
        out: tuple[Any, bool] = (obj if obj.device == "cpu" else obj.to("cpu")), True
    elif type(obj) in (list, tuple):
        memo[id(obj)] = (obj, False)  # a container that holds itself stays as it is
        parts = [_to_host(x, memo) for x in obj]
        items = [c for c, _ in parts]
        out = (items if type(obj) is list else tuple(items)), all(ok for _, ok in parts)
    elif type(obj) is dict:
        memo[id(obj)] = (obj, False)
        kv = {k: _to_host(v, memo) for k, v in obj.items()}
        out = {k: c for k, (c, _) in kv.items()}, all(ok for _, ok in kv.values())
    else:
        plain = obj is None or type(obj) in (bool, int, float, complex, str, bytes) or (
            isinstance(obj, (np.ndarray, np.generic)) and not obj.dtype.hasobject)
        out = obj, plain
    memo[id(obj)] = out
    return out


class _Evaluate:
    """``model.evaluate(ctx, cts)`` for one item (a ciphertext or a list of them); picklable."""

    def __init__(self, model) -> None:
        self.model = model

    def __call__(self, ctx: KeyedContext, item):
        one = not isinstance(item, (list, tuple))
        out = self.model.evaluate(ctx, [item] if one else list(item))
        return out[0] if one and len(out) == 1 else out


class _Worker:
    """The Ray actor: the session's public context, loaded once; ``run`` evaluates one item.

    The actor runs ``concurrency`` calls at once (a threaded Ray actor), but only one of them
    uses the device at a time (a lock): it loads its item onto the device, runs fn and copies
    the result back to the host. Outside the lock a call pickles its result and Ray stores it in
    the object store (and fetches the next call's argument), so that host work overlaps the
    next item's device work instead of following it. Nothing touches the device outside the
    lock: while one call captures a CUDA graph (a bootstrapper's first call), a copy queued on
    the device's stream by another thread would be captured into it instead of running."""

    def __init__(self, material: list, device: str) -> None:
        ray = _ray()
        from ._device import resolve_device
        from ._serialize import usable_device

        t0 = time.perf_counter()
        retain_freed_memory()
        # A numpy view into the object store (no copy out of it): loaded where it lies.
        data = ray.get(material[0])
        t1 = time.perf_counter()
        self.device = resolve_device(usable_device(device) if device != "auto" else device)
        self.ctx = KeyedContext.from_bytes(memoryview(data), self.device)
        del data
        #: Seconds this worker's start took: fetching the material, loading it.
        self.setup = {"get": t1 - t0, "load": time.perf_counter() - t1}
        self.calls = 0
        self._device_lock = threading.Lock()
        self._fn: tuple[str, Callable] | None = None  # (ObjectRef hex, fn): the last map's

    def where(self) -> dict:
        ray = _ray()
        return {"node_id": ray.get_runtime_context().get_node_id(), "host": socket.gethostname(),
                "pid": os.getpid(), "device": self.device,
                "gpu_ids": [str(g) for g in ray.get_gpu_ids()], "setup": self.setup}

    def _function(self, fn_ref: list) -> Callable:
        """The map's function, unpickled once per map (under the device lock: it may hold
        device objects, such as a served model's encoded weights, which then stay loaded for
        the map's items and are freed under the lock when the next map replaces it)."""
        ray = _ray()
        key = fn_ref[0].hex()
        if self._fn is None or self._fn[0] != key:
            self._fn = None
            self._fn = (key, _unpack(ray.get(fn_ref[0])))
        return self._fn[1]

    def run(self, fn_ref: list, packed: tuple[bytes, list]):
        """``(seconds, _pack(fn(ctx, _unpack(packed))))`` for the packed function in
        ``fn_ref[0]`` (an ObjectRef in a list, so that Ray passes the reference), called with
        ``num_returns=2``: the driver learns that an item finished (or why it failed) from the
        small first value without touching the result, which a fetch thread takes and unpacks.
        ``seconds``: a dict of where the call's time went (``lock``: waiting for the device,
        ``device``: loading the item, fn and the copy to the host, ``pack``: pickling the
        result). Every object that may hold device memory is made, used and freed under the
        lock: an exception of fn leaves it with its frames cleared."""
        from . import _core

        t0 = time.perf_counter()
        with self._device_lock:
            t1 = time.perf_counter()
            self.calls += 1
            try:
                result = self._function(fn_ref)(self.ctx, _unpack(packed))
                _core.synchronize(self.ctx.device)
                result, complete = _to_host(result)
                out = None if complete else _pack(result)  # unknown objects: pickled here
                if out is not None:
                    result = None  # its device objects freed under the lock
            except BaseException as e:
                # The traceback keeps its frames' locals (device objects) alive after the lock:
                # clear fn's frames here (this one is still running, so drop its result).
                result = None
                traceback.clear_frames(e.__traceback__)
                raise
            t2 = time.perf_counter()
        if out is None:
            out = _pack(result)
        return {"lock": t1 - t0, "device": t2 - t1, "pack": time.perf_counter() - t2}, out


class _Dispatch:
    """One :meth:`WorkerPool.map`: hands items to the actors (at most ``max_in_flight`` each),
    re-queues the items of actors that died, and collects the results in input order.

    Items go into the object store, and results come out of it, on helper threads: each is a
    (de)serialization of megabytes (a GIL-free copy into or out of a context), which on the
    driver's one thread bounded the whole pool (bench/RESULTS.md). An actor's call
    returns two objects: a small "finished" flag, which the loop waits on and which carries the
    item's error (its actor's death, or fn's exception), and the result, fetched on a thread.
    """

    def __init__(self, pool: WorkerPool, fn: Callable, items: list) -> None:
        self.ray = _ray()
        self.items, self.max_in_flight = items, pool.max_in_flight
        # The function travels packed, once per map: a worker unpickles it under its device
        # lock (it may hold device objects) and keeps it for the map's items.
        self.fn_ref = [self.ray.put(_pack(fn))]
        self.todo = list(range(len(items)))[::-1]  # popped from the end: input order
        self.live = list(pool.actors)
        self.load = {id(a): 0 for a in self.live}
        # "finished" ObjectRef -> (item index, actor, ObjectRef of the result)
        self.running: dict[Any, tuple[int, Any, Any]] = {}
        self.tries: dict[int, int] = {}  # item -> times its actor was unavailable
        self.puts: dict[int, Future] = {}
        self.fetched: dict[int, Future] = {}
        self.ahead = pool.max_in_flight * max(1, len(self.live)) * 2
        self.threads = ThreadPoolExecutor(max_workers=pool.fetch_threads,
                                          thread_name_prefix="veil-fetch")
        self.retried = 0
        # Seconds spent where (WorkerPool.last_stats): the driver's loop waiting for workers,
        # for items still being put, submitting calls; the fetch and put threads' work (summed
        # over threads); the workers' time waiting for their device, on it (fn, with loading
        # the item and copying the result to the host) and pickling (summed over workers).
        self.stats = dict.fromkeys(("wait", "put_wait", "submit", "fetch", "put", "worker_lock",
                                    "worker_device", "worker_pack"), 0.0)

    def _timed(self, key: str, fn: Callable, *args, **kwargs):
        t0 = time.perf_counter()
        try:
            return fn(*args, **kwargs)
        finally:
            self.stats[key] += time.perf_counter() - t0

    def _put(self, i: int) -> Future:
        if i not in self.puts:
            self.puts[i] = self.threads.submit(self._timed, "put", self._put_packed, i)
        return self.puts[i]

    def _put_packed(self, i: int):
        # Packed here (pickled into a stream and buffers), unpickled by the worker under its
        # device lock: Ray's own argument unpickling would load a ciphertext onto the device
        # outside it.
        return self.ray.put(_pack(self.items[i]))

    def _feed(self) -> None:
        for actor in self.live:
            while self.todo and self.load[id(actor)] < self.max_in_flight:
                i = self.todo.pop()
                ref = self._timed("put_wait", self._put(i).result)
                ok, value = self._timed("submit", actor.run.options(num_returns=2).remote,
                                        self.fn_ref, ref)
                self.running[ok] = (i, actor, value)
                self.load[id(actor)] += 1
        for i in self.todo[-self.ahead:]:  # the next items, serialized while the workers run
            self._put(i)

    def _finished(self, ref) -> None:
        from ray.exceptions import RayActorError

        # ActorUnavailableError (Ray >= 2.9) is a RayActorError that does not mean death.
        unavailable = getattr(self.ray.exceptions, "ActorUnavailableError", ())
        i, actor, value = self.running.pop(ref)
        self.load[id(actor)] -= 1
        try:
            for key, seconds in self.ray.get(ref).items():
                self.stats["worker_" + key] += seconds
        except RayActorError as e:
            if isinstance(e, unavailable) and self.tries.get(i, 0) < 5:
                # Unreachable for a moment (a restart, a loaded node), not dead: the item goes
                # back to the queue and the actor stays (bounded: 5 times an item).
                self.tries[i] = self.tries.get(i, 0) + 1
            else:
                # Ray already retried on the restarted actor (max_task_retries); this actor is
                # gone for good: another one takes the item.
                if actor in self.live:
                    self.live.remove(actor)
                if not self.live:
                    raise RuntimeError("workers: every worker died; no result for item "
                                       f"{i}") from None
                self.retried += 1
            self.todo.append(i)
            return
        self.puts.pop(i)  # the input leaves the object store once no call needs it
        self.fetched[i] = self.threads.submit(self._timed, "fetch",
                                              lambda: _unpack(self.ray.get(value)))

    def results(self) -> list:
        try:
            t0 = time.perf_counter()
            self._feed()
            while self.running:
                done, _ = self._timed("wait", self.ray.wait, list(self.running), num_returns=1)
                self._finished(done[0])
                self._feed()
            out = [self._timed("wait", self.fetched[i].result) for i in range(len(self.items))]
            self.stats["wall"] = time.perf_counter() - t0
            return out
        finally:
            self.threads.shutdown(wait=True, cancel_futures=True)


class WorkerPool:
    """Ray actors, one per GPU (or per ``num_cpus`` cores), each holding ``ctx``'s public
    material once; :meth:`map` runs a function over ciphertexts on them.

    Args:
        ctx: the context whose *public* material the workers load (``ctx.public()``; the secret
            key never leaves the driver). Results unpickle into ``ctx`` (or the driver's live
            context of the same key set), so the client can decrypt them.
        workers: number of actors. Default: the cluster's GPUs, else its CPUs // ``num_cpus``.
        device: the workers' device: ``"auto"`` (their GPU when Ray gave them one, else the CPU),
            ``"cuda"`` or ``"cpu"``.
        num_gpus, num_cpus, resources: each actor's Ray resources. Default: one GPU when the
            cluster has GPUs (and 1 CPU), else ``num_cpus`` = 1.
        max_in_flight: most items queued on one actor at a time (2 keeps a GPU busy while the
            next item travels).
        concurrency: calls an actor runs at once (Ray's ``max_concurrency``): one uses the
            device while the others move their items and results in and out of the object
            store (see ``_Worker``); 1 runs the calls one after another.
        fetch_threads: the driver's threads that put items into Ray's object store and take
            results out of it (deserializing them into ``ctx``); default min(8, CPU cores).
        retain_memory: call :func:`retain_freed_memory` in the driver too (the workers always
            do): its (de)serialization buffers are then reused instead of faulted in again.
        max_restarts, max_task_retries: Ray's actor fault tolerance (-1: unlimited).
        address: a Ray cluster to join when Ray is not initialised yet (``ray.init(address)``);
            None starts a local one.
        spread: place the actors on as many nodes as possible (Ray's SPREAD strategy).

    Raises:
        ImportError: Ray is not installed.
        ValueError: a bad ``workers``, ``max_in_flight``, ``concurrency``, ``fetch_threads`` or
            ``device``; a cluster without the resources asked for.
    """

    def __init__(self, ctx: KeyedContext, workers: int | None = None, *, device: str = "auto",
                 num_gpus: float | None = None, num_cpus: float | None = None,
                 resources: dict | None = None, max_in_flight: int = 2,
                 concurrency: int = 2, fetch_threads: int | None = None, retain_memory: bool = True,
                 max_restarts: int = -1,
                 max_task_retries: int = -1, address: str | None = None,
                 spread: bool = True) -> None:
        ray = _ray()
        if not isinstance(ctx, KeyedContext):
            raise ValueError(f"ctx: expected a veil context, got {type(ctx).__name__}")
        if device not in ("auto", "cpu", "cuda") and not str(device).startswith("cuda:"):
            raise ValueError(f"device: expected 'auto', 'cpu' or 'cuda', got {device!r}")
        if not isinstance(max_in_flight, int) or max_in_flight < 1:
            raise ValueError(f"max_in_flight: expected a positive integer, got {max_in_flight!r}")
        if not isinstance(concurrency, int) or isinstance(concurrency, bool) or concurrency < 1:
            raise ValueError(f"concurrency: expected a positive integer, got {concurrency!r}")
        if fetch_threads is None:
            fetch_threads = min(8, os.cpu_count() or 1)
        if not isinstance(fetch_threads, int) or isinstance(fetch_threads, bool) \
                or fetch_threads < 1:
            raise ValueError(f"fetch_threads: expected a positive integer, got {fetch_threads!r}")
        if not ray.is_initialized():
            ray.init(address=address, log_to_driver=False)
        total = ray.cluster_resources()
        gpus = int(total.get("GPU", 0))
        if num_gpus is None:
            num_gpus = 1 if gpus and device != "cpu" else 0
        if num_cpus is None:
            num_cpus = 1
        if workers is None:
            workers = (int(gpus // num_gpus) if num_gpus else
                       max(1, int(total.get("CPU", 1) // max(num_cpus, 1e-9))))
        if not isinstance(workers, int) or isinstance(workers, bool) or workers < 1:
            raise ValueError(f"workers: expected a positive integer, got {workers!r}")
        if num_gpus and workers * num_gpus > gpus:
            raise ValueError(f"workers: {workers} workers x {num_gpus} GPU need more than the "
                             f"cluster's {gpus} GPUs")
        self.ctx = ctx
        self.max_in_flight = max_in_flight
        self.fetch_threads = fetch_threads
        if retain_memory:
            retain_freed_memory()
        t0 = time.perf_counter()
        # Uncompressed: zstd barely shrinks uniformly random key residues (seeding halves them).
        material = ctx.public().to_bytes(compression="none")
        t1 = time.perf_counter()
        # As a numpy array, which Ray stores and hands to the workers without pickling it: each
        # worker reads it in place in the object store instead of copying gigabytes out.
        self._material = ray.put(np.frombuffer(material, dtype=np.uint8))
        del material
        t2 = time.perf_counter()
        opts: dict[str, Any] = {"num_gpus": num_gpus, "num_cpus": num_cpus,
                                "max_concurrency": concurrency,
                                "max_restarts": max_restarts,
                                "max_task_retries": max_task_retries}
        if resources:
            opts["resources"] = dict(resources)
        if spread:
            opts["scheduling_strategy"] = "SPREAD"
        cls = ray.remote(**opts)(_Worker)
        dev = ("cuda" if num_gpus else "cpu") if device == "auto" else device
        self.actors = [cls.remote([self._material], dev) for _ in range(workers)]
        #: Where the pool's start went, in seconds: saving the public material ("save"), putting
        #: it into the object store ("put"), and the workers' start until each answered
        #: ("workers", set by the first :meth:`workers` call; it gives each one's fetch and
        #: load).
        self.setup_stats: dict[str, float] = {"save": t1 - t0, "put": t2 - t1}
        self._started = time.perf_counter()
        self.retried = 0  # items handed to another actor after theirs died for good
        #: Where the last map's time went, in seconds: wall; the driver's loop waiting for
        #: workers and results ("wait"), for items still being put ("put_wait"), submitting
        #: ("submit"); the threads' fetching and putting ("fetch", "put": summed over threads);
        #: the workers' waiting for their device, their device work (loading each item, fn,
        #: copying the result to the host) and pickling ("worker_lock", "worker_device",
        #: "worker_pack": summed over workers). For tuning; not a stable format.
        self.last_stats: dict[str, float] = {}

    # -- information --
    def workers(self) -> list[dict]:
        """Each actor's node id, host, process id, device, Ray GPU ids and start ("setup":
        seconds fetching and loading the material)."""
        ray = _ray()
        out = ray.get([a.where.remote() for a in self.actors])
        self.setup_stats.setdefault("workers", time.perf_counter() - self._started)
        return out

    # -- work --
    def map(self, fn: Callable[[KeyedContext, Any], Any], items: Iterable) -> list:
        """``[fn(worker_ctx, item) for item in items]`` spread over the workers, in input order.

        Args:
            fn: a picklable function of (the worker's public context, one item); its result
                travels back pickled (ciphertexts do: they unpickle into the driver's context).
            items: ciphertexts, lists of them, or anything picklable.

        Returns:
            the results, ``len(items)`` of them, in the order of ``items``.

        Raises:
            RuntimeError: every worker died for good (after Ray's restarts).
            Any exception ``fn`` raised on a worker (re-raised by Ray).
        """
        run = _Dispatch(self, fn, list(items))
        try:
            return run.results()
        finally:
            self.retried += run.retried
            self.last_stats = {"items": len(run.items), **run.stats}

    def evaluate(self, model, items: Sequence) -> list:
        """A served model (:class:`veil.serve.ServedModel`) on each item (a ciphertext, or the
        list of ciphertexts of one request), in input order."""
        return self.map(_Evaluate(model), items)

    def bootstrap(self, ciphertexts: Sequence) -> list:
        """``ctx.bootstrap(ct)`` for each CKKS ciphertext, in input order (the context must
        carry bootstrapping keys: ``veil.ckks(..., bootstrapping=True)``)."""
        if getattr(self.ctx, "bootstrapper", None) is None:
            raise ValueError("ctx: no bootstrapping keys (make it with bootstrapping=True)")
        return self.map(_bootstrap, ciphertexts)

    def close(self) -> None:
        """Ends the actors (the pool cannot be used afterwards)."""
        ray = _ray()
        for a in self.actors:
            ray.kill(a)
        self.actors = []

    def __enter__(self) -> WorkerPool:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"veil.distributed.WorkerPool({len(self.actors)} workers)"


def map_evaluate(model, ctx: KeyedContext, items: Sequence, workers: int | None = None,
                 **pool_args) -> list:
    """``model.evaluate`` on each item over a temporary :class:`WorkerPool` (in input order).
    ``pool_args`` go to :class:`WorkerPool`."""
    with WorkerPool(ctx, workers, **pool_args) as pool:
        return pool.evaluate(model, items)


def bootstrap_many(ctx: KeyedContext, ciphertexts: Sequence, workers: int | None = None,
                   **pool_args) -> list:
    """Bootstraps each ciphertext over a temporary :class:`WorkerPool` (in input order)."""
    with WorkerPool(ctx, workers, **pool_args) as pool:
        return pool.bootstrap(ciphertexts)


__all__ = ["WorkerPool", "bootstrap_many", "map_evaluate", "retain_freed_memory"]
