#!/usr/bin/env bash
# bench_cli.sh — the CLI's GPU-host performance targets (issue 32), all in one run on one machine, ending in
# one table: each workload's images/s, the ratio it is judged by, the target and whether it is met.
#
# Sections (-s; default "eq disk hist auto one all trace"; in this order, each skipped where the host can't
# run it or once the time budget is spent):
#   eq     N (10 000) 1920x1080 JPEGs luma-equalized folder -> folder at quality 90, outputs on tmpfs:
#          --device cuda, cpu, auto and the torchvision peer (bench/peers/torchvision_jpeg_folder.py), taking
#          turns round by round (RUNS rounds; the median of each)
#   disk   the same with --device cuda into a folder on disk (-w), beside the disk's durable write rate
#          (dd conv=fsync of DD_MB MB), turned into images/s with the mean output size of the tmpfs run
#   hist   hist -> JSON of the N files, --device cuda, cpu and auto, taking turns
#   auto   --device auto against cpu, taking turns, at 120 and 1000 files (N files: from eq)
#   one    one 1080p JPEG file -> file: wall time of --device cuda and cpu (median of ONE_RUNS), and the
#          --trace of one cuda run (where the time goes)
#   all    2N files, --device all against cuda (hosts with 2 or more GPUs)
#   trace  one --trace run each of eq and hist with --device cuda (cpu where no GPU): every stage's busy share
#   png folder stretch   the CPU comparisons with ImageMagick, libvips and OpenCV-python (bench_cli_peers.sh;
#          not in the default)
#
# Inputs: scripts/bench_inputs.py makes DISTINCT photograph-like frames (crops of samples/images, scaled, own
# exposure and tint, sensor noise; quality 92, 4:2:0) with PIL + numpy or torchvision, once, and copies their
# bytes to as many names as each folder needs; they stay in the tmpfs folder for the next run (-c removes them).
#
# Usage: scripts/bench_cli.sh [-b imghist] [-s "sections"] [-n files] [-r rounds] [-t budget-seconds]
#                             [-m tmpfs-folder] [-w disk-folder] [-p python] [-c]
#   -b  the imghist program (default: bin/imghist beside this script in a GPU bundle, build/ then build*/ of the
#       repository, then PATH); a bundle's env.sh beside this script is sourced
#   -n  N, default 10000          -r  rounds, default 3          -t  budget, default 420 s: a section starts
#       only within it, and a section's rounds stop after the one that passes it (each row says its runs)
#   -m  tmpfs folder, default /dev/shm/imghist-bench    -w  folder on the disk to test, default
#       /var/tmp/imghist-bench    -p  python with torch + torchvision (default python3)    -c  remove inputs at the end
#   Environment: DISTINCT (200), DD_MB (2048), ONE_RUNS (5), PIPELINE (passed to imghist as --pipeline).
set -euo pipefail

sd=$(cd "$(dirname "$0")" && pwd)
IMGHIST=${IMGHIST:-}
SECTIONS=${SECTIONS:-eq disk hist auto one all trace}
N=${N:-10000}
RUNS=${RUNS:-3}
BUDGET=${BUDGET:-420}
MEM=${MEM:-/dev/shm/imghist-bench}
DISK=${DISK:-/var/tmp/imghist-bench}
PYTHON=${PYTHON:-python3}
CLEAN=0
DISTINCT=${DISTINCT:-200}
DD_MB=${DD_MB:-2048}
ONE_RUNS=${ONE_RUNS:-5}
while getopts "b:s:n:r:t:m:w:p:ch" opt; do
  case $opt in
    b) IMGHIST=$OPTARG ;;
    s) SECTIONS=$OPTARG ;;
    n) N=$OPTARG ;;
    r) RUNS=$OPTARG ;;
    t) BUDGET=$OPTARG ;;
    m) MEM=$OPTARG ;;
    w) DISK=$OPTARG ;;
    p) PYTHON=$OPTARG ;;
    c) CLEAN=1 ;;
    *) sed -n '2,36p' "$0"; exit 0 ;;
  esac
done
START=$SECONDS

# ---- where things are: the repository (scripts/, bench/peers/, samples/) or a GPU bundle (all beside) ---------
[[ -f $sd/env.sh ]] && source "$sd/env.sh"
first() { local f; for f; do [[ -e $f ]] && { echo "$f"; return; }; done; }
if [[ -z $IMGHIST ]]; then
  IMGHIST=$(first "$sd/bin/imghist" "$sd/../build/tools/imghist/imghist" "$sd"/../build*/tools/imghist/imghist)
  [[ -z $IMGHIST ]] && IMGHIST=$(command -v imghist || true)
fi
[[ -n $IMGHIST && -x $IMGHIST ]] || { echo "bench_cli: imghist program not found (pass -b)" >&2; exit 1; }
IMGHIST=$(cd "$(dirname "$IMGHIST")" && pwd)/$(basename "$IMGHIST")
GEN=$(first "$sd/bench_inputs.py")
PEER=$(first "$sd/../bench/peers/torchvision_jpeg_folder.py" "$sd/bench/torchvision_jpeg_folder.py")
SAMPLES=$(first "$sd/../samples/images" "$sd/samples/images" "${IMGHIST_SAMPLES_DIR:-/nonexistent}")
[[ -n $GEN && -n $SAMPLES ]] || { echo "bench_cli: bench_inputs.py or samples/images not found beside $0" >&2; exit 1; }

section() { [[ " $SECTIONS " == *" $1 "* ]]; }
legacy=()
for s in png folder stretch; do section $s && legacy+=("$s"); done
if ((${#legacy[@]})); then
  "$sd/bench_cli_peers.sh" -b "$IMGHIST" -w "$DISK/peers" -r "$RUNS" -s "${legacy[*]}"
fi

GPUS=0
command -v nvidia-smi >/dev/null && GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
HAVE_TORCH=0
[[ -n $PEER ]] && "$PYTHON" -c "import torch, torchvision" 2>/dev/null && HAVE_TORCH=1
GEN_PY=$PYTHON
if ! "$GEN_PY" -c "import numpy, PIL" 2>/dev/null && ! "$GEN_PY" -c "import torchvision" 2>/dev/null; then
  for p in python3 /usr/bin/python3; do "$p" -c "import numpy, PIL" 2>/dev/null && { GEN_PY=$p; break; }; done
fi
# Options every imghist run of this script gets: --pipeline from PIPELINE, --nvjpeg below.
OPTS=()
[[ -n ${PIPELINE:-} ]] && OPTS+=(--pipeline "$PIPELINE")
# imghist opens nvJPEG at run time (the loader's path, then /usr/local/cuda/lib64). A host with no CUDA toolkit
# may still have it in PyTorch's nvidia-* wheels: then that copy is named to imghist.
if ((GPUS)) && ! ldconfig -p 2>/dev/null | grep -qE 'libnvjpeg\.so\.1[123]' &&
   ! ls /usr/local/cuda/lib64/libnvjpeg.so.1[123] >/dev/null 2>&1; then
  nvj=$("$PYTHON" - 2>/dev/null <<'PYEOF' || true
import glob, os, site
dirs = site.getsitepackages() + [site.getusersitepackages()]
hits = [p for d in dirs for p in glob.glob(os.path.join(d, "nvidia", "**", "libnvjpeg.so.1[123]"), recursive=True)]
print(sorted(hits, reverse=True)[0] if hits else "")
PYEOF
)
  [[ -n $nvj ]] && OPTS+=(--nvjpeg "$nvj")
fi
fstype() { stat -f -c %T "$1" 2>/dev/null || echo "?"; }
mkdir -p "$MEM" "$DISK"
LOGS=$DISK/logs
rm -rf "$LOGS" "$MEM/out" "$DISK/out"
mkdir -p "$LOGS" "$MEM/out" "$DISK/out"
cleanup() {
  rm -rf "$MEM/out" "$DISK/out" "$DISK/dd.bin" "$MEM/dd-src.bin"
  ((CLEAN)) && rm -rf "$MEM"
  return 0
}
trap cleanup EXIT

echo "# imghist GPU-host benchmark (issue 32 targets)"
echo
echo "- machine: $(nproc) hardware threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(free -g | awk '/^Mem/ {print $2}') GiB"
if ((GPUS)); then echo "- GPUs: $GPUS x $(nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | head -1)"; else echo "- GPUs: none found (nvidia-smi): CUDA rows are skipped"; fi
echo "- imghist: $IMGHIST ($("$IMGHIST" --version 2>&1 | head -1))${OPTS[*]:+, options: ${OPTS[*]}}"
if ((HAVE_TORCH)); then
  echo "- torchvision peer: $("$PYTHON" -c 'import sys, torch, torchvision; print(f"python {sys.version.split()[0]}, torch {torch.__version__}, torchvision {torchvision.__version__}")' 2>/dev/null)"
else
  echo "- torchvision peer: not run ($PYTHON has no torch + torchvision, or the peer script is missing)"
fi
echo "- tmpfs folder: $MEM ($(fstype "$MEM")); disk folder: $DISK ($(fstype "$DISK"), $(df -h --output=source "$DISK" | tail -1))"
echo "- files: $N (all: $((2 * N))); rounds: $RUNS; budget: $BUDGET s; sections: $SECTIONS"
[[ $(fstype "$MEM") == tmpfs ]] || echo "- WARNING: $MEM is not on tmpfs"
[[ $(fstype "$DISK") == tmpfs ]] && echo "- WARNING: $DISK is on tmpfs, not a disk"
echo

# ---- inputs ----------------------------------------------------------------------------------------------------
make_inputs() {  # folder count
  local t0=$SECONDS
  "$GEN_PY" "$GEN" --samples "$SAMPLES" --out "$1" --count "$2" --distinct "$DISTINCT" --frames "$MEM/frames" \
    | sed "s/^/- inputs: /; s/\$/ ($((SECONDS - t0)) s)/"
}
make_inputs "$MEM/in1" 1
make_inputs "$MEM/in$N" "$N"
section auto && { make_inputs "$MEM/in120" 120; make_inputs "$MEM/in1000" 1000; }
section all && ((GPUS >= 2)) && make_inputs "$MEM/in$((2 * N))" $((2 * N))
if ((GPUS)); then  # which path a GPU run takes, and why (nvJPEG missing shows here, not as slow rows)
  "$IMGHIST" equalize "${OPTS[@]}" "$MEM/in1" "$MEM/out/pre" --device cuda -v 2>&1 | grep -vE '\.jpg: ' | sed 's/^/- preflight: /' || true
  rm -rf "$MEM/out/pre"
fi
echo

# ---- timing ----------------------------------------------------------------------------------------------------
calc() { awk "BEGIN { print ($1) }"; }
declare -A CMD OUTP TIMES FAILED BYTES FILES
# def KEY OUTPUT CMD...: a timed command and what it writes (removed before each run, measured after, removed).
def() { local key=$1 out=$2; shift 2; OUTP[$key]=$out; printf -v "CMD[$key]" '%q ' "$@"; }
once() {
  local key=$1 out=${OUTP[$1]} t0 t1
  rm -rf "$out"
  sync  # the last run's write-back is not this one's
  t0=$(date +%s.%N)
  if eval "${CMD[$key]}" >"$LOGS/$key.log" 2>&1; then
    t1=$(date +%s.%N)
    TIMES[$key]+="$(calc "$t1 - $t0") "
    BYTES[$key]=$(du -sb "$out" 2>/dev/null | cut -f1)
    FILES[$key]=""
    [[ -d $out ]] && FILES[$key]=$(find "$out" -type f | wc -l)
    [[ $key == hist_* ]] && cp "$out" "$out.last"  # the JSON, kept for the hist section's comparison
  else
    FAILED[$key]=1
    rm -f "$out.last"
    echo "- FAILED: $key (${CMD[$key]}): $(tail -3 "$LOGS/$key.log" | tr '\n' ' ')"
  fi
  rm -rf "$out"
}
over_budget() { (( SECONDS - START >= BUDGET )); }
# rounds KEY...: RUNS rounds, each key once per round in turn, so drifts of the machine fall on all alike.
rounds() {
  local r key
  for ((r = 0; r < RUNS; r++)); do
    for key; do [[ -n ${FAILED[$key]:-} ]] || once "$key"; done
    if ((r + 1 < RUNS)) && over_budget; then echo "- note: $* ran $((r + 1)) of $RUNS rounds (time budget)"; break; fi
  done
}
median() {  # KEY -> seconds, or empty
  [[ -n ${FAILED[$1]:-} || -z ${TIMES[$1]:-} ]] && return 0
  tr ' ' '\n' <<<"${TIMES[$1]}" | grep . | sort -g | awk '{a[NR]=$1} END {m = NR % 2 ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2; printf "%.3f", m}'
}
nruns() { [[ -z ${TIMES[$1]:-} ]] && echo 0 || wc -w <<<"${TIMES[$1]}"; }
rate() { local t; t=$(median "$1"); [[ -n $t ]] && printf '%.0f' "$(calc "$2 / $t")"; return 0; }
start_section() {  # name: selected and within the budget
  section "$1" || return 1
  if over_budget; then echo "- skipped: section $1 (time budget of $BUDGET s spent)"; SKIPPED+=" $1"; return 1; fi
  echo "- section $1 at $((SECONDS - START)) s"
}
SKIPPED=""
Q=(--quality 90 -q)
cuda_dev() { ((GPUS)) && echo cuda || echo cpu; }

# ---- the sections ----------------------------------------------------------------------------------------------
if start_section eq; then
  keys=()
  if ((GPUS)); then def eq_cuda "$MEM/out/eq-cuda" "$IMGHIST" equalize "${OPTS[@]}" "$MEM/in$N" "$MEM/out/eq-cuda" "${Q[@]}" --device cuda; keys+=(eq_cuda); fi
  def eq_cpu "$MEM/out/eq-cpu" "$IMGHIST" equalize "${OPTS[@]}" "$MEM/in$N" "$MEM/out/eq-cpu" "${Q[@]}" --device cpu; keys+=(eq_cpu)
  section auto && { def eq_auto "$MEM/out/eq-auto" "$IMGHIST" equalize "${OPTS[@]}" "$MEM/in$N" "$MEM/out/eq-auto" "${Q[@]}" --device auto; keys+=(eq_auto); }
  if ((HAVE_TORCH)); then
    def eq_torch "$MEM/out/eq-torch" "$PYTHON" "$PEER" "$MEM/in$N" "$MEM/out/eq-torch" --quality 90 --device cuda; keys+=(eq_torch)
  fi
  rounds "${keys[@]}"
fi

if start_section disk && ((GPUS)); then
  # The disk's durable rate for one big sequential file: random bytes (no file system compresses them
  # away), written and fsynced by dd; timed from outside, fsync included.
  head -c $((256 << 20)) /dev/urandom >"$MEM/dd-src.bin"
  sync
  t0=$(date +%s.%N)
  for ((k = 0; k < DD_MB / 256; k++)); do cat "$MEM/dd-src.bin"; done |
    dd of="$DISK/dd.bin" bs=8M iflag=fullblock conv=fsync status=none
  t1=$(date +%s.%N)
  DD_BPS=$(calc "$((DD_MB / 256 * 256)) * 1048576 / ($t1 - $t0)")
  rm -f "$DISK/dd.bin" "$MEM/dd-src.bin"
  sync
  echo "- dd conv=fsync, $((DD_MB / 256 * 256)) MiB to $DISK: $(printf '%.0f' "$(calc "$DD_BPS / 1e6")") MB/s"
  def disk_cuda "$DISK/out/eq-cuda" "$IMGHIST" equalize "${OPTS[@]}" "$MEM/in$N" "$DISK/out/eq-cuda" "${Q[@]}" --device cuda
  rounds disk_cuda
fi

if start_section hist; then
  keys=()
  if ((GPUS)); then def hist_cuda "$MEM/out/h-cuda.json" "$IMGHIST" hist "${OPTS[@]}" "$MEM/in$N" --format json -o "$MEM/out/h-cuda.json" -q --device cuda; keys+=(hist_cuda); fi
  def hist_cpu "$MEM/out/h-cpu.json" "$IMGHIST" hist "${OPTS[@]}" "$MEM/in$N" --format json -o "$MEM/out/h-cpu.json" -q --device cpu; keys+=(hist_cpu)
  if ((GPUS)); then def hist_auto "$MEM/out/h-auto.json" "$IMGHIST" hist "${OPTS[@]}" "$MEM/in$N" --format json -o "$MEM/out/h-auto.json" -q --device auto; keys+=(hist_auto); fi
  rounds "${keys[@]}"
  for d in cuda auto; do  # the last round's outputs: a GPU's counts are the CPU path's, file by file
    [[ -n ${CMD[hist_$d]:-} ]] || continue
    if [[ -f $MEM/out/h-$d.json.last && -f $MEM/out/h-cpu.json.last ]]; then
      cmp -s "$MEM/out/h-$d.json.last" "$MEM/out/h-cpu.json.last" && same="identical to" || same="DIFFERENT from"
      echo "- hist JSON of --device $d: $same --device cpu's"
    else
      echo "- hist JSON of --device $d: not compared (a run failed)"
    fi
  done
fi

if start_section auto; then
  for n in 120 1000; do
    def auto_$n "$MEM/out/a-auto-$n" "$IMGHIST" equalize "${OPTS[@]}" "$MEM/in$n" "$MEM/out/a-auto-$n" "${Q[@]}" --device auto
    def cpu_$n "$MEM/out/a-cpu-$n" "$IMGHIST" equalize "${OPTS[@]}" "$MEM/in$n" "$MEM/out/a-cpu-$n" "${Q[@]}" --device cpu
    rounds cpu_$n auto_$n
  done
fi

if start_section one; then
  ONE=$(first "$MEM/in1"/*.jpg)
  def one_cpu "$MEM/out/one-cpu.jpg" "$IMGHIST" equalize "${OPTS[@]}" "$ONE" "$MEM/out/one-cpu.jpg" "${Q[@]}" --device cpu
  keys=(one_cpu)
  if ((GPUS)); then def one_cuda "$MEM/out/one-cuda.jpg" "$IMGHIST" equalize "${OPTS[@]}" "$ONE" "$MEM/out/one-cuda.jpg" "${Q[@]}" --device cuda; keys+=(one_cuda); fi
  RUNS_SAVED=$RUNS; RUNS=$ONE_RUNS; rounds "${keys[@]}"; RUNS=$RUNS_SAVED
  "$IMGHIST" equalize "${OPTS[@]}" "$ONE" "$MEM/out/one-trace.jpg" "${Q[@]}" --device "$(cuda_dev)" --trace 2>"$LOGS/one-trace.log" || true
fi

if start_section all; then
  if ((GPUS >= 2)); then
    M=$((2 * N))
    def all_cuda "$MEM/out/all-cuda" "$IMGHIST" equalize "${OPTS[@]}" "$MEM/in$M" "$MEM/out/all-cuda" "${Q[@]}" --device cuda
    def all_all "$MEM/out/all-all" "$IMGHIST" equalize "${OPTS[@]}" "$MEM/in$M" "$MEM/out/all-all" "${Q[@]}" --device all
    rounds all_cuda all_all
  else
    echo "- skipped: section all ($GPUS GPU; it needs 2 or more)"
  fi
fi

if start_section trace; then
  dev=$(cuda_dev)
  rm -rf "$MEM/out/tr"
  "$IMGHIST" equalize "${OPTS[@]}" "$MEM/in$N" "$MEM/out/tr" "${Q[@]}" --device "$dev" --trace 2>"$LOGS/trace-eq.log" || true
  rm -rf "$MEM/out/tr" "$MEM/out/tr.json"
  "$IMGHIST" hist "${OPTS[@]}" "$MEM/in$N" --format json -o "$MEM/out/tr.json" -q --device "$dev" --trace 2>"$LOGS/trace-hist.log" || true
  rm -f "$MEM/out/tr.json"
fi
echo

# ---- the table -------------------------------------------------------------------------------------------------
# row WORKLOAD IMGHIST_CELL PEER_CELL RATIO TARGET MET
row() { printf '| %s | %s | %s | %s | %s | %s |\n' "$@"; }
cell() {  # KEY COUNT -> "RATE img/s (S s, n=R)" or a reason
  local t; t=$(median "$1")
  if [[ -n ${FAILED[$1]:-} ]]; then echo "FAILED"; elif [[ -z $t ]]; then echo "-"; else
    local warn=""; [[ -n ${FILES[$1]:-} && ${FILES[$1]} -ne $2 ]] && warn=" ! ${FILES[$1]} outputs"
    printf '%s img/s (%s s, n=%s)%s' "$(rate "$1" "$2")" "$t" "$(nruns "$1")" "$warn"
  fi
}
ratio() { local a b; a=$(median "$1"); b=$(median "$2"); [[ -n $a && -n $b ]] && printf '%.2f' "$(calc "$b / $a")"; return 0; }
met() {  # VALUE OP GOAL
  [[ -z $1 ]] && { echo "-"; return; }
  (( $(calc "$1 $2 $3") )) && echo "yes" || echo "NO"
}
speed() { local r; r=$(ratio "$1" "$2"); [[ -n $r ]] && echo "${r}x"; return 0; }

echo "## Results"
echo
echo "| workload | imghist | compared with | ratio | target | met |"
echo "|---|---|---|---|---|---|"
if [[ -n ${CMD[eq_cuda]:-} ]]; then
  r=$(rate eq_cuda "$N")
  row "equalize $N JPEGs -> tmpfs, cuda" "$(cell eq_cuda "$N")" "" "" ">= 3000 img/s" "$(met "$r" '>=' 3000)"
  row "... against --device cpu" "" "$(cell eq_cpu "$N")" "$(speed eq_cuda eq_cpu)" ">= 4x" "$(met "$(ratio eq_cuda eq_cpu)" '>=' 4)"
  if [[ -n ${CMD[eq_torch]:-} ]]; then
    # The peer's own rate, from its first read to its last write (Python's and CUDA's start-up left out).
    inproc=$(sed -nE 's/.*\(([0-9]+) images\/s\).*/\1/p' "$LOGS/eq_torch.log" 2>/dev/null | tail -1)
    row "... against torchvision (GPU decode/encode)" "" "$(cell eq_torch "$N")${inproc:+; in-process $inproc img/s}" \
        "$(speed eq_cuda eq_torch)" ">= 1.5x" "$(met "$(ratio eq_cuda eq_torch)" '>=' 1.5)"
  else
    row "... against torchvision" "" "not run" "" ">= 1.5x" "-"
  fi
  if [[ -n ${CMD[eq_auto]:-} ]]; then
    r=$(rate eq_auto "$N")
    row "equalize $N JPEGs -> tmpfs, auto (the default)" "$(cell eq_auto "$N")" "" "" ">= 3000 img/s" "$(met "$r" '>=' 3000)"
    row "... against --device cpu" "" "$(cell eq_cpu "$N")" "$(speed eq_auto eq_cpu)" ">= 4x" "$(met "$(ratio eq_auto eq_cpu)" '>=' 4)"
  fi
elif [[ -n ${CMD[eq_cpu]:-} ]]; then
  row "equalize $N JPEGs -> tmpfs, cpu" "$(cell eq_cpu "$N")" "" "" "(no GPU)" "-"
fi
if [[ -n ${CMD[disk_cuda]:-} ]]; then
  tmpfs_rate=$(rate eq_cuda "$N")
  disk_rate=$(rate disk_cuda "$N")
  out_bytes=${BYTES[disk_cuda]:-${BYTES[eq_cuda]:-}}
  bound=""; dd_rate=""
  if [[ -n $out_bytes && $out_bytes -gt 0 ]]; then
    dd_rate=$(printf '%.0f' "$(calc "$DD_BPS * $N / $out_bytes")")
    bound=$dd_rate
    [[ -n $tmpfs_rate ]] && (( tmpfs_rate < bound )) && bound=$tmpfs_rate
  fi
  frac=""; [[ -n $disk_rate && -n $bound ]] && frac=$(printf '%.2f' "$(calc "$disk_rate / $bound")")
  row "equalize $N JPEGs -> disk, cuda" "$(cell disk_cuda "$N")" \
      "min(tmpfs ${tmpfs_rate:-?}, dd $(printf '%.0f' "$(calc "$DD_BPS / 1e6")") MB/s = ${dd_rate:-?} img/s of $(calc "int(${out_bytes:-0} / ${N} / 1000)") kB)" \
      "${frac:+$frac of it}" ">= 0.90" "$(met "$frac" '>=' 0.9)"
fi
if [[ -n ${CMD[hist_cpu]:-} ]]; then
  if [[ -n ${CMD[hist_cuda]:-} ]]; then
    r=$(rate hist_cuda "$N")
    row "hist $N JPEGs -> JSON, cuda" "$(cell hist_cuda "$N")" "cpu $(cell hist_cpu "$N")" "$(speed hist_cuda hist_cpu)" ">= 5000 img/s" "$(met "$r" '>=' 5000)"
    if [[ -n ${CMD[hist_auto]:-} ]]; then
      r=$(rate hist_auto "$N")
      row "hist $N JPEGs -> JSON, auto (the default)" "$(cell hist_auto "$N")" "cpu $(cell hist_cpu "$N")" "$(speed hist_auto hist_cpu)" ">= 5000 img/s" "$(met "$r" '>=' 5000)"
    fi
  else
    row "hist $N JPEGs -> JSON, cpu" "$(cell hist_cpu "$N")" "" "" "(no GPU)" "-"
  fi
fi
if [[ -n ${CMD[all_all]:-} ]]; then
  row "equalize $((2 * N)) JPEGs -> tmpfs, all ($GPUS GPUs)" "$(cell all_all $((2 * N)))" "cuda $(cell all_cuda $((2 * N)))" \
      "$(speed all_all all_cuda)" ">= 1.8x" "$(met "$(ratio all_all all_cuda)" '>=' 1.8)"
fi
for n in 120 1000 "$N"; do
  a=auto_$n; c=cpu_$n
  [[ $n == "$N" && -n ${CMD[eq_auto]:-} ]] && { a=eq_auto; c=eq_cpu; }
  [[ -n ${CMD[$a]:-} ]] || continue
  goal=1; [[ $n == 1000 ]] && goal=2
  row "equalize $n JPEGs, auto" "$(cell $a "$n")" "cpu $(cell $c "$n")" "$(speed $a $c)" ">= ${goal}x" "$(met "$(ratio $a $c)" '>=' $goal)"
done
if [[ -n ${CMD[one_cpu]:-} ]]; then
  one() { local t; t=$(median "$1"); [[ -n $t ]] && printf '%.0f ms (n=%s)' "$(calc "$t * 1000")" "$(nruns "$1")"; return 0; }
  if [[ -n ${CMD[one_cuda]:-} ]]; then
    row "one 1080p JPEG file -> file, cuda: wall" "$(one one_cuda)" "cpu $(one one_cpu)" "$(speed one_cuda one_cpu)" "(reported)" "-"
  else
    row "one 1080p JPEG file -> file, cpu: wall" "$(one one_cpu)" "" "" "(no GPU)" "-"
  fi
fi
[[ -n $SKIPPED ]] && echo && echo "Skipped for the time budget:$SKIPPED"
echo
echo "Ratios are speed-ups (the other's median time over imghist's); n = runs in the median; rows of one"
echo "section ran in turns. imghist makes each output durable (fsync'd, renamed); the torchvision peer writes"
echo "plainly. Total wall time of this run: $((SECONDS - START)) s. Logs: $LOGS"
echo
echo "Each run (s, in the order run):"
for key in $(printf '%s\n' "${!TIMES[@]}" | sort); do echo "- $key: ${TIMES[$key]}"; done

# ---- where the time goes ---------------------------------------------------------------------------------------
summary_of() {  # a --trace log: the run's summary (stage clocks, durable rounds, each GPU's stages)
  sed -n '/run: workers done/,$p' "$1" | sed 's/^imghist: trace: \[ *[0-9.]* ms\] /    /'
}
if [[ -s $LOGS/one-trace.log ]]; then
  echo
  echo "## One 1080p JPEG, --device $(cuda_dev), --trace"
  echo
  sed 's/^imghist: trace: /    /' "$LOGS/one-trace.log"
fi
for w in eq hist; do
  [[ -s $LOGS/trace-$w.log ]] || continue
  echo
  echo "## Stage shares, $w of $N JPEGs, --device $(cuda_dev), --trace"
  echo
  summary_of "$LOGS/trace-$w.log"
done
