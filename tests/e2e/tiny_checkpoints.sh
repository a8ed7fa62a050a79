#!/usr/bin/env bash
# make-tiny in every architecture and layout, checked by inspect; determinism by seed; existing
# outputs refused. $1 = minimax binary, $2 = scratch dir.
set -euo pipefail
MINIMAX=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK"

source "$(dirname "$0")/../../scripts/lib/check.sh"  # fail, check

for arch in m2 m3; do
  for format in bf16 fp8-block fp8-channel mxfp4 nvfp4 mxfp8 mxfp4-fp8attn; do
    dir="$WORK/$arch-$format"
    "$MINIMAX" make-tiny --arch "$arch" --format "$format" --seed 7 --output "$dir" >/dev/null
    [[ -f "$dir/config.json" && -f "$dir/tokenizer.json" && -f "$dir/tokenizer_config.json" \
       && -f "$dir/generation_config.json" && -f "$dir/model.safetensors.index.json" ]] \
      || fail "$dir: missing files"
    shards=$(ls "$dir"/model-*-of-*.safetensors | wc -l)
    (( shards >= 2 )) || fail "$dir: $shards shard(s), want >= 2"
    [[ ! -e "$dir.partial" && ! -e "$dir.bf16" ]] || fail "$dir: leftovers"
    "$MINIMAX" inspect --json "$dir" > "$dir.inspect.json" || fail "inspect $dir reported problems"
    grep -q "\"quantization\": \"$format\"" "$dir.inspect.json" || fail "$dir: not detected as $format"
    grep -q '"ok": true' "$dir.inspect.json" || fail "$dir: inspect not ok"
  done
done

# inspect names how each role is stored: Quark MXFP4 with FP8 attention mixes two layouts.
grep -q '"attention": "quark-fp8-channel"' "$WORK/m3-mxfp4-fp8attn.inspect.json" \
  || fail "m3-mxfp4-fp8attn: attention layout not named"
grep -q '"routed_expert": "mxfp4"' "$WORK/m3-mxfp4-fp8attn.inspect.json" \
  || fail "m3-mxfp4-fp8attn: expert layout not named"
grep -q '"shared_expert": "mxfp8"' "$WORK/m3-mxfp8.inspect.json" || fail "m3-mxfp8: layouts"

# Same seed, same bytes; another seed, other weights.
"$MINIMAX" make-tiny --arch m3 --seed 7 --output "$WORK/m3-again" >/dev/null
for f in "$WORK"/m3-bf16/*.safetensors; do
  cmp -s "$f" "$WORK/m3-again/$(basename "$f")" || fail "seed 7 not reproducible: $(basename "$f")"
done
"$MINIMAX" make-tiny --arch m3 --seed 8 --output "$WORK/m3-seed8" >/dev/null
if cmp -s "$WORK/m3-bf16/model-00001-of-00002.safetensors" "$WORK/m3-seed8/model-00001-of-00002.safetensors"; then
  fail "seeds 7 and 8 gave the same weights"
fi

# An existing output is refused, and left as it was.
if "$MINIMAX" make-tiny --arch m2 --output "$WORK/m2-bf16" 2> "$WORK/err.txt"; then fail "overwrote"; fi
grep -q "already exists" "$WORK/err.txt" || fail "unclear refusal: $(cat "$WORK/err.txt")"
"$MINIMAX" make-tiny --arch m2 --seed 7 --output "$WORK/m2-bf16" --force >/dev/null

# inspect reports a missing tensor by name and exits non-zero.
cp -r "$WORK/m2-bf16" "$WORK/m2-broken"
/usr/bin/python3 - "$WORK/m2-broken" <<'PY'
import json, sys
p = sys.argv[1] + "/model.safetensors.index.json"
j = json.load(open(p))
# Point the index at a name that is not in any shard: the store must refuse it by name.
j["weight_map"]["model.layers.0.self_attn.q_proj.weight.bogus"] = "model-00001-of-00002.safetensors"
json.dump(j, open(p, "w"))
PY
if "$MINIMAX" inspect "$WORK/m2-broken" 2> "$WORK/err.txt" >/dev/null; then fail "broken index accepted"; fi
grep -q "q_proj.weight.bogus" "$WORK/err.txt" || fail "unclear: $(cat "$WORK/err.txt")"
echo "tiny checkpoints: ok"
