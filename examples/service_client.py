"""Encrypted inference over HTTP: a model served by ``veil.serve``, called with
``veil.serve.client``.

Shows: a served model of your own (a :class:`veil.serve.ServedModel`: here a weighted sum of
8 integer features plus a bias, computed with plaintext multiplication, rotate-and-add and a
plaintext addition), the FastAPI application started in this process on a free port of
127.0.0.1 (:class:`veil.serve.BackgroundServer`), and the client side with
:class:`veil.serve.client.VeilClient`: read the model's public spec, make a key set that fits it
locally, upload the evaluation keys (never the secret key: the server refuses one), send
encrypted samples, decrypt the answers, and compare them with the plaintext model. The server
is stopped at the end.

Run it (needs ``pip install "veil[serve]"``: fastapi, uvicorn, httpx)::

    python examples/service_client.py

The same client code talks to a real server: ``veil serve --port 8000`` serves the built-in
``logreg`` and ``xgboost`` models (``veil demo --server http://127.0.0.1:8000`` is their
client). Parameters: BFV, N = 4096, t = 65537; a few seconds on a CPU.
"""

from __future__ import annotations

import hashlib

import numpy as np

from veil import serve
from veil.serve.client import ServerError, VeilClient

FEATURES = 8  # slots per sample: a power of two, so log2(FEATURES) rotations sum a block


class WeightedSum(serve.ServedModel):
    """score = x . w + b for integer features x (8 per sample), integer weights w and bias b.

    Packing: sample k in slots [8 k, 8 k + 8) (N / 8 samples per ciphertext); after the
    server's rotate-and-add, slot 8 k holds the score of sample k.
    """

    name = "wsum"
    description = "weighted sum of 8 integer features plus a bias (BFV, exact)"
    poly_modulus_degree = 4096
    plain_modulus = 65537            # a prime = 1 mod 2N: batching
    relin_keys = False               # no ciphertext x ciphertext product
    galois_steps = (1, 2, 4)         # rotate-and-add over 8 slots
    max_ciphertexts = 4

    def __init__(self, weights, bias: int) -> None:
        self.weights = np.asarray(weights, dtype=np.int64)
        self.bias = int(bias)
        if self.weights.shape != (FEATURES,):
            raise ValueError(f"weights: expected {FEATURES} integers, got shape "
                             f"{self.weights.shape}")

    # -- server side --
    def evaluate(self, ctx, cts):
        out = []
        for ct in cts:                       # len(ct): the values the client encrypted
            if len(ct) % FEATURES:
                raise ValueError(f"cts: expected a multiple of {FEATURES} values, got {len(ct)}")
            w = np.tile(self.weights, len(ct) // FEATURES)
            b = np.zeros(len(ct), dtype=np.int64)
            b[::FEATURES] = self.bias
            y = ct * w                       # plaintext multiplication, slot by slot
            for s in self.galois_steps:      # slot 8k += slots 8k+1 .. 8k+7
                y = y + y.rotate_rows(s)
            out.append(y + b)
        return out

    def layout(self) -> dict:
        return {"kind": "example.wsum/1", "features": FEATURES,
                "input": "sample k in slots [8 k, 8 k + 8)", "output": "slot 8 k: score of k"}

    def weights_digest(self) -> str:
        data = np.append(self.weights, self.bias).astype(np.int64).tobytes()
        return hashlib.sha256(data).hexdigest()

    # -- client side --
    def encode(self, features, slot_count):
        x = np.asarray(features, dtype=np.int64)
        per_ct = slot_count // FEATURES
        return [x[i:i + per_ct].reshape(-1) for i in range(0, len(x), per_ct)]

    def decode(self, slot_vectors, n_samples):
        return np.concatenate([v[::FEATURES] for v in slot_vectors])[:n_samples]

    def reference(self, features):
        return np.asarray(features, dtype=np.int64) @ self.weights + self.bias

    def samples(self):
        rng = np.random.default_rng(5)
        x = rng.integers(-8, 9, size=(600, FEATURES))
        return x, (self.reference(x) > 0).astype(np.int64)


def main() -> None:
    model = WeightedSum(weights=[3, -1, 4, 1, -5, 9, 2, -6], bias=7)
    app = serve.create_app(serve.ServeConfig(device="auto"), {model.name: model})
    with serve.BackgroundServer(app) as url, VeilClient(url) as server:
        health = server.health()
        print(f"server {url}: veil {health['version']} on {health['device']}, "
              f"models {health['models']}")

        spec = server.model("wsum")                        # public: parameters, keys, layout
        ctx = serve.context_from_spec(spec, device="auto")  # keys made here, secret stays here
        try:
            server.open_session_bytes(ctx.to_bytes(include_secret_key=True))
        except ServerError as e:
            print(f"an upload with the secret key is refused: HTTP {e.status}")
        else:
            raise AssertionError("the server must refuse a secret key")
        sid = server.open_session(ctx)                     # public + Galois keys only

        x, _ = model.samples()
        cts = [ctx.encrypt(v, symmetric=True) for v in model.encode(x, ctx.slot_count)]
        results = server.evaluate(sid, "wsum", cts)
        got = model.decode([ctx.decrypt(r) for r in results], len(x))
        want = x @ model.weights + model.bias              # the plaintext model, in numpy
        assert np.array_equal(got, want), "decrypted scores differ from the plaintext model"
        print(f"{len(x)} samples in {len(cts)} ciphertexts: every decrypted score equals "
              f"x . w + b (first: {got[:5].tolist()})")
        server.close_session(sid)
    print("service_client: OK")


if __name__ == "__main__":
    main()
