#!/usr/bin/env bash
# bench_cli_peers.sh — imghist against the image tools people already use, on the CPU workloads of the CLI's
# first performance targets, in one run on one machine (scripts/bench_cli.sh runs it for its sections png,
# folder and stretch; the GPU targets are bench_cli.sh's own):
#   1. equalize one 7680x4320 gray PNG (a photograph upscaled, with sensor-like noise);
#   2. luma-equalize a folder of 120 1920x1080 colour JPEGs (4:2:0, quality 92), written at quality 90;
#   3. and 4. the same two inputs through a 2%/1% contrast stretch (imghist stretch, ImageMagick
#      -contrast-stretch 2%x1%), beside imghist's own equalize times (stretch should be at least as fast).
# Peers, each where installed (a missing one is reported, not fatal): ImageMagick (convert / mogrify),
# libvips (vips), OpenCV-python (cv2). Every command is timed RUNS times; the median is reported with the
# output size. Inputs are generated once with vips, ImageMagick or OpenCV-python (the first available).
#
# Usage: scripts/bench_cli_peers.sh [-b path/to/imghist] [-w workdir] [-r runs] [-d device] [-n jpeg-count]
#                                   [-s "png folder stretch"]
#   IMGHIST, WORK, RUNS, DEVICE, COUNT and SECTIONS in the environment do the same. A file base.jpg already
#   in the work folder is used as the JPEG input instead of a generated one.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
[[ -d $here/samples ]] || here=$(cd "$(dirname "$0")" && pwd)  # a GPU bundle: samples/ beside the script
IMGHIST=${IMGHIST:-}
WORK=${WORK:-}
RUNS=${RUNS:-3}
DEVICE=${DEVICE:-auto}
COUNT=${COUNT:-120}
SECTIONS=${SECTIONS:-png folder stretch}
while getopts "b:w:r:d:n:s:h" opt; do
  case $opt in
    b) IMGHIST=$OPTARG ;;
    w) WORK=$OPTARG ;;
    r) RUNS=$OPTARG ;;
    d) DEVICE=$OPTARG ;;
    n) COUNT=$OPTARG ;;
    s) SECTIONS=$OPTARG ;;
    *) sed -n '2,16p' "$0"; exit 0 ;;
  esac
done
if [[ -z $IMGHIST ]]; then
  for c in "$here"/build*/tools/imghist/imghist; do [[ -x $c ]] && IMGHIST=$c && break; done
  [[ -z $IMGHIST ]] && IMGHIST=$(command -v imghist || true)
fi
[[ -x $IMGHIST ]] || { echo "bench_cli_peers: imghist program not found (build target imghist_cli, or pass -b)" >&2; exit 1; }
IMGHIST=$(cd "$(dirname "$IMGHIST")" && pwd)/$(basename "$IMGHIST")  # the commands run inside the work folder
[[ -z $WORK ]] && WORK=$(mktemp -d "${TMPDIR:-/tmp}/imghist-bench.XXXXXX")
mkdir -p "$WORK"
cd "$WORK"

# ---- which peers exist -------------------------------------------------------------------------------------
have_im=0; have_vips=0; have_cv=0; PY=
if command -v convert >/dev/null && convert -version 2>/dev/null | grep -q ImageMagick; then have_im=1; fi
if command -v vips >/dev/null; then have_vips=1; fi
for p in python3 /usr/bin/python3; do
  if command -v "$p" >/dev/null && "$p" -c "import cv2" 2>/dev/null; then have_cv=1; PY=$p; break; fi
done

echo "# imghist CLI benchmark"
echo
echo "- machine: $(nproc) hardware threads, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
if command -v nvidia-smi >/dev/null; then echo "- GPU: $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"; fi
echo "- imghist: $("$IMGHIST" --version), --device $DEVICE"
echo "- ImageMagick: $([[ $have_im == 1 ]] && convert -version | head -1 | cut -d' ' -f2-3 || echo 'not installed')"
echo "- libvips: $([[ $have_vips == 1 ]] && vips --version || echo 'not installed')"
echo "- OpenCV-python: $([[ $have_cv == 1 ]] && $PY -c 'import cv2; print(cv2.__version__)' || echo 'not installed')"
echo "- runs per command: $RUNS (median reported); work folder: $WORK"
echo

# ---- inputs ------------------------------------------------------------------------------------------------
gray_src=$here/samples/images/camera.png
color_src=$here/samples/images/coffee.png
if [[ ! -f big.png || ! -d jpegs || $(ls jpegs | wc -l) -ne $COUNT ]]; then
  rm -rf jpegs; mkdir -p jpegs
  if [[ -f base.jpg && $SECTIONS != *png* && $SECTIONS != *stretch* ]]; then
    :  # the given JPEG; no big PNG needed
  elif [[ $have_vips == 1 ]]; then
    vips resize "$gray_src" up.v 15 --vscale 8.4375
    vips gaussnoise noise.v 7680 4320 --sigma 3 --mean 0
    vips add up.v noise.v sum.v
    vips cast sum.v big.png uchar
    vips resize "$color_src" c.v 3.2 --vscale 2.7
    vips gaussnoise n1.v 1920 1080 --sigma 4 --mean 0
    vips bandjoin "n1.v n1.v n1.v" n3.v
    vips add c.v n3.v c2.v
    vips cast c2.v "base.jpg[Q=92,subsample-mode=on]" uchar
    rm -f ./*.v
  elif [[ $have_cv == 1 ]]; then
    $PY - "$gray_src" "$color_src" <<'PYEOF'
import cv2, numpy as np, sys
rng = np.random.default_rng(1)
g = cv2.resize(cv2.imread(sys.argv[1], cv2.IMREAD_GRAYSCALE), (7680, 4320), interpolation=cv2.INTER_CUBIC)
cv2.imwrite("big.png", np.clip(g + rng.normal(0, 3, g.shape), 0, 255).astype(np.uint8))
c = cv2.resize(cv2.imread(sys.argv[2]), (1920, 1080), interpolation=cv2.INTER_CUBIC)
n = rng.normal(0, 4, c.shape[:2])[:, :, None]
cv2.imwrite("base.jpg", np.clip(c + n, 0, 255).astype(np.uint8), [cv2.IMWRITE_JPEG_QUALITY, 92])
PYEOF
  elif [[ $have_im == 1 ]]; then
    convert "$gray_src" -filter Catrom -resize '7680x4320!' -attenuate 0.4 +noise Gaussian -colorspace Gray big.png
    convert "$color_src" -filter Catrom -resize '1920x1080!' -attenuate 0.4 +noise Gaussian -sampling-factor 4:2:0 -quality 92 base.jpg
  else
    echo "note: no vips, ImageMagick or OpenCV-python: inputs are imghist-generated noise, not photographs" >&2
    "$IMGHIST" gen big.png --dist normal --size 7680x4320 --mean 120 --stddev 30
    "$IMGHIST" gen base.jpg --dist normal --size 1920x1080 --channels 3 --mean 120 --stddev 30 --quality 92
  fi
  for i in $(seq -w 1 "$COUNT"); do cp base.jpg "jpegs/img$i.jpg"; done
fi

cat > eq_one.py <<'PYEOF'
import cv2, sys
cv2.imwrite(sys.argv[2], cv2.equalizeHist(cv2.imread(sys.argv[1], cv2.IMREAD_GRAYSCALE)))
PYEOF
cat > eq_dir.py <<'PYEOF'
import cv2, os, sys
src, dst = sys.argv[1], sys.argv[2]
os.makedirs(dst, exist_ok=True)
for name in sorted(os.listdir(src)):
    ycc = cv2.cvtColor(cv2.imread(os.path.join(src, name), cv2.IMREAD_COLOR), cv2.COLOR_BGR2YCrCb)
    ycc[:, :, 0] = cv2.equalizeHist(ycc[:, :, 0])
    cv2.imwrite(os.path.join(dst, name), cv2.cvtColor(ycc, cv2.COLOR_YCrCb2BGR), [cv2.IMWRITE_JPEG_QUALITY, 90])
PYEOF

# ---- timing ------------------------------------------------------------------------------------------------
# calc EXPR: floating-point arithmetic and comparisons (1/0) through awk (bc is missing on some hosts).
calc() { awk "BEGIN { print ($1) }"; }
# time_cmd OUTPUT CMD...: runs CMD RUNS times (OUTPUT, a file or folder, removed before each run, so the
# last run's output is what size_of measures); prints the median seconds.
time_cmd() {
  local out=$1; shift
  local times=()
  for ((r = 0; r < RUNS; r++)); do
    rm -rf "$out"
    local t0 t1
    t0=$(date +%s.%N)
    "$@" >/dev/null 2>&1 || { echo "FAILED"; return; }
    t1=$(date +%s.%N)
    times+=("$(calc "$t1 - $t0")")
  done
  printf '%s\n' "${times[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.3f\n", a[int((NR+1)/2)]}'
}
size_of() { du -sb "$1" 2>/dev/null | cut -f1; }
# time_alternating OUT_A OUT_B -- CMD_A... -- CMD_B...: RUNS runs of each, A and B taking turns, so that
# drifts of the machine (clock, page cache, other load) fall on both alike; prints "median_A median_B".
time_alternating() {
  local out_a=$1 out_b=$2; shift 3
  local -a cmd_a=() cmd_b=() ta=() tb=()
  while [[ $1 != -- ]]; do cmd_a+=("$1"); shift; done
  shift
  cmd_b=("$@")
  for ((r = 0; r < RUNS; r++)); do
    local t0 t1
    rm -rf "$out_a"; t0=$(date +%s.%N); "${cmd_a[@]}" >/dev/null 2>&1 || { echo "FAILED FAILED"; return; }; t1=$(date +%s.%N)
    ta+=("$(calc "$t1 - $t0")")
    rm -rf "$out_b"; t0=$(date +%s.%N); "${cmd_b[@]}" >/dev/null 2>&1 || { echo "FAILED FAILED"; return; }; t1=$(date +%s.%N)
    tb+=("$(calc "$t1 - $t0")")
  done
  local ma mb
  ma=$(printf '%s\n' "${ta[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}')
  mb=$(printf '%s\n' "${tb[@]}" | sort -g | awk '{a[NR]=$1} END {printf "%.3f", a[int((NR+1)/2)]}')
  echo "$ma $mb"
}

declare -a rows=()
peer_best=""
peer_best_size=""
ours_t=""
ours_size=""
record() {  # name seconds bytes is_ours
  rows+=("$1|$2|$3")
  if [[ $4 == 1 ]]; then ours_t=$2; ours_size=$3; return; fi
  [[ $2 == FAILED ]] && return
  if [[ -z $peer_best ]] || (( $(calc "$2 < $peer_best") )); then peer_best=$2; peer_best_size=$3; fi
}
table() {  # title
  echo "## $1"
  echo
  echo "| tool | median s | output MB | vs imghist |"
  echo "|---|---|---|---|"
  local row name t b
  for row in "${rows[@]}"; do
    IFS='|' read -r name t b <<<"$row"
    local ratio="-"
    [[ $t != FAILED && -n $ours_t ]] && ratio=$(printf '%.2fx' "$(calc "$t / $ours_t")")
    printf '| %s | %s | %.2f | %s |\n' "$name" "$t" "$(calc "$b / 1000000")" "$ratio"
  done
  if [[ -n $peer_best ]]; then
    echo
    printf 'imghist is %.2fx faster than the fastest peer; its output size differs from that peer'"'"'s by %+.1f%%.\n' \
      "$(calc "$peer_best / $ours_t")" "$(calc "100 * $ours_size / $peer_best_size - 100")"
  fi
  echo
  rows=(); peer_best=""; peer_best_size=""; ours_t=""; ours_size=""
}

mkdir -p out
section() { [[ " $SECTIONS " == *" $1 "* ]]; }
if section png; then
# 1. one 7680x4320 gray PNG
t=$(time_cmd out/imghist.png "$IMGHIST" equalize big.png out/imghist.png --device "$DEVICE")
record "imghist equalize" "$t" "$(size_of out/imghist.png)" 1
if [[ $have_im == 1 ]]; then
  t=$(time_cmd out/im.png convert big.png -equalize out/im.png)
  record "ImageMagick convert -equalize" "$t" "$(size_of out/im.png)" 0
fi
if [[ $have_vips == 1 ]]; then
  t=$(time_cmd out/vips.png vips hist_equal big.png out/vips.png)
  record "vips hist_equal" "$t" "$(size_of out/vips.png)" 0
fi
if [[ $have_cv == 1 ]]; then
  t=$(time_cmd out/cv.png "$PY" eq_one.py big.png out/cv.png)
  record "OpenCV-python equalizeHist" "$t" "$(size_of out/cv.png)" 0
fi
table "Equalize one 7680x4320 gray PNG"
fi

if section folder; then
# 2. a folder of JPEGs, luma equalization, quality 90
t=$(time_cmd out/ih "$IMGHIST" equalize jpegs out/ih --quality 90 --device "$DEVICE" -q)
record "imghist equalize (folder)" "$t" "$(size_of out/ih)" 1
if [[ $have_im == 1 ]] && command -v mogrify >/dev/null; then
  mog() { mkdir -p out/im && mogrify -path out/im -quality 90 -colorspace YCbCr -channel R -equalize +channel -colorspace sRGB jpegs/*.jpg; }
  t=$(time_cmd out/im mog)
  record "mogrify (Y of YCbCr)" "$t" "$(size_of out/im)" 0
fi
if [[ $have_vips == 1 ]]; then
  vip() { mkdir -p out/vips && ls jpegs | xargs -P "$(nproc)" -I{} vips hist_equal jpegs/{} "out/vips/{}[Q=90]"; }
  t=$(time_cmd out/vips vip)
  record "vips hist_equal, $(nproc) at a time" "$t" "$(size_of out/vips)" 0
fi
if [[ $have_cv == 1 ]]; then
  t=$(time_cmd out/cv "$PY" eq_dir.py jpegs out/cv)
  record "OpenCV-python loop (YCrCb)" "$t" "$(size_of out/cv)" 0
fi
table "Luma-equalize a folder of $COUNT 1920x1080 JPEGs"
fi

if section stretch; then
# 3. contrast stretch 2%/1% of the 7680x4320 PNG; imghist's equalize of it as the reference row
eq_big=$(time_cmd out/imghist-eq.png "$IMGHIST" equalize big.png out/imghist-eq.png --device "$DEVICE")
t=$(time_cmd out/imghist-st.png "$IMGHIST" stretch big.png out/imghist-st.png --low 2% --high 1% --device "$DEVICE")
record "imghist stretch 2%/1%" "$t" "$(size_of out/imghist-st.png)" 1
record "imghist equalize (same input)" "$eq_big" "$(size_of out/imghist-eq.png)" 0
if [[ $have_im == 1 ]]; then
  t=$(time_cmd out/im-st.png convert big.png -contrast-stretch 2%x1% out/im-st.png)
  record "ImageMagick convert -contrast-stretch 2%x1%" "$t" "$(size_of out/im-st.png)" 0
fi
table "Contrast-stretch one 7680x4320 gray PNG"

# 4. contrast stretch of the JPEG folder (luma percentiles, one table for R, G, B), quality 90
# Alternating runs: the two differ by less than the machine's drift over a sequence of runs.
read -r t eq_dir < <(time_alternating out/ih-st out/ih-eq -- "$IMGHIST" stretch jpegs out/ih-st --quality 90 --device "$DEVICE" -q \
                       -- "$IMGHIST" equalize jpegs out/ih-eq --quality 90 --device "$DEVICE" -q)
record "imghist stretch (folder)" "$t" "$(size_of out/ih-st)" 1
record "imghist equalize (folder, same input)" "$eq_dir" "$(size_of out/ih-eq)" 0
if [[ $have_im == 1 ]] && command -v mogrify >/dev/null; then
  mogs() { mkdir -p out/im-st && mogrify -path out/im-st -quality 90 -contrast-stretch 2%x1% jpegs/*.jpg; }
  t=$(time_cmd out/im-st mogs)
  record "mogrify -contrast-stretch 2%x1%" "$t" "$(size_of out/im-st)" 0
fi
table "Contrast-stretch a folder of $COUNT 1920x1080 JPEGs"
fi
