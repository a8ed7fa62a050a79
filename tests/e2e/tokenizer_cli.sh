#!/usr/bin/env bash
# `minimax tokenizer train|encode|decode`: trains a small BPE on a corpus, checks that encoding
# then decoding gives the texts back, that the MiniMax special tokens are single ids, that merges
# learned from the corpus shorten a frequent word, and that bad input fails naming what is wrong.
# $1 = minimax binary, $2 = scratch dir.
set -euo pipefail
MINIMAX=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK"

source "$(dirname "$0")/../../scripts/lib/check.sh"  # fail, check

python3 - "$WORK/corpus.jsonl" <<'PY'
import json, sys
with open(sys.argv[1], "w") as f:
    for i in range(200):
        f.write(json.dumps(f"The quick brown fox {i} jumps over the lazy dog.\nnaïve café ]~b]ai\n") + "\n")
PY
"$MINIMAX" tokenizer train --corpus "$WORK/corpus.jsonl" --vocab-size 300 \
  --output "$WORK/tokenizer.json" 2> "$WORK/train.err"
grep -q "trained 300 tokens" "$WORK/train.err" || fail "train summary: $(cat "$WORK/train.err")"

cat > "$WORK/texts.jsonl" <<'JSON'
"The quick brown fox jumps"
"]~b]ai\n<mm:think>12+9=21</mm:think>21[e~["
"naïve café, 日本 unseen bytes"
JSON
"$MINIMAX" tokenizer encode --tokenizer "$WORK/tokenizer.json" < "$WORK/texts.jsonl" \
  > "$WORK/ids.jsonl"
[ "$(wc -l < "$WORK/ids.jsonl")" = 3 ] || fail "encode printed $(wc -l < "$WORK/ids.jsonl") lines"
"$MINIMAX" tokenizer decode --tokenizer "$WORK/tokenizer.json" < "$WORK/ids.jsonl" \
  > "$WORK/decoded.jsonl"

python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
texts = [json.loads(l) for l in open(f"{work}/texts.jsonl")]
ids = [json.loads(l) for l in open(f"{work}/ids.jsonl")]
decoded = [json.loads(l) for l in open(f"{work}/decoded.jsonl")]
assert decoded == texts, f"round trip: {decoded!r} != {texts!r}"
tok = json.load(open(f"{work}/tokenizer.json"))
special = {a["content"]: a["id"] for a in tok["added_tokens"]}
for name in ("]~b]", "<mm:think>", "</mm:think>", "[e~["):
    assert special[name] in ids[1], f"special token {name} is not one id in {ids[1]}"
assert all(i >= 300 for i in special.values()), "special ids must follow the vocabulary"
# "The quick brown fox jumps" is 25 bytes; the corpus makes most of it whole-word tokens.
assert len(ids[0]) <= 6, f"merges not applied: {ids[0]}"
# Unseen characters still encode, byte by byte.
assert len(ids[2]) > 10
PY

# Bad inputs fail with a message naming the input.
if echo '42' | "$MINIMAX" tokenizer encode --tokenizer "$WORK/tokenizer.json" 2> "$WORK/err"; then
  fail "encode accepted a number"
fi
grep -q "line 1: expected a JSON string" "$WORK/err" || fail "encode error: $(cat "$WORK/err")"
if echo '[1, "x"]' | "$MINIMAX" tokenizer decode --tokenizer "$WORK/tokenizer.json" 2> "$WORK/err"; then
  fail "decode accepted a string id"
fi
grep -q "ids must be integers" "$WORK/err" || fail "decode error: $(cat "$WORK/err")"
if "$MINIMAX" tokenizer train --corpus "$WORK/missing.jsonl" --output "$WORK/x.json" 2> "$WORK/err"; then
  fail "train accepted a missing corpus"
fi
grep -q "missing.jsonl" "$WORK/err" || fail "train error: $(cat "$WORK/err")"
echo "tokenizer_cli: ok"
