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
# the CLI, the C++ tests, benchmarks and samples are off, and so the module's image files: their tests skip
# themselves). Then the benchmarks, python/bench/*: bench_batch_equalize.py (imghist.batch.equalizeHist on a CuPy
# (256, 480, 640) batch against the C++ batch call and torchvision; IMGHIST_BATCH_BENCH_JSON names a
# batch_filters_bench --json output to print beside it), bench_overhead.py (cuda and cpu),
# bench_skimage_namespace.py, bench_dask_histogram.py (with dask) and bench_process_files.py (only in a module with
# image files); each prints its table, and their JSON goes to BUILD_DIR/bench. The CUDA
# architecture is the host's GPU ("native"); IMGHIST_CUDA_ARCHS overrides; IMGHIST_CMAKE_ARGS adds cmake arguments;
# PYTEST_ARGS adds pytest arguments (e.g. "-n 8" with pytest-xdist: a crash fails one test, not the run);
# SKIP_BENCH=1 leaves the benchmarks out.
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
for m in ["cv2", "cupy", "torch", "skimage", "pybind11"]:
    try:
        print(m, importlib.import_module(m).__version__)
    except Exception as e:
        print(m, "unavailable:", e)
PYENV
echo "== tests (python/tests; device arrays in test_device_arrays.py and test_batch.py, CuPy in test_skimage_exact.py and test_dask.py) =="
status=0
"$PY_EXE" -m pytest -v -rs -p no:cacheprovider ${PYTEST_ARGS:-} python/tests || status=1
echo "== the CUDA wheel: pip wheel, a fresh venv, device calls from it (skipped without pip and venv) =="
"$PY_EXE" python/tests/wheel_check.py --source . --work "$BUILD_DIR/wheel-check" --cuda --no-files || [[ $? == 77 ]] || status=1
# The benchmarks (python/bench/*): each prints its table; JSON results go to BUILD_DIR/bench. One that cannot run
# here says why (a missing package, or a module built without image files) and is not a failure.
[[ "${SKIP_BENCH:-0}" == 1 ]] && { echo "== benchmarks skipped (SKIP_BENCH=1) =="; exit $status; }
BENCH_OUT="$BUILD_DIR/bench"
mkdir -p "$BENCH_OUT"
bench() {  # bench NAME "MODULES NEEDED" ARGS...
  local name=$1 needs=$2; shift 2
  echo "== benchmark: $name =="
  if ! "$PY_EXE" -c "import importlib, sys; [importlib.import_module(m) for m in sys.argv[1:]]" $needs 2>/dev/null; then
    echo "skipped: needs $needs"; return 0
  fi
  "$PY_EXE" "$@" || { echo "benchmark $name failed"; status=1; }
}
for ds in uniform photo; do
  bench "imghist.batch.equalizeHist, (256, 480, 640) uint8 CuPy, $ds, against the C++ batch call and torchvision" \
    "cupy cv2" python/bench/bench_batch_equalize.py --dataset "$ds" --json "$BENCH_OUT/batch_equalize_$ds.json" \
    ${IMGHIST_BATCH_BENCH_JSON:+--bench "$IMGHIST_BATCH_BENCH_JSON"}
done
for backend in cuda cpu; do
  bench "per-call overhead of the Python layer, backend $backend" "numpy" python/bench/bench_overhead.py \
    --backend "$backend"
done
bench "imghist.exposure / imghist.filters against scikit-image" "skimage cv2" python/bench/bench_skimage_namespace.py \
  --rounds 3 --datasets uniform,gaussian32,photo --json "$BENCH_OUT/skimage_namespace.json"
bench "imghist.dask.histogram against dask.array.histogram, LocalCluster of $(nproc) x 1" "dask distributed cv2" \
  python/bench/bench_dask_histogram.py --gib 2 --rounds 2 --datasets uniform,gaussian32,photo --workers "$(nproc)" \
  --json "$BENCH_OUT/dask_histogram.json"
if "$PY_EXE" -c "import imghist, sys; sys.exit(0 if imghist._imghist.has_files else 1)"; then
  bench "imghist.dask.process_files, 1 and $(nproc) workers" "distributed PIL" python/bench/bench_process_files.py \
    --workers "1,$(nproc)" --json "$BENCH_OUT/process_files.json"
else
  echo "== benchmark: imghist.dask.process_files: skipped (the module is built without image files: IMGHIST_WITH_OPENCV=OFF) =="
fi
echo "== benchmark results (JSON) in $BENCH_OUT =="
exit $status
