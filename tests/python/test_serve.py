"""Tests of ``veil serve`` (veil.serve), its client (veil.serve.client) and the load test.

The oracle is the plaintext quantized model, computed independently of the server: the demo's
integer model, ``x_q @ w + x_q^2 @ v + b``, recomputed here in numpy. Most tests drive the
FastAPI application in-process (TestClient); the socket tests run uvicorn on 127.0.0.1 with an
ephemeral port. CPU device throughout (the GPU runs the same code: ``scripts/gpu_run.sh load``).
"""

from __future__ import annotations

import struct
import time

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("httpx")
pytest.importorskip("sklearn")

import veil
from fastapi.testclient import TestClient
from veil import cli, serve
from veil.apps import demo
from veil.serve import client, loadtest

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


# ---- fixtures -----------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def model() -> serve.LogisticRegressionModel:
    return serve.LogisticRegressionModel()


@pytest.fixture(scope="module")
def spec(model) -> dict:
    return model.spec()


@pytest.fixture(scope="module")
def keys(spec):
    """A client key set for the model (CPU, fixed seed)."""
    return serve.context_from_spec(spec, device="cpu", seed=7)


def make_app(model, **kw):
    kw.setdefault("device", "cpu")
    return serve.create_app(serve.ServeConfig(**kw), {"logreg": model})


@pytest.fixture
def app(model):
    return make_app(model)


@pytest.fixture
def http(app):
    with TestClient(app) as tc:
        yield tc


def oracle(model: serve.LogisticRegressionModel, x: np.ndarray) -> np.ndarray:
    """The plaintext integer model, recomputed here from its weights."""
    q = model.qmodel
    xq = np.clip(np.round(x * 2**q.s_x), -q.x_max, q.x_max).astype(np.int64)
    return xq @ q.w + (xq * xq) @ q.v + np.int64(q.b)


def encrypt_request(model, ctx, x) -> bytes:
    slots = model.encode(x, ctx.slot_count)
    return serve.pack_frame(ctx.encrypt(v, symmetric=True).to_bytes() for v in slots)


def decrypt_answer(model, ctx, body: bytes, n: int) -> np.ndarray:
    blobs = serve.unpack_frame(body, 64)
    return model.decode([ctx.decrypt(veil.Ciphertext.from_bytes(b, ctx)) for b in blobs], n)


def open_session(http, ctx) -> str:
    r = http.post("/sessions", content=ctx.to_bytes())
    assert r.status_code == 201, r.text
    return r.json()["session_id"]


# ---- framing -----------------------------------------------------------------------------------
def test_frame_round_trip_and_rejections() -> None:
    blobs = [b"a", b"", b"xyz" * 100]
    data = serve.pack_frame(blobs)
    assert [bytes(b) for b in serve.unpack_frame(data, 3)] == blobs
    with pytest.raises(ValueError, match="count: expected 1..2"):
        serve.unpack_frame(data, 2)
    with pytest.raises(ValueError, match="trailing"):
        serve.unpack_frame(data + b"\0", 3)
    with pytest.raises(ValueError, match="runs past"):
        serve.unpack_frame(data[:-1], 3)
    with pytest.raises(ValueError, match="frame: expected"):
        serve.unpack_frame(b"VEILCTX\x01" + data[8:], 3)
    with pytest.raises(ValueError, match="count"):
        serve.unpack_frame(serve.FRAME_MAGIC + struct.pack("<I", 0), 3)


# ---- model and spec ----------------------------------------------------------------------------
def test_model_matches_the_demo_and_the_oracle(model) -> None:
    data = demo.load_data()
    q = demo.quantize_model(demo.train_model(data.x_train, data.y_train))
    assert np.array_equal(model.qmodel.w, q.w) and np.array_equal(model.qmodel.v, q.v)
    x, _ = model.samples()
    assert len(x) == 143
    assert np.array_equal(model.reference(x), oracle(model, x))
    # t holds every score the client may cause (the server's guarantee of exactness).
    assert 2 * q.score_bound() < model.plain_modulus


def test_spec_describes_parameters_and_keys(spec, keys, model) -> None:
    p = spec["parameters"]
    assert p["scheme"] == "bfv" and p["poly_modulus_degree"] == 8192
    assert p["coeff_modulus"] == list(veil.CoeffModulus.bfv_default(8192))
    # key_bytes: the client's key set as the C++ objects measure it (64-bit words here).
    mem = keys.memory()
    assert keys.context.word_bits == 64
    assert spec["keys"] == {"relin_keys": True, "galois_steps": [16, 8, 4, 2, 1],
                            "columns": True, "key_bytes": mem["public_key"] + mem["relin_keys"]
                            + mem["galois_keys"]}
    assert spec["options"] == {"encoding": "batch"}
    assert int(spec["parameter_hash"], 16) == keys.context.parameter_hash
    assert keys.plain_modulus == model.plain_modulus
    assert spec["layout"]["samples_per_ciphertext"] == 256


def test_context_from_spec_checks_the_hash(spec) -> None:
    bad = dict(spec, parameter_hash="0" * 16)
    with pytest.raises(ValueError, match="parameter_hash"):
        serve.context_from_spec(bad)
    with pytest.raises(ValueError, match="spec: malformed"):
        serve.context_from_spec({"parameters": {}})


# ---- endpoints (in-process) --------------------------------------------------------------------
def test_health_and_models(http, spec) -> None:
    h = http.get("/health").json()
    assert h["status"] == "ok" and h["device"] == "cpu" and h["models"] == ["logreg"]
    assert h["sessions"] == 0
    models = http.get("/models").json()["models"]
    assert [m["name"] for m in models] == ["logreg"]
    assert models[0]["parameter_hash"] == spec["parameter_hash"]


def test_round_trip_is_exact(http, model, keys) -> None:
    x, y = model.samples()
    sid = open_session(http, keys)
    assert http.get("/health").json()["sessions"] == 1
    r = http.post(f"/sessions/{sid}/evaluate/logreg", content=encrypt_request(model, keys, x))
    assert r.status_code == 200, r.text
    assert r.headers["content-type"] == "application/octet-stream"
    assert float(r.headers["x-veil-evaluate-ms"]) > 0
    scores = decrypt_answer(model, keys, r.content, len(x))
    assert np.array_equal(scores, oracle(model, x))
    assert np.mean((scores > 0) == y) > 0.9  # and it is a real classifier
    # Uncompressed results decrypt the same.
    r = http.post(f"/sessions/{sid}/evaluate/logreg?compression=none",
                  content=encrypt_request(model, keys, x[:5]))
    assert np.array_equal(decrypt_answer(model, keys, r.content, 5), oracle(model, x[:5]))
    assert http.delete(f"/sessions/{sid}").status_code == 204
    assert http.get("/health").json()["sessions"] == 0


def test_several_ciphertexts_per_request(http, model, keys) -> None:
    x, _ = model.samples()
    x = np.vstack([x, x, x])[:300]  # 300 samples: two ciphertexts (256 per ciphertext)
    sid = open_session(http, keys)
    body = encrypt_request(model, keys, x)
    assert struct.unpack_from("<I", body, 8)[0] == 2
    r = http.post(f"/sessions/{sid}/evaluate/logreg", content=body)
    assert np.array_equal(decrypt_answer(model, keys, r.content, len(x)), oracle(model, x))


def test_client_library_and_demo_in_process(http, model, keys) -> None:
    x, _ = model.samples()
    c = client.VeilClient(http=http)
    sid = c.open_session(keys)
    cts = [keys.encrypt(v, symmetric=True) for v in model.encode(x[:10], keys.slot_count)]
    out = c.evaluate(sid, "logreg", cts)
    got = model.decode([keys.decrypt(o) for o in out], 10)
    assert np.array_equal(got, oracle(model, x[:10]))
    c.close_session(sid)
    with pytest.raises(client.ServerError) as e:
        c.close_session(sid)
    assert e.value.status == 404
    r = client.run_demo(http=http, device="cpu", seed=3, repeats=1, verbose=False)
    assert r["exact"] and r["agreement"] == 1.0 and r["n_samples"] == 143
    assert r["requests"] == 2 and r["times_ms"]["round_trip_median"] > 0


def test_secret_key_upload_is_rejected(app, http, keys) -> None:
    def never(body):  # refused before any key is loaded
        pytest.fail("a key upload holding a secret key reached the key loader")

    app.state.service.load_session = never
    with_secret = keys.to_bytes(include_secret_key=True)
    r = http.post("/sessions", content=with_secret)
    assert r.status_code == 400 and "secret key" in r.json()["detail"]
    # A secret key disguised as the public key: found by its Veil header, not its name.
    meta, blobs = veil._serialize.unpack_bundle(with_secret)
    disguised = {"parameters": bytes(blobs["parameters"]),
                 "public_key": bytes(blobs["secret_key"])}
    r = http.post("/sessions", content=veil._serialize.pack_bundle(
        {k: v for k, v in meta.items() if k != "blobs"}, disguised))
    assert r.status_code == 400 and "secret key" in r.json()["detail"]
    assert http.get("/health").json()["sessions"] == 0


def test_wrong_parameters_are_rejected(http) -> None:
    other = veil.bfv(poly_modulus_degree=4096, device="cpu", seed=1)
    r = http.post("/sessions", content=other.to_bytes())
    assert r.status_code == 400 and "matches no served model" in r.json()["detail"]


def test_missing_keys_are_rejected(http, spec) -> None:
    p = spec["parameters"]
    no_galois = veil.bfv(poly_modulus_degree=p["poly_modulus_degree"],
                         plain_modulus=p["plain_modulus"], coeff_modulus=p["coeff_modulus"],
                         galois_steps=[1], device="cpu", seed=2)
    # Refused at upload, before a session exists (and before a key is loaded).
    r = http.post("/sessions", content=no_galois.to_bytes())
    assert r.status_code == 400 and "rotation steps [16, 8, 4, 2]" in r.json()["detail"]
    no_relin = veil.bfv(poly_modulus_degree=p["poly_modulus_degree"],
                        plain_modulus=p["plain_modulus"], coeff_modulus=p["coeff_modulus"],
                        relin_keys=False, galois_steps=spec["keys"]["galois_steps"],
                        device="cpu", seed=2)
    r = http.post("/sessions", content=no_relin.to_bytes())
    assert r.status_code == 400 and r.json()["detail"].startswith("relin_keys:")
    assert http.get("/health").json()["sessions"] == 0


@pytest.mark.parametrize("body", [b"", b"garbage" * 100, b"VEILCTX\x01" + b"\xff" * 64])
def test_garbage_upload_is_400_and_the_server_goes_on(http, model, keys, body) -> None:
    r = http.post("/sessions", content=body)
    assert r.status_code == 400 and r.json()["detail"]
    test_round_trip_is_exact(http, model, keys)


def test_garbage_requests_are_400_and_the_server_goes_on(http, model, keys) -> None:
    x, _ = model.samples()
    sid = open_session(http, keys)
    good = keys.encrypt(model.encode(x[:4], keys.slot_count)[0], symmetric=True).to_bytes()
    flipped = bytearray(good)
    flipped[len(flipped) // 2] ^= 0xFF
    bad_bodies = {
        "not a frame": b"garbage" * 50,
        "truncated frame": serve.pack_frame([good])[:-10],
        "flipped byte": serve.pack_frame([bytes(flipped)]),
        "cut ciphertext": serve.pack_frame([good[:100]]),
        "a key, not a ciphertext": serve.pack_frame([keys.relin_keys.to_bytes()]),
        "too many": serve.pack_frame([good] * 17),
    }
    for what, body in bad_bodies.items():
        r = http.post(f"/sessions/{sid}/evaluate/logreg", content=body)
        assert r.status_code == 400, (what, r.status_code, r.text)
        assert r.json()["detail"], what
    r = http.post(f"/sessions/{sid}/evaluate/logreg?compression=lz4", content=b"")
    assert r.status_code == 400 and "compression" in r.json()["detail"]
    # Still serving, same session.
    r = http.post(f"/sessions/{sid}/evaluate/logreg", content=serve.pack_frame([good]))
    assert r.status_code == 200
    assert np.array_equal(decrypt_answer(model, keys, r.content, 4), oracle(model, x[:4]))


def test_a_used_ciphertext_is_refused(http, model, keys) -> None:
    """Only fresh ciphertexts: a size-3 product would skip relinearization's checks."""
    sid = open_session(http, keys)
    a = keys.encrypt([1, 2, 3])
    prod = veil.Ciphertext(keys, keys.evaluator.multiply(a.raw, a.raw))
    r = http.post(f"/sessions/{sid}/evaluate/logreg", content=serve.pack_frame([prod.to_bytes()]))
    assert r.status_code == 400 and "fresh ciphertext" in r.json()["detail"]


def test_ciphertexts_of_another_key_set_are_rejected(http, model, keys, spec) -> None:
    other = serve.context_from_spec(spec, device="cpu", seed=99)
    sid = open_session(http, keys)
    x, _ = model.samples()
    r = http.post(f"/sessions/{sid}/evaluate/logreg", content=encrypt_request(model, other, x))
    assert r.status_code == 400 and "different key set" in r.json()["detail"]


def test_oversized_bodies_are_413(model, keys) -> None:
    app = make_app(model, max_request_bytes=100_000, max_upload_bytes=1_000_000)
    with TestClient(app) as http:
        r = http.post("/sessions", content=keys.to_bytes())  # 7.5 MiB of keys
        assert r.status_code == 413 and "max_upload_bytes" in r.json()["detail"]
        r = http.post("/sessions", content=iter([b"\0" * 500_000] * 3))  # chunked, no length
        assert r.status_code == 413
    app = make_app(model, max_request_bytes=100_000)
    with TestClient(app) as http:
        sid = open_session(http, keys)
        x, _ = model.samples()
        body = encrypt_request(model, keys, x)  # ~200 KiB
        assert len(body) > 100_000
        r = http.post(f"/sessions/{sid}/evaluate/logreg", content=body)
        assert r.status_code == 413 and "max_request_bytes" in r.json()["detail"]
        r = http.post(f"/sessions/{sid}/evaluate/logreg",
                      content=iter([body[:60_000], body[60_000:]]))
        assert r.status_code == 413
        assert http.get("/health").json()["status"] == "ok"


def test_unknown_session_and_model_are_404(http, keys) -> None:
    r = http.post("/sessions/nosuchsession/evaluate/logreg", content=b"x")
    assert r.status_code == 404 and "session" in r.json()["detail"]
    sid = open_session(http, keys)
    r = http.post(f"/sessions/{sid}/evaluate/nosuchmodel", content=b"x")
    assert r.status_code == 404 and "nosuchmodel" in r.json()["detail"]
    assert http.delete("/sessions/nosuchsession").status_code == 404
    assert http.delete(f"/sessions/{sid}").status_code == 204
    r = http.post(f"/sessions/{sid}/evaluate/logreg", content=b"x")
    assert r.status_code == 404


def test_sessions_expire(model, keys) -> None:
    app = make_app(model, session_ttl_s=0.5)
    with TestClient(app) as http:
        sid = open_session(http, keys)
        x, _ = model.samples()
        body = encrypt_request(model, keys, x[:3])
        assert http.post(f"/sessions/{sid}/evaluate/logreg", content=body).status_code == 200
        time.sleep(0.8)
        r = http.post(f"/sessions/{sid}/evaluate/logreg", content=body)
        assert r.status_code == 410 and "expired" in r.json()["detail"]
        assert http.get("/health").json()["sessions"] == 0


def test_session_cap(model, keys) -> None:
    app = make_app(model, max_sessions=1)
    with TestClient(app) as http:
        sid = open_session(http, keys)
        r = http.post("/sessions", content=keys.to_bytes())
        assert r.status_code == 503 and "max_sessions" in r.json()["detail"]
        http.delete(f"/sessions/{sid}")
        open_session(http, keys)


def test_no_secret_in_errors_or_logs(http, keys, caplog) -> None:
    """Messages name fields, never key material: no 16-byte run of the secret key's bytes."""
    secret = keys.secret_key.to_bytes("none")
    caplog.set_level("DEBUG", logger="veil.serve")
    texts = [http.post("/sessions", content=keys.to_bytes(include_secret_key=True)).text]
    texts.append(http.post("/sessions", content=secret).text)
    texts += [rec.getMessage() for rec in caplog.records]
    body = secret[48:]
    for text in texts:
        raw = text.encode("latin-1", "replace")
        assert not any(body[i:i + 16] in raw for i in range(0, len(body) - 16, 4096))
        assert body[:16].hex() not in text


# ---- over a real socket (uvicorn on 127.0.0.1, ephemeral port) --------------------------------
@pytest.fixture(scope="module")
def server_url(model):
    app = make_app(model, max_request_bytes=4_000_000)
    with serve.BackgroundServer(app) as url:
        yield url


def test_socket_round_trip_demo_and_errors(server_url, model, keys) -> None:
    import httpx

    assert server_url.startswith("http://127.0.0.1:")
    with client.VeilClient(server_url) as c:
        assert c.health()["status"] == "ok"
        sid = c.open_session(keys)
        x, _ = model.samples()
        slots = model.encode(x, keys.slot_count)
        out, times = c.evaluate_bytes(sid, "logreg",
                                      [keys.encrypt(v, symmetric=True).to_bytes() for v in slots])
        assert set(times) == {"queue", "load", "evaluate", "save"}
        got = model.decode([keys.decrypt(veil.Ciphertext.from_bytes(b, keys)) for b in out], 143)
        assert np.array_equal(got, oracle(model, x))
        with pytest.raises(client.ServerError) as e:
            c.evaluate_bytes(sid, "logreg", [b"junk"])
        assert e.value.status == 400
        with pytest.raises(client.ServerError) as e:
            c.evaluate_bytes("nope", "logreg", [b"junk"])
        assert e.value.status == 404
        # Too large: refused from Content-Length, before the body is read.
        r = httpx.post(f"{server_url}/sessions/{sid}/evaluate/logreg", content=b"\0" * 5_000_000)
        assert r.status_code == 413
        c.close_session(sid)
    r = client.run_demo(server_url, device="cpu", seed=5, repeats=2, verbose=False)
    assert r["exact"] and r["agreement"] == 1.0
    assert r["server"]["device"] == "cpu"


def test_cli_demo_against_the_server(server_url, capsys) -> None:
    assert cli.main(["demo", "--server", server_url, "--device", "cpu", "--seed", "4"]) == 0
    assert "exact" in capsys.readouterr().out


def test_loadtest_against_the_server(server_url, tmp_path) -> None:
    r = loadtest.run(server_url, clients=3, requests=2, seed=1, verbose=False,
                     json_path=str(tmp_path / "load.json"))
    assert r["passed"] and r["ok"] == 6 and r["failed"] == 0 and r["wrong"] == 0
    lm = r["latency_ms"]
    assert 0 < lm["p50"] <= lm["p99"] <= lm["max"]
    assert r["throughput_rps"] > 0
    assert (tmp_path / "load.json").exists()


def test_device_work_is_serialized(model, monkeypatch) -> None:
    """Concurrent requests queue on the one device thread: evaluations never overlap."""
    import threading

    active, peak, lock = [0], [0], threading.Lock()
    evaluate = model.evaluate

    def tracked(ctx, cts):
        with lock:
            active[0] += 1
            peak[0] = max(peak[0], active[0])
        try:
            time.sleep(0.02)
            return evaluate(ctx, cts)
        finally:
            with lock:
                active[0] -= 1

    monkeypatch.setattr(model, "evaluate", tracked)
    with serve.BackgroundServer(make_app(model)) as url:
        r = loadtest.run(url, clients=4, requests=2, seed=2, verbose=False)
    assert r["passed"] and peak[0] == 1


def test_loadtest_counts_failures(model, keys) -> None:
    """A server that refuses every request (limit below one request) fails the load test."""
    app = make_app(model, max_request_bytes=1000)
    with serve.BackgroundServer(app) as url:
        r = loadtest.run(url, clients=2, requests=2, seed=1, verbose=False)
    assert not r["passed"] and r["failed"] == 4 and r["ok"] == 0
    assert "413" in r["errors"][0]


def test_cli_loadtest_in_process_and_bad_arguments(capsys) -> None:
    assert cli.main(["loadtest", "--device", "cpu", "--clients", "2", "--requests", "1"]) == 0
    assert "passed" in capsys.readouterr().out
    for argv in (["serve", "--port", "70000"], ["serve", "--session-ttl", "-1"],
                 ["serve", "--max-request-mb", "nan"], ["loadtest", "--clients", "0"]):
        with pytest.raises(SystemExit) as e:
            cli.main(argv)
        assert e.value.code == 2
    assert cli.main(["demo", "--server", "http://127.0.0.1:1", "--scheme", "ckks"]) == 2
    assert cli.main(["loadtest", "--server", "http://127.0.0.1:1"]) == 2  # nothing listens
    assert cli.main(["serve", "--models", "nosuchmodel", "--device", "cpu"]) == 2
    assert "nosuchmodel" in capsys.readouterr().err


def test_xgboost_model_is_served_exactly() -> None:
    """The trees of veil.apps.demo_xgboost behind the same endpoints: 30 ciphertexts per batch."""
    pytest.importorskip("xgboost")
    m = serve.XGBoostModel()
    with TestClient(serve.create_app(serve.ServeConfig(device="cpu"), {"xgboost": m})) as http:
        spec = http.get("/models").json()["models"][0]
        assert spec["layout"]["ciphertexts_per_batch"] == 30
        r = client.run_demo(http=http, model="xgboost", device="cpu", seed=1, repeats=1,
                            verbose=False)
        assert r["exact"] and r["agreement"] == 1.0 and r["n_ciphertexts"] == 30
        # The plaintext oracle is the quantized forest, walked tree by tree in numpy.
        x, _ = m.samples()
        xq = m.prep.grid.quantize(x)
        q = m.prep.model
        walk = np.full(len(x), q.bias, dtype=np.int64)
        for t in range(q.n_trees):
            for i in range(len(x)):
                node = 0
                for _ in range(q.depth):
                    node = 2 * node + 1 + int(xq[i, q.feature[t, node]] >= q.level[t, node])
                walk[i] += q.leaf[t, node - (2**q.depth - 1)]
        assert np.array_equal(m.reference(x), walk)
        # A partial batch is refused with the count it needs.
        keys = serve.context_from_spec(spec, device="cpu", seed=2)
        sid = open_session(http, keys)
        cts = [keys.encrypt(v, symmetric=True).to_bytes()
               for v in m.encode(x[:3], keys.slot_count)]
        r = http.post(f"/sessions/{sid}/evaluate/xgboost", content=serve.pack_frame(cts[:29]))
        assert r.status_code == 400 and "multiple of 30" in r.json()["detail"]


def test_percentile_is_nearest_rank() -> None:
    v = list(range(1, 101))
    assert client.percentile(v, 50) == 50 and client.percentile(v, 99) == 99
    assert client.percentile(v, 100) == 100 and client.percentile([7], 99) == 7
    with pytest.raises(ValueError):
        client.percentile([], 50)
