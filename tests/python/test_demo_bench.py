"""Tests of the demo (encrypted tumour classification), the benchmark and the ``veil`` CLI.

Timings are never asserted (DESIGN.md, Tests); only structure and exactness are.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import numpy as np
import pytest
import veil
from conftest import has_gpu
from veil import bench, cli
from veil.apps import demo, demo_ckks

sklearn = pytest.importorskip("sklearn")


# ---- demo: pure functions -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def data() -> demo.Dataset:
    return demo.load_data()


@pytest.fixture(scope="module")
def model(data: demo.Dataset) -> demo.FloatModel:
    return demo.train_model(data.x_train, data.y_train)


def test_data_split_is_stratified_and_standardized(data: demo.Dataset) -> None:
    assert data.x_train.shape[1] == data.x_test.shape[1] == demo.N_FEATURES
    assert len(data.x_train) + len(data.x_test) == 569
    # Stratified: the malignant fraction matches within one sample.
    frac_tr, frac_te = data.y_train.mean(), data.y_test.mean()
    assert abs(frac_tr - frac_te) < 1.0 / len(data.y_test) + 1e-9
    # Standardized on the training rows (up to clipping) and clipped.
    assert np.allclose(data.x_train.mean(axis=0), 0.0, atol=0.05)
    assert np.abs(data.x_test).max() <= demo.CLIP


def test_standardize_fits_on_train_only() -> None:
    tr = np.array([[0.0, 10.0], [2.0, 10.0]])
    te = np.array([[4.0, 11.0]])
    a, b = demo.standardize(tr, te, clip=100.0)
    assert np.allclose(a, [[-1.0, 0.0], [1.0, 0.0]])  # zero-variance column stays finite
    assert np.allclose(b, [[3.0, 1.0]])


def test_quantization_keeps_decisions(data: demo.Dataset, model: demo.FloatModel) -> None:
    q = demo.quantize_model(model)
    xq = demo.quantize_features(data.x_test)
    float_dec = model.scores(data.x_test) > 0
    q_dec = q.scores(xq) > 0
    assert np.mean(float_dec == q_dec) >= 0.98
    # The integer score approximates the float score times 2^(2 s_x + s_w).
    scale = 2.0 ** (2 * q.s_x + q.s_w)
    err = np.abs(q.scores(xq) / scale - model.scores(data.x_test))
    assert np.median(err) < 0.1


def test_quantize_features_range() -> None:
    x = np.array([[-100.0, -0.5, 0.0, 0.26, 100.0]])
    xq = demo.quantize_features(x, s_x=4, clip=6.0)
    assert xq.dtype == np.int64
    assert xq.tolist() == [[-96, -8, 0, 4, 96]]


def test_quantized_scales_are_consistent() -> None:
    m = demo.FloatModel(w=np.array([0.5, -0.25]), v=np.array([0.125, 0.0]), b=-1.0)
    q = demo.quantize_model(m, s_x=2, s_w=3, clip=4.0)
    # x = (1, 2) -> xq = (4, 8); score_float = 0.5 - 0.5 + 0.125 - 1 = -0.875
    xq = np.array([[4, 8]])
    assert q.scores(xq)[0] == round(-0.875 * 2 ** (2 * 2 + 3))
    assert q.x_max == 16


def test_score_bound_covers_worst_case() -> None:
    q = demo.QuantizedModel(w=np.array([3, -2]), v=np.array([-1, 5]), b=-7, s_x=0, s_w=0, x_max=4)
    bound = q.score_bound()
    assert bound == (3 + 2) * 4 + (1 + 5) * 16 + 7
    grid = np.array([[a, b] for a in range(-4, 5) for b in range(-4, 5)])
    assert np.abs(q.scores(grid)).max() <= bound


def test_plain_modulus_bound_check() -> None:
    demo.check_plain_modulus(32768, 65537)  # t = 65537 decodes into [-32768, 32768]
    with pytest.raises(ValueError, match="plain_modulus"):
        demo.check_plain_modulus(32769, 65537)
    with pytest.raises(ValueError, match="bound"):
        demo.check_plain_modulus(-1, 65537)
    t = demo.choose_plain_modulus(10**7, 8192)
    assert t > 2 * 10**7 and t % (2 * 8192) == 1
    assert t == veil.PlainModulus.batching(8192, t.bit_length())


def test_packing_layout_and_unpacking() -> None:
    n_slots, block = 8192, demo.BLOCK
    rng = np.random.default_rng(0)
    xq = rng.integers(-96, 97, size=(300, 30))
    packed = demo.pack_features(xq, n_slots)
    per = demo.samples_per_ciphertext(n_slots)
    assert per == 256 and len(packed) == 2
    assert all(v.shape == (n_slots,) and v.dtype == np.int64 for v in packed)
    blocks = packed[0].reshape(per, block)
    assert np.array_equal(blocks[:, :30], xq[:256])
    assert not blocks[:, 30:].any()  # two zero pads per sample
    assert not packed[1].reshape(per, block)[300 - 256 :].any()  # unused blocks are zero
    # The plaintext model of the rotate-and-add block sum puts each block's sum in slot 32 i.
    w = rng.integers(-50, 51, size=30)
    prods = [v * demo.tile_vector(w, n_slots) for v in packed]
    sums = [demo.block_sum_plain(p) + demo.bias_vector(7, n_slots) for p in prods]
    assert np.array_equal(demo.unpack_scores(sums, 300), xq @ w + 7)


def test_block_sum_steps_and_rows() -> None:
    assert demo.block_sum_steps(32) == [16, 8, 4, 2, 1]
    # Blocks never straddle the two rows: a block sum never mixes the rows.
    v = np.zeros(8192, dtype=np.int64)
    v[4096 - 32 : 4096] = 1  # last block of row 0
    s = demo.block_sum_plain(v)
    assert s[4096 - 32] == 32 and s[0] == 0
    with pytest.raises(ValueError):
        demo.samples_per_ciphertext(8192, block=24)


def test_unpack_scores_rejects_too_many() -> None:
    with pytest.raises(ValueError, match="n_samples"):
        demo.unpack_scores([np.zeros(64, dtype=np.int64)], 3, block=32)


# ---- demo: the encrypted pipeline ---------------------------------------------------------------
def test_demo_run_cpu_is_exact() -> None:
    r = demo.run(device="cpu", seed=1, verbose=False)
    assert r["exact"], f"{r['mismatches']} decrypted scores differ from the plaintext model"
    assert r["agreement"] == 1.0
    assert r["accuracy"] > 0.9
    assert r["accuracy"] == r["quantized_accuracy"]
    assert r["n_test"] == 143 and r["n_ciphertexts"] == 1
    assert 2 * r["score_bound"] < r["params"]["plain_modulus"]
    assert r["params"]["security"] == 128
    assert r["noise_budget_bits"] > 0
    assert all(v > 0 for v in r["times_s"].values())


def test_demo_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="scheme"):
        demo.run(device="cpu", scheme="bgv", verbose=False)
    with pytest.raises(ValueError):
        demo.run(device="tpu", verbose=False)


@pytest.mark.gpu
def test_demo_run_gpu_is_exact() -> None:
    r = demo.run(device="cuda", seed=1, verbose=False)
    assert r["exact"] and r["agreement"] == 1.0 and r["accuracy"] > 0.9


# ---- CKKS demo ----------------------------------------------------------------------------------
def test_fit_sigmoid_is_odd_around_one_half() -> None:
    c = demo_ckks.fit_sigmoid(8.0)
    assert c.shape == (4,)
    assert c[0] == pytest.approx(0.5, abs=1e-12) and abs(c[2]) < 1e-12  # sigmoid - 1/2 is odd
    assert c[1] > 0 > c[3]
    z = np.linspace(-8, 8, 101)
    # Kim et al. (HELR, 2018), least squares on [-8, 8]: 0.5 + 0.15012 x - 0.001593 x^3
    assert c[1] == pytest.approx(0.15012, abs=1e-4) and c[3] == pytest.approx(-0.001593, abs=1e-5)
    assert np.abs(demo_ckks.poly_eval(c, z) - demo_ckks.sigmoid(z)).max() < 0.12
    # decisions agree with the sign of the score inside the fit interval
    assert np.array_equal(demo_ckks.poly_eval(c, z) > 0.5, z > 0)
    with pytest.raises(ValueError, match="radius"):
        demo_ckks.fit_sigmoid(0.0)
    with pytest.raises(ValueError, match="degree"):
        demo_ckks.fit_sigmoid(1.0, degree=0)
    assert demo_ckks.format_poly([0.5, 0.25, 0.0, -1e-3]) == "0.5 + 0.25 s + 0 s² - 0.001 s³"
    # the server's normalized form: the same polynomial in u = s / R
    d = demo_ckks.normalized_coeffs(c, 8.0)
    assert np.allclose(demo_ckks.poly_eval(d, z / 8.0), demo_ckks.poly_eval(c, z), atol=1e-12)


def test_ckks_packing_layout() -> None:
    rng = np.random.default_rng(0)
    x = rng.normal(size=(300, 30))
    packed = demo_ckks.pack_real(x, 8192)
    assert len(packed) == 2 and all(v.shape == (8192,) for v in packed)
    blocks = packed[0].reshape(256, demo.BLOCK)
    assert np.array_equal(blocks[:, :30], x[:256]) and not blocks[:, 30:].any()
    w = rng.normal(size=30)
    sums = [demo_ckks.tile_real(w, 8192) * v for v in packed]
    block_sums = [s.reshape(-1, demo.BLOCK).sum(axis=1).repeat(demo.BLOCK) for s in sums]
    assert np.allclose(demo_ckks.first_slots(block_sums, 300), x @ w)
    with pytest.raises(ValueError, match="n_samples"):
        demo_ckks.first_slots([np.zeros(64)], 3)
    with pytest.raises(ValueError, match="x"):
        demo_ckks.pack_real(np.zeros((2, 40)), 8192)


def test_demo_run_ckks_cpu_agrees() -> None:
    r = demo.run(device="cpu", seed=1, scheme="ckks", verbose=False)
    assert r["scheme"] == "ckks" and r["passed"]
    assert r["agreement"] >= demo_ckks.AGREEMENT_MIN
    assert r["float_agreement"] >= 0.97
    assert r["accuracy"] > 0.9
    assert r["max_abs_error"] < 1e-4  # decrypted probabilities vs the plaintext polynomial
    assert r["n_test"] == 143 and r["n_ciphertexts"] == 1
    p = r["params"]
    assert p["security"] == 128 and p["poly_modulus_degree"] == demo_ckks.POLY_MODULUS_DEGREE
    assert p["coeff_modulus_bits"] == demo_ckks.COEFF_MODULUS_BITS
    assert r["final_level"] == 0
    assert all(v > 0 for v in r["times_s"].values()) and r["samples_per_s"] > 0


def test_cli_demo_ckks_subprocess() -> None:
    p = subprocess.run([sys.executable, "-m", "veil.cli", "demo", "--scheme", "ckks", "--device",
                        "cpu", "--seed", "3"], capture_output=True, text=True, timeout=300,
                       check=False)
    assert p.returncode == 0, p.stderr
    assert "agreement with plaintext polynomial" in p.stdout and "CKKS" in p.stdout


@pytest.mark.gpu
def test_demo_run_ckks_gpu_agrees() -> None:
    r = demo.run(device="cuda", seed=1, scheme="ckks", verbose=False)
    assert r["passed"] and r["agreement"] >= 0.99 and r["accuracy"] > 0.9


# ---- benchmark ----------------------------------------------------------------------------------
def test_bench_rows_match_anchors() -> None:
    rows = bench.phantom_rows()
    assert len(rows) == 13
    assert [r.special for r in rows] == [1, 1, 1, 2, 1, 1, 4, 1, 1, 8, 1, 1, 16]
    assert bench.parse_bit_sizes("7×54 + 1×60") == [54] * 7 + [60]
    assert bench.parse_bit_sizes("2x35+1x38") == [35, 35, 38]
    with pytest.raises(ValueError):
        bench.parse_bit_sizes("7 by 54")
    r = next(r for r in rows if r.n == 16384 and r.special == 4)
    assert r.bit_sizes == [36] * 8 + [37] * 2 + [38] * 2
    assert bench.PHANTOM_BFV[(8192, "3×54 + 1×56")]["HPS"]["multiply"] == (245.0, 235.0)
    assert [r.n for r in bench.default_rows()] == [8192, 16384, 32768, 65536]
    assert bench.default_rows()[-1].plain_modulus == 786433
    for r in rows:  # every Phantom row's prime list reproduces ANCHORS's log QP
        assert sum(q.bit_length() for q in r.primes()) == sum(r.bit_sizes)


def test_bench_quick_cpu(tmp_path) -> None:
    jpath, mpath = tmp_path / "b.json", tmp_path / "b.md"
    r = bench.run(scheme="bfv", device="cpu", quick=True, seal=False, threads=[1],
                  json_path=str(jpath), markdown_path=str(mpath), verbose=False)
    assert r["all_correct"]
    veil_rows = [x for x in r["results"] if x["kind"] == "veil"]
    assert len(veil_rows) == 2
    for x in veil_rows:
        assert "error" not in x, x.get("error")
        assert set(x["median_us"]) == set(bench.OPS)
        assert all(v > 0 for v in x["median_us"].values())
        assert all(x["correct"].values())
    assert isinstance(r["markdown"], str) and re.search(r"^\| params +\| log QP +\|", r["markdown"],
                                                         re.M)
    assert mpath.read_text() == r["markdown"]
    on_disk = json.loads(jpath.read_text())
    assert on_disk["meta"]["cpu_model"] and on_disk["results"][0]["median_us"]["keygen"] > 0


def test_bench_rows_bgv_ckks_match_anchors() -> None:
    bgv = bench.phantom_rows("bgv")
    assert len(bgv) == 13 and all(r.scheme == "bgv" for r in bgv)
    assert [r.special for r in bgv] == [1, 1, 1, 2, 1, 1, 4, 1, 1, 8, 1, 1, 16]
    assert bench.PHANTOM_BGV[(4096, "2×35 + 1×38")]["BGV"]["multiply"] == (121.0, 108.0)
    ckks = bench.phantom_rows("ckks")
    assert len(ckks) == 14 and all(r.plain_modulus is None for r in ckks)
    assert [r.special for r in ckks] == [1, 1, 1, 2, 1, 2, 3, 4, 1, 2, 3, 4, 5, 6]
    assert bench.PHANTOM_CKKS[(16384, "1×60 + 5×40 + 2×60")]["CKKS"]["rescale"] == (58.0, 56.0)
    anchors_log_qp = [160, 200, 400, 380, 880, 860, 800, 740, 1760, 1740, 1760, 1700, 1720, 1580]
    assert [sum(r.bit_sizes) for r in ckks] == anchors_log_qp
    for r in ckks + bgv:  # the generated primes have the rows' bit sizes
        assert [q.bit_length() for q in r.primes()] == r.bit_sizes
    # rows beyond the 128-bit bound are run with security=None and marked
    assert not ckks[8].secure() and ckks[9].secure()
    ctx, secure = bench.make_context(ckks[8])
    assert not secure and ctx.security is None and ctx.alpha == ckks[8].special
    assert len(bench.select_rows(quick=True, scheme="bgv")) == 2
    assert [r.special for r in bench.select_rows(quick=True, scheme="bgv")] == [1, 2]
    # "all" for CKKS: the defaults that equal Phantom rows appear once
    names = [r.name for r in bench.select_rows("all", scheme="ckks")]
    assert len(names) == len(set(names)) == 15 + 1 + 4  # + the 32-bit row and Cheddar's shapes


def test_bench_words32_rows() -> None:
    bfv, bgv, ckks = (bench.select_rows("words32", scheme=s) for s in ("bfv", "bgv", "ckks"))
    assert [r.n for r in bfv] == [16384, 65536] and [r.n for r in bgv] == [65536]
    for r in bfv + bgv + ckks:
        assert r.word_bits == 32 and all(b in (30, 31) for b in r.bit_sizes)
    # Beside Phantom's row of the same N with at least its log Q (Phantom's numbers attached).
    assert bfv[0].phantom()["HPS"]["multiply"] == (408.0, 401.0)
    assert sum(bfv[0].bit_sizes[:-1]) >= 7 * 54 and bfv[0].secure()
    assert sum(bfv[1].bit_sizes[:-4]) >= 15 * 55 + 16 * 56
    assert bgv[0].phantom()["BGV"]["multiply"] == (1158.0, 1078.0) and bgv[0].secure()
    assert ckks[0].rescale_groups and sum(ckks[0].rescale_groups) == 46
    ctx, _ = bench.make_context(bfv[0])
    assert ctx.word_bits == 32 and ctx.mul_method == "hps"


def test_bench_cheddar_rows() -> None:
    rows = bench.select_rows("cheddar", scheme="ckks")
    assert [(r.shape, r.limbs) for r in rows] == [
        ("bootparam_40", 47), ("bootparam_40", 23), ("bootparam_40_64bit", 26),
        ("bootparam_40_64bit", 14)]
    r40, r64 = rows[0], rows[2]
    # ANCHORS.md's numbers, and the shapes' sizes (log PQ 1746 and 1637 bits from the bit sizes)
    assert r40.cheddar() == {"multiply": 466, "relinearize": 440, "rotate": 447,
                             "rescale": 103, "add": 33}
    assert rows[3].cheddar()["multiply"] == 378
    assert sum(r40.bit_sizes) == 1746 and sum(r64.bit_sizes) == 1637
    assert [q.bit_length() for q in r40.primes()] == r40.bit_sizes
    ctx, secure = bench.make_context(r40)
    assert secure and ctx.word_bits == 32 and ctx.special_primes == 12 and ctx.alpha == 12
    assert ctx.max_level == 46 and r40.level(ctx.max_level) == 46
    assert rows[1].level(ctx.max_level) == 22
    assert ctx.rescale_target(46) == 44  # the top pair of 25-bit primes
    ctx64, secure64 = bench.make_context(r64)
    assert secure64 and ctx64.word_bits == 64 and ctx64.max_level == 25 and ctx64.alpha == 7
    assert ctx64.rescale_target(25) == 24
    with pytest.raises(ValueError, match="rows"):
        bench.select_rows("cheddar", scheme="bfv")
    # The markdown table puts Veil's GPU times beside Cheddar's.
    rec = {"row": bench.row_record(r40), "kind": "veil", "device": "cuda:0",
           "backend": "Veil GPU (NVIDIA H100 80GB HBM3)",
           "median_us": {"multiply": 233.0, "rotate": 220.0, "rescale": 51.5, "add": 16.5}}
    table = bench.cheddar_table({"results": [rec]})
    assert table.rows[0][:6] == ["bootparam_40", "47", "Veil GPU (NVIDIA H100 80GB HBM3)", "233",
                                 "466", "0.50"]
    md = bench.markdown_table(table)
    assert [c.strip() for c in md.splitlines()[2].strip("|").split("|")][:6] == table.rows[0][:6]
    assert bench.cheddar_table({"results": [dict(rec, device="cpu")]}) is None


@pytest.mark.parametrize("scheme", ["bgv", "ckks"])
def test_bench_quick_cpu_bgv_ckks(scheme: str, tmp_path) -> None:
    jpath = tmp_path / "b.json"
    r = bench.run(scheme=scheme, device="cpu", quick=True, seal=False, threads=[1],
                  json_path=str(jpath), verbose=False)
    assert r["all_correct"]
    ops = bench.OPS_BY_SCHEME[scheme]
    assert {"rotate_many_8", "rotate_8", "decode"} <= set(ops)
    assert ("rescale" in ops) == (scheme == "ckks")
    assert ("mod_switch_to_next" in ops) == (scheme == "bgv")
    veil_rows = [x for x in r["results"] if x["kind"] == "veil"]
    assert len(veil_rows) == 2
    for x in veil_rows:
        assert "error" not in x, x.get("error")
        assert set(x["median_us"]) == set(ops)
        assert all(v > 0 for v in x["median_us"].values())
        assert all(x["correct"].values()) and set(x["correct"]) >= set(ops) - {
            "keygen", "decode", "decrypt"}
        assert x["row"]["phantom_us"] is not None
        if scheme == "ckks":
            assert min(b["mean_bits"] for b in x["precision_bits"].values()) >= 20
    md = r["markdown"]
    assert f"Veil benchmark: {scheme.upper()}" in md and "hoisted 8 rot" in md
    assert "Phantom H100 mul+relin" in md
    on_disk = json.loads(jpath.read_text())
    assert on_disk["meta"]["scheme"] == scheme


def test_bench_rejects_bad_arguments() -> None:
    with pytest.raises(ValueError, match="scheme"):
        bench.run(scheme="tfhe", device="cpu", quick=True, seal=False, verbose=False)
    with pytest.raises(ValueError, match="rows"):
        bench.select_rows("some")


@pytest.mark.gpu
@pytest.mark.parametrize("scheme", ["bfv", "bgv", "ckks"])
def test_bench_quick_gpu(scheme: str) -> None:
    r = bench.run(scheme=scheme, device="cuda", quick=True, seal=False, verbose=False)
    assert r["all_correct"]
    assert all(v > 0 for x in r["results"] for v in x["median_us"].values())


# ---- CLI ----------------------------------------------------------------------------------------
def test_cli_info(capsys) -> None:
    assert cli.main(["info"]) == 0
    out = capsys.readouterr().out
    assert veil.__version__ in out and "CUDA in this build" in out


def test_cli_info_subprocess() -> None:
    p = subprocess.run([sys.executable, "-m", "veil.cli", "info"], capture_output=True,
                       text=True, timeout=120, check=False)
    assert p.returncode == 0, p.stderr
    assert "backends" in p.stdout


def test_cli_bad_arguments_exit_cleanly(capsys) -> None:
    with pytest.raises(SystemExit) as e:
        cli.main(["demo", "--device", "tpu"])
    assert e.value.code == 2
    with pytest.raises(SystemExit):
        cli.main(["bench", "--runs", "0"])
    assert cli.main(["bench", "--quick", "--json", "/no/such/dir/b.json"]) == 2
    err = capsys.readouterr().err
    assert "Traceback" not in err and "does not exist" in err
    if not has_gpu():
        assert cli.main(["demo", "--device", "cuda"]) == 2
        assert "Traceback" not in capsys.readouterr().err
