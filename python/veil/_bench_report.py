"""The tables of ``veil bench``: one model, rendered as rich Tables (console) or markdown (file).

Every table is built once as a :class:`ReportTable` (a title sentence, column heads, rows of
strings) and then rendered by rich: on the console with a plain box, and for the markdown file
(``--markdown``, pasted into bench/RESULTS.md) with rich's GitHub-markdown box
(``rich.box.MARKDOWN``), so that no table text is put together by hand.

Ratio rule: a time ratio Veil / peer is printed only where both ran on the same kind of device:
Veil on a GPU against Phantom (the column of the same GPU model; other GPU models are marked "vs
H100") and Cheddar (H100), Veil on the CPU against SEAL timed on the same CPU in the same run. A
CPU row shows Phantom's GPU time for reference with "n/a" in place of the ratio.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from typing import Any

from rich import box
from rich.console import Console
from rich.measure import Measurement
from rich.table import Table
from rich.text import Text

from ._bench_ops import OPS_BY_SCHEME
from ._bench_rows import PHANTOM_HEADLINE, PHANTOM_TO_VEIL
from ._energy import WINDOW_S

#: The ratio cell of a row whose peer ran on another kind of device (CPU row vs a GPU peer).
NOT_COMPARABLE = "n/a"
#: The ratio and value cell where there is no number.
MISSING = "—"


@dataclass
class ReportTable:
    """One table: ``title`` (a sentence shown above it), ``head`` (column labels), ``rows``
    (cells as strings, one list per row, each as long as ``head``); columns from ``numeric_from``
    on are right-justified on the console."""

    title: str
    head: list[str]
    rows: list[list[str]] = field(default_factory=list)
    numeric_from: int = 0


# ---- cells --------------------------------------------------------------------------------------
def fmt_us(v: float | None) -> str:
    """Microseconds as '1,234', '56' or '7.8' (— for None)."""
    if v is None:
        return MISSING
    if v >= 1000:
        return f"{v:,.0f}"
    if v >= 10:
        return f"{v:.0f}"
    return f"{v:.1f}"


def fmt_uj(v: float | None) -> str:
    """Energy given in µJ as '512 µJ', '33.2 mJ' or '1.2 J' (3 significant digits)."""
    if v is None:
        return MISSING
    for scale, unit in ((1e6, "J"), (1e3, "mJ")):
        if abs(v) >= 0.9995 * scale:  # 999.6 µJ reads "1 mJ", not "1e+03 µJ"
            return f"{v / scale:.3g} {unit}"
    return f"{v:.3g} µJ"


def ratio(a: float | None, b: float | None) -> str:
    """a / b to two decimals ('—' when either is missing or zero)."""
    return MISSING if not a or not b else f"{a / b:.2f}"


def is_gpu(rec: dict[str, Any]) -> bool:
    """Whether a result ran on a GPU (its device is cuda or cuda:k)."""
    return str(rec.get("device", "cpu")).startswith("cuda")


def peer_gpu(label: str) -> tuple[str, bool]:
    """(Phantom column, exact) for a backend label: 'H200' or 'H100', exact when the backend's
    GPU is that model (another GPU model is compared with the H100 column, not exact)."""
    up = label.upper()
    if "H200" in up:
        return "H200", True
    return "H100", "H100" in up


def _marked(cell: str, model: str, exact: bool) -> str:
    """A ratio cell marked with the peer's GPU where it is not the plain H100 comparison."""
    if cell == MISSING:
        return cell
    if not exact:
        return f"{cell} (vs H100)"
    return f"{cell} ({model})" if model == "H200" else cell


def _headline(scheme: str) -> tuple[str, str, str]:
    """(Phantom variant, Phantom column, Veil op) of the main table's Phantom column."""
    variant, col = PHANTOM_HEADLINE[scheme]
    return variant, col, PHANTOM_TO_VEIL[scheme][variant][col]


def _precision_cell(r: dict[str, Any]) -> str:
    """'min / mean' bits over a CKKS result's ops (the worst of each), or '—'."""
    bits = r.get("precision_bits") or {}
    if not bits:
        return MISSING
    lo = min(b["min_bits"] for b in bits.values())
    mean = min(b["mean_bits"] for b in bits.values())
    return f"{lo:.1f} / {mean:.1f}"


def run_gpu_model(result: dict[str, Any]) -> str:
    """The Phantom column matching the run's GPU backend ('H200' or 'H100'; 'H100' without one)."""
    for r in result["results"]:
        if r.get("kind") == "veil" and is_gpu(r):
            return peer_gpu(r["backend"])[0]
    return "H100"


def short_commit(commit: str | None) -> str:
    """A commit for display: the first 10 characters of a full hash, 'unknown' for None."""
    if not commit or commit == "unknown":
        return "unknown"
    return commit[:10] if len(commit) > 12 else commit


# ---- the tables ---------------------------------------------------------------------------------
def facts(result: dict[str, Any]) -> list[str]:
    """The lines above the tables: date, commit, machine, units, the ratio rule and the notes."""
    meta = result["meta"]
    gpus = ", ".join(g.get("name", "?") for g in meta.get("gpus") or ()) or "none"
    model = run_gpu_model(result)
    commit = meta.get("git_commit")
    lines = [
        f"date {meta.get('date', '?')}, commit {short_commit(commit)}"
        + ("" if commit and commit != "unknown" else " (pass --commit SHA or set VEIL_GIT_COMMIT)")
        + f", veil {meta.get('veil_version', '?')}",
        f"CPU: {meta.get('cpu_model', '?')} ({meta.get('cpu_threads_default', '?')} threads by "
        f"default); GPU: {gpus}",
        f"SEAL: {meta.get('seal_version') or 'not timed'}; quick: {meta.get('quick')}",
        "µs, median after warm-up (GPU: CUDA events; CPU: steady clock); mul+relin = multiply "
        "plus relinearize; keygen = secret + public + relin keys.",
        f"Phantom: {model} numbers measured on this project's GPU machines (median of 100; "
        "package data veil/data/peers.json). Ratios only between the same kind of device: "
        "Veil on a GPU / Phantom on the same GPU model (marked 'vs H100' on another model), "
        "Veil on the CPU / SEAL on the same CPU in this run. CPU rows show Phantom's GPU time "
        f"for reference only, ratio '{NOT_COMPARABLE}'; < 1: Veil faster.",
    ]
    return lines + list(result.get("notes") or ())


def main_table(result: dict[str, Any]) -> ReportTable:
    """One row per parameter set and backend: every op's median, Phantom's headline op and the
    ratio Veil / Phantom (GPU rows only, see the module docstring)."""
    scheme = result["meta"]["scheme"]
    ops = OPS_BY_SCHEME[scheme]
    variant, ph_col, veil_op = _headline(scheme)
    run_model = run_gpu_model(result)
    extra = []
    if scheme != "bfv":
        extra.append("8 rot / hoisted")
    if scheme == "ckks":
        extra.append("bits min / mean")
    label = "mul+relin" + (f" {variant}" if scheme == "bfv" else "")
    with_energy = any(r.get("energy") for r in result["results"])
    if with_energy:
        extra.append(f"energy {label}")
    head = ["params", "log QP", "backend", *ops.values(), *extra,
            f"Phantom {run_model} {label}", "veil/Phantom"]
    t = ReportTable(f"Veil benchmark: {scheme.upper()}", head, numeric_from=3)
    for r in result["results"]:
        row = r["row"]
        log_qp = r.get("log2_qp", row.get("log2_qp", "?"))
        secure = r.get("secure", row.get("secure", True))
        cells = [row["name"], f"{log_qp}" + ("" if secure else " (insecure)"), r["backend"]]
        if "error" in r:
            t.rows.append(cells + [r["error"]] + [MISSING] * (len(head) - len(cells) - 1))
            continue
        med = r["median_us"]
        for op in ops:
            c = fmt_us(med.get(op))
            if op in r.get("correct", {}) and not r["correct"][op]:
                c += " ✗"
            cells.append(c)
        if scheme != "bfv":
            cells.append(ratio(med.get("rotate_8"), med.get("rotate_many_8")))
        if scheme == "ckks":
            cells.append(_precision_cell(r))
        if with_energy:
            cells.append(fmt_uj((r.get("energy") or {}).get(veil_op, {}).get("energy_uj")))
        ph = row.get("phantom_us")
        have = bool(ph) and variant in ph
        if r["kind"] == "veil" and is_gpu(r):
            model, exact = peer_gpu(r["backend"])
        else:
            model, exact = run_model, True
        cells.append(fmt_us(ph[variant][ph_col][model] if have else None))
        if r["kind"] != "veil" or not is_gpu(r):
            cells.append(NOT_COMPARABLE if have else MISSING)  # the CPU is no Phantom peer
        else:
            same = ph[variant][ph_col][model] if have else None
            cells.append(_marked(ratio(med.get(veil_op), same), model, exact))
        t.rows.append(cells)
    return t


#: Cheddar's column -> Veil's op (OPS_BY_SCHEME["ckks"]) in the Cheddar table.
_CHEDDAR_OPS = (("multiply", "multiply"), ("rotate", "rotate"), ("rescale", "rescale"),
                ("add", "add"))


def cheddar_table(result: dict[str, Any]) -> ReportTable | None:
    """Veil beside Cheddar's H100 numbers on Cheddar's shapes (GPU results of Cheddar rows), or
    None without such results."""
    rows = [r for r in result["results"]
            if r["row"].get("cheddar_us_h100") and r["kind"] == "veil" and is_gpu(r)
            and "error" not in r]
    if not rows:
        return None
    head = ["shape", "limbs", "backend"]
    for col, _ in _CHEDDAR_OPS:
        head += [f"{col} Veil", "Cheddar", "ratio"]
    t = ReportTable(
        "Cheddar's shapes (Cheddar built for sm_90 and measured on this project's H100; ratio = "
        "Veil / Cheddar, < 1: Veil faster; on another GPU the ratio is marked, not like for "
        "like). mul+relin = HMult; rotate = HRot by 1; Veil's rescale divides by its top block "
        "of primes (two 25-bit primes at bootparam_40's top, as Cheddar's top levels drop two "
        "terminal primes; one 55-bit prime for the 64-bit set). These rows encode at "
        "sqrt(2^40 D), D the rescale block's product, so that the rescaled product is at 2^40:",
        head, numeric_from=3)
    for r in rows:
        ch = r["row"]["cheddar_us_h100"]
        med = r["median_us"]
        model, exact = peer_gpu(r["backend"])
        exact = exact and model == "H100"
        cells = [r["row"]["shape"], str(r["row"]["limbs"]), r["backend"]]
        for col, op in _CHEDDAR_OPS:
            cell = ratio(med.get(op), ch.get(col))
            cells += [fmt_us(med.get(op)), fmt_us(ch.get(col)),
                      cell if exact or cell == MISSING else f"{cell} ({model})"]
        t.rows.append(cells)
    return t


def energy_table(result: dict[str, Any]) -> ReportTable | None:
    """Energy per operation of the results that carry it (GPU backends with --energy), or None."""
    rows = [r for r in result["results"] if r.get("energy") and "error" not in r]
    if not rows:
        return None
    labels = OPS_BY_SCHEME[result["meta"]["scheme"]]
    methods = sorted({e["method"] for r in rows for e in r["energy"].values() if "method" in e})
    how = " and ".join("NVML energy counter" if m == "counter" else "integrated NVML power samples"
                       for m in methods) or "NVML"
    window = result["meta"].get("energy", {}).get("window_s", WINDOW_S)
    t = ReportTable(
        f"Energy per operation ({how}; each op run back-to-back for about {window:g} s after "
        "its timing): total / above idle; idle W sampled before the row, mean W = range over "
        "the ops (veil._energy has the method):",
        ["params", "backend", "idle W", "mean W", *labels.values()], numeric_from=2)
    for r in rows:
        en = r["energy"]
        watts = [e["mean_w"] for e in en.values() if e.get("mean_w") is not None]
        cells = [r["row"]["name"], r["backend"],
                 MISSING if r.get("idle_w") is None else f"{r['idle_w']:.0f}",
                 f"{min(watts):.0f}–{max(watts):.0f}" if watts else MISSING]
        for op in labels:
            e = en.get(op)
            if e is None or "error" in e:
                cells.append(MISSING if e is None else "reading failed")
            else:
                cells.append(f"{fmt_uj(e['energy_uj'])} / {fmt_uj(e['energy_above_idle_uj'])}")
        t.rows.append(cells)
    return t


def ratio_table(result: dict[str, Any]) -> ReportTable | None:
    """Time ratios Veil / peer per op: GPU rows vs Phantom (same GPU model), CPU rows vs SEAL on
    the same CPU; None when no row has a peer of its own kind of device."""
    scheme = result["meta"]["scheme"]
    labels = OPS_BY_SCHEME[scheme]
    seal_by_row = {
        r["row"]["name"]: r for r in result["results"] if r["kind"] == "seal" and "error" not in r
    }
    ops = list(labels)
    t = ReportTable("Time ratio Veil / peer, same kind of device only (< 1: Veil faster; — "
                    "where the peer has no number):",
                    ["params", "backend", "peer", *labels.values()], numeric_from=3)
    for r in result["results"]:
        if r["kind"] != "veil" or "error" in r:
            continue
        med = r["median_us"]
        marks = (True, "H100")
        if not is_gpu(r):
            peer = seal_by_row.get(r["row"]["name"])
            if peer is None:
                continue
            name = f"{peer['backend']} (same CPU)"
            pm = {op: peer["median_us"].get(op) for op in ops}
            if scheme == "bfv":
                pm["multiply_hps"] = None  # SEAL has BEHZ only
        else:
            ph = r["row"].get("phantom_us")
            if not ph:
                continue
            model, exact = peer_gpu(r["backend"])
            marks = (exact, model)
            name = f"Phantom {model}" + ("" if exact else " (another GPU model)")
            pm = {op: None for op in ops}
            for variant, mapping in PHANTOM_TO_VEIL[scheme].items():
                for ph_op, v_op in mapping.items():
                    if variant in ph:
                        pm[v_op] = ph[variant][ph_op][model]
        cells = [r["row"]["name"], r["backend"], name]
        for op in ops:
            cell = ratio(med.get(op), pm[op])
            cells.append(cell if marks[0] or cell == MISSING else f"{cell} (vs H100)")
        t.rows.append(cells)
    return t if t.rows else None


def tables(result: dict[str, Any]) -> list[ReportTable]:
    """The report's tables in order: timings, energy, Cheddar's shapes, ratios (absent ones
    skipped)."""
    out = [main_table(result), energy_table(result), cheddar_table(result), ratio_table(result)]
    return [t for t in out if t is not None]


# ---- rendering ----------------------------------------------------------------------------------
def rich_table(t: ReportTable, style: box.Box = box.SIMPLE_HEAD) -> Table:
    """``t`` as a rich Table (cells as plain Text: no rich markup is interpreted)."""
    table = Table(box=style, show_edge=style is box.MARKDOWN)
    for i, h in enumerate(t.head):
        table.add_column(Text(h), no_wrap=True,
                         justify="right" if i >= t.numeric_from and style is not box.MARKDOWN
                         else "left")
    for cells in t.rows:
        table.add_row(*(Text(c) for c in cells))
    return table


def _width(table: Table) -> int:
    """The width ``table`` takes without wrapping a cell."""
    probe = Console(file=io.StringIO(), width=100_000)
    return Measurement.get(probe, probe.options, table).maximum


def markdown_table(t: ReportTable) -> str:
    """``t`` as a GitHub-flavoured markdown table, rendered by rich (``box.MARKDOWN``)."""
    table = rich_table(t, box.MARKDOWN)
    buf = io.StringIO()
    Console(file=buf, width=_width(table) + 1, color_system=None, force_terminal=False,
            emoji=False, highlight=False).print(table)
    lines = [line.rstrip() for line in buf.getvalue().splitlines()]
    return "\n".join(line for line in lines if line) + "\n"


def to_markdown(result: dict[str, Any]) -> str:
    """The report as markdown: a heading, the facts as a list, then every table with its title."""
    parts = [f"## Veil benchmark: {result['meta']['scheme'].upper()}", "",
             *(f"- {line}" for line in facts(result)), ""]
    for i, t in enumerate(tables(result)):
        if i:  # the main table's title is the heading
            parts += [t.title, ""]
        parts += [markdown_table(t)]
    return "\n".join(parts)


def print_report(result: dict[str, Any], console: Console | None = None) -> None:
    """Prints the report on the console as rich Tables, each as wide as it needs (a narrow
    terminal wraps lines rather than squeezing cells)."""
    console = console or Console()
    console.print()
    console.rule(Text(f"Veil benchmark: {result['meta']['scheme'].upper()}"))
    for line in facts(result):
        console.print(Text(f"• {line}"))
    for i, t in enumerate(tables(result)):
        table = rich_table(t)
        wide = Console(file=console.file, width=max(console.width, _width(table)),
                       force_terminal=console.is_terminal,
                       color_system="auto" if console.color_system else None,
                       no_color=console.no_color, highlight=False)
        wide.print()
        if i:
            wide.print(Text(t.title), width=console.width)
        wide.print(table)


__all__ = [
    "MISSING",
    "NOT_COMPARABLE",
    "ReportTable",
    "cheddar_table",
    "energy_table",
    "facts",
    "fmt_uj",
    "fmt_us",
    "main_table",
    "markdown_table",
    "peer_gpu",
    "print_report",
    "ratio",
    "ratio_table",
    "rich_table",
    "run_gpu_model",
    "tables",
    "to_markdown",
]
