#!/usr/bin/env python3
"""Documentation coverage of Veil's public C++ declarations (cpp/veil/**/*.h, *.cuh, *.inc).

Parses the headers with libclang (``pip install libclang``: the Python bindings with their own
libclang; the test extra of pyproject.toml installs it) and counts, per header, per layer (the
folder under cpp/veil) and in total, the public declarations and how many carry a doc comment.

What counts as a public declaration
    A declaration written in the header itself (not one it includes), inside namespace ``veil``
    or a namespace nested in it, but not inside an anonymous namespace nor a namespace named
    ``detail`` or ending in ``_detail`` (``launch_detail``, ``rns_detail``), of one of these kinds:

    * at namespace scope: functions and function templates, classes, structs and unions (their
      definitions, not forward declarations) and class templates, enums, type aliases
      (``using``/``typedef``, alias templates), variables and constants;
    * inside a public class (a class counted above, or a public nested class of one): its public
      member functions (constructors and conversion operators included), public fields, public
      static data members, public nested classes, enums and type aliases. A ``struct``'s members
      are public unless an access specifier says otherwise.

    Not counted: macros, enumerators (the enum's comment documents them), friend declarations,
    ``using`` declarations and directives, static_asserts, explicit and partial specializations
    of templates (the primary template is documented), destructors, members declared
    ``= default`` or ``= delete``, out-of-class definitions of members already declared in the
    class, and a function's repeated declarations (the first one counts). Declarations in a .cpp
    or .cu file are never counted. A header is read as a plain C++17 compiler reads it; a header
    that tests ``__CUDACC__`` (and every .cuh) is read a second time as the host pass of nvcc
    reads it (``__CUDACC__`` defined, the CUDA keywords defined away), so that what only nvcc
    sees counts too. A .inc file is read where a file of cpp/ includes it.

What counts as documented
    A Doxygen comment that clang attaches to the declaration (``///``, ``/** ... */``, or a
    trailing ``///<`` after a field): libclang's ``Cursor.raw_comment``. Plain ``//`` comments
    do not count.

What counts as complete (the --strict rule)
    A documented declaration whose comment also has

    * ``@param NAME`` (or ``\\param``) for every named parameter of a function (template
      parameters need no ``@tparam``);
    * ``@return`` (or ``@returns``, ``\\return``) for a function whose result is not ``void``
      (constructors and conversion operators need none);
    * ``@throws`` (or ``@throw``, ``@exception``, ``\\throws``) for a function that is not
      ``noexcept`` and that is seen to throw: its comment mentions throwing or names one of
      Veil's exception types (outside phrases such as "never throws"), or its body, when the
      header defines it, holds a ``throw`` expression (VEIL_REQUIRE and VEIL_REQUIRE_TYPE expand to
      one). This is a heuristic: a function declared here and defined in a .cpp is not followed
      into its definition, so its comment has to say that it throws.

Usage
    python3 scripts/doc_coverage.py [PATH ...] [--files] [--list] [--check] [--strict]

    PATH: headers or folders (default: cpp/veil). --files: one row per header as well as per
    layer. --list: every undocumented (and, with --strict, incomplete) declaration as file:line.
    --check: exit 1 when any declaration in the paths is undocumented (with --strict: or
    incomplete), listing each as file:line.
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import pathlib
import re
import shutil
import subprocess
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
CPP = ROOT / "cpp"
VEIL = CPP / "veil"
HEADER_SUFFIXES = (".h", ".cuh", ".inc")

#: Read as a plain C++ compiler reads the headers (hd.h then defines VEIL_HD as `inline`).
#: No error limit: clang stops reading a translation unit after its 20th error otherwise (errors in
#: bodies, such as a compiler builtin that another clang version's intrinsics headers name, do not
#: hide declarations).
CXX_ARGS = ["-x", "c++", "-std=c++20", f"-I{CPP}", "-Wno-pragma-once-outside-header",
            "-ferror-limit=0"]
#: The host pass of nvcc, approximately: __CUDACC__ defined, CUDA's keywords defined away.
CUDA_ARGS = CXX_ARGS + [
    "-D__CUDACC__",
    "-D__global__=",
    "-D__device__=",
    "-D__host__=",
    "-D__shared__=",
    "-D__constant__=",
    "-D__managed__=",
    "-D__forceinline__=inline",
    "-D__noinline__=",
    "-D__restrict__=__restrict",
    "-D__launch_bounds__(...)=",
    "-D__grid_constant__=",
]


def _builtin_include_args() -> list[str]:
    """Where the compiler's own headers (stddef.h, stdarg.h, ...) are.

    The libclang wheel carries no such headers: use an installed clang's resource directory, or
    else GCC's (clang reads GCC's stddef.h and friends as well).
    """
    for cmd, make in ((["clang", "-print-resource-dir"], lambda p: ["-resource-dir", p]),
                      (["gcc", "-print-file-name=include"], lambda p: ["-isystem", p])):
        if shutil.which(cmd[0]) is None:
            continue
        try:
            out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout.strip()
        except (OSError, subprocess.CalledProcessError):
            continue
        if out and os.path.isdir(out):
            return make(out)
    return []


#: CUDA headers a .cuh may include: stand-ins (no CUDA toolkit is needed to read them). The first
#: is included ahead of everything in the CUDA reading and declares CUDA's built-in variables.
CUDA_STUB_HEADERS = ("cuda_runtime.h", "cuda.h", "cuda_runtime_api.h", "cuda_fp16.h",
                     "cooperative_groups.h", "cub/cub.cuh")
CUDA_PRELUDE = """#pragma once
struct dim3 { unsigned x, y, z; dim3(unsigned a = 1, unsigned b = 1, unsigned c = 1); };
extern const dim3 threadIdx, blockIdx, blockDim, gridDim;
typedef struct CUstream_st* cudaStream_t;
"""
#: CXTranslationUnit_KeepGoing: go on after an error (an include that is not found).
PARSE_KEEP_GOING = 0x200

PARAM_RE = re.compile(r"[@\\]param(?:\[[a-z, ]*\])?\s+(\w+)")
RETURN_RE = re.compile(r"[@\\]returns?\b")
THROWS_RE = re.compile(r"[@\\](?:throws?|exception)\b")
MENTIONS_THROW_RE = re.compile(
    r"\bthrows?\b|\bthrown\b|\bthrowing\b|\bInvalidArgument\b|\bTypeMismatch\b|\bOutOfMemory\b"
    r"|\bRuntimeError\b|\bstd::\w*(?:error|exception)\b",
    re.IGNORECASE,
)
NO_THROW_RE = re.compile(
    r"\b(?:never|not|n't|cannot|can't|no)\s+(?:\w+\s+)?throws?\b|\bnothrow\b|\bno-throw\b",
    re.IGNORECASE,
)


@dataclasses.dataclass
class Decl:
    """One public declaration: where it is, what it is, and what its comment lacks."""

    path: pathlib.Path
    line: int
    kind: str
    name: str
    documented: bool
    missing: list[str]  # the tags the comment lacks (empty: complete)

    @property
    def complete(self) -> bool:
        return self.documented and not self.missing

    def where(self) -> str:
        try:
            return f"{self.path.relative_to(ROOT)}:{self.line}"
        except ValueError:
            return f"{self.path}:{self.line}"


def _cindex():
    try:
        import clang.cindex as ci
    except ImportError:  # pragma: no cover - the message is the point
        sys.exit("doc_coverage.py needs libclang's Python bindings: pip install libclang")
    return ci


def _kinds(ci):
    K = ci.CursorKind
    functions = {K.FUNCTION_DECL, K.FUNCTION_TEMPLATE, K.CXX_METHOD, K.CONSTRUCTOR,
                 K.CONVERSION_FUNCTION}
    records = {K.CLASS_DECL, K.STRUCT_DECL, K.UNION_DECL, K.CLASS_TEMPLATE}
    types = {K.ENUM_DECL, K.TYPEDEF_DECL, K.TYPE_ALIAS_DECL, K.TYPE_ALIAS_TEMPLATE_DECL}
    variables = {K.VAR_DECL, K.FIELD_DECL}
    return functions, records, types, variables


def _is_hidden_namespace(cursor) -> bool:
    name = cursor.spelling
    return cursor.is_anonymous() or name == "" or name == "detail" or name.endswith("_detail")


def _throws_in_body(ci, cursor) -> bool:
    for c in cursor.walk_preorder():
        if c.kind == ci.CursorKind.CXX_THROW_EXPR:
            return True
    return False


def _is_noexcept(ci, cursor) -> bool:
    spec = cursor.exception_specification_kind
    E = ci.ExceptionSpecificationKind
    return spec in (E.BASIC_NOEXCEPT, E.DYNAMIC_NONE) or (
        spec == E.COMPUTED_NOEXCEPT and "noexcept(false)" not in _tokens(cursor))


def _tokens(cursor) -> str:
    return " ".join(t.spelling for t in cursor.get_tokens())


def _function_args(ci, cursor) -> list:
    """A function's parameters (a function template's are its PARM_DECL children)."""
    if cursor.kind == ci.CursorKind.FUNCTION_TEMPLATE:
        return [c for c in cursor.get_children() if c.kind == ci.CursorKind.PARM_DECL]
    return list(cursor.get_arguments())


def _missing_tags(ci, cursor, comment: str) -> list[str]:
    """The @param/@return/@throws tags that `comment` lacks for the function `cursor`."""
    K = ci.CursorKind
    missing = []
    documented = set(PARAM_RE.findall(comment))
    for arg in _function_args(ci, cursor):
        if arg.spelling and arg.spelling not in documented:
            missing.append(f"@param {arg.spelling}")
    returns = cursor.kind in (K.FUNCTION_DECL, K.FUNCTION_TEMPLATE, K.CXX_METHOD)
    if returns and cursor.result_type.kind != ci.TypeKind.VOID and not RETURN_RE.search(comment):
        missing.append("@return")
    if not THROWS_RE.search(comment) and not _is_noexcept(ci, cursor):
        prose = MENTIONS_THROW_RE.search(NO_THROW_RE.sub(" ", comment))
        if prose or (cursor.is_definition() and _throws_in_body(ci, cursor)):
            missing.append("@throws")
    return missing


def _collect(ci, tu, wanted: set[pathlib.Path], found: dict) -> None:
    functions, records, types, variables = _kinds(ci)
    K = ci.CursorKind
    A = ci.AccessSpecifier

    def file_of(c):
        f = c.location.file
        return pathlib.Path(os.path.realpath(f.name)) if f is not None else None

    def add(c, kind_name):
        path = file_of(c)
        key = (path, c.location.line, c.location.column, c.kind.name)
        if key in found:
            return
        comment = c.raw_comment or ""
        missing = []
        if comment and c.kind in functions:
            missing = _missing_tags(ci, c, comment)
        found[key] = Decl(path, c.location.line, kind_name, c.spelling or c.displayname,
                          bool(comment.strip()), missing)

    def is_special(c):
        if c.kind == K.DESTRUCTOR:
            return True
        if c.kind in (K.CXX_METHOD, K.CONSTRUCTOR, K.FUNCTION_TEMPLATE, K.CONVERSION_FUNCTION):
            if c.is_default_method() or c.is_deleted_method():
                return True
            toks = [t.spelling for t in c.get_tokens()]
            if toks[-2:] in (["=", "delete"], ["=", "default"]):
                return True
        return False

    def is_specialization(c):
        if c.kind == K.CLASS_TEMPLATE_PARTIAL_SPECIALIZATION:
            return True
        if c.kind in records and c.kind != K.CLASS_TEMPLATE:
            # An explicit specialization `template <> struct X<T>`: its spelling has no <...> in
            # libclang, but its display name does and its type has template arguments.
            return c.type.get_num_template_arguments() > 0
        if c.kind in (K.FUNCTION_DECL, K.CXX_METHOD):
            return c.get_num_template_arguments() > 0
        return False

    def visit_scope(scope, in_class: bool):
        for c in scope.get_children():
            path = file_of(c)
            if c.kind == K.NAMESPACE:
                if in_class or _is_hidden_namespace(c):
                    continue
                visit_scope(c, False)
                continue
            if path not in wanted:
                continue
            if in_class and c.access_specifier not in (A.PUBLIC, A.INVALID):
                continue
            if c.semantic_parent is not None and c.lexical_parent is not None and (
                c.semantic_parent != c.lexical_parent
            ):
                continue  # an out-of-class definition of a member declared in the class
            if is_specialization(c):
                continue
            if c.kind in records:
                if not c.is_definition():
                    continue
                add(c, "class")
                visit_scope(c, True)
            elif c.kind in functions:
                if is_special(c):
                    continue
                if c.canonical is not None and c.canonical != c and file_of(c.canonical) in wanted:
                    continue  # a repeated declaration (the first one counts)
                add(c, "function")
            elif c.kind in types:
                add(c, "type")
            elif c.kind in variables:
                add(c, "variable")

    for c in tu.cursor.get_children():
        if c.kind == K.NAMESPACE and c.spelling == "veil":
            visit_scope(c, False)


def _includer_of(inc: pathlib.Path) -> pathlib.Path | None:
    """A file under cpp/ that includes the .inc file `inc` (read there, in context)."""
    rel = inc.relative_to(CPP).as_posix()
    for p in sorted(CPP.rglob("*")):
        source = p.suffix in (".cpp", ".cu", ".h", ".cuh") and p.is_file()
        if source and f'#include "{rel}"' in p.read_text(errors="replace"):
            return p
    return None


def _headers(paths: list[str]) -> list[pathlib.Path]:
    out = []
    for p in paths:
        path = pathlib.Path(p)
        if not path.is_absolute():
            path = (ROOT / path) if (ROOT / path).exists() else path.resolve()
        path = pathlib.Path(os.path.realpath(path))
        if path.is_dir():
            out += [f for f in sorted(path.rglob("*")) if f.suffix in HEADER_SUFFIXES]
        elif path.suffix in HEADER_SUFFIXES:
            out.append(path)
        else:
            sys.exit(f"doc_coverage.py: not a header nor a folder: {p}")
    return sorted(set(out))


def scan(headers: list[pathlib.Path], verbose: bool = False) -> list[Decl]:
    """Every public declaration of `headers`, in file and line order."""
    ci = _cindex()
    index = ci.Index.create()
    builtin = _builtin_include_args()
    wanted = set(headers)
    found: dict = {}

    plain = [h for h in headers if h.suffix == ".h"]
    cuda = [h for h in headers if h.suffix == ".cuh" or (
        h.suffix == ".h" and "__CUDACC__" in h.read_text(errors="replace"))]
    incs = [h for h in headers if h.suffix == ".inc"]

    with tempfile.TemporaryDirectory() as stub_dir:
        for name in CUDA_STUB_HEADERS:
            stub = pathlib.Path(stub_dir, name)
            stub.parent.mkdir(parents=True, exist_ok=True)
            stub.write_text(CUDA_PRELUDE if name == "cuda_runtime.h" else "#pragma once\n")
        cuda_args = CUDA_ARGS + [f"-I{stub_dir}", "-include", "cuda_runtime.h"]

        def parse(includes, args, name="doc_coverage_all.cpp"):
            if not includes:
                return
            text = "".join(f'#include "{h}"\n' for h in includes)
            tu = index.parse(name, args=args + builtin, unsaved_files=[(name, text)],
                             options=PARSE_KEEP_GOING)
            if verbose:
                for d in tu.diagnostics:
                    if d.severity >= ci.Diagnostic.Error:
                        print(f"doc_coverage.py: {d}", file=sys.stderr)
            _collect(ci, tu, wanted, found)

        # All plain headers in one translation unit (they are all valid together, as .cpp files
        # include them together), and the CUDA readings in a second one.
        parse(plain, CXX_ARGS)
        parse(cuda, cuda_args, "doc_coverage_cuda.cpp")
        for inc in incs:
            includer = _includer_of(inc)
            if includer is None:
                continue
            args = cuda_args if includer.suffix in (".cu", ".cuh") else (
                CXX_ARGS)
            tu = index.parse(str(includer), args=args + builtin, options=PARSE_KEEP_GOING)
            _collect(ci, tu, wanted, found)

    return sorted(found.values(), key=lambda d: (str(d.path), d.line))


def layer_of(path: pathlib.Path) -> str:
    try:
        return path.relative_to(VEIL).parts[0]
    except ValueError:
        return str(path.parent)


def _row(name: str, decls: list[Decl], headers: int | None = None) -> str:
    n = len(decls)
    doc = sum(d.documented for d in decls)
    full = sum(d.complete for d in decls)

    def pct(k):
        return f"{100.0 * k / n:5.1f}%" if n else "    -"

    h = "" if headers is None else str(headers)
    return f"{name:<44} {h:>7} {n:>7} {doc:>7} {pct(doc):>7} {full:>8} {pct(full):>7}"


def report(headers: list[pathlib.Path], decls: list[Decl], per_file: bool) -> str:
    head = (f"{'':<44} {'headers':>7} {'public':>7} {'doc':>7} {'doc%':>7} {'complete':>8} "
            f"{'cmpl%':>7}")
    lines = [head, "-" * len(head)]
    layers: dict[str, list[pathlib.Path]] = {}
    for h in headers:
        layers.setdefault(layer_of(h), []).append(h)
    for layer, files in sorted(layers.items()):
        in_layer = [d for d in decls if layer_of(d.path) == layer]
        lines.append(_row(layer + "/", in_layer, len(files)))
        if per_file:
            for f in files:
                lines.append(_row("  " + f.name, [d for d in in_layer if d.path == f]))
    lines.append("-" * len(head))
    lines.append(_row("total", decls, len(headers)))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("paths", nargs="*", default=[str(VEIL)], help="headers or folders")
    ap.add_argument("--files", action="store_true", help="a row per header too")
    ap.add_argument("--list", action="store_true", help="list what is undocumented")
    ap.add_argument("--check", action="store_true",
                    help="exit 1 when a public declaration is undocumented")
    ap.add_argument("--strict", action="store_true",
                    help="with --check/--list: also require @param/@return/@throws")
    ap.add_argument("--verbose", action="store_true", help="print clang's errors")
    args = ap.parse_args(argv)

    headers = _headers(args.paths)
    decls = scan(headers, args.verbose)
    print(report(headers, decls, args.files))

    bad = [d for d in decls if not d.documented or (args.strict and d.missing)]
    if args.list or args.check:
        for d in bad:
            what = "undocumented" if not d.documented else "lacks " + ", ".join(d.missing)
            print(f"{d.where()}: {d.kind} {d.name}: {what}")
    if args.check and bad:
        print(f"doc_coverage.py: {len(bad)} public declaration(s) "
              f"{'undocumented or incomplete' if args.strict else 'undocumented'}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
