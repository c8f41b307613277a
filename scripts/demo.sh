#!/usr/bin/env bash
# The first result: installs the Debian packages the command-line tool needs, builds it and its libraries
# only (CUDA only where a GPU is present, for that GPU alone; the CPU backend gives the same answers), and
# runs the main job on the shipped photographs: histograms (text, JSON, a plot), an equalized image and an
# Otsu threshold. Ends by saying where the program is and how to install it.
# Usage: scripts/demo.sh [BUILD_DIR]   (default: build-demo)
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${1:-build-demo}
SECONDS=0
IMGHIST_SETUP_PROFILE=cli scripts/setup.sh "$BUILD_DIR" "IMGHIST_WITH_CUDA=${IMGHIST_WITH_CUDA:-GPU}"
IMGHIST=$BUILD_DIR/tools/imghist/imghist
mkdir -p out
"$IMGHIST" --version
echo "== histogram of samples/images/camera.png (64 bins) =="
"$IMGHIST" hist samples/images/camera.png --bins 64 --format text
"$IMGHIST" hist samples/images/coffee.png --mode channels --plot out/coffee_hist.png --format json -o out/coffee_hist.json
"$IMGHIST" equalize samples/images/camera.png out/camera_equalized.png
"$IMGHIST" threshold samples/images/camera.png out/camera_otsu.png --method otsu
echo "wrote out/coffee_hist.png out/coffee_hist.json out/camera_equalized.png out/camera_otsu.png (${SECONDS} s)"
cat <<MSG

The program is $PWD/$IMGHIST. To call it as \`imghist\`:
  export PATH="$PWD/$BUILD_DIR/tools/imghist:\$PATH"           # this shell only
  cmake --install $BUILD_DIR --prefix ~/.local                   # or install it (then ~/.local/bin on PATH)
The whole project (tests, benchmarks, Python module): scripts/test.sh
MSG
