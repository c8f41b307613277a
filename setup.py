"""pip install for the imghist Python module: the module is built by this project's CMake (nothing is
downloaded; pybind11 comes from the system, e.g. Debian's pybind11-dev).

    pip install --no-build-isolation .

--no-build-isolation makes pip use the installed setuptools and wheel instead of fetching them (on Debian:
python3-setuptools, python3-wheel; see the README for the whole offline route). The CUDA backend is built
when CMake finds nvcc (CUDA_HOME or PATH), otherwise the CPU-only build. Extra CMake arguments come from the
environment variable CMAKE_ARGS (e.g. CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=90"), the build parallelism
from CMAKE_BUILD_PARALLEL_LEVEL (default: the number of CPUs).

The package installed is self-contained: imghist/ holds the Python files, the extension and the shared
library it links (libimghist), which it finds next to itself ($ORIGIN). OpenCV is not
needed (libgpuhist, the OpenCV-facing layer, is not built: Python does not use it).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = Path(__file__).resolve().parent
(ROOT / "build-pip").mkdir(exist_ok=True)


def project_version():
    m = re.search(r"project\(imghist VERSION ([0-9.]+)", (ROOT / "CMakeLists.txt").read_text())
    return m.group(1)


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        out_dir = Path(self.get_ext_fullpath(ext.name)).resolve().parent
        build_dir = Path(self.build_temp).resolve() / "cmake"
        configure = [
            "cmake", "-S", str(ROOT), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
            "-DIMGHIST_BUILD_TOOLS=OFF", "-DIMGHIST_BUILD_TESTS=OFF", "-DIMGHIST_BUILD_BENCH=OFF",
            "-DIMGHIST_BUILD_SAMPLES=OFF", "-DIMGHIST_WITH_OPENCV=OFF", "-DIMGHIST_BUILD_PYTHON=ON", f"-DPython3_EXECUTABLE={sys.executable}",
            # Binaries carry their install RPATH ($ORIGIN) from the start: they are copied, not installed.
            "-DIMGHIST_PYTHON_SELF_CONTAINED=ON", "-DCMAKE_BUILD_WITH_INSTALL_RPATH=ON",
        ] + shlex.split(os.environ.get("CMAKE_ARGS", ""))
        subprocess.check_call(configure)
        jobs = os.environ.get("CMAKE_BUILD_PARALLEL_LEVEL", str(os.cpu_count() or 1))
        subprocess.check_call(["cmake", "--build", str(build_dir), "--target", "imghist_python", "-j", jobs])
        # The extension and the libraries it links (by their sonames), side by side.
        out_dir.mkdir(parents=True, exist_ok=True)
        built = build_dir / "python" / "imghist"
        for so in built.glob("_imghist*.so"):
            shutil.copy2(so, out_dir / so.name)
        for lib_dir, name in [("src", "libimghist")]:
            sonames = [p for p in (build_dir / lib_dir).glob(f"{name}.so.*") if not p.is_symlink()]
            if not sonames:
                raise RuntimeError(f"{name}.so was not built in {build_dir / lib_dir}")
            soname = subprocess.check_output(["objdump", "-p", str(sonames[0])], text=True)
            soname = re.search(r"SONAME\s+(\S+)", soname).group(1)
            shutil.copy2(sonames[0], out_dir / soname)


setup(
    name="imghist",
    version=project_version(),
    description="Image histograms and histogram filters (equalize, Otsu, Triangle, CLAHE), bit-exact with "
                "OpenCV, on the CPU or a CUDA GPU",
    packages=["imghist"],
    package_dir={"imghist": "python/imghist"},
    ext_modules=[Extension("imghist._imghist", sources=[])],
    cmdclass={"build_ext": CMakeBuild},
    install_requires=["numpy"],
    python_requires=">=3.8",
    zip_safe=False,
    # Out of the way of the CMake build directory (build/) a checkout usually has.
    options={"build": {"build_base": "build-pip"}, "egg_info": {"egg_base": "build-pip"}},
)
