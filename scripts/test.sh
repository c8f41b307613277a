#!/usr/bin/env bash
# Sets everything up, builds, checks that an installed imghist is usable from another CMake project
# (samples/consumer), then runs the whole test suite through ctest (CUDA cases are skipped without a GPU).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
echo "== installed package: find_package(imghist) from samples/consumer =="
rm -rf build/_install build/_consumer
cmake --install build --prefix build/_install >/dev/null
cmake -S samples/consumer -B build/_consumer -DCMAKE_PREFIX_PATH="$PWD/build/_install" >/dev/null
cmake --build build/_consumer -j"$(nproc)" >/dev/null
build/_consumer/imghist_consumer samples/images/camera.png | head -c 200; echo
build/_consumer/imghist_consumer_filters
echo "== tests =="
cd build && ctest --output-on-failure -j"$(nproc)"
