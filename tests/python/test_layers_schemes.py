"""Layer rules the compiler cannot check: rlwe/ names no scheme, api/ does not switch on one.

DESIGN.md "Layers": rlwe/ holds what the schemes share and scheme-only state lives with its
scheme (as Lattigo's rlwe package knows no scheme; its schemes embed rlwe.Parameters). The C++
sources of cpp/veil/rlwe/ are read with their comments removed (comments may point at the
schemes' folders) and must not name BFV, BGV or CKKS, in identifiers or in messages; a scheme's
name reaches a message through SchemeDefinition::name. Allowed: rlwe/params.h and params.cpp,
which define the SchemeType enum and its spelling ("bfv", "bgv", "ckks"), since the parameter
set names its scheme (as SEAL's EncryptionParameters).

api/ dispatches through one table per scheme (api/schemes.h, SchemeOps): the only switch on
SchemeType is the registry's, in api/schemes.cpp.
"""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2] / "cpp" / "veil"
SCHEME = re.compile(r"(?i)(?<![A-Za-z0-9])(bfv|bgv|ckks)(?![A-Za-z0-9])")
ALLOWED_RLWE = {"params.h", "params.cpp"}


def code_without_comments(text: str) -> str:
    """The text with // and /* */ comments removed (string literals kept)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            i = n if j < 0 else j + 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


def sources(folder: str):
    return sorted(p for p in (ROOT / folder).iterdir()
                  if p.suffix in {".h", ".cpp", ".cu", ".cuh"})


def test_comment_stripper_keeps_strings_and_drops_comments():
    src = 'int x; // BFV\n/* CKKS */ const char* s = "BGV // kept";\n'
    code = code_without_comments(src)
    assert "BFV" not in code and "CKKS" not in code and '"BGV // kept"' in code


def test_rlwe_names_no_scheme():
    hits = []
    for path in sources("rlwe"):
        if path.name in ALLOWED_RLWE:
            continue
        for lineno, line in enumerate(code_without_comments(path.read_text()).splitlines(), 1):
            if SCHEME.search(line):
                hits.append(f"{path.name}:{lineno}: {line.strip()}")
    assert not hits, "rlwe/ names a scheme (move it to the scheme's folder):\n" + "\n".join(hits)


def test_api_operations_do_not_switch_on_the_scheme():
    hits = []
    for path in sources("api"):
        if path.name == "schemes.cpp":  # the registry: the one switch
            continue
        code = code_without_comments(path.read_text())
        for lineno, line in enumerate(code.splitlines(), 1):
            if re.search(r"SchemeType::|switch\s*\(\s*ctx", line):
                hits.append(f"{path.name}:{lineno}: {line.strip()}")
    assert not hits, "api/ switches on the scheme (use SchemeOps):\n" + "\n".join(hits)
