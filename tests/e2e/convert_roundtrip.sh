#!/usr/bin/env bash
# End to end: tiny M2 and M3 checkpoints quantized to MXFP4 (and to MXFP4 with FP8 attention),
# converted for both targets, checked by the independent validator (all experts and sampled), read
# back by inspect, and run: the converted FP8 decodes to its source's weights, so at f32 its logits
# are its source's bit for bit (issue 34), on the reference backend and on the cpu backend, whose
# MXFP4, FP8 and BF16 kernels sum in one shared order at f32 (docs/convert.md "Logits").
# Usage: convert_roundtrip.sh MINIMAX_BINARY SCRATCH_DIR
set -euo pipefail
bin=$1
work=$2
source "$(dirname "$0")/../../scripts/lib/check.sh"  # fail, check
rm -rf "$work"
mkdir -p "$work"

# 160 tokens: long enough for M3's MSA layers to choose blocks.
tokens=$(seq -s, 1 160)
logits() {  # $1 = checkpoint, $2 = backend; writes $1.$2.npy once
  [[ -f $1.$2.npy ]] && return
  "$bin" logits --model "$1" --tokens "$tokens" --all-positions --activations f32 \
    --kv-cache-dtype f32 --threads 2 --backend "$2" --quiet --output "$1.$2.npy" \
    >"$1.$2.log" 2>&1 || fail "logits $1 --backend $2: $(cat "$1.$2.log")"
}
same_logits() {  # $1 = source, $2 = converted
  for backend in reference cpu; do
    logits "$1" $backend && logits "$2" $backend
    cmp -s "$1.$backend.npy" "$2.$backend.npy" ||
      fail "$2: $backend logits differ from its source's"
  done
}

for arch in m2 m3; do
  # BF16 first, then `minimax quantize` to Quark MXFP4 (what make-tiny --format mxfp4 also does).
  "$bin" make-tiny --arch "$arch" --output "$work/$arch-bf16" >/dev/null 2>&1
  "$bin" quantize --input "$work/$arch-bf16" --output "$work/$arch" --format mxfp4 >/dev/null 2>&1
  for target in ocp gaudi2; do
    out="$work/$arch-$target"
    "$bin" convert --input "$work/$arch" --output "$out" --target "$target" --threads 2 \
      --quiet >"$out.log" || fail "convert $arch --target $target"
    grep -q "convert summary (target $target)" "$out.log" || fail "no summary for $arch $target"
    grep -q "elements equal to their MXFP4 source" "$out.log" || fail "no verification count"
    [[ -d "$out" && ! -e "$out.partial" ]] || fail "$out not renamed into place"
    "$bin" validate --source "$work/$arch" --converted "$out" >"$out.validate" ||
      fail "validate $arch $target: $(cat "$out.validate")"
    grep -q "validate (target $target" "$out.validate" || fail "validator saw another target"
    "$bin" validate --source "$work/$arch" --converted "$out" --sample 2 >/dev/null ||
      fail "validate --sample 2 $arch $target"
    "$bin" inspect "$out" >"$out.inspect" || fail "inspect $arch $target: $(cat "$out.inspect")"
    grep -q "quantization fp8-channel" "$out.inspect" || fail "inspect does not see fp8-channel"
    same_logits "$work/$arch" "$out"
  done
  # AMD's MXFP4 with FP8 attention: the FP8 layers are copied, the experts re-encoded.
  "$bin" quantize --input "$work/$arch-bf16" --output "$work/$arch-fp8attn" \
    --format mxfp4-fp8attn --quiet >/dev/null 2>&1
  "$bin" convert --input "$work/$arch-fp8attn" --output "$work/$arch-fp8attn-ocp" --threads 2 \
    --quiet >/dev/null || fail "convert $arch mxfp4-fp8attn"
  same_logits "$work/$arch-fp8attn" "$work/$arch-fp8attn-ocp"
  grep -q '"fp8_dtype_flavor": "float8_e4m3fnuz"' "$work/$arch-gaudi2/config.json" ||
    fail "$arch gaudi2 config lacks fp8_dtype_flavor"
  if grep -q fp8_dtype_flavor "$work/$arch-ocp/config.json"; then
    fail "$arch ocp config carries fp8_dtype_flavor"
  fi
done
# M3's shared experts are BF16 in the output.
grep -q "6 MXFP4 weights -> BF16" "$work/m3-ocp.log" || fail "M3 shared experts not in BF16"
echo "convert_roundtrip: ok"
