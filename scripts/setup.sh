#!/usr/bin/env bash
# Installs what imghist needs to build and test on Debian 12, then configures and builds it.
# Usage: scripts/setup.sh [BUILD_DIR] [IMGHIST_WITH_CUDA=ON|OFF|GPU]   (default: build, CUDA when found)
#
# CUDA: the toolkit is taken from $CUDA_HOME (default /usr/local/cuda) or from nvcc on PATH. Without either
# (and with no CUDA_HOME set) the CPU-only configuration is built. IMGHIST_WITH_CUDA=OFF (in the
# environment or as an argument) forces the CPU-only build; IMGHIST_WITH_CUDA=ON makes a missing toolkit an
# error; IMGHIST_WITH_CUDA=GPU builds CUDA only when a toolkit and a GPU are both present, and then for that
# GPU's architecture alone.
#
# IMGHIST_SETUP_PROFILE=cli installs and builds only the command-line tool and its libraries (no tests,
# benchmarks, samples, Python module; none of their packages): what scripts/demo.sh needs.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=build
for arg in "$@"; do
  case "$arg" in
    IMGHIST_WITH_CUDA=*) IMGHIST_WITH_CUDA=${arg#*=} ;;
    *) BUILD_DIR=$arg ;;
  esac
done
WITH_CUDA=${IMGHIST_WITH_CUDA:-auto}

PROFILE=${IMGHIST_SETUP_PROFILE:-all}
# The command-line tool and its libraries.
PACKAGES=(
  build-essential cmake pkg-config
  libopencv-core-dev libopencv-imgproc-dev
  libstb-dev libspng-dev libjpeg62-turbo-dev zlib1g-dev libdeflate-dev libtiff-dev libwebp-dev
  libcli11-dev nlohmann-json3-dev
)
[[ "$PROFILE" == cli ]] || PACKAGES+=(
  # the tests (OpenCV's imgcodecs reads outputs back; Catch2)
  libopencv-imgcodecs-dev catch2
  # the Python module and its tests (cv2 is the tests' reference)
  python3-dev pybind11-dev python3-numpy python3-pytest python3-opencv
  # the scikit-image references (imghist.exposure / imghist.filters, stretch, matching, multi-level Otsu)
  python3-skimage
  # imghist.dask and its LocalCluster tests; the wheel test (pip wheel, a fresh venv)
  python3-dask python3-distributed python3-pip python3-venv
  # fuzzing and sanitizer builds (clang), and PIL as an independent reader in the CLI tests
  clang libclang-rt-14-dev python3-pil strace
)
missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "imghist setup: installing ${missing[*]}"
  SUDO=""
  [[ $(id -u) -ne 0 ]] && SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# The CUDA compiler: $CUDA_HOME/bin/nvcc, else /usr/local/cuda/bin/nvcc, else nvcc on PATH.
NVCC=""
# GPU: CUDA only where a GPU is present (nvidia-smi lists one), for its architecture alone.
GPU_ONLY=0
if [[ "${WITH_CUDA^^}" == GPU ]]; then
  GPU_ONLY=1
  if nvidia-smi -L 2>/dev/null | grep -q '^GPU '; then
    WITH_CUDA=auto
  else
    echo "imghist setup: no GPU here (nvidia-smi lists none): building the CPU-only configuration"
    WITH_CUDA=OFF
  fi
fi
case "${WITH_CUDA^^}" in
  OFF|0|NO|FALSE) WITH_CUDA=OFF ;;
  ON|1|YES|TRUE|AUTO)
    if [[ -n "${CUDA_HOME:-}" ]]; then
      [[ -x "$CUDA_HOME/bin/nvcc" ]] && NVCC="$CUDA_HOME/bin/nvcc"
    elif [[ -x /usr/local/cuda/bin/nvcc ]]; then
      NVCC=/usr/local/cuda/bin/nvcc
    else
      NVCC=$(command -v nvcc || true)
    fi
    if [[ -n "$NVCC" ]]; then
      WITH_CUDA=ON
    elif [[ "${WITH_CUDA^^}" == AUTO && -z "${CUDA_HOME:-}" ]]; then
      echo "imghist setup: no CUDA toolkit (no /usr/local/cuda/bin/nvcc, no nvcc on PATH, CUDA_HOME unset):" \
           "building the CPU-only configuration (IMGHIST_WITH_CUDA=OFF)"
      WITH_CUDA=OFF
    else
      where=${CUDA_HOME:+"$CUDA_HOME/bin/nvcc (CUDA_HOME)"}
      echo "imghist setup: no nvcc at ${where:-"/usr/local/cuda/bin/nvcc or on PATH"}: set CUDA_HOME to the CUDA" \
           "toolkit, or IMGHIST_WITH_CUDA=OFF for the CPU-only build" >&2
      exit 1
    fi ;;
  *) echo "imghist setup: IMGHIST_WITH_CUDA must be ON, OFF or GPU, got '$WITH_CUDA'" >&2; exit 2 ;;
esac

CMAKE_ARGS=(-DCMAKE_BUILD_TYPE=Release -DIMGHIST_WITH_CUDA="$WITH_CUDA")
# The Python packages above are Debian's, for Debian's interpreter: build the module for that one even when
# another python3 comes first on PATH.
if [[ -x /usr/bin/python3 ]]; then CMAKE_ARGS+=(-DPython3_EXECUTABLE=/usr/bin/python3); fi
if [[ "$WITH_CUDA" == ON ]]; then
  export PATH="$(dirname "$NVCC"):$PATH"
  # sm_80 + sm_90 by default (the present GPU's alone with IMGHIST_WITH_CUDA=GPU); IMGHIST_CUDA_ARCHS
  # overrides (e.g. "90" for a faster build, "native").
  ARCHS=${IMGHIST_CUDA_ARCHS:-"80;90-real"}
  (( GPU_ONLY )) && ARCHS=${IMGHIST_CUDA_ARCHS:-native}
  CMAKE_ARGS+=(-DCMAKE_CUDA_ARCHITECTURES="$ARCHS" -DCMAKE_CUDA_COMPILER="$NVCC")
  echo "imghist setup: building with CUDA ($NVCC, architectures $ARCHS) in $BUILD_DIR"
else
  echo "imghist setup: building the CPU-only configuration in $BUILD_DIR"
fi
if [[ "$PROFILE" == cli ]]; then
  CMAKE_ARGS+=(-DIMGHIST_BUILD_TESTS=OFF -DIMGHIST_BUILD_BENCH=OFF -DIMGHIST_BUILD_SAMPLES=OFF
               -DIMGHIST_BUILD_PYTHON=OFF)
fi
cmake -S . -B "$BUILD_DIR" "${CMAKE_ARGS[@]}" ${IMGHIST_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
