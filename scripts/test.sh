#!/usr/bin/env bash
# Builds Veil and runs the whole test suite: GoogleTest (C++), pytest (Python), the documentation
# build (mkdocs --strict), the wheel in a fresh virtual environment (scripts/check_wheel.sh) and a
# bounded libFuzzer run over every loader of serialized bytes (scripts/fuzz.sh).
# GPU tests run when a CUDA GPU is visible and skip otherwise. Set VEIL_CUDA=OFF to build the CPU
# backend only; by default the CUDA backend is compiled whenever nvcc is found.
# Nothing here depends on the current directory or on what $TMPDIR (/tmp) holds: every step runs
# from the repository root or from a private directory made by mktemp (scripts/pytest.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
JOBS=${JOBS:-$(nproc)}
export CMAKE_BUILD_PARALLEL_LEVEL=$JOBS
BUILD=build/tests
# One CMake build serves both: the extension module and the GoogleTest binary.
python3 -m pip install --no-build-isolation -q \
  -C build-dir="$BUILD" -C cmake.define.VEIL_BUILD_TESTS=ON .
echo "== C++ tests (GoogleTest)"
(cd "$BUILD" && ctest --output-on-failure -j "$JOBS")
echo "== Python tests (pytest)"
bash scripts/pytest.sh tests/python -q
echo "== Documentation site (mkdocs build --strict)"
SITE=$(mktemp -d "${TMPDIR:-/tmp}/veil-site.XXXXXX")
NO_MKDOCS_2_WARNING=1 python3 -m mkdocs build --strict -q -d "$SITE/site"
rm -rf "$SITE"
echo "== Wheel: build, install into a fresh virtual environment, use (scripts/check_wheel.sh)"
BUILD="$BUILD" bash scripts/check_wheel.sh
echo "== Fuzzing the loaders (libFuzzer, ASan, UBSan; RUNS=${FUZZ_RUNS:-200000})"
RUNS=${FUZZ_RUNS:-200000} bash scripts/fuzz.sh
