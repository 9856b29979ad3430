"""``veil serve`` with the CNN of ``veil demo --model cnn`` (``cnn``; issue 27, item 4).

The oracle is the plaintext numpy network (:meth:`veil.apps.cnn_model.CNN.logits`, itself tested
against explicit loops in test_demo_cnn.py): the decrypted classes must equal its classes and
the logits lie within the model's tolerance. The FastAPI application runs in-process
(TestClient), CPU device.
"""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("httpx")
pytest.importorskip("sklearn")

import veil
from fastapi.testclient import TestClient
from veil import _serialize as ser
from veil import cli, serve
from veil.apps import demo_cnn
from veil.serve import client
from veil.serve import cnn_model as served_cnn

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


@pytest.fixture(scope="module")
def model() -> serve.CNNModel:
    m = serve.CNNModel()
    m.name = "cnn"
    return m


@pytest.fixture(scope="module")
def keys(model):
    """A client key set made from the spec as a client receives it (JSON)."""
    return serve.context_from_spec(json.loads(json.dumps(model.spec())), device="cpu", seed=11)


def app_for(model, **kw):
    kw.setdefault("device", "cpu")
    return serve.create_app(serve.ServeConfig(**kw), {"cnn": model})


def request(model, keys, x, **encrypt) -> bytes:
    return serve.pack_frame(keys.encrypt(v, symmetric=True, **encrypt).to_bytes()
                            for v in model.encode(x, keys.slot_count))


def test_spec_round_trip_gives_the_demos_parameters(model, keys) -> None:
    """The client's context from the spec has the server's parameter hash, which is the hash
    of the demo's own context (veil.ckks(depth=3, precision=14, N=8192)); keys: a
    relinearization key, no Galois key; one request is the 64 pixel ciphertexts."""
    spec = model.spec()
    demo_ctx = demo_cnn.make_context(model.network, "cpu", seed=1)
    assert (keys.context.parameter_hash == int(spec["parameter_hash"], 16)
            == model.context().parameter_hash == demo_ctx.context.parameter_hash)
    assert keys.scale == demo_ctx.scale == spec["options"]["scale"]
    assert keys.relin_keys is not None and keys.galois_keys is None
    assert spec["keys"]["galois_steps"] == [] and not spec["keys"]["columns"]
    assert spec["max_ciphertexts"] == 64 and spec["input_level"] == keys.max_level == 3
    assert spec["layout"]["kind"] == "veil.cnn/1"
    # Deterministic training: a second build has the same weights.
    assert serve.CNNModel().weights_digest() == model.weights_digest()


def test_packing_and_registration(model) -> None:
    """encode puts pixel (r, c) of image k in slot k of vector 8 r + c (demo_cnn's packing);
    cnn is registered lazily (importing veil.serve does not import scikit-learn) and served
    when named, not by default."""
    x = model.samples()[0][:5]
    vecs = model.encode(x, 4096)
    assert len(vecs) == 64
    for p, v in enumerate(vecs):
        np.testing.assert_array_equal(v, x[:, p // 8, p % 8])
    with pytest.raises(ValueError, match="features"):
        model.encode(np.zeros((2, 7, 7)), 4096)
    assert serve.MODEL_FACTORIES["cnn"] == "veil.serve.cnn_model:CNNModel"
    assert "cnn" not in serve.DEFAULT_MODELS
    code = "import sys, veil.serve; print('sklearn' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == "False"


def test_encrypted_request_gives_the_plaintext_networks_classes(model, keys) -> None:
    x, _ = model.samples()
    x = x[:12]
    want = model.network.logits(x)
    with TestClient(app_for(model)) as http:
        specs = {m["name"]: m for m in http.get("/models").json()["models"]}
        assert specs["cnn"] == json.loads(json.dumps(model.spec()))
        r = http.post("/sessions", content=keys.to_bytes())
        assert r.status_code == 201 and r.json()["models"] == ["cnn"], r.text
        sid = r.json()["session_id"]
        r = http.post(f"/sessions/{sid}/evaluate/cnn", content=request(model, keys, x))
        assert r.status_code == 200, r.text
        out = serve.unpack_frame(r.content, 64)
        assert len(out) == 10
        got = model.decode([keys.decrypt(veil.CKKSCiphertext.from_bytes(b, keys))
                            for b in out], len(x))
    assert got.shape == (12, 10)
    np.testing.assert_array_equal(np.argmax(got, axis=1), np.argmax(want, axis=1))
    assert np.abs(got - want).max() <= served_cnn.LOGIT_TOLERANCE * np.abs(want).max()
    assert model.decode_check(got, want) and not model.decode_check(got + 1.0, want)


def test_bad_requests_name_what_was_wrong(model, keys) -> None:
    """Wrong count, wrong level and wrong scale answer 400 naming the fault; an upload whose
    options differ from the spec's is refused before a session exists."""
    x = model.samples()[0][:3]
    cts = [keys.encrypt(v, symmetric=True).to_bytes() for v in model.encode(x, keys.slot_count)]
    low = keys.encrypt(x[:, 0, 1], level=2, symmetric=True).to_bytes()
    odd = keys.encrypt(x[:, 0, 1], scale=2.0**25, symmetric=True).to_bytes()
    with TestClient(app_for(model)) as http:
        meta, blobs = ser.unpack_bundle(keys.to_bytes())
        meta = {k: v for k, v in meta.items() if k != "blobs"}
        meta["options"] = {**meta["options"], "scale": 2.0**40}
        r = http.post("/sessions", content=ser.pack_bundle(meta, {k: bytes(v)
                                                                   for k, v in blobs.items()}))
        assert r.status_code == 400 and r.json()["detail"].startswith("options"), r.text
        assert http.get("/health").json()["sessions"] == 0
        sid = http.post("/sessions", content=keys.to_bytes()).json()["session_id"]
        url = f"/sessions/{sid}/evaluate/cnn"
        fresh = "ciphertext 1: expected a fresh ciphertext (size 2, level 3), got size 2, level 2"
        cases = [(cts[:63], "evaluate: ciphertexts: expected 64"),
                 (cts + cts[:1], "count: expected 1..64"),
                 ([cts[0], low] + cts[2:], fresh),
                 ([cts[0], odd] + cts[2:], "evaluate: ciphertext 1: scale 2^25")]
        for blobs_, message in cases:
            r = http.post(url, content=serve.pack_frame(blobs_))
            assert r.status_code == 400 and r.json()["detail"].startswith(message), r.text
        assert http.get("/health").json()["status"] == "ok"


def test_run_demo_and_self_test(model, capsys) -> None:
    """The client side of `veil demo --model cnn --server URL` (run_demo against the app) and
    the server's startup self-test both pass; the report speaks of a tolerance, not of
    exactness."""
    with TestClient(app_for(model)) as http:
        r = client.run_demo(http=http, model="cnn", device="cpu", seed=3, repeats=1)
    assert r["passed"] and r["approximate"] and r["agreement"] >= 0.99
    assert r["n_samples"] == 359 and r["n_ciphertexts"] == 64 and r["accuracy"] > 0.9
    assert r["max_error"] < 0.05
    assert "within the model's tolerance" in capsys.readouterr().out
    service = serve.Service(serve.ServeConfig(device="cpu"), {"cnn": model})
    try:
        service.self_test()
    finally:
        service.close()


def test_cli_routes_cnn_to_the_server(capsys) -> None:
    """--model cnn --server is accepted (any --scheme) and reaches the network; the local-only
    options are refused naming --server."""
    assert cli.main(["demo", "--model", "cnn", "--server", "http://127.0.0.1:1", "--scheme",
                     "ckks"]) == 2
    assert "cannot reach the server" in capsys.readouterr().err
    assert cli.main(["demo", "--model", "cnn", "--server", "http://127.0.0.1:1",
                     "--activation", "relu"]) == 2
    assert "--server: the served cnn" in capsys.readouterr().err
