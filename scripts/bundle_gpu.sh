#!/usr/bin/env bash
# bundle_gpu.sh BUILD_DIR OUT_DIR
#
# Packs what a GPU host needs to run the test executables, the benchmark and the imghist CLI of a build,
# without a compiler, OpenCV or any other development package there:
#
#   OUT_DIR/bin/        imghist, imghist-bench, filters_bench, batch_filters_bench, gpuhist_calls_bench (those built)
#   OUT_DIR/tests/      every test_* executable of BUILD_DIR/tests (and its subdirectories) but the CLI's
#                       file tests (test_cli, test_cli_formats, test_cli_safety, test_cli_limits: CPU work,
#                       read back with OpenCV's imgcodecs, whose GDAL, ICU and video codecs would be most of
#                       the bundle; CI runs them)
#   OUT_DIR/lib/        libimghist_timeline.so (bench/timeline) when built, and every shared library ldd
#                       resolves for them all, except the system's own
#                       (libc, libm, libstdc++, libgcc_s, libpthread, libdl, librt, ld-linux) and the
#                       driver's (libcuda, libnvidia*)
#   OUT_DIR/samples/images/   the sample photographs (tests and the benchmark's "photo" data set)
#   OUT_DIR/source/     the project's sources (the working tree's files that git does not ignore), for
#                       builds on the GPU host: `cd OUT_DIR/source && scripts/python_gpu_check.sh` builds
#                       the Python module for that host's Python and runs its tests there
#   OUT_DIR/tests/skimage_reference.py  the CLI against scikit-image, for hosts whose python3 has numpy,
#                       PIL and skimage: python3 tests/skimage_reference.py --imghist bin/imghist
#                       --samples samples/images --work /tmp/sk --device cuda
#   OUT_DIR/bench/torchvision_equalize.py  torchvision's batched equalize, the peer of batch_filters_bench
#   OUT_DIR/bench_cli.sh      the CLI's GPU-host targets in one call (with bench_inputs.py, bench_cli_peers.sh
#                             and bench/torchvision_jpeg_folder.py beside it): OUT_DIR/bench_cli.sh [-s ...]
#   OUT_DIR/run_tests.sh      runs every test executable and prints a summary
#   OUT_DIR/run_gpu_suite.sh  the full GPU suite (copy of scripts/run_gpu_suite.sh)
#   OUT_DIR/env.sh            `source` it to set LD_LIBRARY_PATH and the sample directory
#   OUT_DIR/MANIFEST.txt      what was bundled, from which commit
#
# On the GPU host:  OUT_DIR/run_gpu_suite.sh OUT_DIR RESULTS_DIR
set -euo pipefail

usage() { echo "usage: $0 BUILD_DIR OUT_DIR" >&2; exit 64; }
[[ $# -eq 2 ]] || usage
BUILD_DIR=$(cd "$1" && pwd) || usage
OUT_DIR=$2
SCRIPT_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
SOURCE_DIR=$(cd "$SCRIPT_DIR/.." && pwd)

mkdir -p "$OUT_DIR"
OUT_DIR=$(cd "$OUT_DIR" && pwd)
rm -rf "${OUT_DIR:?}/bin" "${OUT_DIR:?}/tests" "${OUT_DIR:?}/lib" "${OUT_DIR:?}/samples" "${OUT_DIR:?}/source"
mkdir -p "$OUT_DIR/bin" "$OUT_DIR/tests" "$OUT_DIR/lib" "$OUT_DIR/samples/images"

is_elf_exe() { [[ -f "$1" && -x "$1" ]] && head -c 4 "$1" | grep -q $'\x7fELF'; }

# ---- executables -------------------------------------------------------------------------------------------
declare -a EXES=()
while IFS= read -r -d '' f; do
    if is_elf_exe "$f"; then
        cp -p "$f" "$OUT_DIR/tests/"
        EXES+=("$OUT_DIR/tests/$(basename "$f")")
    fi
done < <(find "$BUILD_DIR/tests" -maxdepth 2 -type f -name 'test_*' ! -name '*.*' ! -name test_cli ! -name test_cli_formats ! -name test_cli_safety ! -name test_cli_limits \
              -print0 2>/dev/null | sort -z)

for name in imghist imghist-bench filters_bench batch_filters_bench gpuhist_calls_bench; do
    # prefer the copy next to the CLI (tools/imghist), then any other in the build tree
    found=""
    for cand in "$BUILD_DIR/tools/imghist/$name" "$BUILD_DIR/bin/$name" "$BUILD_DIR/bench/$name" \
                "$BUILD_DIR/samples/$name"; do
        if is_elf_exe "$cand"; then found=$cand; break; fi
    done
    if [[ -z "$found" ]]; then
        found=$(find "$BUILD_DIR" -type f -name "$name" -perm -u+x 2>/dev/null | head -n 1 || true)
        [[ -n "$found" ]] && ! is_elf_exe "$found" && found=""
    fi
    if [[ -n "$found" ]]; then
        cp -p "$found" "$OUT_DIR/bin/"
        EXES+=("$OUT_DIR/bin/$name")
    else
        echo "note: $name not built in $BUILD_DIR; not bundled" >&2
    fi
done
[[ ${#EXES[@]} -gt 0 ]] || { echo "error: no executables found in $BUILD_DIR" >&2; exit 1; }
# The device-timeline library (bench/timeline), loaded by the driver through CUDA_INJECTION64_PATH.
if [[ -f "$BUILD_DIR/bench/libimghist_timeline.so" ]]; then
    mkdir -p "$OUT_DIR/lib"
    cp -p "$BUILD_DIR/bench/libimghist_timeline.so" "$OUT_DIR/lib/"
fi

# ---- shared libraries --------------------------------------------------------------------------------------
is_system_lib() {
    case "$1" in
        linux-vdso.so*|linux-gate.so*|ld-linux*|libc.so*|libm.so*|libstdc++.so*|libgcc_s.so*|libpthread.so*|\
        libdl.so*|librt.so*|libresolv.so*|libutil.so*|libcuda.so*|libnvidia*|libmvec.so*) return 0 ;;
    esac
    return 1
}

declare -A COPIED=()
missing=0
# copy_deps FILE: copies every non-system library that ldd resolves for FILE (the bundle's lib/ searched
# first) into OUT_DIR/lib. A library ldd cannot find is looked up in the build tree: the bundled copy of an
# executable has lost its build-tree RUNPATH.
copy_deps() {
    local file=$1 line lib path cand
    while IFS= read -r line; do
        # forms: "libfoo.so.1 => /path/libfoo.so.1 (0x...)", "libfoo.so.1 => not found", "/lib64/ld-linux... (0x...)"
        if [[ "$line" =~ ^[[:space:]]*([^[:space:]]+)[[:space:]]=\>[[:space:]]not[[:space:]]found ]]; then
            lib=${BASH_REMATCH[1]}
            is_system_lib "$lib" && continue
            [[ -n "${COPIED[$lib]:-}" ]] && continue
            cand=$(find "$BUILD_DIR" -name "$lib" \( -type f -o -type l \) 2>/dev/null | head -n 1 || true)
            if [[ -n "$cand" ]]; then
                cp -L "$cand" "$OUT_DIR/lib/$lib"
                COPIED[$lib]=$cand
            else
                echo "warning: $(basename "$file"): $lib not found" >&2
                missing=1
            fi
        elif [[ "$line" =~ ^[[:space:]]*([^[:space:]]+)[[:space:]]=\>[[:space:]](/[^[:space:]]+) ]]; then
            lib=${BASH_REMATCH[1]}
            path=${BASH_REMATCH[2]}
            is_system_lib "$lib" && continue
            [[ -n "${COPIED[$lib]:-}" ]] && continue
            cp -L "$path" "$OUT_DIR/lib/$lib"
            COPIED[$lib]=$path
        fi
    done < <(LD_LIBRARY_PATH="$OUT_DIR/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ldd "$file" 2>/dev/null || true)
}
# ldd lists the whole dependency closure of each executable; the copied libraries are visited again for
# dependencies that only became visible once they were in the bundle.
for exe in "${EXES[@]}"; do copy_deps "$exe"; done
for _ in 1 2; do
    for so in "$OUT_DIR"/lib/*; do
        [[ -f "$so" ]] && copy_deps "$so"
    done
done

# ---- data and scripts --------------------------------------------------------------------------------------
cp -p "$SOURCE_DIR"/samples/images/*.png "$OUT_DIR/samples/images/" 2>/dev/null || true
[[ -f "$SOURCE_DIR/samples/images/CREDITS.md" ]] && cp -p "$SOURCE_DIR/samples/images/CREDITS.md" "$OUT_DIR/samples/images/"
cp -p "$SOURCE_DIR/tests/skimage/skimage_reference.py" "$OUT_DIR/tests/skimage_reference.py"
# The batched peer of batch_filters_bench (torchvision on the GPU host's Python).
mkdir -p "$OUT_DIR/bench"
cp -p "$SOURCE_DIR/bench/peers/torchvision_equalize.py" "$OUT_DIR/bench/"
# The CLI's benchmark: it finds bin/imghist, env.sh, samples/ and bench/ beside itself.
cp -p "$SOURCE_DIR/bench/peers/torchvision_jpeg_folder.py" "$OUT_DIR/bench/"
cp -p "$SOURCE_DIR/bench/timeline/summarize.py" "$OUT_DIR/bench/timeline_summarize.py"
cp -p "$SCRIPT_DIR/bench_cli.sh" "$SCRIPT_DIR/bench_cli_peers.sh" "$SCRIPT_DIR/bench_inputs.py" "$OUT_DIR/"
cp -p "$SCRIPT_DIR/run_gpu_suite.sh" "$OUT_DIR/run_gpu_suite.sh"
mkdir -p "$OUT_DIR/source"
git -C "$SOURCE_DIR" ls-files -z --cached --others --exclude-standard |
    (cd "$SOURCE_DIR" && xargs -0 sh -c 'for f; do [ -f "$f" ] && printf "%s\0" "$f"; done' sh) |
    tar -C "$SOURCE_DIR" --null -T - -cf - | tar -C "$OUT_DIR/source" -xf -
chmod +x "$OUT_DIR/run_gpu_suite.sh"

cat > "$OUT_DIR/env.sh" <<'EOF'
# source this file: makes the bundled executables find their libraries and the sample images
_imghist_bundle=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
export LD_LIBRARY_PATH="$_imghist_bundle/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export IMGHIST_SAMPLES_DIR="$_imghist_bundle/samples/images"
export IMGHIST_SOURCE_DIR="$_imghist_bundle"
export PATH="$_imghist_bundle/bin:$PATH"
unset _imghist_bundle
EOF

cat > "$OUT_DIR/run_tests.sh" <<'EOF'
#!/usr/bin/env bash
# run_tests.sh [CATCH2 ARGS...] — runs every bundled test executable (Catch2) with the given arguments
# (e.g. "[cuda]") and prints one line per executable and a total. Exit status 1 if any failed.
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
source "$here/env.sh"
status=0; summary=""
for t in "$here"/tests/test_*; do
    [[ -x "$t" ]] || continue
    name=$(basename "$t")
    echo "=== $name $*"
    "$t" "$@"
    rc=$?
    if [[ $rc -eq 0 ]]; then summary+="  PASS  $name"$'\n'; else summary+="  FAIL  $name (exit $rc)"$'\n'; status=1; fi
done
echo "=== test summary"
printf '%s' "$summary"
exit $status
EOF
chmod +x "$OUT_DIR/run_tests.sh"

{
    echo "imghist GPU bundle"
    echo "created: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
    echo "commit:  $(git -C "$SOURCE_DIR" rev-parse --short HEAD 2>/dev/null || echo unknown)$(git -C "$SOURCE_DIR" diff --quiet HEAD 2>/dev/null || echo ' (with uncommitted changes)')"
    echo
    echo "executables:"
    for exe in "${EXES[@]}"; do echo "  ${exe#"$OUT_DIR"/}"; done
    echo
    echo "libraries (from):"
    for lib in $(printf '%s\n' "${!COPIED[@]}" | sort); do echo "  $lib  <=  ${COPIED[$lib]}"; done
} > "$OUT_DIR/MANIFEST.txt"

# ---- verify: nothing unresolved with only the bundle's lib/ on the path ---------------------------------------
unresolved=0
for exe in "${EXES[@]}" "$OUT_DIR"/lib/*; do
    [[ -f "$exe" ]] || continue
    if LD_LIBRARY_PATH="$OUT_DIR/lib" ldd "$exe" 2>/dev/null | grep -v -E 'libcuda\.so|libnvidia' | grep -q 'not found'; then
        echo "warning: unresolved libraries for ${exe#"$OUT_DIR"/}:" >&2
        LD_LIBRARY_PATH="$OUT_DIR/lib" ldd "$exe" | grep 'not found' >&2
        unresolved=1
    fi
done

echo "bundle: $OUT_DIR ($(du -sh "$OUT_DIR" | cut -f1)): ${#EXES[@]} executables, ${#COPIED[@]} libraries"
echo "on the GPU host: $OUT_DIR/run_gpu_suite.sh $OUT_DIR RESULTS_DIR; the CLI's targets: $OUT_DIR/bench_cli.sh"
[[ $missing -eq 0 && $unresolved -eq 0 ]] || exit 1
