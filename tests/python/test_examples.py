"""Every script in examples/ runs to completion on the CPU (issue 10, item 5).

Each example checks its own results against numpy or plaintext arithmetic and exits non-zero
(an AssertionError or an exception) when one differs, so exit status 0 is the test. The
scripts run in a fresh interpreter each, on the CPU: ``CUDA_VISIBLE_DEVICES=""`` hides every
GPU, so the examples' ``device="auto"`` resolves to ``"cpu"`` (veil._device.default_device).
"""

from __future__ import annotations

import os
import pathlib
import subprocess
import sys

import pytest

import veil

EXAMPLES = pathlib.Path(__file__).resolve().parents[2] / "examples"
#: The examples issue 10 asks for; a deleted or renamed one fails test_expected_examples_exist.
EXPECTED = {"bfv_basics.py", "ckks_basics.py", "rotations.py", "serialization.py",
            "service_client.py", "seal_interop.py"}
#: Optional packages an example needs (skipped, not failed, where they are missing).
NEEDS = {"service_client.py": ("fastapi", "uvicorn", "httpx"), "seal_interop.py": ("seal",)}
SCRIPTS = sorted(p.name for p in EXAMPLES.glob("*.py"))


def cpu_env() -> dict[str, str]:
    """The environment of an example: no visible GPU, and the same ``veil`` as this process
    (the source tree when the tests run with PYTHONPATH=python, else the installed package)."""
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = ""
    package_root = str(pathlib.Path(veil.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env


def test_expected_examples_exist() -> None:
    missing = EXPECTED - set(SCRIPTS)
    assert not missing, f"examples/ lacks {sorted(missing)}"


@pytest.mark.parametrize("name", SCRIPTS)
def test_example_runs_on_the_cpu(name: str, tmp_path: pathlib.Path) -> None:
    for module in NEEDS.get(name, ()):
        pytest.importorskip(module)
    script = EXAMPLES / name
    text = script.read_text()
    assert text.lstrip().startswith('"""'), f"{name}: starts without a module docstring"
    assert f"python examples/{name}" in text, f"{name}: its docstring does not say how to run it"
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=cpu_env(),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"{name} exited with {r.returncode}\n{r.stdout}\n{r.stderr}"
    assert r.stdout.strip(), f"{name} printed nothing"
