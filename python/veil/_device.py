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
    gpus: list[dict] = []
    info = {
        "version": _core.__version__,
        "cuda_built": _core.cuda_built(),
        "cpu_threads": _core.num_threads(),
        "gpus": gpus,
    }
    if _core.cuda_built():
        for i in range(_core.cuda_device_count()):
            gpus.append(_core.cuda_device_info(i))
    return info


_DLPACK_CUDA = (2, 13)  # kDLCUDA, kDLCUDAManaged


def array_device(values, device: str, name: str = "values") -> str | None:
    """``"cuda:k"`` when ``values`` is a DLPack array in GPU memory (CuPy, PyTorch, JAX), else
    None (host data goes through numpy). The array must live on ``device``, the context's.

    Raises:
        ValueError naming ``name`` when a GPU array is on another device than the context's.
    """
    probe = getattr(values, "__dlpack_device__", None)
    if probe is None or isinstance(values, type):
        return None
    try:
        kind, index = probe()
    except Exception:  # noqa: BLE001 - not a usable DLPack producer: treat as host data
        return None
    if int(kind) not in _DLPACK_CUDA:
        return None
    where = f"cuda:{int(index)}"
    if where != device:
        raise ValueError(f"{name}: the array is on {where} but the context works on {device}; "
                         "create the context on that GPU or move the array")
    return where
