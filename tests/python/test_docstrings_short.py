"""``help(veil.ckks)``, ``help(veil.bfv)`` and ``help(veil.bgv)`` open with a short summary; the
detail lives in the documentation, which has every argument.

The class docstrings give a summary, the main arguments and where the rest is documented; the
user guide's argument tables name every keyword of the constructors (read from their signatures,
so a new argument without documentation fails here), and the detail moved out of the docstrings
(the scale rule of ``scale_at``, the bootstrapping chain's sizes) is in the pages they point to.
"""

from __future__ import annotations

import inspect
import pathlib
import pydoc
import re

import pytest
import veil

DOCS = pathlib.Path(__file__).resolve().parents[2] / "docs"
MAX_CLASS_DOC_LINES = 40
MAX_ARG_LINES = 3


CLASSES = [veil.ckks, veil.bfv, veil.bgv, veil.IntegerContext]


def args_entries(doc: str) -> dict[str, int]:
    """Lines per entry of a Google-style ``Args:`` section (name -> line count)."""
    m = re.search(r"^Args:\n((?:    .*\n|\n)*)", doc + "\n", re.MULTILINE)
    if not m:
        return {}
    entries: dict[str, int] = {}
    name = None
    for line in m.group(1).splitlines():
        if not line.strip():
            continue
        if not line.startswith("     "):  # a new entry: four spaces, then the name
            name = line.strip().split(":")[0]
            entries[name] = 1
        elif name is not None:
            entries[name] += 1
    return entries


def test_args_entries_are_counted() -> None:
    doc = "S.\n\nArgs:\n    a: one\n        two\n    b, c: x\n\nRaises:\n    E: y\n"
    assert args_entries(doc) == {"a": 2, "b, c": 1}


@pytest.mark.parametrize("cls", CLASSES, ids=lambda c: c.__name__)
def test_class_docstring_is_a_short_summary(cls: type) -> None:
    doc = inspect.getdoc(cls)
    assert doc, f"{cls.__name__} has no docstring"
    lines = doc.splitlines()
    assert len(lines) <= MAX_CLASS_DOC_LINES, (
        f"{cls.__name__}'s docstring has {len(lines)} lines (at most {MAX_CLASS_DOC_LINES}): "
        "keep a summary and the main arguments, and move the detail to docs/")
    # Each argument in a line or two (the rules and reasons are in the docs).
    entries = args_entries(doc)
    long = {name: n for name, n in entries.items() if n > MAX_ARG_LINES}
    assert not long, f"{cls.__name__}: Args entries longer than {MAX_ARG_LINES} lines: {long}"
    # It says where the rest is, and that page exists.
    pages = re.findall(r"docs/[\w/.-]+\.md", " ".join(doc.split()))
    assert pages, f"{cls.__name__}'s docstring names no documentation page"
    for page in pages:
        assert (DOCS.parent / page).is_file(), f"{cls.__name__} points at a missing {page}"


@pytest.mark.parametrize("cls", [veil.ckks, veil.bfv, veil.bgv], ids=lambda c: c.__name__)
def test_help_opens_with_the_summary(cls: type) -> None:
    """What help() shows before the list of methods fits a screen, and names the arguments."""
    text = pydoc.render_doc(cls, renderer=pydoc.plaintext)
    head = text.split("Method resolution order:")[0]
    assert len(head.splitlines()) <= MAX_CLASS_DOC_LINES + 8, head
    # The docstring's part: without the signature line, which pydoc prints whatever the doc.
    doc_part = "\n".join(line for line in head.splitlines()
                         if not line.startswith(f" |  {cls.__name__}("))
    for name in ("poly_modulus_degree", "coeff_modulus", "device"):
        assert name in doc_part, f"help({cls.__name__}) does not explain {name}"


def documented_arguments(page: str, heading: str) -> set[str]:
    """The `names` in the first column of the table under ``## heading`` of a docs page."""
    text = (DOCS / page).read_text()
    m = re.search(rf"^## {re.escape(heading)}\n(.*?)(?=^## |\Z)", text, re.MULTILINE | re.DOTALL)
    assert m, f"docs/{page} has no section '## {heading}'"
    names = re.findall(r"^\| `(\w+)` \|", m.group(1), re.MULTILINE)
    twice = sorted({n for n in names if names.count(n) > 1})
    assert not twice, f"docs/{page} '## {heading}' documents {twice} twice"
    return set(names)


@pytest.mark.parametrize(("cls", "page", "heading"), [
    (veil.ckks, "guide/ckks.md", "Context arguments"),
    (veil.IntegerContext, "guide/bfv-bgv.md", "A context and its keys"),
])
def test_every_constructor_argument_is_documented(cls: type, page: str, heading: str) -> None:
    params = {n for n, p in inspect.signature(cls.__init__).parameters.items()
              if p.kind is inspect.Parameter.KEYWORD_ONLY}
    assert len(params) >= 10
    documented = documented_arguments(page, heading)
    missing = params - documented
    assert not missing, f"docs/{page} '## {heading}' lacks rows for {sorted(missing)}"
    unknown = documented - params
    assert not unknown, f"docs/{page} documents arguments {cls.__name__} lacks: {sorted(unknown)}"


def test_the_detail_moved_out_of_the_docstrings_is_in_the_docs() -> None:
    ckks_page = (DOCS / "guide" / "ckks.md").read_text()
    boot_page = (DOCS / "reference" / "bootstrap.md").read_text()
    # scale_at's rule, the levels count, auto_rescale's fused key switch.
    for phrase in ("S_t = S_l^2 / D_l", "`ck.levels` counts", "Evaluator.relinearize_rescale",
                   "default_ckks_chain_32", "preset_chain"):
        assert phrase in ckks_page, phrase
        assert phrase not in (inspect.getdoc(veil.ckks) or ""), phrase
    # bootstrap_chain's reasons for each prime size.
    assert "## The chain" in boot_page
    for phrase in ("q_0 / Delta = 2^15", "Cheddar's bootparam_40 shape", "log2 QP = 1723"):
        assert phrase in boot_page, phrase
        assert phrase not in (inspect.getdoc(veil.ckks.bootstrap_chain) or ""), phrase
