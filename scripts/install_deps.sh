#!/usr/bin/env bash
# Installs what one of Veil's commands needs, and nothing else, on Debian/Ubuntu (apt) and into
# one Python ($PYTHON, default python3: a virtual environment's when one is active).
#
#   runtime  the build's system packages: a C++20 compiler, Boost (header-only), zstd, zlib and
#            libb2 (serialization), Ninja, the Python headers. Nothing goes into Python: the
#            `pip install .` that follows builds Veil and brings its dependencies.
#   demo     the same as runtime: `pip install ".[demo]"` brings scikit-learn and xgboost.
#   test     runtime's system packages, GoogleTest, clang with libFuzzer and OpenMP (the fuzz
#            harness); into Python: the build requirements (scikit-build-core,
#            nanobind; CMake and Ninja when the system's are missing or too old), Veil's
#            dependencies and the `test` and `docs` extras (scripts/test.sh builds without build
#            isolation, runs the tests and builds the documentation).
#   docs     into Python: the `docs` extra (mkdocs and its plugins).
#   all      every system package above; into Python: the build requirements, the dependencies
#            and every extra.
#
# The Python packages are read from pyproject.toml ([build-system] requires, [project]
# dependencies and optional-dependencies, [tool.scikit-build] cmake.version): one list, kept
# there. pip installs what is missing and upgrades nothing that already satisfies a requirement.
# The CUDA toolkit is never installed here: with nvcc on PATH and a GPU present the CUDA backend
# builds (CMakeLists.txt, VEIL_CUDA). Nor is ccache, which the build uses when it is installed
# (apt-get install ccache: rebuilds in a new build folder then take seconds).
#
# Usage: bash scripts/install_deps.sh [--dry-run] MODE [MODE ...]
#   --dry-run   print what the modes need ("apt: ..." and "pip: ..." lines), install nothing
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
PYTHON=${PYTHON:-python3}

usage() {
  sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
}

DRY=0
MODES=()
for a in "$@"; do
  case "$a" in
    --dry-run) DRY=1 ;;
    -h|--help) usage; exit 0 ;;
    runtime|demo|test|docs|all) MODES+=("$a") ;;
    *) echo "install_deps.sh: unknown mode '$a': expected runtime, demo, test, docs or all" \
            "(--help)" >&2; exit 2 ;;
  esac
done
if [ ${#MODES[@]} -eq 0 ]; then
  echo "install_deps.sh: name what to install: runtime, demo, test, docs or all, e.g." >&2
  echo "  bash scripts/install_deps.sh demo    # then: pip install -v \".[demo]\"" >&2
  echo "  bash scripts/install_deps.sh test    # then: bash scripts/test.sh" >&2
  exit 2
fi

# ---- what the modes need ------------------------------------------------------------------
APT_BUILD=(g++ libboost-dev libzstd-dev zlib1g-dev libb2-dev ninja-build)
APT_TEST=(libgtest-dev clang libclang-rt-dev libomp-dev)
apt=()
build=0 deps=0
extras=()
for m in "${MODES[@]}"; do
  case "$m" in
    runtime|demo) apt+=("${APT_BUILD[@]}") ;;
    test) apt+=("${APT_BUILD[@]}" "${APT_TEST[@]}"); build=1; deps=1; extras+=(test docs) ;;
    docs) extras+=(docs) ;;
    all) apt+=("${APT_BUILD[@]}" "${APT_TEST[@]}"); build=1; deps=1; extras+=(ALL) ;;
  esac
done

# The Python headers (the extension module): Debian's python3 needs python3-dev for them.
if [ ${#apt[@]} -gt 0 ]; then
  inc=$("$PYTHON" -c 'import sysconfig; print(sysconfig.get_paths()["include"])')
  if [ ! -f "$inc/Python.h" ]; then
    case "$inc" in
      /usr/include/*) apt+=(python3-dev) ;;
      *) echo "install_deps.sh: warning: $inc/Python.h is missing: install the headers of" \
              "$PYTHON" >&2 ;;
    esac
  fi
fi

# pip requirements from pyproject.toml, one a line.
# (Through a variable, not `< <(...)`: a parser failure must stop the script, not leave an
# empty list that installs nothing and reports success.)
reqs=$("$PYTHON" - "$ROOT/pyproject.toml" "$build" "$deps" "${extras[@]}" <<'EOF'
import re, shutil, subprocess, sys
try:
    import tomllib
except ImportError:  # Python < 3.11: the TOML parser pip vendors
    from pip._vendor import tomli as tomllib

path, build, deps, *wanted = sys.argv[1:]
with open(path, "rb") as f:
    py = tomllib.load(f)
project = py["project"]
optional = project.get("optional-dependencies", {})
name = project["name"]
if "ALL" in wanted:
    wanted = list(optional)
out: list[str] = []

def add(req: str) -> None:
    if req not in out:
        out.append(req)

def add_extra(extra: str, seen: set) -> None:
    if extra in seen:
        return
    seen.add(extra)
    if extra not in optional:
        sys.exit(f"install_deps.sh: pyproject.toml has no optional-dependencies.{extra}")
    for req in optional[extra]:
        # A self-reference (veil[serve]) stands for that extra's packages.
        m = re.match(rf"\s*{re.escape(name)}\s*\[([^\]]*)\]\s*$", req)
        if m:
            for e in m.group(1).split(","):
                add_extra(e.strip(), seen)
        else:
            add(req)

if build == "1":
    for req in py["build-system"]["requires"]:
        add(req)
    # scikit-build-core asks for CMake and Ninja only when the system's will not do; without
    # build isolation they must be here already.
    spec = py.get("tool", {}).get("scikit-build", {}).get("cmake", {}).get("version", ">=3.26")
    need = tuple(int(x) for x in re.findall(r"\d+", spec)[:2])
    have = None
    if shutil.which("cmake"):
        r = subprocess.run(["cmake", "--version"], capture_output=True, text=True)
        m = re.search(r"version (\d+)\.(\d+)", r.stdout)
        have = (int(m.group(1)), int(m.group(2))) if r.returncode == 0 and m else None
    if have is None or have < need:
        add(f"cmake{spec}")
    if not shutil.which("ninja"):
        add("ninja")
if deps == "1":
    for req in project.get("dependencies", []):
        add(req)
seen: set = set()
for extra in wanted:
    add_extra(extra, seen)
for req in out:
    print(req)
EOF
) || { echo "install_deps.sh: could not read the requirements from pyproject.toml" >&2; exit 1; }
mapfile -t pip_reqs <<<"$reqs"
if [ ${#pip_reqs[@]} -eq 1 ] && [ -z "${pip_reqs[0]}" ]; then pip_reqs=(); fi
# De-duplicate the apt list, keeping its order.
mapfile -t apt < <(printf '%s\n' "${apt[@]+"${apt[@]}"}" | awk 'NF && !seen[$0]++')

if [ $DRY -eq 1 ]; then
  echo "modes: ${MODES[*]}"
  echo "apt: ${apt[*]}"
  echo "pip: ${pip_reqs[*]}"
  exit 0
fi

# ---- install ------------------------------------------------------------------------------
if [ ${#apt[@]} -gt 0 ]; then
  if command -v apt-get >/dev/null && command -v dpkg >/dev/null; then
    need=()
    for pkg in "${apt[@]}"; do
      dpkg -s "$pkg" >/dev/null 2>&1 || need+=("$pkg")
    done
    if [ ${#need[@]} -gt 0 ]; then
      SUDO=""
      if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO=sudo; fi
      echo "install_deps.sh: apt-get install ${need[*]}"
      $SUDO apt-get update -qq
      DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "${need[@]}"
    else
      echo "install_deps.sh: system packages present (${apt[*]})"
    fi
  else
    echo "install_deps.sh: no apt-get: install the equivalents of ${apt[*]} yourself" >&2
  fi
fi
if [ ${#pip_reqs[@]} -gt 0 ]; then
  # A distribution's own Python (PEP 668: an EXTERNALLY-MANAGED marker, e.g. Debian 12) refuses
  # pip installs outside a virtual environment: say so, and what to do, before pip fails.
  if [ -z "${PIP_BREAK_SYSTEM_PACKAGES:-}" ] && "$PYTHON" - <<'EOF'
import os, sys, sysconfig
marker = os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")
sys.exit(0 if sys.prefix == sys.base_prefix and os.path.exists(marker) else 1)
EOF
  then
    echo "install_deps.sh: $PYTHON is the system's Python, which refuses pip installs" \
         "(PEP 668, externally managed): create and activate a virtual environment first" \
         "(python3 -m venv .venv && . .venv/bin/activate), then run this again" >&2
    exit 1
  fi
  echo "install_deps.sh: pip install into $("$PYTHON" -c 'import sys; print(sys.prefix)'):" \
       "${pip_reqs[*]}"
  "$PYTHON" -m pip install -q "${pip_reqs[@]}"
fi
echo "install_deps.sh: ready for: ${MODES[*]}"
