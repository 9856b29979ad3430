"""The package's import graph (issue 23, deliverable 2): no module imports, even lazily inside a
function, a module that imports it back. The ordinary ``x * y`` and ``polyval`` paths once closed
the loop ``_base -> _tensor -> _bootstrap -> _base``; the polynomial evaluator and the
bootstrapper are now C++ (``veil._core``), and ``_tensor`` imports neither.

Two checks: the graph of every ``import`` statement between the core modules (static, from the
syntax tree of python/veil/*.py; ``if TYPE_CHECKING:`` blocks are not imports at run time) has
no cycle, and each core module imports first in a fresh interpreter.

Package shape (issue 28, item 6): the applications sit above the core. The demos live in
``veil.apps``, the service, its client and the load test in ``veil.serve``; the core (``veil``,
its ``_*`` modules, ``veil.seal``, ``veil.distributed``) imports none of them, nor the CLI or the
benchmark, and ``import veil`` loads none of them."""

from __future__ import annotations

import ast
import pathlib
import subprocess
import sys

import pytest
import veil

PKG = pathlib.Path(veil.__file__).parent
#: The package's top-level modules and subpackages (``apps``, ``serve``).
MODULES = sorted([p.stem for p in PKG.glob("*.py") if p.stem != "__init__"]
                 + [p.name for p in PKG.iterdir() if (p / "__init__.py").is_file()])
#: The modules ``import veil`` loads (the core package; applications live in subpackages).
CORE = ["_base", "_bootstrap", "_check", "_ckks", "_conv", "_device", "_enc_tensor",
        "_enc_tensor_io", "_errors", "_functions", "_integer", "_matmul_enc", "_params",
        "_progress", "_repack", "_serialize", "_tensor", "seal"]
#: Above the core: the demos, the service (with its client and load test), the CLI, the benchmark.
APPLICATIONS = {"apps", "serve", "cli", "__main__", "bench", "_bench_boot", "_bench_ops",
                "_bench_plot", "_bench_report", "_bench_rows"}


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (
        isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def imports_of(name: str) -> set[str]:
    """The package modules ``name`` imports anywhere (module level or inside functions)."""
    tree = ast.parse((PKG / f"{name}.py").read_text())
    out: set[str] = set()

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.ImportFrom):
            mod = node.module or ""
            if node.level >= 1 or mod == "veil" or mod.startswith("veil."):
                base = mod.removeprefix("veil").lstrip(".") if node.level == 0 else mod
                if base:
                    out.add(base.split(".")[0])
                else:  # from . import a, b
                    out.update(a.name for a in node.names)
        elif isinstance(node, ast.Import):
            for a in node.names:
                if a.name.startswith("veil."):
                    out.add(a.name.split(".")[1])
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return {m for m in out if m in MODULES and m != name}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    state: dict[str, int] = {}
    stack: list[str] = []

    def dfs(v: str) -> list[str] | None:
        state[v] = 1
        stack.append(v)
        for w in sorted(graph.get(v, ())):
            if state.get(w) == 1:
                return stack[stack.index(w):] + [w]
            if w not in state:
                found = dfs(w)
                if found:
                    return found
        stack.pop()
        state[v] = 2
        return None

    for v in sorted(graph):
        if v not in state:
            found = dfs(v)
            if found:
                return found
    return None


def test_the_core_import_graph_has_no_cycle() -> None:
    graph = {m: imports_of(m) & set(CORE) for m in CORE}
    assert find_cycle(graph) is None, " -> ".join(find_cycle(graph) or [])
    # the core never imports an application module (DESIGN.md: subpackages and demos sit above)
    assert all(imports_of(m) <= set(CORE) | {"_core"} for m in CORE), {
        m: imports_of(m) - set(CORE) for m in CORE}
    # the loop of issue 23 specifically, and the algorithms' new home
    assert "_bootstrap" not in graph["_tensor"] and "_bootstrap" not in graph["_base"]
    assert graph["_tensor"] <= {"_check", "_core"}


def test_the_checker_sees_lazy_imports() -> None:
    assert find_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert "_tensor" in imports_of("_base")
    assert "_ckks" not in imports_of("_bootstrap")  # TYPE_CHECKING only


def test_the_core_imports_no_application() -> None:
    assert {"apps", "serve"} <= set(MODULES) and APPLICATIONS <= set(MODULES)
    assert not {"demo", "demo_ckks", "demo_train", "demo_xgboost", "_xgb_train", "client",
                "loadtest"} & set(MODULES)  # moved into veil.apps and veil.serve
    for m in ["__init__", *CORE, "distributed"]:
        assert not imports_of(m) & APPLICATIONS, (m, imports_of(m) & APPLICATIONS)


def test_import_veil_loads_no_application() -> None:
    prefixes = ("veil.apps", "veil.serve", "veil.cli", "veil.bench", "veil._bench_")
    code = ("import sys, veil; print(sorted(m for m in sys.modules "
            f"if m.startswith({prefixes!r})))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]", r.stdout


@pytest.mark.parametrize("name", CORE)
def test_each_core_module_imports_first_in_a_fresh_interpreter(name: str) -> None:
    code = f"import importlib; m = importlib.import_module('veil.{name}'); print(m.__name__)"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120,
                       check=False)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == f"veil.{name}"
