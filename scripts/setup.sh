#!/usr/bin/env bash
# Installs what imghist needs to build and test on Debian 12 (CUDA toolkit expected at /usr/local/cuda),
# then configures and builds it. Usage: scripts/setup.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build}

PACKAGES=(
  build-essential cmake pkg-config
  libopencv-core-dev libopencv-imgproc-dev libopencv-imgcodecs-dev
  catch2 libstb-dev libspng-dev libjpeg62-turbo-dev zlib1g-dev libdeflate-dev libtiff-dev libwebp-dev
  libcli11-dev nlohmann-json3-dev
  clang libclang-rt-14-dev python3-pil strace  # python3-pil: the CLI tests read pixels and metadata back with PIL
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

CUDA_HOME=${CUDA_HOME:-/usr/local/cuda}
if [[ ! -x "$CUDA_HOME/bin/nvcc" ]]; then
  echo "imghist setup: no nvcc at $CUDA_HOME/bin/nvcc (set CUDA_HOME to the CUDA toolkit)" >&2
  exit 1
fi
export PATH="$CUDA_HOME/bin:$PATH"

# sm_80 + sm_90 by default; IMGHIST_CUDA_ARCHS overrides (e.g. "90" for a faster build, "native").
ARCHS=${IMGHIST_CUDA_ARCHS:-"80;90-real"}
cmake -S . -B "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES="$ARCHS" \
  -DCMAKE_CUDA_COMPILER="$CUDA_HOME/bin/nvcc" ${IMGHIST_CMAKE_ARGS:-} >/dev/null
cmake --build "$BUILD_DIR" -j"$(nproc)"
