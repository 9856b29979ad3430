"""Packaging (issue 10, items 5 and 6): one source for the version, the LICENSE, the project
metadata, and ``python -m veil``.

The version is written once, in CMakeLists.txt's ``project(veil VERSION x.y.z ...)``: CMake
passes it to C++ (``veil._core.__version__``, re-exported as ``veil.__version__``) and
pyproject.toml reads it with scikit-build-core's regex provider into the distribution's
metadata (``importlib.metadata.version("veil")``).
"""

from __future__ import annotations

import importlib.metadata
import os
import pathlib
import re
import subprocess
import sys
import tempfile

import pytest

import veil

ROOT = pathlib.Path(__file__).resolve().parents[2]


def cmake_version() -> str:
    """The version in CMakeLists.txt, read here with a regex of this test's own."""
    text = (ROOT / "CMakeLists.txt").read_text()
    found = re.findall(r"^\s*project\s*\(\s*veil\s+VERSION\s+([0-9][0-9.]*)", text, re.MULTILINE)
    assert len(found) == 1, f"expected one project(veil VERSION ...) line, found {found}"
    return found[0]


def pyproject() -> dict:
    tomllib = pytest.importorskip("tomllib" if sys.version_info >= (3, 11) else "tomli")
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)


def test_version_has_one_source() -> None:
    v = cmake_version()
    assert veil.__version__ == veil._core.__version__ == v
    meta = pyproject()
    project = meta["project"]
    assert "version" not in project and "version" in project["dynamic"]
    provider = meta["tool"]["scikit-build"]["metadata"]["version"]
    assert provider["provider"] == "scikit_build_core.metadata.regex"
    assert provider["input"] == "CMakeLists.txt"
    # The provider's regex (re.search over the whole file, as scikit-build-core applies it)
    # finds the same version as this test's regex.
    m = re.search(provider["regex"], (ROOT / "CMakeLists.txt").read_text(), re.MULTILINE)
    assert m is not None and m.group("value") == v


def test_installed_distribution_has_that_version() -> None:
    """Where the imported veil is an installed distribution (pip install), its metadata carries
    the CMakeLists.txt version; from a source tree on PYTHONPATH there is none to compare."""
    try:
        dist = importlib.metadata.distribution("veil")
    except importlib.metadata.PackageNotFoundError:
        pytest.skip("veil is imported from a source tree, not an installed distribution")
    installed = pathlib.Path(str(dist.locate_file("veil/__init__.py"))).resolve()
    if installed != pathlib.Path(veil.__file__).resolve():
        pytest.skip(f"the imported veil ({veil.__file__}) is not the installed distribution "
                    f"({installed})")
    assert importlib.metadata.version("veil") == veil.__version__ == cmake_version()


def test_license_and_metadata() -> None:
    text = (ROOT / "LICENSE").read_text()
    assert text.startswith("MIT License") and "The Veil developers" in text
    project = pyproject()["project"]
    assert project["license"] == "MIT" and project["license-files"] == ["LICENSE"]
    assert set(project["urls"]) >= {"Homepage", "Documentation", "Source", "Issues"}
    classifiers = set(project["classifiers"])
    assert {"Environment :: GPU :: NVIDIA CUDA", "Topic :: Security :: Cryptography",
            "Typing :: Typed"} <= classifiers
    # PEP 639: no "License ::" classifier beside an SPDX license expression.
    assert not any(c.startswith("License ::") for c in classifiers)
    lo = int(project["requires-python"].removeprefix(">=3."))
    for minor in range(lo, 14):
        assert f"Programming Language :: Python :: 3.{minor}" in classifiers


def run_module(*args: str) -> subprocess.CompletedProcess:
    env = dict(os.environ)
    package_root = str(pathlib.Path(veil.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env["CUDA_VISIBLE_DEVICES"] = ""
    # From an empty private directory: `python -m` puts the working directory first on
    # sys.path, and the checkout's parent (e.g. /tmp) may hold stray modules (a numpy.py).
    with tempfile.TemporaryDirectory(prefix="veil-dash-m.") as empty:
        return subprocess.run([sys.executable, "-m", "veil", *args], env=env,
                              capture_output=True, text=True, timeout=300, cwd=empty)


def test_python_dash_m_veil() -> None:
    r = run_module("--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: veil ")
    for command in ("info", "demo", "bench", "serve", "loadtest"):
        assert command in r.stdout
    r = run_module("info")
    assert r.returncode == 0, r.stderr
    assert veil.__version__ in r.stdout and "default device" in r.stdout
    r = run_module("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"veil {veil.__version__}"
    r = run_module("no-such-command")
    assert r.returncode == 2 and "invalid choice" in r.stderr
