#!/usr/bin/env bash
# Builds Veil's CPU wheel as it is shipped (scripts/build_wheels.sh cpu: auditwheel-repaired,
# manylinux) and installs it, with its dependencies from PyPI, into a fresh virtual environment
# of the same Python, then checks it there, outside the source tree: the import, the version (one
# source: CMakeLists.txt), BFV and CKKS encrypt/compute/decrypt, `python -m veil` and the `veil`
# script, the files the wheel must carry (one compiled veil._core, its stub, py.typed, LICENSE,
# the bundled libraries), that the extension loads zstd, libb2 and OpenMP from the wheel and not
# from the system, and `pip check`. Run from anywhere; exits non-zero on the first failure.
#
# The wheel is built in BUILD (default build/wheel-cpu). scripts/test.sh passes its own build
# folder when that build is CPU-only: the wheel is then re-packaged, not recompiled.
# WHEEL=path checks a wheel built elsewhere instead. Needs network access for the dependencies
# (numpy, rich, py-cpuinfo) and, on first use, for auditwheel, unless pip is pointed at a local
# index (PIP_INDEX_URL, PIP_FIND_LINKS).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
BUILD=${BUILD:-build/wheel-cpu}
JOBS=${JOBS:-$(nproc)}
export CMAKE_BUILD_PARALLEL_LEVEL=$JOBS
WORK=$(mktemp -d "${TMPDIR:-/tmp}/veil-wheel.XXXXXX")
trap 'rm -rf "$WORK"' EXIT

VERSION=$(sed -nE 's/^[[:space:]]*project\([[:space:]]*veil[[:space:]]+VERSION[[:space:]]+([0-9][0-9.]*).*/\1/p' CMakeLists.txt)
[ -n "$VERSION" ] || { echo "check_wheel: no project(veil VERSION ...) in CMakeLists.txt" >&2; exit 1; }

if [ -n "${WHEEL:-}" ]; then   # check a wheel built elsewhere: WHEEL=dist/veil-....whl
  mkdir -p "$WORK/dist" && cp "$WHEEL" "$WORK/dist/"
else
  echo "== Building the CPU wheel (scripts/build_wheels.sh cpu, build dir $BUILD)"
  JOBS=$JOBS bash scripts/build_wheels.sh --out "$WORK/built" --build-dir "$BUILD" cpu
  mkdir -p "$WORK/dist" && cp "$WORK"/built/cpu/veil-*.whl "$WORK/dist/"
fi
WHEELS=("$WORK"/dist/veil-*.whl)
if [ "${#WHEELS[@]}" -ne 1 ] || [ ! -f "${WHEELS[0]}" ]; then
  echo "check_wheel: expected one wheel, got: ${WHEELS[*]}" >&2
  exit 1
fi
WHEEL=${WHEELS[0]}
echo "   $(basename "$WHEEL") ($(du -h "$WHEEL" | cut -f1))"
case "$(basename "$WHEEL")" in
  "veil-$VERSION-"*) ;;
  *) echo "check_wheel: the wheel's version is not CMakeLists.txt's $VERSION" >&2; exit 1 ;;
esac

echo "== Checking the wheel's contents"
python3 - "$WHEEL" "$VERSION" "$ROOT" <<'EOF'
import os, sys, zipfile
wheel, version, root = sys.argv[1:]
names = zipfile.ZipFile(wheel).namelist()
def need(cond, what):
    if not cond:
        sys.exit(f"check_wheel: {what}\n  wheel files: {sorted(names)}")
cores = [n for n in names if n.startswith("veil/_core") and n.endswith(".so")]
need(len(cores) == 1, f"expected one compiled veil/_core*.so, got {cores}")
for n in ("veil/__init__.py", "veil/__main__.py", "veil/cli.py"):
    need(n in names, f"{n} missing")
for n in ("_core.pyi", "py.typed"):  # shipped when the source tree has them
    if os.path.exists(os.path.join(root, "python", "veil", n)):
        need(f"veil/{n}" in names, f"veil/{n} missing")
info = f"veil-{version}.dist-info"
need(f"{info}/licenses/LICENSE" in names, "the LICENSE file is not in the wheel's metadata")
meta = zipfile.ZipFile(wheel).read(f"{info}/METADATA").decode()
for line in (f"Version: {version}", "License-Expression: MIT", "Project-URL: Documentation",
             "Classifier: Environment :: GPU :: NVIDIA CUDA"):
    need(line in meta, f"METADATA lacks {line!r}")
need(not any(n.startswith(("tests/", "examples/", "build/", "docs/")) for n in names),
     "the wheel carries files outside the package")
tag = os.path.basename(wheel)
if "manylinux" in tag:  # repaired by auditwheel: the libraries outside manylinux travel along
    libs = [n for n in names if n.startswith("veil.libs/")]
    for lib in ("libzstd", "libb2"):
        need(any(os.path.basename(n).startswith(lib) for n in libs),
             f"{lib} is not bundled in veil.libs/ (auditwheel repair)")
print(f"   {len(names)} files; one veil/_core extension; METADATA and LICENSE in place")
EOF

echo "== Installing into a fresh virtual environment (dependencies from the index)"
VENV=$WORK/venv
PY=$VENV/bin/python
if python3 -m venv "$VENV" 2>/dev/null; then
  PIP=("$PY" -m pip)
else
  # No ensurepip (Debian's python3 without python3-venv): an environment without pip, filled
  # by this Python's pip (pip >= 22.3 installs into another interpreter with --python).
  rm -rf "$VENV"
  python3 -m venv --without-pip "$VENV"
  PIP=(python3 -m pip --python "$PY")
fi
# Without the caller's PYTHONPATH, whose packages would otherwise count as installed in the
# fresh environment (pip check then judges them).
env -u PYTHONPATH "${PIP[@]}" install -q --disable-pip-version-check "$WHEEL"
env -u PYTHONPATH "${PIP[@]}" check --disable-pip-version-check

echo "== Using the installed wheel"
# Outside the source tree and without PYTHONPATH: only the installed package can be imported.
cd "$WORK"
env -u PYTHONPATH VEIL_EXPECTED_VERSION="$VERSION" VEIL_VENV="$VENV" "$PY" - <<'EOF'
import importlib.metadata, os, pathlib
import numpy as np
import veil

venv = pathlib.Path(os.environ["VEIL_VENV"]).resolve()
where = pathlib.Path(veil.__file__).resolve()
assert venv in where.parents, f"imported veil from {where}, not from the virtual environment"
want = os.environ["VEIL_EXPECTED_VERSION"]
assert veil.__version__ == importlib.metadata.version("veil") == want, (
    veil.__version__, importlib.metadata.version("veil"), want)

ctx = veil.bfv(poly_modulus_degree=4096, plain_modulus=65537, device="cpu", seed=1)
m = np.arange(64)
got = ctx.decrypt(ctx.encrypt(m) * ctx.encrypt(m) + 3)[:64]
assert np.array_equal(got, (m * m + 3) % 65537), got

ck = veil.ckks(poly_modulus_degree=8192, device="cpu", seed=1)
x = np.linspace(-1, 1, 16)
y = ck.decrypt((ck.encrypt(x) * 0.5) + 0.25)[:16]
stats = veil.ckks.precision(x * 0.5 + 0.25, y)
assert stats["min_bits"] > 15, stats
print(f"   veil {veil.__version__} from {where.parent}: BFV and CKKS round trips correct")
EOF
HELP=$(env -u PYTHONPATH "$PY" -m veil --help)
case "$HELP" in
  "usage: veil "*info*demo*) ;;
  *) echo "check_wheel: python -m veil --help printed: $HELP" >&2; exit 1 ;;
esac
env -u PYTHONPATH "$PY" -m veil info >/dev/null
case "$(basename "$WHEEL")" in
  *manylinux*)
    # The repaired wheel's extension resolves zstd, libb2 and OpenMP inside the environment.
    if command -v ldd >/dev/null; then
      CORE=$(env -u PYTHONPATH "$PY" -c 'import veil._core as c; print(c.__file__)')
      LIBS=$(ldd "$CORE")
      for lib in libzstd libb2 libgomp; do
        line=$(grep -E "^[[:space:]]*$lib[-.]" <<<"$LIBS" || true)
        case "$line" in
          *"=> $VENV/"*|*"=> $(cd "$VENV" && pwd -P)/"*) ;;
          *) echo "check_wheel: $lib does not resolve inside the environment:" >&2
             echo "$LIBS" >&2; exit 1 ;;
        esac
      done
      echo "   veil._core loads zstd, libb2 and OpenMP from the wheel (veil.libs), not the system"
    fi ;;
esac
[ "$(env -u PYTHONPATH "$VENV/bin/veil" --version)" = "veil $VERSION" ]
echo "   python -m veil --help / info and the veil script work"
echo "== check_wheel: OK ($(basename "$WHEEL"))"
