"""PEP 517 build backend of the imghist Python package (pyproject.toml names it, in-tree).

It builds the module with the project's own CMake and nothing else: no package is downloaded or required
beyond the system's CMake, C++ compiler, Python headers and pybind11 (Debian: cmake, build-essential,
python3-dev, pybind11-dev) and, for the module's image files (imghist.io, imread / imwrite,
imghist.dask.process_files: the command-line tool's file layer and per-file work), the libraries the tool
builds on (Debian: libopencv-core-dev libopencv-imgproc-dev libcli11-dev nlohmann-json3-dev libspng-dev
libjpeg62-turbo-dev libtiff-dev libwebp-dev libdeflate-dev libstb-dev zlib1g-dev). Only the module and the
libraries it links are built — not the CLI program, the tests, the benchmarks or the samples, and not
OpenCV's gpuhist:: layer.

The wheel holds imghist/ (the Python files, type stubs, py.typed, the extension) and libimghist beside
the extension, which finds it through its RPATH ($ORIGIN); the file layer (imghist_io) is linked in
statically, and the system's codec and OpenCV libraries are used where they are installed: installing the
wheel copies files and nothing else, and no LD_LIBRARY_PATH is needed.

Settings, as pip config settings (pip wheel --config-settings key=value) or environment variables:
    cuda / IMGHIST_WITH_CUDA         ON, OFF or auto (default): build the CUDA backend. auto builds it when
                                     a CUDA toolkit is found ($CUDA_HOME/bin/nvcc, /usr/local/cuda/bin/nvcc
                                     or nvcc on PATH); that build takes several minutes, the CPU-only one
                                     a few minutes with the image files.
    cuda-archs / IMGHIST_CUDA_ARCHS  CUDA architectures (default: the project's, "80;90-real")
    files / IMGHIST_PYTHON_FILES     ON (default) or OFF: the image files (needs the libraries above; OFF
                                     builds a module without them, e.g. on a host without OpenCV's C++
                                     libraries)
    build-dir / IMGHIST_BUILD_DIR    CMake build directory, kept between builds so that rebuilds are
                                     incremental (default: build-wheel/<python>-<cpu|cuda> in the source tree)
    cmake-args / CMAKE_ARGS          more CMake arguments
    jobs / CMAKE_BUILD_PARALLEL_LEVEL  parallel compile jobs (default: the number of CPUs)
ccache is used as the compiler launcher when it is on PATH (IMGHIST_CCACHE=OFF: not).

Progress: each stage is printed with what it builds and why (pip shows it with -v; without -v, pip hides a
build's output behind a spinner, so the stages are also written to the terminal, when there is one); the
whole CMake output goes to <build-dir>/wheel-build.log.
"""
import base64
import hashlib
import io
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tarfile
import time
import zipfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


# ---- project metadata -----------------------------------------------------------------------------------------

def _project_version():
    m = re.search(r"project\(imghist\s+VERSION\s+([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    if not m:
        raise RuntimeError("imghist build: no project(imghist VERSION x.y.z) in CMakeLists.txt")
    return m.group(1)


def _pyproject():
    try:
        import tomllib
    except ImportError:  # Python < 3.11
        try:
            import tomli as tomllib
        except ImportError:
            raise RuntimeError("imghist build: reading pyproject.toml needs Python 3.11 or the tomli package "
                               "(Debian: python3-tomli)") from None
    with open(ROOT / "pyproject.toml", "rb") as f:
        return tomllib.load(f)["project"]


def _metadata():
    """The core metadata (METADATA / PKG-INFO) from pyproject.toml's [project] table."""
    p = _pyproject()
    lines = ["Metadata-Version: 2.1", f"Name: {p['name']}", f"Version: {_project_version()}"]
    if "description" in p:
        lines.append(f"Summary: {p['description']}")
    for url_name, url in p.get("urls", {}).items():
        lines.append(f"Project-URL: {url_name}, {url}")
    if "license" in p and "text" in p["license"]:
        lines.append(f"License: {p['license']['text']}")
    for c in p.get("classifiers", []):
        lines.append(f"Classifier: {c}")
    if "requires-python" in p:
        lines.append(f"Requires-Python: {p['requires-python']}")
    for d in p.get("dependencies", []):
        lines.append(f"Requires-Dist: {d}")
    for extra, deps in p.get("optional-dependencies", {}).items():
        lines.append(f"Provides-Extra: {extra}")
        for d in deps:
            lines.append(f'Requires-Dist: {d}; extra == "{extra}"')
    return "\n".join(lines) + "\n"


def _dist_name():
    return f"imghist-{_project_version()}"


def _wheel_tag():
    impl = "cp" if sys.implementation.name == "cpython" else sys.implementation.name[:2]
    py = f"{impl}{sys.version_info.major}{sys.version_info.minor}"
    abi = py + getattr(sys, "abiflags", "")
    plat = sysconfig.get_platform().replace("-", "_").replace(".", "_")
    return f"{py}-{abi}-{plat}"


# ---- settings and progress ------------------------------------------------------------------------------------

def _setting(config_settings, key, env, default=None):
    if config_settings and config_settings.get(key) not in (None, ""):
        return str(config_settings[key])
    return os.environ.get(env) or default


class _Progress:
    """Stage lines on stderr (pip -v shows them), on the terminal when stderr is captured, and in the log."""

    def __init__(self, log_path):
        self.log = open(log_path, "a", encoding="utf-8")
        self.tty = None
        if not sys.stderr.isatty():
            try:
                self.tty = open("/dev/tty", "w")
            except OSError:
                self.tty = None

    def say(self, message):
        line = f"imghist build: {message}"
        print(line, file=sys.stderr, flush=True)
        self.log.write(line + "\n")
        self.log.flush()
        if self.tty is not None:
            self.tty.write("\n" + line + "\n")
            self.tty.flush()

    def run(self, cmd, what):
        """Runs a command; its output goes to stderr and the log. Fails with the log's tail."""
        self.log.write("$ " + shlex.join(str(c) for c in cmd) + "\n")
        self.log.flush()
        tail = []
        with subprocess.Popen([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                              errors="replace") as proc:
            for line in proc.stdout:
                sys.stderr.write(line)
                self.log.write(line)
                tail = (tail + [line])[-40:]
        self.log.flush()
        if proc.returncode != 0:
            raise RuntimeError(f"imghist build: {what} failed (exit {proc.returncode}); the end of its output:\n"
                               + "".join(tail) + f"the whole log: {self.log.name}")

    def close(self):
        self.log.close()
        if self.tty is not None:
            self.tty.close()


def _find_nvcc():
    cuda_home = os.environ.get("CUDA_HOME")
    for candidate in ([Path(cuda_home) / "bin" / "nvcc"] if cuda_home else []) + [Path("/usr/local/cuda/bin/nvcc")]:
        if candidate.is_file() and os.access(candidate, os.X_OK):
            return str(candidate)
    return shutil.which("nvcc")


def _cuda_choice(config_settings):
    """(nvcc or None, why) for the cuda setting."""
    want = _setting(config_settings, "cuda", "IMGHIST_WITH_CUDA", "auto").upper()
    if want in ("OFF", "0", "NO", "FALSE"):
        return None, "CPU-only build (IMGHIST_WITH_CUDA=OFF)"
    nvcc = _find_nvcc()
    if want in ("ON", "1", "YES", "TRUE"):
        if not nvcc:
            raise RuntimeError("imghist build: IMGHIST_WITH_CUDA=ON but no nvcc was found (set CUDA_HOME to the "
                               "CUDA toolkit)")
        return nvcc, "IMGHIST_WITH_CUDA=ON"
    if want != "AUTO":
        raise RuntimeError(f"imghist build: IMGHIST_WITH_CUDA must be ON, OFF or auto, got {want!r}")
    if nvcc:
        return nvcc, f"a CUDA toolkit was found ({nvcc}; IMGHIST_WITH_CUDA=OFF builds the CPU-only module)"
    return None, "CPU-only build: no CUDA toolkit found (IMGHIST_WITH_CUDA=ON with CUDA_HOME set builds the CUDA backend)"


def _pybind11_dir():
    """pybind11's CMake directory when pybind11 comes from pip (a system pybind11 is found by CMake itself)."""
    try:
        import pybind11
        return pybind11.get_cmake_dir()
    except Exception:
        return None


# ---- the build ------------------------------------------------------------------------------------------------

def _build(config_settings):
    """Builds the module with CMake; returns the list of (built file, path in the wheel)."""
    nvcc, why = _cuda_choice(config_settings)
    flavour = "cuda" if nvcc else "cpu"
    default_dir = ROOT / "build-wheel" / f"{_wheel_tag().split('-')[0]}-{flavour}"
    build_dir = Path(_setting(config_settings, "build-dir", "IMGHIST_BUILD_DIR", str(default_dir))).resolve()
    build_dir.mkdir(parents=True, exist_ok=True)
    progress = _Progress(build_dir / "wheel-build.log")
    try:
        started = time.monotonic()
        cmake = shutil.which("cmake")
        if not cmake:
            raise RuntimeError("imghist build: cmake (3.24 or newer) is not on PATH (Debian: apt install cmake)")
        files = _setting(config_settings, "files", "IMGHIST_PYTHON_FILES", "ON").upper() not in ("OFF", "0", "NO",
                                                                                                 "FALSE")
        # The image files are the command-line tool's: its objects are configured (and only what the module
        # links is compiled).
        on_off = "ON" if files else "OFF"
        args = [cmake, "-S", ROOT, "-B", build_dir, "-DCMAKE_BUILD_TYPE=Release",
                f"-DIMGHIST_BUILD_TOOLS={on_off}", "-DIMGHIST_BUILD_TESTS=OFF", "-DIMGHIST_BUILD_BENCH=OFF",
                "-DIMGHIST_BUILD_SAMPLES=OFF", "-DIMGHIST_BUILD_FUZZERS=OFF", "-DIMGHIST_INSTALL=OFF",
                f"-DIMGHIST_WITH_OPENCV={on_off}", f"-DIMGHIST_PYTHON_FILES={on_off}", "-DIMGHIST_BUILD_PYTHON=ON",
                f"-DPython3_EXECUTABLE={sys.executable}",
                # The binaries carry their install RPATH ($ORIGIN) from the start: they are copied, not installed.
                "-DIMGHIST_PYTHON_SELF_CONTAINED=ON", "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
                f"-DIMGHIST_WITH_CUDA={'ON' if nvcc else 'OFF'}"]
        archs = None
        if nvcc:
            args.append(f"-DCMAKE_CUDA_COMPILER={nvcc}")
            archs = _setting(config_settings, "cuda-archs", "IMGHIST_CUDA_ARCHS")
            if archs:
                args.append(f"-DCMAKE_CUDA_ARCHITECTURES={archs}")
        ccache = shutil.which("ccache")
        if ccache and os.environ.get("IMGHIST_CCACHE", "ON").upper() not in ("OFF", "0", "NO", "FALSE"):
            args += [f"-DCMAKE_{lang}_COMPILER_LAUNCHER={ccache}" for lang in ("C", "CXX", "CUDA")]
        pybind11_dir = _pybind11_dir()
        if pybind11_dir:
            args.append(f"-Dpybind11_DIR={pybind11_dir}")
        args += shlex.split(_setting(config_settings, "cmake-args", "CMAKE_ARGS", ""))
        jobs = _setting(config_settings, "jobs", "CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))

        what = (f"the CUDA backend (architectures {archs or 'the project default, 80;90-real'}); several minutes"
                if nvcc else "the CPU backend; a few minutes on 2 cores, seconds when rebuilt")
        progress.say(f"building the imghist module with {what}. Why: {why}.")
        progress.say("with the image files (the command-line tool's codecs and per-file work; "
                     "IMGHIST_PYTHON_FILES=OFF leaves them out)" if files else
                     "without the image files (IMGHIST_PYTHON_FILES=OFF)")
        progress.say(f"CMake build directory {build_dir} (kept: rebuilds are incremental), log "
                     f"{build_dir / 'wheel-build.log'}, {jobs} jobs{', ccache' if ccache else ''}")
        progress.say("configuring (CMake)")
        progress.run(args, "configuring with CMake (needs cmake, a C++17 compiler, python3-dev and pybind11-dev"
                     + (", and for the image files the libraries named in python/build_backend; "
                        "IMGHIST_PYTHON_FILES=OFF builds without them)" if files else ")"))
        progress.say(f"compiling libimghist and the extension ({time.monotonic() - started:.0f} s so far)")
        progress.run([cmake, "--build", build_dir, "--target", "imghist_python", "-j", jobs], "compiling")
        progress.say(f"built in {time.monotonic() - started:.0f} s; packing the wheel")
        manifest = build_dir / "python" / "wheel_files.txt"
        files = []
        for line in manifest.read_text().splitlines():
            if line.strip():
                built, arcname = line.split("\t")
                files.append((Path(built), arcname))
        return files
    finally:
        progress.close()


def _record_line(arcname, data):
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{arcname},sha256={digest},{len(data)}"


def _write_dist_info(directory):
    info = Path(directory) / f"{_dist_name()}.dist-info"
    info.mkdir(parents=True, exist_ok=True)
    (info / "METADATA").write_text(_metadata())
    (info / "WHEEL").write_text(_wheel_file())
    return info.name


def _wheel_file():
    return (f"Wheel-Version: 1.0\nGenerator: imghist_build_backend ({_project_version()})\n"
            f"Root-Is-Purelib: false\nTag: {_wheel_tag()}\n")


# ---- PEP 517 hooks --------------------------------------------------------------------------------------------

def get_requires_for_build_wheel(config_settings=None):
    return []


def get_requires_for_build_sdist(config_settings=None):
    return []


def prepare_metadata_for_build_wheel(metadata_directory, config_settings=None):
    return _write_dist_info(metadata_directory)


def build_wheel(wheel_directory, config_settings=None, metadata_directory=None):
    files = _build(config_settings)
    info = f"{_dist_name()}.dist-info"
    name = f"{_dist_name()}-{_wheel_tag()}.whl"
    path = Path(wheel_directory) / name
    record = []
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as whl:
        def add(arcname, data, mode=0o644):
            zi = zipfile.ZipInfo(arcname, date_time=(2020, 1, 1, 0, 0, 0))
            zi.compress_type = zipfile.ZIP_DEFLATED
            zi.external_attr = (0o100000 | mode) << 16
            whl.writestr(zi, data)
            record.append(_record_line(arcname, data))

        for built, arcname in files:
            data = built.read_bytes()
            add(arcname, data, 0o755 if arcname.endswith(".so") or ".so." in arcname else 0o644)
        add(f"{info}/METADATA", _metadata().encode())
        add(f"{info}/WHEEL", _wheel_file().encode())
        add(f"{info}/top_level.txt", b"imghist\n")
        record.append(f"{info}/RECORD,,")
        zi = zipfile.ZipInfo(f"{info}/RECORD", date_time=(2020, 1, 1, 0, 0, 0))
        zi.external_attr = (0o100644) << 16
        whl.writestr(zi, "\n".join(record) + "\n")
    return name


def _source_files():
    """The files of the source tree: git's list when this is a git checkout, else everything but builds."""
    try:
        out = subprocess.run(["git", "-C", str(ROOT), "ls-files", "-z"], capture_output=True, check=True).stdout
        return [f for f in out.decode().split("\0") if f and (ROOT / f).is_file()]
    except (OSError, subprocess.CalledProcessError):
        skip = re.compile(r"^(build[^/]*|\.git|bundle|out)(/|$)")
        return [str(p.relative_to(ROOT)) for p in sorted(ROOT.rglob("*"))
                if p.is_file() and not skip.match(str(p.relative_to(ROOT)))]


def build_sdist(sdist_directory, config_settings=None):
    name = f"{_dist_name()}.tar.gz"
    with tarfile.open(Path(sdist_directory) / name, "w:gz", format=tarfile.PAX_FORMAT) as tar:
        for rel in _source_files():
            tar.add(ROOT / rel, arcname=f"{_dist_name()}/{rel}", recursive=False)
        pkg_info = _metadata().encode()
        ti = tarfile.TarInfo(f"{_dist_name()}/PKG-INFO")
        ti.size = len(pkg_info)
        ti.mtime = int(time.time())
        tar.addfile(ti, io.BytesIO(pkg_info))
    return name
