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
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
for t in $TYPES; do
  "$BIN" bench --model "$MODEL" --threads "$THREADS" --prompt-tokens 16 --gen-tokens 8 \
    --repeat 2 --bandwidth-mib 256 --kv-cache-dtype "$t" "${depth_flags[@]}" --json \
    2>/dev/null >"$WORK/$t.json"
  "$PY" - "$WORK/$t.json" <<'PYEOF'
import json, sys
r = json.load(open(sys.argv[1]))
for d in r["depth"]:
    print("%9s depth %6d: %8.1f ms/token (%.2fx the first depth), CPU share %.2f, fill %s %.1f s"
          % (r["kv_cache_dtype"], d["depth"], d["ms_per_token"], d["ratio_to_first"],
             d["decode_cpu_share"], d["fill"], d["fill_seconds"]))
PYEOF
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
