"""``veil serve`` against hostile clients (issue 22): session isolation, memory bounds, slow and
vanishing clients, and error messages.

The oracle is each model's plaintext integer model (``model.reference``: the quantized
logistic regression and the quantized forest), computed without the server. After every hostile
case the server must still answer ``/health`` and give an honest client the exact answer.

The attack of issue 22: a client uploads its genuine key bundle with the description rewritten
(``options={"encoding": "coefficients"}``, ``security: null``), which once poisoned the model's
cache of encoded weights and made every later client's scores wrong. Every field of the
description now must equal the model's spec (400 otherwise, before a session exists), and the
server evaluates on its own Context with the model's own options: the tests check both, the
second with the first switched off.
"""

from __future__ import annotations

import gc
import logging
import os
import re
import socket
import struct
import threading
import time

import numpy as np
import pytest

pytest.importorskip("fastapi")
pytest.importorskip("uvicorn")
pytest.importorskip("httpx")
pytest.importorskip("sklearn")

import httpx
import veil
from fastapi.testclient import TestClient
from veil import _core, serve
from veil import _serialize as ser

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

#: Every 4xx message starts with the field at fault, in the server's words.
FIELD_FIRST = r"^[a-z_][a-z0-9_ ]*: "
LEAKS = ("incompatible function arguments", "nanobind", "Traceback", "_core", "0x7f")


# ---- fixtures and helpers -----------------------------------------------------------------------
@pytest.fixture(scope="module")
def logreg() -> serve.LogisticRegressionModel:
    return serve.LogisticRegressionModel()


@pytest.fixture(scope="module")
def xgb() -> serve.XGBoostModel:
    pytest.importorskip("xgboost")
    return serve.XGBoostModel()


@pytest.fixture(scope="module")
def honest(logreg):
    return serve.context_from_spec(logreg.spec(), device="cpu", seed=11)


def app_for(models: dict, **kw):
    kw.setdefault("device", "cpu")
    return serve.create_app(serve.ServeConfig(**kw), models)


def tamper(bundle: bytes, drop=(), **fields) -> bytes:
    """The bundle with its JSON description changed (the keys untouched)."""
    meta, blobs = ser.unpack_bundle(bundle)
    meta = {k: v for k, v in meta.items() if k != "blobs" and k not in drop}
    meta.update(fields)
    return ser.pack_bundle(meta, {k: bytes(v) for k, v in blobs.items()})


def replace_blob(bundle: bytes, **blobs) -> bytes:
    meta, old = ser.unpack_bundle(bundle)
    new = {k: bytes(v) for k, v in old.items()}
    new.update(blobs)
    return ser.pack_bundle({k: v for k, v in meta.items() if k != "blobs"}, new)


def check_message(r) -> str:
    """A refusal's message (4xx, or 503 for a full server): it names the field and leaks no
    library internals."""
    assert 400 <= r.status_code < 500 or r.status_code == 503, (r.status_code, r.text)
    detail = r.json()["detail"]
    assert re.match(FIELD_FIRST, detail), detail
    assert not any(x in detail for x in LEAKS), detail
    return detail


def exact_round_trip(http, model, keys, n: int = 8, sid: str | None = None) -> str:
    """An honest client's session (opened unless ``sid``) and one evaluation, checked against
    the plaintext model; returns the session id."""
    if sid is None:
        r = http.post("/sessions", content=keys.to_bytes())
        assert r.status_code == 201, r.text
        sid = r.json()["session_id"]
    x, _ = model.samples()
    x = x[:n]
    cts = [keys.encrypt(v, symmetric=True).to_bytes() for v in model.encode(x, keys.slot_count)]
    r = http.post(f"/sessions/{sid}/evaluate/{model.name}", content=serve.pack_frame(cts))
    assert r.status_code == 200, r.text
    out = [keys.decrypt(veil.Ciphertext.from_bytes(b, keys))
           for b in serve.unpack_frame(r.content, 64)]
    got = model.decode(out, len(x))
    assert np.array_equal(got, model.reference(x)), (got[:4], model.reference(x)[:4])
    return sid


def still_serving(http, model, keys) -> None:
    h = http.get("/health")
    assert h.status_code == 200 and h.json()["status"] == "ok"
    exact_round_trip(http, model, keys)


#: Descriptions a client may forge: (id, changes, the field the answer must name).
META_ATTACKS = [
    ("encoding-coefficients", {"options": {"encoding": "coefficients"}}, "options"),
    ("encoding-unknown", {"options": {"encoding": "bitsliced"}}, "options"),
    ("options-extra", {"options": {"encoding": "batch", "auto_rescale": False}}, "options"),
    ("options-not-dict", {"options": "batch"}, "options"),
    ("options-missing", {"drop": ("options",)}, "options"),
    ("security-null", {"security": None}, "security"),
    ("security-192", {"security": 192}, "security"),
    ("security-2^70", {"security": 2**70}, "security"),
    ("security-string", {"security": "128"}, "security"),
    ("security-bool", {"security": True}, "security"),
    ("security-float", {"security": 128.0}, "security"),
    ("scheme-bgv", {"scheme": "bgv"}, "scheme"),
    ("scheme-ckks", {"scheme": "ckks"}, "scheme"),
    ("format-2", {"format": 2}, "format"),
    ("format-bool", {"format": True}, "format"),
    ("key-set-id-int", {"key_set_id": 7}, "key_set_id"),
    ("key-set-id-path", {"key_set_id": "../../etc/passwd"}, "key_set_id"),
    ("key-set-id-upper", {"key_set_id": "A" * 32}, "key_set_id"),
    ("unknown-field", {"role": "admin"}, "meta"),
]


def forged(bundle: bytes, changes: dict) -> bytes:
    changes = dict(changes)
    return tamper(bundle, drop=changes.pop("drop", ()), **changes)


# ---- isolation --------------------------------------------------------------------------------
def test_issue_22_attack_as_reported(logreg, honest) -> None:
    """The reported sequence: A forges coefficients + security null, evaluates, deletes; B then
    evaluates 91 samples. A is refused before a session exists; B's scores are exact."""
    attacker = serve.context_from_spec(logreg.spec(), device="cpu", seed=12)
    with TestClient(app_for({"logreg": logreg})) as http:
        r = http.post("/sessions", content=tamper(attacker.to_bytes(), security=None,
                                                   options={"encoding": "coefficients"}))
        assert r.status_code == 400
        assert check_message(r).split(":")[0] in ("options", "security")
        assert http.get("/health").json()["sessions"] == 0
        # B with security null is refused too (the model is served at 128 bits)...
        r = http.post("/sessions", content=tamper(honest.to_bytes(), security=None))
        assert check_message(r).startswith("security: model 'logreg' is served at 128-bit")
        # ... and exact with its genuine bundle.
        exact_round_trip(http, logreg, honest, n=91)


@pytest.mark.parametrize("attack", META_ATTACKS, ids=[a[0] for a in META_ATTACKS])
def test_forged_descriptions_are_refused_in_both_orders(logreg, honest, attack) -> None:
    _, changes, field = attack
    attacker = serve.context_from_spec(logreg.spec(), device="cpu", seed=13)
    with TestClient(app_for({"logreg": logreg})) as http:
        # Honest first: a session and an exact answer, then the attack, then the same session
        # and a new one, both exact.
        sid = exact_round_trip(http, logreg, honest)
        r = http.post("/sessions", content=forged(attacker.to_bytes(), changes))
        assert r.status_code == 400 and check_message(r).startswith(f"{field}:"), r.text
        exact_round_trip(http, logreg, honest, sid=sid)
    with TestClient(app_for({"logreg": logreg})) as http:
        # Attacker first, on a fresh server.
        r = http.post("/sessions", content=forged(attacker.to_bytes(), changes))
        assert r.status_code == 400 and check_message(r).startswith(f"{field}:"), r.text
        assert http.get("/health").json()["sessions"] == 0
        exact_round_trip(http, logreg, honest)


def test_forged_descriptions_are_refused_for_xgboost(xgb, logreg) -> None:
    """Every forged description against the trees, attacker first and honest first, with both
    built-in models served side by side."""
    keys = serve.context_from_spec(xgb.spec(), device="cpu", seed=14)
    attacker = serve.context_from_spec(xgb.spec(), device="cpu", seed=15)
    with TestClient(app_for({"xgboost": xgb, "logreg": logreg})) as http:
        for _, changes, field in META_ATTACKS:
            r = http.post("/sessions", content=forged(attacker.to_bytes(), changes))
            assert r.status_code == 400 and check_message(r).startswith(f"{field}:"), r.text
        assert http.get("/health").json()["sessions"] == 0
        sid = exact_round_trip(http, xgb, keys)
        for _, changes, field in META_ATTACKS:
            r = http.post("/sessions", content=forged(attacker.to_bytes(), changes))
            assert r.status_code == 400 and check_message(r).startswith(f"{field}:"), r.text
        exact_round_trip(http, xgb, keys, sid=sid)
        # The other model's keys fit only the other model.
        lr_keys = serve.context_from_spec(logreg.spec(), device="cpu", seed=16)
        r = http.post("/sessions", content=lr_keys.to_bytes())
        assert r.status_code == 201 and r.json()["models"] == ["logreg"]
        r = http.post(f"/sessions/{r.json()['session_id']}/evaluate/xgboost",
                      content=serve.pack_frame([b"x"]))
        assert check_message(r).startswith("model:")


def test_isolation_holds_by_construction(logreg, honest, monkeypatch) -> None:
    """With the description checks switched off (as if they had a bug), the forged options
    still cannot reach the evaluation: the server's own Context and options are used."""
    monkeypatch.setattr(serve.upload, "check_meta", lambda meta, model: None)
    attacker = serve.context_from_spec(logreg.spec(), device="cpu", seed=17)
    with TestClient(app_for({"logreg": logreg})) as http:
        for options in ({"encoding": "coefficients"}, {"encoding": "batch"}):
            r = http.post("/sessions", content=tamper(attacker.to_bytes(), options=options,
                                                       security=None))
            assert r.status_code == 201, r.text
            s = http.app.state.service.sessions[r.json()["session_id"]]
            assert s.ctx.encoding == "batch" and s.ctx.security == 128
            assert s.ctx.context is logreg.context()
            exact_round_trip(http, logreg, attacker, sid=r.json()["session_id"])
            exact_round_trip(http, logreg, honest)


def test_concurrent_honest_clients_and_attackers(logreg, xgb) -> None:
    """Honest clients of both models and attackers cycling through every forged description,
    at the same time over real sockets: every honest answer exact, every attack a 400."""
    errors: list[str] = []
    app = app_for({"logreg": logreg, "xgboost": xgb}, max_sessions=64)

    def honest_client(model, seed, rounds):
        keys = serve.context_from_spec(model.spec(), device="cpu", seed=seed)
        try:
            with httpx.Client(base_url=url, timeout=120) as http:
                for _ in range(rounds):
                    exact_round_trip(http, model, keys)
        except AssertionError as e:  # pragma: no cover - reported below
            errors.append(f"honest {model.name}: {e}")

    def attacker(model, seed):
        keys = serve.context_from_spec(model.spec(), device="cpu", seed=seed)
        bundle = keys.to_bytes()
        with httpx.Client(base_url=url, timeout=120) as http:
            for _, changes, field in META_ATTACKS:
                r = http.post("/sessions", content=forged(bundle, changes))
                if r.status_code != 400 or not r.json()["detail"].startswith(f"{field}:"):
                    errors.append(f"attack {field}: {r.status_code} {r.text[:100]}")

    with serve.BackgroundServer(app) as url:
        threads = [threading.Thread(target=honest_client, args=(logreg, 20 + i, 3))
                   for i in range(3)]
        threads.append(threading.Thread(target=honest_client, args=(xgb, 30, 1)))
        threads += [threading.Thread(target=attacker, args=(m, 40 + i))
                    for i, m in enumerate((logreg, xgb, logreg))]
        for t in threads:
            t.start()
        for t in threads:
            t.join(timeout=600)
        assert not errors, errors
        assert httpx.get(f"{url}/health").json()["status"] == "ok"


# ---- hostile key uploads ---------------------------------------------------------------------
def galois_bomb(keys, elts) -> bytes:
    """A Galois-keys blob of all-zero seeded keys for the Galois elements ``elts``: a few KiB
    of zstd that expand to count x dnum x limbs x N words (the bomb of issue 22), with a valid
    header and descriptor and a zero checksum."""
    zstandard = pytest.importorskip("zstandard")
    real = keys.galois_keys.to_bytes()
    flags = real[9]
    (h,) = struct.unpack_from("<Q", real, 16)
    (dsize,) = struct.unpack_from("<I", real, 24)
    desc = real[48:48 + dsize]
    pos = 8 + (8 if flags & 2 else 0)
    head = desc[:pos]
    _, dnum, limbs = struct.unpack_from("<III", desc, pos)
    n = keys.poly_modulus_degree
    count = len(elts)
    d = head + struct.pack("<III", count, dnum, limbs)
    for e in elts:
        d += struct.pack("<I", e) + (b"\0" * 32 if flags & 1 else b"")
    body_len = count * dnum * (1 if flags & 1 else 2) * limbs * n * 8
    stored = zstandard.ZstdCompressor().compress(b"\0" * body_len)
    hdr = (b"VEIL" + struct.pack("<HBBBBH", 1, 7, real[7], 2, flags, 0) + struct.pack("<I", 0)
           + struct.pack("<Q", h) + struct.pack("<II", len(d), 0)
           + struct.pack("<QQ", body_len, len(stored)))
    return hdr + d + stored


def test_galois_key_bomb_is_refused_before_loading(logreg, honest) -> None:
    own = sorted(logreg.galois_elts())
    bomb = galois_bomb(honest, sorted(own + [e for e in range(3, 999, 2) if e not in own][:58]))
    assert len(bomb) < 64 * 1024
    info = serve.read_key_blob("galois_keys", bomb)
    assert info.key_bytes >= 64 * 2 * 2**20  # what it would take decompressed
    app = app_for({"logreg": logreg})
    with TestClient(app) as http:
        service = app.state.service
        loads = []
        real_load = service.load_session
        service.load_session = lambda plan: loads.append(plan) or real_load(plan)
        before = _core.bytes_in_use("cpu")
        r = http.post("/sessions", content=replace_blob(honest.to_bytes(), galois_keys=bomb))
        assert check_message(r).startswith("galois_keys: elements")
        assert not loads and _core.bytes_in_use("cpu") == before
        # The same bomb over the model's own elements is within the budget; the loader then
        # refuses its checksum: 400, nothing kept, the reservation returned.
        r = http.post("/sessions", content=replace_blob(honest.to_bytes(),
                                                        galois_keys=galois_bomb(honest, own)))
        assert check_message(r).startswith("galois_keys: crc32:") and len(loads) == 1
        h = service.health()
        assert h["sessions"] == 0 and h["key_bytes"]["in_use"] == 0
        still_serving(http, logreg, honest)


def test_declared_sizes_are_budgeted_before_allocation(logreg, honest) -> None:
    """A key whose header declares a huge decompressed body is refused from the header."""
    relin = bytearray(honest.relin_keys.to_bytes())
    struct.pack_into("<Q", relin, 32, 1 << 40)  # body size: 1 TiB
    app = app_for({"logreg": logreg})
    with TestClient(app) as http:
        app.state.service.load_session = lambda plan: pytest.fail("reached the loader")
        r = http.post("/sessions", content=replace_blob(honest.to_bytes(),
                                                        relin_keys=bytes(relin)))
        assert r.status_code == 413 and check_message(r).startswith("keys:")
        assert "max_session_key_bytes" in r.json()["detail"]
    with TestClient(app_for({"logreg": logreg})) as http:
        still_serving(http, logreg, honest)


def test_per_session_and_total_key_budgets(logreg, honest) -> None:
    need = logreg.key_bytes()
    with TestClient(app_for({"logreg": logreg}, max_session_key_bytes=need - 1)) as http:
        r = http.post("/sessions", content=honest.to_bytes())
        assert r.status_code == 413 and check_message(r).startswith("keys:")
    app = app_for({"logreg": logreg}, max_key_bytes=2 * need + need // 2)
    with TestClient(app) as http:
        a = exact_round_trip(http, logreg, honest)
        exact_round_trip(http, logreg, honest)
        r = http.post("/sessions", content=honest.to_bytes())
        assert r.status_code == 503 and check_message(r).startswith("keys:")
        assert "max_key_bytes" in r.json()["detail"]
        assert http.get("/health").json()["key_bytes"]["in_use"] == 2 * need
        assert http.delete(f"/sessions/{a}").status_code == 204
        exact_round_trip(http, logreg, honest)


def hostile_uploads(honest, logreg) -> dict[str, bytes]:
    spec = logreg.spec()
    other = serve.context_from_spec(spec, device="cpu", seed=18)
    foreign = veil.bfv(poly_modulus_degree=8192, plain_modulus=65537, device="cpu", seed=19,
                       galois_steps=[1])
    bundle = honest.to_bytes()
    gk = honest.galois_keys.to_bytes()
    flipped = gk[:-100] + bytes([gk[-100] ^ 0xFF]) + gk[-99:]
    secret = honest.to_bytes(include_secret_key=True)
    _, sblobs = ser.unpack_bundle(secret)
    return {
        "secret key entry": secret,
        "secret key as the public key": replace_blob(bundle,
                                                     public_key=bytes(sblobs["secret_key"])),
        "relin keys as Galois keys": replace_blob(bundle,
                                                  galois_keys=honest.relin_keys.to_bytes()),
        "keys of other parameters": replace_blob(bundle,
                                                 relin_keys=foreign.relin_keys.to_bytes()),
        "keys of two key sets": replace_blob(bundle, relin_keys=other.relin_keys.to_bytes()),
        "truncated Galois keys": replace_blob(bundle,
                                              galois_keys=honest.galois_keys.to_bytes()[:5000]),
        "flipped Galois key byte": replace_blob(bundle, galois_keys=flipped),
        "not a key": replace_blob(bundle, public_key=b"VEIL" + b"\0" * 60),
        "bad parameters": replace_blob(bundle, parameters=b"VEIL" + b"\1" * 60),
        "unexpected entry": replace_blob(bundle, plaintext=b"x"),
        "garbage": b"VEILCTX\x01" + os.urandom(200),
    }


def test_hostile_uploads_are_400_and_release_their_budget(logreg, honest) -> None:
    app = app_for({"logreg": logreg})
    with TestClient(app) as http:
        for what, body in hostile_uploads(honest, logreg).items():
            r = http.post("/sessions", content=body)
            assert r.status_code == 400, (what, r.status_code, r.text)
            check_message(r)
            h = http.get("/health").json()
            assert h["sessions"] == 0 and h["key_bytes"]["in_use"] == 0, what
            still_serving(http, logreg, honest)
            for sid in list(app.state.service.sessions):
                http.delete(f"/sessions/{sid}")


def test_hostile_requests_are_400(logreg, honest) -> None:
    other = serve.context_from_spec(logreg.spec(), device="cpu", seed=21)
    with TestClient(app_for({"logreg": logreg})) as http:
        sid = exact_round_trip(http, logreg, honest)
        good = honest.encrypt([1, 2, 3], symmetric=True).to_bytes()
        bodies = {
            "empty": b"",
            "frame count 0": serve.FRAME_MAGIC + struct.pack("<I", 0),
            "length past the end": serve.FRAME_MAGIC + struct.pack("<IQ", 1, 1 << 60),
            "a key": serve.pack_frame([honest.relin_keys.to_bytes()]),
            "another key set": serve.pack_frame([other.encrypt([1]).to_bytes()]),
            "a secret key": serve.pack_frame([honest.secret_key.to_bytes()]),
            "too many": serve.pack_frame([good] * 17),
        }
        for what, body in bodies.items():
            r = http.post(f"/sessions/{sid}/evaluate/logreg", content=body)
            assert r.status_code == 400, (what, r.text)
            check_message(r)
            exact_round_trip(http, logreg, honest, sid=sid)


# ---- memory returns -----------------------------------------------------------------------------
def rss_bytes() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="needs /proc (Linux)")
def test_memory_returns_after_delete_and_expiry_over_200_sessions(logreg, honest) -> None:
    now = [0.0]
    app = app_for({"logreg": logreg}, session_ttl_s=10.0, max_sessions=8)
    bundle = honest.to_bytes()
    with TestClient(app) as http:
        service = app.state.service
        service.clock = lambda: now[0]

        def settle() -> int:
            service.executor.submit(lambda: None).result()  # releases run on the device thread
            gc.collect()
            return _core.bytes_in_use("cpu")

        def cycle(i: int) -> None:
            r = http.post("/sessions", content=bundle)
            assert r.status_code == 201, r.text
            if i % 2:
                assert http.delete(f"/sessions/{r.json()['session_id']}").status_code == 204
            else:
                now[0] += 11.0  # past the TTL: the next request sweeps it
                assert http.get("/health").json()["sessions"] == 0

        for i in range(20):  # warm-up: allocator pools, caches
            cycle(i)
        base_bytes, base_rss = settle(), rss_bytes()
        for i in range(200):
            cycle(i)
        assert http.get("/health").json()["key_bytes"]["in_use"] == 0
        grown_bytes, grown_rss = settle() - base_bytes, rss_bytes() - base_rss
        # 200 sessions of 18 MiB of keys each: a leak of even one session's keys shows.
        assert grown_bytes == 0, grown_bytes
        assert grown_rss < logreg.key_bytes(), grown_rss
        exact_round_trip(http, logreg, honest)


# ---- slow and vanishing clients (real sockets) --------------------------------------------------
@pytest.fixture
def timed_server(logreg):
    app = app_for({"logreg": logreg}, header_timeout_s=0.5, body_timeout_s=0.5)
    records: list[logging.LogRecord] = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(record)

    handler = Keep(level=logging.DEBUG)
    loggers = [logging.getLogger(n) for n in ("veil.serve", "uvicorn.error", "uvicorn")]
    with serve.BackgroundServer(app) as url:
        for lg in loggers:
            lg.addHandler(handler)
        old = logging.getLogger("veil.serve").level
        logging.getLogger("veil.serve").setLevel(logging.INFO)
        try:
            yield url, app.state.service, records
        finally:
            logging.getLogger("veil.serve").setLevel(old)
            for lg in loggers:
                lg.removeHandler(handler)


def raw(url: str) -> socket.socket:
    host, port = url.removeprefix("http://").split(":")
    s = socket.create_connection((host, int(port)), timeout=10)
    return s


def read_all(s: socket.socket, limit: float = 10.0) -> bytes:
    s.settimeout(limit)
    out = b""
    try:
        while True:
            chunk = s.recv(65536)
            if not chunk:
                return out
            out += chunk
    except (socket.timeout, ConnectionResetError):
        return out


def test_slow_headers_are_408_and_closed(timed_server, logreg, honest) -> None:
    url, service, records = timed_server
    for partial in (b"", b"POST /sessions HTTP/1.1\r\nHost: x\r\n"):
        with raw(url) as s:
            s.sendall(partial)
            t0 = time.monotonic()
            answer = read_all(s)
            assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
            assert b"header_timeout_s" in answer
            assert time.monotonic() - t0 < 5
    assert service.timeouts == 2
    with httpx.Client(base_url=url, timeout=60) as http:
        still_serving(http, logreg, honest)
    assert not [r for r in records if r.levelno >= logging.ERROR]


def test_slow_body_is_408(timed_server, logreg, honest) -> None:
    url, service, records = timed_server
    with raw(url) as s:
        s.sendall(b"POST /sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
                  + b"\0" * 1000)
        answer = read_all(s)
    assert answer.startswith(b"HTTP/1.1 408"), answer[:200]
    assert b"body_timeout_s" in answer and service.timeouts == 1
    with httpx.Client(base_url=url, timeout=60) as http:
        still_serving(http, logreg, honest)
    assert not [r for r in records if r.levelno >= logging.ERROR]


def test_disconnects_are_counted_and_logged_without_a_traceback(timed_server, logreg,
                                                                honest) -> None:
    url, service, records = timed_server
    for _ in range(2):
        with raw(url) as s:
            s.sendall(b"POST /sessions HTTP/1.1\r\nHost: x\r\nContent-Length: 100000\r\n\r\n"
                      + b"\0" * 1000)
            time.sleep(0.1)
    deadline = time.monotonic() + 5
    while service.disconnects < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    with httpx.Client(base_url=url, timeout=60) as http:
        h = http.get("/health").json()
        assert h["disconnects"] == 2 and h["timeouts"] == 0, h
        still_serving(http, logreg, honest)
    errors = [r for r in records if r.levelno >= logging.ERROR]
    assert not errors, [r.getMessage() for r in errors]
    gone = [r for r in records if "disconnected" in r.getMessage()]
    assert gone and all(r.levelno == logging.INFO and r.exc_info is None for r in gone)


def test_config_rejects_bad_limits() -> None:
    for kw in ({"header_timeout_s": 0}, {"body_timeout_s": -1}, {"max_key_bytes": 0},
               {"max_session_key_bytes": True}, {"body_timeout_s": True}):
        with pytest.raises(ValueError, match=next(iter(kw))):
            serve.ServeConfig(**kw)


def test_large_uploads_are_spooled_to_disk(logreg, honest, monkeypatch, tmp_path) -> None:
    """Key uploads above spool_bytes go to a temporary file read through a memory map (so
    gigabytes of bootstrapping keys never sit whole in Python's memory); the size is reported."""
    import tempfile

    made = []
    real = tempfile.TemporaryFile

    def spy(*a, **k):
        f = real(*a, **k)
        made.append(k.get("dir"))
        return f

    monkeypatch.setattr(serve.app.tempfile, "TemporaryFile", spy)
    bundle = honest.to_bytes()
    app = app_for({"logreg": logreg}, spool_bytes=1 << 20, upload_dir=str(tmp_path))
    with TestClient(app) as http:
        r = http.post("/sessions", content=iter([bundle[i:i + 65536]
                                                 for i in range(0, len(bundle), 65536)]))
        assert r.status_code == 201, r.text
        assert r.json()["upload_bytes"] == len(bundle) > 1 << 20
        assert made == [str(tmp_path)]
        exact_round_trip(http, logreg, honest, sid=r.json()["session_id"])
        # A broken large upload is spooled too and answered 400 naming the field.
        made.clear()
        r = http.post("/sessions", content=bundle[:-10])
        assert made == [str(tmp_path)] and r.status_code == 400
        check_message(r)
        assert list(tmp_path.iterdir()) == []  # the temporary files are gone


def test_concurrent_uploads_respect_the_session_cap(logreg, honest) -> None:
    """Uploads being loaded count against max_sessions: racing uploads never overshoot it."""
    import concurrent.futures

    app = app_for({"logreg": logreg}, max_sessions=2)
    bundle = honest.to_bytes()
    with serve.BackgroundServer(app) as url:
        def upload(_):
            return httpx.post(f"{url}/sessions", content=bundle, timeout=120).status_code

        with concurrent.futures.ThreadPoolExecutor(6) as pool:
            codes = list(pool.map(upload, range(6)))
        h = httpx.get(f"{url}/health").json()
        assert codes.count(201) == h["sessions"] <= 2 and codes.count(201) >= 1, (codes, h)
        assert set(codes) <= {201, 503} and h["opening"] == 0
        assert h["key_bytes"]["in_use"] == h["sessions"] * logreg.key_bytes()
