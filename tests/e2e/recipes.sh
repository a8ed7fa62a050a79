#!/usr/bin/env bash
# The shipped deployment recipes (recipes/*.yaml, `serve --config`): every one names only real
# `serve` flags with valid values (checked with --dry-run, which stops before loading a model), a
# flag on the command line wins over the recipe, a mistake names the key and the file, and the
# bundled model's recipe serves a chat completion.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$2"
cd "$ROOT"

count=0
for recipe in recipes/*.yaml; do
  out=$("$MINIMAX" serve --config "$recipe" --dry-run)
  grep -q '^model: ' <<<"$out" || { echo "FAIL $recipe: no model in: $out"; exit 1; }
  count=$((count + 1))
done
((count >= 4)) || { echo "FAIL only $count recipes"; exit 1; }
echo "ok   $count recipes hold only serve flags"

out=$("$MINIMAX" serve --config recipes/minimax-m3-tiny.yaml --port 1234 --dry-run)
grep -qx 'port: 1234' <<<"$out" || { echo "FAIL the command line did not win: $out"; exit 1; }
echo "ok   the command line wins over the recipe"

printf 'model: x\nmax_model_len: 10\n' >"$WORK/bad.yaml"
if "$MINIMAX" serve --config "$WORK/bad.yaml" --dry-run 2>"$WORK/err"; then
  echo "FAIL a recipe with an unknown key was accepted"; exit 1
fi
grep -q "recipe '$WORK/bad.yaml' line 2: unknown key 'max_model_len' (did you mean 'max-model-len'?)" \
  "$WORK/err" || { echo "FAIL error: $(cat "$WORK/err")"; exit 1; }
echo "ok   an unknown key is named with its file and line"

"$MINIMAX" serve --config recipes/minimax-m3-tiny.yaml --port 0 --threads 1 2>"$WORK/serve.log" &
SERVER_PIDS+=($!)
wait_listening "$WORK/serve.log" $!
reply=$(curl -sf "http://127.0.0.1:$PORT/v1/chat/completions" -H 'Content-Type: application/json' \
  -d '{"model":"minimax-m3-tiny","messages":[{"role":"user","content":"What is 2 + 3?"}],
       "max_tokens":8,"temperature":0}')
grep -q '"finish_reason"' <<<"$reply" || { echo "FAIL reply: $reply"; exit 1; }
grep -q "max_model_len 4096" "$WORK/serve.log" || { echo "FAIL log: $(cat "$WORK/serve.log")"; exit 1; }
echo "ok   the bundled model's recipe serves"
