"""The notebooks under docs/notebooks/ run from the first cell to the last without an error.

Each notebook is executed with nbclient in a fresh kernel on the CPU (``CUDA_VISIBLE_DEVICES=""``),
from an empty temporary directory. The kernel is this interpreter (``sys.executable``, through a
private kernel spec, so that a ``python3`` kernel installed elsewhere cannot run another Python
or another Veil), with this Veil's package first on its path; a last cell, added here, checks
that the kernel imported the same ``veil``. The notebooks check their own results against numpy
with ``assert``: a failed check is a cell error, and any cell error fails the test.
"""

from __future__ import annotations

import json
import os
import pathlib
import sys

import pytest
import veil

nbformat = pytest.importorskip("nbformat", reason="the test extra is not installed (nbformat)")
nbclient = pytest.importorskip("nbclient", reason="the test extra is not installed (nbclient)")
pytest.importorskip("ipykernel", reason="the test extra is not installed (ipykernel)")

from jupyter_client.kernelspec import KernelSpecManager
from jupyter_client.manager import KernelManager

ROOT = pathlib.Path(__file__).resolve().parents[2]
NOTEBOOKS = sorted((ROOT / "docs" / "notebooks").glob("*.ipynb"))
KERNEL = "veil-test-python"


def test_the_three_notebooks_are_there_and_linked() -> None:
    names = {p.stem for p in NOTEBOOKS}
    assert {"bfv_basics", "ckks_tensors", "client_server"} <= names, names
    docs = "\n".join(p.read_text() for p in (ROOT / "docs").rglob("*.md"))
    for p in NOTEBOOKS:
        assert f"notebooks/{p.name}" in docs, f"docs/ does not link {p.name}"


def kernel_manager(tmp_path: pathlib.Path) -> KernelManager:
    """A kernel that is this interpreter, on the CPU, importing this Veil."""
    spec_dir = tmp_path / "kernels" / KERNEL
    spec_dir.mkdir(parents=True)
    package_root = str(pathlib.Path(veil.__file__).resolve().parents[1])
    env = {
        "CUDA_VISIBLE_DEVICES": "",
        "VEIL_PROGRESS": "0",
        "PYTHONPATH": os.pathsep.join(p for p in (package_root, os.environ.get("PYTHONPATH"))
                                      if p),
        "PYTHONSAFEPATH": "1",  # Python >= 3.11: the working directory is not on sys.path
    }
    (spec_dir / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Veil test kernel", "language": "python", "env": env,
    }))
    ksm = KernelSpecManager(kernel_dirs=[str(tmp_path / "kernels")], ensure_native_kernel=False)
    return KernelManager(kernel_name=KERNEL, kernel_spec_manager=ksm)


@pytest.mark.parametrize("path", NOTEBOOKS, ids=lambda p: p.stem)
def test_notebook_runs(path: pathlib.Path, tmp_path: pathlib.Path) -> None:
    nb = nbformat.read(path, as_version=4)
    assert any(c.cell_type == "code" for c in nb.cells)
    # The kernel's veil must be the one under test.
    nb.cells.append(nbformat.v4.new_code_cell(
        "import veil as _v, pathlib as _p\n"
        f"assert _p.Path(_v.__file__).resolve() == _p.Path({str(veil.__file__)!r}).resolve(), "
        "_v.__file__"))
    work = tmp_path / "cwd"
    work.mkdir()
    client = nbclient.NotebookClient(nb, km=kernel_manager(tmp_path), timeout=600,
                                     resources={"metadata": {"path": str(work)}})
    try:
        client.execute()
    except nbclient.exceptions.CellExecutionError as err:
        pytest.fail(f"docs/notebooks/{path.name}: a cell failed:\n{err}")
    errors = [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", [])
              if o.get("output_type") == "error"]
    assert not errors, errors
