#!/usr/bin/env bash
# `minimax serve --api-key K` against issue 32's hostile grammars (F1-F4) and their variants, sent
# through every route that compiles one (/tokenize, chat, completions, Anthropic output_config,
# forced tool parameters): each gets a 4xx or a clean answer, the server never crashes, and a
# plain chat sent alongside grammars that are expensive to run still finishes
# (scripts/lib/hostile_grammar_requests.py).
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$2"

bundled_or_tiny_model "$WORK"
start_server "$WORK/server.log" "$MODEL" --threads 2 --max-model-len 1024 --api-key K
PID=${SERVER_PIDS[-1]}
status=0
python3 "$ROOT/scripts/lib/hostile_grammar_requests.py" 127.0.0.1 "$PORT" K || status=1
if ! kill -0 "$PID" 2>/dev/null; then
  echo "FAIL the server died"
  tail -20 "$WORK/server.log"
  status=1
fi
exit $status
