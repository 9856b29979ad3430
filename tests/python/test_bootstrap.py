"""CKKS bootstrapping and its primitives (ModRaise, switching keys between secrets, sparse secrets,
X^k products, the factored special FFT). Oracles: dense numpy matrices built from the definition
of the canonical embedding, numpy complex arithmetic, and decryption under the other secret."""

import math

import numpy as np
import pytest
import veil
from veil import _bootstrap as B
from veil import _core

from conftest import has_gpu

LOG_N = 11  # small N, no security bound: the pipeline, not the parameters, is under test


def dense_w(n: int) -> np.ndarray:
    """W[j, k] = zeta^(g^j k), zeta = exp(2 pi i / 4n), g = -3 mod 4n (the definition)."""
    m = 4 * n
    g = m - 3
    return np.array([[np.exp(2j * np.pi * pow(g, j, m) * k / m) for k in range(n)]
                     for j in range(n)])


def bitrev(n: int) -> np.ndarray:
    b = n.bit_length() - 1
    return np.array([int(format(i, f"0{b}b")[::-1], 2) for i in range(n)])


def apply_diags(diags: dict, x: np.ndarray) -> np.ndarray:
    return sum(d * np.roll(x, -k) for k, d in diags.items())


def coeffs_from_slots(z: np.ndarray) -> np.ndarray:
    """t_lo + i t_hi of the real polynomial whose slots (SEAL's order) are z: solve
    E z + O conj(z) = W w, the relation the transforms rely on (from the definition of the slot
    roots zeta^(3^j): odd slots sit at the conjugates of W's roots)."""
    n = len(z)
    even = np.arange(n) % 2 == 0
    return np.linalg.solve(dense_w(n), np.where(even, z, z.conj()))


@pytest.mark.parametrize("n", [4, 16, 64])
def test_special_fft_stages_factor_the_dense_matrix(n):
    rng = np.random.default_rng(n)
    x = rng.normal(size=n) + 1j * rng.normal(size=n)
    y = x[bitrev(n)]
    for st in _core.special_fft_stages(n):  # the C++ stages (circuits/dft.h)
        y = apply_diags(st, y)
    np.testing.assert_allclose(y, dense_w(n) @ x, atol=1e-9)
    # the inverse stages undo them (in reverse order)
    for st in reversed(_core.special_ifft_stages(n)):
        y = apply_diags(st, y)
    np.testing.assert_allclose(y, x[bitrev(n)], atol=1e-9)


def small_ctx(device="cpu", word_bits=64, slots=None, seed=3, **cfg):
    config = B.BootstrapConfig(slots=slots, **cfg)
    chain = B.bootstrap_chain(LOG_N, 2, config, word_bits)
    ctx = veil.ckks(poly_modulus_degree=2 ** LOG_N, security=None, device=device, seed=seed,
                    galois_steps=None, **chain.context_args())
    ctx.enable_bootstrapping(config, seed=seed)
    return ctx


@pytest.fixture(scope="module")
def boot_ctx():
    return small_ctx()


def random_slots(n, reps, seed=0):
    rng = np.random.default_rng(seed)
    x = rng.uniform(-1, 1, n) + 1j * rng.uniform(-1, 1, n)
    return np.tile(x, reps)


def test_mod_raise_adds_multiples_of_q0(boot_ctx):
    ctx, bt = boot_ctx, boot_ctx.bootstrapper
    vals = random_slots(ctx.slot_count, 1, 4)
    ct = ctx.encrypt(vals, level=bt.q0_level).raw
    raised = ctx.evaluator.mod_raise(ct)
    assert raised.level == ctx.max_level and raised.scale == ct.scale
    dec = lambda c: ctx.encoder.decode(ctx.decryptor.decrypt(c))
    w0 = coeffs_from_slots(dec(ct)) * ct.scale
    w1 = coeffs_from_slots(dec(raised)) * ct.scale
    diff = (w1 - w0) / bt.q0  # = I: integers (the dense secret: |I| up to ~ sqrt(N))
    for part in (diff.real, diff.imag):
        assert np.abs(part - np.round(part)).max() < 1e-3
    assert np.abs(np.round(diff)).max() > 0  # something was raised
    with pytest.raises(ValueError, match="encrypted: ModRaise expects a level inside q_0"):
        ctx.evaluator.mod_raise(ctx.encrypt(vals).raw)


def test_sparse_secret_keeps_raise_overflow_small(boot_ctx):
    ctx, bt = boot_ctx, boot_ctx.bootstrapper
    vals = random_slots(ctx.slot_count, 1, 5)
    ev = ctx.evaluator
    ct = ev.switch_key(ctx.encrypt(vals, level=bt.q0_level).raw, bt.to_sparse)
    raised = ev.switch_key(ev.mod_raise(ct), bt.to_dense)
    got = ctx.encoder.decode(ctx.decryptor.decrypt(raised))
    w = coeffs_from_slots(got) * raised.scale / bt.q0
    k = np.abs(np.round(np.concatenate([w.real, w.imag]))).max()
    assert 1 <= k <= bt.config.k_range  # h = 32: |I| ~ 1.6 sigma per coefficient


def test_switching_key_between_secrets(device):
    ctx = veil.ckks(poly_modulus_degree=4096, device=device, seed=1, galois_steps=None)
    other = _core.KeyGenerator(ctx.context, device, 9)
    swk = other.create_switching_key(ctx.secret_key)
    vals = random_slots(ctx.slot_count, 1, 6)
    ct = ctx.encrypt(vals).raw
    moved = ctx.evaluator.switch_key(ct, swk)
    assert moved.key_set_id == swk.key_set_id != ct.key_set_id
    got = ctx.encoder.decode(_core.Decryptor(ctx.context, other.secret_key()).decrypt(moved))
    assert veil.ckks.precision(vals, got)["min_bits"] > 12  # scale 2^30 at N = 4096
    # the old secret refuses it (key-set check) rather than decrypting noise
    with pytest.raises(ValueError, match="belongs to another key set"):
        ctx.decrypt(veil.CKKSCiphertext(ctx, moved, True))
    with pytest.raises(ValueError, match="switching_key: switches from another key set"):
        ctx.evaluator.switch_key(moved, swk)
    low = other.create_switching_key(ctx.secret_key, 0)
    assert low.max_level == 0
    with pytest.raises(ValueError, match="serves levels <= 0"):
        ctx.evaluator.switch_key(ct, low)
    with pytest.raises(ValueError, match="max_level: expected at most"):
        other.create_switching_key(ctx.secret_key, 99)


def test_sparse_keygen_checks_weight():
    ctx = veil.ckks(poly_modulus_degree=4096, device="cpu", seed=1, galois_steps=None)
    with pytest.raises(ValueError, match="hamming_weight: expected 1..4096"):
        _core.KeyGenerator(ctx.context, "cpu", 1, hamming_weight=5000)


def test_multiply_monomial_half_degree(device):
    ctx = veil.ckks(poly_modulus_degree=4096, device=device, seed=2, galois_steps=None)
    vals = random_slots(ctx.slot_count, 1, 7)
    got = ctx.decrypt(veil.CKKSCiphertext(
        ctx, ctx.evaluator.multiply_monomial(ctx.encrypt(vals).raw, ctx.poly_modulus_degree // 2),
        True))
    sign = np.where(np.arange(ctx.slot_count) % 2 == 0, 1, -1)
    assert veil.ckks.precision(1j * sign * vals, got)["min_bits"] > 15  # fresh: ~18 bits at 2^30
    with pytest.raises(ValueError, match="k: expected an exponent below 2N"):
        ctx.evaluator.multiply_monomial(ctx.encrypt(vals).raw, 2 * ctx.poly_modulus_degree)


def test_scalar_products_and_sums(device):
    ctx = veil.ckks(poly_modulus_degree=8192, device=device, seed=2, galois_steps=None)
    ev = ctx.evaluator
    vals = random_slots(ctx.slot_count, 1, 11)
    ct = ctx.encrypt(vals).raw
    dec = lambda c: ctx.encoder.decode(ctx.decryptor.decrypt(c))
    # at scale 2^40 the integer round(c * 2^40) fits a word; at 2^75 it takes the m * 2^e path
    for c, s in ((-3.7, 2.0 ** 40), (0.123456789, 2.0 ** 75)):
        prod = ev.multiply_scalar(ct, c, s)
        assert prod.scale == ct.scale * s and prod.level == ct.level
        assert veil.ckks.precision(c * vals, dec(ev.rescale_to_next(prod)))["min_bits"] > 18
    # 0.5 + 2 x - 0.25 y at level 1 (y one level lower) and scale 2^45, one pass
    y = ev.mod_switch_to_next(ctx.encrypt(vals[::-1].copy()).raw)
    comb = ev.scalar_combination([ct, y], [2.0, -0.25], 0.5, 2.0 ** 45, 1)
    assert comb.level == 1 and comb.scale == 2.0 ** 45
    assert veil.ckks.precision(0.5 + 2 * vals - 0.25 * vals[::-1], dec(comb))["min_bits"] > 18
    with pytest.raises(ValueError, match="encrypted: expected NTT-form ciphertexts of size 2"):
        ev.scalar_combination([ct, y], [1.0, 1.0], 0.0, 2.0 ** 45, y.level + 1)
    with pytest.raises(ValueError, match="values: expected 2 values, got 1"):
        ev.scalar_combination([ct, y], [1.0], 0.0, 2.0 ** 45, 1)
    with pytest.raises(ValueError, match="term 0's scale exceeds"):
        ev.scalar_combination([ct], [1.0], 0.0, 2.0 ** 30, 1)
    summed = ev.add_scalar(ct, -0.625)
    assert veil.ckks.precision(vals - 0.625, dec(summed))["min_bits"] > 20
    with pytest.raises(ValueError, match="value: expected a finite number"):
        ev.multiply_scalar(ct, float("nan"), 2.0 ** 40)
    with pytest.raises(ValueError, match="scale: expected a finite scale >= 1"):
        ev.multiply_scalar(ct, 1.0, 0.5)
    with pytest.raises(ValueError, match="scale: the product's scale would exceed Q"):
        ev.multiply_scalar(ct, 1.0, 2.0 ** 400)
    with pytest.raises(ValueError, match="does not fit Q"):
        ev.add_scalar(ct, 2.0 ** 300)


def test_multiply_plain_sum(device):
    ctx = veil.ckks(poly_modulus_degree=4096, device=device, seed=3, galois_steps=None)
    ev, enc = ctx.evaluator, ctx.encoder
    xs = [random_slots(ctx.slot_count, 1, 20 + i) for i in range(3)]
    ds = [random_slots(ctx.slot_count, 1, 30 + i) for i in range(3)]
    cts = [ctx.encrypt(x).raw for x in xs]
    pts = [enc.encode_complex(d, ctx.scale, cts[0].level, device) for d in ds]
    out = ev.multiply_plain_sum(cts, pts)
    assert out.scale == ctx.scale ** 2
    got = enc.decode(ctx.decryptor.decrypt(ev.rescale_to_next(out)))
    assert veil.ckks.precision(sum(x * d for x, d in zip(xs, ds)), got)["min_bits"] > 10
    with pytest.raises(ValueError, match="plain: expected as many plaintexts"):
        ev.multiply_plain_sum(cts, pts[:2])
    with pytest.raises(ValueError, match="plain: scale"):
        ev.multiply_plain_sum(cts[:2], [pts[0], enc.encode_complex(ds[1], 2.0 ** 20,
                                                                   cts[0].level, device)])
    with pytest.raises(ValueError, match="every ciphertext needs the first one's size and level"):
        ev.multiply_plain_sum([cts[0], ev.mod_switch_to_next(cts[1])], pts[:2])
    with pytest.raises(TypeError, match="encrypted: expected a sequence of Ciphertext"):
        ev.multiply_plain_sum([cts[0], pts[0]], pts[:2])


@pytest.mark.parametrize("slots", [None, 32])
def test_bootstrap_precision_cpu(slots):
    ctx = small_ctx(slots=slots)
    bt = ctx.bootstrapper
    vals = random_slots(bt.slots, ctx.slot_count // bt.slots, 8)
    x = ctx.encrypt(vals, level=bt.input_level)
    y = x.bootstrap()
    assert y.level == bt.output_level > 0 and y.scale == ctx.scale
    p = veil.ckks.precision(vals, ctx.decrypt(y))
    assert p["mean_bits"] > 20 and p["min_bits"] > 16, p
    # another scale near Delta comes back at that scale
    z = ctx.bootstrap(ctx.encrypt(vals, scale=ctx.scale * 1.7))  # from the top level
    assert z.scale == ctx.scale * 1.7
    assert veil.ckks.precision(vals, ctx.decrypt(z))["mean_bits"] > 19
    # the refreshed ciphertext computes on
    sq = y * y  # auto_rescale
    assert sq.level < y.level
    assert veil.ckks.precision(vals * vals, ctx.decrypt(sq))["mean_bits"] > 18


@pytest.mark.parametrize("word_bits", [64, 32])
def test_pack_sparse_one_evalmod_for_both_halves_cpu(word_bits):
    """pack_sparse: the same precision against numpy as two EvalMods; the chain has one more
    block (the mask's), the user the same levels, and the result computes on; the configuration
    survives serialization."""
    rng = np.random.default_rng(5)
    vals = np.tile(rng.uniform(-1, 1, 64) + 1j * rng.uniform(-1, 1, 64), 1024 // 64)
    bits = {}
    for pack in (False, True):
        ctx = small_ctx(word_bits=word_bits, slots=64, pack_sparse=pack)
        bt = ctx.bootstrapper
        y = ctx.encrypt(vals, level=bt.input_level).bootstrap()
        assert y.level == bt.output_level and y.scale == ctx.scale
        p = veil.ckks.precision(vals, ctx.decrypt(y))
        assert p["mean_bits"] > 20 and p["min_bits"] > 16, (pack, p)
        bits[pack] = (bt.levels_left, len(ctx.context.rescale_groups), p["min_bits"])
        if pack:
            params = bt.parameters
            assert params.evalmod_output_level > params.output_level
            back = _core.BootstrapParameters.from_bytes(params.to_bytes(), ctx.context)
            assert back.config.pack_sparse and back.levels_left == params.levels_left
            assert veil.ckks.precision(vals * vals, ctx.decrypt(y * y))["mean_bits"] > 18
    assert bits[True][0] == bits[False][0] == 2  # the user's levels
    assert bits[True][1] == bits[False][1] + 1  # the mask's block
    assert abs(bits[True][2] - bits[False][2]) < 2, bits


def test_pack_sparse_needs_sparse_slots():
    with pytest.raises(ValueError, match="pack_sparse: needs sparse slots"):
        B.BootstrapConfig(pack_sparse=True)  # full slots
    with pytest.raises(ValueError, match="pack_sparse: needs sparse slots"):
        small_ctx(slots=1024, pack_sparse=True)  # N/2 at N = 2^11: no room for both halves
    with pytest.raises(TypeError, match="pack_sparse: expected a bool"):
        _core.BootstrapConfig(slots=64, pack_sparse=1)
    assert "pack_sparse=True" in repr(_core.BootstrapConfig(slots=64, pack_sparse=True))
    assert small_ctx(slots=512, pack_sparse=True).bootstrapper.levels_left == 2  # N/4 fits
    # on a chain without the mask's block (the full-slot preset's), the top user level pays
    chain = B.bootstrap_chain(LOG_N, 2, B.BootstrapConfig(slots=64), 64)
    ctx = veil.ckks(poly_modulus_degree=2 ** LOG_N, security=None, seed=3, galois_steps=None,
                    **chain.context_args())
    ctx.enable_bootstrapping(B.BootstrapConfig(slots=64, pack_sparse=True), seed=3)
    assert ctx.bootstrapper.levels_left == 1


def test_sparse_bootstrap_of_a_short_vector_cpu():
    """On a sparse-bootstrapping context a vector of at most n values is repeated with period n
    when encoded (it once came back divided by N/2n, silently); lengths between n and N/2
    cannot be periodic and are refused."""
    ctx = small_ctx(slots=32)
    n = ctx.bootstrapper.slots
    rng = np.random.default_rng(5)
    vals = rng.uniform(-1, 1, 20)                       # fewer than n values, not tiled
    x = ctx.encrypt(vals, level=ctx.bootstrapper.input_level)
    y = ctx.bootstrap(x) * np.full(20, 0.5)             # plaintext vectors are tiled alike
    got = y.decrypt()
    assert len(got) == 20
    p = veil.ckks.precision(0.5 * vals, got)
    assert p["min_bits"] > 15, p
    full = ctx.decrypt(y.with_length(ctx.slot_count))   # every copy was refreshed alike
    np.testing.assert_allclose(full.reshape(-1, n)[:, :20],
                               np.tile(0.5 * vals, (ctx.slot_count // n, 1)), atol=1e-3)
    with pytest.raises(ValueError, match=r"ct: holds 40 values but the bootstrapper refreshes 32"):
        ctx.bootstrap(ctx.encrypt(rng.uniform(-1, 1, 40), level=ctx.bootstrapper.input_level))


def test_sparse_context_refuses_a_short_gpu_array(monkeypatch):
    """A GPU (DLPack) array is encoded as given (no host copy, so no repetition): on a
    sparse-bootstrapping context one shorter than N/2 is refused rather than encoded unrepeated.
    The array's device is faked (this test runs without a GPU); the check comes first."""
    from veil import _ckks
    ctx = small_ctx(slots=32)
    monkeypatch.setattr(_ckks, "array_device", lambda values, device, name: "cuda")
    with pytest.raises(ValueError, match=r"values: this context bootstraps 32 slots.*got 20"):
        ctx.encrypt(np.zeros(20))


def test_sum_and_matmul_of_periodic_vectors_cpu():
    """On a sparse-bootstrapping context (vectors repeated with period n) sums and matrix
    products work within each period, as on a full context, and survive a bootstrap."""
    ctx = small_ctx(slots=32)
    rng = np.random.default_rng(6)
    v = rng.uniform(-1, 1, 12)
    mat = rng.uniform(-1, 1, (12, 10))
    x = ctx.encrypt(v)
    s, y = x.sum(), x @ mat
    assert abs(s.decrypt()[0] - v.sum()) < 1e-4
    np.testing.assert_allclose(y.decrypt(), v @ mat, atol=1e-4)
    # the results are periodic too, so bootstrapping refreshes them (each period alike)
    np.testing.assert_allclose(ctx.bootstrap(y).decrypt(), v @ mat, atol=1e-3)
    assert abs(ctx.bootstrap(s).decrypt()[0] - v.sum()) < 1e-3


def test_bootstrap_32bit_words_cpu():
    ctx = small_ctx(word_bits=32, slots=64)
    bt = ctx.bootstrapper
    assert ctx.word_bits == 32
    vals = random_slots(bt.slots, ctx.slot_count // bt.slots, 9)
    y = ctx.bootstrap(ctx.encrypt(vals, level=bt.input_level))
    assert veil.ckks.precision(vals, ctx.decrypt(y))["mean_bits"] > 20


def test_bootstrap_errors(boot_ctx):
    plain = veil.ckks(poly_modulus_degree=4096, device="cpu", seed=1)
    with pytest.raises(ValueError, match="bootstrapping is not enabled"):
        plain.bootstrap(plain.encrypt([1.0]))
    with pytest.raises(ValueError, match="coeff_modulus: bootstrapping needs"):
        plain.enable_bootstrapping()
    with pytest.raises(ValueError, match="slots: expected a power of two"):
        B.Bootstrapper(boot_ctx, B.BootstrapConfig(slots=3))
    with pytest.raises(ValueError, match="slots: 4 slots have 2 FFT stages, fewer than the 3"):
        B.Bootstrapper(boot_ctx, B.BootstrapConfig(slots=4))  # was an AssertionError
    with pytest.raises(ValueError, match="ct: expected a scale within 2\\^4"):
        boot_ctx.bootstrap(boot_ctx.encrypt([0.5], scale=2.0 ** 30, level=0))
    low32 = small_ctx(word_bits=32, slots=64)  # q_0's block has two primes: level 0 is inside
    with pytest.raises(ValueError, match="ct: level 0 lies inside q_0's block below its top"):
        low32.bootstrap(low32.encrypt([0.5], level=1).mod_switch_to(0))
    with pytest.raises(TypeError, match="bootstrapping: expected True"):
        veil.ckks(poly_modulus_degree=4096, bootstrapping="yes")
    with pytest.raises(ValueError, match="bootstrapping at N = 4096 does not fit"):
        veil.ckks(poly_modulus_degree=4096, bootstrapping=True)


@pytest.mark.gpu
@pytest.mark.skipif(not has_gpu(), reason="no CUDA GPU visible")
@pytest.mark.parametrize("word_bits,slots,pack", [(64, None, False), (32, 64, False),
                                                  (32, 64, True)])
def test_bootstrap_gpu_matches_cpu_word_for_word(word_bits, slots, pack):
    outs = []
    for dev in ("cpu", "cuda"):
        ctx = small_ctx(device=dev, word_bits=word_bits, slots=slots, seed=21, pack_sparse=pack)
        bt = ctx.bootstrapper
        vals = random_slots(bt.slots, ctx.slot_count // bt.slots, 10)
        ct = ctx.encrypt(vals, level=bt.input_level)
        out = ctx.bootstrap(ct)
        assert veil.ckks.precision(vals, ctx.decrypt(out))["mean_bits"] > 20
        outs.append(np.asarray(out.raw.data()))
    np.testing.assert_array_equal(outs[0], outs[1])


def test_training_demo_small_cpu():
    """The training demo end to end at N = 2^12 (64 samples, 2 iterations, one bootstrap in
    between): the encrypted weights equal the float64 run with the same cubic to 2^-20."""
    pytest.importorskip("sklearn")
    from veil.apps import demo_train

    r = demo_train.run(device="cpu", seed=1, iterations=2, log_n=12, security=None,
                       user_levels=5, max_samples=64, verbose=False)
    assert r["bootstraps"] == 1 and r["passed"]
    assert r["weights_error"] < 2.0 ** -20
    assert r["agreement"] == 1.0


def test_training_demo_refuses_too_many_samples():
    pytest.importorskip("sklearn")
    from veil.apps import demo_train

    ctx = demo_train.make_context("cpu", 1, 12, None, 5)
    z = np.ones((65, 31))
    with pytest.raises(ValueError, match="z: 65 samples need 2080 slots"):
        demo_train.EncryptedTrainer(ctx, z, 1.0, demo_train.sigmoid_cubic())


def test_bench_bootstrap_cli_cpu(tmp_path):
    """`veil bench --scheme ckks --bootstrap --quick` on the CPU: both word sizes, full and sparse
    slots (sparse also packed), records with the fields the results table shows."""
    import json

    from veil import cli

    out_json, out_md = tmp_path / "boot.json", tmp_path / "boot.md"
    rc = cli.main(["bench", "--scheme", "ckks", "--bootstrap", "--quick", "--device", "cpu",
                   "--runs", "1", "--json", str(out_json), "--markdown", str(out_md)])
    assert rc == 0
    rec = json.loads(out_json.read_text())
    rows = {(r["word_bits"], r["slots"], r["pack_sparse"]) for r in rec["results"]}
    assert rows == {(64, 2048, False), (64, 64, False), (64, 64, True), (32, 2048, False),
                    (32, 64, False), (32, 64, True)}
    for r in rec["results"]:
        assert r["median_ms"] > 0 and r["levels_left"] == 2 and r["mean_bits"] > 20
        assert set(r["phases_ms"]) == {"slot_to_coeff", "modraise+subsum", "coeff_to_slot",
                                       "eval_mod"}
    table = out_md.read_text()
    first = [line.split("|")[1].strip() for line in table.splitlines() if line.startswith("|")]
    assert first.count("64") == 3 and "64 packed" in table and "Cheddar bootparam_40" in table
    with pytest.raises(SystemExit, match="--bootstrap needs --scheme ckks"):
        cli.main(["bench", "--scheme", "bfv", "--bootstrap", "--device", "cpu"])
