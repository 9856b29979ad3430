#!/usr/bin/env bash
# Installs what Veil needs to build and test on a fresh Debian/Ubuntu machine:
# a C++20 compiler, Boost (header-only Multiprecision), zstd, zlib and libb2 (serialization:
# compression, SEAL's BLAKE2b parms_id and BLAKE2Xb seeds), GoogleTest, Ninja, clang with
# libFuzzer and OpenMP (the fuzz harness), and the Python build/test packages, seal-python (the
# SEAL oracle of the interoperability tests), FastAPI, uvicorn and httpx (`veil serve`) and Ray
# with Ray Serve (veil.distributed, `veil serve --ray`) among them. The CUDA toolkit is
# optional: when nvcc is on PATH the CUDA backend builds.
set -euo pipefail
SUDO=""
if [ "$(id -u)" != "0" ] && command -v sudo >/dev/null; then SUDO=sudo; fi
if command -v apt-get >/dev/null; then
  need=""
  for pkg in g++ libboost-dev libzstd-dev zlib1g-dev libb2-dev libgtest-dev ninja-build \
             clang libclang-rt-dev libomp-dev; do
    dpkg -s "$pkg" >/dev/null 2>&1 || need="$need $pkg"
  done
  if [ -n "$need" ]; then
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq $need
  fi
fi
python3 -m pip install -q --upgrade "cmake>=3.28" "scikit-build-core>=0.11" "nanobind>=2.0" numpy \
  scikit-learn pytest hypothesis rich zstandard "seal-python>=4.4" fastapi uvicorn httpx xgboost-cpu \
  py-cpuinfo matplotlib dulwich mypy mkdocs mkdocs-material "mkdocstrings[python]" \
  "ray[serve]>=2.56"
