"""No upward arrows between the C++ layers (DESIGN.md, "Layers"): scripts/check_layers.py finds
no include of a later layer in cpp/veil/<layer>/ and no CUDA runtime call outside backend/.
The checker itself is tested on a small made-up tree: it must catch what it is for and let
kernel launches, device intrinsics, comments and strings through."""

from __future__ import annotations

import importlib.util
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
SCRIPT = ROOT / "scripts" / "check_layers.py"


def load_checker():
    spec = importlib.util.spec_from_file_location("check_layers", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def write(root: pathlib.Path, rel: str, text: str) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_the_library_has_no_upward_arrows() -> None:
    run = subprocess.run([sys.executable, str(SCRIPT)], check=False, capture_output=True,
                         text=True)
    assert run.returncode == 0, run.stdout + run.stderr


def test_every_layer_folder_is_placed() -> None:
    checker = load_checker()
    folders = {p.name for p in (ROOT / "cpp" / "veil").iterdir() if p.is_dir()}
    assert folders <= set(checker.LEVEL), folders - set(checker.LEVEL)


def test_the_checker_catches_what_it_should(tmp_path: pathlib.Path) -> None:
    write(tmp_path, "cpp/veil/core/a.h", '#include "veil/core/b.h"\n')
    write(tmp_path, "cpp/veil/rlwe/up.cpp", '#include "veil/io/blake2.h"\n')
    write(tmp_path, "cpp/veil/ring/rel.cpp", '#include "../rns/base_converter.h"\n')
    write(tmp_path, "cpp/veil/rns/angle.h", "#include <veil/circuits/dft.h>\n")
    write(tmp_path, "cpp/veil/bgv/peer.h", '#include "veil/bfv/bfv.h"\n')
    write(tmp_path, "cpp/veil/ring/k.cu",
          "#include <cuda_runtime.h>\n"
          "void f(void* p) {\n"
          "  cudaMemcpyAsync(p, p, 8, cudaMemcpyDeviceToDevice, 0);\n"
          "  cudaFuncSetAttribute (g, cudaFuncAttributeMaxDynamicSharedMemorySize, 1);\n"
          "}\n")
    write(tmp_path, "cpp/veil/circuits/d.cpp", "int n() { int d; cudaGetDevice(&d); return d; }\n")
    write(tmp_path, "python/bindings/m.cpp", "void s() { cuCtxSynchronize(); }\n")
    write(tmp_path, "cpp/veil/mystery/x.h", "\n")
    found = load_checker().check(tmp_path)
    expected = [
        "cpp/veil/bgv/peer.h:1: includes veil/bfv/bfv.h: bfv/ and bgv/ are peers",
        "cpp/veil/circuits/d.cpp:1: calls the CUDA runtime directly (cudaGetDevice)",
        "cpp/veil/mystery/: not in the layer list",
        "cpp/veil/ring/k.cu:1: includes <cuda_runtime.h>",
        "cpp/veil/ring/k.cu:3: calls the CUDA runtime directly (cudaMemcpyAsync)",
        "cpp/veil/ring/k.cu:4: calls the CUDA runtime directly (cudaFuncSetAttribute)",
        "cpp/veil/ring/rel.cpp:1: includes ../rns/base_converter.h: rns/ is below ring/",
        "cpp/veil/rlwe/up.cpp:1: includes veil/io/blake2.h: io/ is below rlwe/",
        "cpp/veil/rns/angle.h:1: includes veil/circuits/dft.h: circuits/ is below rns/",
        "python/bindings/m.cpp:1: calls the CUDA runtime directly (cuCtxSynchronize)",
    ]
    assert len(found) == len(expected), "\n".join(found)
    for line, start in zip(found, expected):
        assert line.startswith(start), (line, start)


def test_the_checker_lets_through_what_it_should(tmp_path: pathlib.Path) -> None:
    write(tmp_path, "cpp/veil/backend/rt.cu",
          "#include <cuda_runtime.h>\nvoid s() { cudaStreamSynchronize(nullptr); }\n")
    write(tmp_path, "cpp/veil/io/load.cpp",
          '#include "veil/circuits/dft.h"\n#include "veil/core/error.h"\n#include <vector>\n')
    write(tmp_path, "cpp/veil/ring/k.cu",
          "#include <cooperative_groups.h>\n"
          '#include "veil/backend/launch.h"\n'
          "// cudaMemcpyAsync(dst, src) is backend's job; /* cudaGetDevice(&d) */ too\n"
          "/* #include \"veil/io/blake2.h\"\n   cudaFree(p); */\n"
          "__global__ void k(unsigned* x) { __syncthreads(); x[0] = __shfl_sync(~0u, x[0], 1); }\n"
          "void f(unsigned* x, cudaStream_t s) {\n"
          "  k<<<1, 32, 0, s>>>(x);\n"
          '  throw_error("cudaLaunchKernelEx(cfg) failed");\n'
          "  long big = 1'000'000; char c = '(';\n"
          "}\n")
    assert load_checker().check(tmp_path) == []
