"""``veil serve`` bootstrapping for its clients (issue 23, deliverable 5): the ``logreg-train``
model trains a logistic regression on an encrypted training set, refreshing the weights by
bootstrapping on the server with the client's uploaded bootstrapping keys.

The oracle is the same gradient descent in float64 with the same cubic sigmoid
(``demo_train.train_float``), and the in-process encrypted run of ``veil.apps.demo_train``: the
served weights must give the same test accuracy as both. Small chains (N = 2^11, security off)
keep the CPU run short; ``scripts/gpu_run.sh load`` runs the full N = 2^16 model on a GPU.
"""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("httpx")
pytest.importorskip("sklearn")

from fastapi.testclient import TestClient
from veil import _serialize as ser
from veil import cli, serve
from veil.apps import demo_train
from veil.serve import client

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

SMALL = {"log_n": 11, "security": None, "user_levels": 5, "iterations": 2, "max_samples": 32}


@pytest.fixture(scope="module")
def model() -> serve.LogisticTrainingModel:
    m = serve.LogisticTrainingModel(**SMALL)
    m.name = "logreg-train"
    return m


@pytest.fixture(scope="module")
def keys(model):
    return serve.context_from_spec(model.spec(), device="cpu", seed=5)


def app_for(models, **kw):
    kw.setdefault("device", "cpu")
    return serve.create_app(serve.ServeConfig(**kw), models)


def test_spec_states_the_bootstrapping(model, keys) -> None:
    spec = model.spec()
    assert spec["parameters"]["scheme"] == "ckks"
    assert spec["bootstrapping"]["slots"] == demo_train.BLOCK
    assert spec["input_level"] == keys.bootstrapper.output_level == keys.default_level
    assert spec["options"] == keys._options()
    assert int(spec["parameter_hash"], 16) == keys.context.parameter_hash
    # key_bytes bounds the genuine upload's keys as the server counts them.
    plan = serve.plan_upload(keys.to_bytes(), {"logreg-train": model})
    assert plan.key_bytes <= spec["keys"]["key_bytes"]
    assert set(plan.keys) >= {"bootstrap_galois_keys", "bootstrap_to_sparse",
                              "bootstrap_to_dense", "bootstrap_config"}


def test_served_training_over_a_socket_equals_the_in_process_run(model) -> None:
    """The client's side against a server on 127.0.0.1: the server bootstraps the encrypted
    weights with the client's keys; the decrypted weights equal the float64 gradient descent
    to 1e-6 and give the in-process encrypted run's test accuracy."""
    logreg = serve.LogisticRegressionModel()
    app = app_for({"logreg-train": model, "logreg": logreg})
    with serve.BackgroundServer(app) as url:
        r = client.run_train_demo(url, device="cpu", seed=7, verbose=False, local=model)
        h = client.VeilClient(url).health()
    assert r["passed"] and r["weights_error"] < 1e-6, r
    assert r["accuracy"] == r["reference_accuracy"]
    local = demo_train.run(device="cpu", seed=7, iterations=SMALL["iterations"],
                           log_n=SMALL["log_n"], security=None, user_levels=SMALL["user_levels"],
                           max_samples=SMALL["max_samples"], verbose=False)
    assert local["bootstraps"] >= 1
    assert r["accuracy"] == local["accuracy"]
    assert h["sessions"] == 0 and h["key_bytes"]["in_use"] == 0


def test_bootstrapping_entries_are_checked(model, keys) -> None:
    logreg = serve.LogisticRegressionModel()
    lr_keys = serve.context_from_spec(logreg.spec(), device="cpu", seed=8)
    _, kb = ser.unpack_bundle(keys.to_bytes())
    with TestClient(app_for({"logreg-train": model, "logreg": logreg})) as http:
        # A model that does not bootstrap takes no bootstrapping entry.
        meta, blobs = ser.unpack_bundle(lr_keys.to_bytes())
        blobs = {k: bytes(v) for k, v in blobs.items()}
        blobs["bootstrap_config"] = bytes(kb["bootstrap_config"])
        r = http.post("/sessions", content=ser.pack_bundle(
            {k: v for k, v in meta.items() if k != "blobs"}, blobs))
        assert r.status_code == 400
        assert r.json()["detail"].startswith("bootstrap_config: model 'logreg' does not take")
        # The training model needs every bootstrapping entry.
        meta, blobs = ser.unpack_bundle(keys.to_bytes())
        blobs = {k: bytes(v) for k, v in blobs.items() if k != "bootstrap_to_dense"}
        r = http.post("/sessions", content=ser.pack_bundle(
            {k: v for k, v in meta.items() if k != "blobs"}, blobs))
        assert r.status_code == 400 and r.json()["detail"].startswith("bootstrap_to_dense:")
        # A bootstrapping configuration other than the model's (e.g. 64 slots) is refused.
        other = model.spec()
        other["bootstrapping"] = dict(other["bootstrapping"], slots=64)
        wrong = serve.context_from_spec(other, device="cpu", seed=9)
        r = http.post("/sessions", content=wrong.to_bytes())
        assert r.status_code == 400 and r.json()["detail"].split(":")[0] in (
            "bootstrap_config", "bootstrap_galois_keys"), r.text
        # A secret key never passes, with or without bootstrapping keys.
        r = http.post("/sessions", content=keys.to_bytes(include_secret_key=True))
        assert r.status_code == 400 and "secret key" in r.json()["detail"]
        # A genuine upload opens a session; a ciphertext at another level is refused.
        r = http.post("/sessions", content=keys.to_bytes())
        assert r.status_code == 201, r.text
        sid = r.json()["session_id"]
        low = keys.encrypt(np.zeros(4), level=keys.bootstrapper.output_level - 1)
        r = http.post(f"/sessions/{sid}/evaluate/logreg-train",
                      content=serve.pack_frame([low.to_bytes(), low.to_bytes()]))
        assert r.status_code == 400 and "fresh ciphertext" in r.json()["detail"]
        one = keys.encrypt(np.zeros(4))
        r = http.post(f"/sessions/{sid}/evaluate/logreg-train",
                      content=serve.pack_frame([one.to_bytes()]))
        assert r.status_code == 400 and "expected 2" in r.json()["detail"]
        assert http.get("/health").json()["status"] == "ok"


def test_evaluation_keys_of_a_level_are_refused_at_upload() -> None:
    """Galois keys that serve only low levels (KSwitchKey::level) would fail at inference: the
    upload check refuses them first, naming the entry and the elements."""
    from veil import _core

    logreg = serve.LogisticRegressionModel()
    lr_keys = serve.context_from_spec(logreg.spec(), device="cpu", seed=8)
    elts = lr_keys.galois_keys.galois_elts
    assert elts
    kg = _core.KeyGenerator(lr_keys.context, lr_keys.secret_key, 3)
    low = kg.create_galois_keys_from_elts(elts, False, [0] * len(elts))
    meta, blobs = ser.unpack_bundle(lr_keys.to_bytes())
    blobs = {k: bytes(v) for k, v in blobs.items()}
    assert serve.plan_upload(ser.pack_bundle({k: v for k, v in meta.items() if k != "blobs"},
                                             blobs), {"logreg": logreg}).models == ["logreg"]
    blobs["galois_keys"] = low.to_bytes()
    with pytest.raises(ValueError, match=r"galois_keys: the keys for elements .* serve only"):
        serve.plan_upload(ser.pack_bundle({k: v for k, v in meta.items() if k != "blobs"},
                                          blobs), {"logreg": logreg})


def test_cli_checks_the_train_arguments(capsys) -> None:
    assert cli.main(["demo", "--server", "http://127.0.0.1:1", "--train"]) == 2
    assert "--scheme ckks" in capsys.readouterr().err
    # Nothing listens there: one line, status 2.
    assert cli.main(["demo", "--server", "http://127.0.0.1:1", "--scheme", "ckks",
                     "--train"]) == 2


def test_training_model_is_not_served_by_default(monkeypatch) -> None:
    """`veil serve` without --models builds logreg and xgboost only; --models names it."""
    built: list[str] = []
    monkeypatch.setattr(serve.models, "load_model", lambda name: built.append(name) or name)
    assert list(serve.load_models()) == ["logreg", "xgboost"] == built
    assert list(serve.load_models(["logreg", "logreg-train"])) == ["logreg", "logreg-train"]


def test_startup_self_test_covers_the_training_model(model) -> None:
    """`veil serve` checks every model once at startup, the way a client's upload is loaded:
    for the training model that is a whole encrypted training run with bootstrapping (the
    self-test sends the whole training set, not a slice of it)."""
    service = serve.Service(serve.ServeConfig(device="cpu"), {"logreg-train": model})
    try:
        service.self_test()
    finally:
        service.close()
