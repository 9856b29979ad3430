"""``veil serve --ray`` from the command line, as the README shows it: its own local Ray cluster
on the CPU backend, then ``veil demo --server`` against it (exact against the plaintext model)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time

import pytest

pytest.importorskip("ray")
pytest.importorskip("ray.serve")
httpx = pytest.importorskip("httpx")
pytest.importorskip("fastapi")


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_cli_serve_ray_and_demo(tmp_path) -> None:
    """``veil serve --ray`` (its own local Ray cluster) and ``veil demo --server``, as the
    README shows them."""
    port = free_port()
    env = {**os.environ, "RAY_ADDRESS": "", "PYTHONUNBUFFERED": "1"}
    env.pop("RAY_ADDRESS")
    log = open(tmp_path / "serve.log", "w")
    proc = subprocess.Popen([sys.executable, "-m", "veil", "serve", "--ray", "--port", str(port),
                             "--models", "logreg", "--device", "cpu", "--replicas", "1"],
                            stdout=log, stderr=subprocess.STDOUT, env=env, cwd=tmp_path)
    try:
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            try:
                if httpx.get(url + "/health", timeout=5).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            assert proc.poll() is None, (tmp_path / "serve.log").read_text()[-3000:]
            time.sleep(1)
        out = subprocess.run([sys.executable, "-m", "veil", "demo", "--server", url,
                              "--device", "cpu"], capture_output=True, text=True, cwd=tmp_path,
                             timeout=240)
        assert out.returncode == 0, out.stdout[-2000:] + out.stderr[-2000:]
        assert "exact" in out.stdout.lower() or "agree" in out.stdout.lower(), out.stdout[-2000:]
    finally:
        proc.terminate()
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()
    assert proc.returncode == 0, (tmp_path / "serve.log").read_text()[-3000:]
