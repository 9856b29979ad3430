"""Tests of ``veil bench``'s output people read: charts (--plot), the ratio rule, the commit
record, the CPU name, the peers' package data and --from-json.

Oracles: Phantom's and Cheddar's numbers below were read by eye from the anchors page
(/work/shared/ANCHORS.md), not from the loader; bar counts are derived from the fixture by hand;
the commit of a throwaway repository is the one dulwich's porcelain returned when it made it.
No timing is asserted.
"""

from __future__ import annotations

import copy
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

import pytest
from veil import _bench_plot, _bench_report, bench, cli

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
REPO = Path(__file__).resolve().parents[2]
ANCHORS = Path("/work/shared/ANCHORS.md")

# ANCHORS.md, "Phantom BFV" (µs, H100 / H200): HPS multiply N=4096 2×35 + 1×38: 222 / 213,
# N=8192 3×54 + 1×56: 245 / 235.
PHANTOM_HPS_MUL = {4096: (222.0, 213.0), 8192: (245.0, 235.0)}


# ---- a small result, built here -----------------------------------------------------------------
def _median(ops, scale: float, skip=()) -> dict[str, float]:
    return {op: scale * (i + 1) for i, op in enumerate(ops) if op not in skip}


def fixture_result(gpu_name: str | None = "NVIDIA H100 80GB HBM3", seal: bool = True) -> dict:
    """Two Phantom BFV rows (N = 4096 and N = 8192 3×54 + 1×56) timed on Veil's CPU, Veil's GPU
    (``gpu_name``; None: no GPU) and SEAL (BEHZ only), with made-up medians."""
    rows = bench.phantom_rows("bfv")[:2]
    assert [(r.n, r.primes_spec) for r in rows] == [(4096, "2×35 + 1×38"), (8192, "3×54 + 1×56")]
    ops = list(bench.OPS_BY_SCHEME["bfv"])
    results = []
    for row in rows:
        rec = bench.row_record(row)
        results.append({"row": rec, "backend": "veil cpu 1t", "kind": "veil", "device": "cpu",
                         "threads": 1, "median_us": _median(ops, 1000.0),
                         "correct": {op: True for op in ops}})
        if gpu_name:
            results.append({"row": rec, "backend": f"veil cuda:0 ({gpu_name})", "kind": "veil",
                            "device": "cuda:0", "threads": None,
                            "median_us": _median(ops, 10.0),
                            "correct": {op: True for op in ops}})
        if seal:
            results.append({"row": rec, "backend": "SEAL 4.4.0 1t", "kind": "seal",
                            "device": "cpu", "median_us": _median(ops, 500.0, {"multiply_hps"}),
                            "correct": {}})
    meta = {"scheme": "bfv", "date": "2026-11-26T00:00:00+00:00", "git_commit": "abc1234",
            "veil_version": "0.1.0", "gpus": [{"name": gpu_name}] if gpu_name else [],
            "cpu_model": "Test CPU", "cpu_threads_default": 2, "seal_version": "4.4.0",
            "quick": True}
    return {"meta": meta, "results": results, "notes": [], "all_correct": True}


def _cells(table: _bench_report.ReportTable, backend: str, column: str) -> list[str]:
    i = table.head.index(column)
    return [row[i] for row in table.rows if row[table.head.index("backend")] == backend]


# ---- charts -------------------------------------------------------------------------------------
def test_chart_draws_one_bar_per_number() -> None:
    pytest.importorskip("matplotlib")
    result = fixture_result()
    fig = _bench_plot.chart(result)
    axes = [ax for ax in fig.axes if ax.get_visible()]
    labels = bench.OPS_BY_SCHEME["bfv"]
    assert [ax.get_title() for ax in axes] == list(labels.values())  # one panel per op
    # Per row: Veil CPU and GPU 9 ops each, SEAL 8 (no HPS), Phantom 6 (HPS: multiply,
    # rotate_rows, multiply_plain, encrypt, decrypt; BEHZ: multiply); two rows.
    assert sum(len(ax.patches) for ax in axes) == 2 * (9 + 9 + 8 + 6)
    by_title = {ax.get_title(): ax for ax in axes}
    assert len(by_title["keygen"].patches) == 2 * 3  # no peer number for keygen
    mul = by_title["mul+relin HPS"]
    heights = sorted(p.get_height() for p in mul.patches)
    veil = [1000.0 * 7, 10.0 * 7] * 2  # multiply_hps is the 7th op
    assert heights == sorted(veil + [PHANTOM_HPS_MUL[4096][0], PHANTOM_HPS_MUL[8192][0]])
    assert mul.get_yscale() == "log"
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["Veil, CPU: 1 thread", "Veil, GPU: NVIDIA H100 80GB HBM3",
                      "SEAL 4.4.0, CPU: 1 thread", "Phantom, GPU: H100 (measured, peers.json)"]
    assert "NVIDIA H100" in fig._suptitle.get_text() and "abc1234" in fig._suptitle.get_text()
    assert "Test CPU" in fig._suptitle.get_text()


def test_chart_on_an_h200_uses_phantoms_h200_column() -> None:
    pytest.importorskip("matplotlib")
    fig = _bench_plot.chart(fixture_result("NVIDIA H200", seal=False))
    mul = next(ax for ax in fig.axes if ax.get_title() == "mul+relin HPS")
    heights = {p.get_height() for p in mul.patches}
    assert {PHANTOM_HPS_MUL[4096][1], PHANTOM_HPS_MUL[8192][1]} <= heights
    assert PHANTOM_HPS_MUL[4096][0] not in heights


def test_write_plots_writes_pngs(tmp_path) -> None:
    pytest.importorskip("matplotlib")
    out = tmp_path / "charts"  # created by write_plots
    a, b = fixture_result(), fixture_result(None, seal=False)
    paths = _bench_plot.write_plots([a, b], str(out))
    assert [Path(p).name for p in paths] == ["bench_bfv.png", "bench_bfv_2.png"]
    for p in paths:
        data = Path(p).read_bytes()
        assert data[:8] == PNG_SIGNATURE and len(data) > 1024


def test_chart_without_numbers_is_an_error() -> None:
    pytest.importorskip("matplotlib")
    result = fixture_result(None, seal=False)
    for r in result["results"]:
        r["error"] = "RuntimeError: failed"
        r["row"] = dict(r["row"], phantom_us=None)
    with pytest.raises(ValueError, match="no timings"):
        _bench_plot.chart(result)


def test_plot_without_matplotlib_says_how_to_install(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import matplotlib -> ImportError
    with pytest.raises(ImportError, match=r"veil\[bench\]"):
        _bench_plot.require_matplotlib()
    assert cli.main(["bench", "--quick", "--device", "cpu", "--plot", str(tmp_path)]) == 2
    err = capsys.readouterr().err
    assert "matplotlib" in err and "Traceback" not in err


def test_cli_quick_cpu_run_writes_charts(tmp_path, capsys) -> None:
    """The real command, smallest settings: one BFV row on one CPU thread."""
    pytest.importorskip("matplotlib")
    charts, jpath, mpath = tmp_path / "charts", tmp_path / "b.json", tmp_path / "b.md"
    rc = cli.main(["bench", "--quick", "--device", "cpu", "--threads", "1", "--no-seal",
                   "--max-n", "4096", "--runs", "3", "--commit", "ABC1234", "--plot",
                   str(charts), "--json", str(jpath), "--markdown", str(mpath)])
    assert rc == 0
    png = (charts / "bench_bfv.png").read_bytes()
    assert png[:8] == PNG_SIGNATURE and len(png) > 1024
    saved = json.loads(jpath.read_text())
    assert saved["meta"]["git_commit"] == "abc1234"  # --commit wins, lower-cased
    out = capsys.readouterr().out
    assert "veil/Phantom" in out and "bench_bfv.png" in out  # the rich table and the chart
    md = mpath.read_text()
    assert "commit abc1234" in md
    ratio_col = [line.split("|")[-2].strip() for line in md.splitlines()
                 if line.startswith("| N=4096")]
    assert ratio_col == [_bench_report.NOT_COMPARABLE]  # a CPU row: no ratio to Phantom's GPU


def test_cli_from_json(tmp_path, capsys) -> None:
    pytest.importorskip("matplotlib")
    src = tmp_path / "gpu.json"
    result = fixture_result()
    result["meta"]["git_commit"] = None
    src.write_text(json.dumps(result))
    charts, md = tmp_path / "charts", tmp_path / "r.md"
    assert cli.main(["bench", "--from-json", str(src), "--plot", str(charts), "--markdown",
                     str(md), "--commit", "def5678"]) == 0
    assert (charts / "bench_bfv.png").read_bytes()[:8] == PNG_SIGNATURE
    assert "commit def5678" in md.read_text()
    capsys.readouterr()
    # a recorded commit that differs from --commit, bad files and bad combinations: status 2
    result["meta"]["git_commit"] = "abc1234"
    src.write_text(json.dumps(result))
    assert cli.main(["bench", "--from-json", str(src), "--commit", "def5678"]) == 2
    assert cli.main(["bench", "--from-json", str(src), "--commit", "abc1234ff"]) == 0
    bad = tmp_path / "bad.json"
    bad.write_text('{"meta": {}}')
    assert cli.main(["bench", "--from-json", str(bad)]) == 2
    bad.write_text("not json")
    assert cli.main(["bench", "--from-json", str(bad)]) == 2
    assert cli.main(["bench", "--from-json", str(src), "--json", str(tmp_path / "x.json")]) == 2
    assert cli.main(["bench", "--from-json", str(tmp_path / "missing.json")]) == 2
    assert cli.main(["bench", "--plot", str(src)]) == 2  # an existing file, not a folder
    err = capsys.readouterr().err
    assert "records commit abc1234" in err and "not JSON" in err and "Traceback" not in err


def test_load_result_reads_an_older_file(tmp_path) -> None:
    """A result without the newer fields (device, notes) still renders and plots."""
    result = fixture_result()
    for r in result["results"]:
        del r["device"]
    del result["notes"]
    p = tmp_path / "old.json"
    p.write_text(json.dumps(result))
    loaded = bench.load_result(str(p))
    assert [r["device"] for r in loaded["results"]] == ["cpu", "cuda", "cpu"] * 2
    assert "## Veil benchmark: BFV" in loaded["markdown"]


# ---- the ratio rule -----------------------------------------------------------------------------
def test_cpu_rows_get_no_ratio_against_gpu_peers() -> None:
    result = fixture_result(None)  # a CPU run: Veil CPU and SEAL
    main = bench.main_table(result)
    assert _cells(main, "veil cpu 1t", "veil/Phantom") == [_bench_report.NOT_COMPARABLE] * 2
    assert _cells(main, "SEAL 4.4.0 1t", "veil/Phantom") == [_bench_report.NOT_COMPARABLE] * 2
    # Phantom's number is still shown, for reference
    assert _cells(main, "veil cpu 1t", "Phantom H100 mul+relin HPS") == ["222", "245"]
    ratios = bench.ratio_table(result)
    assert {row[2] for row in ratios.rows} == {"SEAL 4.4.0 1t (same CPU)"}  # never Phantom
    # Veil CPU / SEAL on the same CPU: encrypt is op 3 -> 3000 / 1500
    assert _cells(ratios, "veil cpu 1t", "encrypt") == ["2.00", "2.00"]
    assert _cells(ratios, "veil cpu 1t", "mul+relin HPS") == ["—", "—"]  # SEAL has BEHZ only
    assert "same kind of device" in bench.to_markdown(result)
    # without SEAL a CPU run has no ratio table at all
    assert bench.ratio_table(fixture_result(None, seal=False)) is None


def test_gpu_rows_get_ratios_against_phantom_on_the_same_model() -> None:
    result = fixture_result("NVIDIA H100 80GB HBM3")
    gpu = "veil cuda:0 (NVIDIA H100 80GB HBM3)"
    main = bench.main_table(result)
    # multiply_hps = 70 µs on Veil's GPU; Phantom H100 222 and 245
    assert _cells(main, gpu, "veil/Phantom") == [f"{70 / 222:.2f}", f"{70 / 245:.2f}"]
    assert _cells(main, "veil cpu 1t", "veil/Phantom") == [_bench_report.NOT_COMPARABLE] * 2
    ratios = bench.ratio_table(result)
    peers = {(row[1], row[2]) for row in ratios.rows}
    assert peers == {(gpu, "Phantom H100"), ("veil cpu 1t", "SEAL 4.4.0 1t (same CPU)")}
    # H200: Phantom's H200 column, marked
    h200 = bench.main_table(fixture_result("NVIDIA H200"))
    assert _cells(h200, "veil cuda:0 (NVIDIA H200)", "veil/Phantom") == [
        f"{70 / 213:.2f} (H200)", f"{70 / 235:.2f} (H200)"]
    assert "Phantom H200 mul+relin HPS" in h200.head
    # another GPU model: compared with the H100 column and marked so
    other = bench.main_table(fixture_result("NVIDIA A100-SXM4-80GB"))
    assert _cells(other, "veil cuda:0 (NVIDIA A100-SXM4-80GB)", "veil/Phantom")[0] == (
        f"{70 / 222:.2f} (vs H100)")


# ---- the commit ---------------------------------------------------------------------------------
def _veil_like_repo(path: Path) -> str:
    """A git repository made with dulwich holding python/veil/bench.py; returns its HEAD."""
    porcelain = pytest.importorskip("dulwich.porcelain")
    (path / "python" / "veil").mkdir(parents=True)
    (path / "python" / "veil" / "bench.py").write_text("# stand-in\n")
    repo = porcelain.init(str(path))
    porcelain.add(repo, paths=[str(path / "python" / "veil" / "bench.py")])
    sha = porcelain.commit(repo, message=b"test", author=b"T <t@example.com>",
                           committer=b"T <t@example.com>")
    repo.close()
    return sha.decode()


def test_commit_from_argument_env_or_dulwich(tmp_path, monkeypatch) -> None:
    monkeypatch.delenv("VEIL_GIT_COMMIT", raising=False)
    sha = _veil_like_repo(tmp_path / "repo")
    assert len(sha) == 40
    inside = str(tmp_path / "repo" / "python" / "veil")
    assert bench.git_commit(search=[inside]) == sha  # dulwich reads HEAD, walking up
    monkeypatch.setenv("VEIL_GIT_COMMIT", "FEEDBEEF")
    assert bench.git_commit(search=[inside]) == "feedbeef"  # the environment beats the repo
    assert bench.git_commit("1234abcd", search=[inside]) == "1234abcd"  # --commit beats both
    monkeypatch.delenv("VEIL_GIT_COMMIT")
    outside = tmp_path / "plain"
    outside.mkdir()
    assert bench.git_commit(search=[str(outside)]) is None
    # a repository that is not Veil's does not count
    porcelain = pytest.importorskip("dulwich.porcelain")
    porcelain.init(str(tmp_path / "other")).close()
    assert bench.git_commit(search=[str(tmp_path / "other")]) is None


def test_commit_is_checked(monkeypatch) -> None:
    with pytest.raises(ValueError, match="commit"):
        bench.git_commit("not-a-sha")
    with pytest.raises(ValueError, match="commit"):
        bench.check_commit("abc")  # too short
    monkeypatch.setenv("VEIL_GIT_COMMIT", "main")
    with pytest.raises(ValueError, match="VEIL_GIT_COMMIT"):
        bench.git_commit()
    assert cli.main(["bench", "--quick", "--device", "cpu"]) == 2  # before any timing
    monkeypatch.delenv("VEIL_GIT_COMMIT")
    with pytest.raises(SystemExit) as e:
        cli.main(["bench", "--commit", "xyz"])
    assert e.value.code == 2


def test_unknown_commit_is_recorded_as_none_with_a_hint(monkeypatch, tmp_path, capsys) -> None:
    monkeypatch.delenv("VEIL_GIT_COMMIT", raising=False)
    monkeypatch.setattr(bench, "_repo_head", lambda start: None)  # a copy without .git
    r = bench.run(scheme="bfv", device="cpu", quick=True, seal=False, threads=[1], max_n=4096,
                  runs=3)
    assert r["meta"]["git_commit"] is None
    assert "--commit" in capsys.readouterr().err
    assert any("--commit" in n for n in r["notes"]) and "commit unknown" in r["markdown"]


def test_bench_module_spawns_no_git() -> None:
    for name in ("bench.py", "_bench_report.py", "_bench_plot.py", "_bench_boot.py"):
        text = (REPO / "python" / "veil" / name).read_text()
        assert "subprocess" not in text and "rev-parse" not in text.replace(
            "git rev-parse HEAD)", ""), name


# ---- the CPU name -------------------------------------------------------------------------------
def test_cpu_model_comes_from_py_cpuinfo(monkeypatch) -> None:
    cpuinfo = pytest.importorskip("cpuinfo")
    bench.cpu_model.cache_clear()
    try:
        assert bench.cpu_model() == (cpuinfo.get_cpu_info().get("brand_raw")
                                     or platform.processor() or "unknown")
        monkeypatch.setitem(sys.modules, "cpuinfo", None)  # import cpuinfo -> ImportError
        assert bench.cpu_model() != "" and bench.cpu_model.cache_info().hits >= 1  # cached
        bench.cpu_model.cache_clear()
        assert bench.cpu_model() == (platform.processor() or "unknown")
    finally:
        bench.cpu_model.cache_clear()


# ---- the peers' package data --------------------------------------------------------------------
def test_peers_json_is_package_data() -> None:
    from importlib import resources

    res = resources.files("veil").joinpath("data/peers.json")
    assert res.is_file()
    data = json.loads(res.read_text(encoding="utf-8"))
    assert data["schema"] == 1
    for block in ("phantom", "cheddar"):  # provenance fields
        assert {"source", "measured_on", "what", "units", "gpus"} <= set(data[block])
        assert data[block]["units"] == "us" and data[block]["device"] == "gpu"
    assert data["bootstrapping"]["units"] == "ms"


def test_peers_loader_matches_anchors() -> None:
    peers = bench.load_peers()
    # values read by eye from ANCHORS.md
    assert bench.PHANTOM_BFV[(16384, "7×54 + 1×60")]["HPS"]["multiply"] == (408.0, 401.0)
    assert bench.PHANTOM_BFV[(4096, "2×35 + 1×38")]["BEHZ"]["decrypt"] == (51.0, 47.0)
    assert bench.PHANTOM_CKKS[(65536, "1×60 + 29×40 + 6×60")]["CKKS"]["decode"] == (3289.0,
                                                                                    2666.0)
    assert bench.PHANTOM_BGV[(65536, "32×36 + 15×39 + 1×40")]["BGV"]["encrypt"] == (1842.0,
                                                                                    1769.0)
    from veil import _bench_boot, _bench_rows

    assert _bench_rows.CHEDDAR_H100[("bootparam_40_64bit", 26)]["rotate"] == 772.0
    assert _bench_boot.PEERS[0] == ("Cheddar bootparam_40 (32-bit), H100, measured", 23.582)
    assert [len(bench.PHANTOM[s]) for s in ("bfv", "bgv", "ckks")] == [13, 13, 14]
    assert [r["special"] for r in peers["phantom"]["tables"]["ckks"]["rows"]] == [
        1, 1, 1, 2, 1, 2, 3, 4, 1, 2, 3, 4, 5, 6]
    assert bench.load_peers() is peers  # loaded once


def test_peers_schema_check_names_the_entry() -> None:
    from veil._bench_rows import check_peers

    good = bench.load_peers()
    check_peers(copy.deepcopy(good))
    bad = copy.deepcopy(good)
    bad["phantom"]["tables"]["bfv"]["rows"][1]["variants"]["HPS"]["multiply"]["H100"] = -1
    with pytest.raises(ValueError, match=r"phantom\.tables\.bfv\.rows\[1\]\.HPS\.multiply\.H100"):
        check_peers(bad)
    bad = copy.deepcopy(good)
    bad["phantom"]["tables"]["ckks"]["rows"][0]["log_qp"] = 161  # primes sum to 160
    with pytest.raises(ValueError, match=r"ckks\.rows\[0\]"):
        check_peers(bad)
    bad = copy.deepcopy(good)
    del bad["cheddar"]
    with pytest.raises(ValueError, match="cheddar"):
        check_peers(bad)
    bad = copy.deepcopy(good)
    bad["phantom"]["tables"]["bgv"]["rows"][0]["variants"]["BGV"]["bootstrap"] = {"H100": 1,
                                                                                  "H200": 1}
    with pytest.raises(ValueError, match="unknown ops"):
        check_peers(bad)
    with pytest.raises(ValueError, match="schema"):
        check_peers({"schema": 2})


@pytest.mark.skipif(not ANCHORS.is_file(), reason="the anchors page is not on this machine")
def test_peers_json_is_up_to_date_with_anchors() -> None:
    pytest.importorskip("markdown_it")
    p = subprocess.run([sys.executable, str(REPO / "bench" / "peers_from_anchors.py"),
                        str(ANCHORS), "--check"], capture_output=True, text=True, timeout=120,
                       check=False)
    assert p.returncode == 0, p.stdout + p.stderr


def test_wheel_ships_peers_json() -> None:
    """scikit-build-core's wheel.packages = ["python/veil"] copies every unignored file."""
    pathutil = pytest.importorskip("scikit_build_core.build._pathutil")
    try:
        files = {str(t) for _, t in pathutil.iter_package_files(
            packages={"veil": str(REPO / "python" / "veil")}, include=[], src_exclude=[],
            target_exclude=[], build_dir=str(REPO / "build" / "none"), mode="default")}
    except (TypeError, AttributeError):  # a private helper: another version, another signature
        pytest.skip("scikit-build-core's file walker differs in this version")
    assert os.path.join("veil", "data", "peers.json") in files
