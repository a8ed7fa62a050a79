#!/usr/bin/env bash
# End to end: the bundled model with its trained EAGLE-3 head (models/minimax-m3-tiny-eagle3,
# tools/train_eagle3.py) and with a random head from `make-tiny --draft eagle3`: `generate` (raw
# and --chat) gives the plain batch-invariant run's text byte for byte, the trained head's drafts
# are accepted (the random head's need not be), `bench --replay` reports its accepted length, and
# a head for another target or a bad head directory is refused with the field or file named.
# Usage: eagle3_bundled.sh MINIMAX_BINARY SCRATCH_DIR
set -euo pipefail
bin=$1
work=$2
root=$(cd "$(dirname "$0")/../.." && pwd)
source "$root/scripts/lib/check.sh"  # fail, check
rm -rf "$work"
mkdir -p "$work"
model=$root/models/minimax-m3-tiny
trained=$root/models/minimax-m3-tiny-eagle3
# Both are committed: missing is a failure, not a skip.
[[ -f $model/config.json && -f $trained/config.json ]] || { echo "FAIL the bundled model or its head is missing"; exit 1; }
"$bin" make-tiny --draft eagle3 --hf-config "$model/config.json" --output "$work/random" >/dev/null

spec() { echo "{\"method\": \"eagle3\", \"model\": \"$1\", \"num_speculative_tokens\": 4, \"adaptive\": false}"; }
gen() { "$bin" generate --model "$model" --threads 1 --temperature 0 --max-tokens 64 "$@"; }
n=0
for prompt in "Copy this text exactly: the small green house stands near old river" \
              "What is 27 + 45?" "Recall: apple=3, banana=7. What is banana?"; do
  n=$((n + 1))
  gen --chat --prompt "$prompt" --batch-invariant >"$work/plain.$n" 2>/dev/null
  gen --chat --prompt "$prompt" --speculative-config "$(spec "$trained")" >"$work/trained.$n" 2>"$work/trained.$n.err"
  gen --chat --prompt "$prompt" --speculative-config "$(spec "$work/random")" >"$work/random.$n" 2>/dev/null
  cmp -s "$work/plain.$n" "$work/trained.$n" || fail "prompt $n: the trained head changed the text"
  cmp -s "$work/plain.$n" "$work/random.$n" || fail "prompt $n: the random head changed the text"
done
gen --prompt "The small green house" --batch-invariant >"$work/raw.plain" 2>/dev/null
gen --prompt "The small green house" --speculative-config "$(spec "$trained")" >"$work/raw.spec" 2>/dev/null
cmp -s "$work/raw.plain" "$work/raw.spec" || fail "raw prompt: the trained head changed the text"
accepted=$(cat "$work"/trained.*.err | sed -n 's/.* \([0-9]*\) of [0-9]* draft tokens accepted.*/\1/p' |
  awk '{s += $1} END {print s + 0}')
((accepted > 0)) || fail "the trained head had no draft token accepted: $(cat "$work"/trained.*.err)"

# bench --replay with the head: the case's own text, the accepted length reported.
python3 -c 'import json,sys; print(json.dumps({"prompt": sys.argv[1], "output": sys.argv[2]}))' \
  "$(cat "$work/plain.1")" "$(cat "$work/plain.1")" >"$work/replay.jsonl"
"$bin" bench --model "$model" --threads 1 --replay "$work/replay.jsonl" --repeat 1 --json \
  --speculative-config "$(spec "$trained")" >"$work/replay.json" 2>/dev/null ||
  fail "bench --replay with an EAGLE-3 head failed"
grep -q '"mean_accepted_length"' "$work/replay.json" || fail "bench --replay: no accepted length"

# Refusals name what is wrong.
"$bin" make-tiny --draft eagle3 --hf-config "$root/models/configs/minimax-m2.5-fp8.config.json" \
  --layers 4 --output "$work/m25" >/dev/null
if gen --prompt hi --speculative-config "$(spec "$work/m25")" >/dev/null 2>"$work/other.err"; then
  fail "a head for another target was accepted"
fi
grep -q "'vocab_size' is 200064, but the target model has" "$work/other.err" || fail "other target: $(cat "$work/other.err")"
if gen --prompt hi --speculative-config "$(spec "$work/nowhere")" >/dev/null 2>"$work/none.err"; then
  fail "a missing head directory was accepted"
fi
grep -q "nowhere" "$work/none.err" || fail "missing head: $(cat "$work/none.err")"
exit $((fails > 0))
