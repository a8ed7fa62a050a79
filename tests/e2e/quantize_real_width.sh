#!/usr/bin/env bash
# ctest: slow
# `quantize` at real width (issue 38): each slice is quantized by a run killed (SIGKILL, from
# --stop-after-shards) once its first shard is recorded, then by a --resume run; both runs' peak
# RSS (/usr/bin/time -v) stays under a flat ceiling far below the slice's size, the resumed run
# keeps the recorded shard, and inspect accepts the result as the target layout.
#  - M2.5 block FP8 (tests/data/configs/m2_fp8, 1 layer: about 5.7 GiB) -> mxfp4;
#  - M3 MXFP8 (the m3_mxfp4 config, 1 layer: MSA attention and the dense FFN at full width, 12,288
#    x 6,144; about 5 GiB) -> mxfp4-fp8attn. make-tiny writes no MXFP8 at real width, so the slice
#    is made in block FP8 and quantized to MXFP8 first (a real-width pass of its own).
# Usage: quantize_real_width.sh MINIMAX [SCRATCH]. Slices are made with make-tiny under
# $MINIMAX_QUANTIZE_REAL_WIDTH_DIR (default /tmp/minimax-quantize-real-width) and removed at the
# end; one slice and its output exist at a time. Exit 77 (skipped) when the disk lacks room.
# $MINIMAX_QUANTIZE_REAL_WIDTH_SLICES picks the slices (default "m25 m3").
set -euo pipefail
MINIMAX=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${MINIMAX_QUANTIZE_REAL_WIDTH_DIR:-/tmp/minimax-quantize-real-width}
THREADS=${MINIMAX_REAL_WIDTH_THREADS:-2}
trap 'rm -rf "$BASE"' EXIT
rm -rf "$BASE" && mkdir -p "$BASE"
need_gb=20  # a slice, its MXFP8 copy and an output
free_gb=$(df --output=avail -BG "$BASE" | tail -1 | tr -dc 0-9)
if ((free_gb < need_gb)); then
  echo "skipped: $free_gb GiB free under $BASE, need $need_gb"
  exit 77
fi
[[ -x /usr/bin/time ]] || { echo "skipped: no /usr/bin/time"; exit 77; }
source "$(dirname "$0")/../../scripts/lib/check.sh"  # fail, check

# peak_mib LOG: the peak RSS /usr/bin/time -v wrote to LOG, in MiB.
peak_mib() { echo $(($(sed -n 's/.*Maximum resident set size (kbytes): //p' "$1") / 1024)); }

# slice NAME CONFIG LAYERS MADE FROM TO CEILING_MIB: made by make-tiny in MADE, then in FROM.
slice() {
  local name=$1 config=$2 layers=$3 made=$4 from=$5 to=$6 ceiling=$7
  local src="$BASE/$name" out="$BASE/$name-$to"
  local start=$SECONDS
  "$MINIMAX" make-tiny --hf-config "$config" --layers "$layers" --format "$made" \
    --threads "$THREADS" --output "$src" >"$BASE/make-tiny.log" 2>&1 ||
    fail "make-tiny: $(cat "$BASE/make-tiny.log")"
  if [[ $made != "$from" ]]; then
    /usr/bin/time -v "$MINIMAX" quantize --input "$src" --output "$src-$from" --format "$from" \
      --threads "$THREADS" --quiet >/dev/null 2>"$BASE/first.err" ||
      fail "$name: quantize $made -> $from: $(tail -5 "$BASE/first.err")"
    echo "$name: $made -> $from in $((SECONDS - start)) s, peak RSS $(peak_mib "$BASE/first.err") MiB"
    rm -rf "$src" && mv "$src-$from" "$src"
  fi
  local size_mib
  size_mib=$(($(du -sk "$src" | cut -f1) / 1024))
  echo "$name: $from slice of $size_mib MiB made in $((SECONDS - start)) s"

  start=$SECONDS
  set +e
  /usr/bin/time -v "$MINIMAX" quantize --input "$src" --output "$out" --format "$to" \
    --threads "$THREADS" --quiet --stop-after-shards 1 >/dev/null 2>"$BASE/killed.err"
  local rc=$?
  set -e
  ((rc == 137)) || fail "$name: the killed run exited $rc: $(tail -5 "$BASE/killed.err")"
  [[ -d "$out.partial" && ! -e "$out" ]] || fail "$name: a killed run must leave only $out.partial"
  local killed_mib
  killed_mib=$(peak_mib "$BASE/killed.err")
  echo "$name: killed after one shard at $((SECONDS - start)) s, peak RSS $killed_mib MiB"

  start=$SECONDS
  /usr/bin/time -v "$MINIMAX" quantize --input "$src" --output "$out" --format "$to" \
    --threads "$THREADS" --quiet --resume >"$BASE/resume.log" 2>"$BASE/resume.err" ||
    fail "$name: resume: $(tail -5 "$BASE/resume.err")"
  cat "$BASE/resume.log"
  local resumed_mib
  resumed_mib=$(peak_mib "$BASE/resume.err")
  echo "$name: resumed in $((SECONDS - start)) s, peak RSS $resumed_mib MiB (source $size_mib MiB)"
  grep -q "1 kept from the interrupted run" "$BASE/resume.log" || fail "$name: no shard kept"
  ((killed_mib < ceiling && resumed_mib < ceiling)) ||
    fail "$name: peak RSS $killed_mib / $resumed_mib MiB, expected a flat ceiling under $ceiling"
  "$MINIMAX" inspect --json "$out" >"$BASE/inspect.json" || fail "$name: inspect"
  grep -q "\"quantization\": \"$to\"" "$BASE/inspect.json" || fail "$name: not $to"
  grep -q '"ok": true' "$BASE/inspect.json" || fail "$name: inspect not ok"
  rm -rf "$src" "$out"
}

# The ceilings: the binary, the shard headers, and $THREADS Linears in float32 with their
# encodings (M2.5's largest is 6,144 x 3,072, M3's dense FFN 12,288 x 6,144), far below the slices.
SLICES=" ${MINIMAX_QUANTIZE_REAL_WIDTH_SLICES:-m25 m3} "
[[ $SLICES == *" m25 "* ]] &&
  slice m25 "$ROOT/tests/data/configs/m2_fp8/config.json" 1 fp8-block fp8-block mxfp4 512
[[ $SLICES == *" m3 "* ]] &&
  slice m3 "$ROOT/tests/data/configs/m3_mxfp4/config.json" 1 fp8-block mxfp8 mxfp4-fp8attn 1536
echo "quantize_real_width: OK"
