#!/usr/bin/env bash
# `serve --speculative-config` (issue 37): greedy chat completions (copy tasks, arithmetic, a
# needle, a tool call) answer exactly as a plain server's, sent one at a time and eight at a time,
# streamed and not, for both draft-free methods and, on the bundled model, its trained EAGLE-3
# head (models/minimax-m3-tiny-eagle3); the metrics count accepted draft tokens
# (scripts/lib/speculative_requests.py). Both servers are batch-invariant: speculation turns it on
# by itself, the plain one asks for it.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$2"

bundled_or_tiny_model "$WORK"
common=(--threads 1 --max-model-len 1024 --max-num-seqs 8)
start_server "$WORK/plain.log" "$MODEL" "${common[@]}" --batch-invariant
PLAIN_PORT=$PORT
methods=(ngram suffix)
if [[ $BUNDLED_MODEL == 1 ]]; then methods+=(eagle3); fi
for method in "${methods[@]}"; do
  case $method in
    ngram) config='{"method": "ngram", "num_speculative_tokens": 8, "prompt_lookup_min": 2, "prompt_lookup_max": 4}' ;;
    suffix) config='{"method": "suffix", "num_speculative_tokens": 8}' ;;
    eagle3) config="{\"method\": \"eagle3\", \"model\": \"$ROOT/models/minimax-m3-tiny-eagle3\", \"num_speculative_tokens\": 4, \"adaptive\": false}" ;;
  esac
  start_server "$WORK/$method.log" "$MODEL" "${common[@]}" --speculative-config "$config"
  check "$method: the server says it speculates, batch-invariant" \
    grep -q "speculative decoding: $method.*batch-invariant" "$WORK/$method.log"
  check "$method: the same answers as the plain server" \
    python3 "$ROOT/scripts/lib/speculative_requests.py" 127.0.0.1 "$PLAIN_PORT" "$PORT"
done
# A bad config is refused before the weights load, naming the key.
if "$MINIMAX" serve --model "$MODEL" --port 0 \
  --speculative-config '{"method": "ngram", "bogus": 1}' 2>"$WORK/bad.log"; then
  fail "a bad --speculative-config was accepted"
fi
check "a bad config names the key" grep -q "unknown key 'bogus'" "$WORK/bad.log"
exit $((fails > 0))
