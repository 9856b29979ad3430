"""``veil bench --plot DIR``: PNG charts of Veil against its peers (matplotlib, Agg canvas).

One figure per benchmark result (one scheme): one panel per operation, the parameter rows along
the x axis (N, primes, special primes), grouped bars of the median time in µs on a log scale,
one bar per series that has a number there:

* every backend of the run, labelled with its device: Veil on the GPU (its name), Veil on the CPU
  (its thread count), SEAL on the CPU;
* the peers' numbers shipped with Veil (``veil/data/peers.json``), hatched: Phantom (the column
  of the run's GPU model, H100 without a GPU) and Cheddar (H100), each labelled with its GPU.

The title names the scheme, the GPU and CPU models, the commit and the date. Peers appear only
where they have a number for the row and operation; no ratio is drawn, so a CPU run's bars stand
beside the GPU peers' without implying a like-for-like comparison (the legend names each device).

matplotlib is imported only here and only when a chart is drawn (``pip install 'veil[bench]'``);
figures use the Agg canvas directly, never pyplot's global state.
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from ._bench_ops import OPS_BY_SCHEME
from ._bench_report import is_gpu, run_gpu_model, short_commit
from ._bench_rows import PHANTOM_TO_VEIL

#: Cheddar's op -> Veil's op (CKKS).
_CHEDDAR_TO_VEIL = {"multiply": "multiply", "rotate": "rotate", "rescale": "rescale", "add": "add"}


def require_matplotlib() -> None:
    """Raises ImportError with the install hint when matplotlib is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise ImportError("--plot needs matplotlib: pip install 'veil[bench]' (or pip install "
                          "matplotlib)") from None


@dataclass
class Series:
    """One set of bars: ``label`` (names the device), ``peer`` (a number from peers.json rather
    than this run), ``values``: {(row name, op): µs}."""

    label: str
    peer: bool = False
    values: dict[tuple[str, str], float] = field(default_factory=dict)


def _backend_label(rec: dict[str, Any]) -> str:
    """A backend's legend label naming its device."""
    backend = str(rec["backend"])
    if rec["kind"] == "seal":
        threads = backend.rsplit(" ", 1)[-1].removesuffix("t")
        return f"{backend.rsplit(' ', 1)[0]}, CPU: {_threads(threads)}"
    if is_gpu(rec):
        name = backend[backend.find("(") + 1:backend.rfind(")")] if "(" in backend else ""
        return f"Veil, GPU: {name or rec['device']}"
    threads = rec.get("threads") or backend.rsplit(" ", 1)[-1].removesuffix("t")
    return f"Veil, CPU: {_threads(threads)}"


def _threads(n: object) -> str:
    """'1 thread', '16 threads'."""
    return f"{n} thread" + ("" if str(n) == "1" else "s")


def series(result: dict[str, Any]) -> list[Series]:
    """The bars of a result: its backends (in order of appearance), then Phantom, then Cheddar.

    Failed results (with "error") and missing numbers are left out.
    """
    scheme = result["meta"]["scheme"]
    model = run_gpu_model(result)
    by_label: dict[str, Series] = {}
    phantom = Series(f"Phantom, GPU: {model} (measured, peers.json)", peer=True)
    cheddar = Series("Cheddar, GPU: H100 (measured, peers.json)", peer=True)
    for r in result["results"]:
        row = r["row"]
        name = row["name"]
        if "error" not in r:
            s = by_label.setdefault(_backend_label(r), Series(_backend_label(r)))
            for op, us in (r.get("median_us") or {}).items():
                if us:
                    s.values[(name, op)] = float(us)
        for variant, ops in (row.get("phantom_us") or {}).items():
            for ph_op, v_op in PHANTOM_TO_VEIL[scheme].get(variant, {}).items():
                t = ops.get(ph_op)
                if t and t.get(model):
                    phantom.values[(name, v_op)] = float(t[model])
        for ch_op, us in (row.get("cheddar_us_h100") or {}).items():
            if ch_op in _CHEDDAR_TO_VEIL and us:
                cheddar.values[(name, _CHEDDAR_TO_VEIL[ch_op])] = float(us)
    out = list(by_label.values()) + [phantom, cheddar]
    return [s for s in out if s.values]


def _tick(name: str) -> str:
    """A row name on two lines: 'N=8192 3×54 + 1×56' over '(P=1)'."""
    return name.replace(" (", "\n(", 1)


def title(result: dict[str, Any]) -> str:
    """The figure's title: scheme, GPU and CPU models, commit and date."""
    meta = result["meta"]
    gpus = ", ".join(g.get("name", "?") for g in meta.get("gpus") or ()) or "none"
    return (f"Veil {meta['scheme'].upper()} vs peers: median µs, log scale\n"
            f"GPU: {gpus}; CPU: {meta.get('cpu_model', '?')}; "
            f"commit {short_commit(meta.get('git_commit'))}; {meta.get('date', '?')}")


def chart(result: dict[str, Any]) -> Any:
    """The figure of one result (a matplotlib Figure on an Agg canvas; see the module docstring).

    Panels: the scheme's ops (``OPS_BY_SCHEME``) that have at least one number; each panel's x
    axis holds the rows with a number for that op, and each series draws one bar per such row
    where it has a number (one BarContainer per series and panel).

    Raises:
        ImportError: matplotlib is missing. ValueError: the result has no number at all.
    """
    require_matplotlib()
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    scheme = result["meta"]["scheme"]
    labels = OPS_BY_SCHEME[scheme]
    all_series = series(result)
    rows = list(dict.fromkeys(r["row"]["name"] for r in result["results"]))
    panels = []
    for op in labels:
        xs = [n for n in rows if any((n, op) in s.values for s in all_series)]
        if xs:
            panels.append((op, xs))
    if not panels:
        raise ValueError(f"{scheme}: no timings to plot (every result failed or is empty)")
    ncols = 2 if len(rows) > 6 else 3
    ncols = min(ncols, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    widest = max(len(xs) for _, xs in panels)
    panel_w = min(20.0, max(4.5, 0.22 * widest * max(2, len(all_series))))
    fig = Figure(figsize=(panel_w * ncols, 3.9 * nrows + 1.6), layout="constrained")
    FigureCanvasAgg(fig)
    colors = [f"C{i % 10}" for i in range(len(all_series))]
    axes = fig.subplots(nrows, ncols, squeeze=False).ravel()
    handles: dict[str, Any] = {}
    for ax, (op, xs) in zip(axes, panels, strict=False):
        # each row's bars centred on its tick: only the series with a number there
        at = [[k for k, s in enumerate(all_series) if (n, op) in s.values] for n in xs]
        width = 0.8 / max(len(a) for a in at)
        for k, (s, color) in enumerate(zip(all_series, colors, strict=True)):
            idx = [i for i, a in enumerate(at) if k in a]
            if not idx:
                continue
            bars = ax.bar([i + width * (at[i].index(k) + 0.5 - len(at[i]) / 2) for i in idx],
                          [s.values[(xs[i], op)] for i in idx], width, color=color,
                          hatch="//" if s.peer else None, edgecolor="white" if s.peer else None,
                          linewidth=0, label=s.label)
            handles.setdefault(s.label, bars)
        ax.set_yscale("log")
        # whole decades: a bar's height then reads against the others (a log axis cut just
        # below the smallest bar would make a 529 vs 697 µs pair look like 1 to 10)
        vals = [s.values[(n, op)] for s in all_series for n in xs if (n, op) in s.values]
        vals = [v for v in vals if v > 0]
        if vals:
            ax.set_ylim(10.0 ** math.floor(math.log10(min(vals))),
                        10.0 ** math.ceil(math.log10(max(vals) * 1.05)))
        ax.set_title(labels[op], fontsize=10)
        ax.set_ylabel("µs (median)", fontsize=8)
        ax.set_xticks(range(len(xs)), [_tick(n) for n in xs], rotation=60, ha="right",
                      fontsize=6)
        ax.tick_params(axis="y", labelsize=7)
        ax.grid(axis="y", which="both", alpha=0.25)
    for ax in axes[len(panels):]:
        ax.set_visible(False)
    fig.suptitle(title(result), fontsize=11)
    ncol = min(4, len(handles))
    try:  # matplotlib >= 3.7 keeps an "outside" legend clear of the panels
        fig.legend(list(handles.values()), list(handles), loc="outside lower center", ncol=ncol,
                   fontsize=8, frameon=False)
    except ValueError:
        fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=ncol,
                   fontsize=8, frameon=False)
    return fig


def write_plots(results: dict[str, Any] | Sequence[dict[str, Any]], folder: str) -> list[str]:
    """Writes one PNG per result into ``folder`` (created if missing): ``bench_<scheme>.png``
    (``bench_<scheme>_2.png`` ... for repeated schemes). Returns the paths.

    Raises:
        ImportError: matplotlib is missing. OSError: ``folder`` cannot be created or written.
        ValueError: a result has no number to plot.
    """
    if isinstance(results, dict):
        results = [results]
    require_matplotlib()
    os.makedirs(folder, exist_ok=True)
    paths: list[str] = []
    for result in results:
        scheme = result["meta"]["scheme"]
        path = os.path.join(folder, f"bench_{scheme}.png")
        k = 2
        while path in paths:
            path = os.path.join(folder, f"bench_{scheme}_{k}.png")
            k += 1
        fig = chart(result)
        fig.savefig(path, dpi=110, metadata={"Title": title(result).replace("\n", " "),
                                             "Software": "veil bench --plot"})
        paths.append(path)
    return paths


__all__ = ["Series", "chart", "require_matplotlib", "series", "title", "write_plots"]
