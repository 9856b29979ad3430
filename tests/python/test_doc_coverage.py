"""Every public C++ declaration of the finished layers carries a complete doc comment.

scripts/doc_coverage.py (libclang) counts the public declarations of cpp/veil's headers and the
ones with a Doxygen comment (``///`` or ``/** */``) that has ``@param`` for every parameter,
``@return`` for a result and ``@throws`` where the function throws; its docstring states the rules.
DOCUMENTED lists the layers (folders of cpp/veil) that meet them: all of cpp/veil, so a new
layer joins it (test_every_layer_is_checked) and a new declaration needs its comment.
"""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

import pytest

pytest.importorskip("clang.cindex", reason="needs libclang's Python bindings (pip install libclang)")

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "doc_coverage.py"

#: The layers whose every public declaration is documented completely (--check --strict).
DOCUMENTED: list[str] = ["core", "backend", "ring", "rns", "io", "rlwe", "bfv", "bgv", "ckks",
                         "circuits", "api"]


def _tool():
    spec = importlib.util.spec_from_file_location("doc_coverage", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


def test_documented_layers():
    """One run over every finished layer (one parse): each undocumented or incomplete
    declaration is listed as file:line in the failure."""
    paths = [f"cpp/veil/{layer}" for layer in DOCUMENTED]
    run = subprocess.run([sys.executable, str(SCRIPT), "--check", "--strict", *paths],
                         cwd=ROOT, capture_output=True, text=True, check=False)
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_layer_is_checked():
    """DOCUMENTED names every folder of cpp/veil (and cpp/veil has no header outside them)."""
    veil = ROOT / "cpp" / "veil"
    assert sorted(DOCUMENTED) == sorted(p.name for p in veil.iterdir() if p.is_dir())
    assert not [p.name for p in veil.iterdir() if p.is_file()]


def test_tool_counts_and_checks(tmp_path):
    """The tool's rules on a small header: what counts, what is documented, what is complete."""
    header = tmp_path / "sample.h"
    header.write_text(
        """#pragma once
#include <stdexcept>
namespace veil {
/// Documented completely.
/// @param a the first.
/// @param b the second.
/// @return a + b.
inline int add(int a, int b) { return a + b; }

/// Lacks its tags.
inline int sub(int a, int b) { return a - b; }

inline int undocumented(int a) { return a; }

/// Checks a value.
/// @param a a value.
inline void check(int a) { if (a < 0) throw std::invalid_argument("a"); }

/// Throws veil::InvalidArgument when a < 0 (says so in prose only).
/// @param a a value.
void declared(int a);

/// Never throws.
/// @param a a value.
void quiet(int a);

/// A struct.
struct S {
  S() = default;                 // not counted
  int field = 0;                 ///< counted, documented
  int bare = 0;                  // counted, undocumented
 private:
  int hidden_ = 0;               // not counted
};

class Forward;                   // not counted

namespace detail {
inline int helper(int a) { return a; }  // not counted
}  // namespace detail
namespace {
inline int local(int a) { return a; }  // not counted
}  // namespace
}  // namespace veil
"""
    )
    tool = _tool()
    decls = {d.name: d for d in tool.scan([header])}
    assert set(decls) == {"add", "sub", "undocumented", "check", "declared", "quiet", "S",
                           "field", "bare"}
    assert decls["add"].complete
    assert decls["sub"].documented and decls["sub"].missing == ["@param a", "@param b", "@return"]
    assert not decls["undocumented"].documented
    assert decls["check"].missing == ["@throws"]
    assert decls["declared"].missing == ["@throws"]
    assert decls["quiet"].complete
    assert decls["field"].documented and not decls["bare"].documented

    run = subprocess.run([sys.executable, str(SCRIPT), "--check", str(header)],
                         capture_output=True, text=True, check=False)
    assert run.returncode == 1
    assert f"{header.resolve()}:13: function undocumented: undocumented" in run.stdout
