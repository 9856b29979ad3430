#!/usr/bin/env bash
# Builds Veil and runs the whole test suite: GoogleTest (C++), pytest (Python), the documentation
# build (mkdocs --strict), the CPU wheel as shipped (auditwheel-repaired) in a fresh virtual
# environment (scripts/check_wheel.sh) and a bounded libFuzzer run over every loader of serialized
# bytes (scripts/fuzz.sh). scripts/install_deps.sh test installs what it needs.
# GPU tests run when a CUDA GPU is visible and skip otherwise. The CUDA backend is compiled when
# nvcc is found and a GPU is present (VEIL_CUDA=AUTO); VEIL_CUDA=ON or OFF decides instead.
# Nothing here depends on the current directory or on what $TMPDIR (/tmp) holds: every step runs
# from the repository root or from a private directory made by mktemp (scripts/pytest.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
export CMAKE_BUILD_PARALLEL_LEVEL=$JOBS
BUILD=build/tests
# One CMake build serves both: the extension module and the GoogleTest binary. pip -v streams
# CMake's output: shown are Veil's configuration (the CUDA choice and its reason) and the compile
# progress ([n/N]); the whole log (build/tests.log) when the build fails.
echo "== Building (build dir $BUILD, $JOBS jobs)"
mkdir -p build
set +e
python3 -m pip install --no-build-isolation -v -C build-dir="$BUILD" \
  -C cmake.define.VEIL_BUILD_TESTS=ON . 2>&1 | tee build/tests.log \
  | grep --line-buffered -E '^ *(\[[0-9]+/[0-9]+\] |-- Veil|\*\*\* |Successfully installed)'
rc=${PIPESTATUS[0]}
set -e
if [ "$rc" -ne 0 ]; then tail -n 60 build/tests.log; exit "$rc"; fi
echo "== C++ tests (GoogleTest)"
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS")
echo "== Python tests (pytest)"
bash scripts/pytest.sh tests/python -q
echo "== Documentation site (mkdocs build --strict)"
SITE=$(mktemp -d "${TMPDIR:-/tmp}/veil-site.XXXXXX")
NO_MKDOCS_2_WARNING=1 python3 -m mkdocs build --strict -q -d "$SITE/site"
rm -rf "$SITE"
echo "== Wheel: build, install into a fresh virtual environment, use (scripts/check_wheel.sh)"
# The wheel reuses this build when it is CPU-only (re-packaged, not recompiled).
WHEEL_BUILD=build/wheel-cpu
if grep -q '^VEIL_HAVE_CUDA:INTERNAL=OFF$' "$BUILD/CMakeCache.txt"; then WHEEL_BUILD=$BUILD; fi
BUILD="$WHEEL_BUILD" bash scripts/check_wheel.sh
echo "== Fuzzing the loaders (libFuzzer, ASan, UBSan; RUNS=${FUZZ_RUNS:-200000})"
RUNS=${FUZZ_RUNS:-200000} bash scripts/fuzz.sh
