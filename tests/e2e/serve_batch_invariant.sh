#!/usr/bin/env bash
# `serve --batch-invariant` (issue 35): 16 greedy chat completions with top-5 logprobs, sent one at
# a time, then 8 at a time, then again once their prefixes are cached, return identical texts and
# logprob values; an Anthropic tool-result round trip sent between them answers the same every
# time (scripts/lib/batch_invariant_requests.py). The server runs bf16x2, whose batch GEMM would
# otherwise round differently from its decode rows.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$2"

bundled_or_tiny_model "$WORK"
start_server "$WORK/server.log" "$MODEL" --threads 2 --max-model-len 2048 --max-num-seqs 8 \
  --activations bf16x2 --batch-invariant
check "the server says it is batch-invariant" grep -q "batch-invariant" "$WORK/server.log"
check "the same answers under any load" \
  python3 "$ROOT/scripts/lib/batch_invariant_requests.py" 127.0.0.1 "$PORT"
exit $((fails > 0))
