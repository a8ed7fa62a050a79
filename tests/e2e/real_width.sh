#!/usr/bin/env bash
# ctest: slow
# Real-width slices of the released models (issue 19): M2 at 2 layers in block FP8 (about 10 GB)
# and M3 at 4 layers in MXFP4 (3 dense layers, one MoE + MSA layer), written by
# `make-tiny --hf-config`, each loaded to generate, serve and bench; bench's peak resident memory
# must stay within mapped weights + KV pool + 1 GiB (+ repacked weights). Writes tens of GB under
# $MINIMAX_REAL_WIDTH_DIR (default /tmp/minimax-real-width), one checkpoint at a time, and removes
# them. Exit 77 (skipped) when the disk lacks room.
set -euo pipefail
MINIMAX=$1
ROOT=$(cd "$(dirname "$0")/../.." && pwd)
BASE=${MINIMAX_REAL_WIDTH_DIR:-/tmp/minimax-real-width}
THREADS=${MINIMAX_REAL_WIDTH_THREADS:-2}
source "$ROOT/scripts/lib/server.sh"
cleanup() {
  stop_servers
  rm -rf "$BASE"
}
trap cleanup EXIT
rm -rf "$BASE" && mkdir -p "$BASE"

need_gb=16  # the larger checkpoint plus room for the page cache's write-back
free_gb=$(df --output=avail -BG "$BASE" | tail -1 | tr -dc 0-9)
if ((free_gb < need_gb)); then
  echo "skipped: $free_gb GB free under $BASE, need $need_gb"
  exit 77
fi

source "$ROOT/scripts/lib/check.sh"

# run_slice NAME CONFIG LAYERS FORMAT
run_slice() {
  local name=$1 config=$2 layers=$3 format=$4
  local dir=$BASE/$name
  echo "== $name: $layers layers of $config as $format"
  local start=$SECONDS
  "$MINIMAX" make-tiny --hf-config "$config" --layers "$layers" --format "$format" \
    --threads "$THREADS" --output "$dir" 2>"$BASE/make-tiny.log" || {
    cat "$BASE/make-tiny.log"
    return 1
  }
  echo "make-tiny took $((SECONDS - start)) s; $(du -sh "$dir" | cut -f1) in" \
    "$(ls "$dir" | grep -c '\.safetensors$') shard(s)"

  # The tokenizer is the tiny one: the random model's argmax over 200064 rows is almost never a
  # token with text, so the check is that generation ran to --max-tokens.
  "$MINIMAX" generate --model "$dir" --prompt "Hello" --max-tokens 4 --temperature 0 \
    --threads "$THREADS" >/dev/null 2>"$BASE/generate.log" || {
    cat "$BASE/generate.log"
    return 1
  }
  cat "$BASE/generate.log"
  check "$name generate" grep -q "finish: length" "$BASE/generate.log"

  start_server "$BASE/serve.log" "$dir" --threads "$THREADS" --max-model-len 2048 \
    --kv-cache-memory 256MiB
  local reply
  reply=$(curl -sS "http://127.0.0.1:$PORT/v1/completions" -H 'Content-Type: application/json' \
    -d '{"prompt": "The quick brown fox", "max_tokens": 4, "temperature": 0}')
  stop_servers
  check "$name serve" python3 -c '
import json, sys
r = json.loads(sys.argv[1])
assert r["usage"]["completion_tokens"] == 4, r
' "$reply"

  "$MINIMAX" bench --model "$dir" --threads "$THREADS" --prompt-tokens 32 --gen-tokens 8 \
    --repeat 2 --bandwidth-mib 256 --json >"$BASE/$name.bench.json"
  python3 - "$BASE/$name.bench.json" "$name" <<'EOF'
import json, sys
r = json.load(open(sys.argv[1]))
m = r["memory"]
gib = lambda b: b / 2**30
print(f"{sys.argv[2]}: prefill {r['prefill_tok_s']:.1f} tok/s, decode {r['decode_tok_s']:.2f} tok/s "
      f"(CPU share {r['decode_cpu_share']:.2f}); peak RSS {gib(m['peak_rss_bytes']):.2f} GiB "
      f"(load {gib(m['load_peak_rss_bytes']):.2f}) vs bound {gib(m['bound_bytes']):.2f} = mapped "
      f"{gib(m['mapped_weight_bytes']):.2f} + KV {gib(m['kv_pool_bytes']):.3f} + 1 + repacked "
      f"{gib(m['repacked_weight_bytes']):.3f}")
EOF
  check "$name peak RSS within the bound" python3 -c '
import json, sys
assert json.load(open(sys.argv[1]))["memory"]["within_bound"]' "$BASE/$name.bench.json"
  rm -rf "$dir"
}

run_slice m2-fp8-2layers "$ROOT/tests/data/configs/m2_fp8/config.json" 2 fp8-block
run_slice m3-mxfp4-4layers "$ROOT/tests/data/configs/m3_mxfp4/config.json" 4 mxfp4

echo "$fails failure(s)"
((fails == 0))
