"""The ``veil`` command line: ``veil info``, ``veil demo``, ``veil bench``, ``veil serve``,
``veil loadtest``.

Examples::

    veil info
    veil demo --device cpu --seed 1
    veil demo --scheme ckks --device cpu
    veil demo --scheme ckks --train                 # training on encrypted data, bootstrapping
    veil demo --model xgboost --peer seal           # encrypted XGBoost, SEAL vs Veil (Table 6)
    veil bench --scheme bfv --quick --device cpu --json bench.json --markdown bench.md
    veil bench --scheme ckks --quick --device cpu
    veil bench --quick --device cpu --commit $(git rev-parse HEAD) --plot charts/
    veil bench --from-json bench.json --plot charts/   # tables and charts of a saved run
    veil serve --port 8000 --device auto            # encrypted inference over HTTP (veil.serve)
    veil demo --server http://127.0.0.1:8000        # the demo's client side against it
    veil loadtest --server http://127.0.0.1:8000 --clients 8 --requests 25

Bad arguments and unavailable devices exit with status 2 and a one-line message (no traceback);
a demo whose decrypted results differ from the plaintext model (BFV: not exactly equal; CKKS:
decisions agree on fewer than 99% of the samples) exits with status 1, as does a benchmark in
which an operation gave a wrong result.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Sequence

from rich.console import Console
from rich.table import Table

EXIT_OK = 0
EXIT_WRONG = 1  # a computation gave a wrong answer
EXIT_USAGE = 2  # bad arguments or unavailable device (argparse uses 2 as well)

#: Schemes of ``veil demo`` and ``veil bench``.
_DEMO_SCHEMES = ("bfv", "ckks")
_BENCH_SCHEMES = ("bfv", "bgv", "ckks")
#: Bounds of the integer options (argparse rejects values outside them with status 2).
MAX_THREADS = 1024
MAX_RUNS = 1_000_000
MAX_DEGREE = 131072


def _device_arg(value: str) -> str:
    """argparse type: 'auto', 'cpu', 'cuda' or 'cuda:k' (validated later against the build)."""
    v = value.strip().lower()
    if v in ("auto", "cpu", "cuda") or (v.startswith("cuda:") and v[5:].isdigit()):
        return v
    raise argparse.ArgumentTypeError(f"expected auto, cpu, cuda or cuda:k, got {value!r}")


def _int_in(value: str, lo: int, hi: int, what: str) -> int:
    """``value`` as a decimal integer in lo..hi, else argparse.ArgumentTypeError."""
    v = value.strip()
    if not re.fullmatch(r"[+-]?[0-9]{1,20}", v):  # ASCII digits only: int() takes '٣' too
        raise argparse.ArgumentTypeError(f"expected {what} in {lo}..{hi}, got {value!r}")
    n = int(v)
    if not lo <= n <= hi:
        raise argparse.ArgumentTypeError(f"expected {what} in {lo}..{hi}, got {n}")
    return n


def _runs_arg(value: str) -> int:
    """argparse type of --runs: 1..MAX_RUNS."""
    return _int_in(value, 1, MAX_RUNS, "a number of runs")


def _degree_arg(value: str) -> int:
    """argparse type of --max-n/--cpu-max-n: a poly_modulus_degree bound in 1..MAX_DEGREE."""
    return _int_in(value, 1, MAX_DEGREE, "a poly_modulus_degree bound")


def _seed_arg(value: str) -> int:
    try:
        n = int(value.strip(), 0) if re.fullmatch(r"\s*(0[xX][0-9a-fA-F_]+|[0-9_]+)\s*",
                                                    value) else None
    except ValueError:
        n = None
    if n is None:
        raise argparse.ArgumentTypeError("expected a non-negative integer")  # not quoted
    if not 0 <= n < 2**64:
        raise argparse.ArgumentTypeError("expected an integer in [0, 2^64)")  # a seed: not quoted
    return n


def _commit_arg(value: str) -> str:
    """argparse type of --commit: 4 to 64 hexadecimal digits."""
    from .bench import check_commit

    try:
        return check_commit(value, "--commit")
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e).removeprefix("--commit: ")) from None


def _threads_arg(value: str) -> list[int]:
    """'1,0' -> [1, 0]: CPU thread counts to benchmark, each in 0..MAX_THREADS (0 = the
    default, all cores)."""
    out = []
    for part in value.split(","):
        part = part.strip()
        if not re.fullmatch(r"[0-9]{1,5}", part) or int(part) > MAX_THREADS:
            raise argparse.ArgumentTypeError(
                f"expected comma-separated thread counts in 0..{MAX_THREADS} like '1,0' "
                f"(0 = default), got {value!r}"
            )
        out.append(int(part))
    return out


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of the ``veil`` command."""
    parser = argparse.ArgumentParser(
        prog="veil", description="Veil: homomorphic encryption on NVIDIA GPUs and CPUs."
    )
    parser.add_argument("--version", action="store_true", help="print the version and exit")
    sub = parser.add_subparsers(dest="command", metavar="{info,demo,bench,serve,loadtest}")

    sub.add_parser("info", help="build, CPU and GPU facts")

    demo = sub.add_parser(
        "demo", help="encrypted tumour classification (Breast Cancer Wisconsin, BFV or CKKS)"
    )
    demo.add_argument("--scheme", choices=_DEMO_SCHEMES, default="bfv",
                      help="bfv: exact integer scores; ckks: real scores and a polynomial "
                      "sigmoid (default: bfv)")
    demo.add_argument(
        "--device", type=_device_arg, default="auto",
        help="auto (GPU when present), cpu, cuda or cuda:k (default: auto)",
    )
    demo.add_argument("--seed", type=_seed_arg, default=None,
                      help="fix key/encryption randomness (default: OS entropy)")
    demo.add_argument("--train", action="store_true",
                      help="CKKS only: train the logistic regression on encrypted data (gradient "
                      "descent with bootstrapping, N = 2^16; a GPU takes seconds, the CPU hours)")
    demo.add_argument("--iterations", type=lambda v: _int_in(v, 1, 1000, "a count"), default=12,
                      help="gradient-descent iterations of --train (default: 12)")
    demo.add_argument("--model", choices=("logreg", "xgboost", "cnn"), default="logreg",
                      help="logreg: logistic regression on x and x^2; xgboost: gradient-boosted "
                      "trees, BFV, the application of Özcan et al., IEEE Access 2023; cnn: a "
                      "convolutional network on 8x8 digits, CKKS (default: logreg)")
    demo.add_argument("--activation", choices=("square", "relu"), default="square",
                      help="--model cnn: the activation, square (x^2) or relu (through the "
                      "encrypted sign function; deeper, slower) (default: square)")
    demo.add_argument("--peer", choices=("none", "seal", "tenseal"), default="none",
                      help="seal (with --model xgboost): time SEAL (seal-python, 1 thread) and "
                      "Veil on CPU (1 and all threads) and GPU on the same circuit; tenseal "
                      "(with --model cnn): the same network on TenSEAL, CPU (default: none)")
    demo.add_argument("--limit", type=lambda v: _int_in(v, 1, 100000, "a count"), default=None,
                      help="--model cnn: evaluate only the first LIMIT test images")
    demo.add_argument("--server", metavar="URL", default=None,
                      help="run the client side against `veil serve` at URL (keys made here, "
                      "evaluation keys uploaded once; --device is the client's)")

    bench = sub.add_parser("bench", help="time Veil's operations against SEAL and Phantom's numbers")
    bench.add_argument("--scheme", choices=_BENCH_SCHEMES, default="bfv")
    bench.add_argument(
        "--device", type=_device_arg, default="auto",
        help="auto (CPU backends + the GPU when present), cpu or cuda[:k] (default: auto)",
    )
    bench.add_argument("--quick", action="store_true",
                       help="few parameter rows and runs (CI smoke test)")
    bench.add_argument("--runs", type=_runs_arg, default=None,
                       help="timed runs per fast op (default: 100 on GPU, time-bounded on CPU)")
    bench.add_argument("--json", dest="json_path", metavar="PATH", default=None,
                       help="write all raw medians as JSON")
    bench.add_argument("--markdown", dest="markdown_path", metavar="PATH", default=None,
                       help="write the markdown tables")
    bench.add_argument("--no-seal", dest="seal", action="store_false",
                       help="skip the SEAL (seal-python) peer")
    bench.add_argument("--threads", type=_threads_arg, default=None, metavar="LIST",
                       help="CPU thread counts in 0..1024, comma-separated; 0 = default "
                       "(default: '1,0')")
    bench.add_argument("--rows", choices=("default", "phantom", "cheddar", "words32", "all"),
                       default="all",
                       help="parameter rows: SEAL defaults, Phantom's rows, Cheddar's N = 2^16 "
                            "shapes (CKKS), Phantom's headline shapes in ~30-bit primes "
                            "(32-bit words), or all of them (default: all)")
    bench.add_argument("--max-n", type=_degree_arg, default=None, metavar="N",
                       help="skip rows with poly_modulus_degree above N")
    bench.add_argument("--cpu-max-n", type=_degree_arg, default=None, metavar="N",
                       help="largest N timed on the CPU backends (default: 16384; 65536 with "
                       "the current CPU backend takes hours)")
    bench.add_argument("--bootstrap", action="store_true",
                       help="CKKS only: time bootstrapping at N = 2^16 (full and 4096 slots, the "
                       "4096 also with pack_sparse; 64- and 32-bit words; --quick: N = 2^12 "
                       "without the security bound)")
    bench.add_argument("--energy", action="store_true",
                       help="also joules per operation on the GPU through NVML (nvidia-ml-py; "
                       "skipped with a notice without it); adds about 1 s per op")
    bench.add_argument("--commit", type=_commit_arg, default=None, metavar="SHA",
                       help="commit being measured, recorded in the results (default: "
                       "VEIL_GIT_COMMIT, else HEAD of the checkout read with dulwich; a copy "
                       "without .git needs it)")
    bench.add_argument("--plot", dest="plot_dir", metavar="DIR", default=None,
                       help="write PNG charts of Veil against its peers per operation and "
                       "parameter set into DIR (matplotlib)")
    bench.add_argument("--from-json", dest="from_json", metavar="FILE", action="append",
                       default=None,
                       help="do not run: print the tables of a saved --json result (repeatable), "
                       "with --markdown and --plot as for a run")
    _add_serve_parsers(sub)
    return parser


def _serve_number(value: str, lo: float, hi: float, what: str) -> float:
    try:
        v = float(value)
    except ValueError:
        v = float("nan")
    if not lo <= v <= hi:  # NaN fails too
        raise argparse.ArgumentTypeError(f"expected {what} in {lo:g}..{hi:g}, got {value!r}")
    return v


def _add_serve_parsers(sub) -> None:
    """``veil serve`` and ``veil loadtest`` (veil.serve, veil.serve.loadtest)."""
    serve = sub.add_parser("serve", help="serve encrypted inference over HTTP (FastAPI, uvicorn)")
    serve.add_argument("--host", default="127.0.0.1", help="address to bind (default: 127.0.0.1)")
    serve.add_argument("--port", type=lambda v: _int_in(v, 1, 65535, "a port"), default=8000,
                       help="TCP port (default: 8000)")
    serve.add_argument("--device", type=_device_arg, default="auto",
                       help="auto (GPU when present), cpu, cuda or cuda:k (default: auto)")
    serve.add_argument("--max-request-mb", type=lambda v: _serve_number(v, 0.001, 65536, "MiB"),
                       default=64.0, help="largest evaluation request body in MiB (default: 64)")
    serve.add_argument("--max-upload-mb", type=lambda v: _serve_number(v, 0.001, 1 << 30, "MiB"),
                       default=None, help="largest key upload in MiB (default: the larger of 256 "
                       "and the largest served model's key set)")
    serve.add_argument("--session-ttl", type=lambda v: _serve_number(v, 0.001, 1e7, "seconds"),
                       default=900.0, help="a session expires after this many idle seconds "
                       "(default: 900)")
    serve.add_argument("--max-sessions", type=lambda v: _int_in(v, 1, 100000, "a count"),
                       default=32, help="most live sessions (default: 32)")
    serve.add_argument("--max-session-key-mb", default=None,
                       type=lambda v: _serve_number(v, 0.001, 1 << 30, "MiB"),
                       help="decompressed key MiB one session may hold (default: the key set of "
                       "the served model that needs most)")
    serve.add_argument("--max-key-mb", type=lambda v: _serve_number(v, 0.001, 1 << 30, "MiB"),
                       default=None, help="decompressed key MiB all sessions together may "
                       "hold (default: the larger of 4096 and two of the largest model's key "
                       "sets)")
    serve.add_argument("--header-timeout", type=lambda v: _serve_number(v, 0.001, 3600,
                                                                         "seconds"),
                       default=30.0, help="seconds a client has to send a request's headers "
                       "(default: 30)")
    serve.add_argument("--body-timeout", type=lambda v: _serve_number(v, 0.001, 3600, "seconds"),
                       default=30.0, help="longest pause, in seconds, while a client sends a "
                       "body (default: 30)")
    serve.add_argument("--models", default=None, metavar="LIST",
                       help="comma-separated models to serve (default: every one available)")
    ray_opts = serve.add_argument_group(
        "Ray", "serve from Ray Serve replicas over many GPUs and hosts (pip install 'veil[ray]')")
    ray_opts.add_argument("--ray", action="store_true",
                          help="run as a Ray Serve application: one worker replica per GPU")
    ray_opts.add_argument("--address", default=None, metavar="ADDR",
                          help="join this Ray cluster (e.g. 10.0.0.1:6379 after `ray start "
                               "--head`; default: RAY_ADDRESS, else a cluster `ray start` made "
                               "on this machine, else a new local one)")
    ray_opts.add_argument("--replicas", type=lambda v: _int_in(v, 1, 4096, "a count"),
                          default=None, help="worker replicas (default: one per GPU, else 1)")
    ray_opts.add_argument("--autoscale", default=None, metavar="MIN:MAX",
                          help="autoscale the worker replicas between MIN and MAX instead")
    ray_opts.add_argument("--ingress-replicas", type=lambda v: _int_in(v, 1, 1024, "a count"),
                          default=1, help="HTTP front ends (Ray actors; those on one node share the "
                               "port; default: 1)")
    ray_opts.add_argument("--no-direct", dest="direct", action="store_false",
                          help="answer only through the front ends (default, unless "
                               "--autoscale: each worker replica also answers on a port of its "
                               "own, and clients send a session's requests straight to the "
                               "replica that holds its keys)")
    load = sub.add_parser("loadtest", help="concurrent encrypted requests against `veil serve`")
    load.add_argument("--server", metavar="URL", default=None,
                      help="server to load (default: start one in this process on a free port)")
    load.add_argument("--clients", type=lambda v: _int_in(v, 1, 1024, "a count"), default=8,
                      help="concurrent clients, each with its own keys and session (default: 8)")
    load.add_argument("--requests", type=lambda v: _int_in(v, 1, 100000, "a count"), default=25,
                      help="requests per client (default: 25)")
    load.add_argument("--model", default="logreg", help="served model to load (default: logreg)")
    load.add_argument("--device", type=_device_arg, default="auto",
                      help="device of the in-process server (without --server; default: auto)")
    load.add_argument("--json", dest="json_path", metavar="PATH", default=None,
                      help="write the results as JSON")


def cmd_serve(args: argparse.Namespace) -> int:
    """Runs :func:`veil.serve.main` (``--ray``: :func:`veil.serve.cluster.main`) until
    interrupted."""
    from . import serve

    config = serve.ServeConfig(
        device=args.device, max_request_bytes=int(args.max_request_mb * 2**20),
        max_upload_bytes=None if args.max_upload_mb is None else int(args.max_upload_mb * 2**20),
        session_ttl_s=args.session_ttl, max_sessions=args.max_sessions,
        max_key_bytes=None if args.max_key_mb is None else int(args.max_key_mb * 2**20),
        max_session_key_bytes=(None if args.max_session_key_mb is None
                               else int(args.max_session_key_mb * 2**20)),
        header_timeout_s=args.header_timeout, body_timeout_s=args.body_timeout, warmup=True)
    names = [m.strip() for m in args.models.split(",") if m.strip()] if args.models else None
    try:
        models = serve.load_models(names)
    except (ValueError, ImportError, AttributeError) as e:  # unknown or unavailable model
        print(f"veil serve: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    if not args.ray:
        if args.address or args.replicas or args.autoscale or not args.direct:
            print("veil serve: error: --address, --replicas, --autoscale and --no-direct need "
                  "--ray",
                  file=sys.stderr)
            return EXIT_USAGE
        return serve.main(args.host, args.port, config, models)
    autoscale = None
    if args.autoscale:
        lo, sep, hi = args.autoscale.partition(":")
        if not (sep and lo.isdigit() and hi.isdigit() and int(lo) <= int(hi) and int(hi) >= 1):
            print(f"veil serve: error: --autoscale: expected MIN:MAX with MIN <= MAX, got "
                  f"{args.autoscale!r}", file=sys.stderr)
            return EXIT_USAGE
        autoscale = (int(lo), int(hi))
    from .serve import cluster

    return cluster.main(args.host, args.port, config, models, address=args.address,
                        replicas=args.replicas, autoscale=autoscale,
                        ingress_replicas=args.ingress_replicas, direct=args.direct)


def _remote(command: str, run) -> int | dict:
    """Runs a client of `veil serve`; an unreachable server or an unserved model is one line
    and exit status 2, an error answer from the server is status 1."""
    import httpx

    from .serve.client import ServerError

    try:
        return run()
    except httpx.TransportError as e:
        print(f"veil {command}: error: cannot reach the server: {e}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, ImportError) as e:  # model not served, or its reference needs a package
        print(f"veil {command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except ServerError as e:
        print(f"veil {command}: the server answered {e}", file=sys.stderr)
        return EXIT_WRONG


def cmd_loadtest(args: argparse.Namespace) -> int:
    """Runs :func:`veil.serve.loadtest.run`; exit status 1 unless every answer came back right."""
    from .serve import loadtest

    r = _remote("loadtest", lambda: loadtest.run(
        url=args.server, clients=args.clients, requests=args.requests, model=args.model,
        device=args.device, json_path=args.json_path))
    if isinstance(r, int):
        return r
    return EXIT_OK if r["passed"] else EXIT_WRONG


def cmd_info(console: Console) -> int:
    """Prints version, build, CPU threads and each GPU's facts."""
    import veil

    from .bench import cpu_model

    info = veil.device_info()
    t = Table(show_header=False, box=None, pad_edge=False)
    t.add_column(style="cyan")
    t.add_column()
    t.add_row("veil", str(info["version"]))
    t.add_row("CUDA in this build", "yes" if info["cuda_built"] else "no")
    backends = ["cpu"] + [f"cuda:{i}" for i in range(len(info["gpus"]))]
    t.add_row("backends", ", ".join(backends))
    t.add_row("CPU threads (OpenMP)", str(info["cpu_threads"]))
    t.add_row("CPU", cpu_model())
    t.add_row("default device", veil.default_device())
    console.print(t)
    if info["gpus"]:
        g = Table(title="GPUs", title_justify="left")
        for col in ("index", "name", "memory", "SMs", "compute capability", "runtime", "driver"):
            g.add_column(col)
        for i, d in enumerate(info["gpus"]):
            g.add_row(
                str(i),
                str(d.get("name", "?")),
                f"{int(d.get('total_memory', 0)) / 2**30:.1f} GiB",
                str(d.get("multiprocessors", "?")),
                str(d.get("compute_capability", "?")),
                _cuda_version(d.get("runtime_version")),
                _cuda_version(d.get("driver_version")),
            )
        console.print(g)
    elif info["cuda_built"]:
        console.print("no CUDA device visible")
    return EXIT_OK


def _cuda_version(v: object) -> str:
    """CUDA's integer version (e.g. 13000) as '13.0'."""
    try:
        n = int(v)  # type: ignore[call-overload]
    except (TypeError, ValueError):
        return "?"
    return f"{n // 1000}.{(n % 1000) // 10}"


def cmd_demo(args: argparse.Namespace) -> int:
    """Runs :func:`veil.apps.demo.run`; exit status 1 unless the encrypted results match the
    plaintext model (BFV: exact scores; CKKS: >= 99% agreement of the decisions)."""
    if args.server and getattr(args, "train", False):
        from .serve import client

        r = _remote("demo", lambda: client.run_train_demo(args.server, device=args.device,
                                                           seed=args.seed))
        if isinstance(r, int):
            return r
        return EXIT_OK if r["passed"] else EXIT_WRONG
    if args.server:
        from .serve import client

        r = _remote("demo", lambda: client.run_demo(args.server, model=args.model,
                                                     device=args.device, seed=args.seed))
        if isinstance(r, int):
            return r
        # passed: the model's decode_check in every request (BFV: exact; cnn: tolerance)
        return EXIT_OK if r["passed"] else EXIT_WRONG
    if getattr(args, "train", False):
        if args.scheme != "ckks":
            raise SystemExit("veil demo: --train needs --scheme ckks")
        from .apps import demo_train

        r = demo_train.run(device=args.device, seed=args.seed, iterations=args.iterations)
        return EXIT_OK if r["passed"] else EXIT_WRONG
    if args.model == "cnn":
        from .apps import demo_cnn

        r = demo_cnn.run(device=args.device, seed=args.seed, activation=args.activation,
                         peer=args.peer, limit=args.limit)
        return EXIT_OK if r["passed"] else EXIT_WRONG
    if args.model == "xgboost":
        from .apps import demo_xgboost

        r = demo_xgboost.run(device=args.device, seed=args.seed, peer=args.peer)
        ok = r["exact"] and r["agreement"] == 1.0 and r["backends_identical"]
        return EXIT_OK if ok else EXIT_WRONG
    from .apps import demo

    r = demo.run(device=args.device, seed=args.seed, scheme=args.scheme)
    if args.scheme == "ckks":
        return EXIT_OK if r["passed"] else EXIT_WRONG
    return EXIT_OK if r["exact"] and r["agreement"] == 1.0 else EXIT_WRONG


def cmd_bench(args: argparse.Namespace) -> int:
    """Runs :func:`veil.bench.run`; exit status 1 when an operation gave a wrong result."""
    from . import bench

    if getattr(args, "from_json", None):
        return _bench_from_json(args)
    if getattr(args, "bootstrap", False):
        if args.scheme != "ckks":
            raise SystemExit("veil bench: --bootstrap needs --scheme ckks")
        from . import _bench_boot, _core

        dev = "cpu" if args.device == "cpu" else ("cuda" if args.device == "auto" else args.device)
        if dev != "cpu" and not _core.cuda_device_count():
            dev = "cpu"
        quick = args.quick or dev == "cpu"
        _bench_boot.run(device=dev, log_n=12 if quick else 16, slots=(None, 64 if quick else 4096),
                        runs=args.runs or (3 if quick else 20), energy=args.energy,
                        json_path=args.json_path, markdown_path=args.markdown_path,
                        security=None if quick else 128, commit=args.commit)
        return EXIT_OK

    r = bench.run(
        scheme=args.scheme,
        device=args.device,
        quick=args.quick,
        runs=args.runs,
        json_path=args.json_path,
        markdown_path=args.markdown_path,
        seal=args.seal,
        threads=args.threads,
        rows=args.rows,
        max_n=args.max_n,
        cpu_max_n=args.cpu_max_n,
        energy=args.energy,
        commit=args.commit,
        plot_dir=args.plot_dir,
    )
    return EXIT_OK if r.get("all_correct", True) else EXIT_WRONG


def _bench_from_json(args: argparse.Namespace) -> int:
    """``veil bench --from-json FILE...``: the saved results' tables (and --markdown, --plot)
    rendered under the current rules; --commit fills in a commit the files lack."""
    from . import bench

    try:
        results = [bench.load_result(p) for p in args.from_json]
        for path, r in zip(args.from_json, results):
            recorded = r["meta"].get("git_commit")
            if args.commit and recorded not in (None, "unknown") and not (
                    args.commit.startswith(recorded) or recorded.startswith(args.commit)):
                raise ValueError(f"--commit: {path} records commit {recorded}, not "
                                 f"{args.commit}")
    except ValueError as e:
        print(f"veil bench: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    for r in results:
        if args.commit:
            r["meta"]["git_commit"] = args.commit
            r["markdown"] = bench.to_markdown(r)
        bench.print_report(r)
    if args.markdown_path:
        with open(args.markdown_path, "w", encoding="utf-8") as f:
            f.write("\n".join(r["markdown"] for r in results))
    if args.plot_dir:
        from ._bench_plot import write_plots

        for p in write_plots(results, args.plot_dir):
            print(f"veil bench: wrote {p}")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``veil`` command; returns the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    args.argv = list(sys.argv[1:] if argv is None else argv)  # `serve --ray` runs it again
    console = Console()
    if args.version:
        import veil

        console.print(f"veil {veil.__version__}")
        return EXIT_OK
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    if args.command == "info":
        return cmd_info(console)
    try:
        _check_args(args)
    except (ValueError, TypeError, RuntimeError, OSError, ImportError) as e:
        # Bad arguments, an unavailable device or a missing optional dependency: one line.
        print(f"veil {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE
    try:
        if args.command == "demo":
            return cmd_demo(args)
        if args.command == "serve":
            return cmd_serve(args)
        if args.command == "loadtest":
            return cmd_loadtest(args)
        return cmd_bench(args)
    except KeyboardInterrupt:
        print(f"veil {args.command}: interrupted", file=sys.stderr)
        return 130
    except OSError as e:  # e.g. --json into a directory that does not exist
        print(f"veil {args.command}: error: {e}", file=sys.stderr)
        return EXIT_USAGE


def _check_args(args: argparse.Namespace) -> None:
    """Validates what argparse cannot: the device against this build, output paths, extras.

    Raises ValueError/RuntimeError (device), OSError (paths) or ImportError (missing extras), so
    that errors inside a run are real failures and keep their traceback.
    """
    import os

    if getattr(args, "ray", False):
        try:
            import ray
        except ImportError:
            raise ImportError("--ray needs Ray: pip install 'veil[ray]'") from None
        if not os.environ.get("VEIL_RAY_FIRST"):
            # On the GPU machine (Python 3.12, Ray 2.60) ray.init crashed in its GCS client in
            # every process that had imported veil before ray, and never in one that imported
            # ray first: run the command again in a fresh interpreter that does.
            sys.stdout.flush()
            os.execve(sys.executable, [sys.executable, "-c", "import ray, runpy; runpy."
                                       "run_module('veil', run_name='__main__', alter_sys=True)",
                                       *args.argv], {**os.environ, "VEIL_RAY_FIRST": "1"})
        if not ray.is_initialized():  # namespace: veil.serve.cluster.NAMESPACE
            # address None: Ray's own rule (RAY_ADDRESS, else a cluster `ray start` made on
            # this machine, else a new local one).
            ray.init(address=args.address, namespace="veil", log_to_driver=False)
    import veil

    veil.resolve_device(args.device)
    if args.command in ("demo", "serve", "loadtest"):
        try:
            import sklearn  # noqa: F401
        except ImportError:
            raise ImportError("the demo needs scikit-learn: pip install 'veil[demo]'") from None
    if args.command in ("serve", "loadtest") or getattr(args, "server", None):
        try:
            import fastapi  # noqa: F401
            import httpx  # noqa: F401
            import uvicorn  # noqa: F401
        except ImportError:
            raise ImportError("serving needs fastapi, uvicorn and httpx: "
                              "pip install 'veil[serve]'") from None
    if args.command == "demo" and args.model == "xgboost" and args.scheme != "bfv":
        raise ValueError("--model: xgboost runs on BFV; drop --scheme ckks")
    if args.command == "demo" and args.model == "cnn" and args.train:
        raise ValueError("--model: cnn is inference (CKKS, whatever --scheme says); drop --train")
    if args.command == "demo" and args.model == "cnn" and args.server and (
            args.activation != "square" or args.peer != "none" or args.limit is not None):
        raise ValueError("--server: the served cnn is the square-activation network on every "
                         "test image; drop --activation, --peer and --limit")
    if args.command == "demo" and args.peer == "tenseal":
        if args.model != "cnn":
            raise ValueError("--peer: the TenSEAL comparison runs with --model cnn")
        try:
            import tenseal  # noqa: F401
        except ImportError:
            raise ImportError("--peer tenseal needs tenseal: pip install tenseal") from None
    if args.command == "demo" and args.peer == "seal":
        if args.model != "xgboost" or args.server:
            raise ValueError("--peer: the SEAL comparison runs locally with --model xgboost")
        from .apps.demo_xgboost import import_seal

        import_seal()  # ImportError with the install hint
    if args.command == "demo" and args.model == "xgboost" and not args.server:
        try:
            import xgboost  # noqa: F401
        except ImportError:
            raise ImportError("--model xgboost needs xgboost: pip install 'veil[demo]' "
                              "(or pip install xgboost-cpu)") from None
    if (args.command == "demo" and args.server and args.scheme != "bfv" and not args.train
            and args.model != "cnn"):
        raise ValueError("--server: the served logreg and xgboost are BFV; drop --scheme ckks "
                         "(or add --train: encrypted training on a server that bootstraps)")
    if args.command == "demo" and getattr(args, "train", False) and args.scheme != "ckks":
        raise ValueError("--train: encrypted training runs on CKKS; add --scheme ckks")
    if args.command == "loadtest" and args.json_path:
        folder = os.path.dirname(os.path.abspath(args.json_path))
        if not os.path.isdir(folder):
            raise OSError(f"{args.json_path}: folder {folder} does not exist")
    if args.command == "bench":
        for path in (args.json_path, args.markdown_path):
            if path:
                folder = os.path.dirname(os.path.abspath(path))
                if not os.path.isdir(folder):
                    raise OSError(f"{path}: folder {folder} does not exist")
        _check_bench_args(args)


def _check_bench_args(args: argparse.Namespace) -> None:
    """--plot, --from-json and --commit: combinations, paths and matplotlib, before any run."""
    import os

    from .bench import check_commit

    env = os.environ.get("VEIL_GIT_COMMIT", "").strip()
    if args.commit is None and env:
        check_commit(env, "VEIL_GIT_COMMIT")
    if args.from_json:
        for bad, name in ((args.json_path, "--json"), (args.bootstrap, "--bootstrap")):
            if bad:
                raise ValueError(f"--from-json: re-renders a saved result; drop {name}")
        for path in args.from_json:
            if not os.path.isfile(path):
                raise OSError(f"--from-json: {path} is not a file")
    if args.plot_dir:
        if args.bootstrap:
            raise ValueError("--plot: charts are of the operation timings, not --bootstrap")
        if os.path.exists(args.plot_dir) and not os.path.isdir(args.plot_dir):
            raise OSError(f"--plot: {args.plot_dir} exists and is not a folder")
        from ._bench_plot import require_matplotlib

        require_matplotlib()


if __name__ == "__main__":
    sys.exit(main())
