#!/usr/bin/env bash
# Sets everything up, builds, and runs the main job on a shipped photograph: the histogram (text and plot)
# and the equalized image. Works with or without a GPU (the CPU backend gives the same answers).
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh build
mkdir -p out
IMGHIST=build/tools/imghist/imghist
$IMGHIST --version
echo "== histogram of samples/images/camera.png (64 bins) =="
$IMGHIST hist samples/images/camera.png --bins 64 --format text
$IMGHIST hist samples/images/coffee.png --mode channels --plot out/coffee_hist.png --format json -o out/coffee_hist.json
$IMGHIST equalize samples/images/camera.png out/camera_equalized.png
$IMGHIST threshold samples/images/camera.png out/camera_otsu.png --method otsu
echo "wrote out/coffee_hist.png out/coffee_hist.json out/camera_equalized.png out/camera_otsu.png"
