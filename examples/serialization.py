"""Serialization: keys and ciphertexts as bytes, files and pickles, client to server and back.

Shows: the client's context bundle (parameters + public, relinearization and Galois keys;
never the secret key unless asked) as bytes and as a file, the server's view loaded from it,
symmetric (seeded) ciphertexts at half the size, a ciphertext's round trip client -> server ->
client, pickling (a context with a secret key refuses), a client saving its own secret key
explicitly, and SEAL 4.x bytes of a Veil ciphertext. Each step decrypts and compares with
numpy. Format details: docs/serialization.md.

Run it::

    python examples/serialization.py

Parameters: BFV, N = 4096, t = 65537. About a second on a CPU.
"""

from __future__ import annotations

import os
import pickle
import tempfile

import numpy as np

import veil


def main() -> None:
    # Galois keys for the one rotation step the server uses (fewer keys: smaller bundle).
    client = veil.bfv(poly_modulus_degree=4096, plain_modulus=65537, galois_steps=[1],
                      device="auto")
    t = client.plain_modulus
    m = np.arange(client.slot_count) % 200

    # The client's evaluation keys, as bytes: what a server needs, without the secret key.
    bundle = client.to_bytes()
    server = veil.load_context(bundle)            # onto "auto": the GPU when there is one
    assert not server.has_secret_key
    print(f"context bundle: {len(bundle) / 2**20:.2f} MiB (public, relinearization and "
          "Galois keys; zstd; seeded)")

    # Symmetric encryption (the client's secret key): the ciphertext travels as a seed for its
    # uniform half, so its bytes are about half of a public-key encryption's.
    public_ct = client.encrypt(m).to_bytes()
    seeded_ct = client.encrypt(m, symmetric=True).to_bytes()
    print(f"ciphertext: {len(public_ct) / 2**10:.0f} KiB (public key), "
          f"{len(seeded_ct) / 2**10:.0f} KiB (symmetric, seeded)")
    assert len(seeded_ct) < 0.6 * len(public_ct)

    # Server side: load, compute with evaluation keys only, send back.
    at_server = veil.Ciphertext.from_bytes(seeded_ct, server)
    reply = (at_server * at_server + 1).rotate_rows(1).to_bytes()
    try:
        server.decrypt(at_server)
    except ValueError as e:
        print("the server cannot decrypt:", e)
    else:
        raise AssertionError("a server view must not decrypt")

    # Client side: load the reply into the client's context and decrypt.
    back = client.decrypt(veil.Ciphertext.from_bytes(reply, client))
    sq = (m * m + 1) % t
    half = client.row_size
    want = np.concatenate([np.roll(sq[:half], -1), np.roll(sq[half:], -1)])
    want = np.where(want > t // 2, want - t, want)
    assert np.array_equal(back, want)
    print("client -> server -> client: (m * m + 1) rotated by one, decrypted exactly")

    # Files: the same bytes through save/load.
    with tempfile.TemporaryDirectory() as tmp:
        keys_path = os.path.join(tmp, "server_keys.veil")
        ct_path = os.path.join(tmp, "ct.veil")
        client.save(keys_path)                     # no secret key
        client.encrypt(m, symmetric=True).save(ct_path)
        srv = veil.KeyedContext.load(keys_path)   # any scheme; same as load_context(bytes)
        loaded = veil.Ciphertext.load(ct_path, srv)
        assert np.array_equal(client.decrypt(veil.Ciphertext.from_bytes(loaded.to_bytes(),
                                                                        client)), m)
        # The client's own keys, secret key included: only when asked for explicitly.
        mine = os.path.join(tmp, "client_keys.veil")
        client.save(mine, include_secret_key=True)
        restored = veil.KeyedContext.load(mine)
        assert restored.has_secret_key
        assert np.array_equal(restored.decrypt(veil.Ciphertext.load(ct_path, restored)), m)
        print(f"files: server keys {os.path.getsize(keys_path) / 2**20:.2f} MiB, client keys "
              f"with the secret key {os.path.getsize(mine) / 2**20:.2f} MiB; reloaded and "
              "decrypted")

    # Pickle: ciphertexts and server views pickle; a context holding a secret key does not.
    ct = client.encrypt(m)
    again = pickle.loads(pickle.dumps(ct))
    assert np.array_equal(client.decrypt(again), m)
    view = pickle.loads(pickle.dumps(client.public()))
    assert not view.has_secret_key
    try:
        pickle.dumps(client)
    except TypeError as e:
        print("pickling the client's context:", str(e).split(";")[0])
    else:
        raise AssertionError("a context with a secret key must not pickle")
    print("pickle: ciphertext and server view round-trip")

    # SEAL 4.x bytes (Microsoft SEAL's Ciphertext.load reads them) and back into Veil.
    sealed = veil.seal.save(ct)
    same = veil.seal.load_ciphertext(sealed, client)
    assert np.array_equal(client.decrypt(same), m)
    print(f"SEAL format: {len(sealed) / 2**10:.0f} KiB (uncompressed), loaded back and decrypted")
    print("serialization: OK")


if __name__ == "__main__":
    main()
