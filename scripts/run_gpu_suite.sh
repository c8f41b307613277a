#!/usr/bin/env bash
# run_gpu_suite.sh BUNDLE_DIR OUT_DIR
#
# The GPU suite, run on a GPU host from a bundle made by scripts/bundle_gpu.sh (no compiler or OpenCV
# needed there). Steps (SUITE_STEPS, default "gpu tests paths sanitize bench"), each job under its own time
# limit, the independent jobs of a step side by side (SUITE_JOBS at a time, default: the host's cores, at
# most 16): a slow job cannot starve the others, and a hung one is stopped at its limit and reported.
#
#   step      | jobs                                                                  | limit per job (s)
#   ----------+-----------------------------------------------------------------------+-------------------
#   gpu       | nvidia-smi                                                            | 15
#   tests     | every test executable, all cases, dealt into SUITE_SHARDS (default 4)  | SUITE_T_TESTS=480
#             | jobs                                                                  |
#   paths     | test_filters' [cuda] cases with the one-launch filters off, then on   | SUITE_T_PATHS=480
#             | for every size (IMGHIST_ONE_LAUNCH_MAX_BYTES=0 / 1e9), in shards too  |
#   sanitize  | the four steps below, one after another                               |
#   memcheck, | compute-sanitizer's tool of that name on each test executable's       | SUITE_T_SANITIZE=600
#   racecheck,| [cuda] cases, dealt into jobs of one or two cases each (at most 24 per  |
#   synccheck,| executable; SUITE_SANITIZE_SHARDS sets a fixed number), the executable |
#   initcheck | with most cases first; one tool at a time, so that its jobs share the  |
#             | GPU and the cores only with each other; initcheck skips test_gpu_jpeg  |
#             | (nvJPEG's own reads)                                                  |
#   bench     | imghist-bench, full table -> OUT_DIR/bench.json, bench.txt            | SUITE_T_BENCH=240
#   sweep     | imghist-bench --sweep (u8, uniform + photo, 256 MiB) -> sweep.json     | SUITE_T_SWEEP=120
#
# The sanitizer steps dominate (H100, 16 jobs: racecheck 450 s, tests + initcheck 177 s, the rest about 150 s);
# each may be run on its own (SUITE_STEPS=racecheck). Environment: SUITE_STEPS,
# SUITE_JOBS, SUITE_SHARDS, SUITE_SANITIZE_SHARDS, SUITE_T_<STEP> (seconds; the four tools share SUITE_T_SANITIZE),
# BENCH_ARGS (extra arguments for the table, e.g. "--quick"), SWEEP_ARGS (replace the sweep's selection),
# SANITIZER (path to compute-sanitizer), SANITIZE_FILTER (Catch2 test spec for the sanitizer jobs, default "[cuda]"), IMGHIST_TEST_SHAPES_ONLY
# (default 1 under the sanitizers: the filters' tests keep every size class with fewer distributions and
# ROI offsets; 0 runs the full lists). Logs: OUT_DIR/logs/<job>.log; summary: OUT_DIR/summary.txt.
# Exit status: 0 when every job passed, 1 otherwise.
set -uo pipefail

# Shard K of N of one executable's cases matching FILTER (dealt round-robin by name, so the shards of an
# executable run side by side; none: nothing to do), run as they are (TOOL "plain") or under a sanitizer.
shard_one() {
    local tool=$1 t=$2 shard=${3:-1} shards=${4:-1} filter=${5:-} extra=() spec=() list
    [[ -n "$filter" ]] && spec=("$filter")
    list=$(mktemp)
    "$t" --list-test-names-only "${spec[@]}" 2>/dev/null | grep -v '^[[:space:]]*$' |
        awk -v k="$shard" -v n="$shards" '(NR - 1) % n == k - 1' |
        sed 's/[],[\\]/\\&/g' > "$list"  # a test spec's , [ ] and \ are special: escaped, a name is itself
    if [[ ! -s "$list" ]]; then echo "no ${filter:-test} cases in shard $shard of $shards"; rm -f "$list"; return 0; fi
    echo "$tool, shard $shard of $shards: $(wc -l < "$list") cases${filter:+ matching $filter}"
    if [[ "$tool" == plain ]]; then
        "$t" --input-file "$list"
        local rc=$?
        rm -f "$list"
        return $rc
    fi
    # memcheck: no report of CUDA API errors. Every API call of the library is checked by the library
    # itself (an unexpected error fails the test), and the one expected error would read as a finding:
    # memcheck's instrumentation makes kernels larger than the occupancy query says, so the one-launch
    # filters' first cooperative launch of a full grid is refused and retried smaller (src/filters/cuda/fused.cu).
    [[ "$tool" == "memcheck" ]] && extra=(--leak-check no --report-api-errors no)
    # Every size class, fewer distributions and ROI offsets (tests/filters/filters_support.hpp): a sanitizer
    # multiplies each launch's cost.
    # Each case's duration is printed: the shards' limits are sized from them.
    IMGHIST_TEST_SHAPES_ONLY=${IMGHIST_TEST_SHAPES_ONLY:-1} \
        "$SANITIZER" --tool "$tool" --error-exitcode 1 --print-limit 50 "${extra[@]}" "$t" --input-file "$list" \
        --durations yes
    local rc=$?
    rm -f "$list"
    return $rc
}
if [[ "${SUITE_INTERNAL:-}" == shard_one ]]; then shard_one "$@"; exit $?; fi

[[ $# -eq 2 ]] || { echo "usage: $0 BUNDLE_DIR OUT_DIR" >&2; exit 64; }
BUNDLE=$(cd "$1" && pwd) || exit 64
mkdir -p "$2/logs" || exit 1
OUT=$(cd "$2" && pwd)

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

STEPS=${SUITE_STEPS:-gpu tests paths sanitize bench}
STEPS=${STEPS//sanitize/memcheck racecheck synccheck initcheck}
JOBS=${SUITE_JOBS:-$(nproc)}
shards=${SUITE_SHARDS:-4}
(( JOBS > 16 )) && JOBS=16
suite_start=$(date +%s)
overall=0
: > "$OUT/results.txt"

# job NAME LIMIT CMD...: runs CMD in the background under its limit (output in logs/NAME.log) and appends
# its result line to results.txt when it ends; at most JOBS run at once.
job() {
    local name=$1 limit=$2; shift 2
    while (( $(jobs -rp | wc -l) >= JOBS )); do wait -n 2>/dev/null || sleep 0.2; done
    (
        t0=$(date +%s)
        timeout --signal=TERM --kill-after=10 "$limit" "$@" > "$OUT/logs/$name.log" 2>&1
        rc=$?
        case $rc in
            0) status=PASS ;;
            124|137) status="TIMEOUT(${limit}s)" ;;
            *) status="FAIL(exit $rc)" ;;
        esac
        printf '%-28s %-14s %5ss  logs/%s.log\n' "$name" "$status" "$(( $(date +%s) - t0 ))" "$name" >> "$OUT/results.txt"
    ) &
}
skip() { printf '%-28s %-14s %5s   %s\n' "$1" SKIP - "$2" >> "$OUT/results.txt"; overall=1; }

test_executables() { for t in "$BUNDLE"/tests/test_*; do [[ -x "$t" ]] && echo "$t"; done; }


for step in $STEPS; do
    echo "== $step"
    case $step in
        gpu)
            job gpu 15 bash -c 'nvidia-smi -L && nvidia-smi --query-gpu=name,driver_version,clocks.sm,clocks.max.sm,clocks.mem,power.limit,temperature.gpu --format=csv'
            ;;
        tests)
            for t in $(test_executables); do
                for k in $(seq 1 "$shards"); do
                    job "tests.$(basename "$t").$k" "${SUITE_T_TESTS:-480}" \
                        env SUITE_INTERNAL=shard_one bash "$0" plain "$t" "$k" "$shards"
                done
            done
            ;;
        paths)
            for limit in 0 1000000000; do
                for k in $(seq 1 "$shards"); do
                    job "paths.one_launch_max_$limit.$k" "${SUITE_T_PATHS:-480}" \
                        env IMGHIST_ONE_LAUNCH_MAX_BYTES=$limit SUITE_INTERNAL=shard_one \
                        bash "$0" plain "$BUNDLE/tests/test_filters" "$k" "$shards" "[cuda]"
                done
            done
            ;;
        memcheck|racecheck|synccheck|initcheck)
            if [[ -z "$SANITIZER" ]]; then
                skip "$step" "compute-sanitizer not found (set SANITIZER=...)"
                continue
            fi
            tool=$step
            filter=${SANITIZE_FILTER:-[cuda]}
            # A case under a sanitizer takes up to minutes: small jobs keep every job well within its limit
            # and let the longest start first.
            for t in $(for t in $(test_executables); do
                           echo "$("$t" --list-test-names-only "$filter" 2>/dev/null | grep -c .) $t"
                       done | sort -rn | cut -d' ' -f2); do
                # initcheck reports nvJPEG's own reads of memory it did not initialise (inside libnvjpeg, not
                # ours): the GPU JPEG tests run under the other three tools.
                [[ $tool == initcheck && $(basename "$t") == test_gpu_jpeg ]] && continue
                n=${SUITE_SANITIZE_SHARDS:-}
                if [[ -z $n ]]; then
                    n=$("$t" --list-test-names-only "$filter" 2>/dev/null | grep -c .)
                    n=$(( n < 1 ? 1 : (n > 24 ? 24 : n) ))
                fi
                for k in $(seq 1 "$n"); do
                    job "$tool.$(basename "$t").$k" "${SUITE_T_SANITIZE:-600}" \
                        env SUITE_INTERNAL=shard_one SANITIZER="$SANITIZER" bash "$0" "$tool" "$t" "$k" "$n" "$filter"
                done
            done
            wait  # the next tool starts on a quiet device
            ;;
        bench|sweep)
            wait  # timings on a quiet device
            if [[ ! -x "$BUNDLE/bin/imghist-bench" ]]; then skip "$step" "bin/imghist-bench not in the bundle"; continue; fi
            if [[ $step == bench ]]; then
                limit=${SUITE_T_BENCH:-240}
                # shellcheck disable=SC2086
                job bench "$limit" "$BUNDLE/bin/imghist-bench" --json "$OUT/bench.json" \
                    --time-limit $(( limit > 60 ? limit - 30 : limit / 2 )) ${BENCH_ARGS:-}
            else
                limit=${SUITE_T_SWEEP:-120}
                # shellcheck disable=SC2086
                job sweep "$limit" "$BUNDLE/bin/imghist-bench" --sweep --json "$OUT/sweep.json" \
                    --time-limit $(( limit > 30 ? limit - 15 : limit / 2 )) \
                    ${SWEEP_ARGS:---workloads u8 --data uniform,photo --sizes 256M}
            fi
            wait
            ;;
        *)
            echo "unknown step '$step'" >&2
            overall=1
            ;;
    esac
done
wait
grep -qv ' PASS ' "$OUT/results.txt" && overall=1

{
    echo "imghist GPU suite — $(date -u +%Y-%m-%dT%H:%M:%SZ), $(( $(date +%s) - suite_start )) s, $JOBS jobs at a time"
    nvidia-smi -L 2>/dev/null | head -n 8
    [[ -f "$BUNDLE/MANIFEST.txt" ]] && grep -m1 '^commit:' "$BUNDLE/MANIFEST.txt"
    echo
    printf '%-28s %-14s %6s  %s\n' job result time log
    sort "$OUT/results.txt"
    for log in "$OUT"/logs/tests.*.log "$OUT"/logs/paths.*.log; do
        [[ -f "$log" ]] || continue
        # Each skip says why (no usable device, or a path the shard's environment turns off): the reasons, once each.
        grep -q 'IMGHIST-SKIP' "$log" &&
            echo "WARNING: $(basename "$log"): CUDA cases skipped: $(grep -o 'IMGHIST-SKIP: .*' "$log" | sed 's/^IMGHIST-SKIP: //' | sort -u | paste -sd ';' -)"
    done
    for log in "$OUT"/logs/{memcheck,racecheck,synccheck,initcheck}.*.log; do
        [[ -f "$log" ]] || continue
        grep -q '^no .* cases' "$log" && continue
        echo "$(basename "$log" .log): $(grep -E 'ERROR SUMMARY|RACECHECK SUMMARY|^test cases:' "$log" | tr '\n' ' ')"
    done
    [[ -f "$OUT/logs/bench.log" ]] &&
        grep -E '^device |^goals:|^check:|time limit reached' "$OUT/logs/bench.log" | sed 's/^/bench: /'
    echo
    [[ $overall -eq 0 ]] && echo "SUITE: PASS" || echo "SUITE: FAIL"
} > "$OUT/summary.txt"

echo
echo "================================================================ summary"
cat "$OUT/summary.txt"
exit $overall
