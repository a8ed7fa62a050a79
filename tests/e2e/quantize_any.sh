#!/usr/bin/env bash
# `minimax quantize` from every published layout (bf16, fp8-block, fp8-channel, mxfp8, mxfp4,
# mxfp4-fp8attn) to every target (fp8-block, fp8-channel, mxfp4, mxfp4-fp8attn, nvfp4) on tiny M2
# checkpoints: each output is detected as its target by inspect (every tensor present, nothing
# unexpected) and generates text; --keep is recorded in the target's own field; a run killed after
# its first shard and resumed gives the uninterrupted run's bytes; bad input fails naming the
# format, the role or the directory, leaving no output. The values of each pair against a
# dequantize-then-quantize reference are in tests/unit/checkpoint/quantize_any_test.cc.
# Usage: quantize_any.sh MINIMAX_BINARY SCRATCH_DIR
set -euo pipefail
MINIMAX=$1
WORK=$2
rm -rf "$WORK" && mkdir -p "$WORK"
source "$(dirname "$0")/../../scripts/lib/check.sh"  # fail, check

for from in bf16 fp8-block fp8-channel mxfp8 mxfp4 mxfp4-fp8attn; do
  src="$WORK/src-$from"
  "$MINIMAX" make-tiny --arch m2 --format "$from" --seed 3 --quiet --output "$src" >/dev/null
  for to in fp8-block fp8-channel mxfp4 mxfp4-fp8attn nvfp4; do
    out="$WORK/$from-to-$to"
    "$MINIMAX" quantize --input "$src" --output "$out" --format "$to" --quiet >"$out.log" 2>&1 ||
      fail "quantize $from -> $to: $(cat "$out.log")"
    grep -q "quantize summary ($from -> $to)" "$out.log" || fail "$from -> $to: $(cat "$out.log")"
    grep -q "minimax perplexity --model $out --file TEXT --kl-divergence --kl-divergence-base" \
      "$out.log" || fail "$from -> $to: no perplexity command: $(cat "$out.log")"
    "$MINIMAX" inspect --json "$out" >"$out.inspect.json" || fail "inspect $from -> $to"
    grep -q "\"quantization\": \"$to\"" "$out.inspect.json" || fail "$from -> $to: not $to"
    grep -q '"ok": true' "$out.inspect.json" || fail "$from -> $to: inspect not ok"
    "$MINIMAX" generate --model "$out" --prompt hi --max-tokens 3 --temperature 0 --threads 1 \
      >"$out.txt" 2>"$out.err" || fail "generate on $from -> $to: $(cat "$out.err")"
    [[ -s "$out.txt" ]] || fail "generate on $from -> $to: no text"
    rm -rf "$out"
  done
done

# --keep on the command line: Quark's FP8 attention and lm_head kept in a compressed-tensors FP8
# checkpoint (the attention leaves `ignore`); BF16 shared experts and dense layers listed in
# ModelOpt's ignore and exclude_modules.
"$MINIMAX" quantize --input "$WORK/src-mxfp4-fp8attn" --output "$WORK/keep" --format fp8-channel \
  --keep attention,lm_head --quiet >"$WORK/keep.log" || fail "keep: $(cat "$WORK/keep.log")"
grep -q "kept as they are (attention, lm_head)" "$WORK/keep.log" || fail "$(cat "$WORK/keep.log")"
"$MINIMAX" inspect --json "$WORK/keep" >"$WORK/keep.json" || fail "inspect keep"
grep -q '"attention": "fp8-channel"' "$WORK/keep.json" || fail "keep: attention not fp8-channel"
"$MINIMAX" generate --model "$WORK/keep" --prompt hi --max-tokens 3 --threads 1 >/dev/null 2>&1 ||
  fail "generate on the kept checkpoint"
"$MINIMAX" make-tiny --arch m3 --seed 3 --quiet --output "$WORK/m3" >/dev/null
"$MINIMAX" quantize --input "$WORK/m3" --output "$WORK/m3-nvfp4" --format nvfp4 \
  --keep shared_expert,dense --quiet >/dev/null || fail "keep shared_expert,dense"
python3 - "$WORK/m3-nvfp4" <<'PY' || fail "keep: the kept modules are not listed"
import json, sys
d = sys.argv[1]
ignore = json.load(open(d + "/config.json"))["quantization_config"]["ignore"]
legacy = json.load(open(d + "/hf_quant_config.json"))["quantization"]["exclude_modules"]
shared = [m for m in ignore if ".shared_experts." in m]
assert shared and set(shared) <= set(legacy), (ignore, legacy)
PY
"$MINIMAX" generate --model "$WORK/m3-nvfp4" --prompt hi --max-tokens 3 --threads 1 >/dev/null \
  2>&1 || fail "generate on the m3 nvfp4 checkpoint"

# A kill after the first shard, then --resume: the same bytes as the uninterrupted run.
"$MINIMAX" quantize --input "$WORK/src-mxfp8" --output "$WORK/full" --format mxfp4-fp8attn \
  --quiet >/dev/null || fail "uninterrupted run"
set +e
"$MINIMAX" quantize --input "$WORK/src-mxfp8" --output "$WORK/res" --format mxfp4-fp8attn \
  --quiet --stop-after-shards 1 >/dev/null 2>"$WORK/kill.err"
rc=$?
set -e
((rc == 137)) || fail "--stop-after-shards 1: exit $rc, want 137: $(cat "$WORK/kill.err")"
[[ -d "$WORK/res.partial" && ! -e "$WORK/res" ]] || fail "a killed run must leave only res.partial"
"$MINIMAX" quantize --input "$WORK/src-mxfp8" --output "$WORK/res" --format mxfp4-fp8attn \
  --quiet --resume >"$WORK/resume.log" || fail "resume: $(cat "$WORK/resume.log")"
grep -q "1 kept from the interrupted run" "$WORK/resume.log" || fail "$(cat "$WORK/resume.log")"
for f in "$WORK"/full/*; do
  cmp -s "$f" "$WORK/res/$(basename "$f")" || fail "resumed output differs in $(basename "$f")"
done

# Bad input: the format, the role, the directory named; no output left behind.
expect_error() {  # expect_error TEXT ARGS...
  local text=$1
  shift
  if "$MINIMAX" quantize "$@" >/dev/null 2>"$WORK/err.txt"; then fail "accepted: $*"; fi
  grep -qF -- "$text" "$WORK/err.txt" || fail "unclear error for $*: $(cat "$WORK/err.txt")"
  [[ ! -e "$WORK/bad" && ! -e "$WORK/bad.partial" ]] || fail "left an output behind: $*"
}
expect_error "unknown format 'int4'" --input "$WORK/m3" --output "$WORK/bad" --format int4
expect_error "unknown role 'experts'" --input "$WORK/m3" --output "$WORK/bad" --format mxfp4 \
  --keep attention,experts
mkdir -p "$WORK/not-a-model"
expect_error "$WORK/not-a-model" --input "$WORK/not-a-model" --output "$WORK/bad" --format mxfp4
expect_error "cannot express" --input "$WORK/src-mxfp8" --output "$WORK/bad" --format mxfp4 \
  --keep routed_expert
echo "quantize_any: OK"
