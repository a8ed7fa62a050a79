#!/usr/bin/env bash
# The shipped deployment recipes (recipes/*.yaml, `serve --config`): every one names only real
# `serve` flags with valid values (checked with --dry-run, which stops before loading a model), a
# flag on the command line wins over the recipe, a mistake names the key and the file, and the
# bundled model's recipe serves a chat completion.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$2"
cd "$ROOT"

# Every recipe's keys and values pass the whole preflight with the bundled model in place of the
# real checkpoint (not downloadable here), except that a recipe for a backend this binary lacks is
# refused as such; with its own model path, a missing checkpoint is named.
count=0
for recipe in recipes/*.yaml; do
  if grep -q '^backend: cuda' "$recipe"; then
    if "$MINIMAX" serve --config "$recipe" --model models/minimax-m3-tiny --port 0 --dry-run \
      >"$WORK/out" 2>"$WORK/err"; then
      echo "FAIL $recipe: backend cuda passed the dry run"; exit 1
    fi
    # A build without nvcc lacks the backend; one with it finds no GPU here.
    grep -q -- "--backend cuda: not built into this binary\|--backend cuda: no usable GPU" "$WORK/err" ||
      { echo "FAIL $recipe: $(cat "$WORK/err")"; exit 1; }
  else
    "$MINIMAX" serve --config "$recipe" --model models/minimax-m3-tiny --port 0 \
      --kv-cache-memory 64MiB --max-model-len 1024 --dry-run >"$WORK/out" 2>"$WORK/err" ||
      { echo "FAIL $recipe: $(cat "$WORK/err")"; exit 1; }
    grep -q '^# dry run ok' "$WORK/out" || { echo "FAIL $recipe: $(cat "$WORK/out")"; exit 1; }
  fi
  grep -q '^model: ' "$WORK/out" || { echo "FAIL $recipe: no model in: $(cat "$WORK/out")"; exit 1; }
  model=$(sed -n 's/^model: //p' "$recipe")
  if [[ ! -d $model ]]; then
    if "$MINIMAX" serve --config "$recipe" --backend cpu --dry-run >/dev/null 2>"$WORK/err"; then
      echo "FAIL $recipe: a missing model passed the dry run"; exit 1
    fi
    grep -q "$model" "$WORK/err" || { echo "FAIL $recipe: $(cat "$WORK/err")"; exit 1; }
  fi
  count=$((count + 1))
done
((count >= 5)) || { echo "FAIL only $count recipes"; exit 1; }
echo "ok   $count recipes pass the preflight (cuda ones refused as not built)"

# The dry run prints the memory plan of the model it would load.
out=$("$MINIMAX" serve --config recipes/minimax-m3-tiny.yaml --port 0 --dry-run)
for line in 'memory plan' 'weights' 'KV per token   2432 bytes per rank' 'decode bound'; do
  grep -q "$line" <<<"$out" || { echo "FAIL no '$line' in: $out"; exit 1; }
done
echo "ok   --dry-run prints the memory plan"

# A placeholder key on an address other machines reach is refused; on loopback it is a warning.
if "$MINIMAX" serve --config recipes/minimax-m3-tiny.yaml --host 0.0.0.0 --port 0 \
  --api-key change-me --dry-run >/dev/null 2>"$WORK/err"; then
  echo "FAIL api-key change-me on 0.0.0.0 passed"; exit 1
fi
grep -q "api-key 'change-me' is a placeholder" "$WORK/err" || { echo "FAIL: $(cat "$WORK/err")"; exit 1; }
"$MINIMAX" serve --config recipes/minimax-m3-tiny.yaml --port 0 --api-key change-me --dry-run \
  >/dev/null 2>"$WORK/err" || { echo "FAIL loopback placeholder: $(cat "$WORK/err")"; exit 1; }
grep -q "placeholder" "$WORK/err" || { echo "FAIL no warning: $(cat "$WORK/err")"; exit 1; }
echo "ok   a placeholder API key is refused on 0.0.0.0 and warned about on loopback"

# A wrong parser name, a bad size and a taken port fail the dry run, each named.
for bad in "--reasoning-parser minimax_m4:unknown parser 'minimax_m4'" \
  "--kv-cache-memory 4XB:unknown unit 'XB'" "--model /nonexistent/M:/nonexistent/M"; do
  if "$MINIMAX" serve --config recipes/minimax-m3-tiny.yaml --port 0 ${bad%%:*} --dry-run \
    >/dev/null 2>"$WORK/err"; then
    echo "FAIL ${bad%%:*} passed the dry run"; exit 1
  fi
  grep -q -- "${bad#*:}" "$WORK/err" || { echo "FAIL ${bad%%:*}: $(cat "$WORK/err")"; exit 1; }
done
python3 -c 'import socket,time,sys; s=socket.socket(); s.bind(("127.0.0.1",0)); s.listen(); print(s.getsockname()[1], flush=True); time.sleep(30)' >"$WORK/port" &
holder=$!
for _ in $(seq 50); do [[ -s $WORK/port ]] && break; sleep 0.1; done
if "$MINIMAX" serve --config recipes/minimax-m3-tiny.yaml --port "$(cat "$WORK/port")" --dry-run \
  >/dev/null 2>"$WORK/err"; then
  kill "$holder"; echo "FAIL a taken port passed the dry run"; exit 1
fi
kill "$holder"
echo "ok   a wrong parser, a bad size, a missing model and a taken port fail the dry run"

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

# serve_recipe LOG ARGS...: starts `serve ARGS` on a free port (PORT), waits until it listens.
serve_recipe() {
  local log=$1
  shift
  "$MINIMAX" serve "$@" --port 0 2>"$log" &
  SERVER_PIDS+=($!)
  wait_listening "$log" $!
}
# ask QUESTION MAX_TOKENS: a greedy chat completion from the server on PORT; fails without an answer.
ask() {
  local reply
  reply=$(curl -sf "http://127.0.0.1:$PORT/v1/chat/completions" -H 'Content-Type: application/json' \
    -d "{\"model\":\"minimax-m3-tiny\",\"messages\":[{\"role\":\"user\",\"content\":\"$1\"}],
         \"max_tokens\":$2,\"temperature\":0}")
  grep -q '"finish_reason"' <<<"$reply" || { echo "FAIL reply to '$1': $reply"; exit 1; }
}

serve_recipe "$WORK/serve.log" --config recipes/minimax-m3-tiny.yaml --threads 1
ask "What is 2 + 3?" 8
grep -q "max_model_len 4096" "$WORK/serve.log" || { echo "FAIL log: $(cat "$WORK/serve.log")"; exit 1; }
echo "ok   the bundled model's recipe serves"

# A JSON-valued flag written as YAML (as vLLM's --config takes a dict): the EAGLE-3 head of the
# bundled model from a recipe, drafting.
cat >"$WORK/eagle3.yaml" <<YAML
model: models/minimax-m3-tiny
threads: 1
speculative-config:
  method: eagle3
  model: models/minimax-m3-tiny-eagle3
  num_speculative_tokens: 4
  adaptive: false
YAML
# Its dry run counts the head and the tap store beside the pool, which shrinks by their share.
tokens_of() { sed -n 's/^  tokens *\([0-9]*\) in the KV pool.*/\1/p' <<<"$1"; }
big=(--port 0 --max-model-len 65536 --max-num-seqs 1024 --dry-run)
with=$("$MINIMAX" serve --config "$WORK/eagle3.yaml" "${big[@]}")
without=$("$MINIMAX" serve --model models/minimax-m3-tiny "${big[@]}")
grep -q "draft head .*EAGLE-3 head's weights and the server's tap store" <<<"$with" ||
  { echo "FAIL no draft head in the plan: $with"; exit 1; }
(($(tokens_of "$with") < $(tokens_of "$without"))) ||
  { echo "FAIL the pool did not leave room for the head: $with / $without"; exit 1; }
echo "ok   the dry run's memory plan leaves room for the EAGLE-3 head and its tap store"
serve_recipe "$WORK/eagle3.log" --config "$WORK/eagle3.yaml"
ask "What is 417 + 385?" 48
drafts=$(curl -sf "http://127.0.0.1:$PORT/metrics" | sed -n 's/^vllm:spec_decode_num_drafts_total{[^}]*} //p')
[[ -n $drafts && ${drafts%.*} -gt 0 ]] || { echo "FAIL no drafts from the recipe's head: '$drafts'"; exit 1; }
echo "ok   a recipe's speculative-config written as YAML serves with the EAGLE-3 head ($drafts drafts)"
