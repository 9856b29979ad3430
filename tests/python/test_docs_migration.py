"""The migration page's code runs: docs/guide/migration.md (TenSEAL, OpenFHE, SEAL and Veil side
by side).

Each fenced block carries its library as a title (```` ```python title="Veil" ````, inside a
content tab, so indented). The blocks of one library, in page order, form one script; it runs in
a fresh interpreter on the CPU (``CUDA_VISIBLE_DEVICES=""``) and must exit 0. The Veil blocks
check their results against numpy with ``assert``. SEAL's run when seal-python is installed (it
is in the ``test`` extra), TenSEAL's and OpenFHE's when those packages are; otherwise those are
skipped. The page and the test agree on which libraries exist, and every task section shows all
four.
"""

from __future__ import annotations

import importlib.util
import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest
import veil

PAGE = pathlib.Path(__file__).resolve().parents[2] / "docs" / "guide" / "migration.md"
#: title on the page -> the module that must be importable to run its blocks
LIBRARIES = {"Veil": "veil", "SEAL": "seal", "TenSEAL": "tenseal", "OpenFHE": "openfhe"}

BLOCK = re.compile(r'^(?P<indent>[ \t]*)```python[ \t]+title="(?P<title>[^"]+)"[ \t]*\n'
                   r"(?P<body>.*?)^(?P=indent)```[ \t]*$", re.MULTILINE | re.DOTALL)


def titled_blocks(text: str) -> list[tuple[str, str]]:
    """(title, dedented body) of every ```python title="..." block, in order."""
    return [(m.group("title"), textwrap.dedent(m.group("body"))) for m in BLOCK.finditer(text)]


def test_block_extraction() -> None:
    text = ('=== "Veil"\n\n    ```python title="Veil"\n    a = 1\n    if a:\n        b = 2\n'
            '    ```\n\n```python title="SEAL"\nc = 3\n```\n```python\nplain = 0\n```\n')
    assert titled_blocks(text) == [("Veil", "a = 1\nif a:\n    b = 2\n"), ("SEAL", "c = 3\n")]


def test_every_section_shows_every_library() -> None:
    text = PAGE.read_text()
    blocks = titled_blocks(text)
    assert {t for t, _ in blocks} == set(LIBRARIES), "unknown or missing library titles"
    sections = re.split(r"^## ", text, flags=re.MULTILINE)[1:]
    tasks = [s for s in sections if "```python" in s]
    assert len(tasks) >= 8, "expected the tasks: context, keys, encrypt, arithmetic, rotate, " \
                            "sum/dot/matmul, serialize, decrypt, BFV"
    for section in tasks[:-1]:  # the last one, SEAL's classes in Veil, compares SEAL and Veil
        titles = {t for t, _ in titled_blocks(section)}
        assert titles == set(LIBRARIES), f"section {section.splitlines()[0]!r} shows {titles}"


def cpu_env() -> dict[str, str]:
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = ""
    env["VEIL_PROGRESS"] = "0"
    package_root = str(pathlib.Path(veil.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    return env


@pytest.mark.parametrize("library", list(LIBRARIES))
def test_library_blocks_run(library: str, tmp_path: pathlib.Path) -> None:
    module = LIBRARIES[library]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"{module} is not installed: the page's {library} blocks are not run")
    bodies = [b for t, b in titled_blocks(PAGE.read_text()) if t == library]
    assert bodies
    script = tmp_path / f"migration_{module}.py"
    script.write_text("\n".join(f"print('== {library} block {i + 1}', flush=True)\n{b}"
                                for i, b in enumerate(bodies)))
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=cpu_env(),
                       capture_output=True, text=True, timeout=600, check=False)
    assert r.returncode == 0, (
        f"docs/guide/migration.md: a {library} block failed (the last '==' line names it):\n"
        + textwrap.indent(r.stdout[-3000:] + r.stderr[-4000:], "  "))
    if library == "Veil":
        # What the last blocks print, computed here: x^2 + x and x^2 for x = 1..4 (to 3
        # decimals), and BFV's [1, 2, 3]^2 + 5.
        assert "[ 6  9 14]" in r.stdout, r.stdout[-2000:]
