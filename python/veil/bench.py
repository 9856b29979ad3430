"""``veil bench``: times Veil's BFV, BGV and CKKS operations beside SEAL (same run) and Phantom.

Method (docs: /work/shared/DESIGN.md, "Benchmark method"):

* Every operation is timed alone with :class:`veil.Timer` around the call (``start(); op;
  stop()``): CUDA events on a GPU, the steady clock on the CPU. The figure is the **median** in
  microseconds after warm-up runs (:mod:`veil._bench_ops`).
* GPU: 10 warm-up runs and 100 timed runs (``--runs``). CPU: one warm-up, then as many runs as fit
  in a per-operation time budget (at least 3, at most ``--runs`` or 100), so the total stays
  bounded even where one call takes seconds. ``--quick`` runs two small rows with few runs.
* Rows (:mod:`veil._bench_rows`): SEAL's defaults for N = 2^13..2^16 (BFV/BGV:
  ``CoeffModulus.bfv_default`` with t = 65537, or t = 786433 = 3 * 2^18 + 1 at N = 2^16 where 65537
  cannot batch; CKKS: 60 + k x 40 + 60 at scale 2^40) and Phantom's parameter grid for the scheme
  from the peers' data (13 BFV/BGV rows, 14 CKKS rows; primes from ``CoeffModulus.create`` with the
  row's bit sizes, the row's number of special primes P, alpha = |P|). Rows whose log2(QP)
  exceeds the HE-Standard 128-bit bound run with ``security=None`` and are marked "insecure".
* Backends: Veil's CPU backend single-threaded and with the default (all-core) thread count (up to
  ``--cpu-max-n``), Veil's GPU when present, and SEAL 4.x through seal-python, single-threaded on
  the same CPU, for rows it supports (N <= 2^15 with one special prime, within its 128-bit bound;
  SEAL picks its own primes of the same sizes).
* Ops: keygen (secret + public + relinearization keys), encode (includes the host-to-device copy
  on a GPU), decode, encrypt, decrypt (without decoding, as SEAL and Phantom count it), add,
  multiply_plain, multiply + relinearize (BFV: HPS and BEHZ in two contexts; SEAL's BFV is BEHZ),
  rescale (CKKS) / mod_switch_to_next (BGV), one rotation by 1 (rotate_vector / rotate_rows), and
  rotations by 1..8 both hoisted (one ``rotate_many``) and as 8 separate calls (BGV/CKKS).
* Every backend's results are checked once: BFV/BGV exactly against numpy mod t; CKKS against
  numpy float64 (mean precision >= 20 bits, worst slot >= 10 bits; :func:`_bench_ops.ckks_ok`).
* Energy (``--energy``, GPU backends only; :mod:`veil._energy` has the method): after each
  operation's timing it runs back-to-back for about 1 s (reps from its median) between two
  readings of NVML's energy counter (or integrated power samples where the counter is missing),
  and the idle power is sampled before each row; reported per op: µJ in total and above idle,
  the mean power in W. Without nvidia-ml-py, a driver or a GPU it is skipped with a note.

Output (:mod:`veil._bench_report`): a dict (and ``--json``) with all raw medians, device and CPU
names (py-cpuinfo), the commit (``--commit``, ``VEIL_GIT_COMMIT`` or HEAD read with dulwich) and
the date; the report as rich tables on the console and as markdown (``--markdown``), one row per
parameter set and backend, with Phantom's number for multiply (package data
``veil/data/peers.json``) and time ratios Veil / peer only between the same kind of device:
Veil's GPU vs Phantom on the same GPU model, Veil's CPU vs SEAL on the same CPU; PNG charts with
``--plot`` (:mod:`veil._bench_plot`). ``--from-json`` re-renders a saved result.
"""

from __future__ import annotations

import datetime
import functools
import json
import os
import platform
import re
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import _check, _core, _energy
from ._bench_report import (
    cheddar_table,
    energy_table,
    fmt_uj,
    fmt_us,
    main_table,
    markdown_table,
    print_report,
    ratio_table,
    to_markdown,
)
from ._bench_ops import (
    OPS_BY_SCHEME,
    Policy,
    bench_seal,
    bench_veil,
    policy_for,
    time_op,
)
from ._bench_rows import (
    PHANTOM,
    PHANTOM_BFV,
    PHANTOM_BGV,
    PHANTOM_CKKS,
    PLAIN_MODULUS,
    PLAIN_MODULUS_2_16,
    SCHEMES,
    Row,
    default_rows,
    load_peers,
    make_context,
    parse_bit_sizes,
    phantom_rows,
    plain_modulus_for,
    row_record,
    seal_supports,
    select_rows,
)
from ._device import device_info, resolve_device

#: BFV's operations in table order (values are column labels); see OPS_BY_SCHEME for all schemes.
OPS: dict[str, str] = OPS_BY_SCHEME["bfv"]


# ---- environment facts --------------------------------------------------------------------------
@functools.lru_cache(maxsize=1)
def cpu_model() -> str:
    """The CPU's model name, e.g. 'Intel(R) Xeon(R) Platinum 8480+'.

    From py-cpuinfo (``cpuinfo.get_cpu_info()["brand_raw"]``, which takes about a second, so
    the answer is cached), else ``platform.processor()``, else "unknown".
    """
    try:
        import cpuinfo

        name = cpuinfo.get_cpu_info().get("brand_raw")
    except Exception:  # noqa: BLE001 - missing package or an unsupported platform: fall back
        name = None
    return str(name or platform.processor() or "unknown")


#: A commit id as given to --commit or VEIL_GIT_COMMIT: 4 to 64 hexadecimal digits.
_COMMIT_RE = re.compile(r"[0-9a-fA-F]{4,64}")
#: What a report prints where the commit is unknown.
COMMIT_HINT = ("commit unknown: pass --commit SHA (or set VEIL_GIT_COMMIT), e.g. "
               "--commit $(git rev-parse HEAD) where the checkout has git metadata")


def check_commit(commit: Any, what: str = "commit") -> str:
    """``commit`` as a lower-case hex id; ValueError naming ``what`` unless it is 4 to 64 hex
    digits (an abbreviated or full SHA-1 or SHA-256 commit id)."""
    if not isinstance(commit, str) or not _COMMIT_RE.fullmatch(commit.strip()):
        raise ValueError(f"{what}: expected a commit id of 4 to 64 hexadecimal digits, got "
                         f"{commit!r}")
    return commit.strip().lower()


def _repo_head(start: str) -> str | None:
    """HEAD of the Veil checkout around ``start`` read with dulwich, or None.

    A repository counts only if it is Veil's (holds ``python/veil/bench.py``): an installed
    package may sit inside an unrelated repository (e.g. a pyenv checkout).
    """
    try:
        from dulwich.errors import NotGitRepository
        from dulwich.repo import Repo
    except ImportError:  # dulwich comes with the [bench] extra
        return None
    try:
        repo = Repo.discover(start)
    except (NotGitRepository, OSError):
        return None
    try:
        if not os.path.isfile(os.path.join(repo.path, "python", "veil", "bench.py")):
            return None
        return repo.head().decode("ascii")
    except (KeyError, OSError, ValueError):  # no commit yet, unreadable refs
        return None
    finally:
        repo.close()


def git_commit(commit: str | None = None, search: Sequence[str] | None = None) -> str | None:
    """The commit of the Veil checkout being measured, or None when it cannot be known.

    In order: ``commit`` (``veil bench --commit``), the ``VEIL_GIT_COMMIT`` environment
    variable (both checked by :func:`check_commit`), then HEAD of the Veil git repository around
    each folder of ``search`` (default: this module's folder, then the current directory) read
    with dulwich (a full 40-digit hex id). A copy of the tree without ``.git`` (the GPU machine's)
    has none: pass the commit in there.

    Raises:
        ValueError: ``commit`` or ``VEIL_GIT_COMMIT`` is not a hex commit id.
    """
    if commit is not None:
        return check_commit(commit, "commit")
    env = os.environ.get("VEIL_GIT_COMMIT", "").strip()
    if env:
        return check_commit(env, "VEIL_GIT_COMMIT")
    if search is None:
        search = (os.path.dirname(os.path.abspath(__file__)), os.getcwd())
    for start in search:
        head = _repo_head(start)
        if head:
            return head
    return None


def _seal_version() -> str | None:
    try:
        from importlib.metadata import version

        return version("seal-python")
    except Exception:  # noqa: BLE001 - any failure means "unknown"
        return None


# ---- the run ------------------------------------------------------------------------------------
@dataclass
class Backend:
    """One timed backend: ``kind`` is 'veil' or 'seal'; threads 0 = default."""

    kind: str
    device: str
    threads: int | None
    label: str


def plan_backends(device: str, threads: Sequence[int], seal: bool) -> list[Backend]:
    """Backends for ``--device``: auto = CPU configs + GPU when present; cpu; cuda[:k]."""
    out: list[Backend] = []
    want_cpu = device in ("auto", "cpu")
    gpu: str | None = None
    if device == "auto":
        default = resolve_device("auto")
        gpu = default if default.startswith("cuda") else None
    elif device.startswith("cuda"):
        gpu = resolve_device(device)
    elif device != "cpu":
        raise ValueError(f"device: expected auto, cpu, cuda or cuda:k, got {device!r}")
    if want_cpu:
        before, seen = _core.num_threads(), set()
        for n in threads:  # thread counts as the backend resolves them (0 = default), deduplicated
            _core.set_num_threads(int(n))
            eff = _core.num_threads()
            if eff not in seen:
                seen.add(eff)
                out.append(Backend("veil", "cpu", int(n), f"veil cpu {eff}t"))
        _core.set_num_threads(before)
    if gpu is not None:
        info = device_info()["gpus"]
        idx = int(gpu.split(":")[1])
        name = info[idx]["name"] if idx < len(info) else gpu
        out.append(Backend("veil", gpu, None, f"veil {gpu} ({name})"))
    if seal:
        out.append(Backend("seal", "cpu", 1, f"SEAL {_seal_version() or '?'} 1t"))
    return out


def run(
    scheme: str = "bfv",
    device: str = "auto",
    quick: bool = False,
    runs: int | None = None,
    json_path: str | None = None,
    markdown_path: str | None = None,
    seal: bool = True,
    threads: Sequence[int] | None = None,
    rows: str = "all",
    max_n: int | None = None,
    cpu_max_n: int | None = None,
    verbose: bool = True,
    energy: bool = False,
    energy_window_s: float = _energy.WINDOW_S,
    commit: str | None = None,
    plot_dir: str | None = None,
) -> dict[str, Any]:
    """Runs the benchmark and returns every number (see the module docstring for the method).

    Args:
        scheme: ``"bfv"``, ``"bgv"`` or ``"ckks"`` (ops: ``OPS_BY_SCHEME[scheme]``; rows:
            :func:`veil._bench_rows.select_rows`).
        device: ``"auto"`` (Veil CPU with each of ``threads``, plus the GPU when present),
            ``"cpu"``, or ``"cuda"``/``"cuda:k"`` (GPU only). SEAL runs unless ``seal`` is False.
        quick: two small rows, few runs. runs: timed runs per op (CPU: at most, under a budget).
        json_path, markdown_path: where to write the JSON record and the markdown tables.
        threads: CPU thread counts (0 = default; default ``[1, 0]``). rows: ``"default"``,
            ``"phantom"`` or ``"all"``. max_n: skip rows above this N. cpu_max_n: largest N on
            Veil's CPU backend (default 16384: its larger rows take minutes to hours today).
        energy: also measure energy per operation on the GPU backends through NVML
            (:mod:`veil._energy`; skipped with a note where it cannot be). energy_window_s: the
            length of each op's back-to-back loop, seconds.
        commit: the commit being measured (4 to 64 hex digits); default: VEIL_GIT_COMMIT or
            the checkout's HEAD read with dulwich (:func:`git_commit`), else None with a hint.
        plot_dir: also write PNG charts there (:func:`veil._bench_plot.write_plots`; needs
            matplotlib).
        verbose: print progress lines and the report (rich tables) on stdout.

    Returns:
        {"meta": {...}, "results": [{"row", "backend", "median_us", "runs", "correct", ...}],
        "notes": [...], "all_correct": bool, "markdown": str}. CKKS results also carry
        "precision_bits": {op: {"min_bits", "mean_bits"}}; with energy, GPU results carry
        "idle_w" and "energy": {op: {"energy_uj", "energy_above_idle_uj", "mean_w", "idle_w",
        "reps", "window_s", "loop_us", "method"}} and meta has "energy". With ``plot_dir``,
        "plots": [PNG paths].

    Raises:
        ValueError: unknown scheme, rows or device, threads/runs/max_n out of range, or a
            ``commit`` that is not a hex id.
        ImportError: ``plot_dir`` without matplotlib (raised before any timing).
        TypeError: threads/runs/max_n/cpu_max_n that are not integers.
    """
    if scheme not in SCHEMES:
        raise ValueError(f"scheme: expected one of {', '.join(SCHEMES)}, got {scheme!r}")
    runs = _check.optional_integer(runs, "runs", 1, 1_000_000)
    if threads is None:
        threads = [1, 0]
    elif _check.is_integer(threads) or isinstance(threads, (str, bytes)) or not hasattr(
            threads, "__iter__"):
        raise TypeError(f"threads: expected a list of thread counts, got {_check.show(threads)}")
    threads = [_check.integer(n, "threads", 0, 1024) for n in threads]
    max_n = _check.optional_integer(max_n, "max_n", 1)
    cpu_max_n = 16384 if cpu_max_n is None else _check.integer(cpu_max_n, "cpu_max_n", 1)
    commit = git_commit(commit)
    if plot_dir is not None:
        from ._bench_plot import require_matplotlib

        require_matplotlib()
    notes: list[str] = []
    if commit is None:
        notes.append(COMMIT_HINT + ".")
        if verbose:
            print(f"veil bench: {COMMIT_HINT}", file=sys.stderr, flush=True)
    if seal:
        try:
            import seal as _seal  # noqa: F401
        except ImportError:
            seal = False
            notes.append("SEAL not timed: seal-python is not installed (pip install seal-python).")
    backends = plan_backends(device, threads, seal)
    selected = select_rows(rows, quick, max_n, scheme)
    notes += _scheme_notes(scheme, selected, seal)
    if any(r.n > cpu_max_n for r in selected) and any(b.device == "cpu" for b in backends):
        notes.append(f"Veil's CPU backend timed for N <= {cpu_max_n} only (--cpu-max-n).")
    meters = _open_meters(backends, notes, verbose, energy_window_s) if energy else {}

    results: list[dict[str, Any]] = []
    t_start = time.perf_counter()
    load_start = _load_avg()
    threads_before = _core.num_threads()
    try:
        for row in selected:
            for be in backends:
                if be.kind == "veil" and be.device == "cpu" and row.n > cpu_max_n:
                    continue
                if be.kind == "seal" and not seal_supports(row):
                    continue
                pol = policy_for(be.device, quick, runs)
                t0 = time.perf_counter()
                rec: dict[str, Any] = {"row": row_record(row), "backend": be.label,
                                       "kind": be.kind, "device": be.device}
                try:
                    if be.kind == "seal":
                        rec.update(bench_seal(row, pol))
                    else:
                        if be.threads is not None:
                            _core.set_num_threads(be.threads)
                        rec["threads"] = _core.num_threads() if be.device == "cpu" else None
                        rec.update(bench_veil(row, be.device, pol, meters.get(be.device)))
                except (ValueError, RuntimeError, MemoryError, TypeError) as e:  # keep going
                    rec["error"] = f"{type(e).__name__}: {e}"
                finally:
                    _core.set_num_threads(threads_before)
                rec["wall_s"] = time.perf_counter() - t0
                results.append(rec)
                if verbose:
                    print(_progress_line(rec), flush=True)
    finally:
        _core.set_num_threads(threads_before)
        for m in meters.values():
            m.close()

    info = device_info()
    meta = {
        "scheme": scheme,
        "date": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "git_commit": commit,
        "veil_version": info["version"],
        "cuda_built": info["cuda_built"],
        "gpus": info["gpus"],
        "cpu_model": cpu_model(),
        "cpu_threads_default": info["cpu_threads"],
        "seal_version": _seal_version() if seal else None,
        "python": platform.python_version(),
        "quick": quick,
        "device_arg": device,
        "units": "microseconds (median)",
        "wall_s": time.perf_counter() - t_start,
        "load_avg_1min": {"start": load_start, "end": _load_avg()},
        "phantom_source": f"veil/data/peers.json, Phantom {scheme.upper()} (H100 / H200, µs): "
                          f"{load_peers()['phantom']['source']}; "
                          f"{load_peers()['phantom']['measured_on']}",
    }
    if energy:
        meta["energy"] = {
            "measured": sorted(meters),
            "nvml_devices": {d: m.name for d, m in meters.items()},
            "methods": {d: m.method for d, m in meters.items()},
            "window_s": energy_window_s,
            "units": "energy_uj: microjoules per operation; mean_w, idle_w: watts",
        }
    busy = max(x for x in (load_start, meta["load_avg_1min"]["end"], 0.0) if x is not None)
    if busy > (os.cpu_count() or 1) and any(r["device"] == "cpu" for r in results):
        notes.append(f"CPU was busy (1-min load average up to {busy:.1f} on {os.cpu_count()} "
                     "cores): CPU timings, multi-threaded ones most, are unreliable.")
    out: dict[str, Any] = {"meta": meta, "results": results, "notes": notes}
    out["all_correct"] = all(
        "error" not in r and all(r.get("correct", {}).values()) for r in results
    )
    out["markdown"] = to_markdown(out)
    if verbose:
        print_report(out)
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump({k: v for k, v in out.items() if k != "markdown"}, f, indent=1)
    if markdown_path:
        with open(markdown_path, "w", encoding="utf-8") as f:
            f.write(out["markdown"])
    if plot_dir is not None:
        from ._bench_plot import write_plots

        out["plots"] = write_plots(out, plot_dir)
        if verbose:
            print("\n".join(f"veil bench: wrote {p}" for p in out["plots"]), flush=True)
    return out


def load_result(path: str) -> dict[str, Any]:
    """A result written by ``veil bench --json`` (this or an earlier version), with its
    markdown re-rendered under the current rules.

    Raises:
        OSError: the file cannot be read. ValueError: it is not JSON or not a benchmark
        result (names the file and what is missing).
    """
    with open(path, encoding="utf-8") as f:
        try:
            data = json.load(f)
        except json.JSONDecodeError as e:
            raise ValueError(f"{path}: not JSON ({e})") from None
    if not isinstance(data, dict) or not isinstance(data.get("meta"), dict) or not isinstance(
            data.get("results"), list):
        raise ValueError(f"{path}: expected a veil bench --json result with 'meta' and "
                         "'results'")
    if data["meta"].get("scheme") not in SCHEMES:
        raise ValueError(f"{path}: meta.scheme: expected one of {', '.join(SCHEMES)}, got "
                         f"{data['meta'].get('scheme')!r}")
    for i, r in enumerate(data["results"]):
        if not isinstance(r, dict) or not {"row", "backend", "kind"} <= set(r) or (
                "error" not in r and "median_us" not in r):
            raise ValueError(f"{path}: results[{i}]: expected row, backend, kind and median_us")
        r.setdefault("device", "cuda" if "cuda" in str(r["backend"]) else "cpu")
    data.setdefault("notes", [])
    data["markdown"] = to_markdown(data)
    return data


def _open_meters(backends: Sequence[Backend], notes: list[str], verbose: bool,
                 window_s: float) -> dict[str, Any]:
    """{GPU device: open EnergyMeter}; where none can be opened, a note (printed at once)."""
    meters: dict[str, Any] = {}
    reasons = []
    gpus = sorted({b.device for b in backends if b.kind == "veil" and b.device != "cpu"})
    if not gpus:
        reasons.append("no GPU backend in this run (the device is the CPU; NVML measures "
                       "NVIDIA GPUs only)")
    for dev in gpus:
        try:
            meters[dev] = _energy.open_meter(dev, window_s=window_s)
        except _energy.EnergyUnavailable as e:
            reasons.append(f"{dev}: {e}")
            continue
        info = device_info()["gpus"]
        idx = int(dev.split(":")[1])
        cuda_name = info[idx].get("name") if idx < len(info) else None
        if cuda_name and meters[dev].name not in ("?", cuda_name):
            notes.append(f"Energy: NVML's device for {dev} is {meters[dev].name}, CUDA's is "
                         f"{cuda_name}: check CUDA_VISIBLE_DEVICES / CUDA_DEVICE_ORDER.")
    for reason in reasons:
        line = f"Energy not measured: {reason}; timing runs as usual."
        notes.append(line)
        if verbose:
            print(f"veil bench: {line}", file=sys.stderr, flush=True)
    if meters and any(b.device == "cpu" for b in backends):
        notes.append("Energy is measured on the GPU backend only.")
    return meters


def _load_avg() -> float | None:
    """1-minute load average (None where the OS has none)."""
    try:
        return round(os.getloadavg()[0], 2)
    except (OSError, AttributeError):
        return None


def _scheme_notes(scheme: str, rows: Sequence[Row], seal: bool) -> list[str]:
    """What a reader of this scheme's tables must know."""
    notes = []
    if scheme != "ckks" and any(r.n >= 65536 for r in rows):
        notes.append("N = 65536 uses t = 786433 (65537 is not = 1 mod 2N there: no batching).")
    if any(not r.secure() for r in rows):
        notes.append("Rows marked insecure exceed the HE-Standard 128-bit bound on log2(QP) and "
                     "run with security=None (as Phantom's grid has them).")
    if scheme == "ckks":
        notes.append("CKKS: values uniform in [-1, 1] at scale 2^40; a result counts as correct "
                     "with mean precision >= 20 bits and worst slot >= 10 bits (key switching "
                     "leaves a few slots near 2^-20 at N = 2^13, worse at larger N, in SEAL too).")
    if scheme != "bfv":
        notes.append("hoisted 8 rot = one rotate_many by steps 1..8; 8 × rotate = the same eight "
                     "rotations as separate calls (a Galois key per step).")
    if seal:
        notes.append("SEAL uses its own primes of the same bit sizes (CoeffModulus.Create), one "
                     "special prime, and has no hoisted rotation.")
        if scheme == "bfv":
            notes.append("SEAL multiplies with BEHZ: its multiply+relinearize is in the BEHZ "
                         "column.")
    return notes


def _progress_line(rec: dict[str, Any]) -> str:
    status = rec.get("error") or (
        "ok" if all(rec.get("correct", {}).values()) else
        "WRONG: " + ", ".join(k for k, v in rec["correct"].items() if not v)
    )
    return f"{rec['row']['name']} | {rec['backend']} | {rec['wall_s']:.1f} s | {status}"


__all__ = [
    "COMMIT_HINT",
    "OPS",
    "OPS_BY_SCHEME",
    "PHANTOM",
    "PHANTOM_BFV",
    "PHANTOM_BGV",
    "PHANTOM_CKKS",
    "PLAIN_MODULUS",
    "PLAIN_MODULUS_2_16",
    "Backend",
    "Policy",
    "Row",
    "bench_seal",
    "bench_veil",
    "cheddar_table",
    "check_commit",
    "cpu_model",
    "default_rows",
    "energy_table",
    "fmt_uj",
    "fmt_us",
    "git_commit",
    "load_peers",
    "load_result",
    "main_table",
    "make_context",
    "markdown_table",
    "parse_bit_sizes",
    "phantom_rows",
    "plain_modulus_for",
    "plan_backends",
    "policy_for",
    "print_report",
    "ratio_table",
    "run",
    "seal_supports",
    "select_rows",
    "time_op",
    "to_markdown",
]
