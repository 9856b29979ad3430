"""The README's Python examples run as written on a CPU-only machine (issue 10, item 5).

Every fenced ```python block of README.md is executed, in order, in one namespace (later
blocks use names the earlier ones define, as a reader pasting them into one session would),
in a fresh interpreter with ``CUDA_VISIBLE_DEVICES=""`` so that ``device="auto"`` means the
CPU. A block whose first line carries the marker ``# slow:`` (with the reason) is skipped: the
CKKS bootstrapping example at N = 2^16 takes minutes on a CPU (it runs in the bootstrapping
tests and ``veil bench --bootstrap`` instead).
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import numpy as np
import veil

README = pathlib.Path(__file__).resolve().parents[2] / "README.md"
SLOW = "# slow:"


def python_blocks(text: str) -> list[str]:
    """The bodies of the fenced ```python blocks, in order."""
    return [m.group(1) for m in re.finditer(r"^```python[ \t]*\n(.*?)^```[ \t]*$", text,
                                            re.MULTILINE | re.DOTALL)]


def test_block_extraction() -> None:
    text = "x\n```python\na = 1\n```\n```bash\nls\n```\n```python\n# slow: why\nb = 2\n```\n"
    assert python_blocks(text) == ["a = 1\n", "# slow: why\nb = 2\n"]


def test_readme_python_blocks_run_on_the_cpu(tmp_path: pathlib.Path) -> None:
    blocks = python_blocks(README.read_text())
    assert len(blocks) >= 3, "README.md: expected its Python examples in ```python blocks"
    for i, block in enumerate(blocks):
        assert "device=\"cuda\"" not in block.replace("'", '"'), (
            f"README block {i + 1} asks for device='cuda': it fails on a CPU-only machine "
            "(use device='auto')")
    run = [b for b in blocks if not b.lstrip().startswith(SLOW)]
    assert len(run) >= 3, "only the slow blocks may be skipped"
    # One script: each block under a banner, so a failure names its block.
    parts = []
    for i, block in enumerate(blocks):
        if block in run:
            parts.append(f"print('== README block {i + 1}', flush=True)\n{block}")
    script = tmp_path / "readme_blocks.py"
    script.write_text("\n".join(parts))
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = ""
    # The Ray example starts its own local cluster, whatever cluster this machine runs
    # (Ray's rule would join one started by `ray start` or named by RAY_ADDRESS).
    env["RAY_ADDRESS"] = "local"
    package_root = str(pathlib.Path(veil.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env,
                       capture_output=True, text=True, timeout=900)
    assert r.returncode == 0, (
        "a README block failed (the last '== README block' line names it):\n"
        + textwrap.indent(r.stdout[-4000:] + r.stderr[-4000:], "  "))
    # What the first examples print, computed here independently: (a * b + 5) rotated left by
    # one slot (a = 0..15, b = 3 in the first 16 slots, 0 after), the squares of 0..15 after the
    # server round trip, and (x^3 + x)(x^2 + 1) = x^5 + x mod 2.
    a = np.zeros(32, dtype=np.int64)
    a[:16] = np.arange(16)
    b = np.zeros(32, dtype=np.int64)
    b[:16] = 3
    for expected in (str(np.roll(a * b + 5, -1)[:16]), str(np.arange(16) ** 2), "1x^5 + 1x^1"):
        assert expected in r.stdout, f"README output lacks {expected!r}:\n{r.stdout}"
