#!/usr/bin/env bash
# One call on the GPU machine: build (CUDA, sm_90), then the steps asked for, comma-separated:
#   test    C++ tests (GPU suites included) and Python tests (GPU and SEAL-interop ones included)
#   gtest / pytest   one of the two (GTEST_FILTER narrows the C++ tests)
#   depth   the Table 10 reproduction (bench/depth_table10.py) on the GPU
#   demo    both demos on the GPU
#   profile stage profile of multiply+relinearize (BFV) and of the CKKS operations on Cheddar's
#           and Phantom's N = 2^16 shapes (veil_profile_ckks)
#   bench   veil bench (SCHEME=bfv|bgv|ckks) with extra arguments after the modes
#   ntt     NTT variant benchmark and per-variant parity tests
#   ab      veil bench (SCHEME, extra arguments after the modes) twice on the same machine: the
#           fused NTT passes on, then off (VEIL_FUSED_NTT=1/0; bench_ab_1.*, bench_ab_0.*);
#           AB_VAR names another variable and AB_VALUES its values (e.g.
#           AB_VAR=VEIL_FUSED_MODDOWN_NARROW)
#   ncu     Nsight Compute, one line per kernel launch (time, DRAM bytes and bandwidth, ALU/FMA
#           pipe utilization, registers) of one operation per NCU_OPS entry (mul_relin, rotate,
#           rescale; default mul_relin) of bench row $NCU_ROW (SCHEME; default the bootparam_40
#           top row), fused passes NCU_FUSED (default "1 0") (ncu_<op>_<fused>.csv/.txt);
#           NCU_VAR names another variable for NCU_FUSED's values; NCU_STALLS=1 adds the warps'
#           stall reasons
#   boot    CKKS bootstrapping: tests/python/test_bootstrap.py, then `veil bench --scheme ckks
#           --bootstrap` (N = 2^16, full and 4096 slots, 64- and 32-bit words; boot.json/.md)
#   train   `veil demo --scheme ckks --train` on the GPU (train.log)
#   bootprof  where a bootstrap's time goes (bench/profile_boot_gpu.py): CUDA-event wall time,
#           phases and precision for 32- and 64-bit words and 4096 slots, then one traced
#           bootstrap under Nsight Compute (kernel time against wall time: the idle GPU);
#           BOOT_IMPL=cpp times the C++ bootstrapper (bootprof_*.json, ncu_boot.txt)
#   cheddar the peer in the same call: peers/cheddar_run.sh (peers/ carried; PARAMS, BUDGET_S);
#           its build starts in the background at the start of the call (6 jobs) and its
#           benchmark runs after Veil's, once the GPU is free
#   phantom the small operations beside Phantom (issue 25, item 3): Phantom 1f4a198 from
#           peers/phantom (carried; built in the background from the start of the call, as
#           ../shared/peers/README.md says), `bench/small_ops.py --no-kernels` on its rows, then
#           its bfv/bgv/ckks_bench once the GPU is free, and bench/phantom_compare.py's table
#           (small_ops.json, phantom_*.log, phantom_compare.md); PHANTOM_SCHEMES (default
#           "bfv bgv ckks") narrows both; PHANTOM_SMALL_OPS=0 runs only Phantom's benchmarks
#   threads the CPU's scaling on this host's cores (issue 25): `veil_profile_ckks cpu` at
#           THREADS_SHAPES (shape[:limbs] words, default "phantom6:30 seal14") with
#           OMP_NUM_THREADS=1 and all cores (threads_<shape>_<t>.log)
#   bootab  A/B of the bootstrap's schedule in one process per shape (bench/boot_bench.cpp):
#           BOOT_AB configurations (default "g0b1 g1b1 g1b2 g1b4": graph branches off/on, BSGS
#           branches) on the same keys and input, over BOOTAB_SLOTS (default "0 4096:pack");
#           every configuration's output words must equal the first's (bootab.log);
#           BOOT_PHASES=1 adds each step's graph-replayed time; BOOTAB_SPARSE, when set, is the
#           list for the sparse shapes. Tokens (boot_bench.cpp's header): g graph branches, b BSGS
#           branches, e EvalMod's even form, d fused ModDown drops, k batched inner product, m
#           ModUp kernel, c the blocked conversions' kernel, f their branch-free rows, n the fused
#           ModDown's narrow producer, a compact Galois keys (e.g.
#           BOOT_AB='c0 c1 c2')
#   abtree  veil bench of this tree and of another commit's source tree AB_TREE (an ignored
#           folder carried with the call, e.g. `git archive <sha> | tar -x -C .before`; AB_COMMIT
#           names its commit), built into a private target and run alternately, AB_ROUNDS rounds
#           (default "1 2"; SCHEME and the extra arguments as for bench; abtree_<a|b>_<round>.*),
#           then bench/ab_compare.py's table of the medians (abtree.md)
# VEIL_SITE=dir installs the build into dir instead of site-packages (two commits side by side).
#   ray     scale-out on Ray (bench/ray_scale.py): batch bootstraps, online serving against
#           independent servers and a replica killed under load, over RAY_GPUS (default 1,2)
#   sh      run $SH_CMD (a diagnostic command) in this script's environment
#   cnn     `veil demo --model cnn --peer tenseal` on the GPU (and this host's CPU; TenSEAL in the
#           same run), the ReLU network on CNN_RELU_LIMIT images when set, and
#           bench/matmul_bench.py (1 x MATMUL_N by MATMUL_N x MATMUL_N at N = 2^16, default 4096)
#   nttq    the NTT tests at the default variants and the NTT benchmark with $NTT_ARGS
#           (e.g. NTT_ARGS=u32)
#   xgboost `veil demo --model xgboost --peer seal --device cuda`: encrypted XGBoost on SEAL (1
#           thread), Veil CPU (1 and all threads) and the GPU, Table 6 of Özcan et al. (IEEE
#           Access 2023; xgboost.log)
#   load    `veil serve --device cuda` on 127.0.0.1 (free port), then `veil demo --server` (the
#           single 143-sample request latency) and `veil loadtest` (8 clients x 25 requests);
#           logs serve.log, load.log, load.json; a wrong or failed answer fails the call
#   memcheck  the GPU-side C++ tests under compute-sanitizer memcheck (out-of-bounds and misaligned
#           accesses, hardware exceptions, CUDA API errors, device leaks); any report fails it.
#           MEMCHECK_FILTER overrides the gtest filter, MEMCHECK_TIMEOUT (s, default 360) bounds it,
#           MEMCHECK_LEAKS=no turns the device leak check off, MEMCHECK_ARGS adds sanitizer
#           options; INITCHECK=1 adds an initcheck pass (NTT, RNS, samplers).
# Logs go to $OUT (or ./out) and are packed into $OUT/logs.tgz.
# The copy of the tree here has no .git: set VEIL_GIT_COMMIT=<sha> (or pass --commit <sha> after
# the modes) so that veil bench records the commit measured.
#
# The machine has no network: libraries it lacks travel as Debian packages in .deps/ (libb2,
# and zlib/zstd headers when missing) and Python packages as wheels in .whl/ (seal-python,
# zstandard, pytest, hypothesis, rich, ...); name both in the call's `carry`.
# Usage: bash scripts/gpu_run.sh [test,depth,...] [extra bench args...]
set -uo pipefail
cd "$(dirname "$0")/.."
MODES=${1:-test}
shift || true
OUT=${OUT:-$PWD/out}
mkdir -p "$OUT"
# A private scratch directory: commands run from it (never from /tmp, whose stray modules a
# `python -m` would import) and carried wheels install into it.
PRIV=$(mktemp -d "${TMPDIR:-/tmp}/veil-gpu.XXXXXX")
export CMAKE_CUDA_ARCHITECTURES=${CMAKE_CUDA_ARCHITECTURES:-90}
export CMAKE_BUILD_PARALLEL_LEVEL=${CMAKE_BUILD_PARALLEL_LEVEL:-16}
export PYTHONUNBUFFERED=1 PYTHONFAULTHANDLER=1
has() { [[ ",$MODES," == *",$1,"* ]]; }
finish() { tar -C "$OUT" -czf "$OUT/logs.tgz" --exclude logs.tgz . 2>/dev/null; }
trap finish EXIT

nvidia-smi --query-gpu=name,memory.total,driver_version,clocks.sm,clocks.mem --format=csv \
  > "$OUT/gpu.txt" 2>&1
cat "$OUT/gpu.txt"

# ---- libraries: extract the carried Debian packages whose headers the system lacks ----------
ROOT=$PWD/.deps/root
if [ -d .deps ]; then
  mkdir -p "$ROOT"
  need() { [ ! -e "/usr/include/$1" ] && [ ! -e "$ROOT/usr/include/$1" ]; }
  need blake2.h && for d in .deps/libb2-1_*.deb .deps/libb2-dev_*.deb; do dpkg -x "$d" "$ROOT"; done
  need zstd.h && dpkg -x .deps/libzstd-dev_*.deb "$ROOT"
  need zlib.h && dpkg -x .deps/zlib1g-dev_*.deb "$ROOT"
  # A -dev package's libX.so points at the runtime package's file: use the system's copy.
  for so in "$ROOT"/usr/lib/x86_64-linux-gnu/*.so; do
    [ -e "$so" ] && continue
    base=$(basename "$so")
    sys=$(ls /usr/lib/x86_64-linux-gnu/"$base".* 2>/dev/null | head -1)
    [ -n "$sys" ] && ln -sf "$sys" "$so"
  done
  export CMAKE_PREFIX_PATH="$ROOT/usr${CMAKE_PREFIX_PATH:+:$CMAKE_PREFIX_PATH}"
  export LD_LIBRARY_PATH="$ROOT/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
fi

# ---- Python packages: install each carried wheel whose module is missing --------------------
if [ -d .whl ]; then
  mkdir -p "$PRIV/site"
  for w in .whl/*.whl; do
    name=$(basename "$w" | cut -d- -f1)
    mod=$(echo "$name" | tr 'A-Z' 'a-z')
    case "$mod" in
      seal_python) mod=seal ;; markdown_it_py) mod=markdown_it ;; scikit_learn) mod=sklearn ;;
      xgboost_cpu) mod=xgboost ;; nvidia_ml_py) mod=pynvml ;;
      opentelemetry_api) mod=opentelemetry ;;
    esac
    # `veil serve`'s stack travels whole unless fastapi is there: an older preinstalled pydantic,
    # anyio or typing_extensions would not fit the carried fastapi.
    case "$mod" in
      fastapi|starlette|pydantic|pydantic_core|anyio|typing_extensions|typing_inspection|\
      annotated_types|annotated_doc|opentelemetry)
        python3 -c "import fastapi" 2>/dev/null || mod=_veil_force_install ;;
    esac
    python3 -c "import $mod" 2>/dev/null && continue
    python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target "$PRIV/site" "$w" \
      > /dev/null 2>&1 && echo "installed $name"
  done
  export PYTHONPATH="$PRIV/site"${PYTHONPATH:+:$PYTHONPATH}
fi
# The notebooks' kernel stack (nbclient, nbformat, ipykernel and their dependencies) travels as
# wheels in .whl-nb/ (pip download --python-version 3.12 ... nbclient nbformat ipykernel).
if [ -d .whl-nb ] && ! python3 -c "import nbclient, ipykernel" 2>/dev/null; then
  mkdir -p "$PRIV/nbsite"
  python3 -m pip install -q --no-index --find-links .whl-nb --no-compile --no-cache-dir \
    --target "$PRIV/nbsite" nbclient nbformat ipykernel > /dev/null 2>&1 \
    && export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PRIV/nbsite" && echo "installed nbclient"
fi

# Ray (issue 28): the cp312 Ray wheel and its dependencies, unpacked without ray/jars, rllib,
# data, train and tune, travel as one xz tarball (.ray312/ray312.tar.xz, made by
# scripts/pack_ray_wheels.sh).
if [ -f .ray312/ray312.tar.xz ] && ! python3 -c "import ray" 2>/dev/null; then
  mkdir -p "$PRIV/raysite" && tar -xJf .ray312/ray312.tar.xz -C "$PRIV/raysite" \
    && export PYTHONPATH="${PYTHONPATH:+$PYTHONPATH:}$PRIV/raysite" && echo "installed ray"
fi

if has cheddar; then  # the peer's build overlaps Veil's (its benchmark waits for the GPU)
  (OUT="$OUT/cheddar_build" PARAMS=" " UPSTREAM_TEST=0 BUDGET_S=500 JOBS=6 \
    bash peers/cheddar_run.sh > "$OUT/cheddar_prebuild.log" 2>&1) &
  CHEDDAR_BUILD_PID=$!
fi

if has phantom; then  # the peer's build overlaps Veil's (its benchmarks wait for the GPU)
  (cmake -S peers/phantom -B "$PRIV/phbuild" -DCMAKE_BUILD_TYPE=Release \
     -DCMAKE_CUDA_ARCHITECTURES=90 -DPHANTOM_ENABLE_BENCH=ON -DPHANTOM_ENABLE_EXAMPLE=OFF \
     && cmake --build "$PRIV/phbuild" -j 8 --target bfv_bench bgv_bench ckks_bench) \
    > "$OUT/phantom_build.log" 2>&1 &
  PHANTOM_BUILD_PID=$!
fi

BUILD=build/gpu
t0=$(date +%s)
# VEIL_SITE=dir installs into dir (first on PYTHONPATH) instead of the system's site-packages, so
# two builds (an A/B of two commits) can live side by side in one call.
python3 -m pip install --no-build-isolation --no-deps -q -C build-dir="$BUILD" \
  ${VEIL_SITE:+--target "$VEIL_SITE" --upgrade} \
  -C cmake.define.VEIL_BUILD_TESTS=ON -C cmake.define.VEIL_CUDA=ON . > "$OUT/build.log" 2>&1
rc=$?
if [ -n "${VEIL_SITE:-}" ]; then
  export PYTHONPATH="$VEIL_SITE${PYTHONPATH:+:$PYTHONPATH}"
  export PATH="$VEIL_SITE/bin:$PATH"
fi
echo "build rc=$rc in $(( $(date +%s) - t0 )) s"
if [ $rc -ne 0 ]; then grep -E "error|Error|not found" "$OUT/build.log" | head -40; exit 1; fi

if has test || has gtest; then
  t0=$(date +%s)
  "$BUILD/veil_tests" --gtest_brief=1 --gtest_filter="${GTEST_FILTER:-*}" > "$OUT/gtest.log" 2>&1
  echo "gtest rc=$? in $(( $(date +%s) - t0 )) s"
  grep -E "FAILED|PASSED|SKIPPED \[|tests ran" "$OUT/gtest.log" | tail -25
fi
if has test || has pytest; then
  t0=$(date +%s)
  bash scripts/pytest.sh tests/python -q -rs > "$OUT/pytest.log" 2>&1
  echo "pytest rc=$? in $(( $(date +%s) - t0 )) s"
  grep -E "passed|failed|FAILED|SKIPPED" "$OUT/pytest.log" | tail -15
fi
# Timings below: the peer's background build must not load the host while they run.
[ -n "${CHEDDAR_BUILD_PID:-}" ] && wait "$CHEDDAR_BUILD_PID" 2> /dev/null
if has depth; then
  t0=$(date +%s)
  (cd "$PRIV" && python3 "$OLDPWD/bench/depth_table10.py" --device cuda --runs "${RUNS:-16}" \
    --json "$OUT/depth.json" --markdown "$OUT/depth.md") > "$OUT/depth.log" 2>&1
  echo "depth rc=$? in $(( $(date +%s) - t0 )) s"
  cat "$OUT/depth.md" 2>/dev/null || tail -20 "$OUT/depth.log"
fi
if has profile; then
  { "$BUILD/veil_profile" cuda 16384 54 54 54 54 54 54 54 60
    "$BUILD/veil_profile" cuda 65536 55 55 55 55 55 55 55 55 55 55 55 55 55 55 55 56 56 56 56 56 56 56 56 56 56 56 56 56 56 56 56 56
    for s in "bootparam_40" "bootparam_40 23" "bootparam_40_64bit" "bootparam_40_64bit 14" phantom6; do
      # shellcheck disable=SC2086
      "$BUILD/veil_profile_ckks" cuda $s
    done
  } > "$OUT/profile.log" 2>&1
  echo "profile rc=$?"; cat "$OUT/profile.log"
fi
if has demo; then
  (cd "$PRIV" && veil demo --device cuda && veil demo --scheme ckks --device cuda) \
    > "$OUT/demo_cuda.log" 2>&1
  echo "demo rc=$?"; grep -E "agreement|accuracy|samples|device|evaluate" "$OUT/demo_cuda.log"
fi
if has bench; then
  SCHEME=${SCHEME:-bfv}
  (cd "$PRIV" && veil bench --scheme "$SCHEME" --device cuda --json "$OUT/bench_$SCHEME.json" \
    --markdown "$OUT/bench_$SCHEME.md" "$@") > "$OUT/bench_$SCHEME.log" 2>&1
  echo "bench rc=$?"; tail -40 "$OUT/bench_$SCHEME.log"
fi
if has abtree; then  # this tree (a) against AB_TREE (b, another commit), alternately
  SCHEME=${SCHEME:-ckks}
  t0=$(date +%s)
  (cd "${AB_TREE:?AB_TREE names the other source tree}" && python3 -m pip install \
    --no-build-isolation --no-deps -q -C build-dir=build/gpu --target "$PRIV/site_b" \
    -C cmake.define.VEIL_CUDA=ON .) > "$OUT/build_b.log" 2>&1
  echo "build of $AB_TREE rc=$? in $(( $(date +%s) - t0 )) s"
  for round in ${AB_ROUNDS:-1 2}; do
    for side in a b; do
      if [ $side = a ]; then pp=${PYTHONPATH:-}; cm=${VEIL_GIT_COMMIT:-unknown}
      else pp="$PRIV/site_b${PYTHONPATH:+:$PYTHONPATH}"; cm=${AB_COMMIT:-unknown}; fi
      (cd "$PRIV" && PYTHONPATH="$pp" VEIL_GIT_COMMIT="$cm" python3 -m veil bench \
        --scheme "$SCHEME" --device cuda --json "$OUT/abtree_${side}_$round.json" \
        --markdown "$OUT/abtree_${side}_$round.md" "$@") > "$OUT/abtree_${side}_$round.log" 2>&1
      echo "bench ($side = $cm, round $round) rc=$?"
    done
  done
  python3 bench/ab_compare.py "$OUT"/abtree_a_*.json --b "$OUT"/abtree_b_*.json \
    --markdown "$OUT/abtree.md"
fi
if has ab; then
  SCHEME=${SCHEME:-ckks}
  for f in ${AB_VALUES:-1 0}; do
    (cd "$PRIV" && env "${AB_VAR:-VEIL_FUSED_NTT}=$f" veil bench --scheme "$SCHEME" --device cuda \
      --json "$OUT/bench_ab_$f.json" --markdown "$OUT/bench_ab_$f.md" "$@") > "$OUT/bench_ab_$f.log" 2>&1
    echo "bench (${AB_VAR:-VEIL_FUSED_NTT}=$f) rc=$?"; grep -E "^\| (params|shape|---)|cuda" "$OUT/bench_ab_$f.md" | tail -12
  done
fi
if has ncu; then
  # One launch per line: time, DRAM bytes, the ALU and FMA pipes' utilization (integer adds and
  # logic run on the ALU pipe, integer multiplies on the FMA pipe), registers.
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  METRICS=gpu__time_duration.sum,dram__bytes.sum,launch__registers_per_thread
  METRICS+=,sm__inst_executed_pipe_alu.avg.pct_of_peak_sustained_active
  METRICS+=,sm__inst_executed_pipe_fma.avg.pct_of_peak_sustained_active
  METRICS+=,sm__warps_active.avg.pct_of_peak_sustained_active
  # NCU_STALLS=1: where the warps wait, in cycles per issued instruction (barrier, long and short
  # scoreboard, memory-input throttle, fixed-latency waits, pipe throttle).
  if [ "${NCU_STALLS:-0}" = 1 ]; then
    for r in barrier long_scoreboard short_scoreboard mio_throttle wait math_pipe_throttle \
      not_selected lg_throttle; do
      METRICS+=,smsp__average_warps_issue_stalled_${r}_per_issue_active.ratio
    done
    METRICS+=,smsp__average_warps_active_per_issue_active.ratio,smsp__issue_active.avg.per_cycle_active
  fi
  for op in ${NCU_OPS:-mul_relin}; do
    for f in ${NCU_FUSED:-1 0}; do
      (cd "$PRIV" && env "${NCU_VAR:-VEIL_FUSED_NTT}=$f" timeout 300 "$NCU" --profile-from-start off --csv \
        --metrics "$METRICS" python3 "$OLDPWD/bench/trace_ops.py" "${SCHEME:-ckks}" \
        "${NCU_ROW:-bootparam_40 N=65536 47}" --iters 1 --op "$op") > "$OUT/ncu_${op}_$f.csv" 2>&1
      echo "ncu ($op, ${NCU_VAR:-VEIL_FUSED_NTT}=$f) rc=$?"
      python3 bench/ncu_csv_sum.py "$OUT/ncu_${op}_$f.csv" --launches | tee "$OUT/ncu_${op}_$f.txt"
    done
  done
fi
if has nttq; then  # quick: the NTT tests at the default variants, then the bench ($NTT_ARGS)
  "$BUILD/veil_tests" --gtest_brief=1 --gtest_filter='Ntt*:*NttCuda*' > "$OUT/ntt_tests.log" 2>&1
  echo "ntt tests rc=$?"; grep -E 'PASSED|FAILED' "$OUT/ntt_tests.log" | head -20
  # shellcheck disable=SC2086
  "$BUILD/veil_ntt_bench" ${NTT_ARGS:-} > "$OUT/ntt_bench.log" 2>&1
  echo "ntt_bench rc=$?"; cat "$OUT/ntt_bench.log"
fi
if has ntt; then
  "$BUILD/veil_ntt_bench" > "$OUT/ntt_bench.log" 2>&1
  echo "ntt_bench rc=$?"; cat "$OUT/ntt_bench.log"
  for v in 0 1 2 3; do
    echo "variant $v: $(VEIL_NTT_VARIANT=$v "$BUILD/veil_tests" --gtest_brief=1 --gtest_filter='*NttCuda*:*RnsCuda*:*BfvParity*' 2>&1 | grep -E 'PASSED|FAILED' | tr '\n' ' ')"
  done
fi
if has load; then
  # LOAD_MODELS=logreg,logreg-train also serves the training model and runs its client
  # (`veil demo --server URL --scheme ckks --train`, keys made on the GPU): bootstrapping on the
  # server with the client's uploaded keys.
  PORT=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  URL=http://127.0.0.1:$PORT
  (cd "$PRIV" && exec veil serve --device cuda --port "$PORT" \
    ${LOAD_MODELS:+--models "$LOAD_MODELS"}) > "$OUT/serve.log" 2>&1 &
  SRV=$!
  for _ in $(seq 300); do
    python3 -c 'import httpx, sys; httpx.get(sys.argv[1] + "/health").raise_for_status()' "$URL" \
      > /dev/null 2>&1 && break
    kill -0 $SRV 2> /dev/null || break
    sleep 1
  done
  (cd "$PRIV" && COLUMNS=120 veil demo --server "$URL" --device cpu && COLUMNS=120 veil loadtest \
    --server "$URL" --clients "${CLIENTS:-8}" --requests "${REQUESTS:-25}" --json "$OUT/load.json") \
    > "$OUT/load.log" 2>&1
  load_rc=$?
  if [[ ",${LOAD_MODELS:-}," == *",logreg-train,"* ]]; then
    (cd "$PRIV" && COLUMNS=120 veil demo --server "$URL" --scheme ckks --train --device cuda \
      --seed 1) > "$OUT/train_served.log" 2>&1
    rc=$?; [ $rc = 0 ] || load_rc=$rc
    echo "served training rc=$rc"; cat "$OUT/train_served.log"
  fi
  kill $SRV; wait $SRV 2> /dev/null
  echo "load rc=$load_rc"; cat "$OUT/load.log"; tail -8 "$OUT/serve.log"
fi
if has ray; then
  # Scale-out on Ray over this machine's GPUs (bench/ray_scale.py): RAY_MODES (default
  # "batch online kill"), RAY_GPUS (default 1,2), RAY_ARGS (extra arguments).
  python3 -c "import ray, ray.serve; print('ray', ray.__version__)" || echo "ray: unavailable"
  for m in ${RAY_MODES:-batch online kill}; do
    gp=${RAY_GPUS:-1,2}; [ "$m" = kill ] && gp=${gp##*,}
    (cd "$PRIV" && timeout "${RAY_TIMEOUT:-300}" python3 "$OLDPWD/bench/ray_scale.py" "$m" \
      --gpus "$gp" --out "$OUT/ray" ${RAY_ARGS:-}) > "$OUT/ray_$m.log" 2>&1
    echo "ray $m rc=$?"; tail -15 "$OUT/ray_$m.log"
  done
fi
if has boot; then  # CKKS bootstrapping: its tests (GPU parity included), then its benchmark
  bash scripts/pytest.sh tests/python/test_bootstrap.py -q -rs \
    > "$OUT/boot_test.log" 2>&1
  echo "boot tests rc=$?"; tail -5 "$OUT/boot_test.log"
  (cd "$PRIV" && veil bench --scheme ckks --bootstrap --device cuda --json "$OUT/boot.json" \
    --markdown "$OUT/boot.md" "$@") > "$OUT/boot.log" 2>&1
  echo "boot bench rc=$?"; tail -30 "$OUT/boot.log"
fi
if has bootprof; then
  # tag:impl:word bits:extra args:environment
  for spec in ${BOOTPROF_SPECS:-py32:py:32:: cpp32:cpp:32:: cpp32nograph:cpp:32::VEIL_GRAPHS=0 \
              cpp64:cpp:64:: cpp32s4096:cpp:32:--slots=4096:}; do
    [ "$spec" = skip ] && continue
    IFS=: read -r tag impl wb extra envs <<< "$spec"
    # shellcheck disable=SC2086
    (cd "$PRIV" && env $envs python3 "$OLDPWD/bench/profile_boot_gpu.py" --word-bits "$wb" \
      --impl "$impl" --runs 10 ${extra/=/ } --json "$OUT/bootprof_$tag.json") \
      > "$OUT/bootprof_$tag.log" 2>&1
    echo "bootprof $tag rc=$?"; grep -E '"(wall_ms_median|min_bits|mean_bits|levels_left|graph)"' \
      "$OUT/bootprof_$tag.log" | tr -s ' ' | tr '\n' ' '; echo
  done
  # The same bootstraps timed from C++ alone (bench/boot_bench.cpp): Python's cost beside it.
  for spec in ${BOOTPROF_CPP_SLOTS:-0 4096 4096:pack}; do  # slots[:pack] (pack_sparse); skip
    [ "$spec" = skip ] && continue
    IFS=: read -r slots pack <<< "$spec"
    # shellcheck disable=SC2086
    "$BUILD/veil_boot_bench" cuda 32 "$slots" 10 16 $pack | tee -a "$OUT/boot_bench_cpp.log"
  done
  NCU=$(command -v ncu || ls /usr/local/cuda*/bin/ncu 2>/dev/null | head -1)
  for impl in ${BOOTPROF_NCU:-py cpp}; do
    [ "$impl" = skip ] && continue
    WALL=$(python3 -c "import json; print(json.load(open('$OUT/bootprof_${impl}32.json'))['wall_ms_median'])" 2>/dev/null)
    (cd "$PRIV" && timeout 300 "$NCU" --profile-from-start off --csv --metrics \
      gpu__time_duration.sum python3 "$OLDPWD/bench/profile_boot_gpu.py" --word-bits 32 \
      --trace --impl "$impl") > "$OUT/ncu_boot_$impl.csv" 2>&1
    echo "ncu boot $impl rc=$?"
    python3 bench/ncu_csv_sum.py "$OUT/ncu_boot_$impl.csv" ${WALL:+--wall-ms $WALL} --top 40 \
      | tee "$OUT/ncu_boot_${impl}_summary.txt" | head -45
  done
fi
if has bootab; then
  for spec in ${BOOTAB_SLOTS:-0 4096:pack}; do  # slots[:pack]
    IFS=: read -r slots pack <<< "$spec"
    # shellcheck disable=SC2086
    cfgs=${BOOT_AB:-g0b1 g1b1 g1b2 g1b4}
    [ "$slots" != 0 ] && cfgs=${BOOTAB_SPARSE:-$cfgs}
    BOOT_AB="$cfgs" timeout "${BOOTAB_TIMEOUT:-240}" \
      "$BUILD/veil_boot_bench" cuda 32 "$slots" "${BOOTAB_RUNS:-15}" 16 $pack 2>&1 \
      | tee -a "$OUT/bootab.log"
    echo "bootab $spec rc=${PIPESTATUS[0]}"
  done
fi
if has phantom; then  # Veil's small operations, then Phantom's, same machine, same call
  schemes=${PHANTOM_SCHEMES:-bfv bgv ckks}
  if [ "${PHANTOM_SMALL_OPS:-1}" != 0 ]; then
    # shellcheck disable=SC2046
    (cd "$PRIV" && python3 "$OLDPWD/bench/small_ops.py" --no-kernels --json "$OUT/small_ops.json" \
       $(printf -- '--scheme %s ' $schemes)) > "$OUT/small_ops.log" 2>&1
    echo "small_ops rc=$?"
  fi
  wait "${PHANTOM_BUILD_PID:-}" 2> /dev/null
  echo "phantom build rc=$? ($(tail -1 "$OUT/phantom_build.log"))"
  for b in $schemes; do
    bin=$(find "$PRIV/phbuild" -name "${b}_bench" -type f -perm -u+x | head -1)
    (cd "$PRIV/phbuild" && timeout 240 "$bin") > "$OUT/phantom_$b.log" 2>&1
    echo "phantom $b rc=$?"
  done
  # shellcheck disable=SC2046
  [ "${PHANTOM_SMALL_OPS:-1}" != 0 ] && python3 bench/phantom_compare.py \
    --veil "$OUT/small_ops.json" $(printf -- "$OUT/phantom_%s.log " $schemes) \
    --markdown "$OUT/phantom_compare.md"
fi
if has threads; then  # the CPU backend's scaling on this host's cores
  cores=$(nproc)
  for shape in ${THREADS_SHAPES:-phantom6:30 seal14}; do
    for t in 1 "$cores"; do
      # shellcheck disable=SC2086
      OMP_NUM_THREADS=$t timeout 300 "$BUILD/veil_profile_ckks" cpu ${shape/:/ } \
        > "$OUT/threads_${shape/:/_}_$t.log" 2>&1
      echo "threads $shape x $t rc=$?"
      grep -E "relinearize|rotate_vector|NTT forward|mod_up|inner product" \
        "$OUT/threads_${shape/:/_}_$t.log"
    done
  done
fi
if has cheddar; then  # the peer, same machine, same call (peers/ must be carried)
  wait "${CHEDDAR_BUILD_PID:-}" 2> /dev/null
  OUT="$OUT" BUDGET_S="${BUDGET_S:-300}" PARAMS="${PARAMS:-bootparam_40}" UPSTREAM_TEST=0 \
    bash peers/cheddar_run.sh > "$OUT/cheddar.log" 2>&1
  echo "cheddar rc=$?"; tail -25 "$OUT/cheddar.log"
fi
if has train; then  # encrypted training with bootstrapping (sklearn travels as wheels in .whl)
  (cd "$PRIV" && COLUMNS=120 veil demo --scheme ckks --train --device cuda --seed 1) \
    > "$OUT/train.log" 2>&1
  echo "train rc=$?"; cat "$OUT/train.log"
fi
if has cnn; then  # issue 27: the encrypted CNN on the GPU and this host's CPU, TenSEAL (CPU) in the
  # same run (tenseal, scikit-learn and scipy travel as wheels in .whl), then the encrypted
  # 1 x 4096 by 4096 x 4096 product at N = 2^16 (bench/matmul_bench.py)
  (cd "$PRIV" && veil demo --model cnn --device cuda --peer tenseal --seed 1) > "$OUT/cnn.log" 2>&1
  echo "cnn rc=$?"; tail -25 "$OUT/cnn.log"
  if [ -n "${CNN_RELU_LIMIT:-}" ]; then  # the ReLU network on the first CNN_RELU_LIMIT images
    (cd "$PRIV" && veil demo --model cnn --activation relu --device cuda --seed 1 \
      --limit "$CNN_RELU_LIMIT") > "$OUT/cnn_relu.log" 2>&1
    echo "cnn relu rc=$?"; tail -15 "$OUT/cnn_relu.log"
  fi
  (cd "$PRIV" && timeout 300 python3 "$OLDPWD/bench/matmul_bench.py" --device cuda \
    --n "${MATMUL_N:-4096}") > "$OUT/matmul.json" 2>&1
  echo "matmul rc=$?"; cat "$OUT/matmul.json"
fi
if has sh; then  # a diagnostic command in this script's environment: SH_CMD
  (cd "$PRIV" && bash -c "$SH_CMD") > "$OUT/sh.log" 2>&1
  echo "sh rc=$?"; tail -60 "$OUT/sh.log"
fi
if has xgboost; then
  (cd "$PRIV" && COLUMNS=120 veil demo --model xgboost --peer seal --device cuda) \
    > "$OUT/xgboost.log" 2>&1
  echo "xgboost rc=$?"; cat "$OUT/xgboost.log"
fi
if has memcheck; then
  # GPU-side tests only, at small N (memcheck slows kernels 10-50x): every kernel family is here.
  #   Backend (buffers, copies, pool), NttCuda (every degree 2^4..2^18: one-block, cluster, two-pass
  #   and per-stage kernels), RnsCuda (base conversion, HPS, BEHZ, mod-down), SamplerCuda,
  #   CkksEncoderCuda, CoeffPlaintext (coefficient plaintexts on each device), RoundTrip
  #   (serialization from/to the GPU, all schemes), BfvParity at N=4096 (HPS and BEHZ multiply,
  #   relinearize, rotations, moves) and N=8192 with 2 special primes (alpha=2 keyswitch), and
  #   BgvParity/CkksParity (multiply, relinearize, mod-switch, rescale, rotate, conjugate; both
  #   keyswitch shapes). The N >= 16384 parity cases repeat the same kernels at larger sizes.
  MF='BackendTest.*:BackendCuda.*:BadInput.CudaObjectWithCpuObject:CkksEncoderCuda.*'
  MF+=':Degrees/NttCuda.*:RnsCuda.*:SamplerCuda.*:Serialize/RoundTrip.*'
  MF+=':Coefficients/CoeffPlaintext.*'
  MF+=':Bfv/BfvParity.*/n4096_*:Bfv/BfvParity.KeysCiphertextsAndEvaluation/n8192_36x6_sp2_a2_behz'
  MF+=':Bgv/BgvParity.*:Ckks/CkksParity.*'
  # The circuits layer (issue 23): extended-basis key switching, double-hoisted transforms, the
  # bootstrapper and its graph replay at small N.
  MF+=':KeySwitchExtGpu.*:DoubleHoistGpu.*:CircuitsGpu.*:BootstrapperGpu.*'
  MEMCHECK_FILTER=${MEMCHECK_FILTER:-$MF}
  SAN=$(command -v compute-sanitizer || ls /usr/local/cuda*/bin/compute-sanitizer \
    /usr/local/cuda*/compute-sanitizer/compute-sanitizer 2>/dev/null | head -1)
  if [ -z "$SAN" ]; then
    echo "memcheck: compute-sanitizer not found"
    san_rc=1
  else
    t0=$(date +%s)
    # --leak-check full: every Buffer returns its block with cudaFreeAsync, which the sanitizer
    # tracks for stream-ordered pools; a block still allocated when the context goes is reported.
    # Veil never calls cudaDeviceReset: should exit-time reports prove spurious, MEMCHECK_LEAKS=no.
    # shellcheck disable=SC2086
    timeout "${MEMCHECK_TIMEOUT:-360}" "$SAN" --tool memcheck --error-exitcode 1 \
      --leak-check "${MEMCHECK_LEAKS:-full}" ${MEMCHECK_ARGS:-} \
      "$BUILD/veil_tests" --gtest_filter="$MEMCHECK_FILTER" \
      > "$OUT/memcheck.log" 2>&1
    rc=$?
    [ $rc = 0 ] || san_rc=1
    echo "memcheck rc=$rc in $(( $(date +%s) - t0 )) s$([ $rc = 124 ] && echo ' (timed out)')"
    grep -E "ERROR SUMMARY|LEAK SUMMARY|PASSED|FAILED|tests ran" "$OUT/memcheck.log" | tail -20
    grep -m 20 -A 12 -E \
      "^========= (Invalid|Program hit|Leaked|Malloc|Out-of-range|Misaligned|Address|Hardware)" \
      "$OUT/memcheck.log" | head -80
    if [ "${INITCHECK:-0}" = 1 ]; then
      t0=$(date +%s)
      timeout "${MEMCHECK_TIMEOUT:-360}" "$SAN" --tool initcheck --error-exitcode 1 \
        "$BUILD/veil_tests" --gtest_brief=1 \
        --gtest_filter='Degrees/NttCuda.*:RnsCuda.*:SamplerCuda.*' \
        > "$OUT/initcheck.log" 2>&1
      rc=$?
      [ $rc = 0 ] || san_rc=1
      echo "initcheck rc=$rc in $(( $(date +%s) - t0 )) s"
      grep -E "ERROR SUMMARY|PASSED|FAILED" "$OUT/initcheck.log" | tail -10
      grep -m 10 -A 12 "^========= Uninitialized" "$OUT/initcheck.log" | head -60
    fi
  fi
fi
# A sanitizer report (or a memcheck that could not run), or a failed load mode, fails the call.
[ "${load_rc:-0}" = 0 ] || san_rc=1
exit "${san_rc:-0}"
