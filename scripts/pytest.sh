#!/usr/bin/env bash
# Runs pytest on Veil's Python tests from a private, empty temporary directory, so that nothing
# the caller's current directory or $TMPDIR (/tmp) holds can be imported in place of a real module
# (`python -m` puts the current directory first on sys.path: a stray /tmp/pydoc.py once shadowed
# the standard library's and broke scipy's import). pytest's own temporary files
# (--basetemp) go into the same private directory, which is removed on exit.
# Usage: bash scripts/pytest.sh [pytest arguments; default: tests/python -q]
# Paths among the arguments are taken relative to the repository root.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d "${TMPDIR:-/tmp}/veil-pytest.XXXXXX")
trap 'rm -rf "$WORK"' EXIT
cd "$WORK"
if [ $# -eq 0 ]; then set -- tests/python -q; fi
args=()
for a in "$@"; do   # a relative path (tests/python, tests/python/test_x.py::name) -> absolute
  case "$a" in
    -*|/*) args+=("$a") ;;
    *) if [ -e "$ROOT/${a%%::*}" ]; then args+=("$ROOT/$a"); else args+=("$a"); fi ;;
  esac
done
# -P (PYTHONSAFEPATH, Python >= 3.11) keeps even this empty directory off sys.path.
SAFE=()
if python3 -c 'import sys; sys.exit(sys.version_info < (3, 11))'; then SAFE=(-P); fi
python3 "${SAFE[@]}" -m pytest --rootdir "$ROOT" -c "$ROOT/pyproject.toml" \
  --basetemp "$WORK/basetemp" "${args[@]}"
