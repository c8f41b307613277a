#!/usr/bin/env bash
# Sets everything up, builds, checks that an installed imghist is usable from another CMake project
# (samples/consumer), then runs the whole test suite through ctest (CUDA cases are skipped without a GPU).
# Usage: scripts/test.sh [BUILD_DIR] [IMGHIST_WITH_CUDA=ON|OFF]   (as scripts/setup.sh; default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=build
for arg in "$@"; do
  case "$arg" in
    IMGHIST_WITH_CUDA=*) ;;
    *) BUILD_DIR=$arg ;;
  esac
done
scripts/setup.sh "$@"
echo "== installed package: find_package(imghist) from samples/consumer =="
BUILD_ABS=$(cd "$BUILD_DIR" && pwd)
rm -rf "$BUILD_ABS/_install" "$BUILD_ABS/_consumer"
cmake --install "$BUILD_ABS" --prefix "$BUILD_ABS/_install" >/dev/null
cmake -S samples/consumer -B "$BUILD_ABS/_consumer" -DCMAKE_PREFIX_PATH="$BUILD_ABS/_install" >/dev/null
cmake --build "$BUILD_DIR/_consumer" -j"$(nproc)" >/dev/null
"$BUILD_DIR/_consumer/imghist_consumer" samples/images/camera.png | head -c 200; echo
"$BUILD_DIR/_consumer/imghist_consumer_filters"
echo "== tests =="
cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)"
