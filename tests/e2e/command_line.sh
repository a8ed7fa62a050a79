#!/usr/bin/env bash
# The command line of a new user (issue 39): `minimax` alone lists the commands; a typo in a
# command or flag is named with the nearest match before any "required" error; --version says
# which build runs where; a --model path is described before anything loads (missing, not a
# checkpoint, a Hugging Face id, a GGUF file); the model may be the first argument; --threads -1
# means all CPUs and too many threads are refused; serve's KV memory plan gives the model its whole
# context, and a context above the model's is refused. Nothing loads a model but the `generate` and
# the `serve` at the end. $1 = minimax binary, $2 = scratch dir.
source "$(dirname "$0")/../../scripts/lib/e2e.sh" "$1" "$2"
bundled_or_tiny_model "$WORK"

# expect_error TEXT ARGS...: the command fails, prints nothing on stdout, and stderr holds TEXT.
expect_error() {
  local text=$1
  shift
  local status=0
  "$MINIMAX" "$@" >"$WORK/out" 2>"$WORK/err" || status=$?
  check "minimax $* → fails (status $status) with: $text" \
    test "$status" -ne 0 -a ! -s "$WORK/out" -a -n "$(grep -F -- "$text" "$WORK/err")"
  grep -qF -- "$text" "$WORK/err" || echo "     got: $(cat "$WORK/err")"
}

# No arguments: the list of commands (exit 1: nothing was done).
status=0
"$MINIMAX" >"$WORK/usage" 2>&1 || status=$?
check "minimax alone exits 1 (got $status)" test "$status" -eq 1
check "... listing the commands" grep -qE '^  serve +OpenAI-compatible' "$WORK/usage"
check "... not 'A subcommand is required'" bash -c "! grep -q 'subcommand is required' '$WORK/usage'"

# Typos, named before any "required" error.
expect_error "unknown command 'serv'; did you mean 'serve'?" serv
expect_error "unknown flag '--modle' for 'serve'; did you mean '--model'?" serve --modle "$MODEL"
expect_error "unknown flag '--promt' for 'generate'; did you mean '--prompt'?" generate --promt hi
expect_error "(the flags: minimax serve --help)" serve --modle "$MODEL"

# --version: the build and this machine.
"$MINIMAX" --version >"$WORK/version"
for field in "minimax.cpp " "commit: " "build type: " "cpu isa: " "amx: " "mpi: "; do
  check "--version names '$field'" grep -q "^$field" "$WORK/version"
done

# --model paths, before anything is loaded, on the commands that take a model.
mkdir -p "$WORK/empty"
touch "$WORK/model-Q8_0.gguf"
echo text >"$WORK/text.txt"
expect_error "--model $WORK/missing: no such directory" serve --model "$WORK/missing"
expect_error "--model $WORK/missing: no such directory" generate --model "$WORK/missing" --prompt hi
expect_error "--model $WORK/missing: no such directory" \
  perplexity --model "$WORK/missing" --file "$WORK/text.txt"
expect_error "--model $WORK/empty: not a checkpoint directory: no config.json" \
  generate "$WORK/empty" --prompt hi
expect_error "looks like a Hugging Face id; download it first with \`huggingface-cli download MiniMaxAI/MiniMax-M2.5 --local-dir DIR\`" \
  serve MiniMaxAI/MiniMax-M2.5
expect_error "GGUF files are not supported; use the Hugging Face safetensors checkpoint" \
  chat "$WORK/model-Q8_0.gguf"
expect_error "no model given; pass the checkpoint directory as the first argument or as --model DIR" \
  generate --prompt hi
expect_error "the model is given twice, as '$MODEL' and as --model '$WORK/empty'" \
  generate "$MODEL" --model "$WORK/empty" --prompt hi

# --threads: far more than the CPUs is refused naming the flag and the count; -1 is all CPUs.
cpus=$(nproc)
expect_error "--threads: $((2 * cpus + 1)) threads is more than twice the" \
  generate "$MODEL" --threads $((2 * cpus + 1)) --prompt hi
expect_error "--threads: 100000 threads is more than twice the" serve "$MODEL" --threads 100000
"$MINIMAX" generate "$MODEL" --threads -1 --prompt "2 + 3 =" --max-tokens 4 --temperature 0 \
  >"$WORK/generate.out" 2>"$WORK/generate.err"
check "generate DIR --threads -1 runs (the model as the first argument)" test -s "$WORK/generate.out"

# serve's defaults fit the machine: --kv-cache-memory auto gives the model its whole context (the
# pool capped at what the requests could fill), and a context above the model's is refused.
expect_error "--max-model-len: 999999 is above the model's context of" \
  serve "$MODEL" --max-model-len 999999 --port 0
start_server "$WORK/auto.log" "$MODEL" --threads 2
check "serve logs its KV memory plan" grep -q "serve: KV cache .* tokens at .* bytes each" "$WORK/auto.log"
context=$(grep -o '"max_position_embeddings": *[0-9]*' "$MODEL/config.json" | head -1 | grep -o '[0-9]*$')
check "serve without --kv-cache-memory or --max-model-len serves the model's context ($context)" \
  grep -q "max_model_len $context," "$WORK/auto.log"
stop_servers

# --help is grouped and wrapped to the terminal: no line of any command's help is wider than it.
for columns in 80 100; do
  widest=0
  for command in "" $("$MINIMAX" --help | sed -n '/^Subcommands:/,$p' | awk '/^  [a-z]/ {print $1}'); do
    w=$(COLUMNS=$columns "$MINIMAX" $command --help | awk '{ if (length($0) > m) m = length($0) } END { print m + 0 }')
    ((w > widest)) && widest=$w
  done
  check "every command's --help fits $columns columns (widest line: $widest)" test "$widest" -le "$columns"
done
COLUMNS=80 "$MINIMAX" serve --help >"$WORK/help"
check "serve --help has the Server, Parallel and Logging groups" \
  grep -q -e '^Server:' "$WORK/help" -a grep -q '^Parallel:' "$WORK/help"
check "serve --help groups --port under Server" \
  bash -c "sed -n '/^Server:/,/^\$/p' '$WORK/help' | grep -q -- '--port'"

# --allow-credentials with every origin is refused before anything loads (browsers would refuse it).
# (--dry-run prints the flags it checks on stdout first.)
status=0
"$MINIMAX" serve "$MODEL" --port 0 --allowed-origins '*' --allow-credentials --dry-run \
  >/dev/null 2>"$WORK/err" || status=$?
check "serve --allowed-origins '*' --allow-credentials --dry-run fails (status $status), naming it" \
  test "$status" -ne 0 -a -n "$(grep -F -- "--allow-credentials: browsers refuse" "$WORK/err")"

# inspect on a bad path names what the path is, as every other command does.
expect_error "inspect /nonexistent/model: no such directory" inspect /nonexistent/model
expect_error "download it first" inspect MiniMaxAI/MiniMax-M2.5
# inspect prints the memory plan of a checkpoint, and of a released config without its weights.
"$MINIMAX" inspect "$MODEL" --bandwidth-gbs 10 >"$WORK/inspect.out"
check "inspect DIR prints the memory plan and the decode bound at --bandwidth-gbs" \
  grep -q "decode bound .* 10.0 GB/s read (--bandwidth-gbs)" "$WORK/inspect.out"
"$MINIMAX" inspect --hf-config "$ROOT/models/configs/minimax-m2.5-fp8.config.json" --layout fp8-block \
  --tensor-parallel-size 2 --enable-expert-parallel --kv-cache-dtype bf16 --host-memory-gib 192 \
  --bandwidth-gbs 100 \
  >"$WORK/plan.out"
check "inspect --hf-config M2.5 over 2 ranks: 126,976 KV bytes per token per rank" \
  grep -q "KV per token   126976 bytes per rank (253952 for the whole model)" "$WORK/plan.out"

[[ $fails == 0 ]] && echo "command line e2e: all passed"
exit $fails
