#!/usr/bin/env bash
# Decode cost against context length on one model, in one `minimax bench` run per KV cache type:
# decode ms/token at each --depth and its ratio to the first depth (same run, same process, so a
# change in the machine's load hits each depth alike only if it is steady: the load average is
# printed before and after). Issue 15's long-context check: the M3 benchmark shape (MSA) at 32768
# must cost at most 1.5x its decode at 2048.
# Usage:
#   bench/kv_depth.sh MINIMAX MODEL_DIR [DEPTHS="2048 32768"] [TYPES="bf16 fp8_e4m3"] [THREADS=2]
set -euo pipefail
BIN=$1
MODEL=$2
DEPTHS=${3:-"2048 32768"}
TYPES=${4:-"bf16 fp8_e4m3"}
THREADS=${5:-2}
PY=$(command -v /usr/bin/python3 || command -v python3)
depth_flags=()
for d in $DEPTHS; do depth_flags+=(--depth "$d"); done
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
for t in $TYPES; do
  "$BIN" bench --model "$MODEL" --threads "$THREADS" --prompt-tokens 32 --gen-tokens 16 \
    --repeat 3 --bandwidth-mib 256 --kv-cache-dtype "$t" "${depth_flags[@]}" --json |
    "$PY" -c '
import json, sys
r = json.load(sys.stdin)
for d in r["depth"]:
    print(f"{r[\"kv_cache_dtype\"]:>9} depth {d[\"depth\"]:>6}: {d[\"ms_per_token\"]:8.1f} ms/token "
          f"({d[\"ratio_to_first\"]:.2f}x the first depth), CPU share {d[\"decode_cpu_share\"]:.2f}, "
          f"fill {d[\"fill\"]} {d[\"fill_seconds\"]:.1f} s")'
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
