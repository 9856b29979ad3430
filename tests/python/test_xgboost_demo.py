"""Encrypted XGBoost (issue 9, items 1 and 2): :mod:`veil.apps.demo_xgboost`.

Oracles, none of them the code under test:
* XGBoost itself, retrained here with the demo's hyperparameters (its own margins);
* an integer tree walk written here (``walk``), for the quantized model and every encrypted
  score;
* SEAL through seal-python, running the same circuit with its own keys;
* operation counts derived here from the model's arrays and the layout rules (``shape_counts``),
  and fixed numbers for a hand-made model.

Timings are never asserted; the encrypted tests use an 8-tree model on all 143 test samples.
"""

from __future__ import annotations

import math
import sys
from collections import Counter

import numpy as np
import pytest
import veil

pytest.importorskip("sklearn")
xgb = pytest.importorskip("xgboost")

from veil import cli
from veil.apps import demo_xgboost as dx

SEED = 7


def walk(model: dx.QuantizedForest, xq: np.ndarray) -> np.ndarray:
    """Integer scores by walking every tree node by node (Python ints)."""
    n_int = 2**model.depth - 1
    out = []
    for row in np.asarray(xq):
        s = int(model.bias)
        for t in range(model.n_trees):
            node = 0
            for _ in range(model.depth):
                go_right = int(row[model.feature[t, node]]) >= int(model.level[t, node])
                node = 2 * node + (2 if go_right else 1)
            s += int(model.leaf[t, node - n_int])
        out.append(s)
    return np.array(out, dtype=np.int64)


def shape_counts(model: dx.QuantizedForest, layout: dx.Layout) -> dict[str, int]:
    """The circuit's operation counts from the model's (feature, level) arrays and the layout's
    rules: tree k of a group in block k; the bit for (f, theta) comes from input
    f * parts + theta // R, rotated by r = (theta - column) mod R blocks."""
    r_, bpr = layout.levels_per_ciphertext, layout.blocks_per_row
    parts, nb = layout.levels // r_, layout.n_blocks
    depth = model.depth
    c: Counter[str] = Counter()
    groups = math.ceil(model.n_trees / nb)
    for g in range(groups):
        trees = range(g * nb, min((g + 1) * nb, model.n_trees))
        for p in range(2**depth - 1):
            pairs = set()
            for k, t in enumerate(trees):
                lv, f = int(model.level[t, p]), int(model.feature[t, p])
                pairs.add(((lv - k % bpr) % r_, f * parts + lv // r_))
            c["multiply_plain"] += len(pairs)
            c["add"] += len(pairs) - 1
            c["rotate"] += len({r for r, _ in pairs if r})
        nonzero = sum(1 for leaf in range(2**depth) if any(model.leaf[t, leaf] for t in trees))
        c["multiply_plain"] += nonzero
        c["add"] += nonzero - 1
        c["multiply"] += 2**depth - 2
        c["sub"] += 2**depth - 2
        c["relinearize"] += 2 ** (depth - 1) - 2
        c["negate"] += 1
        c["add_plain"] += 1
    tree_sum = int(math.log2(nb))
    c["add"] += groups - 1 + tree_sum
    c["rotate"] += tree_sum
    c["relinearize"] += 1
    c["add_plain"] += 1
    return {k: c[k] for k in dx.OPS}


# ---- plaintext models ----------------------------------------------------------------------------
@pytest.fixture(scope="module")
def demo_prep() -> dx.Prepared:
    """The demo's own model (32 trees, depth 3), no encryption."""
    return dx.prepare(reference=False)


@pytest.fixture(scope="module")
def small() -> dx.Prepared:
    return dx.prepare(n_trees=8, depth=3, reference=False)


@pytest.fixture(scope="module")
def small_cpu(small: dx.Prepared) -> dict:
    backend = dx.VeilBackend(small.plan, small.plain_modulus, "cpu", seed=SEED)
    batches = dx.encode_inputs(small.xq_test, small.layout)
    return dx.run_backend(backend, small.plan, batches, len(small.y_test), runs=1)


def test_quantized_model_tracks_xgboost(demo_prep: dx.Prepared) -> None:
    """Stated bound: every score is within (T + 1) / 2 units (2^-s each) of XGBoost's own
    margin, and every decision agrees where |margin| exceeds that; overall >= 99 %."""
    params = {"objective": "binary:logistic", "max_depth": dx.MAX_DEPTH, "eta": dx.LEARNING_RATE,
              "tree_method": "hist", "seed": dx.XGB_SEED, "nthread": 1}
    data = veil.apps.demo.load_data()
    booster = xgb.train(params, xgb.DMatrix(demo_prep.xq_train.astype(float), label=data.y_train),
                        num_boost_round=dx.N_TREES)
    margin = booster.predict(xgb.DMatrix(demo_prep.xq_test.astype(float)), output_margin=True)
    model = demo_prep.model
    q = walk(model, demo_prep.xq_test)
    assert np.array_equal(q, model.scores(demo_prep.xq_test))
    assert np.array_equal(q, demo_prep.q_scores)
    scale = 2.0**model.leaf_bits
    bound = (model.n_trees + 1) / 2 + 0.05  # rounding of T leaves and the bias; float32 slack
    assert np.abs(margin.astype(np.float64) * scale - q).max() <= bound
    clear = np.abs(margin) * scale > bound
    assert np.array_equal((margin > 0)[clear], (q > 0)[clear])
    assert np.mean((margin > 0) == (q > 0)) >= 0.99
    assert np.mean((q > 0) == demo_prep.y_test) >= 0.9  # a useful classifier
    # The float model the demo reports is XGBoost's margin.
    assert np.allclose(demo_prep.float_margins, margin, atol=1e-4)
    assert model.score_bound() >= np.abs(q).max()
    assert demo_prep.plain_modulus > 2 * model.score_bound()


def test_quantize_forest_always_left_and_padding() -> None:
    """Hand-made forest: a root that always goes left (threshold above every level), a
    threshold below level 0 (always right), a padding node, a mid-level split."""
    inf = np.inf
    forest = dx.Forest(
        feature=np.array([[0, 1, 2], [0, 3, 0]]),
        threshold=np.array([[15.5, 3.5, 0.5], [-inf, -0.5, 7.0]]),
        leaf=np.array([[1.0, 2.0, 3.0, 4.0], [0.5, 0.25, -0.75, 1.5]]),
        base_margin=0.125,
        depth=2,
    )
    q = dx.quantize_forest(forest, levels=16, leaf_bits=3)
    rng = np.random.default_rng(1)
    xq = rng.integers(0, 16, size=(300, 4))
    expect = np.rint(forest.margins(xq.astype(float)) * 8).astype(np.int64)  # leaves are k/8
    assert np.array_equal(walk(q, xq), expect)
    assert np.array_equal(q.scores(xq), expect)
    assert q.level[0].tolist() == [0, 4, 4] and q.feature[0].tolist() == [0, 1, 1]
    assert q.leaf[0].tolist() == [8, 16, 8, 16]  # right subtree = copy of the left one
    assert q.level[1].tolist() == [0, 0, 7]


# ---- encrypted: Veil CPU, SEAL, GPU --------------------------------------------------------------
def test_encrypted_scores_exact_cpu(small: dx.Prepared, small_cpu: dict) -> None:
    expect = walk(small.model, small.xq_test)
    assert len(expect) == 143
    assert np.array_equal(small_cpu["scores"], expect)
    assert small_cpu["noise_budget_bits"] > 0


def test_counts_follow_the_model_shape(small: dx.Prepared, small_cpu: dict) -> None:
    expect = shape_counts(small.model, small.layout)
    assert small_cpu["counts"] == expect
    assert dx.predicted_counts(small.plan) == expect
    assert expect["multiply"] == 6 and expect["relinearize"] == 3  # depth 3, one group


def _handmade() -> tuple[dx.QuantizedForest, dx.Layout]:
    model = dx.QuantizedForest(
        feature=np.array([[0, 1, 0], [0, 2, 0]]),
        level=np.array([[3, 0, 5], [4, 1, 6]]),
        leaf=np.array([[1, -2, 3, -4], [5, 6, -7, 8]]),
        bias=-3, depth=2, levels=16, leaf_bits=0)
    return model, dx.Layout()


def test_handmade_model_counts_and_scores() -> None:
    """Trees in blocks 0 and 1. Position 0 reads (f0, 3) and (f0, 4): one mask, offset 3;
    position 1 reads (f1, 0) and (f2, 1): two masks, offset 0; position 2: one mask, offset 5.
    So 4 + 4 multiply_plain, 2 + 5 rotations, 1 + 3 + 5 additions."""
    model, layout = _handmade()
    plan = dx.compile_plan(model, layout)
    assert plan.galois_steps == sorted({3 * 256, 5 * 256} | {2048, 1024, 512, 256})
    rng = np.random.default_rng(2)
    xq = rng.integers(0, 16, size=(200, 30))
    backend = dx.VeilBackend(plan, 65537, "cpu", seed=SEED)
    r = dx.run_backend(backend, plan, dx.encode_inputs(xq, layout), len(xq), runs=1)
    assert np.array_equal(r["scores"], walk(model, xq))
    assert r["counts"] == {"multiply": 2, "relinearize": 1, "rotate": 7, "sub": 2,
                           "multiply_plain": 8, "add": 9, "add_plain": 2, "negate": 1}
    assert r["counts"] == shape_counts(model, layout)


def test_two_groups_and_batches_and_levels_per_ciphertext() -> None:
    """40 trees (two groups), 300 samples (two batches of 256), 4 levels per ciphertext."""
    rng = np.random.default_rng(3)
    t, depth = 40, 2
    model = dx.QuantizedForest(
        feature=rng.integers(0, 5, size=(t, 3)), level=rng.integers(0, 16, size=(t, 3)),
        leaf=rng.integers(-50, 50, size=(t, 4)), bias=17, depth=depth, levels=16, leaf_bits=0)
    layout = dx.Layout(n_features=5, levels_per_ciphertext=4)
    assert layout.n_inputs == 5 * 4
    plan = dx.compile_plan(model, layout)
    xq = rng.integers(0, 16, size=(300, 5))
    backend = dx.VeilBackend(plan, 65537, "cpu", seed=SEED)
    r = dx.run_backend(backend, plan, dx.encode_inputs(xq, layout), len(xq), runs=1)
    assert np.array_equal(r["scores"], walk(model, xq))
    per_batch = shape_counts(model, layout)
    assert r["counts"] == {k: 2 * v for k, v in per_batch.items()}
    assert dx.predicted_counts(plan, 2) == r["counts"]


def test_seal_runs_the_same_circuit(small: dx.Prepared, small_cpu: dict) -> None:
    pytest.importorskip("seal", reason="seal-python is not installed")
    primes = list(veil.bfv(poly_modulus_degree=8192, plain_modulus=small.plain_modulus,
                           device="cpu", galois_steps=None).context.params.coeff_modulus)
    backend = dx.SealBackend(small.plan, small.plain_modulus, primes)
    batches = dx.encode_inputs(small.xq_test, small.layout)
    r = dx.run_backend(backend, small.plan, batches, len(small.y_test), runs=1)
    assert np.array_equal(r["scores"], walk(small.model, small.xq_test))
    assert np.array_equal(r["scores"], small_cpu["scores"])
    assert r["counts"] == small_cpu["counts"]
    assert r["noise_budget_bits"] > 0


@pytest.mark.gpu
def test_gpu_matches_cpu_bit_for_bit(small: dx.Prepared, small_cpu: dict) -> None:
    backend = dx.VeilBackend(small.plan, small.plain_modulus, "cuda", seed=SEED)
    batches = dx.encode_inputs(small.xq_test, small.layout)
    r = dx.run_backend(backend, small.plan, batches, len(small.y_test), runs=1)
    assert np.array_equal(r["scores"], small_cpu["scores"])
    assert r["counts"] == small_cpu["counts"]
    for g, c in zip(r["result"], small_cpu["result"]):
        assert np.array_equal(np.asarray(g.raw.data()), np.asarray(c.raw.data()))


def test_run_reports_and_peer_seal(small: dx.Prepared, capsys) -> None:
    r = dx.run(device="cpu", seed=SEED, runs=1, prep=small)
    out = capsys.readouterr().out
    assert r["exact"] and r["agreement"] == 1.0 and r["n_test"] == 143
    assert r["counts"] == r["predicted_counts"]
    assert "1290" in out and "2322" in out and "3354" in out  # the seed's counts beside ours
    pytest.importorskip("seal", reason="seal-python is not installed")
    r = dx.run(device="cpu", seed=SEED, runs=1, prep=small, peer="seal", verbose=True)
    out = capsys.readouterr().out
    assert r["exact"] and r["backends_identical"]
    kinds = [b["kind"] for b in r["backends"]]
    assert kinds[0] == "seal" and kinds.count("veil") >= 1
    assert r["backends"][0]["speedup_vs_seal"] == pytest.approx(1.0)
    assert "Table 6" in out and "25.62 s" in out


# ---- bad input -----------------------------------------------------------------------------------
def test_bad_input_names_the_argument(small: dx.Prepared) -> None:
    lay = small.layout
    with pytest.raises(ValueError, match="xq"):
        dx.encode_inputs(np.zeros((3, 29), dtype=np.int64), lay)
    with pytest.raises(ValueError, match="xq"):
        dx.encode_inputs(np.full((3, 30), 16), lay)
    with pytest.raises(ValueError, match="xq"):
        dx.encode_inputs(np.zeros((3, 30)), lay)  # floats
    with pytest.raises(ValueError, match="block"):
        dx.Layout(block=300)
    with pytest.raises(ValueError, match="levels_per_ciphertext"):
        dx.Layout(levels_per_ciphertext=32)
    with pytest.raises(ValueError, match="step"):
        dx.Grid(step=0.0)
    with pytest.raises(ValueError, match="x"):
        dx.Grid().quantize(np.array([[np.nan]]))
    with pytest.raises(ValueError, match="inputs"):
        dx.evaluate(None, small.plan, [None] * len(small.plan.plains), [None])
    with pytest.raises(ValueError, match="peer"):
        dx.run(peer="tfhe", prep=small)
    with pytest.raises(ValueError, match="runs"):
        dx.run(runs=0, prep=small)
    with pytest.raises(ValueError, match="layout"):
        dx.compile_plan(small.model, dx.Layout(levels=8))
    bad = dx.QuantizedForest(small.model.feature, small.model.level + 16, small.model.leaf,
                             0, 3, 16, 10)
    with pytest.raises(ValueError, match="model"):
        dx.compile_plan(bad, small.layout)
    with pytest.raises(ValueError, match="leaf_bits"):
        dx.quantize_forest(small.forest, leaf_bits=40)


def test_cli_options_and_clear_errors(monkeypatch, capsys) -> None:
    args = cli.build_parser().parse_args(["demo", "--model", "xgboost"])
    assert args.model == "xgboost" and args.peer == "none"
    assert cli.build_parser().parse_args(["demo"]).model == "logreg"
    assert cli.main(["demo", "--peer", "seal", "--device", "cpu"]) == cli.EXIT_USAGE
    assert "--peer" in capsys.readouterr().err
    assert cli.main(["demo", "--model", "xgboost", "--scheme", "ckks", "--device", "cpu"]) == \
        cli.EXIT_USAGE
    assert "--model" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "seal", None)  # import seal raises ImportError
    assert cli.main(["demo", "--model", "xgboost", "--peer", "seal", "--device", "cpu"]) == \
        cli.EXIT_USAGE
    assert "seal-python" in capsys.readouterr().err
    monkeypatch.setitem(sys.modules, "xgboost", None)
    assert cli.main(["demo", "--model", "xgboost", "--device", "cpu"]) == cli.EXIT_USAGE
    assert "xgboost" in capsys.readouterr().err
