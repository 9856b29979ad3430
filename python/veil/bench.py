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
  from ANCHORS.md (13 BFV/BGV rows, 14 CKKS rows; primes from ``CoeffModulus.create`` with the
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

Output: a dict (and ``--json``) with all raw medians, device and CPU names, the git commit and
the date; markdown tables (``--markdown``) with one row per parameter set and backend, Phantom's
H100 number for multiply and the time ratio Veil / peer (Phantom on the same GPU model, SEAL on
the CPU).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import subprocess
import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from . import _check, _core, _energy
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
    PHANTOM_HEADLINE,
    PHANTOM_TO_VEIL,
    PLAIN_MODULUS,
    PLAIN_MODULUS_2_16,
    SCHEMES,
    Row,
    default_rows,
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
def cpu_model() -> str:
    """CPU model name from /proc/cpuinfo, else platform.processor()."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def git_commit() -> str | None:
    """Short commit of the Veil checkout being measured, or None.

    ``VEIL_GIT_COMMIT`` wins; otherwise the git work tree around this module or the current
    directory counts only if it is Veil's (holds ``python/veil/bench.py``): an installed package
    may sit inside an unrelated repository (e.g. a pyenv checkout).
    """
    if os.environ.get("VEIL_GIT_COMMIT"):
        return os.environ["VEIL_GIT_COMMIT"]
    here = os.path.dirname(os.path.abspath(__file__))
    for cwd in (here, os.getcwd()):
        try:
            top = subprocess.run(["git", "rev-parse", "--show-toplevel"], cwd=cwd,
                                 capture_output=True, text=True, timeout=5, check=False)
            if top.returncode or not os.path.isfile(
                os.path.join(top.stdout.strip(), "python", "veil", "bench.py")
            ):
                continue
            out = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=cwd,
                                 capture_output=True, text=True, timeout=5, check=False)
        except (OSError, subprocess.SubprocessError):
            continue
        if out.returncode == 0 and out.stdout.strip():
            return out.stdout.strip()
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


def _gpu_model(label: str) -> str:
    """'H200' when the backend's GPU is an H200, else 'H100' (the Phantom column used)."""
    return "H200" if "H200" in label.upper() else "H100"


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

    Returns:
        {"meta": {...}, "results": [{"row", "backend", "median_us", "runs", "correct", ...}],
        "notes": [...], "all_correct": bool, "markdown": str}. CKKS results also carry
        "precision_bits": {op: {"min_bits", "mean_bits"}}; with energy, GPU results carry
        "idle_w" and "energy": {op: {"energy_uj", "energy_above_idle_uj", "mean_w", "idle_w",
        "reps", "window_s", "loop_us", "method"}} and meta has "energy".

    Raises:
        ValueError: unknown scheme, rows or device, or threads/runs/max_n out of range.
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
    notes: list[str] = []
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
        "git_commit": git_commit(),
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
        "phantom_source": f"/work/shared/ANCHORS.md, Phantom {scheme.upper()} table "
                          "(H100 / H200, µs)",
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
    if verbose:  # raw markdown: wide tables stay readable in logs and terminals alike
        print("\n" + out["markdown"], end="")
    if json_path:
        with open(json_path, "w", encoding="utf-8") as f:
            json.dump({k: v for k, v in out.items() if k != "markdown"}, f, indent=1)
    if markdown_path:
        with open(markdown_path, "w", encoding="utf-8") as f:
            f.write(out["markdown"])
    return out


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


# ---- tables -------------------------------------------------------------------------------------
def _fmt_us(v: float | None) -> str:
    if v is None:
        return "—"
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.0f}"
    return f"{v:.1f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "—" if not a or not b else f"{a / b:.2f}"


def _headline(scheme: str) -> tuple[str, str, str]:
    """(Phantom variant, Phantom column, Veil op) of the main table's Phantom column."""
    variant, col = PHANTOM_HEADLINE[scheme]
    return variant, col, PHANTOM_TO_VEIL[scheme][variant][col]


def _precision_cell(r: dict[str, Any]) -> str:
    """'min / mean' bits over a CKKS result's ops (the worst of each), or '—'."""
    bits = r.get("precision_bits") or {}
    if not bits:
        return "—"
    lo = min(b["min_bits"] for b in bits.values())
    mean = min(b["mean_bits"] for b in bits.values())
    return f"{lo:.1f} / {mean:.1f}"


def to_markdown(result: dict[str, Any]) -> str:
    """Markdown: header facts, the timings table and the ratio table."""
    meta = result["meta"]
    scheme = meta["scheme"]
    ops = OPS_BY_SCHEME[scheme]
    variant, ph_col, veil_op = _headline(scheme)
    gpus = ", ".join(g.get("name", "?") for g in meta["gpus"]) or "none"
    lines = [
        f"## Veil benchmark: {scheme.upper()}",
        "",
        f"- date {meta['date']}, commit {meta['git_commit'] or 'unknown'}, veil {meta['veil_version']}",
        f"- CPU: {meta['cpu_model']} ({meta['cpu_threads_default']} threads by default); GPU: {gpus}",
        f"- SEAL: {meta['seal_version'] or 'not timed'}; quick: {meta['quick']}",
        (
            "- µs, median after warm-up (GPU: CUDA events; CPU: steady clock); mul+relin = "
            "multiply plus relinearize; keygen = secret + public + relin keys."
        ),
        (
            "- Phantom: H100 numbers from ANCHORS.md (median of 100); ratio = Veil / Phantom "
            "time on the same GPU model (< 1: Veil faster; only meaningful on GPU rows)."
        ),
    ]
    lines += [f"- {n}" for n in result["notes"]]
    lines.append("")
    extra = []
    if scheme != "bfv":
        extra.append("8 rot / hoisted")
    if scheme == "ckks":
        extra.append("bits min / mean")
    label = "mul+relin" + (f" {variant}" if scheme == "bfv" else "")
    with_energy = any(r.get("energy") for r in result["results"])
    if with_energy:
        extra.append(f"energy {label}")
    head = ["params", "log QP", "backend"] + list(ops.values()) + extra + [
        f"Phantom H100 {label}", "veil/Phantom"]
    lines.append("| " + " | ".join(head) + " |")
    lines.append("|" + "---|" * len(head))
    for r in result["results"]:
        row = r["row"]
        log_qp = r.get("log2_qp", row.get("log2_qp", "?"))
        secure = r.get("secure", row.get("secure", True))
        cells = [row["name"], f"{log_qp}" + ("" if secure else " (insecure)"), r["backend"]]
        if "error" in r:
            cells += [r["error"]] + ["—"] * (len(ops) - 1 + len(extra) + 2)
            lines.append("| " + " | ".join(cells) + " |")
            continue
        med = r["median_us"]
        for op in ops:
            c = _fmt_us(med.get(op))
            if op in r["correct"] and not r["correct"][op]:
                c += " ✗"
            cells.append(c)
        if scheme != "bfv":
            cells.append(_ratio(med.get("rotate_8"), med.get("rotate_many_8")))
        if scheme == "ckks":
            cells.append(_precision_cell(r))
        if with_energy:
            cells.append(_fmt_uj((r.get("energy") or {}).get(veil_op, {}).get("energy_uj")))
        ph = row.get("phantom_us")
        have = bool(ph) and variant in ph
        model = _gpu_model(r["backend"])
        cells.append(_fmt_us(ph[variant][ph_col]["H100"] if have else None))
        same = ph[variant][ph_col][model] if have else None
        ratio = _ratio(med.get(veil_op), same) if r["kind"] == "veil" else "—"
        if ratio != "—" and model == "H200":
            ratio += " (H200)"
        cells.append(ratio)
        lines.append("| " + " | ".join(cells) + " |")
    lines += ["", *_energy_table(result), *_cheddar_table(result), *_ratio_table(result)]
    return "\n".join(lines) + "\n"


#: Cheddar's column -> Veil's op (OPS_BY_SCHEME["ckks"]) in the Cheddar table.
_CHEDDAR_OPS = (("multiply", "multiply"), ("rotate", "rotate"), ("rescale", "rescale"),
                ("add", "add"))


def _cheddar_table(result: dict[str, Any]) -> list[str]:
    """Veil beside Cheddar's H100 numbers on Cheddar's shapes (GPU results of Cheddar rows)."""
    rows = [r for r in result["results"]
            if r["row"].get("cheddar_us_h100") and r["kind"] == "veil" and r["device"] != "cpu"
            and "error" not in r]
    if not rows:
        return []
    head = ["shape", "limbs", "backend"]
    for col, _ in _CHEDDAR_OPS:
        head += [f"{col} Veil", "Cheddar", "ratio"]
    body = []
    for r in rows:
        ch = r["row"]["cheddar_us_h100"]
        med = r["median_us"]
        model = _gpu_model(r["backend"])
        cells = [r["row"]["shape"], str(r["row"]["limbs"]), r["backend"]]
        for col, op in _CHEDDAR_OPS:
            ratio = _ratio(med.get(op), ch.get(col))
            cells += [_fmt_us(med.get(op)), _fmt_us(ch.get(col)),
                      ratio + (" (H200)" if model == "H200" and ratio != "—" else "")]
        body.append("| " + " | ".join(cells) + " |")
    return [
        ("Cheddar's shapes (ANCHORS.md: Cheddar built for sm_90 and measured on this project's "
         "H100; ratio = Veil / Cheddar, < 1: Veil faster; on an H200 the ratio is not "
         "like for like). mul+relin = HMult; rotate = HRot by 1; Veil's rescale divides by "
         "its top block of primes (two 25-bit primes at bootparam_40's top, as Cheddar's top "
         "levels drop two terminal primes; one 55-bit prime for the 64-bit set). These rows "
         "encode at sqrt(2^40 D), D the rescale block's product, so that the rescaled product "
         "is at 2^40:"),
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *body,
        "",
    ]


def _fmt_uj(v: float | None) -> str:
    """Energy given in µJ as '512 µJ', '33.2 mJ' or '1.2 J' (3 significant digits)."""
    if v is None:
        return "—"
    for scale, unit in ((1e6, "J"), (1e3, "mJ")):
        if abs(v) >= 0.9995 * scale:  # 999.6 µJ reads "1 mJ", not "1e+03 µJ"
            return f"{v / scale:.3g} {unit}"
    return f"{v:.3g} µJ"


def _energy_table(result: dict[str, Any]) -> list[str]:
    """Energy per operation of the results that carry it (GPU backends with --energy)."""
    rows = [r for r in result["results"] if r.get("energy") and "error" not in r]
    if not rows:
        return []
    labels = OPS_BY_SCHEME[result["meta"]["scheme"]]
    methods = sorted({e["method"] for r in rows for e in r["energy"].values() if "method" in e})
    how = " and ".join("NVML energy counter" if m == "counter" else "integrated NVML power samples"
                       for m in methods) or "NVML"
    head = ["params", "backend", "idle W", "mean W"] + list(labels.values())
    body = []
    for r in rows:
        en = r["energy"]
        watts = [e["mean_w"] for e in en.values() if e.get("mean_w") is not None]
        cells = [r["row"]["name"], r["backend"],
                 "—" if r.get("idle_w") is None else f"{r['idle_w']:.0f}",
                 f"{min(watts):.0f}–{max(watts):.0f}" if watts else "—"]
        for op in labels:
            e = en.get(op)
            if e is None or "error" in e:
                cells.append("—" if e is None else "reading failed")
            else:
                cells.append(f"{_fmt_uj(e['energy_uj'])} / {_fmt_uj(e['energy_above_idle_uj'])}")
        body.append("| " + " | ".join(cells) + " |")
    window = result["meta"].get("energy", {}).get("window_s", _energy.WINDOW_S)
    return [
        (f"Energy per operation ({how}; each op run back-to-back for about {window:g} s after "
         "its timing): total / above idle; idle W sampled before the row, mean W = range over "
         "the ops (veil._energy has the method):"),
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *body,
        "",
    ]


def _ratio_table(result: dict[str, Any]) -> list[str]:
    """Time ratios Veil / peer: GPU rows vs Phantom (same GPU model), CPU rows vs SEAL."""
    scheme = result["meta"]["scheme"]
    labels = OPS_BY_SCHEME[scheme]
    seal_by_row = {
        r["row"]["name"]: r for r in result["results"] if r["kind"] == "seal" and "error" not in r
    }
    ops = list(labels)
    body = []
    for r in result["results"]:
        if r["kind"] != "veil" or "error" in r:
            continue
        med = r["median_us"]
        if r["device"] == "cpu":
            peer = seal_by_row.get(r["row"]["name"])
            if peer is None:
                continue
            name = peer["backend"]
            pm = {op: peer["median_us"].get(op) for op in ops}
            if scheme == "bfv":
                pm["multiply_hps"] = None  # SEAL has BEHZ only
        else:
            ph = r["row"].get("phantom_us")
            if not ph:
                continue
            model = _gpu_model(r["backend"])
            name = f"Phantom {model}"
            pm = {op: None for op in ops}
            for variant, mapping in PHANTOM_TO_VEIL[scheme].items():
                for ph_op, v_op in mapping.items():
                    if variant in ph:
                        pm[v_op] = ph[variant][ph_op][model]
        cells = [r["row"]["name"], r["backend"], name] + [_ratio(med.get(op), pm[op]) for op in ops]
        body.append("| " + " | ".join(cells) + " |")
    if not body:
        return []
    head = ["params", "backend", "peer"] + list(labels.values())
    return [
        "Time ratio Veil / peer (< 1: Veil faster; — where the peer has no number):",
        "",
        "| " + " | ".join(head) + " |",
        "|" + "---|" * len(head),
        *body,
    ]


__all__ = [
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
    "cpu_model",
    "default_rows",
    "git_commit",
    "make_context",
    "parse_bit_sizes",
    "phantom_rows",
    "plain_modulus_for",
    "plan_backends",
    "policy_for",
    "run",
    "seal_supports",
    "select_rows",
    "time_op",
    "to_markdown",
]
