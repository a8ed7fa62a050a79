#!/usr/bin/env bash
# `minimax parse` on the parser cases in tests/data/parsers: each case's input through the
# non-streaming path ("output") and through the streaming path ("chunks", cut at every character
# and every 5 characters) must print the case's expected message; bad input must fail with a
# message naming the field. $1 = minimax binary, $2 = scratch dir.
set -euo pipefail
MINIMAX=$1
WORK=$2
CASES=$(cd "$(dirname "$0")/../data/parsers" && pwd)
rm -rf "$WORK" && mkdir -p "$WORK"

source "$(dirname "$0")/../../scripts/lib/check.sh"  # fail, check

# Writes the inputs of one case: whole, and chunked two ways.
split_case() {
  python3 - "$1" "$WORK" <<'PY'
import json, sys
case = json.load(open(sys.argv[1]))
work = sys.argv[2]
inp = case["input"]
json.dump(inp, open(f"{work}/whole.json", "w"))
for name, size in (("chars", 1), ("fives", 5)):
    chunked = {k: v for k, v in inp.items() if k != "output"}
    out = inp["output"]
    chunked["chunks"] = [out[i:i + size] for i in range(0, len(out), size)]
    json.dump(chunked, open(f"{work}/{name}.json", "w"))
json.dump(case["expected"], open(f"{work}/expected.json", "w"))
print(case["parser"])
PY
}

# Same JSON value (object key order aside).
same_json() {
  python3 - "$1" "$2" <<'PY'
import json, sys
sys.exit(0 if json.load(open(sys.argv[1])) == json.load(open(sys.argv[2])) else 1)
PY
}

count=0
for file in "$CASES"/*.json; do
  name=$(basename "$file" .json)
  parser=$(split_case "$file")
  for form in whole chars fives; do
    "$MINIMAX" parse --parser "$parser" < "$WORK/$form.json" > "$WORK/got.json" \
      || fail "$name ($form): exit status $?"
    same_json "$WORK/got.json" "$WORK/expected.json" \
      || fail "$name ($form): got $(cat "$WORK/got.json"), expected $(cat "$WORK/expected.json")"
  done
  count=$((count + 1))
done
(( count >= 20 )) || fail "only $count cases found in $CASES"

# Bad input: a message naming what is wrong, non-zero exit, nothing on stdout.
expect_error() {  # $1 = parser, $2 = stdin, $3 = expected message part
  if "$MINIMAX" parse --parser "$1" <<< "$2" > "$WORK/out.txt" 2> "$WORK/err.txt"; then
    fail "accepted: $2"
  fi
  grep -qF -- "$3" "$WORK/err.txt" || fail "for $2: unclear message: $(cat "$WORK/err.txt")"
  [[ ! -s "$WORK/out.txt" ]] || fail "for $2: printed $(cat "$WORK/out.txt")"
}
expect_error minimax_m2 '{"output": "x"' 'not valid JSON'
expect_error minimax_m2 '["x"]' 'expected a JSON object'
expect_error minimax_m2 '{"prompt": "x"}' 'exactly one of "output"'
expect_error minimax_m2 '{"output": "x", "chunks": ["x"]}' 'exactly one of "output"'
expect_error minimax_m2 '{"chunks": ["a", 1]}' 'chunks[1]'
expect_error minimax_m2 '{"output": 3}' '"output" must be a string'
expect_error minimax_m2 '{"output": "x", "tools": [{"function": {"parameters": {}}}]}' 'tools[0].function.name'
expect_error minimax_m3 '{"output": "x", "chat_template_kwargs": {"thinking_mode": "sometimes"}}' \
  'chat_template_kwargs.thinking_mode'
expect_error qwen3 '{"output": "x"}' "unknown parser 'qwen3'"

echo "parse_cli: $count cases, each whole and streamed two ways; 9 bad inputs refused"
