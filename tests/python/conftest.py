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
