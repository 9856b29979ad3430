"""Keys that travel (issue 23, deliverable 4): a CKKS context's bootstrapping keys and parameters
ride in its bundle (``ctx.to_bytes()``, ``ctx.public()``, pickling), and a process without the
secret key bootstraps from them; seeded halves; hostile entries raise ValueError naming the field.

N = 2^11 without a security bound (the format, not the parameters, is under test); the sizes at
N = 2^16 follow from the same formulas (docs/serialization.md)."""

from __future__ import annotations

import pickle
import subprocess
import sys
import textwrap

import numpy as np
import pytest
import veil
from conftest import has_gpu
from veil import _core
from veil import _serialize as ser
from veil._bootstrap import BUNDLE_BLOBS

LOG_N = 11


def make_ctx(word_bits=64, slots=None, seed=3, compact_keys=False, **key_options):
    config = veil.BootstrapConfig(slots=slots)
    chain = veil.ckks.bootstrap_chain(LOG_N, 2, config, word_bits)
    ctx = veil.ckks(poly_modulus_degree=2 ** LOG_N, security=None, device="cpu", seed=seed,
                    galois_steps=None, **chain.context_args())
    ctx.enable_bootstrapping(config, seed=seed, compact_keys=compact_keys, **key_options)
    return ctx


@pytest.fixture(scope="module")
def client():
    return make_ctx(32, slots=64)


def test_a_process_without_the_secret_key_bootstraps_from_the_bundle(client, tmp_path):
    bt = client.bootstrapper
    vals = np.random.default_rng(1).uniform(-1, 1, bt.slots)
    x = client.encrypt(np.tile(vals, client.slot_count // bt.slots))
    for _ in range(client.levels):  # spend the user's levels, as a server's computation would
        x = x * 0.999
    (tmp_path / "bundle").write_bytes(client.to_bytes())
    (tmp_path / "ct").write_bytes(x.to_bytes())
    script = textwrap.dedent(f"""
        import pathlib, veil
        d = pathlib.Path({str(tmp_path)!r})
        server = veil.load_context((d / "bundle").read_bytes(), device="cpu")
        assert not server.has_secret_key and server.bootstrapper is not None
        ct = veil.CKKSCiphertext.from_bytes((d / "ct").read_bytes(), server)
        y = server.bootstrap(ct)
        assert y.level == server.bootstrapper.output_level
        (d / "out").write_bytes(y.to_bytes())
        print(repr(server.bootstrapper))
    """)
    r = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                       timeout=600, check=False)
    assert r.returncode == 0, r.stderr
    assert "veil.Bootstrapper(N=2048, slots=64" in r.stdout
    y = veil.CKKSCiphertext.from_bytes((tmp_path / "out").read_bytes(), client)
    want = np.tile(vals, client.slot_count // bt.slots) * 0.999 ** client.levels
    p = veil.ckks.precision(want, client.decrypt(y))
    print(f"\n[precision] bootstrapped by another process from the bundle: min "
          f"{p['min_bits']:.2f} mean {p['mean_bits']:.2f} bits")
    assert p["mean_bits"] > 20 and p["min_bits"] > 16


def test_compact_keys_halve_the_keys_travel_compact_and_bootstrap_alike():
    """compact_keys=True: the Galois keys keep their b_j only (about half the key bytes); the
    bundle carries them compact, and a context loaded from it (no secret key) bootstraps to the
    client's words; the precision is a bootstrap's (the oracle: the encrypted values)."""
    full = make_ctx(32, slots=64, seed=5)
    compact = make_ctx(32, slots=64, seed=5, compact_keys=True)
    bt = compact.bootstrapper
    # the two switching keys stay full, so a little over half
    assert bt.key_bytes() < 0.56 * full.bootstrapper.key_bytes()
    vals = np.random.default_rng(4).uniform(-1, 1, bt.slots)
    x = compact.encrypt(np.tile(vals, compact.slot_count // bt.slots), level=bt.input_level)
    y = compact.bootstrap(x)
    server = veil.load_context(compact.to_bytes(), device="cpu")
    assert not server.has_secret_key
    assert server.bootstrapper.key_bytes() == bt.key_bytes()  # loaded compact, not expanded
    kg = _core.KeyGenerator(compact.context, "cpu", 9)
    rk = kg.create_relin_keys(compact=True)
    assert rk.compact and not kg.create_relin_keys().compact
    assert rk.data().size * 2 == kg.create_relin_keys().data().size
    z = server.bootstrap(veil.CKKSCiphertext.from_bytes(x.to_bytes(), server))
    np.testing.assert_array_equal(np.asarray(z.raw.data()), np.asarray(y.raw.data()))
    p = veil.ckks.precision(np.tile(vals, compact.slot_count // bt.slots), compact.decrypt(y))
    assert p["mean_bits"] > 20 and p["min_bits"] > 16, p


def test_per_level_and_budgeted_keys_travel_and_bootstrap_alike():
    """Per-level keys (the default) store each Galois key at the highest level bootstrapping
    uses it at: fewer bytes than top-level keys, the same bootstrapped words (a key of a level
    is the top-level key's projection). A byte budget makes the keys cheapest to regenerate
    compact, within the budget; a server loads the mixed set from the bundle (levels and forms
    per key) and bootstraps to the client's words, with a bootstrap's precision (the oracle:
    the encrypted values)."""
    top = make_ctx(32, slots=64, seed=5, per_level_keys=False)
    low = make_ctx(32, slots=64, seed=5)
    bt_top, bt_low = top.bootstrapper, low.bootstrapper
    assert bt_low.key_bytes() < bt_top.key_bytes()
    levels = bt_low.keys.galois_keys.levels
    params = bt_low.parameters
    assert levels == dict(zip(params.galois_elements, params.galois_key_levels))
    assert min(levels.values()) < max(levels.values())
    assert set(bt_top.keys.galois_keys.levels.values()) == {top.context.max_level}
    vals = np.random.default_rng(4).uniform(-1, 1, bt_low.slots)
    x = low.encrypt(np.tile(vals, low.slot_count // bt_low.slots), level=bt_low.input_level)
    xt = veil.CKKSCiphertext.from_bytes(x.to_bytes(), top)
    np.testing.assert_array_equal(np.asarray(low.bootstrap(x).raw.data()),
                                  np.asarray(top.bootstrap(xt).raw.data()))
    compact = make_ctx(32, slots=64, seed=5, compact_keys=True)
    budget = (bt_low.key_bytes() + compact.bootstrapper.key_bytes()) // 2
    mixed = make_ctx(32, slots=64, seed=5, max_key_bytes=budget)
    bt = mixed.bootstrapper
    assert bt.key_bytes() <= budget
    n_compact = len(bt.keys.galois_keys.compact_elts)
    assert 0 < n_compact < len(bt.keys.galois_keys)
    y = mixed.bootstrap(veil.CKKSCiphertext.from_bytes(x.to_bytes(), mixed))
    server = veil.load_context(mixed.to_bytes(), device="cpu")
    assert server.bootstrapper.key_bytes() == bt.key_bytes()
    assert server.bootstrapper.keys.galois_keys.levels == bt.keys.galois_keys.levels
    assert server.bootstrapper.keys.galois_keys.compact_elts == bt.keys.galois_keys.compact_elts
    z = server.bootstrap(veil.CKKSCiphertext.from_bytes(x.to_bytes(), server))
    np.testing.assert_array_equal(np.asarray(z.raw.data()), np.asarray(y.raw.data()))
    p = veil.ckks.precision(np.tile(vals, mixed.slot_count // bt.slots), mixed.decrypt(y))
    assert p["mean_bits"] > 20 and p["min_bits"] > 16, p
    with pytest.raises(ValueError, match="max_key_bytes"):
        make_ctx(32, slots=64, seed=5, max_key_bytes=-1)
    with pytest.raises(ValueError, match="max_bytes"):
        make_ctx(32, slots=64, seed=5, max_key_bytes=1000)


def test_public_views_and_pickles_carry_the_bootstrapper(client):
    view = client.public()
    assert view.bootstrapper is client.bootstrapper and not view.has_secret_key
    loaded = pickle.loads(pickle.dumps(view))
    bt, lb = client.bootstrapper, loaded.bootstrapper
    assert lb is not None and not loaded.has_secret_key
    for name in ("slots", "input_level", "output_level", "levels_left", "rotation_steps",
                 "config", "scale"):
        assert getattr(lb, name) == getattr(bt, name), name
    assert lb.key_bytes() == bt.key_bytes()
    assert loaded.levels == client.levels and loaded.default_level == client.default_level
    # the same words: the loaded keys are the client's keys
    ct = client.encrypt(np.linspace(-1, 1, 64), level=bt.input_level)
    np.testing.assert_array_equal(np.asarray(lb.bootstrap(ct.raw).data()),
                                  np.asarray(bt.bootstrap(ct.raw).data()))
    # a context without bootstrapping writes no such entry
    plain = veil.ckks(poly_modulus_degree=4096, device="cpu", seed=1)
    _, blobs = ser.unpack_bundle(plain.to_bytes())
    assert not set(blobs) & set(BUNDLE_BLOBS)
    assert veil.load_context(plain.to_bytes()).bootstrapper is None


def test_seeded_keys_take_half_the_bytes(client):
    bt = client.bootstrapper
    seeded, full = bt.to_blobs("none"), bt.to_blobs("none", seeded=False)
    assert set(seeded) == set(BUNDLE_BLOBS)
    sizes = {k: (len(seeded[k]), len(full[k])) for k in BUNDLE_BLOBS}
    print("\n[sizes] N = 2^11, 32-bit words, 64 slots (bytes seeded / unseeded):",
          ", ".join(f"{k} {a} / {b}" for k, (a, b) in sizes.items()))
    for k in ("bootstrap_galois_keys", "bootstrap_to_dense"):
        a, b = sizes[k]
        assert a < b / 2 + 4096, k
    # the dense -> sparse key is a key of q_0's level (over q_0 P only): a fraction of a full
    # key, seeded like the others
    a, b = sizes["bootstrap_to_sparse"]
    assert a < b / 2 + 4096
    assert b < sizes["bootstrap_to_dense"][1] / 5
    # seeded=True demands seeds, and every key has one
    demanded = bt.to_blobs("none", seeded=True)
    assert {k: len(v) for k, v in demanded.items()} == {k: a for k, (a, _) in sizes.items()}
    # zstd on top: 32-bit contexts store 4-byte words of uniform residues, which zstd cannot
    # shrink, so those blobs stay uncompressed (the header says so) and the whole is no larger
    z = client.to_bytes()
    assert len(z) <= len(client.to_bytes(compression="none"))


def _bundle_with(data: bytes, name: str, blob: bytes | None) -> bytes:
    meta, blobs = ser.unpack_bundle(data)
    blobs = {k: bytes(v) for k, v in blobs.items()}
    if blob is None:
        del blobs[name]
    else:
        blobs[name] = blob
    meta = {k: v for k, v in meta.items() if k != "blobs"}
    return ser.pack_bundle(meta, blobs)


def test_hostile_entries_raise_value_errors_naming_the_field(client):
    data = client.public().to_bytes(compression="none")
    _, blobs = ser.unpack_bundle(data)
    rng = np.random.default_rng(7)
    for name in BUNDLE_BLOBS:
        blob = bytes(blobs[name])
        cuts = {0, 10, 47, 48, 60, len(blob) // 2, len(blob) - 1} | set(
            rng.integers(0, len(blob), 4).tolist())
        for cut in sorted(c for c in cuts if c < len(blob)):
            with pytest.raises(ValueError, match=f"^{name}: "):
                veil.load_context(_bundle_with(data, name, blob[:cut]))
        for pos in sorted(set(rng.integers(0, min(len(blob), 200), 6).tolist()) | {6, 9, 56}):
            flipped = bytearray(blob)
            flipped[pos] ^= 0x5A
            with pytest.raises(ValueError, match=f"^{name}: "):
                veil.load_context(_bundle_with(data, name, bytes(flipped)))
        with pytest.raises(ValueError, match=f"^{name}: missing from the bundle"):
            veil.load_context(_bundle_with(data, name, None))
    # the descriptor's fields are named: the parameters' slots (offset 64), the key's dnum (76)
    p = bytearray(blobs["bootstrap_config"])
    p[64:68] = (3).to_bytes(4, "little")
    with pytest.raises(ValueError, match="bootstrap_config: bootstrap parameters: slots: expected"):
        veil.load_context(_bundle_with(data, "bootstrap_config", bytes(p)))
    k = bytearray(blobs["bootstrap_to_sparse"])
    k[76:80] = (7).to_bytes(4, "little")
    with pytest.raises(ValueError, match="bootstrap_to_sparse: switching key: dnum: 7 digits"):
        veil.load_context(_bundle_with(data, "bootstrap_to_sparse", bytes(k)))
    # entries swapped between objects, or from another client's key set
    with pytest.raises(ValueError, match="bootstrap_to_sparse: object_type: expected switching"):
        veil.load_context(_bundle_with(data, "bootstrap_to_sparse",
                                       bytes(blobs["bootstrap_galois_keys"])))
    other = make_ctx(32, slots=64, seed=11).public().to_bytes(compression="none")
    _, theirs = ser.unpack_bundle(other)
    with pytest.raises(ValueError, match="bootstrap keys: "):
        veil.load_context(_bundle_with(data, "bootstrap_to_dense",
                                       bytes(theirs["bootstrap_to_dense"])))
    with pytest.raises(ValueError, match="relin_keys: missing from the bundle"):
        veil.load_context(_bundle_with(data, "relin_keys", None))


def test_switching_keys_and_parameters_load_through_the_core_api(client):
    bt = client.bootstrapper
    keys = bt.keys
    for key in (keys.to_sparse, keys.to_dense):
        back = _core.SwitchingKey.from_bytes(key.to_bytes(), client.context, "cpu")
        assert (back.max_level, back.key_set_id, back.from_key_set_id, back.nbytes) == (
            key.max_level, key.key_set_id, key.from_key_set_id, key.nbytes)
        assert pickle.loads(pickle.dumps(key)).max_level == key.max_level
    params = _core.BootstrapParameters.from_bytes(bt.parameters.to_bytes(), client.context)
    assert (params.slots, params.input_level, params.galois_elements) == (
        bt.slots, bt.input_level, bt.parameters.galois_elements)
    # the dense -> sparse key of q_0's level is seeded like the others (half its bytes)
    seeded = keys.to_sparse.to_bytes("none", seeded=True)
    assert len(seeded) < len(keys.to_sparse.to_bytes("none", seeded=False)) / 2 + 4096
    back = _core.SwitchingKey.from_bytes(seeded, client.context, "cpu")
    np.testing.assert_array_equal(np.asarray(back.to_bytes("none", seeded=False)),
                                  np.asarray(keys.to_sparse.to_bytes("none", seeded=False)))
    with pytest.raises(ValueError, match="parameter_hash"):
        _core.BootstrapParameters.from_bytes(bt.parameters.to_bytes(),
                                             make_ctx(64).context)


@pytest.mark.gpu
@pytest.mark.skipif(not has_gpu(), reason="no CUDA GPU visible")
def test_a_gpu_server_bootstraps_from_a_cpu_clients_bundle(client):
    """The client's bundle (made on the CPU) loads on the GPU; the GPU server's bootstrap equals
    the CPU server's word for word (the keys are the same words on both devices)."""
    bt = client.bootstrapper
    data = client.public().to_bytes()
    ct = client.encrypt(np.linspace(-1, 1, 64), level=bt.input_level)
    outs = []
    for device in ("cpu", "cuda"):
        server = veil.load_context(data, device=device)
        at_server = veil.CKKSCiphertext.from_bytes(ct.to_bytes(), server)
        outs.append(np.asarray(server.bootstrap(at_server).raw.to("cpu").data()))
    np.testing.assert_array_equal(outs[0], outs[1])
