"""The README's test command cannot be broken by its environment (issue 24, item 1).

``scripts/test.sh`` once ran ``(cd /tmp && python3 -m pytest ...)``. ``python -m`` puts the
current directory first on ``sys.path``, so a stray ``/tmp/pydoc.py`` left by another program
shadowed the standard library's ``pydoc`` and scipy (imported through scikit-learn) failed at
collection. ``scripts/pytest.sh`` now runs pytest from a private directory made by ``mktemp``
(and with ``python -P`` where Python has it), with pytest's temporary files there too.

The tests below build a hostile directory (a ``pydoc.py`` and a ``numpy.py`` that raise when
imported, and files in the place of the directories pytest and the docs build used to create),
start the script from it with ``TMPDIR`` pointing at it, and check that the probe test inside
imports the real modules. The control case runs pytest the old way from the same directory and
must fail: it shows that the hostile directory does break a naive command, so the first test
cannot pass for a vacuous reason.
"""

from __future__ import annotations

import getpass
import os
import pathlib
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]
PROBE = "tests/python/test_test_command.py::test_probe_imports_the_real_modules"


def test_probe_imports_the_real_modules() -> None:
    """Run by the tests below inside the hostile directory (and harmless on its own)."""
    import pydoc

    import numpy

    assert callable(getattr(pydoc, "getdoc", None)), pydoc.__file__
    assert numpy.arange(3).sum() == 3
    tmp = os.environ.get("TMPDIR")
    if tmp:
        for mod in (pydoc, numpy):
            assert not pathlib.Path(mod.__file__).resolve().is_relative_to(
                pathlib.Path(tmp).resolve()), f"{mod.__name__} imported from {mod.__file__}"


@pytest.fixture
def hostile(tmp_path: pathlib.Path) -> pathlib.Path:
    d = tmp_path / "hostile"
    d.mkdir()
    for name in ("pydoc", "numpy"):
        (d / f"{name}.py").write_text(
            f"raise ImportError('a stray {name}.py in the current directory was imported')\n")
    # Files where directories were once created under fixed names (pytest's default basetemp
    # root and the old docs build's site folder): unwritable and in the way.
    for name in (f"pytest-of-{getpass.getuser()}", "veil-site"):
        (d / name).write_text("in the way\n")
        (d / name).chmod(0o444)
    return d


def run(cmd: list[str], cwd: pathlib.Path, tmpdir: pathlib.Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTEST_ADDOPTS")}
    env["TMPDIR"] = str(tmpdir)
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
                          check=False)


@pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
def test_pytest_script_ignores_a_hostile_current_directory_and_tmpdir(hostile) -> None:
    r = run(["bash", str(ROOT / "scripts" / "pytest.sh"), PROBE, "-q"],
            cwd=hostile, tmpdir=hostile)
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "1 passed" in out, out
    # The private directory is removed on exit: only what the fixture made is left.
    assert sorted(p.name for p in hostile.iterdir()) == sorted(
        ["numpy.py", "pydoc.py", "veil-site", f"pytest-of-{getpass.getuser()}"])


def test_control_the_old_command_breaks_in_the_hostile_directory(hostile) -> None:
    """``cd $dir && python -m pytest`` (the old command) fails there: the hazard is real."""
    r = run([sys.executable, "-m", "pytest", str(ROOT / PROBE), "-q", "-p", "no:cacheprovider"],
            cwd=hostile, tmpdir=hostile)
    assert r.returncode != 0
    assert "stray" in r.stdout + r.stderr or "pytest-of" in r.stdout + r.stderr


def test_test_script_uses_the_private_runner() -> None:
    """scripts/test.sh and scripts/gpu_run.sh run pytest only through scripts/pytest.sh and
    never change into /tmp."""
    for name in ("test.sh", "gpu_run.sh"):
        text = (ROOT / "scripts" / name).read_text()
        assert "cd /tmp" not in text, name
        assert "-m pytest" not in text, name
        assert "scripts/pytest.sh" in text, name
