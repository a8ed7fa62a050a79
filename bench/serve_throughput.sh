#!/usr/bin/env bash
# Aggregate decode throughput of `minimax serve` with continuous batching: the same completion
# requests (token-id prompt, fixed length, EOS ignored) run one at a time, then C at once; prints
# generated tokens per second for each and their ratio. Usage:
#   bench/serve_throughput.sh MINIMAX MODEL_DIR [CONCURRENCY=8] [TOKENS=64] [THREADS=2]
set -euo pipefail
MINIMAX=$1
MODEL=$2
C=${3:-8}
TOKENS=${4:-64}
THREADS=${5:-2}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
WORK=$(mktemp -d)
source "$ROOT/scripts/lib/server.sh"
trap 'stop_servers; rm -rf "$WORK"' EXIT
start_server "$WORK/server.log" "$MODEL" --served-model-name bench --threads "$THREADS" \
  --max-model-len 1024 --max-num-seqs "$C"
URL=http://127.0.0.1:$PORT/v1/completions
request() {  # request I: a 32-token prompt that differs per request (no prefix-cache hits)
  local ids
  ids=$(seq -s, $((100 + $1 * 37)) $((131 + $1 * 37)))
  curl -s -H 'Content-Type: application/json' -d "{\"prompt\": [$ids], \"max_tokens\": $TOKENS,
    \"ignore_eos\": true, \"temperature\": 0}" "$URL" >"$WORK/out.$1"
}
now() { date +%s.%N; }
request 0  # warm-up
t0=$(now)
for i in $(seq 1 "$C"); do request "$i"; done
t1=$(now)
pids=()
for i in $(seq $((C + 1)) $((2 * C))); do
  request "$i" &
  pids+=($!)
done
wait "${pids[@]}"
t2=$(now)
total=$((C * TOKENS))
awk -v n="$total" -v a="$t0" -v b="$t1" -v c="$t2" -v k="$C" 'BEGIN {
  s = n / (b - a); p = n / (c - b);
  printf "one at a time: %d tokens in %.2f s = %.1f tok/s\n", n, b - a, s;
  printf "%d at once:     %d tokens in %.2f s = %.1f tok/s (%.2fx)\n", k, n, c - b, p, p / s }'
grep -h '"completion_tokens"' "$WORK"/out.* | grep -vc "\"completion_tokens\":$TOKENS" |
  awk '{ if ($1 > 0) print "warning: " $1 " responses did not generate every token" }'
