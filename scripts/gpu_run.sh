#!/usr/bin/env bash
# One call on the GPU machine: build (CUDA, sm_90), run the C++ tests (GPU suites included), the
# Python tests, the demo on the GPU, and the benchmark. Logs go to $OUT (or ./out).
# Usage: bash scripts/gpu_run.sh [all|test|bench|demo] [extra bench args...]
set -uo pipefail
cd "$(dirname "$0")/.."
MODE=${1:-all}
shift || true
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
export CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES:-90}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-16}
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv \
  > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"
if [ -d .whl ]; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl && export PYTHONPATH=/tmp/site
fi
BUILD=build/gpu
t0=$(date +%s)
python3 -m pip install --no-build-isolation --no-deps -q -C build-dir="$BUILD" \
  -C cmake.define.VEIL_BUILD_TESTS=ON -C cmake.define.VEIL_CUDA=ON . > "$OUT/build.log" 2>&1
rc=$?
echo "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then grep -E "error|Error" "$OUT/build.log" | head -40; exit 1; fi
if [ "$MODE" = all ] || [ "$MODE" = test ]; then
  "$BUILD/veil_tests" --gtest_brief=1 > "$OUT/gtest.log" 2>&1
  echo "gtest rc=$?"; grep -E "FAILED|PASSED|SKIPPED \[|tests ran" "$OUT/gtest.log" | tail -25
  (cd /tmp && python3 -m pytest "$OLDPWD/tests/python" -q -x > "$OUT/pytest.log" 2>&1)
  echo "pytest rc=$?"; tail -5 "$OUT/pytest.log"
fi
if [ "$MODE" = all ] || [ "$MODE" = profile ] || [ "$MODE" = test ]; then
  { "$BUILD/veil_profile" cuda 16384 54 54 54 54 54 54 54 60
    "$BUILD/veil_profile" cuda 65536 55 55 55 55 55 55 55 55 55 55 55 55 55 55 55 56 56 56 56 56 56 56 56 56 56 56 56 56 56 56 56 56
  } > "$OUT/profile.log" 2>&1
  echo "profile rc=$?"; cat "$OUT/profile.log"
fi
if [ "$MODE" = all ] || [ "$MODE" = demo ] || [ "$MODE" = test ]; then
  (cd /tmp && veil demo --device cuda && veil demo --scheme ckks --device cuda) \
    > "$OUT/demo_cuda.log" 2>&1
  echo "demo rc=$?"; grep -E "agreement|accuracy|samples|device|evaluate" "$OUT/demo_cuda.log"
fi
if [ "$MODE" = all ] || [ "$MODE" = bench ]; then
  SCHEME=${SCHEME:-bfv}
  (cd /tmp && veil bench --scheme "$SCHEME" --device cuda --json "$OUT/bench_$SCHEME.json" \
    --markdown "$OUT/bench_$SCHEME.md" "$@") > "$OUT/bench_$SCHEME.log" 2>&1
  echo "bench rc=$?"; tail -40 "$OUT/bench_$SCHEME.log"
fi
if [ "$MODE" = ntt ]; then
  "$BUILD/veil_ntt_bench" > "$OUT/ntt_bench.log" 2>&1
  echo "ntt_bench rc=$?"; cat "$OUT/ntt_bench.log"
  for v in 0 1 2 3; do
    echo "variant $v: $(VEIL_NTT_VARIANT=$v "$BUILD/veil_tests" --gtest_brief=1 --gtest_filter='NttCuda*:RnsCuda*:BfvParity*' 2>&1 | grep -E 'PASSED|FAILED' | tr '\n' ' ')"
  done
fi
