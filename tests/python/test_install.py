"""Install in minutes, visibly (issue 24, item 2).

- CMake's ``VEIL_CUDA=AUTO`` compiles the CUDA backend only when a GPU is present (and nvcc is
  found), and prints the choice with its reason; ccache fronts the compilers when found.
- ``scripts/install_deps.sh MODE`` installs what the chosen command needs: the pip lists are
  pyproject.toml's (checked here against the file, read independently, and against a copy with a
  package added to an extra), and only the test mode takes the test tools.
- ``scripts/build_wheels.sh`` builds the CPU and CUDA wheels through auditwheel (its dry run is
  checked here; the CPU wheel itself is built, repaired, installed into a fresh virtual
  environment and used by ``scripts/check_wheel.sh``, which the test command runs).
- The README's two commands, ``.ci/run`` and the scripts agree.

Nothing here installs anything: the scripts run with ``--dry-run`` and CMake only configures.
"""

from __future__ import annotations

import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    from pip._vendor import tomli as tomllib

ROOT = pathlib.Path(__file__).resolve().parents[2]
PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())
needs_bash = pytest.mark.skipif(shutil.which("bash") is None, reason="needs bash")
needs_cmake = pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake")


def sh(args: list[str], env: dict | None = None, cwd: pathlib.Path = ROOT,
       timeout: int = 300) -> subprocess.CompletedProcess:
    return subprocess.run(args, cwd=cwd, env=env, capture_output=True, text=True,
                          timeout=timeout, check=False)


def fake_tools(d: pathlib.Path, smi: str) -> dict:
    """A PATH whose first folder holds a fake nvidia-smi (``smi``: its script body) and a
    ccache that runs the compiler it is given."""
    d.mkdir(exist_ok=True)
    for name, body in (("nvidia-smi", smi), ("ccache", 'exec "$@"\n')):
        (d / name).write_text("#!/bin/sh\n" + body)
        (d / name).chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{d}{os.pathsep}{env.get('PATH', '')}"
    return env


SMI_FAILS = 'echo "NVIDIA-SMI has failed: no driver" >&2\nexit 9\n'
SMI_LISTS = 'echo "GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-0123)"\n'


# ---- CMake: the CUDA choice -------------------------------------------------------------------

def gpu_script(env: dict, *defines: str) -> str:
    r = sh(["cmake", *defines, "-P", str(ROOT / "cmake" / "VeilCuda.cmake")], env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    return (r.stdout + r.stderr).strip()


@needs_cmake
def test_gpu_detection_on_this_machine() -> None:
    """The script's verdict here equals what nvidia-smi and /dev/nvidia0 say, asked directly."""
    listed = False
    if shutil.which("nvidia-smi"):
        r = sh(["nvidia-smi", "-L"], timeout=60)
        listed = r.returncode == 0 and re.search(r"GPU \d+:", r.stdout) is not None
    expected = listed or os.path.exists("/dev/nvidia0")
    out = gpu_script(dict(os.environ))
    assert out.startswith("gpu: yes" if expected else "gpu: no"), out
    if not expected:
        assert "/dev/nvidia0 does not exist" in out, out


@needs_cmake
def test_gpu_detection_follows_nvidia_smi_and_the_device_file(tmp_path: pathlib.Path) -> None:
    absent = f"-DVEIL_GPU_DEVICE_FILES={tmp_path / 'nvidia0'}"
    listed = gpu_script(fake_tools(tmp_path / "a", SMI_LISTS), absent)
    assert listed == "gpu: yes (nvidia-smi -L lists GPU 0: NVIDIA H100 80GB HBM3)", listed
    failed = gpu_script(fake_tools(tmp_path / "b", SMI_FAILS), absent)
    assert failed.startswith("gpu: no (nvidia-smi -L failed (9) and "), failed
    empty = gpu_script(fake_tools(tmp_path / "c", "exit 0\n"), absent)
    assert empty.startswith("gpu: no (nvidia-smi -L lists no GPU"), empty
    (tmp_path / "nvidia0").write_text("")  # a device file, as in a container given a GPU
    device = gpu_script(fake_tools(tmp_path / "d", SMI_FAILS), absent)
    assert device == f"gpu: yes ({tmp_path / 'nvidia0'} exists)", device


def configure(tmp_path: pathlib.Path, env: dict, *defines: str) -> subprocess.CompletedProcess:
    gen = ["-G", "Ninja"] if shutil.which("ninja") else []
    return sh(["cmake", "-S", str(ROOT), "-B", str(tmp_path / "build"), *gen,
               f"-DVEIL_GPU_DEVICE_FILES={tmp_path / 'no-such-device'}", *defines], env=env)


@needs_cmake
def test_auto_without_a_gpu_builds_the_cpu_backend_and_says_why(tmp_path) -> None:
    """No GPU (nvidia-smi fails, no device file), whether nvcc is installed or not: the CUDA
    backend is off, the reason is printed, and ccache (found on PATH) fronts the compiler."""
    env = fake_tools(tmp_path / "bin", SMI_FAILS)
    r = configure(tmp_path, env, "-DVEIL_CUDA=AUTO")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    line = next(ln for ln in out.splitlines() if "Veil CUDA backend" in ln)
    assert "Veil CUDA backend: OFF, CPU backend only (VEIL_CUDA=AUTO: no GPU found: " \
           "nvidia-smi -L failed (9)" in line, line
    m = re.search(r"Veil library: (\d+) C\+\+ and (\d+) CUDA source files", out)
    assert m and int(m.group(2)) == 0, out
    cpp = [p for p in (ROOT / "cpp" / "veil").rglob("*.cpp")]
    assert int(m.group(1)) == len(cpp), (m.group(0), len(cpp))  # every .cpp, stubs included
    cache = (tmp_path / "build" / "CMakeCache.txt").read_text()
    assert "VEIL_HAVE_CUDA:INTERNAL=OFF" in cache
    assert f"Veil compiler launcher: {tmp_path / 'bin' / 'ccache'}" in out, out
    rules = "".join(p.read_text() for p in (tmp_path / "build").rglob("*.ninja"))
    rules += "".join(p.read_text() for p in (tmp_path / "build").rglob("build.make"))
    assert str(tmp_path / "bin" / "ccache") in rules, "the launcher is not in the build rules"


def nvcc() -> str | None:
    found = shutil.which("nvcc")
    if found is None and os.access("/usr/local/cuda/bin/nvcc", os.X_OK):
        found = "/usr/local/cuda/bin/nvcc"
    return found


@needs_cmake
@pytest.mark.skipif(nvcc() is None, reason="needs nvcc")
def test_auto_with_a_gpu_and_nvcc_builds_cuda(tmp_path) -> None:
    """What the GPU machine sees (here faked: nvidia-smi lists a GPU): AUTO turns CUDA on."""
    env = fake_tools(tmp_path / "bin", SMI_LISTS)
    env["PATH"] = f"{os.path.dirname(nvcc())}{os.pathsep}{env['PATH']}"
    r = configure(tmp_path, env, "-DVEIL_CUDA=AUTO", "-DVEIL_CCACHE=OFF")
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    assert "Veil CUDA backend: ON (VEIL_CUDA=AUTO: nvidia-smi -L lists GPU 0: NVIDIA H100" in out
    m = re.search(r"Veil library: (\d+) C\+\+ and (\d+) CUDA source files", out)
    assert m and int(m.group(2)) > 0, out
    assert "VEIL_HAVE_CUDA:INTERNAL=ON" in (tmp_path / "build" / "CMakeCache.txt").read_text()


@needs_cmake
def test_veil_cuda_values_are_checked(tmp_path) -> None:
    r = configure(tmp_path, dict(os.environ), "-DVEIL_CUDA=maybe")
    assert r.returncode != 0
    assert "VEIL_CUDA: expected AUTO, ON or OFF, got 'maybe'" in r.stdout + r.stderr


def test_gpu_machine_script_asks_for_cuda() -> None:
    """scripts/gpu_run.sh builds on the GPU machine with VEIL_CUDA=ON (not left to AUTO)."""
    lines = (ROOT / "scripts" / "gpu_run.sh").read_text().replace("\\\n", " ").splitlines()
    builds = [ln for ln in lines if "pip install" in ln and "build-dir=" in ln]
    assert builds, "no build command (pip install -C build-dir=...) in scripts/gpu_run.sh"
    for ln in builds:
        assert "cmake.define.VEIL_CUDA=ON" in ln, ln


# ---- install_deps.sh ----------------------------------------------------------------------------

def dry_run(*modes: str, root: pathlib.Path = ROOT) -> dict[str, list[str]]:
    r = sh(["bash", str(root / "scripts" / "install_deps.sh"), "--dry-run", *modes])
    assert r.returncode == 0, r.stdout + r.stderr
    out = {}
    for line in r.stdout.splitlines():
        key, _, rest = line.partition(":")
        out[key] = rest.split()
    return out


def cmake_needed() -> bool:
    """Whether the system's CMake is missing or older than pyproject's cmake.version."""
    spec = PYPROJECT["tool"]["scikit-build"]["cmake"]["version"]
    need = tuple(int(x) for x in re.findall(r"\d+", spec)[:2])
    if not shutil.which("cmake"):
        return True
    m = re.search(r"version (\d+)\.(\d+)", sh(["cmake", "--version"]).stdout)
    return m is None or (int(m.group(1)), int(m.group(2))) < need


def without_tools(reqs: list[str]) -> set[str]:
    return {r for r in reqs if not re.match(r"(cmake|ninja)\b", r)}


APT_TOOLS = {"clang", "libgtest-dev", "libclang-rt-dev", "libomp-dev"}
APT_BUILD = {"g++", "libboost-dev", "libzstd-dev", "zlib1g-dev", "libb2-dev", "ninja-build"}


@needs_bash
@pytest.mark.parametrize("mode", ["runtime", "demo"])
def test_runtime_and_demo_take_the_build_packages_only(mode: str) -> None:
    got = dry_run(mode)
    assert got["pip"] == [], "the following pip install brings the Python packages"
    assert APT_BUILD <= set(got["apt"]) and not APT_TOOLS & set(got["apt"]), got["apt"]


@needs_bash
def test_test_mode_takes_pyproject_lists() -> None:
    got = dry_run("test")
    extras = PYPROJECT["project"]["optional-dependencies"]
    want = (set(PYPROJECT["build-system"]["requires"]) | set(PYPROJECT["project"]["dependencies"])
            | set(extras["test"]) | set(extras["docs"]))
    assert without_tools(got["pip"]) == want
    assert any(r.startswith("cmake") for r in got["pip"]) == cmake_needed()
    assert APT_BUILD | APT_TOOLS <= set(got["apt"])


@needs_bash
def test_docs_and_all_modes() -> None:
    extras = PYPROJECT["project"]["optional-dependencies"]
    docs = dry_run("docs")
    assert docs["apt"] == [] and set(docs["pip"]) == set(extras["docs"])
    everything = dry_run("all")
    want = set(PYPROJECT["build-system"]["requires"]) | set(PYPROJECT["project"]["dependencies"])
    for reqs in extras.values():
        want |= {r for r in reqs if not r.startswith("veil[")}
    assert without_tools(everything["pip"]) == want


@needs_bash
def test_a_package_added_to_an_extra_is_picked_up(tmp_path: pathlib.Path) -> None:
    """Another engineer adds nbclient (and a self-reference to the serve extra) to `test`."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "install_deps.sh", tmp_path / "scripts")
    text = (ROOT / "pyproject.toml").read_text()
    new = re.sub(r'(?m)^test = \[', 'test = ["nbclient>=0.10", "veil[serve]", ', text, count=1)
    assert new != text
    (tmp_path / "pyproject.toml").write_text(new)
    got = dry_run("test", root=tmp_path)["pip"]
    assert "nbclient>=0.10" in got
    assert set(PYPROJECT["project"]["optional-dependencies"]["serve"]) <= set(got)
    assert not any(r.startswith("veil") for r in got), got


@needs_bash
def test_an_unreadable_pyproject_stops_install_deps(tmp_path: pathlib.Path) -> None:
    """A pyproject.toml the parser rejects fails the script (it once printed the traceback,
    listed no pip package and exited 0, as if everything were installed)."""
    (tmp_path / "scripts").mkdir()
    shutil.copy(ROOT / "scripts" / "install_deps.sh", tmp_path / "scripts")
    (tmp_path / "pyproject.toml").write_text("[project\nname = 'veil'\n")
    r = sh(["bash", str(tmp_path / "scripts" / "install_deps.sh"), "--dry-run", "test"])
    assert r.returncode != 0, r.stdout + r.stderr
    assert "could not read the requirements from pyproject.toml" in r.stderr


@needs_bash
def test_install_deps_refuses_no_mode_and_unknown_modes() -> None:
    r = sh(["bash", "scripts/install_deps.sh"])
    assert r.returncode == 2 and "runtime, demo, test, docs or all" in r.stderr
    r = sh(["bash", "scripts/install_deps.sh", "--dry-run", "everything"])
    assert r.returncode == 2 and "unknown mode 'everything'" in r.stderr


def recorders(tmp_path: pathlib.Path, python_extra: str = "") -> tuple[pathlib.Path, dict]:
    """A PATH where dpkg says every system package is present, apt-get is recorded (and fails)
    and $PYTHON records `-m pip` calls instead of running them (``python_extra``: more shell
    lines before it runs the real interpreter). Returns the log and the environment."""
    log = tmp_path / "calls.log"
    bin_ = tmp_path / "bin"
    bin_.mkdir()
    (bin_ / "dpkg").write_text("#!/bin/sh\nexit 0\n")
    (bin_ / "apt-get").write_text(f"#!/bin/sh\necho apt-get \"$@\" >> {log}\nexit 1\n")
    (bin_ / "python").write_text(
        "#!/bin/bash\n"
        f'if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then echo "$@" >> {log}; exit 0; fi\n'
        + python_extra + f'exec {sys.executable} "$@"\n')
    for f in bin_.iterdir():
        f.chmod(0o755)
    env = dict(os.environ)
    env["PATH"] = f"{bin_}{os.pathsep}{env['PATH']}"
    env["PYTHON"] = str(bin_ / "python")
    return log, env


@needs_bash
@pytest.mark.parametrize("mode", ["demo", "docs"])
def test_install_deps_runs_pip_only_for_what_the_mode_needs(mode, tmp_path) -> None:
    """The real run (not --dry-run), with apt-get, dpkg and pip replaced by recorders: demo
    calls no pip at all; docs calls one `pip install` of the docs extra, upgrading nothing."""
    log, env = recorders(tmp_path)
    r = sh(["bash", "scripts/install_deps.sh", mode], env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    calls = log.read_text().splitlines() if log.exists() else []
    if mode == "demo":
        assert calls == []
    else:
        assert len(calls) == 1, calls
        args = calls[0].split()
        assert args[:4] == ["-m", "pip", "install", "-q"], args
        assert set(args[4:]) == set(PYPROJECT["project"]["optional-dependencies"]["docs"])


@needs_bash
def test_install_deps_stops_on_an_externally_managed_python(tmp_path) -> None:
    """A system Python marked EXTERNALLY-MANAGED (PEP 668; Debian 12's) refuses pip outside a
    venv: the script says to create one and stops before calling pip. The marker check is
    answered 'managed' by a wrapper (this machine's Python is not a system one); the rest of
    the script runs as it is."""
    managed = ('if [ "$1" = "-" ]; then script=$(cat)\n'
               '  case "$script" in *EXTERNALLY-MANAGED*) exit 0 ;; esac\n'
               f'  printf "%s" "$script" | exec {sys.executable} "$@"; fi\n')
    log, env = recorders(tmp_path, managed)
    env.pop("PIP_BREAK_SYSTEM_PACKAGES", None)
    r = sh(["bash", "scripts/install_deps.sh", "docs"], env=env)
    assert r.returncode != 0, r.stdout + r.stderr
    assert "PEP 668" in r.stderr and "python3 -m venv .venv" in r.stderr, r.stderr
    assert not log.exists(), log.read_text()
    env["PIP_BREAK_SYSTEM_PACKAGES"] = "1"  # pip's own override is honoured
    r = sh(["bash", "scripts/install_deps.sh", "docs"], env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert len(log.read_text().splitlines()) == 1


# ---- build_wheels.sh ----------------------------------------------------------------------------

@needs_bash
@pytest.mark.skipif(sys.platform != "linux", reason="manylinux wheels are built on Linux")
def test_build_wheels_dry_run(tmp_path: pathlib.Path) -> None:
    r = sh(["bash", "scripts/build_wheels.sh", "--dry-run", "--out", str(tmp_path), "cpu", "cuda"])
    out = r.stdout + r.stderr
    assert r.returncode == 0, out
    cmds = [ln for ln in out.splitlines() if ln.startswith("+ ")]
    wheel = [c for c in cmds if " pip wheel " in c]
    repair = [c for c in cmds if "auditwheel repair" in c]
    assert len(wheel) == 2 and len(repair) == 2, cmds
    assert "VEIL_CUDA=OFF" in wheel[0] and "build-dir=build/wheel-cpu" in wheel[0]
    assert "VEIL_CUDA=ON" in wheel[1] and "build-dir=build/wheel-cuda" in wheel[1]
    assert re.search(r"CMAKE_CUDA_ARCHITECTURES=80-real\\?;90-real\\?;90-virtual", wheel[1]), wheel[1]
    assert f"-w {tmp_path}/cpu" in repair[0] and f"-w {tmp_path}/cuda" in repair[1]
    assert "--exclude libcuda.so.1" in repair[1]
    assert not list(tmp_path.iterdir()), "a dry run wrote files"


@needs_bash
def test_build_wheels_arguments() -> None:
    r = sh(["bash", "scripts/build_wheels.sh"])
    assert r.returncode == 2 and "cpu, cuda or both" in r.stderr
    r = sh(["bash", "scripts/build_wheels.sh", "gpu"])
    assert r.returncode == 2 and "unknown argument 'gpu'" in r.stderr
    r = sh(["bash", "scripts/build_wheels.sh", "--help"])
    assert r.returncode == 0 and "auditwheel" in r.stdout


# ---- the README's commands, CI and the test command agree ---------------------------------------

def readme_commands() -> list[str]:
    text = (ROOT / "README.md").read_text()
    block = re.search(r"```bash\n(.*?)```", text, re.DOTALL)
    assert block, "README.md opens with a ```bash block of its two commands"
    return [ln.split("#")[0].strip() for ln in block.group(1).splitlines() if ln.strip()]


def test_readme_commands_ci_and_scripts_agree() -> None:
    demo, test = readme_commands()[:2]
    assert demo.startswith("bash scripts/install_deps.sh demo && pip install -v "), demo
    assert demo.endswith("&& veil demo"), demo
    assert test == "bash scripts/install_deps.sh test && bash scripts/test.sh", test
    ci = [ln.strip() for ln in (ROOT / ".ci" / "run").read_text().splitlines()
          if ln.strip() and not ln.lstrip().startswith("#")]
    assert test in ci, ci
    # The test command checks the shipped (auditwheel-repaired) CPU wheel in a fresh environment.
    assert "scripts/check_wheel.sh" in (ROOT / "scripts" / "test.sh").read_text()
    check = (ROOT / "scripts" / "check_wheel.sh").read_text()
    assert "scripts/build_wheels.sh" in check and " cpu" in check
