"""What a user reads names papers by their public titles, never the team's internal files.

README.md, every page under docs/ (and mkdocs.yml), the example scripts the docs include, the
docstrings and ``#:`` attribute comments of the Python package (mkdocstrings renders them, and
``help()`` shows them), and the ``--help`` of ``veil`` and of every subcommand must not say
"seed 000", point into "seeds/" or "../shared", or cite "issue N" (internal tracker numbers that
mean nothing outside the team). bench/ holds internal notes and is not checked.
"""

from __future__ import annotations

import argparse
import ast
import os
import pathlib
import re
import subprocess
import sys

import pytest
import veil
from veil import cli

ROOT = pathlib.Path(__file__).resolve().parents[2]
PACKAGE = pathlib.Path(veil.__file__).resolve().parent

#: The internal references, each with why it is one.
PATTERNS = [
    (re.compile(r"\bseeds?\s*#?0\d\d\b", re.IGNORECASE), "an internal seed-paper number"),
    (re.compile(r"\bseeds/"), "the internal seeds/ folder"),
    (re.compile(r"\.\./shared\b|\bshared/seeds\b"), "a folder outside the repository"),
    (re.compile(r"\bissues?\s*#?\d+\b", re.IGNORECASE), "an internal issue number"),
]


def internal_refs(text: str) -> list[str]:
    """Each internal reference of ``text`` as 'line N: match (why)'."""
    found = []
    for i, line in enumerate(text.splitlines(), 1):
        for pattern, why in PATTERNS:
            for m in pattern.finditer(line):
                found.append(f"line {i}: {m.group(0)!r} ({why})")
    return found


def test_the_patterns_catch_what_they_should() -> None:
    bad = ("Seed 000's application", "see ../shared/seeds/README.md", "seeds/000_x.txt",
           "(issue 22)", "Issue #7", "seed 004 ran it cold")
    for text in bad:
        assert internal_refs(text), text
    good = ("seed=1 fixes the keys", "seeded keys", "a 64-byte seed",
            "Özcan et al., IEEE Access 2023", "GitHub issues", "the seed of the PRNG",
            "2 issues found")
    for text in good:
        assert not internal_refs(text), text


def user_files() -> list[pathlib.Path]:
    files = [ROOT / "README.md", ROOT / "mkdocs.yml"]
    files += sorted((ROOT / "docs").rglob("*.md"))
    files += sorted((ROOT / "docs").rglob("*.ipynb")) + sorted((ROOT / "examples").rglob("*.ipynb"))
    files += sorted((ROOT / "examples").glob("*.py"))
    return files


def test_readme_docs_and_examples_have_no_internal_references() -> None:
    files = user_files()
    assert len(files) > 10, "expected README.md, docs/ and examples/"
    bad = {str(f.relative_to(ROOT)): r for f in files if (r := internal_refs(f.read_text()))}
    assert not bad, f"internal references in user-facing files: {bad}"


def docstrings(path: pathlib.Path) -> list[tuple[int, str]]:
    """The docstrings (module, class, function) and ``#:`` comments of a source file."""
    text = path.read_text()
    out = [(i, line) for i, line in enumerate(text.splitlines(), 1)
           if line.lstrip().startswith("#:")]
    tree = ast.parse(text)
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            doc = ast.get_docstring(node, clean=False)
            if doc:
                out.append((getattr(node, "lineno", 1), doc))
    return out


def test_package_docstrings_have_no_internal_references() -> None:
    sources = sorted(PACKAGE.rglob("*.py")) + sorted(PACKAGE.rglob("*.pyi"))
    assert len(sources) > 20
    bad = {}
    for f in sources:
        for line, doc in docstrings(f):
            if r := internal_refs(doc):
                bad[f"{f.relative_to(PACKAGE.parent)}:{line}"] = r
    assert not bad, f"internal references in docstrings: {bad}"


def subcommand_parsers(parser: argparse.ArgumentParser) -> dict[str, argparse.ArgumentParser]:
    subs: dict[str, argparse.ArgumentParser] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            subs.update(action.choices)
    return subs


def test_cli_help_of_every_subcommand_has_no_internal_references() -> None:
    parser = cli.build_parser()
    subs = subcommand_parsers(parser)
    assert {"info", "demo", "bench", "serve", "loadtest"} <= set(subs), sorted(subs)
    helps = {"veil": parser.format_help()}
    helps.update({f"veil {name}": p.format_help() for name, p in subs.items()})
    bad = {name: r for name, text in helps.items() if (r := internal_refs(text))}
    assert not bad, f"internal references in --help: {bad}"
    # The application of the XGBoost demo is named by its paper.
    assert "Özcan" in " ".join(helps["veil demo"].split())


@pytest.mark.parametrize("argv", [["--help"], ["demo", "--help"]])
def test_the_installed_command_prints_the_same_help(argv: list[str],
                                                     tmp_path: pathlib.Path) -> None:
    """The real entry point (python -m veil) prints what build_parser formats."""
    env = dict(os.environ, COLUMNS="100", CUDA_VISIBLE_DEVICES="")
    r = subprocess.run([sys.executable, "-m", "veil", *argv], capture_output=True, text=True,
                       check=False, env=env, timeout=120, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-2000:]
    assert "usage:" in r.stdout
    assert not internal_refs(r.stdout), internal_refs(r.stdout)
