"""Device selection helpers."""

from __future__ import annotations

from . import _core


def default_device() -> str:
    """``"cuda"`` when this build has the CUDA backend and a GPU is visible, else ``"cpu"``."""
    if _core.cuda_built() and _core.cuda_device_count() > 0:
        return "cuda:0"
    return "cpu"


def resolve_device(device: str | None) -> str:
    """Canonical device string for ``"auto"``/None, ``"cpu"``, ``"cuda"`` or ``"cuda:k"``.

    Raises:
        ValueError: the string is not a device name.
        RuntimeError: CUDA was requested but is not built or no such GPU exists.
    """
    if device is None or device == "auto":
        return default_device()
    if not isinstance(device, str):
        raise TypeError(f"device: expected a string like 'cpu' or 'cuda:0', got {type(device).__name__}")
    return _core.parse_device(device)


def device_info() -> dict:
    """Build and device facts for ``veil info``."""
    info = {
        "version": _core.__version__,
        "cuda_built": _core.cuda_built(),
        "cpu_threads": _core.num_threads(),
        "gpus": [],
    }
    if _core.cuda_built():
        for i in range(_core.cuda_device_count()):
            info["gpus"].append(_core.cuda_device_info(i))
    return info
