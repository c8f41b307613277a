#!/usr/bin/env bash
# python_gpu_check.sh [BUILD_DIR]   (default: build-python-gpu)
#
# Builds the imghist Python module on a CUDA host that has no OpenCV C++ libraries, and runs the Python tests
# there, the device-array cases (CuPy, PyTorch) included. Run from the repository root (or a bundle's
# source/ directory, see scripts/bundle_gpu.sh). Needs no network.
#
# Needs: cmake >= 3.24, a C++17 compiler, nvcc ($CUDA_HOME/bin, /usr/local/cuda/bin or PATH), a Python 3
# ($PYTHON, default python3) with its headers, numpy, pytest and pybind11 (pip's `python3 -m pybind11
# --cmakedir` is used), opencv-python(-headless) for the cv2 references, and CuPy and/or PyTorch for the
# device-array cases (each case skips itself, with the reason, when its framework is missing); scikit-image
# and dask (pure Python: Debian's packages or pip's) for the namespaces' cases; pip and venv for the CUDA
# wheel's check (python/tests/wheel_check.py --cuda; its CMake build in BUILD_DIR/wheel-check).
#
# What is built: libimghist (without libgpuhist, the OpenCV layer) and the module (IMGHIST_WITH_OPENCV=OFF;
# the CLI, the C++ tests, benchmarks and samples are off). The CUDA
# architecture is the host's GPU ("native"); IMGHIST_CUDA_ARCHS overrides; IMGHIST_CMAKE_ARGS adds cmake arguments.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build-python-gpu}
# A relative BUILD_DIR is taken from the repository root; an absolute one as given.
[[ "$BUILD_DIR" == /* ]] || BUILD_DIR="$PWD/$BUILD_DIR"
PY=${PYTHON:-python3}

die() { echo "python_gpu_check: $*" >&2; exit 1; }

NVCC=""
if [[ -n "${CUDA_HOME:-}" && -x "$CUDA_HOME/bin/nvcc" ]]; then NVCC=$CUDA_HOME/bin/nvcc
elif [[ -x /usr/local/cuda/bin/nvcc ]]; then NVCC=/usr/local/cuda/bin/nvcc
else NVCC=$(command -v nvcc || true); fi
[[ -n "$NVCC" ]] || die "no nvcc (set CUDA_HOME to the CUDA toolkit)"
PY_EXE=$(command -v "$PY") || die "no Python interpreter '$PY' (set PYTHON)"
"$PY_EXE" - <<'PYCHECK' || die "the Python above lacks something the build or the tests need"
import os, sysconfig, importlib
inc = sysconfig.get_paths()["include"]
missing = [] if os.path.exists(os.path.join(inc, "Python.h")) else [f"Python headers ({inc}/Python.h)"]
for m in ["numpy", "pytest", "pybind11", "cv2"]:
    try:
        importlib.import_module(m)
    except Exception as e:
        missing.append(f"{m} ({e})")
if missing:
    print("missing:", "; ".join(missing))
    raise SystemExit(1)
PYCHECK
PYBIND11_DIR=$("$PY_EXE" -m pybind11 --cmakedir)

echo "== configure ($NVCC, $PY_EXE, pybind11 at $PYBIND11_DIR) =="
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release \
  -DIMGHIST_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$NVCC" -DCMAKE_CUDA_ARCHITECTURES="${IMGHIST_CUDA_ARCHS:-native}" \
  -DIMGHIST_WITH_OPENCV=OFF -DIMGHIST_BUILD_TOOLS=OFF -DIMGHIST_BUILD_TESTS=OFF -DIMGHIST_BUILD_BENCH=OFF \
  -DIMGHIST_BUILD_SAMPLES=OFF -DIMGHIST_BUILD_PYTHON=ON \
  -DPython3_EXECUTABLE="$PY_EXE" -Dpybind11_DIR="$PYBIND11_DIR" ${IMGHIST_CMAKE_ARGS:-} >/dev/null
echo "== build =="
cmake --build "$BUILD_DIR" -j"$(nproc)" --target imghist_python

export PYTHONPATH="$BUILD_DIR/python${PYTHONPATH:+:$PYTHONPATH}"
export IMGHIST_SAMPLES_DIR="$PWD/samples/images"
echo "== environment =="
"$PY_EXE" - <<'PYENV'
import importlib, numpy, imghist
print("imghist:", imghist.__file__, "| built with CUDA:", imghist.built_with_cuda(),
      "| devices:", imghist.cuda_device_count(), imghist._imghist.cuda_device_name(0))
print("numpy", numpy.__version__)
for m in ["cv2", "cupy", "torch"]:
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "unavailable:", e)
PYENV
echo "== tests (python/tests; device arrays in test_device_arrays.py, CuPy in test_skimage_exact.py and test_dask.py) =="
status=0
"$PY_EXE" -m pytest -v -rs -p no:cacheprovider python/tests || status=1
echo "== the CUDA wheel: pip wheel, a fresh venv, device calls from it (skipped without pip and venv) =="
"$PY_EXE" python/tests/wheel_check.py --source . --work "$BUILD_DIR/wheel-check" --cuda || [[ $? == 77 ]] || status=1
exit $status
