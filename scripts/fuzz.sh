#!/usr/bin/env bash
# Builds the libFuzzer targets (fuzz/) with clang, ASan and UBSan in their own build folder, replays the kept
# crashers (fuzz/regressions/<target>/), then fuzzes each target for a bounded time from the seed files
# (fuzz/seeds/<target>/) plus the corpus grown by earlier runs, with the target's dictionary (fuzz/dicts/)
# where it has one. Exits non-zero on any crash, sanitizer
# report, leak or timeout; the input that caused it is left in the build folder (crash-*, leak-*, timeout-*).
#
# The build is CPU-only (IMGHIST_WITH_CUDA=OFF): the sanitizers instrument host code, and no CUDA code runs
# without a GPU anyway. With --with-tests, the same build also holds the test suite, which runs first under
# ASan+UBSan (the CUDA cases report themselves skipped; the filters' cases keep every shape with fewer values,
# IMGHIST_TEST_SHAPES_ONLY=1): the imghist program the CLI tests run is then the sanitized one. This is what CI
# runs (.ci/run).
#
# Usage: scripts/fuzz.sh [--with-tests] [SECONDS_PER_TARGET] [TARGET...]
#          (default 20 s; targets: png jpeg tiff webp pnm bmp tga raw)
#   IMGHIST_FUZZ_BUILD   build folder (default build-fuzz)
#   IMGHIST_FUZZ_JOBS    build jobs (default: nproc)
set -euo pipefail
cd "$(dirname "$0")/.."
WITH_TESTS=OFF
if [[ ${1:-} == --with-tests ]]; then
  WITH_TESTS=ON
  shift
fi
SECONDS_PER_TARGET=${1:-20}
shift || true
TARGETS=("$@")
((${#TARGETS[@]})) || TARGETS=(png jpeg tiff webp pnm bmp tga raw)
BUILD=${IMGHIST_FUZZ_BUILD:-build-fuzz}
JOBS=${IMGHIST_FUZZ_JOBS:-$(nproc)}

# fuzzer-no-link: coverage instrumentation everywhere (libFuzzer's runtime is linked into the fuzz targets
# only; the sanitizer runtime answers the hooks elsewhere).
# Line tables are all a sanitizer's report needs (file:line in each frame); full debug information (the
# build type's -g, dropped) is the slowest part of this build.
SAN="-fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=undefined -fno-omit-frame-pointer -gline-tables-only"
if [[ ! -f "$BUILD/CMakeCache.txt" || $(grep -c "IMGHIST_BUILD_TESTS:BOOL=$WITH_TESTS" "$BUILD/CMakeCache.txt") == 0 ]]; then
  cmake -S . -B "$BUILD" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -DNDEBUG" \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DIMGHIST_WITH_CUDA=OFF \
    -DCMAKE_C_FLAGS="$SAN" -DCMAKE_CXX_FLAGS="$SAN" \
    -DIMGHIST_BUILD_FUZZERS=ON -DIMGHIST_BUILD_PYTHON=OFF -DIMGHIST_BUILD_TESTS=$WITH_TESTS -DIMGHIST_BUILD_BENCH=OFF -DIMGHIST_BUILD_SAMPLES=OFF \
    ${IMGHIST_CMAKE_ARGS:-} >/dev/null
fi
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
status=0
if [[ $WITH_TESTS == ON ]]; then
  cmake --build "$BUILD" -j"$JOBS"
  echo "== tests under ASan+UBSan (the consumer builds ran in the plain builds) =="
  # Every shape with fewer values (tests/filters/filters_support.hpp): the sanitizers look for out-of-bounds and
  # uninitialised accesses, which depend on shapes and alignment; the plain builds run the full lists.
  (cd "$BUILD" && IMGHIST_TEST_SHAPES_ONLY=${IMGHIST_TEST_SHAPES_ONLY:-1} ctest --output-on-failure -j"$JOBS" -LE consumer) ||
    status=1
else
  cmake --build "$BUILD" -j"$JOBS" --target "${TARGETS[@]/#/fuzz_}"
fi
for t in "${TARGETS[@]}"; do
  bin="$BUILD/fuzz/fuzz_$t"
  corpus="$BUILD/corpus/$t"
  mkdir -p "$corpus" "$BUILD/artifacts"
  if compgen -G "fuzz/regressions/$t/*" >/dev/null; then
    echo "== fuzz_$t: replaying fuzz/regressions/$t =="
    "$bin" -rss_limit_mb=2048 -timeout=10 fuzz/regressions/"$t"/* >"$BUILD/artifacts/$t-regressions.log" 2>&1 ||
      { echo "fuzz_$t: a kept crasher fails again (see $BUILD/artifacts/$t-regressions.log)"; status=1; }
  fi
  echo "== fuzz_$t: ${SECONDS_PER_TARGET} s =="
  dict=()
  [[ -f fuzz/dicts/$t.dict ]] && dict=(-dict="fuzz/dicts/$t.dict")
  if "$bin" -max_total_time="$SECONDS_PER_TARGET" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 "${dict[@]}" \
      -artifact_prefix="$BUILD/artifacts/$t-" "$corpus" "fuzz/seeds/$t" >"$BUILD/artifacts/$t.log" 2>&1; then
    grep -E "stat::number_of_executed_units|stat::new_units_added" "$BUILD/artifacts/$t.log" | tr '\n' ' '; echo
  else
    echo "fuzz_$t: FAILED (log: $BUILD/artifacts/$t.log)"
    grep -E "ERROR|SUMMARY|runtime error|Test unit written" "$BUILD/artifacts/$t.log" | head -5
    status=1
  fi
done
exit $status
