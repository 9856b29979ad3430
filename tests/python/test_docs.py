"""The documentation site builds, and its code runs (issue 10, item 5).

``mkdocs build --strict`` fails on any warning: a page missing from the navigation, a broken
link or anchor, an API object that no longer exists (``::: veil.x``), a cross-reference that
does not resolve, an example file that ``--8<--`` cannot include. scripts/test.sh builds the
site too; this test catches the same breakage from pytest. The API reference is read
statically (griffe, ``allow_inspection: false``), so it needs no compiled extension.

The ```python blocks of the home page and the user guide run in order, one namespace per page,
on the CPU; a block whose first line starts with ``# slow:`` or ``# needs:`` (a reason follows)
is skipped.
"""

from __future__ import annotations

import os
import pathlib
import re
import subprocess
import sys
import textwrap

import pytest

import veil

ROOT = pathlib.Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
SKIP_MARKERS = ("# slow:", "# needs:")
PAGES = ["index.md"] + sorted(f"guide/{p.name}" for p in (DOCS / "guide").glob("*.md"))


def python_blocks(text: str) -> list[str]:
    return [m.group(1) for m in re.finditer(r"^```python[ \t]*\n(.*?)^```[ \t]*$", text,
                                            re.MULTILINE | re.DOTALL)]


def cpu_env() -> dict[str, str]:
    env = dict(os.environ)
    env["CUDA_VISIBLE_DEVICES"] = ""
    package_root = str(pathlib.Path(veil.__file__).resolve().parents[1])
    env["PYTHONPATH"] = os.pathsep.join(p for p in (package_root, env.get("PYTHONPATH")) if p)
    env["NO_MKDOCS_2_WARNING"] = "1"
    return env


def test_site_builds_strict(tmp_path: pathlib.Path) -> None:
    for module in ("mkdocs", "material", "mkdocstrings", "mkdocstrings_handlers.python"):
        pytest.importorskip(module, reason="the docs extra is not installed (pip install "
                            "'veil[docs]')")
    site = tmp_path / "site"
    # cwd = the repository root: pymdownx.snippets reads examples/ relative to it.
    r = subprocess.run([sys.executable, "-m", "mkdocs", "build", "--strict", "-f",
                        str(ROOT / "mkdocs.yml"), "-d", str(site)], cwd=ROOT, env=cpu_env(),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, "mkdocs build --strict failed:\n" + textwrap.indent(
        r.stdout[-3000:] + r.stderr[-6000:], "  ")
    # The generated parts are really there: example sources and API entries from docstrings.
    examples = (site / "examples" / "index.html").read_text()
    for name in ("bfv_basics", "service_client", "seal_interop"):
        assert f"python examples/{name}.py" in examples, name
    api = (site / "reference" / "contexts" / "index.html").read_text()
    assert "rotate_rows" in api and "noise_budget" in api and "CKKSContext" in api
    core = (site / "reference" / "core" / "index.html").read_text()
    assert "relinearize_rescale" in core  # from the veil._core stub


def test_guide_pages_are_in_the_navigation() -> None:
    nav = (ROOT / "mkdocs.yml").read_text()
    for page in PAGES:
        assert page in nav, f"docs/{page} is not in mkdocs.yml's nav"


@pytest.mark.parametrize("page", PAGES)
def test_page_code_runs_on_the_cpu(page: str, tmp_path: pathlib.Path) -> None:
    blocks = python_blocks((DOCS / page).read_text())
    run = [b for b in blocks if not b.lstrip().startswith(SKIP_MARKERS)]
    if not run:
        pytest.skip(f"docs/{page} has no Python block to run")
    script = tmp_path / "page.py"
    script.write_text("\n".join(f"print('== docs/{page} block {i + 1}', flush=True)\n{b}"
                                for i, b in enumerate(run)))
    r = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=cpu_env(),
                       capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f"docs/{page}: a block failed:\n" + textwrap.indent(
        r.stdout[-3000:] + r.stderr[-4000:], "  ")
