#!/usr/bin/env bash
# run_gpu_suite.sh BUNDLE_DIR OUT_DIR
#
# The GPU suite, run on a GPU host from a bundle made by scripts/bundle_gpu.sh (no compiler or OpenCV
# needed there). Steps, each under its own time limit, and all within SUITE_BUDGET (default 510 s), so the
# suite ends within about 8.5 minutes even when steps hang:
#
#   gpu        nvidia-smi -L (and clocks, driver)                                      15 s
#   tests      every test executable, all cases (Catch2 summary per executable)       SUITE_T_TESTS=75
#   paths      test_filters' [cuda] cases with the one-launch filters off, then on for   SUITE_T_PATHS=120
#              every size (IMGHIST_ONE_LAUNCH_MAX_BYTES=0 / 1e9): both device paths see every case
#   memcheck   compute-sanitizer --tool memcheck  on the [cuda] cases                  SUITE_T_MEMCHECK=100
#   racecheck  compute-sanitizer --tool racecheck on the [cuda] cases                  SUITE_T_RACECHECK=100
#   synccheck  compute-sanitizer --tool synccheck on the [cuda] cases                  SUITE_T_SYNCCHECK=100
#   initcheck  compute-sanitizer --tool initcheck on the [cuda] cases                  SUITE_T_INITCHECK=100
#   bench      imghist-bench, full table  -> OUT_DIR/bench.json, bench.txt             SUITE_T_BENCH=180
#   sweep      imghist-bench --sweep (u8, uniform + photo, 256 MiB) -> sweep.json       SUITE_T_SWEEP=50
#
# Environment: SUITE_STEPS (default "gpu tests paths memcheck racecheck synccheck initcheck bench sweep"), SUITE_T_<STEP> (seconds),
# BENCH_ARGS (extra arguments for the table, e.g. "--quick"), SWEEP_ARGS (replace the sweep's selection),
# SANITIZER (path to compute-sanitizer), SANITIZE_FILTER (Catch2 test spec for the sanitizer steps, default
# "[cuda]", e.g. "[cuda]~[slow]"), IMGHIST_TEST_SHAPES_ONLY (default 1 in the sanitizer steps: the filters
# tests keep every size class with fewer distributions and ROI offsets; 0 runs the full lists). Logs:
# OUT_DIR/logs/<step>.log; summary: OUT_DIR/summary.txt.
# Exit status: 0 when every step passed, 1 otherwise.
set -uo pipefail

if [[ "${1:-}" == "__sanitize" ]]; then
    # ---- internal mode, run under `timeout` by the main script: one sanitizer over every test executable
    # that has cases matching the filter ------------------------------------------------------------------
    shift
    bundle=$1; tool=$2
    status=0
    for t in "$bundle"/tests/test_*; do
        [[ -x "$t" ]] || continue
        name=$(basename "$t")
        filter=${SANITIZE_FILTER:-[cuda]}
        n=$("$t" --list-test-names-only "$filter" 2>/dev/null | grep -c -v '^[[:space:]]*$' || true)
        if [[ "${n:-0}" -eq 0 ]]; then echo "=== $name: no $filter cases"; continue; fi
        echo "=== $name: compute-sanitizer --tool $tool, $n cases matching $filter"
        extra=()
        # memcheck: no report of CUDA API errors. Every API call of the library is checked by the library
        # itself (an unexpected error fails the test), and the one expected error would read as a finding:
        # memcheck's instrumentation makes kernels larger than the occupancy query says, so the one-launch
        # filters' first cooperative launch of a full grid is refused and retried smaller (src/filters/cuda/fused.cu).
        [[ "$tool" == "memcheck" ]] && extra=(--leak-check no --report-api-errors no)
        # Every size class, fewer distributions and ROI offsets (tests/filters/filters_support.hpp): a
        # sanitizer multiplies each launch's cost, and the full lists outlast any step limit.
        IMGHIST_TEST_SHAPES_ONLY=${IMGHIST_TEST_SHAPES_ONLY:-1} \
            "$SANITIZER" --tool "$tool" --error-exitcode 1 --print-limit 50 "${extra[@]}" "$t" "$filter"
        rc=$?
        if [[ $rc -eq 0 ]]; then echo "--- $name: PASS"; else echo "--- $name: FAIL (exit $rc)"; status=1; fi
    done
    exit $status
fi

[[ $# -eq 2 ]] || { echo "usage: $0 BUNDLE_DIR OUT_DIR" >&2; exit 64; }
BUNDLE=$(cd "$1" && pwd) || exit 64
mkdir -p "$2/logs" || exit 1
OUT=$(cd "$2" && pwd)
SELF="$BUNDLE/run_gpu_suite.sh"
[[ -f "$SELF" ]] || SELF=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/$(basename "${BASH_SOURCE[0]}")

# shellcheck disable=SC1091
source "$BUNDLE/env.sh"
# NPP (loaded at run time by the benchmark) and the sanitizer come with the host's CUDA installation.
for d in /usr/local/cuda/lib64 /usr/local/cuda/targets/x86_64-linux/lib /usr/local/cuda/targets/sbsa-linux/lib; do
    [[ -d "$d" ]] && export LD_LIBRARY_PATH="$LD_LIBRARY_PATH:$d"
done
if [[ -z "${SANITIZER:-}" ]]; then
    SANITIZER=$(command -v compute-sanitizer 2>/dev/null || true)
    for c in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
        [[ -z "$SANITIZER" && -x "$c" ]] && SANITIZER=$c
    done
fi
export SANITIZER

STEPS=${SUITE_STEPS:-gpu tests paths memcheck racecheck synccheck initcheck bench sweep}
declare -a RESULTS=()
overall=0
suite_start=$(date +%s)

# The whole suite stops starting work after SUITE_BUDGET seconds (default 510): a step's limit is its own
# or what is left of the budget, whichever is smaller.
SUITE_BUDGET=${SUITE_BUDGET:-510}
left() { echo $(( SUITE_BUDGET - ($(date +%s) - suite_start) )); }
step_limit() { local cap=$1 l; l=$(left); (( l < cap )) && echo "$l" || echo "$cap"; }

# run_step NAME SECONDS CMD... : runs CMD under a time limit, output to logs/NAME.log and the console
run_step() {
    local name=$1 limit=$2; shift 2
    local log="$OUT/logs/$name.log" t0 rc status
    if (( limit < 5 )); then
        skip_step "$name" "suite time budget (SUITE_BUDGET=${SUITE_BUDGET}s) spent"
        overall=1
        return
    fi
    echo
    echo "################ $name (limit ${limit}s): $*"
    t0=$(date +%s)
    timeout --signal=TERM --kill-after=5 "$limit" "$@" 2>&1 | tee "$log"
    rc=${PIPESTATUS[0]}
    case $rc in
        0) status=PASS ;;
        124|137) status=TIMEOUT ;;
        *) status="FAIL(exit $rc)" ;;
    esac
    [[ $rc -eq 0 ]] || overall=1
    RESULTS+=("$(printf '%-10s %-14s %5ss  logs/%s.log' "$name" "$status" "$(( $(date +%s) - t0 ))" "$name")")
}

skip_step() {
    RESULTS+=("$(printf '%-10s %-14s %5s   %s' "$1" "SKIP" "-" "$2")")
}

for step in $STEPS; do
    case $step in
        gpu)
            run_step gpu "$(step_limit 15)" bash -c 'nvidia-smi -L && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv'
            ;;
        tests)
            run_step tests "$(step_limit "${SUITE_T_TESTS:-75}")" bash "$BUNDLE/run_tests.sh"
            ;;
        paths)
            # The default size limit of the one-launch filters (tuning.hpp) leaves each test case on one of
            # the two device paths; these runs put every case on each.
            run_step paths "$(step_limit "${SUITE_T_PATHS:-120}")" bash -c \
                'IMGHIST_ONE_LAUNCH_MAX_BYTES=0 "$1" "[cuda]" && IMGHIST_ONE_LAUNCH_MAX_BYTES=1000000000 "$1" "[cuda]"' _ \
                "$BUNDLE/tests/test_filters"
            ;;
        memcheck|racecheck|synccheck|initcheck)
            if [[ -z "$SANITIZER" ]]; then
                skip_step "$step" "compute-sanitizer not found (set SANITIZER=...)"
                overall=1
            else
                t=SUITE_T_${step^^}
                run_step "$step" "$(step_limit "${!t:-100}")" bash "$SELF" __sanitize "$BUNDLE" "$step"
            fi
            ;;
        bench)
            if [[ -x "$BUNDLE/bin/imghist-bench" ]]; then
                limit=$(step_limit "${SUITE_T_BENCH:-180}")
                # the benchmark stops starting new cases 30 s before the step's limit, and still writes its JSON
                # shellcheck disable=SC2086
                run_step bench "$limit" "$BUNDLE/bin/imghist-bench" --json "$OUT/bench.json" \
                    --time-limit $(( limit > 60 ? limit - 30 : limit / 2 )) ${BENCH_ARGS:-}
                cp "$OUT/logs/bench.log" "$OUT/bench.txt" 2>/dev/null
            else
                skip_step bench "bin/imghist-bench not in the bundle"
                overall=1
            fi
            ;;
        sweep)
            if [[ -x "$BUNDLE/bin/imghist-bench" ]]; then
                limit=$(step_limit "${SUITE_T_SWEEP:-50}")
                # shellcheck disable=SC2086
                run_step sweep "$limit" "$BUNDLE/bin/imghist-bench" --sweep --json "$OUT/sweep.json" \
                    --time-limit $(( limit > 30 ? limit - 15 : limit / 2 )) \
                    ${SWEEP_ARGS:---workloads u8 --data uniform,photo --sizes 256M}
                cp "$OUT/logs/sweep.log" "$OUT/sweep.txt" 2>/dev/null
            else
                skip_step sweep "bin/imghist-bench not in the bundle"
                overall=1
            fi
            ;;
        *)
            echo "unknown step '$step'" >&2
            overall=1
            ;;
    esac
done

{
    echo "imghist GPU suite — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(( $(date +%s) - suite_start )) s"
    nvidia-smi -L 2>/dev/null | head -n 8
    [[ -f "$BUNDLE/MANIFEST.txt" ]] && grep -m1 '^commit:' "$BUNDLE/MANIFEST.txt"
    echo
    printf '%-10s %-14s %6s  %s\n' step result time log
    for r in "${RESULTS[@]}"; do echo "$r"; done
    if [[ -f "$OUT/logs/tests.log" ]]; then
        echo
        echo "tests:"
        grep -E '^  (PASS|FAIL)  |^All tests passed|^test cases:' "$OUT/logs/tests.log" | sed 's/^/  /'
        if grep -q 'IMGHIST-SKIP' "$OUT/logs/tests.log"; then
            echo "  WARNING: some CUDA cases were skipped (IMGHIST-SKIP): no usable device seen by the tests"
        fi
    fi
    for s in memcheck racecheck synccheck initcheck; do
        [[ -f "$OUT/logs/$s.log" ]] || continue
        echo
        echo "$s:"
        grep -E '^--- |ERROR SUMMARY|RACECHECK SUMMARY|: no .* cases$' "$OUT/logs/$s.log" | sed 's/^/  /'
    done
    if [[ -f "$OUT/logs/bench.log" ]]; then
        echo
        echo "bench:"
        grep -E '^device |^goals:|^  [a-z0-9-]+ .*: goal|^check:|time limit reached' "$OUT/logs/bench.log" | sed 's/^/  /' ||
            tail -n 3 "$OUT/logs/bench.log" | sed 's/^/  /'
        [[ -f "$OUT/bench.json" ]] && echo "  JSON: bench.json"
    fi
    if [[ -f "$OUT/logs/sweep.log" ]]; then
        echo
        echo "sweep:"
        grep -E '^shape sweep:|^default shape|^  [0-9]\. |reaches' "$OUT/logs/sweep.log" | sed 's/^/  /' ||
            tail -n 3 "$OUT/logs/sweep.log" | sed 's/^/  /'
    fi
    echo
    [[ $overall -eq 0 ]] && echo "SUITE: PASS" || echo "SUITE: FAIL"
} > "$OUT/summary.txt"

echo
echo "================================================================ summary"
cat "$OUT/summary.txt"
exit $overall
