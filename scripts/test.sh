#!/usr/bin/env bash
# Sets everything up, builds, and runs the whole test suite through ctest: the library, filter and CLI tests
# (CUDA cases are skipped without a GPU) and the consumer builds (label "consumer": an installed package used
# through find_package with components and through pkg-config, and parent projects using add_subdirectory
# and FetchContent).
# Usage: scripts/test.sh [BUILD_DIR] [IMGHIST_WITH_CUDA=ON|OFF]   (as scripts/setup.sh; default: build)
# IMGHIST_CTEST_ARGS: more ctest arguments (e.g. "-LE consumer").
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
echo "== tests =="
cd "$BUILD_DIR" && ctest --output-on-failure -j"$(nproc)" ${IMGHIST_CTEST_ARGS:-}
