import pytest
import veil


def has_gpu() -> bool:
    return veil._core.cuda_built() and veil._core.cuda_device_count() > 0


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
