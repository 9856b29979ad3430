"""Energy per operation from NVML, for ``veil bench --energy``.

NVML comes from the ``nvidia-ml-py`` package (module ``pynvml``; in the ``bench`` extra). Without
it, without an NVIDIA driver or GPU, or on the CPU device, :func:`open_meter` raises
:class:`EnergyUnavailable` with a one-line reason and the benchmark times as usual.

Method
------
* **Energy counter** (preferred; Volta and newer): ``nvmlDeviceGetTotalEnergyConsumption``, the
  board's energy in millijoules since the driver loaded. It moves in steps (about every 100 ms on
  recent GPUs), so one operation is far too short to see: after the operation's median time
  ``t`` is known, the operation runs back-to-back ``reps = ceil(window / t)`` times (window 1 s
  by default, at least 2 reps) between two readings, with the device synchronized
  (``veil._core.synchronize``) before the first and after the last call. Both readings are
  aligned to a step of the counter: the loop starts right after the counter is seen to move, and
  the closing reading is the first one that moves after the loop; the idle ``tail`` between the
  loop's end and that step is charged at the idle power and taken off. So, with ``d`` the loop's
  wall time and ``E0``, ``E1`` the readings in joules::

      energy per op          = (E1 - E0 - P_idle * tail) / reps
      mean power             = (E1 - E0 - P_idle * tail) / d
      energy per op, > idle  = energy per op - P_idle * d / reps

  (a counter that does not move within 0.5 s is read without alignment and with ``tail = 0``).
* **Power samples** (fallback when the counter is not supported): a background thread reads
  ``nvmlDeviceGetPowerUsage`` (milliwatts) every 5 ms during the same loop; the main thread adds
  a reading at the loop's start and one after the closing synchronization, and the energy is the
  trapezoid rule over the timestamped samples (:func:`trapezoid_j`).
* **Idle power**, sampled before each parameter row's operations (device synchronized, 0.2 s to
  settle, then 0.5 s with no work: counter-aligned energy over the elapsed time, or the trapezoid
  of power samples over it). It is the power of the GPU doing nothing at the clocks the bench
  leaves it at, i.e. what a server pays anyway; the "above idle" figures are what the operation
  adds to that.

Reported per operation (µJ and W, see :func:`summarize`): ``energy_uj``,
``energy_above_idle_uj``, ``mean_w``, ``idle_w``, ``reps``, ``window_s`` (the loop's wall
time), ``loop_us`` (= window / reps: back-to-back time per op, which may be below the median
latency since launches overlap; the energy belongs to this loop) and ``method``
(``"counter"`` or ``"power"``).

Caveats: NVML measures the whole board (GPU and its memory, not the host or PCIe link) and every
process on it; the CUDA device ``cuda:k`` is mapped to NVML through ``CUDA_VISIBLE_DEVICES``
(indices or UUIDs) and otherwise by index, which can differ from CUDA's fastest-first order on a
machine with mixed GPUs (the bench notes a name mismatch). On A100/H100 the sensor behind both
readings sees only part of each 100 ms period (about 25 %, per "Part-time Power Measurements:
nvidia-smi's Lack of Attention", arXiv 2312.02741, SC24), so loops that are long against 100 ms
and steady, as here, are what it measures well; and NVML documents ``nvmlDeviceGetPowerUsage``
as a 1 s average on Ampere and newer (except GA100), which is why the counter is preferred.
There is no cool-down between operations: a warmer card leaks more, so later operations of a row
may read a few percent high (Al Badawi et al., TCHES 2018, ran each setting on a cool card for this
reason).
Ops that barely load the GPU can read slightly negative above idle (noise around zero).

What the papers say: Özcan et al. ("Homomorphic Encryption on GPU", IEEE Access 2023, Table 5)
reports *peak* power of BFV multiplication read off HWMonitor, idle included (GPU idle 17 W; at n =
2^14, 500 multiplications in 337 ms with a peak of 48.6 W), and no energy; peak power times time
bounds its energy from above: at most 48.6 W x 674 µs = 33 mJ per multiplication, 21 mJ above idle
(31.6 W). Al Badawi et al. (TCHES 2018, Fig. 4) plots power and utilization of homomorphic
multiplication on a P100 and a K80 (the K80 rises from 62 W to 148 W as n and q grow), with each
setting run on a cool card so that heat from one run stays out of the next; it gives no energy per
operation either, so neither paper has a figure that compares directly with these.
"""

from __future__ import annotations

import math
import os
import threading
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager, suppress
from typing import Any

#: Target wall time of one measured loop, seconds (the counter steps about every 100 ms).
WINDOW_S = 1.0
#: Fewest and most repetitions of one loop.
MIN_REPS = 2
MAX_REPS = 1_000_000
#: Idle sampling: settle first, then measure this long.
IDLE_SETTLE_S = 0.2
IDLE_S = 0.5
#: Counter alignment: poll every POLL_S, give up after TICK_TIMEOUT_S.
POLL_S = 0.001
TICK_TIMEOUT_S = 0.5
#: Power-sample period of the fallback.
SAMPLE_S = 0.005

INSTALL_HINT = "pip install nvidia-ml-py (or 'veil[bench]')"


class EnergyUnavailable(RuntimeError):
    """Energy cannot be measured here; ``str(e)`` is a one-line reason."""


class EnergyError(RuntimeError):
    """A reading failed during a measurement (NVML error, counter going backwards); the
    operation itself did not."""


def reps_for(median_us: float, window_s: float = WINDOW_S, min_reps: int = MIN_REPS,
             max_reps: int = MAX_REPS) -> int:
    """Repetitions that make a back-to-back loop last about ``window_s``: ceil(window / median),
    within [min_reps, max_reps] (max_reps when the median is not positive)."""
    if not median_us or median_us <= 0 or not math.isfinite(median_us):
        return max_reps
    n = math.ceil(window_s * 1e6 / median_us)
    return max(min_reps, min(max_reps, n))


def trapezoid_j(samples: Sequence[tuple[float, float]]) -> float:
    """Energy in joules of timestamped power samples ``[(seconds, watts), ...]`` (trapezoid rule;
    samples sorted by time; fewer than two give 0)."""
    pts = sorted(samples)
    return sum((t1 - t0) * (p0 + p1) / 2.0 for (t0, p0), (t1, p1) in zip(pts, pts[1:]))


def summarize(energy_j: float, loop_s: float, reps: int, idle_w: float | None,
              method: str) -> dict[str, Any]:
    """Per-operation figures of one loop of ``reps`` calls that took ``loop_s`` seconds and
    ``energy_j`` joules (tail already removed); above-idle = total - idle_w * loop_s / reps."""
    out: dict[str, Any] = {
        "energy_uj": 1e6 * energy_j / reps,
        "energy_above_idle_uj": None,
        "mean_w": energy_j / loop_s if loop_s > 0 else None,
        "idle_w": idle_w,
        "reps": reps,
        "window_s": loop_s,
        "loop_us": 1e6 * loop_s / reps,
        "method": method,
    }
    if idle_w is not None:
        out["energy_above_idle_uj"] = 1e6 * (energy_j - idle_w * loop_s) / reps
    return out


class _Window:
    """What one measured interval saw: raw energy (J), loop time and idle tail (s)."""

    energy_j: float = 0.0
    loop_s: float = 0.0
    tail_s: float = 0.0
    aligned: bool = False


class EnergyMeter:
    """Energy of a GPU through NVML: :meth:`idle_w`, :meth:`window`, :meth:`measure`.

    ``nvml`` is the ``pynvml`` module (or a stand-in with the same functions), ``handle`` the
    NVML device, ``sync`` waits until the device has finished its queued work. ``method`` is
    ``"counter"`` (energy counter) or ``"power"`` (sampled power).
    """

    def __init__(self, nvml: Any, handle: Any, sync: Callable[[], None], method: str,
                 name: str = "?", *, window_s: float = WINDOW_S,
                 clock: Callable[[], float] = time.perf_counter,
                 sleep: Callable[[float], None] = time.sleep) -> None:
        if method not in ("counter", "power"):
            raise ValueError(f"method: expected 'counter' or 'power', got {method!r}")
        self.nvml, self.handle, self.sync, self.method, self.name = nvml, handle, sync, method, name
        self.window_s = window_s
        self.clock, self.sleep = clock, sleep
        self._closed = False

    def __repr__(self) -> str:
        return (f"veil._energy.EnergyMeter(name={self.name!r}, method={self.method!r}, "
                f"window_s={self.window_s:g})")

    # -- readings -------------------------------------------------------------------------------
    def _read(self, what: str) -> float:
        try:
            return getattr(self.nvml, what)(self.handle) / 1000.0
        except getattr(self.nvml, "NVMLError", Exception) as e:
            raise EnergyError(f"{what}: {e}") from None

    def _energy_j(self) -> float:
        return self._read("nvmlDeviceGetTotalEnergyConsumption")

    def _power_w(self) -> float:
        return self._read("nvmlDeviceGetPowerUsage")

    def _next_step(self) -> tuple[float, float, bool]:
        """(energy J, time, True) at the first counter reading that differs from the current
        one; (the last reading, its time, False) when the counter does not move within
        TICK_TIMEOUT_S."""
        first = self._energy_j()
        start = self.clock()
        while True:
            e, now = self._energy_j(), self.clock()
            if e != first:
                return e, now, True
            if now - start >= TICK_TIMEOUT_S:
                return e, now, False
            self.sleep(POLL_S)

    # -- windows ----------------------------------------------------------------------------------
    @contextmanager
    def window(self, idle_w: float = 0.0) -> Iterator[_Window]:
        """Measures the energy of the ``with`` body (run the work inside it).

        Synchronizes the device before and after; counter: aligned to counter steps, the idle
        tail after the body charged at ``idle_w`` and removed; power: trapezoid of samples.
        ``w.energy_j`` and ``w.loop_s`` are set on exit.
        """
        w = _Window()
        self.sync()
        if self.method == "counter":
            e0, t0, ok0 = self._next_step()
            yield w
            self.sync()
            t_end = self.clock()
            e1, t1, ok1 = self._next_step()
            if not ok1:  # counter did not move: take the reading as it is
                t1 = t_end
            if e1 < e0:
                raise EnergyError(f"NVML energy counter went backwards ({e0} J -> {e1} J)")
            w.loop_s, w.tail_s, w.aligned = t_end - t0, max(t1 - t_end, 0.0), ok0 and ok1
            w.energy_j = (e1 - e0) - idle_w * w.tail_s
            return
        samples: list[tuple[float, float]] = [(self.clock(), self._power_w())]
        stop = threading.Event()
        errors: list[EnergyError] = []

        def sampler() -> None:
            while not stop.wait(SAMPLE_S):
                try:
                    p = self._power_w()
                except EnergyError as e:
                    errors.append(e)
                    return
                samples.append((self.clock(), p))

        th = threading.Thread(target=sampler, name="veil-power-sampler", daemon=True)
        th.start()
        try:
            yield w
            self.sync()
        finally:
            stop.set()
            th.join()
        if errors:
            raise errors[0]
        t_end = self.clock()
        samples.append((t_end, self._power_w()))
        w.loop_s = t_end - samples[0][0]
        w.energy_j = trapezoid_j(samples)

    def idle_w(self, duration_s: float | None = None, settle_s: float | None = None) -> float:
        """Mean power (W) of the synchronized, idle device over about ``duration_s`` (default
        IDLE_S) after ``settle_s`` (default IDLE_SETTLE_S)."""
        duration_s = IDLE_S if duration_s is None else duration_s
        settle_s = IDLE_SETTLE_S if settle_s is None else settle_s
        self.sync()
        if settle_s > 0:
            self.sleep(settle_s)
        with self.window(0.0) as w:
            self.sleep(duration_s)
        elapsed = w.loop_s + w.tail_s  # counter: the whole step-aligned interval is idle
        return w.energy_j / elapsed if elapsed > 0 else self._power_w()

    def measure(self, fn: Callable[[], Any], median_us: float, idle_w: float | None = None,
                window_s: float | None = None) -> dict[str, Any]:
        """Runs ``fn`` back-to-back for about ``window_s`` (default: the meter's; reps from
        ``median_us``) and returns :func:`summarize`'s per-operation figures."""
        reps = reps_for(median_us, self.window_s if window_s is None else window_s)
        with self.window(idle_w or 0.0) as w:
            for _ in range(reps):
                fn()
        return summarize(w.energy_j, w.loop_s, reps, idle_w, self.method)

    def close(self) -> None:
        if not self._closed:
            self._closed = True
            # shutting down a library that failed is harmless
            with suppress(Exception):
                self.nvml.nvmlShutdown()

    def __enter__(self) -> EnergyMeter:  # noqa: PYI034 - typing.Self needs Python 3.11
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _import_nvml() -> Any:
    try:
        import pynvml
    except ImportError:
        raise EnergyUnavailable(f"nvidia-ml-py is not installed ({INSTALL_HINT})") from None
    return pynvml


def _text(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


def _handle(nvml: Any, cuda_index: int, env: Mapping[str, str]) -> Any:
    """NVML handle of CUDA device ``cuda_index`` as CUDA_VISIBLE_DEVICES numbers it."""
    vis = env.get("CUDA_VISIBLE_DEVICES")
    if vis is not None:
        ids = [s.strip() for s in vis.split(",") if s.strip()]
        if cuda_index < len(ids):
            ident = ids[cuda_index]
            if ident.isdigit():
                return nvml.nvmlDeviceGetHandleByIndex(int(ident))
            return nvml.nvmlDeviceGetHandleByUUID(ident)
    return nvml.nvmlDeviceGetHandleByIndex(cuda_index)


def open_meter(device: str, nvml: Any = None, sync: Callable[[], None] | None = None,
               env: Mapping[str, str] | None = None, window_s: float = WINDOW_S) -> EnergyMeter:
    """An :class:`EnergyMeter` for ``device`` ('cuda' or 'cuda:k'); close it when done.

    Raises:
        EnergyUnavailable: the device is the CPU, nvidia-ml-py is missing, NVML cannot start (no
            driver), the device is unknown to NVML, or it reports neither energy nor power.
    """
    if not device.startswith("cuda"):
        raise EnergyUnavailable(f"the device is {device!r}; NVML measures NVIDIA GPUs only")
    index = int(device.split(":")[1]) if ":" in device else 0
    if nvml is None:
        nvml = _import_nvml()
    error = getattr(nvml, "NVMLError", Exception)
    try:
        nvml.nvmlInit()
    except error as e:
        raise EnergyUnavailable(f"NVML cannot start ({e}): no NVIDIA driver here?") from None
    try:
        handle = _handle(nvml, index, os.environ if env is None else env)
        try:
            name = _text(nvml.nvmlDeviceGetName(handle))
        except error:
            name = "?"
        try:
            nvml.nvmlDeviceGetTotalEnergyConsumption(handle)
            method = "counter"
        except error:
            try:
                nvml.nvmlDeviceGetPowerUsage(handle)
            except error as e:
                raise EnergyUnavailable(f"{name} ({device}) reports neither energy nor power "
                                        f"through NVML ({e})") from None
            method = "power"
    except EnergyUnavailable:
        nvml.nvmlShutdown()
        raise
    except error as e:
        nvml.nvmlShutdown()
        raise EnergyUnavailable(f"NVML has no device for {device} ({e})") from None
    if sync is None:
        from . import _core

        def sync() -> None:
            _core.synchronize(device)

    return EnergyMeter(nvml, handle, sync, method, name, window_s=window_s)


__all__ = [
    "INSTALL_HINT",
    "WINDOW_S",
    "EnergyError",
    "EnergyMeter",
    "EnergyUnavailable",
    "open_meter",
    "reps_for",
    "summarize",
    "trapezoid_j",
]
