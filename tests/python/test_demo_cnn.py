"""The encrypted CNN demo (issue 27, item 4): the numpy network against explicit loops, the
encrypted evaluation against the plaintext network, the CLI's arguments."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("sklearn")

from veil import _core
from veil.apps import cnn_model, demo_cnn


@pytest.fixture(scope="module")
def split():
    return cnn_model.load_digits_split(seed=0)


@pytest.fixture(scope="module")
def square_model(split):
    x_train, _, y_train, _ = split
    return cnn_model.train(x_train, y_train, activation="square", epochs=15)


def _conv_loops(model: cnn_model.CNN, img: np.ndarray) -> np.ndarray:
    """Oracle: the convolution by its definition, (F, oh * ow)."""
    kh, kw = model.kernel
    side, s = model.out_side, model.stride
    out = np.zeros((model.filters, side * side))
    for f in range(model.filters):
        for i in range(side):
            for j in range(side):
                acc = model.conv_b[f]
                for a in range(kh):
                    for c in range(kw):
                        acc += model.conv_w[f, a, c] * img[i * s + a, j * s + c]
                out[f, i * side + j] = acc
    return out


def test_split_shapes_and_range(split):
    x_train, x_test, y_train, y_test = split
    assert x_train.shape[1:] == (8, 8) and x_test.shape[1:] == (8, 8)
    assert len(x_train) + len(x_test) == 1797
    assert len(y_train) == len(x_train) and len(y_test) == len(x_test)
    assert x_train.min() >= 0.0 and x_train.max() == 1.0
    assert set(np.unique(y_train)) == set(range(10))


def test_windows_match_the_definition(split):
    x = split[0][:3]
    for kernel, stride in ((3, 1), (2, 2), (4, 2)):
        cols = cnn_model.windows(x, kernel, kernel, stride)
        side = (8 - kernel) // stride + 1
        assert cols.shape == (3, side * side, kernel * kernel)
        for n in range(3):
            for i in range(side):
                for j in range(side):
                    patch = x[n, i * stride:i * stride + kernel, j * stride:j * stride + kernel]
                    np.testing.assert_array_equal(cols[n, i * side + j], patch.ravel())


def test_network_forward_matches_loops(square_model, split):
    x_test = split[1][:4]
    z = square_model.conv(x_test)
    for n in range(4):
        np.testing.assert_allclose(z[n], _conv_loops(square_model, x_test[n]), rtol=1e-12,
                                   atol=1e-12)
    a = (z * z).reshape(4, -1)
    np.testing.assert_allclose(square_model.logits(x_test), a @ square_model.fc_w
                               + square_model.fc_b, rtol=1e-12)


def test_training_learns_and_is_deterministic(split, square_model):
    x_train, x_test, y_train, y_test = split
    acc = np.mean(square_model.predict(x_test) == y_test)
    assert acc > 0.9, acc
    again = cnn_model.train(x_train, y_train, activation="square", epochs=15)
    np.testing.assert_array_equal(again.conv_w, square_model.conv_w)


def test_training_rejects_bad_arguments(split):
    x, _, y, _ = split
    with pytest.raises(ValueError, match="activation"):
        cnn_model.train(x, y, activation="tanh")
    with pytest.raises(ValueError, match="x, y"):
        cnn_model.train(x[:, :4], y)
    with pytest.raises(ValueError, match="kernel, stride"):
        cnn_model.train(x, y, kernel=9)


def test_encrypted_batch_matches_the_plaintext_network(square_model, split):
    """Decrypted logits of 64 test images against the numpy network (independent oracle): the
    classes agree and the scores are close."""
    images = split[1][:64]
    r = demo_cnn.run_veil(square_model, images, "cpu", seed=7)
    want = square_model.logits(images)
    assert r["logits"].shape == (64, 10)
    err = np.abs(r["logits"] - want).max()
    assert err < 1e-2 * max(1.0, np.abs(want).max()), err
    np.testing.assert_array_equal(np.argmax(r["logits"], axis=1), np.argmax(want, axis=1))
    assert r["evaluate_s"] > 0 and r["per_image_ms"] > 0


def test_encrypted_relu_network_matches_the_plaintext_network(split):
    """The ReLU network (activations packed before the encrypted ReLU, blocks summed after
    the dense layer) at a small test context: classes and logits against numpy."""
    x_train, x_test, y_train, _ = split
    model = cnn_model.train(x_train, y_train, activation="relu", filters=2, epochs=10)
    images = x_test[:40]
    r = demo_cnn.run_veil(model, images, "cpu", seed=5, poly_modulus_degree=4096,
                          security=None)
    want = model.logits(images)
    # The ReLU is exact to 2^-10 x bound away from 0 and within epsilon / 2 x bound near it.
    err = np.abs(r["logits"] - want).max()
    assert err < 0.05 * max(1.0, np.abs(want).max()), err
    agree = np.mean(np.argmax(r["logits"], axis=1) == np.argmax(want, axis=1))
    assert agree >= 0.99, agree  # all 40
    ctx = demo_cnn.make_context(model, "cpu", 1, poly_modulus_degree=4096, security=None)
    assert demo_cnn.relu_steps(ctx, 40) == [-64, -128, -256, -512, -1024]
    # G blocks of B slots fill the row exactly (the final rotate-and-add needs G B = N/2)
    assert demo_cnn.relu_steps(ctx, 1) == [-(1 << k) for k in range(11)]
    assert demo_cnn.relu_steps(ctx, 1500) == []  # B = 2048: one block, nothing to pack
    assert ctx.levels >= 2 + demo_cnn.relu_depth()


def test_encrypt_images_rejects_too_many(square_model):
    ctx = demo_cnn.make_context(square_model, "cpu", seed=1)
    with pytest.raises(ValueError, match="images"):
        demo_cnn.encrypt_images(ctx, np.zeros((ctx.slot_count + 1, 8, 8)))


@pytest.mark.skipif(not _core.cuda_device_count(), reason="needs a CUDA GPU")
def test_encrypted_batch_gpu_matches_cpu(square_model, split):
    """Same seed: the GPU's decrypted logits equal the CPU's to CKKS noise and give the same
    classes."""
    images = split[1][:32]
    cpu = demo_cnn.run_veil(square_model, images, "cpu", seed=11)
    gpu = demo_cnn.run_veil(square_model, images, "cuda", seed=11)
    np.testing.assert_allclose(gpu["logits"], cpu["logits"], atol=1e-6)
    np.testing.assert_array_equal(np.argmax(gpu["logits"], axis=1),
                                  np.argmax(cpu["logits"], axis=1))


def test_run_rejects_bad_arguments():
    with pytest.raises(ValueError, match="peer"):
        demo_cnn.run(device="cpu", peer="seal", quiet=True)
    with pytest.raises(ValueError, match="limit"):
        demo_cnn.run(device="cpu", limit=0, quiet=True)


def test_cli_demo_cnn_runs(capsys):
    from veil import cli

    assert cli.main(["demo", "--model", "cnn", "--device", "cpu", "--seed", "3",
                     "--limit", "40"]) == 0
    out = capsys.readouterr().out
    assert "agreement with the plaintext network" in out and "passed" in out


def test_cli_demo_cnn_argument_errors(capsys):
    from veil import cli

    assert cli.main(["demo", "--model", "cnn", "--train", "--scheme", "ckks"]) != 0
    assert cli.main(["demo", "--model", "logreg", "--peer", "tenseal"]) != 0


def test_tenseal_peer_agrees_when_installed(square_model, split):
    pytest.importorskip("tenseal")
    t = demo_cnn.run_tenseal(square_model, split[1][:3])
    assert t is not None and t["logits"].shape == (3, 10)
    want = square_model.logits(split[1][:3])
    np.testing.assert_array_equal(np.argmax(t["logits"], axis=1), np.argmax(want, axis=1))
