import numpy as np
import pytest
import veil


def has_gpu() -> bool:
    return veil._core.cuda_built() and veil._core.cuda_device_count() > 0


# ---- BFV/BGV oracles: numpy arithmetic mod t on SEAL's 2 x N/2 slot matrix ------------------------
def centered_mod(x, t):
    """x mod t as the representative in (-t/2, t/2], as the schemes decrypt signed slots."""
    x = np.mod(x, t)
    return np.where(x > t // 2, x - t, x)


def rotate_rows(v, k):
    """Each row of the slot matrix rotated left by k (slot (r, c) <- (r, c + k mod N/2))."""
    row = v.size // 2
    return np.concatenate([np.roll(v[:row], -k), np.roll(v[row:], -k)])


def pytest_collection_modifyitems(config, items):
    if has_gpu():
        return
    skip = pytest.mark.skip(reason="no CUDA GPU visible")
    for item in items:
        if "gpu" in item.keywords:
            item.add_marker(skip)


DEVICES = ["cpu", pytest.param("cuda", marks=pytest.mark.gpu)]


@pytest.fixture(params=DEVICES)
def device(request):
    """Every test using it runs on the CPU and, where a GPU is visible, on cuda:0."""
    return request.param
