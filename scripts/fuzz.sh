#!/usr/bin/env bash
# Fuzzes every loader of hostile bytes (Veil's format and SEAL's, all object types) with
# libFuzzer under ASan and UBSan: tests/fuzz/fuzz_load.cpp. CI runs a bounded number of inputs
# (the README's test command calls this with RUNS=200000); on demand:
#   RUNS=10000000 bash scripts/fuzz.sh         # ten million inputs, one process per core
# Exit status 0 means no crash, leak, hang, sanitizer report or unexpected exception.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-200000}
JOBS=${JOBS:-$(nproc)}
BUILD=build/fuzz
if ! command -v clang++ >/dev/null; then echo "fuzz: clang++ not found (scripts/install_deps.sh)"; exit 1; fi
CC=clang CXX=clang++ cmake -S . -B "$BUILD" -G Ninja -DVEIL_FUZZ=ON -DVEIL_CUDA=OFF \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo > "$BUILD.cmake.log" 2>&1 || { cat "$BUILD.cmake.log"; exit 1; }
cmake --build "$BUILD" --target veil_fuzz_load -j "$JOBS" > "$BUILD.build.log" 2>&1 || { tail -30 "$BUILD.build.log"; exit 1; }
CORPUS="$BUILD/corpus"
rm -rf "$CORPUS" && mkdir -p "$CORPUS"
# -runs=0 only initializes: LLVMFuzzerInitialize writes the seed corpus.
VEIL_FUZZ_CORPUS="$CORPUS" "$BUILD/veil_fuzz_load" -runs=0 "$CORPUS" > /dev/null 2>&1
export OMP_NUM_THREADS=1 ASAN_OPTIONS=detect_leaks=1:allocator_may_return_null=0
PER_JOB=$(( (RUNS + JOBS - 1) / JOBS ))
echo "fuzz: $JOBS jobs x $PER_JOB inputs (seed corpus: $(ls "$CORPUS" | wc -l) objects)"
t0=$(date +%s)
pids=()
for j in $(seq 1 "$JOBS"); do
  "$BUILD/veil_fuzz_load" -runs="$PER_JOB" -seed="$j" -max_len=70000 -timeout=20 -rss_limit_mb=4096 \
    -print_final_stats=1 -artifact_prefix="$BUILD/crash-" "$CORPUS" > "$BUILD/job$j.log" 2>&1 &
  pids+=($!)
done
rc=0
for p in "${pids[@]}"; do wait "$p" || rc=1; done
total=0
for j in $(seq 1 "$JOBS"); do
  n=$(grep -oE "stat::number_of_executed_units: *[0-9]+" "$BUILD/job$j.log" | grep -oE "[0-9]+$" || echo 0)
  total=$(( total + n ))
done
echo "fuzz: $total inputs in $(( $(date +%s) - t0 )) s, result: $([ $rc = 0 ] && echo 'no findings' || echo FINDINGS)"
if [ $rc != 0 ]; then grep -h -A30 "ERROR\|==ERROR\|deadly signal\|uncaught" "$BUILD"/job*.log | head -60; fi
exit $rc
