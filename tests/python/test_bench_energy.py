"""Tests of ``veil bench --energy`` (veil._energy) with stand-ins for NVML.

No GPU or NVML is needed: a fake ``pynvml`` with a deterministic clock, energy counter and power
gives known answers, computed here by hand (the oracles do not call veil._energy's arithmetic).
"""

from __future__ import annotations

import json
import math
import sys
import time
import types

import pytest
from veil import _bench_ops, _bench_rows, _energy, bench, cli


# ---- a fake GPU board and NVML ------------------------------------------------------------------
class FakeNVMLError(Exception):
    pass


class FakeBoard:
    """A board whose time moves only when the meter sleeps (idle) or an op runs (busy).

    The energy counter reads the integral of the power up to the last multiple of ``step_s``
    (NVML's coarse update), in whole millijoules. ``events`` logs reads, ops and syncs in order.
    """

    def __init__(self, t0: float = 0.0, idle_w: float = 60.0, busy_w: float = 300.0,
                 op_s: float = 0.001, step_s: float | None = None,
                 power: types.FunctionType | None = None) -> None:
        self.t = t0
        self.idle_w, self.busy_w, self.op_s, self.step_s = idle_w, busy_w, op_s, step_s
        self.segments: list[tuple[float, float, float]] = []  # (start, end, watts)
        self.power = power  # power(t) in W for the power-sample fallback
        self.events: list[str] = []

    def advance(self, dt: float, watts: float) -> None:
        self.segments.append((self.t, self.t + dt, watts))
        self.t += dt

    def clock(self) -> float:
        return self.t

    def sleep(self, dt: float) -> None:
        self.advance(dt, self.idle_w)

    def op(self) -> None:
        self.events.append("op")
        self.advance(self.op_s, self.busy_w)

    def sync(self) -> None:
        self.events.append("sync")

    def energy_j(self, at: float) -> float:
        return sum(w * (min(b, at) - a) for a, b, w in self.segments if a < at)

    def counter_mj(self) -> int:
        self.events.append("read")
        at = self.t
        if self.step_s:
            at = math.floor(at / self.step_s + 1e-9) * self.step_s
        return round(1000 * self.energy_j(at))


def fake_nvml(board: FakeBoard, counter: bool = True, power: bool = True,
              init_error: bool = False) -> types.ModuleType:
    m = types.ModuleType("pynvml")
    m.NVMLError = FakeNVMLError
    m.calls = []

    def init() -> None:
        m.calls.append("init")
        if init_error:
            raise FakeNVMLError("Driver Not Loaded")

    def energy(handle: object) -> int:
        if not counter:
            raise FakeNVMLError("Not Supported")
        return board.counter_mj()

    def power_mw(handle: object) -> int:
        m.calls.append("power")
        if not power:
            raise FakeNVMLError("Not Supported")
        w = board.power(board.t) if board.power else board.idle_w
        return round(1000 * w)

    m.nvmlInit = init
    m.nvmlShutdown = lambda: m.calls.append("shutdown")
    m.nvmlDeviceGetHandleByIndex = lambda i: ("index", i)
    m.nvmlDeviceGetHandleByUUID = lambda u: ("uuid", u)
    m.nvmlDeviceGetName = lambda h: b"Fake H100"
    m.nvmlDeviceGetTotalEnergyConsumption = energy
    m.nvmlDeviceGetPowerUsage = power_mw
    return m


def meter_on(board: FakeBoard, **kw) -> _energy.EnergyMeter:
    nvml = fake_nvml(board, **kw)
    m = _energy.open_meter("cuda:0", nvml=nvml, sync=board.sync, env={})
    m.clock, m.sleep = board.clock, board.sleep
    return m


# ---- the arithmetic -----------------------------------------------------------------------------
def test_reps_follow_the_median() -> None:
    assert _energy.reps_for(1000.0, 1.0) == 1000  # 1 ms ops fill 1 s with 1000
    assert _energy.reps_for(300.0, 1.0) == 3334  # ceil(3333.3)
    assert _energy.reps_for(2_000_000.0, 1.0) == 2  # at least two
    assert _energy.reps_for(0.001, 1.0) == _energy.MAX_REPS
    assert _energy.reps_for(0.0) == _energy.MAX_REPS


def test_energy_per_op_is_counter_difference_over_reps() -> None:
    # The counter moves only while ops run (idle 0 W), so it never "steps" while the meter waits:
    # readings are unaligned and energy per op must be exactly (E1 - E0) / reps.
    board = FakeBoard(idle_w=0.0, busy_w=250.0, op_s=0.002)
    m = meter_on(board)
    assert m.method == "counter" and m.name == "Fake H100"
    e0 = board.counter_mj()
    r = m.measure(board.op, median_us=2000.0, idle_w=0.0, window_s=1.0)
    e1 = board.counter_mj()
    assert r["reps"] == 500 and board.events.count("op") == 500
    assert r["energy_uj"] == pytest.approx((e1 - e0) * 1000 / 500)  # mJ -> µJ, per op
    assert r["energy_uj"] == pytest.approx(500_000.0)  # 250 W x 2 ms = 0.5 J
    assert r["mean_w"] == pytest.approx(250.0)
    assert r["window_s"] == pytest.approx(1.0) and r["loop_us"] == pytest.approx(2000.0)
    assert r["energy_above_idle_uj"] == pytest.approx(500_000.0)
    # the device is synchronized after the last op and before the closing reading
    last_op = len(board.events) - 1 - board.events[::-1].index("op")
    tail = board.events[last_op + 1:]
    assert "sync" in tail and tail.index("sync") < tail.index("read")
    assert board.events.index("sync") < board.events.index("op")  # and before the loop


def test_stepped_counter_is_aligned_and_idle_is_subtracted() -> None:
    # 100 ms counter steps, loop starting off a step: without aligning to the steps and taking
    # off the idle tail, the result would be off by up to 30 J in 300 J (10 %).
    board = FakeBoard(t0=0.037, idle_w=60.0, busy_w=300.0, op_s=0.001, step_s=0.1)
    m = meter_on(board)
    idle = m.idle_w()
    assert idle == pytest.approx(60.0, rel=1e-3)
    r = m.measure(board.op, median_us=1000.0, idle_w=idle)
    assert r["reps"] == 1000
    assert r["energy_uj"] == pytest.approx(300_000.0, rel=1e-3)  # 300 W x 1 ms
    assert r["energy_above_idle_uj"] == pytest.approx(240_000.0, rel=1e-3)  # (300 - 60) W x 1 ms
    assert r["mean_w"] == pytest.approx(300.0, rel=1e-3)
    assert r["idle_w"] == idle and r["method"] == "counter"


def test_summarize_above_idle() -> None:
    # 2 J over 0.5 s in 100 reps with 1.5 W idle: 20 mJ each, (2 - 0.75) / 100 = 12.5 mJ above
    r = _energy.summarize(2.0, 0.5, 100, 1.5, "counter")
    assert r["energy_uj"] == pytest.approx(20_000.0)
    assert r["energy_above_idle_uj"] == pytest.approx(12_500.0)
    assert r["mean_w"] == pytest.approx(4.0) and r["loop_us"] == pytest.approx(5000.0)
    assert _energy.summarize(2.0, 0.5, 100, None, "power")["energy_above_idle_uj"] is None


def test_trapezoid_by_hand() -> None:
    samples = [(0.0, 100.0), (0.5, 200.0), (1.5, 200.0), (2.0, 100.0)]
    # 0.5 s x 150 W + 1 s x 200 W + 0.5 s x 150 W
    assert _energy.trapezoid_j(samples) == pytest.approx(75.0 + 200.0 + 75.0)
    assert _energy.trapezoid_j(samples[::-1]) == pytest.approx(350.0)  # order does not matter
    assert _energy.trapezoid_j([(3.0, 80.0)]) == 0.0


def test_power_fallback_integrates_samples() -> None:
    # No energy counter: power samples in a thread, integrated. Power rises linearly with the
    # board's time, P(t) = 100 + 50 t W, so the trapezoid is exact wherever the samples fall:
    # over t = 2..3 s, the integral is 100 + 25 (3^2 - 2^2) = 225 J.
    board = FakeBoard(t0=2.0, op_s=0.001, power=lambda t: 100.0 + 50.0 * t)
    m = meter_on(board, counter=False)
    assert m.method == "power"

    def op() -> None:  # real time passes too, so the sampler thread takes samples meanwhile
        board.op()
        time.sleep(0.0002)

    before = m.nvml.calls.count("power")
    r = m.measure(op, median_us=1000.0, idle_w=100.0)
    assert m.nvml.calls.count("power") - before > 4  # start, end and the thread's samples
    assert r["reps"] == 1000 and r["method"] == "power"
    assert r["window_s"] == pytest.approx(1.0)
    assert r["energy_uj"] == pytest.approx(225_000.0, rel=1e-4)  # 225 J / 1000
    assert r["mean_w"] == pytest.approx(225.0, rel=1e-4)
    assert r["energy_above_idle_uj"] == pytest.approx(125_000.0, rel=1e-4)  # (225 - 100) / 1000


# ---- skipping cleanly ---------------------------------------------------------------------------
def test_missing_package_driver_or_support(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import pynvml -> ImportError
    with pytest.raises(_energy.EnergyUnavailable, match="nvidia-ml-py is not installed"):
        _energy.open_meter("cuda:0")
    board = FakeBoard()
    with pytest.raises(_energy.EnergyUnavailable, match="NVML cannot start"):
        _energy.open_meter("cuda:0", nvml=fake_nvml(board, init_error=True), env={})
    nvml = fake_nvml(board, counter=False, power=False)
    with pytest.raises(_energy.EnergyUnavailable, match="neither energy nor power"):
        _energy.open_meter("cuda", nvml=nvml, env={})
    assert nvml.calls[0] == "init" and nvml.calls[-1] == "shutdown"  # NVML is shut again
    with pytest.raises(_energy.EnergyUnavailable, match="GPUs only"):
        _energy.open_meter("cpu", nvml=fake_nvml(board))


def test_cuda_visible_devices_maps_to_nvml() -> None:
    board = FakeBoard()
    nvml = fake_nvml(board)
    m = _energy.open_meter("cuda:1", nvml=nvml, sync=board.sync, env={"CUDA_VISIBLE_DEVICES": "3,5"})
    assert m.handle == ("index", 5)
    m = _energy.open_meter("cuda:0", nvml=nvml, sync=board.sync,
                           env={"CUDA_VISIBLE_DEVICES": "GPU-abc"})
    assert m.handle == ("uuid", "GPU-abc")
    m.close()
    m.close()  # closing twice is harmless
    assert nvml.calls.count("shutdown") == 1


def test_bench_notice_without_pynvml(monkeypatch, capsys) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", None)
    be = [bench.Backend("veil", "cuda:0", None, "veil cuda:0 (Fake)")]
    notes: list[str] = []
    assert bench._open_meters(be, notes, True, 1.0) == {}
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "nvidia-ml-py is not installed" in err[0]
    assert "timing runs as usual" in err[0] and notes == [err[0].removeprefix("veil bench: ")]


def test_bench_on_cpu_skips_energy_and_still_times(capsys) -> None:
    r = bench.run(scheme="bfv", device="cpu", quick=True, seal=False, threads=[1], max_n=4096,
                  energy=True)
    # (a copy without .git adds a line asking for --commit)
    err = [x for x in capsys.readouterr().err.strip().splitlines() if "--commit" not in x]
    assert len(err) == 1 and "the device is the CPU" in err[0]
    assert any("Energy not measured" in n for n in r["notes"])
    assert r["all_correct"] and r["results"]
    for x in r["results"]:
        assert all(v > 0 for v in x["median_us"].values()) and "energy" not in x
    assert "Energy per operation" not in r["markdown"]
    assert r["meta"]["energy"]["measured"] == []
    r = bench.run(scheme="bfv", device="cpu", quick=True, seal=False, threads=[1], max_n=4096,
                  verbose=False)
    assert "energy" not in r["meta"] and not any("Energy" in n for n in r["notes"])


# ---- the bench with a (fake) meter --------------------------------------------------------------
class WallBoard:
    """A counter that grows at 200 W of real time (1 mJ resolution): any loop reads 200 W."""

    def __init__(self) -> None:
        self.clock = time.perf_counter
        self.t0 = self.clock()

    def counter_mj(self) -> int:
        return round(200_000 * (self.clock() - self.t0))


def test_bench_reports_energy_in_json_and_markdown(monkeypatch, tmp_path) -> None:
    wall = WallBoard()
    nvml = fake_nvml(FakeBoard())
    nvml.nvmlDeviceGetTotalEnergyConsumption = lambda h: wall.counter_mj()
    meter = _energy.open_meter("cuda:0", nvml=nvml, sync=lambda: None, env={}, window_s=0.02)
    monkeypatch.setattr(_energy, "IDLE_S", 0.05)
    monkeypatch.setattr(_energy, "IDLE_SETTLE_S", 0.0)
    # the CPU backend stands in for a GPU one: run() hands it the fake meter
    monkeypatch.setattr(bench, "_open_meters", lambda backends, notes, verbose, w: {"cpu": meter})
    jpath, mpath = tmp_path / "e.json", tmp_path / "e.md"
    r = bench.run(scheme="ckks", device="cpu", quick=True, seal=False, threads=[1],
                  max_n=8192, json_path=str(jpath), markdown_path=str(mpath), verbose=False,
                  energy=True, energy_window_s=0.02)
    assert r["all_correct"]
    x = r["results"][0]
    ops = set(bench.OPS_BY_SCHEME["ckks"])
    assert set(x["energy"]) == ops == set(x["median_us"])
    for e in x["energy"].values():
        assert e["method"] == "counter" and e["reps"] >= 2
        assert e["mean_w"] == pytest.approx(200.0, rel=0.05)
        assert e["energy_uj"] == pytest.approx(200.0 * e["loop_us"], rel=0.05)  # W x µs = µJ
        assert e["energy_above_idle_uj"] == pytest.approx(
            e["energy_uj"] - x["idle_w"] * e["loop_us"])
    assert x["idle_w"] == pytest.approx(200.0, rel=0.05)
    on_disk = json.loads(jpath.read_text())
    assert on_disk["results"][0]["energy"]["multiply"]["energy_uj"] == pytest.approx(
        x["energy"]["multiply"]["energy_uj"])
    assert on_disk["meta"]["energy"]["methods"] == {"cpu": "counter"}
    md = mpath.read_text()
    assert "Energy per operation (NVML energy counter" in md and "energy mul+relin" in md
    table = [" ".join(x.split()) for x in md[md.index("Energy per operation"):].splitlines()]
    assert table[2].startswith("| params | backend | idle W | mean W | keygen |")
    assert " / " in table[4] and ("mJ" in table[4] or "µJ" in table[4])


def test_markdown_energy_formatting() -> None:
    assert bench.fmt_uj(None) == "—"
    assert bench.fmt_uj(512.0) == "512 µJ"
    assert bench.fmt_uj(33_200.0) == "33.2 mJ"
    assert bench.fmt_uj(1_204_000.0) == "1.2 J"
    assert bench.fmt_uj(999_700.0) == "1 J" and bench.fmt_uj(999.6) == "1 mJ"
    assert bench.fmt_uj(-2.5) == "-2.5 µJ"


def test_time_suite_without_meter_has_no_energy() -> None:
    row = _bench_rows.select_rows("default", True, 4096, "bfv")[0]
    out = _bench_ops.bench_veil(row, "cpu", _bench_ops.policy_for("cpu", True, 3))
    assert "energy" not in out and "idle_w" not in out


# ---- the command line ---------------------------------------------------------------------------
def test_cli_accepts_energy(monkeypatch) -> None:
    p = cli.build_parser()
    assert p.parse_args(["bench", "--energy"]).energy is True
    assert p.parse_args(["bench"]).energy is False
    seen = {}

    def fake_run(**kw):
        seen.update(kw)
        return {"all_correct": True}

    monkeypatch.setattr(bench, "run", fake_run)
    assert cli.main(["bench", "--device", "cpu", "--quick", "--energy"]) == 0
    assert seen["energy"] is True
    assert cli.main(["bench", "--device", "cpu", "--quick"]) == 0
    assert seen["energy"] is False


def test_failed_reading_keeps_the_timings(monkeypatch) -> None:
    # A counter that runs backwards mid-run: that op's energy is an error, its timing stays.
    readings = iter(range(10**6, 0, -7))
    nvml = fake_nvml(FakeBoard())
    nvml.nvmlDeviceGetTotalEnergyConsumption = lambda h: next(readings)
    meter = _energy.open_meter("cuda:0", nvml=nvml, sync=lambda: None, env={}, window_s=0.005)
    monkeypatch.setattr(_energy, "IDLE_S", 0.01)
    monkeypatch.setattr(_energy, "IDLE_SETTLE_S", 0.0)
    row = _bench_rows.select_rows("default", True, 4096, "bfv")[0]
    out = _bench_ops.bench_veil(row, "cpu", _bench_ops.policy_for("cpu", True, 3), meter)
    assert all(out["correct"].values()) and set(out["median_us"]) == set(bench.OPS)
    assert set(out["energy"]) == set(bench.OPS)
    assert all("went backwards" in e["error"] for e in out["energy"].values())
    result = {"meta": {"scheme": "bfv"}, "results": [
        {"row": {"name": row.name}, "backend": "veil cpu 1t", "idle_w": None, **out}]}
    table = bench.energy_table(result)
    assert all(c == "reading failed" for c in table.rows[0][4:])
    assert table.title.startswith("Energy per operation (NVML;")
    assert "reading failed" in bench.markdown_table(table)


@pytest.mark.gpu
def test_bench_energy_on_the_gpu() -> None:
    """The real thing where a GPU and nvidia-ml-py are present: plausible, positive figures."""
    pytest.importorskip("pynvml")
    r = bench.run(scheme="ckks", device="cuda", quick=True, seal=False, max_n=8192, runs=5,
                  verbose=False, energy=True, energy_window_s=0.3)
    assert r["all_correct"]
    if not r["meta"]["energy"]["measured"]:
        pytest.skip("; ".join(n for n in r["notes"] if "Energy" in n))
    for x in r["results"]:
        assert 0 < x["idle_w"] < 2000
        for e in x["energy"].values():
            assert "error" not in e, e
            assert e["energy_uj"] > 0 and 0 < e["mean_w"] < 2000 and e["reps"] >= 2
    assert "Energy per operation" in r["markdown"]
